/* http: the service over libmicrohttpd (serve.h). A pool of HTTP threads reads requests;
 * each request (an "exchange") is routed when its headers are in, refused early where it
 * can be (401 without the token, 413 for a Content-Length beyond the limit, 503 while
 * draining), its body gathered up to the limit, then turned into sentences (request.c) and
 * queued for the engine (batch.c) while its connection is suspended; the engine thread
 * resumes the connection when the results are in, and an HTTP thread writes the reply
 * (reply.c). The listening socket is cky's own, so that a refused address says why. */
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "serve_internal.h"

struct serve {
    struct MHD_Daemon *d;
    serve_batcher *b;
    serve_batcher *kb; /* the k-best lists' (NULL: none, serve_options.kbest) */
    serve_info info;
    serve_options o;
    serve_limits lim;
    int port;
    double started;
    atomic_int arriving;  /* parse requests begun and not yet submitted (batch.c waits for a
                             batch to fill only while one is on its way) */
    pthread_mutex_t lock; /* the fields below */
    pthread_cond_t idle;  /* signalled when active drops */
    int active, draining;
    long requests, by_status[600];
};

typedef enum route { ROUTE_PAGE, ROUTE_LIVE, ROUTE_READY, ROUTE_STATS, ROUTE_TEXT,
                     ROUTE_PARSE } route;

/* One request on a connection, from its headers to the completion of its reply. */
typedef struct exchange {
    serve *s;
    struct MHD_Connection *conn;
    route route;
    const serve_page_file *file; /* ROUTE_PAGE */
    char *body;
    size_t n, cap;
    const char *allow;   /* for a 405: the methods the path takes */
    const char *refusal; /* the body went beyond a limit: why (answered at its end) */
    int refusal_status;
    int answered;  /* a reply is queued */
    int arriving;  /* counted in serve.arriving */
    int submitted; /* the job went to the batcher */
    serve_batcher *bq; /* that batcher: s->b, or s->kb for k-best lists */
    double arrived;
    serve_request rq;
    serve_job job;
} exchange;

serve_options serve_default_options(void)
{
    return (serve_options){
        .host = "127.0.0.1", .port = 9000, .token = NULL, .batch = 256, .batch_wait_ms = 5,
        .queue = 8192, .max_sentences = 1000, .max_request_bytes = 4u << 20,
        .max_sentence_bytes = 64u << 10, .timeout_ms = 60000, .max_connections = 256,
        .idle_timeout_s = 30, .http_threads = 4, .kbest_max = 50};
}

/* ---- replies ---- */

static void count_status(serve *s, int status)
{
    pthread_mutex_lock(&s->lock);
    s->requests++;
    if (status >= 0 && status < 600)
        s->by_status[status]++;
    pthread_mutex_unlock(&s->lock);
}

static int is_draining(serve *s)
{
    pthread_mutex_lock(&s->lock);
    int draining = s->draining;
    pthread_mutex_unlock(&s->lock);
    return draining;
}

/* Queue a reply of `len` bytes of `body` (NULL: out of memory, 500; `owned`: malloc'ed, MHD
 * frees it), with the X-Cky-* headers, Retry-After on 503, Allow on 405, Connection: close
 * while draining. */
static enum MHD_Result reply(exchange *x, unsigned status, const void *body, size_t len,
                             int owned, const char *type)
{
    serve *s = x->s;
    static const char oom[] = "{\"error\":\"out of memory\",\"status\":500}";
    if (!body) {
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        body = oom;
        len = sizeof oom - 1;
        owned = 0;
        type = "application/json";
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, (void *)body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned)
            free((void *)body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Cky-Grammar", s->info.grammar);
    MHD_add_response_header(r, "X-Cky-Decoder", s->info.decoder);
    MHD_add_response_header(r, "X-Cky-Engine", s->info.engine);
    MHD_add_response_header(r, "X-Cky-Mode", s->info.mode);
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED && x->allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, x->allow);
    if (is_draining(s))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = MHD_queue_response(x->conn, status, r);
    MHD_destroy_response(r);
    if (rc == MHD_YES) {
        x->answered = 1;
        count_status(s, (int)status);
    }
    return rc;
}

static enum MHD_Result reply_json(exchange *x, unsigned status, char *body)
{
    return reply(x, status, body, body ? strlen(body) : 0, 1, "application/json");
}

static enum MHD_Result reply_error(exchange *x, unsigned status, const char *message)
{
    return reply_json(x, status, serve_reply_error(&x->s->info, (int)status, message));
}

