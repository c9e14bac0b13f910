/* gpu internal: what the files of the GPU backend share and nothing outside it uses: the
 * device's making and its steps (gpu_dev.c), the sum-product passes (gpu_sum.c), for the
 * engine (gpu_engine.c). */
#ifndef CKY_GPU_INTERNAL_H
#define CKY_GPU_INTERNAL_H

#include "gpu.h"

/* ---- the device (gpu_dev.c) ---- */

/* Open CUDA device o->device, compile (or fetch from the cache) the grammar's kernels for
 * it, load those of o->semiring and its rule tables. CKY_ERR_NO_DEVICE without a usable GPU,
 * CKY_ERR_ARG for settings out of range. */
cky_status gpu_dev_new(const grammar *g, const gpu_dev_options *o, gpu_dev **out);

void gpu_dev_free(gpu_dev *d);

/* Compile (or fetch from the cache) the three sum-product roles' programs into
 * d->sum_prog, each on a host thread of its own, unless they are there already. */
cky_status gpu_dev_compile_sum(gpu_dev *d);

/* The kernels of n programs at once, p[q]'s into kernel[q][f][0 .. nkernel) for each family
 * (kernel[q][f] calloc'ed), on a few host threads: those that are ready (a background
 * compile's others come later, gpu_dev_compiled; none with GPU_KERNELS_GENERIC). On
 * failure what was loaded stays for gpu_dev_unload_kernels. */
cky_status gpu_dev_load_programs(const gpu_dev *d, const codegen_program *const *p,
                                 gpu_kernel *kernel[][CODEGEN_NFAMILY], int n);

/* The generic kernel's tables of a program on the device (codegen/generic.h): per family,
 * the entries and the code blocks (kernels_generic_block). */
typedef struct gpu_generic {
    struct codegen_generic_rule *rule[CODEGEN_NFAMILY];
    kernels_generic_block *block[CODEGEN_NFAMILY];
} gpu_generic;

/* The tables of program p in semiring sr, uploaded, when d needs them for p (kernels still
 * compiling, or GPU_KERNELS_GENERIC); else *out = NULL. */
cky_status gpu_generic_new(const gpu_dev *d, const codegen_program *p, codegen_semiring sr,
                           gpu_generic **out);
void gpu_generic_free(gpu_generic *g);

/* Kernel k of program p's family f, to launch: its compiled form (loaded into
 * kernel[f][k] when it has become ready), or NULL when the generic kernel is to run it
 * (not compiled yet, or GPU_KERNELS_GENERIC). *st: a failed load. */
const gpu_kernel *gpu_dev_compiled(const gpu_dev *d, const codegen_program *p,
                                   gpu_kernel *const kernel[CODEGEN_NFAMILY],
                                   codegen_family_id f, int k, cky_status *st);

/* Launch kernel k of family f of partition `part` through the generic tables g (the
 * arguments as the compiled kernel's: codegen.h, gpu_sum.c). */
cky_status gpu_generic_launch(const gpu_generic *g, const codegen_partition *part,
                              codegen_family_id f, int k, codegen_semiring sr,
                              const float *left, const float *right, float *parent, int n,
                              int tile, int ptile, cudaStream_t stream);

/* Unload and free kernels of program p loaded by gpu_dev_load_programs (NULL arrays, or a
 * NULL p with NULL arrays, are fine). */
void gpu_dev_unload_kernels(const codegen_program *p, gpu_kernel *kernel[CODEGEN_NFAMILY]);

/* Make room for the charts and items of plan p: the host item buffer (pinned) when
 * `host`, else the device charts and items. */
cky_status gpu_dev_reserve(gpu_dev *d, const plan *p, int host);

/* Count n work items of family f through kernels of `nrule` rules, for the pass and
 * semiring of d->pass, d->semiring. */
void gpu_dev_count(gpu_dev *d, codegen_family_id f, int n, long nrule);

/* Where family f's binary step runs: its stream and workspaces (XX: d->stream and d->ws;
 * the others: d->side and d->side_ws). Sets d->cur, the stream of the profiling events. */
typedef struct gpu_lane {
    cudaStream_t stream;
    float *const *ws; /* left, right, parent */
    int side;         /* 1 on the side stream */
} gpu_lane;
gpu_lane gpu_dev_lane(gpu_dev *d, codegen_family_id f);

/* Before the first binary step of a span: the side stream waits for what the main stream
 * has enqueued (the previous span's unary step). After its last: the main stream waits for
 * the side stream's steps (and d->cur is the main stream again). */
cky_status gpu_dev_fork(gpu_dev *d);
cky_status gpu_dev_join(gpu_dev *d);

/* The max-plus engine steps on a device (ctx: the gpu_dev), enqueued on its stream over the
 * device charts and items of the plan; inside only. */
extern const engine_ops gpu_dev_ops;

/* ---- the sum-product passes (gpu_sum.c; gpu.h's gpu_sum_layers says what they leave) ---- */

typedef struct gpu_sum {
    gpu_dev *d;
    codegen_program *prog[3];               /* sum-product kernels by codegen_role */
    gpu_kernel *kernel[3][CODEGEN_NFAMILY];
    gpu_generic *generic[3];                /* their generic tables, while needed */
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
} gpu_sum;

/* The sum-product state of device d for grammar d->g (grammar_check_sum's errors): the
 * three roles' programs taken from d->sum_prog (compiled there first when they are not:
 * gpu_dev_compile_sum), their kernels loaded, the tables uploaded. */
cky_status gpu_sum_new(gpu_dev *d, gpu_sum **out);

void gpu_sum_free(gpu_sum *s);

/* Device bytes per cell beyond the max-plus charts (for sub-batch sizing), and per item. */
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

/* The sum-product engine steps (ctx: the gpu_sum), inside and outside. */
extern const engine_ops gpu_sum_ops;

#endif
