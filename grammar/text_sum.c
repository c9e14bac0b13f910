/* text_sum: the sum closure of a grammar loaded from a text export (grammar_sum_from_unary in
 * internal.h), which the export lacks: its closed Viterbi unaries stand in for it.
 *
 * The export's unary lines are the max closure (closedViterbiRulesWithParent, spec §2.2), plus
 * an identity line X_i -> X_i 1.0 per substate, which the builder drops: the max-rule passes
 * add the closure's terms to the values before it (post = pre + closure(pre)), as they do
 * with a .gr file's sum closure, which stores no identity rules either. So each (P, C) pair
 * of grammar.unary becomes one sum rule of the same orientation ([child sub][parent sub]). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

cky_status grammar_sum_from_unary(int nsym, const int *nsub, const grammar_unary *unary,
                                  int nunary, const int *unary_first,
                                  grammar_sum_closure **out)
{
    size_t n1 = (size_t)(nunary ? nunary : 1), ns = (size_t)nsym;
    grammar_sum_closure *s = calloc(1, sizeof *s);
    if (!s)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    s->max_closure = 1;
    s->rule = calloc(n1, sizeof *s->rule);
    s->first = malloc((ns + 1) * sizeof *s->first);
    s->by_child = malloc(n1 * sizeof *s->by_child);
    s->child_first = calloc(ns + 1, sizeof *s->child_first);
    s->path = calloc(ns ? ns * ns : 1, sizeof *s->path);
    int *fill = malloc((ns ? ns : 1) * sizeof *fill);
    if (!s->rule || !s->first || !s->by_child || !s->child_first || !s->path || !fill)
        goto nomem;
    for (int k = 0; k < nunary; k++) {
        const grammar_unary *u = &unary[k];
        size_t cells = (size_t)nsub[u->child] * nsub[u->parent];
        double *prob = malloc(cells * sizeof *prob);
        if (!prob)
            goto nomem;
        for (size_t v = 0; v < cells; v++)
            prob[v] = exp(u->score[v]); /* exp(-inf) = 0 */
        s->rule[k] = (grammar_sum_unary){u->parent, u->child, prob};
        s->n = k + 1;
    }
    memcpy(s->first, unary_first, (ns + 1) * sizeof *s->first);
    /* by child, a child's rules in rule (= parent) order: a stable counting sort */
    for (int k = 0; k < nunary; k++)
        s->child_first[unary[k].child + 1]++;
    for (int c = 0; c < nsym; c++)
        s->child_first[c + 1] += s->child_first[c];
    memcpy(fill, s->child_first, ns * sizeof *fill);
    for (int k = 0; k < nunary; k++)
        s->by_child[fill[unary[k].child]++] = k;
    free(fill);
    *out = s;
    return CKY_OK;
nomem:
    free(fill);
    grammar_sum_free(s);
    return cky_fail(CKY_ERR_NOMEM, "out of memory");
}
