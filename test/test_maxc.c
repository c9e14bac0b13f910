/* The engines' max-c scores and trees (decoders/maxrule/maxc_rules.h, decoders/maxrule/maxc.h): maxc_log against
 * the C library's log; the butterfly of the lanes; node codes into trees (and malformed codes
 * refused); the cpu engine's max-rule trees against the ref engine's (decoders/maxrule/, the jar's
 * double arithmetic) on dev sentences of sample-sm3, the scores within 1e-4; a 200-word
 * sentence gives a tree with finite scores; no binary candidate's log posterior exceeds its
 * parent's upper bound (maxc_upper), which lets the engines skip candidates; the sparse rows'
 * V has the dense sum's bits. The gpu
 * engine's bits are checked against these
 * in test_gpu_maxrule.c. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoders/maxrule/maxrule.h"
#include "../chart/cell.h"
#include "../engines/cpu/cpu_sum.h"
#include "../decoders/maxrule/maxc.h"
#include "../parser/parser.h"
#include "test_dev.h"

#define GRAMMARS CKY_SHARED "/grammars/"

Test(maxc, log_within_ulps)
{
    cr_assert(maxc_log(0) == -INFINITY);
    double xs[] = {1, 2, 0.5, M_SQRT2, nextafter(M_SQRT2, 2), 1 + 1e-12, 1 - 1e-12, DBL_MIN,
                   DBL_MIN / 7, 4.9e-324, DBL_MAX, 1e-300, 3e200, 0.1, 10, M_E};
    for (size_t k = 0; k < sizeof xs / sizeof *xs; k++) {
        double a = maxc_log(xs[k]), b = log(xs[k]);
        cr_assert(fabs(a - b) <= 4 * DBL_EPSILON * fmax(fabs(b), 1e-3),
                  "log(%.17g): %.17g, libm %.17g", xs[k], a, b);
    }
    unsigned long long r = 88172645463325252ull; /* xorshift: values over the whole range */
    for (int k = 0; k < 100000; k++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        double x = ldexp((double)(r >> 11) / 9007199254740992.0 + 0.5, (int)(r % 2000) - 1000);
        double a = maxc_log(x), b = log(x);
        cr_assert(fabs(a - b) <= 4 * DBL_EPSILON * fmax(fabs(b), 1e-3),
                  "log(%.17g): %.17g, libm %.17g", x, a, b);
    }
}

/* The butterfly is the sum tree of halves: lane l + 16 into l, then l + 8, ... */
Test(maxc, lanes_butterfly)
{
    double v[MAXC_LANES], h[MAXC_LANES];
    for (int l = 0; l < MAXC_LANES; l++)
        v[l] = h[l] = (l % 3 ? 1e16 : 1.0) * (l % 2 ? -1 : 1) + l * 0.1;
    for (int half = MAXC_LANES / 2; half >= 1; half /= 2)
        for (int l = 0; l < half; l++)
            h[l] = h[l] + h[l + half];
    double s = maxc_lanes_add(v);
    cr_assert(memcmp(&s, &h[0], sizeof s) == 0, "%.17g vs %.17g", s, h[0]);
}

Test(maxc, node_codes_to_tree)
{
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    int root = 0, s = -1, nn = -1, vb = -1;
    for (int x = 0; x < g->nsym; x++) {
        s = !strcmp(g->name[x], "S") ? x : s;
        nn = !strcmp(g->name[x], "NN") ? x : nn;
        vb = !strcmp(g->name[x], "VB") ? x : vb;
    }
    cr_assert(s > 0 && nn > 0 && vb > 0);
    char *words[] = {"dogs", "bark"};
    int codes[] = {maxc_node_symbol(root, 1), maxc_node_symbol(s, 2), maxc_node_symbol(nn, 1),
                   maxc_node_word(0), maxc_node_symbol(vb, 1), maxc_node_word(1)};
    tree *t;
    cr_assert_eq(maxc_tree_build(g, codes, 6, words, &t), CKY_OK, "%s", cky_last_error());
    char *text = tree_text(t);
    cr_assert_str_eq(text, "( (ROOT (S (NN dogs) (VB bark))) )\n");
    free(text);
    tree_free(t);
    cr_assert_eq(maxc_tree_build(g, codes, 5, words, &t), CKY_ERR_FORMAT); /* unfinished */
    int two[] = {maxc_node_symbol(nn, 1), maxc_node_word(0), maxc_node_symbol(vb, 1),
                 maxc_node_word(1)};
    cr_assert_eq(maxc_tree_build(g, two, 4, words, &t), CKY_ERR_FORMAT); /* two trees */
    grammar_free(g);
}

