/* gpu_tables: the grammar's rule tables (gpu_rules, gpu.h): the CSR arrays built from the
 * grammar on host threads, and their upload. */
#include "gpu.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/gpu_check.h"
#include "../util/workers.h"

typedef struct bin_entry {
    int l, r;
    float w;
} bin_entry;

typedef struct un_entry {
    int c;
    float w;
} un_entry;

static int cmp_bin(const void *a, const void *b)
{
    const bin_entry *x = a, *y = b;
    if (x->l != y->l)
        return x->l < y->l ? -1 : 1;
    return (x->r > y->r) - (x->r < y->r);
}

static int cmp_un(const void *a, const void *b)
{
    const un_entry *x = a, *y = b;
    return (x->c > y->c) - (x->c < y->c);
}

void gpu_rules_free(gpu_rules *c)
{
    if (!c)
        return;
    free(c->sym);
    free(c->sub_offset);
    free(c->bin_first);
    free(c->bin_left);
    free(c->bin_right);
    free(c->bin_w);
    free(c->un_first);
    free(c->un_child);
    free(c->un_w);
    memset(c, 0, sizeof *c);
}

/* Turn per-parent counts first[p + 1] into offsets first[p] (first[0] = 0). */
static void prefix_sum(int *first, int nsub)
{
    first[0] = 0;
    for (int p = 0; p < nsub; p++)
        first[p + 1] += first[p];
}

/* Count parent symbol P's finite binary entries per parent substate into first[p + 1]. */
static void count_binary(const grammar *g, int P, int *first)
{
    int np = g->nsub[P], poff = g->sub_offset[P];
    for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
        const grammar_binary *r = &g->binary[b];
        for (int row = 0; row < r->nrow; row++)
            for (int p = 0; p < np; p++)
                if (r->score[(size_t)row * np + p] != -INFINITY)
                    first[poff + p + 1]++;
    }
}

/* Place parent symbol P's binary entries (first: the offsets) and sort each substate's by
 * (left, right). Returns 0, or -1 when out of memory. */
static int place_binary(const grammar *g, int P, const int *first, bin_entry *be)
{
    int np = g->nsub[P], poff = g->sub_offset[P];
    int *pos = malloc((size_t)(np ? np : 1) * sizeof *pos);
    if (!pos)
        return -1;
    memcpy(pos, first + poff, (size_t)np * sizeof *pos);
    for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
        const grammar_binary *r = &g->binary[b];
        int loff = g->sub_offset[r->left], roff = g->sub_offset[r->right];
        for (int row = 0; row < r->nrow; row++)
            for (int p = 0; p < np; p++) {
                double w = r->score[(size_t)row * np + p];
                if (w != -INFINITY)
                    be[pos[p]++] = (bin_entry){loff + r->row_l[row], roff + r->row_r[row],
                                               (float)w};
            }
    }
    for (int p = poff; p < poff + np; p++)
        if (first[p + 1] - first[p] > 1)
            qsort(be + first[p], (size_t)(first[p + 1] - first[p]), sizeof *be, cmp_bin);
    free(pos);
    return 0;
}

/* The binary entries' two passes over the parent symbols, on a few host threads (the
 * rules' dense tables of eng-sm6-shape are 25 million scores). */
typedef struct bin_job {
    const grammar *g;
    int *first;
    bin_entry *be; /* NULL: the counting pass */
    int next;      /* the next parent symbol (atomic) */
    int failed;    /* a worker ran out of memory */
} bin_job;

