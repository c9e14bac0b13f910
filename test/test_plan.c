/* The seams of the parser: the plan (sched/plan.h), its counts, by the one rule, against the
 * items it lists and against a brute-force enumeration of every split, segment order and
 * cell numbering; the engine's span-length loop (sched/engine.h) in both directions; the
 * decoder table (parser/decoders.c); the invariant check (CKY_ASSERT). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../chart/chart.h"
#include "../sched/engine.h"
#include "../parser/parser.h"
#include "../sched/plan.h"

/* Items of family f of one sentence of n words by brute force over every (i, k, j). */
static long brute_items(int n, codegen_family_id f)
{
    long m = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 2; j <= n; j++)
            for (int k = i + 1; k < j; k++)
                m += codegen_family_has_split(f, i, k, j);
    return m;
}

Test(plan, counts_match_listed_items)
{
    int len[] = {1, 7, 0, 2, 13, 3, 40};
    int n = sizeof len / sizeof *len;
    plan p;
    cr_assert_eq(plan_new(len, n, &p), CKY_OK);
    long want_items = 0, want_cells = 0;
    for (int k = 0; k < n; k++) {
        long c[CODEGEN_NFAMILY];
        plan_count_items(len[k], c);
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            cr_assert_eq(c[f], brute_items(len[k], (codegen_family_id)f),
                         "sentence of %d words, family %s", len[k],
                         codegen_family_name((codegen_family_id)f));
            want_items += c[f];
        }
        cr_assert_eq(p.cell0[k], want_cells);
        want_cells += (long)chart_ncells(len[k]);
    }
    cr_assert_eq(p.nitem, want_items);
    cr_assert_eq(p.ncell, want_cells);
    cr_assert_eq(p.maxn, 40);
    int *left = malloc(p.nitem * sizeof *left), *right = malloc(p.nitem * sizeof *right);
    int *parent = malloc(p.nitem * sizeof *parent), *sent = malloc(p.nitem * sizeof *sent);
    int *cells = malloc(p.ncell * sizeof *cells);
    char *seen = calloc(p.ncell, 1);
    long next = 0, next_cell = 0;
    for (int d = 1; d <= p.maxn; d++) {
        cr_assert_eq(p.cell[d].first, next_cell);
        plan_fill_cells(&p, d, cells + next_cell);
        for (long c = 0; c < p.cell[d].count; c++) {
            cr_assert_lt(cells[next_cell + c], p.ncell);
            cr_assert_eq(seen[cells[next_cell + c]], 0, "cell listed twice");
            seen[cells[next_cell + c]] = 1;
        }
        next_cell += p.cell[d].count;
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            plan_segment sg = p.bin[d * CODEGEN_NFAMILY + f];
            if (d < 2) {
                cr_assert_eq(sg.count, 0);
                continue;
            }
            cr_assert_eq(sg.first, next, "span %d family %d starts at %ld", d, f, sg.first);
            plan_fill_items(&p, d, (codegen_family_id)f, left + next, right + next,
                            parent + next, sent + next);
            for (long t = next; t < next + sg.count; t++) {
                int k = sent[t], base = (int)p.cell0[k];
                cr_assert(t == next || sent[t] >= sent[t - 1], "sentence order");
                /* the parent has span d and is split into the two children */
                int found = 0;
                for (int i = 0; i + d <= len[k] && !found; i++)
                    for (int s = i + 1; s < i + d; s++)
                        if (parent[t] == base + (int)chart_cell(len[k], i, i + d) &&
                            left[t] == base + (int)chart_cell(len[k], i, s) &&
                            right[t] == base + (int)chart_cell(len[k], s, i + d)) {
                            cr_assert(codegen_family_has_split((codegen_family_id)f, i, s,
                                                               i + d));
                            found = 1;
                        }
                cr_assert(found, "item %ld is no split of a span-%d cell", t, d);
            }
            next += sg.count;
        }
    }
    cr_assert_eq(next, p.nitem, "listed %ld items, counted %ld", next, p.nitem);
    cr_assert_eq(next_cell, p.ncell);
    for (int k = 0; k < n; k++)
        if (len[k])
            cr_assert_eq(plan_root_cell(&p, k), p.cell0[k] + (long)chart_cell(len[k], 0, len[k]));
    free(left);
    free(right);
    free(parent);
    free(sent);
    free(cells);
    free(seen);
    plan_free(&p);
}

/* The pull lists: every item once per side, sent to a cell of the list's span d (its left
 * child for side 0, right for 1), the cells in plan_fill_cells order, each cell's items
 * consecutive with parents from the shortest. */
