/* prune_kernels: the cascade's device code (see prune_kernels.h), the ref engine's passes
 * (prune/xbar.c, prune/levels.c, prune/prune.c) with the same terms, cell by cell. */
#include "prune_kernels.h"

#include <math.h>

#include "../chart/cell.h"

#define WARPS 8      /* warps of a block of one sentence (a level's start and end) */
#define SPAN_WARPS 8 /* the most warps of a cell's block in a pass (span_warps) */
#define FULL 0xffffffffu
#define NONE (-INFINITY)

/* One sentence of the batch, as a block sees it. */
typedef struct sent {
    int n;
    long long c0, w0; /* its first cell and word */
} sent;

/* The first row of sentence si's bit sets (prune_dev_batch.lbits): n + 1 rows a sentence. */
__device__ static inline long long row0_of(const prune_dev_batch *b, int si)
{
    return b->word0[si] + si;
}

__device__ static inline double dmax(double a, double b) { return a > b ? a : b; }

__device__ static inline double warp_max(double v)
{
    for (int o = 16; o; o >>= 1)
        v = dmax(v, __shfl_xor_sync(FULL, v, o));
    return v;
}

/* The bits of a double ordered as the doubles are (for an integer maximum), and back. */
__device__ static inline unsigned long long ordered(double d)
{
    unsigned long long u = (unsigned long long)__double_as_longlong(d);
    return u & 0x8000000000000000ull ? ~u : u | 0x8000000000000000ull;
}

__device__ static inline double unordered(unsigned long long u)
{
    return __longlong_as_double(
        (long long)(u & 0x8000000000000000ull ? u & ~0x8000000000000000ull : ~u));
}

/* *at = max(*at, v) on ordered bits, exactly, whoever else is doing the same (shared or
 * global memory). */
__device__ static inline void omax(unsigned long long *at, double v)
{
    atomicMax(at, ordered(v));
}

/* The first symbol >= from that st allows (nsym for none), the same in every lane of the
 * warp: the lanes look at 32 symbols at a time. */
__device__ static int next_sym(const unsigned char *st, int nsym, int from, int lane)
{
    for (int base = from & ~31; base < nsym; base += 32) {
        int sy = base + lane;
        unsigned m = __ballot_sync(FULL, sy >= from && sy < nsym && st[sy]);
        if (m)
            return base + __ffs(m) - 1;
    }
    return nsym;
}

#define FOR_ALLOWED(P, st, nsym)                                                             \
    for (int P = next_sym(st, nsym, 0, lane); P < (nsym); P = next_sym(st, nsym, P + 1, lane))

/* The allowed symbols of the cell this warp's block takes (v->cl), every nw-th from its
 * warp's. */
#define FOR_MINE(P)                                                                          \
    for (int q_ = warp, P; q_ < v->ncl && ((P = v->cl[q_]), 1); q_ += nw)

__device__ static inline long long cell_of(const sent *s, int i, int j)
{
    return s->c0 + (long long)chart_cell(s->n, i, j);
}

/* ---- level 0 ---- */

/* Each cell is one thread block of nw warps (warp: this one's index): the warps take the
 * split points in turn (k = i + 1 + warp, then every nw-th), the lanes the rules; the
 * block's threads fill and clear its shared buffers; whatever must run in order (the
 * unaries in place) is warp 0's. Every thread of the block calls these functions. */

static __device__ void xbar_inside(const prune_dev_level *g, const prune_dev_batch *b,
                                   const sent *s, int i, int j, double *cell,
                                   unsigned long long *acc, int warp, int nw, int lane)
{
    int nsym = g->nsym;
    double *vi = b->vi;
    double *dst = vi + cell_of(s, i, j) * nsym;
    for (int x = threadIdx.x; x < nsym; x += blockDim.x) {
        cell[x] = dst[x];
        acc[x] = ordered(NONE);
    }
    __syncthreads();
    if (j - i > 1) {
        for (int r = lane; r < g->nbin; r += 32) {
            int L = g->bin_left[r], R = g->bin_right[r];
            int lo = g->phrasal[R] ? i + 1 : j - 1, hi = g->phrasal[L] ? j : i + 2;
            double w = g->w[g->w_first[r]], best = NONE;
            for (int k = lo + warp; k < hi; k += nw)
                best = dmax(w + vi[cell_of(s, i, k) * nsym + L] + vi[cell_of(s, k, j) * nsym + R],
                            best);
            if (best > NONE)
                atomicMax(&acc[g->bin_parent[r]], ordered(best));
        }
        __syncthreads();
        for (int P = threadIdx.x; P < nsym; P += blockDim.x) {
            double a = unordered(acc[P]);
            if (g->phrasal[P] && a > cell[P])
                cell[P] = a;
        }
        __syncthreads();
    }
    if (warp)
        return;
    for (int P = 0; P < nsym; P++) { /* in place, in symbol order */
        if (!g->phrasal[P] || g->un_first[P] == g->un_first[P + 1])
            continue;
        double best = NONE;
        for (int u = g->un_first[P] + lane; u < g->un_first[P + 1]; u += 32) {
            double is = cell[g->un_child[u]];
            if (is != NONE)
                best = dmax(is + g->w[g->un_w[u]], best);
        }
        best = warp_max(best);
        if (lane == 0 && best > cell[P])
            cell[P] = best;
        __syncwarp();
    }
    for (int x = lane; x < nsym; x += 32)
        dst[x] = cell[x];
}

