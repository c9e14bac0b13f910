/* xbar: the level-0 (X-bar) pass of the cascade, one score per (cell, symbol): the jar's
 * initializeChart(noSubstates), doConstrainedViterbiInsideScores and
 * doConstrainedViterbiOutsideScores (level -1 is skipped, so every cell is allowed), and
 * pruneChart at level 0. Maxima are exact, so the loops may run in any order: split points
 * innermost, over copies of the scores laid out by start and by end (plan.h: ia, ib, ol,
 * or_).
 *
 * Binary terms are (rule + left) + right inside, (rule + sibling) + outside outside; unary
 * terms child + rule, outside + rule. The unaries of a cell update it in place in symbol
 * order, parent by parent inside and child by child outside, as the jar's loops do: a later
 * symbol can read an earlier one's improved score (a second unary in one cell). */
#include <math.h>

#include "internal.h"

static double *cell_of(double *v, int n, int i, int j, int nsym)
{
    return v + chart_cell(n, i, j) * (size_t)nsym;
}

/* The row of symbol s over the cells starting at i (ia, ol) or ending at i (ib, or_), indexed
 * by the other end: the values a loop over split points reads in sequence. */
static double *by_end(double *v, int n, int nsym, int i, int s)
{
    return v + ((size_t)i * nsym + s) * ((size_t)n + 1);
}

static void xbar_inside_cell(prune_plan *p, const grammar *g, int n, int i, int j)
{
    int nsym = g->nsym;
    double *cell = cell_of(p->vi, n, i, j, nsym);
    for (int P = 0; j - i > 1 && P < nsym; P++) {
        if (!g->phrasal[P])
            continue;
        /* four running maxima (max is exact: any grouping gives the same result); a -inf
         * child gives -inf, which changes nothing */
        double b0 = cell[P], b1 = b0, b2 = b0, b3 = b0;
        for (int b = p->bin_first[P]; b < p->bin_first[P + 1]; b++) {
            const prune_rule1 *r = &p->bin[b];
            const double *ls = by_end(p->ia, n, nsym, i, r->left);
            const double *rs = by_end(p->ib, n, nsym, j, r->right);
            double w = r->score;
            int k = i + 1;
            for (; k + 3 < j; k += 4) {
                double t0 = w + ls[k] + rs[k], t1 = w + ls[k + 1] + rs[k + 1];
                double t2 = w + ls[k + 2] + rs[k + 2], t3 = w + ls[k + 3] + rs[k + 3];
                b0 = t0 > b0 ? t0 : b0;
                b1 = t1 > b1 ? t1 : b1;
                b2 = t2 > b2 ? t2 : b2;
                b3 = t3 > b3 ? t3 : b3;
            }
            for (; k < j; k++) {
                double t = w + ls[k] + rs[k];
                b0 = t > b0 ? t : b0;
            }
        }
        b0 = b1 > b0 ? b1 : b0;
        b2 = b3 > b2 ? b3 : b2;
        double best = b2 > b0 ? b2 : b0;
        if (best > cell[P])
            cell[P] = best;
    }
    for (int P = 0; P < nsym; P++) { /* in place, in symbol order */
        if (!g->phrasal[P])
            continue;
        double best = cell[P];
        for (int u = p->un_pfirst[P]; u < p->un_pfirst[P + 1]; u++) {
            double is = cell[p->un_p[u].left];
            if (is == -INFINITY)
                continue;
            double tot = is + p->un_p[u].score;
            if (tot >= best)
                best = tot;
        }
        if (best > cell[P])
            cell[P] = best;
    }
    for (int s = 0; s < nsym; s++) {
        by_end(p->ia, n, nsym, i, s)[j] = cell[s];
        by_end(p->ib, n, nsym, j, s)[i] = cell[s];
    }
}

