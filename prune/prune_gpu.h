/* prune_gpu: the coarse-to-fine cascade (prune.h) of a batch of sentences on the GPU, one
 * launch for every level of every sentence (prune_kernels.h), its masks bit for bit the ref
 * engine's (prune_build_mask_tagged): the same terms in double, maxima exact.
 *
 * The lexical scores of each word at each level are computed on host threads (the
 * lexicon's signatures and smoothing are host code), with the gold tags where a sentence
 * has them, and copied to the device with the batch; the fine masks and (asked for) each
 * level's statistics come back. */
#ifndef CKY_PRUNE_GPU_H
#define CKY_PRUNE_GPU_H

#include "prune.h"

typedef struct prune_gpu prune_gpu;

/* The cascade of g (which must outlive it) on CUDA device `device`, its tables uploaded;
 * CKY_ERR_UNSUPPORTED as prune_new_plan, CKY_ERR_NO_DEVICE without a usable device. */
cky_status prune_gpu_new(const grammar *g, int device, prune_gpu **out);

void prune_gpu_free(prune_gpu *p);

/* The masks of nsent sentences (words[k], n[k] >= 1 words; gold[k] NULL or the gold tag of
 * each word as prune_build_mask_tagged takes them; gold itself may be NULL) with the
 * thresholds of `mode`, into out[k] as prune_build_mask_tagged fills them (free each with
 * prune_free_mask); levels 0: the levels' counts and hashes are left 0 (they cost a pass of
 * one thread per sentence). threads: host threads for the lexicon. One call at a time. */
cky_status prune_gpu_build_masks(prune_gpu *p, char *const *const *words, const int *n,
                                 const int *const *gold, int nsent, prune_mode mode,
                                 int levels, int threads, prune_mask *out);

/* Where the seconds of prune_gpu_build_masks went, summed over the calls since p was made:
 * the lexicon on host threads, the uploads, the kernel and the downloads (device time, by
 * CUDA events), the masks unpacked on the host, and each call's wall clock (total). */
typedef struct prune_gpu_times {
    double lexicon, upload, kernel, download, unpack, total;
} prune_gpu_times;

prune_gpu_times prune_gpu_times_of(const prune_gpu *p);

#endif
