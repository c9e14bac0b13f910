/* maxc_kernels: the max-c scores and max-rule trees of the GPU engine (see kernels.h), with
 * the arithmetic of parser/maxc_rules.h, the same bits as the cpu engine's.
 *   - maxc_sums: one thread block per cell, which first takes every binary rule row's V
 *     over the cell's outside layer into shared memory (global scratch when it does not
 *     fit), then one thread per split and rule sums the rule's rows;
 *   - maxc_span: one thread block per cell: the children's max-c scores copied into shared
 *     memory (global scratch when they do not fit) and the closed unaries' sums S; then a
 *     warp per symbol takes the best binary candidate (its lanes over the symbol's rules,
 *     a reduction over the lanes) and, after a barrier, the best unary. */
#include <limits.h>

#include "kernels.h"

#define MAXC_BLOCK 512                  /* threads of maxc_span: 16 warps */
#define MAXC_SUMS_BLOCK 256             /* threads of maxc_sums: 8 warps */
#define MAXC_SHARED_MAX (160 * 1024)    /* the most shared memory a block asks for */

static __global__ void __launch_bounds__(MAXC_SUMS_BLOCK)
maxc_sums(maxc_tables t, maxc_layers y, const int *__restrict__ cells, int span,
          double *scratch, double *__restrict__ sums)
{
    extern __shared__ double shared_v[];
    const int *c = cells + 3 * blockIdx.x;
    long c0 = c[0];
    int n = c[1], i = c[2], j = c[2] + span;
    double *v = scratch ? scratch + (size_t)blockIdx.x * t.nrow : shared_v;
    size_t cell = (size_t)c0 + chart_cell(n, i, j);
    /* every row's V over the cell's outside layer */
    for (int x = threadIdx.x; x < t.nrow; x += blockDim.x) {
        int b = t.row_rule[x], P = t.bin[b].parent;
        if (t.phrasal[P])
            v[x] = maxc_row_weight(&t, b, x - t.bin[b].row0, t.nsub[P],
                                   y.opre + cell * y.nsub + t.sub_offset[P]);
    }
    __syncthreads();
    /* every (split, rule) with terms: a thread each */
    double *out = sums + (size_t)blockIdx.x * (span - 1) * t.nbin;
    for (long x = threadIdx.x; x < (long)(span - 1) * t.nbin; x += blockDim.x) {
        int k = i + 1 + (int)(x / t.nbin), b = (int)(x % t.nbin);
        if (!maxc_binary_at(&t, b, i, k, j))
            continue;
        const maxc_binary *r = &t.bin[b];
        size_t cl = (size_t)c0 + chart_cell(n, i, k), cr = (size_t)c0 + chart_cell(n, k, j);
        out[x] = maxc_binary_rows(&t, b, v + r->row0, NULL,
                                  y.post + cl * y.nsub + t.sub_offset[r->left],
                                  y.post + cr * y.nsub + t.sub_offset[r->right]);
    }
}

/* The best of the lanes' candidates (score gs, then the smallest a, then b), in every lane. */
static __device__ __forceinline__ void warp_best(double *gs, int *a, int *b)
{
    for (int d = MAXC_LANES / 2; d >= 1; d /= 2) {
        double og = __shfl_xor_sync(0xffffffffu, *gs, d);
        int oa = __shfl_xor_sync(0xffffffffu, *a, d), ob = __shfl_xor_sync(0xffffffffu, *b, d);
        if (og > *gs || (og == *gs && (oa < *a || (oa == *a && ob < *b)))) {
            *gs = og;
            *a = oa;
            *b = ob;
        }
    }
}

static __global__ void __launch_bounds__(MAXC_BLOCK, 2)
maxc_span(maxc_tables t, maxc_layers y, const int *__restrict__ cells, int span,
          double *scratch, const double *__restrict__ sums)
{
    extern __shared__ double shared_kids[];
    const int *c = cells + 3 * blockIdx.x;
    long c0 = c[0];
    int n = c[1], i = c[2], j = c[2] + span, lane = threadIdx.x % MAXC_LANES;
    size_t cell = (size_t)c0 + chart_cell(n, i, j);
    long kids_size = maxc_kids_size(&t, span);
    double *usums = shared_kids, *kids = scratch ? scratch + blockIdx.x * kids_size
                                                 : shared_kids + t.nun;
    maxc_stage(&t, &y, c0, n, i, j, kids, threadIdx.x, blockDim.x);
    int warp = threadIdx.x / MAXC_LANES, warps = blockDim.x / MAXC_LANES;
    for (int u = warp; u < t.nun; u += warps)
        if (maxc_allowed(&t, span, t.un[u].parent)) {
            double s = maxc_unary_item(&t, &y, c0, n, i, j, u);
            if (lane == 0)
                usums[u] = s;
        }
    __syncthreads();
    int e0;
    double logx0 = maxc_root(&t, &y, c0, n, &e0);
    const double *cs = sums ? sums + (size_t)blockIdx.x * (span - 1) * t.nbin : NULL;
    /* binary (or lexical): a warp per symbol, its lanes over the rules */
    for (int P = warp; P < t.nsym; P += warps) {
        double best = MAXC_NEG_INF;
        int bb = INT_MAX, bk = INT_MAX;
        if (logx0 != MAXC_NEG_INF && span == 1 && !t.phrasal[P] && lane == 0) {
            best = maxc_lexical(&t, &y, c0, n, i, P, e0, logx0);
        } else if (logx0 != MAXC_NEG_INF && span > 1 && t.phrasal[P]) {
            for (int b = t.bin_first[P] + lane; b < t.bin_first[P + 1]; b += MAXC_LANES) {
                int kmin, kmax;
                maxc_splits(&t, b, i, j, &kmin, &kmax);
                for (int k = kmin; k <= kmax; k++) {
                    double ks = maxc_binary_kids(&t, kids, b, i, k, j);
                    if (ks == MAXC_NEG_INF || ks + MAXC_SLACK < best)
                        continue;
                    double gs = maxc_candidate(ks, cs[(long)(k - i - 1) * t.nbin + b],
                                               maxc_binary_exp(&y, c0, n, i, k, j, e0), logx0);
                    if (gs > best) {
                        best = gs;
                        bb = b;
                        bk = k;
                    }
                }
            }
        }
        warp_best(&best, &bb, &bk);
        if (lane == 0) {
            size_t at = cell * t.nsym + P;
            int found = best != MAXC_NEG_INF && span > 1;
            y.bscore[at] = best;
            y.split[at] = found ? bk : -1;
            y.left[at] = found ? t.bin[bb].left : -1;
            y.right[at] = found ? t.bin[bb].right : -1;
        }
    }
    __syncthreads(); /* the cell's scores before its unaries are all written */
    /* unary: a warp per symbol, its lanes over the closed unaries */
    for (int P = warp; P < t.nsym; P += warps) {
        size_t at = cell * t.nsym;
        double best = MAXC_NEG_INF;
        int bu = INT_MAX, none = 0;
        if (logx0 != MAXC_NEG_INF && maxc_allowed(&t, span, P))
            for (int u = t.un_first[P] + lane; u < t.un_first[P + 1]; u += MAXC_LANES) {
                double gs = maxc_candidate(y.bscore[at + t.un[u].child], usums[u],
                                           y.eopre[cell] + y.epost[cell] - e0, logx0);
                if (gs > best) {
                    best = gs;
                    bu = u;
                }
            }
        warp_best(&best, &bu, &none);
        if (lane == 0) {
            double before = y.bscore[at + P];
            int take = best > before;
            y.score[at + P] = take ? best : before;
            y.child[at + P] = take ? t.un[bu].child : -1;
        }
    }
}

