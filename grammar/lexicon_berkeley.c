/* lexicon_berkeley: SophisticatedLexicon scoring, bit for bit (see lexicon_berkeley.h).
 *
 * Words and signatures share one open-addressing hash table of strings. Each string owns two
 * runs of (tag, counts) entries sorted by tag: its wordToTagCounters arrays and its
 * unseenWordToTagCounters arrays, so scoring a word walks its runs once in tag order. */
#include "lexicon_berkeley.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "internal.h"
#include "signature.h"

enum { SEEN = 0, UNSEEN = 1 };

typedef struct lex_word {
    double count; /* wordCounter value, meaningful when `counted` */
    int counted;  /* the string is a key of wordCounter */
    size_t first[2], n[2]; /* its run in entry[SEEN] / entry[UNSEEN] */
} lex_word;

typedef struct lex_entry {
    int word, tag;
    size_t off; /* counts at pool + off; also the insertion order */
} lex_entry;

struct lexicon_berkeley {
    grammar_lexicon base; /* first: the grammar holds &base */
    int nsym;
    int *nsub;
    lexicon_berkeley_params p;
    double **tag_count, **unseen_tag_count, **diff; /* per tag; NULL = zeros / no smoothing */
    lex_word *words;
    int nwords, cap_words;
    name_table *names; /* word and signature strings; id = index into words */
    lex_entry *entry[2];
    size_t nentry[2], cap_entry[2];
    double *pool;
    size_t npool, cap_pool;
};

/* ---- the string table --------------------------------------------------------------------- */

/* Index of `w`, or -1. */
static int lex_find(const lexicon_berkeley *lb, const char *w)
{
    return name_table_find(lb->names, w, strlen(w));
}

/* Index of `w`, added if new; -1 when out of memory. Name ids are dense in order of
 * addition, so they index `words` too. */
static int lex_intern(lexicon_berkeley *lb, const char *w)
{
    int k = lex_find(lb, w);
    if (k >= 0)
        return k;
    if (!grammar_grow((void **)&lb->words, &lb->cap_words, lb->nwords, sizeof *lb->words))
        return -1;
    if (name_table_intern(lb->names, w, strlen(w), &k, NULL))
        return -1;
    memset(&lb->words[k], 0, sizeof lb->words[k]);
    lb->nwords++;
    return k;
}

/* ---- building ----------------------------------------------------------------------------- */

lexicon_berkeley *lexicon_berkeley_new(int nsym, const int *nsub,
                                       const lexicon_berkeley_params *params)
{
    lexicon_berkeley *lb = calloc(1, sizeof *lb);
    if (!lb)
        return NULL;
    lb->nsym = nsym;
    lb->p = *params;
    lb->nsub = malloc((size_t)(nsym ? nsym : 1) * sizeof *lb->nsub);
    lb->tag_count = calloc((size_t)(nsym ? nsym : 1), sizeof(double *));
    lb->unseen_tag_count = calloc((size_t)(nsym ? nsym : 1), sizeof(double *));
    lb->diff = calloc((size_t)(nsym ? nsym : 1), sizeof(double *));
    lb->names = name_table_new();
    if (!lb->nsub || !lb->tag_count || !lb->unseen_tag_count || !lb->diff || !lb->names) {
        lexicon_berkeley_free(lb);
        return NULL;
    }
    memcpy(lb->nsub, nsub, (size_t)nsym * sizeof *nsub);
    return lb;
}

void lexicon_berkeley_free(lexicon_berkeley *lb)
{
    if (!lb)
        return;
    for (int t = 0; lb->tag_count && t < lb->nsym; t++) {
        free(lb->tag_count[t]);
        free(lb->unseen_tag_count[t]);
        free(lb->diff[t]);
    }
    free(lb->tag_count);
    free(lb->unseen_tag_count);
    free(lb->diff);
    free(lb->nsub);
    free(lb->words);
    name_table_free(lb->names);
    free(lb->entry[SEEN]);
    free(lb->entry[UNSEEN]);
    free(lb->pool);
    free(lb);
}