/* The rows' V from the sparse weights (maxc_row_weight: only the parent substates with a
 * rule) has the bits of the dense sum over every parent substate, in order, of the rule's
 * linear probability rounded to float times an outside value: the zero weights' terms add
 * +0. Checked for every row of every binary rule of sample-sm3 with pseudo-random outside
 * values, some of them 0; the test fails if no weight of the grammar is 0 (nothing left
 * out) or none is sparse. */
Test(maxc, sparse_rows_as_dense_sm3)
{
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm3/sample-sm3.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    maxc_host *h;
    cr_assert_eq(maxc_host_new(g, &h), CKY_OK, "%s", cky_last_error());
    const maxc_tables *t = &h->t;
    float *po = malloc((size_t)g->nsub_total * sizeof *po);
    cr_assert(po);
    unsigned x = 12345;
    for (int k = 0; k < g->nsub_total; k++) {
        x = x * 1103515245u + 12345u;
        po[k] = (x >> 8) % 7 == 0 ? 0.0f : (float)((x >> 8) & 0xffff) / 65536.0f + 0.25f;
    }
    long rows = 0, zeros = 0, kept = 0;
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        int np = g->nsub[r->parent];
        const float *pp = po + g->sub_offset[r->parent];
        for (int row = 0; row < r->nrow; row++, rows++) {
            double dense = 0;
            for (int p = 0; p < np; p++) {
                float w = (float)r->prob[(size_t)row * np + p];
                zeros += w == 0;
                dense = fma((double)w, (double)pp[p], dense);
            }
            double sparse = maxc_row_weight(t, b, row, pp);
            cr_assert(memcmp(&dense, &sparse, sizeof dense) == 0,
                      "rule %d row %d: dense %a, sparse %a", b, row, dense, sparse);
        }
    }
    kept = t->row_nz[t->nrow];
    cr_assert_eq(rows, t->nrow);
    cr_assert_gt(zeros, 0, "no zero weight: the test shows nothing");
    cr_assert_gt(kept, 0);
    free(po);
    maxc_host_free(h);
    grammar_free(g);
}

/* The engines skip a binary candidate when its children's scores plus its parent's bound
 * (maxc_upper, at most 0) come more than MAXC_SLACK below a candidate's score: exact when no
 * candidate's log posterior is above that bound by MAXC_SLACK. Checked for every candidate
 * of dev sentences, with a margin of a hundred. */
