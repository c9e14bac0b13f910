/* cascade: the coarse-to-fine grammars of a native .gr grammar (cascade.h), as the jar's
 * CoarseToFineMaxRuleParser.initCascade computes them from the loaded, unpruned grammar:
 * Grammar.computeMapping(1), computeSubstateMapping(level), computeToMapping,
 * computeConditionalProbabilities (computeProductionProbabilities, computeExpectedCounts),
 * projectGrammar, computePairsOfUnaries (cascade_unary.c), computeReverseSubstateMapping,
 * SophisticatedLexicon.projectLexicon (lexicon_berkeley.c), removeUnlikelyRules(1e-4) and
 * removeUnlikelyTags(1e-4), then the logs of builder_finish.
 *
 * Fine substates are numbered globally as the grammar does (sub_offset), which is the jar's
 * computeMapping(1). Every sum runs in the jar's order; terms the jar adds that are exactly 0
 * (null rows, zero probabilities) are skipped, which changes no bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cascade_src.h"
#include "lexicon_berkeley.h"

#define CASCADE_RULE_PRUNE 1e-4 /* initCascade: removeUnlikelyRules(1e-4), removeUnlikelyTags */
#define CASCADE_MAX_ITER 50     /* computeExpectedCounts: at most 50 steps */
#define CASCADE_CONVERGED 1e-10 /* ... while the L1 change is > 1e-10 */

void grammar_cascade_free(grammar_cascade *c)
{
    if (!c)
        return;
    for (int k = 0; k < c->nlevel; k++) {
        if (c->level)
            grammar_free(c->level[k]);
        if (c->lchild)
            free(c->lchild[k]);
        if (c->rchild)
            free(c->rchild[k]);
    }
    free(c->level);
    free(c->lchild);
    free(c->rchild);
    free(c);
}

/* ---- expected counts (computeProductionProbabilities, computeExpectedCounts) ---- */

/* The transition matrix W[p][c] (fine substates: the mass that p produces c) as sparse
 * columns: col[col_first[c] .. col_first[c+1]) holds (p, W[p][c]) with p ascending. */
typedef struct transitions {
    int *col_first, *from;
    double *w;
} transitions;

typedef struct triple {
    int p, c;
    double w;
} triple;

/* The rows of parent symbol s, summed in the jar's order into block[np][T]. */
static void parent_rows(const cascade_src *src, const grammar *g, int s, int *b, double *block)
{
    int T = g->nsub_total, np = g->nsub[s];
    const int *off = g->sub_offset;
    for (; *b < src->nbinary && src->binary[*b].parent == s; (*b)++) {
        const grammar_binary *r = &src->binary[*b];
        for (int row = 0; row < r->nrow; row++) {
            int l = off[r->left] + r->row_l[row], rr = off[r->right] + r->row_r[row];
            const double *v = r->prob + (size_t)row * np;
            for (int p = 0; p < np; p++) {
                block[(size_t)p * T + l] += v[p];
                block[(size_t)p * T + rr] += v[p];
            }
        }
    }
    for (int u = src->unary_first[s]; u < src->unary_first[s + 1]; u++) {
        const cascade_unary *r = &src->unary[u];
        if (r->child == s)
            continue;
        for (int c = 0; c < g->nsub[r->child]; c++)
            for (int p = 0; p < np; p++)
                block[(size_t)p * T + off[r->child] + c] += r->prob[(size_t)c * np + p];
    }
}