static void lexicon_free_base(grammar_lexicon *lex)
{
    lexicon_berkeley_free((lexicon_berkeley *)lex);
}

static cky_status check_tag(const lexicon_berkeley *lb, int tag)
{
    if (tag < 0 || tag >= lb->nsym)
        return cky_fail(CKY_ERR_FORMAT, "lexicon names tag %d of %d", tag, lb->nsym);
    return CKY_OK;
}

/* A malloc'ed copy of n doubles, or NULL (also when src is NULL; *ok says which). */
static double *copy_doubles(const double *src, size_t n, int *ok)
{
    *ok = 1;
    if (!src)
        return NULL;
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        *ok = 0;
    else
        memcpy(d, src, n * sizeof *d);
    return d;
}

cky_status lexicon_berkeley_set_tag(lexicon_berkeley *lb, int tag, const double *tag_count,
                                    const double *unseen_tag_count, const double *diff_weights)
{
    cky_status st = check_tag(lb, tag);
    if (st)
        return st;
    size_t n = (size_t)lb->nsub[tag];
    int ok1, ok2, ok3;
    double *a = copy_doubles(tag_count, n, &ok1);
    double *b = copy_doubles(unseen_tag_count, n, &ok2);
    double *c = copy_doubles(diff_weights, n * n, &ok3);
    if (!ok1 || !ok2 || !ok3) {
        free(a);
        free(b);
        free(c);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    free(lb->tag_count[tag]);
    free(lb->unseen_tag_count[tag]);
    free(lb->diff[tag]);
    lb->tag_count[tag] = a;
    lb->unseen_tag_count[tag] = b;
    lb->diff[tag] = c;
    return CKY_OK;
}

cky_status lexicon_berkeley_add_word(lexicon_berkeley *lb, const char *word, double count)
{
    int k = lex_intern(lb, word);
    if (k < 0)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    lb->words[k].count = count;
    lb->words[k].counted = 1;
    return CKY_OK;
}

cky_status lexicon_berkeley_add_tag_word(lexicon_berkeley *lb, int tag, const char *word,
                                         const double *counts, int unseen)
{
    cky_status st = check_tag(lb, tag);
    if (st)
        return st;
    int which = unseen ? UNSEEN : SEEN;
    size_t n = (size_t)lb->nsub[tag];
    int k = lex_intern(lb, word);
    if (k < 0)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (lb->npool + n > lb->cap_pool) {
        size_t cap = lb->cap_pool ? 2 * lb->cap_pool : 1 << 16;
        while (cap < lb->npool + n)
            cap *= 2;
        double *p = realloc(lb->pool, cap * sizeof *p);
        if (!p)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        lb->pool = p;
        lb->cap_pool = cap;
    }
    if (lb->nentry[which] == lb->cap_entry[which]) {
        size_t cap = lb->cap_entry[which] ? 2 * lb->cap_entry[which] : 1024;
        lex_entry *e = realloc(lb->entry[which], cap * sizeof *e);
        if (!e)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        lb->entry[which] = e;
        lb->cap_entry[which] = cap;
    }
    double *dst = lb->pool + lb->npool;
    for (size_t s = 0; s < n; s++)
        dst[s] = counts[s];
    lb->entry[which][lb->nentry[which]++] = (lex_entry){k, tag, lb->npool};
    lb->npool += n;
    return CKY_OK;
}

static int entry_cmp(const void *a, const void *b)
{
    const lex_entry *x = a, *y = b;
    if (x->word != y->word)
        return x->word < y->word ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Sort one entry list by (word, tag), keep the last of duplicate keys (as HashMap.put
 * would) and record each word's run. */
static void index_entries(lexicon_berkeley *lb, int which)
{
    lex_entry *e = lb->entry[which];
    size_t n = lb->nentry[which], kept = 0;
    qsort(e, n, sizeof *e, entry_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && e[i + 1].word == e[i].word && e[i + 1].tag == e[i].tag)
            continue;
        e[kept++] = e[i];
    }
    lb->nentry[which] = kept;
    for (size_t i = 0; i < kept; i++) {
        lex_word *w = &lb->words[e[i].word];
        if (!w->n[which]++)
            w->first[which] = i;
    }
}

static cky_status lexicon_score(const grammar_lexicon *lex, const grammar *g, const char *word,
                                int loc, const unsigned char *tags, double *out);
static void lexicon_berkeley_save(const grammar_lexicon *lex, img_out *w);

cky_status lexicon_berkeley_finish(lexicon_berkeley *lb, grammar_lexicon **out)
{
    index_entries(lb, SEEN);
    index_entries(lb, UNSEEN);
    lb->base = (grammar_lexicon){IMG_LEXICON_BERKELEY, lexicon_berkeley_save, lexicon_score,
                                 lexicon_free_base};
    *out = &lb->base;
    return CKY_OK;
}

/* ---- scoring ------------------------------------------------------------------------------ */

static int lex_is_known(const char *w, void *ctx)
{
    const lexicon_berkeley *lb = ctx;
    int k = lex_find(lb, w);
    return k >= 0 && lb->words[k].counted;
}

/* wordCounter.getCount(w): 0 when absent. */
static double word_count(const lexicon_berkeley *lb, int k)
{
    return k >= 0 && lb->words[k].counted ? lb->words[k].count : 0.0;
}

/* Walks a string's (tag, counts) run in ascending tag order. */
typedef struct run_cursor {
    const lex_entry *e, *end;
} run_cursor;

static run_cursor run_of(const lexicon_berkeley *lb, int k, int which)
{
    if (k < 0 || !lb->words[k].n[which])
        return (run_cursor){NULL, NULL};
    const lex_entry *e = lb->entry[which] + lb->words[k].first[which];
    return (run_cursor){e, e + lb->words[k].n[which]};
}

/* The counts of `tag` in the run, or NULL. Tags must be asked in ascending order. */
static const double *run_counts(const lexicon_berkeley *lb, run_cursor *c, int tag)
{
    while (c->e < c->end && c->e->tag < tag)
        c->e++;
    return c->e < c->end && c->e->tag == tag ? lb->pool + c->e->off : NULL;
}

/* SophisticatedLexicon.score before the smoother, known-word branch, one substate. */
static double score_known(const lexicon_berkeley *lb, int tag, int s, double c_W,
                          const double *tw, int pruned)
{
    double c_T = lb->tag_count[tag] ? lb->tag_count[tag][s] : 0.0;
    if (c_T == 0)
        return 0.0;
    double c_TW = tw ? tw[s] : 0.0;
    if (pruned && c_TW < LEXICON_BERKELEY_PRUNE)
        c_TW = 0; /* removeUnlikelyTags */
    double c_Tunseen = lb->unseen_tag_count[tag] ? lb->unseen_tag_count[tag][s] : 0.0;
    double total = lb->p.total_tokens, totalUnseen = lb->p.total_unseen_tokens;
    double p_T_U = (totalUnseen == 0) ? 1 : c_Tunseen / totalUnseen;
    double pb_T_W;
    if (c_W > lb->p.smooth_in_unknowns_threshold)
        pb_T_W = (c_TW + 0.0001 * p_T_U) / (c_W + 0.0001);
    else
        pb_T_W = (c_TW + lb->p.smooth[1] * p_T_U) / (c_W + lb->p.smooth[1]);
    if (pb_T_W == 0)
        return 0.0;
    double p_T = (c_T / total);
    double p_W = (c_W / total);
    double pb_W_T = pb_T_W * p_W / p_T;
    return pb_W_T == 0 ? 1e-87 : pb_W_T;
}

/* The same, unknown-word branch (signature counts ts, signature count c_S). */
static double score_unknown(const lexicon_berkeley *lb, int tag, int s, double c_S,
                            const double *ts)
{
    double c_TS = ts ? ts[s] : 0.0;
    double c_U = lb->p.total_unseen_tokens;
    double total = lb->p.total_tokens;
    double c_T = lb->unseen_tag_count[tag] ? lb->unseen_tag_count[tag][s] : 0.0;
    double c_Tseen = lb->tag_count[tag] ? lb->tag_count[tag][s] : 0.0;
    double p_T_U = c_T / c_U;
    if (lb->p.unknown_level == 0) {
        c_TS = 0;
        c_S = 0;
    }
    double pb_T_S = (c_TS + lb->p.smooth[0] * p_T_U) / (c_S + lb->p.smooth[0]);
    double p_T = (c_Tseen / total);
    double p_W = 1.0 / total;
    double pb_W_T = pb_T_S * p_W / p_T;
    return pb_W_T == 0 ? 1e-87 : pb_W_T;
}

/* SmoothAcrossParentBits.smooth: res = diffWeights[tag] * res, each sum from 0.0, k ascending. */
static cky_status smooth_tag(const lexicon_berkeley *lb, int tag, double *res)
{
    const double *w = lb->diff[tag];
    int n = lb->nsub[tag];
    if (!w)
        return CKY_OK;
    double stackbuf[128];
    double *tmp = n <= 128 ? stackbuf : malloc((size_t)n * sizeof *tmp);
    if (!tmp)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int k = 0; k < n; k++)
            sum += w[(size_t)i * n + k] * res[k];
        tmp[i] = sum;
    }
    memcpy(res, tmp, (size_t)n * sizeof *res);
    if (tmp != stackbuf)
        free(tmp);
    return CKY_OK;
}