/* Shared memory of the two kernels, at most MAXC_SHARED_MAX: allowed once per process. */
static cudaError_t allow_shared(void)
{
    static int done;
    if (done)
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(maxc_span, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         MAXC_SHARED_MAX);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(maxc_sums, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 MAXC_SHARED_MAX);
    done = e == cudaSuccess;
    return e;
}

/* Bytes of the children's scores of a cell of span `span`, and whether they fit in shared
 * memory beside the unary sums. */
static size_t kids_bytes(const maxc_tables *t, int span)
{
    return (size_t)maxc_kids_size(t, span) * sizeof(double);
}

static int kids_shared(const maxc_tables *t, int span)
{
    return kids_bytes(t, span) + t->nun * sizeof(double) <= MAXC_SHARED_MAX;
}

static int v_shared(const maxc_tables *t) { return t->nrow * sizeof(double) <= MAXC_SHARED_MAX; }

extern "C" size_t kernels_maxc_scratch(const maxc_tables *t, int ncell, int span)
{
    size_t kids = kids_shared(t, span) ? 0 : kids_bytes(t, span) * ncell;
    size_t v = v_shared(t) || span < 2 ? 0 : (size_t)t->nrow * sizeof(double) * ncell;
    return kids > v ? kids : v;
}

extern "C" cudaError_t kernels_maxc_span(const maxc_tables *t, const maxc_layers *y,
                                         const int *cells, int ncell, int span, double *scratch,
                                         const double *sums, cudaStream_t stream)
{
    if (ncell <= 0)
        return cudaSuccess;
    cudaError_t e = allow_shared();
    if (e != cudaSuccess)
        return e;
    size_t bytes = t->nun * sizeof(double);
    if (kids_shared(t, span)) {
        bytes += kids_bytes(t, span);
        scratch = NULL;
    }
    maxc_span<<<ncell, MAXC_BLOCK, bytes, stream>>>(*t, *y, cells, span, scratch, sums);
    return cudaGetLastError();
}

extern "C" cudaError_t kernels_maxc_sums(const maxc_tables *t, const maxc_layers *y,
                                         const int *cells, int ncell, int span, double *scratch,
                                         double *sums, cudaStream_t stream)
{
    if (ncell <= 0 || span < 2)
        return cudaSuccess;
    cudaError_t e = allow_shared();
    if (e != cudaSuccess)
        return e;
    size_t bytes = 0;
    if (v_shared(t)) {
        bytes = (size_t)t->nrow * sizeof(double);
        scratch = NULL;
    }
    maxc_sums<<<ncell, MAXC_SUMS_BLOCK, bytes, stream>>>(*t, *y, cells, span, scratch, sums);
    return cudaGetLastError();
}

static __global__ void maxc_walk(maxc_tables t, maxc_layers y, const int *__restrict__ sent,
                                 int n, const long long *__restrict__ node0, int *nodes,
                                 int *stack, int *result, double *score)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    int c0 = sent[2 * k], len = sent[2 * k + 1];
    int *r = result + 4 * k;
    r[0] = maxc_extract(&t, &y, c0, len, nodes + node0[k], &r[1], stack + node0[k]);
    size_t root = (size_t)c0 + chart_cell(len, 0, len);
    r[2] = __float_as_int(y.post[root * y.nsub + t.sub_offset[0]]);
    r[3] = y.epost[root];
    score[k] = y.score[root * t.nsym];
}

extern "C" cudaError_t kernels_maxc_walk(const maxc_tables *t, const maxc_layers *y,
                                         const int *sent, int n, const long long *node0,
                                         int *nodes, int *stack, int *result, double *score,
                                         cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    maxc_walk<<<(n + 63) / 64, 64, 0, stream>>>(*t, *y, sent, n, node0, nodes, stack, result,
                                                 score);
    return cudaGetLastError();
}
