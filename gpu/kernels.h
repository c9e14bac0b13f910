/* kernels: hand-written device code of the GPU engine (CUDA C++ .cu files, C launchers).
 *
 * The device chart of a batch (shared by every kernel here and by the GPU Viterbi):
 *   - nsub = grammar.nsub_total float32 scores per cell layer, indexed by global substate id;
 *   - sentence s has n[s] words and owns cells cell0[s] .. cell0[s] + n(n+1)/2 - 1 of the
 *     batch; cell (i, j) of s is cell0[s] + chart_cell(n[s], i, j) (chart/chart.h order);
 *   - pre[cell * nsub + id] is the pre-unary layer (lexical scores in one-word cells, the
 *     best binary derivation above), post[cell * nsub + id] the post-unary layer;
 *   - -inf is impossible; the arithmetic is CHART_FLOAT's (chart/chart.h), so a device
 *     chart equals, value for value, the float chart of the CPU engine.
 *
 * Workspaces are the generated kernels' GPU layout (codegen/codegen.h): tiles of
 * KERNELS_TILE work items, `tile` floats apart; row x of work item t is at
 * (t / KERNELS_TILE) * tile + x * KERNELS_TILE + t % KERNELS_TILE.
 *
 * Every launcher enqueues on `stream` and returns cudaGetLastError(): check it with
 * GPU_CHECK (util/gpu_check.h). */
#ifndef CKY_KERNELS_H
#define CKY_KERNELS_H

#include <cuda_runtime_api.h>

#include "../decoders/maxrule/maxc_rules.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KERNELS_NINF_BITS 0xff800000u /* the bits of float -inf */
#define KERNELS_TILE 128              /* work items per workspace tile (CODEGEN_THREADS) */

/* a[x * stride + t] = value for x < rows, t < n (32-bit words: float bits or keys). */
cudaError_t kernels_fill(void *a, int rows, int n, long long stride, unsigned value,
                         cudaStream_t stream);

/* Copy-transpose: WS(x, t) = chart[cell[t] * nsub + row[x]] for x < rows, t < n (row:
 * class-local row -> global substate id; WS the tiled layout above). */
cudaError_t kernels_gather(const float *chart, int nsub, const int *cell, int n,
                           const int *row, int rows, float *ws, long long tile,
                           cudaStream_t stream);

/* The lexical layers of the one-word cells, in one launch: chart[cell[w] * nsub + x] =
 * lex[r * nsub + x] for w < nword, x < nsub, and (exps not NULL) cexp[cell[w]] = exps[r],
 * where r = row[w] (row NULL: w). lex, exps, row and cell may be pinned host memory (read
 * over the bus: no copy per sentence). */
cudaError_t kernels_lexical(const float *lex, const int *exps, const int *row, const int *cell,
                            int nword, float *chart, int *cexp, int nsub, cudaStream_t stream);

/* Atomic max reduce of a parent workspace of keys (codegen.h's GPU contract):
 * chart[cell[t] * nsub + row[x]] = max(itself, key(WS(x, t))) for x < rows, t < n. */
cudaError_t kernels_reduce(const int *ws, long long tile, int n, const int *cell,
                           const int *row, int rows, float *chart, int nsub,
                           cudaStream_t stream);

/* Prepare the unary step for nsub substates on the current device: *lanes = the cells a
 * block takes (up to 32; (lanes + 1) * nsub floats of shared memory), and the kernel's
 * shared-memory limit set to match; cudaErrorInvalidValue if not even one cell fits. */
cudaError_t kernels_unary_setup(int nsub, int *lanes);

/* Closed unary step over `ncell` cells: for each listed cell c and substate p,
 *   post[c][p] = max(pre[c][p], max over unary entries (p <- q, w) of pre[c][q] + w),
 * the entries of parent p being child[first[p] .. first[p+1]) and weight[...] (CSR of
 * global ids; kviterbi_csr's un_* tables); `lanes` from kernels_unary_setup. */
cudaError_t kernels_unary(const float *pre, float *post, int nsub, const int *cell, int ncell,
                          const int *first, const int *child, const float *weight, int lanes,
                          cudaStream_t stream);

/* ---- the sum-product passes (sum_kernels.cu; the arithmetic of parser/sum_rules.h) ---- */

/* The work items of a list: item m of position t is index[t] (first + t when index is
 * NULL); it sends to cell dest[m], with the exponent ea[ca[m]] + eb[cb[m]]. Inside: dest =
 * parent, ca/cb = left/right, ea = eb = epost; outside: dest = the child, ca = parent (ea
 * = eopre), cb = the sibling (eb = epost). */
typedef struct kernels_sum_items {
    const int *index;
    long long first;
    const int *dest, *ca, *cb;
    const int *ea, *eb;
} kernels_sum_items;

/* top[dest] = max(itself, the item's exponent) for the items of positions 0 .. n - 1. */
cudaError_t kernels_sum_exp(kernels_sum_items it, int n, int *top, cudaStream_t stream);

/* For positions t < n in order, each cell's items one after the other:
 * chart[dest * nsub + row[x]] += ldexpf(WS(x, t), exponent - top[dest]) where WS(x, t) > 0. */
