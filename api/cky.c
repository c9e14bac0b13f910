/* cky: the flat C API of libcky.so (see cky.h), on top of grammar/, parser/ and
 * corpus_tools/. The parse functions (trees, scores, k-best lists; with or without gold tags)
 * share one path: batch_parse reads and parses the lines, then each writes its own out
 * arrays. */
#include "cky.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/tagged.h"
#include "../corpus_tools/tokenize.h"
#include "../corpus_tools/tree.h"
#include "../parser/parser.h"

_Static_assert(CKY_SCORE_MODEL == (int)PARSER_SCORE_MODEL &&
                   CKY_SCORE_SENTENCE == (int)PARSER_SCORE_SENTENCE &&
                   CKY_SCORE_TREE == (int)PARSER_SCORE_TREE &&
                   CKY_SCORE_CONFIDENCE == (int)PARSER_SCORE_CONFIDENCE &&
                   CKY_NSCORE == (int)PARSER_NSCORE,
               "the API's scores are parser_berkeley_scores'");
_Static_assert(CKY_PARSE_OK == (int)PARSE_OK && CKY_PARSE_EMPTY == (int)PARSE_EMPTY &&
                   CKY_PARSE_TOO_LONG == (int)PARSE_TOO_LONG &&
                   CKY_PARSE_NO_PARSE == (int)PARSE_NO_PARSE &&
                   CKY_PARSE_FAILED == (int)PARSE_FAILED,
               "the API's outcome values are parse_outcome's");

struct cky_parser {
    grammar *g;
    parser *p;
    parser_options opt;
    /* the parser of cky_parser_parse_kbest (kp_k-best lists) or of cky_parser_parse_scores
     * (kp_scores: the pruned decoder's tree scores), made when first asked (NULL: none) */
    parser *kp;
    int kp_k, kp_scores;
    pthread_mutex_t lock;
    /* the caller's progress function and the counts of each stage, under progress_lock;
     * opened: the open returned, the function is not called any more */
    cky_progress_fn progress_fn;
    void *progress_ctx;
    progress_tally tally[PROGRESS_NSTAGE];
    int opened;
    pthread_mutex_t progress_lock;
};

/* The library's reports (util/progress.h) added up and passed on, one call at a time. */
static void on_progress(void *ctx, const progress_event *e)
{
    static const char *const names[PROGRESS_NSTAGE] = {"grammar", "image", "compile"};
    cky_parser *h = ctx;
    if ((unsigned)e->stage >= PROGRESS_NSTAGE)
        return;
    pthread_mutex_lock(&h->progress_lock);
    progress_tally *t = &h->tally[e->stage];
    int r = progress_tally_add(t, e);
    if (!h->opened)
        h->progress_fn(h->progress_ctx, names[e->stage], r == 1 ? 0 : r == 2 ? 2 : 1, t->done,
                       t->total, t->cached);
    pthread_mutex_unlock(&h->progress_lock);
}

/* The parser engine named `name` ("auto" or NULL: the default engine here). */
static cky_status engine_from_name(const char *name, parser_engine *out)
{
    if (!name || !strcmp(name, "auto")) {
        *out = parser_default_engine();
        return CKY_OK;
    }
    if (parser_engine_find(name, out))
        return CKY_OK;
    return cky_fail(CKY_ERR_ARG, "unknown engine '%s' (known: auto, %s)", name,
                    parser_engine_names());
}

/* The decoder named `name` (NULL or "auto": -1, parser_default_decoder's choice). */
static cky_status decoder_from_name(const char *name, parser_decoder *out)
{
    if (!name || !strcmp(name, "auto"))
        *out = (parser_decoder)-1;
    else if (!parser_decoder_find(name, out))
        return cky_fail(CKY_ERR_ARG, "unknown decoder '%s' (known: auto, %s)", name,
                        parser_decoder_names());
    return CKY_OK;
}

cky_parser *cky_parser_open(const char *grammar_path, const char *engine, const char *decoder,
                            int threads, int max_length, int device)
{
    return cky_parser_open_progress(grammar_path, engine, decoder, threads, max_length, device,
                                    NULL, NULL);
}

