/* xbar: the level-0 (X-bar) pass of the cascade, one score per (cell, symbol): the jar's
 * initializeChart(noSubstates), doConstrainedViterbiInsideScores and
 * doConstrainedViterbiOutsideScores (level -1 is skipped, so every cell is allowed), and
 * pruneChart at level 0.
 *
 * Binary terms are (rule + left) + right inside, (rule + sibling) + outside outside; unary
 * terms child + rule, outside + rule. The unaries of a cell update it in place in symbol
 * order, parent by parent inside and child by child outside, as the jar's loops do: a later
 * symbol can read an earlier one's improved score (a second unary in one cell).
 *
 * Maxima are exact and the terms are computed as the jar computes them, so the loops may run
 * in any order, and a rule whose best possible term cannot beat the best so far may be
 * skipped (addition is monotonic: (w + a) + b <= (w + max a) + max b). Both passes gather:
 * a cell takes the best term of every rule at every split point, inside from its children,
 * outside (once its parents are done) from its parents and siblings, split points innermost
 * over copies of the scores laid out by start and by end (internal.h: ia, ib, oa, ob), rules
 * by descending score, each first checked against the bound of the row maxima (ma ... mob),
 * and apart by which of their other symbols are POS tags (a tag spans one word, so such a
 * rule has one split point, whose term is cheaper than a bound, or none).
 * The cells of one span length are filled on the plan's team: a cell's rows (ia, ib, oa, ob
 * at its own ends) and row maxima (those of its start and of its end) are its own among
 * them. */
#include <math.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define XBAR_AVX2 1 /* best_term_avx2, chosen at run time (prune_plan.avx2) */
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal.h"

static double *cell_of(double *v, int n, int i, int j, int nsym)
{
    return v + chart_cell(n, i, j) * (size_t)nsym;
}

/* The row of symbol s over the cells starting at i (ia, oa) or ending at i (ib, ob), indexed
 * by the other end: the values a loop over split points reads in sequence. */
static double *row_of(double *v, int n, int nsym, int i, int s)
{
    return v + ((size_t)i * nsym + s) * ((size_t)n + 1);
}

static double max2(double a, double b) { return a > b ? a : b; }

/* max(best, max over k in [lo, hi) of (w + a[k]) + b[k]), several running maxima at a time
 * (SSE2: two lanes each; the same sums, and maxima of the same values). */
static double best_term_sse2(double best, double w, const double *a, const double *b, int lo,
                             int hi)
{
    int k = lo;
#ifdef __SSE2__
    __m128d vw = _mm_set1_pd(w), m0 = _mm_set1_pd(best), m1 = m0, m2 = m0, m3 = m0;
    for (; k + 7 < hi; k += 8) {
        m0 = _mm_max_pd(m0, _mm_add_pd(_mm_add_pd(vw, _mm_loadu_pd(a + k)), _mm_loadu_pd(b + k)));
        m1 = _mm_max_pd(m1, _mm_add_pd(_mm_add_pd(vw, _mm_loadu_pd(a + k + 2)),
                                       _mm_loadu_pd(b + k + 2)));
        m2 = _mm_max_pd(m2, _mm_add_pd(_mm_add_pd(vw, _mm_loadu_pd(a + k + 4)),
                                       _mm_loadu_pd(b + k + 4)));
        m3 = _mm_max_pd(m3, _mm_add_pd(_mm_add_pd(vw, _mm_loadu_pd(a + k + 6)),
                                       _mm_loadu_pd(b + k + 6)));
    }
    for (; k + 1 < hi; k += 2)
        m0 = _mm_max_pd(m0, _mm_add_pd(_mm_add_pd(vw, _mm_loadu_pd(a + k)), _mm_loadu_pd(b + k)));
    m0 = _mm_max_pd(_mm_max_pd(m0, m1), _mm_max_pd(m2, m3));
    double lanes[2];
    _mm_storeu_pd(lanes, m0);
    best = max2(lanes[0], lanes[1]);
#endif
    for (; k < hi; k++)
        best = max2(w + a[k] + b[k], best);
    return best;
}

