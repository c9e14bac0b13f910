/* cpu_sum: the sum-product passes of the cpu engine (see cpu_sum.h): the batch both passes
 * share, and the inside pass. The arithmetic is sum_rules.h's. */
#include "cpu_sum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../chart/scale.h"
#include "cpu_internal.h"
#include "../../sched/engine.h"

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
    /* ROOT is symbol 0, its one substate global id 0 */
    return sum_rules_loglik(c->post[root * c->nsub], c->epost[root]);
}

cky_status cpu_sum_rules(cpu_engine *e, const sum_rules **out)
{
    cky_status st = e->rules ? CKY_OK : sum_rules_new(e->g, &e->rules);
    *out = e->rules;
    return st;
}

/* ---- the batch of both passes ---- */

void cpu_sum_batch_free(cpu_sum_batch *b)
{
    free(b->left);
    free(b->pull);
    plan_free(&b->p);
    memset(b, 0, sizeof *b);
}

cky_status cpu_sum_batch_new(cpu_engine *e, sum_chart *const *ch, int n, int pull,
                             cpu_sum_batch *b)
{
    memset(b, 0, sizeof *b);
    b->e = e;
    b->ch = ch;
    int *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    if (!len)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++)
        len[k] = ch[k]->n;
    cky_status st = plan_new(len, n, &b->p);
    free(len);
    if (!st) /* the inside pass too: the outside pass after it could not run */
        st = pull ? plan_add_pull(&b->p, 1) : plan_check_pull(&b->p);
    const plan *p = &b->p;
    if (!st) {
        b->left = malloc((size_t)(p->nitem ? p->nitem : 1) * 4 * sizeof *b->left);
        b->pull = pull ? malloc((size_t)(p->npull ? p->npull : 1) * sizeof *b->pull) : NULL;
        if (!b->left || (pull && !b->pull))
            st = cky_fail(CKY_ERR_NOMEM, "out of memory for the work items of a batch");
    }
    if (!st) {
        b->right = b->left + p->nitem;
        b->parent = b->left + 2 * p->nitem;
        b->sent = b->left + 3 * p->nitem;
        for (int d = 2; d <= p->maxn; d++)
            for (int f = 0; f < CODEGEN_NFAMILY; f++) {
                long m = p->bin[d * CODEGEN_NFAMILY + f].first;
                plan_fill_items(p, d, (codegen_family_id)f, b->left + m, b->right + m,
                                b->parent + m, b->sent + m);
            }
        if (pull)
            st = plan_fill_pulls(p, 1, b->pull);
    }
    if (st)
        cpu_sum_batch_free(b);
    return st;
}

/* ---- the inside pass ---- */

/* The chart cell (local numbering) of batch cell c of sentence k. */
static size_t local(const cpu_sum_batch *b, int k, int c) { return (size_t)(c - b->p.cell0[k]); }

/* Exponents of the pre layers of span d: the largest epost(left) + epost(right) over the
 * items of every family with rules. */
static void inside_exponents(cpu_sum_batch *b, int d)
{
    const plan *p = &b->p;
    for (int k = 0; k < p->n; k++) /* fill the span's cells first */
        for (int i = 0; i + d <= p->len[k]; i++)
            b->ch[k]->epre[chart_cell(p->len[k], i, i + d)] = 2 * CHART_EXP_NONE;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        plan_segment sg = p->bin[d * CODEGEN_NFAMILY + f];
        for (long t = sg.first; b->prog[0]->part[f].nrule && t < sg.first + sg.count; t++) {
            sum_chart *c = b->ch[b->sent[t]];
            int e = c->epost[local(b, b->sent[t], b->left[t])] +
                    c->epost[local(b, b->sent[t], b->right[t])];
            int *top = &c->epre[local(b, b->sent[t], b->parent[t])];
            *top = e > *top ? e : *top;
        }
    }
}

/* The binary step: the items of (d, f) through the kernels, a workspace at a time, each
 * item's parent vector added into its cell's pre layer at the cell's exponent. */
