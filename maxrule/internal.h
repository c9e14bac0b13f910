/* maxrule internals shared by the decoder's passes (not a public API).
 *
 * mr_chart holds the jar's per-sentence arrays, cell (i, j) at chart_cell(n, i, j) as in
 * parser/chart.h: iScore and oScore of every global substate (linear, possibly scaled),
 * iScale and oScale of every symbol (scaled passes), and the max-c arrays of every symbol.
 * "Allowed" is the jar's exhaustive allowedStates: every symbol over one word, the phrasal
 * symbols (isGrammarTag) over longer spans. */
#ifndef CKY_MAXRULE_INTERNAL_H
#define CKY_MAXRULE_INTERNAL_H

#include <limits.h>
#include <stddef.h>

#include "../parser/chart.h"
#include "maxrule.h"

#define MR_NO_SCALE INT_MIN /* Integer.MIN_VALUE: no scale yet */

typedef struct mr_chart {
    const grammar *g;
    int n, nsym, nsub, maxsub; /* words, symbols, global substates, most substates of one */
    double *lex;               /* [n][nsub]: linear lexical scores (0 for phrasal) */
    double *in, *out;          /* [cells][nsub]: iScore, oScore */
    int *iscale, *oscale;      /* [cells][nsym]: scaled passes only */
    int scaled;
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
static inline int mr_allowed(const mr_chart *c, int span, int sym)
{
    return span == 1 || c->g->phrasal[sym];
}

/* Inside scores (unscaled); the lexical layer must be in place. */
void mr_inside(mr_chart *c);

/* Scaled inside scores (doScaledConstrainedInsideScores) over a fresh chart. */
void mr_inside_scaled(mr_chart *c);

/* Outside scores, unscaled or scaled as c->scaled says; the root's outside is set here. */
void mr_outside(mr_chart *c);

/* Max-c scores (doConstrainedMaxCScores). */
void mr_maxc(mr_chart *c);

/* The annotated tree of the max-c arrays (extractBestMaxRuleParse). */
cky_status mr_extract(const mr_chart *c, char *const *words, tree **out);

/* ---- ScalingTools, with Java's int arithmetic (wrap-around) ---- */

/* a + b and a - b as Java ints. */
static inline int mr_jadd(int a, int b) { return (int)(unsigned)((unsigned)a + (unsigned)b); }
static inline int mr_jsub(int a, int b) { return (int)(unsigned)((unsigned)a - (unsigned)b); }

/* calcScaleFactor(logScale): SCALE^logScale, 0 for Integer.MIN_VALUE. */
double mr_scale_factor(int log_scale);

/* scaleArray(scores, previousScale) over len values: the new scale. */
int mr_scale_array(double *scores, int len, int previous);

/* scaleArrayToScale(scores, previousScale, newScale) over len values. */
void mr_scale_to(double *scores, int len, int previous, int scale);

#endif
