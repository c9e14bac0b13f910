/* cascade: the Berkeley parser's coarse-to-fine grammars, computed from a native .gr grammar
 * at load time (the jar's CoarseToFineMaxRuleParser.initCascade) and kept in the grammar
 * image, so that a mapped grammar has them without recomputing.
 *
 * Level k (0 <= k < nlevel, nlevel = ceil(log2 of the most substates of a symbol)) is the
 * fine grammar projected onto depth k of every symbol's split tree: one substate per split
 * tree node at that depth (level 0: one per symbol, the X-bar grammar). As the jar computes
 * it, in double, in probability space, with its loop and operand orders:
 *  - each fine substate weighted by its expected count (Grammar.computeConditionalProbabilities:
 *    the power iteration over the unpruned rules, at most 50 steps or until the L1 change is
 *    <= 1e-10), normalized within its coarse substate;
 *  - binary and unary rules (the file's unaryRuleMap, raw and derived sum unaries alike)
 *    projected with those weights (Grammar.projectGrammar), then the projected grammar's own
 *    closure (computePairsOfUnaries), of which the parser uses the closed Viterbi rules;
 *  - binary probabilities < 1e-4 removed (removeUnlikelyRules(1e-4); the closed Viterbi
 *    unaries are not pruned);
 *  - the lexicon projected as counts, its smoother's weights projected
 *    (SophisticatedLexicon.projectLexicon, SmoothAcrossParentBits.updateWeights), word-tag
 *    counts < 1e-4 removed;
 *  - then logs, as the fine grammar's (grammar_log: 0 -> -inf).
 * Each level is a grammar of its own (grammar.h: binary rules by parent, the closed Viterbi
 * unaries, a Berkeley lexicon; names and phrasal flags as the fine grammar's; no sum closure,
 * no cascade), so grammar_score_word and the grammar's tables serve the coarse passes.
 *
 * The split trees also say how an allowed substate of one level becomes allowed substates of
 * the next (Grammar.computeReverseSubstateMapping): lchild/rchild. */
#ifndef CKY_GRAMMAR_CASCADE_H
#define CKY_GRAMMAR_CASCADE_H

#include "grammar.h"

typedef struct grammar_cascade {
    int nlevel;      /* coarse levels 0 .. nlevel-1 (level nlevel is the fine grammar) */
    grammar **level; /* [nlevel] */
    /* For k = 1 .. nlevel-1: substate i of symbol s at level k has the children
     * lchild[k][level[k]->sub_offset[s] + i] and rchild[...] at level k+1 (the fine grammar
     * for k = nlevel-1), as symbol-local substate numbers. lchild[0] and rchild[0] are NULL:
     * the jar allows every substate of an allowed symbol at level 1. */
    int **lchild, **rchild;
} grammar_cascade;

/* The cascade of g: NULL for a text export or a grammar whose file has no split trees. */
static inline const grammar_cascade *grammar_cascade_of(const grammar *g) { return g->cascade; }

#endif
