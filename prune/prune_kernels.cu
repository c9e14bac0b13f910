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

/* *at = max(*at, v), exactly, whoever else is doing the same. */
__device__ static void atomic_max(double *at, double v)
{
    unsigned long long *p = (unsigned long long *)at;
    unsigned long long old = *(volatile unsigned long long *)p;
    while (v > __longlong_as_double((long long)old)) {
        unsigned long long got = atomicCAS(p, old, (unsigned long long)__double_as_longlong(v));
        if (got == old)
            break;
        old = got;
    }
}

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
    double *dst = b->vo + cell_of(s, i, j) * nsym;
    for (int x = lane; x < nsym; x += 32)
        cell[x] = dst[x]; /* its binary terms, pushed by its parents */
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
        dst[x] = cell[x];
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
                atomic_max(&b->vo[cl], w + rs + op);
                atomic_max(&b->vo[cr], w + ls + op);
            }
        }
    }
    __syncwarp(); /* the lanes are done with cell before the warp's next cell loads it */
}

/* ---- levels >= 1 ---- */

/* The view of one level in one sentence: where its cells' scores and flags are. */
typedef struct lview {
    const prune_dev_level *g;
    const sent *s;
    int T; /* the batch's scores per cell */
    double *in, *out;
    unsigned char *state, *sub;
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

/* The binary terms of cell (i, j) at a level >= 1: for each allowed parent P, rule and split
 * point in turn, the lanes take the (row, parent substate) terms w[row][x] + left + right,
 * into a per-warp exact maximum per substate (acc: a warp's buffer). */
static __device__ void inside_binary(const lview *v, int i, int j, unsigned long long *acc,
                                     int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = state_at(v, i, j);
    for (int P = 0; P < g->nsym; P++) {
        if (!st[P])
            continue;
        int np = g->nsub[P];
        const unsigned char *ps = v->sub + at(v, i, j, P);
        acc_clear(acc, np, lane);
        __syncwarp();
        for (int r = g->bin_first[P]; r < g->bin_first[P + 1]; r++) {
            int L = g->bin_left[r], R = g->bin_right[r], r0 = g->row_first[r];
            int terms = (g->row_first[r + 1] - r0) * np;
            const double *w = g->w + g->w_first[r];
            for (int k = i + 1; k < j; k++) {
                if (!state_at(v, i, k)[L] || !state_at(v, k, j)[R])
                    continue;
                const double *left = v->in + at(v, i, k, L), *right = v->in + at(v, k, j, R);
                for (int t = lane; t < terms; t += 32) {
                    int row = t / np, x = t - row * np;
                    if (!ps[x])
                        continue;
                    double ls = left[g->row_l[r0 + row]], rs = right[g->row_r[r0 + row]];
                    if (ls == NONE || rs == NONE)
                        continue;
                    double term = w[t] + ls + rs;
                    if (term > NONE)
                        atomicMax(&acc[x], ordered(term));
                }
            }
        }
        __syncwarp();
        double *cell = v->in + at(v, i, j, P);
        for (int x = lane; x < np; x += 32) {
            double best = unordered(acc[x]);
            if (ps[x] && best > NONE)
                cell[x] = best;
        }
        __syncwarp();
    }
}

/* The unary terms of cell (i, j) inside, all from the values before them (acc: a warp's
 * buffer of the level's substates). */
static __device__ void inside_unary(const lview *v, int i, int j, unsigned long long *acc,
                                    int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = state_at(v, i, j);
    for (int P = 0; P < g->nsym; P++)
        if (st[P])
            acc_clear(acc + g->off[P], g->nsub[P], lane);
    __syncwarp();
    for (int P = 0; P < g->nsym; P++) {
        if (!st[P])
            continue;
        int np = g->nsub[P];
        const unsigned char *ps = v->sub + at(v, i, j, P);
        for (int u = g->un_first[P]; u < g->un_first[P + 1]; u++) {
            int C = g->un_child[u];
            if (!st[C])
                continue;
            const double *child = v->in + at(v, i, j, C), *w = g->w + g->un_w[u];
            int terms = g->nsub[C] * np;
            for (int t = lane; t < terms; t += 32) {
                int c = t / np, x = t - c * np;
                double cv = child[c];
                if (!ps[x] || cv == NONE)
                    continue;
                double term = cv + w[t];
                if (term > NONE)
                    atomicMax(&acc[g->off[P] + x], ordered(term));
            }
        }
    }
    __syncwarp();
    for (int P = 0; P < g->nsym; P++) {
        if (!st[P])
            continue;
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
    for (int C = 0; C < g->nsym; C++)
        if (st[C] && (d == 1 || g->phrasal[C]))
            acc_clear(acc + g->off[C], g->nsub[C], lane);
    __syncwarp();
    for (int C = 0; C < g->nsym; C++) {
        if ((d > 1 && !g->phrasal[C]) || !st[C])
            continue;
        int nc = g->nsub[C];
        const unsigned char *cs = v->sub + at(v, i, j, C);
        for (int y = g->unc_first[C]; y < g->unc_first[C + 1]; y++) {
            int u = g->unc_rule[y], P = g->un_parent[u], np = g->nsub[P];
            if (!st[P])
                continue;
            const double *po = v->out + at(v, i, j, P), *w = g->w + g->un_w[u];
            for (int t = lane; t < nc * np; t += 32) {
                int c = t / np, q = t - c * np;
                double pq = po[q];
                if (!cs[c] || pq == NONE)
                    continue;
                double term = pq + w[t];
                if (term > NONE)
                    atomicMax(&acc[g->off[C] + c], ordered(term));
            }
        }
    }
    __syncwarp();
    for (int C = 0; C < g->nsym; C++) {
        if ((d > 1 && !g->phrasal[C]) || !st[C])
            continue;
        double *cell = v->out + at(v, i, j, C);
        for (int c = lane; c < g->nsub[C]; c += 32)
            cell[c] = dmax(unordered(acc[g->off[C] + c]), cell[c]);
    }
    __syncwarp();
}

/* The binary terms of (i, j)'s children outside, pushed: for each allowed parent, rule and
 * split point, the lanes take the (row, parent substate) terms into per-warp maxima of the
 * two children's substates (al, ar: a warp's buffers), which then go into the children's
 * cells with an exact atomic maximum (other cells of this span length push there too). */
static __device__ void outside_binary(const lview *v, int i, int j, unsigned long long *al,
                                      unsigned long long *ar, int lane)
{
    const prune_dev_level *g = v->g;
    const unsigned char *st = state_at(v, i, j);
    for (int P = 0; P < g->nsym; P++) {
        if (!st[P])
            continue;
        int np = g->nsub[P];
        const double *po = v->out + at(v, i, j, P);
        int live = 0;
        for (int x = lane; x < np; x += 32)
            live |= po[x] != NONE;
        if (!__any_sync(FULL, live))
            continue;
        for (int r = g->bin_first[P]; r < g->bin_first[P + 1]; r++) {
            int L = g->bin_left[r], R = g->bin_right[r], r0 = g->row_first[r];
            int terms = (g->row_first[r + 1] - r0) * np, nl = g->nsub[L], nr = g->nsub[R];
            const double *w = g->w + g->w_first[r];
            for (int k = i + 1; k < j; k++) {
                if (!state_at(v, i, k)[L] || !state_at(v, k, j)[R])
                    continue;
                long long a_l = at(v, i, k, L), a_r = at(v, k, j, R);
                const double *left = v->in + a_l, *right = v->in + a_r;
                acc_clear(al, nl, lane);
                acc_clear(ar, nr, lane);
                __syncwarp();
                for (int t = lane; t < terms; t += 32) {
                    int row = t / np, x = t - row * np;
                    double pox = po[x];
                    if (pox == NONE)
                        continue;
                    int l = g->row_l[r0 + row], rr = g->row_r[r0 + row];
                    double ls = left[l], rs = right[rr];
                    if (ls == NONE || rs == NONE)
                        continue;
                    double tl = w[t] + rs + pox, tr = w[t] + ls + pox;
                    if (tl > NONE)
                        atomicMax(&al[l], ordered(tl));
                    if (tr > NONE)
                        atomicMax(&ar[rr], ordered(tr));
                }
                __syncwarp();
                for (int l = lane; l < nl; l += 32)
                    if (al[l] != ordered(NONE))
                        atomic_max(&v->out[a_l + l], unordered(al[l]));
                for (int rr = lane; rr < nr; rr += 32)
                    if (ar[rr] != ordered(NONE))
                        atomic_max(&v->out[a_r + rr], unordered(ar[rr]));
                __syncwarp();
            }
        }
    }
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
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    sent s = {b.n[blockIdx.x], b.cell0[blockIdx.x], b.word0[blockIdx.x]};
    int n = s.n, T = b.tot_max;
    long long ncell = (long long)chart_ncells(n);
    const prune_dev_level *g0 = &lv[0];
    int nsym = g0->nsym;
    double *wbuf = smem + b.per_warp * warp;
    unsigned long long *wacc = (unsigned long long *)wbuf;
    unsigned char *state = b.state + s.c0 * nsym;

    /* level 0: every cell, the jar's grammarTags as the mask it starts from */
    for (long long x = threadIdx.x; x < ncell * nsym; x += blockDim.x) {
        state[x] = g0->phrasal[x % nsym];
        b.vi[s.c0 * nsym + x] = NONE;
        b.vo[s.c0 * nsym + x] = NONE;
    }
    __syncthreads();
    for (int x = threadIdx.x; x < n * nsym; x += blockDim.x) {
        int i = x / nsym, t = x % nsym;
        if (!g0->phrasal[t])
            b.vi[cell_of(&s, i, i + 1) * nsym + t] =
                b.lex[(s.w0 + i) * b.lex_width + b.lex_at[0] + g0->off[t]];
    }
    __syncthreads();
    for (int d = 1; d <= n; d++) {
        for (int t = warp; t <= n - d; t += WARPS)
            xbar_inside(g0, &b, &s, t, t + d, wbuf, (unsigned long long *)(wbuf + nsym), lane);
        __syncthreads();
    }
    double root = b.vi[cell_of(&s, 0, n) * nsym];
    if (root != NONE) {
        if (threadIdx.x == 0)
            b.vo[cell_of(&s, 0, n) * nsym] = 0.0;
        __syncthreads();
        for (int d = n; d >= 1; d--) {
            for (int t = warp; t <= n - d; t += WARPS)
                xbar_outside(g0, &b, &s, t, t + d, wbuf, lane);
            __syncthreads();
        }
        for (int d = 1; d <= n; d++) /* pruneChart */
            for (int t = warp; t <= n - d; t += WARPS) {
                long long c = (long long)chart_cell(n, t, t + d);
                for (int sy = lane; sy < nsym; sy += 32) {
                    if (d > 1 && !g0->phrasal[sy])
                        continue;
                    double is = b.vi[(s.c0 + c) * nsym + sy], os = b.vo[(s.c0 + c) * nsym + sy];
                    state[c * nsym + sy] =
                        sy == 0 || (is != NONE && os != NONE && is + os - root > b.threshold[0]);
                }
            }
    }
    __syncthreads();
    prune_dev_stats *stats = b.stats + (long long)blockIdx.x * b.nlevel;
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
            for (int sy = 0; sy < nsym; sy++) {
                if (!st[sy])
                    continue;
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
        lview v = {&lv[k], &s, T, b.in, b.out, b.state, cur};
        const prune_dev_level *g = v.g;
        for (long long c = warp; c < ncell; c += WARPS) { /* lay out */
            const unsigned char *st = state + c * nsym;
            for (int sy = 0; sy < nsym; sy++)
                if (st[sy])
                    for (int x = lane; x < g->nsub[sy]; x += 32)
                        b.in[(s.c0 + c) * T + g->off[sy] + x] =
                            b.out[(s.c0 + c) * T + g->off[sy] + x] = NONE;
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
        for (int d = 1; d <= n; d++) {
            for (int t = warp; t <= n - d; t += WARPS) {
                if (d > 1)
                    inside_binary(&v, t, t + d, wacc, lane);
                inside_unary(&v, t, t + d, wacc, lane);
            }
            __syncthreads();
        }
        double lroot = b.in[at(&v, 0, n, 0)];
        if (lroot != NONE) {
            if (threadIdx.x == 0)
                b.out[at(&v, 0, n, 0)] = 0.0;
            __syncthreads();
            for (int d = n; d >= 1; d--) {
                for (int t = warp; t <= n - d; t += WARPS) {
                    outside_unary(&v, t, t + d, wacc, lane);
                    if (d > 1)
                        outside_binary(&v, t, t + d, wacc, wacc + b.maxsub, lane);
                }
                __syncthreads();
            }
            for (int d = 1; d <= n; d++) /* pruneChart */
                for (int t = warp; t <= n - d; t += WARPS) {
                    unsigned char *st = state + chart_cell(n, t, t + d) * nsym;
                    for (int sy = 0; sy < nsym; sy++) {
                        if ((d > 1 && !g->phrasal[sy]) || !st[sy])
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
                                double is = b.in[a + x], os = b.out[a + x];
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
