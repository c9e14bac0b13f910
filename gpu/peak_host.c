/* peak_host: timing of the peak kernels (gpu.h: gpu_peak_measure), and its arithmetic. */
#include "gpu.h"

#include <limits.h>


const char *gpu_peak_kind_name(gpu_peak_kind kind)
{
    switch (kind) {
    case GPU_PEAK_ADD_MAX: return "add+max";
    case GPU_PEAK_SUM_PRODUCT: return "sum-product";
    default: return "?";
    }
}

double gpu_peak_launch_evaluations(int blocks, int trips)
{
    return (double)blocks * GPU_PEAK_THREADS * trips * GPU_PEAK_RULES_PER_TRIP;
}

/* target_ms within GPU_PEAK_MIN_MS .. GPU_PEAK_MAX_MS. */
static int clamp_target(int target_ms)
{
    return target_ms < GPU_PEAK_MIN_MS ? GPU_PEAK_MIN_MS
           : target_ms > GPU_PEAK_MAX_MS ? GPU_PEAK_MAX_MS : target_ms;
}

int gpu_peak_timed_trips(int trips, float ms, int target_ms)
{
    double want = (double)trips * clamp_target(target_ms) / (ms > 0.001f ? ms : 0.001f);
    if (want > trips)
        trips = want > INT_MAX / 2 ? INT_MAX / 2 : (int)want;
    return trips;
}

/* Time one launch of `trips` loop trips: milliseconds into *ms. */
static cky_status timed_launch(gpu_peak_kind kind, float *out, int blocks, int trips,
                               cudaEvent_t start, cudaEvent_t stop, float *ms)
{
    GPU_CHECK(cudaEventRecord(start, 0));
    GPU_CHECK(gpu_peak_launch(kind, out, blocks, trips, -0.001f, 0));
    GPU_CHECK(cudaEventRecord(stop, 0));
    GPU_CHECK(cudaEventSynchronize(stop));
    GPU_CHECK(cudaEventElapsedTime(ms, start, stop));
    return CKY_OK;
}

/* The measurement proper, on allocated resources. */
static cky_status measure(gpu_peak_kind kind, int target_ms, float *out, int blocks,
                          cudaEvent_t start, cudaEvent_t stop, int *trips_out, float *ms_out)
{
    cky_status st;
    float ms;
    /* warm-up: clocks up, module loaded */
    if ((st = timed_launch(kind, out, blocks, GPU_PEAK_CALIBRATION_TRIPS, start, stop, &ms)))
        return st;
    /* calibration */
    int trips = GPU_PEAK_CALIBRATION_TRIPS;
    if ((st = timed_launch(kind, out, blocks, trips, start, stop, &ms)))
        return st;
    trips = gpu_peak_timed_trips(trips, ms, target_ms);
    if ((st = timed_launch(kind, out, blocks, trips, start, stop, &ms)))
        return st;
    *trips_out = trips;
    *ms_out = ms;
    return CKY_OK;
}

cky_status gpu_peak_measure(gpu_peak_kind kind, int target_ms, double *rule_evals_per_second,
                         gpu_peak_detail *detail)
{
    if ((unsigned)kind >= GPU_PEAK_NKIND)
        return cky_fail(CKY_ERR_ARG, "peak: unknown kind %d", (int)kind);
    if (gpu_count() == 0)
        return cky_fail(CKY_ERR_NO_DEVICE, "peak: no CUDA device (no GPU, or no usable "
                        "driver): the %s peak is not measured", gpu_peak_kind_name(kind));
    int dev, per_sm;
    GPU_CHECK(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, dev));
    GPU_CHECK(gpu_peak_blocks_per_sm(kind, &per_sm));
    if (per_sm < 1)
        return cky_fail(CKY_ERR_CUDA, "peak: the %s kernel cannot run on %s",
                        gpu_peak_kind_name(kind), prop.name);
    int blocks = prop.multiProcessorCount * per_sm;

    float *out = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    GPU_CHECK(cudaMalloc((void **)&out, (size_t)blocks * GPU_PEAK_THREADS * sizeof *out));
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

    double evals = gpu_peak_launch_evaluations(blocks, trips);
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