/* The HTTP status of a refused request body (request.c's statuses). */
static unsigned status_of(cky_status st)
{
    switch (st) {
    case CKY_ERR_LIMIT: return MHD_HTTP_CONTENT_TOO_LARGE;
    case CKY_ERR_NOMEM: return MHD_HTTP_INTERNAL_SERVER_ERROR;
    default: return MHD_HTTP_BAD_REQUEST;
    }
}

/* ---- the page, /live, /ready, /stats ---- */

static const char *content_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcmp(dot, ".html"))
        return "text/html; charset=utf-8";
    if (dot && !strcmp(dot, ".js"))
        return "text/javascript; charset=utf-8";
    if (dot && !strcmp(dot, ".css"))
        return "text/css; charset=utf-8";
    return "application/octet-stream";
}

static long resident_bytes(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2)
        rss = 0;
    if (f)
        fclose(f);
    return rss * sysconf(_SC_PAGESIZE);
}

static char *stats_body(serve *s)
{
    serve_batch_stats b;
    serve_batcher_stats(s->b, &b);
    serve_http_stats h;
    pthread_mutex_lock(&s->lock);
    h.requests = s->requests;
    memcpy(h.by_status, s->by_status, sizeof h.by_status);
    h.active = s->active;
    pthread_mutex_unlock(&s->lock);
    h.uptime_seconds = clock_seconds() - s->started;
    const union MHD_DaemonInfo *di =
        MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    h.connections = di ? (int)di->num_connections : -1;
    h.resident_bytes = resident_bytes();
    return serve_reply_stats(&s->info, &s->o, &b, &h);
}

static enum MHD_Result answer_get(exchange *x)
{
    serve *s = x->s;
    switch (x->route) {
    case ROUTE_PAGE:
        return reply(x, MHD_HTTP_OK, x->file->data, x->file->size, 0,
                     content_type(x->file->path));
    case ROUTE_LIVE: return reply_json(x, MHD_HTTP_OK, serve_reply_flag(&s->info, "live", 1));
    case ROUTE_READY: {
        int ready = !is_draining(s);
        return reply_json(x, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                          serve_reply_flag(&s->info, "ready", ready));
    }
    default: return reply_json(x, MHD_HTTP_OK, stats_body(s));
    }
}

/* ---- routing and the first look at a request ---- */

/* 1 if the request carries the token (or none is needed); constant time in the token. */
static int authorized(exchange *x)
{
    const char *want = x->s->o.token;
    if (!want)
        return 1;
    const char *got = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_AUTHORIZATION);
    if (!got || strncmp(got, "Bearer ", 7))
        return 0;
    got += 7;
    size_t n = strlen(want), m = strlen(got);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t k = 0; k < n; k++)
        diff |= (unsigned char)(want[k] ^ (k < m ? got[k] : 0));
    return diff == 0;
}

/* Route the request. Returns 1 with x->route set, or 0 after a reply (404, 405). */
static int route_request(exchange *x, const char *url, const char *method,
                         enum MHD_Result *rc)
{
    int get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    int post = !strcmp(method, MHD_HTTP_METHOD_POST);
    const char *allow = NULL;
    if (!strcmp(url, "/")) {
        x->route = post ? ROUTE_TEXT : ROUTE_PAGE;
        url = "/index.html";
        allow = get || post ? NULL : "GET, HEAD, POST";
    } else if (!strcmp(url, "/parse")) {
        x->route = ROUTE_PARSE;
        allow = post ? NULL : "POST";
    } else if (!strcmp(url, "/live") || !strcmp(url, "/ready") || !strcmp(url, "/stats")) {
        x->route = url[1] == 'l' ? ROUTE_LIVE : url[1] == 'r' ? ROUTE_READY : ROUTE_STATS;
        allow = get ? NULL : "GET, HEAD";
    } else {
        x->route = ROUTE_PAGE;
        allow = get ? NULL : "GET, HEAD";
    }
    if (x->route == ROUTE_PAGE) {
        for (x->file = serve_page_files; x->file->path && strcmp(x->file->path, url);)
            x->file++;
        if (!x->file->path) {
            *rc = reply_error(x, MHD_HTTP_NOT_FOUND, "no such page (the API: POST / and "
                              "/parse, GET /ready, /live, /stats)");
            return 0;
        }
    }
    if (allow) {
        char message[128];
        snprintf(message, sizeof message, "method %.16s not allowed here (allowed: %s)",
                 method, allow);
        x->allow = allow;
        *rc = reply_error(x, MHD_HTTP_METHOD_NOT_ALLOWED, message);
        return 0;
    }
    return 1;
}

