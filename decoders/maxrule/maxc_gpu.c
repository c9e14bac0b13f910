/* maxc_gpu: max-c scores and trees on the device (see maxc_gpu.h). */
#include "maxc_gpu.h"

#include <stdlib.h>

cky_status gpu_maxc_new(gpu_dev *d, gpu_maxc **out)
{
    gpu_maxc *m = calloc(1, sizeof *m);
    if (!m)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    m->d = d;
    m->stage_sums = gpu_dev_stage(d, "max-c sums");
    m->stage_cells = gpu_dev_stage(d, "max-c cells");
    cky_status st = maxc_host_new(d->g, &m->host);
    if (!st && m->host->t.nun > MAXC_UNARIES_MAX)
        st = cky_fail(CKY_ERR_UNSUPPORTED, "%s: %d closed unary rules, more than the gpu "
                      "engine's max-c takes (%d; the cpu engine has no such limit)",
                      d->g->source, m->host->t.nun, MAXC_UNARIES_MAX);
    if (!st)
        st = GPU_STATUS(cudaMalloc(&m->d_tables, m->host->bytes));
    if (!st)
        st = GPU_STATUS(cudaMemcpy(m->d_tables, m->host->block, m->host->bytes,
                                   cudaMemcpyHostToDevice));
    if (st) {
        gpu_maxc_free(m);
        return st;
    }
    m->t = maxc_tables_at(m->host, m->d_tables);
    *out = m;
    return CKY_OK;
}

void gpu_maxc_free(gpu_maxc *m)
{
    if (!m)
        return;
    maxc_host_free(m->host);
    cudaFree(m->d_tables);
    gpu_buffer_free(&m->arrays, 0);
    gpu_buffer_free(&m->d_list, 0);
    gpu_buffer_free(&m->h_list, 1);
    gpu_buffer_free(&m->d_nodes, 0);
    gpu_buffer_free(&m->d_stack, 0);
    gpu_buffer_free(&m->d_out, 0);
    gpu_buffer_free(&m->scratch, 0);
    gpu_buffer_free(&m->h_out, 1);
    gpu_buffer_free(&m->h_nodes, 1);
    free(m);
}

/* 6 arrays of nsym values, the cell in the list (3 ints), and the node codes and stack of
 * the walks (2 x 4 (8n + 8) bytes per sentence, at most 128 per cell). */
size_t gpu_maxc_cell_bytes(const gpu_dev *d) { return (size_t)d->g->nsym * 32 + 12 + 128; }

/* Ints before the node offsets in the lists (an even number: 8-byte aligned). */
static size_t node0_at(const plan *p) { return (3 * (size_t)p->ncell + 2 * p->n + 1) & ~(size_t)1; }

/* The lists of plan p in m->h_list: cells by span (and the first of each span in first[]),
 * the sentences, the node offsets. */
static void fill_lists(gpu_maxc *m, const plan *p, long *first)
{
    int *cells = m->h_list.p;
    long at = 0;
    for (int d = 1; d <= p->maxn; d++) {
        first[d] = at;
        for (int k = 0; k < p->n; k++)
            for (int i = 0; i + d <= p->len[k]; i++, at++) {
                cells[3 * at] = (int)p->cell0[k];
                cells[3 * at + 1] = p->len[k];
                cells[3 * at + 2] = i;
            }
    }
    first[p->maxn + 1] = at;
    CKY_ASSERT(at == p->ncell, "the plan's cells are its sentences' charts");
    int *sent = cells + 3 * at;
    long long *node0 = (long long *)(cells + node0_at(p)), total = 0;
    for (int k = 0; k < p->n; k++) {
        sent[2 * k] = (int)p->cell0[k];
        sent[2 * k + 1] = p->len[k];
        node0[k] = total;
        total += maxc_nodes_max(p->len[k]);
    }
}

