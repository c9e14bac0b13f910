/* The CPU fast path (generated kernels on CPU threads) against the float32 reference loop:
 * bit-identical charts (both layers, every cell) and identical trees. Small grammar and short
 * sentences here; the full dev checks are in `make check-dev`. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../engines/cpu/cpu.h"
#include "../engines/ref/ref.h"
#include "../util/io.h"
#include "../decoders/viterbi/viterbi.h"
#include "test_dev.h"

static void check_grammar(const char *spec, int nsent, int maxlen, int threads)
{
    grammar *g;
    cr_assert_eq(grammar_load(spec, &g), CKY_OK, "%s", cky_last_error());
    cpu_engine *e;
    cpu_engine_options o = {.threads = threads, .width = 37,
                            .cache_dir = CKY_BUILD "/test-cache"};
    cr_assert_eq(cpu_engine_new(g, &o, &e), CKY_OK, "%s", cky_last_error());
    sentence s[16];
    int n = dev_sentences(nsent, maxlen, s);
    cr_assert_gt(n, 0);
    chart *fast[16];
    cr_assert_eq(cpu_engine_parse(e, s, n, fast), CKY_OK, "%s", cky_last_error());
    for (int k = 0; k < n; k++) {
        chart *ref;
        cr_assert_eq(ref_parse(g, s[k].words, s[k].n, CHART_FLOAT, &ref), CKY_OK);
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
    check_grammar(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 6, 12, 2);
}

Test(cpu, charts_bit_identical_sample_sm3_native, .timeout = 600)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 3, 10, 1);
}