cky_parser *cky_parser_open_progress(const char *grammar_path, const char *engine,
                                     const char *decoder, int threads, int max_length,
                                     int device, cky_progress_fn fn, void *ctx)
{
    return cky_parser_open_prune(grammar_path, engine, decoder, "auto", threads, max_length,
                                 device, fn, ctx);
}

cky_parser *cky_parser_open_prune(const char *grammar_path, const char *engine,
                                  const char *decoder, const char *prune, int threads,
                                  int max_length, int device, cky_progress_fn fn, void *ctx)
{
    if (!grammar_path) {
        cky_fail(CKY_ERR_ARG, "no grammar given");
        return NULL;
    }
    if (threads < 0 || max_length < 0 || device < 0) {
        cky_fail(CKY_ERR_ARG, "threads, max_length and device must not be negative "
                              "(got %d, %d, %d)", threads, max_length, device);
        return NULL;
    }
    cky_parser *h = calloc(1, sizeof *h);
    if (!h) {
        cky_fail(CKY_ERR_NOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&h->progress_lock, NULL);
    h->progress_fn = fn;
    h->progress_ctx = ctx;
    h->opt = parser_default_options();
    if (fn)
        h->opt.progress = (progress_sink){on_progress, h};
    h->opt.threads = threads;
    h->opt.device = device;
    if (max_length > 0)
        h->opt.max_length = max_length;
    cky_status st = engine_from_name(engine, &h->opt.engine);
    if (!st)
        st = decoder_from_name(decoder, &h->opt.decoder);
    int prune_auto = !prune || !strcmp(prune, "auto");
    if (!st && !prune_auto && !parser_prune_find(prune, &h->opt.prune))
        st = cky_fail(CKY_ERR_ARG, "unknown prune mode '%s' (known: auto, %s)", prune,
                      parser_prune_names());
    if (!st && !(st = grammar_load_with(grammar_path, NULL, &h->opt.progress, &h->g))) {
        if ((int)h->opt.decoder == -1)
            h->opt.decoder = parser_default_decoder(h->g);
        if (prune_auto)
            h->opt.prune = parser_default_prune(h->g);
    }
    if (st || parser_new(h->g, &h->opt, &h->p)) {
        grammar_free(h->g);
        pthread_mutex_destroy(&h->progress_lock);
        free(h);
        return NULL;
    }
    pthread_mutex_lock(&h->progress_lock);
    h->opened = 1;
    pthread_mutex_unlock(&h->progress_lock);
    pthread_mutex_init(&h->lock, NULL);
    return h;
}

const char *cky_parser_decoder(const cky_parser *p)
{
    return parser_decoder_def(p->opt.decoder)->name;
}

const char *cky_parser_engine(const cky_parser *p) { return parser_engine_name(p->opt.engine); }

const char *cky_parser_prune(const cky_parser *p) { return parser_prune_name(p->opt.prune); }

int cky_parser_batch_size(const cky_parser *p) { return parser_batch_size(p->p); }

/* A malloc'ed copy of the printf-style message (NULL if out of memory). */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* Whether result_message has a message for r: why it has no tree, or that its tree was made
 * without the gold tags. */
static int has_message(const parse_result *r)
{
    return r->outcome != PARSE_OK || r->untagged;
}

/* Why a sentence of `words` words got no tree; for a tree its gold tags did not give (the
 * jar's retry without them, parse_result.untagged) the note that says so; else NULL. */
static char *result_message(const parse_result *r, int words, int max_length)
{
    switch (r->outcome) {
    case PARSE_EMPTY: return format("empty sentence");
    case PARSE_TOO_LONG:
        return format("%d words, longer than max_length %d: not parsed", words, max_length);
    case PARSE_NO_PARSE: return format("the grammar has no parse for this sentence");
    case PARSE_FAILED: return format("%s", r->error ? r->error : "failed");
    case PARSE_OK:
        if (r->untagged)
            return format("no tree with the gold tags: parsed without them, as the Berkeley "
                          "parser does");
        break;
    }
    return NULL;
}

/* The tree on one line, without the final newline. */
static char *tree_string(const tree *t)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f)
        return NULL;
    tree_write_line(t, f);
    if (fclose(f)) {
        free(s);
        return NULL;
    }
    if (n > 0 && s[n - 1] == '\n')
        s[n - 1] = '\0';
    return s;
}