static void xbar_outside_cell(prune_plan *p, const grammar *g, int n, int i, int j)
{
    int nsym = g->nsym;
    const double *in = cell_of(p->vi, n, i, j, nsym);
    double *cell = cell_of(p->vo, n, i, j, nsym);
    for (int s = 0; s < nsym; s++) { /* the terms of every parent, as a left or right child */
        double l = by_end(p->ol, n, nsym, i, s)[j], r = by_end(p->or_, n, nsym, j, s)[i];
        double m = l > r ? l : r;
        if (m > cell[s])
            cell[s] = m;
    }
    for (int C = 0; C < nsym; C++) { /* in place, in symbol order */
        if (in[C] == -INFINITY)
            continue;
        double best = cell[C];
        for (int u = p->un_cfirst[C]; u < p->un_cfirst[C + 1]; u++) {
            double os = cell[p->un_c[u].parent];
            if (os == -INFINITY)
                continue;
            double tot = os + p->un_c[u].score;
            if (tot > best)
                best = tot;
        }
        if (best > cell[C])
            cell[C] = best;
    }
    for (int P = 0; j - i > 1 && P < nsym; P++) {
        double os = cell[P];
        if (!g->phrasal[P] || os == -INFINITY)
            continue;
        for (int b = p->bin_first[P]; b < p->bin_first[P + 1]; b++) {
            const prune_rule1 *r = &p->bin[b];
            const double *restrict ls = by_end(p->ia, n, nsym, i, r->left);
            const double *restrict rs = by_end(p->ib, n, nsym, j, r->right);
            double *restrict lo = by_end(p->ol, n, nsym, i, r->left);
            double *restrict ro = by_end(p->or_, n, nsym, j, r->right);
            double w = r->score;
            for (int k = i + 1; k < j; k++) { /* both children must have a score */
                int both = ls[k] != -INFINITY && rs[k] != -INFINITY;
                double tl = both ? w + rs[k] + os : -INFINITY;
                double tr = both ? w + ls[k] + os : -INFINITY;
                lo[k] = tl > lo[k] ? tl : lo[k];
                ro[k] = tr > ro[k] ? tr : ro[k];
            }
        }
    }
}

cky_status prune_xbar_passes(prune_plan *p, char *const *words, int n, int *parsed)
{
    const grammar *g = p->cascade->level[0];
    size_t m = chart_ncells(n) * (size_t)g->nsym, by = ((size_t)n + 1) * g->nsym * (n + 1);
    for (size_t x = 0; x < m; x++)
        p->vi[x] = p->vo[x] = -INFINITY;
    for (size_t x = 0; x < by; x++)
        p->ol[x] = p->or_[x] = -INFINITY;
    for (int i = 0; i < n; i++) {
        cky_status st = grammar_score_word(g, words[i], i, p->lex);
        if (st)
            return st;
        double *cell = cell_of(p->vi, n, i, i + 1, g->nsym);
        for (int t = 0; t < g->nsym; t++)
            if (!g->phrasal[t])
                cell[t] = p->lex[g->sub_offset[t]];
    }
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++)
            xbar_inside_cell(p, g, n, i, i + d);
    *parsed = cell_of(p->vi, n, 0, n, g->nsym)[0] != -INFINITY;
    if (!*parsed)
        return CKY_OK;
    cell_of(p->vo, n, 0, n, g->nsym)[0] = 0.0;
    for (int d = n; d >= 1; d--)
        for (int i = 0; i + d <= n; i++)
            xbar_outside_cell(p, g, n, i, i + d);
    return CKY_OK;
}

void prune_xbar_prune(prune_plan *p, int n, double threshold)
{
    const grammar *g = p->cascade->level[0];
    double root = cell_of(p->vi, n, 0, n, g->nsym)[0];
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            size_t at = chart_cell(n, i, i + d) * (size_t)g->nsym;
            for (int s = 0; s < g->nsym; s++) {
                if (d > 1 && !g->phrasal[s])
                    continue;
                if (s == 0) {
                    p->state[at] = 1;
                    continue;
                }
                double is = p->vi[at + s], os = p->vo[at + s];
                p->state[at + s] =
                    is != -INFINITY && os != -INFINITY && is + os - root > threshold;
            }
        }
}
