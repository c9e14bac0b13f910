/* maxc_rules: the max-c scores and the max-rule tree of the cpu and gpu engines, in one
 * header for host and device code (C and CUDA C++), so that both do the same double
 * operations in the same order and give the same bits.
 *
 * The input is a batch of sum-product charts (semiring/sum_rules.h: float layers, one
 * power-of-two exponent per cell and layer): the post-unary inside layer (post, epost), the
 * pre-unary outside layer (opre, eopre: what a cell's binary rules send on, as the jar's
 * oScore after its outside pass) and the pre-unary inside layer (pre, epre: the lexical
 * layer in the one-word cells).
 * Sentence s owns the cells c0 .. c0 + n(n+1)/2 - 1 (chart/cell.h order).
 *
 * The jar's doConstrainedMaxCScores, in the log domain with the charts' exponents: the
 * posterior of an anchored rule is S x 2^E / x0, where S is the double sum of the float
 * products of the rule's entries (outside(parent) x w x inside(children)), E the sum of the
 * exponents of the cells read less the root's, x0 the root's ROOT value; its log is
 * (maxc_log(S) + E ln 2) - maxc_log(x0). Each sum is taken in a fixed order of explicit
 * fma (below), the same on the GPU and on the cpu engine. Then, as the jar, span by span:
 *   - lexical: score(tag over word i) = log posterior of the tag's lexical items;
 *   - binary, parent P over (i, j): each candidate (rule, split) scores its children's
 *     scores plus its log posterior; the best candidate (below) is P's score before the
 *     cell's unaries;
 *   - unary: one layer per cell over the closed sum unaries, from the scores before it.
 * No fused multiply-add is left to the compiler: every product that is added is an explicit
 * fma (correctly rounded on host and device), and maxc_log is plain IEEE arithmetic.
 *
 * The tree: maxc_extract walks the max-c arrays of one sentence without recursion (an
 * explicit stack) and writes its nodes in prefix order as codes (maxc_node_*); the host
 * turns them into a tree (maxc_tree_build in decoders/maxrule/maxc.h). */
#ifndef CKY_DECODERS_MAXC_RULES_H
#define CKY_DECODERS_MAXC_RULES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../chart/cell.h"

#define MAXC_LANES 32
#define MAXC_NEG_INF (-__builtin_huge_val())

/* One binary rule P -> L R of the grammar (grammar.binary order): nrow rows (l, r) at
 * row_l/row_r[row0 ..] (substates of L and R). The weights of a row (global number x) are
 * sparse: the parent substates p with a nonzero weight at nz_p[row_nz[x] .. row_nz[x + 1]),
 * in increasing order, and their weights (the linear probabilities rounded to float) at
 * nz_w[the same]. Most (parent substate, row) pairs have no rule (15 in 16 for
 * eng-sm6-shape), so the sparse table is smaller and faster, and the same bits: a zero
 * weight's term adds +0 to a sum of nonnegative terms. */
typedef struct maxc_binary {
    int parent, left, right, nrow, row0;
} maxc_binary;

/* One closed sum unary P -> C (grammar_sum_closure order, by parent): nsub[C] rows of
 * nsub[P] weights at w[w0 ..]. */
typedef struct maxc_unary {
    int parent, child, w0;
} maxc_unary;

/* The grammar's tables, every pointer in one memory space (host or device). */
typedef struct maxc_tables {
    int nsym, nbin, nun, nrow;           /* symbols, binary rules, closed unaries, rows */
    int most_rows, most_rules;           /* the most rows of a binary rule, the most binary
                                            rules of a symbol */
    const int *sub_offset, *nsub;        /* [nsym] */
    const unsigned char *phrasal;        /* [nsym] */
    const int *bin_first;                /* [nsym + 1]: the binary rules of parent P */
    const maxc_binary *bin;
    const int *row_l, *row_r, *row_rule; /* [nrow]: a row's substates of L and R; its rule */
    const int *row_nz;                   /* [nrow + 1] */
    const unsigned short *nz_p;          /* [row_nz[nrow]] */
    const float *nz_w;                   /* [row_nz[nrow]] */
    const int *un_first;                 /* [nsym + 1]: the closed unaries of parent P */
    const maxc_unary *un;
    const float *uw;
    const int *path;                     /* [nsym * nsym]: closedSumPaths, or 0 */
    const int *by_rows;                  /* [nsym]: the symbols, most binary rule rows first
                                            (the device's work order) */
} maxc_tables;

