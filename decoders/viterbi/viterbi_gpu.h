/* gpu_viterbi: the Viterbi decoder on the GPU engine's device: the root scores gathered
 * from the device charts, the GPU Viterbi extraction (kernels/viterbi_gpu.h, bit for bit
 * viterbi_extract_array) and the download of the extraction arrays; on request the device
 * charts too, copied back for a decoder on the host (the Berkeley back-trace).
 * Un-annotation into trees is the host decoder's (parser/decode.h). */
#ifndef CKY_PARSER_GPU_VITERBI_H
#define CKY_PARSER_GPU_VITERBI_H

#include "../../chart/chart.h"
#include "viterbi.h"
#include "../../gpu/gpu_engine.h"

typedef struct gpu_viterbi gpu_viterbi;

/* The decoder's device state for engine e (its buffers on e's device). */
cky_status gpu_viterbi_new(gpu_engine *e, gpu_viterbi **out);

void gpu_viterbi_free(gpu_viterbi *v);

/* Parse n sentences, each of at least one word, with v's engine and decode them. For each
 * k: root[k] = the root log score (-inf: no parse), nodes[k] = a malloc'ed extraction array
 * of 2 n_k - 1 nodes (viterbi/viterbi.h; NULL when there is no parse), and, if charts is not
 * NULL, charts[k] = the sentence's CHART_FLOAT chart copied back to the host. On failure
 * nothing is returned (all outputs NULL / unset). */
cky_status gpu_viterbi_parse(gpu_viterbi *v, const sentence *s, int n, double *root,
                             viterbi_node **nodes, chart **charts);

#endif
