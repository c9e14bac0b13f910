/* outside: the outside passes of the max-rule decoder (the jar's doConstrainedOutsideScores
 * with viterbi = false, logScores = false, and doScaledConstrainedOutsideScores).
 *
 * Cells by decreasing span, then start. In each cell the closed sum unaries first (rules by
 * child, in closedSumRulesWithChild order), then the binary rules of every parent send
 * (rule * sibling inside) * parent outside to each child, one split at a time; each split's
 * sums are added to the children as the jar adds them. Outside scores are those of the
 * pre-unary layer: the parent side of a binary rule includes the unary terms.
 *
 * The mask, as the jar applies it: unary terms go to allowed child symbols and substates
 * (in the scaled pass from allowed parent substates only: there a binary term can reach a
 * substate without inside score); binary terms come from allowed parents, and in the scaled
 * pass, which does not skip children without inside scores, go to allowed children only. */
#include <math.h>
#include <string.h>

#include "maxrule_internal.h"

/* Terms of one (rule b of P, split k) into accl[nsub[L]] and accr[nsub[R]]. `check_zero`: skip
 * zero inside scores as the unscaled pass does (the scaled pass does not; the terms are 0). */
static int binary_out_terms(const mr_chart *c, int i, int j, int P, int b, int k,
                            int check_zero, double *accl, double *accr)
{
    const grammar *g = c->g;
    const grammar_binary *r = &g->binary[b];
    int np = g->nsub[P], any = 0;
    const double *left = mr_in(c, i, k) + g->sub_offset[r->left];
    const double *right = mr_in(c, k, j) + g->sub_offset[r->right];
    const double *po = mr_out(c, i, j) + g->sub_offset[P];
    for (int row = 0; row < r->nrow; row++) {
        int l = r->row_l[row], rr = r->row_r[row];
        double ls = left[l], rs = right[rr];
        if (check_zero && (ls == 0 || rs == 0))
            continue;
        const double *w = r->prob + (size_t)row * np;
        for (int p = 0; p < np; p++) {
            if (w[p] == 0 || po[p] == 0)
                continue;
            accl[l] += w[p] * rs * po[p];
            accr[rr] += w[p] * ls * po[p];
            any = 1;
        }
    }
    return any;
}

/* Unary terms of sum rule u into acc[nsub[child]] from the parent outside vector po, for the
 * child substates csub allows and from the parent substates psub allows (NULL: all). */
static int unary_out_terms(const mr_chart *c, const grammar_sum_unary *u, const double *po,
                           const unsigned char *csub, const unsigned char *psub, double *acc)
{
    int np = c->g->nsub[u->parent], nc = c->g->nsub[u->child], any = 0;
    for (int cp = 0; cp < nc; cp++) {
        if (csub && !csub[cp])
            continue;
        const double *w = u->prob + (size_t)cp * np;
        for (int p = 0; p < np; p++) {
            if ((psub && !psub[p]) || w[p] == 0 || po[p] == 0)
                continue;
            acc[cp] += po[p] * w[p];
            any = 1;
        }
    }
    return any;
}

static void outside_cell(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    const grammar_sum_closure *s = g->sum;
    double *cell = mr_out(c, i, j);
    for (int C = 0; C < g->nsym; C++) { /* the allowed children's (the others have none) */
        if (!mr_allowed(c, i, j, C))
            continue;
        double *terms = c->tmp + g->sub_offset[C];
        memset(terms, 0, (size_t)g->nsub[C] * sizeof *terms);
        for (int x = s->child_first[C]; x < s->child_first[C + 1]; x++) {
            const grammar_sum_unary *u = &s->rule[s->by_child[x]];
            if (mr_allowed(c, i, j, u->parent)) /* (the others have no outside score) */
                unary_out_terms(c, u, cell + g->sub_offset[u->parent], mr_subs(c, i, j, C),
                                NULL, terms);
        }
    }
    for (int C = 0; C < g->nsym; C++) {
        if (!mr_allowed(c, i, j, C))
            continue;
        for (int x = g->sub_offset[C]; x < g->sub_offset[C] + g->nsub[C]; x++)
            if (c->tmp[x] > 0)
                cell[x] += c->tmp[x];
    }
    for (int P = 0; j - i > 1 && P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
            continue; /* (its outside scores are 0) */
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            int nl = g->nsub[r->left], nr = g->nsub[r->right], kmin, kmax;
            mr_splits(c, r, i, j, &kmin, &kmax);
            for (int k = kmin; k <= kmax; k++) {
                if (!mr_has(c, i, k, r->left) || !mr_has(c, k, j, r->right))
                    continue; /* no terms: a zero inside score is skipped */
                memset(c->acc, 0, (size_t)c->maxsub * sizeof *c->acc);
                memset(c->acc2, 0, (size_t)c->maxsub * sizeof *c->acc2);
                if (!binary_out_terms(c, i, j, P, b, k, 1, c->acc, c->acc2))
                    continue;
                double *lo = mr_out(c, i, k) + g->sub_offset[r->left];
                double *ro = mr_out(c, k, j) + g->sub_offset[r->right];
                for (int l = 0; l < nl; l++)
                    if (c->acc[l] > 0)
                        lo[l] += c->acc[l];
                for (int rr = 0; rr < nr; rr++)
                    if (c->acc2[rr] > 0)
                        ro[rr] += c->acc2[rr];
            }
        }
    }
}

