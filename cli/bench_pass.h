/* bench_pass: the per-pass statistics of a gpu engine, as cky bench reads them: the rule
 * evaluations and the device seconds of each (pass, semiring) the engine ran, so that each
 * pass is reported against the peak of its semiring (gpu/gpu.h).
 *
 * The gpu engine keeps them in gpu_stats (pass_seconds, pass_evaluations), summed over
 * parses as the other members are. */
#ifndef CKY_CLI_BENCH_PASS_H
#define CKY_CLI_BENCH_PASS_H

#include "../gpu/gpu.h"

#define BENCH_NPASS ENGINE_NPASS
#define BENCH_NSEMIRING CODEGEN_NSEMIRING

typedef struct bench_pass_stats {
    double seconds[BENCH_NPASS][BENCH_NSEMIRING];     /* device time of the pass's rule
                                                         kernels, summed since it opened */
    double evaluations[BENCH_NPASS][BENCH_NSEMIRING]; /* their rule evaluations */
} bench_pass_stats;

/* The per-pass statistics of gpu engine e into *out: 1 where the engine keeps them, 0 (and
 * *out zeroed) where it does not. */
int bench_pass_read(const gpu_engine *e, bench_pass_stats *out);

/* "inside", "outside"; "max-plus", "sum-product" ("?" for other values). */
const char *bench_pass_name(int pass);
const char *bench_semiring_name(int semiring);

#endif
