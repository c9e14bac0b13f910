/* viterbi_kernels: the GPU Viterbi extraction (Canny, Hall and Klein 2013, §6 and Algorithm
 * 1), bit for bit viterbi_extract_array (viterbi.h) on the float chart of every sentence.
 * C and C++ (viterbi_kernels.cu includes it).
 *
 * One thread block per sentence walks the output array in prefix order, which is its own work
 * queue (node p's children are p + 1 and p + 2 * width(left child)); for each node the block's
 * threads search the parent substate's rules in parallel and take a block-wide minimum:
 *   - unary step: identity if post == pre at the node's substate; else, over the closed unary
 *     entries (child, w) of the parent substate, the smallest global child id whose float
 *     pre[child] + w equals post;
 *   - binary step: split k = i + 1, i + 2, ... in turn; over the binary entries (left, right,
 *     w) of the parent substate, the smallest (global left id, global right id) whose float
 *     (post[left] + post[right]) + w equals pre; the first split with a match wins.
 * The arithmetic is CHART_FLOAT's (chart/chart.h): w is the grammar's double score cast to
 * float, and the two adds are done in that order, rounded to nearest, never fused; with
 * `fixed`, CHART_FIXED's (fixedpoint_binary of the same float w and children). The
 * searches run over the rule tables of the GPU backend (gpu_rules, gpu/kernels.h), whose
 * entries are sorted so that the smallest matching key is the smallest matching index. */
#ifndef CKY_DECODERS_VITERBI_KERNELS_H
#define CKY_DECODERS_VITERBI_KERNELS_H

#include <cuda_runtime_api.h>

#include "../../gpu/kernels.h"
#include "viterbi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-sentence results of the extraction. */
enum {
    VITERBI_GPU_OK = 0,          /* nodes hold the extraction */
    VITERBI_GPU_NO_PARSE = 1,    /* the ROOT post score over (0, n) is -inf (or n < 1): nodes
                                  * untouched */
    VITERBI_GPU_INCONSISTENT = 2 /* no derivation matches some node's score: the chart is not
                                  * a max-sum chart of this grammar (nodes partly written) */
};

/* Enqueue the extraction of a batch of nsent sentences on `stream` (asynchronous: sync the
 * stream before reading the results). All pointers are device pointers, `dev` the device's
 * rule tables (gpu_rule_tables.dev):
 *   - pre, post: the batch device chart of gpu/kernels.h, nsub (= dev->nsub) floats per cell
 *     layer; sentence s has n[s] words and its cells start at cell0[s];
 *   - nodes: sentence s gets its 2 n[s] - 1 nodes at nodes[node0[s] ...], in prefix order,
 *     exactly as viterbi_extract_array on the CHART_FLOAT (fixed: CHART_FIXED) chart of the
 *     same scores;
 *   - status[s]: VITERBI_GPU_OK, VITERBI_GPU_NO_PARSE or VITERBI_GPU_INCONSISTENT.
 * No checks (viterbi_gpu_run makes them). Returns cudaGetLastError(). */
cudaError_t viterbi_gpu_launch(const gpu_rules *dev, const float *pre, const float *post,
                               int nsub, int nsent, const int *n, const long long *cell0,
                               const int *node0, viterbi_node *nodes, int *status,
                               int fixed, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
