/* bench_pass: the per-pass statistics of a gpu engine, as cky bench reads them: the rule
 * evaluations and the device seconds of each (pass, semiring) the engine ran, so that each
 * pass is reported against the peak of its semiring (kernels/peak.h).
 *
 * Today the gpu engine keeps no per-pass figures (parser/gpu_dev.h's gpu_stats has none), so
 * bench_pass_read says so, and cky bench falls back to the engine's totals for a decoder of
 * one pass (Viterbi: inside, max-plus). When gpu_stats gets them (the proposal, for the
 * engine that runs max-rule's inside and outside passes in sum-product on the device):
 *
 *     double pass_seconds[ENGINE_NPASS][CODEGEN_NSEMIRING];     device seconds of the pass's
 *                                                               generated binary kernels
 *                                                               (CUDA events, profiling on)
 *     double pass_evaluations[ENGINE_NPASS][CODEGEN_NSEMIRING]; rule evaluations of those
 *                                                               kernels (profiling on or off)
 *
 * summed over parses as the other members are, bench_pass_read copies them and returns 1,
 * and BENCH_NPASS / BENCH_NSEMIRING become ENGINE_NPASS / CODEGEN_NSEMIRING. */
#ifndef CKY_CLI_BENCH_PASS_H
#define CKY_CLI_BENCH_PASS_H

#include "../parser/gpu.h"

#define BENCH_NPASS 2     /* engine_pass: ENGINE_PASS_INSIDE, ENGINE_PASS_OUTSIDE */
#define BENCH_NSEMIRING 2 /* codegen_semiring: max-plus, sum-product */

typedef struct bench_pass_stats {
    double seconds[BENCH_NPASS][BENCH_NSEMIRING];     /* device time of the pass's rule
                                                         kernels, summed since it opened */
    double evaluations[BENCH_NPASS][BENCH_NSEMIRING]; /* their rule evaluations */
} bench_pass_stats;

/* The per-pass statistics of gpu engine e into *out: 1 where the engine keeps them, 0 (and
 * *out zeroed) where it does not, as today. */
int bench_pass_read(const gpu_engine *e, bench_pass_stats *out);

/* "inside", "outside"; "max-plus", "sum-product" ("?" for other values). */
const char *bench_pass_name(int pass);
const char *bench_semiring_name(int semiring);

#endif
