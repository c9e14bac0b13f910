/* decode_maxrule: the max-rule decoder (see decode.h): in the ref engine maxrule/ runs its
 * own double-precision passes (inside, outside, max-c) and extraction for one sentence; on
 * the cpu engine the engine runs the inside and outside passes (sum-product kernels) and
 * maxrule/ the max-c scores and the tree from them. */
#include <math.h>

#include "../maxrule/maxrule.h"
#include "cpu_sum.h"
#include "decode.h"

#define CPU_GROUP 16 /* sentences per inside/outside batch (bounds the item buffers) */

/* A maxrule_result into a parse result. */
static void take_result(maxrule_result *m, parse_result *r)
{
    r->loglik = m->loglik;
    if (!m->tree) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    r->outcome = PARSE_OK;
    r->score = m->score;
    r->tree = m->tree;
}

cky_status decode_maxrule_cpu(const grammar *g, const parser_options *o, cpu_engine *e,
                              const sentence *s, int n, parse_result *out)
{
    (void)o;
    sum_chart *c[CPU_GROUP];
    cky_status st = CKY_OK;
    for (int first = 0; first < n && !st; first += CPU_GROUP) {
        int m = n - first < CPU_GROUP ? n - first : CPU_GROUP;
        if ((st = cpu_engine_inside_sum(e, s + first, m, c)))
            break;
        st = cpu_engine_outside_sum(e, c, m);
        for (int k = 0; k < m; k++) {
            maxrule_engine_scores sc = {c[k]->post, c[k]->opre, c[k]->epost, c[k]->eopre,
                                        sum_chart_loglik(c[k]), 0};
            maxrule_result r;
            if (!st && maxrule_decode_engine(g, s[first + k].words, s[first + k].n, &sc, &r))
                decode_fail(&out[first + k]);
            else if (!st)
                take_result(&r, &out[first + k]);
            sum_chart_free(c[k]);
        }
    }
    return st;
}

void decode_maxrule_words(const grammar *g, const parser_options *o, char *const *words, int n,
                          parse_result *r)
{
    maxrule_result m;
    if (maxrule_parse(g, words, n, NULL, &m)) {
        decode_fail(r);
        return;
    }
    take_result(&m, r);
}