cky_status gpu_maxc_run(gpu_maxc *m, const gpu_sum_layers *s, const plan *p)
{
    gpu_dev *d = m->d;
    size_t vals = (size_t)p->ncell * d->g->nsym;
    long long nodes_max = 0;
    for (int k = 0; k < p->n; k++)
        nodes_max += maxc_nodes_max(p->len[k]);
    size_t list_bytes = node0_at(p) * sizeof(int) + (size_t)p->n * sizeof(long long);
    long *first = malloc(((size_t)p->maxn + 2) * sizeof *first);
    cky_status st = first ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (st || (st = gpu_buffer_need(&m->arrays, vals * 32, 0)) ||
        (st = gpu_buffer_need(&m->d_list, list_bytes, 0)) ||
        (st = gpu_buffer_need(&m->h_list, list_bytes, 1)) ||
        (st = gpu_buffer_need(&m->d_nodes, (size_t)nodes_max * sizeof(int), 0)) ||
        (st = gpu_buffer_need(&m->d_stack, (size_t)nodes_max * sizeof(int), 0)) ||
        (st = gpu_buffer_need(&m->h_nodes, (size_t)nodes_max * sizeof(int), 1)) ||
        (st = gpu_buffer_need(&m->d_out, (size_t)p->n * 24, 0)) ||
        (st = gpu_buffer_need(&m->h_out, (size_t)p->n * 24, 1))) {
        free(first);
        return st;
    }
    fill_lists(m, p, first);
    double *sc = m->arrays.p;
    int *ix = (int *)(sc + 2 * vals);
    maxc_layers y = {d->nsub, s->post, s->opre, s->pre, s->epost, s->eopre, s->epre,
                     sc, sc + vals, ix, ix + vals, ix + 2 * vals, ix + 3 * vals};
    int *dl = m->d_list.p;
    const int *sent = dl + 3 * first[p->maxn + 1];
    const long long *node0 = (const long long *)(dl + node0_at(p));
    int *res = m->d_out.p;
    double *score = (double *)(res + 4 * p->n);
#define TRY(call)                                                                          \
    do {                                                                                   \
        if (!st)                                                                           \
            st = GPU_STATUS(call);                                                         \
    } while (0)
    TRY(cudaMemcpyAsync(dl, m->h_list.p, list_bytes, cudaMemcpyHostToDevice, d->stream));
    long most = 0; /* the most cells of a span */
    for (int span = 2; span <= p->maxn; span++)
        most = first[span + 1] - first[span] > most ? first[span + 1] - first[span] : most;
    size_t scratch = maxc_scratch_bytes(&m->t, (int)most);
    if (scratch && (st = gpu_buffer_need(&m->scratch, scratch, 0))) {
        free(first);
        return st;
    }
    for (int span = 1; span <= p->maxn && !st; span++) {
        const int *cells = dl + 3 * first[span];
        int n = (int)(first[span + 1] - first[span]);
        if (span > 1) {
            st = gpu_dev_prof_begin(d);
            TRY(maxc_launch_sums(&m->t, &y, cells, n, span, m->scratch.p, d->stream));
            if (!st)
                st = gpu_dev_prof_end(d, m->stage_sums);
        }
        if (!st)
            st = gpu_dev_prof_begin(d);
        TRY(maxc_launch_span(&m->t, &y, cells, n, span, d->stream));
        if (!st)
            st = gpu_dev_prof_end(d, m->stage_cells);
    }
    TRY(maxc_launch_walk(&m->t, &y, sent, p->n, node0, m->d_nodes.p, m->d_stack.p, res, score,
                          d->stream));
    TRY(cudaMemcpyAsync(m->h_nodes.p, m->d_nodes.p, (size_t)nodes_max * sizeof(int),
                        cudaMemcpyDeviceToHost, d->stream));
    TRY(cudaMemcpyAsync(m->h_out.p, res, (size_t)p->n * 24, cudaMemcpyDeviceToHost, d->stream));
    TRY(cudaStreamSynchronize(d->stream));
#undef TRY
    free(first);
    if (st)
        return st;
    m->node0 = (const long long *)((const int *)m->h_list.p + node0_at(p));
    m->nodes = m->h_nodes.p;
    m->result = m->h_out.p;
    m->score = (const double *)(m->result + 4 * p->n);
    return CKY_OK;
}
