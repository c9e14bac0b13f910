/* request: request bodies into sentences, with each token's span in the request's text
 * (serve_internal.h). Raw text is tokenized as `cky parse --tokenize` does it and tokenized
 * text is split as `cky parse` splits a line, so that the trees are those of cky parse; JSON
 * is read by jansson. Every refusal names the problem: the byte of invalid UTF-8, the line
 * and column of malformed JSON, the sentence beyond a limit. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/tokenize.h"
#include "../util/utf8.h"
#include "serve_internal.h"

/* Unicode code points counted along a text (valid UTF-8), forwards only. */
typedef struct cursor {
    const char *text;
    long byte, chr;
} cursor;

static long cursor_char(cursor *c, long byte)
{
    for (; c->byte < byte; c->byte++)
        if (((unsigned char)c->text[c->byte] & 0xC0) != 0x80)
            c->chr++;
    return c->chr;
}

static int is_ascii_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Room for n sentences (zeroed) and their first-token indices. */
static cky_status request_alloc(serve_request *rq, int n)
{
    rq->n = n;
    rq->s = calloc((size_t)(n ? n : 1), sizeof *rq->s);
    rq->r = calloc((size_t)(n ? n : 1), sizeof *rq->r);
    rq->first = calloc((size_t)n + 1, sizeof *rq->first);
    rq->text = calloc((size_t)(n ? n : 1), sizeof *rq->text);
    if (!rq->s || !rq->r || !rq->first || !rq->text)
        return cky_fail(CKY_ERR_NOMEM, "out of memory for %d sentences", n);
    return CKY_OK;
}

/* Sentence k of rq from `line` (len bytes at byte `at` of the text `c` walks; c NULL: no
 * spans), tokenized first unless `tokenized`; its spans appended after those of sentence
 * k - 1 (*cap: the room in rq->span). */
static cky_status add_sentence(serve_request *rq, int k, const char *line, size_t len,
                               int tokenized, cursor *c, long at, long *cap)
{
    char *tokens = NULL;
    int ntokens;
    cky_status st;
    if (!tokenized && (st = tokenize_line(line, len, &tokens, &ntokens)))
        return st;
    st = tokens ? sentence_from_line(tokens, strlen(tokens), &rq->s[k])
                : sentence_from_line(line, len, &rq->s[k]);
    free(tokens);
    if (st)
        return st;
    int n = rq->s[k].n;
    long first = rq->first[k];
    rq->first[k + 1] = first + n;
    if (!c)
        return CKY_OK;
    if (first + n > *cap) {
        long want = 2 * (first + n) + 64;
        serve_span *sp = realloc(rq->span, (size_t)want * sizeof *sp);
        if (!sp)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        rq->span = sp;
        *cap = want;
    }
    long *b = malloc(2 * (size_t)(n ? n : 1) * sizeof *b);
    if (!b)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    serve_align_words(line, len, rq->s[k].words, n, b, b + n);
    for (int i = 0; i < n; i++) {
        serve_span *sp = &rq->span[first + i];
        sp->byte_begin = at + b[i];
        sp->byte_end = at + b[n + i];
        sp->char_begin = cursor_char(c, sp->byte_begin);
        sp->char_end = cursor_char(c, sp->byte_end);
    }
    free(b);
    rq->text[k] = c->text;
    return CKY_OK;
}

/* The first byte of the text that is not valid UTF-8 (or is NUL): CKY_ERR_FORMAT naming it. */
static cky_status check_utf8(const char *t, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned cp;
        int k = utf8_decode((const unsigned char *)t + i, len - i, &cp);
        if (k == 0)
            return t[i] ? cky_fail(CKY_ERR_FORMAT, "the text is not valid UTF-8: byte 0x%02x "
                                   "at offset %zu", (unsigned char)t[i], i)
                         : cky_fail(CKY_ERR_FORMAT, "the text holds a NUL byte at offset %zu",
                                    i);
        i += (size_t)k;
    }
    return CKY_OK;
}

