/* Tests of the grammar compiler's partition: spectral orders, shapes, every rule in exactly
 * one code block, blocks sorted by (L, R, P), weights printed so they read back exactly. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/internal.h"
#include "../grammar/grammar.h"
#include "../codegen/schedule.h"
#include "test_codegen_synth.h"

static int rule_cmp(const void *a, const void *b)
{
    const codegen_rule *x = a, *y = b;
    if (x->p != y->p)
        return x->p - y->p;
    if (x->l != y->l)
        return x->l - y->l;
    return x->r - y->r;
}

Test(codegen_partition, shape_parse)
{
    codegen_shape s;
    cr_assert_eq(codegen_shape_parse("6x2x2/2x2x2", &s), CKY_OK);
    cr_assert(s.major[0] == 6 && s.major[1] == 2 && s.major[2] == 2 && s.minor[2] == 2);
    cr_assert_eq(codegen_shape_parse("3x1x2", &s), CKY_OK);
    cr_assert(s.major[0] == 3 && s.major[2] == 2 && s.minor[0] == 2);
    cr_assert_eq(codegen_shape_parse("3x1", &s), CKY_ERR_ARG);
    cr_assert_eq(codegen_shape_parse("3x1x2/", &s), CKY_ERR_ARG);
    cr_assert_eq(codegen_shape_parse("0x1x2", &s), CKY_ERR_ARG);
    codegen_shape a = codegen_shape_auto(360000);
    cr_assert(a.major[0] * a.major[1] * a.major[2] * 8 * 1800 >= 360000);
    cr_assert_eq(codegen_shape_auto(10).major[0], 1);
}

Test(codegen_partition, spectral_order_deterministic)
{
    codegen_family f;
    synth_family(&f, 60, 4000, 7);
    for (int axis = 0; axis < 3; axis++) {
        int a[60], b[60], na, nb;
        cr_assert_eq(codegen_spectral_order(f.rule, f.nrule, axis, 60, a, &na), CKY_OK);
        cr_assert_eq(codegen_spectral_order(f.rule, f.nrule, axis, 60, b, &nb), CKY_OK);
        cr_assert_eq(na, nb);
        cr_assert_eq(memcmp(a, b, sizeof(int) * (size_t)na), 0, "axis %d order differs", axis);
        char seen[60] = {0};
        for (int i = 0; i < na; i++) { /* a permutation of the used rows */
            cr_assert(a[i] >= 0 && a[i] < 60 && !seen[a[i]]);
            seen[a[i]] = 1;
        }
    }
    codegen_family_free(&f);
}

static void check_partition(const codegen_family *f, const codegen_partition *p)
{
    cr_assert_eq(p->nrule, f->nrule);
    long covered = 0;
    int blocks = 0;
    for (int k = 0; k < p->nkernel; k++) {
        const codegen_kernel *kn = &p->kernel[k];
        cr_assert_eq(kn->first, covered, "kernel %d not contiguous", k);
        cr_assert_eq(kn->first_block, blocks);
        long in_blocks = 0;
        for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++) {
            const codegen_block *blk = &p->block[b];
            cr_assert_eq(blk->first, covered + in_blocks);
            cr_assert_gt(blk->nrule, 0, "empty block %d", b);
            /* emission order: runs sorted by (L, R, P), one per group of parent rows,
             * the groups' rows ascending and disjoint */
            int seg_min = p->rule[blk->first].p, seg_max = seg_min, prev_max = -1;
            for (long i = blk->first + 1; i < blk->first + blk->nrule; i++) {
                const codegen_rule *x = &p->rule[i - 1], *y = &p->rule[i];
                int sorted = x->l < y->l || (x->l == y->l && (x->r < y->r ||
                             (x->r == y->r && x->p < y->p)));
                if (!sorted) {
                    cr_assert_gt(seg_min, prev_max, "block %d: parent groups overlap", b);
                    prev_max = seg_max;
                    seg_min = seg_max = y->p;
                }
                seg_min = y->p < seg_min ? y->p : seg_min;
                seg_max = y->p > seg_max ? y->p : seg_max;
            }
            cr_assert_gt(seg_min, prev_max, "block %d: parent groups overlap", b);
            in_blocks += blk->nrule;
        }
        cr_assert_eq(in_blocks, kn->nrule);
        covered += kn->nrule;
        blocks += kn->nblock;
    }
    cr_assert_eq(covered, f->nrule);
    cr_assert_eq(blocks, p->nblock);
    /* the same multiset of rules (exactly once each, weights intact) */
    codegen_rule *a = malloc((size_t)f->nrule * sizeof *a), *b = malloc((size_t)f->nrule * sizeof *b);
    memcpy(a, f->rule, (size_t)f->nrule * sizeof *a);
    memcpy(b, p->rule, (size_t)f->nrule * sizeof *b);
    qsort(a, (size_t)f->nrule, sizeof *a, rule_cmp);
    qsort(b, (size_t)f->nrule, sizeof *b, rule_cmp);
    cr_assert_eq(memcmp(a, b, (size_t)f->nrule * sizeof *a), 0);
    free(a);
    free(b);
}

