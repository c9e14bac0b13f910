/* maxc_kernels: the max-c scores and max-rule trees of the GPU engine (see kernels.h), with
 * the arithmetic of decoders/maxrule/maxc_rules.h, the same bits as the cpu engine's.
 *   - maxc_sums: each symbol's best binary candidate in cells of span 2 and more, a warp
 *     per (cell, symbol P). A lane per rule of P finds the split whose children score the
 *     most; the best of them is the first candidate, whose score is the bound with P's
 *     upper bound (maxc_upper). Then the candidates that may beat the best so far
 *     (maxc_may_beat) are found by ballot, rules and then splits 32 at a time, and summed
 *     one at a time from the rule's rows' V (taken over the cell's outside layer into the
 *     warp's global scratch); the best so far rises as they go, and the ballot is taken
 *     again after each sum. The other candidates' sums are skipped.
 *   - maxc_span: one thread block per cell: the POS tags' lexical scores (span 1); a warp
 *     per closed unary whose child's score may beat its parent's takes the unary's sum S,
 *     and after a barrier, a warp per symbol the best unary. */
#include <limits.h>

#include "maxc_kernels.h"

#define MAXC_BLOCK 512                  /* threads of maxc_span: 16 warps */
#define MAXC_SUMS_BLOCK 256             /* threads of maxc_sums: 8 warps */
#define MAXC_SHARED_MAX (160 * 1024)    /* the most shared memory a block asks for */
static_assert(MAXC_UNARIES_MAX * sizeof(double) <= MAXC_SHARED_MAX, "maxc_span's unary sums");

/* The best of the lanes' candidates (score gs, then the smallest a, then b), in every lane. */
static __device__ __forceinline__ void warp_best(double *gs, int *a, int *b)
{
    for (int d = MAXC_LANES / 2; d >= 1; d /= 2) {
        double og = __shfl_xor_sync(0xffffffffu, *gs, d);
        int oa = __shfl_xor_sync(0xffffffffu, *a, d), ob = __shfl_xor_sync(0xffffffffu, *b, d);
        if (og > *gs || (og == *gs && (oa < *a || (oa == *a && ob < *b)))) {
            *gs = og;
            *a = oa;
            *b = ob;
        }
    }
}

/* maxc_sums: a warp per task (cell, symbol P), the tasks taken in turn from a counter in the
 * scratch, the symbols with the most rows first in every cell, so that the long tasks start
 * early and the short ones fill the end. No barrier: each warp has its own scratch, the
 * rows' V of one rule and the best children's scores of P's rules.
 * MAXC_GROUP: candidates of one rule summed together; MAXC_SUMS_PER_SM: blocks of 8 warps a
 * multiprocessor (4: 64 registers a thread, a few spilled). One candidate at a time, each
 * sum raising the bound before the next is tested, and four blocks were the fastest on
 * eng-sm6-shape (docs/performance.md, session 21; so was group_sums over summing with
 * maxc_binary_rows). */
#define MAXC_GROUP 1
#define MAXC_SUMS_PER_SM 4

/* Doubles of a warp's scratch: one rule's rows' V, then the best children's scores of the
 * rules of a symbol. */
static __host__ __device__ size_t warp_scratch(const maxc_tables *t)
{
    return (size_t)t->most_rows + (size_t)t->most_rules;
}

/* Blocks of maxc_sums for ncell cells (at most MAXC_SUMS_PER_SM per multiprocessor). */
static int sums_grid(const maxc_tables *t, int ncell)
{
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
        sms = 132;
    long most = (long)sms * MAXC_SUMS_PER_SM, warps = MAXC_SUMS_BLOCK / MAXC_LANES;
    long need = ((long)ncell * t->nsym + warps - 1) / warps;
    return (int)(need < most ? need : most);
}

/* The rows' V of rule b over the cell's outside layer into v[0 .. nrow), a lane per row
 * (every lane of the warp calls it). */
static __device__ void rule_v(const maxc_tables *t, const maxc_layers *y, size_t cell, int b,
                              double *v)
{
    const maxc_binary *r = &t->bin[b];
    const float *po = y->opre + cell * y->nsub + t->sub_offset[r->parent];
    for (int row = threadIdx.x % MAXC_LANES; row < r->nrow; row += MAXC_LANES)
        v[row] = maxc_row_weight(t, b, row, po);
}

/* The sums S of the candidates of rule b over (i, j) at the splits k[0 .. nk) (nk <=
 * MAXC_GROUP) from its rows' V at v, into s[]: each one's lane parts and their butterfly
 * exactly as maxc_binary_rows takes them, the rows' V and children read once for all. */
