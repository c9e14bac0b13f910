/* maxrule_kbest: the Berkeley parser's -kbest lists (CoarseToFineNBestParser, LazyList,
 * HyperEdge and its binary-heap PriorityQueue), ported step for step so that the lists are
 * the jar's, ties and quirks included, over the max-c scores of maxrule_maxc.c.
 *
 * Max-c with lists: every allowed symbol of a cell has a list of derivations before its
 * unaries (binary edges; over one word, its lexical edge) and one after them (closed sum
 * unaries over a child's best, and the "self" edge P -> P over P's own best). A list is a
 * sorted prefix and a fringe, a max-heap on the edges' scores. Over spans of more than two
 * words every binary candidate goes into the fringe; over two words only the best (the first
 * of the largest, in the jar's loop order), over one word only the best unary. getKbest(k)
 * takes the fringe's top into the sorted prefix when k is the prefix's length, skipping an
 * edge that differsInPOSatMost one already there (HyperEdge's test: the same split and
 * children but a POS tag, literally as the jar has it).
 *
 * Extraction of the i-th tree (extractBestMaxRuleParse1) walks the root's i-th edge down;
 * after a subtree is built, each edge of it not yet expanded puts ONE successor into its
 * list's fringe (updateConstrainedMaxCScores): a binary edge the better of (left child's
 * next, right child's next), ties to the right, a unary one its child's next. Successors
 * score children plus the rule's log posterior, without the scaled passes' scaling factor,
 * as the jar's do. Trees come out as the 1-best's do (intermediate symbols of closed unaries,
 * then tree_unannotate). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "maxrule_internal.h"

/* HyperEdge. child >= 0 for a unary edge (left, right -1); a lexical edge is a binary one
 * with left = right = -1 and split = start. */
typedef struct edge {
    int parent, left, right, child;
    int unary;
    double score, rule;
    int start, split, end;
    int pbest, lbest, rbest, cbest;
    int expanded;
} edge;

/* LazyList: sorted[0 .. nsorted) edges (indices into the edge pool); the fringe a binary
 * max-heap of edge indices and priorities, as edu.berkeley.nlp.util.PriorityQueue. */
typedef struct list {
    int *sorted, nsorted, capsorted;
    int *heap;
    double *prio;
    int nheap, capheap;
} list;

typedef struct kb {
    const mr_chart *c;
    const grammar *g;
    edge *e;
    int ne, cape;
    list *l;
    int nl, capl;
    int *before, *after; /* [cells][nsym]: the list of a symbol (-1: none, the jar's null) */
    cky_status st;       /* the first failure (out of memory) */
} kb;

static void *grow(kb *b, void *p, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return p;
    int n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(p, (size_t)n * size);
    if (!q) {
        if (!b->st)
            b->st = cky_fail(CKY_ERR_NOMEM, "maxrule: out of memory for the k-best lists");
        return NULL;
    }
    *cap = n;
    return q;
}

static int new_edge(kb *b, edge e)
{
    edge *p = grow(b, b->e, &b->cape, b->ne + 1, sizeof *p);
    if (!p)
        return -1;
    b->e = p;
    b->e[b->ne] = e;
    return b->ne++;
}

static edge binary_edge(int P, int L, int R, int pbest, int lbest, int rbest, int start,
                        int split, int end, double score, double rule)
{
    return (edge){.parent = P, .left = L, .right = R, .child = -1, .pbest = pbest,
                  .lbest = lbest, .rbest = rbest, .start = start, .split = split, .end = end,
                  .score = score, .rule = rule};
}

/* The unary constructor leaves split 0, which differsInPOSatMost compares. */
static edge unary_edge(int P, int C, int pbest, int cbest, int start, int end, double score,
                       double rule)
{
    return (edge){.parent = P, .child = C, .left = -1, .right = -1, .pbest = pbest,
                  .cbest = cbest, .start = start, .end = end, .score = score, .rule = rule,
                  .unary = 1};
}

/* A new empty list for (cell, sym) in the table `which` (new LazyList). */
static int new_list(kb *b, int *which, size_t at)
{
    list *p = grow(b, b->l, &b->capl, b->nl + 1, sizeof *p);
    if (!p)
        return -1;
    b->l = p;
    memset(&b->l[b->nl], 0, sizeof *b->l);
    which[at] = b->nl;
    return b->nl++;
}