/* The first call for a request: its headers are in. */
static enum MHD_Result begin(exchange *x, const char *url, const char *method)
{
    serve *s = x->s;
    enum MHD_Result rc = MHD_YES;
    if (!route_request(x, url, method, &rc))
        return rc;
    if (x->route != ROUTE_PAGE && x->route != ROUTE_LIVE && x->route != ROUTE_READY &&
        !authorized(x))
        return reply_error(x, MHD_HTTP_UNAUTHORIZED, "this service needs its token: "
                           "\"Authorization: Bearer TOKEN\"");
    if (x->route != ROUTE_TEXT && x->route != ROUTE_PARSE)
        return MHD_YES; /* answered at the next call: a reply queued at this one closes the
                           connection after it */
    if (is_draining(s))
        return reply_error(x, MHD_HTTP_SERVICE_UNAVAILABLE, "the service is shutting down");
    const char *cl = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > s->o.max_request_bytes) {
        char message[160];
        snprintf(message, sizeof message, "request body of %.24s bytes, more than the limit "
                 "of %zu", cl, s->o.max_request_bytes);
        return reply_error(x, MHD_HTTP_CONTENT_TOO_LARGE, message);
    }
    return MHD_YES;
}

/* ---- the body, the job, the reply ---- */

static void refuse_body(exchange *x, int status, const char *why)
{
    x->refusal = why;
    x->refusal_status = status;
    free(x->body);
    x->body = NULL;
    x->n = x->cap = 0;
}

