/* codegen partition: cut a family's P x L x R rule cube into major cubes (kernels) and
 * minor cubes (code blocks), paper section 5.
 *
 * Axes are cut in the order P, L, R: the rows of an axis are ordered by their Fiedler
 * vector over the rules of the current sub-cube (codegen_spectral_order), then cut into
 * intervals of about equal rule count, and each interval is cut along the next axis. The
 * same recursion inside each major cube gives its minor cubes. Empty cubes never arise
 * (only occurring rows are ordered), so every rule lands in exactly one block; each block is
 * then put into emission order and planned under the live budget (schedule.h).
 *
 * That spectral cut is one of the candidates (codegen_origin): it, equal-width blocking of
 * the same shape, and partitions refined from them by local moves (refine.c) are all built
 * and measured (reload rate over the major cubes, planned loads over the blocks), and the
 * best that is no worse than equal-width on both is kept (codegen_partition_build). */
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
    p->loads = 0;
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
        p->loads += blk->loads;
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

/* A candidate layout: rules in order, label[i] the block of rule i (ascending, not
 * necessarily dense), block b of kernel kernel_of[b] (ascending in b). */
typedef struct layout {
    codegen_rule *rule;
    int *label;
    int nlabel;
    int *kernel_of;
} layout;

static void layout_free(layout *y)
{
    free(y->rule);
    free(y->label);
    free(y->kernel_of);
    memset(y, 0, sizeof *y);
}

/* Build partition `out` of family f from layout y: rules grouped by block (stably), empty
 * blocks and kernels dropped, each block ordered and planned. */
static cky_status partition_assemble(const codegen_family *f, codegen_shape shape,
                                     const layout *y, codegen_partition *out)
{
    memset(out, 0, sizeof *out);
    out->family = f->id;
    memcpy(out->dim, f->dim, sizeof out->dim);
    out->shape = shape;
    out->nrule = f->nrule;
    int nl = y->nlabel;
    long *start = calloc((size_t)nl + 1, sizeof *start), *major_end = NULL, *block_end = NULL;
    int *block_kernel = NULL;
    out->rule = malloc((size_t)(f->nrule ? f->nrule : 1) * sizeof *out->rule);
    cky_status st = CKY_OK;
    if (!start || !out->rule) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (long i = 0; i < f->nrule; i++)
        start[y->label[i] + 1]++;
    int nblock = 0, nmajor = 0;
    for (int b = 0; b < nl; b++)
        nblock += start[b + 1] > 0;
    block_end = malloc((size_t)(nblock + 1) * sizeof *block_end);
    major_end = malloc((size_t)(nl + 1) * sizeof *major_end);
    block_kernel = malloc((size_t)(nblock + 1) * sizeof *block_kernel);
    if (!block_end || !major_end || !block_kernel) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    nblock = nmajor = 0;
    long at = 0;
    for (int b = 0, last_kernel = -1; b < nl; b++) {
        long size = start[b + 1];
        start[b + 1] = start[b] + size;
        if (!size)
            continue;
        if (y->kernel_of[b] != last_kernel)
            nmajor++, last_kernel = y->kernel_of[b];
        at += size;
        block_end[nblock] = at;
        block_kernel[nblock++] = nmajor - 1;
        major_end[nmajor - 1] = at;
    }
    for (long i = 0; i < f->nrule; i++) /* stable counting sort by block */
        out->rule[start[y->label[i]]++] = y->rule[i];
    out->nkernel = nmajor;
    out->nblock = nblock;
    out->kernel = calloc((size_t)(nmajor ? nmajor : 1), sizeof *out->kernel);
    out->block = calloc((size_t)(nblock ? nblock : 1), sizeof *out->block);
    if (!out->kernel || !out->block) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    st = partition_stats(out, major_end, nmajor, block_end, block_kernel);
done:
    free(start);
    free(major_end);
    free(block_end);
    free(block_kernel);
    if (st)
        codegen_partition_free(out);
    return st;
}

