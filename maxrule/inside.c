/* inside: the inside passes of the max-rule decoder (the jar's doConstrainedInsideScores with
 * viterbi = false, logScores = false, and doScaledConstrainedInsideScores), and ScalingTools.
 *
 * Binary rules are walked by parent, rule (list order), split, left substate, right substate,
 * parent substate; a binary term is (rule * left) * right. The rows of a grammar_binary are the
 * non-zero (l, r) rows in ascending order, i.e. the jar's order with its null rows skipped, and
 * the terms it skips (a zero factor) add nothing, so every sum is the jar's. */
#include <math.h>
#include <string.h>

#include "internal.h"

/* ---- ScalingTools ------------------------------------------------------------------------ */

#define MR_LOGSCALE 100

static double scale_base(void) { return exp(MR_LOGSCALE); }

double mr_scale_factor(int log_scale)
{
    double s = scale_base();
    if (log_scale == MR_NO_SCALE)
        return 0.0;
    switch (log_scale) {
    case 0: return 1.0;
    case 1: return s;
    case 2: return s * s;
    case 3: return s * s * s;
    case -1: return 1.0 / s;
    case -2: return 1.0 / s / s;
    case -3: return 1.0 / s / s / s;
    default: return pow(s, (double)log_scale);
    }
}

static double array_max(const double *v, int len)
{
    double m = -INFINITY;
    for (int i = 0; i < len; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

int mr_scale_array(double *scores, int len, int previous)
{
    if (previous == MR_NO_SCALE)
        return previous;
    double s = scale_base();
    int log_scale = 0;
    double scale = 1.0, max = array_max(scores, len);
    if (max == INFINITY)
        return 0;
    if (max == 0)
        return previous;
    while (max > s) {
        max /= s;
        scale *= s;
        log_scale += 1;
    }
    while (max > 0.0 && max < 1.0 / s) {
        max *= s;
        scale /= s;
        log_scale -= 1;
    }
    if (log_scale != 0)
        for (int i = 0; i < len; i++)
            scores[i] /= scale;
    return mr_jadd(previous, log_scale);
}

void mr_scale_to(double *scores, int len, int previous, int scale)
{
    int diff = mr_jsub(previous, scale);
    if (diff == 0)
        return;
    double max = array_max(scores, len);
    if (isinf(max) || isnan(max) || max == 0.0) /* SloppyMath.isDangerous */
        return;
    double f = mr_scale_factor(diff);
    if (diff != INT_MIN && (diff >= 800 || diff <= -800)) { /* Math.abs(MIN_VALUE) < 0 */
        memset(scores, 0, (size_t)len * sizeof *scores);
        return;
    }
    for (int i = 0; i < len; i++)
        scores[i] *= f;
}

void mr_mark_nonzero(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    const double *cell = mr_in(c, i, j);
    unsigned char *nz = c->nz + mr_cell(c, i, j) * c->nsym;
    for (int s = 0; s < g->nsym; s++) {
        nz[s] = 0;
        for (int x = g->sub_offset[s]; x < g->sub_offset[s] + g->nsub[s] && !nz[s]; x++)
            nz[s] = cell[x] != 0;
    }
}

/* ---- unscaled ---------------------------------------------------------------------------- */

/* Binary terms of parent P over cell (i, j) into acc[nsub[P]]; 1 if any term was added. */
static int binary_terms(const mr_chart *c, int i, int j, int P, int b, int k, double *acc)
{
    const grammar *g = c->g;
    const grammar_binary *r = &g->binary[b];
    int np = g->nsub[P], any = 0;
    const double *left = mr_in(c, i, k) + g->sub_offset[r->left];
    const double *right = mr_in(c, k, j) + g->sub_offset[r->right];
    for (int row = 0; row < r->nrow; row++) {
        double ls = left[r->row_l[row]], rs = right[r->row_r[row]];
        if (ls == 0 || rs == 0)
            continue;
        const double *w = r->prob + (size_t)row * np;
        for (int p = 0; p < np; p++) {
            if (w[p] == 0)
                continue;
            acc[p] += w[p] * ls * rs;
            any = 1;
        }
    }
    return any;
}

/* Unary terms of sum rule u (parent P) over the child vector `child` into acc[nsub[P]]. */
static int unary_terms(const mr_chart *c, const grammar_sum_unary *u, const double *child,
                       double *acc)
{
    int np = c->g->nsub[u->parent], nc = c->g->nsub[u->child], any = 0;
    for (int cp = 0; cp < nc; cp++) {
        double is = child[cp];
        if (is == 0)
            continue;
        const double *w = u->prob + (size_t)cp * np;
        for (int p = 0; p < np; p++) {
            if (w[p] == 0)
                continue;
            acc[p] += is * w[p];
            any = 1;
        }
    }
    return any;
}

static void inside_cell(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    double *cell = mr_in(c, i, j);
    for (int P = 0; j - i > 1 && P < g->nsym; P++) {
        if (!g->phrasal[P])
            continue;
        int np = g->nsub[P], any = 0;
        memset(c->acc, 0, (size_t)np * sizeof *c->acc);
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            int kmin, kmax;
            mr_splits(c, &g->binary[b], i, j, &kmin, &kmax);
            for (int k = kmin; k <= kmax; k++)
                if (mr_has(c, i, k, g->binary[b].left) && mr_has(c, k, j, g->binary[b].right))
                    any |= binary_terms(c, i, j, P, b, k, c->acc);
        }
        for (int p = 0; any && p < np; p++)
            if (c->acc[p] > 0)
                cell[g->sub_offset[P] + p] = c->acc[p];
    }
    /* one unary layer, all parents from the pre-unary values */
    const grammar_sum_closure *s = g->sum;
    memset(c->tmp, 0, (size_t)c->nsub * sizeof *c->tmp);
    for (int P = 0; P < g->nsym; P++) {
        if (!mr_allowed(c, j - i, P))
            continue;
        for (int k = s->first[P]; k < s->first[P + 1]; k++)
            unary_terms(c, &s->rule[k], cell + g->sub_offset[s->rule[k].child],
                        c->tmp + g->sub_offset[P]);
    }
    for (int x = 0; x < c->nsub; x++)
        if (c->tmp[x] > 0)
            cell[x] = cell[x] + c->tmp[x];
    mr_mark_nonzero(c, i, j);
}

void mr_inside(mr_chart *c)
{
    for (int d = 1; d <= c->n; d++)
        for (int i = 0; i + d <= c->n; i++)
            inside_cell(c, i, i + d);
}

/* ---- scaled ------------------------------------------------------------------------------ */

/* Fold acc (scale `scale`) into dst (of scale *dst_scale) the way the jar does after each
 * batch of terms: scaleArray, then both to the larger scale. */
static void fold_scaled(mr_chart *c, double *acc, int scale, double *dst, int ndst,
                        int *dst_scale)
{
    int cur = mr_scale_array(acc, c->maxsub, scale);
    if (*dst_scale != cur) {
        if (*dst_scale == MR_NO_SCALE) {
            *dst_scale = cur;
        } else {
            int ns = cur > *dst_scale ? cur : *dst_scale;
            mr_scale_to(acc, c->maxsub, cur, ns);
            mr_scale_to(dst, ndst, *dst_scale, ns);
            *dst_scale = ns;
        }
    }
}

static void inside_cell_scaled(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    double *cell = mr_in(c, i, j);
    int *scale = c->iscale + mr_cell(c, i, j) * c->nsym;
    for (int P = 0; j - i > 1 && P < g->nsym; P++) {
        if (!g->phrasal[P])
            continue;
        int np = g->nsub[P];
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            int kmin, kmax;
            mr_splits(c, r, i, j, &kmin, &kmax);
            for (int k = kmin; k <= kmax; k++) {
                if (!mr_has(c, i, k, r->left) || !mr_has(c, k, j, r->right) ||
                    !binary_terms(c, i, j, P, b, k, c->acc))
                    continue;
                int cur = mr_jadd(c->iscale[mr_cell(c, i, k) * c->nsym + r->left],
                                  c->iscale[mr_cell(c, k, j) * c->nsym + r->right]);
                fold_scaled(c, c->acc, cur, cell + g->sub_offset[P], np, &scale[P]);
                for (int p = 0; p < np; p++)
                    cell[g->sub_offset[P] + p] += c->acc[p];
                memset(c->acc, 0, (size_t)c->maxsub * sizeof *c->acc);
            }
        }
    }
    /* unaries parent by parent, updating the cell in place: in the jar's order a later parent
     * reads the post-unary value of an earlier one (not so with c->from_pre) */
    const grammar_sum_closure *s = g->sum;
    const int *src_scale;
    const double *src = mr_unary_source(c, cell, scale, &src_scale);
    for (int P = 0; P < g->nsym; P++) {
        if (!mr_allowed(c, j - i, P))
            continue;
        int np = g->nsub[P], parent_scale = scale[P], before = parent_scale, any = 0;
        double *after = c->tmp; /* scoresAfterUnaries[P]; zero until first used */
        memset(after, 0, (size_t)np * sizeof *after);
        for (int k = s->first[P]; k < s->first[P + 1]; k++) {
            int C = s->rule[k].child;
            if (!unary_terms(c, &s->rule[k], src + g->sub_offset[C], c->acc))
                continue;
            any = 1;
            fold_scaled(c, c->acc, src_scale[C], after, np, &parent_scale);
            for (int p = 0; p < np; p++)
                after[p] += c->acc[p];
            memset(c->acc, 0, (size_t)c->maxsub * sizeof *c->acc);
        }
        if (!any)
            continue;
        int ns = before > parent_scale ? before : parent_scale;
        mr_scale_to(cell + g->sub_offset[P], np, before, ns);
        mr_scale_to(after, np, parent_scale, ns);
        scale[P] = ns;
        for (int p = 0; p < np; p++)
            if (after[p] > 0)
                cell[g->sub_offset[P] + p] += after[p];
    }
    mr_mark_nonzero(c, i, j);
}

void mr_inside_scaled(mr_chart *c)
{
    for (int d = 1; d <= c->n; d++)
        for (int i = 0; i + d <= c->n; i++)
            inside_cell_scaled(c, i, i + d);
}
