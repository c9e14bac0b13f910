/* kernels: hand-written device code of the GPU engine (CUDA C++ .cu files, C launchers).
 *
 * The device chart of a batch (shared by every kernel here and by the GPU Viterbi):
 *   - nsub = grammar.nsub_total float32 scores per cell layer, indexed by global substate id;
 *   - sentence s has n[s] words and owns cells cell0[s] .. cell0[s] + n(n+1)/2 - 1 of the
 *     batch; cell (i, j) of s is cell0[s] + chart_cell(n[s], i, j) (chart/chart.h order);
 *   - pre[cell * nsub + id] is the pre-unary layer (lexical scores in one-word cells, the
 *     best binary derivation above), post[cell * nsub + id] the post-unary layer;
 *   - -inf is impossible; the arithmetic is CHART_FLOAT's (chart/chart.h), so a device
 *     chart equals, value for value, the float chart of the CPU engine.
 *
 * Workspaces are the generated kernels' GPU layout (codegen/codegen.h): tiles of
 * KERNELS_TILE work items, `tile` floats apart; row x of work item t is at
 * (t / KERNELS_TILE) * tile + x * KERNELS_TILE + t % KERNELS_TILE.
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
#define KERNELS_TILE 128              /* work items per workspace tile (CODEGEN_THREADS) */

/* a[x * stride + t] = value for x < rows, t < n (32-bit words: float bits or keys). */
cudaError_t kernels_fill(void *a, int rows, int n, long long stride, unsigned value,
                         cudaStream_t stream);

/* Copy-transpose: WS(x, t) = chart[cell[t] * nsub + row[x]] for x < rows, t < n (row:
 * class-local row -> global substate id; WS the tiled layout above). */
cudaError_t kernels_gather(const float *chart, int nsub, const int *cell, int n,
                           const int *row, int rows, float *ws, long long tile,
                           cudaStream_t stream);

/* Atomic max reduce of a parent workspace of keys (codegen.h's GPU contract):
 * chart[cell[t] * nsub + row[x]] = max(itself, key(WS(x, t))) for x < rows, t < n. */
cudaError_t kernels_reduce(const int *ws, long long tile, int n, const int *cell,
                           const int *row, int rows, float *chart, int nsub,
                           cudaStream_t stream);

/* Prepare the unary step for nsub substates on the current device: *lanes = the cells a
 * block takes (up to 32; (lanes + 1) * nsub floats of shared memory), and the kernel's
 * shared-memory limit set to match; cudaErrorInvalidValue if not even one cell fits. */
cudaError_t kernels_unary_setup(int nsub, int *lanes);

/* Closed unary step over `ncell` cells: for each listed cell c and substate p,
 *   post[c][p] = max(pre[c][p], max over unary entries (p <- q, w) of pre[c][q] + w),
 * the entries of parent p being child[first[p] .. first[p+1]) and weight[...] (CSR of
 * global ids; kviterbi_csr's un_* tables); `lanes` from kernels_unary_setup. */
cudaError_t kernels_unary(const float *pre, float *post, int nsub, const int *cell, int ncell,
                          const int *first, const int *child, const float *weight, int lanes,
                          cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
