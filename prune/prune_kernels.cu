/* prune_kernels: the cascade's device code (see prune_kernels.h), the ref engine's passes
 * (prune/xbar.c, prune/levels.c, prune/prune.c) with the same terms, cell by cell. */
#include "prune_kernels.h"

#include <math.h>

#include "../chart/cell.h"

#define WARPS 8
#define FULL 0xffffffffu
#define NONE (-INFINITY)

/* One sentence of the batch, as a block sees it. */
typedef struct sent {
    int n;
    long long c0, w0; /* its first cell and word */
} sent;

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

__device__ static inline long long cell_of(const sent *s, int i, int j)
{
    return s->c0 + (long long)chart_cell(s->n, i, j);
}

/* ---- level 0 ---- */

static __device__ void xbar_inside(const prune_dev_level *g, const prune_dev_batch *b,
                                   const sent *s, int i, int j, double *cell,
                                   unsigned long long *acc, int lane)
{
    int nsym = g->nsym;
    double *vi = b->vi;
    double *dst = vi + cell_of(s, i, j) * nsym;
    for (int x = lane; x < nsym; x += 32) {
        cell[x] = dst[x];
        acc[x] = ordered(NONE);
    }
    __syncwarp();
    if (j - i > 1) {
        for (int r = lane; r < g->nbin; r += 32) {
            int L = g->bin_left[r], R = g->bin_right[r];
            int lo = g->phrasal[R] ? i + 1 : j - 1, hi = g->phrasal[L] ? j : i + 2;
            double w = g->w[g->w_first[r]], best = NONE;
            for (int k = lo; k < hi; k++)
                best = dmax(w + vi[cell_of(s, i, k) * nsym + L] + vi[cell_of(s, k, j) * nsym + R],
                            best);
            if (best > NONE)
                atomicMax(&acc[g->bin_parent[r]], ordered(best));
        }
        __syncwarp();
        for (int P = lane; P < nsym; P += 32) {
            double a = unordered(acc[P]);
            if (g->phrasal[P] && a > cell[P])
                cell[P] = a;
        }
        __syncwarp();
    }
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
    __syncwarp();
}

static __device__ void xbar_outside(const prune_dev_level *g, const prune_dev_batch *b,
                                    const sent *s, int i, int j, double *cell, int lane)
{
    int nsym = g->nsym;
    const double *vi = b->vi;
    const double *in = vi + cell_of(s, i, j) * nsym;
    unsigned long long *vo = b->vo, *dst = vo + cell_of(s, i, j) * nsym;
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
    __syncwarp();
    if (j - i < 2)
        return;
    for (int r = lane; r < g->nbin; r += 32) { /* push into the children */
        double op = cell[g->bin_parent[r]];
        if (op == NONE)
            continue;
        int L = g->bin_left[r], R = g->bin_right[r];
        double w = g->w[g->w_first[r]];
        for (int k = i + 1; k < j; k++) {
            long long cl = cell_of(s, i, k) * nsym + L, cr = cell_of(s, k, j) * nsym + R;
            double ls = vi[cl], rs = vi[cr];
            if (ls != NONE && rs != NONE) {
                omax(&vo[cl], w + rs + op);
                omax(&vo[cr], w + ls + op);
            }
        }
    }
    __syncwarp(); /* the lanes are done with cell before the warp's next cell loads it */
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
    const unsigned short *list; /* per cell: the allowed symbols' count, then the symbols */
} lview;

__device__ static inline const unsigned char *state_at(const lview *v, int i, int j)
{
    return v->state + cell_of(v->s, i, j) * v->g->nsym;
}

__device__ static inline long long at(const lview *v, int i, int j, int sym)
{
    return cell_of(v->s, i, j) * v->T + v->g->off[sym];
}

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

/* The allowed symbols of cell (i, j): their count, then the symbols (made per level). */
__device__ static inline const unsigned short *list_at(const lview *v, int i, int j)
{
    return v->list + cell_of(v->s, i, j) * (v->g->nsym + 1);
}

/* For each split k of (i, j) in turn, each pair of symbols allowed over (i, k) and (k, j)
 * (the lanes take the pairs) and each binary rule with those children (lr_first) whose
 * parent P want(P) accepts: body(r, k, t0, step), as FOR_ITEMS runs it, r an index into
 * the by-parent rule list. Declares i, j, st (the cell's states) and lane from the caller. */
