/* viterbi: exact (Algorithm 1) and Berkeley-compatible best-tree extraction (see viterbi.h). */
#include "viterbi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/jdouble.h"

/* ---- exact extraction ---------------------------------------------------------------- */

/* The substate under the closed unary of (sym, sub) over cell (i, j): identity when the
 * post-unary score equals the pre-unary one, else the matching rule with the smallest
 * global child substate id. Returns 0 if nothing matches (a broken chart). */
static int best_unary(const grammar *g, const chart *c, int i, int j, int sym, int sub,
                      int *bot_sym, int *bot_sub)
{
    const double *pre = chart_pre(c, i, j), *post = chart_post(c, i, j);
    double target = post[g->sub_offset[sym] + sub];
    if (pre[g->sub_offset[sym] + sub] == target) {
        *bot_sym = sym;
        *bot_sub = sub;
        return 1;
    }
    int best = -1;
    int np = g->nsub[sym];
    for (int u = g->unary_first[sym]; u < g->unary_first[sym + 1]; u++) {
        const grammar_unary *r = &g->unary[u];
        int off = g->sub_offset[r->child];
        for (int ci = 0; ci < g->nsub[r->child]; ci++) {
            if (best >= 0 && off + ci >= best)
                break;
            if (chart_unary(c->mode, r->score[(size_t)ci * np + sub], pre[off + ci]) == target)
                best = off + ci;
        }
    }
    if (best < 0)
        return 0;
    for (int s = 0; s < g->nsym; s++) {
        if (best < g->sub_offset[s] + g->nsub[s]) {
            *bot_sym = s;
            *bot_sub = best - g->sub_offset[s];
            return 1;
        }
    }
    return 0;
}

/* The best binary derivation of (sym, sub) over (i, j) by the tie-break of viterbi.h:
 * split k, then the global left and right substate ids. Returns 0 if nothing matches. */
