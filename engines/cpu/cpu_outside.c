/* cpu_outside: the sum-product outside pass of the cpu engine (see cpu_engine_outside_sum
 * in cpu_sum.h; the arithmetic is sum_rules.h's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../chart/scale.h"
#include "cpu_internal.h"
#include "cpu_sum.h"
#include "../../sched/engine.h"

/* The chart, and the local numbers of an item's cells for one side: the parent, the
 * sibling (whose inside scores the terms carry) and the child the terms go to. */
typedef struct item_cells {
    sum_chart *c;
    size_t parent, sibling, child;
} item_cells;

static item_cells cells_of(const cpu_sum_batch *b, int it, int side)
{
    int k = b->sent[it];
    long base = b->p.cell0[k];
    int sib = side ? b->left[it] : b->right[it], to = side ? b->right[it] : b->left[it];
    return (item_cells){b->ch[k], (size_t)(b->parent[it] - base), (size_t)(sib - base),
                        (size_t)(to - base)};
}

/* The pull list (d, f, side) of the batch. */
static const int *pull_list(const cpu_sum_batch *b, int d, int f, int side, long *count)
{
    plan_segment sg = b->p.pull[(d * CODEGEN_NFAMILY + f) * 2 + side];
    *count = sg.count;
    return b->pull + sg.first;
}

/* Exponents of the opost layers of span d: the largest eopre(parent) + epost(sibling) over
 * the pull lists of every family with rules (the roots keep their 0). */
static void outside_exponents(cpu_sum_batch *b, int d)
{
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        for (int side = 0; side < 2 && b->prog[1]->part[f].nrule; side++) {
            long n;
            const int *list = pull_list(b, d, f, side, &n);
            for (long t = 0; t < n; t++) {
                item_cells cl = cells_of(b, list[t], side);
                int e = cl.c->eopre[cl.parent] + cl.c->epost[cl.sibling];
                int *top = &cl.c->eopost[cl.child];
                *top = e > *top ? e : *top;
            }
        }
}

/* One side of the binary step: the items of a pull list through the turned kernels, a
 * workspace at a time, each term added into its child's opost at the child's exponent. */
static cky_status send_side(cpu_sum_batch *b, int d, codegen_family_id f, int side)
{
    cpu_engine *e = b->e;
    const codegen_program *prog = b->prog[1 + side];
    const codegen_classes *cls = &prog->classes;
    codegen_class to = side ? codegen_family_right(f) : codegen_family_left(f);
    codegen_class sib = side ? codegen_family_left(f) : codegen_family_right(f);
    const int *gp = cls->global[CODEGEN_X], *gs = cls->global[sib], *gt = cls->global[to];
    long count;
    const int *list = pull_list(b, d, f, side, &count);
    for (long first = 0; first < count; first += e->width) {
        int n = (int)(count - first < e->width ? count - first : e->width);
        memset(e->parent, 0, (size_t)cls->n[to] * e->width * sizeof *e->parent);
        for (int t = 0; t < n; t++) {
            item_cells cl = cells_of(b, list[first + t], side);
            const float *po = cl.c->opre + cl.parent * cl.c->nsub;
            const float *si = cl.c->post + cl.sibling * cl.c->nsub;
            for (int x = 0; x < cls->n[CODEGEN_X]; x++)
                e->left[(size_t)x * e->width + t] = po[gp[x]];
            for (int x = 0; x < cls->n[sib]; x++)
                e->right[(size_t)x * e->width + t] = si[gs[x]];
        }
        cky_status st = cpu_run_family(e, prog, f, n);
        if (st)
            return st;
        for (int t = 0; t < n; t++) {
            item_cells cl = cells_of(b, list[first + t], side);
            sum_chart *c = cl.c;
            int shift = c->eopre[cl.parent] + c->epost[cl.sibling] - c->eopost[cl.child];
            float *acc = c->opost + cl.child * c->nsub;
            for (int x = 0; x < cls->n[to]; x++) {
                float v = e->parent[(size_t)x * e->width + t];
                if (v > 0)
                    acc[gt[x]] += chart_scale(v, shift);
            }
        }
    }
    return CKY_OK;
}

static cky_status out_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    cpu_sum_batch *b = ctx;
    if (f == 0)
        outside_exponents(b, d);
    if (b->prog[1]->part[f].nrule == 0)
        return CKY_OK;
    cky_status st = send_side(b, d, f, 0);
    return st ? st : send_side(b, d, f, 1);
}

/* The unary step: opre = opost + the closure's outside terms, normalized, for each cell of
 * span d. */
static cky_status out_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    cpu_sum_batch *b = ctx;
    const sum_unary_table *down = &b->rules->down;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i + d <= p->len[k]; i++) {
            sum_chart *c = b->ch[k];
            size_t cell = chart_cell(c->n, i, i + d);
            const float *op = c->opost + cell * c->nsub;
            float *pre = c->opre + cell * c->nsub;
            for (int x = 0; x < c->nsub; x++)
                pre[x] = op[x] + sum_rules_row(down, x, op, d);
            c->eopre[cell] = sum_rules_normalize(pre, c->nsub, c->eopost[cell]);
        }
    return CKY_OK;
}

static const engine_ops out_ops = {out_binary, out_unary, NULL};

/* The outside arrays of chart c: opost 0 with exponent 2 CHART_EXP_NONE (raised by
 * outside_exponents), but ROOT's 1 at the root, exponent 0. */
static cky_status outside_alloc(sum_chart *c)
{
    size_t cells = chart_ncells(c->n);
    if (!c->opre) {
        c->opre = malloc(cells * (size_t)c->nsub * sizeof *c->opre);
        c->opost = malloc(cells * (size_t)c->nsub * sizeof *c->opost);
        c->eopre = malloc(cells * sizeof *c->eopre);
        c->eopost = malloc(cells * sizeof *c->eopost);
    }
    if (!c->opre || !c->opost || !c->eopre || !c->eopost)
        return cky_fail(CKY_ERR_NOMEM, "out of memory for outside scores of %d words", c->n);
    memset(c->opost, 0, cells * (size_t)c->nsub * sizeof *c->opost);
    for (size_t x = 0; x < cells; x++)
        c->eopost[x] = 2 * CHART_EXP_NONE;
    size_t root = chart_cell(c->n, 0, c->n);
    c->opost[root * c->nsub] = 1; /* ROOT: symbol 0, global substate 0 */
    c->eopost[root] = 0;
    return CKY_OK;
}

cky_status cpu_engine_outside_sum(cpu_engine *e, sum_chart *const *ch, int n)
{
    cpu_sum_batch b = {0};
    const sum_rules *rules = NULL;
    const codegen_program *prog[3] = {NULL, NULL, NULL};
    cky_status st = cpu_sum_rules(e, &rules);
    for (int r = 0; r < 2 && !st; r++)
        st = cpu_program(e, CODEGEN_SEMIRING_SUM_PRODUCT, (codegen_role)(CODEGEN_ROLE_LEFT + r),
                         &prog[1 + r]);
    for (int k = 0; k < n && !st; k++)
        st = outside_alloc(ch[k]);
    if (!st)
        st = cpu_sum_batch_new(e, ch, n, 1, &b);
    if (!st) {
        b.rules = rules;
        memcpy(b.prog, prog, sizeof prog);
        st = engine_run_pass(&out_ops, &b, &b.p, ENGINE_PASS_OUTSIDE,
                             CODEGEN_SEMIRING_SUM_PRODUCT);
    }
    cpu_sum_batch_free(&b);
    return st;
}