static __device__ void xbar_outside(const prune_dev_level *g, const prune_dev_batch *b,
                                    const sent *s, int i, int j, double *cell, int warp, int nw,
                                    int lane)
{
    int nsym = g->nsym;
    const double *vi = b->vi;
    const double *in = vi + cell_of(s, i, j) * nsym;
    unsigned long long *vo = b->vo, *dst = vo + cell_of(s, i, j) * nsym;
    if (warp == 0) {
        for (int x = lane; x < nsym; x += 32)
            cell[x] = unordered(dst[x]); /* its binary terms, pushed by its parents */
        __syncwarp();
        for (int C = 0; C < nsym; C++) { /* in place, in symbol order */
            if (in[C] == NONE || g->unc_first[C] == g->unc_first[C + 1])
                continue;
            double best = NONE;
            for (int x = g->unc_first[C] + lane; x < g->unc_first[C + 1]; x += 32) {
                int u = g->unc_rule[x];
                double os = cell[g->un_parent[u]];
                if (os != NONE)
                    best = dmax(os + g->w[g->un_w[u]], best);
            }
            best = warp_max(best);
            if (lane == 0 && best > cell[C])
                cell[C] = best;
            __syncwarp();
        }
        for (int x = lane; x < nsym; x += 32)
            dst[x] = ordered(cell[x]);
    }
    __syncthreads();
    if (j - i < 2)
        return;
    for (int r = lane; r < g->nbin; r += 32) { /* push into the children */
        double op = cell[g->bin_parent[r]];
        if (op == NONE)
            continue;
        int L = g->bin_left[r], R = g->bin_right[r];
        double w = g->w[g->w_first[r]];
        for (int k = i + 1 + warp; k < j; k += nw) {
            long long cl = cell_of(s, i, k) * nsym + L, cr = cell_of(s, k, j) * nsym + R;
            double ls = vi[cl], rs = vi[cr];
            if (ls != NONE && rs != NONE) {
                omax(&vo[cl], w + rs + op);
                omax(&vo[cr], w + ls + op);
            }
        }
    }
}

/* ---- levels >= 1 ---- */

/* The view of one level in one sentence: where its cells' scores and flags are (outside
 * scores as ordered bits). */
typedef struct lview {
    const prune_dev_level *g;
    const sent *s;
    int T; /* the batch's scores per cell */
    double *in;
    unsigned long long *out;
    unsigned char *state, *sub;
    const unsigned long long *lbits, *rbits; /* the sentence's first rows (prune_dev_batch) */
    int nword;
    /* in a pass, copies in shared memory of the cell's own: its allowed symbols in order (ncl
     * of them), its states [nsym] and substates [tot] */
    const unsigned short *cl;
    int ncl;
    const unsigned char *cst, *csub;
    int *taken; /* FOR_PAIRS's count of groups taken, in shared memory */
} lview;

/* The view of level k in sentence si (s), its substates sub. */
__device__ static inline lview view_of(const prune_dev_level *lv, const prune_dev_batch *b,
                                       int k, int si, const sent *s, unsigned char *sub)
{
    long long bits = row0_of(b, si) * lv[0].nsym * b->nword;
    return (lview){&lv[k], s, b->tot_max, b->in, b->out, b->state, sub, b->lbits + bits,
                   b->rbits + bits, b->nword, NULL, 0, NULL, NULL, NULL};
}

__device__ static inline const unsigned char *state_at(const lview *v, int i, int j)
{
    return v->state + cell_of(v->s, i, j) * v->g->nsym;
}

__device__ static inline long long at(const lview *v, int i, int j, int sym)
{
    return cell_of(v->s, i, j) * v->T + v->g->off[sym];
}

/* For t = t0, t0 + step, ... below count over a grid of rows of np columns: body with row =
 * t / np and x = t % np, kept by additions (a division once, where step > 1). body may
 * `continue`. */
#define FOR_TERMS(t0, step, count, np, row, x)                                               \
    for (int t = (t0), dq_ = (step) == 1 ? 0 : (step) / (np),                                \
             dr_ = (step) == 1 ? 1 : (step) - dq_ * (np), row = (t0) / (np),                  \
             x = (t0) - row * (np);                                                          \
         t < (count); t += (step), x += dr_, row += dq_, x >= (np) ? (x -= (np), row++) : 0)

/* acc[0 .. m) = the ordered bits of -inf, by the lanes of a warp. */
__device__ static inline void acc_clear(unsigned long long *acc, int m, int lane)
{
    for (int x = lane; x < m; x += 32)
        acc[x] = ordered(NONE);
}

/* A (rule, split) pair or a unary rule with at most SMALL terms is taken by one lane alone;
 * a larger one by the whole warp, its lanes over the terms. */
#define SMALL 32

/* Runs body(item, t0, step) for every item q < count that want(q) accepts: an item of at
 * most SMALL terms by the lane that found it (t0 0, step 1), a larger one by the whole warp
 * (t0 lane, step 32), which meets it through a ballot. terms(q) is its number of terms. */
#define FOR_ITEMS(count, want, terms, body)                                                  \
    for (int q0_ = 0; q0_ < (count); q0_ += 32) {                                            \
        int q_ = q0_ + lane, big_ = 0;                                                       \
        if (q_ < (count) && want(q_)) {                                                      \
            if (terms(q_) > SMALL)                                                           \
                big_ = 1;                                                                    \
            else                                                                             \
                body(q_, 0, 1);                                                              \
        }                                                                                    \
        for (unsigned m_ = __ballot_sync(FULL, big_); m_; m_ &= m_ - 1)                      \
            body(q0_ + __ffs(m_) - 1, lane, 32);                                             \
    }

/* The split points k of (i, j) in 64-bit word w of a bit set over split points. */
__device__ static inline unsigned long long span_word(int i, int j, int w)
{
    int lo = i + 1 - 64 * w, hi = j - 1 - 64 * w; /* the word's bits lo .. hi, inclusive */
    unsigned long long m = ~0ull;
    if (lo > 0)
        m &= ~0ull << lo;
    if (hi < 63)
        m &= (2ull << hi) - 1;
    return m;
}

