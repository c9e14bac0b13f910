/* serve_internal: the parts of the service (serve.h) that talk to each other and to the
 * tests, not to the rest of cky:
 *   batch.c    the queue and the engine thread (dynamic batching);
 *   request.c  request bodies (raw text, JSON) into sentences with their tokens' offsets;
 *   align.c    where each word of a sentence lies in the text it was made from;
 *   reply.c    finished requests, errors and statistics into reply bodies;
 *   http.c     libmicrohttpd: routes, limits, the token, suspending a connection while its
 *              request waits for the engine, draining;
 *   page.h     the page's files, embedded at build time (tools/embed-files). */
#ifndef CKY_SERVE_INTERNAL_H
#define CKY_SERVE_INTERNAL_H

#include <stddef.h>

#include "../parser/parser.h"
#include "serve.h"

/* ---- batch.c: the queue of sentences and the engine thread ---- */

typedef enum serve_job_state {
    SERVE_JOB_NEW,      /* not submitted */
    SERVE_JOB_QUEUED,   /* submitted: its sentences wait or are being parsed */
    SERVE_JOB_DONE,     /* every result is in r */
    SERVE_JOB_TIMEOUT,  /* its deadline passed before all its sentences were parsed */
    SERVE_JOB_REFUSED,  /* the queue had no room, or the batcher was stopping */
} serve_job_state;

/* The sentences of one request. The submitter fills s, n, deadline, done and ctx; the
 * batcher owns the rest until it calls done(job) (from the engine thread, or from
 * serve_batcher_stop), after which it never touches the job again. */
typedef struct serve_job {
    const sentence *s;
    parse_result *r; /* n results, zeroed by the submitter, filled in by the batcher */
    int n;
    double deadline; /* clock_seconds() after which the job times out */
    void (*done)(struct serve_job *job);
    void *ctx;
    /* the batcher's */
    serve_job_state state;
    int next;  /* sentences taken into batches so far */
    int left;  /* sentences not yet parsed */
    double queued_at;
    struct serve_job *queue_next;
} serve_job;

/* What the batcher did, for /stats. */
#define SERVE_BATCH_BUCKETS 16 /* batch sizes 1, 2-3, 4-7, ..., 2^15 and more */
typedef struct serve_batch_stats {
    long sentences, batches, jobs_done, jobs_timed_out, jobs_refused;
    long batch_sizes[SERVE_BATCH_BUCKETS];
    int batch_max;
    int queued, queued_max; /* sentences waiting now, and the most at once */
    double busy_seconds;    /* in parser_parse */
    double recent_rate;     /* sentences/s parsed over the last 10 s */
} serve_batch_stats;

typedef struct serve_batcher serve_batcher;

/* A batcher feeding p with batches of at most `batch` sentences, waiting at most wait_ms for
 * a batch to fill, holding at most `queue` queued sentences; starts the engine thread. */
cky_status serve_batcher_new(parser *p, int batch, int wait_ms, int queue,
                             serve_batcher **out);

/* Queue the job's sentences (job->n >= 1). Returns 1 if queued (job->done will be called
 * once, when it is DONE or TIMEOUT), 0 if refused (the queue has no room for them or the
 * batcher is stopping: state REFUSED, done is not called). */
int serve_batcher_submit(serve_batcher *b, serve_job *job);

/* The job's state, read under the batcher's lock (after done was called: final). */
serve_job_state serve_batcher_state(serve_batcher *b, const serve_job *job);

void serve_batcher_stats(serve_batcher *b, serve_batch_stats *out);

/* Finish the batch being parsed, refuse what is still queued (state TIMEOUT, done called),
 * and stop the engine thread. */
void serve_batcher_stop(serve_batcher *b);

void serve_batcher_free(serve_batcher *b);

/* ---- request.c: request bodies into sentences ---- */

typedef enum serve_format { SERVE_FORMAT_JSON, SERVE_FORMAT_TEXT } serve_format;

