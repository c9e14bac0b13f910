/* codegen schedule: the order and register plan of one code block's straight-line code
 * (internal to codegen/).
 *
 * A code block keeps its parent values in registers from their first rule to their last,
 * and its left and right values from their load to their last use. With rules sorted by
 * (L, R, P) alone, every parent and every right row of a block can be live at once (the
 * paper-shape blocks of a grammar at eng-sm6 scale hold 200-300 values), and ptxas spills.
 * So a block is planned under a live budget B:
 *   - its parents are split into groups of consecutive rows, each small enough to leave a
 *     third of the budget for right rows, and the rules are emitted group by group, each
 *     group sorted by (L, R, P) (codegen_block_order);
 *   - a left row is loaded at the start of each of its runs, a right row is kept while it
 *     fits and otherwise evicted (the cached right row whose next use is furthest, Belady's
 *     rule) and reloaded at its next use (codegen_block_plan).
 * The plan never keeps more than B values live when B is reachable (a group's parents + 1
 * right row + L + the L+R temporary); the report's max_live is the plan's own count. */
#ifndef CKY_CODEGEN_SCHEDULE_H
#define CKY_CODEGEN_SCHEDULE_H

#include "codegen.h"

#define CODEGEN_LIVE_BUDGET 48 /* default B: with the register margin, eight 128-thread
                                  blocks per SM (64 registers); measured best on
                                  eng-sm6-shape against 56, 64 (docs/performance.md) */

/* Per-rule flags of a plan. */
enum {
    PLAN_LOAD_L = 1,  /* load the rule's left row first */
    PLAN_LOAD_R = 2,  /* load the rule's right row first */
    PLAN_PAIR = 4,    /* a new (L, R) pair: compute lr = L + R */
    PLAN_FIRST_P = 8, /* the parent's first rule: assign instead of max */
    PLAN_LAST_P = 16  /* the parent's last rule: store it afterwards */
};

/* Put the n rules of one block (with rows < dim[axis]) into emission order for live budget
 * `budget` (see the file comment). */
cky_status codegen_block_order(codegen_rule *rule, long n, const int dim[3], int budget);

/* Plan the rules of a block already in emission order: flags[i] gets the PLAN_* bits of rule
 * i; *max_live the most values live at once, *loads the number of row loads. `budget` as
 * given to codegen_block_order. */
cky_status codegen_block_plan(const codegen_rule *rule, long n, const int dim[3], int budget,
                              unsigned char *flags, int *max_live, long *loads);

#endif
