/* sum_rules: the shared tables and layer arithmetic of the sum-product passes (see
 * sum_rules.h). */
#include "sum_rules.h"

#include <math.h>
#include <stdlib.h>

#include "../chart/scale.h"
#include "../grammar/lexicon_berkeley.h"

static void table_free(sum_unary_table *t)
{
    free(t->first);
    free(t->from);
    free(t->w);
    free(t->phrasal);
}

void sum_rules_free(sum_rules *r)
{
    if (!r)
        return;
    table_free(&r->up);
    table_free(&r->down);
    free(r);
}

static cky_status table_alloc(sum_unary_table *t, int n, long entries)
{
    t->n = n;
    t->first = calloc((size_t)n + 1, sizeof *t->first);
    t->from = malloc((size_t)(entries ? entries : 1) * sizeof *t->from);
    t->w = malloc((size_t)(entries ? entries : 1) * sizeof *t->w);
    t->phrasal = malloc((size_t)(n ? n : 1));
    if (!t->first || !t->from || !t->w || !t->phrasal)
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the unary closure tables");
    return CKY_OK;
}

/* Fill table t, rows of symbol `row_sym`'s substates, from the rules of each row symbol
 * (up: by parent; down: by child); `count` only counts the entries into t->first. */
static void table_fill(const grammar *g, sum_unary_table *t, int up, int count)
{
    const grammar_sum_closure *s = g->sum;
    long m = 0;
    for (int S = 0; S < g->nsym; S++) {
        int ns = g->nsub[S];
        int lo = up ? s->first[S] : s->child_first[S];
        int hi = up ? s->first[S + 1] : s->child_first[S + 1];
        for (int x = 0; x < ns; x++) {
            int row = g->sub_offset[S] + x;
            t->phrasal[row] = g->phrasal[S];
            for (int k = lo; k < hi; k++) {
                const grammar_sum_unary *u = &s->rule[up ? k : s->by_child[k]];
                int other = up ? u->child : u->parent;
                int np = g->nsub[u->parent];
                for (int o = 0; o < g->nsub[other]; o++) {
                    /* prob[c * np + p]: child substate c, parent substate p */
                    double w = up ? u->prob[(size_t)o * np + x] : u->prob[(size_t)x * np + o];
                    if (w == 0)
                        continue;
                    if (!count) {
                        t->from[m] = g->sub_offset[other] + o;
                        t->w[m] = (float)w;
                    }
                    m++;
                }
            }
            if (count)
                t->first[row + 1] = (int)m;
        }
    }
}

static cky_status table_new(const grammar *g, sum_unary_table *t, int up)
{
    sum_unary_table c = {.phrasal = malloc((size_t)g->nsub_total + 1),
                         .first = calloc((size_t)g->nsub_total + 1, sizeof(int))};
    if (!c.phrasal || !c.first) {
        table_free(&c);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the unary closure tables");
    }
    table_fill(g, &c, up, 1);
    long entries = c.first[g->nsub_total];
    cky_status st = table_alloc(t, g->nsub_total, entries);
    if (!st) {
        for (int x = 0; x <= g->nsub_total; x++)
            t->first[x] = c.first[x];
        table_fill(g, t, up, 0);
    }
    table_free(&c);
    return st;
}

cky_status sum_rules_new(const grammar *g, sum_rules **out)
{
    cky_status st = grammar_check_sum(g);
    if (st)
        return st;
    sum_rules *r = calloc(1, sizeof *r);
    if (!r)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if ((st = table_new(g, &r->up, 1)) || (st = table_new(g, &r->down, 0))) {
        sum_rules_free(r);
        return st;
    }
    *out = r;
    return CKY_OK;
}

typedef struct row_len {
    int len, x;
} row_len;

static int longest_first(const void *a, const void *b)
{
    const row_len *p = a, *q = b;
    return p->len != q->len ? q->len - p->len : p->x - q->x;
}

void sum_rules_layout_free(sum_unary_layout *l)
{
    free(l->row);
    free(l->off);
    free(l->from);
    free(l->w);
}

cky_status sum_rules_layout(const sum_unary_table *t, int phrasal, sum_unary_layout *l)
{
    *l = (sum_unary_layout){0};
    row_len *r = malloc(((size_t)t->n + 1) * sizeof *r);
    if (!r)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    int n = 0;
    for (int x = 0; x < t->n; x++)
        if (t->first[x + 1] > t->first[x] && (!phrasal || t->phrasal[x]))
            r[n++] = (row_len){t->first[x + 1] - t->first[x], x};
    qsort(r, (size_t)n, sizeof *r, longest_first);
    l->ngroup = (n + 31) / 32;
    l->nslot = 32 * l->ngroup;
    l->off = malloc(((size_t)l->ngroup + 1) * sizeof *l->off);
    l->row = malloc(((size_t)l->nslot + 1) * sizeof *l->row);
    if (l->off && l->row) {
        l->off[0] = 0;
        for (int g = 0; g < l->ngroup; g++) /* its first row is its longest */
            l->off[g + 1] = l->off[g] + 32 * r[32 * g].len;
        l->nent = l->off[l->ngroup];
        l->from = calloc((size_t)l->nent + 1, sizeof *l->from); /* padding: weight 0 */
        l->w = calloc((size_t)l->nent + 1, sizeof *l->w);
    }
    if (!l->off || !l->row || !l->from || !l->w) {
        free(r);
        sum_rules_layout_free(l);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < l->nslot; s++) {
        l->row[s] = s < n ? r[s].x : -1;
        for (int j = 0; s < n && j < r[s].len; j++) {
            int e = l->off[s / 32] + 32 * j + s % 32, k = t->first[r[s].x] + j;
            l->from[e] = t->from[k];
            l->w[e] = t->w[k];
        }
    }
    free(r);
    return CKY_OK;
}

int sum_rules_normalize(float *v, int n, int e)
{
    float m = 0;
    for (int x = 0; x < n; x++)
        m = v[x] > m ? v[x] : m;
    int k = chart_exponent(m);
    for (int x = 0; x < n; x++) /* all 0 or subnormal: 0 */
        v[x] = k == CHART_EXP_NONE ? 0 : chart_scale(v[x], -k);
    return k == CHART_EXP_NONE ? CHART_EXP_NONE : e + k;
}

cky_status sum_rules_lexical(const grammar *g, const char *word, int loc, float *pre,
                             int *epre, double *buf)
{
    int nsub = g->nsub_total;
    cky_status st = lexicon_berkeley_score_linear(g, word, loc, 1, NULL, buf);
    if (st)
        return st;
    double m = 0;
    for (int x = 0; x < nsub; x++)
        m = buf[x] > m ? buf[x] : m;
    int k = 0;
    if (m > 0)
        frexp(m, &k);
    for (int x = 0; x < nsub; x++) /* most are 0 (ldexp keeps a zero, and its sign) */
        pre[x] = (float)(buf[x] == 0 ? buf[x] : ldexp(buf[x], -k));
    *epre = m > 0 ? k : CHART_EXP_NONE;
    return CKY_OK;
}
