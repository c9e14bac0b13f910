/* gpu_dev: one GPU of the GPU engine: its stream, buffers, generated kernels, rule tables
 * and profiling, and the engine steps (parser/engine.h) on it.
 *
 * A device holds the batch charts of one sub-batch (kernels/kernels.h layout: pre and post
 * layers, the cells numbered by the sub-batch's plan) and its work-item arrays (gpu_items).
 * Its binary step takes the items of one span length and family `width` at a time: the
 * child vectors are copy-transposed into symbol-major workspaces, the family's generated
 * kernels (codegen/, NVRTC cubins) run over them, and the parent workspace is max-reduced
 * into the cells' pre-unary layer with atomics; its unary step fills the post-unary layer
 * of a span's cells. Everything is enqueued on the device's stream but the binary steps of
 * families XT, TX and TT, which run on a side stream with workspaces of their own, beside
 * XX's: the side stream waits for the main one before a span's first family
 * (gpu_dev_fork), and the main one for the side one before the span's unary step
 * (gpu_dev_join). The atomic max reduce is order-free; the sum-product steps add their
 * items in family order (parser/gpu_sum.h).
 *
 * The struct is public so that the engine (parser/gpu.h) and the decoders running on the
 * device (parser/gpu_viterbi.h) reach its stream, charts and tables; only gpu_dev.c
 * changes the kernels, tables and workspaces. */
#ifndef CKY_PARSER_GPU_DEV_H
#define CKY_PARSER_GPU_DEV_H

#include "../codegen/codegen.h"
#include "../grammar/grammar.h"
#include "../kernels/gpu.h"
#include "../kernels/viterbi_gpu.h"
#include "engine.h"
#include "plan.h"

/* Where the time goes (seconds, summed over parses since the device was opened). Device
 * stages are measured with CUDA events when profiling is on, host stages with the wall
 * clock. The generated kernels have one stage per family: GPU_STAGE_XX + f. */
typedef enum gpu_stage {
    GPU_STAGE_LEXICON,   /* lexical scores on the host, and their upload */
    GPU_STAGE_HOST,      /* work item lists and other host work */
    GPU_STAGE_TRANSFER,  /* uploads of work items and downloads of results */
    GPU_STAGE_GATHER,    /* copy-transpose into the workspaces (and -inf fills) */
    GPU_STAGE_XX,        /* the generated kernels of family f: GPU_STAGE_XX + f */
    GPU_STAGE_FAMILY_LAST = GPU_STAGE_XX + CODEGEN_NFAMILY - 1,
    GPU_STAGE_REDUCE,    /* atomic max into the chart */
    GPU_STAGE_UNARY,     /* the closed unary step */
    GPU_STAGE_VITERBI,   /* tree extraction */
    GPU_STAGE_MAXC_SUMS, /* max-rule: the best binary candidates (kernels_maxc_sums) */
    GPU_STAGE_MAXC_CELLS,/* the lexical scores and best unaries (kernels_maxc_span) */
    GPU_STAGE_MAXC,      /* the rest of max-c (the walks, transfers, the trees on the host;
                            when profiling, after the outside pass is done); all of it when
                            profiling is off */
    GPU_NSTAGE
} gpu_stage;

/* "lexicon", "XX" (the family's name for a family stage), ... */
const char *gpu_stage_name(gpu_stage s);

typedef struct gpu_stats {
    double seconds[GPU_NSTAGE];
    double rule_evaluations;                    /* work items x rules of their kernels */
    double work_items[CODEGEN_NFAMILY];         /* per family */
    double family_evaluations[CODEGEN_NFAMILY]; /* rule evaluations per family */
    /* per pass and semiring: device seconds of the generated kernels (profiling on) and
     * their rule evaluations */
    double pass_seconds[ENGINE_NPASS][CODEGEN_NSEMIRING];
    double pass_evaluations[ENGINE_NPASS][CODEGEN_NSEMIRING];
    long sentences, sub_batches, oom_retries;
} gpu_stats;

/* A grow-only buffer, on the device or pinned on the host. */
typedef struct gpu_buffer {
    void *p;
    size_t cap;
} gpu_buffer;

/* Grow b to hold `bytes` (its contents are not kept): device memory, or pinned host memory
 * when `pinned`. CKY_ERR_NOMEM when the memory is not there. */
cky_status gpu_buffer_need(gpu_buffer *b, size_t bytes, int pinned);

/* Release b (device or pinned memory as it was made) and zero it. */
void gpu_buffer_free(gpu_buffer *b, int pinned);

/* The work-item arrays of a plan in one buffer (host or device, the same layout):
 * left, right, parent [nitem] in plan order, cells [ncell] span by span (plan_fill_cells),
 * roots [n] (plan_root_cell). */
typedef struct gpu_items {
    int *left, *right, *parent, *cells, *roots;
} gpu_items;

/* Ints of the arrays of plan p. */
size_t gpu_items_ints(const plan *p);

/* The arrays of plan p in the buffer at base. */
gpu_items gpu_items_at(void *base, const plan *p);

#define GPU_DEV_MAX_CHUNK (1 << 20) /* the most tiles per chunk */
#define GPU_DEV_PART_MB 1024        /* the default room for partial slots, MiB */
#define GPU_DEV_MAX_PART_MB 65536

