/* maxc_kernels: the max-c scores and max-rule trees of the GPU engine (see kernels.h), with
 * the arithmetic of parser/maxc_rules.h, the same bits as the cpu engine's.
 *   - maxc_sums: each symbol's best binary candidate in cells of span 2 and more. A few
 *     thread blocks per multiprocessor take the listed cells in turn. In a cell, a thread
 *     per rule finds the split whose children score the most, then a warp per symbol P
 *     takes P's bounds: its upper bound (maxc_upper) and the score of the best of its
 *     rules' candidates. Then the candidates that may beat them (maxc_may_beat) are
 *     listed, MAXC_SPLITS splits at a time: a thread per rule sets a bit per candidate in
 *     the rule's mask in shared memory and lists the rule. A warp per listed rule takes
 *     the rows' V over the cell's outside layer (into the block's global scratch; no
 *     barrier: the warp that takes a rule's V sums its candidates), its candidates' sums,
 *     MAXC_GROUP splits at a time, reading the rows' V and the rule's rows once for the
 *     group, and the rule's best candidate. The other candidates' sums are skipped. Last,
 *     a warp per symbol takes the best of its rules'.
 *   - maxc_span: one thread block per cell: the POS tags' lexical scores (span 1); a warp
 *     per closed unary whose child's score may beat its parent's takes the unary's sum S,
 *     and after a barrier, a warp per symbol the best unary. */
#include <limits.h>

#include "kernels.h"

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

/* The shared memory of maxc_sums: the cell's bounds (2 nsym doubles), a bit mask per rule
 * (its candidates among MAXC_SPLITS splits), the first candidates (one per symbol), a
 * counter (symbols, then rules), a bit per rule (its V there), the count of the rules
 * listed and the rules (16 bits each: kernels_maxc_sums takes at most MAXC_RULES_MAX; the
 * less shared memory, the more L1 cache the multiprocessor keeps for the loads). Its
 * blocks (MAXC_SUMS_PER_SM per multiprocessor) take the listed cells in turn, each with its
 * own rows' V in global scratch (a large grammar's take megabytes). */
#define MAXC_SPLITS 32 /* the bits of a rule's mask: splits listed at a time */
#define MAXC_GROUP 2   /* candidates of one rule summed together */
/* Five blocks a multiprocessor (40 warps; 48 registers a thread): the sums wait on loads,
 * and more warps hide more of them. Four blocks with 64-bit masks, or groups of 4 or 8
 * candidates, were slower on eng-sm6-shape (docs/performance.md, session 17). */
#define MAXC_SUMS_PER_SM 5

static size_t sums_shared_bytes(const maxc_tables *t)
{
    return 2 * (size_t)t->nsym * sizeof(double) + (size_t)t->nbin * sizeof(unsigned) +
           ((size_t)t->nsym + 2 + (t->nbin + 31) / 32) * sizeof(int) +
           (size_t)t->nbin * sizeof(unsigned short);
}

/* Doubles of a block of maxc_sums in its scratch: the rows' V, then for each rule its
 * best children's scores and best score (doubles), and their splits (ints). */
static __host__ __device__ size_t block_scratch(const maxc_tables *t)
{
    return (size_t)t->nrow + 3 * (size_t)t->nbin;
}

/* Blocks of maxc_sums for ncell cells (at most MAXC_SUMS_PER_SM per multiprocessor). */
static int sums_grid(int ncell)
{
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
        sms = 132;
    int most = sms * MAXC_SUMS_PER_SM;
    return ncell < most ? ncell : most;
}

/* Candidate x of cell (i, j) (the rule x % nbin at split i + 1 + x / nbin). */
#define ITEM_RULE(t, x) ((int)((x) % (t).nbin))
#define ITEM_SPLIT(t, x, i) ((i) + 1 + (int)((x) / (t).nbin))

/* Want the V of rule b: the first to ask for it (bit b of need from 0 to 1) lists it in
 * wanted[] (its count at *nwanted). */
static __device__ void want_rule(int b, unsigned *need, unsigned short *wanted, int *nwanted)
{
    unsigned bit = 1u << (b % 32);
    if (!(atomicOr(&need[b / 32], bit) & bit))
        wanted[atomicAdd(nwanted, 1)] = b;
}

/* The rows' V of rule b over the cell's outside layer into v, a lane per row (every lane of
 * the warp calls it). */
