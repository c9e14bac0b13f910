/* gpu: the GPU backend, the paper's scheduler (§3) on NVIDIA GPUs, behind one header.
 *
 * What the rest of the program sees of it:
 *   - the device plumbing: how many GPUs there are, opening one, loading and launching the
 *     generated kernels' cubins (cky links the CUDA runtime statically and needs the driver
 *     only when a GPU is used: on a machine without one gpu_count() is 0 and nothing else
 *     here is called; every device error goes through GPU_CHECK, util/gpu_check.h);
 *   - the engine (gpu_engine): a batch of sentences cut into sub-batches that fit the device
 *     memory (an out-of-memory error halves the sub-batch instead of failing); for each, the
 *     plan (sched/plan.h) and the lexical scores on host threads, then the passes that the
 *     decoder asks for, in its semiring, through the span loop of sched/engine.h, on the
 *     device charts; then the decoder's device part (gpu_decoder) reads its results off them;
 *   - the device (gpu_dev) and the sum-product layers (gpu_sum_layers), which the decoders'
 *     device parts read: streams, charts, work-item arrays, rule tables, buffers, stages;
 *   - the peak micro-benchmarks (gpu_peak_*), the ceilings of rule evaluation.
 *
 * The max-plus charts are CHART_FLOAT charts bit-identical to the cpu engine's (same float
 * adds, exact order-independent max); the sum-product layers are the cpu engine's sum_chart
 * bits (semiring/sum_rules.h: every sum in a fixed order, never a float atomic). The
 * backend's own kernels are declared in gpu/kernels.h, its internals in gpu/internal.h. */
#ifndef CKY_GPU_H
#define CKY_GPU_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "../codegen/codegen.h"
#include "../corpus_tools/sentence.h"
#include "../grammar/grammar.h"
#include "../sched/engine.h"
#include "../sched/plan.h"
#include "../util/gpu_check.h"
#include "../util/progress.h"
#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device plumbing ---------------------------------------------------------------- */

typedef struct gpu_device {
    int id;
    char name[256];
    int sm_count;
    int cc_major, cc_minor;
    size_t total_memory;
} gpu_device;

/* Number of usable CUDA devices: 0 when there is no GPU, no driver or a driver too old. */
int gpu_count(void);

/* Make device `id` current for the calling thread and describe it. CKY_ERR_NO_DEVICE if there
 * is no such device. */
cky_status gpu_open(int id, gpu_device *out);

/* A kernel of a cubin loaded into the current device's context. */
typedef struct gpu_kernel {
    cudaLibrary_t library;
    cudaKernel_t kernel;
    int max_threads; /* the most threads a block of it may have (launch bounds, registers) */
} gpu_kernel;

/* Load `cubin` (size bytes, e.g. from NVRTC) and look up its entry point `name`. */
cky_status gpu_kernel_load(const void *cubin, size_t size, const char *name, gpu_kernel *out);

/* Launch a loaded kernel; args as for cudaLaunchKernel. */
cky_status gpu_kernel_launch(const gpu_kernel *k, dim3 grid, dim3 block, void **args,
                             cudaStream_t stream);

void gpu_kernel_unload(gpu_kernel *k);

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

/* ---- the grammar's rule tables (gpu_rules: gpu/kernels.h) ------------------------------- */

/* Build the tables of g in host memory (malloc). CKY_ERR_LIMIT if g has more than INT_MAX
 * binary or unary entries, CKY_ERR_NOMEM on allocation failure; *out is then untouched.
 * Release with gpu_rules_free. */
cky_status gpu_rules_build(const grammar *g, gpu_rules *out);

/* Free the arrays of tables built by gpu_rules_build and zero them; NULL or zeroed is fine. */
void gpu_rules_free(gpu_rules *c);

/* The tables on the current device. */
typedef struct gpu_rule_tables {
    gpu_rules dev; /* device pointers */
} gpu_rule_tables;

