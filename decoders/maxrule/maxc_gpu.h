/* maxc_gpu: max-rule's max-c scores and trees on the GPU device (maxc_rules.h, the same bits
 * as the cpu engine's maxc_cpu_run), after the sum-product passes of a sub-batch
 * (gpu_sum_layers, gpu/gpu.h): span by span, each symbol's best binary candidate from the
 * sums of those that may be the best (maxc_launch_sums), then the lexical scores and the
 * best unaries (maxc_launch_span); then one thread per sentence walks its tree into node
 * codes, which come back to the host with each sentence's status and score. Internal to the
 * max-rule decoder (maxrule_decode.c makes the trees). */
#ifndef CKY_DECODERS_MAXC_GPU_H
#define CKY_DECODERS_MAXC_GPU_H

#include "../../gpu/gpu.h"
#include "maxc.h"
#include "maxc_kernels.h"

typedef struct gpu_maxc {
    gpu_dev *d;
    int stage_sums, stage_cells;      /* its profiling stages: "max-c sums", "max-c cells" */
    maxc_host *host;                  /* the tables on the host */
    void *d_tables;                   /* their device copy */
    maxc_tables t;                    /* pointing into d_tables */
    gpu_buffer arrays;                /* device: bscore, score, split, left, right, child */
    gpu_buffer d_list, h_list;        /* cells by span (3 ints each), sentences (2 ints each),
                                         node offsets (long long) */
    gpu_buffer d_nodes, d_stack;      /* device: node codes, the walks' stacks */
    gpu_buffer d_out, h_out;          /* results (4 ints) and scores (double) of sentences */
    gpu_buffer scratch;               /* maxc_launch_sums' task counter, its warps' rows' V
                                         and rules' best children's scores */
    gpu_buffer h_nodes;               /* pinned: node codes */
    /* after gpu_maxc_run, for sentence k of the sub-batch (host memory) */
    const long long *node0;
    const int *nodes, *result;        /* result[4 k ..]: MAXC_*, the node count, the bits of
                                         ROOT's float inside value and its exponent */
    const double *score;
} gpu_maxc;

/* The max-c state of device d for its grammar (its stages named there). */
cky_status gpu_maxc_new(gpu_dev *d, gpu_maxc **out);

void gpu_maxc_free(gpu_maxc *m);

/* Device bytes per cell of a sub-batch, for its sizing. */
size_t gpu_maxc_cell_bytes(const gpu_dev *d);

/* Run max-c and the walks over the sub-batch of plan p, whose sum-product layers y the passes
 * left, and bring the results back (synchronizes the device's stream). */
cky_status gpu_maxc_run(gpu_maxc *m, const gpu_sum_layers *y, const plan *p);

#endif
