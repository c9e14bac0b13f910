/* kernels: the GPU backend's hand-written device code (CUDA C++ .cu files, C launchers)
 * and what device and host code share: the chart and workspace layouts, the rule tables, the
 * peak kernels. C and C++ (the .cu files include it; host code has it through gpu/gpu.h).
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
#ifndef CKY_GPU_KERNELS_H
#define CKY_GPU_KERNELS_H

#include <cuda_runtime_api.h>


#ifdef __cplusplus
extern "C" {
#endif

#define KERNELS_NINF_BITS 0xff800000u /* the bits of float -inf */
#define KERNELS_TILE 128              /* work items per workspace tile (CODEGEN_THREADS) */

/* ---- the grammar's rule tables (built and uploaded by gpu/gpu.h's gpu_rules_*) ---- */

/* CSR arrays over global parent substate ids (grammar.sub_offset[sym] + sub), all in one
 * memory space (host for gpu_rules_build, device inside gpu_rule_tables), built from the
 * grammar with every -inf entry dropped (it can never match a finite score); each parent's
 * entries sorted by (left, right) or by child, so that the smallest matching key is the
 * smallest matching entry index. The unary step reads the unary ones, the GPU Viterbi
 * (decoders/viterbi) both. Weights are the grammar's double scores cast to float. */
typedef struct gpu_rules {
    int nsym;        /* grammar.nsym */
    int nsub;        /* grammar.nsub_total */
    int root;        /* global id of ROOT's substate 0: grammar.sub_offset[0] */
    int nbinary;     /* binary entries: grammar_count_binary(g) */
    int nunary;      /* unary entries: grammar_count_unary(g) */
    int *sym;        /* [nsub]: symbol of each global id */
    int *sub_offset; /* [nsym]: grammar.sub_offset */
    /* binary entries of parent substate p: bin_first[p] .. bin_first[p + 1] - 1, ascending
     * by (bin_left, bin_right), both global ids; bin_w the float score */
    int *bin_first;  /* [nsub + 1] */
    int *bin_left, *bin_right;
    float *bin_w;
    /* closed unary entries of parent substate p: un_first[p] .. un_first[p + 1] - 1,
     * ascending by un_child (global id); un_w the float score */
    int *un_first;   /* [nsub + 1] */
    int *un_child;
    float *un_w;
} gpu_rules;

/* ---- the peaks (gpu/gpu.h: gpu_peak_measure) ---- */

/* The peak micro-benchmarks, the ceilings of rule evaluation in each semiring (gpu/peak.cu).
 *
 * One "rule evaluation" is what a generated kernel does per rule (codegen/emit.c), the
 * weight a compile-time immediate and lr (the left and right scores combined, once per
 * (L, R) pair) already in a register:
 *   - add+max (max-plus, Viterbi): P = fmaxf(P, lr + w): one FADD and one FMNMX;
 *   - sum-product (max-rule's inside and outside): P = fmaf(lr, w, P): one FFMA.
 * The kernel of each kind keeps GPU_PEAK_CHAINS parent scores per thread in registers and,
 * in each step, updates every parent from every parent's score of the step before (an
 * all-pairs GPU_PEAK_CHAINS x GPU_PEAK_CHAINS block of distinct weights), GPU_PEAK_STEPS
 * steps per loop trip: independent chains hide the latency, the scores change every step so
 * nothing can be hoisted, and the maximum of each thread's scores is stored so nothing is
 * dead. It runs on every SM of the current device at full occupancy and is timed with CUDA
 * events after a warm-up launch. The two kinds differ only in the rule. */
#define GPU_PEAK_CHAINS 8 /* parent scores per thread */
#define GPU_PEAK_STEPS 4  /* all-pairs steps per loop trip */
#define GPU_PEAK_THREADS 256
/* rule evaluations per thread per loop trip (either kind) */
#define GPU_PEAK_RULES_PER_TRIP (GPU_PEAK_STEPS * GPU_PEAK_CHAINS * GPU_PEAK_CHAINS)
#define GPU_PEAK_MIN_MS 10 /* the timed launch's target duration is clamped to these */
#define GPU_PEAK_MAX_MS 10000
#define GPU_PEAK_CALIBRATION_TRIPS 4096 /* loop trips of the warm-up and calibration launch */

/* The rule of a peak kernel, named after the semiring whose kernels it stands for. */
typedef enum gpu_peak_kind {
    GPU_PEAK_ADD_MAX = 0,     /* one add and one max per rule (max-plus) */
    GPU_PEAK_SUM_PRODUCT = 1, /* one fused multiply-add per rule (sum-product) */
    GPU_PEAK_NKIND
} gpu_peak_kind;

/* Launchers of gpu/peak.cu (for gpu_peak_measure): resident GPU_PEAK_THREADS-thread blocks
 * of the kernel of `kind` per SM, and a launch of `blocks` blocks running `trips` loop trips,
 * each thread storing its result in out[blocks * GPU_PEAK_THREADS]. Return
 * cudaGetLastError() or the occupancy call's error (cudaErrorInvalidValue for an unknown
 * kind). */
