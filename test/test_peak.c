/* The peak micro-benchmarks without a GPU (gpu/gpu.h): the host-side arithmetic (rule
 * evaluations of a launch, the sizing of the timed launch, the kinds' names), the refusal of
 * an unknown kind and of a machine without a device, and the instruction mix of the two
 * kernels (their PTX, compiled here by nvcc) against the per-rule operations of the generated
 * kernel text of each semiring: one add and one max per rule for max-plus, one fused
 * multiply-add per rule for sum-product. The rates themselves: test_gpu_peak.c. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codegen/codegen.h"
#include "../gpu/gpu.h"
#include "test_codegen_synth.h"

Test(peak, host_arithmetic)
{
    cr_assert_str_eq(gpu_peak_kind_name(GPU_PEAK_ADD_MAX), "add+max");
    cr_assert_str_eq(gpu_peak_kind_name(GPU_PEAK_SUM_PRODUCT), "sum-product");
    cr_assert_str_eq(gpu_peak_kind_name(GPU_PEAK_NKIND), "?");
    cr_assert_eq(GPU_PEAK_RULES_PER_TRIP, 256);

    /* an H200: 132 SMs x 8 resident blocks of 256 threads, 1,000 trips of 4 x 8 x 8 rules */
    cr_assert_eq(gpu_peak_launch_evaluations(132 * 8, 1000), 132.0 * 8 * 256 * 1000 * 256);
    cr_assert_eq(gpu_peak_launch_evaluations(1, 1), 256.0 * 256);
    cr_assert_eq(gpu_peak_launch_evaluations(0, 5000), 0.0);
    /* no int overflow: INT_MAX / 2 trips on 1,056 blocks is about 7.4e16 evaluations */
    cr_assert_eq(gpu_peak_launch_evaluations(1056, INT_MAX / 2),
                 1056.0 * 256 * (double)(INT_MAX / 2) * 256);

    /* the timed launch: target / calibration time x calibration trips */
    cr_assert_eq(gpu_peak_timed_trips(4096, 2.0f, 300), 4096 * 150);
    cr_assert_eq(gpu_peak_timed_trips(4096, 4.0f, 200), 4096 * 50);
    cr_assert_eq(gpu_peak_timed_trips(4096, 1000.0f, 300), 4096, "never fewer than calibrated");
    cr_assert_eq(gpu_peak_timed_trips(4096, 2.0f, 1), 4096 * 5, "target clamped up to 10 ms");
    cr_assert_eq(gpu_peak_timed_trips(1000, 1.0f, 50000), 1000 * 10000, "clamped down to 10 s");
    cr_assert_eq(gpu_peak_timed_trips(4096, 0.0f, 300), INT_MAX / 2, "a 0 ms calibration");
}

Test(peak, refuses_unknown_kind_and_missing_device)
{
    double rate = -1;
    gpu_peak_detail d;
    cr_assert_eq(gpu_peak_measure(GPU_PEAK_NKIND, 100, &rate, &d), CKY_ERR_ARG);
    cr_assert_eq(gpu_peak_measure((gpu_peak_kind)-1, 100, &rate, &d), CKY_ERR_ARG);
    int per_sm = -1;
    cr_assert_eq(gpu_peak_blocks_per_sm(GPU_PEAK_NKIND, &per_sm), cudaErrorInvalidValue);
    cr_assert_eq(gpu_peak_launch(GPU_PEAK_NKIND, NULL, 1, 1, 0.0f, 0), cudaErrorInvalidValue);
    cr_assert_eq(per_sm, -1);
    if (gpu_count() > 0)
        cr_skip_test("a CUDA device is here: test_gpu_peak.c measures the peaks");
    for (int k = 0; k < GPU_PEAK_NKIND; k++) {
        cr_assert_eq(gpu_peak_measure((gpu_peak_kind)k, 100, &rate, &d), CKY_ERR_NO_DEVICE);
        cr_assert(strstr(cky_last_error(), gpu_peak_kind_name((gpu_peak_kind)k)), "%s",
                  cky_last_error());
        cr_assert_eq(rate, -1, "the rate is untouched");
    }
}

/* Occurrences of `needle` in s. */
static long count(const char *s, const char *needle)
{
    long n = 0;
    for (const char *c = s; (c = strstr(c, needle)); c += strlen(needle))
        n++;
    return n;
}

/* Occurrences of the PTX instruction `op` (e.g. "fma.rn.f32") in the entry of s whose name
 * contains `entry`, up to the next entry. */