/* Turn line k into a sentence (tokenized first when `tokenize`), with the gold tags of the
 * line `tags` (NULL: none; never with tokenize). */
static cky_status read_line(const char *line, const char *tags, int tokenize, sentence *s)
{
    if (!line)
        return cky_fail(CKY_ERR_ARG, "a line is NULL");
    if (tags)
        return tagged_from_lines(line, tags, s);
    char *tokens = NULL;
    int n;
    if (tokenize && tokenize_line(line, strlen(line), &tokens, &n))
        return CKY_ERR_NOMEM;
    const char *text = tokens ? tokens : line;
    cky_status st = sentence_from_line(text, strlen(text), s);
    free(tokens);
    return st;
}

/* Lines into sentences (s[0..n)), with the gold tags of tags[0..n) (NULL: none); 0, or -1
 * with the message set. */
static int read_lines(const char *const *lines, const char *const *tags, int n, int tokenize,
                      sentence *s)
{
    for (int k = 0; k < n; k++)
        if (tags && !tags[k]) {
            cky_fail(CKY_ERR_ARG, "line %d: its tags are NULL", k + 1);
            return -1;
        } else if (read_line(lines[k], tags ? tags[k] : NULL, tokenize, &s[k])) {
            cky_fail(CKY_ERR_ARG, "line %d: %s", k + 1, cky_last_error());
            return -1;
        }
    return 0;
}

/* What a call asks of h's parser: k-best lists (k > 0) and the pruned decoder's tree scores
 * (scores 1). */
typedef struct parse_variant {
    int k, scores;
} parse_variant;

/* The options of h's parser for v: tree scores only where the pruned decoder gives them. */
static parser_options variant_options(const cky_parser *h, parse_variant v)
{
    parser_options o = h->opt;
    o.kbest = v.k;
    o.berkeley.tree_scores = v.scores && o.prune != PARSER_PRUNE_NONE;
    return o;
}

/* h's parser for v: h->p itself, or the other one (made, or made again for another v, under
 * h->lock). */
static parser *variant_parser(cky_parser *h, parse_variant v)
{
    parser_options o = variant_options(h, v);
    if (o.kbest == h->opt.kbest && o.berkeley.tree_scores == h->opt.berkeley.tree_scores)
        return h->p;
    if (h->kp && h->kp_k == v.k && h->kp_scores == v.scores)
        return h->kp;
    parser_free(h->kp);
    h->kp = NULL;
    o.progress = (progress_sink){0};
    if (parser_new(h->g, &o, &h->kp))
        return NULL;
    h->kp_k = v.k;
    h->kp_scores = v.scores;
    return h->kp;
}

/* Parse s[0..n) with h's parser for v into r; 0 or -1. */
static int parse_sentences(cky_parser *h, parse_variant v, sentence *s, int n, parse_result *r)
{
    pthread_mutex_lock(&h->lock);
    parser *p = variant_parser(h, v);
    int rc = !p || parser_parse(p, s, n, r) ? -1 : 0;
    pthread_mutex_unlock(&h->lock);
    return rc;
}

/* The sentences of lines[0..n) and their results, as the cky_parser_parse functions make
 * them. */
typedef struct line_batch {
    sentence *s;
    parse_result *r;
    int n, parsed;
} line_batch;

/* Read lines[0..n) (with the gold tags of tags[0..n); NULL: none) into b and parse them with
 * h's parser for v; 0 or -1 (with the error set). b is the caller's to free (batch_free)
 * either way. */
