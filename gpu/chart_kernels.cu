/* chart_kernels: the GPU engine's hand-written kernels around the generated ones (see
 * kernels.h): -inf fill, copy-transpose gather of child cells into symbol-major workspaces,
 * atomic max reduce of the parent workspace into chart cells, and the closed unary step.
 * The arithmetic is CHART_FLOAT's: one float add per unary, max by comparison; in fixed
 * point the gather writes fixedpoint_of of the chart's floats and the reduce reads integer
 * maxima (util/fixedpoint.h). */
#include <math.h>

#include "../util/fixedpoint.h"
#include "../util/floatkey.h"
#include "kernels.h"

#define TILE 32 /* gather/reduce tiles: 32 work items x 32 rows, 32 x 8 threads */

/* Row x of work item t in a workspace of `tile` floats per tile (kernels.h). */
static __device__ __forceinline__ long long ws_at(int x, int t, long long tile)
{
    return (t / KERNELS_TILE) * tile + x * KERNELS_TILE + t % KERNELS_TILE;
}

/* float max into a chart cell through integer atomics: non-negative floats order like
 * signed ints, negative ones (sign bit set, -inf included) reversed like unsigned ints. */
static __device__ __forceinline__ void atomic_max_float(float *addr, float v)
{
    if (__float_as_int(v) >= 0)
        atomicMax((int *)addr, __float_as_int(v));
    else
        atomicMin((unsigned int *)addr, __float_as_uint(v));
}

static __global__ void fill(unsigned *a, int rows, int n, long long stride, unsigned value)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int x = blockIdx.y; x < rows && t < n; x += gridDim.y)
        a[x * stride + t] = value;
}

extern "C" cudaError_t kernels_fill(void *a, int rows, int n, long long stride, unsigned value,
                                    cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    dim3 grid((n + 255) / 256, rows < 1024 ? rows : 1024);
    fill<<<grid, 256, 0, stream>>>((unsigned *)a, rows, n, stride, value);
    return cudaGetLastError();
}

/* A block per word (its row read in 16-byte pieces where nsub allows). */
static __global__ void lexical(const float *__restrict__ lex, const int *__restrict__ exps,
                               const int *__restrict__ row, const int *__restrict__ cell,
                               float *__restrict__ chart, int *__restrict__ cexp, int nsub)
{
    int w = blockIdx.x, r = row ? row[w] : w;
    long long c = cell[w];
    const float *src = lex + (long long)r * nsub;
    float *dst = chart + c * nsub;
    if (nsub % 4 == 0)
        for (int x = threadIdx.x; x < nsub / 4; x += blockDim.x)
            ((float4 *)dst)[x] = ((const float4 *)src)[x];
    else
        for (int x = threadIdx.x; x < nsub; x += blockDim.x)
            dst[x] = src[x];
    if (exps && threadIdx.x == 0)
        cexp[c] = exps[r];
}

extern "C" cudaError_t kernels_lexical(const float *lex, const int *exps, const int *row,
                                       const int *cell, int nword, float *chart, int *cexp,
                                       int nsub, cudaStream_t stream)
{
    if (nword <= 0 || nsub <= 0)
        return cudaSuccess;
    lexical<<<nword, 256, 0, stream>>>(lex, exps, row, cell, chart, cexp, nsub);
    return cudaGetLastError();
}

#define GATHER_GROUPS 4 /* the most groups of 32 rows a gather block moves */

/* Block (bx, by) moves items [32 bx, 32 bx + 32) x the `per` groups of 32 rows from group
 * by * per: it looks its items' cells up once (through the index, when there is one),
 * issues all of its reads of the chart (along a cell's rows) before one barrier, then
 * writes along the work items (with `clamped`: their fixed-point values, and a flag for each
 * item's cell where one was clamped). */