static void heap_swap(list *l, int a, int c)
{
    double tp = l->prio[a];
    int te = l->heap[a];
    l->prio[a] = l->prio[c];
    l->heap[a] = l->heap[c];
    l->prio[c] = tp;
    l->heap[c] = te;
}

static void heapify_up(list *l, int loc)
{
    while (loc > 0) {
        int parent = (loc - 1) / 2;
        if (!(l->prio[loc] > l->prio[parent]))
            return;
        heap_swap(l, loc, parent);
        loc = parent;
    }
}

static void heapify_down(list *l, int loc)
{
    for (;;) {
        int max = loc, left = 2 * loc + 1, right = 2 * loc + 2;
        if (left < l->nheap) {
            double p = l->prio[loc], lp = l->prio[left];
            if (lp > p)
                max = left;
            if (right < l->nheap) {
                double rp = l->prio[right];
                if (rp > p && rp > lp)
                    max = right;
            }
        }
        if (max == loc)
            return;
        heap_swap(l, loc, max);
        loc = max;
    }
}

/* addToFringe. */
static void add_to_fringe(kb *b, int li, int ei)
{
    if (ei < 0)
        return;
    list *l = &b->l[li];
    int cap = l->capheap;
    int *h = grow(b, l->heap, &cap, l->nheap + 1, sizeof *h);
    if (!h)
        return;
    l->heap = h;
    int cap2 = l->capheap;
    double *pr = grow(b, l->prio, &cap2, l->nheap + 1, sizeof *pr);
    if (!pr)
        return;
    l->prio = pr;
    l->capheap = cap;
    l->heap[l->nheap] = ei;
    l->prio[l->nheap] = b->e[ei].score;
    heapify_up(l, l->nheap);
    l->nheap++;
}

/* The fringe's top, removed (next()). */
static int heap_pop(list *l)
{
    int top = l->heap[0];
    heap_swap(l, 0, l->nheap - 1);
    l->nheap--;
    heapify_down(l, 0);
    return top;
}

/* HyperEdge.differsInPOSatMost(other) with `this` = a (already in the list). */
static int differs_in_pos_at_most(const kb *b, const edge *a, const edge *o)
{
    const unsigned char *tag = b->g->phrasal; /* the jar's isGrammarTag */
    if (a->split != o->split)
        return 0;
    if (a->unary)
        return a->cbest == o->cbest && o->child == a->child;
    if (a->left < 0 || o->left < 0) /* lexical edges: one per list, never compared */
        return 0;
    if (a->end - a->split == 1 && a->left == o->left && a->lbest == o->lbest &&
        !tag[a->right] && !tag[o->right])
        return 1;
    if (a->split - a->start == 1 && a->right == o->right && a->rbest == o->rbest)
        return 1;
    if (a->left == o->left && a->right == o->right && a->rbest == o->rbest &&
        a->lbest == o->lbest && !tag[a->left] && !tag[o->left])
        return 1;
    return 0;
}

/* expandNextBest. */
static void expand_next_best(kb *b, int li)
{
    list *l = &b->l[li];
    while (l->nheap > 0) {
        int ei = heap_pop(l);
        int fresh = 1;
        for (int k = 0; k < l->nsorted && fresh; k++)
            if (differs_in_pos_at_most(b, &b->e[l->sorted[k]], &b->e[ei]))
                fresh = 0;
        if (fresh) {
            int *s = grow(b, l->sorted, &l->capsorted, l->nsorted + 1, sizeof *s);
            if (!s)
                return;
            l->sorted = s;
            l->sorted[l->nsorted++] = ei;
            return;
        }
    }
}

/* getKbest(k): the k-th edge of list li, or -1. (k > nsorted never happens here: the jar
 * would print "Don't have this element yet".) */
static int get_kbest(kb *b, int li, int k)
{
    if (li < 0 || k > b->l[li].nsorted)
        return -1;
    if (k == b->l[li].nsorted)
        expand_next_best(b, li);
    if (k == b->l[li].nsorted)
        return -1;
    return b->l[li].sorted[k];
}

static size_t at_of(const kb *b, int i, int j, int sym)
{
    return mr_cell(b->c, i, j) * (size_t)b->c->nsym + (size_t)sym;
}