cudaError_t kernels_sum_add(const float *ws, long long tile, kernels_sum_items it, int n,
                            const int *top, const int *row, int rows, float *chart, int nsub,
                            cudaStream_t stream);

/* The partial slots of one sum-product kernel (codegen_kernel_slots) by workspace row: row
 * row[r] takes slots slot[first[r] .. first[r + 1]), in that (slot) order. */
typedef struct kernels_sum_fold {
    int nslot, nrow;
    const int *row, *first, *slot;
} kernels_sum_fold;

/* For work items t < n and each row of f: WS(row, t) = WS(row, t) + PART(slot, t) for its
 * slots in order, one rounded add each (PART: tiles `ptile` floats apart, WS: `tile`). */
cudaError_t kernels_sum_fold_slots(const float *part, int ptile, float *ws, int tile, int n,
                                   kernels_sum_fold f, cudaStream_t stream);

/* One direction of the unary closure (sum_unary_table of parser/sum_rules.h) for cells of one
 * kind, laid out so that a warp's loads are one: slot s computes row row[s] (-1: none), the
 * slots in groups of 32 (a warp's lanes); group g = s / 32 holds its entries at
 * off[g] + 32 j + s % 32, j < (off[g + 1] - off[g]) / 32, each row's in the table's order, a
 * row shorter than its group's longest padded with weight 0 (fmaf adds +0: the same bits).
 * Rows without entries have no slot. */
typedef struct kernels_sum_layout {
    int nslot; /* a multiple of 32 */
    const int *row, *off, *from;
    const float *w;
} kernels_sum_layout;

typedef struct kernels_sum_table {
    kernels_sum_layout word;   /* cells of one word: every row */
    kernels_sum_layout phrase; /* longer cells: the phrasal rows */
} kernels_sum_table;

/* Allow kernels_sum_unary its shared memory for nsub substates (2 nsub floats). */
cudaError_t kernels_sum_unary_setup(int nsub);

/* For each listed cell c (span `span`): out[c] = in[c] + the table's rows over in[c], scaled
 * so that its max is in [0.5, 1): eout[c] = ein[c] + the exponent taken out, or
 * CHART_EXP_NONE for an all-zero layer (sum_rules_normalize). */
cudaError_t kernels_sum_unary(const float *in, const int *ein, float *out, int *eout, int nsub,
                              const int *cell, int ncell, int span, kernels_sum_table tb,
                              cudaStream_t stream);

/* ROOT's outside score 1, exponent 0, in the root cells roots[0 .. n - 1]. */
cudaError_t kernels_sum_roots(float *opost, int *eopost, int nsub, const int *roots, int n,
                              cudaStream_t stream);

/* Copy-transpose through an index: WS(x, t) = chart[cell[index[t]] * nsub + row[x]]. */
cudaError_t kernels_gather_index(const float *chart, int nsub, const int *cell,
                                 const int *index, int n, const int *row, int rows, float *ws,
                                 long long tile, cudaStream_t stream);

/* ---- max-rule's max-c scores and trees (maxc_kernels.cu; parser/maxc_rules.h) ---- */

#define MAXC_UNARIES_MAX 20480 /* the most closed unaries kernels_maxc_span takes (their sums
                                  fill 160 KiB of a block's shared memory) */

/* Each symbol's best binary candidate in each listed cell (cells[3 m ..]: the sentence's
 * first cell c0, its words n, the start i; the cell is (i, i + span)), span >= 2: its
 * score, split and children into y's bscore, split, left and right (none: -inf and -1),
 * from the sums S of the candidates that may beat their parent's bounds (the others are
 * skipped). scratch: kernels_maxc_scratch(t, ncell) bytes of device memory. */
cudaError_t kernels_maxc_sums(const maxc_tables *t, const maxc_layers *y, const int *cells,
                              int ncell, int span, double *scratch, cudaStream_t stream);

/* Bytes of kernels_maxc_sums' scratch over ncell cells (a task counter and a few blocks'
 * warps' worth however many cells). */
size_t kernels_maxc_scratch(const maxc_tables *t, int ncell);

/* Span `span` of max-c over the listed cells (as for kernels_maxc_sums, which took the
 * binary candidates of spans >= 2 before): the POS tags' lexical scores (span 1), then
 * every symbol's best unary. cudaErrorInvalidValue when the grammar has more than
 * MAXC_UNARIES_MAX closed unaries. */
cudaError_t kernels_maxc_span(const maxc_tables *t, const maxc_layers *y, const int *cells,
                              int ncell, int span, cudaStream_t stream);

/* For each sentence k (sent[2 k ..]: c0, n): maxc_extract into nodes + node0[k] (its stack
 * at stack + node0[k]); result[4 k ..]: its status, its node count, the bits of ROOT's post
 * value over the sentence and its exponent; score[k] ROOT's max-c score. */
cudaError_t kernels_maxc_walk(const maxc_tables *t, const maxc_layers *y, const int *sent,
                              int n, const long long *node0, int *nodes, int *stack,
                              int *result, double *score, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
