/* ref: the exact CPU reference parser (see ref.h). */
#include "ref.h"

#include <math.h>
#include <stdlib.h>

cky_status ref_fill_lexical(const grammar *g, chart *c, char *const *words)
{
    for (int i = 0; i < c->n; i++) {
        double *pre = chart_pre(c, i, i + 1);
        cky_status st = grammar_score_word(g, words[i], i, pre);
        if (st)
            return st;
        for (int s = 0; s < c->nsub; s++)
            pre[s] = chart_round(c->mode, pre[s]);
    }
    return CKY_OK;
}

void ref_close_unary(const grammar *g, chart *c, int i, int j)
{
    const double *pre = chart_pre(c, i, j);
    double *post = chart_post(c, i, j);
    for (int s = 0; s < c->nsub; s++)
        post[s] = pre[s];
    for (int u = 0; u < g->nunary; u++) {
        const grammar_unary *r = &g->unary[u];
        int np = g->nsub[r->parent], nc = g->nsub[r->child];
        const double *child = pre + g->sub_offset[r->child];
        double *parent = post + g->sub_offset[r->parent];
        for (int ci = 0; ci < nc; ci++) {
            if (child[ci] == -INFINITY)
                continue;
            const double *w = r->score + (size_t)ci * np;
            for (int p = 0; p < np; p++) {
                double v = chart_unary(c->mode, w[p], child[ci]);
                if (v > parent[p])
                    parent[p] = v;
            }
        }
    }
}

void ref_fill_binary(const grammar *g, chart *c, int i, int j)
{
    double *pre = chart_pre(c, i, j);
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        int np = g->nsub[r->parent];
        double *parent = pre + g->sub_offset[r->parent];
        for (int k = i + 1; k < j; k++) {
            const double *left = chart_post(c, i, k) + g->sub_offset[r->left];
            const double *right = chart_post(c, k, j) + g->sub_offset[r->right];
            for (int row = 0; row < r->nrow; row++) {
                double lv = left[r->row_l[row]], rv = right[r->row_r[row]];
                if (lv == -INFINITY || rv == -INFINITY)
                    continue;
                const double *w = r->score + (size_t)row * np;
                for (int p = 0; p < np; p++) {
                    double v = chart_binary(c->mode, w[p], lv, rv);
                    if (v > parent[p])
                        parent[p] = v;
                }
            }
        }
    }
}

cky_status ref_parse(const grammar *g, char *const *words, int n, chart_mode mode, chart **out)
{
    chart *c;
    cky_status st = chart_new(n, g->nsub_total, mode, &c);
    if (st)
        return st;
    if ((st = ref_fill_lexical(g, c, words))) {
        chart_free(c);
        return st;
    }
    for (int d = 1; d <= n; d++) {
        for (int i = 0; i + d <= n; i++) {
            if (d >= 2)
                ref_fill_binary(g, c, i, i + d);
            ref_close_unary(g, c, i, i + d);
        }
    }
    *out = c;
    return CKY_OK;
}