/* The score of the best edge of a list, -inf for none (or no list). */
static double best_score(kb *b, int li)
{
    int ei = get_kbest(b, li, 0);
    return ei < 0 ? -INFINITY : b->e[ei].score;
}

/* ---- doConstrainedMaxCScores of CoarseToFineNBestParser ---- */

static void lists_binary(kb *b, int i, int j, double norm, int root_scale)
{
    const mr_chart *c = b->c;
    const grammar *g = b->g;
    int d = j - i;
    for (int P = 0; P < g->nsym && !b->st; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        int li = new_list(b, b->before, at_of(b, i, j, P));
        if (li < 0)
            return;
        double best = -INFINITY;
        int best_edge = -1;
        for (int r = g->binary_first[P]; r < g->binary_first[P + 1]; r++) {
            const grammar_binary *br = &g->binary[r];
            int kmin, kmax;
            mr_splits(c, br, i, j, &kmin, &kmax);
            for (int k = kmin; k <= kmax; k++) {
                if (!mr_allowed(c, i, k, br->left) || !mr_allowed(c, k, j, br->right))
                    continue;
                double ls = best_score(b, b->after[at_of(b, i, k, br->left)]);
                double rs = best_score(b, b->after[at_of(b, k, j, br->right)]);
                if (ls == -INFINITY || rs == -INFINITY)
                    continue;
                double sf = 0.0;
                if (c->scaled)
                    sf = mr_log_scale(c, mr_jsub(mr_jadd(mr_jadd(mr_oscale_of(c, i, j, P),
                                                                 mr_iscale_of(c, i, k, br->left)),
                                                          mr_iscale_of(c, k, j, br->right)),
                                                  root_scale));
                double gs = ls + sf + rs;
                if (gs == -INFINITY)
                    continue;
                double post = mr_binary_posterior(c, i, j, P, r, k, norm);
                if (post == 0)
                    continue;
                double rule = log(post);
                gs += rule;
                if (gs > -INFINITY) {
                    int ei = new_edge(b, binary_edge(P, br->left, br->right, 0, 0, 0, i, k, j,
                                                     gs, rule));
                    if (ei < 0)
                        return;
                    if (gs > best) {
                        best = gs;
                        best_edge = ei;
                    }
                    if (d > 2)
                        add_to_fringe(b, li, ei);
                }
            }
        }
        if (d == 2 && best_edge >= 0)
            add_to_fringe(b, li, best_edge);
    }
}

static void lists_lexical(kb *b, int i, double norm, int root_scale)
{
    const mr_chart *c = b->c;
    const grammar *g = b->g;
    const double *po = mr_out(c, i, i + 1), *lex = c->lex + (size_t)i * c->nsub;
    for (int t = 0; t < g->nsym && !b->st; t++) {
        if (!mr_allowed(c, i, i + 1, t))
            continue;
        int li = new_list(b, b->before, at_of(b, i, i + 1, t));
        if (li < 0 || g->phrasal[t])
            continue;
        double sum = 0;
        for (int s = g->sub_offset[t]; s < g->sub_offset[t] + g->nsub[t]; s++)
            sum += (po[s] * lex[s]) / norm;
        double sf = 0.0;
        if (c->scaled)
            sf = mr_log_scale(c, mr_jsub(mr_oscale_of(c, i, i + 1, t), root_scale));
        double rule = log(sum);
        add_to_fringe(b, li, new_edge(b, binary_edge(t, -1, -1, 0, 0, 0, i, i, i + 1, rule + sf,
                                                     rule)));
    }
}