/* The charts of a batch and the max-c arrays ([cells][nsym]), in one memory space. */
typedef struct maxc_layers {
    int nsub;                            /* floats per cell layer */
    const float *post, *opre, *pre;
    const int *epost, *eopre, *epre;
    double *bscore, *score;              /* before the cell's unaries; final */
    int *split, *left, *right, *child;   /* the best binary candidate; the best unary child
                                            (-1: none) */
} maxc_layers;

/* ---- arithmetic ---- */

/* log(x) for a double x > 0 (-inf for x <= 0) in plain IEEE operations and explicit fma:
 * the same bits on host and device (within a few ulps of the true log). */
static inline CHART_HD double maxc_log(double x)
{
    if (!(x > 0))
        return MAXC_NEG_INF;
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 52) & 0x7ff);
    if (e == 0) { /* subnormal: bring it into the normal range */
        double y = x * 18014398509481984.0; /* 2^54 */
        memcpy(&b, &y, sizeof b);
        e = (int)((b >> 52) & 0x7ff) - 54;
    }
    e -= 1023;
    b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
    double m;
    memcpy(&m, &b, sizeof m);
    if (m > 1.4142135623730951) {
        m = m * 0.5;
        e++;
    }
    double f = (m - 1.0) / (m + 1.0), s = f * f; /* log m = 2 atanh f, |f| < 0.172 */
    double p = 1.0 / 29;
    for (int k = 27; k >= 1; k -= 2)
        p = fma(p, s, 1.0 / k);
    return fma((double)e, 0.69314718055994530942, (2.0 * f) * p);
}

/* The log posterior of a sum S > 0 at exponent E (see above). */
static inline CHART_HD double maxc_logpost(double sum, int e, double logx0)
{
    return fma((double)e, 0.69314718055994530942, maxc_log(sum)) - logx0;
}

/* Sums split over MAXC_LANES lanes (the binary rules' and the closed unaries', below) add
 * the lanes' parts in a fixed butterfly: after the step of distance d (16, 8, 4, 2, 1),
 * lane l holds v[l] + v[l ^ d]. On the device every lane of a warp calls such a sum and
 * gets the result (the shuffles); on the host the lanes run in turn. */
#ifdef __CUDA_ARCH__
static __device__ __forceinline__ double maxc_lanes_add(double v)
{
    for (int d = MAXC_LANES / 2; d >= 1; d /= 2)
        v = v + __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}
#define MAXC_LANE ((int)(threadIdx.x % MAXC_LANES))
#else
static inline double maxc_lanes_add(double *v)
{
    for (int d = MAXC_LANES / 2; d >= 1; d /= 2) {
        double w[MAXC_LANES];
        for (int l = 0; l < MAXC_LANES; l++)
            w[l] = v[l] + v[l ^ d];
        memcpy(v, w, sizeof w);
    }
    return v[0];
}
#endif

/* A binary rule's sum S is taken in two steps: for each row (l, r), V = the sum over the
 * parent's substates p of w(p, l, r) x outside(p), in order, each term one fma (the zero
 * weights' terms left out) (V depends
 * on the parent cell only, not on the split); then S, split over MAXC_LANES lanes: lane l
 * takes rows l, l + MAXC_LANES, ... in order, each term one fma of V and inside(l) x
 * inside(r) (rows with a zero child skipped: their terms are 0), and the lanes' sums are
 * added in the butterfly. */

/* V of row r of binary rule b (the parent's outside values po). */
static inline CHART_HD double maxc_row_weight(const maxc_tables *t, int b, int r,
                                              const float *po)
{
    int x = t->bin[b].row0 + r;
    double v = 0;
    for (int e = t->row_nz[x]; e < t->row_nz[x + 1]; e++)
        v = fma((double)t->nz_w[e], (double)po[t->nz_p[e]], v);
    return v;
}