/* ---- scaled ------------------------------------------------------------------------------ */

/* The unaries of one cell, child by child, the cell updated in place: in the jar's order a
 * later child reads the outside of an earlier one with its unary terms (not so with
 * c->from_pre). */
static void outside_unary_scaled(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    const grammar_sum_closure *s = g->sum;
    double *cell = mr_out(c, i, j);
    int *scale = c->oscale + mr_cell(c, i, j) * c->nsym;
    const int *src_scale;
    const double *src = mr_unary_source(c, cell, scale, &src_scale);
    for (int C = 0; C < g->nsym; C++) {
        if (!mr_allowed(c, i, j, C))
            continue;
        int nc = g->nsub[C], child_scale = scale[C], any = 0;
        double *after = c->tmp;
        memset(after, 0, (size_t)nc * sizeof *after);
        for (int x = s->child_first[C]; x < s->child_first[C + 1]; x++) {
            const grammar_sum_unary *u = &s->rule[s->by_child[x]];
            if (!mr_allowed(c, i, j, u->parent) ||
                !unary_out_terms(c, u, src + g->sub_offset[u->parent], mr_subs(c, i, j, C),
                                 mr_subs(c, i, j, u->parent), c->acc))
                continue;
            any = 1;
            mr_fold_add(c, c->acc, src_scale[u->parent], after, nc, &child_scale);
        }
        if (any)
            mr_add_unaries(cell + g->sub_offset[C], nc, &scale[C], after, child_scale);
    }
}

static void outside_cell_scaled(mr_chart *c, int i, int j)
{
    const grammar *g = c->g;
    outside_unary_scaled(c, i, j);
    size_t pc = mr_cell(c, i, j);
    for (int P = 0; j - i > 1 && P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            int kmin, kmax;
            mr_splits(c, r, i, j, &kmin, &kmax);
            for (int k = kmin; k <= kmax; k++) {
                if (!mr_allowed(c, i, k, r->left) || !mr_allowed(c, k, j, r->right) ||
                    !binary_out_terms(c, i, j, P, b, k, 0, c->acc, c->acc2))
                    continue;
                size_t lc = mr_cell(c, i, k), rc = mr_cell(c, k, j);
                int pscale = c->oscale[pc * c->nsym + P];
                if (mr_array_max(c->acc, c->maxsub) != 0)
                    mr_fold_add(c, c->acc, mr_jadd(pscale, c->iscale[rc * c->nsym + r->right]),
                                c->out + lc * c->nsub + g->sub_offset[r->left],
                                g->nsub[r->left], &c->oscale[lc * c->nsym + r->left]);
                if (mr_array_max(c->acc2, c->maxsub) != 0)
                    mr_fold_add(c, c->acc2, mr_jadd(pscale, c->iscale[lc * c->nsym + r->left]),
                                c->out + rc * c->nsub + g->sub_offset[r->right],
                                g->nsub[r->right], &c->oscale[rc * c->nsym + r->right]);
            }
        }
    }
}

void mr_outside(mr_chart *c)
{
    size_t top = mr_cell(c, 0, c->n);
    c->out[top * c->nsub + c->g->sub_offset[0]] = 1.0;
    if (c->scaled)
        c->oscale[top * c->nsym + 0] = 0;
    memset(c->acc, 0, (size_t)c->maxsub * sizeof *c->acc);
    memset(c->acc2, 0, (size_t)c->maxsub * sizeof *c->acc2);
    for (int d = c->n; d >= 1; d--)
        for (int i = 0; i + d <= c->n; i++) {
            if (c->scaled)
                outside_cell_scaled(c, i, i + d);
            else
                outside_cell(c, i, i + d);
        }
}
