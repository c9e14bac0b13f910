/* sum_rules: what the cpu and gpu engines' sum-product passes (max-rule) share, so that
 * both do the same float operations in the same order and give the same bits.
 *
 * Scaled layers: a layer of a cell holds float values v with one exponent e per cell and
 * layer, the score being v x 2^e; an all-zero layer has e = CHART_EXP_NONE (chart/cell.h).
 *   - inside: the lexical layer of a word is its linear lexical scores brought into [0.5, 1)
 *     by a power of two (sum_rules_lexical); the pre layer of a longer cell has the exponent
 *     E = the largest epost(left) + epost(right) of its work items (families with rules),
 *     known before any item is added, and is the sum, in plan order, of each item's parent
 *     vector brought to E with ldexpf (values > 0 only); the post layer is pre + the unary
 *     closure over pre (sum_rules_row in the `up` table), normalized (sum_rules_normalize);
 *   - outside: a cell's opost has the exponent E = the largest eopre(parent) +
 *     epost(sibling) over the work items that send to it (plan_fill_pulls: every parent of
 *     a longer span, in pull order), and is the sum of their terms brought to E in pull
 *     order; the root's opost is 1 at ROOT with exponent 0; opre is opost + the closure's
 *     outside terms (the `down` table), normalized.
 * Every power-of-two scaling is chart_scale's (chart/scale.h: exact, or 0 below the normal
 * range). Nothing depends on the batch, the workspace width or the device. */
#ifndef CKY_SEMIRING_SUM_RULES_H
#define CKY_SEMIRING_SUM_RULES_H

#include <math.h>

#include "../chart/cell.h"
#include "../grammar/grammar.h"

/* One direction of the unary closure as rows over global substates: row x is the sum of
 * w[e] * v[from[e]] for e in first[x] .. first[x + 1], one fmaf each in that order. */
typedef struct sum_unary_table {
    int n;                  /* rows: global substates */
    int *first;             /* [n + 1] */
    int *from;              /* [entries]: the global substate read */
    float *w;               /* [entries]: the closure's weight, rounded to float */
    unsigned char *phrasal; /* [n]: the row's symbol is phrasal; other rows get no terms in
                               cells of more than one word */
} sum_unary_table;

typedef struct sum_rules {
    sum_unary_table up;   /* inside: row = parent substate, entries its children, in the
                             order of grammar_sum_closure's rules by parent, then child
                             substate */
    sum_unary_table down; /* outside: row = child substate, entries its parents, in the
                             order of the rules by child, then parent substate */
} sum_rules;

/* The tables of g's sum closure. CKY_ERR_UNSUPPORTED without one (grammar_check_sum's
 * message), CKY_ERR_NOMEM. */
cky_status sum_rules_new(const grammar *g, sum_rules **out);

void sum_rules_free(sum_rules *r);

/* Row x of table t over the layer v, in cells of `span` words (0 for a non-phrasal row
 * above one word). */
static inline float sum_rules_row(const sum_unary_table *t, int x, const float *v, int span)
{
    float acc = 0;
    if (span > 1 && !t->phrasal[x])
        return 0;
    for (int e = t->first[x]; e < t->first[x + 1]; e++)
        acc = fmaf(t->w[e], v[t->from[e]], acc);
    return acc;
}

/* Table t for the device's unary kernel (kernels_sum_layout of gpu/kernels.h): its rows
 * with entries (with `phrasal`: its phrasal rows only), longest first, in slots of 32 (a
 * warp's lanes); group g = s / 32 of slots holds its entries at off[g] + 32 j + s % 32, each
 * row's in the table's order, a row shorter than its group's first (longest) padded with
 * weight 0 and from 0, which fmaf adds as +0: sum_rules_row's bits. */
typedef struct sum_unary_layout {
    int nslot, ngroup, nent; /* nslot = 32 ngroup; nent = off[ngroup] */
    int *row;                /* [nslot]: the row of each slot, -1 for none */
    int *off;                /* [ngroup + 1] */
    int *from;               /* [nent] */
    float *w;                /* [nent] */
} sum_unary_layout;

/* CKY_ERR_NOMEM; *l is then empty. */
cky_status sum_rules_layout(const sum_unary_table *t, int phrasal, sum_unary_layout *l);

void sum_rules_layout_free(sum_unary_layout *l);

/* log P(sentence) of ROOT's post-unary value v at exponent e (-inf if v is 0). */
static inline double sum_rules_loglik(float v, int e)
{
    return v > 0 ? log((double)v) + e * M_LN2 : -INFINITY;
}

/* Scale v[0..n) exactly by the power of two that puts its max in [0.5, 1); the layer's new
 * exponent: e + the exponent taken out, or CHART_EXP_NONE for an all-zero layer. */
int sum_rules_normalize(float *v, int n, int e);

/* The lexical layer of `word` at 0-based position loc of its sentence: pre[0 .. nsub) and
 * *epre (nsub = g->nsub_total; buf: nsub doubles of scratch). */
cky_status sum_rules_lexical(const grammar *g, const char *word, int loc, float *pre,
                             int *epre, double *buf);

#endif