static int best_binary(const grammar *g, const chart *c, int i, int j, int sym, int sub,
                       int *split, int *lsym, int *lsub, int *rsym, int *rsub)
{
    double target = chart_pre(c, i, j)[g->sub_offset[sym] + sub];
    int np = g->nsub[sym];
    for (int k = i + 1; k < j; k++) {
        const double *left = chart_post(c, i, k), *right = chart_post(c, k, j);
        int best_l = -1, best_r = -1, bl = 0, br = 0;
        for (int b = g->binary_first[sym]; b < g->binary_first[sym + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            int loff = g->sub_offset[r->left], roff = g->sub_offset[r->right];
            for (int row = 0; row < r->nrow; row++) {
                int lg = loff + r->row_l[row], rg = roff + r->row_r[row];
                if (best_l >= 0 && (lg > best_l || (lg == best_l && rg >= best_r)))
                    continue;
                double v = chart_binary(c->mode, r->score[(size_t)row * np + sub], left[lg],
                                        right[rg]);
                if (v == target) {
                    best_l = lg;
                    best_r = rg;
                    bl = b;
                    br = row;
                }
            }
        }
        if (best_l >= 0) {
            const grammar_binary *r = &g->binary[bl];
            *split = k;
            *lsym = r->left;
            *lsub = r->row_l[br];
            *rsym = r->right;
            *rsub = r->row_r[br];
            return 1;
        }
    }
    return 0;
}

cky_status viterbi_extract_array(const grammar *g, const chart *c, viterbi_node *nodes)
{
    int n = c->n;
    if (chart_post(c, 0, n)[g->sub_offset[0]] == -INFINITY)
        return cky_fail(CKY_ERR_ARG, "the sentence has no parse");
    nodes[0] = (viterbi_node){n, 0, 0, 0, 0};
    int i = 0; /* leftmost word of the current node */
    for (int p = 0; p < 2 * n - 1; p++) {
        viterbi_node *t = &nodes[p];
        int j = i + t->width;
        if (!best_unary(g, c, i, j, t->top_sym, t->top_sub, &t->bot_sym, &t->bot_sub))
            return cky_fail(CKY_ERR_FORMAT, "viterbi: no unary derivation matches %s_%d over "
                            "[%d, %d) (chart is inconsistent)", g->name[t->top_sym],
                            t->top_sub, i, j);
        if (t->width == 1) {
            i++;
            continue;
        }
        int k, ls, lsub, rs, rsub;
        if (!best_binary(g, c, i, j, t->bot_sym, t->bot_sub, &k, &ls, &lsub, &rs, &rsub))
            return cky_fail(CKY_ERR_FORMAT, "viterbi: no binary derivation matches %s_%d over "
                            "[%d, %d) (chart is inconsistent)", g->name[t->bot_sym],
                            t->bot_sub, i, j);
        nodes[p + 1] = (viterbi_node){k - i, ls, lsub, ls, lsub};
        nodes[p + 2 * (k - i)] = (viterbi_node){j - k, rs, rsub, rs, rsub};
    }
    return CKY_OK;
}

static tree *new_node(const char *label, tree **all_ok)
{
    tree *t = tree_new(label);
    if (!t)
        *all_ok = NULL;
    return t;
}

/* Build the subtree of node p; *next receives the index after it, *word the next word. */
static tree *array_subtree(const grammar *g, const viterbi_node *nodes, int p,
                           char *const *words, int *word, int *next, tree **ok)
{
    const viterbi_node *t = &nodes[p];
    tree *top = new_node(g->name[t->top_sym], ok), *bot = top;
    if (!top)
        return NULL;
    if (t->bot_sym != t->top_sym) {
        bot = new_node(g->name[t->bot_sym], ok);
        if (!bot)
            return top;
        tree_add_child(top, bot);
    }
    if (t->width == 1) {
        tree *leaf = new_node(words[(*word)++], ok);
        if (leaf)
            tree_add_child(bot, leaf);
        *next = p + 1;
        return top;
    }
    int after_left;
    tree *left = array_subtree(g, nodes, p + 1, words, word, &after_left, ok);
    if (left)
        tree_add_child(bot, left);
    tree *right = array_subtree(g, nodes, after_left, words, word, next, ok);
    if (right)
        tree_add_child(bot, right);
    return top;
}

cky_status viterbi_array_to_tree(const grammar *g, const viterbi_node *nodes, int n,
                                 char *const *words, tree **out)
{
    tree *ok = (tree *)1;
    int word = 0, next = 0;
    tree *t = array_subtree(g, nodes, 0, words, &word, &next, &ok);
    if (!ok || !t) {
        tree_free(t);
        return cky_fail(CKY_ERR_NOMEM, "out of memory building a tree");
    }
    if (next != 2 * n - 1 || word != n) {
        tree_free(t);
        return cky_fail(CKY_ERR_FORMAT, "viterbi: malformed extraction array");
    }
    *out = t;
    return CKY_OK;
}

/* ---- Berkeley back-trace ------------------------------------------------------------- */

static int berkeley_matches(double x, double y)
{
    return fabs(x - y) / (fabs(x) + fabs(y) + 1e-10) < 1e-5;
}

/* Depth guard: a stacked unary chain can only recurse through distinct symbols in practice,
 * but a cycle P -> C -> P within tolerance must not overflow the stack. */
#define BERKELEY_MAX_UNARY_DEPTH 64

typedef struct berkeley_walk {
    const grammar *g;
    const chart *c;
    char *const *words;
    const chart_mask *mask;
    int labels; /* VITERBI_LABEL_* */
    cky_status st;
} berkeley_walk;

/* The label of (sym, sub) with inside score `score`: the symbol's name, "-sub" and " score"
 * as w->labels asks (the jar's -substates, -scores), into buf. */
static const char *berkeley_label(const berkeley_walk *w, int sym, int sub, double score,
                                  char *buf, size_t size)
{
    if (!w->labels)
        return w->g->name[sym];
    size_t at = (size_t)snprintf(buf, size, "%s", w->g->name[sym]);
    if ((w->labels & VITERBI_LABEL_SUBSTATES) && at < size)
        at += (size_t)snprintf(buf + at, size - at, "-%d", sub);
    if ((w->labels & VITERBI_LABEL_SCORES) && at + 1 < size) {
        buf[at++] = ' ';
        jdouble_format(score, buf + at, size - at);
    }
    return buf;
}

static tree *berkeley_extract(berkeley_walk *w, int sym, int sub, int i, int j, int depth);

static tree *berkeley_leaf(const char *tag, const char *word, cky_status *st)
{
    tree *t = tree_new(tag), *w = tree_new(word);
    if (!t || !w) {
        tree_free(t);
        tree_free(w);
        *st = cky_fail(CKY_ERR_NOMEM, "out of memory building a tree");
        return NULL;
    }
    tree_add_child(t, w);
    return t;
}

/* A node over one or two subtrees; on an earlier failure (*st set) frees them instead. */
static tree *berkeley_node(const char *label, tree *a, tree *b, cky_status *st)
{
    tree *t = *st ? NULL : tree_new(label);
    if (!t) {
        tree_free(a);
        tree_free(b);
        if (!*st)
            *st = cky_fail(CKY_ERR_NOMEM, "out of memory building a tree");
        return NULL;
    }
    tree_add_child(t, a);
    if (b)
        tree_add_child(t, b);
    return t;
}

static tree *berkeley_extract(berkeley_walk *w, int sym, int sub, int i, int j, int depth)
{
    const grammar *g = w->g;
    const chart *c = w->c;
    const chart_mask *mask = w->mask;
    cky_status *st = &w->st;
    char label[512], label2[512];
    int np = g->nsub[sym];
    double best = chart_post(c, i, j)[g->sub_offset[sym] + sub];
    if (j - i == 1) {
        if (!g->phrasal[sym])
            return berkeley_leaf(berkeley_label(w, sym, sub, best, label, sizeof label),
                                 w->words[i], st);
        /* best closed unary to a POS tag, ties to the last candidate; no check against best */
        const double *cell = chart_post(c, i, j);
        int best_sym = -1, best_sub = -1;
        double best_v = -INFINITY, child = best;
        for (int u = g->unary_first[sym]; u < g->unary_first[sym + 1]; u++) {
            const grammar_unary *r = &g->unary[u];
            if (g->phrasal[r->child] || (mask && !chart_mask_state(mask, i, j, r->child)))
                continue;
            for (int ci = 0; ci < g->nsub[r->child]; ci++) {
                double v = chart_unary(c->mode, r->score[(size_t)ci * np + sub],
                                       cell[g->sub_offset[r->child] + ci]);
                if (v >= best_v) {
                    best_v = v;
                    best_sym = r->child;
                    best_sub = ci;
                    child = cell[g->sub_offset[r->child] + ci];
                }
            }
        }
        if (best_sym < 0) {
            *st = cky_fail(CKY_ERR_FORMAT, "viterbi: %s has no unary to a tag", g->name[sym]);
            return NULL;
        }
        tree *leaf = berkeley_leaf(berkeley_label(w, best_sym, best_sub, child, label2,
                                                  sizeof label2), w->words[i], st);
        return berkeley_node(berkeley_label(w, sym, sub, best, label, sizeof label), leaf,
                             NULL, st);
    }
    for (int k = i + 1; k < j; k++) {
        const double *left = chart_post(c, i, k), *right = chart_post(c, k, j);
        for (int b = g->binary_first[sym]; b < g->binary_first[sym + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            int loff = g->sub_offset[r->left], roff = g->sub_offset[r->right];
            for (int row = 0; row < r->nrow; row++) {
                int l = r->row_l[row], rr = r->row_r[row];
                double v = chart_binary(c->mode, r->score[(size_t)row * np + sub],
                                        left[loff + l], right[roff + rr]);
                if (!berkeley_matches(v, best))
                    continue;
                tree *lt = berkeley_extract(w, r->left, l, i, k, 0);
                tree *rt = lt ? berkeley_extract(w, r->right, rr, k, j, 0) : NULL;
                return berkeley_node(berkeley_label(w, sym, sub, best, label, sizeof label),
                                     lt, rt, st);
            }
        }
    }
    if (depth < BERKELEY_MAX_UNARY_DEPTH) {
        const double *cell = chart_post(c, i, j);
        for (int u = g->unary_first[sym]; u < g->unary_first[sym + 1]; u++) {
            const grammar_unary *r = &g->unary[u];
            for (int ci = 0; ci < g->nsub[r->child]; ci++) {
                double v = chart_unary(c->mode, r->score[(size_t)ci * np + sub],
                                       cell[g->sub_offset[r->child] + ci]);
                if (!berkeley_matches(v, best))
                    continue;
                tree *kid = berkeley_extract(w, r->child, ci, i, j, depth + 1);
                return berkeley_node(berkeley_label(w, sym, sub, best, label, sizeof label),
                                     kid, NULL, st);
            }
        }
    }
    *st = cky_fail(CKY_ERR_FORMAT, "viterbi: could not find the optimal way to build %s_%d "
                   "over [%d, %d)", g->name[sym], sub, i, j);
    return NULL;
}

cky_status viterbi_extract(const grammar *g, const chart *c, char *const *words,
                           viterbi_mode mode, tree **out)
{
    return viterbi_extract_masked(g, c, words, mode, NULL, out);
}

cky_status viterbi_extract_masked(const grammar *g, const chart *c, char *const *words,
                                  viterbi_mode mode, const chart_mask *mask, tree **out)
{
    int n = c->n;
    *out = NULL;
    if (chart_post(c, 0, n)[g->sub_offset[0]] == -INFINITY)
        return CKY_OK;
    if (mode == VITERBI_BERKELEY)
        return viterbi_extract_labeled(g, c, words, mask, 0, out);
    viterbi_node *nodes = malloc((size_t)(2 * n - 1) * sizeof *nodes);
    if (!nodes)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    cky_status st = viterbi_extract_array(g, c, nodes);
    if (!st)
        st = viterbi_array_to_tree(g, nodes, n, words, out);
    free(nodes);
    return st;
}

cky_status viterbi_extract_labeled(const grammar *g, const chart *c, char *const *words,
                                   const chart_mask *mask, int labels, tree **out)
{
    *out = NULL;
    if (chart_post(c, 0, c->n)[g->sub_offset[0]] == -INFINITY)
        return CKY_OK;
    berkeley_walk w = {g, c, words, mask, labels, CKY_OK};
    *out = berkeley_extract(&w, 0, 0, 0, c->n, 0);
    return w.st;
}
