/* The GPU engine against the CPU generated path: bit-identical charts (both layers, every
 * cell), identical root scores and extraction arrays, whatever the workspace width and the
 * kernels' grid order, and the same bits twice; in float32 and in fixed point (both engines
 * with .fixed); with the generic kernel alone, and on a first run (an empty cache: the
 * kernels compiling while the engine parses). Skipped without a CUDA device.
 * CKY_GPU_TEST_GRAMMAR=PATH and CKY_GPU_TEST_MAXLEN=N run the chart comparison on another
 * grammar (device runs), with the kernel cache CKY_CACHE when it is set (else the build's
 * test cache). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/gpu.h"
#include "../engines/cpu/cpu.h"
#include "../decoders/viterbi/viterbi_gpu.h"
#include "../util/io.h"

#define MAXSENT 24

/* The kernel cache of the tests: CKY_CACHE when the user set it, else the build's. */
static const char *test_cache(void)
{
    const char *dir = getenv("CKY_CACHE");
    return dir ? dir : CKY_BUILD "/test-cache";
}

static void need_gpu(void)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the GPU engine is not tested here");
}

/* Every `step`-th dev sentence of 1..maxlen words, at most `want`. */
static int dev_sentences(int want, int maxlen, int step, sentence *out)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(CKY_SHARED "/data/ptb-sample/dev.txt", &in), CKY_OK);
    char *line;
    size_t len;
    int n = 0, seen = 0;
    while (n < want && !io_lines_next(in, &line, &len) && line) {
        sentence s;
        cr_assert_eq(sentence_from_line(line, len, &s), CKY_OK);
        if (s.n >= 1 && s.n <= maxlen && seen++ % step == 0)
            out[n++] = s;
        else
            sentence_free(&s);
    }
    io_lines_close(in);
    return n;
}

/* Parse with the GPU engine with settings o (device 0) and with the CPU engine; compare
 * everything. */
static void check_options(const char *spec, int nsent, int maxlen, int step,
                          gpu_dev_options o)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(spec, &g), CKY_OK, "%s", cky_last_error());
    sentence s[MAXSENT];
    int n = dev_sentences(nsent < MAXSENT ? nsent : MAXSENT, maxlen, step, s);
    cr_assert_gt(n, 0);
    cpu_engine *cpu;
    cpu_engine_options co = {.cache_dir = o.cache_dir, .fixed = o.fixed};
    cr_assert_eq(cpu_engine_new(g, &co, &cpu), CKY_OK, "%s", cky_last_error());
    chart *want[MAXSENT];
    cr_assert_eq(cpu_engine_parse(cpu, s, n, want), CKY_OK, "%s", cky_last_error());
    gpu_engine *gpu;
    cr_assert_eq(gpu_engine_new(g, &o, &gpu), CKY_OK, "%s", cky_last_error());
    gpu_viterbi *dec;
    cr_assert_eq(gpu_viterbi_new(gpu, &dec), CKY_OK, "%s", cky_last_error());
    for (int run = 0; run < 2; run++) { /* the same bits twice */
        double root[MAXSENT];
        viterbi_node *nodes[MAXSENT];
        chart *got[MAXSENT];
        cr_assert_eq(gpu_viterbi_parse(dec, s, n, root, nodes, got, NULL), CKY_OK, "%s",
                     cky_last_error());
        for (int k = 0; k < n; k++) {
            char msg[256];
            cr_assert_eq(chart_compare(got[k], want[k], msg, sizeof msg), 0,
                         "%s, sentence %d (%d words): %s", spec, k, s[k].n, msg);
            double r = chart_post(want[k], 0, s[k].n)[g->sub_offset[0]];
            cr_assert(root[k] == r, "sentence %d: root %.9g, cpu %.9g", k, root[k], r);
            if (r == -INFINITY) {
                cr_assert_null(nodes[k]);
            } else {
                viterbi_node *ref = malloc((2 * (size_t)s[k].n - 1) * sizeof *ref);
                cr_assert_eq(viterbi_extract_array(g, want[k], ref), CKY_OK);
                cr_assert_eq(memcmp(ref, nodes[k], (2 * (size_t)s[k].n - 1) * sizeof *ref), 0,
                             "sentence %d: trees differ", k);
                free(ref);
            }
            free(nodes[k]);
            chart_free(got[k]);
        }
    }
    const gpu_stats *st = gpu_engine_stats(gpu);
    cr_assert_eq(st->sentences, 2L * n);
    cr_assert_gt(st->rule_evaluations, 0);
    gpu_viterbi_free(dec);
    gpu_engine_free(gpu);
    cpu_engine_free(cpu);
    for (int k = 0; k < n; k++) {
        chart_free(want[k]);
        sentence_free(&s[k]);
    }
    grammar_free(g);
}

/* The default grid settings at `width` work items per workspace (0: the default). */
static void check_grammar(const char *spec, int nsent, int maxlen, int step, int width)
{
    check_options(spec, nsent, maxlen, step,
                  (gpu_dev_options){.width = width, .chunk = -1, .cache_dir = test_cache()});
}

/* The same in fixed point. */
static void check_fixed(const char *spec, int nsent, int maxlen, int step, int width)
{
    check_options(spec, nsent, maxlen, step,
                  (gpu_dev_options){.width = width, .chunk = -1, .cache_dir = test_cache(),
                                    .fixed = 1});
}

