/* gpu: the GPU engine, the scheduler of the paper (§3) on an NVIDIA GPU.
 *
 * A batch of sentences gets device charts (kernels/kernels.h layout). Lexical scores are
 * computed on the host and copied into the one-word cells; then for each span length d,
 * over all sentences of the batch: the work items (sentence, parent cell, left cell, right
 * cell) of each family (XX for every split, XT/TX where the right/left child is one word,
 * TT for two-word spans) are taken `width` at a time: the child vectors are copy-transposed
 * into symbol-major workspaces, the family's generated kernels (codegen/, NVRTC cubins) run
 * over them, and the parent workspace is max-reduced into the cells' pre-unary layer with
 * atomics; then the closed unary step fills the post-unary layer of the span's cells.
 * Finally the GPU Viterbi (kernels/viterbi_gpu.h) extracts every best tree.
 *
 * The charts are CHART_FLOAT charts bit-identical to the CPU engine's (same float adds,
 * exact order-independent max), so trees and root scores are identical too. Work is cut
 * into sub-batches that fit the device memory; an out-of-memory error halves the
 * sub-batch instead of failing. */
#ifndef CKY_PARSER_GPU_H
#define CKY_PARSER_GPU_H

#include "../grammar/grammar.h"
#include "../viterbi/viterbi.h"
#include "chart.h"
#include "sentence.h"

typedef struct gpu_engine gpu_engine;

/* Where the time goes (seconds, summed over parses since the engine was made). Device stages
 * are measured with CUDA events when profiling is on (gpu_engine_profile), host stages
 * with the wall clock. */
typedef enum gpu_stage {
    GPU_STAGE_LEXICON,   /* lexical scores on the host, and their upload */
    GPU_STAGE_HOST,      /* work item lists and other host work */
    GPU_STAGE_TRANSFER,  /* uploads of work items and downloads of results */
    GPU_STAGE_GATHER,    /* copy-transpose into the workspaces (and -inf fills) */
    GPU_STAGE_XX, GPU_STAGE_XT, GPU_STAGE_TX, GPU_STAGE_TT, /* the generated kernels */
    GPU_STAGE_REDUCE,    /* atomic max into the chart */
    GPU_STAGE_UNARY,     /* the closed unary step */
    GPU_STAGE_VITERBI,   /* tree extraction */
    GPU_NSTAGE
} gpu_stage;

const char *gpu_stage_name(gpu_stage s);

typedef struct gpu_stats {
    double seconds[GPU_NSTAGE];
    double rule_evaluations; /* work items x rules of the kernels they ran through */
    double work_items[4];    /* per family (XX, XT, TX, TT) */
    double family_evaluations[4]; /* rule evaluations per family */
    long sentences, sub_batches, oom_retries;
} gpu_stats;

/* Open device `device`, compile (or fetch from the cache) the grammar's kernels for it and
 * load them. `width`: work items per workspace (0: default). CKY_ERR_NO_DEVICE without a
 * usable GPU. */
cky_status gpu_engine_new(const grammar *g, int device, int width, gpu_engine **out);

/* Describe the device in one line ("NVIDIA H200, 132 SMs, 139.8 GiB"). */
const char *gpu_engine_device(const gpu_engine *e);

/* Work items per kernel launch (the width of the workspaces). */
int gpu_engine_width(const gpu_engine *e);

/* Measure per-stage device times from now on (adds CUDA events; a little slower). */
void gpu_engine_profile(gpu_engine *e, int on);

/* Parse n sentences, each of at least one word. For each k: root[k] = the root log score
 * (-inf: no parse), nodes[k] = a malloc'ed extraction array of 2 n_k - 1 nodes
 * (viterbi/viterbi.h; NULL when there is no parse), and, if charts is not NULL,
 * charts[k] = the sentence's CHART_FLOAT chart copied back to the host. On failure nothing
 * is returned (all outputs NULL / unset). */
cky_status gpu_engine_parse(gpu_engine *e, const sentence *s, int n, double *root,
                            viterbi_node **nodes, chart **charts);

/* Statistics since the engine was made. */
const gpu_stats *gpu_engine_stats(const gpu_engine *e);

void gpu_engine_free(gpu_engine *e);

#endif
