/* maxc_kernels: max-rule's max-c scores and trees on the GPU (maxc_kernels.cu), in the
 * arithmetic of maxc_rules.h, the same bits as the cpu engine's maxc_cpu_run. C and C++.
 * Every launcher enqueues on `stream` and returns cudaGetLastError(). */
#ifndef CKY_DECODERS_MAXC_KERNELS_H
#define CKY_DECODERS_MAXC_KERNELS_H

#include <cuda_runtime_api.h>

#include "maxc_rules.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MAXC_UNARIES_MAX 20480 /* the most closed unaries maxc_launch_span takes (their sums
                                  fill 160 KiB of a block's shared memory) */

/* Each symbol's best binary candidate in each listed cell (cells[3 m ..]: the sentence's
 * first cell c0, its words n, the start i; the cell is (i, i + span)), span >= 2: its
 * score, split and children into y's bscore, split, left and right (none: -inf and -1),
 * from the sums S of the candidates that may beat their parent's bounds (the others are
 * skipped). scratch: maxc_scratch_bytes(t, ncell) bytes of device memory. */
cudaError_t maxc_launch_sums(const maxc_tables *t, const maxc_layers *y, const int *cells,
                              int ncell, int span, double *scratch, cudaStream_t stream);

/* Bytes of maxc_launch_sums' scratch over ncell cells (a task counter and a few blocks'
 * warps' worth however many cells). */
size_t maxc_scratch_bytes(const maxc_tables *t, int ncell);

/* Span `span` of max-c over the listed cells (as for maxc_launch_sums, which took the
 * binary candidates of spans >= 2 before): the POS tags' lexical scores (span 1), then
 * every symbol's best unary. cudaErrorInvalidValue when the grammar has more than
 * MAXC_UNARIES_MAX closed unaries. */
cudaError_t maxc_launch_span(const maxc_tables *t, const maxc_layers *y, const int *cells,
                              int ncell, int span, cudaStream_t stream);

/* For each sentence k (sent[2 k ..]: c0, n): maxc_extract into nodes + node0[k] (its stack
 * at stack + node0[k]); result[4 k ..]: its status, its node count, the bits of ROOT's post
 * value over the sentence and its exponent; score[k] ROOT's max-c score. */
cudaError_t maxc_launch_walk(const maxc_tables *t, const maxc_layers *y, const int *sent,
                              int n, const long long *node0, int *nodes, int *stack,
                              int *result, double *score, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