static cky_status cutter_init(cutter *c, const codegen_family *f)
{
    int dmax = 1;
    for (int a = 0; a < 3; a++)
        dmax = f->dim[a] > dmax ? f->dim[a] : dmax;
    *c = (cutter){f->dim, malloc((size_t)dmax * sizeof(int)), malloc((size_t)dmax * sizeof(int)),
                  malloc((size_t)dmax * sizeof(int)),
                  malloc((size_t)(f->nrule ? f->nrule : 1) * sizeof(codegen_rule)), NULL, 0, 0};
    if (!c->order || !c->part || !c->cnt || !c->tmp)
        return cky_fail(CKY_ERR_NOMEM, "out of memory partitioning %ld rules", f->nrule);
    return CKY_OK;
}

static void cutter_free(cutter *c)
{
    free(c->order);
    free(c->part);
    free(c->cnt);
    free(c->tmp);
    free(c->bound);
    memset(c, 0, sizeof *c);
}

/* A major cube of `size` rules among nmajor of n rules in all: about size / mean times as
 * many minor cubes as the shape gives (1..64). */
static int minor_times(long size, int nmajor, long n)
{
    long times = n ? (size * nmajor + n / 2) / n : 1;
    return (int)(times < 1 ? 1 : times > 64 ? 64 : times);
}

/* Cut each of the nmajor contiguous major cubes (ends major_end) of `rule` into spectral
 * minor cubes; y gets rule (taken over), labels and kernels. */
static cky_status layout_minor_spectral(cutter *c, codegen_rule *rule, long n,
                                        const long *major_end, int nmajor, const int *minor,
                                        int scale, layout *y)
{
    c->nbound = 0;
    cky_status st = CKY_OK;
    for (int k = 0; k < nmajor && !st; k++) {
        long lo = k ? major_end[k - 1] : 0, size = major_end[k] - lo;
        int cut[3] = {minor[0], minor[1], minor[2]};
        if (scale) /* a cube of t times the mean size: t times the R intervals */
            cut[2] *= minor_times(size, nmajor, n);
        st = cutter_split(c, rule, lo, major_end[k], 0, cut);
    }
    y->rule = rule;
    if (st)
        return st;
    y->nlabel = c->nbound;
    y->label = malloc((size_t)(n ? n : 1) * sizeof *y->label);
    y->kernel_of = malloc((size_t)(c->nbound ? c->nbound : 1) * sizeof *y->kernel_of);
    if (!y->label || !y->kernel_of)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int b = 0, k = 0; b < c->nbound; b++) {
        while (c->bound[b] > major_end[k])
            k++;
        y->kernel_of[b] = k;
        for (long i = b ? c->bound[b - 1] : 0; i < c->bound[b]; i++)
            y->label[i] = b;
    }
    return CKY_OK;
}

/* Rules [0, n) of `rule` put in order of part[] (0..npart-1, stable); *end gets the parts'
 * ends (npart entries, malloc'ed). */
static cky_status group_by_part(codegen_rule *rule, long n, const int *part, int npart,
                                codegen_rule *tmp, long **end)
{
    long *start = calloc((size_t)npart + 1, sizeof *start);
    if (!start)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (long i = 0; i < n; i++)
        start[part[i] + 1]++;
    for (int s = 0; s < npart; s++)
        start[s + 1] += start[s];
    for (long i = 0; i < n; i++)
        tmp[start[part[i]]++] = rule[i];
    memcpy(rule, tmp, (size_t)n * sizeof *rule);
    *end = start; /* start[s] is now the end of part s */
    return CKY_OK;
}

#define REFINE_SLACK 10 /* a part may grow to its group's mean size + 10 % */
#define REFINE_PASSES 8

/* Refine the code blocks of layout y by local moves within each kernel (weights on the
 * axes the plan loads: left and right rows, parents grouped). */
static cky_status layout_refine_blocks(const codegen_family *f, layout *y)
{
    static const int weight[3] = {1, 1, 1};
    return codegen_refine_parts(y->rule, f->nrule, f->dim, y->label, y->nlabel, y->kernel_of,
                                weight, REFINE_SLACK, REFINE_PASSES, 0);
}

