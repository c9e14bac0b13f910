/* ref: the exact CPU reference parser (exhaustive Viterbi CKY, the textbook loops).
 *
 * This is the oracle every fast path is tested against, not a fast path: one sentence at a
 * time, every rule, every split. In CHART_DOUBLE mode it reproduces the Berkeley parser's
 * final Viterbi pass bit for bit (docs/berkeley-grammar-spec.md §4.3); in CHART_FLOAT mode it
 * computes, with the same loops, the float32 chart the generated kernels must reproduce. */
#ifndef CKY_ENGINES_REF_H
#define CKY_ENGINES_REF_H

#include "../../grammar/grammar.h"
#include "../../chart/chart.h"
#include "../../chart/mask.h"

/* Fill the span-1 pre-unary layer with the lexical scores of `words`. */
cky_status ref_fill_lexical(const grammar *g, chart *c, char *const *words);

/* Compute the post-unary layer of cell (i, j) from its pre-unary layer: one closed unary
 * step, post = max(pre, max over rules P -> C of pre[C] + w). */
void ref_close_unary(const grammar *g, chart *c, int i, int j);

/* Compute the pre-unary layer of cell (i, j), j - i >= 2, from the post-unary layers of its
 * children: max over rules P -> L R, splits k, of the mode's binary score. */
void ref_fill_binary(const grammar *g, chart *c, int i, int j);

/* Parse `words` (n >= 1) exhaustively into a new chart. The root score is
 * chart_post(c, 0, n)[g->sub_offset[0]] (-inf: no parse). */
cky_status ref_parse(const grammar *g, char *const *words, int n, chart_mode mode, chart **out);

/* The same within a mask (chart/mask.h, for these n words and g; NULL: exhaustive): the
 * Berkeley parser's pruned -viterbi pass (doConstrainedInsideScores with viterbi = true over
 * its cascade's mask, prune/prune.h). Lexical scores, binary and unary derivations only for
 * allowed symbols and substates; everything else stays -inf. CKY_ERR_ARG for a mask of other
 * dimensions. */
cky_status ref_parse_masked(const grammar *g, char *const *words, int n, chart_mode mode,
                            const chart_mask *mask, chart **out);

#endif