static __device__ void group_sums(const maxc_tables *t, const maxc_layers *y, long c0, int n,
                                  int i, const int *k, int nk, int j, int b, const double *v,
                                  double *s)
{
    const maxc_binary *r = &t->bin[b];
    const int *rl = t->row_l + r->row0, *rr = t->row_r + r->row0;
    const float *lin[MAXC_GROUP], *rin[MAXC_GROUP];
    double acc[MAXC_GROUP];
    for (int q = 0; q < MAXC_GROUP; q++) {
        int kq = k[q < nk ? q : 0];
        lin[q] = y->post + ((size_t)c0 + chart_cell(n, i, kq)) * y->nsub + t->sub_offset[r->left];
        rin[q] = y->post + ((size_t)c0 + chart_cell(n, kq, j)) * y->nsub + t->sub_offset[r->right];
        acc[q] = 0;
    }
    /* Every operand of a row is loaded before any is tested (the groups past nk read
     * candidate k[0]'s children: their sums are not used), and a term with a zero child is
     * left out by a select, not a branch: the loads of the group go out together. */
    for (int row = threadIdx.x % MAXC_LANES; row < r->nrow; row += MAXC_LANES) {
        int a = rl[row], c = rr[row];
        double w = v[row];
        float l[MAXC_GROUP], x[MAXC_GROUP];
#pragma unroll
        for (int q = 0; q < MAXC_GROUP; q++) {
            l[q] = lin[q][a];
            x[q] = rin[q][c];
        }
#pragma unroll
        for (int q = 0; q < MAXC_GROUP; q++) {
            double term = fma(w, (double)l[q] * (double)x[q], acc[q]);
            acc[q] = l[q] != 0 && x[q] != 0 ? term : acc[q];
        }
    }
#ifdef __CUDA_ARCH__ /* (the host pass sees the host's maxc_lanes_add) */
#pragma unroll
    for (int q = 0; q < MAXC_GROUP; q++)
        s[q] = maxc_lanes_add(acc[q]);
#endif
}

/* Candidate (gs, b, k) in place of the best (g, bb, bk) if it is better: the larger score,
 * then the smaller rule, then the smaller split (the jar's order). */
static __device__ __forceinline__ void take_best(double *g, int *bb, int *bk, double gs, int b,
                                                 int k)
{
    if (gs > *g || (gs == *g && gs != MAXC_NEG_INF && (b < *bb || (b == *bb && k < *bk)))) {
        *g = gs;
        *bb = b;
        *bk = k;
    }
}

/* P's best binary candidate over (i, j) (every lane of the warp calls it and gets it):
 * score *g (MAXC_NEG_INF: none), rule *bb and split *bk. kids: the warp's scratch for
 * P's rules' best children's scores; v: for a rule's rows' V. */
static __device__ void symbol_best(const maxc_tables *t, const maxc_layers *y, long c0, int n,
                                   int i, int j, int P, int e0, double logx0, double *kids,
                                   double *v, double *g, int *bb, int *bk)
{
    int lane = threadIdx.x % MAXC_LANES, b0 = t->bin_first[P], nb = t->bin_first[P + 1] - b0;
    size_t cell = (size_t)c0 + chart_cell(n, i, j);
    __syncwarp(); /* the scratch read by every lane in the task before */
    /* each rule's best children's scores, a lane per rule, and the first candidate: the
     * one whose children score the most (then the smallest rule and split) */
    double top = MAXC_NEG_INF;
    int tb = INT_MAX, tk = INT_MAX;
    for (int r = lane; r < nb; r += MAXC_LANES) {
        int kmin, kmax;
        maxc_splits(t, b0 + r, i, j, &kmin, &kmax);
        double best = MAXC_NEG_INF;
        for (int k = kmin; k <= kmax; k++) {
            double ks = maxc_binary_scores(t, y, c0, n, i, k, j, b0 + r);
            if (ks > best) {
                best = ks;
                if (ks > top) {
                    top = ks;
                    tb = b0 + r;
                    tk = k;
                }
            }
        }
        kids[r] = best;
    }
    warp_best(&top, &tb, &tk);
    *g = MAXC_NEG_INF;
    *bb = *bk = INT_MAX;
    if (top == MAXC_NEG_INF)
        return;
    __syncwarp(); /* kids[] written */
    /* the bound: the first candidate's score, then the best so far */
    double upper = maxc_upper(t, y, c0, n, i, j, P, e0, logx0), s[MAXC_GROUP];
    int vb = tb; /* the rule whose V is at v */
    rule_v(t, y, cell, tb, v);
    __syncwarp();
    group_sums(t, y, c0, n, i, &tk, 1, j, tb, v, s);
    *g = maxc_candidate(top, s[0], maxc_binary_exp(y, c0, n, i, tk, j, e0), logx0);
    *bb = tb;
    *bk = tk;
    /* the candidates that may beat the bound, rule by rule (32 at a time, by ballot), their
     * splits 32 at a time; their sums MAXC_GROUP at a time, the bound rising as they go */
    for (int r0 = 0; r0 < nb; r0 += MAXC_LANES) {
        int r = r0 + lane;
        unsigned rules = __ballot_sync(0xffffffffu, r < nb && maxc_may_beat(kids[r], upper, *g));
        for (; rules; rules &= rules - 1) {
            int rb = r0 + __ffs((int)rules) - 1, b = b0 + rb;
            if (!maxc_may_beat(kids[rb], upper, *g))
                continue;
            int kmin, kmax;
            maxc_splits(t, b, i, j, &kmin, &kmax);
            for (int k0 = kmin; k0 <= kmax; k0 += MAXC_LANES) {
                int k = k0 + lane;
                double mine = k <= kmax && !(b == tb && k == tk)
                                  ? maxc_binary_scores(t, y, c0, n, i, k, j, b) : MAXC_NEG_INF;
                unsigned bits = __ballot_sync(0xffffffffu, maxc_may_beat(mine, upper, *g));
                if (bits && b != vb) {
                    __syncwarp(); /* the V before read */
                    rule_v(t, y, cell, b, v);
                    __syncwarp();
                    vb = b;
                }
                while (bits) {
                    int ks[MAXC_GROUP], nk = 0;
                    for (; bits && nk < MAXC_GROUP; bits &= bits - 1)
                        ks[nk++] = k0 + __ffs((int)bits) - 1;
                    group_sums(t, y, c0, n, i, ks, nk, j, b, v, s);
                    for (int q = 0; q < nk; q++)
                        take_best(g, bb, bk,
                                  maxc_candidate(maxc_binary_scores(t, y, c0, n, i, ks[q], j, b),
                                                 s[q], maxc_binary_exp(y, c0, n, i, ks[q], j, e0),
                                                 logx0),
                                  b, ks[q]);
                    bits = __ballot_sync(0xffffffffu,
                                         (bits >> lane & 1) && maxc_may_beat(mine, upper, *g));
                }
            }
        }
    }
}

