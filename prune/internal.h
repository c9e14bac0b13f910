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

#include <math.h>
#include <stdint.h>

#include "../grammar/cascade.h"
#include "../util/team.h"
#include "prune.h"

/* The rule lists of a level >= 1: unaries by child; binary rules by parent, then left child,
 * in groups of one (parent, left child), so that a left child allowed nowhere in a cell
 * skips its whole group; and bounds of the binary rules' scores (the inside loops skip a
 * split point whose best possible term cannot beat the best so far). */
typedef struct prune_lists {
    int *un_by_child, *un_cfirst;    /* unary ids; [nsym + 1] */
    int *bin, *group_first;          /* binary ids; group x is bin[group_first[x] .. [x+1]) */
    int *group_left, *parent_group;  /* its left child; [nsym + 1] the groups of parent P */
    double *wmax;                    /* [nbinary] a rule's largest score */
    double *wpar;                    /* rule b's largest score of each parent substate x over
                                        its rows: wpar[wpar_first[b] + x] */
    int *wpar_first;                 /* [nbinary] */
} prune_lists;

/* The scratch of one thread filling a cell of a level >= 1 (each member of the team has its
 * own). */
typedef struct prune_scratch {
    double *acc;            /* [maxsub] */
    int *xs;                /* [maxsub] the substates a parent's loops visit */
    int *xlist, *xcount;    /* [maxtotal], [nsym]: per symbol of a cell, such lists */
    /* the children of the cell being filled, per split point k: their blocks (pos rows of
     * the left child (i, k) and the right child (k, j)) */
    const int **lpos, **rpos; /* [cap_n + 1] */
    const double **lmax, **rmax; /* [cap_n + 1] their rows of p->imax */
    int *ks;                  /* [cap_n + 1] the split points of one rule */
    uint64_t *span, *lmask;   /* [nword] a cell's split points, a group's */
    double *after;            /* [maxtotal] a cell's unary terms */
    double *lex;              /* [maxtotal] lexical scores of one word */
    cky_status st;            /* the first failure of this member's work (prune_score_words) */
    char error[256];          /* its message */
} prune_scratch;

/* A level-0 rule: one substate per symbol, so one score. */
typedef struct prune_rule1 {
    int parent, left, right; /* right: -1 for a unary */
    double score;
} prune_rule1;

