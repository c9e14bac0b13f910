/* maxc: the max-c scores of anchored symbol rules and the tree they give (the jar's
 * doConstrainedMaxCScores and extractBestMaxRuleParse1/2).
 *
 * maxcScore[cell][X] is the best sum of log rule posteriors of a tree of X over the cell. A
 * binary candidate P -> L R at split k scores left + scaling + right + log(posterior), the
 * posterior sum over substates of ((outside(P) * rule) * inside(L)) * inside(R) / P(sentence)
 * (scaling: log of SCALE^(oScale P + iScale L + iScale R - iScale root) in the scaled case);
 * a candidate replaces the best only when strictly better, so the first of equal candidates
 * in the jar's order (parent, rule, split) wins. Lexical items score log sum
 * (outside(tag) * lexicon) / P(sentence). One unary layer per cell: each parent takes its best
 * closed sum unary over the children's max-c scores before the unaries (inside scores are the
 * post-unary ones, as in the jar). Parents and children are the allowed symbols only (the
 * jar's allowedStates checks); the posteriors sum over every substate, as the jar's do. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "maxrule_internal.h"

/* log(calcScaleFactor(scale)) (remembered: the same exponents recur for every rule). */
double mr_log_scale(const mr_chart *c, int scale)
{
    if (scale < -MR_MEMO || scale > MR_MEMO)
        return log(mr_scale_factor(scale));
    double *m = &c->logscale[scale + MR_MEMO];
    if (isnan(*m))
        *m = log(mr_scale_factor(scale));
    return *m;
}

int mr_iscale_of(const mr_chart *c, int i, int j, int sym)
{
    return c->iscale[mr_cell(c, i, j) * c->nsym + sym];
}

int mr_oscale_of(const mr_chart *c, int i, int j, int sym)
{
    return c->oscale[mr_cell(c, i, j) * c->nsym + sym];
}

/* The posterior of binary rule b (parent P) at split k over (i, j), undivided terms summed. */
double mr_binary_posterior(const mr_chart *c, int i, int j, int P, int b, int k, double norm)
{
    const grammar *g = c->g;
    const grammar_binary *r = &g->binary[b];
    int np = g->nsub[P];
    const double *left = mr_in(c, i, k) + g->sub_offset[r->left];
    const double *right = mr_in(c, k, j) + g->sub_offset[r->right];
    const double *po = mr_out(c, i, j) + g->sub_offset[P];
    double sum = 0;
    for (int row = 0; row < r->nrow; row++) {
        double lis = left[r->row_l[row]], ris = right[r->row_r[row]];
        if (lis == 0 || ris == 0)
            continue;
        const double *w = r->prob + (size_t)row * np;
        for (int p = 0; p < np; p++) {
            if (po[p] == 0 || w[p] == 0)
                continue;
            sum += (po[p] * w[p] * lis * ris) / norm;
        }
    }
    return sum;
}

static void maxc_binary(mr_chart *c, int i, int j, double norm, int root_scale)
{
    const grammar *g = c->g;
    size_t cell = mr_cell(c, i, j) * c->nsym;
    for (int P = 0; P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            double to_beat = c->mscore[cell + P];
            int kmin, kmax;
            mr_splits(c, r, i, j, &kmin, &kmax);
            for (int k = kmin; k <= kmax; k++) {
                if (!mr_allowed(c, i, k, r->left) || !mr_allowed(c, k, j, r->right))
                    continue;
                double ls = c->mscore[mr_cell(c, i, k) * c->nsym + r->left];
                double rs = c->mscore[mr_cell(c, k, j) * c->nsym + r->right];
                if (ls == -INFINITY || rs == -INFINITY)
                    continue;
                double sf = 0.0;
                if (c->scaled)
                    sf = mr_log_scale(c, mr_jsub(mr_jadd(mr_jadd(mr_oscale_of(c, i, j, P),
                                                                 mr_iscale_of(c, i, k, r->left)),
                                                          mr_iscale_of(c, k, j, r->right)),
                                                  root_scale));
                double gs = ls + sf + rs;
                if (gs < to_beat)
                    continue;
                double post = mr_binary_posterior(c, i, j, P, b, k, norm);
                if (post == 0)
                    continue;
                gs += log(post);
                if (gs > to_beat) {
                    to_beat = gs;
                    c->mscore[cell + P] = gs;
                    c->msplit[cell + P] = k;
                    c->mleft[cell + P] = r->left;
                    c->mright[cell + P] = r->right;
                }
            }
        }
    }
}

static void maxc_lexical(mr_chart *c, int i, double norm, int root_scale)
{
    const grammar *g = c->g;
    size_t cell = mr_cell(c, i, i + 1) * c->nsym;
    const double *po = mr_out(c, i, i + 1), *lex = c->lex + (size_t)i * c->nsub;
    for (int t = 0; t < g->nsym; t++) {
        if (g->phrasal[t] || !mr_allowed(c, i, i + 1, t))
            continue;
        double sum = 0;
        for (int s = g->sub_offset[t]; s < g->sub_offset[t] + g->nsub[t]; s++)
            sum += (po[s] * lex[s]) / norm;
        double sf = c->scaled
                        ? mr_log_scale(c, mr_jsub(mr_oscale_of(c, i, i + 1, t), root_scale))
                        : 0.0;
        c->mscore[cell + t] = log(sum) + sf;
    }
}

