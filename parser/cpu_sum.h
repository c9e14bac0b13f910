/* cpu_sum: the sum-product inside pass of the cpu engine (max-rule on the generated kernels,
 * issue 13), through the engine's span loop (engine.h) with the sum-product kernels.
 *
 * A sum_chart holds linear inside scores in float32 with one power-of-two exponent per cell
 * and layer (value = float x 2^e), chosen when the layer is finished, so that no sentence of
 * a few hundred words underflows or overflows:
 *   - lexicon (span 1, pre layer): the pruned linear lexical scores (the max-rule decoder's,
 *     grammar/lexicon_berkeley.h) scaled by the power of two that puts their max in
 *     [0.5, 1), then rounded to float;
 *   - binary (pre layer of span d >= 2): each work item (split, family) runs the sum-product
 *     kernels over its children's post layers (scaled), giving a parent vector of exponent
 *     e(left) + e(right), kept per item; the cell's exponent E is the largest item exponent
 *     plus the binary exponent of the item's max, and the cell is the sum of its items
 *     brought to E with ldexpf, in a fixed order (family XX, XT, TX, TT, then split order);
 *   - unary (post layer): pre + the sum closure (grammar.sum) over pre, one fmaf per term in
 *     the grammar's order (closure rule, child substate, parent substate; the parents
 *     allowed as in maxrule/: every symbol over one word, phrasal ones over longer spans),
 *     then scaled exactly by a power of two so that its max is in [0.5, 1).
 * Nothing depends on the batch, the workspace width or the threads: the same bits for any
 * of them. Needs a grammar maxrule_check_grammar accepts (a native .gr file). */
#ifndef CKY_PARSER_CPU_SUM_H
#define CKY_PARSER_CPU_SUM_H

#include "cpu.h"

typedef struct sum_chart {
    int n, nsub;       /* words, global substates */
    float *pre, *post; /* [ncells][nsub], chart_cell order: linear inside scores, scaled */
    int *epre, *epost; /* [ncells]: exponents (value = float x 2^e; 0 for an all-zero layer) */
    /* outside scores (NULL until cpu_engine_outside_sum): opost of the post-unary node (what
     * the binary parents send), opre of the pre-unary node (opost + the sum closure's terms,
     * what a cell's binary rules send on), scaled likewise */
    float *opre, *opost;
    int *eopre, *eopost;
} sum_chart;

/* Inside scores of n sentences (each with at least one word): out[k] a new sum_chart of
 * s[k] (free with sum_chart_free). CKY_ERR_UNSUPPORTED for a grammar without the sum
 * closure or the Berkeley lexicon. On failure no chart is returned. */
cky_status cpu_engine_inside_sum(cpu_engine *e, const sentence *s, int n, sum_chart **out);

/* Outside scores of the n charts of one cpu_engine_inside_sum call (same engine), through
 * the downward span loop with the turned sum-product kernels (codegen_partition_turn): per
 * span, from the longest, each cell's opost (ROOT's 1 at the root) gets its unary outside
 * terms into opre (the sum closure by child, one fmaf per term, then normalized); then each
 * work item sends opre(parent) * inside(right) * w to its left child and opre(parent) *
 * inside(left) * w to its right child, added to the child's opost in a fixed order (per
 * family: every item's left-child terms in item order, then every item's right-child
 * terms), each term vector brought to the child's running exponent (raised, with the sum
 * so far scaled down exactly, when a larger term comes). Same bits for any width, threads
 * and batch. */
cky_status cpu_engine_outside_sum(cpu_engine *e, sum_chart *const *ch, int n);

/* log P(sentence): the log of ROOT's post-unary inside score over the whole sentence
 * (-inf if it is 0). */
double sum_chart_loglik(const sum_chart *c);

void sum_chart_free(sum_chart *c);

#endif
