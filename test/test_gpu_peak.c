/* The peak micro-benchmarks (gpu/gpu.h) on a GPU: plausible rates (the reference
 * figure on an H200 is 15.0e12 add+max rule evaluations per second), and the sum-product
 * kernel, one instruction per rule against two, faster than the add+max one; skips without
 * a GPU. The host-side arithmetic and the kernels' instruction mix: test_peak.c. */
#include <criterion/criterion.h>

#include "../gpu/gpu.h"

/* Measure kind k on device 0: its rate, checked for plausibility. */
static double measure(gpu_peak_kind k)
{
    gpu_device dev;
    cr_assert_eq(gpu_open(0, &dev), CKY_OK, "%s", cky_last_error());
    double rate = 0;
    gpu_peak_detail d;
    cr_assert_eq(gpu_peak_measure(k, 200, &rate, &d), CKY_OK, "%s", cky_last_error());
    cr_log_info("%s: %.2f T rule evaluations/s (%s), %d SMs, %d blocks of %d threads, "
                "%d trips, %.1f ms",
                dev.name, rate * 1e-12, gpu_peak_kind_name(k), d.sm_count, d.blocks, GPU_PEAK_THREADS,
                d.trips, d.seconds * 1e3);
    cr_assert_gt(rate, 1e12, "%g rule evaluations/s is implausibly slow", rate);
    cr_assert_lt(rate, 1e14, "%g rule evaluations/s is implausibly fast", rate);
    cr_assert_eq(d.sm_count, dev.sm_count);
    cr_assert_gt(d.seconds, 0.005);
    cr_assert_eq(d.rule_evals, gpu_peak_launch_evaluations(d.blocks, d.trips));
    return rate;
}

Test(gpu_peak, add_max_rate_is_plausible, .timeout = 120)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the add+max peak is not measured here");
    measure(GPU_PEAK_ADD_MAX);
}

Test(gpu_peak, sum_product_rate_is_plausible, .timeout = 120)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the sum-product peak is not measured here");
    double fma = measure(GPU_PEAK_SUM_PRODUCT), add_max = measure(GPU_PEAK_ADD_MAX);
    cr_log_info("sum-product / add+max: %.2f (one FFMA per rule against FADD + FMNMX: about 2 "
                "where all three issue at the same rate)", fma / add_max);
    cr_assert_gt(fma, 1.2 * add_max, "one FFMA per rule (%g /s) should beat FADD + FMNMX (%g /s)",
                 fma, add_max);
}