/* Linear smoothed scores of every POS tag (with tags: those it sets) into out[sub_offset[tag]
 * ..]; phrasal entries and the tags skipped are left alone. */
static cky_status score_pos_tags(const lexicon_berkeley *lb, const grammar *g, const char *word,
                                 int loc, int pruned, const unsigned char *tags, double *out)
{
    if (g->nsym != lb->nsym)
        return cky_fail(CKY_ERR_ARG, "lexicon of %d tags used with a grammar of %d symbols",
                        lb->nsym, g->nsym);
    int k = lex_find(lb, word);
    double c_W = word_count(lb, k);
    int known = c_W > 0.0;
    double c_S = 0.0;
    run_cursor run;
    if (known) {
        run = run_of(lb, k, SEEN);
    } else {
        char buf[256], *sig = buf;
        size_t need = signature_of(word, loc, lb->p.unknown_level, lex_is_known, (void *)lb,
                                   buf, sizeof buf);
        if (need >= sizeof buf) {
            if (!(sig = malloc(need + 1)))
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
            signature_of(word, loc, lb->p.unknown_level, lex_is_known, (void *)lb, sig,
                         need + 1);
        }
        int ks = lex_find(lb, sig);
        if (sig != buf)
            free(sig);
        c_S = word_count(lb, ks);
        run = run_of(lb, ks, UNSEEN);
    }
    for (int tag = 0; tag < g->nsym; tag++) {
        if (g->phrasal[tag] || (tags && !tags[tag]))
            continue;
        const double *counts = run_counts(lb, &run, tag); /* (ascending tags, gaps allowed) */
        double *res = out + g->sub_offset[tag];
        for (int s = 0; s < lb->nsub[tag]; s++)
            res[s] = known ? score_known(lb, tag, s, c_W, counts, pruned)
                           : score_unknown(lb, tag, s, c_S, counts);
        cky_status st = smooth_tag(lb, tag, res);
        if (st)
            return st;
    }
    return CKY_OK;
}