/* Build g's tables and upload them to the current device (synchronously). Errors as
 * gpu_rules_build, and GPU_CHECK's for the device calls; *out is NULL then. */
cky_status gpu_rule_tables_new(const grammar *g, gpu_rule_tables **out);

/* Upload tables built by gpu_rules_build (h stays the caller's) to the current device
 * (synchronously). GPU_CHECK's errors; *out is NULL then. */
cky_status gpu_rule_tables_upload(const gpu_rules *h, gpu_rule_tables **out);

/* Free the device tables; NULL is fine. */
void gpu_rule_tables_free(gpu_rule_tables *t);

/* ---- where the time goes ---------------------------------------------------------------- */

/* The engine's stages (seconds, summed over parses since the device was opened). Device
 * stages are measured with CUDA events when profiling is on, host stages with the wall
 * clock. The generated kernels have one stage per family: GPU_STAGE_XX + f. A decoder's
 * device part adds stages of its own (gpu_dev_stage) after these. */
typedef enum gpu_stage {
    GPU_STAGE_LEXICON,  /* lexical scores on the host, and their upload */
    GPU_STAGE_HOST,     /* work item lists and other host work */
    GPU_STAGE_TRANSFER, /* uploads of work items and downloads of results */
    GPU_STAGE_GATHER,   /* copy-transpose into the workspaces (and -inf fills) */
    GPU_STAGE_XX,       /* the generated kernels of family f: GPU_STAGE_XX + f */
    GPU_STAGE_FAMILY_LAST = GPU_STAGE_XX + CODEGEN_NFAMILY - 1,
    GPU_STAGE_REDUCE,   /* max reduce (max-plus), ordered adds (sum-product) into the chart */
    GPU_STAGE_UNARY,    /* the closed unary step */
    GPU_NSTAGE_ENGINE
} gpu_stage;

#define GPU_MAX_STAGES 24 /* the engine's and the decoders' stages together */

typedef struct gpu_stats {
    int nstage;                              /* stages named so far */
    const char *stage_name[GPU_MAX_STAGES];  /* "lexicon", "XX", ..., then the decoders' */
    double seconds[GPU_MAX_STAGES];
    double rule_evaluations;                    /* work items x rules of their kernels */
    double work_items[CODEGEN_NFAMILY];         /* per family */
    double family_evaluations[CODEGEN_NFAMILY]; /* rule evaluations per family */
    /* per pass and semiring: device seconds of the generated kernels (profiling on) and
     * their rule evaluations */
    double pass_seconds[ENGINE_NPASS][CODEGEN_NSEMIRING];
    double pass_evaluations[ENGINE_NPASS][CODEGEN_NSEMIRING];
    long sentences, sub_batches, oom_retries;
} gpu_stats;

/* ---- one device ------------------------------------------------------------------------- */

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

/* When the generated kernels run. A grammar's first run compiles them (minutes for a large
 * grammar); meanwhile the generic kernel (codegen/generic.h) can run each one from a table
 * of its rules, with the same bits, slower. */
typedef enum gpu_kernels {
    GPU_KERNELS_WAIT = 0, /* parse once every kernel is compiled (cky bench: what it times) */
    GPU_KERNELS_EARLY,    /* compile in the background and parse at once: the generic kernel
                             for each kernel until its cubin is there (cky parse) */
    GPU_KERNELS_GENERIC   /* the generic kernel only, all kernels compiled (tests) */
} gpu_kernels;

