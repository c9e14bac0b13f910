/* The max-rule decoder on the gpu engine (gpu/gpu.h, decode_maxrule_gpu) against the
 * cpu engine's: the same results bit for bit (log P, the max-rule score, the tree) for dev
 * sentences of sample-sm1 and sample-sm3, with two workspace widths, a 200-word sentence
 * finite, and a sentence that cannot be parsed failing alone (Viterbi's too). Equal log P
 * doubles need the same float bits of the root's inside layer and exponent, and equal
 * max-rule scores the same layers under the tree. Skipped without a
 * CUDA device. CKY_GPU_TEST_GRAMMAR=PATH (a .gr) and CKY_GPU_TEST_MAXLEN=N add a grammar
 * (device runs), with the kernel cache CKY_CACHE when set (else the build's test cache). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/tree.h"
#include "../gpu/gpu.h"
#include "../engines/cpu/cpu_sum.h"
#include "../parser/parser.h"
#include "../sched/plan.h"
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

/* The settings of run_decoder's parser beyond engine, decoder and workspace. */
typedef struct run_how {
    const char *cache;   /* NULL: test_cache() */
    int generic;         /* parser_test_hooks.generic_kernels */
} run_how;

static void run_how_decoder(const grammar *g, parser_engine engine, parser_decoder decoder,
                            int workspace, run_how how, const sentence *s, int n,
                            parse_result *out)
{
    parser_options o = parser_default_options();
    o.engine = engine;
    o.decoder = decoder;
    o.max_length = 100000;
    o.workspace = workspace;
    o.cache_dir = how.cache ? how.cache : test_cache();
    o.test.generic_kernels = how.generic;
    parser *p;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(parser_parse(p, s, n, out), CKY_OK, "%s", cky_last_error());
    parser_free(p);
}

static void run_decoder(const grammar *g, parser_engine engine, parser_decoder decoder,
                        int workspace, const sentence *s, int n, parse_result *out)
{
    run_how_decoder(g, engine, decoder, workspace, (run_how){0}, s, n, out);
}

static void run(const grammar *g, parser_engine engine, int workspace, const sentence *s, int n,
                parse_result *out)
{
    run_decoder(g, engine, PARSER_DECODER_MAXRULE, workspace, s, n, out);
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

/* The generic kernel alone (codegen/generic.h), and a first run (an empty kernel cache:
 * the sum-product kernels compiling while the engine parses): the cpu engine's bits, for
 * max-rule and Viterbi. */
Test(gpu_maxrule, generic_kernel_and_first_run_same_bits, .timeout = 900)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm3/sample-sm3.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence s[16];
    int n = dev_sentences(16, 25, s);
    parse_result cpu[16], got[16];
    for (int d = 0; d < 2; d++) {
        parser_decoder dec = d ? PARSER_DECODER_VITERBI : PARSER_DECODER_MAXRULE;
        const char *what = d ? "viterbi" : "maxrule";
        run_decoder(g, PARSER_ENGINE_CPU, dec, 0, s, n, cpu);
        run_how_decoder(g, PARSER_ENGINE_GPU, dec, 0, (run_how){.generic = 1}, s, n, got);
        same_results(cpu, got, n, what);
        for (int k = 0; k < n; k++)
            parse_result_clear(&got[k]);
        char dir[] = "/tmp/cky-first-run-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        run_how_decoder(g, PARSER_ENGINE_GPU, dec, 0, (run_how){.cache = dir}, s, n, got);
        same_results(cpu, got, n, what);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
        for (int k = 0; k < n; k++) {
            parse_result_clear(&cpu[k]);
            parse_result_clear(&got[k]);
        }
    }
    for (int k = 0; k < n; k++)
        sentence_free(&s[k]);
    grammar_free(g);
}

Test(gpu_maxrule, other_grammar, .timeout = 1800)
{
    const char *spec = getenv("CKY_GPU_TEST_GRAMMAR");
    if (!spec)
        cr_skip_test("CKY_GPU_TEST_GRAMMAR not set");
    const char *maxlen = getenv("CKY_GPU_TEST_MAXLEN");
    check_grammar(spec, 60, maxlen ? atoi(maxlen) : 40);
}

/* ---- the layers themselves: every cell of both passes, gpu against cpu ---- */

