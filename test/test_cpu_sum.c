/* The sum-product inside pass of the cpu engine (engines/cpu/cpu_sum.h): log P(sentence) within
 * 1e-4 relative of the double-precision max-rule decoder's (decoders/maxrule/) on dev sentences of
 * sample-sm1 and sample-sm3; the outside pass (inside x outside sums to P(sentence) over
 * each word, and agrees between a cell's two layers); the same bits, inside and outside, for
 * another workspace width, thread count and batch; a 200-word sentence stays finite (scaling), and with CKY_TEST_LONG set agrees with
 * maxrule's scaled passes (measured 7.1e-9 relative; minutes of double precision); a
 * text-export grammar (its Viterbi closure as the sum closure) agrees with maxrule on it
 * too; the device's layout of the unary tables gives sum_rules_row's bits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../chart/cell.h"
#include "../decoders/maxrule/maxrule.h"
#include "../engines/cpu/cpu_sum.h"
#include "../semiring/sum_rules.h"
#include "test_dev.h"

#define GRAMMARS CKY_SHARED "/grammars/"

static cpu_engine *engine(const grammar *g, int threads, int width)
{
    cpu_engine *e;
    cpu_engine_options o = {.threads = threads, .width = width,
                            .cache_dir = CKY_BUILD "/test-cache"};
    cr_assert_eq(cpu_engine_new(g, &o, &e), CKY_OK, "%s", cky_last_error());
    return e;
}

/* The relative difference of log P(sentence) from maxrule's (opt: its options). */
static double rel_loglik(const grammar *g, const sentence *s, const sum_chart *c,
                         const maxrule_options *opt)
{
    maxrule_result r;
    cr_assert_eq(maxrule_parse(g, s->words, s->n, opt, &r), CKY_OK, "%s", cky_last_error());
    tree_free(r.tree);
    double ll = sum_chart_loglik(c);
    cr_assert(isfinite(ll) && isfinite(r.loglik), "%d words: log likelihood %g, maxrule %g",
              s->n, ll, r.loglik);
    return fabs(ll - r.loglik) / fabs(r.loglik);
}

static void check_loglik(const char *gr, int nsent, int maxlen)
{
    grammar *g;
    cr_assert_eq(grammar_load(gr, &g), CKY_OK, "%s", cky_last_error());
    cpu_engine *e = engine(g, 2, 0);
    sentence s[32];
    int n = dev_sentences(nsent, maxlen, s);
    cr_assert_eq(n, nsent);
    sum_chart *c[32];
    cr_assert_eq(cpu_engine_inside_sum(e, s, n, c), CKY_OK, "%s", cky_last_error());
    double worst = 0;
    for (int k = 0; k < n; k++) {
        double rel = rel_loglik(g, &s[k], c[k], NULL);
        cr_assert_leq(rel, 1e-4, "%s sentence %d (%d words): relative difference %g", gr, k,
                      s[k].n, rel);
        worst = rel > worst ? rel : worst;
        sum_chart_free(c[k]);
        sentence_free(&s[k]);
    }
    fprintf(stderr, "cpu_sum: %s, %d sentences <= %d words: largest relative difference of "
            "log P %.3g\n", gr, n, maxlen, worst);
    cpu_engine_free(e);
    grammar_free(g);
}

Test(cpu_sum, loglik_matches_maxrule_sm1, .timeout = 600)
{
    check_loglik(GRAMMARS "sample-sm1/sample-sm1.gr", 20, 30);
}

Test(cpu_sum, loglik_matches_maxrule_sm3, .timeout = 600)
{
    check_loglik(GRAMMARS "sample-sm3/sample-sm3.gr", 8, 20);
}

static int same_chart(const sum_chart *a, const sum_chart *b)
{
    size_t cells = chart_ncells(a->n), v = cells * (size_t)a->nsub * sizeof(float);
    size_t e = cells * sizeof(int);
    return a->n == b->n && !memcmp(a->pre, b->pre, v) && !memcmp(a->post, b->post, v) &&
           !memcmp(a->epre, b->epre, e) && !memcmp(a->epost, b->epost, e) &&
           !memcmp(a->opre, b->opre, v) && !memcmp(a->opost, b->opost, v) &&
           !memcmp(a->eopre, b->eopre, e) && !memcmp(a->eopost, b->eopost, e);
}

/* log of sum over substates of layer a x layer b of cell `cell` (with their exponents). */
static double log_dot(const sum_chart *c, size_t cell, const float *a, const int *ea,
                      const float *b, const int *eb)
{
    double sum = 0;
    for (int x = 0; x < c->nsub; x++)
        sum += (double)a[cell * c->nsub + x] * b[cell * c->nsub + x];
    return log(sum) + (ea[cell] + eb[cell]) * M_LN2;
}

/* The outside scores are right: over each word, inside x outside of the tags (pre layer)
 * sums to P(sentence), as over every cell the pre and post layers' inside x outside agree
 * (the probability of a constituent over the cell), to 1e-4 relative of log P. */
static void check_outside(const sum_chart *c)
{
    double ll = sum_chart_loglik(c);
    for (int i = 0; i < c->n; i++) {
        size_t cell = chart_cell(c->n, i, i + 1);
        double w = log_dot(c, cell, c->pre, c->epre, c->opre, c->eopre);
        cr_assert_leq(fabs(w - ll), 1e-4 * fabs(ll), "word %d: %.10g, log P %.10g", i, w, ll);
    }
    for (int d = 2; d <= c->n; d++)
        for (int i = 0; i + d <= c->n; i++) {
            size_t cell = chart_cell(c->n, i, i + d);
            double a = log_dot(c, cell, c->pre, c->epre, c->opre, c->eopre);
            double b = log_dot(c, cell, c->post, c->epost, c->opost, c->eopost);
            cr_assert(a == b || fabs(a - b) <= 1e-4 * fabs(ll), "cell (%d, %d): pre %.10g, "
                      "post %.10g", i, i + d, a, b);
        }
}

