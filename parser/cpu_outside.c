/* cpu_outside: the sum-product outside pass of the cpu engine (see cpu_engine_outside_sum
 * in cpu_sum.h). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_sum.h"
#include "engine.h"
#include "plan.h"

#define EMPTY INT_MIN /* eopost of a cell no term has reached yet */

typedef struct out_batch {
    cpu_engine *e;
    const codegen_program *prog[2]; /* roles LEFT, RIGHT */
    sum_chart *const *ch;
    int *left, *right, *parent, *sent; /* items of one segment */
    float *tmp;                        /* [nsub] */
} out_batch;

/* Add the term vector v (rows of class `cls`, column t of a workspace; exponent ev) to the
 * opost of cell `cell` of chart c. */
static void add_term(sum_chart *c, size_t cell, const codegen_classes *cls, codegen_class k,
                     const float *ws, int t, int width, int ev)
{
    int n = cls->n[k];
    float m = 0;
    for (int x = 0; x < n; x++)
        m = ws[(size_t)x * width + t] > m ? ws[(size_t)x * width + t] : m;
    if (m <= 0)
        return;
    int top;
    frexpf(m, &top);
    top += ev;
    float *acc = c->opost + cell * c->nsub;
    if (c->eopost[cell] == EMPTY) {
        c->eopost[cell] = top;
    } else if (top > c->eopost[cell]) {
        for (int x = 0; x < c->nsub; x++)
            acc[x] = ldexpf(acc[x], c->eopost[cell] - top);
        c->eopost[cell] = top;
    }
    const int *global = cls->global[k];
    for (int x = 0; x < n; x++)
        acc[global[x]] += ldexpf(ws[(size_t)x * width + t], ev - c->eopost[cell]);
}

/* The chart of item m and its cells (chart numbering) for role LEFT or RIGHT: the parent,
 * the sibling (whose inside scores the terms carry) and the child they are sent to. */
typedef struct item_cells {
    sum_chart *c;
    size_t parent, sibling, child;
} item_cells;

static item_cells cells_of(const out_batch *b, const plan *p, int m, codegen_role role)
{
    long base = p->cell0[b->sent[m]];
    const int *sib = role == CODEGEN_ROLE_LEFT ? b->right : b->left;
    const int *to = role == CODEGEN_ROLE_LEFT ? b->left : b->right;
    return (item_cells){b->ch[b->sent[m]], (size_t)(b->parent[m] - base),
                        (size_t)(sib[m] - base), (size_t)(to[m] - base)};
}

/* One role of the binary step: every item of the segment sends its terms to its left
 * (role LEFT) or right (role RIGHT) child, a workspace at a time, in item order. */
static cky_status send_role(out_batch *b, const plan *p, int nitem, codegen_family_id f,
                            codegen_role role)
{
    cpu_engine *e = b->e;
    const codegen_program *prog = b->prog[role - CODEGEN_ROLE_LEFT];
    const codegen_classes *cls = &prog->classes;
    codegen_class to = role == CODEGEN_ROLE_LEFT ? codegen_family_left(f)
                                                 : codegen_family_right(f);
    codegen_class sib = role == CODEGEN_ROLE_LEFT ? codegen_family_right(f)
                                                  : codegen_family_left(f);
    const int *gp = cls->global[CODEGEN_X], *gs = cls->global[sib];
    for (int first = 0; first < nitem; first += e->width) {
        int n = nitem - first < e->width ? nitem - first : e->width;
        memset(e->parent, 0, (size_t)cls->n[to] * e->width * sizeof *e->parent);
        for (int t = 0; t < n; t++) {
            item_cells cl = cells_of(b, p, first + t, role);
            const sum_chart *c = cl.c;
            size_t pc = cl.parent, sc = cl.sibling;
            const float *po = c->opre + pc * c->nsub, *si = c->post + sc * c->nsub;
            for (int x = 0; x < cls->n[CODEGEN_X]; x++)
                e->left[(size_t)x * e->width + t] = po[gp[x]];
            for (int x = 0; x < cls->n[sib]; x++)
                e->right[(size_t)x * e->width + t] = si[gs[x]];
        }
        cky_status st = cpu_run_family(e, prog, f, n);
        if (st)
            return st;
        for (int t = 0; t < n; t++) {
            item_cells cl = cells_of(b, p, first + t, role);
            add_term(cl.c, cl.child, cls, to, e->parent, t, e->width,
                     cl.c->eopre[cl.parent] + cl.c->epost[cl.sibling]);
        }
    }
    return CKY_OK;
}