static __device__ void rule_v(const maxc_tables *t, const maxc_layers *y, size_t cell, int b,
                              double *v)
{
    const maxc_binary *r = &t->bin[b];
    const float *po = y->opre + cell * y->nsub + t->sub_offset[r->parent];
    for (int row = threadIdx.x % MAXC_LANES; row < r->nrow; row += MAXC_LANES)
        v[r->row0 + row] = maxc_row_weight(t, b, row, po);
}

/* The rows' V of the wanted rules, a warp per rule (the whole block calls it); then none is
 * wanted (their need bits stay set: V is there). */
static __device__ void rows_v(const maxc_tables *t, const maxc_layers *y, size_t cell,
                              unsigned short *wanted, int *nwanted, double *v)
{
    for (int q = threadIdx.x / MAXC_LANES; q < *nwanted; q += blockDim.x / MAXC_LANES)
        rule_v(t, y, cell, wanted[q], v);
    __syncthreads();
    if (threadIdx.x == 0)
        *nwanted = 0;
    __syncthreads();
}

/* The next task for the calling warp from the block's counter `next` (every lane gets it). */
static __device__ int next_task(int *next)
{
    int at = 0;
    if (threadIdx.x % MAXC_LANES == 0)
        at = atomicAdd(next, 1);
    return __shfl_sync(0xffffffffu, at, 0);
}

/* The next symbol for the calling warp, those with the most rows first (next: the block's
 * counter), or -1 when none is left. */