static void *bin_worker(void *arg)
{
    bin_job *j = arg;
    for (int P; (P = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->g->nsym;) {
        if (!j->be)
            count_binary(j->g, P, j->first);
        else if (place_binary(j->g, P, j->first, j->be))
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int bin_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

static void count_unary(const grammar *g, int *first, long *total)
{
    long n = 0;
    for (int u = 0; u < g->nunary; u++) {
        const grammar_unary *r = &g->unary[u];
        int np = g->nsub[r->parent], poff = g->sub_offset[r->parent];
        for (int c = 0; c < g->nsub[r->child]; c++)
            for (int p = 0; p < np; p++)
                if (r->score[(size_t)c * np + p] != -INFINITY) {
                    first[poff + p + 1]++;
                    n++;
                }
    }
    *total = n;
}

cky_status gpu_rules_build(const grammar *g, gpu_rules *out)
{
    int nsub = g->nsub_total;
    gpu_rules c = {0};
    bin_entry *be = NULL;
    un_entry *ue = NULL;
    int *pos = NULL;
    c.nsym = g->nsym;
    c.nsub = nsub;
    c.root = g->sub_offset[0];
    c.sym = malloc((size_t)nsub * sizeof *c.sym);
    c.sub_offset = malloc((size_t)g->nsym * sizeof *c.sub_offset);
    c.bin_first = calloc((size_t)nsub + 1, sizeof *c.bin_first);
    c.un_first = calloc((size_t)nsub + 1, sizeof *c.un_first);
    pos = malloc(((size_t)nsub + 1) * sizeof *pos);
    if (!c.sym || !c.sub_offset || !c.bin_first || !c.un_first || !pos)
        goto nomem;
    for (int s = 0; s < g->nsym; s++) {
        c.sub_offset[s] = g->sub_offset[s];
        for (int k = 0; k < g->nsub[s]; k++)
            c.sym[g->sub_offset[s] + k] = s;
    }

    /* binary: count, place in grammar order, sort each parent's entries by (left, right),
     * a parent symbol at a time on a few threads */
    long nb = 0, nu;
    bin_job job = {.g = g, .first = c.bin_first};
    workers_run(bin_threads(), bin_worker, &job);
    for (int p = 0; p < nsub; p++)
        nb += c.bin_first[p + 1];
    count_unary(g, c.un_first, &nu);
    if (nb > INT_MAX || nu > INT_MAX) {
        gpu_rules_free(&c);
        free(pos);
        return cky_fail(CKY_ERR_LIMIT, "rule tables: %ld binary and %ld unary substate "
                        "rules, more than %d", nb, nu, INT_MAX);
    }
    c.nbinary = (int)nb;
    c.nunary = (int)nu;
    prefix_sum(c.bin_first, nsub);
    prefix_sum(c.un_first, nsub);
    be = malloc((size_t)(nb ? nb : 1) * sizeof *be);
    ue = malloc((size_t)(nu ? nu : 1) * sizeof *ue);
    c.bin_left = malloc((size_t)(nb ? nb : 1) * sizeof *c.bin_left);
    c.bin_right = malloc((size_t)(nb ? nb : 1) * sizeof *c.bin_right);
    c.bin_w = malloc((size_t)(nb ? nb : 1) * sizeof *c.bin_w);
    c.un_child = malloc((size_t)(nu ? nu : 1) * sizeof *c.un_child);
    c.un_w = malloc((size_t)(nu ? nu : 1) * sizeof *c.un_w);
    if (!be || !ue || !c.bin_left || !c.bin_right || !c.bin_w || !c.un_child || !c.un_w)
        goto nomem;

    job.be = be;
    job.next = 0;
    workers_run(bin_threads(), bin_worker, &job);
    if (job.failed)
        goto nomem;
    for (int e = 0; e < c.nbinary; e++) {
        c.bin_left[e] = be[e].l;
        c.bin_right[e] = be[e].r;
        c.bin_w[e] = be[e].w;
    }

    /* closed unaries: likewise, sorted by child */
    memcpy(pos, c.un_first, ((size_t)nsub + 1) * sizeof *pos);
    for (int u = 0; u < g->nunary; u++) {
        const grammar_unary *r = &g->unary[u];
        int np = g->nsub[r->parent], poff = g->sub_offset[r->parent];
        int coff = g->sub_offset[r->child];
        for (int ci = 0; ci < g->nsub[r->child]; ci++)
            for (int p = 0; p < np; p++) {
                double w = r->score[(size_t)ci * np + p];
                if (w != -INFINITY)
                    ue[pos[poff + p]++] = (un_entry){coff + ci, (float)w};
            }
    }
    for (int p = 0; p < nsub; p++) {
        int a = c.un_first[p], z = c.un_first[p + 1];
        if (z - a > 1)
            qsort(ue + a, (size_t)(z - a), sizeof *ue, cmp_un);
    }
    for (int e = 0; e < c.nunary; e++) {
        c.un_child[e] = ue[e].c;
        c.un_w[e] = ue[e].w;
    }
    free(be);
    free(ue);
    free(pos);
    *out = c;
    return CKY_OK;

nomem:
    free(be);
    free(ue);
    free(pos);
    gpu_rules_free(&c);
    return cky_fail(CKY_ERR_NOMEM, "rule tables: out of memory");
}

/* Free the device arrays of a table (device pointers, cudaFree(NULL) is fine). */
static void csr_free_device(gpu_rules *d)
{
    void *ptrs[] = {d->sym,      d->sub_offset, d->bin_first, d->bin_left, d->bin_right,
                    d->bin_w,    d->un_first,   d->un_child,  d->un_w};
    for (size_t k = 0; k < sizeof ptrs / sizeof *ptrs; k++)
        if (ptrs[k])
            cudaFree(ptrs[k]);
    memset(d, 0, sizeof *d);
}

/* Copy `bytes` (at least one byte allocated) of host `src` into a new device array *dst. */
static cky_status upload(void **dst, const void *src, size_t bytes)
{
    GPU_CHECK(cudaMalloc(dst, bytes ? bytes : 1));
    if (bytes)
        GPU_CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return CKY_OK;
}

static cky_status upload_all(const gpu_rules *h, gpu_rules *d)
{
    size_t ni = sizeof(int), nf = sizeof(float), nsub1 = (size_t)h->nsub + 1;
    size_t nb = (size_t)h->nbinary, nu = (size_t)h->nunary;
    cky_status st;
    if ((st = upload((void **)&d->sym, h->sym, (size_t)h->nsub * ni)) ||
        (st = upload((void **)&d->sub_offset, h->sub_offset, (size_t)h->nsym * ni)) ||
        (st = upload((void **)&d->bin_first, h->bin_first, nsub1 * ni)) ||
        (st = upload((void **)&d->bin_left, h->bin_left, nb * ni)) ||
        (st = upload((void **)&d->bin_right, h->bin_right, nb * ni)) ||
        (st = upload((void **)&d->bin_w, h->bin_w, nb * nf)) ||
        (st = upload((void **)&d->un_first, h->un_first, nsub1 * ni)) ||
        (st = upload((void **)&d->un_child, h->un_child, nu * ni)) ||
        (st = upload((void **)&d->un_w, h->un_w, nu * nf)))
        return st;
    return CKY_OK;
}

cky_status gpu_rule_tables_upload(const gpu_rules *h, gpu_rule_tables **out)
{
    *out = NULL;
    gpu_rule_tables *t = calloc(1, sizeof *t);
    if (!t)
        return cky_fail(CKY_ERR_NOMEM, "rule tables: out of memory");
    t->dev.nsym = h->nsym;
    t->dev.nsub = h->nsub;
    t->dev.root = h->root;
    t->dev.nbinary = h->nbinary;
    t->dev.nunary = h->nunary;
    cky_status st = upload_all(h, &t->dev);
    if (st) {
        gpu_rule_tables_free(t);
        return st;
    }
    *out = t;
    return CKY_OK;
}

cky_status gpu_rule_tables_new(const grammar *g, gpu_rule_tables **out)
{
    *out = NULL;
    gpu_rules h = {0};
    cky_status st = gpu_rules_build(g, &h);
    if (!st)
        st = gpu_rule_tables_upload(&h, out);
    gpu_rules_free(&h);
    return st;
}

void gpu_rule_tables_free(gpu_rule_tables *t)
{
    if (!t)
        return;
    csr_free_device(&t->dev);
    free(t);
}
