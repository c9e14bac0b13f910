/* viterbi: the Viterbi decoder (viterbi_decode.c: viterbi_decoder, its row of the decoders'
 * table) and its plain reference, the best-tree extraction from a filled chart.
 *
 * Exact mode follows the paper's Algorithm 1 (non-recursive; the output array in prefix
 * order is the work queue) and takes the true argmax of the chart with one tie-break rule,
 * used by every implementation (CPU here, GPU in viterbi_kernels.cu):
 *   - unary step: no unary (identity) if post == pre; otherwise the closed unary P -> C whose
 *     score equals post with the smallest global child substate id;
 *   - binary step: the smallest split point k, then the smallest global left substate id,
 *     then the smallest global right substate id, among derivations whose score equals pre.
 * Berkeley mode reproduces the Berkeley parser's own back-trace (first derivation within
 * relative 1e-5 of the cell score, binaries before unaries; docs/berkeley-grammar-spec.md
 * §4.4), so its trees can be matched tree for tree. */
#ifndef CKY_DECODERS_VITERBI_H
#define CKY_DECODERS_VITERBI_H

#include "../../corpus_tools/tree.h"
#include "../../grammar/grammar.h"
#include "../../chart/chart.h"
#include "../../chart/mask.h"

typedef enum viterbi_mode { VITERBI_EXACT, VITERBI_BERKELEY } viterbi_mode;

/* The decoder (decoders/decoder.h): the inside pass in max-plus, then this extraction on
 * every engine (on the gpu engine, its GPU version). */
struct decoder_def;
extern const struct decoder_def viterbi_decoder;

/* One node of a binarized tree in prefix order (2n - 1 nodes for n words): the symbol and
 * substate required by its parent (top, post-unary layer), the symbol and substate under its
 * closed unary (bot, pre-unary layer; equal to top when no unary is used), and its width in
 * words. The left child of node p is p + 1, its right child p + 2 * width(left child). */
typedef struct viterbi_node {
    int width;
    int top_sym, top_sub;
    int bot_sym, bot_sub;
} viterbi_node;

/* Exact extraction into nodes[2n - 1]. Returns CKY_ERR_ARG if the sentence has no parse
 * (root score -inf). */
cky_status viterbi_extract_array(const grammar *g, const chart *c, viterbi_node *nodes);

/* The annotated binarized tree (labels are symbol names, ROOT at the top, leaves the words)
 * of an extraction array. */
cky_status viterbi_array_to_tree(const grammar *g, const viterbi_node *nodes, int n,
                                 char *const *words, tree **out);

/* Extract the best parse of the sentence as an annotated binarized tree in the given mode;
 * *out = NULL if the sentence has no parse. */
cky_status viterbi_extract(const grammar *g, const chart *c, char *const *words,
                           viterbi_mode mode, tree **out);

/* The same for a chart filled within a mask (ref_parse_masked): Berkeley mode then skips the
 * symbols the mask does not allow as its back-trace does (over one word it takes the best
 * allowed POS tag under a phrasal symbol, ties to the last). NULL mask: viterbi_extract. */
cky_status viterbi_extract_masked(const grammar *g, const chart *c, char *const *words,
                                  viterbi_mode mode, const chart_mask *mask, tree **out);

/* Labels of the Berkeley back-trace beside the symbol, as the jar's -substates and -scores
 * write them: "NP-3" (the node's substate), "NP -12.5" (its inside score, Java's
 * Double.toString; a tag under a phrasal symbol over one word: its own inside score). */
enum { VITERBI_LABEL_SUBSTATES = 1, VITERBI_LABEL_SCORES = 2 };

/* viterbi_extract_masked in Berkeley mode with the labels `labels` asks for (VITERBI_LABEL_*
 * or'ed; 0: the plain names). */
cky_status viterbi_extract_labeled(const grammar *g, const chart *c, char *const *words,
                                   const chart_mask *mask, int labels, tree **out);

#endif