static int batch_parse(cky_parser *h, parse_variant v, const char *const *lines,
                       const char *const *tags, int n, int tokenize, line_batch *b)
{
    *b = (line_batch){calloc((size_t)(n ? n : 1), sizeof *b->s),
                      calloc((size_t)(n ? n : 1), sizeof *b->r), n, 0};
    int rc = b->s && b->r ? 0 : -1;
    if (rc)
        cky_fail(CKY_ERR_NOMEM, "out of memory for %d sentences", n);
    if (!rc && tags && h->opt.prune == PARSER_PRUNE_NONE) { /* as cky parse --gold-pos */
        cky_fail(CKY_ERR_UNSUPPORTED, "gold tags need pruning (prune \"berkeley\" or "
                 "\"accurate\", with a native .gr grammar: the cascade reads them), not prune "
                 "\"none\"");
        rc = -1;
    }
    if (!rc)
        rc = read_lines(lines, tags, n, tokenize, b->s);
    if (!rc) {
        rc = parse_sentences(h, v, b->s, n, b->r);
        b->parsed = !rc;
    }
    return rc;
}

/* Free b's sentences and results (those parse_sentences filled). */
static void batch_free(line_batch *b)
{
    for (int k = 0; k < b->n && b->s && b->r; k++) {
        if (b->parsed)
            parse_result_clear(&b->r[k]);
        sentence_free(&b->s[k]);
    }
    free(b->s);
    free(b->r);
}

/* cky_parser_parse, and with `scores` (not NULL) cky_parser_parse_scores; with tags (not
 * NULL) their tagged functions. */
static int parse_trees(cky_parser *p, const char *const *lines, const char *const *tags, int n,
                       int tokenize, char **trees, double *scores, int *outcomes,
                       char **messages)
{
    line_batch b;
    int rc = batch_parse(p, (parse_variant){0, scores != NULL}, lines, tags, n, tokenize, &b);
    sentence *s = b.s;
    parse_result *r = b.r;
    parser_options o = variant_options(p, (parse_variant){0, scores != NULL});
    for (int k = 0; k < n && !rc; k++) {
        trees[k] = tree_string(r[k].tree);
        outcomes[k] = (int)r[k].outcome;
        if (scores)
            parser_berkeley_scores(&o, &r[k], scores + (size_t)k * CKY_NSCORE);
        if (messages)
            messages[k] = result_message(&r[k], s[k].n, p->opt.max_length);
        if (!trees[k] || (messages && has_message(&r[k]) && !messages[k])) {
            for (int j = 0; j <= k; j++) {
                free(trees[j]);
                if (messages)
                    free(messages[j]);
            }
            cky_fail(CKY_ERR_NOMEM, "out of memory writing trees");
            rc = -1;
        }
    }
    batch_free(&b);
    return rc;
}

int cky_parser_parse(cky_parser *p, const char *const *lines, int n, int tokenize,
                     char **trees, int *outcomes, char **messages)
{
    if (!p || n < 0 || (n > 0 && (!lines || !trees || !outcomes))) {
        cky_fail(CKY_ERR_ARG, "cky_parser_parse: invalid arguments");
        return -1;
    }
    return parse_trees(p, lines, NULL, n, tokenize, trees, NULL, outcomes, messages);
}

int cky_parser_parse_scores(cky_parser *p, const char *const *lines, int n, int tokenize,
                            char **trees, double *scores, int *outcomes, char **messages)
{
    if (!p || n < 0 || (n > 0 && (!lines || !trees || !scores || !outcomes))) {
        cky_fail(CKY_ERR_ARG, "cky_parser_parse_scores: invalid arguments");
        return -1;
    }
    return parse_trees(p, lines, NULL, n, tokenize, trees, scores, outcomes, messages);
}

int cky_parser_parse_tagged(cky_parser *p, const char *const *lines, const char *const *tags,
                            int n, char **trees, int *outcomes, char **messages)
{
    if (!p || n < 0 || (n > 0 && (!lines || !tags || !trees || !outcomes))) {
        cky_fail(CKY_ERR_ARG, "cky_parser_parse_tagged: invalid arguments");
        return -1;
    }
    return parse_trees(p, lines, tags, n, 0, trees, NULL, outcomes, messages);
}

int cky_parser_parse_tagged_scores(cky_parser *p, const char *const *lines,
                                   const char *const *tags, int n, char **trees,
                                   double *scores, int *outcomes, char **messages)
{
    if (!p || n < 0 || (n > 0 && (!lines || !tags || !trees || !scores || !outcomes))) {
        cky_fail(CKY_ERR_ARG, "cky_parser_parse_tagged_scores: invalid arguments");
        return -1;
    }
    return parse_trees(p, lines, tags, n, 0, trees, scores, outcomes, messages);
}