Test(codegen_partition, every_rule_exactly_once)
{
    codegen_family f;
    synth_family(&f, 80, 6000, 11);
    codegen_shape shapes[4];
    cr_assert_eq(codegen_shape_parse("3x2x2/2x2x2", &shapes[0]), CKY_OK);
    cr_assert_eq(codegen_shape_parse("1x1x1/1x1x1", &shapes[1]), CKY_OK);
    memset(&shapes[2], 0, sizeof shapes[2]); /* automatic */
    shapes[3] = shapes[0];
    shapes[3].live_limit = 40; /* a tight live budget: parent groups and reloads */
    for (int s = 0; s < 4; s++) {
        codegen_partition p;
        cr_assert_eq(codegen_partition_build(&f, shapes[s], &p), CKY_OK);
        check_partition(&f, &p);
        cr_assert_gt(p.reload_rate, 0.99);
        cr_assert_gt(p.max_live, 2);
        if (s == 3)
            for (int b = 0; b < p.nblock; b++) {
                cr_assert_leq(p.block[b].max_live, 40, "block %d: max_live %d", b,
                              p.block[b].max_live);
                cr_assert_geq(p.block[b].loads, p.block[b].nleft + p.block[b].nright);
            }
        if (s == 0) {
            cr_assert_eq(p.nkernel, 12);
            cr_assert_leq(p.nblock, 96);
            cr_assert_leq(p.reload_rate, p.naive_reload_rate + 1e-9,
                          "spectral %.2f worse than naive %.2f", p.reload_rate,
                          p.naive_reload_rate);
        }
        codegen_partition_free(&p);
    }
    codegen_family_free(&f);
}

Test(codegen_partition, same_partition_twice)
{
    codegen_family f;
    synth_family(&f, 50, 3000, 3);
    codegen_shape s;
    codegen_shape_parse("2x2x2/2x2x1", &s);
    codegen_partition a, b;
    cr_assert_eq(codegen_partition_build(&f, s, &a), CKY_OK);
    cr_assert_eq(codegen_partition_build(&f, s, &b), CKY_OK);
    cr_assert_eq(a.nblock, b.nblock);
    cr_assert_eq(memcmp(a.rule, b.rule, (size_t)f.nrule * sizeof *a.rule), 0);
    codegen_partition_free(&a);
    codegen_partition_free(&b);
    codegen_family_free(&f);
}

Test(codegen_partition, block_plan)
{
    /* in emission order: L0 R0 -> P0, L0 R1 -> P1, L1 R1 -> P0 */
    codegen_rule r[3] = {{0, 0, 0, -1}, {1, 0, 1, -1}, {0, 1, 1, -1}};
    int dim[3] = {2, 2, 2}, live;
    long loads;
    unsigned char f[3];
    cr_assert_eq(codegen_block_plan(r, 3, dim, 64, f, &live, &loads), CKY_OK);
    cr_assert_eq(f[0], PLAN_LOAD_L | PLAN_LOAD_R | PLAN_PAIR | PLAN_FIRST_P);
    cr_assert_eq(f[1], PLAN_LOAD_R | PLAN_PAIR | PLAN_FIRST_P | PLAN_LAST_P);
    cr_assert_eq(f[2], PLAN_LOAD_L | PLAN_PAIR | PLAN_LAST_P);
    cr_assert_eq(loads, 4);
    /* rule 1: P0, P1, R1, L0 and lr (R0's slot was freed after its last use) */
    cr_assert_eq(live, 5);
}

Test(codegen_partition, block_plan_reloads_under_a_tight_budget)
{
    /* one parent, right rows 0..9 used twice in two left runs: with room for 2 cached
     * right rows, the second run reloads; with room for all, it does not */
    codegen_rule r[20];
    for (int i = 0; i < 20; i++)
        r[i] = (codegen_rule){0, i / 10, i % 10, -1};
    int dim[3] = {1, 2, 10}, live;
    long loads;
    unsigned char f[20];
    cr_assert_eq(codegen_block_plan(r, 20, dim, 64, f, &live, &loads), CKY_OK);
    cr_assert_eq(loads, 2 + 10);
    cr_assert_eq(codegen_block_plan(r, 20, dim, 5, f, &live, &loads), CKY_OK);
    cr_assert_leq(live, 5);
    cr_assert_gt(loads, 2 + 10);
    for (int i = 10; i < 20; i++) /* Belady keeps the rows needed soonest: some hit */
        if (!(f[i] & PLAN_LOAD_R))
            return;
    cr_assert_fail("no right row survived to the second run");
}

