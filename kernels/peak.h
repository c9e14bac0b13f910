/* peak: the add+max peak micro-benchmark, the ceiling of max-sum rule evaluation.
 *
 * One "rule evaluation" is what the generated max-sum kernels do per rule,
 * P = fmaxf(P, lr + w): exactly one float add (FADD, the rule weight an immediate) and one
 * max (FMNMX). The kernel keeps KPEAK_CHAINS parent scores per thread in registers and, in
 * each step, updates every parent from every parent's score of the step before (an all-pairs
 * KPEAK_CHAINS x KPEAK_CHAINS block of distinct weights), KPEAK_STEPS steps per loop trip:
 * KPEAK_CHAINS independent chains hide the latency, the scores change every step so nothing
 * can be hoisted, and the maximum of each thread's scores is stored so nothing is dead. It
 * runs on every SM of the current device at full occupancy and is timed with CUDA events
 * after a warm-up launch. */
#ifndef CKY_KERNELS_PEAK_H
#define CKY_KERNELS_PEAK_H

#include <cuda_runtime_api.h>

#include "../util/status.h"

#define KPEAK_CHAINS 8  /* parent scores per thread */
#define KPEAK_STEPS 4   /* all-pairs steps per loop trip */
#define KPEAK_THREADS 256
/* rule evaluations per thread per loop trip */
#define KPEAK_RULES_PER_TRIP (KPEAK_STEPS * KPEAK_CHAINS * KPEAK_CHAINS)

#ifdef __cplusplus
extern "C" {
#endif

/* What a measurement ran. */
typedef struct kpeak_detail {
    double seconds;    /* of the timed launch */
    double rule_evals; /* in the timed launch */
    int sm_count;      /* the device's SMs */
    int blocks;        /* of KPEAK_THREADS threads: sm_count x resident blocks per SM */
    int trips;         /* loop trips per thread in the timed launch */
} kpeak_detail;

/* Measure the add+max rule-evaluation rate of the current device: a warm-up launch, a short
 * calibration launch, then one launch sized to take about target_ms milliseconds (clamped to
 * 10 .. 10000; at least the calibration's size), timed with CUDA events. On success
 * *rule_evals_per_second is its rate and, if detail is not NULL, *detail describes it.
 * CKY_ERR_NO_DEVICE without a usable device, CKY_ERR_CUDA (or NOMEM) if a call fails. */
cky_status kpeak_add_max(int target_ms, double *rule_evals_per_second, kpeak_detail *detail);

/* Launchers of kernels/peak.cu (for kpeak_add_max): resident KPEAK_THREADS-thread blocks of
 * the kernel per SM, and a launch of `blocks` blocks running `trips` loop trips, each thread
 * storing its result in out[blocks * KPEAK_THREADS]. Return cudaGetLastError() or the
 * occupancy call's error. */
cudaError_t kpeak_blocks_per_sm(int *blocks_per_sm);
cudaError_t kpeak_launch(float *out, int blocks, int trips, float seed, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