Test(gpu_engine, charts_bit_identical_sample_sm1, .timeout = 300)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 12, 25, 1, 0);
}

/* 37 work items per workspace: many chunks per span, partial tiles everywhere */
Test(gpu_engine, narrow_workspace_sample_sm1, .timeout = 300)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 8, 20, 3, 37);
}

/* The kernels' grid order (codegen.h), at 8 tiles per launch: one tile per thread block,
 * each code block over all tiles in turn (chunk 0) or by chunks of 3 tiles; three tiles
 * per block (the last block partial), all at once or by chunks of 4 tiles (2 blocks: a
 * partial chunk at the end). The other tests run the default, 4 tiles per block. */
Test(gpu_engine, grid_order_sample_sm1, .timeout = 300)
{
    const int order[][2] = {{1, 0}, {1, 3}, {3, 0}, {3, 4}};
    for (int c = 0; c < 4; c++)
        check_options(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 8, 20, 3,
                      (gpu_dev_options){.width = 1000, .block_tiles = order[c][0],
                                        .chunk = order[c][1], .cache_dir = test_cache()});
}

/* A grid setting out of range is an error that names it, not a silent default. */
Test(gpu_engine, bad_grid_setting_is_an_error)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK);
    const gpu_dev_options bad[] = {{.block_tiles = 9, .chunk = -1}, {.chunk = -2},
                                   {.chunk = (1 << 20) + 1}};
    const char *what[] = {"tiles per thread block", "tiles per chunk", "tiles per chunk"};
    for (int k = 0; k < 3; k++) {
        gpu_engine *gpu = NULL;
        cr_assert_eq(gpu_engine_new(g, &bad[k], &gpu), CKY_ERR_ARG);
        cr_assert(strstr(cky_last_error(), what[k]), "%s", cky_last_error());
    }
    grammar_free(g);
}

Test(gpu_engine, charts_bit_identical_sample_sm3_native, .timeout = 600)
{
    check_grammar(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 6, 20, 5, 0);
}

/* A grammar named by the environment (device runs: sample-sm5, sample-sm6). */
Test(gpu_engine, charts_bit_identical_env_grammar, .timeout = 1800)
{
    const char *spec = getenv("CKY_GPU_TEST_GRAMMAR");
    if (!spec)
        cr_skip_test("set CKY_GPU_TEST_GRAMMAR to compare another grammar's charts");
    const char *ml = getenv("CKY_GPU_TEST_MAXLEN");
    check_grammar(spec, 16, ml ? atoi(ml) : 30, 7, 0);
}

/* Fixed point: 37 work items per workspace (partial tiles, many launches), then the
 * default width. */
Test(gpu_engine, fixed_point_charts_bit_identical_sample_sm1, .timeout = 300)
{
    check_fixed(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 8, 20, 3, 37);
    check_fixed(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 12, 25, 1, 0);
}

Test(gpu_engine, fixed_point_charts_bit_identical_sample_sm3_native, .timeout = 600)
{
    check_fixed(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 6, 20, 5, 0);
}

/* Fixed point, the grammar named by the environment, when CKY_GPU_TEST_FIXED is set too. */
Test(gpu_engine, fixed_point_charts_bit_identical_env_grammar, .timeout = 1800)
{
    const char *spec = getenv("CKY_GPU_TEST_GRAMMAR");
    if (!spec || !getenv("CKY_GPU_TEST_FIXED"))
        cr_skip_test("set CKY_GPU_TEST_GRAMMAR and CKY_GPU_TEST_FIXED to compare another "
                     "grammar's fixed-point charts");
    const char *ml = getenv("CKY_GPU_TEST_MAXLEN");
    check_fixed(spec, 16, ml ? atoi(ml) : 30, 7, 0);
}

/* The generic kernel alone (codegen/generic.h), float32 and fixed point, with partial
 * tiles and at the default width: the compiled kernels' charts, the cpu engine's. */
Test(gpu_engine, generic_kernel_charts_bit_identical_sample_sm1, .timeout = 300)
{
    for (int fixed = 0; fixed < 2; fixed++)
        for (int narrow = 0; narrow < 2; narrow++)
            check_options(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 12, 25, 1,
                          (gpu_dev_options){.width = narrow ? 37 : 0, .chunk = -1,
                                            .cache_dir = test_cache(), .fixed = fixed,
                                            .kernels = GPU_KERNELS_GENERIC});
}

Test(gpu_engine, generic_kernel_charts_bit_identical_sample_sm3_native, .timeout = 600)
{
    for (int fixed = 0; fixed < 2; fixed++)
        check_options(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 6, 20, 5,
                      (gpu_dev_options){.chunk = -1, .cache_dir = test_cache(),
                                        .fixed = fixed, .kernels = GPU_KERNELS_GENERIC});
}

/* A first run: an empty kernel cache, the kernels compiling in the background while the
 * engine parses twice (the generic kernel standing in for those not there yet), in float32
 * and in fixed point: the same charts. */
Test(gpu_engine, first_run_parses_while_compiling, .timeout = 900)
{
    for (int fixed = 0; fixed < 2; fixed++) {
        char dir[] = "/tmp/cky-first-run-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        check_options(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 6, 20, 5,
                      (gpu_dev_options){.chunk = -1, .cache_dir = dir, .fixed = fixed,
                                        .kernels = GPU_KERNELS_EARLY});
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
    }
}