Test(codegen_partition, block_order_groups_parents)
{
    codegen_family f;
    synth_family(&f, 80, 3000, 7);
    int budget = 16;
    cr_assert_eq(codegen_block_order(f.rule, f.nrule, f.dim, budget), CKY_OK);
    /* groups of consecutive parent rows, each group sorted by (L, R, P) */
    int groups = 1;
    for (long i = 1; i < f.nrule; i++) {
        const codegen_rule *a = &f.rule[i - 1], *b = &f.rule[i];
        int same = a->l < b->l || (a->l == b->l && (a->r < b->r || (a->r == b->r && a->p <= b->p)));
        groups += !same;
    }
    cr_assert_gt(groups, 1);
    codegen_family_free(&f);
}

Test(codegen_partition, weight_literal_round_trips)
{
    srand(5);
    for (int i = 0; i < 100000; i++) {
        unsigned u = ((unsigned)rand() << 16) ^ (unsigned)rand();
        float w;
        memcpy(&w, &u, sizeof w);
        if (!(w == w) || w == INFINITY || w == -INFINITY)
            continue;
        char buf[64];
        snprintf(buf, sizeof buf, "%.8e", (double)w);
        float back = strtof(buf, NULL);
        cr_assert_eq(memcmp(&back, &w, sizeof w), 0, "%s does not read back as %a", buf,
                     (double)w);
    }
}

/* Reload rate of equal-width blocking as the compiler defined it before the candidates
 * (row x of an axis of dim rows in major interval x * K / dim): the partition's
 * naive_reload_rate must stay this very figure. */
static double old_naive_reload(const codegen_family *f, const int k[3])
{
    long cubes = (long)k[0] * k[1] * k[2], width = (long)f->dim[0] + f->dim[1] + f->dim[2];
    char *seen = calloc((size_t)(cubes * width), 1), *used = calloc((size_t)width, 1);
    long loads = 0, rows = 0;
    for (long i = 0; i < f->nrule; i++) {
        const codegen_rule *r = &f->rule[i];
        int row[3] = {r->p, f->dim[0] + r->l, f->dim[0] + f->dim[1] + r->r};
        int x[3] = {r->p, r->l, r->r};
        long cube = 0;
        for (int a = 0; a < 3; a++)
            cube = cube * k[a] + (long)x[a] * k[a] / f->dim[a];
        for (int a = 0; a < 3; a++) {
            loads += !seen[cube * width + row[a]];
            seen[cube * width + row[a]] = 1;
            rows += !used[row[a]];
            used[row[a]] = 1;
        }
    }
    free(seen);
    free(used);
    return rows ? (double)loads / rows : 0;
}

/* The figures a partition reports about itself agree with its tables and with each other. */
static void check_figures(const codegen_family *f, const codegen_partition *p)
{
    long loads = 0;
    for (int b = 0; b < p->nblock; b++)
        loads += p->block[b].loads;
    cr_assert_eq(p->loads, loads);
    cr_assert((unsigned)p->origin < CODEGEN_NORIGIN);
    cr_assert_eq(p->candidate_loads[p->origin], p->loads);
    cr_assert_eq(p->candidate_reload[p->origin], p->reload_rate);
    cr_assert_eq(p->candidate_loads[CODEGEN_EQUAL_WIDTH], p->naive_loads);
    cr_assert_eq(p->candidate_reload[CODEGEN_EQUAL_WIDTH], p->naive_reload_rate);
    cr_assert_leq(p->reload_rate, p->naive_reload_rate, "%s: reload %.4f > equal-width %.4f",
                  codegen_origin_name(p->origin), p->reload_rate, p->naive_reload_rate);
    cr_assert_leq(p->loads, p->naive_loads, "%s: loads %ld > equal-width %ld",
                  codegen_origin_name(p->origin), p->loads, p->naive_loads);
    double naive = old_naive_reload(f, p->shape.major);
    cr_assert(fabs(naive - p->naive_reload_rate) < 1e-12, "equal-width reload %.6f, want %.6f",
              p->naive_reload_rate, naive);
    /* the choice: an uneven partition (a block over 3 x the shape's mean) only when it has
     * the fewest loads of the eligible */
    long cubes = 1, most = 0;
    for (int a = 0; a < 3; a++)
        cubes *= (long)p->shape.major[a] * p->shape.minor[a];
    for (int b = 0; b < p->nblock; b++)
        most = p->block[b].nrule > most ? p->block[b].nrule : most;
    if (most > 3 * ((p->nrule + cubes - 1) / cubes))
        for (int o = 0; o < CODEGEN_NORIGIN; o++)
            if (p->candidate_reload[o] <= p->naive_reload_rate &&
                p->candidate_loads[o] <= p->naive_loads)
                cr_assert_leq(p->loads, p->candidate_loads[o], "candidate %s has fewer loads",
                              codegen_origin_name(o));
}