/* Lane l's part of S of binary rule b: its rows' V at v[0 .. nrow) (NULL: computed here
 * from po), the children lin and rin. */
static inline CHART_HD double maxc_binary_lane(const maxc_tables *t, int b, const double *v,
                                               const float *po, const float *lin,
                                               const float *rin, int lane)
{
    const maxc_binary *r = &t->bin[b];
    const int *rl = t->row_l + r->row0, *rr = t->row_r + r->row0;
    double acc = 0;
    for (int row = lane; row < r->nrow; row += MAXC_LANES) {
        float l = lin[rl[row]], x = rin[rr[row]];
        if (v) { /* V loaded beside the children, the zero terms left out by a select */
            double term = fma(v[row], (double)l * (double)x, acc);
            acc = l != 0 && x != 0 ? term : acc;
        } else if (l != 0 && x != 0) {
            acc = fma(maxc_row_weight(t, b, row, po), (double)l * (double)x, acc);
        }
    }
    return acc;
}

/* S of binary rule b (as maxc_binary_lane; on the device every lane of the warp calls
 * it and gets S). */
static inline CHART_HD double maxc_binary_rows(const maxc_tables *t, int b, const double *v,
                                               const float *po, const float *lin,
                                               const float *rin)
{
#ifdef __CUDA_ARCH__
    return maxc_lanes_add(maxc_binary_lane(t, b, v, po, lin, rin, MAXC_LANE));
#else
    double part[MAXC_LANES];
    for (int l = 0; l < MAXC_LANES; l++)
        part[l] = maxc_binary_lane(t, b, v, po, lin, rin, l);
    return maxc_lanes_add(part);
#endif
}

/* The closed unaries' sums S are split over MAXC_LANES lanes: their entries (child
 * substate c, parent substate p), row-major, dealt to the lanes in turn (lane l takes
 * entries l, l + MAXC_LANES, ...), each term one fma: acc = fma(w x outside(p),
 * inside(c), acc), both factors exact in double; the lanes' sums then added in a fixed
 * butterfly. */

/* Lane l's part of closed unary u's sum (rows: the nc child substates; np parents). */
static inline CHART_HD double maxc_unary_lane(const maxc_tables *t, int u, int np, int nc,
                                              const float *po, const float *cin, int lane)
{
    const float *w = t->uw + t->un[u].w0;
    int total = nc * np, q = MAXC_LANES / np, m = MAXC_LANES % np;
    int c = lane / np, p = lane % np;
    double acc = 0;
    for (int e = lane; e < total; e += MAXC_LANES) {
        acc = fma((double)w[e] * (double)po[p], (double)cin[c], acc);
        c += q;
        p += m;
        if (p >= np) {
            p -= np;
            c++;
        }
    }
    return acc;
}

/* The sum S of closed unary u: parent values po (np), child values cin (nc). */
static inline CHART_HD double maxc_unary_sum(const maxc_tables *t, int u, int np, int nc,
                                             const float *po, const float *cin)
{
#ifdef __CUDA_ARCH__
    return maxc_lanes_add(maxc_unary_lane(t, u, np, nc, po, cin, MAXC_LANE));
#else
    double v[MAXC_LANES];
    for (int l = 0; l < MAXC_LANES; l++)
        v[l] = maxc_unary_lane(t, u, np, nc, po, cin, l);
    return maxc_lanes_add(v);
#endif
}

/* ---- the max-c candidates of one cell (sentence at c0, n words; cell (i, j)) ----
 *
 * The best candidate of P over (i, j) is the one with the largest score, the first in the
 * jar's order (binary: rule, then split; unary: rule) among equals: order-independent, so
 * the device takes it with a parallel reduction.
 *
 * Most binary candidates cannot be the best, and their sums are skipped. The jar skips a
 * candidate whose children's scores alone cannot beat the best so far (exact when every log
 * posterior is <= 0). The engines skip one whose children's scores plus P's upper bound
 * (maxc_upper: no binary candidate of P over (i, j) has a larger log posterior) cannot come
 * within MAXC_SLACK of the best candidate so far (on the device, the candidate whose
 * children score the most is taken first; maxc_kernels.cu). A skipped candidate is
 * therefore below the best, as long as float rounding moves no log posterior by MAXC_SLACK
 * (it moves them by about 1e-6), and both engines take the same candidate whichever they
 * skip. A closed unary is skipped, as the jar does, when its child's score
 * cannot come within MAXC_SLACK of the parent's score before the unaries (the device) or of
 * the best so far, that score included (the cpu engine); a unary is taken only when it
 * beats it. */