static void lists_unary(kb *b, int i, int j, double norm, int root_scale)
{
    const mr_chart *c = b->c;
    const grammar *g = b->g;
    const grammar_sum_closure *s = g->sum;
    int d = j - i;
    for (int P = 0; P < g->nsym && !b->st; P++) {
        if (!mr_allowed(c, i, j, P))
            continue;
        int li = new_list(b, b->after, at_of(b, i, j, P));
        if (li < 0)
            return;
        int best_edge = -1;
        double best = -INFINITY;
        for (int k = s->first[P]; k < s->first[P + 1]; k++) {
            const grammar_sum_unary *u = &s->rule[k];
            int C = u->child;
            if (C == P)
                continue;
            double child = best_score(b, b->before[at_of(b, i, j, C)]);
            if (child == -INFINITY)
                continue;
            double sf = 0.0;
            if (c->scaled)
                sf = mr_log_scale(c, mr_jsub(mr_jadd(mr_oscale_of(c, i, j, P),
                                                     mr_iscale_of(c, i, j, C)),
                                              root_scale));
            double gs = sf + child;
            double post = mr_unary_posterior(c, i, j, u, norm);
            if (post == 0)
                continue;
            double rule = log(post);
            gs += rule;
            if (gs > -INFINITY) {
                int ei = new_edge(b, unary_edge(P, C, 0, 0, i, j, gs, rule));
                if (ei < 0)
                    return;
                if (gs > best) {
                    best = gs;
                    best_edge = ei;
                }
                if (d > 1)
                    add_to_fringe(b, li, ei);
            }
        }
        if (d == 1 && best_edge >= 0)
            add_to_fringe(b, li, best_edge);
        int self = get_kbest(b, b->before[at_of(b, i, j, P)], 0);
        if (self >= 0)
            add_to_fringe(b, li, new_edge(b, unary_edge(P, P, 0, 0, i, j, b->e[self].score, 0)));
    }
}

static void lists_build(kb *b)
{
    const mr_chart *c = b->c;
    double norm = mr_in(c, 0, c->n)[b->g->sub_offset[0]];
    int root_scale = c->scaled ? mr_iscale_of(c, 0, c->n, 0) : 0;
    for (int d = 1; d <= c->n && !b->st; d++)
        for (int i = 0; i + d <= c->n && !b->st; i++) {
            if (d > 1)
                lists_binary(b, i, i + d, norm, root_scale);
            else
                lists_lexical(b, i, norm, root_scale);
            lists_unary(b, i, i + d, norm, root_scale);
        }
}

/* ---- extraction ---- */

/* updateConstrainedMaxCScores: one successor of edge ei into its list's fringe. */
static void update(kb *b, int ei)
{
    edge p = b->e[ei]; /* a copy: new edges may move the pool */
    if (p.expanded)
        return;
    int subopt = p.pbest + 1;
    if (!p.unary) {
        int nl = -1, nr = -1;
        if (p.split - p.start > 1) {
            int lbest = p.lbest + 1;
            int l = get_kbest(b, b->after[at_of(b, p.start, p.split, p.left)], lbest);
            if (l >= 0) {
                int r = get_kbest(b, b->after[at_of(b, p.split, p.end, p.right)], p.rbest);
                if (r < 0)
                    return;
                double sc = b->e[l].score + b->e[r].score + p.rule;
                nl = new_edge(b, binary_edge(p.parent, p.left, p.right, subopt, lbest, p.rbest,
                                             p.start, p.split, p.end, sc, p.rule));
            }
        }
        if (p.end - p.split > 1) {
            int rbest = p.rbest + 1;
            int r = get_kbest(b, b->after[at_of(b, p.split, p.end, p.right)], rbest);
            if (r >= 0) {
                int l = get_kbest(b, b->after[at_of(b, p.start, p.split, p.left)], p.lbest);
                if (l < 0)
                    return;
                double sc = b->e[l].score + b->e[r].score + p.rule;
                nr = new_edge(b, binary_edge(p.parent, p.left, p.right, subopt, p.lbest, rbest,
                                             p.start, p.split, p.end, sc, p.rule));
            }
        }
        int li = b->before[at_of(b, p.start, p.end, p.parent)];
        if (nl >= 0 && nr >= 0)
            add_to_fringe(b, li, b->e[nl].score > b->e[nr].score ? nl : nr);
        else if (nl >= 0 || nr >= 0)
            add_to_fringe(b, li, nl >= 0 ? nl : nr);
        b->e[ei].expanded = 1;
    } else if (p.end - p.start > 1) {
        int cbest = p.cbest + 1;
        int ch = get_kbest(b, b->before[at_of(b, p.start, p.end, p.child)], cbest);
        if (ch >= 0) {
            double sc = b->e[ch].score + p.rule;
            add_to_fringe(b, b->after[at_of(b, p.start, p.end, p.parent)],
                          new_edge(b, unary_edge(p.parent, p.child, subopt, cbest, p.start,
                                                 p.end, sc, p.rule)));
        }
        b->e[ei].expanded = 1;
    }
}