static void check_upper(const char *gr, int nsent, int maxlen)
{
    grammar *g;
    cr_assert_eq(grammar_load(gr, &g), CKY_OK, "%s", cky_last_error());
    maxc_host *h;
    cr_assert_eq(maxc_host_new(g, &h), CKY_OK, "%s", cky_last_error());
    const maxc_tables *t = &h->t;
    cpu_engine *e;
    cpu_engine_options o = {.threads = 2, .cache_dir = CKY_BUILD "/test-cache"};
    cr_assert_eq(cpu_engine_new(g, &o, &e), CKY_OK, "%s", cky_last_error());
    sentence s[16];
    int n = dev_sentences(nsent, maxlen, s);
    cr_assert_eq(n, nsent);
    sum_chart *c[16];
    cr_assert_eq(cpu_engine_inside_sum(e, s, n, c), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(cpu_engine_outside_sum(e, c, n), CKY_OK, "%s", cky_last_error());
    double worst = -INFINITY; /* the largest log posterior less its bound */
    long candidates = 0, symbols = 0, bounded = 0; /* (cell, symbol)s with candidates; with
                                                      a bound below -1 */
    for (int m = 0; m < n; m++) {
        maxc_layers y = {c[m]->nsub, c[m]->post, c[m]->opre, c[m]->pre, c[m]->epost,
                         c[m]->eopre, c[m]->epre, NULL, NULL, NULL, NULL, NULL, NULL};
        int e0, len = c[m]->n;
        double logx0 = maxc_root(t, &y, 0, len, &e0);
        cr_assert(isfinite(logx0), "sentence %d has a parse", m);
        for (int d = 2; d <= len; d++)
            for (int i = 0, j = d; j <= len; i++, j++)
                for (int P = 0; P < t->nsym; P++) {
                    if (!t->phrasal[P])
                        continue;
                    double upper = maxc_upper(t, &y, 0, len, i, j, P, e0, logx0);
                    cr_assert(upper <= 0);
                    long before = candidates;
                    for (int b = t->bin_first[P]; b < t->bin_first[P + 1]; b++)
                        for (int k = i + 1; k < j; k++) {
                            if (!maxc_binary_at(t, b, i, k, j))
                                continue;
                            double lp = maxc_candidate(
                                0, maxc_binary_item(t, &y, 0, len, i, k, j, b),
                                maxc_binary_exp(&y, 0, len, i, k, j, e0), logx0);
                            if (lp == -INFINITY)
                                continue;
                            candidates++;
                            worst = fmax(worst, lp - upper);
                            cr_assert(lp <= upper + MAXC_SLACK / 100 && lp <= MAXC_SLACK / 100,
                                      "sentence %d, cell (%d, %d), rule %d, split %d: log "
                                      "posterior %.17g, bound %.17g",
                                      m, i, j, b, k, lp, upper);
                        }
                    symbols += candidates > before;
                    bounded += candidates > before && upper < -1;
                }
        sum_chart_free(c[m]);
        sentence_free(&s[m]);
    }
    /* the bound is no formality: most symbols' is well below 0 */
    cr_assert(bounded > symbols / 2, "%ld of %ld symbols over cells with a bound below -1",
              bounded, symbols);
    fprintf(stderr, "maxc: %s, %ld candidates: largest log posterior less its bound %.3g; "
            "%ld of %ld symbols over cells bounded below -1\n", gr, candidates, worst, bounded,
            symbols);
    cpu_engine_free(e);
    maxc_host_free(h);
    grammar_free(g);
}

Test(maxc, upper_bound_holds_sm1) { check_upper(GRAMMARS "sample-sm1/sample-sm1.gr", 12, 30); }
Test(maxc, upper_bound_holds_sm3, .timeout = 600)
{
    check_upper(GRAMMARS "sample-sm3/sample-sm3.gr", 6, 25);
}

static void parse(const grammar *g, parser_engine engine, const sentence *s, int n,
                  parse_result *out)
{
    parser_options o = parser_default_options();
    o.engine = engine;
    o.decoder = PARSER_DECODER_MAXRULE;
    o.threads = 2;
    o.cache_dir = CKY_BUILD "/test-cache";
    parser *p;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(parser_parse(p, s, n, out), CKY_OK, "%s", cky_last_error());
    parser_free(p);
}

Test(maxc, cpu_engine_trees_as_ref_sm3, .timeout = 600)
{
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm3/sample-sm3.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence s[16];
    int n = dev_sentences(16, 25, s);
    cr_assert_eq(n, 16);
    parse_result cpu[16], ref[16];
    parse(g, PARSER_ENGINE_CPU, s, n, cpu);
    parse(g, PARSER_ENGINE_REF, s, n, ref);
    for (int k = 0; k < n; k++) {
        cr_assert_eq(cpu[k].outcome, PARSE_OK, "sentence %d", k);
        cr_assert_eq(ref[k].outcome, PARSE_OK, "sentence %d", k);
        cr_assert(fabs(cpu[k].loglik - ref[k].loglik) <= 1e-6 * fabs(ref[k].loglik),
                  "sentence %d: log P %.17g, ref %.17g", k, cpu[k].loglik, ref[k].loglik);
        cr_assert(fabs(cpu[k].score - ref[k].score) <= 1e-4 * fmax(fabs(ref[k].score), 1),
                  "sentence %d: max-rule score %.17g, ref %.17g", k, cpu[k].score,
                  ref[k].score);
        char *a = tree_text(cpu[k].tree), *b = tree_text(ref[k].tree);
        cr_assert_str_eq(a, b, "sentence %d: the trees differ", k);
        free(a);
        free(b);
        parse_result_clear(&cpu[k]);
        parse_result_clear(&ref[k]);
        sentence_free(&s[k]);
    }
    grammar_free(g);
}

Test(maxc, long_sentence_cpu, .timeout = 600)
{
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence one;
    dev_long_sentence(200, 40, &one);
    parse_result r;
    parse(g, PARSER_ENGINE_CPU, &one, 1, &r);
    cr_assert_eq(r.outcome, PARSE_OK, "%s", r.error ? r.error : "no parse");
    cr_assert(isfinite(r.loglik) && r.loglik < -745, "log P %g", r.loglik);
    cr_assert(isfinite(r.score) && r.score < 0, "score %g", r.score);
    parse_result_clear(&r);
    sentence_free(&one);
    grammar_free(g);
}