#ifdef XBAR_AVX2
/* The same with AVX2's four lanes (adds and maxima only: nothing to contract). */
__attribute__((target("avx2"))) static double
best_term_avx2(double best, double w, const double *a, const double *b, int lo, int hi)
{
    int k = lo;
    __m256d vw = _mm256_set1_pd(w), m0 = _mm256_set1_pd(best), m1 = m0;
    for (; k + 7 < hi; k += 8) {
        m0 = _mm256_max_pd(m0, _mm256_add_pd(_mm256_add_pd(vw, _mm256_loadu_pd(a + k)),
                                             _mm256_loadu_pd(b + k)));
        m1 = _mm256_max_pd(m1, _mm256_add_pd(_mm256_add_pd(vw, _mm256_loadu_pd(a + k + 4)),
                                             _mm256_loadu_pd(b + k + 4)));
    }
    if (k + 3 < hi) {
        m0 = _mm256_max_pd(m0, _mm256_add_pd(_mm256_add_pd(vw, _mm256_loadu_pd(a + k)),
                                             _mm256_loadu_pd(b + k)));
        k += 4;
    }
    m0 = _mm256_max_pd(m0, m1);
    __m128d h = _mm_max_pd(_mm256_castpd256_pd128(m0), _mm256_extractf128_pd(m0, 1));
    if (k + 1 < hi) {
        h = _mm_max_pd(h, _mm_add_pd(_mm_add_pd(_mm256_castpd256_pd128(vw), _mm_loadu_pd(a + k)),
                                     _mm_loadu_pd(b + k)));
        k += 2;
    }
    double lanes[2];
    _mm_storeu_pd(lanes, h);
    best = max2(lanes[0], lanes[1]);
    if (k < hi)
        best = max2(w + a[k] + b[k], best);
    return best;
}
#endif

/* best_term_sse2, or with AVX2 where the CPU has it. */
static double best_term(const prune_plan *p, double best, double w, const double *a,
                        const double *b, int lo, int hi)
{
#ifdef XBAR_AVX2
    if (p->avx2)
        return best_term_avx2(best, w, a, b, lo, hi);
#else
    (void)p;
#endif
    return best_term_sse2(best, w, a, b, lo, hi);
}

/* A finished cell's scores into the row copies and their running maxima. */
static void store_cell(double *by_start, double *by_end, double *max_start, double *max_end,
                       const double *cell, int n, int nsym, int i, int j)
{
    for (int s = 0; s < nsym; s++) {
        row_of(by_start, n, nsym, i, s)[j] = cell[s];
        row_of(by_end, n, nsym, j, s)[i] = cell[s];
        max_start[(size_t)i * nsym + s] = max2(max_start[(size_t)i * nsym + s], cell[s]);
        max_end[(size_t)j * nsym + s] = max2(max_end[(size_t)j * nsym + s], cell[s]);
    }
}

