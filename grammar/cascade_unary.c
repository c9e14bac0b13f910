/* cascade_unary: the unary closure of a projected grammar, as the jar's
 * Grammar.computePairsOfUnaries computes it (cascade_src.h: cascade_close_unaries).
 *
 * For every pair P != C in (P, C) order, over the rules of P in their list order: a rule
 * P -> C adds its values; a rule P -> X adds, through the rule X -> C if there is one, the sum
 * over X's substates of the two rules' products (and their maximum to the Viterbi closure).
 * A pair that any rule reaches gets a closed sum rule, which is appended to the rule lists of
 * P and C when the pair has no rule of its own: so a later pair can reach further through it
 * (the jar's order, kept here, decides what). A pair with a positive product gets a closed
 * Viterbi rule, the maxima: those are the unaries the coarse passes use. */
#include <stdlib.h>
#include <string.h>

#include "cascade_src.h"

typedef struct closure {
    int nsym;
    const int *nsub;
    cascade_unary *rule; /* the projected rules, then the added sum rules (owned from n0) */
    int nrule, n0;
    int *by_parent;  /* [nsym][cap]: rule ids of parent P in list order */
    int *nparent;    /* [nsym] */
    int cap;         /* per parent: n0 + nsym */
    int *pair;       /* [nsym * nsym]: the rule id of (P, C), or -1 */
} closure;

/* Values of pair (P, C) into sum and max; 1 if any rule reached it (maxSumScore > -1), and
 * *viterbi = 1 if a positive product was seen (bestMaxIntermed > -2). */
static int close_pair(const closure *k, int P, int C, double *sum, double *max, int *viterbi)
{
    int np = k->nsub[P], nc = k->nsub[C], reached = 0;
    memset(sum, 0, (size_t)nc * np * sizeof *sum);
    memset(max, 0, (size_t)nc * np * sizeof *max);
    *viterbi = 0;
    for (int i = 0; i < k->nparent[P]; i++) {
        const cascade_unary *pr = &k->rule[k->by_parent[(size_t)P * k->cap + i]];
        int X = pr->child;
        if (X == C) {
            for (int x = 0; x < nc * np; x++) {
                double v = pr->prob[x];
                sum[x] += v;
                if (v > max[x]) {
                    max[x] = v;
                    *viterbi = 1;
                }
            }
            reached = 1;
            continue;
        }
        int j = k->pair[(size_t)X * k->nsym + C];
        if (j < 0)
            continue;
        const cascade_unary *cr = &k->rule[j];
        int nx = k->nsub[X];
        for (int p = 0; p < np; p++)
            for (int c = 0; c < nc; c++) {
                double s = 0, m = 0;
                for (int u = 0; u < nx; u++) {
                    double val = pr->prob[(size_t)u * np + p] * cr->prob[(size_t)c * nx + u];
                    s += val;
                    if (val > m)
                        m = val;
                }
                sum[(size_t)c * np + p] += s;
                if (m > max[(size_t)c * np + p]) {
                    max[(size_t)c * np + p] = m;
                    *viterbi = 1;
                }
            }
        reached = 1;
    }
    return reached;
}

/* Grammar.addUnary: append rule id r to its parent's list unless the pair has a rule. */
static void add_rule(closure *k, int r)
{
    int P = k->rule[r].parent, C = k->rule[r].child;
    if (k->pair[(size_t)P * k->nsym + C] >= 0)
        return;
    k->pair[(size_t)P * k->nsym + C] = r;
    k->by_parent[(size_t)P * k->cap + k->nparent[P]++] = r;
}

cky_status cascade_close_unaries(int nsym, const int *nsub, const cascade_unary *rules, int n,
                                 grammar_builder *b)
{
    closure k = {nsym, nsub, NULL, 0, n, NULL, NULL, n + nsym, NULL};
    int maxsub = 1;
    for (int s = 0; s < nsym; s++)
        if (nsub[s] > maxsub)
            maxsub = nsub[s];
    k.rule = malloc(((size_t)n + (size_t)nsym * nsym) * sizeof *k.rule);
    k.by_parent = malloc((size_t)nsym * k.cap * sizeof *k.by_parent);
    k.nparent = calloc((size_t)nsym, sizeof *k.nparent);
    k.pair = malloc((size_t)nsym * nsym * sizeof *k.pair);
    double *sum = malloc((size_t)maxsub * maxsub * sizeof *sum);
    double *max = malloc((size_t)maxsub * maxsub * sizeof *max);
    cky_status st = CKY_OK;
    if (!k.rule || !k.by_parent || !k.nparent || !k.pair || !sum || !max)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!st) {
        for (size_t x = 0; x < (size_t)nsym * nsym; x++)
            k.pair[x] = -1;
        for (int i = 0; i < n; i++) {
            k.rule[k.nrule] = rules[i];
            add_rule(&k, k.nrule++);
        }
    }
    for (int P = 0; P < nsym && !st; P++)
        for (int C = 0; C < nsym && !st; C++) {
            int viterbi;
            if (P == C || !close_pair(&k, P, C, sum, max, &viterbi))
                continue;
            if (viterbi && (st = builder_add_unary(b, P, C, max)))
                break;
            if (k.pair[(size_t)P * nsym + C] >= 0)
                continue; /* the pair has its own rule: the closed one is not added */
            size_t cells = (size_t)nsub[P] * nsub[C];
            double *copy = malloc(cells * sizeof *copy);
            if (!copy) {
                st = cky_fail(CKY_ERR_NOMEM, "out of memory");
                break;
            }
            memcpy(copy, sum, cells * sizeof *copy);
            k.rule[k.nrule] = (cascade_unary){P, C, copy};
            add_rule(&k, k.nrule++);
        }
    for (int i = n; k.rule && i < k.nrule; i++)
        free(k.rule[i].prob);
    free(k.rule);
    free(k.by_parent);
    free(k.nparent);
    free(k.pair);
    free(sum);
    free(max);
    return st;
}
