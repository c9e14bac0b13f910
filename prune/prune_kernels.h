/* prune_kernels: the coarse-to-fine cascade on the GPU (prune_gpu.h), the device side. C and
 * C++ (prune_kernels.cu includes it).
 *
 * Each pass of each level runs as one launch per span length over the cells of that length
 * of every sentence of the batch, one thread block per cell, its warps taking the split
 * points in turn (the launches before it have finished the cells it reads); a level's start
 * (its mask from the level before, its bit sets, its lexicon) and end (pruneChart, its
 * statistics) are one launch each, a block per sentence. The arithmetic is the ref
 * engine's (prune/xbar.c, prune/levels.c) term for term, in double: each term is computed
 * as the ref computes it and maxima are exact, so the masks are the ref's bits whatever the
 * order.
 *  - level 0 (one score per symbol): each warp's lanes take the binary rules, each its best
 *    term over the warp's split points, into the block's maximum per parent; then one warp
 *    updates the cell's unaries in place in symbol order, as the ref's (and the jar's)
 *    loops do;
 *  - levels >= 1: for each allowed parent, the lanes take its rules 32 at a time (the
 *    block's warps take such groups as they come free) and, from bit sets of the allowed
 *    symbols by start and by end, the splits where a rule's children are both allowed; the
 *    terms of the (rule, split) pairs of at most 32 terms are laid end to end and the
 *    warp's lanes take them 32 at a time, a larger pair is the whole warp's, its lanes over
 *    its (row, substate) terms (unaries: a lane alone or the warp, the same way); into the
 *    block's exact maxima in shared memory (the ordered bits of the doubles, an integer
 *    atomicMax);
 *  - outside binary terms are pushed from a parent into its children with an exact atomic
 *    maximum (outside scores are kept as ordered bits, so it is an integer atomicMax), the
 *    cells of one span length in parallel; everything else is gathered;
 *  - a cell's allowed symbols are listed once, in shared memory, by a ballot of 32 at a time.
 * Scores are addressed densely (cell * substates + substate) but only the allowed symbols'
 * blocks are ever written or read. */
#ifndef CKY_PRUNE_KERNELS_H
#define CKY_PRUNE_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PRUNE_DEV_LEVELS 8 /* the most coarse levels a device cascade holds */

/* The rule tables of one level, device pointers. Binary rules by parent (bin_first), each
 * with rows (row_l, row_r) from row_first[b] and scores w[w_first[b] + row * nsub[parent] +
 * x]; level 0 keeps only the rules and unaries with a finite score, one row each, its
 * binary rules by their rank among their parent's, then by parent (bin_first unused). Unaries
 * P -> C by parent (un_first): un_parent, un_child, scores w[un_w[u] + c * nsub[P] + x]; by
 * child: unc_first, unc_rule (indices into the by-parent list). lchild, rchild: where a
 * substate's children are at the next level (symbol-local; NULL at level 0). */
typedef struct prune_dev_level {
    int nsym, tot;
    const int *nsub, *off;
    const unsigned char *phrasal;
    int nbin;
    const int *bin_first, *bin_parent, *bin_left, *bin_right, *row_first, *row_l, *row_r;
    const long long *w_first;
    const int *un_first, *un_parent, *un_child, *unc_first, *unc_rule;
    const long long *un_w;
    const double *w;
    const int *lchild, *rchild;
} prune_dev_level;

/* What one level kept in one sentence: prune_level (prune.h) as the kernel fills it. */
typedef struct prune_dev_stats {
    int failed;
    long long symbols, substates;
    unsigned long long hash;
} prune_dev_stats;

/* One launch: nsent sentences, sentence s of n[s] words, its cells from cell0[s] and its
 * words from word0[s]; lex[(word0[s] + i) * lex_width + lex_at[k] + x]: the lexical score of
 * global substate x of level k for word i (every substate; -inf for none). Work space
 * (device, per cell): vi, vo [nsym0], in, out [tot_max], state [nsym], sub, sub2
 * [tot_max]; per sentence, n + 1 rows from row word0[s] + s: the allowed symbols of the
 * level running as bit sets over the other end, bit e of lbits[(row * nsym + sym) * nword
 * ..] saying sym is allowed over (i, e) for row i, bit i of rbits[...] the same for row e;
 * results: the fine mask's state (= state at the end) and fine_sub [fine_tot] per cell,
 * stats[s * nlevel + k]; hash: 1 to compute the FNV-1a hash of each level (one thread per
 * sentence; else 0). span_cell: the cells of the passes' launches, span length by span
 * length, a pair (sentence, start) each (prune_dev_launch's span_first). */
typedef struct prune_dev_batch {
    int nsent, nlevel, nsym0, tot_max, fine_tot; /* nsym0: the symbols of level 0 */
    int maxsub;   /* the most substates of a symbol at a level >= 1 */
    const int *fine_nsub, *fine_off; /* the fine grammar's, for the last map */
    const int *n, *order; /* order: the sentences in the order of the blocks (longest first) */
    const long long *cell0, *word0;
    const double *lex;
    long long lex_width;
    long long lex_at[PRUNE_DEV_LEVELS];
    double threshold[PRUNE_DEV_LEVELS]; /* level k's */
    double *vi, *in;
    unsigned long long *vo, *out; /* outside scores as ordered bits (an integer maximum) */
    unsigned char *state, *sub, *sub2, *fine_sub;
    unsigned long long *lbits, *rbits;
    int nword; /* 64-bit words of a bit set: (longest sentence + 64) / 64 */
    const int *span_cell;
    prune_dev_stats *stats;
    int hash;
} prune_dev_batch;

/* Enqueue the cascade of batch b over the levels lv[0 .. b->nlevel) (a device array) on
 * `stream`; b is copied into the launches. span_first (host, [nmax + 2]; nmax: the longest
 * sentence): the cells of span length d are the pairs b->span_cell[2 f ..) for
 * span_first[d] <= f < span_first[d + 1]. Returns the first launch error. */
cudaError_t prune_dev_launch(const prune_dev_level *lv, const prune_dev_batch *b,
                             const long long *span_first, int nmax, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