/* Keep a piece of the body (beyond the limits: drop it and remember why). */
static void take_upload(exchange *x, const char *data, size_t size)
{
    serve *s = x->s;
    if (x->refusal)
        return;
    if (clock_seconds() - x->arrived > s->o.timeout_ms * 1e-3) {
        refuse_body(x, MHD_HTTP_REQUEST_TIMEOUT, "the request body took longer than the time "
                    "limit to arrive");
        return;
    }
    if (x->n + size > s->o.max_request_bytes) {
        refuse_body(x, MHD_HTTP_CONTENT_TOO_LARGE, "request body beyond the size limit");
        return;
    }
    if (x->n + size + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 4096;
        while (cap < x->n + size + 1)
            cap *= 2;
        char *b = realloc(x->body, cap);
        if (!b) {
            refuse_body(x, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
            return;
        }
        x->body = b;
        x->cap = cap;
    }
    memcpy(x->body + x->n, data, size);
    x->n += size;
    x->body[x->n] = '\0';
}

/* The reply to a request whose sentences are parsed (or that has none). */
static enum MHD_Result reply_request(exchange *x)
{
    char *body = serve_reply_request(&x->rq, &x->s->info);
    return reply(x, MHD_HTTP_OK, body, body ? strlen(body) : 0, 1,
                 x->rq.format == SERVE_FORMAT_TEXT ? "text/plain; charset=utf-8"
                                                   : "application/json");
}

/* The request is no longer on its way to a batcher (submitted, refused or dropped): the
 * batchers may stop waiting for it. */
static void arrived(exchange *x)
{
    if (!x->arriving)
        return;
    x->arriving = 0;
    serve *s = x->s;
    atomic_fetch_sub(&s->arriving, 1);
    serve_batcher_poke(s->b);
    if (s->kb)
        serve_batcher_poke(s->kb);
}

/* Called by the engine thread when the job is over. */
static void job_done(serve_job *job)
{
    exchange *x = job->ctx;
    MHD_resume_connection(x->conn);
}

/* The whole body is in: build the request and queue it, suspending the connection. */
static enum MHD_Result submit_job(exchange *x)
{
    serve *s = x->s;
    if (x->refusal) {
        char message[200];
        snprintf(message, sizeof message, "%s (%zu bytes)", x->refusal, s->o.max_request_bytes);
        return reply_error(x, (unsigned)x->refusal_status,
                           x->refusal_status == MHD_HTTP_CONTENT_TOO_LARGE ? message
                                                                           : x->refusal);
    }
    char *body = x->body ? x->body : strdup("");
    size_t n = x->n;
    x->body = NULL;
    cky_status st;
    if (!body)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    else if (x->route == ROUTE_TEXT)
        st = serve_request_from_text(body, n, MHD_lookup_connection_value(
                                                  x->conn, MHD_GET_ARGUMENT_KIND, "properties"),
                                     &s->lim, &x->rq);
    else
        st = serve_request_from_json(body, n, &s->lim, &x->rq);
    if (st)
        return reply_error(x, status_of(st), cky_last_error());
    x->bq = s->b;
    if (x->rq.kbest > 1) {
        char message[600];
        if (!s->kb) {
            snprintf(message, sizeof message, "kbest %d: %s", x->rq.kbest, s->o.kbest_why
                     ? s->o.kbest_why : "this service has no k-best lists");
            return reply_error(x, MHD_HTTP_BAD_REQUEST, message);
        }
        if (x->rq.kbest > s->o.kbest_max) {
            snprintf(message, sizeof message, "kbest %d: at most %d trees per list here",
                     x->rq.kbest, s->o.kbest_max);
            return reply_error(x, MHD_HTTP_BAD_REQUEST, message);
        }
        x->bq = s->kb;
    }
    if (x->rq.n == 0)
        return reply_request(x);
    x->job = (serve_job){.s = x->rq.s, .r = x->rq.r, .n = x->rq.n,
                         .deadline = x->arrived + s->o.timeout_ms * 1e-3, .done = job_done,
                         .ctx = x};
    /* suspended first: the engine may finish the job before submit returns */
    MHD_suspend_connection(x->conn);
    x->submitted = 1;
    if (!serve_batcher_submit(x->bq, &x->job))
        MHD_resume_connection(x->conn);
    return MHD_YES;
}

static enum MHD_Result submit(exchange *x)
{
    enum MHD_Result rc = submit_job(x);
    arrived(x);
    return rc;
}

/* The connection is resumed: the job is over. */
static enum MHD_Result answer(exchange *x)
{
    serve *s = x->s;
    char message[200];
    switch (serve_batcher_state(x->bq, &x->job)) {
    case SERVE_JOB_DONE: return reply_request(x);
    case SERVE_JOB_REFUSED:
        snprintf(message, sizeof message, "the queue has no room for %d more sentences "
                 "(limit %d): try again later", x->rq.n, s->o.queue);
        return reply_error(x, MHD_HTTP_SERVICE_UNAVAILABLE, message);
    default:
        if (is_draining(s))
            return reply_error(x, MHD_HTTP_SERVICE_UNAVAILABLE, "the service is shutting "
                               "down: not parsed in time");
        snprintf(message, sizeof message, "not parsed within the time limit of %.3g s",
                 s->o.timeout_ms * 1e-3);
        return reply_error(x, MHD_HTTP_SERVICE_UNAVAILABLE, message);
    }
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    serve *s = cls;
    exchange *x = *con_cls;
    if (!x) {
        if (!(x = calloc(1, sizeof *x)))
            return MHD_NO; /* MHD closes the connection */
        x->s = s;
        x->conn = conn;
        x->arrived = clock_seconds();
        *con_cls = x;
        pthread_mutex_lock(&s->lock);
        s->active++;
        pthread_mutex_unlock(&s->lock);
        enum MHD_Result rc = begin(x, url, method);
        if ((x->route == ROUTE_TEXT || x->route == ROUTE_PARSE) && !x->answered) {
            x->arriving = 1;
            atomic_fetch_add(&s->arriving, 1);
        }
        return rc;
    }
    if (*upload_size) {
        if (!x->answered)
            take_upload(x, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (x->answered)
        return MHD_YES;
    if (x->route != ROUTE_TEXT && x->route != ROUTE_PARSE)
        return answer_get(x);
    return x->submitted ? answer(x) : submit(x);
}

/* The request is over (answered, or its connection dropped): release it. */
static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    serve *s = cls;
    exchange *x = *con_cls;
    if (!x)
        return;
    *con_cls = NULL;
    arrived(x);
    CKY_ASSERT(!x->submitted || serve_batcher_state(x->bq, &x->job) != SERVE_JOB_QUEUED,
               "a request ended while the engine held it");
    serve_request_clear(&x->rq);
    free(x->body);
    free(x);
    pthread_mutex_lock(&s->lock);
    s->active--;
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
}

/* ---- starting and stopping ---- */

/* A listening socket on host:port; *port_out the port it got, *ipv6 its family. */
static cky_status open_listener(const char *host, int port, int *fd_out, int *port_out,
                                int *ipv6)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo *res;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc)
        return cky_fail(CKY_ERR_IO, "cannot resolve the address %s: %s", host,
                        gai_strerror(rc));
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        int one = 1;
        if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
                        bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1024))) {
            err = errno;
            close(fd);
            fd = -1;
        } else if (fd >= 0) {
            *ipv6 = ai->ai_family == AF_INET6;
        } else {
            err = errno;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return cky_fail(CKY_ERR_IO, "cannot listen on %s port %d: %s", host, port,
                        strerror(err));
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &len);
    *port_out = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                               : ((struct sockaddr_in *)&sa)->sin_port);
    *fd_out = fd;
    return CKY_OK;
}