/* Settings of a device (parser_options fills them; tests set them directly). */
typedef struct gpu_dev_options {
    int device;      /* CUDA device number */
    int width;       /* work items per workspace (0: default, 131,072) */
    int block_tiles; /* workspace tiles per thread block of a binary kernel, 1 to 8 (0:
                        default 4) */
    int chunk;       /* tiles per chunk of a binary kernel's grid (codegen.h); -1: the
                        defaults (gpu_dev.chunk, sum_chunk); 0: each code block over all
                        tiles in turn */
    const char *cache_dir; /* kernel cache (NULL: $CKY_CACHE, else ~/.cache/cky; "off") */
    int sum_only;    /* the max-plus kernels compiled (their classes lay out the workspaces)
                        but not loaded: a max-rule parser runs the sum-product ones alone
                        (compiled beside them, while the context is made) */
    int part_mb;     /* MiB for the sum-product kernels' partial slots (parser/gpu_sum.h),
                        which set how many work items one launch takes (0: the default) */
    progress_sink progress; /* reports of the kernel compilation (util/progress.h) */
} gpu_dev_options;

typedef struct event_pair event_pair;

typedef struct gpu_dev {
    const grammar *g;
    gpu_device info;
    char desc[320];
    codegen_program *prog;
    gpu_kernel *kernel[CODEGEN_NFAMILY]; /* NULL with gpu_dev_options.sum_only */
    codegen_program *sum_prog[3]; /* the sum-product roles (parent, left, right), compiled
                                     with the max-plus program when sum_only, else by
                                     gpu_dev_compile_sum; parser/gpu_sum.h takes them */
    kviterbi_tables *tables; /* the grammar's rule tables (unary step, decoders) */
    cudaStream_t stream; /* every step but the side families' binary ones */
    cudaStream_t side;   /* the binary steps of XT, TX and TT (gpu_dev_lane) */
    cudaEvent_t forked, joined; /* gpu_dev_fork, gpu_dev_join */
    cudaStream_t cur;    /* the stream of the stage under way, for its profiling events */
    int width, nsub;
    int tile;        /* floats per workspace tile: the most rows of a class x KERNELS_TILE */
    int block_tiles; /* tiles per thread block of a binary kernel (codegen.h): 4, so that the
                        warps of an SM run few code blocks and share the instruction cache */
    int chunk;       /* tiles per chunk of a max-plus kernel's grid (codegen.h): half the SM
                        count, so that the code blocks of one tile run together and its rows
                        are loaded once into L1/L2; 0: code block by code block */
    int sum_chunk;   /* the same for the sum-product kernels: a quarter of the SM count
                        (both measured on eng-sm6-shape, docs/performance.md, session 18) */
    int unary_lanes; /* cells per block of the unary step */
    size_t part_bytes; /* gpu_dev_options.part_mb, in bytes */
    char *cache_dir; /* gpu_dev_options.cache_dir, copied (the sum-product kernels are
                        loaded later, parser/gpu_sum.h) */
    progress_sink progress; /* gpu_dev_options.progress */
    int *d_row[2];   /* class-local row -> global id, classes X and T */
    float *ws[3];    /* left, right, parent workspaces: width / KERNELS_TILE tiles */
    float *side_ws[3]; /* the same for the side stream's families */
    gpu_buffer pre, post;       /* device charts of the sub-batch */
    gpu_buffer d_items, h_items; /* gpu_items of the sub-batch */
    int profile;
    engine_pass pass;       /* of the step under way (set by the steps, for the statistics) */
    codegen_semiring semiring;
    event_pair *ev;
    int nev, cap_ev;
    gpu_stats stats;
} gpu_dev;

/* Open CUDA device o->device, compile (or fetch from the cache) the grammar's kernels for
 * it, load them and its rule tables. CKY_ERR_NO_DEVICE without a usable GPU, CKY_ERR_ARG
 * for settings out of range. */
cky_status gpu_dev_new(const grammar *g, const gpu_dev_options *o, gpu_dev **out);

void gpu_dev_free(gpu_dev *d);

/* Compile (or fetch from the cache) the three sum-product roles' programs into
 * d->sum_prog, each on a host thread of its own, unless they are there already. */
cky_status gpu_dev_compile_sum(gpu_dev *d);

/* The kernels of program p loaded on the current device: kernel[f][0 .. nkernel) for each
 * family (kernel[f] calloc'ed). On failure what was loaded stays for gpu_dev_unload_kernels. */
cky_status gpu_dev_load_kernels(const codegen_program *p, gpu_kernel *kernel[CODEGEN_NFAMILY]);

/* The kernels of n programs at once, p[q]'s into kernel[q] (as gpu_dev_load_kernels). */
cky_status gpu_dev_load_programs(const codegen_program *const *p,
                                 gpu_kernel *kernel[][CODEGEN_NFAMILY], int n);

/* Unload and free kernels of program p loaded by gpu_dev_load_kernels (NULL arrays, or a
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

/* Bracket a device stage with CUDA events on d->cur when profiling is on (a family stage
 * also counts for d->pass, d->semiring). Stages on the two streams overlap: their times
 * add up to more than the wall clock. */
cky_status gpu_dev_prof_begin(gpu_dev *d);
cky_status gpu_dev_prof_end(gpu_dev *d, gpu_stage stage);

/* After a stream synchronization: add the recorded stage times to the statistics (or,
 * with `drop`, forget them after a failure). */
cky_status gpu_dev_prof_collect(gpu_dev *d, int drop);

/* The engine steps on a device (ctx: the gpu_dev), enqueued on its stream over the device
 * charts and items of the plan; inside max-plus only. */
extern const engine_ops gpu_dev_ops;

#endif