static void xbar_inside_cell(prune_plan *p, const grammar *g, int n, int i, int j)
{
    int nsym = g->nsym;
    double *cell = cell_of(p->vi, n, i, j, nsym);
    /* the split points done: ma over (i, i+1 .. j-1), mb over (i+1 .. j-1, j) */
    const double *ma = p->ma + (size_t)i * nsym, *mb = p->mb + (size_t)j * nsym;
    for (int y_p = 0; j - i > 1 && y_p < p->nphrasal; y_p++) {
        int P = p->phrasal[y_p];
        double best = cell[P];
        const int *f = p->bin_first + (size_t)P * 4; /* by class (internal.h) */
        const double *ia = row_of(p->ia, n, nsym, i, 0), *ib = row_of(p->ib, n, nsym, j, 0);
        size_t N = (size_t)n + 1; /* row_of(.., s) = row_of(.., 0) + s * N */
        /* a POS tag spans one word: the one split point it leaves (over two words, every
         * class has one: i + 1; over more, two tags have none) */
        int k1 = i + 1, k2 = j - 1;
        for (int b = f[j - i == 2 ? 0 : 1]; b < f[2]; b++) { /* the left child a tag: i + 1 */
            const prune_rule1 *r = &p->bin[b];
            best = max2(r->score + ia[r->left * N + k1] + ib[r->right * N + k1], best);
        }
        for (int b = f[2]; b < f[3]; b++) { /* the right child a tag: j - 1 */
            const prune_rule1 *r = &p->bin[b];
            best = max2(r->score + ia[r->left * N + k2] + ib[r->right * N + k2], best);
        }
        for (int b = f[3]; b < f[4]; b++) { /* two phrases: i + 1 .. j - 1 */
            const prune_rule1 *r = &p->bin[b];
            const double *a = ia + r->left * N, *bb = ib + r->right * N;
            if (k1 == k2) /* one split point: the term itself is cheaper than a bound */
                best = max2(r->score + a[k1] + bb[k1], best);
            else if (r->score + ma[r->left] + mb[r->right] > best)
                best = best_term(p, best, r->score, a, bb, k1, j);
        }
        if (best > cell[P])
            cell[P] = best;
    }
    for (int y_p = 0; y_p < p->nphrasal; y_p++) { /* in place, in symbol order */
        int P = p->phrasal[y_p];
        double best = cell[P];
        for (int u = p->un_pfirst[P]; u < p->un_pfirst[P + 1]; u++) {
            /* a child without a score gives -inf: no change (the jar skips it) */
            double tot = cell[p->un_p[u].left] + p->un_p[u].score;
            best = tot >= best ? tot : best;
        }
        if (best > cell[P])
            cell[P] = best;
    }
    store_cell(p->ia, p->ib, p->ma, p->mb, cell, n, nsym, i, j);
}

/* Outside of (i, j): binary terms from every parent (all done), then its unaries in place. A
 * binary term needs the cell's own inside score (the jar skips children without one). */
static void xbar_outside_cell(prune_plan *p, const grammar *g, int n, int i, int j)
{
    int nsym = g->nsym;
    const double *in = cell_of(p->vi, n, i, j, nsym);
    double *cell = cell_of(p->vo, n, i, j, nsym);
    /* ma, mb: inside rows of all cells; moa over parents (i, j+1 .. n), mob over (0 .. i-1, j) */
    const double *ma = p->ma + (size_t)j * nsym, *mb = p->mb + (size_t)i * nsym;
    const double *moa = p->moa + (size_t)i * nsym, *mob = p->mob + (size_t)j * nsym;
    for (int X = 0; X < nsym; X++) {
        if (in[X] == -INFINITY)
            continue;
        double best = cell[X];
        size_t N = (size_t)n + 1; /* row_of(.., s) = row_of(.., 0) + s * N */
        /* as a left child: P over (i, e) -> X over (i, j), R over (j, e), e = j + 1 .. n (a
         * POS sibling spans one word: j + 1 alone) */
        const int *f = p->bin_lfirst + (size_t)X * 2; /* a tag sibling, then a phrase */
        const double *ia = row_of(p->ia, n, nsym, j, 0), *oa = row_of(p->oa, n, nsym, i, 0);
        for (int b = f[0]; j < n && b < f[j + 1 == n ? 2 : 1]; b++) {
            const prune_rule1 *r = &p->bin_l[b];
            best = max2(r->score + ia[r->right * N + j + 1] + oa[r->parent * N + j + 1], best);
        }
        for (int b = f[1]; j + 1 < n && b < f[2]; b++) {
            const prune_rule1 *r = &p->bin_l[b];
            if (r->score + ma[r->right] + moa[r->parent] > best)
                best = best_term(p, best, r->score, ia + r->right * N, oa + r->parent * N,
                                 j + 1, n + 1);
        }
        /* as a right child: P over (h, j) -> L over (h, i), X over (i, j), h = 0 .. i - 1 (a
         * POS sibling: i - 1 alone) */
        f = p->bin_rfirst + (size_t)X * 2;
        const double *ib = row_of(p->ib, n, nsym, i, 0), *ob = row_of(p->ob, n, nsym, j, 0);
        for (int b = f[0]; i > 0 && b < f[i == 1 ? 2 : 1]; b++) {
            const prune_rule1 *r = &p->bin_r[b];
            best = max2(r->score + ib[r->left * N + i - 1] + ob[r->parent * N + i - 1], best);
        }
        for (int b = f[1]; i > 1 && b < f[2]; b++) {
            const prune_rule1 *r = &p->bin_r[b];
            if (r->score + mb[r->left] + mob[r->parent] > best)
                best = best_term(p, best, r->score, ib + r->left * N, ob + r->parent * N, 0, i);
        }
        cell[X] = best;
    }
    for (int C = 0; C < nsym; C++) { /* in place, in symbol order */
        if (in[C] == -INFINITY)
            continue;
        double best = cell[C];
        for (int u = p->un_cfirst[C]; u < p->un_cfirst[C + 1]; u++) {
            /* a parent without a score gives -inf: no change (the jar skips it) */
            double tot = cell[p->un_c[u].parent] + p->un_c[u].score;
            best = tot > best ? tot : best;
        }
        if (best > cell[C])
            cell[C] = best;
    }
    store_cell(p->oa, p->ob, p->moa, p->mob, cell, n, nsym, i, j);
}

