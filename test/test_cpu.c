/* The CPU fast path (generated kernels on CPU threads) against the float32 reference loop,
 * and its fixed-point kernels against the reference in fixed point (CHART_FIXED):
 * bit-identical charts (both layers, every cell) and identical trees. Small grammar and short
 * sentences here; the full dev checks are in `make check-dev` and `make check-cpu`. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../engines/cpu/cpu.h"
#include "../parser/parser.h"
#include "../engines/ref/ref.h"
#include "../util/io.h"
#include "../decoders/viterbi/viterbi.h"
#include "test_dev.h"

static void check_grammar(const char *spec, int nsent, int maxlen, int threads, int fixed)
{
    grammar *g;
    cr_assert_eq(grammar_load(spec, &g), CKY_OK, "%s", cky_last_error());
    cpu_engine *e;
    cpu_engine_options o = {.threads = threads, .width = 37,
                            .cache_dir = CKY_BUILD "/test-cache", .fixed = fixed};
    cr_assert_eq(cpu_engine_new(g, &o, &e), CKY_OK, "%s", cky_last_error());
    sentence s[16];
    int n = dev_sentences(nsent, maxlen, s);
    cr_assert_gt(n, 0);
    chart *fast[16];
    cr_assert_eq(cpu_engine_parse(e, s, n, fast), CKY_OK, "%s", cky_last_error());
    for (int k = 0; k < n; k++) {
        chart *ref;
        cr_assert_eq(fast[k]->mode, fixed ? CHART_FIXED : CHART_FLOAT);
        cr_assert_eq(ref_parse(g, s[k].words, s[k].n, fast[k]->mode, &ref), CKY_OK);
        char msg[256];
        cr_assert_eq(chart_compare(fast[k], ref, msg, sizeof msg), 0, "sentence %d: %s", k, msg);
        tree *a, *b;
        cr_assert_eq(viterbi_extract(g, fast[k], s[k].words, VITERBI_EXACT, &a), CKY_OK);
        cr_assert_eq(viterbi_extract(g, ref, s[k].words, VITERBI_EXACT, &b), CKY_OK);
        char *sa = NULL, *sb = NULL;
        size_t la, lb;
        FILE *fa = open_memstream(&sa, &la), *fb = open_memstream(&sb, &lb);
        tree_write_line(a, fa);
        tree_write_line(b, fb);
        fclose(fa);
        fclose(fb);
        cr_assert_str_eq(sa, sb, "sentence %d: trees differ", k);
        free(sa);
        free(sb);
        tree_free(a);
        tree_free(b);
        chart_free(ref);
        chart_free(fast[k]);
        sentence_free(&s[k]);
    }
    cr_assert_gt(cpu_engine_rule_evaluations(e), 0);
    cpu_engine_free(e);
    grammar_free(g);
}

/* A narrow workspace (37 items) forces several flushes per span; two threads split columns. */
Test(cpu, charts_bit_identical_sample_sm1, .timeout = 600)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 6, 12, 2, 0);
}

Test(cpu, charts_bit_identical_sample_sm3_native, .timeout = 600)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 3, 10, 1, 0);
}

/* The fixed-point kernels: the same charts as the reference's fixed-point arithmetic. */
Test(cpu, fixed_point_charts_bit_identical_sample_sm1, .timeout = 600)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 6, 12, 2, 1);
}

Test(cpu, fixed_point_charts_bit_identical_sample_sm3_native, .timeout = 600)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 3, 10, 1, 1);
}

/* The fixed-point chart is not the float32 one (else the test above would not test the
 * fixed-point path): some cell of a sentence differs. */
Test(cpu, fixed_point_charts_differ_from_float, .timeout = 600)
{
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK);
    sentence s[4];
    int n = dev_sentences(4, 12, s), differ = 0;
    for (int k = 0; k < n; k++) {
        chart *a, *b;
        char msg[256];
        cr_assert_eq(ref_parse(g, s[k].words, s[k].n, CHART_FLOAT, &a), CKY_OK);
        cr_assert_eq(ref_parse(g, s[k].words, s[k].n, CHART_FIXED, &b), CKY_OK);
        differ += chart_compare(a, b, msg, sizeof msg) != 0;
        chart_free(a);
        chart_free(b);
        sentence_free(&s[k]);
    }
    cr_assert_gt(differ, 0, "fixed point gave the float32 charts on all %d sentences", n);
    grammar_free(g);
}

/* A score below the fixed-point range (a grammar whose binary rules all cost about 200
 * nats, so that a 45-word tree scores under -7,680): the cpu engine notes the sentence and
 * the Viterbi decoder parses it again with the ref engine (parse_result.exact), so that its
 * tree is the exact one; a short sentence of the same grammar stays in fixed point. (The
 * grammar parsed from its source: an image's tables are read-only.) */
Test(cpu, fixed_point_out_of_range_is_parsed_in_double, .timeout = 600)
{
    grammar *g;
    cr_assert_eq(grammar_load_source(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK);
    for (int b = 0; b < g->nbinary; b++) {
        grammar_binary *r = &g->binary[b];
        for (long x = 0; x < (long)r->nrow * g->nsub[r->parent]; x++)
            if (r->score[x] != -INFINITY)
                r->score[x] -= 200.0;
    }
    cr_assert_eq(codegen_fixed_check(g), CKY_OK, "%s", cky_last_error());
    sentence s[2];
    dev_long_sentence(45, 40, &s[0]);
    dev_long_sentence(5, 40, &s[1]);
    parser_options o = parser_default_options();
    o.engine = PARSER_ENGINE_CPU;
    o.arith = PARSER_ARITH_FIXED;
    o.threads = 2;
    o.cache_dir = CKY_BUILD "/test-cache";
    parser *p;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    parse_result r[2];
    for (int k = 0; k < 2; k++)
        parse_result_init(&r[k]);
    cr_assert_eq(parser_parse(p, s, 2, r), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(r[0].outcome, PARSE_OK);
    cr_assert_eq(r[0].exact, 1, "the 45-word sentence (%g nats) was not noted", r[0].score);
    cr_assert_lt(r[0].score, FIXEDPOINT_LOWEST);
    cr_assert_eq(r[1].outcome, PARSE_OK);
    cr_assert_eq(r[1].exact, 0);
    chart *c;
    cr_assert_eq(ref_parse(g, s[0].words, s[0].n, CHART_DOUBLE, &c), CKY_OK);
    cr_assert_eq(r[0].score, chart_post(c, 0, s[0].n)[g->sub_offset[0]]);
    tree *t;
    cr_assert_eq(viterbi_extract(g, c, s[0].words, VITERBI_EXACT, &t), CKY_OK);
    tree *u = tree_unannotate(t);
    char *want = tree_text(u), *got = tree_text(r[0].tree);
    cr_assert_str_eq(got, want);
    free(want);
    free(got);
    tree_free(u);
    chart_free(c);
    for (int k = 0; k < 2; k++) {
        parse_result_clear(&r[k]);
        sentence_free(&s[k]);
    }
    parser_free(p);
    grammar_free(g);
}
