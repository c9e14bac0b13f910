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

/* The variational normalizer of P over (i, j): the sum over its substates of
 * outside / P(sentence) * inside, in that order (the jar's doVariational branch). */
static double parent_posterior(const mr_chart *c, int i, int j, int P, double norm)
{
    const grammar *g = c->g;
    const double *po = mr_out(c, i, j) + g->sub_offset[P];
    const double *pi = mr_in(c, i, j) + g->sub_offset[P];
    double sum = 0;
    for (int p = 0; p < g->nsub[P]; p++)
        sum += po[p] / norm * pi[p];
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
                if (c->variational)
                    post /= parent_posterior(c, i, j, P, norm);
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
        double sf = 0.0;
        if (c->variational)
            sum = 1; /* the jar's variational lexical items score log 1 */
        else if (c->scaled)
            sf = mr_log_scale(c, mr_jsub(mr_oscale_of(c, i, i + 1, t), root_scale));
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

/* The jar's closeVariationalRules over cell (i, j): rs (nsym x nsym, the best variational
 * unary score of each (parent, child) found this cell) closed by its max-product loop, nine
 * rounds in place, then every parent scored by each child's max-c score before the unaries
 * times rs: Java's arithmetic, quirks and all (a log score times a probability; a child of
 * score 0 skipped; a product -0.0 beating a negative score, so a parent with no rule to the
 * child takes it). The loop runs over the parents with a score (rows) and the children with
 * one (columns) only: every other term is max(x, 0) with x >= 0 and changes nothing. */
typedef struct var_scratch {
    double *rs;     /* [nsym * nsym] the jar's ruleScores, zeros between cells */
    double *closed; /* [nsym] closedScores */
    int *rows, *cols; /* [nsym] the live rows and columns of rs, ascending */
} var_scratch;

static void sort_ints(int *v, int n)
{
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
            int t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
}

static void close_variational(mr_chart *c, int i, int j, double *rs, const int *rows, int nrow,
                              const int *cols, int ncol, double *best)
{
    int n = c->nsym;
    size_t cell = mr_cell(c, i, j) * n;
    const double *pre = c->mscore + cell;
    memcpy(best, pre, (size_t)n * sizeof *best);
    for (int len = 1; len < 10; len++)
        for (int a = 0; a < nrow; a++)
            for (int e = 0; e < ncol; e++) {
                double *x = &rs[(size_t)rows[a] * n + cols[e]];
                for (int m = 0; m < nrow; m++) {
                    double y = rs[(size_t)rows[a] * n + rows[m]] *
                               rs[(size_t)rows[m] * n + cols[e]];
                    if (y > *x) /* Math.max of values >= +0 */
                        *x = y;
                }
            }
    for (int C = 0; C < n; C++) {
        double child = pre[C];
        if (child == 0)
            continue;
        for (int P = 0; P < n; P++) {
            double v = child * rs[(size_t)P * n + C];
            if (v > best[P]) {
                best[P] = v;
                c->mchild[cell + P] = C;
            }
        }
    }
}

/* The jar's variational unary step over (i, j): each allowed parent's raw unary rules
 * (Grammar.getUnaryRulesByParent, grammar_sum_closure.raw) scored as max-rule's, the
 * posterior divided by the parent's (parent_posterior); the best one per (parent, child)
 * kept in rs; if any term was added in the cell, the cell's scores are then those of
 * close_variational (the loop's own scores dropped, its back-pointers kept, as the jar's
 * are). rs is nsym x nsym zeros and is left so. */
static void maxc_unary_variational(mr_chart *c, int i, int j, double norm, int root_scale,
                                   var_scratch *v)
{
    double *rs = v->rs;
    int *rows = v->rows, *cols = v->cols;
    const grammar *g = c->g;
    const grammar_sum_closure *s = g->sum;
    int n = c->nsym, nrow = 0, ncol = 0, found = 0;
    size_t cell = mr_cell(c, i, j) * n;
    double *best = c->tmp;
    memcpy(best, c->mscore + cell, (size_t)n * sizeof *best);
    for (int P = 0; s->raw_first && P < n; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        int np = g->nsub[P];
        for (int k = s->raw_first[P]; k < s->raw_first[P + 1]; k++) {
            const grammar_sum_unary *u = &s->raw[k];
            int C = u->child;
            if (C == P || !mr_allowed(c, i, j, C))
                continue;
            double child = c->mscore[cell + C];
            if (child == -INFINITY)
                continue;
            double sf = 0.0;
            if (c->scaled)
                sf = mr_log_scale(c, mr_jsub(mr_jadd(mr_oscale_of(c, i, j, P), mr_iscale_of(c, i, j, C)),
                                        root_scale));
            double gs = sf + child;
            if (gs < best[P])
                continue;
            const double *ci = mr_in(c, i, j) + g->sub_offset[C];
            const double *po = mr_out(c, i, j) + g->sub_offset[P];
            double post = 0;
            for (int cp = 0; cp < g->nsub[C]; cp++) {
                if (ci[cp] == 0)
                    continue;
                const double *w = u->prob + (size_t)cp * np;
                for (int p = 0; p < np; p++) {
                    if (po[p] < 0 || w[p] == 0)
                        continue;
                    post += (po[p] * w[p] * ci[cp]) / norm;
                    found = 1;
                }
            }
            if (post == 0)
                continue;
            post /= parent_posterior(c, i, j, P, norm);
            double *r = &rs[(size_t)P * n + C];
            if (*r == 0 && post != 0) { /* a new entry: its row and column become live */
                int seen = 0;
                for (int a = 0; a < nrow && !seen; a++)
                    seen = rows[a] == P;
                if (!seen)
                    rows[nrow++] = P;
                seen = 0;
                for (int a = 0; a < ncol && !seen; a++)
                    seen = cols[a] == C;
                if (!seen)
                    cols[ncol++] = C;
            }
            *r = post >= *r ? post : *r; /* Math.max(ruleScore, rs) */
            gs += log(post);
            if (gs > best[P]) {
                best[P] = gs;
                c->mchild[cell + P] = C;
            }
        }
    }
    if (found) {
        sort_ints(rows, nrow);
        sort_ints(cols, ncol);
        close_variational(c, i, j, rs, rows, nrow, cols, ncol, v->closed);
        memcpy(best, v->closed, (size_t)n * sizeof *best);
    }
    for (int a = 0; a < nrow; a++)
        for (int e = 0; e < n; e++)
            rs[(size_t)rows[a] * n + e] = 0;
    memcpy(c->mscore + cell, best, (size_t)n * sizeof *best);
}

cky_status mr_maxc(mr_chart *c)
{
    var_scratch v = {0};
    size_t n = (size_t)c->nsym;
    if (c->variational &&
        (!(v.rs = calloc(n * n, sizeof *v.rs)) || !(v.closed = malloc(n * sizeof *v.closed)) ||
         !(v.rows = malloc(n * sizeof *v.rows)) || !(v.cols = malloc(n * sizeof *v.cols)))) {
        free(v.rs);
        free(v.closed);
        free(v.rows);
        return cky_fail(CKY_ERR_NOMEM, "maxrule: out of memory for the variational scores");
    }
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
            if (c->variational)
                maxc_unary_variational(c, i, i + d, norm, root_scale, &v);
            else
                maxc_unary(c, i, i + d, norm, root_scale);
        }
    free(v.rs);
    free(v.closed);
    free(v.rows);
    free(v.cols);
    return CKY_OK;
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
    if (k < 0 && c->variational) /* the jar's childless ROOT, which its variational max-c
                                    can leave inside a tree */
        return node("ROOT", NULL, st);
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