cky_status serve_start(parser *p, const serve_info *info, const serve_options *o,
                       serve **out)
{
    *out = NULL;
    if (o->port < 0 || o->port > 65535 || o->max_sentences < 1 || o->http_threads < 1 ||
        o->max_connections < 1 || o->timeout_ms < 1 || o->idle_timeout_s < 1)
        return cky_fail(CKY_ERR_ARG, "serve: invalid options");
    serve *s = calloc(1, sizeof *s);
    if (!s)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    s->info = *info;
    s->o = *o;
    s->lim = (serve_limits){o->max_sentences, o->max_sentence_bytes};
    s->started = clock_seconds();
    atomic_init(&s->arriving, 0);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->idle, NULL);
    int fd = -1, ipv6 = 0;
    cky_status st = serve_batcher_new(p, o->batch, o->batch_wait_ms, o->queue, &s->arriving,
                                      &s->b);
    if (!st && o->kbest)
        st = serve_batcher_new(o->kbest, o->batch, o->batch_wait_ms, o->queue, &s->arriving,
                               &s->kb);
    if (!st)
        st = open_listener(o->host, o->port, &fd, &s->port, &ipv6);
    if (!st) {
        /* poll(), not epoll: with epoll, libmicrohttpd 0.9.75 notices a client that closes
         * after part of a request only at the idle timeout, so dropped connections would
         * hold the connection slots (tools/serve-fuzz) */
        s->d = MHD_start_daemon(
            MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME |
                (ipv6 ? MHD_USE_IPv6 : 0),
            0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)o->http_threads,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->idle_timeout_s,
            MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_END);
        if (!s->d) {
            close(fd);
            st = cky_fail(CKY_ERR_IO, "serve: libmicrohttpd could not start on %s port %d",
                          o->host, s->port);
        }
    }
    if (st) {
        serve_batcher_free(s->b);
        serve_batcher_free(s->kb);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->idle);
        free(s);
        return st;
    }
    *out = s;
    return CKY_OK;
}

int serve_port(const serve *s) { return s->port; }

/* Wait until no request is active or `until` (clock_seconds) passes (under s->lock). */
static void wait_idle(serve *s, double until)
{
    while (s->active > 0 && clock_seconds() < until) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L; /* look again every 20 ms */
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->idle, &s->lock, &ts);
    }
}

int serve_drain(serve *s, int grace_ms)
{
    pthread_mutex_lock(&s->lock);
    s->draining = 1;
    pthread_mutex_unlock(&s->lock);
    int fd = MHD_quiesce_daemon(s->d);
    if (fd >= 0)
        close(fd);
    pthread_mutex_lock(&s->lock);
    wait_idle(s, clock_seconds() + grace_ms * 1e-3);
    pthread_mutex_unlock(&s->lock);
    serve_batch_stats before, after;
    serve_batcher_stats(s->b, &before);
    serve_batcher_stop(s->b); /* what is still queued: 503 */
    serve_batcher_stats(s->b, &after);
    if (s->kb) {
        serve_batch_stats kb_before, kb_after;
        serve_batcher_stats(s->kb, &kb_before);
        serve_batcher_stop(s->kb);
        serve_batcher_stats(s->kb, &kb_after);
        after.jobs_timed_out += kb_after.jobs_timed_out - kb_before.jobs_timed_out;
    }
    pthread_mutex_lock(&s->lock);
    wait_idle(s, clock_seconds() + 2.0); /* those replies written */
    pthread_mutex_unlock(&s->lock);
    MHD_stop_daemon(s->d);
    s->d = NULL;
    return (int)(after.jobs_timed_out - before.jobs_timed_out);
}

void serve_free(serve *s)
{
    if (!s)
        return;
    if (s->d)
        serve_drain(s, 0);
    serve_batcher_free(s->b);
    serve_batcher_free(s->kb);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->idle);
    free(s);
}