static cky_status build_transitions(const cascade_src *src, const grammar *g, transitions *t)
{
    int T = g->nsub_total, maxsub = 0, b = 0;
    for (int s = 0; s < g->nsym; s++)
        if (g->nsub[s] > maxsub)
            maxsub = g->nsub[s];
    for (int i = 1; i < src->nbinary; i++)
        if (src->binary[i].parent < src->binary[i - 1].parent)
            return cky_fail(CKY_ERR_FORMAT, "binary rules not grouped by parent");
    double *block = malloc((size_t)maxsub * T * sizeof *block);
    triple *e = NULL;
    size_t ne = 0, cap = 0;
    cky_status st = CKY_OK;
    if (!block)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int s = 0; s < g->nsym && !st; s++) {
        int np = g->nsub[s];
        memset(block, 0, (size_t)np * T * sizeof *block);
        parent_rows(src, g, s, &b, block);
        for (int p = 0; p < np && !st; p++)
            for (int c = 0; c < T; c++) {
                double w = block[(size_t)p * T + c];
                if (w == 0)
                    continue;
                if (ne == cap) {
                    cap = cap ? 2 * cap : 4096;
                    triple *n = realloc(e, cap * sizeof *n);
                    if (!n) {
                        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
                        break;
                    }
                    e = n;
                }
                e[ne++] = (triple){g->sub_offset[s] + p, c, w};
            }
    }
    free(block);
    t->col_first = calloc((size_t)T + 1, sizeof *t->col_first);
    t->from = malloc((ne ? ne : 1) * sizeof *t->from);
    t->w = malloc((ne ? ne : 1) * sizeof *t->w);
    if (!st && (!t->col_first || !t->from || !t->w))
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!st) { /* a stable counting sort by column keeps p ascending within a column */
        for (size_t i = 0; i < ne; i++)
            t->col_first[e[i].c + 1]++;
        for (int c = 0; c < T; c++)
            t->col_first[c + 1] += t->col_first[c];
        int *fill = malloc(((size_t)T + 1) * sizeof *fill);
        if (!fill) {
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        } else {
            memcpy(fill, t->col_first, ((size_t)T + 1) * sizeof *fill);
            for (size_t i = 0; i < ne; i++) {
                int at = fill[e[i].c]++;
                t->from[at] = e[i].p;
                t->w[at] = e[i].w;
            }
            free(fill);
        }
    }
    free(e);
    return st;
}

/* computeExpectedCounts: ec[0] = 1 (the root), then ec = ec * W until converged. */
static cky_status expected_counts(const cascade_src *src, const grammar *g, double **out)
{
    transitions t = {0};
    int T = g->nsub_total;
    cky_status st = build_transitions(src, g, &t);
    double *ec = calloc((size_t)T, sizeof *ec), *tmp = calloc((size_t)T, sizeof *tmp);
    if (!st && (!ec || !tmp))
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!st) {
        ec[0] = tmp[0] = 1;
        double diff = 1;
        for (int iter = 0; diff > CASCADE_CONVERGED && iter < CASCADE_MAX_ITER; iter++) {
            for (int c = 1; c < T; c++)
                for (int k = t.col_first[c]; k < t.col_first[c + 1]; k++)
                    tmp[c] += ec[t.from[k]] * t.w[k];
            diff = 0;
            for (int c = 1; c < T; c++) {
                diff += fabs(ec[c] - tmp[c]);
                ec[c] = tmp[c];
                tmp[c] = 0;
            }
            ec[0] = tmp[0] = 1;
        }
    }
    free(t.col_first);
    free(t.from);
    free(t.w);
    free(tmp);
    if (st) {
        free(ec);
        return st;
    }
    *out = ec;
    return CKY_OK;
}

/* ---- the substate mapping of a level ---- */

typedef struct level_map {
    int *nsub;    /* [nsym] substates per symbol at this level */
    int *to_sub;  /* [fine nsub_total] the level substate of each fine substate */
    double *cond; /* [fine nsub_total] condProbs: the fine substate's share of its coarse one */
} level_map;

static void level_map_free(level_map *m)
{
    free(m->nsub);
    free(m->to_sub);
    free(m->cond);
}

/* The end (exclusive) of the subtree of node i. */
static int subtree_end(const cascade_tree *t, int i)
{
    int e = i + 1;
    while (e < t->nnode && t->depth[e] > t->depth[i])
        e++;
    return e;
}

/* computeSubstateMapping(level): the nodes at depth `level` in preorder are the level's
 * substates; each fine substate (a leaf label) maps to the node above it. */
static cky_status substate_mapping(const cascade_src *src, const grammar *g, int level,
                                   level_map *m)
{
    for (int s = 0; s < g->nsym; s++) {
        const cascade_tree *t = &src->tree[s];
        int *to = m->to_sub + g->sub_offset[s], k = 0;
        for (int x = 0; x < g->nsub[s]; x++)
            to[x] = -1;
        for (int i = 0; i < t->nnode; i++) {
            if (t->depth[i] != level)
                continue;
            for (int j = i, e = subtree_end(t, i); j < e; j++) {
                if (j + 1 < t->nnode && t->depth[j + 1] > t->depth[j])
                    continue; /* not a leaf */
                if (t->label[j] >= g->nsub[s])
                    return cky_fail(CKY_ERR_FORMAT, "the split tree of %s names substate %d "
                                    "of %d", g->name[s], t->label[j], g->nsub[s]);
                to[t->label[j]] = k;
            }
            k++;
        }
        for (int x = 0; x < g->nsub[s]; x++)
            if (to[x] < 0)
                return cky_fail(CKY_ERR_FORMAT, "the split tree of %s has no node at depth %d "
                                "above substate %d", g->name[s], level, x);
        m->nsub[s] = k;
    }
    return CKY_OK;
}

