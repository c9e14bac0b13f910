/* cpu: the generated kernels on CPU threads (see cpu.h). */
#include "cpu.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "../../sched/engine.h"
#include "../../sched/plan.h"
#include "../ref/ref.h"

#define DEFAULT_WIDTH 512 /* work items per workspace */
#define GUARD 64          /* sentinel floats before and after every workspace */
#define GUARD_BITS 0x7fc0deadu

/* A buffer of n floats between two guard regions of sentinel NaNs. */
static float *guarded_alloc(size_t n)
{
    float *b = malloc((n + 2 * GUARD) * sizeof *b);
    if (!b)
        return NULL;
    unsigned bits = GUARD_BITS;
    for (size_t k = 0; k < GUARD; k++) {
        memcpy(&b[k], &bits, sizeof bits);
        memcpy(&b[GUARD + n + k], &bits, sizeof bits);
    }
    return b + GUARD;
}

static void guarded_free(float *b) { free(b ? b - GUARD : NULL); }

/* CKY_ERR_LIMIT if anything wrote into the guard regions of a workspace of n floats. */
static cky_status guard_check(const float *b, size_t n, const char *what)
{
    for (size_t k = 0; k < GUARD; k++) {
        unsigned lo, hi;
        memcpy(&lo, &b[(ptrdiff_t)k - GUARD], sizeof lo);
        memcpy(&hi, &b[n + k], sizeof hi);
        if (lo != GUARD_BITS || hi != GUARD_BITS)
            return cky_fail(CKY_ERR_LIMIT, "cpu engine: a generated kernel wrote outside the "
                            "%s workspace (guard region %s it overwritten)", what,
                            lo != GUARD_BITS ? "before" : "after");
    }
    return CKY_OK;
}