static __global__ void __launch_bounds__(MAXC_SUMS_BLOCK, MAXC_SUMS_PER_SM)
maxc_sums(maxc_tables t, maxc_layers y, const int *__restrict__ cells, int ncell, int span,
          double *scratch)
{
    int lane = threadIdx.x % MAXC_LANES;
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / MAXC_LANES;
    unsigned long long *next = (unsigned long long *)scratch, tasks = (unsigned long long)ncell * t.nsym;
    double *v = scratch + 1 + warp * warp_scratch(&t), *kids = v + t.most_rows;
    for (;;) {
        unsigned long long q = 0;
        if (lane == 0)
            q = atomicAdd(next, 1ull);
        q = __shfl_sync(0xffffffffu, q, 0);
        if (q >= tasks)
            break;
        int P = t.by_rows[q / ncell];
        const int *c = cells + 3 * (q % ncell);
        long c0 = c[0];
        int n = c[1], i = c[2], j = c[2] + span, e0, bb, bk;
        double g = MAXC_NEG_INF, logx0 = maxc_root(&t, &y, c0, n, &e0);
        if (logx0 != MAXC_NEG_INF && t.phrasal[P])
            symbol_best(&t, &y, c0, n, i, j, P, e0, logx0, kids, v, &g, &bb, &bk);
        if (lane == 0) {
            size_t at = ((size_t)c0 + chart_cell(n, i, j)) * t.nsym + P;
            int found = g != MAXC_NEG_INF;
            y.bscore[at] = g;
            y.split[at] = found ? bk : -1;
            y.left[at] = found ? t.bin[bb].left : -1;
            y.right[at] = found ? t.bin[bb].right : -1;
        }
    }
}
static __global__ void __launch_bounds__(MAXC_BLOCK, 2)
maxc_span(maxc_tables t, maxc_layers y, const int *__restrict__ cells, int span)
{
    extern __shared__ double usums[]; /* the closed unaries' sums */
    const int *c = cells + 3 * blockIdx.x;
    long c0 = c[0];
    int n = c[1], i = c[2], j = c[2] + span, lane = threadIdx.x % MAXC_LANES;
    size_t cell = (size_t)c0 + chart_cell(n, i, j);
    int warp = threadIdx.x / MAXC_LANES, warps = blockDim.x / MAXC_LANES;
    int e0;
    double logx0 = maxc_root(&t, &y, c0, n, &e0);
    /* the lexical scores of a word's cell, the POS tags' (longer spans: maxc_sums) */
    for (int P = warp; span == 1 && P < t.nsym && lane == 0; P += warps) {
        size_t at = cell * t.nsym + P;
        y.bscore[at] = logx0 != MAXC_NEG_INF && !t.phrasal[P]
                           ? maxc_lexical(&t, &y, c0, n, i, P, e0, logx0) : MAXC_NEG_INF;
        y.split[at] = y.left[at] = y.right[at] = -1;
    }
    __syncthreads(); /* the cell's scores before its unaries are all written */
    /* the sums of the unaries that may beat their parent's score before the unaries: a warp
     * each */
    size_t at = cell * t.nsym;
    for (int u = warp; u < t.nun; u += warps) {
        int P = t.un[u].parent;
        if (logx0 != MAXC_NEG_INF && maxc_allowed(&t, span, P) &&
            maxc_may_beat(y.bscore[at + t.un[u].child], 0, y.bscore[at + P])) {
            double s = maxc_unary_item(&t, &y, c0, n, i, j, u);
            if (lane == 0)
                usums[u] = s;
        }
    }
    __syncthreads();
    /* unary: a warp per symbol, its lanes over the closed unaries */
    for (int P = warp; P < t.nsym; P += warps) {
        double best = MAXC_NEG_INF;
        int bu = INT_MAX, none = 0;
        if (logx0 != MAXC_NEG_INF && maxc_allowed(&t, span, P))
            for (int u = t.un_first[P] + lane; u < t.un_first[P + 1]; u += MAXC_LANES) {
                if (!maxc_may_beat(y.bscore[at + t.un[u].child], 0, y.bscore[at + P]))
                    continue;
                double gs = maxc_candidate(y.bscore[at + t.un[u].child], usums[u],
                                           y.eopre[cell] + y.epost[cell] - e0, logx0);
                if (gs > best) {
                    best = gs;
                    bu = u;
                }
            }
        warp_best(&best, &bu, &none);
        if (lane == 0) {
            double before = y.bscore[at + P];
            int take = best > before;
            y.score[at + P] = take ? best : before;
            y.child[at + P] = take ? t.un[bu].child : -1;
        }
    }
}

