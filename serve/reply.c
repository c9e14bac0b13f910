/* reply: the bodies of the service's replies (serve_internal.h), built with jansson. A
 * sentence's entry follows CoreNLP's JSON where it has one (index, tokens with word,
 * originalText, characterOffsetBegin and characterOffsetEnd, parse) and adds the tree's
 * scores and, for a sentence without a tree, an error. Scores print with 17 significant
 * digits, so that they read back as the same doubles; -inf is null. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_internal.h"

/* The tree as one line, "( (S ...) )" or "(())", without the newline (malloc'ed). */
static char *tree_text(const tree *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    tree_write_line(t, f);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    if (len > 0 && buf[len - 1] == '\n')
        buf[len - 1] = '\0';
    return buf;
}

/* A new object holding the info (the fields every reply has). */
static json_t *info_object(const serve_info *info)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "grammar", info->grammar, "decoder",
                     info->decoder, "engine", info->engine, "mode", info->mode);
}

/* The body of `obj` (consumed), NULL when out of memory. */
static char *dump(json_t *obj)
{
    char *s = obj ? json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(obj);
    return s;
}

static json_t *score_value(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* Why sentence s got no tree. */
static void no_tree_reason(const parse_result *r, const sentence *s, const serve_info *info,
                           char *buf, size_t size)
{
    switch (r->outcome) {
    case PARSE_EMPTY: snprintf(buf, size, "empty sentence"); break;
    case PARSE_TOO_LONG:
        snprintf(buf, size, "%d words, longer than the limit of %d (--max-length): not parsed",
                 s->n, info->max_length);
        break;
    case PARSE_NO_PARSE: snprintf(buf, size, "the grammar has no parse for this sentence"); break;
    case PARSE_FAILED: snprintf(buf, size, "%s", r->error ? r->error : "failed"); break;
    case PARSE_OK: buf[0] = '\0'; break;
    }
}

static json_t *tokens_array(const serve_request *rq, int k)
{
    json_t *a = json_array();
    const sentence *s = &rq->s[k];
    for (int i = 0; a && i < s->n; i++) {
        json_t *t = json_pack("{s:i, s:s}", "index", i + 1, "word", s->words[i]);
        if (t && rq->text[k]) {
            const serve_span *sp = &rq->span[rq->first[k] + i];
            json_object_set_new(t, "originalText",
                                json_stringn(rq->text[k] + sp->byte_begin,
                                             (size_t)(sp->byte_end - sp->byte_begin)));
            json_object_set_new(t, "characterOffsetBegin", json_integer(sp->char_begin));
            json_object_set_new(t, "characterOffsetEnd", json_integer(sp->char_end));
        }
        if (!t || json_array_append_new(a, t)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* "kbest": the first k trees of the sentence's list, each {"parse", "score"} (its max-rule
 * score), best first ([] without a tree). Nonzero when out of memory. */
static int kbest_array(json_t *o, const parse_result *r, int k)
{
    json_t *a = json_array();
    for (int x = 0; a && r->tree && x < k && x <= r->nrest; x++) {
        char *t = tree_text(x ? r->rest[x - 1] : r->tree);
        json_t *e = t ? json_pack("{s:s, s:o}", "parse", t,
                                  "score", score_value(x ? r->rest_score[x - 1] : r->score))
                      : NULL;
        free(t);
        if (!e || json_array_append_new(a, e)) {
            json_decref(a);
            a = NULL;
        }
    }
    return !a || json_object_set_new(o, "kbest", a);
}

static json_t *sentence_object(const serve_request *rq, int k, const serve_info *info)
{
    const parse_result *r = &rq->r[k];
    char *parse = tree_text(r->tree);
    json_t *o = parse ? json_pack("{s:i, s:o, s:s}", "index", k, "tokens",
                                  tokens_array(rq, k), "parse", parse)
                      : NULL;
    free(parse);
    if (o && rq->scores) {
        json_object_set_new(o, "score", score_value(r->outcome == PARSE_OK ? r->score
                                                                           : -INFINITY));
        if (!strcmp(info->decoder, "maxrule"))
            json_object_set_new(o, "logLikelihood", score_value(r->loglik));
    }
    if (o && rq->kbest > 1 && kbest_array(o, r, rq->kbest)) {
        json_decref(o);
        return NULL;
    }
    if (o && r->outcome != PARSE_OK) {
        char why[1024];
        no_tree_reason(r, &rq->s[k], info, why, sizeof why);
        json_object_set_new(o, "error", json_string(why));
    }
    return o;
}

/* One tree per line. */
static char *text_reply(const serve_request *rq)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    for (int k = 0; k < rq->n; k++)
        tree_write_line(rq->r[k].tree, f);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *serve_reply_request(const serve_request *rq, const serve_info *info)
{
    if (rq->format == SERVE_FORMAT_TEXT)
        return text_reply(rq);
    json_t *o = info_object(info), *a = json_array();
    for (int k = 0; o && a && k < rq->n; k++) {
        json_t *s = sentence_object(rq, k, info);
        if (!s || json_array_append_new(a, s)) {
            json_decref(a);
            a = NULL;
        }
    }
    if (!a || !o || json_object_set_new(o, "sentences", a)) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

char *serve_reply_error(const serve_info *info, int status, const char *message)
{
    json_t *o = info_object(info);
    if (o) {
        json_object_set_new(o, "status", json_integer(status));
        json_object_set_new(o, "error", json_string(message));
    }
    return dump(o);
}

char *serve_reply_flag(const serve_info *info, const char *key, int value)
{
    json_t *o = info_object(info);
    if (o)
        json_object_set_new(o, key, json_boolean(value));
    return dump(o);
}

/* Batch sizes by power of two: {"1": n, "2-3": n, ...}, the buckets used. */
static json_t *batch_sizes(const serve_batch_stats *b)
{
    json_t *o = json_object();
    for (int k = 0; o && k < SERVE_BATCH_BUCKETS; k++) {
        if (!b->batch_sizes[k])
            continue;
        char name[32];
        long lo = 1L << k, hi = (2L << k) - 1;
        if (k == SERVE_BATCH_BUCKETS - 1)
            snprintf(name, sizeof name, "%ld-", lo);
        else if (lo == hi)
            snprintf(name, sizeof name, "%ld", lo);
        else
            snprintf(name, sizeof name, "%ld-%ld", lo, hi);
        json_object_set_new(o, name, json_integer(b->batch_sizes[k]));
    }
    return o;
}

char *serve_reply_stats(const serve_info *info, const serve_options *o,
                        const serve_batch_stats *b, const serve_http_stats *h)
{
    json_t *by_status = json_object();
    for (int k = 0; by_status && k < 600; k++) {
        if (!h->by_status[k])
            continue;
        char name[8];
        snprintf(name, sizeof name, "%d", k);
        json_object_set_new(by_status, name, json_integer(h->by_status[k]));
    }
    json_t *s = info_object(info);
    if (!s || !by_status) {
        json_decref(s);
        json_decref(by_status);
        return NULL;
    }
    double mean = b->batches ? (double)b->sentences / (double)b->batches : 0.0;
    json_object_update_new(
        s, json_pack("{s:f, s:I, s:o, s:i, s:i, s:I, s:f, s:f, s:f, s:I, s:f, s:i, s:o, s:i, "
                     "s:i, s:i, s:i, s:I, s:I, s:I}",
                     "uptime_seconds", h->uptime_seconds, "requests", (json_int_t)h->requests,
                     "requests_by_status", by_status, "active_requests", h->active,
                     "connections", h->connections, "sentences", (json_int_t)b->sentences,
                     "sentences_per_second", b->recent_rate, "sentences_per_second_overall",
                     h->uptime_seconds > 0 ? (double)b->sentences / h->uptime_seconds : 0.0,
                     "engine_busy_seconds", b->busy_seconds, "batches",
                     (json_int_t)b->batches, "batch_size_mean", mean, "batch_size_max",
                     b->batch_max, "batch_sizes", batch_sizes(b), "batch_limit", o->batch,
                     "queue_length", b->queued, "queue_length_max", b->queued_max,
                     "queue_limit", o->queue, "timed_out", (json_int_t)b->jobs_timed_out,
                     "refused", (json_int_t)b->jobs_refused, "resident_bytes",
                     (json_int_t)h->resident_bytes));
    return dump(s);
}
