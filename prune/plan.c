/* plan: what the coarse passes need from the cascade of a grammar, prepared once (the
 * level-0 rules as scalars, the unaries of every level by child), and the work space of
 * one sentence, grown to the longest sentence seen. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The jar's threshold arrays have entries for levels up to 6 (index level + 1). */
#define PRUNE_LEVELS_COVERED 7

void prune_free_plan(prune_plan *p)
{
    if (!p)
        return;
    free(p->bin);
    free(p->un_p);
    free(p->un_c);
    free(p->bin_first);
    free(p->un_pfirst);
    free(p->un_cfirst);
    for (int k = 0; p->cascade && k < p->cascade->nlevel; k++) {
        if (p->un_by_child)
            free(p->un_by_child[k]);
        if (p->un_cfirst_k)
            free(p->un_cfirst_k[k]);
    }
    free(p->un_by_child);
    free(p->un_cfirst_k);
    free(p->vi);
    free(p->vo);
    free(p->ia);
    free(p->ib);
    free(p->ol);
    free(p->or_);
    free(p->in);
    free(p->out);
    free(p->state);
    free(p->sub);
    free(p->sub2);
    free(p->acc);
    free(p->acc2);
    free(p->after);
    free(p->lex);
    free(p);
}

/* Stable counting sort of n items by key[i] in [0, nkey): order[] and first[nkey + 1]. */
static cky_status sort_by_key(const int *key, int n, int nkey, int **order, int **first)
{
    *order = malloc((size_t)(n ? n : 1) * sizeof **order);
    *first = calloc((size_t)nkey + 1, sizeof **first);
    int *fill = malloc((size_t)(nkey ? nkey : 1) * sizeof *fill);
    if (!*order || !*first || !fill) {
        free(fill);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        (*first)[key[i] + 1]++;
    for (int s = 0; s < nkey; s++)
        (*first)[s + 1] += (*first)[s];
    memcpy(fill, *first, (size_t)nkey * sizeof *fill);
    for (int i = 0; i < n; i++)
        (*order)[fill[key[i]]++] = i;
    free(fill);
    return CKY_OK;
}

/* Level 0's rules as scalars: a binary rule's (0, 0) row, a unary's one value. */
static cky_status plan_xbar(prune_plan *p, const grammar *g)
{
    int nb = 0, nu = 0;
    p->bin = malloc((size_t)(g->nbinary ? g->nbinary : 1) * sizeof *p->bin);
    p->un_p = malloc((size_t)(g->nunary ? g->nunary : 1) * sizeof *p->un_p);
    p->un_c = malloc((size_t)(g->nunary ? g->nunary : 1) * sizeof *p->un_c);
    p->bin_first = calloc((size_t)g->nsym + 1, sizeof *p->bin_first);
    p->un_pfirst = calloc((size_t)g->nsym + 1, sizeof *p->un_pfirst);
    int *child = calloc((size_t)(g->nunary ? g->nunary : 1), sizeof *child), *order = NULL;
    if (!p->bin || !p->un_p || !p->un_c || !p->bin_first || !p->un_pfirst || !child) {
        free(child);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < g->nsym; s++) {
        for (int b = g->binary_first[s]; b < g->binary_first[s + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            if (r->nrow > 0 && r->row_l[0] == 0 && r->row_r[0] == 0 && r->score[0] != -INFINITY)
                p->bin[nb++] = (prune_rule1){s, r->left, r->right, r->score[0]};
        }
        p->bin_first[s + 1] = nb;
        for (int u = g->unary_first[s]; u < g->unary_first[s + 1]; u++)
            if (g->unary[u].score[0] != -INFINITY) {
                child[nu] = g->unary[u].child;
                p->un_p[nu++] = (prune_rule1){s, g->unary[u].child, -1, g->unary[u].score[0]};
            }
        p->un_pfirst[s + 1] = nu;
    }
    cky_status st = sort_by_key(child, nu, g->nsym, &order, &p->un_cfirst);
    for (int i = 0; !st && i < nu; i++)
        p->un_c[i] = p->un_p[order[i]];
    free(order);
    free(child);
    return st;
}

/* The unaries of level k by child. */
static cky_status plan_level(prune_plan *p, int k, const grammar *g)
{
    int *child = malloc((size_t)(g->nunary ? g->nunary : 1) * sizeof *child);
    if (!child)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int u = 0; u < g->nunary; u++)
        child[u] = g->unary[u].child;
    cky_status st = sort_by_key(child, g->nunary, g->nsym, &p->un_by_child[k],
                                &p->un_cfirst_k[k]);
    free(child);
    return st;
}

cky_status prune_new_plan(const grammar *g, prune_plan **out)
{
    const grammar_cascade *c = g->cascade;
    if (!c)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: no coarse-to-fine cascade (a native .gr "
                        "grammar with split trees has one)", g->source);
    if (c->nlevel > PRUNE_LEVELS_COVERED)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: %d coarse levels; the Berkeley parser's "
                        "thresholds cover %d", g->source, c->nlevel, PRUNE_LEVELS_COVERED);
    prune_plan *p = calloc(1, sizeof *p);
    if (!p)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    p->fine = g;
    p->cascade = c;
    p->un_by_child = calloc((size_t)c->nlevel, sizeof *p->un_by_child);
    p->un_cfirst_k = calloc((size_t)c->nlevel, sizeof *p->un_cfirst_k);
    cky_status st = !p->un_by_child || !p->un_cfirst_k ? cky_fail(CKY_ERR_NOMEM, "out of memory")
                                                       : plan_xbar(p, c->level[0]);
    for (int k = 1; !st && k < c->nlevel; k++)
        st = plan_level(p, k, c->level[k]);
    p->maxtotal = g->nsub_total;
    for (int k = 0; k <= c->nlevel; k++) {
        const grammar *lg = k < c->nlevel ? c->level[k] : g;
        if (lg->nsub_total > p->maxtotal)
            p->maxtotal = lg->nsub_total;
        for (int s = 0; s < lg->nsym; s++)
            if (lg->nsub[s] > p->maxsub)
                p->maxsub = lg->nsub[s];
    }
    if (!st) {
        p->acc = malloc((size_t)p->maxsub * sizeof *p->acc);
        p->acc2 = malloc((size_t)p->maxsub * sizeof *p->acc2);
        p->after = malloc((size_t)p->maxtotal * sizeof *p->after);
        p->lex = malloc((size_t)p->maxtotal * sizeof *p->lex);
        if (!p->acc || !p->acc2 || !p->after || !p->lex)
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    if (st) {
        prune_free_plan(p);
        return st;
    }
    *out = p;
    return CKY_OK;
}

cky_status prune_reserve(prune_plan *p, int n)
{
    if (n <= p->cap_n)
        return CKY_OK;
    size_t cells = chart_ncells(n), nsym = (size_t)p->fine->nsym, tot = (size_t)p->maxtotal;
    size_t by = ((size_t)n + 1) * nsym * ((size_t)n + 1);
    double *arr[8] = {p->vi, p->vo, p->in, p->out, p->ia, p->ib, p->ol, p->or_};
    size_t len[8] = {cells * nsym, cells * nsym, cells * tot, cells * tot, by, by, by, by};
    for (int k = 0; k < 8; k++) {
        free(arr[k]);
        arr[k] = malloc(len[k] * sizeof(double));
    }
    p->vi = arr[0], p->vo = arr[1], p->in = arr[2], p->out = arr[3];
    p->ia = arr[4], p->ib = arr[5], p->ol = arr[6], p->or_ = arr[7];
    free(p->state);
    free(p->sub);
    free(p->sub2);
    p->state = malloc(cells * nsym);
    p->sub = malloc(cells * tot);
    p->sub2 = malloc(cells * tot);
    if (!p->vi || !p->vo || !p->in || !p->out || !p->ia || !p->ib || !p->ol || !p->or_ ||
        !p->state || !p->sub || !p->sub2) {
        p->cap_n = 0;
        return cky_fail(CKY_ERR_NOMEM, "prune: out of memory for a %d-word sentence", n);
    }
    p->cap_n = n;
    return CKY_OK;
}