/* The posterior of sum unary u over cell (i, j). */
double mr_unary_posterior(const mr_chart *c, int i, int j, const grammar_sum_unary *u,
                              double norm)
{
    const grammar *g = c->g;
    int np = g->nsub[u->parent], nc = g->nsub[u->child];
    const double *ci = mr_in(c, i, j) + g->sub_offset[u->child];
    const double *po = mr_out(c, i, j) + g->sub_offset[u->parent];
    double sum = 0;
    for (int cp = 0; cp < nc; cp++) {
        if (ci[cp] == 0)
            continue;
        const double *w = u->prob + (size_t)cp * np;
        for (int p = 0; p < np; p++) {
            if (po[p] < 0 || w[p] == 0)
                continue;
            sum += (po[p] * w[p] * ci[cp]) / norm;
        }
    }
    return sum;
}

static void maxc_unary(mr_chart *c, int i, int j, double norm, int root_scale)
{
    const grammar *g = c->g;
    const grammar_sum_closure *s = g->sum;
    size_t cell = mr_cell(c, i, j) * c->nsym;
    double *best = c->tmp; /* maxcScoreStartEnd: the cell's scores updated in a batch */
    memcpy(best, c->mscore + cell, (size_t)c->nsym * sizeof *best);
    for (int P = 0; P < g->nsym; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        for (int k = s->first[P]; k < s->first[P + 1]; k++) {
            const grammar_sum_unary *u = &s->rule[k];
            double child = c->mscore[cell + u->child];
            if (!mr_allowed(c, i, j, u->child) || child == -INFINITY)
                continue;
            double sf = 0.0;
            if (c->scaled)
                sf = mr_log_scale(c, mr_jsub(mr_jadd(mr_oscale_of(c, i, j, P),
                                                     mr_iscale_of(c, i, j, u->child)),
                                              root_scale));
            double gs = sf + child;
            if (gs < best[P])
                continue;
            double post = mr_unary_posterior(c, i, j, u, norm);
            if (post == 0)
                continue;
            gs += log(post);
            if (gs > best[P]) {
                best[P] = gs;
                c->mchild[cell + P] = u->child;
            }
        }
    }
    memcpy(c->mscore + cell, best, (size_t)c->nsym * sizeof *best);
}

void mr_maxc(mr_chart *c)
{
    size_t ncells = chart_ncells(c->n) * (size_t)c->nsym;
    for (size_t x = 0; x < ncells; x++) {
        c->mscore[x] = -INFINITY;
        c->msplit[x] = c->mchild[x] = c->mleft[x] = c->mright[x] = -1;
    }
    double norm = mr_in(c, 0, c->n)[c->g->sub_offset[0]];
    int root_scale = c->scaled ? mr_iscale_of(c, 0, c->n, 0) : 0;
    for (int d = 1; d <= c->n; d++)
        for (int i = 0; i + d <= c->n; i++) {
            if (d > 1)
                maxc_binary(c, i, i + d, norm, root_scale);
            else
                maxc_lexical(c, i, norm, root_scale);
            maxc_unary(c, i, i + d, norm, root_scale);
        }
}

/* ---- extraction ---------------------------------------------------------------------------- */

static tree *node(const char *label, tree *kid, cky_status *st)
{
    tree *t = *st ? NULL : tree_new(label);
    if (!t) {
        tree_free(kid);
        if (!*st)
            *st = cky_fail(CKY_ERR_NOMEM, "out of memory building a tree");
        return NULL;
    }
    if (kid)
        tree_add_child(t, kid);
    return t;
}

static tree *extract2(const mr_chart *c, int i, int j, int sym, char *const *words,
                      cky_status *st);

/* extractBestMaxRuleParse1: sym, possibly over its best unary (with the restored
 * intermediate symbol of closedSumPaths). */
static tree *extract1(const mr_chart *c, int i, int j, int sym, char *const *words,
                      cky_status *st)
{
    const grammar *g = c->g;
    int child = c->mchild[mr_cell(c, i, j) * c->nsym + sym];
    if (child == -1)
        return extract2(c, i, j, sym, words, st);
    tree *t = extract2(c, i, j, child, words, st);
    int mid = g->sum->path[(size_t)sym * g->nsym + child];
    if (mid > 0)
        t = node(g->name[mid], t, st);
    return node(g->name[sym], t, st);
}

/* extractBestMaxRuleParse2: sym over its best binary split, or over the word. */
static tree *extract2(const mr_chart *c, int i, int j, int sym, char *const *words,
                      cky_status *st)
{
    const grammar *g = c->g;
    size_t at = mr_cell(c, i, j) * c->nsym + sym;
    if (*st)
        return NULL;
    if (j - i == 1) {
        tree *w = node(words[i], NULL, st);
        if (g->phrasal[sym]) {
            if (c->mchild[at] < 0) {
                tree_free(w);
                *st = cky_fail(CKY_ERR_FORMAT, "maxrule: %s over word %d has no tag",
                               g->name[sym], i);
                return NULL;
            }
            w = node(g->name[c->mchild[at]], w, st);
        }
        return node(g->name[sym], w, st);
    }
    int k = c->msplit[at];
    if (k < 0) {
        *st = cky_fail(CKY_ERR_FORMAT, "maxrule: no symbol can generate %s over [%d, %d)",
                       g->name[sym], i, j);
        return NULL;
    }
    tree *left = extract1(c, i, k, c->mleft[at], words, st);
    tree *right = extract1(c, k, j, c->mright[at], words, st);
    tree *t = node(g->name[sym], left, st);
    if (t)
        tree_add_child(t, right);
    else
        tree_free(right);
    return t;
}

cky_status mr_extract(const mr_chart *c, char *const *words, tree **out)
{
    cky_status st = CKY_OK;
    tree *t = extract1(c, 0, c->n, 0, words, &st);
    if (st) {
        tree_free(t);
        return st;
    }
    *out = t;
    return CKY_OK;
}
