/* cky bench on the gpu engine (issue 13): both peaks measured and printed, a row per
 * decoder, the Viterbi row's inside pass against the add+max peak; max-rule's row says why
 * the gpu engine cannot run it (or, once it can, has its inside and outside passes against
 * the sum-product peak); --decoder maxrule is an error while the engine refuses it. Skips
 * without a GPU. */
#include "test_cli_run.h"

#include "../gpu/gpu.h"

#define GPU_BENCH "CKY_CACHE=cache '" RUN_CKY "' bench -g '" RUN_GRAMMAR "' -i in.txt --repeat 1 "

/* The number after `key` ("\"name\": ") in s, or -1. */
static double number_after(const char *s, const char *key)
{
    const char *p = s ? strstr(s, key) : NULL;
    return p ? atof(p + strlen(key)) : -1;
}

Test(gpu_bench, rows_and_peaks, .timeout = 600)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: cky bench's gpu rows are not measured here");
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, GPU_BENCH "> out.txt 2> err.txt"), 0, "%s", run_read(d, "err.txt"));
    char *out = run_read(d, "out.txt");
    cr_log_info("%s", out);
    cr_assert(strstr(out, "\npeak (add+max)      ") && strstr(out, "\npeak (sum-product)  "),
              "%s", out);
    cr_assert(strstr(out, "\nviterbi      setup ") &&
              strstr(out, "\n  inside       max-plus, ") &&
              strstr(out, "% of the add+max peak"), "%s", out);
    cr_assert(strstr(out, "\nmaxrule      "), "%s", out);
    free(out);

    cr_assert_eq(run_sh(d, GPU_BENCH "--json --bucket-width 0 > out.json"), 0);
    out = run_read(d, "out.json");
    double am = number_after(out, "\"peak_add_max_per_second\": "),
           sp = number_after(out, "\"peak_sum_product_per_second\": ");
    cr_assert(am > 1e12 && sp > am, "add+max %g, sum-product %g", am, sp);
    const char *v = strstr(out, "{\"decoder\": \"viterbi\", \"supported\": true");
    const char *m = strstr(out, "{\"decoder\": \"maxrule\", \"supported\": ");
    cr_assert(v && m && v < m, "%s", out);
    cr_assert(strstr(v, "\"passes\": [{\"pass\": \"inside\", \"semiring\": \"max-plus\"") &&
              strstr(v, "\"peak\": \"add+max\"") < m, "%s", out);
    cr_assert_eq(number_after(v, "\"peak_per_second\": "), am);
    if (!strncmp(m + strlen("{\"decoder\": \"maxrule\", \"supported\": "), "false", 5)) {
        cr_assert(strstr(m, "\"reason\": \"the gpu engine"), "%s", m);
        char *err;
        cr_assert_eq(run_sh(d, GPU_BENCH "--decoder maxrule > one.txt 2> one.err"), 1);
        err = run_read(d, "one.err");
        cr_assert(strstr(err, "cky bench: the gpu engine"), "%s", err);
        free(err);
    } else { /* the gpu engine runs max-rule: its passes against the sum-product peak */
        cr_assert_eq(number_after(m, "\"peak_per_second\": "), sp);
        cr_assert(strstr(m, "\"passes_from\": \"engine\""), "%s", m);
        cr_assert(strstr(m, "{\"pass\": \"inside\", \"semiring\": \"sum-product\"") &&
                  strstr(m, "{\"pass\": \"outside\", \"semiring\": \"sum-product\""), "%s", m);
    }
    free(out);
    run_cleanup(d);
}

/* With --prune on the gpu engine, the row's coarse_kernel_seconds is the device cascade's
 * kernel time: more than 0 for 200 sentences (more than the host threads); 0 with the
 * cascade on host threads (CKY_TUNE=prune_host=1), and 0 for 5 sentences where the machine
 * has at least 5 cores (a batch the host threads take in one round runs its cascade on them). */
Test(gpu_bench, pruned_kernel_seconds, .timeout = 600)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the device cascade's kernel time is not measured here");
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -200 '%s/data/ptb-sample/dev.txt' > big.txt", CKY_SHARED), 0);
    const char *cmd = "'" RUN_CKY "' bench -g '" RUN_GRAMMAR ".gr' --repeat 1 --prune berkeley "
                      "--decoder viterbi --bucket-width 0 --json";
    cr_assert_eq(run_sh(d, "%s -i big.txt > dev.json", cmd), 0);
    cr_assert_eq(run_sh(d, "CKY_TUNE=prune_host=1 %s -i big.txt > host.json", cmd), 0);
    cr_assert_eq(run_sh(d, "%s -i in.txt > small.json", cmd), 0);
    char *dev = run_read(d, "dev.json"), *host = run_read(d, "host.json"),
         *small = run_read(d, "small.json");
    double kd = number_after(dev, "\"coarse_kernel_seconds\": "),
           kh = number_after(host, "\"coarse_kernel_seconds\": "),
           ks = number_after(small, "\"coarse_kernel_seconds\": ");
    cr_assert(kd > 0, "device cascade: %g (%s)", kd, dev);
    cr_assert(kh == 0, "host cascade: %g (%s)", kh, host);
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 5)
        cr_assert(ks == 0, "5 sentences: %g (%s)", ks, small);
    free(dev);
    free(host);
    free(small);
    run_cleanup(d);
}