static cky_status out_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    (void)pass;
    (void)sr;
    out_batch *b = ctx;
    if (b->prog[0]->part[f].nrule == 0)
        return CKY_OK;
    int nitem = (int)p->bin[d * CODEGEN_NFAMILY + f].count;
    plan_fill_items(p, d, f, b->left, b->right, b->parent, b->sent);
    cky_status st = send_role(b, p, nitem, f, CODEGEN_ROLE_LEFT);
    return st ? st : send_role(b, p, nitem, f, CODEGEN_ROLE_RIGHT);
}

/* The unary step: each cell of span d gets opre = opost + the sum closure's outside terms
 * (rules by child, child substate, parent substate), normalized. */
static cky_status out_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    (void)pass;
    (void)sr;
    out_batch *b = ctx;
    const grammar *g = b->e->g;
    const grammar_sum_closure *s = g->sum;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i + d <= p->len[k]; i++) {
            sum_chart *c = b->ch[k];
            size_t cell = chart_cell(c->n, i, i + d);
            if (c->eopost[cell] == EMPTY)
                c->eopost[cell] = 0;
            const float *op = c->opost + cell * c->nsub;
            float *pre = c->opre + cell * c->nsub;
            memset(b->tmp, 0, (size_t)c->nsub * sizeof *b->tmp);
            for (int C = 0; C < g->nsym; C++) {
                if (d > 1 && !g->phrasal[C])
                    continue;
                float *acc = b->tmp + g->sub_offset[C];
                for (int x = s->child_first[C]; x < s->child_first[C + 1]; x++) {
                    const grammar_sum_unary *u = &s->rule[s->by_child[x]];
                    int np = g->nsub[u->parent];
                    const float *po = op + g->sub_offset[u->parent];
                    for (int cp = 0; cp < g->nsub[C]; cp++)
                        for (int q = 0; q < np; q++)
                            if (po[q] != 0 && u->prob[(size_t)cp * np + q] != 0)
                                acc[cp] = fmaf((float)u->prob[(size_t)cp * np + q], po[q],
                                               acc[cp]);
                }
            }
            for (int x = 0; x < c->nsub; x++)
                pre[x] = op[x] + b->tmp[x];
            c->eopre[cell] = c->eopost[cell] + cpu_sum_normalize(pre, c->nsub);
        }
    return CKY_OK;
}

static const engine_ops out_ops = {out_binary, out_unary, NULL};

/* The outside arrays of chart c, ROOT's outside 1 at the root. */
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
        c->eopost[x] = EMPTY;
    size_t root = chart_cell(c->n, 0, c->n);
    c->opost[root * c->nsub] = 1; /* ROOT: symbol 0, global substate 0 */
    c->eopost[root] = 0;
    return CKY_OK;
}

cky_status cpu_engine_outside_sum(cpu_engine *e, sum_chart *const *ch, int n)
{
    int *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    plan p = {0};
    out_batch b = {.e = e, .ch = ch};
    cky_status st = len ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int r = 0; r < 2 && !st; r++)
        st = cpu_program(e, CODEGEN_SEMIRING_SUM_PRODUCT, (codegen_role)(CODEGEN_ROLE_LEFT + r),
                         &b.prog[r]);
    for (int k = 0; k < n && !st; k++) {
        len[k] = ch[k]->n;
        st = outside_alloc(ch[k]);
    }
    if (!st)
        st = plan_new(len, n, &p);
    long most = 1;
    for (int d = 2; !st && d <= p.maxn; d++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            most = p.bin[d * CODEGEN_NFAMILY + f].count > most ? p.bin[d * CODEGEN_NFAMILY + f].count
                                                              : most;
    if (!st) {
        b.left = malloc((size_t)most * 4 * sizeof *b.left);
        b.tmp = malloc((size_t)e->g->nsub_total * sizeof *b.tmp);
        if (!b.left || !b.tmp)
            st = cky_fail(CKY_ERR_NOMEM, "out of memory for the work items of a batch");
    }
    if (!st) {
        b.right = b.left + most;
        b.parent = b.left + 2 * most;
        b.sent = b.left + 3 * most;
        st = engine_run_pass(&out_ops, &b, &p, ENGINE_PASS_OUTSIDE,
                             CODEGEN_SEMIRING_SUM_PRODUCT);
    }
    free(b.left);
    free(b.tmp);
    plan_free(&p);
    free(len);
    return st;
}
