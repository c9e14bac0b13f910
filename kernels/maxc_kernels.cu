/* maxc_kernels: the max-c scores and max-rule trees of the GPU engine (see kernels.h), with
 * the arithmetic of parser/maxc_rules.h, the same bits as the cpu engine's: one thread block
 * per cell, which copies the children's scores it reads into shared memory (global scratch
 * when they do not fit), then its warps take the symbols in turn, the binary (or lexical)
 * step and, after a barrier, the unary step. */
#include "kernels.h"

#define MAXC_BLOCK 256                  /* threads: 8 warps */
#define MAXC_SHARED_MAX (160 * 1024)    /* the most shared memory a block asks for */

static __global__ void __launch_bounds__(MAXC_BLOCK)
maxc_span(maxc_tables t, maxc_layers y, const int *__restrict__ cells, int span,
          double *scratch)
{
    extern __shared__ double shared_kids[];
    const int *c = cells + 3 * blockIdx.x;
    int n = c[1], i = c[2], j = c[2] + span;
    long kids_size = maxc_kids_size(&t, span);
    double *kids = scratch ? scratch + blockIdx.x * kids_size : shared_kids;
    maxc_stage(&t, &y, c[0], n, i, j, kids, threadIdx.x, blockDim.x);
    __syncthreads();
    int warp = threadIdx.x / MAXC_LANES, warps = blockDim.x / MAXC_LANES;
    for (int P = warp; P < t.nsym; P += warps)
        maxc_cell_binary(&t, &y, c[0], n, i, j, P, kids);
    __syncthreads(); /* the cell's scores before its unaries are all written */
    for (int P = warp; P < t.nsym; P += warps)
        maxc_cell_unary(&t, &y, c[0], n, i, j, P);
}

extern "C" size_t kernels_maxc_scratch(const maxc_tables *t, int ncell, int span)
{
    size_t bytes = (size_t)maxc_kids_size(t, span) * sizeof(double);
    return bytes > MAXC_SHARED_MAX ? bytes * ncell : 0;
}

extern "C" cudaError_t kernels_maxc_span(const maxc_tables *t, const maxc_layers *y,
                                         const int *cells, int ncell, int span, double *scratch,
                                         cudaStream_t stream)
{
    static int shared_set; /* per process: the attribute is the same for every device */
    if (ncell <= 0)
        return cudaSuccess;
    if (!shared_set) {
        cudaError_t e = cudaFuncSetAttribute(maxc_span, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             MAXC_SHARED_MAX);
        if (e != cudaSuccess)
            return e;
        shared_set = 1;
    }
    size_t bytes = (size_t)maxc_kids_size(t, span) * sizeof(double);
    if (bytes > MAXC_SHARED_MAX)
        bytes = 0;
    else
        scratch = NULL;
    maxc_span<<<ncell, MAXC_BLOCK, bytes, stream>>>(*t, *y, cells, span, scratch);
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
