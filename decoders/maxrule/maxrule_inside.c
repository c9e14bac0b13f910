/* inside: the inside passes of the max-rule decoder (the jar's doConstrainedInsideScores with
 * viterbi = false, logScores = false, and doScaledConstrainedInsideScores).
 *
 * Binary rules are walked by parent, rule (list order), split, left substate, right substate,
 * parent substate; a binary term is (rule * left) * right. The rows of a grammar_binary are the
 * non-zero (l, r) rows in ascending order, i.e. the jar's order with its null rows skipped, and
 * the terms it skips (a zero factor) add nothing, so every sum is the jar's. As the jar
 * restricts the pass to a mask: terms go to allowed parent symbols and substates only; a
 * child that is not allowed has no inside score, so it adds nothing. */
#include <math.h>
#include <string.h>

#include "maxrule_internal.h"

void mr_mark_nonzero(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    const double *cell = mr_in(c, i, j);
    unsigned char *nz = c->nz + mr_cell(c, i, j) * c->nsym;
    for (int s = 0; s < g->nsym; s++) {
        nz[s] = 0;
        if (!mr_allowed(c, i, j, s)) /* no score */
            continue;
        for (int x = g->sub_offset[s]; x < g->sub_offset[s] + g->nsub[s] && !nz[s]; x++)
            nz[s] = cell[x] != 0;
    }
}

/* ---- unscaled ---------------------------------------------------------------------------- */

/* Binary terms of parent P over cell (i, j) into acc[nsub[P]] (allowed parent substates
 * only); 1 if any term was added. */
static int binary_terms(const mr_chart *c, int i, int j, int P, int b, int k, double *acc)
{
    const grammar *g = c->g;
    const grammar_binary *r = &g->binary[b];
    const unsigned char *psub = mr_subs(c, i, j, P);
    int np = g->nsub[P], any = 0;
    const double *left = mr_in(c, i, k) + g->sub_offset[r->left];
    const double *right = mr_in(c, k, j) + g->sub_offset[r->right];
    for (int row = 0; row < r->nrow; row++) {
        double ls = left[r->row_l[row]], rs = right[r->row_r[row]];
        if (ls == 0 || rs == 0)
            continue;
        const double *w = r->prob + (size_t)row * np;
        for (int p = 0; p < np; p++) {
            if ((psub && !psub[p]) || w[p] == 0)
                continue;
            acc[p] += w[p] * ls * rs;
            any = 1;
        }
    }
    return any;
}

/* Unary terms of sum rule u (parent P) over the child vector `child` into acc[nsub[P]], the
 * parent substates psub allows (NULL: all). */
static int unary_terms(const mr_chart *c, const grammar_sum_unary *u, const double *child,
                       const unsigned char *psub, double *acc)
{
    int np = c->g->nsub[u->parent], nc = c->g->nsub[u->child], any = 0;
    for (int cp = 0; cp < nc; cp++) {
        double is = child[cp];
        if (is == 0)
            continue;
        const double *w = u->prob + (size_t)cp * np;
        for (int p = 0; p < np; p++) {
            if ((psub && !psub[p]) || w[p] == 0)
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
        if (!mr_allowed(c, i, j, P))
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
    /* one unary layer, all parents from the pre-unary values (the allowed parents': the
     * others have no score) */
    const grammar_sum_closure *s = g->sum;
    for (int P = 0; P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        double *terms = c->tmp + g->sub_offset[P];
        memset(terms, 0, (size_t)g->nsub[P] * sizeof *terms);
        for (int k = s->first[P]; k < s->first[P + 1]; k++)
            if (mr_allowed(c, i, j, s->rule[k].child)) /* (the others have no score) */
                unary_terms(c, &s->rule[k], cell + g->sub_offset[s->rule[k].child],
                            mr_subs(c, i, j, P), terms);
    }
    for (int P = 0; P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        for (int x = g->sub_offset[P]; x < g->sub_offset[P] + g->nsub[P]; x++)
            if (c->tmp[x] > 0)
                cell[x] = cell[x] + c->tmp[x];
    }
    mr_mark_nonzero(c, i, j);
}

void mr_inside(mr_chart *c)
{
    for (int d = 1; d <= c->n; d++)
        for (int i = 0; i + d <= c->n; i++)
            inside_cell(c, i, i + d);
}

/* ---- scaled ------------------------------------------------------------------------------ */

static void inside_cell_scaled(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    double *cell = mr_in(c, i, j);
    int *scale = c->iscale + mr_cell(c, i, j) * c->nsym;
    for (int P = 0; j - i > 1 && P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
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
                mr_fold_add(c, c->acc, cur, cell + g->sub_offset[P], np, &scale[P]);
            }
        }
    }
    /* unaries parent by parent, updating the cell in place: in the jar's order a later parent
     * reads the post-unary value of an earlier one (not so with c->from_pre) */
    const grammar_sum_closure *s = g->sum;
    const int *src_scale;
    const double *src = mr_unary_source(c, cell, scale, &src_scale);
    for (int P = 0; P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        int np = g->nsub[P], parent_scale = scale[P], any = 0;
        double *after = c->tmp; /* scoresAfterUnaries[P]; zero until first used */
        memset(after, 0, (size_t)np * sizeof *after);
        for (int k = s->first[P]; k < s->first[P + 1]; k++) {
            int C = s->rule[k].child;
            if (!mr_allowed(c, i, j, C) || /* (no score) */
                !unary_terms(c, &s->rule[k], src + g->sub_offset[C], mr_subs(c, i, j, P),
                             c->acc))
                continue;
            any = 1;
            mr_fold_add(c, c->acc, src_scale[C], after, np, &parent_scale);
        }
        if (any)
            mr_add_unaries(cell + g->sub_offset[P], np, &scale[P], after, parent_scale);
    }
    mr_mark_nonzero(c, i, j);
}

void mr_inside_scaled(mr_chart *c)
{
    for (int d = 1; d <= c->n; d++)
        for (int i = 0; i + d <= c->n; i++)
            inside_cell_scaled(c, i, i + d);
}
