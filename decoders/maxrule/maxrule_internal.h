/* maxrule internals shared by the decoder's passes (not a public API).
 *
 * mr_chart holds the jar's per-sentence arrays, cell (i, j) at chart_cell(n, i, j) as in
 * chart/chart.h: iScore and oScore of every global substate (linear, possibly scaled),
 * iScale and oScale of every symbol (scaled passes), and the max-c arrays of every symbol.
 * "Allowed" is the jar's allowedStates and allowedSubStates: a pruned pass's mask
 * (chart/mask.h), or without one the exhaustive pass's: every symbol over one word, the
 * phrasal symbols (isGrammarTag) over longer spans, every substate. */
#ifndef CKY_DECODERS_MAXRULE_INTERNAL_H
#define CKY_DECODERS_MAXRULE_INTERNAL_H

#include <limits.h>
#include <stddef.h>

#include "../../chart/chart.h"
#include "../../chart/mask.h"
#include "maxrule.h"

#define MR_NO_SCALE INT_MIN /* Integer.MIN_VALUE: no scale yet */
#define MR_MEMO 4096        /* scale exponents whose log factor is remembered */

typedef struct mr_chart {
    const grammar *g;
    const chart_mask *mask;    /* the allowed items (NULL: the exhaustive pass's) */
    int n, nsym, nsub, maxsub; /* words, symbols, global substates, most substates of one */
    int cap_n;                 /* the words the arrays hold (a kept chart: >= n) */
    double *lex;               /* [n][nsub]: linear lexical scores (0 for phrasal) */
    double *in, *out;          /* [cells][nsub]: iScore, oScore */
    int *iscale, *oscale;      /* [cells][nsym]: scaled passes only */
    int scaled;
    int from_pre;              /* scaled unaries read the values before the cell's unaries */
    int binarized;             /* maxrule_options.binarized: keep the extracted tree as is */
    int variational;           /* maxrule_options.variational: the jar's variational max-c */
    double *pre;               /* [nsub]: those values (from_pre) */
    int *pre_scale;            /* [nsym]: their scales */
    unsigned char *nz;         /* [cells][nsym]: 1 if some inside score of the symbol is not 0 */
    double *logscale;          /* [2 * MR_MEMO + 1]: log(SCALE^x) for |x| <= MR_MEMO, or NaN */
    double *mscore;                      /* [cells][nsym]: maxcScore */
    int *msplit, *mchild, *mleft, *mright; /* [cells][nsym] */
    double *tmp, *tmp2;                  /* [nsub] scratch (scoresAfterUnaries etc.) */
    double *acc, *acc2;                  /* [maxsub] scratch (scoresToAdd, unscaled...) */
} mr_chart;

static inline size_t mr_cell(const mr_chart *c, int i, int j) { return chart_cell(c->n, i, j); }

static inline double *mr_in(const mr_chart *c, int i, int j)
{
    return c->in + mr_cell(c, i, j) * c->nsub;
}
static inline double *mr_out(const mr_chart *c, int i, int j)
{
    return c->out + mr_cell(c, i, j) * c->nsub;
}
/* allowedStates[i][j][sym]. */
static inline int mr_allowed(const mr_chart *c, int i, int j, int sym)
{
    if (c->mask)
        return c->mask->state[mr_cell(c, i, j) * c->nsym + sym];
    return j - i == 1 || c->g->phrasal[sym];
}

/* allowedSubStates of symbol sym over (i, j), one flag per substate; NULL: all allowed. */
static inline const unsigned char *mr_subs(const mr_chart *c, int i, int j, int sym)
{
    return c->mask ? c->mask->sub + mr_cell(c, i, j) * c->nsub + c->g->sub_offset[sym] : NULL;
}

/* 1 if symbol sym has a non-zero inside score over (i, j) (set by the inside passes). */
static inline int mr_has(const mr_chart *c, int i, int j, int sym)
{
    return c->nz[mr_cell(c, i, j) * c->nsym + sym];
}

/* Set the flags of mr_has for cell (i, j) from its inside scores. */
void mr_mark_nonzero(mr_chart *c, int i, int j);

/* The split points k of binary rule r over (i, j) whose children are allowed (a POS tag only
 * spans one word): every other split has no terms, and the jar skips it too. */
static inline void mr_splits(const mr_chart *c, const grammar_binary *r, int i, int j, int *kmin,
                             int *kmax)
{
    *kmin = i + 1;
    *kmax = j - 1;
    if (!c->g->phrasal[r->left] && *kmax > i + 1)
        *kmax = i + 1;
    if (!c->g->phrasal[r->right] && *kmin < j - 1)
        *kmin = j - 1;
}

/* The values and scales of a cell before its unaries (used when c->from_pre; else the cell
 * itself, updated in place as the jar's scaled passes do): the vectors unaries read. */