/* Where a token lies in the text it was made from: bytes of that text, and Unicode code
 * points from the start of the request's text (the whole body of a raw-text request; the
 * sentence's own string in /parse). */
typedef struct serve_span {
    long byte_begin, byte_end, char_begin, char_end;
} serve_span;

/* A request as the engine and the reply see it: n sentences, their results, and the spans of
 * sentence k's tokens (s[k].words) span[first[k] .. first[k + 1]) in text[k] (text[k] NULL:
 * no spans, for a sentence given as a token array). */
typedef struct serve_request {
    int n;
    sentence *s;
    parse_result *r;
    long *first;
    serve_span *span;
    const char **text; /* into `body` or the strings of `json` */
    serve_format format;
    int scores;        /* give each tree's scores */
    char *body;        /* the request body (owned) */
    void *json;        /* the parsed JSON (json_t *, owned) */
} serve_request;

/* Limits of a request (413 beyond). */
typedef struct serve_limits {
    int max_sentences;
    size_t max_sentence_bytes;
} serve_limits;

/* A raw-text request (POST /): `body` (len bytes, malloc'ed: taken over, also on failure)
 * holds one sentence per line (blank lines are skipped), raw text unless `properties` (the
 * query parameter, JSON, or NULL) says "tokenize.whitespace": true. CKY_ERR_FORMAT (400):
 * invalid UTF-8, a NUL byte, malformed properties; CKY_ERR_UNSUPPORTED (400): an
 * outputFormat other than json and text; CKY_ERR_LIMIT (413): too many sentences or one too
 * long; CKY_ERR_NOMEM. The message names the problem. */
cky_status serve_request_from_text(char *body, size_t len, const char *properties,
                                   const serve_limits *lim, serve_request *out);

/* A /parse request: `body` (taken over as above) holds JSON {"sentences": [string or array
 * of strings, ...], "tokenized": bool, "kbest": 1, "scores": bool}. Errors as above, and
 * CKY_ERR_UNSUPPORTED for kbest > 1. */
cky_status serve_request_from_json(char *body, size_t len, const serve_limits *lim,
                                   serve_request *out);

void serve_request_clear(serve_request *rq);

/* ---- align.c: where the words lie in their text ---- */

/* For each of the n words (as sentence_from_line or the tokenizer wrote them: brackets as
 * -LRB- ..., quotes as `` and '', / and * escaped, Unicode dashes and quotes in ASCII) the
 * bytes [begin, end) of `text` (len bytes of UTF-8) it was made from, in order; a word made
 * of no text of its own (the extra period of a sentence-final "U.S.") gets an empty span
 * where the next text starts. */
void serve_align_words(const char *text, size_t len, char *const *words, int n, long *begin,
                       long *end);

/* ---- reply.c: reply bodies (malloc'ed, NUL-terminated) ---- */

/* The reply to a finished request: JSON (content type application/json) or one tree per
 * line (text/plain). NULL when out of memory. */
char *serve_reply_request(const serve_request *rq, const serve_info *info);

/* An error reply: {"error": message, "status": status, and the info}. */
char *serve_reply_error(const serve_info *info, int status, const char *message);

/* A small JSON object of the info and one more field, `key`: true or false. */
char *serve_reply_flag(const serve_info *info, const char *key, int value);

/* The statistics of /stats: the batcher's and the HTTP side's (requests by status). */
typedef struct serve_http_stats {
    double uptime_seconds;
    long requests;
    long by_status[600];
    int active;      /* requests received and not yet answered */
    int connections; /* open connections */
    long resident_bytes;
} serve_http_stats;

char *serve_reply_stats(const serve_info *info, const serve_options *o,
                        const serve_batch_stats *b, const serve_http_stats *h);

/* ---- page.h (generated: build/serve/page_data.c) ---- */

typedef struct serve_page_file {
    const char *path; /* "/index.html", "/tree.js", ... */
    const unsigned char *data;
    size_t size;
} serve_page_file;

extern const serve_page_file serve_page_files[]; /* ends with {NULL, NULL, 0} */

#endif
