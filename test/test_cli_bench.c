/* cky bench without a GPU (issue 13): with the cpu engine it runs both decoders, one row
 * each, sentences/s only (a native grammar: both run; a text grammar: max-rule's row says
 * why it cannot run, and --decoder maxrule is then an error with that message); --json has
 * a "decoders" entry per row and the first row at the top level; --decoder runs one. The
 * gpu engine's rows (rule evaluations against the add+max and sum-product peaks, per pass)
 * need a GPU: test_gpu_engine.c's bench test. */
#include "test_cli_run.h"

#define SM3 CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr"
/* the suite's shared kernel cache (test_cpu_sum.c and test_maxrule.c fill it too) */
#define BENCH "CKY_CACHE='" CKY_BUILD "/test-cache' '" RUN_CKY "' bench --engine cpu --threads 2 " \
              "--repeat 1 "

/* A folder with short.txt: four short dev sentences (at most 8 words). */
static void setup_short(char *d)
{
    run_setup(d);
    cr_assert_eq(run_sh(d, "awk 'NF <= 8' '%s/data/ptb-sample/dev.txt' | head -4 > short.txt",
                        CKY_SHARED), 0);
}

/* The line of `text` that starts with `prefix` (malloc'ed), or NULL. */
static char *line_starting(const char *text, const char *prefix)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, prefix, strlen(prefix))) {
            const char *e = strchr(l, '\n');
            return strndup(l, e ? (size_t)(e - l) : strlen(l));
        }
    return NULL;
}

Test(cli_bench, cpu_engine_native_grammar_has_both_rows, .timeout = 600)
{
    char d[64];
    setup_short(d);
    cr_assert_eq(run_sh(d, BENCH "-g '%s' -i short.txt > out.txt 2> err.txt", SM3), 0, "%s",
                 run_read(d, "err.txt"));
    char *out = run_read(d, "out.txt");
    cr_assert(strstr(out, "engine       cpu, 2 threads"), "%s", out);
    cr_assert(strstr(out, "(4 sentences of 1..40 words"), "%s", out);
    cr_assert_null(strstr(out, "peak"), "the cpu engine has no peak:\n%s", out);
    const char *names[] = {"viterbi ", "maxrule "};
    for (int k = 0; k < 2; k++) {
        char *row = line_starting(out, names[k]);
        cr_assert_not_null(row, "no %s row in:\n%s", names[k], out);
        cr_assert(strstr(row, "best of 1") && strstr(row, " sentences/s, ") &&
                  strstr(row, " words/s"), "%s", row);
        cr_assert_null(strstr(row, "unsupported"), "%s", row);
        free(row);
    }
    cr_assert(strstr(out, "viterbi ") < strstr(out, "maxrule "), "viterbi first:\n%s", out);
    free(out);

    /* one decoder asked for: its row alone */
    cr_assert_eq(run_sh(d, BENCH "-g '%s' -i short.txt --decoder maxrule > one.txt", SM3), 0);
    out = run_read(d, "one.txt");
    char *row = line_starting(out, "maxrule ");
    cr_assert_not_null(row, "%s", out);
    cr_assert_null(line_starting(out, "viterbi "), "%s", out);
    free(row);
    free(out);
    run_cleanup(d);
}

