/* bench_pass: the per-pass statistics of a gpu engine for cky bench (see bench_pass.h). */
#include "bench_pass.h"

#include <string.h>

int bench_pass_read(const gpu_engine *e, bench_pass_stats *out)
{
    const gpu_stats *s = gpu_engine_stats(e);
    memcpy(out->seconds, s->pass_seconds, sizeof out->seconds);
    memcpy(out->evaluations, s->pass_evaluations, sizeof out->evaluations);
    return 1;
}

const char *bench_pass_name(int pass)
{
    return pass == ENGINE_PASS_INSIDE ? "inside" : pass == ENGINE_PASS_OUTSIDE ? "outside" : "?";
}

const char *bench_semiring_name(int semiring)
{
    return semiring == CODEGEN_SEMIRING_MAX_PLUS      ? "max-plus"
           : semiring == CODEGEN_SEMIRING_SUM_PRODUCT ? "sum-product"
                                                      : "?";
}
