/* cpu_sum: the sum-product inside pass of the cpu engine (see cpu_sum.h). */
#include "cpu_sum.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/lexicon_berkeley.h"
#include "../maxrule/maxrule.h"
#include "cpu_internal.h"
#include "engine.h"
#include "plan.h"

/* The batch being filled: charts, room for one segment's items, and every item's parent
 * vector and exponent of the current span (per family). */
typedef struct sum_batch {
    cpu_engine *e;
    const codegen_program *prog;
    sum_chart **ch;
    int *left, *right, *parent, *sent; /* items of one segment */
    float *item[CODEGEN_NFAMILY];      /* [item][nX]: the kernels' parent vector of each item */
    int *iexp[CODEGEN_NFAMILY];        /* [item]: its exponent */
    int ran[CODEGEN_NFAMILY];          /* family f has rules (its items are filled) */
    float *tmp;                        /* [nsub]: unary terms */
} sum_batch;

void sum_chart_free(sum_chart *c)
{
    if (!c)
        return;
    free(c->pre);
    free(c->post);
    free(c->epre);
    free(c->epost);
    free(c->opre);
    free(c->opost);
    free(c->eopre);
    free(c->eopost);
    free(c);
}

static cky_status sum_chart_new(int n, int nsub, sum_chart **out)
{
    sum_chart *c = calloc(1, sizeof *c);
    size_t cells = chart_ncells(n);
    if (c) {
        c->n = n;
        c->nsub = nsub;
        c->pre = calloc(cells * (size_t)nsub, sizeof *c->pre);
        c->post = calloc(cells * (size_t)nsub, sizeof *c->post);
        c->epre = calloc(cells, sizeof *c->epre);
        c->epost = calloc(cells, sizeof *c->epost);
    }
    if (!c || !c->pre || !c->post || !c->epre || !c->epost) {
        sum_chart_free(c);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for a chart of %d words", n);
    }
    *out = c;
    return CKY_OK;
}

double sum_chart_loglik(const sum_chart *c)
{
    size_t root = chart_cell(c->n, 0, c->n);
    float v = c->post[root * c->nsub]; /* ROOT is symbol 0, its one substate global id 0 */
    return v > 0 ? log((double)v) + c->epost[root] * M_LN2 : -INFINITY;
}

int cpu_sum_normalize(float *v, int n)
{
    float m = 0;
    for (int x = 0; x < n; x++)
        m = v[x] > m ? v[x] : m;
    if (m <= 0)
        return 0;
    int k;
    frexpf(m, &k);
    for (int x = 0; x < n; x++)
        v[x] = ldexpf(v[x], -k);
    return k;
}

/* The lexical layer of sentence s: pre = the linear scores, scaled into float. */
static cky_status fill_lexical(const grammar *g, sum_chart *c, char *const *words, double *buf)
{
    for (int i = 0; i < c->n; i++) {
        cky_status st = lexicon_berkeley_score_linear(g, words[i], i, 1, buf);
        if (st)
            return st;
        size_t cell = chart_cell(c->n, i, i + 1);
        double m = 0;
        for (int x = 0; x < c->nsub; x++)
            m = buf[x] > m ? buf[x] : m;
        int k = 0;
        if (m > 0)
            frexp(m, &k);
        for (int x = 0; x < c->nsub; x++)
            c->pre[cell * c->nsub + x] = (float)ldexp(buf[x], -k);
        c->epre[cell] = k;
    }
    return CKY_OK;
}

/* The binary step (engine.h): each item's children into the workspaces, the sum-product
 * kernels, each item's parent vector and exponent kept for the reduce of the unary step. */