/* The spectral candidate into *spec and the refined one into *moves. */
static cky_status candidates_spectral(const codegen_family *f, codegen_shape shape,
                                      codegen_partition *spec, codegen_partition *moves)
{
    static const int weight[3] = {1, 1, 1};
    long n = f->nrule;
    cutter c;
    layout a = {0}, b = {0};
    long *major_end = NULL, *moved_end = NULL;
    int *part = NULL;
    codegen_rule *major = malloc((size_t)(n ? n : 1) * sizeof *major);
    codegen_rule *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
    cky_status st = cutter_init(&c, f);
    if (!st && (!major || !copy))
        st = cky_fail(CKY_ERR_NOMEM, "out of memory partitioning %ld rules", n);
    if (st)
        goto done;
    memcpy(major, f->rule, (size_t)n * sizeof *major);
    if (n && (st = cutter_split(&c, major, 0, n, 0, shape.major)))
        goto done;
    int nmajor = c.nbound;
    major_end = c.bound;
    c.bound = NULL;
    c.nbound = c.cap = 0;
    memcpy(copy, major, (size_t)n * sizeof *copy);
    st = layout_minor_spectral(&c, copy, n, major_end, nmajor, shape.minor, 0, &a);
    copy = NULL;
    if (st || (st = partition_assemble(f, shape, &a, spec)))
        goto done;
    /* refined: rows moved between major cubes, minor cubes cut again, rows moved between
     * the blocks of each kernel */
    int *all = calloc((size_t)nmajor + 1, sizeof *all);
    if (!(part = malloc((size_t)(n ? n : 1) * sizeof *part)) || !all) {
        free(all);
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < nmajor; k++)
        for (long i = k ? major_end[k - 1] : 0; i < major_end[k]; i++)
            part[i] = k;
    st = codegen_refine_parts(major, n, f->dim, part, nmajor, all, weight, REFINE_SLACK,
                              REFINE_PASSES, 0);
    free(all);
    if (st || (st = group_by_part(major, n, part, nmajor, c.tmp, &moved_end)))
        goto done;
    st = layout_minor_spectral(&c, major, n, moved_end, nmajor, shape.minor, 0, &b);
    major = NULL;
    if (!st && !(st = layout_refine_blocks(f, &b)))
        st = partition_assemble(f, shape, &b, moves);
done:
    if (st) {
        codegen_partition_free(spec);
        codegen_partition_free(moves);
    }
    cutter_free(&c);
    layout_free(&a);
    layout_free(&b);
    free(major);
    free(copy);
    free(major_end);
    free(moved_end);
    free(part);
    return st;
}

typedef struct grid_key {
    long major, minor, i;
} grid_key;