typedef struct layers {
    gpu_engine *e;
    const plan *p; /* of the last sub-batch */
    float *post, *opre;
    int *epost, *eopre;
    long ncell;
    int nsub;
} layers;

static size_t lay_bytes(void *ctx, int n) { return 0; }

static cky_status lay_prepare(void *ctx, gpu_dev *d, const plan *p, const sentence *s, int first)
{
    return CKY_OK;
}

static cky_status lay_finish(void *ctx, gpu_dev *d, const plan *p, int first)
{
    layers *l = ctx;
    gpu_sum_layers s = gpu_engine_sum_layers(l->e);
    cr_assert_eq(first, 0, "one sub-batch expected");
    /* the passes run on the device's own (non-blocking) stream: wait for them */
    cr_assert_eq(cudaStreamSynchronize(d->stream), 0);
    size_t floats = (size_t)p->ncell * d->nsub;
    l->ncell = p->ncell;
    l->nsub = d->nsub;
    l->post = malloc(floats * sizeof(float));
    l->opre = malloc(floats * sizeof(float));
    l->epost = malloc((size_t)p->ncell * sizeof(int));
    l->eopre = malloc((size_t)p->ncell * sizeof(int));
    cr_assert_eq(cudaMemcpy(l->post, d->post.p, floats * 4, cudaMemcpyDeviceToHost), 0);
    cr_assert_eq(cudaMemcpy(l->opre, s.opre, floats * 4, cudaMemcpyDeviceToHost), 0);
    cr_assert_eq(cudaMemcpy(l->epost, s.epost, p->ncell * 4, cudaMemcpyDeviceToHost), 0);
    cr_assert_eq(cudaMemcpy(l->eopre, s.eopre, p->ncell * 4, cudaMemcpyDeviceToHost), 0);
    return CKY_OK;
}

static void lay_discard(void *ctx, int first, int n) {}

/* The first difference of one layer of sentence k (cells c0.. of the batch) from the cpu's. */
static void same_layer(const char *what, int k, const float *g, const int *ge, const float *c,
                       const int *ce, int ncell, int nsub)
{
    for (int cell = 0; cell < ncell; cell++) {
        cr_assert_eq(ge[cell], ce[cell], "sentence %d, %s exponent of cell %d: gpu %d, cpu %d",
                     k, what, cell, ge[cell], ce[cell]);
        for (int x = 0; x < nsub; x++)
            cr_assert(memcmp(&g[(size_t)cell * nsub + x], &c[(size_t)cell * nsub + x], 4) == 0,
                      "sentence %d, %s of cell %d, substate %d: gpu %.9g, cpu %.9g", k, what,
                      cell, x, (double)g[(size_t)cell * nsub + x],
                      (double)c[(size_t)cell * nsub + x]);
    }
}

static void check_layers(const char *spec, int nsent, int maxlen)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(spec, &g), CKY_OK, "%s", cky_last_error());
    sentence *s = calloc((size_t)nsent, sizeof *s);
    int n = dev_sentences(nsent, maxlen, s);
    cpu_engine_options co = {.threads = 2, .cache_dir = test_cache()};
    cpu_engine *ce;
    cr_assert_eq(cpu_engine_new(g, &co, &ce), CKY_OK, "%s", cky_last_error());
    sum_chart **c = calloc((size_t)n, sizeof *c);
    cr_assert_eq(cpu_engine_inside_sum(ce, s, n, c), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(cpu_engine_outside_sum(ce, c, n), CKY_OK, "%s", cky_last_error());
    gpu_dev_options go = {.chunk = -1, .cache_dir = test_cache(),
                          .semiring = CODEGEN_SEMIRING_SUM_PRODUCT};
    layers l = {0};
    cr_assert_eq(gpu_engine_new(g, &go, &l.e), CKY_OK, "%s", cky_last_error());
    gpu_decoder dec = {&l, CODEGEN_SEMIRING_SUM_PRODUCT,
                       1u << ENGINE_PASS_INSIDE | 1u << ENGINE_PASS_OUTSIDE, lay_bytes, lay_prepare,
                       lay_finish, lay_discard};
    cr_assert_eq(gpu_engine_parse(l.e, s, n, &dec), CKY_OK, "%s", cky_last_error());
    long c0 = 0;
    for (int k = 0; k < n; k++) {
        int cells = (int)chart_ncells(s[k].n);
        same_layer("inside (post)", k, l.post + c0 * l.nsub, l.epost + c0, c[k]->post,
                   c[k]->epost, cells, l.nsub);
        same_layer("outside (opre)", k, l.opre + c0 * l.nsub, l.eopre + c0, c[k]->opre,
                   c[k]->eopre, cells, l.nsub);
        c0 += cells;
        sum_chart_free(c[k]);
        sentence_free(&s[k]);
    }
    cr_log_info("gpu max-rule layers: %s, %d sentences <= %d words: every cell the cpu's bits",
                spec, n, maxlen);
    free(l.post);
    free(l.opre);
    free(l.epost);
    free(l.eopre);
    free(c);
    free(s);
    gpu_engine_free(l.e);
    cpu_engine_free(ce);
    grammar_free(g);
}

