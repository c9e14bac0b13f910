/* plan: work items by span length and family (see plan.h). */
#include "plan.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../chart/chart.h"
#include "../util/workers.h"

long plan_cell_items(codegen_family_id f, int d)
{
    long m = 0;
    for (int sp = 1; sp < d; sp++)
        m += codegen_family_has_split(f, 0, sp, d);
    return m;
}

void plan_count_items(int n, long count[CODEGEN_NFAMILY])
{
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        count[f] = 0;
        for (int d = 2; d <= n; d++)
            count[f] += (long)(n - d + 1) * plan_cell_items((codegen_family_id)f, d);
    }
}

void plan_free(plan *p)
{
    free(p->len);
    free(p->cell0);
    free(p->bin);
    free(p->cell);
    free(p->pull);
    memset(p, 0, sizeof *p);
}

cky_status plan_new(const int *len, int n, plan *p)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    for (int k = 0; k < n; k++)
        p->maxn = len[k] > p->maxn ? len[k] : p->maxn;
    p->len = malloc((size_t)(n ? n : 1) * sizeof *p->len);
    p->cell0 = malloc((size_t)(n ? n : 1) * sizeof *p->cell0);
    p->bin = calloc((size_t)(p->maxn + 1) * CODEGEN_NFAMILY, sizeof *p->bin);
    p->cell = calloc((size_t)p->maxn + 1, sizeof *p->cell);
    long *total = calloc((size_t)p->maxn + 1, sizeof *total);
    if (!p->len || !p->cell0 || !p->bin || !p->cell || !total) {
        free(total);
        plan_free(p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the plan of %d sentences", n);
    }
    for (int d = 2; d <= p->maxn; d++) { /* total[m]: the items of a sentence of m words */
        long per_cell = 0;
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            per_cell += plan_cell_items((codegen_family_id)f, d);
        for (int m = d; m <= p->maxn; m++)
            total[m] += (m - d + 1) * per_cell;
    }
    for (int k = 0; k < n; k++) {
        p->nitem += total[len[k]];
        p->len[k] = len[k];
        p->cell0[k] = p->ncell;
        p->ncell += (long)chart_ncells(len[k]);
        p->nword += len[k];
        p->nnode += 2L * len[k] - 1;
    }
    long m = 0;
    for (int d = 2; d <= p->maxn; d++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            long per_cell = plan_cell_items((codegen_family_id)f, d);
            plan_segment *sg = &p->bin[d * CODEGEN_NFAMILY + f];
            sg->first = m;
            for (int k = 0; k < n; k++)
                m += len[k] >= d ? (len[k] - d + 1) * per_cell : 0;
            sg->count = m - sg->first;
        }
    m = 0;
    for (int d = 1; d <= p->maxn; d++) {
        p->cell[d].first = m;
        for (int k = 0; k < n; k++)
            m += len[k] >= d ? len[k] - d + 1 : 0;
        p->cell[d].count = m - p->cell[d].first;
    }
    free(total);
    return CKY_OK;
}

void plan_fill_items(const plan *p, int d, codegen_family_id f, int *left, int *right,
                     int *parent, int *sent)
{
    int lo = d, hi = 0; /* the left widths of the family's splits lie in [lo, hi] (they
                           depend on d alone) */
    for (int a = 1; a < d; a++)
        if (codegen_family_has_split(f, 0, a, d)) {
            lo = a < lo ? a : lo;
            hi = a;
        }
    long m = 0;
    for (int k = 0; k < p->n; k++) {
        int base = (int)p->cell0[k], len = p->len[k];
        for (int i = 0; i + d <= len; i++) {
            int pc = base + (int)chart_cell(len, i, i + d);
            for (int sp = i + lo; sp <= i + hi; sp++)
                if (codegen_family_has_split(f, i, sp, i + d)) {
                    left[m] = base + (int)chart_cell(len, i, sp);
                    right[m] = base + (int)chart_cell(len, sp, i + d);
                    parent[m] = pc;
                    if (sent)
                        sent[m] = k;
                    m++;
                }
        }
    }
    CKY_ASSERT(m == p->bin[d * CODEGEN_NFAMILY + f].count,
               "span %d family %s: %ld items listed, %ld counted", d, codegen_family_name(f),
               m, p->bin[d * CODEGEN_NFAMILY + f].count);
}

void plan_fill_cells(const plan *p, int d, int *cells)
{
    long m = 0;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i + d <= p->len[k]; i++)
            cells[m++] = (int)(p->cell0[k] + (long)chart_cell(p->len[k], i, i + d));
    CKY_ASSERT(m == p->cell[d].count, "span %d: %ld cells listed, %ld counted", d, m,
               p->cell[d].count);
}

/* Walk the pull list (d, f, side) (plan.h): store each item's index into item[] unless
 * item is NULL; the entries. off[d2], per[d2] (maxn + 1 each) and the parent spans par[]
 * (maxn) are scratch. */