static cky_status lexicon_score(const grammar_lexicon *lex, const grammar *g, const char *word,
                                int loc, const unsigned char *tags, double *out)
{
    cky_status st = score_pos_tags((const lexicon_berkeley *)lex, g, word, loc, 1, tags, out);
    if (st)
        return st;
    for (int tag = 0; tag < g->nsym; tag++)
        if (!g->phrasal[tag] && (!tags || tags[tag]))
            for (int s = 0; s < g->nsub[tag]; s++)
                out[g->sub_offset[tag] + s] = grammar_log(out[g->sub_offset[tag] + s]);
    return CKY_OK;
}

cky_status lexicon_berkeley_check(const grammar *g)
{
    if (!g->lexicon || g->lexicon->score != lexicon_score)
        return cky_fail(CKY_ERR_UNSUPPORTED,
                        "%s: linear lexical scores need the Berkeley lexicon of a native .gr "
                        "grammar (the text export lacks the raw counts)",
                        g->source);
    return CKY_OK;
}

cky_status lexicon_berkeley_score_linear(const grammar *g, const char *word, int loc, int pruned,
                                         const unsigned char *tags, double *out)
{
    if (pruned && g->lexicon && g->lexicon->kind == IMG_LEXICON_TEXT) {
        /* a text export: the exp of the log scores it gives the parser (exp(-inf) = 0) */
        cky_status st = grammar_score_word(g, word, loc, out);
        for (int i = 0; !st && i < g->nsub_total; i++) /* most are -inf: no call */
            out[i] = out[i] == -INFINITY ? 0.0 : exp(out[i]);
        return st;
    }
    cky_status st = lexicon_berkeley_check(g);
    if (st)
        return st;
    for (int i = 0; i < g->nsub_total; i++)
        out[i] = 0.0;
    return score_pos_tags((const lexicon_berkeley *)g->lexicon, g, word, loc, pruned, tags, out);
}

