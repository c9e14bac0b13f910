/* ref: the exact CPU reference parser (see ref.h). */
#include "ref.h"

#include <math.h>
#include <stdlib.h>

/* The allowed flags of cell (i, j): symbols and substates (NULL for no mask). */
static const unsigned char *mask_state(const chart_mask *m, int i, int j)
{
    return m ? m->state + chart_cell(m->n, i, j) * (size_t)m->nsym : NULL;
}

static const unsigned char *mask_sub(const chart_mask *m, int i, int j)
{
    return m ? m->sub + chart_cell(m->n, i, j) * (size_t)m->nsub : NULL;
}

static cky_status fill_lexical(const grammar *g, chart *c, char *const *words,
                               const chart_mask *m)
{
    for (int i = 0; i < c->n; i++) {
        double *pre = chart_pre(c, i, i + 1);
        cky_status st = grammar_score_word(g, words[i], i, pre);
        if (st)
            return st;
        const unsigned char *state = mask_state(m, i, i + 1), *sub = mask_sub(m, i, i + 1);
        for (int t = 0; state && t < g->nsym; t++)
            for (int x = g->sub_offset[t]; x < g->sub_offset[t] + g->nsub[t]; x++)
                if (!state[t] || !sub[x])
                    pre[x] = -INFINITY;
        for (int s = 0; s < c->nsub; s++)
            pre[s] = chart_round(c->mode, pre[s]);
    }
    return CKY_OK;
}

cky_status ref_fill_lexical(const grammar *g, chart *c, char *const *words)
{
    return fill_lexical(g, c, words, NULL);
}

static void close_unary(const grammar *g, chart *c, int i, int j, const chart_mask *m)
{
    const double *pre = chart_pre(c, i, j);
    const unsigned char *state = mask_state(m, i, j), *sub = mask_sub(m, i, j);
    double *post = chart_post(c, i, j);
    for (int s = 0; s < c->nsub; s++)
        post[s] = pre[s];
    for (int u = 0; u < g->nunary; u++) {
        const grammar_unary *r = &g->unary[u];
        if (state && (!state[r->parent] || !state[r->child])) /* (no score to pass on) */
            continue;
        int np = g->nsub[r->parent], nc = g->nsub[r->child];
        const double *child = pre + g->sub_offset[r->child];
        const unsigned char *psub = sub ? sub + g->sub_offset[r->parent] : NULL;
        double *parent = post + g->sub_offset[r->parent];
        for (int ci = 0; ci < nc; ci++) {
            if (child[ci] == -INFINITY)
                continue;
            const double *w = r->score + (size_t)ci * np;
            for (int p = 0; p < np; p++) {
                if (psub && !psub[p])
                    continue;
                double v = chart_unary(c->mode, w[p], child[ci]);
                if (v > parent[p])
                    parent[p] = v;
            }
        }
    }
}

void ref_close_unary(const grammar *g, chart *c, int i, int j) { close_unary(g, c, i, j, NULL); }

static void fill_binary(const grammar *g, chart *c, int i, int j, const chart_mask *m)
{
    double *pre = chart_pre(c, i, j);
    const unsigned char *state = mask_state(m, i, j), *sub = mask_sub(m, i, j);
    for (int P = 0; P < g->nsym; P++) {
        if (state && !state[P]) /* (the mask gives it no score) */
            continue;
        int np = g->nsub[P];
        double *parent = pre + g->sub_offset[P];
        const unsigned char *psub = sub ? sub + g->sub_offset[P] : NULL;
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            for (int k = i + 1; k < j; k++) {
                if (m && (!mask_state(m, i, k)[r->left] || !mask_state(m, k, j)[r->right]))
                    continue; /* a child the mask leaves out has no score */
                const double *left = chart_post(c, i, k) + g->sub_offset[r->left];
                const double *right = chart_post(c, k, j) + g->sub_offset[r->right];
                for (int row = 0; row < r->nrow; row++) {
                    double lv = left[r->row_l[row]], rv = right[r->row_r[row]];
                    if (lv == -INFINITY || rv == -INFINITY)
                        continue;
                    const double *w = r->score + (size_t)row * np;
                    for (int p = 0; p < np; p++) {
                        if (psub && !psub[p])
                            continue;
                        double v = chart_binary(c->mode, w[p], lv, rv);
                        if (v > parent[p])
                            parent[p] = v;
                    }
                }
            }
        }
    }
}

void ref_fill_binary(const grammar *g, chart *c, int i, int j) { fill_binary(g, c, i, j, NULL); }

cky_status ref_parse_masked(const grammar *g, char *const *words, int n, chart_mode mode,
                            const chart_mask *mask, chart **out)
{
    if (mask && (mask->n != n || mask->nsym != g->nsym || mask->nsub != g->nsub_total))
        return cky_fail(CKY_ERR_ARG, "ref: a mask of %d words, %d symbols, %d substates for "
                        "%d words of a grammar of %d symbols, %d substates", mask->n,
                        mask->nsym, mask->nsub, n, g->nsym, g->nsub_total);
    chart *c;
    cky_status st = chart_new(n, g->nsub_total, mode, &c);
    if (st)
        return st;
    if ((st = fill_lexical(g, c, words, mask))) {
        chart_free(c);
        return st;
    }
    for (int d = 1; d <= n; d++) {
        for (int i = 0; i + d <= n; i++) {
            if (d >= 2)
                fill_binary(g, c, i, i + d, mask);
            close_unary(g, c, i, i + d, mask);
        }
    }
    *out = c;
    return CKY_OK;
}

cky_status ref_parse(const grammar *g, char *const *words, int n, chart_mode mode, chart **out)
{
    return ref_parse_masked(g, words, n, mode, NULL, out);
}