#define MAXC_SLACK 0.01

/* log x0 of a sentence (MAXC_NEG_INF: no parse, and then every max-c score is -inf) and
 * the root's exponent. */
static inline CHART_HD double maxc_root(const maxc_tables *t, const maxc_layers *y, long c0,
                                        int n, int *e0)
{
    long root = c0 + (long)chart_cell(n, 0, n);
    *e0 = y->epost[root];
    return maxc_log((double)y->post[(size_t)root * y->nsub + t->sub_offset[0]]);
}

/* The children's max-c scores that cell (i, j) reads, copied into kids[0 ..
 * maxc_kids_size(j - i)) (score(i, k)[L] at kids[(k - i - 1) nsym + L], then score(k, j)[R]
 * at kids[(j - i - 1 + k - i - 1) nsym + R]): by thread tid of nt. */
static inline CHART_HD long maxc_kids_size(const maxc_tables *t, int span)
{
    return 2L * (span - 1) * t->nsym;
}

static inline CHART_HD void maxc_stage(const maxc_tables *t, const maxc_layers *y, long c0,
                                       int n, int i, int j, double *kids, int tid, int nt)
{
    long half = (long)(j - i - 1) * t->nsym;
    for (long x = tid; x < 2 * half; x += nt) {
        int right = x >= half;
        long z = right ? x - half : x;
        int k = i + 1 + (int)(z / t->nsym), sym = (int)(z % t->nsym);
        long cell = c0 + (long)(right ? chart_cell(n, k, j) : chart_cell(n, i, k));
        kids[x] = y->score[(size_t)cell * t->nsym + sym];
    }
}

/* The splits kmin .. kmax at which binary rule b has terms over (i, j): a POS tag child
 * spans one word (none when kmin > kmax). */
static inline CHART_HD void maxc_splits(const maxc_tables *t, int b, int i, int j, int *kmin,
                                        int *kmax)
{
    const maxc_binary *r = &t->bin[b];
    *kmin = i + 1;
    *kmax = j - 1;
    if (!t->phrasal[r->left] && *kmax > i + 1)
        *kmax = i + 1;
    if (!t->phrasal[r->right] && *kmin < j - 1)
        *kmin = j - 1;
}

/* 1 if binary rule b has terms at split k of (i, j) (its parent is phrasal). */
static inline CHART_HD int maxc_binary_at(const maxc_tables *t, int b, int i, int k, int j)
{
    int kmin, kmax;
    maxc_splits(t, b, i, j, &kmin, &kmax);
    return t->phrasal[t->bin[b].parent] && k >= kmin && k <= kmax;
}

/* The sum S of binary rule b at split k of (i, j) (the rule has terms there). */
static inline CHART_HD double maxc_binary_item(const maxc_tables *t, const maxc_layers *y,
                                               long c0, int n, int i, int k, int j, int b)
{
    const maxc_binary *r = &t->bin[b];
    size_t cell = (size_t)c0 + chart_cell(n, i, j), cl = (size_t)c0 + chart_cell(n, i, k),
           cr = (size_t)c0 + chart_cell(n, k, j);
    return maxc_binary_rows(t, b, NULL, y->opre + cell * y->nsub + t->sub_offset[r->parent],
                            y->post + cl * y->nsub + t->sub_offset[r->left],
                            y->post + cr * y->nsub + t->sub_offset[r->right]);
}

/* The sum S of closed unary u over cell (i, j). */
static inline CHART_HD double maxc_unary_item(const maxc_tables *t, const maxc_layers *y,
                                              long c0, int n, int i, int j, int u)
{
    size_t cell = (size_t)c0 + chart_cell(n, i, j);
    int P = t->un[u].parent, C = t->un[u].child;
    return maxc_unary_sum(t, u, t->nsub[P], t->nsub[C],
                          y->opre + cell * y->nsub + t->sub_offset[P],
                          y->post + cell * y->nsub + t->sub_offset[C]);
}

