/* plan: work items by span length and family (see plan.h). */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "../chart/chart.h"

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
    if (!p->len || !p->cell0 || !p->bin || !p->cell) {
        plan_free(p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the plan of %d sentences", n);
    }
    for (int k = 0; k < n; k++) {
        long c[CODEGEN_NFAMILY];
        plan_count_items(len[k], c);
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            p->nitem += c[f];
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
    return CKY_OK;
}

void plan_fill_items(const plan *p, int d, codegen_family_id f, int *left, int *right,
                     int *parent, int *sent)
{
    long m = 0;
    for (int k = 0; k < p->n; k++) {
        int base = (int)p->cell0[k], len = p->len[k];
        for (int i = 0; i + d <= len; i++)
            for (int sp = i + 1; sp < i + d; sp++)
                if (codegen_family_has_split(f, i, sp, i + d)) {
                    left[m] = base + (int)chart_cell(len, i, sp);
                    right[m] = base + (int)chart_cell(len, sp, i + d);
                    parent[m] = base + (int)chart_cell(len, i, i + d);
                    if (sent)
                        sent[m] = k;
                    m++;
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

long plan_root_cell(const plan *p, int k)
{
    return p->cell0[k] + (long)chart_cell(p->len[k], 0, p->len[k]);
}
