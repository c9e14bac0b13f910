/* sum_kernels: the GPU engine's hand-written kernels of the sum-product passes (max-rule),
 * around the generated sum-product kernels (see kernels.h): the exponent of each cell, the
 * fixed-order adds of the kernels' partial slots into the workspace and of work items'
 * vectors into the cells, and the unary step with its normalization. The float operations
 * are semiring/sum_rules.h's, in the same order as the cpu engine's (explicit fmaf and
 * __fadd_rn, no contraction), so the charts are the same bits; the only atomics are integer
 * maxima (order-independent). */
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

#define ADD_THREADS 256 /* threads of a block of sum_add: rows of a run at once */
#define ADD_ITEMS 32     /* list positions per block of sum_add: one warp's ballot */

/* The cell of list position t. */
static __device__ __forceinline__ int dest_at(const kernels_sum_items &it, int t)
{
    return it.dest[item_at(it.index, it.first, t)];
}

/* Block b looks at positions 32b .. 32b + 31; for each that starts a run of one cell's items
 * (the list keeps each cell's items together), its threads add the run into the cell, a
 * thread per row, each row in list order: the run's exponents first go to shared memory,
 * ADD_THREADS items at a time. */
static __global__ void __launch_bounds__(ADD_THREADS)
    sum_add(const float *__restrict__ ws, long long wtile, kernels_sum_items it, int n,
            const int *__restrict__ top, const int *__restrict__ row, int rows,
            float *__restrict__ chart, int nsub)
{
    __shared__ unsigned heads;
    __shared__ int end;
    __shared__ int shift[ADD_THREADS];
    int lane = threadIdx.x % 32, t0 = blockIdx.x * ADD_ITEMS;
    if (threadIdx.x < 32) {
        int t = t0 + lane;
        int head = t < n && (t == 0 || dest_at(it, t - 1) != dest_at(it, t));
        unsigned b = __ballot_sync(~0u, head);
        if (lane == 0)
            heads = b;
    }
    __syncthreads();
    for (unsigned h = heads; h; h &= h - 1) {
        int t = t0 + __ffs(h) - 1, cell = dest_at(it, t);
        if (threadIdx.x < 32) { /* the run's end: the first later position of another cell */
            for (int u0 = t + 1;; u0 += 32) {
                int u = u0 + lane;
                unsigned stop = __ballot_sync(~0u, u >= n || dest_at(it, u) != cell);
                if (stop) {
                    if (lane == 0)
                        end = u0 + __ffs(stop) - 1;
                    break;
                }
            }
        }
        __syncthreads();
        int e = top[cell], stop = end;
        for (int x0 = 0; x0 < rows; x0 += ADD_THREADS) {
            int x = x0 + threadIdx.x;
            float *out = chart + (long long)cell * nsub + (x < rows ? row[x] : 0);
            float acc = x < rows ? *out : 0;
            for (int w0 = t; w0 < stop; w0 += ADD_THREADS) {
                int u = w0 + threadIdx.x;
                __syncthreads(); /* the last window is read */
                if (u < stop) {
                    int m = item_at(it.index, it.first, u);
                    shift[threadIdx.x] = it.ea[it.ca[m]] + it.eb[it.cb[m]] - e;
                }
                __syncthreads();
                int k = min(ADD_THREADS, stop - w0);
                if (x < rows)
                    for (int j = 0; j < k; j++) {
                        float v = ws[sum_ws_at(x, w0 + j, wtile)];
                        if (v > 0)
                            acc = __fadd_rn(acc, chart_scale(v, shift[j]));
                    }
            }
            if (x < rows)
                *out = acc;
        }
        __syncthreads(); /* end and shift are free again */
    }
}

extern "C" cudaError_t kernels_sum_add(const float *ws, long long tile, kernels_sum_items it,
                                       int n, const int *top, const int *row, int rows,
                                       float *chart, int nsub, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    sum_add<<<(n + ADD_ITEMS - 1) / ADD_ITEMS, ADD_THREADS, 0, stream>>>(ws, tile, it, n, top,
                                                                        row, rows, chart, nsub);
    return cudaGetLastError();
}

/* Thread (t, r): row f.row[r] of item t, its slots added in order. */
static __global__ void sum_fold(const float *__restrict__ part, int ptile, float *__restrict__ ws,
                                int tile, int n, kernels_sum_fold f)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (t >= n || r >= f.nrow)
        return;
    float *out = ws + sum_ws_at(f.row[r], t, tile);
    float acc = *out;
    for (int j = f.first[r]; j < f.first[r + 1]; j++)
        acc = __fadd_rn(acc, part[sum_ws_at(f.slot[j], t, ptile)]);
    *out = acc;
}

extern "C" cudaError_t kernels_sum_fold_slots(const float *part, int ptile, float *ws, int tile,
                                              int n, kernels_sum_fold f, cudaStream_t stream)
{
    if (n <= 0 || f.nrow <= 0)
        return cudaSuccess;
    dim3 block(KERNELS_TILE, 4), grid((n + KERNELS_TILE - 1) / KERNELS_TILE, (f.nrow + 3) / 4);
    sum_fold<<<grid, block, 0, stream>>>(part, ptile, ws, tile, n, f);
    return cudaGetLastError();
}

#define UNARY_THREADS 256

/* One block per cell: out = in + the layout's rows over in, then normalized. */
static __global__ void __launch_bounds__(UNARY_THREADS)
    sum_unary(const float *__restrict__ in, const int *__restrict__ ein, float *__restrict__ out,
              int *__restrict__ eout, int nsub, const int *__restrict__ cell,
              kernels_sum_layout lay)
{
    extern __shared__ float sh[]; /* in[nsub], then out[nsub] */
    __shared__ float most[UNARY_THREADS];
    float *sin = sh, *sout = sh + nsub;
    long long c = cell[blockIdx.x];
    for (int x = threadIdx.x; x < nsub; x += blockDim.x)
        sin[x] = sout[x] = in[c * nsub + x]; /* a row without terms: in + 0 = in */
    __syncthreads();
    for (int s = threadIdx.x; s < lay.nslot; s += blockDim.x) {
        int g = s / 32, r = lay.row[s];
        float acc = 0;
        for (int e = lay.off[g] + s % 32; e < lay.off[g + 1]; e += 32)
            acc = fmaf(lay.w[e], sin[lay.from[e]], acc);
        if (r >= 0)
            sout[r] = __fadd_rn(sin[r], acc);
    }
    __syncthreads();
    float m = 0;
    for (int x = threadIdx.x; x < nsub; x += blockDim.x)
        m = sout[x] > m ? sout[x] : m;
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
    sum_unary<<<ncell, UNARY_THREADS, shared, stream>>>(in, ein, out, eout, nsub, cell,
                                                          span == 1 ? tb.word : tb.phrase);
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