Test(cpu_sum, same_bits_for_width_threads_and_batch, .timeout = 600)
{
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    cpu_engine *wide = engine(g, 1, 512), *narrow = engine(g, 2, 7);
    sentence s[6];
    int n = dev_sentences(6, 25, s);
    cr_assert_eq(n, 6);
    sum_chart *a[6], *b[6];
    cr_assert_eq(cpu_engine_inside_sum(wide, s, n, a), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(cpu_engine_outside_sum(wide, a, n), CKY_OK, "%s", cky_last_error());
    for (int k = 0; k < n; k++) { /* one sentence per batch */
        cr_assert_eq(cpu_engine_inside_sum(narrow, &s[k], 1, &b[k]), CKY_OK, "%s",
                     cky_last_error());
        cr_assert_eq(cpu_engine_outside_sum(narrow, &b[k], 1), CKY_OK, "%s", cky_last_error());
    }
    for (int k = 0; k < n; k++) {
        cr_assert(isfinite(sum_chart_loglik(a[k])));
        check_outside(a[k]);
        cr_assert(same_chart(a[k], b[k]), "sentence %d: charts differ", k);
        sum_chart_free(a[k]);
        sum_chart_free(b[k]);
        sentence_free(&s[k]);
    }
    cpu_engine_free(wide);
    cpu_engine_free(narrow);
    grammar_free(g);
}

/* The first 200 words of dev.txt as one sentence: its probability is far below float's (and
 * double's) range, and the scaling keeps it finite and right. */
Test(cpu_sum, long_sentence_scaled, .timeout = 600)
{
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence one;
    dev_long_sentence(200, 1000, &one);
    cpu_engine *e = engine(g, 2, 0);
    sum_chart *c;
    cr_assert_eq(cpu_engine_inside_sum(e, &one, 1, &c), CKY_OK, "%s", cky_last_error());
    double ll = sum_chart_loglik(c);
    cr_assert(isfinite(ll) && ll < -745, "log likelihood %g", ll); /* e^-745: below double */
    cr_assert_eq(cpu_engine_outside_sum(e, &c, 1), CKY_OK, "%s", cky_last_error());
    check_outside(c);
    if (getenv("CKY_TEST_LONG")) { /* maxrule's scaled passes take minutes here */
        maxrule_options opt = {.force_scaled = 0, .scaled_unaries_from_pre = 1};
        double rel = rel_loglik(g, &one, c, &opt);
        fprintf(stderr, "cpu_sum: 200 words, sample-sm1: log P %.10g, relative difference "
                "from maxrule's scaled passes %.3g\n", ll, rel);
        cr_assert_leq(rel, 1e-4);
    }
    sum_chart_free(c);
    sentence_free(&one);
    cpu_engine_free(e);
    grammar_free(g);
}

/* A text export, whose closed Viterbi unaries stand in for the sum closure: log P within
 * 1e-4 of maxrule's on the same grammar. */
Test(cpu_sum, text_export_matches_maxrule, .timeout = 600)
{
    check_loglik(GRAMMARS "sample-sm1/sample-sm1", 3, 12);
}

/* The device's layout of the unary tables (sum_rules_layout), read as the GPU kernel reads it
 * (gpu/sum_kernels.cu, sum_unary), gives sum_rules_row's bits for every row, in cells of
 * one word and of more, over a layer of random values; every row with terms has one slot. */
Test(cpu_sum, unary_layout_rows_as_table_sm3)
{
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm3/sample-sm3.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sum_rules *r;
    cr_assert_eq(sum_rules_new(g, &r), CKY_OK, "%s", cky_last_error());
    int n = r->up.n;
    float *v = malloc((size_t)n * sizeof *v), *got = malloc((size_t)n * sizeof *got);
    srand(7);
    for (int x = 0; x < n; x++)
        v[x] = (float)rand() / ((float)RAND_MAX + 1.0f);
    for (int k = 0; k < 4; k++) {
        const sum_unary_table *t = k < 2 ? &r->up : &r->down;
        int span = k % 2 ? 2 : 1, padded = 0;
        sum_unary_layout l;
        cr_assert_eq(sum_rules_layout(t, span > 1, &l), CKY_OK);
        for (int x = 0; x < n; x++)
            got[x] = -1; /* no slot */
        for (int s = 0; s < l.nslot; s++) {
            int gr = s / 32, x = l.row[s];
            float acc = 0;
            for (int e = l.off[gr] + s % 32; e < l.off[gr + 1]; e += 32) {
                acc = fmaf(l.w[e], v[l.from[e]], acc);
                padded += l.w[e] == 0;
            }
            if (x < 0)
                continue;
            cr_assert_eq(got[x], -1.0f, "row %d has two slots", x);
            got[x] = acc;
        }
        for (int x = 0; x < n; x++) {
            float want = sum_rules_row(t, x, v, span);
            if (got[x] == -1.0f)
                cr_assert_eq(want, 0.0f, "table %d row %d: terms but no slot", k, x);
            else
                cr_assert_eq(memcmp(&got[x], &want, sizeof want), 0,
                             "table %d row %d: %a, sum_rules_row %a", k, x, got[x], want);
        }
        cr_assert_gt(l.nslot, 0, "table %d: no slot", k);
        cr_assert_gt(padded, 0, "table %d: no padding exercised", k);
        sum_rules_layout_free(&l);
    }
    free(v);
    free(got);
    sum_rules_free(r);
    grammar_free(g);
}
