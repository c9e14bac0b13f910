/* native_cascade: the parts of a Berkeley .gr file that only the coarse-to-fine cascade uses
 * (cascade_src.h): Grammar.splitTrees, the raw unary rules of unaryRulesWithParent and the
 * keys of unaryRuleMap in the order Java's HashMap iterates them.
 *
 * HashMap order: a deserialized HashMap puts its entries, in stream order, into a table of
 * tableSizeFor((int)(size / loadFactor + 1)) buckets, bucket (h ^ h >>> 16) & (buckets - 1)
 * with h = UnaryRule.hashCode() = parentState << 18 ^ childState, and iterates the buckets in
 * ascending order. Entries that share a bucket have different parents, so the order of the
 * rules of one parent, the only order projectGrammar's result depends on, is the bucket order;
 * ties are kept in stream order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cascade_src.h"
#include "native.h"

#define PKG "edu.berkeley.nlp.PCFGLA."

/* ---- the source tables ---- */

static void free_trees(cascade_tree *t, int n)
{
    for (int s = 0; t && s < n; s++) {
        free(t[s].label);
        free(t[s].depth);
    }
    free(t);
}

static void free_unaries(cascade_unary *u, int n)
{
    for (int i = 0; u && i < n; i++)
        free(u[i].prob);
    free(u);
}

void cascade_src_free(cascade_src *src)
{
    if (!src)
        return;
    free_trees(src->tree, src->nsym);
    for (int i = 0; i < src->nbinary; i++) {
        free(src->binary[i].row_l);
        free(src->binary[i].row_r);
        free(src->binary[i].prob);
    }
    free(src->binary);
    free_unaries(src->unary, src->nunary);
    free_unaries(src->mapped, src->nmapped);
    free(src->unary_first);
    memset(src, 0, sizeof *src);
}

cky_status cascade_src_add_rows(cascade_src *src, int parent, int left, int right, int nrow,
                                const int *row_l, const int *row_r, const double *prob)
{
    size_t np = (size_t)src->nsub[parent], n = nrow ? (size_t)nrow : 1;
    if (!grammar_grow((void **)&src->binary, &src->cap_binary, src->nbinary,
                      sizeof *src->binary))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    grammar_binary *r = &src->binary[src->nbinary++]; /* freed with the source from here on */
    *r = (grammar_binary){parent, left, right, nrow, malloc(n * sizeof(int)),
                          malloc(n * sizeof(int)), NULL, malloc(n * np * sizeof(double))};
    if (!r->row_l || !r->row_r || !r->prob)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    memcpy(r->row_l, row_l, (size_t)nrow * sizeof(int));
    memcpy(r->row_r, row_r, (size_t)nrow * sizeof(int));
    memcpy(r->prob, prob, (size_t)nrow * np * sizeof(double));
    return CKY_OK;
}

cky_status cascade_src_add_unary(cascade_src *src, int which, int parent, int child,
                                 const double *prob)
{
    cascade_unary **list = which ? &src->mapped : &src->unary;
    int *n = which ? &src->nmapped : &src->nunary, *cap = which ? &src->cap_mapped
                                                                : &src->cap_unary;
    size_t cells = (size_t)src->nsub[parent] * src->nsub[child];
    if (!grammar_grow((void **)list, cap, *n, sizeof **list))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    double *copy = malloc((cells ? cells : 1) * sizeof *copy);
    if (!copy)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    memcpy(copy, prob, cells * sizeof *copy);
    (*list)[(*n)++] = (cascade_unary){parent, child, copy};
    return CKY_OK;
}

/* ---- split trees ---- */

typedef struct tree_reader {
    native_ctx *c;
    cascade_tree *t;
    int cap;
} tree_reader;

/* One Tree<Short> node and its subtree, appended in preorder. */
static cky_status read_node(tree_reader *r, const jser_node *node, int depth)
{
    const jser_node *label, *kids;
    const jser_node *const *items;
    size_t n;
    int64_t v;
    cky_status st;
    if (depth > CASCADE_MAX_DEPTH)
        return cky_fail(CKY_ERR_FORMAT, "a split tree is deeper than %d", CASCADE_MAX_DEPTH);
    if (!jser_is_instance(node, "edu.berkeley.nlp.syntax.Tree"))
        return cky_fail(CKY_ERR_FORMAT, "a split tree node is %s, not a Tree",
                        node ? jser_class_name(node) : "null");
    if ((st = native_spend(r->c, 1, "split tree")) ||
        (st = jser_get_object(node, "label", &label)) ||
        (st = jser_get_int(label, "value", &v)) ||
        (st = jser_get_object(node, "children", &kids)) ||
        (st = jser_get_list(kids, "Tree.children", &items, &n)))
        return st;
    if (v < 0 || v > 4095)
        return cky_fail(CKY_ERR_FORMAT, "a split tree node is labelled %lld", (long long)v);
    cascade_tree *t = r->t;
    if (t->nnode == r->cap) { /* label and depth grow together */
        int cap = r->cap ? 2 * r->cap : 16;
        int *l = realloc(t->label, (size_t)cap * sizeof *l);
        if (l)
            t->label = l;
        int *d = l ? realloc(t->depth, (size_t)cap * sizeof *d) : NULL;
        if (!d)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        t->depth = d;
        r->cap = cap;
    }
    t->label[t->nnode] = (int)v;
    t->depth[t->nnode] = depth;
    t->nnode++;
    for (size_t i = 0; i < n; i++)
        if ((st = read_node(r, items[i], depth + 1)))
            return st;
    return CKY_OK;
}

