/* pool: several engines, one queue of chunks, results in input order (see pool.h). */
#include "pool.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/workers.h"

struct pool {
    void **engines;
    int n;
    pool_parse_fn parse;
    char *dead;               /* dead[k]: engine k retired */
    pool_failure *failures; /* in the order they happened */
    int nfailures;
    int inject_engine, inject_after, done_chunks_of_injected; /* test hook (-1: none) */
};

/* The queue of one pool_parse: chunk c is s[start[c] .. start[c + 1]). */
typedef struct queue {
    pool *pl;
    const sentence *s;
    parse_result *out;
    int n, nchunks;
    int *start;      /* nchunks + 1 bounds */
    int next;        /* next chunk never taken */
    int *retry;      /* chunks given back by a failed engine, a stack */
    int nretry;
    int busy;        /* chunks being parsed */
    int next_worker; /* the live engines, handed to the workers in turn */
    cky_status st;   /* out of memory while recording a failure */
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a chunk was given back or finished */
} queue;

cky_status pool_new(void *const *engines, int n, pool_parse_fn parse, pool **out)
{
    if (n < 1)
        return cky_fail(CKY_ERR_ARG, "a pool needs at least one engine (got %d)", n);
    pool *pl = calloc(1, sizeof *pl);
    if (pl) {
        pl->engines = calloc((size_t)n, sizeof *pl->engines);
        pl->dead = calloc((size_t)n, 1);
        pl->failures = calloc((size_t)n, sizeof *pl->failures);
    }
    if (!pl || !pl->engines || !pl->dead || !pl->failures) {
        pool_free(pl);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    memcpy(pl->engines, engines, (size_t)n * sizeof *engines);
    pl->n = n;
    pl->parse = parse;
    pl->inject_engine = -1;
    *out = pl;
    return CKY_OK;
}

void pool_inject_failure(pool *pl, int engine, int after)
{
    pl->inject_engine = engine;
    pl->inject_after = after;
}

int pool_failures(const pool *pl, const pool_failure **out)
{
    *out = pl->failures;
    return pl->nfailures;
}

void pool_free(pool *pl)
{
    if (!pl)
        return;
    for (int k = 0; k < pl->nfailures; k++)
        free((char *)pl->failures[k].error);
    free(pl->failures);
    free(pl->dead);
    free(pl->engines);
    free(pl);
}

/* The next chunk for a live engine, waiting while a chunk in flight may still come back;
 * -1 when there is none. Called under the lock. */
static int take_chunk(queue *q)
{
    for (;;) {
        if (q->nretry > 0)
            return q->retry[--q->nretry];
        if (q->next < q->nchunks)
            return q->next++;
        if (q->busy == 0)
            return -1;
        pthread_cond_wait(&q->changed, &q->lock);
    }
}

/* Parse chunk c with engine e; a failure leaves the chunk's slots cleared. */
static cky_status parse_chunk(queue *q, int e, int c)
{
    pool *pl = q->pl;
    int first = q->start[c], m = q->start[c + 1] - first;
    cky_status st = pl->parse(pl->engines[e], q->s + first, m, q->out + first);
    if (!st && e == pl->inject_engine && pl->done_chunks_of_injected++ >= pl->inject_after)
        st = cky_fail(CKY_ERR_CUDA, "injected failure (test hook) on chunk %d of %d", c + 1,
                      q->nchunks);
    if (st)
        for (int k = 0; k < m; k++)
            parse_result_clear(&q->out[first + k]);
    return st;
}

/* Retire engine e after chunk c failed: the chunk goes back to the queue. Under the lock. */
static void retire(queue *q, int e, int c, const char *why)
{
    pool *pl = q->pl;
    q->retry[q->nretry++] = c;
    pl->dead[e] = 1;
    char *msg = strdup(why);
    if (!msg)
        q->st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    pl->failures[pl->nfailures++] = (pool_failure){e, msg ? msg : NULL};
}

static void *worker(void *arg)
{
    queue *q = arg;
    pool *pl = q->pl;
    pthread_mutex_lock(&q->lock);
    int e = -1;
    while (q->next_worker < pl->n && e < 0)
        if (!pl->dead[q->next_worker++])
            e = q->next_worker - 1;
    for (int c; e >= 0 && (c = take_chunk(q)) >= 0;) {
        q->busy++;
        pthread_mutex_unlock(&q->lock);
        cky_status st = parse_chunk(q, e, c);
        pthread_mutex_lock(&q->lock);
        q->busy--;
        if (st) {
            retire(q, e, c, cky_last_error());
            e = -1;
        }
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* The sentences of chunks no engine was left to parse: PARSE_FAILED, naming the last
 * failure. */
static void fail_leftovers(queue *q)
{
    pool *pl = q->pl;
    const char *why = pl->nfailures ? pl->failures[pl->nfailures - 1].error : NULL;
    while (q->nretry > 0 || q->next < q->nchunks) {
        int c = q->nretry > 0 ? q->retry[--q->nretry] : q->next++;
        for (int k = q->start[c]; k < q->start[c + 1]; k++) {
            parse_result *r = &q->out[k];
            memset(r, 0, sizeof *r);
            r->score = r->loglik = -INFINITY;
            r->outcome = PARSE_FAILED;
            char buf[1024];
            snprintf(buf, sizeof buf, "no engine left to parse it (the last failed: %s)",
                     why ? why : "out of memory");
            r->error = strdup(buf);
        }
    }
}

/* Cut s[0..n) into chunks: of `chunk` sentences each, or (chunk 0) into `per_engine`
 * chunks per live engine of about equal work, words cubed (the CKY cost of a sentence), at
 * least one sentence each. Sets q->nchunks and q->start (malloc'ed); 0 if out of memory. */
static int cut_chunks(queue *q, const sentence *s, int n, int chunk, int want)
{
    int most = chunk > 0 ? (n + chunk - 1) / chunk : (want < n ? want : n);
    if (!(q->start = calloc((size_t)most + 1, sizeof *q->start)))
        return 0;
    if (chunk > 0) {
        for (int c = 0; c <= most; c++)
            q->start[c] = c * chunk < n ? c * chunk : n;
        q->nchunks = most;
        return 1;
    }
    double total = 0, done = 0;
    for (int k = 0; k < n; k++)
        total += (double)s[k].n * s[k].n * s[k].n + 1;
    int c = 0;
    for (int k = 0; k < n; k++) {
        done += (double)s[k].n * s[k].n * s[k].n + 1;
        /* end chunk c after sentence k once it holds its share, leaving a sentence for
         * each chunk still to come */
        if (c + 1 < most && done >= total * (c + 1) / most && n - (k + 1) >= most - (c + 1))
            q->start[++c] = k + 1;
    }
    q->nchunks = c + 1;
    q->start[q->nchunks] = n;
    return 1;
}

cky_status pool_parse(pool *pl, const sentence *s, int n, parse_result *out, int chunk,
                      int per_engine)
{
    int live = 0;
    for (int k = 0; k < pl->n; k++)
        live += !pl->dead[k];
    if (n == 0)
        return CKY_OK;
    queue q = {.pl = pl, .s = s, .out = out, .n = n, .lock = PTHREAD_MUTEX_INITIALIZER,
               .changed = PTHREAD_COND_INITIALIZER};
    if (!cut_chunks(&q, s, n, chunk, (live ? live : 1) * (per_engine > 0 ? per_engine : 1)) ||
        !(q.retry = calloc((size_t)q.nchunks, sizeof *q.retry))) {
        free(q.start);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    if (live > 0)
        workers_run(live, worker, &q);
    fail_leftovers(&q);
    free(q.retry);
    free(q.start);
    pthread_cond_destroy(&q.changed);
    pthread_mutex_destroy(&q.lock);
    return q.st;
}
