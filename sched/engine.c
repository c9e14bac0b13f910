/* engine: the span-length loop (see engine.h). */
#include "engine.h"

/* The binary step of every family at span length d: inside, into the cells of span d >= 2
 * from their children; outside, into the cells of span d < maxn from their parents. */
static cky_status run_binary(const engine_ops *ops, void *ctx, const plan *p, engine_pass pass,
                             codegen_semiring sr, int d)
{
    int has = pass == ENGINE_PASS_INSIDE ? d >= 2 : d < p->maxn;
    for (int f = 0; f < CODEGEN_NFAMILY && has; f++) {
        cky_status st = ops->binary(ctx, p, pass, sr, d, (codegen_family_id)f);
        if (st)
            return st;
    }
    return CKY_OK;
}

cky_status engine_run_pass(const engine_ops *ops, void *ctx, const plan *p, engine_pass pass,
                           codegen_semiring sr)
{
    int up = pass == ENGINE_PASS_INSIDE;
    for (int step = 1; step <= p->maxn; step++) {
        int d = up ? step : p->maxn + 1 - step;
        cky_status st = run_binary(ops, ctx, p, pass, sr, d);
        if (!st)
            st = ops->unary(ctx, p, pass, sr, d);
        if (!st && ops->span_done)
            st = ops->span_done(ctx, p, pass, d);
        if (st)
            return st;
    }
    return CKY_OK;
}

cky_status engine_check_pass(const char *engine, engine_pass pass, codegen_semiring sr)
{
    if (pass != ENGINE_PASS_INSIDE || sr != CODEGEN_SEMIRING_MAX_PLUS)
        return cky_fail(CKY_ERR_ARG, "%s engine: only the inside pass in the max-plus "
                        "semiring is implemented (asked: pass %d, semiring %d)", engine,
                        (int)pass, (int)sr);
    return CKY_OK;
}
