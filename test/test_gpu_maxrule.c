/* The max-rule decoder on the gpu engine (parser/gpu_sum.h, decode_maxrule_gpu) against the
 * cpu engine's: the same results bit for bit (log P, the max-rule score, the tree) for dev
 * sentences of sample-sm1 and sample-sm3, with two workspace widths, and a 200-word sentence
 * finite. Equal log P doubles need the same float bits of the root's inside layer and
 * exponent, and equal max-rule scores the same layers under the tree. Skipped without a
 * CUDA device. CKY_GPU_TEST_GRAMMAR=PATH (a .gr) and CKY_GPU_TEST_MAXLEN=N add a grammar
 * (device runs), with the kernel cache CKY_CACHE when set (else the build's test cache). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/tree.h"
#include "../kernels/gpu.h"
#include "../parser/parser.h"
#include "test_dev.h"

#define GRAMMARS CKY_SHARED "/grammars/"

static const char *test_cache(void)
{
    const char *dir = getenv("CKY_CACHE");
    return dir ? dir : CKY_BUILD "/test-cache";
}

static void need_gpu(void)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the GPU max-rule decoder is not tested here");
}

static void run(const grammar *g, parser_engine engine, int workspace, const sentence *s, int n,
                parse_result *out)
{
    parser_options o = parser_default_options();
    o.engine = engine;
    o.decoder = PARSER_DECODER_MAXRULE;
    o.workspace = workspace;
    o.cache_dir = test_cache();
    parser *p;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(parser_parse(p, s, n, out), CKY_OK, "%s", cky_last_error());
    parser_free(p);
}

static char *tree_text(const tree *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tree_write_line(t, f);
    fclose(f);
    return buf;
}

static void same_results(const parse_result *a, const parse_result *b, int n, const char *what)
{
    for (int k = 0; k < n; k++) {
        cr_assert_eq(a[k].outcome, b[k].outcome, "%s, sentence %d: outcome", what, k);
        cr_assert(memcmp(&a[k].loglik, &b[k].loglik, sizeof(double)) == 0,
                  "%s, sentence %d: log P %.17g vs %.17g", what, k, a[k].loglik, b[k].loglik);
        cr_assert(memcmp(&a[k].score, &b[k].score, sizeof(double)) == 0,
                  "%s, sentence %d: score %.17g vs %.17g", what, k, a[k].score, b[k].score);
        char *ta = tree_text(a[k].tree), *tb = tree_text(b[k].tree);
        cr_assert_str_eq(ta, tb, "%s, sentence %d: trees differ", what, k);
        free(ta);
        free(tb);
    }
}

static void check_grammar(const char *spec, int nsent, int maxlen)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(spec, &g), CKY_OK, "%s", cky_last_error());
    sentence *s = calloc((size_t)nsent, sizeof *s);
    int n = dev_sentences(nsent, maxlen, s);
    parse_result *cpu = calloc((size_t)n, sizeof *cpu), *gpu = calloc((size_t)n, sizeof *gpu);
    parse_result *narrow = calloc((size_t)n, sizeof *narrow);
    run(g, PARSER_ENGINE_CPU, 0, s, n, cpu);
    run(g, PARSER_ENGINE_GPU, 0, s, n, gpu);
    run(g, PARSER_ENGINE_GPU, 200, s, n, narrow);
    int trees = 0;
    for (int k = 0; k < n; k++)
        trees += cpu[k].outcome == PARSE_OK && isfinite(cpu[k].loglik);
    cr_assert_geq(trees, n - 1, "%s: %d trees of %d", spec, trees, n);
    same_results(cpu, gpu, n, "cpu vs gpu");
    same_results(gpu, narrow, n, "gpu: workspace default vs 200");
    cr_log_info("gpu max-rule: %s, %d sentences <= %d words: the cpu engine's bits", spec, n,
                maxlen);
    for (int k = 0; k < n; k++) {
        parse_result_clear(&cpu[k]);
        parse_result_clear(&gpu[k]);
        parse_result_clear(&narrow[k]);
        sentence_free(&s[k]);
    }
    free(cpu);
    free(gpu);
    free(narrow);
    free(s);
    grammar_free(g);
}

Test(gpu_maxrule, same_bits_as_cpu_sm1, .timeout = 600)
{
    check_grammar(GRAMMARS "sample-sm1/sample-sm1.gr", 40, 25);
}

Test(gpu_maxrule, same_bits_as_cpu_sm3, .timeout = 600)
{
    check_grammar(GRAMMARS "sample-sm3/sample-sm3.gr", 24, 30);
}

Test(gpu_maxrule, other_grammar, .timeout = 1800)
{
    const char *spec = getenv("CKY_GPU_TEST_GRAMMAR");
    if (!spec)
        cr_skip_test("CKY_GPU_TEST_GRAMMAR not set");
    const char *maxlen = getenv("CKY_GPU_TEST_MAXLEN");
    check_grammar(spec, 60, maxlen ? atoi(maxlen) : 40);
}

/* A 200-word sentence (dev words, repeated): finite log P and a tree. */
Test(gpu_maxrule, long_sentence, .timeout = 600)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence s[40];
    int n = dev_sentences(40, 40, s);
    char *words[200];
    int m = 0;
    for (int k = 0; k < n && m < 200; k++)
        for (int i = 0; i < s[k].n && m < 200; i++)
            words[m++] = s[k].words[i];
    cr_assert_eq(m, 200);
    sentence one;
    cr_assert_eq(sentence_from_words(words, m, &one), CKY_OK);
    parse_result r;
    run(g, PARSER_ENGINE_GPU, 0, &one, 1, &r);
    cr_assert_eq(r.outcome, PARSE_OK, "%s", r.error ? r.error : "no parse");
    cr_assert(isfinite(r.loglik) && r.loglik < -745, "log P %g", r.loglik);
    cr_assert(isfinite(r.score), "score %g", r.score);
    parse_result_clear(&r);
    sentence_free(&one);
    for (int k = 0; k < n; k++)
        sentence_free(&s[k]);
    grammar_free(g);
}