static cky_status sum_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    cpu_sum_batch *b = ctx;
    cpu_engine *e = b->e;
    if (f == 0)
        inside_exponents(b, d);
    const codegen_program *prog = b->prog[0];
    if (prog->part[f].nrule == 0)
        return CKY_OK;
    const codegen_classes *cls = &prog->classes;
    int nx = cls->n[CODEGEN_X];
    const int *gx = cls->global[CODEGEN_X];
    codegen_class lc = codegen_family_left(f), rc = codegen_family_right(f);
    plan_segment sg = p->bin[d * CODEGEN_NFAMILY + f];
    for (long first = sg.first; first < sg.first + sg.count; first += e->width) {
        int n = (int)(sg.first + sg.count - first < e->width ? sg.first + sg.count - first
                                                              : e->width);
        memset(e->parent, 0, (size_t)nx * e->width * sizeof *e->parent);
        for (int t = 0; t < n; t++) {
            int k = b->sent[first + t];
            const sum_chart *c = b->ch[k];
            const float *lv = c->post + local(b, k, b->left[first + t]) * c->nsub;
            const float *rv = c->post + local(b, k, b->right[first + t]) * c->nsub;
            for (int x = 0; x < cls->n[lc]; x++)
                e->left[(size_t)x * e->width + t] = lv[cls->global[lc][x]];
            for (int x = 0; x < cls->n[rc]; x++)
                e->right[(size_t)x * e->width + t] = rv[cls->global[rc][x]];
        }
        cky_status st = cpu_run_family(e, prog, f, n);
        if (st)
            return st;
        for (int t = 0; t < n; t++) {
            int k = b->sent[first + t];
            sum_chart *c = b->ch[k];
            size_t cell = local(b, k, b->parent[first + t]);
            int shift = c->epost[local(b, k, b->left[first + t])] +
                        c->epost[local(b, k, b->right[first + t])] - c->epre[cell];
            float *pre = c->pre + cell * c->nsub;
            for (int x = 0; x < nx; x++) {
                float v = e->parent[(size_t)x * e->width + t];
                if (v > 0)
                    pre[gx[x]] += chart_scale(v, shift);
            }
        }
    }
    return CKY_OK;
}

/* The unary step: post = pre + the closure over pre, normalized, for each cell of span d. */
static cky_status sum_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    cpu_sum_batch *b = ctx;
    const sum_unary_table *up = &b->rules->up;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i + d <= p->len[k]; i++) {
            sum_chart *c = b->ch[k];
            size_t cell = chart_cell(c->n, i, i + d);
            const float *pre = c->pre + cell * c->nsub;
            float *post = c->post + cell * c->nsub;
            for (int x = 0; x < c->nsub; x++)
                post[x] = pre[x] + sum_rules_row(up, x, pre, d);
            c->epost[cell] = sum_rules_normalize(post, c->nsub, c->epre[cell]);
        }
    return CKY_OK;
}

static const engine_ops sum_ops = {sum_binary, sum_unary, NULL};

cky_status cpu_engine_inside_sum(cpu_engine *e, const sentence *s, int n, sum_chart **out)
{
    sum_chart **ch = calloc((size_t)(n ? n : 1), sizeof *ch);
    double *buf = malloc((size_t)e->g->nsub_total * sizeof *buf);
    cpu_sum_batch b = {0};
    const sum_rules *rules = NULL;
    const codegen_program *prog = NULL;
    cky_status st = !ch || !buf ? cky_fail(CKY_ERR_NOMEM, "out of memory") : CKY_OK;
    if (!st)
        st = cpu_sum_rules(e, &rules);
    if (!st)
        st = cpu_program(e, CODEGEN_SEMIRING_SUM_PRODUCT, CODEGEN_ROLE_PARENT, &prog);
    for (int k = 0; k < n && !st; k++) {
        st = sum_chart_new(s[k].n, e->g->nsub_total, &ch[k]);
        for (int i = 0; i < s[k].n && !st; i++) /* the one-word cells are a chart's first */
            st = sum_rules_lexical(e->g, s[k].words[i], i, ch[k]->pre + (size_t)i * ch[k]->nsub,
                                   &ch[k]->epre[i], buf);
    }
    if (!st)
        st = cpu_sum_batch_new(e, ch, n, 0, &b);
    if (!st) {
        b.rules = rules;
        b.prog[0] = prog;
        st = engine_run_pass(&sum_ops, &b, &b.p, ENGINE_PASS_INSIDE,
                             CODEGEN_SEMIRING_SUM_PRODUCT);
    }
    cpu_sum_batch_free(&b);
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
