/* viterbi_gpu: the Viterbi decoder's device part (see viterbi_gpu.h). */
#include "viterbi_gpu.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../util/clock.h"

/* The launcher hands nodes to the device as 5 ints each: the layout must match. */
_Static_assert(sizeof(viterbi_node) == 5 * sizeof(int), "viterbi_node is 5 packed ints");
_Static_assert(offsetof(viterbi_node, width) == 0 && offsetof(viterbi_node, top_sym) == 4 &&
                   offsetof(viterbi_node, top_sub) == 8 && offsetof(viterbi_node, bot_sym) == 12 &&
                   offsetof(viterbi_node, bot_sub) == 16,
               "viterbi_node field order");

struct gpu_viterbi {
    gpu_engine *e;
    int stage;                 /* its profiling stage, "viterbi" */
    int *d_root_row;           /* { ROOT's global id } */
    gpu_buffer d_meta, h_meta; /* n, node0, root score (float), cell0 (long long) */
    gpu_buffer d_nodes, h_nodes; /* viterbi nodes, then statuses */
    /* the outputs of the parse under way */
    double *root;
    viterbi_node **nodes;
    chart **charts;
    unsigned char *out_of_range;
};

/* The per-sentence arrays of a sub-batch of n sentences in one buffer (host or device). */
typedef struct meta {
    long long *cell0; /* first cell */
    int *n;           /* words */
    int *node0;       /* first viterbi node */
    float *root;      /* root score */
} meta;

static size_t meta_bytes(int n) { return (size_t)n * (sizeof(long long) + 3 * sizeof(int)); }

static meta meta_at(void *base, int n)
{
    meta m;
    m.cell0 = base;
    m.n = (int *)(m.cell0 + n);
    m.node0 = m.n + n;
    m.root = (float *)(m.node0 + n);
    return m;
}

cky_status gpu_viterbi_new(gpu_engine *e, gpu_viterbi **out)
{
    gpu_viterbi *v = calloc(1, sizeof *v);
    if (!v)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    v->e = e;
    v->stage = gpu_dev_stage(gpu_engine_dev(e), "viterbi");
    int root = gpu_engine_dev(e)->g->sub_offset[0];
    cudaError_t err = cudaMalloc((void **)&v->d_root_row, sizeof root);
    if (err == cudaSuccess)
        err = cudaMemcpy(v->d_root_row, &root, sizeof root, cudaMemcpyHostToDevice);
    cky_status st = GPU_STATUS(err);
    if (st) {
        gpu_viterbi_free(v);
        return st;
    }
    *out = v;
    return CKY_OK;
}

void gpu_viterbi_free(gpu_viterbi *v)
{
    if (!v)
        return;
    cudaFree(v->d_root_row);
    gpu_buffer_free(&v->d_meta, 0);
    gpu_buffer_free(&v->d_nodes, 0);
    gpu_buffer_free(&v->h_meta, 1);
    gpu_buffer_free(&v->h_nodes, 1);
    free(v);
}

/* gpu_decoder.sentence_bytes: the nodes, the status and the per-sentence arrays. */
static size_t sentence_bytes(void *ctx, int n)
{
    return (size_t)(2 * n) * (sizeof(viterbi_node) + sizeof(int)) + 32;
}

/* gpu_decoder.prepare: room for the sub-batch, its per-sentence arrays uploaded. */
static cky_status prepare(void *ctx, gpu_dev *d, const plan *p, const sentence *s, int first)
{
    gpu_viterbi *v = ctx;
    int n = p->n;
    size_t node_bytes = (size_t)p->nnode * sizeof(viterbi_node) + (size_t)n * sizeof(int);
    cky_status st;
    if ((st = gpu_buffer_need(&v->h_meta, meta_bytes(n), 1)) ||
        (st = gpu_buffer_need(&v->h_nodes, node_bytes, 1)) ||
        (st = gpu_buffer_need(&v->d_meta, meta_bytes(n), 0)) ||
        (st = gpu_buffer_need(&v->d_nodes, node_bytes, 0)))
        return st;
    meta hm = meta_at(v->h_meta.p, n);
    long nd = 0;
    for (int k = 0; k < n; k++) {
        hm.n[k] = p->len[k];
        hm.node0[k] = (int)nd;
        hm.cell0[k] = p->cell0[k];
        nd += 2L * p->len[k] - 1;
    }
    GPU_CHECK(cudaMemcpyAsync(v->d_meta.p, v->h_meta.p, meta_bytes(n), cudaMemcpyHostToDevice,
                              d->stream));
    return CKY_OK;
}

