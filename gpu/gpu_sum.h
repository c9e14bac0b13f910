/* gpu_sum: the sum-product passes (inside and outside, for max-rule) on one GPU device, with
 * the arithmetic of parser/sum_rules.h: the same bits as the cpu engine's sum_chart.
 *
 * Made with the engine of a max-rule parser (the three roles' programs fetched beside the
 * max-plus one while the context is made, parser/gpu_dev.h), else on first use (compiled or
 * fetched from the cache then). For each sub-batch the device charts of gpu_dev (pre, post)
 * hold the scaled inside layers, and gpu_sum adds the outside layers (opre, opost), the four
 * exponent arrays and the pull lists. The steps (gpu_sum_ops, ctx: the gpu_sum) enqueue on
 * the device's stream; the binary steps run the generated kernels a workspace at a time
 * (each kernel's code blocks in parallel, into partial slots that kernels_sum_fold_slots adds
 * into the workspace in order) and add the work items into their cells with kernels_sum_add,
 * in plan order (inside) or pull order (outside), at exponents set by kernels_sum_exp before
 * the span's first family. The families but XX run on the device's side stream
 * (gpu_dev_lane), with partial slots of their own, and add their items after XX's: the
 * same adds in the same order as on one stream. */
#ifndef CKY_PARSER_GPU_SUM_H
#define CKY_PARSER_GPU_SUM_H

#include "kernels.h"
#include "gpu_dev.h"

typedef struct gpu_sum {
    gpu_dev *d;
    codegen_program *prog[3];               /* sum-product kernels by codegen_role */
    gpu_kernel *kernel[3][CODEGEN_NFAMILY];
    kernels_sum_fold *fold[3][CODEGEN_NFAMILY]; /* each kernel's slots (device arrays) */
    void *folds;                            /* one device allocation: the folds' arrays */
    gpu_buffer part, side_part;             /* the kernels' partial slots: a launch's,
                                               on the main and the side stream */
    cudaEvent_t xx_added;                   /* after XX's adds into the span's cells */
    void *tables;                           /* one device allocation: up and down */
    kernels_sum_table up, down;
    gpu_buffer opre, opost, exps;           /* device: outside layers; 4 x ncell ints */
    gpu_buffer d_pull, h_pull;              /* pull lists (device; pinned host) */
    int *epre, *epost, *eopre, *eopost;     /* in exps, for the current plan */
    struct gpu_maxc *maxc;                  /* max-c and the trees (parser/gpu_maxc.h) */
} gpu_sum;

/* The sum-product state of device d for grammar d->g (maxrule_check_grammar's errors):
 * the three roles' programs taken from d->sum_prog (compiled there first when they are
 * not: gpu_dev_compile_sum), their kernels loaded, the tables uploaded. */
cky_status gpu_sum_new(gpu_dev *d, gpu_sum **out);

void gpu_sum_free(gpu_sum *s);

/* Device bytes per cell beyond the Viterbi charts (for sub-batch sizing), and per item. */
size_t gpu_sum_cell_bytes(const gpu_sum *s);
size_t gpu_sum_item_bytes(void);

/* Room for plan p (which has its pull lists, plan_add_pull): outside layers and exponents
 * on the device, pull lists on the host. */
cky_status gpu_sum_reserve(gpu_sum *s, const plan *p);

/* Fill the pull lists of p into the host buffer (on `threads` host threads) and enqueue
 * their upload. */
cky_status gpu_sum_pull(gpu_sum *s, const plan *p, int threads);

/* Enqueue the start of the inside pass: pre all zero, epre 2 CHART_EXP_NONE (raised span by
 * span), the lexical layers of the one-word cells (word w of the batch, sentence by sentence,
 * into cell cells[w] from lex[rep[w] * nsub ..] and lexexp[rep[w]]; pinned host memory that
 * stays valid until the stream is synced). */
cky_status gpu_sum_begin_inside(gpu_sum *s, const plan *p, const float *lex, const int *lexexp,
                                const int *rep, const int *cells);

/* Enqueue the start of the outside pass: opost zero but ROOT's 1 at the roots. */
cky_status gpu_sum_begin_outside(gpu_sum *s, const plan *p);

extern const engine_ops gpu_sum_ops;

#endif
