/* codegen partition: cut a family's P x L x R rule cube into major cubes (kernels) and
 * minor cubes (code blocks), paper section 5.
 *
 * Axes are cut in the order P, L, R: the rows of an axis are ordered by their Fiedler
 * vector over the rules of the current sub-cube (codegen_spectral_order), then cut into
 * intervals of about equal rule count, and each interval is cut along the next axis. The
 * same recursion inside each major cube gives its minor cubes. Empty cubes never arise
 * (only occurring rows are ordered), so every rule lands in exactly one block; each block is
 * then put into emission order and planned under the live budget (schedule.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "schedule.h"

#define PARTITION_BLOCK_RULES 1800 /* design page probe: 1,000-2,000 rules per code block */

cky_status codegen_shape_parse(const char *text, codegen_shape *out)
{
    codegen_shape s = {{0, 0, 0}, {2, 2, 2}, 0};
    int used = 0, n = sscanf(text, "%dx%dx%d%n", &s.major[0], &s.major[1], &s.major[2], &used);
    if (n < 3)
        return cky_fail(CKY_ERR_ARG, "bad shape '%s' (want PxLxR or PxLxR/PxLxR)", text);
    if (text[used] == '/') {
        int used2 = 0;
        n = sscanf(text + used + 1, "%dx%dx%d%n", &s.minor[0], &s.minor[1], &s.minor[2], &used2);
        if (n < 3)
            return cky_fail(CKY_ERR_ARG, "bad minor shape in '%s'", text);
        used += 1 + used2;
    }
    if (text[used] != '\0')
        return cky_fail(CKY_ERR_ARG, "bad shape '%s': trailing '%s'", text, text + used);
    for (int a = 0; a < 3; a++)
        if (s.major[a] < 1 || s.minor[a] < 1 || s.major[a] > 4096 || s.minor[a] > 4096)
            return cky_fail(CKY_ERR_ARG, "bad shape '%s': sizes must be 1..4096", text);
    *out = s;
    return CKY_OK;
}

codegen_shape codegen_shape_auto(long nrule)
{
    codegen_shape s = {{1, 1, 1}, {1, 1, 1}, 0};
    long blocks = (nrule + PARTITION_BLOCK_RULES - 1) / PARTITION_BLOCK_RULES;
    /* minor cubes narrow in R: a code block keeps its left rows one at a time and caches
     * its right rows (schedule.h), and a quarter of the kernel's right rows mostly fit that
     * cache (fewer row loads per work item than 2x2x2: counts in docs/performance.md) */
    if (blocks >= 8)
        s.minor[0] = 2, s.minor[2] = 4;
    else if (blocks >= 4)
        s.minor[2] = 4;
    else if (blocks >= 2)
        s.minor[2] = 2;
    int per = s.minor[0] * s.minor[1] * s.minor[2];
    long kernels = (blocks + per - 1) / per;
    if (kernels >= 4) {
        s.major[0] = (int)((kernels + 3) / 4);
        s.major[1] = s.major[2] = 2;
    } else if (kernels > 1) {
        s.major[0] = (int)kernels;
    }
    return s;
}

static int rule_axis(const codegen_rule *r, int axis)
{
    return axis == 0 ? r->p : axis == 1 ? r->l : r->r;
}

typedef struct cutter {
    const int *dim;
    int *order, *part, *cnt; /* scratch of max(dim) entries */
    codegen_rule *tmp;       /* scratch of nrule entries */
    long *bound;             /* output: cube boundaries, grows */
    int nbound, cap;
} cutter;

static cky_status cutter_push(cutter *c, long end)
{
    if (c->nbound == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        long *b = realloc(c->bound, (size_t)cap * sizeof *b);
        if (!b)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        c->bound = b;
        c->cap = cap;
    }
    c->bound[c->nbound++] = end;
    return CKY_OK;
}

/* Cut rules[lo, hi) along axes `axis`..2 into k[axis] x .. intervals; each resulting cube
 * stays contiguous and its end index is pushed onto c->bound. */