static __global__ void __launch_bounds__(TILE * 8)
    gather(const float *__restrict__ chart, int nsub, const int *__restrict__ cell,
           const int *__restrict__ index, int n, const int *__restrict__ row, int rows,
           float *__restrict__ ws, long long wtile, int per, unsigned char *clamped)
{
    __shared__ float tile[GATHER_GROUPS * TILE][TILE + 1]; /* [row of the block][item] */
    __shared__ long long base[TILE]; /* each item's cell in the chart */
    int t0 = blockIdx.x * TILE, t = t0 + threadIdx.x, x0 = blockIdx.y * per * TILE;
    int nr = min(per * TILE, rows - x0); /* the block's rows */
    int c = t < n ? cell[index ? index[t] : t] : 0;
    if (threadIdx.y == 0)
        base[threadIdx.x] = (long long)c * nsub;
    __syncthreads();
    float v[GATHER_GROUPS][TILE / 8];
#pragma unroll
    for (int g = 0; g < GATHER_GROUPS; g++) { /* thread (x, y): row x of items y, y + 8, ... */
        int x = g * TILE + threadIdx.x;
        int gx = x < nr ? row[x0 + x] : 0;
#pragma unroll
        for (int j = 0; j < TILE / 8; j++) {
            int k = threadIdx.y + 8 * j;
            v[g][j] = x < nr && t0 + k < n ? chart[base[k] + gx] : 0;
        }
    }
#pragma unroll
    for (int g = 0; g < GATHER_GROUPS; g++)
#pragma unroll
        for (int j = 0; j < TILE / 8; j++)
            tile[g * TILE + threadIdx.x][threadIdx.y + 8 * j] = v[g][j];
    __syncthreads();
    if (t < n && clamped) { /* fixed point */
        int out = 0;
        for (int r = threadIdx.y; r < nr; r += 8) {
            float v = tile[r][threadIdx.x];
            out |= fixedpoint_clamps(v);
            ((int *)ws)[ws_at(x0 + r, t, wtile)] = fixedpoint_of(v);
        }
        if (out)
            clamped[c] = 1;
    } else if (t < n)
        for (int r = threadIdx.y; r < nr; r += 8)
            ws[ws_at(x0 + r, t, wtile)] = tile[r][threadIdx.x];
}

#define GATHER_BLOCKS 2048 /* the thread blocks a gather launch has at least, rows allowing */

/* The grid of a gather, a block per 32 items and `per` groups of 32 rows: GATHER_GROUPS
 * groups a block, fewer where that leaves under GATHER_BLOCKS blocks. */
static dim3 gather_grid(int n, int rows, int *per)
{
    int bx = (n + TILE - 1) / TILE, groups = (rows + TILE - 1) / TILE;
    *per = GATHER_GROUPS;
    while (*per > 1 && (long)bx * ((groups + *per - 1) / *per) < GATHER_BLOCKS)
        (*per)--;
    return dim3(bx, (groups + *per - 1) / *per);
}

static cudaError_t gather_launch(const float *chart, int nsub, const int *cell,
                                 const int *index, int n, const int *row, int rows, float *ws,
                                 long long tile, unsigned char *clamped, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    int per;
    dim3 grid = gather_grid(n, rows, &per);
    gather<<<grid, dim3(TILE, 8), 0, stream>>>(chart, nsub, cell, index, n, row, rows, ws, tile,
                                              per, clamped);
    return cudaGetLastError();
}

extern "C" cudaError_t kernels_gather(const float *chart, int nsub, const int *cell, int n,
                                      const int *row, int rows, float *ws, long long tile,
                                      cudaStream_t stream)
{
    return gather_launch(chart, nsub, cell, NULL, n, row, rows, ws, tile, NULL, stream);
}

extern "C" cudaError_t kernels_gather_fixed(const float *chart, int nsub, const int *cell,
                                            int n, const int *row, int rows, int *ws,
                                            long long tile, unsigned char *clamped,
                                            cudaStream_t stream)
{
    return gather_launch(chart, nsub, cell, NULL, n, row, rows, (float *)ws, tile, clamped,
                         stream);
}

extern "C" cudaError_t kernels_gather_index(const float *chart, int nsub, const int *cell,
                                            const int *index, int n, const int *row, int rows,
                                            float *ws, long long tile, cudaStream_t stream)
{
    return gather_launch(chart, nsub, cell, index, n, row, rows, ws, tile, NULL, stream);
}

static __global__ void reduce(const int *__restrict__ ws, long long wtile, int n,
                              const int *__restrict__ cell, const int *__restrict__ row,
                              int rows, float *__restrict__ chart, int nsub, int fixed)
{
    __shared__ float tile[TILE][TILE + 1];
    int t0 = blockIdx.x * TILE, x0 = blockIdx.y * TILE;
    int t = t0 + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) { /* read along work items */
        int xr = x0 + k;
        int key = t < n && xr < rows ? ws[ws_at(xr, t, wtile)] : 0;
        tile[k][threadIdx.x] = !(t < n && xr < rows) ? -INFINITY
                               : fixed ? fixedpoint_to_float(key) /* a fixed-point maximum */
                                       : __int_as_float(floatkey(key)); /* its own inverse */
    }
    __syncthreads();
    int x = x0 + threadIdx.x;
    if (x >= rows)
        return;
    int gx = row[x];
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) { /* max into the rows of a cell */
        int tk = t0 + k;
        float v = tile[threadIdx.x][k];
        if (tk < n && v != -INFINITY)
            atomic_max_float(&chart[(long long)cell[tk] * nsub + gx], v);
    }
}