static inline const double *mr_unary_source(mr_chart *c, double *cell, int *scale,
                                            const int **src_scale)
{
    if (!c->from_pre) {
        *src_scale = scale;
        return cell;
    }
    for (int x = 0; x < c->nsub; x++)
        c->pre[x] = cell[x];
    for (int s = 0; s < c->nsym; s++)
        c->pre_scale[s] = scale[s];
    *src_scale = c->pre_scale;
    return c->pre;
}

/* A chart of n words for g, zeroed scores: this thread's kept chart when it fits, else a new
 * one; give it back with mr_chart_done. */
cky_status mr_chart_take(const grammar *g, int n, mr_chart **out);

/* The chart's scores zeroed again, where its sentence wrote them (the allowed symbols'
 * blocks), and kept for this thread's next sentence (a chart of many words is freed). */
void mr_chart_done(mr_chart *c);

/* 1 if every score of this thread's kept chart is zero (none kept: 1): a test's check that
 * mr_chart_done zeroed all that was written. */
int mr_chart_kept_is_clean(void);

/* setupScaling + initializeChart(scale = true): scores zeroed, the lexical layer (c->lex)
 * in place, scales MIN_VALUE except the POS tags over one word (0), the scratch sums (acc,
 * acc2) zeroed whatever a pass before left there. */
cky_status mr_setup_scaling(mr_chart *c);

/* The tree of the max-c arrays (mr_maxc done) and its score into out (out->tree stays NULL
 * when there is none: the jar's childless ROOT). */
cky_status mr_decode_tail(const mr_chart *c, char *const *words, maxrule_result *out);

/* Inside scores (unscaled); the lexical layer must be in place. */
void mr_inside(mr_chart *c);

/* Scaled inside scores (doScaledConstrainedInsideScores) over a fresh chart. */
void mr_inside_scaled(mr_chart *c);

/* Outside scores, unscaled or scaled as c->scaled says; the root's outside is set here. */
void mr_outside(mr_chart *c);

/* Max-c scores (doConstrainedMaxCScores). */
cky_status mr_maxc(mr_chart *c);

/* The pieces of max-c that the k-best lists share (maxrule_maxc.c): log(calcScaleFactor
 * (scale)), remembered in c->logscale; iScale and oScale of sym over (i, j) (scaled passes);
 * the posterior of binary rule b (parent P) at split k over (i, j), and of sum unary u over
 * (i, j), their terms divided by norm (P(sentence)) one by one and summed as the jar does. */
double mr_log_scale(const mr_chart *c, int scale);
int mr_iscale_of(const mr_chart *c, int i, int j, int sym);
int mr_oscale_of(const mr_chart *c, int i, int j, int sym);
double mr_binary_posterior(const mr_chart *c, int i, int j, int P, int b, int k, double norm);
double mr_unary_posterior(const mr_chart *c, int i, int j, const grammar_sum_unary *u,
                          double norm);

/* The k-best lists over the max-c chart (CoarseToFineNBestParser, maxrule_kbest.c): after
 * the inside and outside passes, at most k trees, best first, into out (tree and score: the
 * first; rest and rest_score: the others). None (out->tree NULL) when the root's list is
 * empty. */
cky_status mr_kbest(const mr_chart *c, char *const *words, int k, maxrule_result *out);

/* The annotated tree of the max-c arrays (extractBestMaxRuleParse). */
cky_status mr_extract(const mr_chart *c, char *const *words, tree **out);

/* ---- ScalingTools, with Java's int arithmetic (wrap-around) ---- */

/* a + b and a - b as Java ints. */
static inline int mr_jadd(int a, int b) { return (int)(unsigned)((unsigned)a + (unsigned)b); }
static inline int mr_jsub(int a, int b) { return (int)(unsigned)((unsigned)a - (unsigned)b); }

/* DoubleArrays.max: the largest of len values (-inf for none). */
double mr_array_max(const double *v, int len);

/* calcScaleFactor(logScale): SCALE^logScale, 0 for Integer.MIN_VALUE. */
double mr_scale_factor(int log_scale);

/* scaleArray(scores, previousScale) over len values: the new scale. */
int mr_scale_array(double *scores, int len, int previous);

/* scaleArrayToScale(scores, previousScale, newScale) over len values. */
void mr_scale_to(double *scores, int len, int previous, int scale);

/* Fold a batch of terms acc[maxsub] (scale `scale` before scaleArray) into dst[ndst] of scale
 * *dst_scale as the jar's scaled passes do: scaleArray, both to the larger scale, add, and
 * acc zeroed again. */
void mr_fold_add(mr_chart *c, double *acc, int scale, double *dst, int ndst, int *dst_scale);

/* The end of a symbol's unaries in a scaled pass: vec[n] (scale *scale) and the unary terms
 * after[n] (scale after_scale) both to the larger scale, which *scale becomes; after added. */
void mr_add_unaries(double *vec, int n, int *scale, double *after, int after_scale);

#endif