static cky_status cutter_split(cutter *c, codegen_rule *rule, long lo, long hi, int axis,
                               const int *k)
{
    if (axis == 3)
        return cutter_push(c, hi);
    int n = 0, parts = k[axis];
    cky_status st;
    if (parts > 1) {
        if ((st = codegen_spectral_order(rule + lo, hi - lo, axis, c->dim[axis], c->order, &n)))
            return st;
    }
    if (parts <= 1 || n <= 1)
        return cutter_split(c, rule, lo, hi, axis + 1, k);
    for (int i = 0; i < n; i++)
        c->cnt[c->order[i]] = 0;
    for (long i = lo; i < hi; i++)
        c->cnt[rule_axis(&rule[i], axis)]++;
    /* node at sorted position i goes to interval floor((before + own/2) * parts / total) */
    long before = 0, total = hi - lo;
    for (int i = 0; i < n; i++) {
        int row = c->order[i];
        long q = (2 * before + c->cnt[row]) * parts / (2 * total);
        c->part[row] = (int)(q < parts ? q : parts - 1);
        before += c->cnt[row];
    }
    long *start = calloc((size_t)parts + 1, sizeof *start);
    if (!start)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (long i = lo; i < hi; i++) /* stable counting sort by interval */
        start[c->part[rule_axis(&rule[i], axis)] + 1]++;
    for (int j = 0; j < parts; j++)
        start[j + 1] += start[j];
    for (long i = lo; i < hi; i++)
        c->tmp[lo + start[c->part[rule_axis(&rule[i], axis)]]++] = rule[i];
    memcpy(rule + lo, c->tmp + lo, (size_t)(hi - lo) * sizeof *rule);
    st = CKY_OK;
    long a = lo;
    for (int j = 0; j < parts && !st; j++) { /* start[j] is now the end of interval j */
        long b = lo + start[j];
        if (b > a)
            st = cutter_split(c, rule, a, b, axis + 1, k);
        a = b;
    }
    free(start);
    return st;
}


/* Distinct rows per axis over rules[0..n), counted with stamp arrays (stamp[a][row]). */
static void count_rows(const codegen_rule *rule, long n, int *stamp[3], int id, int out[3])
{
    out[0] = out[1] = out[2] = 0;
    for (long i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            int row = rule_axis(&rule[i], a);
            if (stamp[a][row] != id)
                stamp[a][row] = id, out[a]++;
        }
}

static int key_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Reload rate of equal-width blocking with `k` intervals per axis over rows 0..dim-1. */
static double naive_reload(const codegen_rule *rule, long n, const int dim[3], const int k[3],
                           int used_rows)
{
    long *key = malloc((size_t)(n ? n : 1) * 3 * sizeof *key);
    if (!key || used_rows == 0) {
        free(key);
        return 0;
    }
    long dmax = (long)dim[0] + dim[1] + dim[2] + 1, m = 0;
    for (long i = 0; i < n; i++) {
        long cube = 0;
        for (int a = 0; a < 3; a++)
            cube = cube * k[a] + (long)rule_axis(&rule[i], a) * k[a] / dim[a];
        for (int a = 0; a < 3; a++)
            key[m++] = (cube * 3 + a) * dmax + rule_axis(&rule[i], a);
    }
    qsort(key, (size_t)m, sizeof *key, key_cmp);
    long distinct = 0;
    for (long i = 0; i < m; i++)
        distinct += i == 0 || key[i] != key[i - 1];
    free(key);
    return (double)distinct / used_rows;
}

/* Fill kernel/block tables and statistics from the cube boundaries. */
static cky_status partition_stats(codegen_partition *p, const long *major_end, int nmajor,
                                  const long *block_end, const int *block_kernel)
{
    int *stamp[3] = {NULL, NULL, NULL};
    long most = 1; /* rules of the largest block */
    for (int b = 0; b < p->nblock; b++)
        if (block_end[b] - (b ? block_end[b - 1] : 0) > most)
            most = block_end[b] - (b ? block_end[b - 1] : 0);
    unsigned char *flags = malloc((size_t)most);
    cky_status st = flags ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int a = 0; a < 3 && !st; a++)
        if (!(stamp[a] = malloc((size_t)(p->dim[a] ? p->dim[a] : 1) * sizeof(int)))) {
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
            goto done;
        }
    if (st)
        goto done;
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < p->dim[a]; i++)
            stamp[a][i] = -1;
    long loads = 0;
    int rows[3];
    for (int k = 0; k < nmajor; k++) {
        long lo = k ? major_end[k - 1] : 0;
        count_rows(p->rule + lo, major_end[k] - lo, stamp, k, rows);
        loads += rows[0] + rows[1] + rows[2];
        p->kernel[k] = (codegen_kernel){0, 0, lo, major_end[k] - lo};
    }
    int used = 0;
    count_rows(p->rule, p->nrule, stamp, nmajor, rows);
    used = rows[0] + rows[1] + rows[2];
    p->reload_rate = used ? (double)loads / used : 0;
    p->naive_reload_rate = naive_reload(p->rule, p->nrule, p->dim, p->shape.major, used);
    for (int b = 0; b < p->nblock && !st; b++) {
        long lo = b ? block_end[b - 1] : 0, n = block_end[b] - lo;
        codegen_block *blk = &p->block[b];
        count_rows(p->rule + lo, n, stamp, nmajor + 1 + b, rows);
        *blk = (codegen_block){lo, n, rows[1], rows[2], rows[0], 0, 0};
        if ((st = codegen_block_order(p->rule + lo, n, p->dim, p->shape.live_limit)) ||
            (st = codegen_block_plan(p->rule + lo, n, p->dim, p->shape.live_limit, flags,
                                     &blk->max_live, &blk->loads)))
            break;
        if (blk->max_live > p->max_live)
            p->max_live = blk->max_live;
        codegen_kernel *kn = &p->kernel[block_kernel[b]];
        if (kn->nblock++ == 0)
            kn->first_block = b;
    }
