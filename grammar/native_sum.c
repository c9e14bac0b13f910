/* native_sum: the sum closure of a Berkeley .gr file, which only the max-rule decoder uses
 * (docs/berkeley-grammar-spec.md §1.5, §4.2, §4.6, §6.3): closedSumRulesWithParent in list
 * order, the order of the same rule objects in closedSumRulesWithChild (the outside pass walks
 * the rules by child), and closedSumPaths.
 *
 * Parse-time pruning, as the jar's final max-rule level does it: the loaded grammar goes
 * through Grammar.removeUnlikelyRules(1e-10, 1.0), which zeroes unary values <= 1e-10 of the
 * rules in unaryRulesWithParent. The closed sum rules of state pairs without a raw rule ARE
 * those objects (computePairsOfUnaries appends them to both lists; Java serialization keeps
 * the sharing, and the reader resolves it to the same node), so they are pruned; the closed
 * sum rules of pairs with a raw rule are separate objects and keep their stored values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define PKG "edu.berkeley.nlp.PCFGLA."
#define SUM_UNARY_PRUNE 1e-10 /* removeUnlikelyRules(1e-10): unary values <= it become 0 */

typedef struct sum_reader {
    native_ctx *c;
    grammar_sum_closure *sum;
    const jser_node **node; /* [sum->n]: the rule object each stored rule came from */
    int cap, cap_node;
    struct node_index *index; /* [sum->n]: (node, rule) sorted by node, for lookups */
} sum_reader;

typedef struct node_index {
    uintptr_t node;
    int rule;
} node_index;

static int cmp_node(const void *a, const void *b)
{
    uintptr_t x = ((const node_index *)a)->node, y = ((const node_index *)b)->node;
    return x < y ? -1 : x > y;
}

/* Sort the stored rules by their objects (a rule object is stored once per parent list). */
static cky_status index_nodes(sum_reader *r)
{
    int n = r->sum->n;
    if (!(r->index = malloc((size_t)(n ? n : 1) * sizeof *r->index)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++)
        r->index[k] = (node_index){(uintptr_t)r->node[k], k};
    qsort(r->index, (size_t)n, sizeof *r->index, cmp_node);
    return CKY_OK;
}

/* The stored rule that came from object `node`, or -1 (the first if it is stored twice). */
static int find_node(const sum_reader *r, const jser_node *node)
{
    int lo = 0, hi = r->sum->n;
    uintptr_t key = (uintptr_t)node;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->index[mid].node < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->sum->n && r->index[lo].node == key ? r->index[lo].rule : -1;
}

/* A list field of the Grammar as an array of nsym lists; *out = NULL if it is absent. */
static cky_status optional_lists(native_ctx *c, const jser_node *gr, const char *name,
                                 const jser_node **out)
{
    char type;
    const jser_value *v = jser_field_value(gr, name, &type);
    *out = NULL;
    if (!v || !v->obj)
        return CKY_OK;
    return native_array_field(gr, name, 'L', (size_t)c->nsym, out);
}

/* One closedSumRulesWithParent[P] entry (identity rules are skipped). */
static cky_status add_rule(sum_reader *r, int P, const jser_node *rule)
{
    native_ctx *c = r->c;
    int parent, C;
    const jser_node *scores;
    cky_status st;
    if (!jser_is_instance(rule, PKG "UnaryRule"))
        return cky_fail(CKY_ERR_FORMAT, "closedSumRulesWithParent[%d] holds %s", P,
                        rule ? jser_class_name(rule) : "null");
    if ((st = native_rule_state(c, rule, "parentState", &parent)) ||
        (st = native_rule_state(c, rule, "childState", &C)))
        return st;
    if (parent != P)
        return cky_fail(CKY_ERR_FORMAT, "closedSumRulesWithParent[%d] holds a rule of parent %d",
                        P, parent);
    if (C == P)
        return CKY_OK;
    size_t nc = (size_t)c->nsub[C], np = (size_t)c->nsub[P];
    if ((st = native_spend(c, nc * np, "sum unary rule")))
        return st;
    grammar_sum_closure *s = r->sum;
    if (!grammar_grow((void **)&s->rule, &r->cap, s->n, sizeof *s->rule))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!grammar_grow((void **)&r->node, &r->cap_node, s->n, sizeof *r->node))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    double *prob = calloc(nc * np, sizeof *prob);
    if (!prob)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    s->rule[s->n] = (grammar_sum_unary){P, C, prob};
    r->node[s->n++] = rule;
    if ((st = jser_get_object(rule, "scores", &scores)))
        return st;
    return native_read_matrix(c, scores, nc, np, "closedSumRulesWithParent scores", prob);
}

