/* plan: what the coarse passes need from the cascade of a grammar, prepared once (the
 * level-0 rules as scalars, the unaries of every level by child), and the work space of
 * one sentence, grown to the longest sentence seen. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The jar's threshold arrays have entries for levels up to 6 (index level + 1). */
#define PRUNE_LEVELS_COVERED 7

static void free_scratch(prune_scratch *w)
{
    free(w->acc);
    free(w->xs);
    free(w->xlist);
    free(w->xcount);
    free(w->lpos);
    free(w->rpos);
    free(w->lmax);
    free(w->rmax);
    free(w->ks);
    free(w->span);
    free(w->lmask);
    free(w->after);
    free(w->lex);
}

void prune_free_plan(prune_plan *p)
{
    if (!p)
        return;
    free(p->bin);
    free(p->bin_l);
    free(p->bin_r);
    free(p->un_p);
    free(p->un_c);
    free(p->bin_first);
    free(p->bin_lfirst);
    free(p->bin_rfirst);
    free(p->un_pfirst);
    free(p->un_cfirst);
    free(p->phrasal);
    for (int k = 0; p->lists && k < p->cascade->nlevel; k++) {
        prune_lists *l = &p->lists[k];
        free(l->un_by_child);
        free(l->un_cfirst);
        free(l->bin);
        free(l->group_first);
        free(l->group_left);
        free(l->parent_group);
        free(l->wmax);
        free(l->wpar);
        free(l->wpar_first);
    }
    free(p->lists);
    free(p->vi);
    free(p->vo);
    free(p->ia);
    free(p->ib);
    free(p->oa);
    free(p->ob);
    free(p->ma);
    free(p->mb);
    free(p->moa);
    free(p->mob);
    free(p->in);
    free(p->out);
    free(p->state);
    free(p->sub);
    free(p->sub2);
    for (int m = 0; m < p->nscratch; m++)
        free_scratch(&p->scratch[m]);
    free(p->scratch);
    free(p->lbits);
    free(p->rbits);
    free(p->pos);
    free(p->syms);
    free(p->nsyms);
    free(p->imax);
    free(p);
}

