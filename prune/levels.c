/* levels: the passes of cascade levels >= 1, one score per (cell, substate), over the items
 * the previous levels allowed (p->state, p->sub): the jar's initializeChart,
 * doConstrainedInsideScores and doConstrainedOutsideScores with viterbi = true and
 * logScores = true, and pruneChart at levels >= 1.
 *
 * As the jar restricts them: a binary or unary term needs its parent symbol and substate
 * allowed and its child symbols allowed (a child substate the mask drops has no score, so
 * it adds nothing); an outside unary term needs the child substate allowed. Binary terms are
 * (rule + left) + right inside and (rule + sibling) + outside outside; unary terms
 * child + rule and outside + rule, all from the values the cell had before its unaries. */
#include <math.h>
#include <string.h>

#include "internal.h"

typedef struct level_view {
    const grammar *g;
    int n;
    size_t tot; /* the level's global substates */
} level_view;

static double *in_at(const prune_plan *p, const level_view *v, int i, int j)
{
    return p->in + chart_cell(v->n, i, j) * v->tot;
}

static double *out_at(const prune_plan *p, const level_view *v, int i, int j)
{
    return p->out + chart_cell(v->n, i, j) * v->tot;
}

static const unsigned char *state_at(const prune_plan *p, const level_view *v, int i, int j)
{
    return p->state + chart_cell(v->n, i, j) * (size_t)v->g->nsym;
}

static const unsigned char *sub_at(const prune_plan *p, const level_view *v, int i, int j)
{
    return p->sub + chart_cell(v->n, i, j) * v->tot;
}

static void inside_binary(prune_plan *p, const level_view *v, int i, int j)
{
    const grammar *g = v->g;
    const unsigned char *allowed = state_at(p, v, i, j), *sub = sub_at(p, v, i, j);
    double *cell = in_at(p, v, i, j);
    for (int P = 0; P < g->nsym; P++) {
        if (!allowed[P])
            continue;
        int np = g->nsub[P], changed = 0;
        const unsigned char *psub = sub + g->sub_offset[P];
        double *acc = p->acc;
        for (int x = 0; x < np; x++)
            acc[x] = -INFINITY;
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            for (int k = i + 1; k < j; k++) {
                if (!state_at(p, v, i, k)[r->left] || !state_at(p, v, k, j)[r->right])
                    continue;
                const double *left = in_at(p, v, i, k) + g->sub_offset[r->left];
                const double *right = in_at(p, v, k, j) + g->sub_offset[r->right];
                for (int row = 0; row < r->nrow; row++) {
                    double ls = left[r->row_l[row]], rs = right[r->row_r[row]];
                    if (ls == -INFINITY || rs == -INFINITY)
                        continue;
                    const double *w = r->score + (size_t)row * np;
                    for (int x = 0; x < np; x++) {
                        if (!psub[x] || w[x] == -INFINITY)
                            continue;
                        double t = w[x] + ls + rs;
                        if (t > acc[x])
                            acc[x] = t;
                        changed = 1;
                    }
                }
            }
        }
        for (int x = 0; changed && x < np; x++)
            if (acc[x] > -INFINITY)
                cell[g->sub_offset[P] + x] = acc[x];
    }
}

static void inside_unary(prune_plan *p, const level_view *v, int i, int j)
{
    const grammar *g = v->g;
    const unsigned char *allowed = state_at(p, v, i, j), *sub = sub_at(p, v, i, j);
    double *cell = in_at(p, v, i, j), *after = p->after;
    for (size_t x = 0; x < v->tot; x++)
        after[x] = -INFINITY;
    for (int P = 0; P < g->nsym; P++) {
        if (!allowed[P])
            continue;
        int np = g->nsub[P];
        const unsigned char *psub = sub + g->sub_offset[P];
        double *pa = after + g->sub_offset[P];
        for (int u = g->unary_first[P]; u < g->unary_first[P + 1]; u++) {
            const grammar_unary *r = &g->unary[u];
            if (!allowed[r->child])
                continue;
            const double *child = cell + g->sub_offset[r->child];
            for (int c = 0; c < g->nsub[r->child]; c++) {
                if (child[c] == -INFINITY)
                    continue;
                const double *w = r->score + (size_t)c * np;
                for (int x = 0; x < np; x++) {
                    if (!psub[x] || w[x] == -INFINITY)
                        continue;
                    double t = child[c] + w[x];
                    if (t > pa[x])
                        pa[x] = t;
                }
            }
        }
    }
    for (size_t x = 0; x < v->tot; x++)
        if (after[x] > cell[x])
            cell[x] = after[x];
}

static void outside_unary(prune_plan *p, int k, const level_view *v, int i, int j)
{
    const grammar *g = v->g;
    const unsigned char *allowed = state_at(p, v, i, j), *sub = sub_at(p, v, i, j);
    const int *order = p->un_by_child[k], *first = p->un_cfirst_k[k];
    double *cell = out_at(p, v, i, j), *after = p->after;
    for (size_t x = 0; x < v->tot; x++)
        after[x] = -INFINITY;
    for (int C = 0; C < g->nsym; C++) {
        if ((j - i > 1 && !g->phrasal[C]) || !allowed[C])
            continue;
        int nc = g->nsub[C];
        const unsigned char *csub = sub + g->sub_offset[C];
        double *ca = after + g->sub_offset[C];
        for (int x = first[C]; x < first[C + 1]; x++) {
            const grammar_unary *r = &g->unary[order[x]];
            int P = r->parent, np = g->nsub[P];
            if (!allowed[P])
                continue;
            const double *po = cell + g->sub_offset[P];
            for (int c = 0; c < nc; c++) {
                if (!csub[c])
                    continue;
                const double *w = r->score + (size_t)c * np;
                for (int q = 0; q < np; q++) {
                    if (w[q] == -INFINITY || po[q] == -INFINITY)
                        continue;
                    double t = po[q] + w[q];
                    if (t > ca[c])
                        ca[c] = t;
                }
            }
        }
    }
    for (size_t x = 0; x < v->tot; x++)
        if (after[x] > cell[x])
            cell[x] = after[x];
}