static __device__ int next_symbol(const maxc_tables *t, int *next)
{
    int at = next_task(next);
    return at < t->nsym ? t->by_rows[at] : -1;
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
        double w = v[r->row0 + row];
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

/* The sum S of binary candidate (b, k) of cell (i, j) from its rule's V (every lane of the
 * warp calls it). */
static __device__ double item_sum(const maxc_tables *t, const maxc_layers *y, long c0, int n,
                                  int i, int k, int j, int b, const double *v)
{
    const maxc_binary *r = &t->bin[b];
    size_t cl = (size_t)c0 + chart_cell(n, i, k), cr = (size_t)c0 + chart_cell(n, k, j);
    return maxc_binary_rows(t, b, v + r->row0, NULL,
                            y->post + cl * y->nsub + t->sub_offset[r->left],
                            y->post + cr * y->nsub + t->sub_offset[r->right]);
}

static __global__ void __launch_bounds__(MAXC_SUMS_BLOCK, MAXC_SUMS_PER_SM)
maxc_sums(maxc_tables t, maxc_layers y, const int *__restrict__ cells, int ncell, int span,
          double *scratch)
{
    extern __shared__ double shared_sums[];
    int lane = threadIdx.x % MAXC_LANES;
    double *best = shared_sums, *upper = best + t.nsym;
    unsigned *mask = (unsigned *)(upper + t.nsym); /* rule b's splits */
    double *v = scratch + (size_t)blockIdx.x * block_scratch(&t); /* the block's rows' V, */
    double *rule_kids = v + t.nrow;              /* each rule's best children's scores, */
    double *rule_best = rule_kids + t.nbin;      /* its best score */
    int *kids_split = (int *)(rule_best + t.nbin), *rule_split = kids_split + t.nbin;
    int *first = (int *)(mask + t.nbin);
    int *next = first + t.nsym; /* the counter of next_task */
    unsigned *need = (unsigned *)(next + 1); /* bit b: rule b's V wanted or there */
    int *nwanted = (int *)(need + (t.nbin + 31) / 32);
    unsigned short *wanted = (unsigned short *)(nwanted + 1); /* kernels_maxc_sums: nbin fits */
    for (int m = blockIdx.x; m < ncell; m += gridDim.x) { /* cell m of the list */
        const int *c = cells + 3 * m;
        long c0 = c[0];
        int n = c[1], i = c[2], j = c[2] + span;
        size_t cell = (size_t)c0 + chart_cell(n, i, j);
        int e0;
        double logx0 = maxc_root(&t, &y, c0, n, &e0);
        for (int w = threadIdx.x; w < (t.nbin + 31) / 32; w += blockDim.x)
            need[w] = 0;
        if (threadIdx.x == 0)
            *next = *nwanted = 0;
        __syncthreads();
        /* each rule's candidate whose children score the most (the first split among
         * equals), a thread per rule */
        for (int b = threadIdx.x; b < t.nbin; b += blockDim.x) {
            double top = MAXC_NEG_INF;
            int split = -1;
            if (logx0 != MAXC_NEG_INF && t.phrasal[t.bin[b].parent]) {
                int kmin, kmax;
                maxc_splits(&t, b, i, j, &kmin, &kmax);
                for (int k = kmin; k <= kmax; k++) {
                    double ks = maxc_binary_scores(&t, &y, c0, n, i, k, j, b);
                    if (ks > top) {
                        top = ks;
                        split = k;
                    }
                }
            }
            rule_kids[b] = top;
            kids_split[b] = split;
        }
        __syncthreads();
        /* P's upper bound, and its first candidate: the best of its rules' (the largest
         * children's scores, then the first in the list), a warp per symbol, the heaviest
         * first. One candidate, not one per lane or a few: each first candidate's rule
         * wants its V, which costs more than the tighter bound saves (docs/performance.md,
         * session 19); what the bound skips is exact whichever candidate gives it. */
        for (int P; (P = next_symbol(&t, next)) >= 0;) {
            double top = MAXC_NEG_INF;
            long x = -1;
            for (int b = t.bin_first[P] + lane; b < t.bin_first[P + 1]; b += MAXC_LANES)
                if (rule_kids[b] > top) {
                    top = rule_kids[b];
                    x = (long)(kids_split[b] - i - 1) * t.nbin + b;
                }
            for (int d = MAXC_LANES / 2; d >= 1; d /= 2) {
                double ot = __shfl_xor_sync(0xffffffffu, top, d);
                long ox = __shfl_xor_sync(0xffffffffu, x, d);
                if (ot > top || (ot == top && ox >= 0 && (x < 0 || ox < x))) {
                    top = ot;
                    x = ox;
                }
            }
            if (lane == 0) {
                first[P] = (int)x;
                if (x >= 0)
                    want_rule(ITEM_RULE(t, x), need, wanted, nwanted);
                upper[P] = logx0 != MAXC_NEG_INF && t.phrasal[P]
                               ? maxc_upper(&t, &y, c0, n, i, j, P, e0, logx0) : 0;
            }
        }
        __syncthreads();
        if (threadIdx.x == 0)
            *next = 0;
        rows_v(&t, &y, cell, wanted, nwanted, v);
        /* the bound: the first candidate's score, summed by the warp */
        for (int P; (P = next_symbol(&t, next)) >= 0;) {
            double g = MAXC_NEG_INF;
            int x = first[P];
            if (x >= 0) {
                int b = ITEM_RULE(t, x), k = ITEM_SPLIT(t, x, i);
                g = maxc_candidate(maxc_binary_scores(&t, &y, c0, n, i, k, j, b),
                                   item_sum(&t, &y, c0, n, i, k, j, b, v),
                                   maxc_binary_exp(&y, c0, n, i, k, j, e0), logx0);
            }
            if (lane == 0)
                best[P] = g;
        }
        __syncthreads();
        /* the candidates that may beat the bound, MAXC_SPLITS splits at a time: a thread per
         * rule sets their bits in the rule's mask and lists the rule if any; then a warp per
         * listed rule takes its rows' V (unless there), its candidates' sums, a group at a
         * time, and its best candidate (the best score, then the smallest split) into
         * rule_best and rule_split. The other candidates' sums are skipped. */
        for (int k0 = 0; k0 < span - 1; k0 += MAXC_SPLITS) {
            if (threadIdx.x == 0)
                *next = *nwanted = 0;
            __syncthreads();
            for (int b = threadIdx.x; b < t.nbin; b += blockDim.x) {
                int P = t.bin[b].parent, kmin, kmax;
                unsigned bits = 0;
                maxc_splits(&t, b, i, j, &kmin, &kmax);
                kmin = kmin > i + 1 + k0 ? kmin : i + 1 + k0;
                kmax = kmax < i + k0 + MAXC_SPLITS ? kmax : i + k0 + MAXC_SPLITS;
                if (k0 == 0) {
                    rule_best[b] = MAXC_NEG_INF;
                    rule_split[b] = -1;
                }
                if (maxc_may_beat(rule_kids[b], upper[P], best[P])) /* its best split may */
                    for (int k = kmin; k <= kmax; k++)
                        if (maxc_may_beat(maxc_binary_scores(&t, &y, c0, n, i, k, j, b),
                                          upper[P], best[P]))
                            bits |= 1u << (k - i - 1 - k0);
                mask[b] = bits;
                if (bits)
                    wanted[atomicAdd(nwanted, 1)] = b;
            }
            __syncthreads();
            for (int q; (q = next_task(next)) < *nwanted;) {
                int b = wanted[q];
                if (!(need[b / 32] & (1u << (b % 32)))) { /* its V: this warp's alone */
                    rule_v(&t, &y, cell, b, v);
                    __syncwarp();
                    if (lane == 0)
                        atomicOr(&need[b / 32], 1u << (b % 32));
                }
                double top = rule_best[b]; /* of the splits before (every lane the same) */
                int split = rule_split[b];
                for (unsigned bits = mask[b]; bits;) {
                    int ks[MAXC_GROUP], nk = 0;
                    for (; bits && nk < MAXC_GROUP; bits &= bits - 1)
                        ks[nk++] = i + 1 + k0 + __ffs((int)bits) - 1;
                    double sum[MAXC_GROUP];
                    group_sums(&t, &y, c0, n, i, ks, nk, j, b, v, sum);
                    for (int g = 0; g < nk; g++) {
                        int k = ks[g];
                        double gs = maxc_candidate(maxc_binary_scores(&t, &y, c0, n, i, k, j, b),
                                                   sum[g], maxc_binary_exp(&y, c0, n, i, k, j, e0),
                                                   logx0);
                        if (gs > top) {
                            top = gs;
                            split = k;
                        }
                    }
                }
                if (lane == 0) {
                    rule_best[b] = top;
                    rule_split[b] = split;
                }
            }
            __syncthreads(); /* the masks, the list and the rules' best read or written */
        }
        /* each symbol's best binary candidate: the best of its rules' (the best score, then
         * the smallest rule, then split: the jar's order), a warp per symbol */
        for (int P = threadIdx.x / MAXC_LANES; P < t.nsym; P += blockDim.x / MAXC_LANES) {
            double g = MAXC_NEG_INF;
            int bb = INT_MAX, bk = INT_MAX;
            if (logx0 != MAXC_NEG_INF && t.phrasal[P])
                for (int b = t.bin_first[P] + lane; b < t.bin_first[P + 1]; b += MAXC_LANES)
                    if (rule_best[b] > g) {
                        g = rule_best[b];
                        bb = b;
                        bk = rule_split[b];
                    }
            warp_best(&g, &bb, &bk);
            if (lane == 0) {
                size_t at = cell * t.nsym + P;
                int found = g != MAXC_NEG_INF;
                y.bscore[at] = g;
                y.split[at] = found ? bk : -1;
                y.left[at] = found ? t.bin[bb].left : -1;
                y.right[at] = found ? t.bin[bb].right : -1;
            }
        }
        __syncthreads(); /* the shared arrays read before the next cell's */
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

/* Shared memory of the two kernels, at most MAXC_SHARED_MAX: allowed once per process. */
static cudaError_t allow_shared(void)
{
    static int done;
    if (done)
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(maxc_span, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         MAXC_SHARED_MAX);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(maxc_sums, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 MAXC_SHARED_MAX);
    done = e == cudaSuccess;
    return e;
}

extern "C" size_t kernels_maxc_scratch(const maxc_tables *t, int ncell)
{
    return block_scratch(t) * sizeof(double) * sums_grid(ncell);
}

extern "C" cudaError_t kernels_maxc_span(const maxc_tables *t, const maxc_layers *y,
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

extern "C" cudaError_t kernels_maxc_sums(const maxc_tables *t, const maxc_layers *y,
                                         const int *cells, int ncell, int span,
                                         double *scratch, cudaStream_t stream)
{
    if (ncell <= 0 || span < 2)
        return cudaSuccess;
    if ((long)(span - 1) * t->nbin > INT_MAX - MAXC_SUMS_BLOCK || /* a cell's candidates: ints */
        t->nbin > MAXC_RULES_MAX)                                   /* the rules listed: 16 bits */
        return cudaErrorInvalidValue;
    cudaError_t e = allow_shared();
    if (e != cudaSuccess)
        return e;
    maxc_sums<<<sums_grid(ncell), MAXC_SUMS_BLOCK, sums_shared_bytes(t), stream>>>(
        *t, *y, cells, ncell, span, scratch);
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

extern "C" cudaError_t kernels_maxc_walk(const maxc_tables *t, const maxc_layers *y,
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