/* Stable counting sort of n items by key[i] in [0, nkey): order[] and first[nkey + 1]. */
static cky_status sort_by_key(const int *key, int n, int nkey, int **order, int **first)
{
    *order = malloc((size_t)(n ? n : 1) * sizeof **order);
    *first = calloc((size_t)nkey + 1, sizeof **first);
    int *fill = malloc((size_t)(nkey ? nkey : 1) * sizeof *fill);
    if (!*order || !*first || !fill) {
        free(fill);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        (*first)[key[i] + 1]++;
    for (int s = 0; s < nkey; s++)
        (*first)[s + 1] += (*first)[s];
    memcpy(fill, *first, (size_t)nkey * sizeof *fill);
    for (int i = 0; i < n; i++)
        (*order)[fill[key[i]]++] = i;
    free(fill);
    return CKY_OK;
}

static int by_score_desc(const void *a, const void *b)
{
    double x = ((const prune_rule1 *)a)->score, y = ((const prune_rule1 *)b)->score;
    return (x < y) - (x > y);
}

/* The rules of `all` (n) grouped by a symbol (which: 0 the parent, 1 the left child, 2 the
 * right child) and within it by the class of the rule's other symbols (internal.h: which
 * are POS tags), each group by descending score. */
static cky_status group_rules(const prune_rule1 *all, int n, const grammar *g, int which,
                              prune_rule1 **out, int **first)
{
    int nkey = g->nsym * (which == 0 ? 4 : 2);
    int *key = malloc((size_t)(n ? n : 1) * sizeof *key), *order = NULL;
    *out = malloc((size_t)(n ? n : 1) * sizeof **out);
    if (!key || !*out) {
        free(key);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        const prune_rule1 *r = &all[i];
        key[i] = which == 0   ? r->parent * 4 + g->phrasal[r->left] * 2 + g->phrasal[r->right]
                 : which == 1 ? r->left * 2 + g->phrasal[r->right]
                              : r->right * 2 + g->phrasal[r->left];
    }
    cky_status st = sort_by_key(key, n, nkey, &order, first);
    for (int i = 0; !st && i < n; i++)
        (*out)[i] = all[order[i]];
    for (int s = 0; !st && s < nkey; s++)
        qsort(*out + (*first)[s], (size_t)((*first)[s + 1] - (*first)[s]), sizeof **out,
              by_score_desc);
    free(order);
    free(key);
    return st;
}

/* Level 0's rules as scalars: a binary rule's (0, 0) row, a unary's one value. */
static cky_status plan_xbar(prune_plan *p, const grammar *g)
{
    int nb = 0, nu = 0;
    prune_rule1 *bin = malloc((size_t)(g->nbinary ? g->nbinary : 1) * sizeof *bin);
    p->un_p = malloc((size_t)(g->nunary ? g->nunary : 1) * sizeof *p->un_p);
    p->un_c = malloc((size_t)(g->nunary ? g->nunary : 1) * sizeof *p->un_c);
    p->un_pfirst = calloc((size_t)g->nsym + 1, sizeof *p->un_pfirst);
    int *child = calloc((size_t)(g->nunary ? g->nunary : 1), sizeof *child), *order = NULL;
    p->phrasal = malloc((size_t)g->nsym * sizeof *p->phrasal);
    if (!bin || !p->un_p || !p->un_c || !p->un_pfirst || !child || !p->phrasal) {
        free(bin);
        free(child);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < g->nsym; s++) {
        if (g->phrasal[s])
            p->phrasal[p->nphrasal++] = s;
        for (int b = g->binary_first[s]; b < g->binary_first[s + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            if (r->nrow > 0 && r->row_l[0] == 0 && r->row_r[0] == 0 && r->score[0] != -INFINITY)
                bin[nb++] = (prune_rule1){s, r->left, r->right, r->score[0]};
        }
        for (int u = g->unary_first[s]; u < g->unary_first[s + 1]; u++)
            if (g->unary[u].score[0] != -INFINITY) {
                child[nu] = g->unary[u].child;
                p->un_p[nu++] = (prune_rule1){s, g->unary[u].child, -1, g->unary[u].score[0]};
            }
        p->un_pfirst[s + 1] = nu;
    }
    cky_status st = group_rules(bin, nb, g, 0, &p->bin, &p->bin_first);
    if (!st)
        st = group_rules(bin, nb, g, 1, &p->bin_l, &p->bin_lfirst);
    if (!st)
        st = group_rules(bin, nb, g, 2, &p->bin_r, &p->bin_rfirst);
    if (!st)
        st = sort_by_key(child, nu, g->nsym, &order, &p->un_cfirst);
    for (int i = 0; !st && i < nu; i++)
        p->un_c[i] = p->un_p[order[i]];
    free(order);
    free(child);
    free(bin);
    return st;
}

/* The score bounds of level g's binary rules (internal.h: prune_lists). */
static cky_status plan_bounds(prune_lists *l, const grammar *g)
{
    size_t nb = (size_t)(g->nbinary ? g->nbinary : 1), tot = 0;
    for (int b = 0; b < g->nbinary; b++)
        tot += (size_t)g->nsub[g->binary[b].parent];
    l->wmax = malloc(nb * sizeof *l->wmax);
    l->wpar = malloc((tot ? tot : 1) * sizeof *l->wpar);
    l->wpar_first = malloc(nb * sizeof *l->wpar_first);
    if (!l->wmax || !l->wpar || !l->wpar_first)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    size_t at = 0;
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        int np = g->nsub[r->parent];
        double *wp = l->wpar + at, best = -INFINITY;
        l->wpar_first[b] = (int)at;
        at += (size_t)np;
        for (int x = 0; x < np; x++)
            wp[x] = -INFINITY;
        for (int row = 0; row < r->nrow; row++)
            for (int x = 0; x < np; x++) {
                double w = r->score[(size_t)row * np + x];
                wp[x] = w > wp[x] ? w : wp[x];
            }
        for (int x = 0; x < np; x++)
            best = wp[x] > best ? wp[x] : best;
        l->wmax[b] = best;
    }
    return CKY_OK;
}

/* The rule lists of level k (internal.h: prune_lists). */
static cky_status plan_level(prune_lists *l, const grammar *g)
{
    int *child = malloc((size_t)(g->nunary ? g->nunary : 1) * sizeof *child);
    int *left = malloc((size_t)(g->nbinary ? g->nbinary : 1) * sizeof *left);
    int *order = NULL, *first = NULL;
    if (!child || !left) {
        free(child);
        free(left);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int u = 0; u < g->nunary; u++)
        child[u] = g->unary[u].child;
    cky_status st = sort_by_key(child, g->nunary, g->nsym, &l->un_by_child, &l->un_cfirst);
    /* binary rules: the grammar's are by parent; a stable sort by left child within each */
    l->bin = malloc((size_t)(g->nbinary ? g->nbinary : 1) * sizeof *l->bin);
    l->group_first = malloc(((size_t)g->nbinary + 1) * sizeof *l->group_first);
    l->group_left = malloc((size_t)(g->nbinary ? g->nbinary : 1) * sizeof *l->group_left);
    l->parent_group = calloc((size_t)g->nsym + 1, sizeof *l->parent_group);
    if (!st && (!l->bin || !l->group_first || !l->group_left || !l->parent_group))
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    int ngroup = 0;
    for (int P = 0; !st && P < g->nsym; P++) {
        int b0 = g->binary_first[P], nb = g->binary_first[P + 1] - b0;
        for (int b = 0; b < nb; b++)
            left[b] = g->binary[b0 + b].left;
        if ((st = sort_by_key(left, nb, g->nsym, &order, &first)))
            break;
        for (int b = 0; b < nb; b++)
            l->bin[b0 + b] = b0 + order[b];
        for (int L = 0; L < g->nsym; L++)
            if (first[L + 1] > first[L]) {
                l->group_first[ngroup] = b0 + first[L];
                l->group_left[ngroup++] = L;
            }
        l->parent_group[P + 1] = ngroup;
        free(order);
        free(first);
        order = first = NULL;
    }
    if (!st)
        l->group_first[ngroup] = g->nbinary;
    if (!st)
        st = plan_bounds(l, g);
    free(order);
    free(first);
    free(child);
    free(left);
    return st;
}

cky_status prune_new_plan(const grammar *g, prune_plan **out)
{
    const grammar_cascade *c = g->cascade;
    if (!c)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: no coarse-to-fine cascade (a native .gr "
                        "grammar with split trees has one)", g->source);
    if (c->nlevel > PRUNE_LEVELS_COVERED)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: %d coarse levels; the Berkeley parser's "
                        "thresholds cover %d", g->source, c->nlevel, PRUNE_LEVELS_COVERED);
    prune_plan *p = calloc(1, sizeof *p);
    if (!p)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    p->fine = g;
    p->cascade = c;
    p->lists = calloc((size_t)c->nlevel, sizeof *p->lists);
    cky_status st = !p->lists ? cky_fail(CKY_ERR_NOMEM, "out of memory")
                              : plan_xbar(p, c->level[0]);
    for (int k = 1; !st && k < c->nlevel; k++)
        st = plan_level(&p->lists[k], c->level[k]);
    p->maxtotal = g->nsub_total;
    for (int k = 0; k <= c->nlevel; k++) {
        const grammar *lg = k < c->nlevel ? c->level[k] : g;
        if (lg->nsub_total > p->maxtotal)
            p->maxtotal = lg->nsub_total;
        for (int s = 0; s < lg->nsym; s++)
            if (lg->nsub[s] > p->maxsub)
                p->maxsub = lg->nsub[s];
    }
    p->threads = 1;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    p->avx2 = __builtin_cpu_supports("avx2");
#endif
    if (st) {
        prune_free_plan(p);
        return st;
    }
    *out = p;
    return CKY_OK;
}