static long pull_walk(const plan *p, int d, codegen_family_id f, int side, int *item,
                      long *off, long *per, int *par)
{
    int npar = 0; /* the parent spans d2 with a split of family f here, ascending: the
                     split's widths (d and d2 - d) depend on d and d2 alone */
    for (int d2 = d + 1; d2 <= p->maxn; d2++) {
        off[d2] = 0;
        per[d2] = plan_cell_items(f, d2);
        if (side ? codegen_family_has_split(f, 0, d2 - d, d2)
                 : codegen_family_has_split(f, 0, d, d2))
            par[npar++] = d2;
    }
    long m = 0;
    for (int k = 0; k < p->n; k++) {
        int len = p->len[k];
        for (int i = 0; i + d <= len; i++)
            for (int q = 0; q < npar && par[q] <= len; q++) {
                /* the parent: (i, i + d2) over a left child, (i + d - d2, i + d) over a
                 * right one; the item's rank among its parent's splits (one split per
                 * cell but in family XX) */
                int d2 = par[q], h = side ? i + d - d2 : i;
                if (h < 0 || h + d2 > len)
                    continue;
                int sp = side ? i : i + d;
                long rank = f == CODEGEN_XX ? sp - h - 1 : 0;
                if (item)
                    item[m] = (int)(p->bin[d2 * CODEGEN_NFAMILY + f].first + off[d2] +
                                    h * per[d2] + rank);
                m++;
            }
        for (int d2 = d + 1; d2 <= len; d2++)
            off[d2] += (len - d2 + 1) * per[d2];
    }
    return m;
}

/* Walking every pull list (d, f, side) of a plan on host threads: counting (item NULL: the
 * counts into p->pull) or filling (item: each list at its first). */
typedef struct pull_job {
    plan *p;
    int *item;
    long *off; /* each worker's 2 (maxn + 1) offsets */
    int *par;  /* and maxn + 1 parents */
} pull_job;

/* Pull list x + CODEGEN_NFAMILY * 2, x = (d * CODEGEN_NFAMILY + f) * 2 + side, from d = 1. */
static cky_status pull_list(void *arg, long k, int worker)
{
    pull_job *j = arg;
    plan *p = j->p;
    int x = (int)k + CODEGEN_NFAMILY * 2;
    long *off = j->off + (size_t)worker * 2 * (p->maxn + 1);
    int *par = j->par + (size_t)worker * (p->maxn + 1);
    int d = x / (CODEGEN_NFAMILY * 2), f = x / 2 % CODEGEN_NFAMILY, side = x % 2;
    plan_segment *sg = &p->pull[x];
    long m = pull_walk(p, d, (codegen_family_id)f, side, j->item ? j->item + sg->first : NULL,
                       off, off + p->maxn + 1, par);
    if (!j->item)
        sg->count = m;
    else
        CKY_ASSERT(m == sg->count, "pull list (%d, %s, %d): %ld listed, %ld counted", d,
                   codegen_family_name((codegen_family_id)f), side, m, sg->count);
    return CKY_OK;
}

static cky_status walk_pulls(plan *p, int threads, int *item)
{
    int lists = (p->maxn - 1) * CODEGEN_NFAMILY * 2;
    if (lists <= 0)
        return CKY_OK;
    threads = threads < 1 ? 1 : threads < lists ? threads : lists;
    pull_job j = {p, item, malloc((size_t)threads * 2 * (p->maxn + 1) * sizeof *j.off),
                  malloc((size_t)threads * (p->maxn + 1) * sizeof *j.par)};
    cky_status st = j.off && j.par ? workers_for(threads, lists, pull_list, &j)
                                   : cky_fail(CKY_ERR_NOMEM, "out of memory for the pull lists");
    free(j.off);
    free(j.par);
    return st;
}

cky_status plan_check_pull(const plan *p)
{
    if (p->nitem <= PLAN_PULL_ITEMS)
        return CKY_OK;
    return cky_fail(CKY_ERR_LIMIT, "%ld work items (%d words), more than the %ld that the "
                    "outside pass numbers (max-rule: a sentence of at most %d words)",
                    p->nitem, p->maxn, PLAN_PULL_ITEMS, plan_pull_words());
}

cky_status plan_add_pull(plan *p, int threads)
{
    cky_status st = plan_check_pull(p);
    if (st)
        return st;
    size_t nseg = (size_t)(p->maxn + 1) * CODEGEN_NFAMILY * 2;
    free(p->pull);
    p->pull = calloc(nseg, sizeof *p->pull);
    if (!p->pull)
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the pull lists of a plan");
    st = walk_pulls(p, threads, NULL);
    if (st)
        return st;
    long m = 0;
    for (size_t x = 0; x < nseg; x++) {
        p->pull[x].first = m;
        m += p->pull[x].count;
    }
    p->npull = m;
    CKY_ASSERT(m == 2 * p->nitem, "%ld pull entries for %ld items", m, p->nitem);
    return CKY_OK;
}

int plan_pull_words(void)
{
    /* items(n + 1) = items(n) + the items of one cell of each span 2 .. n + 1 */
    long items = 0, cells = 0;
    int n = 1;
    for (;;) {
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            cells += plan_cell_items((codegen_family_id)f, n + 1);
        if (items + cells > PLAN_PULL_ITEMS)
            return n;
        items += cells;
        n++;
    }
}

cky_status plan_fill_pulls(const plan *p, int threads, int *item)
{
    return walk_pulls((plan *)p, threads, item);
}

long plan_root_cell(const plan *p, int k)
{
    return p->cell0[k] + (long)chart_cell(p->len[k], 0, p->len[k]);
}
