/* cpu_sum: the sum-product passes of the cpu engine (max-rule on the generated kernels,
 * issue 13), through the engine's span loop (engine.h) with the sum-product kernels.
 *
 * A sum_chart holds linear scores in float32 with one power-of-two exponent per cell and
 * layer, with the arithmetic of semiring/sum_rules.h (the gpu engine's too, bit for bit):
 * the inside pass fills pre and post, the outside pass opost and opre; the binary steps run
 * the sum-product kernels (the outside pass those of the turned families, codegen_family_turn) a
 * workspace at a time and add each work item's vector into its cell at the cell's exponent,
 * in plan order (inside) or pull order (outside, plan_fill_pulls). Nothing depends on the
 * batch, the workspace width or the threads: the same bits for any of them. Needs a grammar
 * grammar_check_sum accepts. */
#ifndef CKY_ENGINES_CPU_SUM_H
#define CKY_ENGINES_CPU_SUM_H

#include "cpu.h"

typedef struct sum_chart {
    int n, nsub;       /* words, global substates */
    float *pre, *post; /* [ncells][nsub], chart_cell order: linear inside scores, scaled */
    int *epre, *epost; /* [ncells]: exponents (value = float x 2^e; 0 for an all-zero layer) */
    /* outside scores (NULL until cpu_engine_outside_sum): opost of the post-unary node (what
     * the binary parents send), opre of the pre-unary node (opost + the closure's terms,
     * what a cell's binary rules send on), scaled likewise */
    float *opre, *opost;
    int *eopre, *eopost;
} sum_chart;

/* Inside scores of n sentences (each with at least one word): out[k] a new sum_chart of
 * s[k] (free with sum_chart_free). CKY_ERR_UNSUPPORTED for a grammar without the sum
 * closure or the Berkeley lexicon. On failure no chart is returned. */
cky_status cpu_engine_inside_sum(cpu_engine *e, const sentence *s, int n, sum_chart **out);

/* Outside scores of the n charts of one cpu_engine_inside_sum call (same engine), through
 * the downward span loop: for each span, the terms of its cells' parents (pull lists, the
 * turned kernels) into opost, then the unary step into opre. */
cky_status cpu_engine_outside_sum(cpu_engine *e, sum_chart *const *ch, int n);

/* log P(sentence): the log of ROOT's post-unary inside score over the whole sentence
 * (-inf if it is 0). */
double sum_chart_loglik(const sum_chart *c);

void sum_chart_free(sum_chart *c);

#endif
