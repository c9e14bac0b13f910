/* levels: the passes of cascade levels >= 1, one score per (cell, substate), over the items
 * the previous levels allowed (p->state, p->sub): the jar's initializeChart,
 * doConstrainedInsideScores and doConstrainedOutsideScores with viterbi = true and
 * logScores = true, and pruneChart at levels >= 1.
 *
 * As the jar restricts them: a binary or unary term needs its parent symbol and substate
 * allowed and its child symbols allowed (a child substate the mask drops has no score, so
 * it adds nothing); an outside unary term needs the child substate allowed. Binary terms are
 * (rule + left) + right inside and (rule + sibling) + outside outside; unary terms
 * child + rule and outside + rule, all from the values the cell had before its unaries.
 * Maxima are exact, so the loops run in whatever order is quickest: a parent's rules by left
 * child, the split points where both children are allowed from bit sets, only the substates
 * that can give a term; and inside, a split point whose best possible term cannot beat the
 * best so far is skipped (addition is monotonic: (w + ls) + rs <= (max w + max ls) + max rs,
 * with the rule's largest scores and the children's largest inside scores, p->imax).
 *
 * The cells of one span length are filled on the plan's team: inside, each reads only
 * shorter spans' cells and writes only its own; outside, where a parent pushes its binary
 * terms into its children, the parents of one span length push into their left children,
 * then into their right ones (outside_binary).
 *
 * Scores are kept for the allowed symbols only, packed (p->pos: where the block of a symbol
 * over a cell is; p->syms: which symbols a cell has), the jar's null arrays for the others:
 * a few percent of the chart, which stays in the caches. */
#include <math.h>
#include <string.h>

#include "internal.h"

typedef struct level_view {
    const grammar *g;
    int n;
    size_t tot; /* the level's global substates */
} level_view;

static const unsigned char *state_at(const prune_plan *p, const level_view *v, int i, int j)
{
    return p->state + chart_cell(v->n, i, j) * (size_t)v->g->nsym;
}

static const unsigned char *sub_at(const prune_plan *p, const level_view *v, int i, int j)
{
    return p->sub + chart_cell(v->n, i, j) * v->tot;
}

/* Where the blocks of the symbols over cell (i, j) are in p->in and p->out (-1: not
 * allowed). */
static const int *pos_at(const prune_plan *p, const level_view *v, int i, int j)
{
    return p->pos + chart_cell(v->n, i, j) * (size_t)v->g->nsym;
}

/* The allowed symbols over cell (i, j), ascending: their number in *ns. */
static const int *syms_at(const prune_plan *p, const level_view *v, int i, int j, int *ns)
{
    size_t c = chart_cell(v->n, i, j);
    *ns = p->nsyms[c];
    return p->syms + c * (size_t)v->g->nsym;
}

/* p->pos, p->syms and p->nsyms for the allowed symbols, every score -inf, and the bit sets
 * p->lbits, p->rbits. */
static cky_status lay_out(prune_plan *p, const level_view *v)
{
    const grammar *g = v->g;
    int n = v->n, nsym = g->nsym, W = p->nword;
    size_t bits = ((size_t)n + 1) * nsym * (size_t)W, at = 0, need = 0;
    for (size_t c = 0; c < chart_ncells(n); c++)
        for (int s = 0; s < nsym; s++)
            need += p->state[c * nsym + s] ? (size_t)g->nsub[s] : 0;
    cky_status st = prune_reserve_packed(p, need);
    if (st)
        return st;
    memset(p->lbits, 0, bits * sizeof *p->lbits);
    memset(p->rbits, 0, bits * sizeof *p->rbits);
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            int e = i + d;
            const unsigned char *allowed = state_at(p, v, i, e);
            int *pos = p->pos + chart_cell(n, i, e) * (size_t)nsym;
            int *syms = p->syms + chart_cell(n, i, e) * (size_t)nsym, ns = 0;
            for (int s = 0; s < nsym; s++) {
                pos[s] = -1;
                if (!allowed[s])
                    continue;
                pos[s] = (int)at;
                syms[ns++] = s;
                for (int x = 0; x < g->nsub[s]; x++)
                    p->in[at + x] = p->out[at + x] = -INFINITY;
                at += (size_t)g->nsub[s];
                p->lbits[((size_t)i * nsym + s) * W + (e >> 6)] |= 1ULL << (e & 63);
                p->rbits[((size_t)e * nsym + s) * W + (i >> 6)] |= 1ULL << (i & 63);
            }
            p->nsyms[chart_cell(n, i, e)] = ns;
        }
    return CKY_OK;
}