static void outside_binary(prune_plan *p, const level_view *v, int i, int j)
{
    const grammar *g = v->g;
    const unsigned char *allowed = state_at(p, v, i, j);
    const double *cell = out_at(p, v, i, j);
    for (int P = 0; P < g->nsym; P++) {
        if (!allowed[P])
            continue;
        int np = g->nsub[P];
        const double *po = cell + g->sub_offset[P];
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            int nl = g->nsub[r->left], nr = g->nsub[r->right];
            for (int k = i + 1; k < j; k++) {
                if (!state_at(p, v, i, k)[r->left] || !state_at(p, v, k, j)[r->right])
                    continue;
                const double *left = in_at(p, v, i, k) + g->sub_offset[r->left];
                const double *right = in_at(p, v, k, j) + g->sub_offset[r->right];
                double *accl = p->acc, *accr = p->acc2;
                int changed = 0;
                for (int x = 0; x < nl; x++)
                    accl[x] = -INFINITY;
                for (int x = 0; x < nr; x++)
                    accr[x] = -INFINITY;
                for (int row = 0; row < r->nrow; row++) {
                    int l = r->row_l[row], rr = r->row_r[row];
                    double ls = left[l], rs = right[rr];
                    if (ls == -INFINITY || rs == -INFINITY)
                        continue;
                    const double *w = r->score + (size_t)row * np;
                    for (int x = 0; x < np; x++) {
                        if (w[x] == -INFINITY || po[x] == -INFINITY)
                            continue;
                        double tl = w[x] + rs + po[x], tr = w[x] + ls + po[x];
                        if (tl > accl[l])
                            accl[l] = tl;
                        if (tr > accr[rr])
                            accr[rr] = tr;
                        changed = 1;
                    }
                }
                if (!changed)
                    continue;
                double *lo = out_at(p, v, i, k) + g->sub_offset[r->left];
                double *ro = out_at(p, v, k, j) + g->sub_offset[r->right];
                for (int x = 0; x < nl; x++)
                    if (accl[x] > lo[x])
                        lo[x] = accl[x];
                for (int x = 0; x < nr; x++)
                    if (accr[x] > ro[x])
                        ro[x] = accr[x];
            }
        }
    }
}

cky_status prune_level_passes(prune_plan *p, int k, char *const *words, int n, int *parsed)
{
    const grammar *g = p->cascade->level[k];
    level_view v = {g, n, (size_t)g->nsub_total};
    size_t m = chart_ncells(n) * v.tot;
    for (size_t x = 0; x < m; x++)
        p->in[x] = p->out[x] = -INFINITY;
    for (int i = 0; i < n; i++) {
        const unsigned char *allowed = state_at(p, &v, i, i + 1), *sub = sub_at(p, &v, i, i + 1);
        double *cell = in_at(p, &v, i, i + 1);
        cky_status st = grammar_score_word(g, words[i], i, p->lex);
        if (st)
            return st;
        for (int t = 0; t < g->nsym; t++)
            if (!g->phrasal[t] && allowed[t])
                for (int x = g->sub_offset[t]; x < g->sub_offset[t] + g->nsub[t]; x++)
                    if (sub[x])
                        cell[x] = p->lex[x];
    }
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            if (d > 1)
                inside_binary(p, &v, i, i + d);
            inside_unary(p, &v, i, i + d);
        }
    *parsed = in_at(p, &v, 0, n)[0] != -INFINITY;
    if (!*parsed)
        return CKY_OK;
    out_at(p, &v, 0, n)[0] = 0.0;
    for (int d = n; d >= 1; d--)
        for (int i = 0; i + d <= n; i++) {
            outside_unary(p, k, &v, i, i + d);
            if (d > 1)
                outside_binary(p, &v, i, i + d);
        }
    return CKY_OK;
}

void prune_level_prune(prune_plan *p, int k, int n, double threshold)
{
    const grammar *g = p->cascade->level[k];
    level_view v = {g, n, (size_t)g->nsub_total};
    double root = in_at(p, &v, 0, n)[0];
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            unsigned char *allowed = p->state + chart_cell(n, i, i + d) * (size_t)g->nsym;
            unsigned char *sub = p->sub + chart_cell(n, i, i + d) * v.tot;
            const double *in = in_at(p, &v, i, i + d), *out = out_at(p, &v, i, i + d);
            for (int s = 0; s < g->nsym; s++) {
                if (d > 1 && !g->phrasal[s])
                    continue;
                if (s == 0) {
                    allowed[s] = 1;
                    continue;
                }
                if (!allowed[s])
                    continue;
                int any = 0;
                for (int x = g->sub_offset[s]; x < g->sub_offset[s] + g->nsub[s]; x++) {
                    if (!sub[x])
                        continue;
                    sub[x] = in[x] != -INFINITY && out[x] != -INFINITY &&
                             in[x] + out[x] - root > threshold;
                    any |= sub[x];
                }
                if (!any)
                    allowed[s] = 0;
            }
        }
}
