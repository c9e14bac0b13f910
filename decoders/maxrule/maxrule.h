/* maxrule: the exact max-rule decoder (Petrov and Klein 2007; the Berkeley parser's default),
 * the double-precision reference in the jar's own arithmetic (CoarseToFineMaxRuleParser's
 * final level, with nothing pruned or within the mask of its coarse-to-fine cascade:
 * maxrule_options.mask, prune/prune.h):
 *
 *  1. inside scores in linear probabilities over every substate, with the closed SUM unaries
 *     (one unary layer per cell; grammar.sum) and the pruned lexicon;
 *  2. if the sentence probability underflows to 0, the same again with the jar's scaling
 *     (ScalingTools: an integer exponent of base e^100 per cell and symbol, and the jar's
 *     order of rescaling, quirks included: see maxrule_options). One deliberate difference:
 *     when P(sentence) is subnormal, the unscaled passes (which the jar runs then) can lose
 *     every digit of the posteriors and find no tree, where the jar prints (()); cky then
 *     runs the scaled passes;
 *  3. outside scores (unscaled or scaled, as the inside pass was);
 *  4. max-c scores (doConstrainedMaxCScores): a CKY over unsplit symbols where each anchored
 *     rule scores the log of its posterior, sum over substates of
 *     outside(parent) * rule * inside(children) / P(sentence), lexical items and unaries alike;
 *  5. the tree (extractBestMaxRuleParse), one intermediate symbol of a closed unary restored
 *     from closedSumPaths, then un-annotated as the Viterbi trees are (tree_unannotate).
 *
 * The loops, their order and every operand order follow the jar, so log P(sentence) and the
 * max-rule score reproduce its output (../shared/reference/berkeley/\*exhaustive-maxrule.tsv)
 * to the last bits or nearly, and the trees are the same. That needs a native .gr grammar:
 * the text export has neither the sum closure nor the lexicon's raw counts. On a text export
 * the decoder runs with its closed Viterbi unaries as the closure and the exp of its lexicon
 * scores (grammar_sum_is_exact is 0): an approximation, for measuring speed. */
#ifndef CKY_DECODERS_MAXRULE_H
#define CKY_DECODERS_MAXRULE_H

#include "../../chart/mask.h"
#include "../../corpus_tools/tree.h"
#include "../../grammar/grammar.h"

/* The decoder (decoders/decoder.h, maxrule_decode.c): this reference on the ref engine, the
 * engines' sum-product passes and max-c (maxc.h) on the cpu and gpu engines. */
struct decoder_def;
extern const struct decoder_def maxrule_decoder;

typedef struct maxrule_options {
    int force_scaled; /* for tests: run the scaled passes even when the root does not underflow */
    int scaled_unaries_from_pre; /* the scaled passes' unaries read the cell as it was before
                                    them, as the unscaled passes do. Without it (the default)
                                    they follow the jar, which updates the cell parent by parent
                                    (inside) and child by child (outside) in place, so a later
                                    symbol sees an earlier one's unary terms: a second unary
                                    step that the unscaled passes do not take, which changes
                                    log P(sentence) (about 1e-4 relative on short sentences). */
    const chart_mask *mask;      /* the Berkeley parser's pruned final pass: only the items of
                                    the mask (prune/prune.h: prune_mask.fine; NULL: every
                                    item), restricted loop by loop as the jar restricts its
                                    CoarseToFineMaxRuleParser final level */
    int kbest;                   /* > 1: the jar's -kbest lists (CoarseToFineNBestParser): up
                                    to kbest trees, best first, by its lazy extraction over
                                    the max-c chart (maxrule_kbest.c); 0 or 1: the one tree */
    int binarized;               /* maxrule_result.tree is the binarized tree as extracted
                                    (labels the grammar's symbols, @X nodes, ROOT at the
                                    top), not un-annotated */
    int variational;             /* the jar's -variational max-c scores (maxrule_maxc.c):
                                    each rule's posterior divided by its parent's, lexical
                                    items 0, the raw unaries closed by its own max-product
                                    loop, the jar's quirks included */
} maxrule_options;

typedef struct maxrule_result {
    double loglik; /* log P(sentence), natural log (-inf: no parse) */
    double score;  /* the max-rule score of the tree: the sum of the logs of its rules'
                      posteriors (-inf: no tree) */
    int scaled;    /* 1 if the scaled passes were used */
    int underflow; /* 1 if the unscaled P(sentence) was 0: the jar's logLikelihood then stays
                      -inf (getLogLikelihood(), getConfidence() and getLogLikelihood(tree)
                      give -inf though it prints a tree) */
    tree *tree;    /* the un-annotated Penn Treebank tree (ROOT label ""); NULL if no tree */
    /* with maxrule_options.kbest > 1: tree and score are the list's first, these the others
       in the list's order (malloc'ed; free with maxrule_result_clear) */
    int nrest;
    tree **rest;
    double *rest_score;
} maxrule_result;

/* Parse words[0..n) (n >= 1) with max-rule, exhaustively or within opt->mask (a mask for
 * these n words and g; CKY_ERR_ARG otherwise). opt may be NULL (defaults). A sentence
 * without a parse is not an error: out->tree is NULL and the scores -inf (loglik is finite
 * when the sentence has a probability but no max-rule tree). */
cky_status maxrule_parse(const grammar *g, char *const *words, int n,
                         const maxrule_options *opt, maxrule_result *out);

/* Free the trees and lists of a result (tree, rest) and zero it. */
void maxrule_result_clear(maxrule_result *r);

/* Move m's scores, tree and k-best list into a decoder's result r (decoders/decoder.h;
 * score -inf without a tree; the outcome is the caller's); m is left empty. */
struct parse_result;
void maxrule_result_move(maxrule_result *m, struct parse_result *r);
/* log P(T, w) of tree t as the Berkeley parser's getLogLikelihood(tree) gives it
 * (maxrule_tree.c): t binarized to the right as the grammar is (nodes of more than two
 * children into chains of @X nodes), its inside score over every substate with the raw
 * unary rules, the pruned lexicon and binary rules, the jar's scaling and order of sums.
 * The root is ROOT whatever its label; t may be binarized or un-annotated. *out is -inf
 * for the empty tree, a label that is no symbol of g (where the jar would stop with an
 * exception) and a tree of probability 0. Needs g's sum closure (grammar_check_sum). */
cky_status maxrule_tree_loglik(const grammar *g, const tree *t, double *out);

#endif