/* Settings of a device (the front door fills them from parser_options; tests set them). */
typedef struct gpu_dev_options {
    int device;      /* CUDA device number */
    int width;       /* work items per workspace (0: default, 131,072) */
    int block_tiles; /* workspace tiles per thread block of a binary kernel, 1 to 8 (0:
                        default 4) */
    int chunk;       /* tiles per chunk of a binary kernel's grid (codegen.h); -1: the
                        defaults (gpu_dev.chunk, sum_chunk); 0: each code block over all
                        tiles in turn */
    const char *cache_dir; /* kernel cache (NULL: $CKY_CACHE, else ~/.cache/cky; "off") */
    codegen_semiring semiring; /* the decoder's: its kernels are loaded at start. For
                        sum-product the three roles' programs are compiled beside the
                        max-plus one (whose classes lay out the workspaces), which is not
                        loaded; for max-plus the sum-product ones come on first use */
    int part_mb;     /* MiB for the sum-product kernels' partial slots, which set
                        how many work items one launch takes (0: the default) */
    const char *ptxas; /* codegen_options.ptxas of every kernel (NULL: the default) */
    int fixed;       /* Viterbi's binary rules in fixed point (util/fixedpoint.h; the charts
                        CHART_FIXED's): CKY_ERR_LIMIT where the grammar's weights do not fit
                        (codegen_fixed_check) */
    progress_sink progress; /* reports of the kernel compilation (util/progress.h) */
    gpu_kernels kernels; /* when the compiled kernels take over (default: WAIT) */
} gpu_dev_options;

typedef struct event_pair event_pair;

/* One GPU: its streams, buffers, generated kernels, rule tables and profiling.
 *
 * A device holds the batch charts of one sub-batch (gpu/kernels.h layout: pre and post
 * layers, the cells numbered by the sub-batch's plan) and its work-item arrays (gpu_items).
 * Its binary step takes the items of one span length and family `width` at a time: the
 * child vectors are copy-transposed into symbol-major workspaces, the family's generated
 * kernels (codegen/, NVRTC cubins) run over them, and the parent workspace is max-reduced
 * into the cells' pre-unary layer with atomics; its unary step fills the post-unary layer
 * of a span's cells. Everything is enqueued on `stream` but the binary steps of families
 * XT, TX and TT, which run on `side` with workspaces of their own, beside XX's: the side
 * stream waits for the main one before a span's first family, and the main one for the side
 * one before the span's unary step. The atomic max reduce is order-free; the sum-product
 * steps add their items in family order (gpu/internal.h).
 *
 * The struct is public so that the decoders' device parts reach its stream, charts, items,
 * tables and buffers; only the backend changes the kernels, tables and workspaces. */
typedef struct gpu_dev {
    const grammar *g;
    gpu_device info;
    char desc[320];
    codegen_program *prog;
    gpu_kernel *kernel[CODEGEN_NFAMILY]; /* NULL unless the max-plus kernels are loaded */
    codegen_program *sum_prog[3]; /* the sum-product roles (parent, left, right), compiled
                                     at start for a sum-product decoder, else on first use;
                                     the sum-product passes take them */
    gpu_rule_tables *tables; /* the grammar's rule tables (unary step, decoders) */
    cudaStream_t stream; /* every step but the side families' binary ones */
    cudaStream_t side;   /* the binary steps of XT, TX and TT */
    cudaEvent_t forked, joined;
    cudaStream_t cur;    /* the stream of the stage under way, for its profiling events */
    int width, nsub;
    int tile;        /* floats per workspace tile: the most rows of a class x KERNELS_TILE */
    int block_tiles; /* tiles per thread block of a binary kernel (codegen.h): 4, so that the
                        warps of an SM run few code blocks and share the instruction cache */
    int chunk;       /* tiles per chunk of a max-plus kernel's grid (codegen.h): half the SM
                        count, so that the code blocks of one tile run together and its rows
                        are loaded once into L1/L2; 0: code block by code block */
    int sum_chunk;   /* the same for the sum-product kernels: a quarter of the SM count
                        (both measured on eng-sm6-shape, docs/history.md, session 18) */
    int unary_lanes; /* cells per block of the unary step */
    size_t part_bytes; /* gpu_dev_options.part_mb, in bytes */
    char *cache_dir; /* gpu_dev_options.cache_dir and .ptxas, copied (the sum-product */
    char *ptxas;     /* kernels may be compiled later) */
    progress_sink progress; /* gpu_dev_options.progress */
    int fixed;       /* gpu_dev_options.fixed: the max-plus kernels and charts in fixed point */
    gpu_kernels kernels;            /* gpu_dev_options.kernels */
    struct gpu_generic *generic;    /* the max-plus program's generic tables, while needed */
    int *d_row[2];   /* class-local row -> global id, classes X and T */
    float *ws[3];    /* left, right, parent workspaces: width / KERNELS_TILE tiles */
    float *side_ws[3]; /* the same for the side stream's families */
    gpu_buffer pre, post;       /* device charts of the sub-batch */
    gpu_buffer clamped;         /* fixed: a byte per cell of the sub-batch, set where the
                                   gather clamped one of its scores (util/fixedpoint.h) */
    gpu_buffer d_items, h_items; /* gpu_items of the sub-batch */
    int profile;
    engine_pass pass;       /* of the step under way (set by the steps, for the statistics) */
    codegen_semiring semiring;
    event_pair *ev;
    int nev, cap_ev;
    gpu_stats stats;
} gpu_dev;

