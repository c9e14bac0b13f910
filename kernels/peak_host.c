/* peak_host: timing of the add+max peak kernel (see peak.h). */
#include "peak.h"

#include <limits.h>

#include "../util/gpu_check.h"

/* Time one launch of `trips` loop trips: milliseconds into *ms. */
static cky_status timed_launch(float *out, int blocks, int trips, cudaEvent_t start,
                               cudaEvent_t stop, float *ms)
{
    GPU_CHECK(cudaEventRecord(start, 0));
    GPU_CHECK(kpeak_launch(out, blocks, trips, -0.001f, 0));
    GPU_CHECK(cudaEventRecord(stop, 0));
    GPU_CHECK(cudaEventSynchronize(stop));
    GPU_CHECK(cudaEventElapsedTime(ms, start, stop));
    return CKY_OK;
}

/* The measurement proper, on allocated resources. */
static cky_status measure(int target_ms, float *out, int blocks, cudaEvent_t start,
                          cudaEvent_t stop, int *trips_out, float *ms_out)
{
    cky_status st;
    float ms;
    /* warm-up: clocks up, module loaded */
    if ((st = timed_launch(out, blocks, 4096, start, stop, &ms)))
        return st;
    /* calibration */
    int trips = 4096;
    if ((st = timed_launch(out, blocks, trips, start, stop, &ms)))
        return st;
    double want = (double)trips * target_ms / (ms > 0.001f ? ms : 0.001f);
    if (want > trips)
        trips = want > INT_MAX / 2 ? INT_MAX / 2 : (int)want;
    if ((st = timed_launch(out, blocks, trips, start, stop, &ms)))
        return st;
    *trips_out = trips;
    *ms_out = ms;
    return CKY_OK;
}

cky_status kpeak_add_max(int target_ms, double *rule_evals_per_second, kpeak_detail *detail)
{
    if (target_ms < 10)
        target_ms = 10;
    if (target_ms > 10000)
        target_ms = 10000;
    int dev, per_sm;
    GPU_CHECK(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, dev));
    GPU_CHECK(kpeak_blocks_per_sm(&per_sm));
    if (per_sm < 1)
        return cky_fail(CKY_ERR_CUDA, "kpeak: the kernel cannot run on %s", prop.name);
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
        st = measure(target_ms, out, blocks, start, stop, &trips, &ms);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFree(out);
    if (st)
        return st;

    double evals = (double)blocks * KPEAK_THREADS * trips * KPEAK_RULES_PER_TRIP;
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