/* The next group of FOR_PAIRS for this warp: nw + the block's count of groups taken
 * (v->taken, zero before the block's barrier ahead of FOR_PAIRS). */
__device__ static inline int take_group(const lview *v, int nw, int lane)
{
    int t = 0;
    if (lane == 0)
        t = atomicAdd(v->taken, 1);
    return nw + __shfl_sync(FULL, t, 0);
}

/* For each parent P that want(P) accepts, each of its binary rules r (an index into the
 * by-parent rule list) and each split point k of (i, j) where both of r's children are
 * allowed (the bit sets: left child over (i, k), right child over (k, j)): its terms. The
 * rules are taken 32 at a time, a lane each; warp w takes group w first, then whichever
 * group is next when it is done (take_group), so that a warp with a long group does not
 * hold up the others. A (rule, split) with more than SMALL terms is taken by the whole
 * warp, body(r, k, lane, 32) (its lanes over the terms); the terms of the others are laid
 * end to end, lane by lane and split by split, and the warp's lanes take them 32 at a
 * time, term(r, k, t) for term t. Uses i, j, v, g, warp, nw and lane from the caller. */
#define FOR_PAIRS(want, body, term)                                                          \
    for (int x_ = 0, c_ = 0, mine_ = warp; x_ < v->ncl; x_++) {                              \
        int P_ = v->cl[x_];                                                                  \
        if (!(want(P_)))                                                                     \
            continue;                                                                        \
        int e_ = g->bin_first[P_ + 1];                                                       \
        for (int q0_ = g->bin_first[P_]; q0_ < e_; q0_ += 32, c_++) {                        \
            if (c_ != mine_)                                                                 \
                continue;                                                                    \
            int r_ = q0_ + lane, terms_ = 0;                                                 \
            const unsigned long long *lb_ = NULL, *rb_ = NULL;                               \
            if (r_ < e_) {                                                                   \
                lb_ = v->lbits + ((long long)i * g->nsym + g->bin_left[r_]) * v->nword;      \
                rb_ = v->rbits + ((long long)j * g->nsym + g->bin_right[r_]) * v->nword;     \
                terms_ = (g->row_first[r_ + 1] - g->row_first[r_]) * g->nsub[P_];            \
            }                                                                                \
            for (int w_ = (i + 1) >> 6; w_ <= (j - 1) >> 6; w_++) {                          \
                unsigned long long m_ = lb_ ? lb_[w_] & rb_[w_] & span_word(i, j, w_) : 0;   \
                unsigned b_ = __ballot_sync(FULL, m_ != 0 && terms_ > SMALL);                \
                for (; b_; b_ &= b_ - 1) {                                                   \
                    int src_ = __ffs(b_) - 1, rw_ = __shfl_sync(FULL, r_, src_);             \
                    for (unsigned long long mw_ = __shfl_sync(FULL, m_, src_); mw_;          \
                         mw_ &= mw_ - 1)                                                     \
                        body(rw_, 64 * w_ + __ffsll((long long)mw_) - 1, lane, 32);          \
                }                                                                            \
                int n_ = terms_ <= SMALL ? __popcll(m_) * terms_ : 0, end_ = n_;             \
                for (int o_ = 1; o_ < 32; o_ <<= 1) {                                        \
                    int y_ = __shfl_up_sync(FULL, end_, o_);                                 \
                    if (lane >= o_)                                                          \
                        end_ += y_;                                                          \
                }                                                                            \
                int all_ = __shfl_sync(FULL, end_, 31);                                      \
                for (int t0_ = 0; t0_ < all_; t0_ += 32) {                                   \
                    int q_ = t0_ + lane, src_ = 0;                                           \
                    for (int s_ = 16; s_; s_ >>= 1)                                          \
                        if (__shfl_sync(FULL, end_, src_ + s_ - 1) <= q_)                    \
                            src_ += s_;                                                      \
                    int at_ = q_ - __shfl_sync(FULL, end_ - n_, src_);                       \
                    int ts_ = __shfl_sync(FULL, terms_, src_), rs_ = __shfl_sync(FULL, r_, src_);\
                    unsigned long long ms_ = __shfl_sync(FULL, m_, src_);                    \
                    if (q_ < all_) {                                                         \
                        for (int z_ = at_ / ts_; z_ > 0; z_--)                               \
                            ms_ &= ms_ - 1;                                                  \
                        term(rs_, 64 * w_ + __ffsll((long long)ms_) - 1, at_ % ts_);         \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
            mine_ = take_group(v, nw, lane);                                                 \
        }                                                                                    \
    }

/* The binary terms of cell (i, j) at a level >= 1, by split and allowed children
 * (FOR_PAIRS): each term w[row][x] + left + right into the block's exact maximum per
 * substate of the cell's level (acc: shared by the block's warps). */
static __device__ void inside_binary(const lview *v, int i, int j, unsigned long long *acc,
                                     int warp, int nw, int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = v->cst;
    FOR_MINE(P)
        acc_clear(acc + g->off[P], g->nsub[P], lane);
    if (threadIdx.x == 0)
        *v->taken = 0;
    __syncthreads();
#define IN_WANT(P) (st[P])
#define IN_BODY(r, k, t0, step)                                                              \
    {                                                                                        \
        int P = g->bin_parent[r], np = g->nsub[P], r0 = g->row_first[r];                     \
        const unsigned char *ps = v->csub + g->off[P];                                       \
        unsigned long long *ap = acc + g->off[P];                                            \
        const double *w = g->w + g->w_first[r];                                              \
        const double *left = v->in + at(v, i, k, g->bin_left[r]);                            \
        const double *right = v->in + at(v, k, j, g->bin_right[r]);                          \
        FOR_TERMS(t0, step, (g->row_first[r + 1] - r0) * np, np, row, x) {                   \
            if (!ps[x])                                                                      \
                continue;                                                                    \
            double ls = left[g->row_l[r0 + row]], rs = right[g->row_r[r0 + row]];            \
            if (ls == NONE || rs == NONE)                                                    \
                continue;                                                                    \
            double term = w[t] + ls + rs;                                                    \
            if (term > NONE)                                                                 \
                omax(&ap[x], term);                                                          \
        }                                                                                    \
    }
#define IN_TERM(r, k, t)                                                                     \
    {                                                                                        \
        int P = g->bin_parent[r], np = g->nsub[P], row = (t) / np, x = (t) - row * np;       \
        if (v->csub[g->off[P] + x]) {                                                        \
            int r0 = g->row_first[r];                                                        \
            double ls = v->in[at(v, i, k, g->bin_left[r]) + g->row_l[r0 + row]];             \
            double rs = v->in[at(v, k, j, g->bin_right[r]) + g->row_r[r0 + row]];            \
            if (ls != NONE && rs != NONE) {                                                  \
                double sum = g->w[g->w_first[r] + (t)] + ls + rs;                            \
                if (sum > NONE)                                                              \
                    omax(&acc[g->off[P] + x], sum);                                          \
            }                                                                                \
        }                                                                                    \
    }
    FOR_PAIRS(IN_WANT, IN_BODY, IN_TERM)
    __syncthreads();
    FOR_MINE(P) {
        double *cell = v->in + at(v, i, j, P);
        const unsigned char *ps = v->csub + g->off[P];
        for (int x = lane; x < g->nsub[P]; x += 32) {
            double best = unordered(acc[g->off[P] + x]);
            if (ps[x] && best > NONE)
                cell[x] = best;
        }
    }
    __syncthreads();
}

/* The unary terms of cell (i, j) inside, all from the values before them (acc: the block's
 * buffer of the level's substates; each warp takes its parents, FOR_MINE). */
static __device__ void inside_unary(const lview *v, int i, int j, unsigned long long *acc,
                                    int warp, int nw, int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = v->cst;
    FOR_MINE(P)
        acc_clear(acc + g->off[P], g->nsub[P], lane);
    __syncthreads();
    FOR_MINE(P) {
        int np = g->nsub[P], ub = g->un_first[P];
        const unsigned char *ps = v->csub + g->off[P];
        unsigned long long *ap = acc + g->off[P];
#define UN_WANT(q) (st[g->un_child[ub + (q)]])
#define UN_TERMS(q) (g->nsub[g->un_child[ub + (q)]] * np)
#define UN_BODY(q, t0, step)                                                                 \
    {                                                                                        \
        int u = ub + (q), C = g->un_child[u];                                                \
        const double *child = v->in + at(v, i, j, C), *w = g->w + g->un_w[u];                \
        FOR_TERMS(t0, step, g->nsub[C] * np, np, c, x) {                                     \
            double cv = child[c];                                                            \
            if (!ps[x] || cv == NONE)                                                        \
                continue;                                                                    \
            double term = cv + w[t];                                                         \
            if (term > NONE)                                                                 \
                omax(&ap[x], term);                                                          \
        }                                                                                    \
    }
        FOR_ITEMS(g->un_first[P + 1] - ub, UN_WANT, UN_TERMS, UN_BODY)
    }
    __syncthreads();
    FOR_MINE(P) {
        double *cell = v->in + at(v, i, j, P);
        for (int x = lane; x < g->nsub[P]; x += 32)
            cell[x] = dmax(unordered(acc[g->off[P] + x]), cell[x]);
    }
    __syncthreads();
}

/* The unary terms of cell (i, j) outside, from the values before them. */
static __device__ void outside_unary(const lview *v, int i, int j, unsigned long long *acc,
                                     int warp, int nw, int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = v->cst;
    int d = j - i;
    FOR_MINE(C)
        if (d == 1 || g->phrasal[C])
            acc_clear(acc + g->off[C], g->nsub[C], lane);
    __syncthreads();
    FOR_MINE(C) {
        if (d > 1 && !g->phrasal[C])
            continue;
        int nc = g->nsub[C], yb = g->unc_first[C];
        const unsigned char *cs = v->csub + g->off[C];
        unsigned long long *ac = acc + g->off[C];
#define UP_P(q) (g->un_parent[g->unc_rule[yb + (q)]])
#define UP_WANT(q) (st[UP_P(q)])
#define UP_TERMS(q) (nc * g->nsub[UP_P(q)])
#define UP_BODY(q, t0, step)                                                                 \
    {                                                                                        \
        int u = g->unc_rule[yb + (q)], P = g->un_parent[u], np = g->nsub[P];                 \
        const unsigned long long *po = v->out + at(v, i, j, P);                              \
        const double *w = g->w + g->un_w[u];                                                 \
        FOR_TERMS(t0, step, nc * np, np, c, x) {                                             \
            double pq = unordered(po[x]);                                                    \
            if (!cs[c] || pq == NONE)                                                        \
                continue;                                                                    \
            double term = pq + w[t];                                                         \
            if (term > NONE)                                                                 \
                omax(&ac[c], term);                                                          \
        }                                                                                    \
    }
        FOR_ITEMS(g->unc_first[C + 1] - yb, UP_WANT, UP_TERMS, UP_BODY)
    }
    __syncthreads();
    FOR_MINE(C) {
        if (d > 1 && !g->phrasal[C])
            continue;
        unsigned long long *cell = v->out + at(v, i, j, C);
        for (int c = lane; c < g->nsub[C]; c += 32)
            if (acc[g->off[C] + c] > cell[c])
                cell[c] = acc[g->off[C] + c];
    }
    __syncthreads();
}

/* The binary terms of (i, j)'s children outside, pushed, by split and allowed children
 * (FOR_PAIRS), for the parents with an outside score (live: the block's flags, one per
 * symbol): each term w[row][x] + sibling + outside into the children's cells with an exact
 * atomic maximum (other cells of this span length push there too). A lane alone pushes
 * each term; the warp first takes the maxima of a large pair's terms in its buffers al, ar. */
static __device__ void outside_binary(const lview *v, int i, int j, unsigned long long *al,
                                      unsigned long long *ar, unsigned long long *live,
                                      int warp, int nw, int lane)
{
    const prune_dev_level *g = v->g;
    for (int P = threadIdx.x; P < g->nsym; P += blockDim.x)
        live[P] = 0;
    if (threadIdx.x == 0)
        *v->taken = 0;
    __syncthreads();
    FOR_MINE(P) {
        const unsigned long long *po = v->out + at(v, i, j, P);
        int any = 0;
        for (int x = lane; x < g->nsub[P]; x += 32)
            any |= po[x] != ordered(NONE);
        if (__any_sync(FULL, any) && lane == 0)
            live[P] = 1;
    }
    __syncthreads();
#define OUT_WANT(P) (live[P])
#define OUT_BODY(r, k, t0, step)                                                             \
    {                                                                                        \
        int P = g->bin_parent[r], np = g->nsub[P], r0 = g->row_first[r], L = g->bin_left[r]; \
        int R = g->bin_right[r];                                                             \
        const unsigned long long *po = v->out + at(v, i, j, P);                              \
        long long a_l = at(v, i, k, L), a_r = at(v, k, j, R);                                \
        const double *w = g->w + g->w_first[r], *left = v->in + a_l, *right = v->in + a_r;   \
        acc_clear(al, g->nsub[L], lane);                                                     \
        acc_clear(ar, g->nsub[R], lane);                                                     \
        __syncwarp();                                                                        \
        FOR_TERMS(t0, step, (g->row_first[r + 1] - r0) * np, np, row, x) {                   \
            double pox = unordered(po[x]);                                                   \
            if (pox == NONE)                                                                 \
                continue;                                                                    \
            int l = g->row_l[r0 + row], rr = g->row_r[r0 + row];                             \
            double ls = left[l], rs = right[rr];                                             \
            if (ls == NONE || rs == NONE)                                                    \
                continue;                                                                    \
            double tl = w[t] + rs + pox, tr = w[t] + ls + pox;                               \
            if (tl > NONE)                                                                   \
                omax(&al[l], tl);                                                            \
            if (tr > NONE)                                                                   \
                omax(&ar[rr], tr);                                                           \
        }                                                                                    \
        __syncwarp();                                                                        \
        for (int l = lane; l < g->nsub[L]; l += 32)                                          \
            if (al[l] != ordered(NONE))                                                      \
                atomicMax(&v->out[a_l + l], al[l]);                                          \
        for (int x = lane; x < g->nsub[R]; x += 32)                                          \
            if (ar[x] != ordered(NONE))                                                      \
                atomicMax(&v->out[a_r + x], ar[x]);                                          \
        __syncwarp();                                                                        \
    }
#define OUT_TERM(r, k, t)                                                                    \
    {                                                                                        \
        int P = g->bin_parent[r], np = g->nsub[P], row = (t) / np, x = (t) - row * np;       \
        double pox = unordered(v->out[at(v, i, j, P) + x]);                                  \
        if (pox != NONE) {                                                                   \
            int r0 = g->row_first[r], l = g->row_l[r0 + row], rr = g->row_r[r0 + row];       \
            long long a_l = at(v, i, k, g->bin_left[r]), a_r = at(v, k, j, g->bin_right[r]); \
            double ls = v->in[a_l + l], rs = v->in[a_r + rr];                                \
            if (ls != NONE && rs != NONE) {                                                  \
                double wt = g->w[g->w_first[r] + (t)], tl = wt + rs + pox, tr = wt + ls + pox;\
                if (tl > NONE)                                                               \
                    omax(&v->out[a_l + l], tl);                                              \
                if (tr > NONE)                                                               \
                    omax(&v->out[a_r + rr], tr);                                             \
            }                                                                                \
        }                                                                                    \
    }
    FOR_PAIRS(OUT_WANT, OUT_BODY, OUT_TERM)
}

/* ---- the block of one sentence ---- */

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

__device__ static unsigned long long fnv_int(unsigned long long h, int v)
{
    for (int i = 0; i < 4; i++) {
        h ^= ((unsigned)v >> (8 * i)) & 0xff;
        h *= FNV_PRIME;
    }
    return h;
}

/* prune_count_mask (prune.c) of level k, by one thread; state and sub from the sentence's
 * first cell. */
__device__ static prune_dev_stats count_level(const prune_dev_level *g, int k, int n, int T,
                                              const unsigned char *state,
                                              const unsigned char *sub)
{
    prune_dev_stats r = {0, 0, 0, FNV_OFFSET};
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            long long c = (long long)chart_cell(n, i, i + d);
            for (int sy = 1; sy < g->nsym; sy++) {
                if ((d > 1 && !g->phrasal[sy]) || !state[c * g->nsym + sy])
                    continue;
                int any = 0;
                for (int x = 0; x < (k >= 1 ? g->nsub[sy] : 1); x++) {
                    if (k >= 1 && !sub[c * T + g->off[sy] + x])
                        continue;
                    any = 1;
                    r.substates++;
                    r.hash = fnv_int(fnv_int(fnv_int(fnv_int(r.hash, i), i + d), sy), x);
                }
                r.symbols += any;
            }
        }
    return r;
}

/* ---- the kernels of one sentence per block: a level's start and end ---- */

/* Level 0's start: every cell allowed as the jar's grammarTags allow it, the scores -inf,
 * then the lexicon. */
__global__ void __launch_bounds__(WARPS * 32)
    prune_start(const prune_dev_level *__restrict__ lv, prune_dev_batch b)
{
    int si = b.order[blockIdx.x];
    sent s = {b.n[si], b.cell0[si], b.word0[si]};
    int n = s.n;
    long long ncell = (long long)chart_ncells(n);
    const prune_dev_level *g0 = &lv[0];
    int nsym = g0->nsym;
    unsigned char *state = b.state + s.c0 * nsym;
    for (long long x = threadIdx.x; x < ncell * nsym; x += blockDim.x) {
        state[x] = g0->phrasal[x % nsym];
        b.vi[s.c0 * nsym + x] = NONE;
        b.vo[s.c0 * nsym + x] = ordered(NONE);
    }
    __syncthreads();
    for (int x = threadIdx.x; x < n * nsym; x += blockDim.x) {
        int i = x / nsym, t = x % nsym;
        if (!g0->phrasal[t])
            b.vi[cell_of(&s, i, i + 1) * nsym + t] =
                b.lex[(s.w0 + i) * b.lex_width + b.lex_at[0] + g0->off[t]];
    }
}

/* Level k >= 1's start (createArrays), one sentence a block: the substates its symbols
 * allow from level k - 1's mask `from` (k = 1: every substate of an allowed symbol) into
 * `to` (k = nlevel: the fine grammar's, b.fine_sub); then, below nlevel, the allowed
 * symbols' scores -inf, the cells' lists of allowed symbols and the lexicon. */
__global__ void __launch_bounds__(WARPS * 32)
    prune_begin(const prune_dev_level *__restrict__ lv, prune_dev_batch b, int k,
                const unsigned char *__restrict__ from_sub, unsigned char *to_sub)
{
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, si = b.order[blockIdx.x];
    sent s = {b.n[si], b.cell0[si], b.word0[si]};
    int n = s.n, T = b.tot_max, nsym = lv[0].nsym;
    long long ncell = (long long)chart_ncells(n);
    const unsigned char *state = b.state + s.c0 * nsym;
    const prune_dev_level *from = &lv[k - 1];
    int to_tot = k < b.nlevel ? lv[k].tot : b.fine_tot;
    const int *to_nsub = k < b.nlevel ? lv[k].nsub : b.fine_nsub;
    const int *to_off = k < b.nlevel ? lv[k].off : b.fine_off;
    long long dT = k < b.nlevel ? T : to_tot;
    for (long long c = warp; c < ncell; c += WARPS) {
        const unsigned char *st = state + c * nsym, *old = from_sub + (s.c0 + c) * T;
        unsigned char *cell = to_sub + (s.c0 + c) * dT;
        for (int x = lane; x < to_tot; x += 32)
            cell[x] = 0;
        __syncwarp();
        FOR_ALLOWED(sy, st, nsym) {
            if (k == 1) {
                for (int x = lane; x < to_nsub[sy]; x += 32)
                    cell[to_off[sy] + x] = 1;
                continue;
            }
            for (int x = from->off[sy] + lane; x < from->off[sy] + from->nsub[sy]; x += 32) {
                cell[to_off[sy] + from->lchild[x]] = old[x];
                cell[to_off[sy] + from->rchild[x]] = old[x];
            }
        }
        __syncwarp();
    }
    if (k == b.nlevel)
        return;
    __syncthreads();
    lview v = view_of(lv, &b, k, si, &s, to_sub);
    const prune_dev_level *g = v.g;
    unsigned long long *lbits = (unsigned long long *)v.lbits;
    unsigned long long *rbits = (unsigned long long *)v.rbits;
    for (long long x = threadIdx.x; x < (long long)(n + 1) * nsym * b.nword; x += blockDim.x)
        lbits[x] = rbits[x] = 0;
    __syncthreads();
    for (int d = 1; d <= n; d++) /* lay out; the bit sets */
        for (int i = warp; i + d <= n; i += WARPS) {
            long long c = (long long)chart_cell(n, i, i + d);
            const unsigned char *st = state + c * nsym;
            int e = i + d;
            FOR_ALLOWED(sy, st, nsym) {
                for (int x = lane; x < g->nsub[sy]; x += 32) {
                    b.in[(s.c0 + c) * T + g->off[sy] + x] = NONE;
                    b.out[(s.c0 + c) * T + g->off[sy] + x] = ordered(NONE);
                }
                if (lane == 0) {
                    long long li = ((long long)i * nsym + sy) * b.nword + (e >> 6);
                    long long ri = ((long long)e * nsym + sy) * b.nword + (i >> 6);
                    atomicOr(&lbits[li], 1ull << (e & 63));
                    atomicOr(&rbits[ri], 1ull << (i & 63));
                }
            }
        }
    __syncthreads();
    for (int x = threadIdx.x; x < n * nsym; x += blockDim.x) { /* the lexicon */
        int i = x / nsym, t = x % nsym;
        if (g->phrasal[t] || !state_at(&v, i, i + 1)[t])
            continue;
        long long a = at(&v, i, i + 1, t);
        const double *lex = b.lex + (s.w0 + i) * b.lex_width + b.lex_at[k] + g->off[t];
        for (int y = 0; y < g->nsub[t]; y++)
            if (to_sub[a + y])
                b.in[a + y] = lex[y];
    }
}

/* After level k's inside pass, a thread per sentence: the root's outside score 0 where the
 * level has a parse (the outside pass runs only there). */
__global__ void prune_root(const prune_dev_level *__restrict__ lv, prune_dev_batch b, int k)
{
    int si = blockIdx.x * blockDim.x + threadIdx.x;
    if (si >= b.nsent)
        return;
    sent s = {b.n[si], b.cell0[si], b.word0[si]};
    if (k == 0) {
        long long r = cell_of(&s, 0, s.n) * lv[0].nsym;
        if (b.vi[r] != NONE)
            b.vo[r] = ordered(0.0);
    } else {
        long long r = cell_of(&s, 0, s.n) * b.tot_max + lv[k].off[0];
        if (b.in[r] != NONE)
            b.out[r] = ordered(0.0);
    }
}

/* Level k's end, one sentence a block: pruneChart where the level has a parse (state, and at
 * k >= 1 the substates `sub`), then its statistics (a failed level: its flag). */
__global__ void __launch_bounds__(WARPS * 32)
    prune_end(const prune_dev_level *__restrict__ lv, prune_dev_batch b, int k,
              unsigned char *sub)
{
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, si = b.order[blockIdx.x];
    sent s = {b.n[si], b.cell0[si], b.word0[si]};
    int n = s.n, T = b.tot_max, nsym = lv[0].nsym;
    unsigned char *state = b.state + s.c0 * nsym;
    const prune_dev_level *g = &lv[k];
    double root = k == 0 ? b.vi[cell_of(&s, 0, n) * nsym]
                         : b.in[cell_of(&s, 0, n) * T + g->off[0]];
    if (root != NONE && k == 0) {
        for (int d = 1; d <= n; d++)
            for (int t = warp; t <= n - d; t += WARPS) {
                long long c = (long long)chart_cell(n, t, t + d);
                for (int sy = lane; sy < nsym; sy += 32) {
                    if (d > 1 && !g->phrasal[sy])
                        continue;
                    double is = b.vi[(s.c0 + c) * nsym + sy];
                    double os = unordered(b.vo[(s.c0 + c) * nsym + sy]);
                    state[c * nsym + sy] =
                        sy == 0 || (is != NONE && os != NONE && is + os - root > b.threshold[0]);
                }
            }
    } else if (root != NONE) {
        lview v = view_of(lv, &b, k, si, &s, sub);
        for (int d = 1; d <= n; d++)
            for (int t = warp; t <= n - d; t += WARPS) {
                unsigned char *st = state + chart_cell(n, t, t + d) * nsym;
                FOR_ALLOWED(sy, st, nsym) {
                    if (d > 1 && !g->phrasal[sy])
                        continue;
                    if (sy == 0) {
                        if (lane == 0)
                            st[0] = 1;
                        continue;
                    }
                    long long a = at(&v, t, t + d, sy);
                    int any = 0;
                    for (int x0 = 0; x0 < g->nsub[sy]; x0 += 32) {
                        int x = x0 + lane, keep = 0;
                        if (x < g->nsub[sy] && sub[a + x]) {
                            double is = b.in[a + x], os = unordered(b.out[a + x]);
                            keep = is != NONE && os != NONE && is + os - root > b.threshold[k];
                            sub[a + x] = keep;
                        }
                        any |= __any_sync(FULL, keep);
                    }
                    __syncwarp();
                    if (lane == 0 && !any)
                        st[sy] = 0;
                    __syncwarp();
                }
            }
    }
    __syncthreads();
    prune_dev_stats *stats = b.stats + (long long)si * b.nlevel;
    if (threadIdx.x == 0) {
        if (root == NONE)
            stats[k] = (prune_dev_stats){1, -1, -1, 0};
        else if (b.hash)
            stats[k] = count_level(g, k, n, T, state, k ? sub + s.c0 * T : NULL);
    }
}

/* ---- the passes: the cells of one span length of every sentence in one launch ---- */

enum { PASS_XBAR_IN, PASS_XBAR_OUT, PASS_IN, PASS_OUT };

/* Where (in doubles) the allowed symbols' list of a cell's block of nw warps starts. */
__host__ __device__ static size_t span_list_at(const prune_dev_batch *b, int nw)
{
    size_t m = (size_t)b->tot_max + b->nsym0;
    if (m < 2 * (size_t)b->nsym0)
        m = 2 * (size_t)b->nsym0;
    return m + 2 * (size_t)b->maxsub * nw;
}

/* Bytes of shared memory of a cell's block of nw warps (prune_span): the list [nsym0 + 1],
 * the states and substates after the rest. */
static size_t span_smem(const prune_dev_batch *b, int nw)
{
    return span_list_at(b, nw) * sizeof(double) + ((size_t)b->nsym0 + 1) * sizeof(unsigned short) +
           (size_t)b->nsym0 + (size_t)b->tot_max;
}

/* One thread block per cell: cells[2 q], cells[2 q + 1] are the sentence and start of the
 * launch's cell q = blockIdx.x (span length d); the cells it reads were finished by the
 * launches before (inside: shorter spans; outside: longer ones, which pushed into it). sub:
 * level k's substates (k >= 1). An outside pass skips a sentence whose level has no parse.
 * Shared memory (span_smem): level 0, the cell's scores and maxima [nsym0] each; levels >= 1,
 * the maxima [tot_max], the live flags [nsym0], each warp's al, ar [maxsub] each, then the
 * cell's allowed symbols in order [nsym0] and their number, its states [nsym0] and its
 * substates [tot_max] (bytes). */
template <int PASS>
__global__ void __launch_bounds__(SPAN_WARPS * 32)
    prune_span(const prune_dev_level *__restrict__ lv, prune_dev_batch b, int k, int d,
               const int *__restrict__ cells, unsigned char *sub)
{
    extern __shared__ double smem[];
    __shared__ int taken;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    int si = cells[2 * blockIdx.x], i = cells[2 * blockIdx.x + 1], j = i + d;
    sent s = {b.n[si], b.cell0[si], b.word0[si]};
    const prune_dev_level *g0 = &lv[0];
    unsigned long long *acc = (unsigned long long *)smem;
    if (PASS == PASS_XBAR_IN) {
        xbar_inside(g0, &b, &s, i, j, smem, acc + g0->nsym, warp, nw, lane);
    } else if (PASS == PASS_XBAR_OUT) {
        if (b.vi[cell_of(&s, 0, s.n) * g0->nsym] != NONE)
            xbar_outside(g0, &b, &s, i, j, smem, warp, nw, lane);
    } else {
        lview v = view_of(lv, &b, k, si, &s, sub);
        unsigned short *cl = (unsigned short *)(smem + span_list_at(&b, nw));
        unsigned char *cst = (unsigned char *)(cl + g0->nsym + 1), *csub = cst + g0->nsym;
        const unsigned char *st = state_at(&v, i, j), *ss = sub + cell_of(&s, i, j) * b.tot_max;
        for (int x = threadIdx.x; x < g0->nsym; x += blockDim.x)
            cst[x] = st[x];
        for (int x = threadIdx.x; x < v.g->tot; x += blockDim.x)
            csub[x] = ss[x];
        if (warp == 0) { /* the cell's allowed symbols, in order */
            int m = 0;
            for (int base = 0; base < g0->nsym; base += 32) {
                int sy = base + lane, on = sy < g0->nsym && st[sy];
                unsigned bits = __ballot_sync(FULL, on);
                if (on)
                    cl[m + __popc(bits & ((1u << lane) - 1))] = (unsigned short)sy;
                m += __popc(bits);
            }
            if (lane == 0)
                cl[g0->nsym] = (unsigned short)m;
        }
        __syncthreads();
        v.cl = cl;
        v.ncl = cl[g0->nsym];
        v.cst = cst;
        v.csub = csub;
        v.taken = &taken;
        if (PASS == PASS_IN) {
            if (d > 1)
                inside_binary(&v, i, j, acc, warp, nw, lane);
            inside_unary(&v, i, j, acc, warp, nw, lane);
        } else if (b.in[at(&v, 0, s.n, 0)] != NONE) {
            unsigned long long *live = acc + b.tot_max;
            unsigned long long *al = live + g0->nsym + 2 * (size_t)b.maxsub * warp;
            outside_unary(&v, i, j, acc, warp, nw, lane);
            if (d > 1)
                outside_binary(&v, i, j, al, al + b.maxsub, live, warp, nw, lane);
        }
    }
}

/* Warps of a cell's block by its span length: one a split point, at most SPAN_WARPS. */
static int span_warps(int d)
{
    return d < 2 ? 1 : d - 1 < SPAN_WARPS ? d - 1 : SPAN_WARPS;
}

/* The launches of one pass over span lengths 1 .. nmax (outside: nmax .. 1). */
template <int PASS>
static cudaError_t launch_pass(const prune_dev_level *lv, const prune_dev_batch *b, int k,
                               const long long *span_first, int nmax, unsigned char *sub,
                               cudaStream_t stream)
{
    size_t most = span_smem(b, SPAN_WARPS);
    cudaError_t err = cudaSuccess;
    if (most > 48 * 1024)
        err = cudaFuncSetAttribute(prune_span<PASS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)most);
    int outside = PASS == PASS_XBAR_OUT || PASS == PASS_OUT;
    for (int x = 1; x <= nmax && err == cudaSuccess; x++) {
        int d = outside ? nmax + 1 - x : x, nw = span_warps(d);
        long long first = span_first[d], count = span_first[d + 1] - first;
        if (count > 0) {
            prune_span<PASS><<<(unsigned)count, nw * 32, span_smem(b, nw), stream>>>(
                lv, *b, k, d, b->span_cell + 2 * first, sub);
            err = cudaGetLastError();
        }
    }
    return err;
}

extern "C" cudaError_t prune_dev_launch(const prune_dev_level *lv, const prune_dev_batch *b,
                                        const long long *span_first, int nmax,
                                        cudaStream_t stream)
{
    if (b->nsent <= 0)
        return cudaSuccess;
    int ns = b->nsent, roots = (ns + 127) / 128;
    cudaError_t err;
    prune_start<<<ns, WARPS * 32, 0, stream>>>(lv, *b);
    err = cudaGetLastError();
    if (err == cudaSuccess)
        err = launch_pass<PASS_XBAR_IN>(lv, b, 0, span_first, nmax, NULL, stream);
    if (err == cudaSuccess) {
        prune_root<<<roots, 128, 0, stream>>>(lv, *b, 0);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = launch_pass<PASS_XBAR_OUT>(lv, b, 0, span_first, nmax, NULL, stream);
    if (err == cudaSuccess) {
        prune_end<<<ns, WARPS * 32, 0, stream>>>(lv, *b, 0, NULL);
        err = cudaGetLastError();
    }
    /* level k's substates alternate between sub2 (k odd) and sub (k even) */
    for (int k = 1; k <= b->nlevel && err == cudaSuccess; k++) {
        unsigned char *cur = k % 2 ? b->sub2 : b->sub, *prev = k % 2 ? b->sub : b->sub2;
        prune_begin<<<ns, WARPS * 32, 0, stream>>>(lv, *b, k, prev,
                                                    k < b->nlevel ? cur : b->fine_sub);
        err = cudaGetLastError();
        if (k == b->nlevel || err != cudaSuccess)
            break;
        err = launch_pass<PASS_IN>(lv, b, k, span_first, nmax, cur, stream);
        if (err == cudaSuccess) {
            prune_root<<<roots, 128, 0, stream>>>(lv, *b, k);
            err = cudaGetLastError();
        }
        if (err == cudaSuccess)
            err = launch_pass<PASS_OUT>(lv, b, k, span_first, nmax, cur, stream);
        if (err == cudaSuccess) {
            prune_end<<<ns, WARPS * 32, 0, stream>>>(lv, *b, k, cur);
            err = cudaGetLastError();
        }
    }
    return err;
}