/* The split points of cell (i, j) as a bit set (ws->span, words w0 .. w1). */
static void span_bits(prune_scratch *ws, int i, int j, int *w0, int *w1)
{
    *w0 = (i + 1) >> 6;
    *w1 = (j - 1) >> 6;
    for (int w = *w0; w <= *w1; w++) {
        uint64_t m = ~0ULL;
        if (w == *w0)
            m &= ~0ULL << ((i + 1) & 63);
        if (w == *w1 && ((j - 1) & 63) < 63)
            m &= (1ULL << (((j - 1) & 63) + 1)) - 1;
        ws->span[w] = m;
    }
}

/* The split points of (i, j) where L is allowed over (i, k): ws->lmask; 0 if there is none. */
static int left_splits(const prune_plan *p, prune_scratch *ws, const level_view *v, int i, int L,
                       int w0, int w1)
{
    const uint64_t *lb = p->lbits + ((size_t)i * v->g->nsym + L) * p->nword;
    uint64_t any = 0;
    for (int w = w0; w <= w1; w++)
        any |= ws->lmask[w] = lb[w] & ws->span[w];
    return any != 0;
}

/* Of those, the split points where R is allowed over (k, j), ascending, into ws->ks; their
 * number. */
static inline __attribute__((always_inline)) int
valid_splits(const prune_plan *p, prune_scratch *ws, const level_view *v, int j, int R, int w0,
             int w1)
{
    const uint64_t *rb = p->rbits + ((size_t)j * v->g->nsym + R) * p->nword;
    int n = 0;
    if (w0 == w1) { /* sentences of up to 63 words: one word */
        for (uint64_t m = ws->lmask[w0] & rb[w0]; m; m &= m - 1)
            ws->ks[n++] = (w0 << 6) + __builtin_ctzll(m);
        return n;
    }
    for (int w = w0; w <= w1; w++)
        for (uint64_t m = ws->lmask[w] & rb[w]; m; m &= m - 1)
            ws->ks[n++] = (w << 6) + __builtin_ctzll(m);
    return n;
}

/* The substates x of symbol s with flag[x] set (a byte flag) or with a finite score, into
 * xs; their number. */
static int list_substates(int n, const unsigned char *flag, const double *score, int *xs)
{
    int m = 0;
    for (int x = 0; x < n; x++)
        if (flag ? flag[x] != 0 : score[x] != -INFINITY)
            xs[m++] = x;
    return m;
}

/* The children of cell (i, j) at every split point: where their symbols' blocks are. */
static void gather_children(const prune_plan *p, prune_scratch *ws, const level_view *v, int i,
                            int j)
{
    for (int k = i + 1; k < j; k++) {
        ws->lpos[k] = pos_at(p, v, i, k);
        ws->rpos[k] = pos_at(p, v, k, j);
    }
}

/* Can a rule with largest parent scores wp[] (over its rows) and children of at most bl and
 * br give a term above acc at one of the substates xs[0 .. nx)? (Addition is monotonic:
 * (w + ls) + rs <= (wp[x] + bl) + br.) */
static int can_improve(const double *wp, double bl, double br, const double *acc,
                       const int *xs, int nx)
{
    int any = 0;
    for (int y = 0; y < nx; y++)
        any |= wp[xs[y]] + bl + br > acc[xs[y]];
    return any;
}

/* The least of acc at the substates xs[0 .. nx). */
static double least_of(const double *acc, const int *xs, int nx)
{
    double m = INFINITY;
    for (int y = 0; y < nx; y++)
        m = acc[xs[y]] < m ? acc[xs[y]] : m;
    return m;
}