static tree *node(kb *b, const char *label, tree *kid)
{
    tree *t = b->st ? NULL : tree_new(label);
    if (!t) {
        tree_free(kid);
        if (!b->st)
            b->st = cky_fail(CKY_ERR_NOMEM, "out of memory building a tree");
        return NULL;
    }
    if (kid)
        tree_add_child(t, kid);
    return t;
}

/* extractBestMaxRuleParse1(start, end, state, subopt): NULL with b->st CKY_OK when the list
 * has no subopt-th edge. */
static tree *extract(kb *b, int i, int j, int state, int subopt, char *const *words)
{
    const grammar *g = b->g;
    if (b->st)
        return NULL;
    int pi = get_kbest(b, b->after[at_of(b, i, j, state)], subopt);
    if (pi < 0)
        return NULL;
    int cstate = b->e[pi].child;
    int ci = get_kbest(b, b->before[at_of(b, i, j, cstate)], b->e[pi].cbest);
    if (ci < 0) {
        if (!b->st)
            b->st = cky_fail(CKY_ERR_FORMAT, "maxrule: k-best: %s over [%d, %d) lost its "
                             "derivation", g->name[cstate], i, j);
        return NULL;
    }
    tree *t = node(b, g->name[cstate], NULL);
    if (!t)
        return NULL;
    if (j - i == 1) {
        tree *w = node(b, words[i], NULL);
        if (w)
            tree_add_child(t, w);
    } else {
        edge ce = b->e[ci];
        tree *left = extract(b, i, ce.split, ce.left, ce.lbest, words);
        tree *right = left ? extract(b, ce.split, j, ce.right, ce.rbest, words) : NULL;
        if (!left || !right) {
            tree_free(left);
            tree_free(t);
            if (!b->st)
                b->st = cky_fail(CKY_ERR_FORMAT, "maxrule: k-best: a child over [%d, %d) lost "
                                 "its derivation", i, j);
            return NULL;
        }
        tree_add_child(t, left);
        tree_add_child(t, right);
    }
    update(b, ci);
    if (cstate != state) {
        int mid = g->sum->path[(size_t)state * g->nsym + cstate];
        if (mid > 0)
            t = node(b, g->name[mid], t);
        t = node(b, g->name[state], t);
    }
    update(b, pi);
    if (b->st) {
        tree_free(t);
        return NULL;
    }
    return t;
}

static void kb_release(kb *b)
{
    for (int k = 0; k < b->nl; k++) {
        free(b->l[k].sorted);
        free(b->l[k].heap);
        free(b->l[k].prio);
    }
    free(b->l);
    free(b->e);
    free(b->before);
    free(b->after);
}

cky_status mr_kbest(const mr_chart *c, char *const *words, int k, maxrule_result *out)
{
    kb b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.g = c->g;
    size_t n = chart_ncells(c->n) * (size_t)c->nsym;
    b.before = malloc(n * sizeof *b.before);
    b.after = malloc(n * sizeof *b.after);
    if (!b.before || !b.after) {
        kb_release(&b);
        return cky_fail(CKY_ERR_NOMEM, "maxrule: out of memory for the k-best lists");
    }
    for (size_t x = 0; x < n; x++)
        b.before[x] = b.after[x] = -1;
    lists_build(&b);
    out->rest = calloc((size_t)(k > 1 ? k - 1 : 1), sizeof *out->rest);
    out->rest_score = calloc((size_t)(k > 1 ? k - 1 : 1), sizeof *out->rest_score);
    if (!out->rest || !out->rest_score)
        b.st = cky_fail(CKY_ERR_NOMEM, "maxrule: out of memory for the k-best lists");
    int root = b.after[at_of(&b, 0, c->n, 0)];
    for (int x = 0; x < k && !b.st && root >= 0; x++) {
        tree *t = extract(&b, 0, c->n, 0, x, words);
        if (!t)
            break;
        double score = b.e[get_kbest(&b, root, x)].score;
        t = tree_unannotate(t);
        if (x == 0) {
            out->tree = t;
            out->score = score;
        } else {
            out->rest[out->nrest] = t;
            out->rest_score[out->nrest++] = score;
        }
    }
    cky_status st = b.st;
    kb_release(&b);
    return st;
}