/* The id of the profiling stage called `name` (a string that outlives the device), made
 * the next stage when there is none of that name yet: a decoder's device part names its
 * stages when it is made, so that every device of a pool numbers them alike. */
int gpu_dev_stage(gpu_dev *d, const char *name);

/* Bracket a device stage with CUDA events on d->cur when profiling is on (a family stage
 * also counts for d->pass, d->semiring). Stages on the two streams overlap: their times
 * add up to more than the wall clock. */
cky_status gpu_dev_prof_begin(gpu_dev *d);
cky_status gpu_dev_prof_end(gpu_dev *d, int stage);

/* After a stream synchronization: add the recorded stage times to the statistics (or,
 * with `drop`, forget them after a failure). */
cky_status gpu_dev_prof_collect(gpu_dev *d, int drop);

/* ---- the sum-product layers of a sub-batch ------------------------------------------------ */

/* What the sum-product passes (inside and outside, semiring/sum_rules.h: the cpu engine's
 * sum_chart bits) leave on the device for a sub-batch: scaled linear layers, float values
 * with one power-of-two exponent per cell and layer, all device pointers, cells numbered by
 * the sub-batch's plan. inside: pre (the device's chart pre) and post; outside: opost (what
 * the binary parents send) and opre (opost with the closure's terms). */
typedef struct gpu_sum_layers {
    float *pre, *post, *opre, *opost;
    int *epre, *epost, *eopre, *eopost;
} gpu_sum_layers;

/* ---- the engine ------------------------------------------------------------------------- */

typedef struct gpu_engine gpu_engine;

/* A decoder's device part: the passes it asks for, and what it reads off the device charts
 * of each sub-batch. The sentences of a sub-batch are first .. first + p->n - 1 of the
 * batch given to gpu_engine_parse; the device's items (gpu_items) hold the sub-batch's root
 * cells. */
typedef struct gpu_decoder {
    void *ctx;
    codegen_semiring semiring; /* max-plus: the inside pass, device charts pre, post of log
                                  scores; sum-product: scaled linear layers
                                  (gpu_engine_sum_layers) */
    unsigned passes;           /* 1u << ENGINE_PASS_*: inside, or inside and outside */
    /* Device bytes of its own for a sentence of n words, for sub-batch sizing. */
    size_t (*sentence_bytes)(void *ctx, int n);
    /* Before the passes: make room for the sub-batch and enqueue its uploads on d's
     * stream (the engine synchronizes). */
    cky_status (*prepare)(void *ctx, gpu_dev *d, const plan *p, const sentence *s, int first);
    /* After the passes: decode and download the results of the sub-batch. */
    cky_status (*finish)(void *ctx, gpu_dev *d, const plan *p, int first);
    /* After a failure: drop the results of sentences first .. first + n - 1. */
    void (*discard)(void *ctx, int first, int n);
} gpu_decoder;

