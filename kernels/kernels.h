/* kernels: hand-written device code of the GPU engine (CUDA C++ .cu files, C launchers).
 *
 * The device chart of a batch (shared by every kernel here and by the GPU Viterbi):
 *   - nsub = grammar.nsub_total float32 scores per cell layer, indexed by global substate id;
 *   - sentence s has n[s] words and owns cells cell0[s] .. cell0[s] + n(n+1)/2 - 1 of the
 *     batch; cell (i, j) of s is cell0[s] + chart_cell(n[s], i, j) (parser/chart.h order);
 *   - pre[cell * nsub + id] is the pre-unary layer (lexical scores in one-word cells, the
 *     best binary derivation above), post[cell * nsub + id] the post-unary layer;
 *   - -inf is impossible; the arithmetic is CHART_FLOAT's (parser/chart.h), so a device
 *     chart equals, value for value, the float chart of the CPU engine.
 *
 * Workspaces are the generated kernels' (codegen/codegen.h): row x of a class, column t is
 * work item t, row x starts at x * stride.
 *
 * Every launcher enqueues on `stream` and returns cudaGetLastError(): check it with
 * GPU_CHECK (util/gpu_check.h). */
#ifndef CKY_KERNELS_H
#define CKY_KERNELS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KERNELS_NINF_BITS 0xff800000u /* the bits of float -inf */

/* ws[x * stride + t] = value for x < rows, t < n (32-bit words: float bits or keys). */
cudaError_t kernels_fill(void *ws, int rows, int n, long long stride, unsigned value,
                         cudaStream_t stream);

/* Copy-transpose: ws[x * stride + t] = chart[cell[t] * nsub + row[x]] for x < rows, t < n
 * (row: class-local row -> global substate id). */
cudaError_t kernels_gather(const float *chart, int nsub, const int *cell, int n,
                           const int *row, int rows, float *ws, long long stride,
                           cudaStream_t stream);

/* Atomic max reduce of a parent workspace of keys (codegen.h's GPU contract):
 * chart[cell[t] * nsub + row[x]] = max(itself, key(ws[x * stride + t])) for x < rows, t < n. */
cudaError_t kernels_reduce(const int *ws, long long stride, int n, const int *cell,
                           const int *row, int rows, float *chart, int nsub,
                           cudaStream_t stream);

/* Closed unary step over `ncell` cells: for each listed cell c and substate p,
 *   post[c][p] = max(pre[c][p], max over unary entries (p <- q, w) of pre[c][q] + w),
 * the entries of parent p being child[first[p] .. first[p+1]) and weight[...] (CSR of
 * global ids; kviterbi_csr's un_* tables). A block holds up to 32 cells in (cells + 1) * nsub
 * floats of shared memory; cudaErrorInvalidValue if not even one cell fits. */
cudaError_t kernels_unary(const float *pre, float *post, int nsub, const int *cell, int ncell,
                          const int *first, const int *child, const float *weight,
                          cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