/* The score of a candidate: its children's scores `kids` (their sum for a binary rule) plus
 * its log posterior (sum S, exponent e); MAXC_NEG_INF when it has none. */
static inline CHART_HD double maxc_candidate(double kids, double s, int e, double logx0)
{
    if (kids == MAXC_NEG_INF || !(s > 0))
        return MAXC_NEG_INF;
    return kids + maxc_logpost(s, e, logx0);
}

/* The upper bound of P's binary candidates over (i, j): their posteriors add up to P's
 * pre-unary inside score times its outside, so no log posterior exceeds the log of that
 * (at most 0). The float inside layer can have lost to underflow (values below the normal
 * range flushed to 0) up to 2^-126 per term at its exponent (sum_rules.h), less than
 * MAXC_LOST = 2^-100 for 2^26 terms: each inside value counts as that much larger. 0 (no
 * bound) for a cell without binary terms. */
#define MAXC_LOST 0x1p-100

static inline CHART_HD double maxc_upper(const maxc_tables *t, const maxc_layers *y, long c0,
                                         int n, int i, int j, int P, int e0, double logx0)
{
    size_t cell = (size_t)c0 + chart_cell(n, i, j);
    if (y->epre[cell] <= CHART_EXP_NONE || y->eopre[cell] <= CHART_EXP_NONE)
        return 0;
    const float *po = y->opre + cell * y->nsub + t->sub_offset[P];
    const float *in = y->pre + cell * y->nsub + t->sub_offset[P];
    double s = 0;
    for (int x = 0; x < t->nsub[P]; x++)
        s = fma((double)po[x], (double)in[x] + MAXC_LOST, s);
    double u = maxc_candidate(0, s, y->eopre[cell] + y->epre[cell] - e0, logx0);
    return u == MAXC_NEG_INF || u > 0 ? 0 : u;
}

/* 1 if a binary candidate whose children score ks (MAXC_NEG_INF: it has none) may come
 * within MAXC_SLACK of `best`, its parent's bound being `upper`. */
static inline CHART_HD int maxc_may_beat(double ks, double upper, double best)
{
    return ks != MAXC_NEG_INF && ks + upper + MAXC_SLACK >= best;
}

/* The exponent of binary candidate (b, k) over (i, j): outside(parent) + both children's. */
static inline CHART_HD int maxc_binary_exp(const maxc_layers *y, long c0, int n, int i, int k,
                                           int j, int e0)
{
    return y->eopre[c0 + (long)chart_cell(n, i, j)] + y->epost[c0 + (long)chart_cell(n, i, k)] +
           y->epost[c0 + (long)chart_cell(n, k, j)] - e0;
}

/* Two children's scores together (MAXC_NEG_INF when either is). */
static inline CHART_HD double maxc_pair(double ls, double rs)
{
    return ls == MAXC_NEG_INF || rs == MAXC_NEG_INF ? MAXC_NEG_INF : ls + rs;
}

/* The children's scores of binary candidate (b, k) over (i, j) from the cell's kids. */
static inline CHART_HD double maxc_binary_kids(const maxc_tables *t, const double *kids, int b,
                                               int i, int k, int j)
{
    return maxc_pair(kids[(long)(k - i - 1) * t->nsym + t->bin[b].left],
                     kids[(long)(j - i - 1 + k - i - 1) * t->nsym + t->bin[b].right]);
}

/* The same, read from the score arrays (the same value: the device's two kernels must agree
 * on which candidates they skip). */
static inline CHART_HD double maxc_binary_scores(const maxc_tables *t, const maxc_layers *y,
                                                 long c0, int n, int i, int k, int j, int b)
{
    return maxc_pair(
        y->score[(size_t)(c0 + (long)chart_cell(n, i, k)) * t->nsym + t->bin[b].left],
        y->score[(size_t)(c0 + (long)chart_cell(n, k, j)) * t->nsym + t->bin[b].right]);
}