struct prune_plan {
    const grammar *fine;
    const grammar_cascade *cascade;
    /* level 0: binary rules with a finite score by parent, by left child and by right child,
     * then by which of their other symbols are POS tags (a tag spans one word: the split
     * points they leave), each list by descending score (the loops skip a rule that cannot
     * beat the best so far): bin's of parent P with children of class c (0: two tags, 1: a
     * tag and a phrase, 2: a phrase and a tag, 3: two phrases) at bin_first[P * 4 + c] ..
     * [+ 1], bin_l's of left child X with a tag (0) or phrase (1) as sibling at
     * bin_lfirst[X * 2 + c] .. [+ 1], bin_r's of right child X the same; closed unaries
     * (P != C) with a finite score by parent and by child */
    prune_rule1 *bin, *bin_l, *bin_r, *un_p, *un_c;
    int *bin_first;              /* [nsym * 4 + 1] */
    int *bin_lfirst, *bin_rfirst; /* [nsym * 2 + 1] */
    int *un_pfirst, *un_cfirst;  /* [nsym + 1] */
    int *phrasal, nphrasal;      /* level 0's phrasal symbols, ascending */
    prune_lists *lists; /* [nlevel]: levels >= 1 */
    int maxsub;                       /* the most substates of a symbol, any level */
    int maxtotal;                     /* the most global substates of a level, fine included */
    /* work space for sentences of up to cap_n words */
    int cap_n;
    double *vi, *vo;        /* [cells * nsym] level 0 */
    /* level 0 by start and by end, for loops over split points: ia[(i * nsym + s) * (n + 1)
     * + e] = vi of (i, e), ib[(e * nsym + s) * (n + 1) + i] = vi of (i, e), oa and ob the
     * same of vo; and the largest of each row over the cells done so far, ma[i * nsym + s]
     * of ia's, mb of ib's, moa of oa's, mob of ob's: bounds of what a rule can give */
    double *ia, *ib, *oa, *ob;
    double *ma, *mb, *moa, *mob; /* [(cap_n + 1) * nsym] */
    double *in, *out;       /* [cap_packed] packed: the allowed symbols' blocks only */
    size_t cap_packed;
    int *pos;               /* [cells * nsym] where a symbol's block is in in, out (-1: none) */
    int *syms, *nsyms;      /* [cells * nsym], [cells]: the allowed symbols of each cell,
                               ascending, and their number (levels >= 1) */
    unsigned char *state;   /* [cells * nsym] */
    unsigned char *sub;     /* [cells * maxtotal] the current level's allowed substates */
    unsigned char *sub2;    /* [cells * maxtotal] the next level's, while mapping */
    int threads;            /* prune_set_threads */
    int avx2;               /* the CPU has AVX2 (x86: xbar.c's best_term uses it) */
    int no_levels;          /* prune_set_levels(p, 0) */
    int nscratch;           /* scratch[0 .. nscratch): one per member, sized for cap_n */
    prune_scratch *scratch;
    team *team;             /* during a sentence with threads > 1 (NULL: the caller alone) */
    /* the allowed symbols as bit sets over the other end, for the split points a rule can
     * use: bit e of lbits[(i * nsym + s) * nword ..] says s is allowed over (i, e), bit i of
     * rbits[(e * nsym + s) * nword ..] the same */
    uint64_t *lbits, *rbits; /* [(cap_n + 1) * nsym * nword] */
    int nword;               /* 64-bit words per set: (cap_n + 64) / 64 */
    /* levels >= 1: the largest inside score of each allowed (cell, symbol) once the cell is
     * done (-inf: none): a bound of what a rule's child can give */
    double *imax;            /* [cells * nsym] (read only where allowed) */
    const int *gold;        /* during prune_build_mask_tagged: the gold tag of each word */
};

/* The jar's -useGoldPOS in initializeChart: with gold tags, the lexical scores lex of word i
 * over level grammar g keep only the tag p->gold[i] (none where it is -1). */
static inline void prune_gold_lexicon(const prune_plan *p, const grammar *g, int i, double *lex)
{
    if (!p->gold)
        return;
    for (int t = 0; t < g->nsym; t++)
        if (!g->phrasal[t] && t != p->gold[i])
            for (int x = 0; x < g->nsub[t]; x++)
                lex[g->sub_offset[t] + x] = -INFINITY;
}

/* Grow the work space to sentences of n words (and the scratch to p->threads members). */
cky_status prune_reserve(prune_plan *p, int n);

/* The lexical scores of words[0 .. n) over level grammar g (with gold tags, of the gold tag
 * alone; with `state`, the allowed symbols of each cell, of the tags allowed over the word's
 * cell alone: the others' entries are unspecified), each handed to put(arg, i, lex) once, on
 * the plan's team (put writes only what is word i's); the first failure, its message on the
 * calling thread. */
cky_status prune_score_words(prune_plan *p, const grammar *g, char *const *words, int n,
                             const unsigned char *state,
                             void (*put)(void *arg, int i, const double *lex), void *arg);

/* Grow p->in and p->out to n scores. */
cky_status prune_reserve_packed(prune_plan *p, size_t n);

/* ---- level 0 (xbar.c) ---- */

/* Lexicon, inside and outside scores of level 0 over all cells; 0 if the sentence has no
 * parse at this level (then the outside scores are not computed). */
cky_status prune_xbar_passes(prune_plan *p, char *const *words, int n, int *parsed);

/* pruneChart at level 0: p->state from the posteriors. */
void prune_xbar_prune(prune_plan *p, int n, double threshold);

/* ---- levels >= 1 (levels.c) ---- */

/* The same for level k over p->state and p->sub (CKY_ERR_NOMEM if the packed scores of the
 * allowed items do not fit in memory). */
cky_status prune_level_passes(prune_plan *p, int k, char *const *words, int n, int *parsed);

/* pruneChart at level k >= 1: p->sub and p->state from the posteriors. */
void prune_level_prune(prune_plan *p, int k, int n, double threshold);

#endif