static cky_status sum_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    (void)pass;
    (void)sr;
    sum_batch *b = ctx;
    cpu_engine *e = b->e;
    b->ran[f] = b->prog->part[f].nrule > 0;
    if (!b->ran[f])
        return CKY_OK;
    const codegen_classes *cls = &b->prog->classes;
    int nx = cls->n[CODEGEN_X];
    const int *gl = cls->global[codegen_family_left(f)], *gr = cls->global[codegen_family_right(f)];
    int nl = cls->n[codegen_family_left(f)], nr = cls->n[codegen_family_right(f)];
    int nitem = (int)p->bin[d * CODEGEN_NFAMILY + f].count;
    plan_fill_items(p, d, f, b->left, b->right, b->parent, b->sent);
    for (int first = 0; first < nitem; first += e->width) {
        int n = nitem - first < e->width ? nitem - first : e->width;
        memset(e->parent, 0, (size_t)nx * e->width * sizeof *e->parent);
        for (int t = 0; t < n; t++) {
            const sum_chart *c = b->ch[b->sent[first + t]];
            size_t lc = (size_t)(b->left[first + t] - p->cell0[b->sent[first + t]]);
            size_t rc = (size_t)(b->right[first + t] - p->cell0[b->sent[first + t]]);
            const float *lv = c->post + lc * c->nsub, *rv = c->post + rc * c->nsub;
            for (int x = 0; x < nl; x++)
                e->left[(size_t)x * e->width + t] = lv[gl[x]];
            for (int x = 0; x < nr; x++)
                e->right[(size_t)x * e->width + t] = rv[gr[x]];
            b->iexp[f][first + t] = c->epost[lc] + c->epost[rc];
        }
        cky_status st = cpu_run_family(e, b->prog, f, n);
        if (st)
            return st;
        for (int t = 0; t < n; t++)
            for (int x = 0; x < nx; x++)
                b->item[f][(size_t)(first + t) * nx + x] = e->parent[(size_t)x * e->width + t];
    }
    return CKY_OK;
}

/* The pre layer of the o-th cell of span d (plan_fill_cells order): its items, of every
 * family in order, brought to the cell's exponent and summed in that order. */
static void reduce_cell(const sum_batch *b, int d, long o, float *pre, int *epre)
{
    const codegen_classes *cls = &b->prog->classes;
    int nx = cls->n[CODEGEN_X], top = INT_MIN;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        long per = plan_cell_items((codegen_family_id)f, d);
        for (long s = 0; b->ran[f] && s < per; s++) {
            const float *v = b->item[f] + (size_t)(o * per + s) * nx;
            float m = 0;
            for (int x = 0; x < nx; x++)
                m = v[x] > m ? v[x] : m;
            int k;
            frexpf(m, &k);
            if (m > 0 && b->iexp[f][o * per + s] + k > top)
                top = b->iexp[f][o * per + s] + k;
        }
    }
    *epre = top == INT_MIN ? 0 : top;
    for (int f = 0; top != INT_MIN && f < CODEGEN_NFAMILY; f++) {
        long per = plan_cell_items((codegen_family_id)f, d);
        for (long s = 0; b->ran[f] && s < per; s++) {
            const float *v = b->item[f] + (size_t)(o * per + s) * nx;
            int shift = b->iexp[f][o * per + s] - top;
            for (int x = 0; x < nx; x++)
                if (v[x] > 0)
                    pre[cls->global[CODEGEN_X][x]] += ldexpf(v[x], shift);
        }
    }
}

/* post = pre + the sum closure over pre (see cpu_sum.h), then normalized. */
static void close_unary(const grammar *g, float *tmp, int span, const float *pre, int epre,
                        float *post, int *epost)
{
    const grammar_sum_closure *sc = g->sum;
    memset(tmp, 0, (size_t)g->nsub_total * sizeof *tmp);
    for (int P = 0; P < g->nsym; P++) {
        if (span > 1 && !g->phrasal[P])
            continue;
        int np = g->nsub[P];
        float *acc = tmp + g->sub_offset[P];
        for (int k = sc->first[P]; k < sc->first[P + 1]; k++) {
            const grammar_sum_unary *u = &sc->rule[k];
            const float *child = pre + g->sub_offset[u->child];
            for (int c = 0; c < g->nsub[u->child]; c++) {
                if (child[c] == 0)
                    continue;
                const double *w = u->prob + (size_t)c * np;
                for (int x = 0; x < np; x++)
                    if (w[x] != 0)
                        acc[x] = fmaf((float)w[x], child[c], acc[x]);
            }
        }
    }
    for (int x = 0; x < g->nsub_total; x++)
        post[x] = pre[x] + tmp[x];
    *epost = epre + cpu_sum_normalize(post, g->nsub_total);
}

