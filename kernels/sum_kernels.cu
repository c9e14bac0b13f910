/* sum_kernels: the GPU engine's hand-written kernels of the sum-product passes (max-rule),
 * around the generated sum-product kernels (see kernels.h): the exponent of each cell, the
 * fixed-order add of work items' vectors into the cells, and the unary step with its
 * normalization. The float operations are parser/sum_rules.h's, in the same order as the
 * cpu engine's (explicit fmaf and __fadd_rn, no contraction), so the charts are the same
 * bits; the only atomics are integer maxima (order-independent). */
#include <math.h>

#include "../chart/scale.h"
#include "kernels.h"

/* Row x of work item t in a workspace of `tile` floats per tile (kernels.h). */
static __device__ __forceinline__ long long sum_ws_at(int x, int t, long long tile)
{
    return (t / KERNELS_TILE) * tile + x * KERNELS_TILE + t % KERNELS_TILE;
}

/* The item of list position t: index[t], or first + t without an index. */
static __device__ __forceinline__ int item_at(const int *index, long long first, int t)
{
    return index ? index[t] : (int)(first + t);
}

static __global__ void sum_exp(kernels_sum_items it, int n, int *__restrict__ top)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    int m = item_at(it.index, it.first, t);
    atomicMax(&top[it.dest[m]], it.ea[it.ca[m]] + it.eb[it.cb[m]]);
}

extern "C" cudaError_t kernels_sum_exp(kernels_sum_items it, int n, int *top,
                                       cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    sum_exp<<<(n + 255) / 256, 256, 0, stream>>>(it, n, top);
    return cudaGetLastError();
}

/* Thread (t, x): if t starts a run of items of one cell, it adds their row x in order. */
static __global__ void sum_add(const float *__restrict__ ws, long long wtile,
                               kernels_sum_items it, int n, const int *__restrict__ top,
                               const int *__restrict__ row, int rows, float *__restrict__ chart,
                               int nsub)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int x = blockIdx.y * blockDim.y + threadIdx.y;
    if (t >= n || x >= rows)
        return;
    int m = item_at(it.index, it.first, t);
    int cell = it.dest[m];
    if (t > 0 && it.dest[item_at(it.index, it.first, t - 1)] == cell)
        return;
    float *out = chart + (long long)cell * nsub + row[x];
    float acc = *out;
    int e = top[cell];
    for (int u = t; u < n; u++) {
        m = item_at(it.index, it.first, u);
        if (it.dest[m] != cell)
            break;
        float v = ws[sum_ws_at(x, u, wtile)];
        if (v > 0)
            acc = __fadd_rn(acc, chart_scale(v, it.ea[it.ca[m]] + it.eb[it.cb[m]] - e));
    }
    *out = acc;
}

extern "C" cudaError_t kernels_sum_add(const float *ws, long long tile, kernels_sum_items it,
                                       int n, const int *top, const int *row, int rows,
                                       float *chart, int nsub, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    dim3 block(32, 8), grid((n + 31) / 32, (rows + 7) / 8);
    sum_add<<<grid, block, 0, stream>>>(ws, tile, it, n, top, row, rows, chart, nsub);
    return cudaGetLastError();
}

#define UNARY_THREADS 256

/* One block per cell: out = in + the table's rows over in, then normalized. */
static __global__ void __launch_bounds__(UNARY_THREADS)
    sum_unary(const float *__restrict__ in, const int *__restrict__ ein, float *__restrict__ out,
              int *__restrict__ eout, int nsub, const int *__restrict__ cell, int span,
              kernels_sum_table tb)
{
    extern __shared__ float sh[]; /* in[nsub], then out[nsub] */
    __shared__ float most[UNARY_THREADS];
    float *sin = sh, *sout = sh + nsub;
    long long c = cell[blockIdx.x];
    for (int x = threadIdx.x; x < nsub; x += blockDim.x)
        sin[x] = in[c * nsub + x];
    __syncthreads();
    float m = 0;
    for (int x = threadIdx.x; x < nsub; x += blockDim.x) {
        float acc = 0;
        if (span == 1 || tb.phrasal[x])
            for (int e = tb.first[x]; e < tb.first[x + 1]; e++)
                acc = fmaf(tb.w[e], sin[tb.from[e]], acc);
        float v = __fadd_rn(sin[x], acc);
        sout[x] = v;
        m = v > m ? v : m;
    }
    most[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) { /* max: exact in any order */
        if (threadIdx.x < s && most[threadIdx.x + s] > most[threadIdx.x])
            most[threadIdx.x] = most[threadIdx.x + s];
        __syncthreads();
    }
    int k = chart_exponent(most[0]);
    int none = k == CHART_EXP_NONE; /* all 0 or subnormal: 0 */
    for (int x = threadIdx.x; x < nsub; x += blockDim.x)
        out[c * nsub + x] = none ? 0 : chart_scale(sout[x], -k);
    if (threadIdx.x == 0)
        eout[c] = none ? CHART_EXP_NONE : ein[c] + k;
}

extern "C" cudaError_t kernels_sum_unary_setup(int nsub)
{
    return cudaFuncSetAttribute(sum_unary, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)(2 * (size_t)nsub * sizeof(float)));
}

extern "C" cudaError_t kernels_sum_unary(const float *in, const int *ein, float *out, int *eout,
                                         int nsub, const int *cell, int ncell, int span,
                                         kernels_sum_table tb, cudaStream_t stream)
{
    if (ncell <= 0)
        return cudaSuccess;
    size_t shared = 2 * (size_t)nsub * sizeof(float);
    sum_unary<<<ncell, UNARY_THREADS, shared, stream>>>(in, ein, out, eout, nsub, cell, span, tb);
    return cudaGetLastError();
}

static __global__ void sum_roots(float *opost, int *eopost, int nsub, const int *roots, int n)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) {
        opost[(long long)roots[k] * nsub] = 1.0f; /* ROOT: global substate 0 */
        eopost[roots[k]] = 0;
    }
}

extern "C" cudaError_t kernels_sum_roots(float *opost, int *eopost, int nsub, const int *roots,
                                         int n, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    sum_roots<<<(n + 255) / 256, 256, 0, stream>>>(opost, eopost, nsub, roots, n);
    return cudaGetLastError();
}