/* On the families of a real grammar (sample-sm3, where the spectral cut alone loses to
 * equal-width on reload or loads in three of four families) at its automatic shapes and at
 * the paper's 6x2x2/2x2x2: the chosen partition is no worse than equal-width blocking on
 * reload rate and loads per work item, holds every rule exactly once and is the same bits
 * when built again. */
Test(codegen_partition, no_worse_than_equal_width_on_sample_sm3)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm3/sample-sm3", &g), CKY_OK, "%s",
                 cky_last_error());
    codegen_classes c;
    cr_assert_eq(codegen_classes_init(g, &c), CKY_OK);
    int spectral_lost = 0, moved = 0;
    for (int s = 0; s < 2; s++)
        for (int fi = 0; fi < CODEGEN_NFAMILY; fi++) {
            codegen_family f;
            cr_assert_eq(codegen_family_build(g, &c, (codegen_family_id)fi, &f), CKY_OK);
            codegen_shape shape = codegen_shape_auto(f.nrule);
            if (s == 1)
                cr_assert_eq(codegen_shape_parse("6x2x2/2x2x2", &shape), CKY_OK);
            codegen_partition p, q;
            cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
            check_partition(&f, &p);
            check_figures(&f, &p);
            spectral_lost += p.candidate_reload[CODEGEN_SPECTRAL] > p.naive_reload_rate ||
                             p.candidate_loads[CODEGEN_SPECTRAL] > p.naive_loads;
            moved += p.origin != CODEGEN_SPECTRAL && p.origin != CODEGEN_EQUAL_WIDTH;
            cr_assert_eq(codegen_partition_build(&f, shape, &q), CKY_OK);
            cr_assert_eq(p.origin, q.origin);
            cr_assert_eq(p.nkernel, q.nkernel);
            cr_assert_eq(p.nblock, q.nblock);
            cr_assert_eq(memcmp(p.rule, q.rule, (size_t)p.nrule * sizeof *p.rule), 0);
            cr_assert_eq(memcmp(p.kernel, q.kernel, (size_t)p.nkernel * sizeof *p.kernel), 0);
            cr_assert_eq(memcmp(p.block, q.block, (size_t)p.nblock * sizeof *p.block), 0);
            codegen_partition_free(&p);
            codegen_partition_free(&q);
            codegen_family_free(&f);
        }
    cr_assert_gt(spectral_lost, 0, "the spectral cut never lost: the test tests nothing");
    cr_assert_gt(moved, 0, "no refined candidate was ever chosen");
    codegen_classes_free(&c);
    grammar_free(g);
}

/* The synthetic family (structure hidden from row order, so that spectral wins) at several
 * shapes: the same guarantees. */
Test(codegen_partition, no_worse_than_equal_width_synthetic)
{
    codegen_family f;
    synth_family(&f, 70, 5000, 13);
    const char *shapes[] = {"3x2x2/2x2x2", "2x2x2/2x1x4", "1x1x1/1x1x4", "4x1x1/1x1x1"};
    for (int s = 0; s < 4; s++) {
        codegen_shape shape;
        cr_assert_eq(codegen_shape_parse(shapes[s], &shape), CKY_OK);
        codegen_partition p;
        cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
        check_partition(&f, &p);
        check_figures(&f, &p);
        codegen_partition_free(&p);
    }
    codegen_family_free(&f);
}

/* Local moves: the cost never rises without a budget, parts keep their group and are never
 * emptied, and with a budget the parts over the cap shrink while the cost stays within it. */
