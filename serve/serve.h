/* serve: cky as an HTTP service (`cky serve`, docs/serve.md).
 *
 * One parser, loaded once, answers concurrent requests: libmicrohttpd reads them on a pool of
 * HTTP threads, which turn each body (jansson for JSON) into sentences and queue them; one
 * engine thread takes the queued sentences of all requests as one batch (up to a batch size,
 * or after a few milliseconds of waiting), parses it with parser_parse (whose pool of engines
 * does the rest) and hands each request its results, which its HTTP thread writes back in the
 * request's own order. The engine thread never touches a socket, so a slow client holds
 * nothing but its own connection.
 *
 * Routes (CoreNLP's conventions where they fit): POST / (raw text, one sentence per line;
 * ?properties={"outputFormat":"json"|"text"}), POST /parse (JSON {"sentences": [...],
 * "tokenized": bool, "kbest": K, "scores": bool}; K > 1: each sentence's k-best list, from
 * a second parser and batcher, serve_options.kbest), GET /ready, /live, /stats, and the page at
 * GET / (serve/page/). Every reply names the grammar, decoder, engine and mode (in the body
 * when it is JSON, and in X-Cky-* headers). */
#ifndef CKY_SERVE_SERVE_H
#define CKY_SERVE_SERVE_H

#include <stddef.h>

#include "../parser/parser.h"
#include "../util/status.h"

/* What produced the replies, as they name it. */
typedef struct serve_info {
    const char *grammar; /* the grammar's name (e.g. its file name) */
    const char *engine;  /* "gpu", "cpu" or "ref" */
    const char *decoder; /* "viterbi" or "maxrule" */
    const char *mode;    /* "exhaustive" */
    int max_length;      /* the parser's max_length, for the message of a longer sentence */
} serve_info;

typedef struct serve_options {
    const char *host;          /* address to listen on (a name or a numeric address) */
    int port;                  /* 0: a free port (serve_port says which) */
    const char *token;         /* NULL: none; else every request but the page, /live and
                                  /ready must carry "Authorization: Bearer TOKEN" (401) */
    int batch;                 /* most sentences per engine batch */
    int batch_wait_ms;         /* longest wait for a batch to fill, from its first sentence */
    int queue;                 /* most sentences queued at once: a request beyond gets 503 */
    int max_sentences;         /* most sentences per request (413) */
    size_t max_request_bytes;  /* largest request body (413) */
    size_t max_sentence_bytes; /* largest sentence, in bytes (413) */
    int timeout_ms;            /* a request not answered this long after its body arrived
                                  gets 503 (checked between batches) */
    int max_connections;       /* connections at once (more are closed at once) */
    int idle_timeout_s;        /* a connection idle this long is closed */
    int http_threads;          /* libmicrohttpd's thread pool */
    parser *kbest;             /* the parser of /parse's k-best lists ("kbest" > 1), of
                                  kbest_max trees (it must outlive the service; NULL:
                                  such requests get 400 with kbest_why, which says why) */
    int kbest_max;             /* the most trees a list may ask for (400 beyond) */
    const char *kbest_why;
} serve_options;

typedef struct serve serve;

/* Defaults: 127.0.0.1:9000, no token, batch 256, 5 ms, queue 8,192 sentences, 1,000
 * sentences, 4 MiB and 64 KiB per request and sentence, 60 s per request, 256 connections
 * idle for at most 30 s, 4 HTTP threads, no k-best parser (lists of at most 50 trees). */
serve_options serve_default_options(void);

/* Listen on o->host:o->port and answer requests with p (which, with what info points at,
 * must outlive the service) until serve_drain. CKY_ERR_IO when the address cannot be
 * resolved or bound (the message names it and the reason), CKY_ERR_ARG for bad options. */
cky_status serve_start(parser *p, const serve_info *info, const serve_options *o,
                       serve **out);

/* The port the service listens on. */
int serve_port(const serve *s);

/* Stop taking connections, answer every request already received (queued sentences are
 * parsed; requests on open connections still arriving are answered too), then stop. After
 * grace_ms the requests still waiting get 503 and the connections are closed. Returns the
 * number of requests answered 503 that way. */
int serve_drain(serve *s, int grace_ms);

/* Release a drained service (NULL is fine). */
void serve_free(serve *s);

#endif