/* The cells of one span length, for the team: a cell reads the rows and row maxima of
 * shorter spans (inside) or longer ones (outside) and its own, and writes only its own. */
typedef struct span_job {
    prune_plan *p;
    const grammar *g;
    int n, d;
} span_job;

static void inside_cell(void *arg, long i, int member)
{
    const span_job *job = arg;
    (void)member;
    xbar_inside_cell(job->p, job->g, job->n, (int)i, (int)i + job->d);
}

static void outside_cell(void *arg, long i, int member)
{
    const span_job *job = arg;
    (void)member;
    xbar_outside_cell(job->p, job->g, job->n, (int)i, (int)i + job->d);
}

/* Word i's lexical scores into its tags over (i, i + 1). */
static void put_word(void *arg, int i, const double *lex)
{
    const span_job *job = arg;
    const grammar *g = job->g;
    double *cell = cell_of(job->p->vi, job->n, i, i + 1, g->nsym);
    for (int t = 0; t < g->nsym; t++)
        if (!g->phrasal[t])
            cell[t] = lex[g->sub_offset[t]];
}

static void fill(double *v, size_t n)
{
    for (size_t x = 0; x < n; x++)
        v[x] = -INFINITY;
}

cky_status prune_xbar_passes(prune_plan *p, char *const *words, int n, int *parsed)
{
    const grammar *g = p->cascade->level[0];
    size_t m = chart_ncells(n) * (size_t)g->nsym, row = ((size_t)n + 1) * g->nsym;
    fill(p->vi, m); /* (ia ... ob are read only where a finished cell has been stored) */
    fill(p->vo, m);
    fill(p->ma, row);
    fill(p->mb, row);
    fill(p->moa, row);
    fill(p->mob, row);
    span_job job = {p, g, n, 1};
    cky_status st = prune_score_words(p, g, words, n, NULL, put_word, &job);
    if (st)
        return st;
    for (job.d = 1; job.d <= n; job.d++)
        team_for(p->team, n - job.d + 1, inside_cell, &job);
    *parsed = cell_of(p->vi, n, 0, n, g->nsym)[0] != -INFINITY;
    if (!*parsed)
        return CKY_OK;
    cell_of(p->vo, n, 0, n, g->nsym)[0] = 0.0;
    for (job.d = n; job.d >= 1; job.d--)
        team_for(p->team, n - job.d + 1, outside_cell, &job);
    return CKY_OK;
}

void prune_xbar_prune(prune_plan *p, int n, double threshold)
{
    const grammar *g = p->cascade->level[0];
    double root = cell_of(p->vi, n, 0, n, g->nsym)[0];
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            size_t at = chart_cell(n, i, i + d) * (size_t)g->nsym;
            for (int s = 0; s < g->nsym; s++) {
                if (d > 1 && !g->phrasal[s])
                    continue;
                if (s == 0) {
                    p->state[at] = 1;
                    continue;
                }
                double is = p->vi[at + s], os = p->vo[at + s];
                p->state[at + s] =
                    is != -INFINITY && os != -INFINITY && is + os - root > threshold;
            }
        }
}