static cky_status read_trees(native_ctx *c, const jser_node *gr, cascade_src *src)
{
    char type;
    const jser_value *v = jser_field_value(gr, "splitTrees", &type);
    const jser_node *arr;
    if (!v || !v->obj)
        return CKY_OK; /* no split trees: no cascade */
    cky_status st = native_array_field(gr, "splitTrees", 'L', (size_t)c->nsym, &arr);
    if (st)
        return st;
    if (!(src->tree = calloc((size_t)c->nsym, sizeof *src->tree)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    const jser_node *const *roots = arr->u.array.data;
    for (int s = 0; s < c->nsym; s++) {
        tree_reader r = {c, &src->tree[s], 0};
        if ((st = read_node(&r, roots[s], 0)))
            return cky_fail(st, "splitTrees[%d]: %s", s, cky_last_error());
    }
    return CKY_OK;
}

/* ---- unary rules ---- */

/* A UnaryRule object of parent P (-1: any) into the list `which`. */
static cky_status add_unary_node(native_ctx *c, cascade_src *src, int which, int P,
                                 const jser_node *rule, const char *what)
{
    int parent, child;
    const jser_node *scores;
    cky_status st;
    if (!jser_is_instance(rule, PKG "UnaryRule"))
        return cky_fail(CKY_ERR_FORMAT, "%s holds %s", what,
                        rule ? jser_class_name(rule) : "null");
    if ((st = native_rule_state(c, rule, "parentState", &parent)) ||
        (st = native_rule_state(c, rule, "childState", &child)))
        return st;
    if (P >= 0 && parent != P)
        return cky_fail(CKY_ERR_FORMAT, "%s[%d] holds a rule of parent %d", what, P, parent);
    size_t nc = (size_t)c->nsub[child], np = (size_t)c->nsub[parent];
    double *prob = calloc(nc * np > 0 ? nc * np : 1, sizeof *prob);
    if (!prob)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!(st = native_spend(c, nc * np, what)) &&
        !(st = jser_get_object(rule, "scores", &scores)) &&
        !(st = native_read_matrix(c, scores, nc, np, what, prob)))
        st = cascade_src_add_unary(src, which, parent, child, prob);
    free(prob);
    return st;
}

static cky_status read_raw_unaries(native_ctx *c, const jser_node *gr, cascade_src *src)
{
    const jser_node *lists;
    cky_status st = native_array_field(gr, "unaryRulesWithParent", 'L', (size_t)c->nsym, &lists);
    if (st)
        return st;
    if (!(src->unary_first = calloc((size_t)c->nsym + 1, sizeof *src->unary_first)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int P = 0; P < c->nsym; P++) {
        const jser_node *const *rules;
        size_t n;
        if ((st = native_rule_list(lists, P, "unaryRulesWithParent", &rules, &n)))
            return st;
        for (size_t i = 0; i < n; i++)
            if ((st = add_unary_node(c, src, 0, P, rules[i], "unaryRulesWithParent")))
                return st;
        src->unary_first[P + 1] = src->nunary;
    }
    return CKY_OK;
}

typedef struct keyed {
    uint32_t bucket;
    int at; /* stream position */
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* Java's HashMap.tableSizeFor. */
static uint32_t table_size_for(int32_t c)
{
    uint32_t n = 1;
    while ((int64_t)n < c && n < (1u << 30))
        n <<= 1;
    return n;
}

static cky_status read_mapped_unaries(native_ctx *c, const jser_node *gr, cascade_src *src)
{
    const jser_node *map;
    const jser_node *const *kv;
    size_t n;
    char type;
    cky_status st;
    if ((st = jser_get_object(gr, "unaryRuleMap", &map)) ||
        (st = jser_get_map(map, "Grammar.unaryRuleMap", &kv, &n)))
        return st;
    const jser_value *lf = jser_field_value(map, "loadFactor", &type);
    float load = lf && (type == 'F' || type == 'D') ? (float)lf->d : 0.75f;
    if (!(load > 0))
        return cky_fail(CKY_ERR_FORMAT, "unaryRuleMap has load factor %g", (double)load);
    float lfc = load < 0.25f ? 0.25f : load > 4.0f ? 4.0f : load;
    float fc = (float)n / lfc + 1.0f;
    uint32_t cap = fc < 16.0f ? 16 : fc >= (float)(1 << 30) ? 1u << 30
                                                            : table_size_for((int32_t)fc);
    keyed *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n && !st; i++) {
        int parent, child;
        if (!jser_is_instance(kv[2 * i], PKG "UnaryRule")) {
            st = cky_fail(CKY_ERR_FORMAT, "unaryRuleMap holds a key of class %s",
                          kv[2 * i] ? jser_class_name(kv[2 * i]) : "null");
            break;
        }
        if ((st = native_rule_state(c, kv[2 * i], "parentState", &parent)) ||
            (st = native_rule_state(c, kv[2 * i], "childState", &child)))
            break;
        uint32_t h = ((uint32_t)parent << 18) ^ (uint32_t)child;
        order[i] = (keyed){(h ^ (h >> 16)) & (cap - 1), (int)i};
    }
    if (!st)
        qsort(order, n, sizeof *order, cmp_keyed);
    for (size_t i = 0; i < n && !st; i++)
        st = add_unary_node(c, src, 1, -1, kv[2 * order[i].at], "unaryRuleMap");
    free(order);
    return st;
}

cky_status native_read_cascade(native_ctx *c, const jser_node *gr, cascade_src *src)
{
    cky_status st;
    if ((st = read_trees(c, gr, src)) || !src->tree)
        return st;
    if ((st = read_raw_unaries(c, gr, src)) || (st = read_mapped_unaries(c, gr, src)))
        return st;
    return CKY_OK;
}