Test(gpu_maxrule, layers_bit_identical_sm3, .timeout = 600)
{
    check_layers(GRAMMARS "sample-sm3/sample-sm3.gr", 20, 25);
}

Test(gpu_maxrule, layers_other_grammar, .timeout = 1800)
{
    const char *spec = getenv("CKY_GPU_TEST_GRAMMAR");
    if (!spec)
        cr_skip_test("CKY_GPU_TEST_GRAMMAR not set");
    const char *maxlen = getenv("CKY_GPU_TEST_MAXLEN");
    check_layers(spec, 30, maxlen ? atoi(maxlen) : 40);
}

/* A 200-word sentence (dev words, repeated): finite log P and a tree, the cpu engine's bits
 * (spans over 64 words: max-c lists their candidates 64 splits at a time). */
Test(gpu_maxrule, long_sentence, .timeout = 600)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence one;
    dev_long_sentence(200, 40, &one);
    parse_result r, cpu;
    run(g, PARSER_ENGINE_GPU, 0, &one, 1, &r);
    cr_assert_eq(r.outcome, PARSE_OK, "%s", r.error ? r.error : "no parse");
    cr_assert(isfinite(r.loglik) && r.loglik < -745, "log P %g", r.loglik);
    cr_assert(isfinite(r.score), "score %g", r.score);
    run(g, PARSER_ENGINE_CPU, 0, &one, 1, &cpu);
    same_results(&cpu, &r, 1, "cpu vs gpu, 200 words");
    parse_result_clear(&cpu);
    parse_result_clear(&r);
    sentence_free(&one);
    grammar_free(g);
}

/* A sentence that cannot be parsed between two short ones, in each decoder: max-rule's
 * past the outside pass's item limit (plan_pull_words() + 1 words, its items numbered as
 * int would overflow: the limit's message), Viterbi's too big for the memory (5,000 words:
 * out of memory, which must not be left for the next sentence's launches to report). It
 * alone fails; the short ones get the cpu engine's bits. */
static void check_fails_alone(parser_decoder decoder, int words, const char *message)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence s[3], cpu_s[2];
    cr_assert_eq(dev_sentences(2, 40, cpu_s), 2);
    s[0] = cpu_s[0];
    dev_long_sentence(words, 40, &s[1]);
    s[2] = cpu_s[1];
    parse_result r[3], cpu[2];
    run_decoder(g, PARSER_ENGINE_GPU, decoder, 0, s, 3, r);
    cr_assert_eq(r[1].outcome, PARSE_FAILED, "%d words: outcome %d", words, r[1].outcome);
    cr_assert(r[1].error && strstr(r[1].error, message), "%s", r[1].error);
    run_decoder(g, PARSER_ENGINE_CPU, decoder, 0, cpu_s, 2, cpu);
    parse_result gpu_short[2] = {r[0], r[2]};
    same_results(cpu, gpu_short, 2, "cpu vs gpu beside the long sentence");
    for (int k = 0; k < 3; k++)
        parse_result_clear(&r[k]);
    for (int k = 0; k < 2; k++) {
        parse_result_clear(&cpu[k]);
        sentence_free(&cpu_s[k]);
    }
    sentence_free(&s[1]);
    grammar_free(g);
}

Test(gpu_maxrule, item_limit_fails_alone, .timeout = 600)
{
    check_fails_alone(PARSER_DECODER_MAXRULE, plan_pull_words() + 1, "work items");
}

Test(gpu_maxrule, viterbi_out_of_memory_fails_alone, .timeout = 600)
{
    check_fails_alone(PARSER_DECODER_VITERBI, 5000, "out of memory");
}