/* maxc_span's shared memory, up to MAXC_SHARED_MAX: allowed once per process. */
static cudaError_t allow_shared(void)
{
    static int done;
    if (done)
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(maxc_span, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         MAXC_SHARED_MAX);
    done = e == cudaSuccess;
    return e;
}

extern "C" size_t maxc_scratch_bytes(const maxc_tables *t, int ncell)
{
    size_t warps = (size_t)sums_grid(t, ncell) * (MAXC_SUMS_BLOCK / MAXC_LANES);
    return (1 + warps * warp_scratch(t)) * sizeof(double);
}

extern "C" cudaError_t maxc_launch_span(const maxc_tables *t, const maxc_layers *y,
                                         const int *cells, int ncell, int span,
                                         cudaStream_t stream)
{
    if (ncell <= 0)
        return cudaSuccess;
    size_t bytes = t->nun * sizeof(double);
    if (t->nun > MAXC_UNARIES_MAX)
        return cudaErrorInvalidValue;
    cudaError_t e = allow_shared();
    if (e != cudaSuccess)
        return e;
    maxc_span<<<ncell, MAXC_BLOCK, bytes, stream>>>(*t, *y, cells, span);
    return cudaGetLastError();
}

extern "C" cudaError_t maxc_launch_sums(const maxc_tables *t, const maxc_layers *y,
                                         const int *cells, int ncell, int span,
                                         double *scratch, cudaStream_t stream)
{
    if (ncell <= 0 || span < 2)
        return cudaSuccess;
    cudaError_t e = cudaMemsetAsync(scratch, 0, sizeof(unsigned long long), stream); /* tasks */
    if (e != cudaSuccess)
        return e;
    maxc_sums<<<sums_grid(t, ncell), MAXC_SUMS_BLOCK, 0, stream>>>(*t, *y, cells, ncell, span,
                                                                   scratch);
    return cudaGetLastError();
}

static __global__ void maxc_walk(maxc_tables t, maxc_layers y, const int *__restrict__ sent,
                                 int n, const long long *__restrict__ node0, int *nodes,
                                 int *stack, int *result, double *score)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    int c0 = sent[2 * k], len = sent[2 * k + 1];
    int *r = result + 4 * k;
    r[0] = maxc_extract(&t, &y, c0, len, nodes + node0[k], &r[1], stack + node0[k]);
    size_t root = (size_t)c0 + chart_cell(len, 0, len);
    r[2] = __float_as_int(y.post[root * y.nsub + t.sub_offset[0]]);
    r[3] = y.epost[root];
    score[k] = y.score[root * t.nsym];
}

extern "C" cudaError_t maxc_launch_walk(const maxc_tables *t, const maxc_layers *y,
                                         const int *sent, int n, const long long *node0,
                                         int *nodes, int *stack, int *result, double *score,
                                         cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    maxc_walk<<<(n + 63) / 64, 64, 0, stream>>>(*t, *y, sent, n, node0, nodes, stack, result,
                                                 score);
    return cudaGetLastError();
}
