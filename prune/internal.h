/* prune internals shared by the passes of the coarse-to-fine cascade (not a public API).
 *
 * A plan holds, per level, the rule lists the passes walk, and the work space of one
 * sentence: the level-0 scores per (cell, symbol) (vi, vo: the jar's viScore, voScore), the
 * later levels' scores per (cell, substate) (in, out: iScore, oScore), and the mask as it
 * goes from level to level (state: allowedStates over the cells; sub: allowedSubStates of the
 * current level's substates). Cells are numbered as chart_cell does. Scores are log
 * probabilities, -inf for nothing. */
#ifndef CKY_PRUNE_INTERNAL_H
#define CKY_PRUNE_INTERNAL_H

#include "../grammar/cascade.h"
#include "prune.h"

/* A level-0 rule: one substate per symbol, so one score. */
typedef struct prune_rule1 {
    int parent, left, right; /* right: -1 for a unary */
    double score;
} prune_rule1;

struct prune_plan {
    const grammar *fine;
    const grammar_cascade *cascade;
    /* level 0: binary rules with a finite score, by parent; closed unaries (P != C) with a
     * finite score by parent and by child */
    prune_rule1 *bin, *un_p, *un_c;
    int *bin_first, *un_pfirst, *un_cfirst; /* [nsym + 1] */
    /* levels >= 1: the level grammar's unary ids by child, and where each child's start */
    int **un_by_child, **un_cfirst_k; /* [nlevel][nunary], [nlevel][nsym + 1] */
    int maxsub;                       /* the most substates of a symbol, any level */
    int maxtotal;                     /* the most global substates of a level, fine included */
    /* work space for sentences of up to cap_n words */
    int cap_n;
    double *vi, *vo;        /* [cells * nsym] level 0 */
    /* level 0 by start and by end, for loops over split points: ia[(i * nsym + s) * (n + 1)
     * + e] = vi of (i, e), ib[(e * nsym + s) * (n + 1) + i] = vi of (i, e); ol and or_ the
     * outside terms of (i, e) as a left child (indexed as ia) and as a right child (as ib),
     * whose maximum is its outside score */
    double *ia, *ib, *ol, *or_;
    double *in, *out;       /* [cells * maxtotal] */
    unsigned char *state;   /* [cells * nsym] */
    unsigned char *sub;     /* [cells * maxtotal] the current level's allowed substates */
    unsigned char *sub2;    /* [cells * maxtotal] the next level's, while mapping */
    double *acc, *acc2;     /* [maxsub] */
    double *after;          /* [maxtotal] a cell's unary terms */
    double *lex;            /* [maxtotal] lexical scores of one word */
};

/* Grow the work space to sentences of n words. */
cky_status prune_reserve(prune_plan *p, int n);

/* ---- level 0 (xbar.c) ---- */

/* Lexicon, inside and outside scores of level 0 over all cells; 0 if the sentence has no
 * parse at this level (then the outside scores are not computed). */
cky_status prune_xbar_passes(prune_plan *p, char *const *words, int n, int *parsed);

/* pruneChart at level 0: p->state from the posteriors. */
void prune_xbar_prune(prune_plan *p, int n, double threshold);

/* ---- levels >= 1 (levels.c) ---- */

/* The same for level k over p->state and p->sub. */
cky_status prune_level_passes(prune_plan *p, int k, char *const *words, int n, int *parsed);

/* pruneChart at level k >= 1: p->sub and p->state from the posteriors. */
void prune_level_prune(prune_plan *p, int k, int n, double threshold);

#endif