/* computeToMapping and computeConditionalProbabilities: within each run of consecutive
 * substates of a symbol that map to one level substate (the jar's projected states), each
 * fine substate's expected count over the run's sum. */
static void cond_probs(const grammar *g, const double *ec, level_map *m)
{
    for (int s = 0; s < g->nsym; s++) {
        int off = g->sub_offset[s];
        for (int x = 0; x < g->nsub[s];) {
            int e = x + 1;
            while (e < g->nsub[s] && m->to_sub[off + e] == m->to_sub[off + x])
                e++;
            double sum = 0;
            for (int y = x; y < e; y++)
                sum += ec[off + y];
            for (int y = x; y < e; y++)
                m->cond[off + y] = ec[off + y] / sum;
            x = e;
        }
    }
}

static cky_status level_mapping(const cascade_src *src, const grammar *g, const double *ec,
                                int level, level_map *m)
{
    m->nsub = malloc((size_t)g->nsym * sizeof *m->nsub);
    m->to_sub = malloc((size_t)g->nsub_total * sizeof *m->to_sub);
    m->cond = malloc((size_t)g->nsub_total * sizeof *m->cond);
    if (!m->nsub || !m->to_sub || !m->cond)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    cky_status st = substate_mapping(src, g, level, m);
    if (!st)
        cond_probs(g, ec, m);
    return st;
}

/* computeReverseSubstateMapping(level): the children of each node at depth `level` (a leaf
 * is its own child; one child is both; of more than two, the last is the right one), as
 * substates of the next level, which has next_nsub[s] of them. */
static cky_status child_maps(const cascade_src *src, const grammar *level_g, int level,
                             const int *next_nsub, int *lchild, int *rchild)
{
    for (int s = 0; s < level_g->nsym; s++) {
        const cascade_tree *t = &src->tree[s];
        int off = level_g->sub_offset[s], n = level_g->nsub[s];
        for (int x = 0; x < n; x++) /* a Java int[]: a substate no node names maps to 0 */
            lchild[off + x] = rchild[off + x] = 0;
        for (int i = 0; i < t->nnode; i++) {
            if (t->depth[i] != level)
                continue;
            int sub = t->label[i], e = subtree_end(t, i), first = 1;
            if (sub >= n)
                return cky_fail(CKY_ERR_FORMAT, "the split tree of %s names substate %d of %d "
                                "at depth %d", level_g->name[s], sub, n, level);
            if (e == i + 1)
                lchild[off + sub] = rchild[off + sub] = sub;
            for (int j = i + 1; j < e; j++) {
                if (t->depth[j] != level + 1)
                    continue;
                if (first)
                    lchild[off + sub] = t->label[j];
                else
                    rchild[off + sub] = t->label[j];
                if (first)
                    rchild[off + sub] = t->label[j]; /* a single child is both */
                first = 0;
            }
        }
        for (int x = 0; x < n; x++)
            if (lchild[off + x] >= next_nsub[s] || rchild[off + x] >= next_nsub[s])
                return cky_fail(CKY_ERR_FORMAT, "the split tree of %s does not map substate %d "
                                "at depth %d to the next level", level_g->name[s], x, level);
    }
    return CKY_OK;
}

/* ---- projected rules (projectGrammar) ---- */

static cky_status project_binaries(const cascade_src *src, const grammar *g,
                                   const level_map *m, grammar_builder *b)
{
    const int *off = g->sub_offset;
    for (int i = 0; i < src->nbinary; i++) {
        const grammar_binary *r = &src->binary[i];
        int np = g->nsub[r->parent], nl = m->nsub[r->left], nr = m->nsub[r->right],
            npk = m->nsub[r->parent];
        size_t cells = (size_t)nl * nr * npk;
        double *t = calloc(cells ? cells : 1, sizeof *t);
        if (!t)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        const int *tl = m->to_sub + off[r->left], *tr = m->to_sub + off[r->right],
                  *tp = m->to_sub + off[r->parent];
        const double *cond = m->cond + off[r->parent];
        for (int row = 0; row < r->nrow; row++) {
            const double *v = r->prob + (size_t)row * np;
            double *dst = t + ((size_t)tl[r->row_l[row]] * nr + tr[r->row_r[row]]) * npk;
            for (int p = 0; p < np; p++)
                dst[tp[p]] += cond[p] * v[p];
        }
        for (size_t x = 0; x < cells; x++)
            if (t[x] < CASCADE_RULE_PRUNE)
                t[x] = 0;
        cky_status st = builder_adopt_binary(b, r->parent, r->left, r->right, t);
        if (st)
            return st;
    }
    return CKY_OK;
}