/* The sentences' charts copied back from the device into new host charts. */
static cky_status download_charts(gpu_viterbi *v, gpu_dev *d, const plan *p, chart **charts)
{
    size_t nsub = (size_t)d->nsub;
    for (int k = 0; k < p->n; k++) {
        size_t cn = chart_ncells(p->len[k]) * nsub;
        float *buf = malloc(2 * cn * sizeof *buf);
        cky_status st = buf ? chart_new(p->len[k], d->nsub, d->fixed ? CHART_FIXED : CHART_FLOAT,
                                        &charts[k])
                            : cky_fail(CKY_ERR_NOMEM, "out of memory");
        if (!st)
            st = GPU_STATUS(cudaMemcpy(buf, (float *)d->pre.p + p->cell0[k] * nsub,
                                       cn * sizeof *buf, cudaMemcpyDeviceToHost));
        if (!st)
            st = GPU_STATUS(cudaMemcpy(buf + cn, (float *)d->post.p + p->cell0[k] * nsub,
                                       cn * sizeof *buf, cudaMemcpyDeviceToHost));
        for (size_t x = 0; x < cn && !st; x++) {
            charts[k]->pre[x] = buf[x];
            charts[k]->post[x] = buf[cn + x];
        }
        free(buf);
        if (st)
            return st;
    }
    return CKY_OK;
}

/* Fixed point: which sentences had a score clamped (gpu_dev.clamped, per cell). */
static cky_status download_range(gpu_viterbi *v, gpu_dev *d, const plan *p, int first)
{
    if (!d->fixed) {
        memset(v->out_of_range + first, 0, (size_t)p->n);
        return CKY_OK;
    }
    unsigned char *h = malloc((size_t)p->ncell);
    if (!h)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    cky_status st = GPU_STATUS(cudaMemcpy(h, d->clamped.p, (size_t)p->ncell,
                                          cudaMemcpyDeviceToHost));
    for (int k = 0; k < p->n && !st; k++) {
        unsigned char any = 0;
        for (size_t c = 0; c < chart_ncells(p->len[k]); c++)
            any |= h[p->cell0[k] + c];
        v->out_of_range[first + k] = any;
        if (v->charts)
            v->charts[first + k]->out_of_range = any;
    }
    free(h);
    return st;
}