/* Zero the values <= 1e-10 of the stored rules that unaryRulesWithParent shares. */
static cky_status prune_shared(sum_reader *r, const jser_node *raw_lists)
{
    grammar_sum_closure *s = r->sum;
    for (int P = 0; raw_lists && P < r->c->nsym; P++) {
        const jser_node *const *rules;
        size_t n;
        cky_status st = native_rule_list(raw_lists, P, "unaryRulesWithParent", &rules, &n);
        if (st)
            return st;
        for (size_t i = 0; i < n; i++) {
            int k = find_node(r, rules[i]);
            if (k < 0 || s->rule[k].parent != P)
                continue;
            size_t cells = (size_t)r->c->nsub[s->rule[k].child] * r->c->nsub[P];
            for (size_t v = 0; v < cells; v++)
                if (s->rule[k].prob[v] <= SUM_UNARY_PRUNE)
                    s->rule[k].prob[v] = 0.0;
        }
    }
    return CKY_OK;
}

/* The raw rules (unaryRulesWithParent) into sum->raw, in list order, pruned as
 * removeUnlikelyRules(1e-10) prunes them (values <= 1e-10 become 0). */
static cky_status read_raw(sum_reader *r, const jser_node *raw_lists)
{
    native_ctx *c = r->c;
    grammar_sum_closure *s = r->sum;
    int cap = 0;
    if (!raw_lists)
        return CKY_OK;
    if (!(s->raw_first = calloc((size_t)c->nsym + 1, sizeof *s->raw_first)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int P = 0; P < c->nsym; P++) {
        const jser_node *const *rules;
        size_t n;
        cky_status st = native_rule_list(raw_lists, P, "unaryRulesWithParent", &rules, &n);
        if (st)
            return st;
        for (size_t i = 0; i < n; i++) {
            int parent, C;
            const jser_node *scores;
            if (!jser_is_instance(rules[i], PKG "UnaryRule"))
                return cky_fail(CKY_ERR_FORMAT, "unaryRulesWithParent[%d] holds %s", P,
                                rules[i] ? jser_class_name(rules[i]) : "null");
            if ((st = native_rule_state(c, rules[i], "parentState", &parent)) ||
                (st = native_rule_state(c, rules[i], "childState", &C)))
                return st;
            if (parent != P)
                return cky_fail(CKY_ERR_FORMAT, "unaryRulesWithParent[%d] holds a rule of "
                                "parent %d", P, parent);
            size_t nc = (size_t)c->nsub[C], np = (size_t)c->nsub[P];
            if ((st = native_spend(c, nc * np, "raw unary rule")))
                return st;
            if (!grammar_grow((void **)&s->raw, &cap, s->nraw, sizeof *s->raw))
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
            double *prob = calloc(nc * np, sizeof *prob);
            if (!prob)
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
            s->raw[s->nraw++] = (grammar_sum_unary){P, C, prob};
            if ((st = jser_get_object(rules[i], "scores", &scores)) ||
                (st = native_read_matrix(c, scores, nc, np, "unaryRulesWithParent scores",
                                         prob)))
                return st;
            for (size_t v = 0; v < nc * np; v++)
                if (prob[v] <= SUM_UNARY_PRUNE)
                    prob[v] = 0.0;
        }
        s->raw_first[P + 1] = s->nraw;
    }
    return CKY_OK;
}

/* by_child from closedSumRulesWithChild: every non-identity entry must be a stored rule. */
static cky_status child_order(sum_reader *r, const jser_node *child_lists)
{
    grammar_sum_closure *s = r->sum;
    int nsym = r->c->nsym, k = 0;
    if (!(s->by_child = malloc((size_t)(s->n ? s->n : 1) * sizeof *s->by_child)) ||
        !(s->child_first = calloc((size_t)nsym + 1, sizeof *s->child_first)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int C = 0; C < nsym; C++) {
        const jser_node *const *rules;
        size_t n;
        cky_status st = native_rule_list(child_lists, C, "closedSumRulesWithChild", &rules, &n);
        if (st)
            return st;
        for (size_t i = 0; i < n; i++) {
            int found = find_node(r, rules[i]);
            if (found < 0) {
                int parent = -1, child = -1;
                if (rules[i] && !native_rule_state(r->c, rules[i], "parentState", &parent) &&
                    !native_rule_state(r->c, rules[i], "childState", &child) && parent == child)
                    continue; /* an identity rule */
                return cky_fail(CKY_ERR_FORMAT, "closedSumRulesWithChild[%d] holds a rule that "
                                "closedSumRulesWithParent lacks", C);
            }
            if (s->rule[found].child != C || k == s->n)
                return cky_fail(CKY_ERR_FORMAT, "closedSumRulesWithChild[%d] holds a rule of "
                                "child %d (or a rule twice)", C, s->rule[found].child);
            s->by_child[k++] = found;
        }
        s->child_first[C + 1] = k;
    }
    if (k != s->n)
        return cky_fail(CKY_ERR_FORMAT, "closedSumRulesWithChild holds %d of the %d sum rules",
                        k, s->n);
    return CKY_OK;
}

/* closedSumPaths: int[nsym][nsym] (null rows read as 0). */
static cky_status read_paths(sum_reader *r, const jser_node *gr)
{
    int nsym = r->c->nsym;
    const jser_node *outer;
    cky_status st = native_array_field(gr, "closedSumPaths", '[', (size_t)nsym, &outer);
    if (st)
        return st;
    if ((st = native_spend(r->c, (size_t)nsym * nsym, "closedSumPaths")))
        return st;
    if (!(r->sum->path = calloc((size_t)nsym * nsym, sizeof *r->sum->path)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    const jser_node *const *rows = outer->u.array.data;
    for (int P = 0; P < nsym; P++) {
        const jser_node *row;
        if (!rows[P])
            continue;
        if ((st = jser_get_array(rows[P], 'I', "closedSumPaths[P]", &row)))
            return st;
        if (row->u.array.length < (size_t)nsym)
            return cky_fail(CKY_ERR_FORMAT, "closedSumPaths[%d] has %zu entries, expected %d",
                            P, row->u.array.length, nsym);
        const int32_t *v = row->u.array.data;
        for (int C = 0; C < nsym; C++) {
            if (v[C] < -1 || v[C] >= nsym)
                return cky_fail(CKY_ERR_FORMAT, "closedSumPaths[%d][%d] = %d is not a state",
                                P, C, (int)v[C]);
            r->sum->path[(size_t)P * nsym + C] = v[C];
        }
    }
    return CKY_OK;
}

static cky_status read_sum(sum_reader *r, const jser_node *gr, const jser_node *parent_lists,
                           const jser_node *child_lists)
{
    const jser_node *raw_lists;
    int nsym = r->c->nsym;
    cky_status st;
    if (!(r->sum->first = calloc((size_t)nsym + 1, sizeof *r->sum->first)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int P = 0; P < nsym; P++) {
        const jser_node *const *rules;
        size_t n;
        if ((st = native_rule_list(parent_lists, P, "closedSumRulesWithParent", &rules, &n)))
            return st;
        for (size_t i = 0; i < n; i++)
            if ((st = add_rule(r, P, rules[i])))
                return st;
        r->sum->first[P + 1] = r->sum->n;
    }
    if ((st = index_nodes(r)) ||
        (st = optional_lists(r->c, gr, "unaryRulesWithParent", &raw_lists)) ||
        (st = prune_shared(r, raw_lists)) || (st = read_raw(r, raw_lists)) ||
        (st = child_order(r, child_lists)))
        return st;
    return read_paths(r, gr);
}

cky_status native_read_sum(native_ctx *c, const jser_node *gr, grammar_builder *b)
{
    const jser_node *parent_lists, *child_lists;
    cky_status st;
    if ((st = optional_lists(c, gr, "closedSumRulesWithParent", &parent_lists)) ||
        (st = optional_lists(c, gr, "closedSumRulesWithChild", &child_lists)))
        return st;
    if (!parent_lists || !child_lists)
        return CKY_OK; /* no sum closure: the grammar parses with Viterbi only */
    sum_reader r = {c, calloc(1, sizeof(grammar_sum_closure)), NULL, 0, 0, NULL};
    if (!r.sum)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    st = read_sum(&r, gr, parent_lists, child_lists);
    free(r.node);
    free(r.index);
    if (st) {
        grammar_sum_free(r.sum);
        return st;
    }
    builder_set_sum(b, r.sum);
    return CKY_OK;
}