cky_status cpu_engine_new(const grammar *g, const cpu_engine_options *opt, cpu_engine **out)
{
    cpu_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    e->g = g;
    e->threads = opt->threads > 0 ? opt->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (e->threads < 1)
        e->threads = 1;
    e->width = opt->width > 0 ? opt->width : DEFAULT_WIDTH;
    if (opt->cache_dir && !(e->cache_dir = strdup(opt->cache_dir))) {
        free(e);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    codegen_options o;
    codegen_options_default(&o);
    o.gpu = 0;
    o.host = 1;
    o.cache_dir = opt->cache_dir;
    o.progress = e->progress = opt->progress;
    e->fixed = opt->fixed;
    o.semiring = e->fixed ? CODEGEN_SEMIRING_FIXED : CODEGEN_SEMIRING_MAX_PLUS;
    cky_status st = e->fixed ? codegen_fixed_check(g) : CKY_OK;
    if (st) {
        cpu_engine_free(e);
        return st;
    }
    /* one stage of progress for all the programs compiled now */
    progress_report(&e->progress, PROGRESS_COMPILE, PROGRESS_BEGIN, NULL, 0, 0, 0);
    st = codegen_compile(g, &o, &e->prog);
    const codegen_program *sum;
    for (int role = 0; opt->sum && role < 3 && !st; role++)
        st = cpu_program(e, CODEGEN_SEMIRING_SUM_PRODUCT, (codegen_role)role, &sum);
    progress_report(&e->progress, PROGRESS_COMPILE, PROGRESS_END, NULL, 0, 0, 0);
    const sum_rules *rules;
    if (!st && opt->sum) /* the rest of max-rule's set-up, so that a start-up holds it all */
        st = cpu_sum_rules(e, &rules);
    if (st) {
        cpu_engine_free(e);
        return st;
    }
    const codegen_classes *c = &e->prog->classes;
    int rows = c->n[CODEGEN_X] > c->n[CODEGEN_T] ? c->n[CODEGEN_X] : c->n[CODEGEN_T];
    e->ws_size = (size_t)(rows ? rows : 1) * e->width;
    e->left = guarded_alloc(e->ws_size);
    e->right = guarded_alloc(e->ws_size);
    e->parent = guarded_alloc(e->ws_size);
    if (!e->left || !e->right || !e->parent) {
        cpu_engine_free(e);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for workspaces");
    }
    *out = e;
    return CKY_OK;
}

cky_status cpu_program(cpu_engine *e, codegen_semiring sr, codegen_role role,
                       const codegen_program **out)
{
    if (sr == CODEGEN_SEMIRING_MAX_PLUS && role == CODEGEN_ROLE_PARENT) {
        *out = e->prog;
        return CKY_OK;
    }
    if (sr != CODEGEN_SEMIRING_SUM_PRODUCT || (unsigned)role > CODEGEN_ROLE_RIGHT)
        return cky_fail(CKY_ERR_ARG, "cpu engine: no kernels for semiring %d, role %d",
                        (int)sr, (int)role);
    if (!e->prog_sum[role]) {
        codegen_options o;
        codegen_options_default(&o);
        o.gpu = 0;
        o.host = 1;
        o.cache_dir = e->cache_dir;
        o.progress = e->progress;
        o.semiring = sr;
        o.role = role;
        cky_status st = codegen_compile(e->g, &o, &e->prog_sum[role]);
        if (st)
            return st;
    }
    *out = e->prog_sum[role];
    return CKY_OK;
}

void cpu_engine_free(cpu_engine *e)
{
    if (!e)
        return;
    codegen_program_free(e->prog);
    sum_rules_free(e->rules);
    for (int r = 0; r < 3; r++)
        codegen_program_free(e->prog_sum[r]);
    free(e->cache_dir);
    guarded_free(e->left);
    guarded_free(e->right);
    guarded_free(e->parent);
    free(e);
}

double cpu_engine_rule_evaluations(const cpu_engine *e) { return e->evaluations; }

/* Copy-transpose: column t of `ws` gets the class rows of `cell` (span-major, global ids);
 * fixed: as fixed-point int32 values, and whether one of them was clamped is returned. */
static int gather(const codegen_classes *c, codegen_class cls, const double *cell, float *ws,
                  int t, int width, int fixed)
{
    const int *global = c->global[cls];
    int *wi = (int *)ws, clamped = 0;
    for (int x = 0; x < c->n[cls]; x++) {
        float v = (float)cell[global[x]];
        if (fixed) {
            clamped |= fixedpoint_clamps(v);
            wi[(size_t)x * width + t] = fixedpoint_of(v);
        } else {
            ws[(size_t)x * width + t] = v;
        }
    }
    return clamped;
}

/* Max-reduce column t of the parent workspace into the pre-unary layer of its cell. */
static void reduce(const codegen_classes *c, const float *ws, int t, int width, double *cell,
                   int fixed)
{
    const int *global = c->global[CODEGEN_X];
    const int *wi = (const int *)ws;
    for (int x = 0; x < c->n[CODEGEN_X]; x++) {
        size_t at = (size_t)x * width + t;
        double v = fixed ? fixedpoint_to_float(wi[at]) : ws[at];
        if (v > cell[global[x]])
            cell[global[x]] = v;
    }
}

typedef struct slice {
    const cpu_engine *e;
    const codegen_program *prog;
    codegen_family_id f;
    int first, count; /* columns */
} slice;

static void *run_slice(void *arg)
{
    const slice *sl = arg;
    const cpu_engine *e = sl->e;
    const codegen_partition *part = &sl->prog->part[sl->f];
    for (int k = 0; k < part->nkernel; k++)
        sl->prog->kernel[sl->f][k].host(e->left + sl->first, e->right + sl->first,
                                       e->parent + sl->first, sl->count, e->width);
    return NULL;
}

cky_status cpu_run_family(cpu_engine *e, const codegen_program *prog, codegen_family_id f,
                          int n)
{
    int nt = e->threads < n ? e->threads : n;
    slice *sl = malloc((size_t)nt * sizeof *sl);
    pthread_t *tid = malloc((size_t)nt * sizeof *tid);
    int *started = calloc((size_t)nt, sizeof *started);
    if (!sl || !tid || !started) {
        free(sl);
        free(tid);
        free(started);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for %d threads", nt);
    }
    for (int t = 0; t < nt; t++) {
        int first = (int)((long)n * t / nt), last = (int)((long)n * (t + 1) / nt);
        sl[t] = (slice){e, prog, f, first, last - first};
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, run_slice, &sl[t]) == 0;
    }
    run_slice(&sl[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            run_slice(&sl[t]); /* no thread could be started for it: do it here */
    }
    free(sl);
    free(tid);
    free(started);
    e->evaluations += (double)n * prog->part[f].nrule;
    cky_status st = guard_check(e->left, e->ws_size, "left");
    if (!st)
        st = guard_check(e->right, e->ws_size, "right");
    return st ? st : guard_check(e->parent, e->ws_size, "parent");
}

/* The charts of one batch being filled, and room for the items of one plan segment. */
typedef struct batch {
    cpu_engine *e;
    chart **ch;
    int *left, *right, *parent, *sent;
} batch;

/* The post-/pre-unary score vector of batch cell `cell` of sentence k. */
static double *cell_post(const batch *b, const plan *p, int k, int cell)
{
    return b->ch[k]->post + (size_t)(cell - p->cell0[k]) * b->ch[k]->nsub;
}
static double *cell_pre(const batch *b, const plan *p, int k, int cell)
{
    return b->ch[k]->pre + (size_t)(cell - p->cell0[k]) * b->ch[k]->nsub;
}

/* The binary step (engine.h): family f over the items of span d, a workspace at a time:
 * copy-transpose the children in, run the kernels, max-reduce the parents out. */
static cky_status cpu_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    batch *b = ctx;
    cpu_engine *e = b->e;
    if (e->prog->part[f].nrule == 0)
        return CKY_OK;
    const codegen_classes *cls = &e->prog->classes;
    size_t parent_size = (size_t)cls->n[CODEGEN_X] * e->width;
    codegen_class lc = codegen_family_left(f), rc = codegen_family_right(f);
    int nitem = (int)p->bin[d * CODEGEN_NFAMILY + f].count;
    plan_fill_items(p, d, f, b->left, b->right, b->parent, b->sent);
    for (int first = 0; first < nitem; first += e->width) {
        int n = nitem - first < e->width ? nitem - first : e->width;
        const int *left = b->left + first, *right = b->right + first;
        const int *parent = b->parent + first, *sent = b->sent + first;
        for (size_t m = 0; m < parent_size; m++)
            if (e->fixed)
                ((int *)e->parent)[m] = FIXEDPOINT_NINF;
            else
                e->parent[m] = -INFINITY;
        for (int t = 0; t < n; t++) {
            int out = gather(cls, lc, cell_post(b, p, sent[t], left[t]), e->left, t, e->width,
                             e->fixed);
            out |= gather(cls, rc, cell_post(b, p, sent[t], right[t]), e->right, t, e->width,
                          e->fixed);
            b->ch[sent[t]]->out_of_range |= out;
        }
        cky_status st = cpu_run_family(e, e->prog, f, n);
        if (st)
            return st;
        for (int t = 0; t < n; t++)
            reduce(cls, e->parent, t, e->width, cell_pre(b, p, sent[t], parent[t]), e->fixed);
    }
    return CKY_OK;
}