/* The properties of a raw-text request (CoreNLP's): outputFormat, tokenize.whitespace. */
static cky_status read_properties(const char *properties, serve_request *rq, int *tokenized)
{
    *tokenized = 0;
    rq->format = SERVE_FORMAT_JSON;
    if (!properties || !*properties)
        return CKY_OK;
    json_error_t err;
    json_t *p = json_loads(properties, 0, &err);
    if (!p || !json_is_object(p)) {
        json_decref(p);
        return p ? cky_fail(CKY_ERR_FORMAT, "properties: not a JSON object")
                 : cky_fail(CKY_ERR_FORMAT, "properties: malformed JSON: column %d: %s",
                            err.column, err.text);
    }
    cky_status st = CKY_OK;
    json_t *v = json_object_get(p, "outputFormat");
    if (v && json_is_string(v) && !strcmp(json_string_value(v), "text"))
        rq->format = SERVE_FORMAT_TEXT;
    else if (v && !(json_is_string(v) && !strcmp(json_string_value(v), "json")))
        st = cky_fail(CKY_ERR_UNSUPPORTED, "properties: outputFormat %s: known are json and "
                      "text", json_is_string(v) ? json_string_value(v) : "(not a string)");
    v = json_object_get(p, "tokenize.whitespace");
    if (v)
        *tokenized = json_is_true(v) || (json_is_string(v) && !strcmp(json_string_value(v),
                                                                      "true"));
    json_decref(p);
    return st;
}

cky_status serve_request_from_text(char *body, size_t len, const char *properties,
                                   const serve_limits *lim, serve_request *out)
{
    memset(out, 0, sizeof *out);
    out->body = body;
    out->scores = 1;
    int tokenized;
    cky_status st;
    if ((st = read_properties(properties, out, &tokenized)) || (st = check_utf8(body, len)))
        return st;
    /* the lines that are not blank, with their line numbers for messages */
    int n = 0;
    long line_no = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        int blank = 1;
        while (j < len && body[j] != '\n' && body[j] != '\r')
            blank &= is_ascii_space(body[j++]);
        line_no++;
        if (!blank && (size_t)(j - i) > lim->max_sentence_bytes)
            return cky_fail(CKY_ERR_LIMIT, "line %ld: %zu bytes, more than the limit of %zu "
                            "bytes per sentence", line_no, j - i, lim->max_sentence_bytes);
        if (!blank && ++n > lim->max_sentences)
            return cky_fail(CKY_ERR_LIMIT, "more than %d sentences (lines) in one request",
                            lim->max_sentences);
        i = j + (j < len && body[j] == '\r' && j + 1 < len && body[j + 1] == '\n' ? 2 : 1);
    }
    if ((st = request_alloc(out, n)))
        return st;
    cursor c = {body, 0, 0};
    long cap = 0;
    int k = 0;
    for (size_t i = 0; i < len && k < n;) {
        size_t j = i;
        int blank = 1;
        while (j < len && body[j] != '\n' && body[j] != '\r')
            blank &= is_ascii_space(body[j++]);
        if (!blank &&
            (st = add_sentence(out, k++, body + i, j - i, tokenized, &c, (long)i, &cap)))
            return st;
        i = j + (j < len && body[j] == '\r' && j + 1 < len && body[j + 1] == '\n' ? 2 : 1);
    }
    return CKY_OK;
}

/* A boolean field of the request object (absent: dflt). */
static cky_status get_bool(json_t *req, const char *key, int dflt, int *out)
{
    json_t *v = json_object_get(req, key);
    *out = v ? json_is_true(v) : dflt;
    if (v && !json_is_boolean(v))
        return cky_fail(CKY_ERR_FORMAT, "\"%s\" must be true or false", key);
    return CKY_OK;
}

/* The fields of a /parse request object other than "sentences". */
static cky_status read_fields(json_t *req, serve_request *rq, int *tokenized)
{
    const char *key;
    json_t *v;
    json_object_foreach(req, key, v) {
        if (strcmp(key, "sentences") && strcmp(key, "tokenized") && strcmp(key, "kbest") &&
            strcmp(key, "scores"))
            return cky_fail(CKY_ERR_FORMAT, "unknown field \"%s\" (known: sentences, "
                            "tokenized, kbest, scores)", key);
    }
    cky_status st;
    if ((st = get_bool(req, "tokenized", 0, tokenized)) ||
        (st = get_bool(req, "scores", 0, &rq->scores)))
        return st;
    v = json_object_get(req, "kbest");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
              json_integer_value(v) > 1000000))
        return cky_fail(CKY_ERR_FORMAT, "\"kbest\" must be a whole number >= 1");
    rq->kbest = v ? (int)json_integer_value(v) : 1;
    return CKY_OK;
}

