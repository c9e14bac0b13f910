/* The add+max peak micro-benchmark (kernels/peak.h): a plausible rate on a GPU (the reference
 * figure on an H200 is 15.0e12 rule evaluations per second); skips without one. */
#include <criterion/criterion.h>

#include "../kernels/gpu.h"
#include "../kernels/peak.h"

Test(gpu_peak, add_max_rate_is_plausible, .timeout = 120)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the add+max peak is not measured here");
    gpu_device dev;
    cr_assert_eq(gpu_open(0, &dev), CKY_OK, "%s", cky_last_error());
    double rate = 0;
    kpeak_detail d;
    cr_assert_eq(kpeak_add_max(200, &rate, &d), CKY_OK, "%s", cky_last_error());
    cr_log_info("%s: %.2f T rule evaluations/s (add+max), %d SMs, %d blocks of %d threads, "
                "%d trips, %.1f ms",
                dev.name, rate * 1e-12, d.sm_count, d.blocks, KPEAK_THREADS, d.trips,
                d.seconds * 1e3);
    cr_assert_gt(rate, 1e12, "%g rule evaluations/s is implausibly slow", rate);
    cr_assert_lt(rate, 1e14, "%g rule evaluations/s is implausibly fast", rate);
    cr_assert_eq(d.sm_count, dev.sm_count);
    cr_assert_gt(d.seconds, 0.005);
}