/* The lexical score of POS tag P over word i (cell (i, i + 1)). */
static inline CHART_HD double maxc_lexical(const maxc_tables *t, const maxc_layers *y, long c0,
                                           int n, int i, int P, int e0, double logx0)
{
    size_t cell = (size_t)c0 + chart_cell(n, i, i + 1);
    const float *po = y->opre + cell * y->nsub + t->sub_offset[P];
    const float *lex = y->pre + cell * y->nsub + t->sub_offset[P];
    double s = 0;
    for (int x = 0; x < t->nsub[P]; x++)
        s = fma((double)po[x], (double)lex[x], s);
    return maxc_candidate(0, s, y->eopre[cell] + y->epre[cell] - e0, logx0);
}

/* 1 if P may stand over a span of `span` words: every symbol over one word, the phrasal
 * ones over more. */
static inline CHART_HD int maxc_allowed(const maxc_tables *t, int span, int P)
{
    return span == 1 || t->phrasal[P];
}

/* ---- the tree ---- */

/* Node codes, in prefix order: a symbol with one or two children, or word i (a leaf). */
static inline CHART_HD int maxc_node_symbol(int sym, int arity) { return sym * 4 + arity; }
static inline CHART_HD int maxc_node_word(int i) { return -(i + 1); }

/* The most codes of a sentence of n words (a span: its symbol, a restored intermediate, the
 * unary's child; a word: also its tag and the leaf). */
static inline CHART_HD long maxc_nodes_max(int n) { return 8L * n + 8; }

enum {
    MAXC_TREE = 0,    /* nodes written */
    MAXC_NO_TREE = 1, /* ROOT has no max-c score or no unary child (the jar's (())) */
    MAXC_BROKEN = 2   /* a node without a derivation (cannot happen for a real chart) */
};

/* Walk the max-c arrays of a sentence from ROOT over (0, n), as the jar's
 * extractBestMaxRuleParse1/2, into nodes[0 .. *count) (maxc_nodes_max(n) room); stack:
 * room for 3 (n + 1) ints. Returns MAXC_TREE, MAXC_NO_TREE or MAXC_BROKEN. */
static inline CHART_HD int maxc_extract(const maxc_tables *t, const maxc_layers *y, long c0,
                                        int n, int *nodes, int *count, int *stack)
{
    size_t top = (size_t)(c0 + (long)chart_cell(n, 0, n)) * t->nsym;
    *count = 0;
    if (y->score[top] == MAXC_NEG_INF || y->child[top] < 0)
        return MAXC_NO_TREE;
    int depth = 1, m = 0; /* frames (i, j, symbol) still to walk */
    stack[0] = 0, stack[1] = n, stack[2] = 0;
    while (depth > 0) {
        depth--;
        int i = stack[3 * depth], j = stack[3 * depth + 1], sym = stack[3 * depth + 2];
        size_t at = (size_t)(c0 + (long)chart_cell(n, i, j)) * t->nsym;
        int c = y->child[at + sym]; /* extractBestMaxRuleParse1: over its best unary */
        if (c >= 0) {
            nodes[m++] = maxc_node_symbol(sym, 1);
            int mid = t->path[(size_t)sym * t->nsym + c];
            if (mid > 0)
                nodes[m++] = maxc_node_symbol(mid, 1);
            sym = c;
        }
        /* extractBestMaxRuleParse2 */
        if (j - i == 1) {
            if (t->phrasal[sym]) {
                int tag = y->child[at + sym];
                if (tag < 0)
                    return MAXC_BROKEN;
                nodes[m++] = maxc_node_symbol(sym, 1);
                sym = tag;
            }
            nodes[m++] = maxc_node_symbol(sym, 1);
            nodes[m++] = maxc_node_word(i);
            continue;
        }
        int k = y->split[at + sym];
        if (k < 0)
            return MAXC_BROKEN;
        nodes[m++] = maxc_node_symbol(sym, 2);
        stack[3 * depth] = k, stack[3 * depth + 1] = j, stack[3 * depth + 2] = y->right[at + sym];
        depth++;
        stack[3 * depth] = i, stack[3 * depth + 1] = k, stack[3 * depth + 2] = y->left[at + sym];
        depth++;
    }
    *count = m;
    return MAXC_TREE;
}

#endif
