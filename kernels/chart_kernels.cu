/* chart_kernels: the GPU engine's hand-written kernels around the generated ones (see
 * kernels.h): -inf fill, copy-transpose gather of child cells into symbol-major workspaces,
 * atomic max reduce of the parent workspace into chart cells, and the closed unary step.
 * The arithmetic is CHART_FLOAT's: one float add per unary, max by comparison. */
#include <math.h>

#include "kernels.h"

#define TILE 32 /* gather/reduce tiles: 32 work items x 32 rows, 32 x 8 threads */

/* float max into a chart cell through integer atomics: non-negative floats order like
 * signed ints, negative ones (sign bit set, -inf included) reversed like unsigned ints. */
static __device__ __forceinline__ void atomic_max_float(float *addr, float v)
{
    if (__float_as_int(v) >= 0)
        atomicMax((int *)addr, __float_as_int(v));
    else
        atomicMin((unsigned int *)addr, __float_as_uint(v));
}

static __global__ void fill(unsigned *ws, int rows, int n, long long stride, unsigned value)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int x = blockIdx.y; x < rows && t < n; x += gridDim.y)
        ws[x * stride + t] = value;
}

extern "C" cudaError_t kernels_fill(void *ws, int rows, int n, long long stride, unsigned value,
                                    cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    dim3 grid((n + 255) / 256, rows < 1024 ? rows : 1024);
    fill<<<grid, 256, 0, stream>>>((unsigned *)ws, rows, n, stride, value);
    return cudaGetLastError();
}

/* Block (bx, by) moves items [32 bx, 32 bx + 32) x rows [32 by, 32 by + 32). */
static __global__ void gather(const float *__restrict__ chart, int nsub,
                              const int *__restrict__ cell, int n, const int *__restrict__ row,
                              int rows, float *__restrict__ ws, long long stride)
{
    __shared__ float tile[TILE][TILE + 1];
    int t0 = blockIdx.x * TILE, x0 = blockIdx.y * TILE;
    int x = x0 + threadIdx.x;
    int gx = x < rows ? row[x] : 0;
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) { /* read along rows of a cell */
        int t = t0 + k;
        if (t < n && x < rows)
            tile[k][threadIdx.x] = chart[(long long)cell[t] * nsub + gx];
    }
    __syncthreads();
    int t = t0 + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) { /* write along work items */
        int xr = x0 + k;
        if (t < n && xr < rows)
            ws[xr * stride + t] = tile[threadIdx.x][k];
    }
}

extern "C" cudaError_t kernels_gather(const float *chart, int nsub, const int *cell, int n,
                                      const int *row, int rows, float *ws, long long stride,
                                      cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    dim3 grid((n + TILE - 1) / TILE, (rows + TILE - 1) / TILE), block(TILE, 8);
    gather<<<grid, block, 0, stream>>>(chart, nsub, cell, n, row, rows, ws, stride);
    return cudaGetLastError();
}

static __global__ void reduce(const int *__restrict__ ws, long long stride, int n,
                              const int *__restrict__ cell, const int *__restrict__ row,
                              int rows, float *__restrict__ chart, int nsub)
{
    __shared__ float tile[TILE][TILE + 1];
    int t0 = blockIdx.x * TILE, x0 = blockIdx.y * TILE;
    int t = t0 + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) { /* read along work items */
        int xr = x0 + k;
        int key = t < n && xr < rows ? ws[xr * stride + t] : 0;
        tile[k][threadIdx.x] = t < n && xr < rows ? __int_as_float(key ^ ((key >> 31) & 0x7fffffff))
                                                  : -INFINITY; /* the key is its own inverse */
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

extern "C" cudaError_t kernels_reduce(const int *ws, long long stride, int n, const int *cell,
                                      const int *row, int rows, float *chart, int nsub,
                                      cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    dim3 grid((n + TILE - 1) / TILE, (rows + TILE - 1) / TILE), block(TILE, 8);
    reduce<<<grid, block, 0, stream>>>(ws, stride, n, cell, row, rows, chart, nsub);
    return cudaGetLastError();
}

/* UNARY_CELLS cells per block, their pre layers in shared memory, a thread per parent: each
 * unary entry (child, weight) is read once and applied to every cell of the block. */
#define UNARY_CELLS 8

static __global__ void unary(const float *__restrict__ pre, float *__restrict__ post, int nsub,
                             const int *__restrict__ cell, int ncell,
                             const int *__restrict__ first, const int *__restrict__ child,
                             const float *__restrict__ weight)
{
    extern __shared__ float in[]; /* [UNARY_CELLS][nsub] */
    int c0 = blockIdx.x * UNARY_CELLS, nc = ncell - c0 < UNARY_CELLS ? ncell - c0 : UNARY_CELLS;
    for (int c = 0; c < nc; c++) {
        long long base = (long long)cell[c0 + c] * nsub;
        for (int q = threadIdx.x; q < nsub; q += blockDim.x)
            in[c * nsub + q] = pre[base + q];
    }
    __syncthreads();
    for (int p = threadIdx.x; p < nsub; p += blockDim.x) {
        float v[UNARY_CELLS];
#pragma unroll
        for (int c = 0; c < UNARY_CELLS; c++)
            v[c] = c < nc ? in[c * nsub + p] : -INFINITY;
        for (int e = first[p]; e < first[p + 1]; e++) {
            int q = child[e];
            float w = weight[e];
#pragma unroll
            for (int c = 0; c < UNARY_CELLS; c++)
                if (c < nc)
                    v[c] = fmaxf(v[c], __fadd_rn(in[c * nsub + q], w));
        }
#pragma unroll
        for (int c = 0; c < UNARY_CELLS; c++)
            if (c < nc)
                post[(long long)cell[c0 + c] * nsub + p] = v[c];
    }
}

extern "C" cudaError_t kernels_unary(const float *pre, float *post, int nsub, const int *cell,
                                     int ncell, const int *first, const int *child,
                                     const float *weight, cudaStream_t stream)
{
    if (ncell <= 0)
        return cudaSuccess;
    size_t shared = (size_t)UNARY_CELLS * nsub * sizeof(float);
    if (shared > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(unary, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)shared);
        if (e != cudaSuccess)
            return e;
    }
    unsigned blocks = (unsigned)((ncell + UNARY_CELLS - 1) / UNARY_CELLS);
    unary<<<blocks, 256, shared, stream>>>(pre, post, nsub, cell, ncell, first, child, weight);
    return cudaGetLastError();
}
