/* peak_host: timing of the peak kernels (see peak.h), and its arithmetic. */
#include "peak.h"

#include <limits.h>

#include "../util/gpu_check.h"
#include "gpu_device.h"

const char *kpeak_kind_name(kpeak_kind kind)
{
    switch (kind) {
    case KPEAK_ADD_MAX: return "add+max";
    case KPEAK_SUM_PRODUCT: return "sum-product";
    default: return "?";
    }
}

double kpeak_launch_evaluations(int blocks, int trips)
{
    return (double)blocks * KPEAK_THREADS * trips * KPEAK_RULES_PER_TRIP;
}

/* target_ms within KPEAK_MIN_MS .. KPEAK_MAX_MS. */
static int clamp_target(int target_ms)
{
    return target_ms < KPEAK_MIN_MS ? KPEAK_MIN_MS
           : target_ms > KPEAK_MAX_MS ? KPEAK_MAX_MS : target_ms;
}

int kpeak_timed_trips(int trips, float ms, int target_ms)
{
    double want = (double)trips * clamp_target(target_ms) / (ms > 0.001f ? ms : 0.001f);
    if (want > trips)
        trips = want > INT_MAX / 2 ? INT_MAX / 2 : (int)want;
    return trips;
}

/* Time one launch of `trips` loop trips: milliseconds into *ms. */
static cky_status timed_launch(kpeak_kind kind, float *out, int blocks, int trips,
                               cudaEvent_t start, cudaEvent_t stop, float *ms)
{
    GPU_CHECK(cudaEventRecord(start, 0));
    GPU_CHECK(kpeak_launch(kind, out, blocks, trips, -0.001f, 0));
    GPU_CHECK(cudaEventRecord(stop, 0));
    GPU_CHECK(cudaEventSynchronize(stop));
    GPU_CHECK(cudaEventElapsedTime(ms, start, stop));
    return CKY_OK;
}

/* The measurement proper, on allocated resources. */
static cky_status measure(kpeak_kind kind, int target_ms, float *out, int blocks,
                          cudaEvent_t start, cudaEvent_t stop, int *trips_out, float *ms_out)
{
    cky_status st;
    float ms;
    /* warm-up: clocks up, module loaded */
    if ((st = timed_launch(kind, out, blocks, KPEAK_CALIBRATION_TRIPS, start, stop, &ms)))
        return st;
    /* calibration */
    int trips = KPEAK_CALIBRATION_TRIPS;
    if ((st = timed_launch(kind, out, blocks, trips, start, stop, &ms)))
        return st;
    trips = kpeak_timed_trips(trips, ms, target_ms);
    if ((st = timed_launch(kind, out, blocks, trips, start, stop, &ms)))
        return st;
    *trips_out = trips;
    *ms_out = ms;
    return CKY_OK;
}

cky_status kpeak_measure(kpeak_kind kind, int target_ms, double *rule_evals_per_second,
                         kpeak_detail *detail)
{
    if ((unsigned)kind >= KPEAK_NKIND)
        return cky_fail(CKY_ERR_ARG, "kpeak: unknown kind %d", (int)kind);
    if (gpu_count() == 0)
        return cky_fail(CKY_ERR_NO_DEVICE, "kpeak: no CUDA device (no GPU, or no usable "
                        "driver): the %s peak is not measured", kpeak_kind_name(kind));
    int dev, per_sm;
    GPU_CHECK(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, dev));
    GPU_CHECK(kpeak_blocks_per_sm(kind, &per_sm));
    if (per_sm < 1)
        return cky_fail(CKY_ERR_CUDA, "kpeak: the %s kernel cannot run on %s",
                        kpeak_kind_name(kind), prop.name);
    int blocks = prop.multiProcessorCount * per_sm;

    float *out = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    GPU_CHECK(cudaMalloc((void **)&out, (size_t)blocks * KPEAK_THREADS * sizeof *out));
    cky_status st = GPU_STATUS(cudaEventCreate(&start));
    if (!st)
        st = GPU_STATUS(cudaEventCreate(&stop));
    int trips = 0;
    float ms = 0;
    if (!st)
        st = measure(kind, target_ms, out, blocks, start, stop, &trips, &ms);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFree(out);
    if (st)
        return st;

    double evals = kpeak_launch_evaluations(blocks, trips);
    double seconds = ms * 1e-3;
    *rule_evals_per_second = evals / seconds;
    if (detail) {
        detail->seconds = seconds;
        detail->rule_evals = evals;
        detail->sm_count = prop.multiProcessorCount;
        detail->blocks = blocks;
        detail->trips = trips;
    }
    return CKY_OK;
}