/* Open device o->device, compile (or fetch from the cache) the grammar's kernels for it and
 * load those of o->semiring. CKY_ERR_NO_DEVICE without a usable GPU, CKY_ERR_ARG for
 * settings out of range. */
cky_status gpu_engine_new(const grammar *g, const gpu_dev_options *o, gpu_engine **out);

/* The sum-product layers of the sub-batch under way (for a sum-product decoder's finish;
 * all NULL before the engine ran sum-product passes). */
gpu_sum_layers gpu_engine_sum_layers(gpu_engine *e);

/* The engine's device. */
gpu_dev *gpu_engine_dev(gpu_engine *e);

/* Make the engine's device current for the calling thread (gpu_engine_parse does; the
 * engine's owner does before freeing it on another thread than the one that made it). */
cky_status gpu_engine_use(const gpu_engine *e);

/* Describe the device in one line ("NVIDIA H200 (device 0, sm_90, 132 SMs, 139.8 GiB)"). */
const char *gpu_engine_device(const gpu_engine *e);

/* Work items per kernel launch (the width of the workspaces). */
int gpu_engine_width(const gpu_engine *e);

/* Measure per-stage device times from now on (adds CUDA events; a little slower). */
void gpu_engine_profile(gpu_engine *e, int on);

/* Run dec's passes over n sentences, each of at least one word, sub-batch by sub-batch,
 * and its steps on each. On failure the decoder has discarded every result. */
cky_status gpu_engine_parse(gpu_engine *e, const sentence *s, int n, const gpu_decoder *dec);

/* Statistics since the engine was made. */
const gpu_stats *gpu_engine_stats(const gpu_engine *e);

void gpu_engine_free(gpu_engine *e);

/* ---- the peaks (what they measure, their constants and kinds: gpu/kernels.h) ----------- */

/* "add+max", "sum-product"; "?" for another value. */
const char *gpu_peak_kind_name(gpu_peak_kind kind);

/* What a measurement ran. */
typedef struct gpu_peak_detail {
    double seconds;    /* of the timed launch */
    double rule_evals; /* in the timed launch */
    int sm_count;      /* the device's SMs */
    int blocks;        /* of GPU_PEAK_THREADS threads: sm_count x resident blocks per SM */
    int trips;         /* loop trips per thread in the timed launch */
} gpu_peak_detail;

/* Measure the rule-evaluation rate of kind `kind` on the current device: a warm-up launch,
 * a calibration launch of GPU_PEAK_CALIBRATION_TRIPS trips, then one launch sized to take
 * about target_ms milliseconds (clamped to GPU_PEAK_MIN_MS .. GPU_PEAK_MAX_MS; at least the
 * calibration's size, gpu_peak_timed_trips), timed with CUDA events. On success
 * *rule_evals_per_second is its rate and, if detail is not NULL, *detail describes it.
 * CKY_ERR_NO_DEVICE without a usable device (gpu_count() 0: nothing is called),
 * CKY_ERR_ARG for an unknown kind, CKY_ERR_CUDA (or NOMEM) if a call fails. */
cky_status gpu_peak_measure(gpu_peak_kind kind, int target_ms, double *rule_evals_per_second,
                            gpu_peak_detail *detail);

/* The rule evaluations of one launch of `blocks` blocks running `trips` loop trips. */
double gpu_peak_launch_evaluations(int blocks, int trips);

/* The loop trips of the timed launch, after a calibration launch of `trips` trips took
 * `ms` milliseconds: enough for target_ms (clamped as for gpu_peak_measure) at that rate, at
 * least `trips`, at most INT_MAX / 2 (a calibration faster than 1 microsecond counts as 1). */
int gpu_peak_timed_trips(int trips, float ms, int target_ms);

#ifdef __cplusplus
}
#endif

#endif