typedef struct word_job {
    prune_plan *p;
    const grammar *g;
    char *const *words;
    int n;
    const unsigned char *state;
    void (*put)(void *arg, int i, const double *lex);
    void *arg;
} word_job;

static void score_word(void *arg, long i, int member)
{
    const word_job *job = arg;
    prune_scratch *ws = &job->p->scratch[member];
    if (ws->st)
        return;
    const unsigned char *tags =
        job->state ? job->state + chart_cell(job->n, (int)i, (int)i + 1) * (size_t)job->g->nsym
                   : NULL;
    cky_status st = grammar_score_tags(job->g, job->words[i], (int)i, tags, ws->lex);
    if (st) {
        ws->st = st;
        snprintf(ws->error, sizeof ws->error, "%s", cky_last_error());
        return;
    }
    prune_gold_lexicon(job->p, job->g, (int)i, ws->lex);
    job->put(job->arg, (int)i, ws->lex);
}

cky_status prune_score_words(prune_plan *p, const grammar *g, char *const *words, int n,
                             const unsigned char *state,
                             void (*put)(void *arg, int i, const double *lex), void *arg)
{
    word_job job = {p, g, words, n, state, put, arg};
    team_for(p->team, n, score_word, &job);
    cky_status st = CKY_OK;
    for (int m = 0; m < p->nscratch; m++) {
        if (p->scratch[m].st && !st)
            st = cky_fail(p->scratch[m].st, "%s", p->scratch[m].error);
        p->scratch[m].st = CKY_OK;
    }
    return st;
}