/* Sentence k given as an array of tokens: each a non-empty string without white space; the
 * tokens joined by spaces read as cky parse reads a line. */
static cky_status add_token_array(serve_request *rq, int k, json_t *arr,
                                  const serve_limits *lim)
{
    size_t total = 0, i;
    json_t *t;
    json_array_foreach(arr, i, t) {
        if (!json_is_string(t))
            return cky_fail(CKY_ERR_FORMAT, "sentences[%d][%zu]: a token must be a string",
                            k, i);
        const char *w = json_string_value(t);
        size_t m = json_string_length(t);
        for (size_t c = 0; c < m; c++)
            if (is_ascii_space(w[c]))
                return cky_fail(CKY_ERR_FORMAT, "sentences[%d][%zu]: a token must not hold "
                                "white space", k, i);
        if (m == 0)
            return cky_fail(CKY_ERR_FORMAT, "sentences[%d][%zu]: empty token", k, i);
        total += m + 1;
    }
    if (total > lim->max_sentence_bytes + 1)
        return cky_fail(CKY_ERR_LIMIT, "sentences[%d]: %zu bytes, more than the limit of %zu "
                        "bytes per sentence", k, total - 1, lim->max_sentence_bytes);
    char *line = malloc(total + 1), *p = line;
    if (!line)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    json_array_foreach(arr, i, t) {
        size_t m = json_string_length(t);
        memcpy(p, json_string_value(t), m);
        p += m;
        *p++ = ' ';
    }
    cky_status st = add_sentence(rq, k, line, p > line ? (size_t)(p - line - 1) : 0, 1, NULL,
                                 0, NULL);
    free(line);
    return st;
}

cky_status serve_request_from_json(char *body, size_t len, const serve_limits *lim,
                                   serve_request *out)
{
    memset(out, 0, sizeof *out);
    out->body = body;
    out->format = SERVE_FORMAT_JSON;
    json_error_t err;
    json_t *req = json_loadb(body, len, 0, &err);
    if (!req)
        return cky_fail(CKY_ERR_FORMAT, "malformed JSON: line %d, column %d: %s", err.line,
                        err.column, err.text);
    out->json = req;
    if (!json_is_object(req))
        return cky_fail(CKY_ERR_FORMAT, "the request must be a JSON object {\"sentences\": "
                        "[...]}");
    int tokenized;
    cky_status st = read_fields(req, out, &tokenized);
    if (st)
        return st;
    json_t *sents = json_object_get(req, "sentences");
    if (!json_is_array(sents))
        return cky_fail(CKY_ERR_FORMAT, "\"sentences\" must be an array of strings (or of "
                        "arrays of tokens)");
    if (json_array_size(sents) > (size_t)lim->max_sentences)
        return cky_fail(CKY_ERR_LIMIT, "%zu sentences, more than the limit of %d per request",
                        json_array_size(sents), lim->max_sentences);
    if ((st = request_alloc(out, (int)json_array_size(sents))))
        return st;
    long cap = 0;
    size_t k;
    json_t *v;
    json_array_foreach(sents, k, v) {
        if (json_is_array(v)) {
            st = add_token_array(out, (int)k, v, lim);
        } else if (json_is_string(v)) {
            size_t m = json_string_length(v);
            if (m > lim->max_sentence_bytes)
                return cky_fail(CKY_ERR_LIMIT, "sentences[%zu]: %zu bytes, more than the "
                                "limit of %zu bytes per sentence", k, m,
                                lim->max_sentence_bytes);
            cursor c = {json_string_value(v), 0, 0};
            st = add_sentence(out, (int)k, c.text, m, tokenized, &c, 0, &cap);
        } else {
            st = cky_fail(CKY_ERR_FORMAT, "sentences[%zu]: must be a string or an array of "
                          "tokens", k);
        }
        if (st)
            return st;
    }
    return CKY_OK;
}

void serve_request_clear(serve_request *rq)
{
    for (int k = 0; rq->s && k < rq->n; k++)
        sentence_free(&rq->s[k]);
    for (int k = 0; rq->r && k < rq->n; k++)
        parse_result_clear(&rq->r[k]);
    free(rq->s);
    free(rq->r);
    free(rq->first);
    free(rq->span);
    free(rq->text);
    free(rq->body);
    json_decref(rq->json);
    memset(rq, 0, sizeof *rq);
}
