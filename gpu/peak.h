/* peak: the peak micro-benchmarks, the ceilings of rule evaluation in each semiring.
 *
 * One "rule evaluation" is what a generated kernel does per rule (codegen/emit.c), the
 * weight a compile-time immediate and lr (the left and right scores combined, once per
 * (L, R) pair) already in a register:
 *   - add+max (max-plus, Viterbi): P = fmaxf(P, lr + w): one FADD and one FMNMX;
 *   - sum-product (max-rule's inside and outside): P = fmaf(lr, w, P): one FFMA.
 * The kernel of each kind keeps KPEAK_CHAINS parent scores per thread in registers and, in
 * each step, updates every parent from every parent's score of the step before (an
 * all-pairs KPEAK_CHAINS x KPEAK_CHAINS block of distinct weights), KPEAK_STEPS steps per
 * loop trip: KPEAK_CHAINS independent chains hide the latency, the scores change every step
 * so nothing can be hoisted, and the maximum of each thread's scores is stored so nothing is
 * dead. It runs on every SM of the current device at full occupancy and is timed
 * with CUDA events after a warm-up launch. The two kinds differ only in the rule. */
#ifndef CKY_KERNELS_PEAK_H
#define CKY_KERNELS_PEAK_H

#include <cuda_runtime_api.h>

#include "../util/status.h"

#define KPEAK_CHAINS 8  /* parent scores per thread */
#define KPEAK_STEPS 4   /* all-pairs steps per loop trip */
#define KPEAK_THREADS 256
/* rule evaluations per thread per loop trip (either kind) */
#define KPEAK_RULES_PER_TRIP (KPEAK_STEPS * KPEAK_CHAINS * KPEAK_CHAINS)
#define KPEAK_MIN_MS 10    /* the timed launch's target duration is clamped to these */
#define KPEAK_MAX_MS 10000
#define KPEAK_CALIBRATION_TRIPS 4096 /* loop trips of the warm-up and calibration launches */

#ifdef __cplusplus
extern "C" {
#endif

/* The rule of a peak kernel, named after the semiring whose kernels it stands for. */
typedef enum kpeak_kind {
    KPEAK_ADD_MAX = 0,     /* one add and one max per rule (max-plus) */
    KPEAK_SUM_PRODUCT = 1, /* one fused multiply-add per rule (sum-product) */
    KPEAK_NKIND
} kpeak_kind;

/* "add+max", "sum-product"; "?" for another value. */
const char *kpeak_kind_name(kpeak_kind kind);

/* What a measurement ran. */
typedef struct kpeak_detail {
    double seconds;    /* of the timed launch */
    double rule_evals; /* in the timed launch */
    int sm_count;      /* the device's SMs */
    int blocks;        /* of KPEAK_THREADS threads: sm_count x resident blocks per SM */
    int trips;         /* loop trips per thread in the timed launch */
} kpeak_detail;

/* Measure the rule-evaluation rate of kind `kind` on the current device: a warm-up launch,
 * a calibration launch of KPEAK_CALIBRATION_TRIPS trips, then one launch sized to take
 * about target_ms milliseconds (clamped to KPEAK_MIN_MS .. KPEAK_MAX_MS; at least the
 * calibration's size, kpeak_timed_trips), timed with CUDA events. On success
 * *rule_evals_per_second is its rate and, if detail is not NULL, *detail describes it.
 * CKY_ERR_NO_DEVICE without a usable device (gpu_count() 0: nothing is called),
 * CKY_ERR_ARG for an unknown kind, CKY_ERR_CUDA (or NOMEM) if a call fails. */
cky_status kpeak_measure(kpeak_kind kind, int target_ms, double *rule_evals_per_second,
                         kpeak_detail *detail);

/* The rule evaluations of one launch of `blocks` blocks running `trips` loop trips. */
double kpeak_launch_evaluations(int blocks, int trips);

/* The loop trips of the timed launch, after a calibration launch of `trips` trips took
 * `ms` milliseconds: enough for target_ms (clamped as for kpeak_measure) at that rate, at
 * least `trips`, at most INT_MAX / 2 (a calibration faster than 1 microsecond counts as 1). */
int kpeak_timed_trips(int trips, float ms, int target_ms);

/* Launchers of kernels/peak.cu (for kpeak_measure): resident KPEAK_THREADS-thread blocks of
 * the kernel of `kind` per SM, and a launch of `blocks` blocks running `trips` loop trips,
 * each thread storing its result in out[blocks * KPEAK_THREADS]. Return cudaGetLastError()
 * or the occupancy call's error (cudaErrorInvalidValue for an unknown kind). */
cudaError_t kpeak_blocks_per_sm(kpeak_kind kind, int *blocks_per_sm);
cudaError_t kpeak_launch(kpeak_kind kind, float *out, int blocks, int trips, float seed,
                         cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