static long count_in_entry(const char *s, const char *entry, const char *op)
{
    for (const char *e = s; (e = strstr(e, ".entry ")); e++) {
        const char *eol = strchr(e, '\n');
        const char *name = strstr(e, entry);
        if (!name || (eol && name > eol))
            continue;
        const char *end = strstr(e + 1, ".entry ");
        size_t len = end ? (size_t)(end - e) : strlen(e);
        char *body = strndup(e, len), pat[64];
        snprintf(pat, sizeof pat, "\t%s \t", op); /* "\tfma.rn.f32 \t%f1, ..." */
        long n = count(body, pat);
        free(body);
        return n;
    }
    cr_assert_fail("no PTX entry named *%s*", entry);
    return -1;
}

/* The generated kernels do, per rule, one add of the weight and one max (max-plus) or one
 * fmaf (sum-product); the peak kernels do exactly that per rule evaluation, register to
 * register. (The SASS check, one FADD + FMNMX or one FFMA each with an immediate weight,
 * needs cuobjdump: gpu/peak.cu says how.) */
Test(peak, kernel_mix_matches_generated_rules, .timeout = 600)
{
    /* the generated text, per rule */
    codegen_family f;
    synth_family(&f, 24, 600, 11);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("1x1x1/1x1x1", &shape), CKY_OK);
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    long fma = 0, add = 0, rules = 0;
    for (int k = 0; k < p.nkernel; k++) {
        char *sp = NULL, *mp = NULL;
        cr_assert_eq(codegen_emit_kernel(&p, k, 0, CODEGEN_SEMIRING_SUM_PRODUCT, &sp), CKY_OK);
        cr_assert_eq(codegen_emit_kernel(&p, k, 0, CODEGEN_SEMIRING_MAX_PLUS, &mp), CKY_OK);
        fma += count(sp, " = CKY_FMA(");
        add += count(mp, "lr + ");
        cr_assert_eq(count(sp, "lr + "), 0);
        free(sp);
        free(mp);
    }
    for (int b = 0; b < p.nblock; b++)
        rules += p.block[b].nrule;
    cr_assert_eq(rules, f.nrule);
    cr_assert_eq(fma, rules, "sum-product: one fmaf per rule");
    cr_assert_eq(add, rules, "max-plus: one add of the weight per rule (and a max)");
    codegen_partition_free(&p);
    codegen_family_free(&f);

    /* the peak kernels' PTX, per loop trip */
    char src[1024], ptx[] = "/tmp/cky-peak-ptx-XXXXXX";
    snprintf(src, sizeof src, "%s/../gpu/peak.cu", CKY_BUILD);
    if (access(src, R_OK) != 0)
        cr_skip_test("%s is not here (a build folder outside the checkout)", src);
    const char *nvcc = access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc"
                                                                      : "nvcc";
    int fd = mkstemp(ptx);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -O3 -std=c++17 -ptx -o '%s' '%s' 2>&1", nvcc,
             ptx, src);
    int st = system(cmd);
    if (st != 0) {
        unlink(ptx);
        cr_skip_test("nvcc could not compile %s to PTX here (%s)", src, cmd);
    }
    FILE *in = fopen(ptx, "r");
    cr_assert_not_null(in);
    size_t cap = 1 << 20, n = 0;
    char *text = malloc(cap);
    n = fread(text, 1, cap - 1, in);
    text[n] = '\0';
    fclose(in);
    unlink(ptx);
    cr_assert_lt(n, cap - 1, "PTX larger than expected");
    const int per_trip = GPU_PEAK_RULES_PER_TRIP, reduce = GPU_PEAK_CHAINS - 1;
    /* add+max: gpu_peak_kernel<0>; sum-product: gpu_peak_kernel<1> */
    cr_assert_eq(count_in_entry(text, "gpu_peak_kernelILi0E", "add.f32"), per_trip);
    cr_assert_eq(count_in_entry(text, "gpu_peak_kernelILi0E", "max.f32"), per_trip + reduce);
    cr_assert_eq(count_in_entry(text, "gpu_peak_kernelILi0E", "fma.rn.f32"), 0);
    cr_assert_eq(count_in_entry(text, "gpu_peak_kernelILi1E", "fma.rn.f32"), per_trip);
    cr_assert_eq(count_in_entry(text, "gpu_peak_kernelILi1E", "add.f32"), 0);
    cr_assert_eq(count_in_entry(text, "gpu_peak_kernelILi1E", "max.f32"), reduce);
    free(text);
}