/* ---- projection (the coarse-to-fine cascade, grammar/cascade.c) ---- */

/* SmoothAcrossParentBits.updateWeights for one symbol: the n x n weights w onto m
 * substates (to[x]: the new substate of x), each row normalized; [[1.0]] for m = 1. */
static double *project_weights(const double *w, int n, const int *to, int m)
{
    double *nw = calloc((size_t)m * m, sizeof *nw), *total = calloc((size_t)m, sizeof *total);
    if (!nw || !total) {
        free(nw);
        free(total);
        return NULL;
    }
    if (m == 1) {
        nw[0] = 1.0;
    } else {
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                nw[(size_t)to[a] * m + to[b]] += w[(size_t)a * n + b];
                total[to[a]] += w[(size_t)a * n + b];
            }
        for (int a = 0; a < m; a++)
            for (int b = 0; b < m; b++)
                nw[(size_t)a * m + b] /= total[a];
    }
    free(total);
    return nw;
}

/* new[to[x]] += cond[x] * old[x] over the n fine values (NULL stays NULL: zeros). */
static double *project_counts(const double *old, int n, const int *to, const double *cond,
                              int m, int *nomem)
{
    if (!old)
        return NULL;
    double *d = calloc((size_t)m, sizeof *d);
    if (!d) {
        *nomem = 1;
        return NULL;
    }
    for (int x = 0; x < n; x++)
        d[to[x]] += cond[x] * old[x];
    return d;
}