Test(codegen_partition, refine_moves_lower_the_cost)
{
    codegen_family f;
    synth_family(&f, 60, 4000, 21);
    int npart = 6, group[6] = {0, 0, 0, 1, 1, 1}, weight[3] = {1, 1, 1};
    int *part = malloc((size_t)f.nrule * sizeof *part), *before = malloc((size_t)f.nrule * sizeof *part);
    for (long i = 0; i < f.nrule; i++) /* a poor start: parts by rule index */
        part[i] = (int)(i * npart / f.nrule);
    memcpy(before, part, (size_t)f.nrule * sizeof *part);
    long cost0 = codegen_parts_cost(f.rule, f.nrule, f.dim, part, weight);
    cr_assert_eq(codegen_refine_parts(f.rule, f.nrule, f.dim, part, npart, group, weight, 10, 8,
                                      0), CKY_OK);
    long cost1 = codegen_parts_cost(f.rule, f.nrule, f.dim, part, weight);
    cr_assert_lt(cost1, cost0, "no move lowered the cost (%ld)", cost0);
    long size[6] = {0};
    for (long i = 0; i < f.nrule; i++) {
        cr_assert_eq(group[part[i]], group[before[i]], "rule %ld left its group", i);
        size[part[i]]++;
    }
    for (int s = 0; s < npart; s++)
        cr_assert_gt(size[s], 0, "part %d emptied", s);
    /* lopsided parts, balanced within a budget */
    for (long i = 0; i < f.nrule; i++)
        part[i] = i < f.nrule / 2 ? 0 : 1 + (int)(i % 2);
    int g3[3] = {0, 0, 0};
    long c0 = codegen_parts_cost(f.rule, f.nrule, f.dim, part, weight);
    cr_assert_eq(codegen_refine_parts(f.rule, f.nrule, f.dim, part, 3, g3, weight, 10, 8, 0),
                 CKY_OK);
    long c1 = codegen_parts_cost(f.rule, f.nrule, f.dim, part, weight), big1 = 0, big2 = 0;
    for (long i = 0; i < f.nrule; i++)
        big1 += part[i] == 0;
    cr_assert_eq(codegen_refine_parts(f.rule, f.nrule, f.dim, part, 3, g3, weight, 10, 8, 500),
                 CKY_OK);
    long c2 = codegen_parts_cost(f.rule, f.nrule, f.dim, part, weight);
    for (long i = 0; i < f.nrule; i++)
        big2 += part[i] == 0;
    cr_assert_leq(c1, c0);
    cr_assert_leq(c2, c1 + 500, "balancing spent %ld, over its budget 500", c2 - c1);
    cr_assert_lt(big2, big1, "the largest part did not shrink (%ld rules)", big1);
    free(part);
    free(before);
    codegen_family_free(&f);
}

typedef void (*blas_threads_set_fn)(int);

/* sample-sm6: at the paper's shape, the spectral cut of XT overran dsyevr's eigenvalue array
 * (two doubles on the stack) and crashed; and TX's partition is the same whatever number of
 * threads OpenBLAS (where it is the LAPACK) was set to (with 1 and 2 threads its spectral
 * cut differed: 3,569 and 3,582 loads). */
Test(codegen_partition, sample_sm6_paper_shape_and_blas_threads, .timeout = 600)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm6/sample-sm6.gr", &g), CKY_OK,
                 "%s", cky_last_error());
    codegen_classes c;
    cr_assert_eq(codegen_classes_init(g, &c), CKY_OK);
    codegen_family f;
    cr_assert_eq(codegen_family_build(g, &c, CODEGEN_XT, &f), CKY_OK);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("6x2x2/2x2x2", &shape), CKY_OK);
    codegen_partition p[2];
    cr_assert_eq(codegen_partition_build(&f, shape, &p[0]), CKY_OK, "%s", cky_last_error());
    check_partition(&f, &p[0]);
    check_figures(&f, &p[0]);
    codegen_partition_free(&p[0]);
    codegen_family_free(&f);
    cr_assert_eq(codegen_family_build(g, &c, CODEGEN_TX, &f), CKY_OK);
    blas_threads_set_fn set = (blas_threads_set_fn)dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    for (int t = 0; t < 2; t++) {
        if (set)
            set(t + 1);
        cr_assert_eq(codegen_partition_build(&f, codegen_shape_auto(f.nrule), &p[t]), CKY_OK,
                     "%s", cky_last_error());
    }
    cr_assert_eq(p[0].candidate_loads[CODEGEN_SPECTRAL], p[1].candidate_loads[CODEGEN_SPECTRAL],
                 "the spectral cut depends on the BLAS threads");
    cr_assert_eq(p[0].nblock, p[1].nblock);
    cr_assert_eq(memcmp(p[0].rule, p[1].rule, (size_t)f.nrule * sizeof *p[0].rule), 0,
                 "the partition depends on the BLAS threads");
    for (int t = 0; t < 2; t++)
        codegen_partition_free(&p[t]);
    codegen_family_free(&f);
    codegen_classes_free(&c);
    grammar_free(g);
}