#define FOR_PAIRS(want, body)                                                                \
    for (int k = i + 1; k < j; k++) {                                                        \
        const unsigned short *A = list_at(v, i, k), *B = list_at(v, k, j);                   \
        int nb_ = B[0], pairs_ = A[0] * nb_;                                                 \
        for (int q0_ = 0; q0_ < pairs_; q0_ += 32) {                                         \
            int q_ = q0_ + lane, c_ = 0, e_ = 0;                                             \
            if (q_ < pairs_) {                                                               \
                int lr_ = A[1 + q_ / nb_] * g->nsym + B[1 + q_ % nb_];                       \
                c_ = g->lr_first[lr_];                                                       \
                e_ = g->lr_first[lr_ + 1];                                                   \
            }                                                                                \
            while (__any_sync(FULL, c_ < e_)) {                                              \
                int r_ = -1, big_ = 0;                                                       \
                if (c_ < e_) {                                                               \
                    r_ = g->lr_rule[c_++];                                                   \
                    int P_ = g->bin_parent[r_];                                              \
                    if (!want(P_))                                                           \
                        r_ = -1;                                                             \
                    else if ((g->row_first[r_ + 1] - g->row_first[r_]) * g->nsub[P_] > SMALL) \
                        big_ = 1;                                                            \
                    else                                                                     \
                        body(r_, k, 0, 1);                                                   \
                }                                                                            \
                for (unsigned m_ = __ballot_sync(FULL, big_); m_; m_ &= m_ - 1) {            \
                    int rw_ = __shfl_sync(FULL, r_, __ffs(m_) - 1);                          \
                    body(rw_, k, lane, 32);                                                  \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }

/* The binary terms of cell (i, j) at a level >= 1, by split and allowed children
 * (FOR_PAIRS): each term w[row][x] + left + right into a per-warp exact maximum per
 * substate of the cell's level (acc: a warp's buffer). */
static __device__ void inside_binary(const lview *v, int i, int j, unsigned long long *acc,
                                     int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = state_at(v, i, j);
    FOR_ALLOWED(P, st, g->nsym)
        acc_clear(acc + g->off[P], g->nsub[P], lane);
    __syncwarp();
#define IN_WANT(P) (st[P])
#define IN_BODY(r, k, t0, step)                                                              \
    {                                                                                        \
        int P = g->bin_parent[r], np = g->nsub[P], r0 = g->row_first[r];                     \
        const unsigned char *ps = v->sub + at(v, i, j, P);                                   \
        unsigned long long *ap = acc + g->off[P];                                            \
        const double *w = g->w + g->w_first[r];                                              \
        const double *left = v->in + at(v, i, k, g->bin_left[r]);                            \
        const double *right = v->in + at(v, k, j, g->bin_right[r]);                          \
        for (int t = (t0); t < (g->row_first[r + 1] - r0) * np; t += (step)) {               \
            int row = t / np, x = t - row * np;                                              \
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
    FOR_PAIRS(IN_WANT, IN_BODY)
    __syncwarp();
    FOR_ALLOWED(P, st, g->nsym) {
        double *cell = v->in + at(v, i, j, P);
        const unsigned char *ps = v->sub + at(v, i, j, P);
        for (int x = lane; x < g->nsub[P]; x += 32) {
            double best = unordered(acc[g->off[P] + x]);
            if (ps[x] && best > NONE)
                cell[x] = best;
        }
    }
    __syncwarp();
}

/* The unary terms of cell (i, j) inside, all from the values before them (acc: a warp's
 * buffer of the level's substates). */
static __device__ void inside_unary(const lview *v, int i, int j, unsigned long long *acc,
                                    int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = state_at(v, i, j);
    FOR_ALLOWED(P, st, g->nsym)
        acc_clear(acc + g->off[P], g->nsub[P], lane);
    __syncwarp();
    FOR_ALLOWED(P, st, g->nsym) {
        int np = g->nsub[P], ub = g->un_first[P];
        const unsigned char *ps = v->sub + at(v, i, j, P);
        unsigned long long *ap = acc + g->off[P];
#define UN_WANT(q) (st[g->un_child[ub + (q)]])
#define UN_TERMS(q) (g->nsub[g->un_child[ub + (q)]] * np)
#define UN_BODY(q, t0, step)                                                                 \
    {                                                                                        \
        int u = ub + (q), C = g->un_child[u];                                                \
        const double *child = v->in + at(v, i, j, C), *w = g->w + g->un_w[u];                \
        for (int t = (t0); t < g->nsub[C] * np; t += (step)) {                               \
            int c = t / np, x = t - c * np;                                                  \
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
    __syncwarp();
    FOR_ALLOWED(P, st, g->nsym) {
        double *cell = v->in + at(v, i, j, P);
        for (int x = lane; x < g->nsub[P]; x += 32)
            cell[x] = dmax(unordered(acc[g->off[P] + x]), cell[x]);
    }
    __syncwarp();
}

/* The unary terms of cell (i, j) outside, from the values before them. */
static __device__ void outside_unary(const lview *v, int i, int j, unsigned long long *acc,
                                     int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = state_at(v, i, j);
    int d = j - i;
    FOR_ALLOWED(C, st, g->nsym)
        if (d == 1 || g->phrasal[C])
            acc_clear(acc + g->off[C], g->nsub[C], lane);
    __syncwarp();
    FOR_ALLOWED(C, st, g->nsym) {
        if (d > 1 && !g->phrasal[C])
            continue;
        int nc = g->nsub[C], yb = g->unc_first[C];
        const unsigned char *cs = v->sub + at(v, i, j, C);
        unsigned long long *ac = acc + g->off[C];
#define UP_P(q) (g->un_parent[g->unc_rule[yb + (q)]])
#define UP_WANT(q) (st[UP_P(q)])
#define UP_TERMS(q) (nc * g->nsub[UP_P(q)])
#define UP_BODY(q, t0, step)                                                                 \
    {                                                                                        \
        int u = g->unc_rule[yb + (q)], P = g->un_parent[u], np = g->nsub[P];                 \
        const unsigned long long *po = v->out + at(v, i, j, P);                              \
        const double *w = g->w + g->un_w[u];                                                 \
        for (int t = (t0); t < nc * np; t += (step)) {                                       \
            int c = t / np, x = t - c * np;                                                  \
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
    __syncwarp();
    FOR_ALLOWED(C, st, g->nsym) {
        if (d > 1 && !g->phrasal[C])
            continue;
        unsigned long long *cell = v->out + at(v, i, j, C);
        for (int c = lane; c < g->nsub[C]; c += 32)
            if (acc[g->off[C] + c] > cell[c])
                cell[c] = acc[g->off[C] + c];
    }
    __syncwarp();
}

/* The binary terms of (i, j)'s children outside, pushed, by split and allowed children
 * (FOR_PAIRS), for the parents with an outside score (live: a warp's buffer of a flag per
 * symbol): each term w[row][x] + sibling + outside into the children's cells with an exact
 * atomic maximum (other cells of this span length push there too). A lane alone pushes
 * each term; the warp first takes the maxima of a large pair's terms in its buffers al, ar. */
static __device__ void outside_binary(const lview *v, int i, int j, unsigned long long *al,
                                      unsigned long long *ar, unsigned long long *live,
                                      int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = state_at(v, i, j);
    for (int P = lane; P < g->nsym; P += 32)
        live[P] = 0;
    __syncwarp();
    FOR_ALLOWED(P, st, g->nsym) {
        const unsigned long long *po = v->out + at(v, i, j, P);
        int any = 0;
        for (int x = lane; x < g->nsub[P]; x += 32)
            any |= po[x] != ordered(NONE);
        if (__any_sync(FULL, any) && lane == 0)
            live[P] = 1;
    }
    __syncwarp();
#define OUT_WANT(P) (live[P])
#define OUT_BODY(r, k, t0, step)                                                             \
    {                                                                                        \
        int P = g->bin_parent[r], np = g->nsub[P], r0 = g->row_first[r], L = g->bin_left[r]; \
        int R = g->bin_right[r], warp = (step) > 1;                                          \
        const unsigned long long *po = v->out + at(v, i, j, P);                              \
        long long a_l = at(v, i, k, L), a_r = at(v, k, j, R);                                \
        const double *w = g->w + g->w_first[r], *left = v->in + a_l, *right = v->in + a_r;   \
        unsigned long long *dl = warp ? al : v->out + a_l, *dr = warp ? ar : v->out + a_r;   \
        if (warp) {                                                                          \
            acc_clear(al, g->nsub[L], lane);                                                 \
            acc_clear(ar, g->nsub[R], lane);                                                 \
            __syncwarp();                                                                    \
        }                                                                                    \
        for (int t = (t0); t < (g->row_first[r + 1] - r0) * np; t += (step)) {               \
            int row = t / np, x = t - row * np;                                              \
            double pox = unordered(po[x]);                                                   \
            if (pox == NONE)                                                                 \
                continue;                                                                    \
            int l = g->row_l[r0 + row], rr = g->row_r[r0 + row];                             \
            double ls = left[l], rs = right[rr];                                             \
            if (ls == NONE || rs == NONE)                                                    \
                continue;                                                                    \
            double tl = w[t] + rs + pox, tr = w[t] + ls + pox;                               \
            if (tl > NONE)                                                                   \
                omax(&dl[l], tl);                                                            \
            if (tr > NONE)                                                                   \
                omax(&dr[rr], tr);                                                           \
        }                                                                                    \
        if (warp) {                                                                          \
            __syncwarp();                                                                    \
            for (int l = lane; l < g->nsub[L]; l += 32)                                      \
                if (al[l] != ordered(NONE))                                                  \
                    atomicMax(&v->out[a_l + l], al[l]);                                      \
            for (int x = lane; x < g->nsub[R]; x += 32)                                      \
                if (ar[x] != ordered(NONE))                                                  \
                    atomicMax(&v->out[a_r + x], ar[x]);                                      \
            __syncwarp();                                                                    \
        }                                                                                    \
    }
    FOR_PAIRS(OUT_WANT, OUT_BODY)
}

/* ---- the cells of a pass, in dependency order ---- */

/* A pass over one sentence's cells: each warp takes the next cell from the block's counter
 * (span by span, the shortest first; outside: the other way round, from the root) and starts
 * on it once the cells it reads are done (done[cell] == epoch: each pass has its own epoch),
 * so that a warp waits for what it needs, not for every cell of a span length. */
typedef struct sched {
    int *next; /* the block's counter (shared memory) */
    int *done; /* the sentence's cells' epochs (global memory) */
    int epoch, n, outside;
} sched;

/* The next cell (i, j) of the pass for this warp; 0 when none is left. */
__device__ static int take_cell(const sched *p, int lane, int *i, int *j)
{
    int q = 0, n = p->n, nc = chart_ncells(n);
    if (lane == 0)
        q = atomicAdd(p->next, 1);
    q = __shfl_sync(FULL, q, 0);
    if (q >= nc)
        return 0;
    if (p->outside)
        q = nc - 1 - q;
    int d = 1; /* cells are numbered span by span (chart_cell) */
    while (d < n && (int)chart_cell(n, 0, d + 1) <= q)
        d++;
    *i = q - (int)chart_cell(n, 0, d);
    *j = *i + d;
    return 1;
}

/* Wait until the cells that (i, j) reads in the pass are done: inside, (i, k) and (k, j) for
 * i < k < j; outside, the cells that push into it, (i', j) for i' < i and (i, j') for j' > j. */
__device__ static void wait_cells(const sched *p, int i, int j, int lane)
{
    int n = p->n, m = p->outside ? i + n - j : 2 * (j - i - 1);
    volatile const int *done = p->done;
    for (int x0 = 0; x0 < m; x0 += 32) {
        int x = x0 + lane;
        long long c = -1;
        if (x < m && !p->outside)
            c = x & 1 ? chart_cell(n, i + 1 + x / 2, j) : chart_cell(n, i, i + 1 + x / 2);
        else if (x < m)
            c = x < i ? chart_cell(n, x, j) : chart_cell(n, i, j + 1 + x - i);
        while (!__all_sync(FULL, c < 0 || done[c] == p->epoch))
            __nanosleep(64);
    }
    __threadfence_block();
}

/* Cell (i, j) is done: every lane's writes are seen by the block before its flag. */
__device__ static void mark_done(const sched *p, int i, int j, int lane)
{
    __threadfence_block();
    __syncwarp();
    if (lane == 0)
        ((volatile int *)p->done)[chart_cell(p->n, i, j)] = p->epoch;
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

__global__ void __launch_bounds__(WARPS * 32)
    prune_cascade(const prune_dev_level *__restrict__ lv, prune_dev_batch b)
{
    extern __shared__ double smem[];
    __shared__ int next; /* the passes' counter of cells taken */
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, si = b.order[blockIdx.x];
    sent s = {b.n[si], b.cell0[si], b.word0[si]};
    int n = s.n, T = b.tot_max;
    long long ncell = (long long)chart_ncells(n);
    const prune_dev_level *g0 = &lv[0];
    int nsym = g0->nsym;
    double *wbuf = smem + b.per_warp * warp;
    unsigned long long *wacc = (unsigned long long *)wbuf;
    unsigned char *state = b.state + s.c0 * nsym;
    int *done = b.done + s.c0;

    /* level 0: every cell, the jar's grammarTags as the mask it starts from */
    for (long long x = threadIdx.x; x < ncell * nsym; x += blockDim.x) {
        state[x] = g0->phrasal[x % nsym];
        b.vi[s.c0 * nsym + x] = NONE;
        b.vo[s.c0 * nsym + x] = ordered(NONE);
    }
    for (long long c = threadIdx.x; c < ncell; c += blockDim.x)
        done[c] = 0;
    if (threadIdx.x == 0)
        next = 0;
    __syncthreads();
    for (int x = threadIdx.x; x < n * nsym; x += blockDim.x) {
        int i = x / nsym, t = x % nsym;
        if (!g0->phrasal[t])
            b.vi[cell_of(&s, i, i + 1) * nsym + t] =
                b.lex[(s.w0 + i) * b.lex_width + b.lex_at[0] + g0->off[t]];
    }
    __syncthreads();
    {
        sched p = {&next, done, 1, n, 0};
        int i, j;
        while (take_cell(&p, lane, &i, &j)) {
            wait_cells(&p, i, j, lane);
            xbar_inside(g0, &b, &s, i, j, wbuf, (unsigned long long *)(wbuf + nsym), lane);
            mark_done(&p, i, j, lane);
        }
    }
    __syncthreads();
    double root = b.vi[cell_of(&s, 0, n) * nsym];
    if (root != NONE) {
        if (threadIdx.x == 0) {
            b.vo[cell_of(&s, 0, n) * nsym] = ordered(0.0);
            next = 0;
        }
        __syncthreads();
        sched p = {&next, done, 2, n, 1};
        int i, j;
        while (take_cell(&p, lane, &i, &j)) {
            wait_cells(&p, i, j, lane);
            xbar_outside(g0, &b, &s, i, j, wbuf, lane);
            mark_done(&p, i, j, lane);
        }
        __syncthreads();
        for (int d = 1; d <= n; d++) /* pruneChart */
            for (int t = warp; t <= n - d; t += WARPS) {
                long long c = (long long)chart_cell(n, t, t + d);
                for (int sy = lane; sy < nsym; sy += 32) {
                    if (d > 1 && !g0->phrasal[sy])
                        continue;
                    double is = b.vi[(s.c0 + c) * nsym + sy];
                    double os = unordered(b.vo[(s.c0 + c) * nsym + sy]);
                    state[c * nsym + sy] =
                        sy == 0 || (is != NONE && os != NONE && is + os - root > b.threshold[0]);
                }
            }
    }
    __syncthreads();
    prune_dev_stats *stats = b.stats + (long long)si * b.nlevel;
    if (threadIdx.x == 0) {
        if (root == NONE)
            stats[0] = (prune_dev_stats){1, -1, -1, 0};
        else if (b.hash)
            stats[0] = count_level(g0, 0, n, T, state, NULL);
    }

    /* levels >= 1 over what the level before allowed; then the fine grammar's substates */
    unsigned char *cur = b.sub, *nxt = b.sub2;
    for (int k = 1; k <= b.nlevel; k++) {
        const prune_dev_level *from = &lv[k - 1];
        int to_tot = k < b.nlevel ? lv[k].tot : b.fine_tot;
        const int *to_nsub = k < b.nlevel ? lv[k].nsub : b.fine_nsub;
        const int *to_off = k < b.nlevel ? lv[k].off : b.fine_off;
        unsigned char *dst = k < b.nlevel ? nxt : b.fine_sub;
        long long dT = k < b.nlevel ? T : to_tot;
        for (long long c = warp; c < ncell; c += WARPS) { /* createArrays */
            const unsigned char *st = state + c * nsym, *old = cur + (s.c0 + c) * T;
            unsigned char *cell = dst + (s.c0 + c) * dT;
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
        __syncthreads();
        if (k == b.nlevel)
            break;
        unsigned char *t = cur;
        cur = nxt;
        nxt = t;
        lview v = {&lv[k], &s, T, b.in, b.out, b.state, cur, b.list};
        const prune_dev_level *g = v.g;
        for (long long c = warp; c < ncell; c += WARPS) { /* lay out; the cells' lists */
            const unsigned char *st = state + c * nsym;
            FOR_ALLOWED(sy, st, nsym)
                for (int x = lane; x < g->nsub[sy]; x += 32) {
                    b.in[(s.c0 + c) * T + g->off[sy] + x] = NONE;
                    b.out[(s.c0 + c) * T + g->off[sy] + x] = ordered(NONE);
                }
            unsigned short *list = b.list + (s.c0 + c) * (nsym + 1);
            int m = 0;
            for (int base = 0; base < nsym; base += 32) {
                int sy = base + lane, on = sy < nsym && st[sy];
                unsigned bits = __ballot_sync(FULL, on);
                if (on)
                    list[1 + m + __popc(bits & ((1u << lane) - 1))] = (unsigned short)sy;
                m += __popc(bits);
            }
            if (lane == 0)
                list[0] = (unsigned short)m;
        }
        __syncthreads();
        for (int x = threadIdx.x; x < n * nsym; x += blockDim.x) { /* the lexicon */
            int i = x / nsym, t = x % nsym;
            if (g->phrasal[t] || !state_at(&v, i, i + 1)[t])
                continue;
            long long a = at(&v, i, i + 1, t);
            const double *lex = b.lex + (s.w0 + i) * b.lex_width + b.lex_at[k] + g->off[t];
            for (int y = 0; y < g->nsub[t]; y++)
                if (cur[a + y])
                    b.in[a + y] = lex[y];
        }
        __syncthreads();
        if (threadIdx.x == 0)
            next = 0;
        __syncthreads();
        {
            sched p = {&next, done, 2 * k + 1, n, 0};
            int i, j;
            while (take_cell(&p, lane, &i, &j)) {
                wait_cells(&p, i, j, lane);
                if (j - i > 1)
                    inside_binary(&v, i, j, wacc, lane);
                inside_unary(&v, i, j, wacc, lane);
                mark_done(&p, i, j, lane);
            }
        }
        __syncthreads();
        double lroot = b.in[at(&v, 0, n, 0)];
        if (lroot != NONE) {
            if (threadIdx.x == 0) {
                b.out[at(&v, 0, n, 0)] = ordered(0.0);
                next = 0;
            }
            __syncthreads();
            sched p = {&next, done, 2 * k + 2, n, 1};
            int i, j;
            while (take_cell(&p, lane, &i, &j)) {
                wait_cells(&p, i, j, lane);
                outside_unary(&v, i, j, wacc, lane);
                if (j - i > 1)
                    outside_binary(&v, i, j, wacc, wacc + b.maxsub, wacc + 2 * b.maxsub, lane);
                mark_done(&p, i, j, lane);
            }
            __syncthreads();
            for (int d = 1; d <= n; d++) /* pruneChart */
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
                            if (x < g->nsub[sy] && cur[a + x]) {
                                double is = b.in[a + x], os = unordered(b.out[a + x]);
                                keep = is != NONE && os != NONE &&
                                       is + os - lroot > b.threshold[k];
                                cur[a + x] = keep;
                            }
                            any |= __any_sync(FULL, keep);
                        }
                        __syncwarp();
                        if (lane == 0 && !any)
                            st[sy] = 0;
                        __syncwarp();
                    }
                }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            if (lroot == NONE)
                stats[k] = (prune_dev_stats){1, -1, -1, 0};
            else if (b.hash)
                stats[k] = count_level(g, k, n, T, state, cur + s.c0 * T);
        }
        __syncthreads();
    }
}

extern "C" cudaError_t prune_dev_launch(const prune_dev_level *lv, const prune_dev_batch *b,
                                        cudaStream_t stream)
{
    size_t smem = (size_t)b->per_warp * WARPS * sizeof(double);
    cudaError_t err = cudaSuccess;
    if (smem > 48 * 1024)
        err = cudaFuncSetAttribute(prune_cascade, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)smem);
    if (err != cudaSuccess)
        return err;
    if (b->nsent > 0)
        prune_cascade<<<b->nsent, WARPS * 32, smem, stream>>>(lv, *b);
    return cudaGetLastError();
}