cky_status lexicon_berkeley_project(const grammar *g, const int *nsub_to, const int *to_sub,
                                    const double *cond, double prune, grammar_lexicon **out)
{
    cky_status st = lexicon_berkeley_check(g);
    if (st)
        return st;
    const lexicon_berkeley *fine = (const lexicon_berkeley *)g->lexicon;
    lexicon_berkeley *lb = lexicon_berkeley_new(fine->nsym, nsub_to, &fine->p);
    int nomem = !lb;
    for (int t = 0; !nomem && t < fine->nsym; t++) {
        int n = fine->nsub[t], m = nsub_to[t], off = g->sub_offset[t];
        lb->tag_count[t] =
            project_counts(fine->tag_count[t], n, to_sub + off, cond + off, m, &nomem);
        lb->unseen_tag_count[t] =
            project_counts(fine->unseen_tag_count[t], n, to_sub + off, cond + off, m, &nomem);
        if (fine->diff[t] && !(lb->diff[t] = project_weights(fine->diff[t], n, to_sub + off, m)))
            nomem = 1;
    }
    /* the same strings, words and entries; only the counts change size */
    for (int w = 0; !nomem && w < name_table_count(fine->names); w++) {
        const char *str = name_table_str(fine->names, w);
        int id;
        if (name_table_intern(lb->names, str, strlen(str), &id, NULL) || id != w)
            nomem = 1;
    }
    if (!nomem && fine->nwords) {
        if (!(lb->words = malloc((size_t)fine->nwords * sizeof *lb->words)))
            nomem = 1;
        else
            memcpy(lb->words, fine->words, (size_t)fine->nwords * sizeof *lb->words);
        lb->nwords = lb->cap_words = fine->nwords;
    }
    size_t pool = 0;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < fine->nentry[k]; i++)
            pool += (size_t)nsub_to[fine->entry[k][i].tag];
    if (!nomem && !(lb->pool = calloc(pool ? pool : 1, sizeof *lb->pool)))
        nomem = 1;
    lb->npool = lb->cap_pool = nomem ? 0 : pool;
    /* the entries as the fine lexicon's, their counts projected into the new pool, the seen
     * ones pruned (removeUnlikelyTags) */
    size_t at = 0;
    for (int k = 0; k < 2 && !nomem; k++) {
        size_t ne = fine->nentry[k];
        if (!(lb->entry[k] = malloc((ne ? ne : 1) * sizeof *lb->entry[k]))) {
            nomem = 1;
            break;
        }
        lb->nentry[k] = lb->cap_entry[k] = ne;
        for (size_t i = 0; i < ne; i++) {
            const lex_entry *e = &fine->entry[k][i];
            int t = e->tag, n = fine->nsub[t], m = nsub_to[t], off = g->sub_offset[t];
            const double *old = fine->pool + e->off;
            double *d = lb->pool + at;
            for (int x = 0; x < n; x++)
                d[to_sub[off + x]] += cond[off + x] * old[x];
            for (int y = 0; k == SEEN && y < m; y++)
                if (d[y] < prune)
                    d[y] = 0;
            lb->entry[k][i] = (lex_entry){e->word, t, at};
            at += (size_t)m;
        }
    }
    if (nomem) {
        lexicon_berkeley_free(lb);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    lb->base = (grammar_lexicon){IMG_LEXICON_BERKELEY, lexicon_berkeley_save, lexicon_score,
                                 lexicon_free_base};
    *out = &lb->base;
    return CKY_OK;
}

/* ---- images (grammar/image.h) ---- */

static void lexicon_berkeley_save(const grammar_lexicon *lex, img_out *w)
{
    const lexicon_berkeley *lb = (const lexicon_berkeley *)lex;
    img_put_i64(w, lb->nsym);
    img_put(w, lb->nsub, (size_t)lb->nsym * sizeof *lb->nsub);
    img_put(w, &lb->p, sizeof lb->p);
    for (int t = 0; t < lb->nsym; t++) {
        double *const arr[3] = {lb->tag_count[t], lb->unseen_tag_count[t], lb->diff[t]};
        size_t n[3] = {(size_t)lb->nsub[t], (size_t)lb->nsub[t],
                       (size_t)lb->nsub[t] * lb->nsub[t]};
        for (int k = 0; k < 3; k++) {
            img_put_i64(w, arr[k] != NULL);
            if (arr[k])
                img_put(w, arr[k], n[k] * sizeof(double));
        }
    }
    name_table_save(lb->names, w);
    int64_t head[4] = {lb->nwords, (int64_t)lb->nentry[SEEN], (int64_t)lb->nentry[UNSEEN],
                       (int64_t)lb->npool};
    img_put(w, head, sizeof head);
    img_put(w, lb->words, (size_t)lb->nwords * sizeof *lb->words);
    for (int k = 0; k < 2; k++)
        img_put(w, lb->entry[k], lb->nentry[k] * sizeof *lb->entry[k]);
    img_put(w, lb->pool, lb->npool * sizeof *lb->pool);
}

