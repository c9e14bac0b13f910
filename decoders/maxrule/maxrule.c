/* maxrule: one sentence through the max-rule passes (see maxrule.h), as the jar's final
 * max-rule level runs them with every state allowed: unscaled inside; if log P(sentence) is
 * -inf, the scaled inside over a fresh chart; outside and max-c scores in the same mode; the
 * tree. The chart's arrays stay with the thread for its next sentence. */
#include "maxrule.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../grammar/lexicon_berkeley.h"
#include "../../util/jmath.h"
#include "maxrule_internal.h"

static void free_chart(mr_chart *c)
{
    if (!c)
        return;
    free(c->lex);
    free(c->in);
    free(c->out);
    free(c->iscale);
    free(c->oscale);
    free(c->nz);
    free(c->pre);
    free(c->pre_scale);
    free(c->logscale);
    free(c->mscore);
    free(c->msplit);
    free(c->mchild);
    free(c->mleft);
    free(c->mright);
    free(c->tmp);
    free(c->acc);
    free(c->acc2);
    free(c);
}

/* A chart for g of up to cap_n words, zeroed scores; NULL when out of memory. */
static mr_chart *new_chart(const grammar *g, int cap_n)
{
    size_t cells = chart_ncells(cap_n);
    mr_chart *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->g = g;
    c->nsym = g->nsym;
    c->nsub = g->nsub_total;
    c->cap_n = cap_n;
    for (int s = 0; s < g->nsym; s++)
        if (g->nsub[s] > c->maxsub)
            c->maxsub = g->nsub[s];
    size_t sub = (size_t)c->nsub, sym = (size_t)c->nsym, words = (size_t)cap_n;
    c->lex = calloc(words * sub, sizeof *c->lex);
    c->in = calloc(cells * sub, sizeof *c->in);
    c->out = calloc(cells * sub, sizeof *c->out);
    c->nz = calloc(cells * sym, sizeof *c->nz);
    c->pre = calloc(sub, sizeof *c->pre);
    c->pre_scale = calloc(sym, sizeof *c->pre_scale);
    c->mscore = malloc(cells * sym * sizeof *c->mscore);
    c->msplit = malloc(cells * sym * sizeof *c->msplit);
    c->mchild = malloc(cells * sym * sizeof *c->mchild);
    c->mleft = malloc(cells * sym * sizeof *c->mleft);
    c->mright = malloc(cells * sym * sizeof *c->mright);
    c->tmp = calloc(sub > sym ? sub : sym, sizeof *c->tmp);
    c->acc = calloc((size_t)c->maxsub, sizeof *c->acc);
    c->acc2 = calloc((size_t)c->maxsub, sizeof *c->acc2);
    if (!c->lex || !c->in || !c->out || !c->nz || !c->pre || !c->pre_scale || !c->mscore ||
        !c->msplit || !c->mchild || !c->mleft || !c->mright || !c->tmp || !c->acc || !c->acc2) {
        free_chart(c);
        return NULL;
    }
    return c;
}

/* Each thread keeps the chart of its last sentence (of up to KEEP_WORDS words), so that the
 * next one needs no allocation, no page mapping and no zeroing of the whole chart: each
 * sentence zeroes what it wrote (mr_chart_done). */
#define KEEP_WORDS 64 /* sample-sm6's in and out scores: 36 MB */
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static int kept_ok;

static void kept_free(void *c) { free_chart(c); }
static void kept_init(void) { kept_ok = pthread_key_create(&kept_key, kept_free) == 0; }

static mr_chart *kept_get(void)
{
    pthread_once(&kept_once, kept_init);
    return kept_ok ? pthread_getspecific(kept_key) : NULL;
}

cky_status mr_chart_take(const grammar *g, int n, mr_chart **out)
{
    mr_chart *c = kept_get();
    if (c)
        pthread_setspecific(kept_key, NULL);
    int maxsub = 0;
    for (int s = 0; s < g->nsym; s++)
        maxsub = g->nsub[s] > maxsub ? g->nsub[s] : maxsub;
    /* the kept chart serves any grammar of the sizes it was made for (its arrays depend on
       nothing else; its grammar may be gone) */
    if (c && (c->cap_n < n || c->nsym != g->nsym || c->nsub != g->nsub_total ||
              c->maxsub != maxsub)) {
        free_chart(c);
        c = NULL;
    }
    if (!c && !(c = new_chart(g, n)))
        return cky_fail(CKY_ERR_NOMEM, "maxrule: out of memory for a chart of %d words", n);
    c->g = g;
    c->n = n;
    c->mask = NULL;
    c->scaled = c->from_pre = c->binarized = c->variational = 0;
    *out = c;
    return CKY_OK;
}

