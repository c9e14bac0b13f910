/* gpu: the GPU engine, the scheduler of the paper (§3) on NVIDIA GPUs.
 *
 * A batch of sentences is cut into sub-batches that fit the device memory (an
 * out-of-memory error halves the sub-batch instead of failing). For each sub-batch the
 * engine lays out the work (parser/plan.h) on host threads, computes the lexical scores on
 * the host and copies them into the one-word cells of the device charts, runs the inside
 * pass on the device (parser/gpu_dev.h, through the span-length loop of parser/engine.h),
 * and hands the device charts to a decoder (gpu_decoder), which reads its results off
 * them. The engine holds one device now; the plan and the decoder seam are what several
 * devices will share.
 *
 * The charts are CHART_FLOAT charts bit-identical to the CPU engine's (same float adds,
 * exact order-independent max), so trees and root scores are identical too. */
#ifndef CKY_PARSER_GPU_H
#define CKY_PARSER_GPU_H

#include "../grammar/grammar.h"
#include "gpu_dev.h"
#include "../sched/plan.h"
#include "../corpus_tools/sentence.h"

typedef struct gpu_engine gpu_engine;

/* A decoder on the device: what it reads off the device charts of each sub-batch. The
 * sentences of a sub-batch are first .. first + p->n - 1 of the batch given to
 * gpu_engine_parse; the device's items (gpu_items) hold the sub-batch's root cells. */
typedef struct gpu_decoder {
    void *ctx;
    /* Before the passes: make room for the sub-batch and enqueue its uploads on d's
     * stream (the engine synchronizes). */
    cky_status (*prepare)(void *ctx, gpu_dev *d, const plan *p, const sentence *s, int first);
    /* After the passes: decode and download the results of the sub-batch. */
    cky_status (*finish)(void *ctx, gpu_dev *d, const plan *p, int first);
    /* After a failure: drop the results of sentences first .. first + n - 1. */
    void (*discard)(void *ctx, int first, int n);
    /* 0: the inside pass in max-plus (device charts pre, post: log scores); 1: the inside
     * and outside passes in sum-product (parser/gpu_sum.h: scaled linear layers). */
    int sum;
} gpu_decoder;

/* Open device o->device, compile (or fetch from the cache) the grammar's kernels for it and
 * load them (gpu_dev_new). CKY_ERR_NO_DEVICE without a usable GPU. */
cky_status gpu_engine_new(const grammar *g, const gpu_dev_options *o, gpu_engine **out);

/* The engine's sum-product state (parser/gpu_sum.h): NULL until a decoder with `sum` ran. */
struct gpu_sum *gpu_engine_sum(gpu_engine *e);

/* The engine's device (one now). */
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

/* Run the inside pass over n sentences, each of at least one word, sub-batch by sub-batch,
 * and the decoder's steps on each. On failure the decoder has discarded every result. */
cky_status gpu_engine_parse(gpu_engine *e, const sentence *s, int n, const gpu_decoder *dec);

/* Statistics since the engine was made. */
const gpu_stats *gpu_engine_stats(const gpu_engine *e);

void gpu_engine_free(gpu_engine *e);

#endif