/* The binary terms of cell (i, j), per allowed parent P, its rules by left child, per split
 * point where both children are allowed: skipped when the bound (rule's largest score + left
 * child's largest inside score) + right child's cannot beat the least of P's allowed
 * substates so far, or for each of them (wpar) its own; else per row and substate. */
static void inside_binary(prune_plan *p, prune_scratch *ws, const prune_lists *lists,
                          const level_view *v, int i, int j)
{
    const grammar *g = v->g;
    int n = v->n, nsym = g->nsym;
    const unsigned char *sub = sub_at(p, v, i, j);
    const int *pos = pos_at(p, v, i, j);
    int w0, w1;
    gather_children(p, ws, v, i, j);
    span_bits(ws, i, j, &w0, &w1);
    for (int k = i + 1; k < j; k++) {
        ws->lmax[k] = p->imax + chart_cell(n, i, k) * (size_t)nsym;
        ws->rmax[k] = p->imax + chart_cell(n, k, j) * (size_t)nsym;
    }
    int ns;
    const int *syms = syms_at(p, v, i, j, &ns);
    for (int y_s = 0; y_s < ns; y_s++) {
        int P = syms[y_s], np = g->nsub[P], *xs = ws->xs;
        int nx = list_substates(np, sub + g->sub_offset[P], NULL, xs); /* allowed parents */
        if (!nx)
            continue;
        double *acc = ws->acc, least = -INFINITY;
        for (int x = 0; x < np; x++)
            acc[x] = -INFINITY;
        for (int grp = lists->parent_group[P]; grp < lists->parent_group[P + 1]; grp++) {
            int L = lists->group_left[grp];
            if (!left_splits(p, ws, v, i, L, w0, w1))
                continue;
            for (int x_b = lists->group_first[grp]; x_b < lists->group_first[grp + 1]; x_b++) {
                int b = lists->bin[x_b];
                const grammar_binary *r = &g->binary[b];
                int R = r->right, nk = valid_splits(p, ws, v, j, R, w0, w1);
                if (!nk)
                    continue;
                double wm = lists->wmax[b];
                const double *wp = lists->wpar + lists->wpar_first[b];
                for (int x_k = 0; x_k < nk; x_k++) {
                    int k = ws->ks[x_k];
                    double bl = ws->lmax[k][L], br = ws->rmax[k][R];
                    if (!(wm + bl + br > least) || !can_improve(wp, bl, br, acc, xs, nx))
                        continue;
                    const double *left = p->in + ws->lpos[k][L];
                    const double *right = p->in + ws->rpos[k][R];
                    for (int row = 0; row < r->nrow; row++) {
                        double ls = left[r->row_l[row]], rs = right[r->row_r[row]];
                        if (ls == -INFINITY || rs == -INFINITY)
                            continue;
                        const double *wr = r->score + (size_t)row * np;
                        for (int y = 0; y < nx; y++) { /* a -inf rule gives -inf: no change */
                            int x = xs[y];
                            double t = wr[x] + ls + rs;
                            acc[x] = t > acc[x] ? t : acc[x];
                        }
                    }
                    least = least_of(acc, xs, nx);
                }
            }
        }
        double *cell = p->in + pos[P]; /* the substates that got a term */
        for (int x = 0; x < np; x++)
            if (acc[x] > -INFINITY)
                cell[x] = acc[x];
    }
}

