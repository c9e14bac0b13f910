/* maxrule_tree: log P(T, w) of one given tree, as the Berkeley parser's
 * CoarseToFineMaxRuleParser.getLogLikelihood(tree) computes it (maxrule.h): the tree
 * binarized as the grammar was trained (TreeAnnotations.processTree(tree, 1, 0, RIGHT):
 * a node of more than two children X -> c1 ... cn becomes X -> @X(... c_{n-1}) cn, a
 * left-branching chain of @X nodes), its labels read as the grammar's symbols (a node
 * with one leaf child as a POS tag, any other as a phrasal symbol), then
 * ArrayParser.doInsideScores over it: linear inside scores per node, summed over the
 * substates in the jar's loop order, each node's vector rescaled by ScalingTools.scaleArray
 * (an integer exponent of base e^100), the raw unary rules (grammar_sum_closure.raw, the
 * jar's unaryRuleMap) and the pruned linear lexicon and binary rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../grammar/lexicon_berkeley.h"
#include "../../util/jmath.h"
#include "maxrule.h"
#include "maxrule_internal.h"

/* One node's inside vector (nsub of its symbol, malloc'ed) and its scale. */
typedef struct inside {
    int sym;
    double *v;
    int scale;
} inside;

typedef struct walk {
    const grammar *g;
    int word;         /* leaves seen so far: the next preterminal's position */
    double *lex;      /* [nsub_total] scratch for the lexicon */
    int unknown;      /* a label that is no symbol of the grammar */
    cky_status st;
} walk;

/* A node with one child, a leaf: a POS tag over its word. */
static int is_preterminal(const tree *t) { return t->child && !t->child->next && !t->child->child; }

/* The symbol of a label: a POS tag (phrasal 0) or a phrasal symbol; -1 if none. */
static int find_symbol(const grammar *g, const char *label, int phrasal)
{
    for (int s = 0; s < g->nsym; s++)
        if (g->phrasal[s] == phrasal && !strcmp(g->name[s], label))
            return s;
    return -1;
}

static int alloc_inside(walk *w, int sym, inside *out)
{
    out->sym = sym;
    out->scale = 0;
    out->v = calloc((size_t)w->g->nsub[sym], sizeof *out->v);
    if (!out->v && !w->st)
        w->st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    return out->v != NULL;
}

/* The binary step P -> L R (the rule's rows, left substate then right substate, each adding
 * rule * left * right to every parent substate), then scaleArray with the children's scales
 * added. L and R are released. */
static void binary_step(walk *w, int P, inside *L, inside *R, inside *out)
{
    const grammar *g = w->g;
    if (alloc_inside(w, P, out)) {
        int np = g->nsub[P];
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            if (r->left != L->sym || r->right != R->sym)
                continue;
            for (int k = 0; k < r->nrow; k++) {
                double lcs = L->v[r->row_l[k]], rcs = R->v[r->row_r[k]];
                if (lcs == 0 || rcs == 0)
                    continue;
                const double *rs = r->prob + (size_t)k * np;
                for (int i = 0; i < np; i++)
                    if (rs[i] != 0)
                        out->v[i] += rs[i] * lcs * rcs;
            }
            break;
        }
        out->scale = mr_scale_array(out->v, np, mr_jadd(L->scale, R->scale));
    }
    free(L->v);
    free(R->v);
}

static void score_node(walk *w, const tree *t, int sym, inside *out);

/* The inside vector of child t (its own symbol found from its label). */
static void score_child(walk *w, const tree *t, inside *out)
{
    out->v = NULL;
    int sym = find_symbol(w->g, t->label, !is_preterminal(t));
    if (sym < 0) {
        w->unknown = 1;
        sym = 0;
    }
    score_node(w, t, sym, out);
}

static void score_node(walk *w, const tree *t, int sym, inside *out)
{
    const grammar *g = w->g;
    out->v = NULL;
    if (w->st)
        return;
    if (is_preterminal(t)) {
        int loc = w->word++;
        cky_status st = lexicon_berkeley_score_linear(g, t->child->label, loc, 1, NULL, w->lex);
        if (st) {
            w->st = st;
            return;
        }
        if (alloc_inside(w, sym, out)) {
            memcpy(out->v, w->lex + g->sub_offset[sym], (size_t)g->nsub[sym] * sizeof *out->v);
            out->scale = mr_scale_array(out->v, g->nsub[sym], 0);
        }
        return;
    }
    int nkid = 0;
    for (const tree *k = t->child; k; k = k->next)
        nkid++;
    if (nkid == 1) {
        inside c;
        score_child(w, t->child, &c);
        if (!c.v)
            return;
        if (alloc_inside(w, sym, out)) {
            const grammar_sum_unary *u = grammar_raw_unary(g, sym, c.sym);
            int np = g->nsub[sym];
            for (int j = 0; u && j < g->nsub[c.sym]; j++) {
                double cs = c.v[j];
                if (cs == 0)
                    continue;
                for (int i = 0; i < np; i++) {
                    double rs = u->prob[(size_t)j * np + i];
                    if (rs != 0)
                        out->v[i] += rs * cs;
                }
            }
            out->scale = mr_scale_array(out->v, np, c.scale);
        }
        free(c.v);
        return;
    }
    /* two children, or more binarized to the right: X -> @X(@X(c1 c2) c3 ...) cn */
    int inter = sym;
    if (nkid > 2) {
        char name[512];
        snprintf(name, sizeof name, "@%s", g->name[sym]);
        if ((inter = find_symbol(g, name, 1)) < 0) {
            w->unknown = 1;
            inter = 0;
        }
    }
    const tree *k = t->child;
    inside acc, right;
    score_child(w, k, &acc);
    for (int m = 1; k->next && acc.v; m++) {
        k = k->next;
        score_child(w, k, &right);
        if (!right.v) {
            free(acc.v);
            acc.v = NULL;
            break;
        }
        inside up;
        binary_step(w, k->next ? inter : sym, &acc, &right, &up);
        acc = up;
    }
    *out = acc;
}

cky_status maxrule_tree_loglik(const grammar *g, const tree *t, double *out)
{
    *out = -INFINITY;
    if (!t || !t->child)
        return CKY_OK;
    cky_status st = grammar_check_sum(g);
    if (st)
        return st;
    walk w = {g, 0, malloc((size_t)g->nsub_total * sizeof(double)), 0, CKY_OK};
    if (!w.lex)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    inside root;
    score_node(&w, t, 0, &root); /* the root is ROOT, whatever its label */
    free(w.lex);
    if (w.st) {
        free(root.v);
        return w.st;
    }
    if (root.v && !w.unknown)
        *out = jmath_log(root.v[0]) + (double)(int)(unsigned)(100u * (unsigned)root.scale);
    free(root.v);
    return CKY_OK;
}
