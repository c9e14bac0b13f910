/* viterbi_gpu: the Viterbi decoder's device part on the gpu engine: the root scores gathered
 * from the device charts, the GPU extraction (viterbi_kernels.h) and the download of the
 * extraction arrays; on request the device charts too, copied back for the Berkeley
 * back-trace on the host. Internal to the decoder (viterbi_decode.c makes the trees). */
#ifndef CKY_DECODERS_VITERBI_GPU_H
#define CKY_DECODERS_VITERBI_GPU_H

#include "../../chart/chart.h"
#include "../../gpu/gpu.h"
#include "viterbi.h"
#include "viterbi_kernels.h"

typedef struct gpu_viterbi gpu_viterbi;

/* The decoder's device state for engine e (its buffers on e's device, its profiling stage
 * "viterbi" named there). */
cky_status gpu_viterbi_new(gpu_engine *e, gpu_viterbi **out);

void gpu_viterbi_free(gpu_viterbi *v);

/* Parse n sentences, each of at least one word, with v's engine and decode them. For each
 * k: root[k] = the root log score (-inf: no parse), nodes[k] = a malloc'ed extraction array
 * of 2 n_k - 1 nodes (NULL when there is no parse), and, if charts is not NULL, charts[k] =
 * the sentence's CHART_FLOAT (the engine in fixed point: CHART_FIXED) chart copied back to
 * the host; if out_of_range is not NULL, out_of_range[k] = 1 where the engine computes in
 * fixed point and clamped a score of sentence k (chart.out_of_range). On failure nothing is
 * returned (all outputs NULL / unset). */
cky_status gpu_viterbi_parse(gpu_viterbi *v, const sentence *s, int n, double *root,
                             viterbi_node **nodes, chart **charts, unsigned char *out_of_range);

/* The extraction of viterbi_gpu_launch (fixed: in CHART_FIXED's arithmetic), checked:
 * CKY_ERR_ARG if nsub differs from the tables' or nsent < 0; nsent == 0 enqueues nothing;
 * else GPU_CHECK's errors. */
cky_status viterbi_gpu_run(const gpu_rule_tables *t, const float *pre, const float *post,
                           int nsub, int nsent, const int *n, const long long *cell0,
                           const int *node0, viterbi_node *nodes, int *status, int fixed,
                           cudaStream_t stream);

#endif