/* The projected unaries of unaryRuleMap, in its order (then closed by cascade_unary.c). */
static cky_status project_unaries(const cascade_src *src, const grammar *g, const level_map *m,
                                  cascade_unary *out)
{
    const int *off = g->sub_offset;
    for (int i = 0; i < src->nmapped; i++) {
        const cascade_unary *r = &src->mapped[i];
        int np = g->nsub[r->parent], npk = m->nsub[r->parent];
        size_t cells = (size_t)m->nsub[r->child] * npk;
        out[i] = (cascade_unary){r->parent, r->child, calloc(cells ? cells : 1, sizeof(double))};
        if (!out[i].prob)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        const int *tc = m->to_sub + off[r->child], *tp = m->to_sub + off[r->parent];
        const double *cond = m->cond + off[r->parent];
        for (int c = 0; c < g->nsub[r->child]; c++)
            for (int p = 0; p < np; p++)
                out[i].prob[(size_t)tc[c] * npk + tp[p]] += cond[p] * r->prob[(size_t)c * np + p];
    }
    return CKY_OK;
}

/* The grammar of one level: symbols, projected binaries, closed Viterbi unaries, lexicon. */
static cky_status build_level(const cascade_src *src, const grammar *g, const level_map *m,
                              grammar **out)
{
    grammar_builder *b = builder_new();
    cascade_unary *u = calloc((size_t)(src->nmapped ? src->nmapped : 1), sizeof *u);
    grammar_lexicon *lex = NULL;
    cky_status st = CKY_OK;
    if (!b || !u)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int s = 0; !st && s < g->nsym; s++)
        st = builder_add_symbol(b, g->name[s], m->nsub[s], g->phrasal[s]);
    if (!st)
        st = project_binaries(src, g, m, b);
    if (!st)
        st = project_unaries(src, g, m, u);
    if (!st)
        st = cascade_close_unaries(g->nsym, m->nsub, u, src->nmapped, b);
    for (int i = 0; u && i < src->nmapped; i++)
        free(u[i].prob);
    free(u);
    if (!st)
        st = lexicon_berkeley_project(g, m->nsub, m->to_sub, m->cond, CASCADE_RULE_PRUNE, &lex);
    if (st) {
        builder_free(b);
        return st;
    }
    return builder_finish(b, lex, g->source, out);
}

/* ---- the cascade ---- */

static int level_count(const grammar *g)
{
    int max = 1;
    for (int s = 0; s < g->nsym; s++)
        if (g->nsub[s] > max)
            max = g->nsub[s];
    return (int)ceil(log((double)max) / log(2.0)); /* the jar's nLevels */
}

cky_status cascade_build(const cascade_src *src, const grammar *fine, grammar_cascade **out)
{
    *out = NULL;
    int n = level_count(fine);
    if (!src->tree || n < 1)
        return CKY_OK;
    grammar_cascade *c = calloc(1, sizeof *c);
    double *ec = NULL;
    if (!c || !(c->level = calloc((size_t)n, sizeof *c->level)) ||
        !(c->lchild = calloc((size_t)n, sizeof *c->lchild)) ||
        !(c->rchild = calloc((size_t)n, sizeof *c->rchild))) {
        grammar_cascade_free(c);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    c->nlevel = n;
    cky_status st = expected_counts(src, fine, &ec);
    for (int k = 0; k < n && !st; k++) {
        level_map m = {0};
        st = level_mapping(src, fine, ec, k, &m);
        if (!st)
            st = build_level(src, fine, &m, &c->level[k]);
        level_map_free(&m);
    }
    for (int k = 1; k < n && !st; k++) {
        const grammar *lg = c->level[k];
        const int *next = k + 1 < n ? c->level[k + 1]->nsub : fine->nsub;
        c->lchild[k] = malloc((size_t)lg->nsub_total * sizeof(int));
        c->rchild[k] = malloc((size_t)lg->nsub_total * sizeof(int));
        if (!c->lchild[k] || !c->rchild[k])
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        else
            st = child_maps(src, lg, k, next, c->lchild[k], c->rchild[k]);
    }
    free(ec);
    if (st) {
        grammar_cascade_free(c);
        return cky_fail(st, "%s: the coarse-to-fine cascade: %s", fine->source,
                        cky_last_error());
    }
    *out = c;
    return CKY_OK;
}