cudaError_t gpu_peak_blocks_per_sm(gpu_peak_kind kind, int *blocks_per_sm);
cudaError_t gpu_peak_launch(gpu_peak_kind kind, float *out, int blocks, int trips, float seed,
                            cudaStream_t stream);

/* ---- the chart kernels (chart_kernels.cu) ---- */

/* a[x * stride + t] = value for x < rows, t < n (32-bit words: float bits or keys). */
cudaError_t kernels_fill(void *a, int rows, int n, long long stride, unsigned value,
                         cudaStream_t stream);

/* Copy-transpose: WS(x, t) = chart[cell[t] * nsub + row[x]] for x < rows, t < n (row:
 * class-local row -> global substate id; WS the tiled layout above). */
cudaError_t kernels_gather(const float *chart, int nsub, const int *cell, int n,
                           const int *row, int rows, float *ws, long long tile,
                           cudaStream_t stream);

/* The same, into an int32 workspace of fixed-point values: WS(x, t) = fixedpoint_of(...)
 * (util/fixedpoint.h; the fixed max-plus kernels' left and right workspaces), and
 * clamped[cell[t]] = 1 where that clamps a score (fixedpoint_clamps). */
cudaError_t kernels_gather_fixed(const float *chart, int nsub, const int *cell, int n,
                                 const int *row, int rows, int *ws, long long tile,
                                 unsigned char *clamped, cudaStream_t stream);

/* The lexical layers of the one-word cells, in one launch: chart[cell[w] * nsub + x] =
 * lex[r * nsub + x] for w < nword, x < nsub, and (exps not NULL) cexp[cell[w]] = exps[r],
 * where r = row[w] (row NULL: w). lex, exps, row and cell may be pinned host memory (read
 * over the bus: no copy per sentence). */
cudaError_t kernels_lexical(const float *lex, const int *exps, const int *row, const int *cell,
                            int nword, float *chart, int *cexp, int nsub, cudaStream_t stream);

/* Atomic max reduce of a parent workspace of keys (codegen.h's GPU contract):
 * chart[cell[t] * nsub + row[x]] = max(itself, key(WS(x, t))) for x < rows, t < n; fixed:
 * of fixed-point maxima, max(itself, fixedpoint_to_float(WS(x, t))). */
cudaError_t kernels_reduce(const int *ws, long long tile, int n, const int *cell,
                           const int *row, int rows, float *chart, int nsub, int fixed,
                           cudaStream_t stream);

/* Prepare the unary step for nsub substates on the current device: *lanes = the cells a
 * block takes (up to 32; (lanes + 1) * nsub floats of shared memory), and the kernel's
 * shared-memory limit set to match; cudaErrorInvalidValue if not even one cell fits. */
cudaError_t kernels_unary_setup(int nsub, int *lanes);

/* Closed unary step over `ncell` cells: for each listed cell c and substate p,
 *   post[c][p] = max(pre[c][p], max over unary entries (p <- q, w) of pre[c][q] + w),
 * the entries of parent p being child[first[p] .. first[p+1]) and weight[...] (CSR of
 * global ids; gpu_rules' un_* tables); `lanes` from kernels_unary_setup. */
cudaError_t kernels_unary(const float *pre, float *post, int nsub, const int *cell, int ncell,
                          const int *first, const int *child, const float *weight, int lanes,
                          cudaStream_t stream);

/* ---- the sum-product passes (sum_kernels.cu; the arithmetic of semiring/sum_rules.h) ---- */

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

/* One direction of the unary closure (sum_unary_table of semiring/sum_rules.h) for cells of one
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

/* ---- the generic kernel (codegen/generic.h), while the compiled ones are not there ---- */

/* A code block of a generic table: its entries [first, end) and, for sum-product, its
 * first partial slot in its kernel (codegen_kernel_slots' numbering). */
typedef struct kernels_generic_block {
    long long first, end;
    int slot0, unused;
} kernels_generic_block;

struct codegen_generic_rule;

/* A compiled kernel's work from its table (device arrays: entries `rule`, its code blocks
 * blocks[0 .. nblock)), for work items t < n of workspaces left and right (`tile` floats
 * per tile), with the compiled kernel's stores into parent (codegen/codegen.h): semiring 0
 * (max-plus) an atomic max of keys, 2 (fixed) of int32, 1 (sum-product) each parent's run
 * into its slot of the partial workspace (`ptile` floats per tile); the same bits. */
cudaError_t kernels_generic(int semiring, const float *left, const float *right, float *parent,
                            int n, int tile, int ptile, const struct codegen_generic_rule *rule,
                            const kernels_generic_block *blocks, int nblock,
                            cudaStream_t stream);

/* Copy-transpose through an index: WS(x, t) = chart[cell[index[t]] * nsub + row[x]]. */
cudaError_t kernels_gather_index(const float *chart, int nsub, const int *cell,
                                 const int *index, int n, const int *row, int rows, float *ws,
                                 long long tile, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