/* The unary step (engine.h): the closed unary step over every cell of span d. */
static cky_status cpu_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    batch *b = ctx;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i + d <= p->len[k]; i++)
            ref_close_unary(b->e->g, b->ch[k], i, i + d);
    return CKY_OK;
}

static const engine_ops cpu_ops = {cpu_binary, cpu_unary, NULL};

cky_status cpu_engine_parse(cpu_engine *e, const sentence *s, int n, chart **out)
{
    chart **ch = calloc((size_t)(n ? n : 1), sizeof *ch);
    int *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    plan p = {0};
    batch b = {e, ch, NULL, NULL, NULL, NULL};
    cky_status st = !ch || !len ? cky_fail(CKY_ERR_NOMEM, "out of memory") : CKY_OK;
    for (int k = 0; k < n && !st; k++) {
        len[k] = s[k].n;
        st = chart_new(s[k].n, e->g->nsub_total, e->fixed ? CHART_FIXED : CHART_FLOAT, &ch[k]);
        if (!st)
            st = ref_fill_lexical(e->g, ch[k], s[k].words);
    }
    if (!st)
        st = engine_check_pass("cpu", ENGINE_PASS_INSIDE, CODEGEN_SEMIRING_MAX_PLUS);
    if (!st)
        st = plan_new(len, n, &p);
    long most = 1; /* items of the largest segment */
    for (int d = 2; d <= p.maxn; d++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            if (p.bin[d * CODEGEN_NFAMILY + f].count > most)
                most = p.bin[d * CODEGEN_NFAMILY + f].count;
    int *items = st ? NULL : malloc((size_t)most * 4 * sizeof *items);
    if (!st && !items)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory for work items");
    if (!st) {
        b.left = items;
        b.right = items + most;
        b.parent = items + 2 * most;
        b.sent = items + 3 * most;
        st = engine_run_pass(&cpu_ops, &b, &p, ENGINE_PASS_INSIDE, CODEGEN_SEMIRING_MAX_PLUS);
    }
    free(items);
    plan_free(&p);
    free(len);
    if (st) {
        for (int k = 0; k < n && ch; k++)
            chart_free(ch[k]);
    } else {
        memcpy(out, ch, (size_t)n * sizeof *ch);
    }
    free(ch);
    return st;
}