void mr_chart_done(mr_chart *c)
{
    size_t cells = chart_ncells(c->n), sub = (size_t)c->nsub;
    if (!c->mask) { /* every block may have a score */
        memset(c->in, 0, cells * sub * sizeof *c->in);
        memset(c->out, 0, cells * sub * sizeof *c->out);
    } else
        for (size_t x = 0; x < cells; x++)
            for (int s = 0; s < c->nsym; s++)
                if (c->mask->state[x * c->nsym + s]) {
                    size_t at = x * sub + c->g->sub_offset[s];
                    memset(c->in + at, 0, (size_t)c->g->nsub[s] * sizeof *c->in);
                    memset(c->out + at, 0, (size_t)c->g->nsub[s] * sizeof *c->out);
                }
    /* the lexicon and the scratch: small, zeroed whole */
    memset(c->lex, 0, (size_t)c->n * sub * sizeof *c->lex);
    memset(c->pre, 0, sub * sizeof *c->pre);
    memset(c->tmp, 0, (sub > (size_t)c->nsym ? sub : (size_t)c->nsym) * sizeof *c->tmp);
    memset(c->acc, 0, (size_t)c->maxsub * sizeof *c->acc);
    memset(c->acc2, 0, (size_t)c->maxsub * sizeof *c->acc2);
    c->mask = NULL;
    if (c->cap_n > KEEP_WORDS || !kept_ok || kept_get() || pthread_setspecific(kept_key, c))
        free_chart(c); /* (too large to keep, or no key: freed as before) */
}

int mr_chart_kept_is_clean(void)
{
    const mr_chart *c = kept_get();
    if (!c)
        return 1;
    size_t n = chart_ncells(c->cap_n) * (size_t)c->nsub;
    for (size_t x = 0; x < n; x++)
        if (c->in[x] != 0 || c->out[x] != 0)
            return 0;
    for (size_t x = 0; x < (size_t)c->cap_n * c->nsub; x++)
        if (c->lex[x] != 0)
            return 0;
    return 1;
}

/* The lexical layer (initializeChart): the span-1 cells get the linear tag scores, of the
 * allowed tags and substates only. */
static void fill_lexical(mr_chart *c)
{
    const grammar *g = c->g;
    for (int i = 0; i < c->n; i++) {
        double *cell = mr_in(c, i, i + 1);
        const double *lex = c->lex + (size_t)i * c->nsub;
        if (!c->mask) {
            memcpy(cell, lex, (size_t)c->nsub * sizeof(double));
            continue;
        }
        for (int t = 0; t < g->nsym; t++) {
            const unsigned char *sub = mr_subs(c, i, i + 1, t);
            int allowed = mr_allowed(c, i, i + 1, t);
            for (int x = 0; x < g->nsub[t]; x++)
                cell[g->sub_offset[t] + x] = allowed && sub[x] ? lex[g->sub_offset[t] + x] : 0;
        }
    }
}

/* setupScaling + initializeChart(scale = true): a zeroed chart, scales MIN_VALUE except the
 * allowed POS tags over one word (0), and zero sums in the scratch the scaled passes fold
 * from (acc, acc2: an unscaled inside pass before them leaves its last parent's there). */
cky_status mr_setup_scaling(mr_chart *c)
{
    size_t cells = chart_ncells(c->n), sym = (size_t)c->nsym;
    size_t cap = chart_ncells(c->cap_n) * sym;
    c->scaled = 1;
    if (!c->iscale) /* (kept with the chart) */
        c->iscale = malloc(cap * sizeof *c->iscale);
    if (!c->oscale)
        c->oscale = malloc(cap * sizeof *c->oscale);
    if (!c->logscale)
        c->logscale = malloc((2 * MR_MEMO + 1) * sizeof *c->logscale);
    if (!c->iscale || !c->oscale || !c->logscale)
        return cky_fail(CKY_ERR_NOMEM, "maxrule: out of memory for the scales of %d words",
                        c->n);
    for (size_t x = 0; x < cells * sym; x++)
        c->iscale[x] = c->oscale[x] = MR_NO_SCALE;
    for (int x = 0; x <= 2 * MR_MEMO; x++)
        c->logscale[x] = NAN;
    memset(c->in, 0, cells * (size_t)c->nsub * sizeof *c->in);
    memset(c->out, 0, cells * (size_t)c->nsub * sizeof *c->out);
    memset(c->acc, 0, (size_t)c->maxsub * sizeof *c->acc);
    memset(c->acc2, 0, (size_t)c->maxsub * sizeof *c->acc2);
    fill_lexical(c);
    for (int i = 0; i < c->n; i++)
        for (int t = 0; t < c->nsym; t++)
            if (!c->g->phrasal[t] && mr_allowed(c, i, i + 1, t))
                c->iscale[mr_cell(c, i, i + 1) * sym + t] = 0;
    return CKY_OK;
}

/* The scaled inside pass over a fresh chart; log P(sentence). */
static cky_status inside_scaled(mr_chart *c, double *loglik)
{
    cky_status st = mr_setup_scaling(c);
    if (st)
        return st;
    mr_inside_scaled(c);
    size_t top = mr_cell(c, 0, c->n);
    int scale = c->iscale[top * c->nsym];
    *loglik = jmath_log(c->in[top * c->nsub + c->g->sub_offset[0]]) +
              (double)(int)(unsigned)(100u * (unsigned)scale); /* Java's int product */
    return CKY_OK;
}

