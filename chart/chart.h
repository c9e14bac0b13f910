/* chart: the CKY chart of one sentence, span-major, with a pre-unary and a post-unary layer
 * (below parser/ and viterbi/, which both use it).
 *
 * Cells (i, j), 0 <= i < j <= n, are stored by span length, then start: cell (i, j) is number
 * chart_cell(n, i, j) (chart/cell.h, shared with device code). Each layer of a cell holds
 * one score per global substate id (grammar.nsub_total), all substates of one cell
 * contiguous. The pre-unary layer holds lexical scores (span 1) or the best binary
 * derivation (span >= 2); the post-unary layer holds max(pre, best closed unary over pre).
 * Binary rules read post-unary children.
 *
 * Scores are stored as double in both arithmetic modes:
 *  - CHART_DOUBLE: the Berkeley parser's arithmetic, binary (w + left) + right in double;
 *  - CHART_FLOAT: the GPU's arithmetic, binary (left + right) + w in float32 (every stored
 *    value is a float, widened exactly);
 *  - CHART_FIXED: CHART_FLOAT's, but binary rules in fixed point (util/fixedpoint.h:
 *    fixedpoint_binary of the float weight and children).
 * Unary scores are child + w in all (in float32 but for CHART_DOUBLE). Every implementation of a mode gives bit-identical
 * charts, because max is exact and order-independent. */
#ifndef CKY_CHART_H
#define CKY_CHART_H

#include <stddef.h>

#include "../util/fixedpoint.h"
#include "../util/status.h"
#include "cell.h"

typedef enum chart_mode { CHART_DOUBLE, CHART_FLOAT, CHART_FIXED } chart_mode;

typedef struct chart {
    int n;           /* sentence length in words */
    int nsub;        /* scores per cell layer (grammar.nsub_total) */
    chart_mode mode;
    int out_of_range; /* CHART_FIXED, set by the engines: a score of the sentence left
                         fixedpoint_of's range (util/fixedpoint.h) and was clamped, so its
                         tree may not be the unbounded arithmetic's (decoders parse it again
                         in double) */
    double *pre;     /* [ncells][nsub] */
    double *post;    /* [ncells][nsub] */
} chart;

/* The pre-/post-unary score vector of cell (i, j). */
static inline double *chart_pre(const chart *c, int i, int j)
{
    return c->pre + chart_cell(c->n, i, j) * c->nsub;
}
static inline double *chart_post(const chart *c, int i, int j)
{
    return c->post + chart_cell(c->n, i, j) * c->nsub;
}

/* Score of a binary derivation with rule weight w and children scores left, right. */
static inline double chart_binary(chart_mode mode, double w, double left, double right)
{
    if (mode == CHART_FLOAT)
        return (double)(((float)left + (float)right) + (float)w);
    if (mode == CHART_FIXED)
        return (double)fixedpoint_binary((float)w, (float)left, (float)right);
    return (w + left) + right;
}

/* Score of a unary derivation with rule weight w over child score `child`. */
static inline double chart_unary(chart_mode mode, double w, double child)
{
    if (mode != CHART_DOUBLE)
        return (double)((float)child + (float)w);
    return child + w;
}

/* Round a lexical score to the mode's precision. */
static inline double chart_round(chart_mode mode, double x)
{
    return mode != CHART_DOUBLE ? (double)(float)x : x;
}

/* A chart over n words with every score -inf. */
cky_status chart_new(int n, int nsub, chart_mode mode, chart **out);

void chart_free(chart *c);

/* Compare two charts of the same sentence bit for bit (both layers, every cell). Returns 0 if
 * identical; otherwise 1 and a message naming the first differing cell (i, j), layer, global
 * substate id and both values with their difference. */
int chart_compare(const chart *a, const chart *b, char *msg, size_t size);

#endif