cky_status prune_reserve_packed(prune_plan *p, size_t n)
{
    if (n <= p->cap_packed)
        return CKY_OK;
    size_t cap = p->cap_packed ? p->cap_packed : 1 << 14;
    while (cap < n)
        cap *= 2;
    free(p->in);
    free(p->out);
    p->in = malloc(cap * sizeof *p->in);
    p->out = malloc(cap * sizeof *p->out);
    p->cap_packed = p->in && p->out ? cap : 0;
    if (!p->cap_packed)
        return cky_fail(CKY_ERR_NOMEM, "prune: out of memory for %zu scores", n);
    return CKY_OK;
}

/* The pointer at ptr (any object pointer type) freed and set to `bytes` of new memory
 * (contents not kept); 0 when out of memory. memcpy: no aliasing through void **. */
static int regrow(void *ptr, size_t bytes)
{
    void *old, *mem;
    memcpy(&old, ptr, sizeof old);
    free(old);
    mem = malloc(bytes ? bytes : 1);
    memcpy(ptr, &mem, sizeof mem);
    return mem != NULL;
}

void prune_set_threads(prune_plan *p, int threads) { p->threads = threads > 1 ? threads : 1; }

void prune_set_levels(prune_plan *p, int levels) { p->no_levels = !levels; }

/* Scratch w for sentences of n words (nothing kept); 0 when out of memory. */
static int grow_scratch(const prune_plan *p, prune_scratch *w, int n)
{
    size_t ends = (size_t)n + 1, sub = (size_t)p->maxsub, tot = (size_t)p->maxtotal;
    size_t words = (size_t)(n + 64) / 64 * sizeof(uint64_t);
    return regrow(&w->acc, sub * sizeof(double)) & regrow(&w->xs, sub * sizeof(int)) &
           regrow(&w->xlist, tot * sizeof(int)) &
           regrow(&w->xcount, (size_t)p->fine->nsym * sizeof(int)) &
           regrow(&w->lpos, ends * sizeof(int *)) & regrow(&w->rpos, ends * sizeof(int *)) &
           regrow(&w->lmax, ends * sizeof(double *)) & regrow(&w->rmax, ends * sizeof(double *)) &
           regrow(&w->ks, ends * sizeof(int)) & regrow(&w->span, words) &
           regrow(&w->lmask, words) & regrow(&w->after, tot * sizeof(double)) &
           regrow(&w->lex, tot * sizeof(double));
}

/* The scratch of p->threads members for sentences of p->cap_n words. */
static cky_status reserve_scratch(prune_plan *p)
{
    if (p->nscratch < p->threads) {
        prune_scratch *w = realloc(p->scratch, (size_t)p->threads * sizeof *w);
        if (!w)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        memset(w + p->nscratch, 0, (size_t)(p->threads - p->nscratch) * sizeof *w);
        p->scratch = w;
        for (; p->nscratch < p->threads; p->nscratch++)
            if (!grow_scratch(p, &w[p->nscratch], p->cap_n)) {
                free_scratch(&w[p->nscratch]);
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
            }
    }
    return CKY_OK;
}

cky_status prune_reserve(prune_plan *p, int n)
{
    if (n <= p->cap_n)
        return reserve_scratch(p);
    size_t cells = chart_ncells(n), nsym = (size_t)p->fine->nsym, tot = (size_t)p->maxtotal;
    size_t row = ((size_t)n + 1) * nsym, by = row * ((size_t)n + 1), d = sizeof(double);
    p->nword = (n + 64) / 64;
    size_t bits = row * (size_t)p->nword * sizeof(uint64_t);
    int ok = regrow(&p->vi, cells * nsym * d) & regrow(&p->vo, cells * nsym * d) &
             regrow(&p->ia, by * d) & regrow(&p->ib, by * d) & regrow(&p->oa, by * d) &
             regrow(&p->ob, by * d) & regrow(&p->ma, row * d) & regrow(&p->mb, row * d) &
             regrow(&p->moa, row * d) & regrow(&p->mob, row * d) &
             regrow(&p->state, cells * nsym) & regrow(&p->sub, cells * tot) &
             regrow(&p->sub2, cells * tot) & regrow(&p->pos, cells * nsym * sizeof(int)) &
             regrow(&p->lbits, bits) & regrow(&p->rbits, bits) &
             regrow(&p->syms, cells * nsym * sizeof(int)) &
             regrow(&p->nsyms, cells * sizeof(int)) & regrow(&p->imax, cells * nsym * d);
    for (int m = 0; m < p->nscratch; m++)
        ok &= grow_scratch(p, &p->scratch[m], n);
    p->cap_n = ok ? n : 0;
    if (!ok)
        return cky_fail(CKY_ERR_NOMEM, "prune: out of memory for a %d-word sentence", n);
    return reserve_scratch(p);
}