static void inside_unary(prune_plan *p, prune_scratch *ws, const level_view *v, int i, int j)
{
    const grammar *g = v->g;
    const unsigned char *sub = sub_at(p, v, i, j);
    const int *pos = pos_at(p, v, i, j);
    double *after = ws->after;
    int ns;
    const int *syms = syms_at(p, v, i, j, &ns);
    for (int y_s = 0; y_s < ns; y_s++) {
        int P = syms[y_s], np = g->nsub[P], *xs = ws->xs;
        int nx = list_substates(np, sub + g->sub_offset[P], NULL, xs); /* allowed parents */
        double *pa = after + g->sub_offset[P];
        for (int x = 0; x < np; x++)
            pa[x] = -INFINITY;
        for (int u = g->unary_first[P]; nx && u < g->unary_first[P + 1]; u++) {
            const grammar_unary *r = &g->unary[u];
            if (pos[r->child] < 0)
                continue;
            const double *child = p->in + pos[r->child];
            for (int c = 0; c < g->nsub[r->child]; c++) {
                if (child[c] == -INFINITY)
                    continue;
                const double *w = r->score + (size_t)c * np;
                for (int y = 0; y < nx; y++) { /* a -inf rule gives -inf: no change */
                    double t = child[c] + w[xs[y]];
                    if (t > pa[xs[y]])
                        pa[xs[y]] = t;
                }
            }
        }
    }
    for (int y_s = 0; y_s < ns; y_s++) {
        int P = syms[y_s];
        double *cell = p->in + pos[P];
        const double *pa = after + g->sub_offset[P];
        for (int x = 0; x < g->nsub[P]; x++)
            if (pa[x] > cell[x])
                cell[x] = pa[x];
    }
}

static void outside_unary(prune_plan *p, prune_scratch *ws, int k, const level_view *v, int i,
                          int j)
{
    const grammar *g = v->g;
    const unsigned char *sub = sub_at(p, v, i, j);
    const int *pos = pos_at(p, v, i, j);
    const int *order = p->lists[k].un_by_child, *first = p->lists[k].un_cfirst;
    double *after = ws->after;
    int ns;
    const int *syms = syms_at(p, v, i, j, &ns);
    for (int y_s = 0; y_s < ns; y_s++) { /* the parent substates with an outside score */
        int s = syms[y_s];
        ws->xcount[s] = list_substates(g->nsub[s], NULL, p->out + pos[s],
                                       ws->xlist + g->sub_offset[s]);
    }
    for (int y_s = 0; y_s < ns; y_s++) {
        int C = syms[y_s];
        if (j - i > 1 && !g->phrasal[C])
            continue;
        int nc = g->nsub[C];
        const unsigned char *csub = sub + g->sub_offset[C];
        double *ca = after + g->sub_offset[C];
        for (int x = 0; x < nc; x++)
            ca[x] = -INFINITY;
        for (int x = first[C]; x < first[C + 1]; x++) {
            const grammar_unary *r = &g->unary[order[x]];
            int P = r->parent, np = g->nsub[P];
            if (pos[P] < 0 || !ws->xcount[P])
                continue;
            int nq = ws->xcount[P];
            const int *qs = ws->xlist + g->sub_offset[P];
            const double *po = p->out + pos[P];
            for (int c = 0; c < nc; c++) {
                if (!csub[c])
                    continue;
                const double *w = r->score + (size_t)c * np;
                double best = ca[c];
                for (int y = 0; y < nq; y++) { /* a -inf rule gives -inf: no change */
                    double t = po[qs[y]] + w[qs[y]];
                    if (t > best)
                        best = t;
                }
                ca[c] = best;
            }
        }
    }
    for (int y_s = 0; y_s < ns; y_s++) {
        int C = syms[y_s];
        if (j - i > 1 && !g->phrasal[C])
            continue;
        double *cell = p->out + pos[C];
        const double *ca = after + g->sub_offset[C];
        for (int x = 0; x < g->nsub[C]; x++)
            if (ca[x] > cell[x])
                cell[x] = ca[x];
    }
}

/* Which children a parent's outside push writes: both, or (on a team, where the parents of
 * one span length share their children) the left ones, which start where the parent does,
 * or the right ones, which end where it ends: the parents of one span length have distinct
 * starts and distinct ends, so each of those two rounds writes every child from one parent
 * alone. */
enum { TO_LEFT = 1, TO_RIGHT = 2, TO_BOTH = 3 };

