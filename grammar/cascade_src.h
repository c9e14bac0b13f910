/* cascade_src: what the coarse-to-fine cascade (cascade.h) is computed from, read by the
 * native loader beside the grammar (internal to the grammar module): the split trees and the
 * rules as the file has them, before any parse-time pruning.
 *
 * The loader fills a cascade_src (native_cascade.c, and the binary rules as native.c reads
 * them), builds the fine grammar, then cascade_build() computes the levels (cascade.c). */
#ifndef CKY_GRAMMAR_CASCADE_SRC_H
#define CKY_GRAMMAR_CASCADE_SRC_H

#include "cascade.h"
#include "internal.h"

#define CASCADE_MAX_DEPTH 32 /* split trees deeper than this are refused */

/* A symbol's split tree (Grammar.splitTrees[s]), its nodes in preorder. */
typedef struct cascade_tree {
    int nnode;
    int *label; /* the node's substate number at its depth (a leaf: the fine substate) */
    int *depth; /* the root has depth 0 */
} cascade_tree;

/* A unary rule of the file: prob[c * nsub[parent] + p] (Java null rows read as zeros). */
typedef struct cascade_unary {
    int parent, child;
    double *prob;
} cascade_unary;

typedef struct cascade_src {
    int nsym;
    const int *nsub;     /* the fine grammar's (not owned) */
    cascade_tree *tree;  /* [nsym]; NULL: the file has no split trees (no cascade) */
    int nbinary, cap_binary;
    grammar_binary *binary; /* binaryRulesWithParent in list order: the file's non-null
                               (l, r) rows, prob[row * np + p] as in the file (score
                               unused) */
    int nunary, cap_unary;
    cascade_unary *unary; /* unaryRulesWithParent in list order (raw and derived sum rules) */
    int *unary_first;     /* [nsym + 1]: parent P owns unary[unary_first[P] .. [P+1]) */
    int nmapped, cap_mapped;
    cascade_unary *mapped; /* the keys of unaryRuleMap in the order the jar iterates them
                              (its HashMap's bucket order): the order in which
                              projectGrammar adds the projected unaries */
} cascade_src;

void cascade_src_free(cascade_src *src);

/* Append binary rule P -> L R given by nrow rows (l, r) in ascending order and their linear
 * values prob[k * np + p] (copied). */
cky_status cascade_src_add_rows(cascade_src *src, int parent, int left, int right, int nrow,
                                const int *row_l, const int *row_r, const double *prob);

/* Append a unary rule to the list `which` (0: unary, 1: mapped), prob[c * np + p] copied. */
cky_status cascade_src_add_unary(cascade_src *src, int which, int parent, int child,
                                 const double *prob);

/* The cascade of the fine grammar `fine` (built from the same file as src, its lexicon a
 * Berkeley lexicon). *out = NULL when src has no split trees or the grammar has no substate
 * splits. CKY_ERR_FORMAT for split trees that do not describe the substates. */
cky_status cascade_build(const cascade_src *src, const grammar *fine, grammar_cascade **out);

void grammar_cascade_free(grammar_cascade *c);

/* The closed Viterbi unaries of a projected grammar (Grammar.computePairsOfUnaries, whose
 * sum closure also feeds later pairs): the projected unary rules `rules` in the order they
 * were added, over symbols with nsub[s] substates; each closed pair P -> C (P != C) is
 * handed to builder_add_unary(b, P, C, max-product table), pairs in (P, C) order
 * (cascade_unary.c). */
cky_status cascade_close_unaries(int nsym, const int *nsub, const cascade_unary *rules, int n,
                                 grammar_builder *b);

#endif