/* The unary step (engine.h): the reduce of each cell of span d (d >= 2), then its unaries. */
static cky_status sum_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    (void)pass;
    (void)sr;
    sum_batch *b = ctx;
    long o = 0;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i + d <= p->len[k]; i++, o++) {
            sum_chart *c = b->ch[k];
            size_t cell = chart_cell(c->n, i, i + d);
            float *pre = c->pre + cell * c->nsub;
            if (d >= 2)
                reduce_cell(b, d, o, pre, &c->epre[cell]);
            close_unary(b->e->g, b->tmp, d, pre, c->epre[cell], c->post + cell * c->nsub,
                        &c->epost[cell]);
        }
    return CKY_OK;
}

static const engine_ops sum_ops = {sum_binary, sum_unary, NULL};

/* Room for the items of the largest segment and every family's items of the largest span. */
static cky_status batch_alloc(sum_batch *b, const plan *p, int nx)
{
    long most = 1, fam[CODEGEN_NFAMILY] = {1, 1, 1, 1};
    for (int d = 2; d <= p->maxn; d++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            long c = p->bin[d * CODEGEN_NFAMILY + f].count;
            most = c > most ? c : most;
            fam[f] = c > fam[f] ? c : fam[f];
        }
    b->left = malloc((size_t)most * 4 * sizeof *b->left);
    int ok = b->left != NULL;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        b->item[f] = malloc((size_t)fam[f] * nx * sizeof *b->item[f]);
        b->iexp[f] = malloc((size_t)fam[f] * sizeof *b->iexp[f]);
        ok = ok && b->item[f] && b->iexp[f];
    }
    b->tmp = malloc((size_t)b->e->g->nsub_total * sizeof *b->tmp);
    if (!ok || !b->tmp)
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the work items of a batch");
    b->right = b->left + most;
    b->parent = b->left + 2 * most;
    b->sent = b->left + 3 * most;
    return CKY_OK;
}

static void batch_release(sum_batch *b)
{
    free(b->left);
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        free(b->item[f]);
        free(b->iexp[f]);
    }
    free(b->tmp);
}

cky_status cpu_engine_inside_sum(cpu_engine *e, const sentence *s, int n, sum_chart **out)
{
    sum_chart **ch = calloc((size_t)(n ? n : 1), sizeof *ch);
    int *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    double *buf = malloc((size_t)e->g->nsub_total * sizeof *buf);
    plan p = {0};
    sum_batch b = {.e = e, .ch = ch};
    cky_status st = !ch || !len || !buf ? cky_fail(CKY_ERR_NOMEM, "out of memory") : CKY_OK;
    if (!st)
        st = maxrule_check_grammar(e->g);
    if (!st)
        st = cpu_program(e, CODEGEN_SEMIRING_SUM_PRODUCT, CODEGEN_ROLE_PARENT, &b.prog);
    for (int k = 0; k < n && !st; k++) {
        len[k] = s[k].n;
        st = sum_chart_new(s[k].n, e->g->nsub_total, &ch[k]);
        if (!st)
            st = fill_lexical(e->g, ch[k], s[k].words, buf);
    }
    if (!st)
        st = plan_new(len, n, &p);
    if (!st)
        st = batch_alloc(&b, &p, b.prog->classes.n[CODEGEN_X]);
    if (!st)
        st = engine_run_pass(&sum_ops, &b, &p, ENGINE_PASS_INSIDE,
                             CODEGEN_SEMIRING_SUM_PRODUCT);
    batch_release(&b);
    plan_free(&p);
    free(len);
    free(buf);
    if (st) {
        for (int k = 0; k < n && ch; k++)
            sum_chart_free(ch[k]);
    } else {
        memcpy(out, ch, (size_t)n * sizeof *ch);
    }
    free(ch);
    return st;
}