/* 1 if the max-c arrays hold a tree (else the jar's childless ROOT: no tree). */
static int has_tree(const mr_chart *c)
{
    size_t top = mr_cell(c, 0, c->n) * c->nsym;
    if (c->variational) /* the jar extracts whatever the scores; ROOT without a unary child
                           gives its childless ROOT */
        return c->mchild[top] >= 0;
    return c->mscore[top] != -INFINITY && c->mchild[top] >= 0;
}

/* The k-best lists (after the inside and outside passes), with the 1-best's deliberate
 * difference: no tree from unscaled passes of a subnormal P(sentence) runs the scaled ones. */
static cky_status decode_kbest(mr_chart *c, char *const *words, int k, double root,
                               double loglik, maxrule_result *out)
{
    cky_status st = mr_kbest(c, words, k, out);
    if (!st && !out->tree && !c->scaled && root < DBL_MIN) {
        maxrule_result_clear(out);
        if ((st = inside_scaled(c, &loglik)))
            return st;
        mr_outside(c);
        st = mr_kbest(c, words, k, out);
    }
    out->loglik = loglik;
    out->scaled = c->scaled;
    if (!out->tree)
        out->score = -INFINITY;
    return st;
}

static cky_status decode(mr_chart *c, char *const *words, const maxrule_options *opt,
                         maxrule_result *out)
{
    const grammar *g = c->g;
    cky_status st;
    for (int i = 0; i < c->n; i++) { /* within a mask, the tags it allows (what is read) */
        const unsigned char *tags =
            c->mask ? c->mask->state + mr_cell(c, i, i + 1) * (size_t)c->nsym : NULL;
        if ((st = lexicon_berkeley_score_linear(g, words[i], i, 1, tags,
                                                c->lex + (size_t)i * c->nsub)))
            return st;
    }
    double loglik = -INFINITY, root = 0;
    if (!(opt && opt->force_scaled)) {
        fill_lexical(c);
        mr_inside(c);
        root = mr_in(c, 0, c->n)[g->sub_offset[0]];
        loglik = jmath_log(root); /* the jar's Math.log */
    }
    if (loglik == -INFINITY)
        out->underflow = 1;
    if (loglik == -INFINITY && (st = inside_scaled(c, &loglik)))
        return st;
    if (loglik == -INFINITY) {
        out->loglik = loglik;
        return CKY_OK;
    }
    mr_outside(c);
    if (opt && opt->kbest > 1)
        return decode_kbest(c, words, opt->kbest, root, loglik, out);
    if ((st = mr_maxc(c)))
        return st;
    /* One deliberate difference from the jar: with a subnormal P(sentence) the unscaled
     * passes can lose every digit of the posteriors and find no tree (the jar prints (()));
     * then the scaled passes run. */
    if (!has_tree(c) && !c->scaled && root < DBL_MIN) {
        if ((st = inside_scaled(c, &loglik)))
            return st;
        mr_outside(c);
        if ((st = mr_maxc(c)))
            return st;
    }
    out->loglik = loglik;
    out->scaled = c->scaled;
    return mr_decode_tail(c, words, out);
}

cky_status mr_decode_tail(const mr_chart *c, char *const *words, maxrule_result *out)
{
    if (!has_tree(c))
        return CKY_OK;
    tree *t;
    cky_status st = mr_extract(c, words, &t);
    if (st)
        return st;
    out->score = c->mscore[mr_cell(c, 0, c->n) * c->nsym];
    out->tree = c->binarized ? t : tree_unannotate(t);
    return CKY_OK;
}

void maxrule_result_clear(maxrule_result *r)
{
    tree_free(r->tree);
    for (int k = 0; k < r->nrest; k++)
        tree_free(r->rest[k]);
    free(r->rest);
    free(r->rest_score);
    memset(r, 0, sizeof *r);
    r->loglik = r->score = -INFINITY;
}

cky_status maxrule_parse(const grammar *g, char *const *words, int n,
                         const maxrule_options *opt, maxrule_result *out)
{
    memset(out, 0, sizeof *out);
    out->loglik = out->score = -INFINITY;
    if (n < 1)
        return cky_fail(CKY_ERR_ARG, "maxrule: a sentence needs at least one word");
    cky_status st = grammar_check_sum(g);
    if (st)
        return st;
    const chart_mask *mask = opt ? opt->mask : NULL;
    if (mask && (mask->n != n || mask->nsym != g->nsym || mask->nsub != g->nsub_total))
        return cky_fail(CKY_ERR_ARG, "maxrule: a mask of %d words, %d symbols, %d substates "
                        "for %d words of a grammar of %d symbols, %d substates", mask->n,
                        mask->nsym, mask->nsub, n, g->nsym, g->nsub_total);
    mr_chart *c;
    if ((st = mr_chart_take(g, n, &c)))
        return st;
    c->from_pre = opt && opt->scaled_unaries_from_pre;
    c->binarized = opt && opt->binarized;
    c->variational = opt && opt->variational;
    c->mask = mask;
    st = decode(c, words, opt, out);
    mr_chart_done(c);
    if (st)
        maxrule_result_clear(out);
    return st;
}
