/* engine_scores: the max-c scores and tree of an engine's float inside and outside scores
 * (see maxrule_decode_engine in maxrule.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../grammar/lexicon_berkeley.h"
#include "internal.h"

/* x * 2^e as the scaled passes hold it: *scale in units of e^100 (rounded up, so the
 * double returned is at most x). */
static double split_scale(float x, int e, int *scale)
{
    double l = e * M_LN2;
    *scale = (int)ceil(l / 100);
    return (double)x * exp(l - 100.0 * *scale);
}

/* Scores and scales of one layer: dst[cells][nsub], scale[cells][nsym], scales rounded up,
 * so every double is at most its float (<= 1). */
static void fill_layer(const mr_chart *c, const float *src, const int *e, double *dst,
                       int *scale)
{
    size_t cells = chart_ncells(c->n);
    for (size_t cell = 0; cell < cells; cell++) {
        int s = 0;
        for (int x = 0; x < c->nsub; x++)
            dst[cell * c->nsub + x] = split_scale(src[cell * c->nsub + x], e[cell], &s);
        for (int y = 0; y < c->nsym; y++)
            scale[cell * c->nsym + y] = s;
    }
}

cky_status maxrule_decode_engine(const grammar *g, char *const *words, int n,
                                 const maxrule_engine_scores *s, maxrule_result *out)
{
    memset(out, 0, sizeof *out);
    out->loglik = s->loglik;
    out->score = -INFINITY;
    cky_status st = maxrule_check_grammar(g);
    if (st || s->loglik == -INFINITY)
        return st;
    mr_chart c;
    if ((st = mr_chart_alloc(g, n, &c)))
        return st;
    for (int i = 0; i < n && !st; i++)
        st = lexicon_berkeley_score_linear(g, words[i], i, 1, c.lex + (size_t)i * c.nsub);
    out->scaled = s->force_scaled || s->loglik < log(DBL_MIN);
    if (!st && !out->scaled) { /* maxrule_parse's unscaled passes: plain doubles */
        size_t all = chart_ncells(n) * (size_t)c.nsub;
        for (size_t x = 0; x < all; x++) {
            c.in[x] = ldexp((double)s->in[x], s->ein[x / c.nsub]);
            c.out[x] = ldexp((double)s->out[x], s->eout[x / c.nsub]);
        }
    } else if (!st && !(st = mr_setup_scaling(&c))) {
        /* max-c skips a candidate when its children's scores plus the scale term cannot beat
         * the best, a bound that holds when every scaled posterior is <= 1: so the factors
         * are <= 1 (scales rounded up) and the root's ROOT score, the divisor, >= e^100 (its
         * own scale; ROOT is never a child) */
        fill_layer(&c, s->in, s->ein, c.in, c.iscale);
        fill_layer(&c, s->out, s->eout, c.out, c.oscale);
        size_t root = chart_cell(n, 0, n);
        double l = log((double)s->in[root * c.nsub]) + s->ein[root] * M_LN2;
        int rs = (int)floor(l / 100) - 1; /* the divisor in [e^100, e^200): a posterior's
                                             terms, each <= 1, number fewer than e^100 */
        c.iscale[root * c.nsym] = rs;
        c.in[root * c.nsub] = exp(l - 100.0 * rs);
    }
    if (!st) {
        mr_maxc(&c);
        st = mr_decode_tail(&c, words, out);
    }
    mr_chart_release(&c);
    return st;
}