static inline __attribute__((always_inline)) void
outside_binary(prune_plan *p, prune_scratch *ws, const prune_lists *lists, const level_view *v,
               int i, int j, int to)
{
    const grammar *g = v->g;
    const int *pos = pos_at(p, v, i, j);
    int w0, w1;
    gather_children(p, ws, v, i, j);
    span_bits(ws, i, j, &w0, &w1);
    int ns;
    const int *syms = syms_at(p, v, i, j, &ns);
    for (int y_s = 0; y_s < ns; y_s++) {
        int P = syms[y_s], np = g->nsub[P], *xs = ws->xs;
        const double *po = p->out + pos[P];
        int nx = list_substates(np, NULL, po, xs); /* the parent substates with a score */
        for (int grp = lists->parent_group[P]; nx && grp < lists->parent_group[P + 1]; grp++) {
            int L = lists->group_left[grp];
            if (!left_splits(p, ws, v, i, L, w0, w1))
                continue;
            for (int x_b = lists->group_first[grp]; x_b < lists->group_first[grp + 1]; x_b++) {
                const grammar_binary *r = &g->binary[lists->bin[x_b]];
                int R = r->right, nk = valid_splits(p, ws, v, j, R, w0, w1);
                for (int x_k = 0; x_k < nk; x_k++) {
                    int k = ws->ks[x_k];
                    const double *left = p->in + ws->lpos[k][L];
                    const double *right = p->in + ws->rpos[k][R];
                    double *lo = p->out + ws->lpos[k][L];
                    double *ro = p->out + ws->rpos[k][R];
                    for (int row = 0; row < r->nrow; row++) {
                        int l = r->row_l[row], rr = r->row_r[row];
                        double ls = left[l], rs = right[rr];
                        if (ls == -INFINITY || rs == -INFINITY)
                            continue;
                        const double *w = r->score + (size_t)row * np;
                        /* max into the children directly (a child this round does not
                           write is not read: another parent may be writing it) */
                        double bl = to & TO_LEFT ? lo[l] : -INFINITY;
                        double br = to & TO_RIGHT ? ro[rr] : -INFINITY;
                        for (int y = 0; y < nx; y++) { /* a -inf rule gives -inf */
                            int x = xs[y];
                            double tl = w[x] + rs + po[x], tr = w[x] + ls + po[x];
                            bl = tl > bl ? tl : bl;
                            br = tr > br ? tr : br;
                        }
                        if (to & TO_LEFT)
                            lo[l] = bl;
                        if (to & TO_RIGHT)
                            ro[rr] = br;
                    }
                }
            }
        }
    }
}

/* A finished cell's largest inside score of each allowed symbol into p->imax. */
static void store_maxima(prune_plan *p, const level_view *v, int i, int j)
{
    const grammar *g = v->g;
    int nsym = g->nsym;
    const int *pos = pos_at(p, v, i, j);
    double *mx = p->imax + chart_cell(v->n, i, j) * (size_t)nsym;
    int ns;
    const int *syms = syms_at(p, v, i, j, &ns);
    for (int y_s = 0; y_s < ns; y_s++) {
        int s = syms[y_s];
        double m = -INFINITY;
        for (int x = 0; x < g->nsub[s]; x++)
            m = p->in[pos[s] + x] > m ? p->in[pos[s] + x] : m;
        mx[s] = m;
    }
}

/* The cells of one span length, for the team: inside, a cell reads only shorter spans' and
 * writes only its own; outside, `to` says which children it pushes into (TO_LEFT and
 * TO_BOTH: after its unaries, which change only its own scores). */
typedef struct span_job {
    prune_plan *p;
    int k;
    const level_view *v;
    int d, to;
} span_job;

static void outside_cell(void *arg, long i, int member)
{
    const span_job *job = arg;
    prune_plan *p = job->p;
    prune_scratch *ws = &p->scratch[member];
    int j = (int)i + job->d;
    if (job->to != TO_RIGHT)
        outside_unary(p, ws, job->k, job->v, (int)i, j);
    if (job->d < 2)
        return;
    const prune_lists *l = &p->lists[job->k];
    switch (job->to) { /* the rounds as constants: a loop of its own for each */
    case TO_BOTH: outside_binary(p, ws, l, job->v, (int)i, j, TO_BOTH); break;
    case TO_LEFT: outside_binary(p, ws, l, job->v, (int)i, j, TO_LEFT); break;
    case TO_RIGHT: outside_binary(p, ws, l, job->v, (int)i, j, TO_RIGHT); break;
    }
}