Test(cli_bench, cpu_engine_json_has_an_entry_per_decoder, .timeout = 600)
{
    char d[64];
    setup_short(d);
    cr_assert_eq(run_sh(d, BENCH "-g '%s' -i short.txt --json --bucket-width 5 > out.json",
                        SM3), 0);
    char *out = run_read(d, "out.json");
    cr_assert(strstr(out, "\"engine\": \"cpu\"") && strstr(out, "\"threads\": 2"), "%s", out);
    const char *decoders = strstr(out, "\"decoders\": [");
    cr_assert_not_null(decoders, "%s", out);
    /* the first row at the top level, as before there were rows (tools/plot-speed) */
    const char *top = strstr(out, "\"sentences_per_second\": ");
    cr_assert(top && top < decoders, "%s", out);
    cr_assert(strstr(out, "\"buckets\": [{\"min_length\": 1, \"max_length\": 5") < decoders,
              "%s", out);
    const char *v = strstr(decoders, "{\"decoder\": \"viterbi\", \"supported\": true, "
                                     "\"setup_seconds\": ");
    const char *m = strstr(decoders, "{\"decoder\": \"maxrule\", \"supported\": true, "
                                     "\"setup_seconds\": ");
    cr_assert(v && m && v < m, "%s", decoders);
    cr_assert(strstr(v, "\"sentences_per_second\": ") < m, "%s", decoders);
    cr_assert(strstr(m, "\"sentences_per_second\": "), "%s", decoders);
    cr_assert(strstr(m, "\"buckets\": [{\"min_length\": 1"), "%s", decoders);
    cr_assert_null(strstr(out, "peak"), "the cpu engine has no peak: %s", out);
    cr_assert_eq(out[strlen(out) - 2], '}', "%s", out);
    free(out);
    /* well-formed, where a Python is here to say so */
    if (run_sh(d, "command -v python3 >/dev/null") == 0)
        cr_assert_eq(run_sh(d, "python3 -c 'import json, sys; b = json.load(open(\"out.json\"));"
                               " sys.exit(not (len(b[\"decoders\"]) == 2 and "
                               "b[\"decoder\"] == \"viterbi\"))'"), 0);
    run_cleanup(d);
}

/* The pruned decoder's row in --json: its levels inside the row, the device kernels' seconds
 * (none on the cpu engine), and nothing but JSON. */
Test(cli_bench, pruned_json_is_json, .timeout = 600)
{
    char d[64];
    setup_short(d);
    cr_assert_eq(run_sh(d, BENCH "-g '%s' -i short.txt --json --prune berkeley --decoder "
                           "viterbi > out.json", RUN_GRAMMAR ".gr"), 0);
    char *out = run_read(d, "out.json");
    cr_assert(strstr(out, "\"pruned\": {\"coarse_seconds\": ") &&
                  strstr(out, "\"levels\": [{\"level\": 0, \"kept\": "), "%s", out);
    /* the cpu engine's cascade is on host threads: no device kernel time */
    cr_assert(strstr(out, "\"coarse_kernel_seconds\": 0.000000, "), "%s", out);
    cr_assert_null(strstr(out, "  pruned  "), "text in the JSON: %s", out);
    cr_assert_eq(out[0], '{', "%s", out);
    cr_assert_eq(out[strlen(out) - 2], '}', "%s", out);
    free(out);
    if (run_sh(d, "command -v python3 >/dev/null") == 0)
        cr_assert_eq(run_sh(d, "python3 -c 'import json, sys; b = json.load(open(\"out.json\"));"
                               " sys.exit(b[\"prune\"] != \"berkeley\")'"), 0);
    run_cleanup(d);
}

Test(cli_bench, text_grammar_runs_maxrule, .timeout = 600)
{
    char d[64];
    run_setup(d);
    /* a text export has max-rule too (approximate: its closed Viterbi unaries stand in for
     * the sum closure): asked for, its row alone; not asked for, both rows */
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '%s' bench --engine cpu --repeat 1 -g '%s' "
                           "-i in.txt --decoder maxrule > out.txt 2> err.txt", RUN_CKY,
                        RUN_GRAMMAR), 0);
    char *out = run_read(d, "out.txt");
    char *v = line_starting(out, "viterbi "), *m = line_starting(out, "maxrule ");
    cr_assert(!v && m && strstr(m, " sentences/s"), "%s", out);
    free(v);
    free(m);
    free(out);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '%s' bench --engine cpu --repeat 1 -g '%s' "
                           "-i in.txt > out.txt 2> err.txt", RUN_CKY, RUN_GRAMMAR), 0);
    out = run_read(d, "out.txt");
    v = line_starting(out, "viterbi ");
    m = line_starting(out, "maxrule ");
    cr_assert(v && strstr(v, " sentences/s") && m && strstr(m, " sentences/s"), "%s", out);
    cr_assert(strstr(out, "cky parse "), "no end-to-end figure: %s", out);
    free(v);
    free(m);
    free(out);
    run_cleanup(d);
}