extern "C" cudaError_t kernels_reduce(const int *ws, long long tile, int n, const int *cell,
                                      const int *row, int rows, float *chart, int nsub,
                                      int fixed, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    dim3 grid((n + TILE - 1) / TILE, (rows + TILE - 1) / TILE), block(TILE, 8);
    reduce<<<grid, block, 0, stream>>>(ws, tile, n, cell, row, rows, chart, nsub, fixed);
    return cudaGetLastError();
}

/* The unary step: a block takes `lanes` cells (32 where shared memory allows) and copies
 * their pre layers into shared memory, transposed (substate-major, a padded row of `lanes`
 * floats per substate). Each group of `lanes` threads takes a parent substate p, one thread
 * per cell: the unary entries of p are read once for all of the group's cells (the same
 * address across the group) and each thread's shared-memory reads are consecutive across
 * the group, so there are neither scattered entry loads nor bank conflicts. Two running
 * maxima per thread keep the dependency chain short; max is exact in any order. */
#define UNARY_THREADS 1024

static __global__ void __launch_bounds__(UNARY_THREADS)
    unary(const float *__restrict__ pre, float *__restrict__ post, int nsub,
          const int *__restrict__ cell, int ncell, const int *__restrict__ first,
          const int *__restrict__ child, const float *__restrict__ weight, int lanes)
{
    extern __shared__ float in[]; /* in[q * (lanes + 1) + c]: substate q of cell c */
    int pad = lanes + 1, c0 = blockIdx.x * lanes;
    int nc = ncell - c0 < lanes ? ncell - c0 : lanes;
    for (int i = threadIdx.x; i < lanes * nsub; i += blockDim.x) {
        int c = i / nsub, q = i - c * nsub; /* reads run along a cell's substates */
        in[q * pad + c] = c < nc ? pre[(long long)cell[c0 + c] * nsub + q] : -INFINITY;
    }
    __syncthreads();
    int c = threadIdx.x % lanes;
    if (c >= nc)
        return;
    long long out = (long long)cell[c0 + c] * nsub;
    for (int p = threadIdx.x / lanes; p < nsub; p += blockDim.x / lanes) {
        float v0 = in[p * pad + c], v1 = -INFINITY;
        int e = first[p], end = first[p + 1];
        for (; e + 1 < end; e += 2) {
            v0 = fmaxf(v0, __fadd_rn(in[child[e] * pad + c], weight[e]));
            v1 = fmaxf(v1, __fadd_rn(in[child[e + 1] * pad + c], weight[e + 1]));
        }
        if (e < end)
            v0 = fmaxf(v0, __fadd_rn(in[child[e] * pad + c], weight[e]));
        post[out + p] = fmaxf(v0, v1);
    }
}

extern "C" cudaError_t kernels_unary_setup(int nsub, int *lanes)
{
    int device, most;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e != cudaSuccess)
        return e;
    *lanes = 32; /* the most cells (a power of two) whose pre layers fit */
    while (*lanes > 1 && (size_t)(*lanes + 1) * nsub * sizeof(float) > (size_t)most)
        *lanes /= 2;
    size_t shared = (size_t)(*lanes + 1) * nsub * sizeof(float);
    if (shared > (size_t)most)
        return cudaErrorInvalidValue; /* not even one cell's pre layer fits */
    return cudaFuncSetAttribute(unary, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);
}

extern "C" cudaError_t kernels_unary(const float *pre, float *post, int nsub, const int *cell,
                                     int ncell, const int *first, const int *child,
                                     const float *weight, int lanes, cudaStream_t stream)
{
    if (ncell <= 0)
        return cudaSuccess;
    size_t shared = (size_t)(lanes + 1) * nsub * sizeof(float);
    unsigned blocks = (unsigned)((ncell + lanes - 1) / lanes);
    unary<<<blocks, UNARY_THREADS, shared, stream>>>(pre, post, nsub, cell, ncell, first, child,
                                                     weight, lanes);
    return cudaGetLastError();
}