static void inside_cell(void *arg, long i, int member)
{
    const span_job *job = arg;
    prune_plan *p = job->p;
    prune_scratch *ws = &p->scratch[member];
    int j = (int)i + job->d;
    if (job->d > 1)
        inside_binary(p, ws, &p->lists[job->k], job->v, (int)i, j);
    inside_unary(p, ws, job->v, (int)i, j);
    store_maxima(p, job->v, (int)i, j);
}

/* Word i's lexical scores into the allowed tag substates over (i, i + 1). */
static void put_word(void *arg, int i, const double *lex)
{
    const span_job *job = arg;
    prune_plan *p = job->p;
    const grammar *g = job->v->g;
    const unsigned char *sub = sub_at(p, job->v, i, i + 1);
    const int *pos = pos_at(p, job->v, i, i + 1);
    for (int t = 0; t < g->nsym; t++)
        if (!g->phrasal[t] && pos[t] >= 0)
            for (int x = 0; x < g->nsub[t]; x++)
                if (sub[g->sub_offset[t] + x])
                    p->in[pos[t] + x] = lex[g->sub_offset[t] + x];
}

cky_status prune_level_passes(prune_plan *p, int k, char *const *words, int n, int *parsed)
{
    const grammar *g = p->cascade->level[k];
    level_view v = {g, n, (size_t)g->nsub_total};
    cky_status st = lay_out(p, &v);
    if (st)
        return st;
    span_job job = {p, k, &v, 1, 0};
    if ((st = prune_score_words(p, g, words, n, p->state, put_word, &job)))
        return st;
    for (job.d = 1; job.d <= n; job.d++)
        team_for(p->team, n - job.d + 1, inside_cell, &job);
    int root = pos_at(p, &v, 0, n)[0]; /* ROOT is allowed everywhere */
    *parsed = p->in[root] != -INFINITY;
    if (!*parsed)
        return CKY_OK;
    p->out[root] = 0.0;
    for (job.d = n; job.d >= 1; job.d--) {
        /* alone: each cell's unaries, then its push into both children; on a team, each
         * cell's unaries and its push into its left children, then into its right ones */
        job.to = p->team ? TO_LEFT : TO_BOTH;
        team_for(p->team, n - job.d + 1, outside_cell, &job);
        job.to = TO_RIGHT;
        if (p->team && job.d > 1)
            team_for(p->team, n - job.d + 1, outside_cell, &job);
    }
    return CKY_OK;
}

void prune_level_prune(prune_plan *p, int k, int n, double threshold)
{
    const grammar *g = p->cascade->level[k];
    level_view v = {g, n, (size_t)g->nsub_total};
    double root = p->in[pos_at(p, &v, 0, n)[0]];
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            unsigned char *allowed = p->state + chart_cell(n, i, i + d) * (size_t)g->nsym;
            unsigned char *sub = p->sub + chart_cell(n, i, i + d) * v.tot;
            const int *pos = pos_at(p, &v, i, i + d);
            int ns;
            const int *syms = syms_at(p, &v, i, i + d, &ns); /* those allowed, as laid out */
            if (d == 1 || g->phrasal[0])
                allowed[0] = 1; /* ROOT */
            for (int y_s = 0; y_s < ns; y_s++) {
                int s = syms[y_s];
                if (s == 0 || (d > 1 && !g->phrasal[s]))
                    continue;
                const double *in = p->in + pos[s], *out = p->out + pos[s];
                unsigned char *ss = sub + g->sub_offset[s];
                int any = 0;
                for (int x = 0; x < g->nsub[s]; x++) {
                    if (!ss[x])
                        continue;
                    ss[x] = in[x] != -INFINITY && out[x] != -INFINITY &&
                            in[x] + out[x] - root > threshold;
                    any |= ss[x];
                }
                if (!any)
                    allowed[s] = 0;
            }
        }
}