/* gpu_decoder.finish: root scores, extraction, download, results. */
static cky_status finish(void *ctx, gpu_dev *d, const plan *p, int first)
{
    gpu_viterbi *v = ctx;
    int n = p->n;
    meta hm = meta_at(v->h_meta.p, n), dm = meta_at(v->d_meta.p, n);
    viterbi_node *d_nodes = v->d_nodes.p;
    int *d_status = (int *)(d_nodes + p->nnode);
    const int *roots = gpu_items_at(d->d_items.p, p).roots;
    GPU_CHECK(kernels_gather(d->post.p, d->nsub, roots, n, v->d_root_row, 1, dm.root,
                             KERNELS_TILE, d->stream)); /* one row: root[t] */
    cky_status st = gpu_dev_prof_begin(d);
    if (!st)
        st = viterbi_gpu_run(d->tables, d->pre.p, d->post.p, d->nsub, n, dm.n, dm.cell0,
                             dm.node0, d_nodes, d_status, d->fixed, d->stream);
    if (!st)
        st = gpu_dev_prof_end(d, v->stage);
    if (st)
        return st;
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    double t3 = clock_seconds();
    GPU_CHECK(cudaMemcpy(v->h_nodes.p, d_nodes, (size_t)p->nnode * sizeof(viterbi_node) +
                                                    (size_t)n * sizeof(int),
                         cudaMemcpyDeviceToHost));
    GPU_CHECK(cudaMemcpy(hm.root, dm.root, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    const viterbi_node *h_nodes = v->h_nodes.p;
    const int *status = (const int *)(h_nodes + p->nnode);
    double *root = v->root + first;
    viterbi_node **nodes = v->nodes + first;
    for (int k = 0; k < n && !st; k++) {
        nodes[k] = NULL;
        root[k] = hm.root[k];
        if (status[k] == VITERBI_GPU_NO_PARSE) {
            root[k] = -INFINITY;
            continue;
        }
        if (status[k] != VITERBI_GPU_OK) {
            st = cky_fail(CKY_ERR_CUDA, "GPU Viterbi: no derivation matches the chart of "
                          "sentence %d of the batch (%d words)", first + k + 1, hm.n[k]);
            break;
        }
        size_t bytes = (size_t)(2 * hm.n[k] - 1) * sizeof(viterbi_node);
        if (!(nodes[k] = malloc(bytes))) {
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
            break;
        }
        memcpy(nodes[k], h_nodes + hm.node0[k], bytes);
    }
    if (!st && v->charts) /* copied back on request */
        st = download_charts(v, d, p, v->charts + first);
    if (!st)
        st = download_range(v, d, p, first);
    d->stats.seconds[GPU_STAGE_TRANSFER] += clock_seconds() - t3;
    return st;
}

/* gpu_decoder.discard */
static void discard(void *ctx, int first, int n)
{
    gpu_viterbi *v = ctx;
    for (int k = first; k < first + n; k++) {
        free(v->nodes[k]);
        v->nodes[k] = NULL;
        if (v->charts) {
            chart_free(v->charts[k]);
            v->charts[k] = NULL;
        }
    }
}

cky_status gpu_viterbi_parse(gpu_viterbi *v, const sentence *s, int n, double *root,
                             viterbi_node **nodes, chart **charts, unsigned char *out_of_range)
{
    unsigned char *none = out_of_range ? NULL : malloc((size_t)(n ? n : 1));
    if (!out_of_range && !none)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        nodes[k] = NULL;
        if (charts)
            charts[k] = NULL;
    }
    v->root = root;
    v->nodes = nodes;
    v->charts = charts;
    v->out_of_range = out_of_range ? out_of_range : none;
    gpu_decoder dec = {v, CODEGEN_SEMIRING_MAX_PLUS, 1u << ENGINE_PASS_INSIDE, sentence_bytes,
                       prepare, finish, discard};
    cky_status st = gpu_engine_parse(v->e, s, n, &dec);
    v->root = NULL;
    v->nodes = NULL;
    v->charts = NULL;
    v->out_of_range = NULL;
    free(none);
    return st;
}

cky_status viterbi_gpu_run(const gpu_rule_tables *t, const float *pre, const float *post,
                           int nsub, int nsent, const int *n, const long long *cell0,
                           const int *node0, viterbi_node *nodes, int *status, int fixed,
                           cudaStream_t stream)
{
    if (!t || nsub != t->dev.nsub || nsent < 0)
        return cky_fail(CKY_ERR_ARG, "viterbi_gpu_run: %d substates per cell for tables of "
                        "%d, %d sentences", nsub, t ? t->dev.nsub : -1, nsent);
    if (nsent == 0)
        return CKY_OK;
    GPU_CHECK(viterbi_gpu_launch(&t->dev, pre, post, nsub, nsent, n, cell0, node0, nodes,
                                 status, fixed, stream));
    return CKY_OK;
}