/* Every index of a restored lexicon inside its arrays. */
static int lexicon_berkeley_valid(const lexicon_berkeley *lb, const grammar *g)
{
    if (lb->nsym != g->nsym || name_table_count(lb->names) != lb->nwords)
        return 0;
    for (int t = 0; t < lb->nsym; t++)
        if (lb->nsub[t] != g->nsub[t])
            return 0;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lb->nentry[k]; i++) {
            const lex_entry *e = &lb->entry[k][i];
            if (e->word < 0 || e->word >= lb->nwords || e->tag < 0 || e->tag >= lb->nsym ||
                e->off > lb->npool || (size_t)lb->nsub[e->tag] > lb->npool - e->off)
                return 0;
        }
        for (int w = 0; w < lb->nwords; w++)
            if (lb->words[w].first[k] > lb->nentry[k] ||
                lb->words[w].n[k] > lb->nentry[k] - lb->words[w].first[k])
                return 0;
    }
    return 1;
}

cky_status lexicon_berkeley_restore(img_in *in, const grammar *g, grammar_lexicon **out)
{
    int nomem = 0;
    int nsym = (int)img_get_i64(in, 0, 1 << 20);
    const int *nsub = img_get(in, (size_t)nsym * sizeof *nsub);
    const lexicon_berkeley_params *p = img_get(in, sizeof *p);
    lexicon_berkeley *lb = NULL;
    for (int t = 0; nsub && t < nsym; t++)
        if (nsub[t] < 1 || nsub[t] > 4096)
            in->bad = 1;
    if (!in->bad && !(lb = lexicon_berkeley_new(nsym, nsub, p)))
        nomem = 1;
    for (int t = 0; lb && t < nsym && !in->bad; t++) {
        double **arr[3] = {&lb->tag_count[t], &lb->unseen_tag_count[t], &lb->diff[t]};
        size_t n[3] = {(size_t)nsub[t], (size_t)nsub[t], (size_t)nsub[t] * nsub[t]};
        for (int k = 0; k < 3; k++)
            if (img_get_i64(in, 0, 1))
                *arr[k] = img_get_copy(in, n[k] * sizeof(double), &nomem);
    }
    if (lb && !in->bad) {
        name_table_free(lb->names);
        lb->names = name_table_restore(in, &nomem);
        lb->nwords = lb->cap_words = (int)img_get_i64(in, 0, 1 << 30);
        for (int k = 0; k < 2; k++)
            lb->nentry[k] = lb->cap_entry[k] = (size_t)img_get_i64(in, 0, (int64_t)1 << 40);
        lb->npool = lb->cap_pool = (size_t)img_get_i64(in, 0, (int64_t)1 << 40);
        lb->words = img_get_copy(in, (size_t)lb->nwords * sizeof *lb->words, &nomem);
        for (int k = 0; k < 2; k++)
            lb->entry[k] = img_get_copy(in, lb->nentry[k] * sizeof *lb->entry[k], &nomem);
        lb->pool = img_get_copy(in, lb->npool * sizeof *lb->pool, &nomem);
    }
    if (!lb || in->bad || nomem || !lb->names || !lexicon_berkeley_valid(lb, g)) {
        lexicon_berkeley_free(lb);
        if (nomem)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        return cky_fail(CKY_ERR_FORMAT, "grammar image: bad Berkeley lexicon");
    }
    lb->base = (grammar_lexicon){IMG_LEXICON_BERKELEY, lexicon_berkeley_save, lexicon_score,
                                 lexicon_free_base};
    *out = &lb->base;
    return CKY_OK;
}