static int grid_key_cmp(const void *a, const void *b)
{
    const grid_key *x = a, *y = b;
    if (x->major != y->major)
        return x->major < y->major ? -1 : 1;
    if (x->minor != y->minor)
        return x->minor < y->minor ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Equal-width interval of `row` among dim rows cut into k (see codegen_origin). */
static long grid_cell(int row, int dim, long k)
{
    return (long)row * k / dim;
}

/* The rules `rule` of f in the order of equal-width blocking (see codegen_origin), blocks
 * and kernels numbered densely into y. With major_cell NULL, each rule's major cube is the
 * one its rows fall in; else it is major_label[i], whose per-axis intervals are
 * major_cell[major_label[i]], and a row outside them goes to the nearest minor interval;
 * with `scale`, major cube k has scale[k] times the minor intervals on the R axis. */
static cky_status layout_grid(const codegen_family *f, codegen_shape shape,
                              const codegen_rule *rule, const int *major_label,
                              const long (*major_cell)[3], const int *scale, layout *y)
{
    long n = f->nrule;
    grid_key *key = malloc((size_t)(n ? n : 1) * sizeof *key);
    y->rule = malloc((size_t)(n ? n : 1) * sizeof *y->rule);
    y->label = malloc((size_t)(n ? n : 1) * sizeof *y->label);
    y->kernel_of = malloc((size_t)(n ? n : 1) * sizeof *y->kernel_of);
    if (!key || !y->rule || !y->label || !y->kernel_of) {
        free(key);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (long i = 0; i < n; i++) {
        long major = 0, minor = 0;
        for (int a = 0; a < 3; a++) {
            int row = rule_axis(&rule[i], a), d = f->dim[a];
            long K = shape.major[a], M = shape.minor[a];
            if (scale && a == 2) /* this major cube's share of R intervals */
                M *= scale[major_label[i]];
            long cell = major_cell ? major_cell[major_label[i]][a] : grid_cell(row, d, K);
            long sub = grid_cell(row, d, K * M) - cell * M;
            sub = sub < 0 ? 0 : sub >= M ? M - 1 : sub;
            major = major * K + cell;
            minor = minor * M + sub;
        }
        if (major_cell)
            major = major_label[i];
        key[i] = (grid_key){major, minor, i};
    }
    qsort(key, (size_t)n, sizeof *key, grid_key_cmp);
    int nb = 0, nk = 0;
    for (long j = 0; j < n; j++) {
        int new_major = j == 0 || key[j].major != key[j - 1].major;
        if (j == 0 || new_major || key[j].minor != key[j - 1].minor) {
            nk += new_major;
            y->kernel_of[nb++] = nk - 1;
        }
        y->rule[j] = rule[key[j].i];
        y->label[j] = nb - 1;
    }
    y->nlabel = nb;
    free(key);
    return CKY_OK;
}

/* The equal-width candidate into *ew, the refined one into *moves and the mixed one into
 * *mixed. */
static cky_status candidates_equal_width(const codegen_family *f, codegen_shape shape,
                                         codegen_partition *ew, codegen_partition *moves,
                                         codegen_partition *mixed, codegen_partition *balanced)
{
    static const int weight[3] = {1, 1, 1};
    long n = f->nrule;
    layout a = {0}, b = {0}, m = {0}, g = {0};
    int *times = NULL;
    long *size = NULL;
    cutter c;
    long *moved_end = NULL;
    codegen_rule *rule = NULL;
    int *part = NULL, *all = NULL;
    long (*cell)[3] = NULL;
    cky_status st = cutter_init(&c, f);
    if (!st)
        st = layout_grid(f, shape, f->rule, NULL, NULL, NULL, &a);
    if (st || (st = partition_assemble(f, shape, &a, ew)))
        goto done;
    /* refined: rows moved between the major cubes, minor cubes of each major cube's grid
     * (rows from elsewhere in its edge intervals), rows moved between blocks */
    int nmajor = a.nlabel ? a.kernel_of[a.nlabel - 1] + 1 : 0;
    part = malloc((size_t)(n ? n : 1) * sizeof *part);
    all = calloc((size_t)nmajor + 1, sizeof *all);
    cell = malloc((size_t)(nmajor + 1) * sizeof *cell);
    if (!part || !all || !cell) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (long i = 0; i < n; i++) {
        int k = part[i] = a.kernel_of[a.label[i]];
        for (int x = 0; x < 3; x++)
            cell[k][x] = grid_cell(rule_axis(&a.rule[i], x), f->dim[x], shape.major[x]);
    }
    long ew_cost = codegen_parts_cost(a.rule, n, f->dim, part, weight);
    if ((st = codegen_refine_parts(a.rule, n, f->dim, part, nmajor, all, weight, REFINE_SLACK,
                                   REFINE_PASSES, 0)))
        goto done;
    if (!(st = layout_grid(f, shape, a.rule, part, (const long (*)[3])cell, NULL, &b)) &&
        !(st = layout_refine_blocks(f, &b)))
        st = partition_assemble(f, shape, &b, moves);
    /* the refined major cubes balanced: cubes over the mean + slack give rows away while the
     * reload rate stays within equal-width's */
    if (st || !(rule = malloc((size_t)(n ? n : 1) * sizeof *rule))) {
        st = st ? st : cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(rule, a.rule, (size_t)n * sizeof *rule);
    long cost = codegen_parts_cost(rule, n, f->dim, part, weight);
    if (cost < 0 || ew_cost < 0) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = codegen_refine_parts(rule, n, f->dim, part, nmajor, all, weight, REFINE_SLACK,
                                   REFINE_PASSES, ew_cost - cost)))
        goto done;
    /* balanced: those balanced major cubes, grid minor cubes (more R intervals in larger
     * cubes), rows moved between blocks */
    times = malloc((size_t)(nmajor + 1) * sizeof *times);
    size = calloc((size_t)nmajor + 1, sizeof *size);
    if (!times || !size) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (long i = 0; i < n; i++)
        size[part[i]]++;
    for (int k = 0; k < nmajor; k++)
        times[k] = minor_times(size[k], nmajor, n);
    if ((st = layout_grid(f, shape, a.rule, part, (const long (*)[3])cell, times, &g)) ||
        (st = layout_refine_blocks(f, &g)) || (st = partition_assemble(f, shape, &g, balanced)))
        goto done;
    /* mixed: the balanced major cubes, cut into spectral minor cubes */
    if ((st = group_by_part(rule, n, part, nmajor, c.tmp, &moved_end)))
        goto done;
    st = layout_minor_spectral(&c, rule, n, moved_end, nmajor, shape.minor, 1, &m);
    rule = NULL;
    if (!st && !(st = layout_refine_blocks(f, &m)))
        st = partition_assemble(f, shape, &m, mixed);
done:
    if (st) {
        codegen_partition_free(ew);
        codegen_partition_free(moves);
        codegen_partition_free(mixed);
        codegen_partition_free(balanced);
    }
    cutter_free(&c);
    layout_free(&g);
    free(times);
    free(size);
    free(rule);
    free(moved_end);
    layout_free(&a);
    layout_free(&b);
    layout_free(&m);
    free(part);
    free(all);
    free(cell);
    return st;
}

#define PARTITION_BALANCE 3 /* an even partition: no code block over 3 x the shape's mean */

static long partition_largest_block(const codegen_partition *p)
{
    long most = 0;
    for (int b = 0; b < p->nblock; b++)
        most = p->block[b].nrule > most ? p->block[b].nrule : most;
    return most;
}

static const char *const origin_names[CODEGEN_NORIGIN] = {
    "spectral", "spectral+moves", "equal-width", "equal-width+moves", "mixed", "balanced"};

const char *codegen_origin_name(codegen_origin o)
{
    return (unsigned)o < CODEGEN_NORIGIN ? origin_names[o] : "?";
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
    codegen_partition cand[CODEGEN_NORIGIN];
    memset(cand, 0, sizeof cand);
    cky_status st = candidates_spectral(f, shape, &cand[CODEGEN_SPECTRAL],
                                        &cand[CODEGEN_SPECTRAL_MOVES]);
    if (!st)
        st = candidates_equal_width(f, shape, &cand[CODEGEN_EQUAL_WIDTH],
                                    &cand[CODEGEN_EQUAL_WIDTH_MOVES], &cand[CODEGEN_MIXED],
                                    &cand[CODEGEN_BALANCED]);
    if (st) {
        for (int o = 0; o < CODEGEN_NORIGIN; o++)
            codegen_partition_free(&cand[o]);
        return st;
    }
    const codegen_partition *ew = &cand[CODEGEN_EQUAL_WIDTH];
    double naive_reload = ew->reload_rate;
    long naive_loads = ew->loads;
    long cubes = 1;
    for (int a = 0; a < 3; a++)
        cubes *= (long)shape.major[a] * shape.minor[a];
    long most = PARTITION_BALANCE * ((f->nrule + cubes - 1) / cubes);
    int best = CODEGEN_EQUAL_WIDTH, best_even = partition_largest_block(ew) <= most;
    for (int o = 0; o < CODEGEN_NORIGIN; o++) {
        const codegen_partition *c = &cand[o], *b = &cand[best];
        if (c->reload_rate > ew->reload_rate || c->loads > ew->loads)
            continue; /* not eligible */
        int even = partition_largest_block(c) <= most;
        if (even != best_even) {
            if (even)
                best = o, best_even = 1;
            continue;
        }
        if (c->loads < b->loads || (c->loads == b->loads && c->reload_rate < b->reload_rate) ||
            (c->loads == b->loads && c->reload_rate == b->reload_rate && o < best))
            best = o;
    }
    *out = cand[best];
    memset(&cand[best], 0, sizeof cand[best]);
    out->origin = (codegen_origin)best;
    out->naive_reload_rate = naive_reload;
    out->naive_loads = naive_loads;
    for (int o = 0; o < CODEGEN_NORIGIN; o++) {
        out->candidate_reload[o] = o == best ? out->reload_rate : cand[o].reload_rate;
        out->candidate_loads[o] = o == best ? out->loads : cand[o].loads;
    }
    for (int o = 0; o < CODEGEN_NORIGIN; o++)
        codegen_partition_free(&cand[o]);
    return CKY_OK;
}

void codegen_partition_free(codegen_partition *p)
{
    free(p->rule);
    free(p->kernel);
    free(p->block);
    memset(p, 0, sizeof *p);
}
