/* engine: what an engine does for one span length of one pass, and the one span-length loop
 * that drives it.
 *
 * An engine (cpu, gpu; later several GPUs) fills the charts of a batch laid out by a plan
 * (sched/plan.h). It offers two steps, each for one pass (inside now; outside later) in
 * one semiring (max-plus now; sum-product later):
 *   - binary: the binary rules of family f into the cells of span length d: inside, over
 *     the work items of plan segment (d, f), from the children; outside, over the pull
 *     lists of (d, f) (plan_fill_pulls), from the parents;
 *   - unary: the closed unary step over the cells of span length d;
 * and engine_run_pass runs them in the pass's order, for each span length the binary
 * families then the unary step: upward (d = 1 .. maxn) for inside, downward (d = maxn ..
 * 1) for outside,
 * with a per-span hook after each span length (where pruning will go). An engine refuses a
 * pass or semiring it does not implement with CKY_ERR_ARG.
 *
 * Adding a pass or semiring touches the enums here (and codegen's semiring enum) and the
 * engines' steps; adding a kernel family touches codegen_family_id and codegen/family.c
 * only: the loop runs every family of the plan. */
#ifndef CKY_SCHED_ENGINE_H
#define CKY_SCHED_ENGINE_H

#include "../codegen/codegen.h"
#include "plan.h"

typedef enum engine_pass { ENGINE_PASS_INSIDE, ENGINE_PASS_OUTSIDE } engine_pass;

#define ENGINE_NPASS 2

typedef struct engine_ops {
    /* Family f's binary rules into the cells of span length d: inside (d >= 2) over plan
     * segment p->bin[d * CODEGEN_NFAMILY + f], outside (d < maxn) over the pull lists of
     * (d, f). */
    cky_status (*binary)(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                         int d, codegen_family_id f);
    /* The unary step over the cells of span length d (plan segment p->cell[d]). */
    cky_status (*unary)(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr, int d);
    /* After span length d is done (NULL: nothing). */
    cky_status (*span_done)(void *ctx, const plan *p, engine_pass pass, int d);
} engine_ops;

/* Run pass `pass` in semiring sr over plan p with the engine's steps (ctx is theirs): the
 * one span-length loop. Stops at the first error and returns it. */
cky_status engine_run_pass(const engine_ops *ops, void *ctx, const plan *p, engine_pass pass,
                           codegen_semiring sr);

/* CKY_ERR_ARG naming `engine` unless it implements (pass, sr): inside max-plus for now. */
cky_status engine_check_pass(const char *engine, engine_pass pass, codegen_semiring sr);

#endif