/* Free the strings of lists 0..upto of a k-best call. */
static void free_lists(int upto, int kb, char **trees, char **messages)
{
    for (int j = 0; j <= upto; j++) {
        for (int x = 0; x < kb; x++) {
            free(trees[(size_t)j * kb + x]);
            trees[(size_t)j * kb + x] = NULL;
        }
        if (messages) {
            free(messages[j]);
            messages[j] = NULL;
        }
    }
}

/* cky_parser_parse_kbest, and with tags (not NULL) cky_parser_parse_tagged_kbest. */
static int parse_lists(cky_parser *p, const char *const *lines, const char *const *tags, int n,
                       int tokenize, int kb, char **trees, double *scores, int *counts,
                       int *outcomes, char **messages)
{
    line_batch b;
    int rc = batch_parse(p, (parse_variant){kb, 0}, lines, tags, n, tokenize, &b);
    sentence *s = b.s;
    parse_result *r = b.r;
    for (int k = 0; k < n && !rc; k++) {
        char **t = trees + (size_t)k * kb;
        double *sc = scores + (size_t)k * kb;
        for (int x = 0; x < kb; x++) {
            t[x] = NULL;
            sc[x] = -(double)INFINITY;
        }
        int m = 0, bad = 0;
        if (r[k].tree) {
            bad |= !(t[0] = tree_string(r[k].tree));
            sc[0] = r[k].score;
            m = 1;
            for (int x = 0; x < r[k].nrest && m < kb; x++, m++) {
                bad |= !(t[m] = tree_string(r[k].rest[x]));
                sc[m] = r[k].rest_score[x];
            }
        }
        counts[k] = m;
        outcomes[k] = (int)r[k].outcome;
        if (messages) {
            messages[k] = result_message(&r[k], s[k].n, p->opt.max_length);
            bad |= has_message(&r[k]) && !messages[k];
        }
        if (bad) {
            free_lists(k, kb, trees, messages);
            cky_fail(CKY_ERR_NOMEM, "out of memory writing trees");
            rc = -1;
        }
    }
    batch_free(&b);
    return rc;
}

int cky_parser_parse_kbest(cky_parser *p, const char *const *lines, int n, int tokenize, int kb,
                           char **trees, double *scores, int *counts, int *outcomes,
                           char **messages)
{
    if (!p || n < 0 || kb < 1 || (n > 0 && (!lines || !trees || !scores || !counts ||
                                            !outcomes))) {
        cky_fail(CKY_ERR_ARG, "cky_parser_parse_kbest: invalid arguments");
        return -1;
    }
    return parse_lists(p, lines, NULL, n, tokenize, kb, trees, scores, counts, outcomes,
                       messages);
}

int cky_parser_parse_tagged_kbest(cky_parser *p, const char *const *lines,
                                  const char *const *tags, int n, int kb, char **trees,
                                  double *scores, int *counts, int *outcomes, char **messages)
{
    if (!p || n < 0 || kb < 1 || (n > 0 && (!lines || !tags || !trees || !scores || !counts ||
                                            !outcomes))) {
        cky_fail(CKY_ERR_ARG, "cky_parser_parse_tagged_kbest: invalid arguments");
        return -1;
    }
    return parse_lists(p, lines, tags, n, 0, kb, trees, scores, counts, outcomes, messages);
}

int cky_tokenize(const char *line, char **tokens)
{
    int n;
    if (!line || !tokens) {
        cky_fail(CKY_ERR_ARG, "cky_tokenize: invalid arguments");
        return -1;
    }
    return tokenize_line(line, strlen(line), tokens, &n) ? -1 : 0;
}

const char *cky_error_message(void) { return cky_last_error(); }

void cky_string_free(char *s) { free(s); }

void cky_parser_close(cky_parser *p)
{
    if (!p)
        return;
    parser_free(p->p);
    parser_free(p->kp);
    grammar_free(p->g);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->progress_lock);
    free(p);
}