Test(plan, pull_lists_list_every_item_once_per_side)
{
    int len[] = {1, 7, 0, 2, 13, 3, 21};
    int n = sizeof len / sizeof *len;
    plan p;
    cr_assert_eq(plan_new(len, n, &p), CKY_OK);
    cr_assert_eq(plan_add_pull(&p, 3), CKY_OK);
    cr_assert_eq(p.npull, 2 * p.nitem);
    int *pulls = malloc(p.npull * sizeof *pulls), *pulls1 = malloc(p.npull * sizeof *pulls1);
    cr_assert_eq(plan_fill_pulls(&p, 3, pulls), CKY_OK);
    cr_assert_eq(plan_fill_pulls(&p, 1, pulls1), CKY_OK);
    cr_assert(memcmp(pulls, pulls1, p.npull * sizeof *pulls) == 0, "1 and 3 threads differ");
    int *left = malloc(p.nitem * sizeof *left), *right = malloc(p.nitem * sizeof *right);
    int *parent = malloc(p.nitem * sizeof *parent), *cells = malloc(p.ncell * sizeof *cells);
    int *rank = malloc(p.ncell * sizeof *rank), *item = malloc(p.nitem * sizeof *item);
    int *span = malloc(p.ncell * sizeof *span);
    char *seen = calloc(2 * p.nitem, 1);
    for (int d = 2; d <= p.maxn; d++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            long m = p.bin[d * CODEGEN_NFAMILY + f].first;
            plan_fill_items(&p, d, (codegen_family_id)f, left + m, right + m, parent + m, NULL);
        }
    for (int d = 1; d <= p.maxn; d++) {
        plan_fill_cells(&p, d, cells);
        for (long c = 0; c < p.cell[d].count; c++) {
            rank[cells[c]] = (int)c;
            span[cells[c]] = d;
        }
    }
    long next = 0;
    for (int d = 1; d < p.maxn; d++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            for (int side = 0; side < 2; side++) {
                plan_segment sg = p.pull[(d * CODEGEN_NFAMILY + f) * 2 + side];
                cr_assert_eq(sg.first, next);
                next += sg.count;
                memcpy(item, pulls + sg.first, sg.count * sizeof *item);
                int last_cell = -1, last_rank = -1, last_span = 0;
                for (long t = 0; t < sg.count; t++) {
                    int it = item[t];
                    cr_assert(it >= 0 && it < p.nitem);
                    int to = side ? right[it] : left[it];
                    cr_assert_eq(seen[2 * (long)it + side], 0, "item %d listed twice", it);
                    seen[2 * (long)it + side] = 1;
                    /* the family of the item is f, the child of span d */
                    int fam = -1;
                    for (int g = 0; g < CODEGEN_NFAMILY; g++)
                        for (int e = 2; e <= p.maxn; e++) {
                            plan_segment b = p.bin[e * CODEGEN_NFAMILY + g];
                            if (it >= b.first && it < b.first + b.count)
                                fam = g;
                        }
                    cr_assert_eq(fam, f);
                    cr_assert_eq(span[to], d, "item %d: its child is not of span %d", it, d);
                    if (to == last_cell) { /* the same cell: a longer parent */
                        cr_assert_gt(span[parent[it]], last_span, "parents out of order");
                    } else {
                        cr_assert_gt(rank[to], last_rank, "cells out of order");
                        last_rank = rank[to];
                    }
                    last_cell = to;
                    last_span = span[parent[it]];
                }
            }
    for (long x = 0; x < 2 * p.nitem; x++)
        cr_assert_eq(seen[x], 1, "item %ld side %ld never listed", x / 2, x % 2);
    free(left);
    free(right);
    free(parent);
    free(cells);
    free(rank);
    free(span);
    free(item);
    free(seen);
    plan_free(&p);
}

/* A recording engine: each step appends a letter and its span length. */
typedef struct trace {
    char log[512];
    int fail_at; /* fail the unary step of this span length */
} trace;

static void note(trace *t, char c, int d)
{
    size_t m = strlen(t->log);
    snprintf(t->log + m, sizeof t->log - m, "%c%d", c, d);
}

static cky_status rec_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    note(ctx, f == CODEGEN_XX ? 'b' : '.', d);
    return CKY_OK;
}

static cky_status rec_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    trace *t = ctx;
    note(t, 'u', d);
    return d == t->fail_at ? cky_fail(CKY_ERR_ARG, "stop") : CKY_OK;
}

static cky_status rec_span(void *ctx, const plan *p, engine_pass pass, int d)
{
    note(ctx, '|', d);
    return CKY_OK;
}