done:
    free(flags);
    for (int a = 0; a < 3; a++)
        free(stamp[a]);
    return st;
}

cky_status codegen_partition_build(const codegen_family *f, codegen_shape shape,
                                   codegen_partition *out)
{
    memset(out, 0, sizeof *out);
    if (!shape.major[0] || !shape.major[1] || !shape.major[2]) {
        int budget = shape.live_limit;
        shape = codegen_shape_auto(f->nrule);
        shape.live_limit = budget;
    }
    if (shape.live_limit <= 0)
        shape.live_limit = CODEGEN_LIVE_BUDGET;
    out->family = f->id;
    memcpy(out->dim, f->dim, sizeof out->dim);
    out->shape = shape;
    out->nrule = f->nrule;
    int dmax = 1;
    for (int a = 0; a < 3; a++)
        dmax = f->dim[a] > dmax ? f->dim[a] : dmax;
    cutter c = {f->dim, malloc((size_t)dmax * sizeof(int)), malloc((size_t)dmax * sizeof(int)),
                malloc((size_t)dmax * sizeof(int)),
                malloc((size_t)(f->nrule ? f->nrule : 1) * sizeof(codegen_rule)), NULL, 0, 0};
    out->rule = malloc((size_t)(f->nrule ? f->nrule : 1) * sizeof *out->rule);
    long *major_end = NULL;
    int *block_kernel = NULL, nmajor = 0;
    cky_status st = CKY_OK;
    if (!c.order || !c.part || !c.cnt || !c.tmp || !out->rule) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory partitioning %ld rules", f->nrule);
        goto done;
    }
    memcpy(out->rule, f->rule, (size_t)f->nrule * sizeof *out->rule);
    if (f->nrule && (st = cutter_split(&c, out->rule, 0, f->nrule, 0, shape.major)))
        goto done;
    nmajor = c.nbound;
    major_end = c.bound;
    c.bound = NULL;
    c.nbound = c.cap = 0;
    for (int k = 0; k < nmajor && !st; k++) /* minor cubes */
        st = cutter_split(&c, out->rule, k ? major_end[k - 1] : 0, major_end[k], 0, shape.minor);
    if (st)
        goto done;
    if (!(block_kernel = malloc((size_t)(c.nbound ? c.nbound : 1) * sizeof *block_kernel))) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int b = 0, k = 0; b < c.nbound; b++) {
        while (c.bound[b] > major_end[k])
            k++;
        block_kernel[b] = k;
    }
    out->nkernel = nmajor;
    out->nblock = c.nbound;
    out->kernel = calloc((size_t)(nmajor ? nmajor : 1), sizeof *out->kernel);
    out->block = calloc((size_t)(c.nbound ? c.nbound : 1), sizeof *out->block);
    if (!out->kernel || !out->block) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    st = partition_stats(out, major_end, nmajor, c.bound, block_kernel);
done:
    free(c.order);
    free(c.part);
    free(c.cnt);
    free(c.tmp);
    free(c.bound);
    free(major_end);
    free(block_kernel);
    if (st)
        codegen_partition_free(out);
    return st;
}

void codegen_partition_free(codegen_partition *p)
{
    free(p->rule);
    free(p->kernel);
    free(p->block);
    memset(p, 0, sizeof *p);
}