Test(engine, span_loop_order)
{
    int len[] = {3, 2};
    plan p;
    cr_assert_eq(plan_new(len, 2, &p), CKY_OK);
    engine_ops ops = {rec_binary, rec_unary, rec_span};
    trace t = {"", 0};
    cr_assert_eq(engine_run_pass(&ops, &t, &p, ENGINE_PASS_INSIDE, CODEGEN_SEMIRING_MAX_PLUS),
                 CKY_OK);
    cr_assert_str_eq(t.log, "u1|1b2.2.2.2u2|2b3.3.3.3u3|3");
    t = (trace){"", 0};
    cr_assert_eq(engine_run_pass(&ops, &t, &p, ENGINE_PASS_OUTSIDE, CODEGEN_SEMIRING_MAX_PLUS),
                 CKY_OK);
    cr_assert_str_eq(t.log, "u3|3b2.2.2.2u2|2b1.1.1.1u1|1");
    t = (trace){"", 2};
    cr_assert_eq(engine_run_pass(&ops, &t, &p, ENGINE_PASS_INSIDE, CODEGEN_SEMIRING_MAX_PLUS),
                 CKY_ERR_ARG);
    cr_assert_str_eq(t.log, "u1|1b2.2.2.2u2");
    cr_assert_eq(engine_check_pass("test", ENGINE_PASS_OUTSIDE, CODEGEN_SEMIRING_MAX_PLUS),
                 CKY_ERR_ARG);
    cr_assert_eq(engine_check_pass("test", ENGINE_PASS_INSIDE, CODEGEN_SEMIRING_MAX_PLUS),
                 CKY_OK);
    plan_free(&p);
}

/* CKY_ASSERT (util/status.h): silent when the invariant holds, an abort when it is broken. */
Test(status, assert_holds)
{
    int two = 2;
    CKY_ASSERT(two == 2, "two is %d", two);
}

Test(status, assert_broken_aborts, .signal = SIGABRT)
{
    int two = 2;
    CKY_ASSERT(two == 3, "two is %d", two);
}

/* The decoder table (parser/decoders.c): each row names its decoder, which the names find
 * again; the Viterbi decoder asks for the inside pass in max-plus, max-rule for both passes
 * in sum-product; every decoder has a part for every engine; an unknown decoder is refused
 * by the table and by parser_new. */
Test(decode, table_and_unknown_decoder)
{
    const decoder_def *v = parser_decoder_def(PARSER_DECODER_VITERBI);
    cr_assert_not_null(v);
    cr_assert_str_eq(v->name, "viterbi");
    cr_assert_eq(v->passes, 1u << ENGINE_PASS_INSIDE);
    cr_assert_eq(v->semiring, CODEGEN_SEMIRING_MAX_PLUS);
    const decoder_def *m = parser_decoder_def(PARSER_DECODER_MAXRULE);
    cr_assert_str_eq(m->name, "maxrule");
    cr_assert_eq(m->passes, 1u << ENGINE_PASS_INSIDE | 1u << ENGINE_PASS_OUTSIDE);
    cr_assert_eq(m->semiring, CODEGEN_SEMIRING_SUM_PRODUCT);
    for (int k = 0; k < PARSER_NDECODER; k++) {
        const decoder_def *d = parser_decoder_def((parser_decoder)k);
        parser_decoder id = (parser_decoder)-1;
        cr_assert(parser_decoder_find(d->name, &id) && id == (parser_decoder)k, "%s", d->name);
        cr_assert(d->ref.open && d->ref.parse && d->cpu.open && d->cpu.parse && d->gpu.open &&
                      d->gpu.parse, "%s lacks a part", d->name);
    }
    cr_assert_str_eq(parser_decoder_names(), "viterbi, maxrule");
    cr_assert_str_eq(parser_engine_names(), "gpu, cpu, ref");
    parser_decoder id;
    cr_assert(!parser_decoder_find("max-rule", &id));
    cr_assert_null(parser_decoder_def((parser_decoder)99));
    parser_options o = parser_default_options();
    cr_assert_eq(o.decoder, PARSER_DECODER_VITERBI);
    o.decoder = (parser_decoder)99;
    parser *p = NULL;
    cr_assert_eq(parser_new(NULL, &o, &p), CKY_ERR_ARG);
    cr_assert_null(p);
}

/* A plan with pull lists numbers its items as int: plan_pull_words() words fit (the figure
 * the header gives), one more word, or two such sentences in one plan, are CKY_ERR_LIMIT
 * (a sentence that fails alone), refused before any list is walked. */
Test(plan, pull_lists_refuse_more_items_than_an_int_numbers)
{
    int n = plan_pull_words();
    cr_assert_eq(n, 2342); /* as plan.h says */
    int len[] = {n, n + 1};
    plan p;
    cr_assert_eq(plan_new(len, 1, &p), CKY_OK);
    cr_assert_leq(p.nitem, PLAN_PULL_ITEMS);
    plan_free(&p);
    cr_assert_eq(plan_new(len + 1, 1, &p), CKY_OK);
    cr_assert_gt(p.nitem, PLAN_PULL_ITEMS);
    cr_assert_eq(plan_add_pull(&p, 1), CKY_ERR_LIMIT);
    cr_assert(strstr(cky_last_error(), "at most 2342 words"), "%s", cky_last_error());
    plan_free(&p);
    int two[] = {n, n};
    cr_assert_eq(plan_new(two, 2, &p), CKY_OK);
    cr_assert_eq(plan_add_pull(&p, 1), CKY_ERR_LIMIT);
    plan_free(&p);
}
