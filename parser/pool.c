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
    parser_failure *failures; /* in the order they happened */
    int nfailures;
    int inject_engine, inject_after, done_chunks_of_injected; /* test hook (-1: none) */
};

/* The queue of one pool_parse: chunk c is s[c * size .. min(n, (c + 1) * size)). */
typedef struct queue {
    pool *pl;
    const sentence *s;
    parse_result *out;
    int n, size, nchunks;
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

int pool_failures(const pool *pl, const parser_failure **out)
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
    int first = c * q->size, m = q->n - first < q->size ? q->n - first : q->size;
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
    pl->failures[pl->nfailures++] = (parser_failure){e, msg ? msg : NULL};
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
        for (int k = c * q->size; k < q->n && k < (c + 1) * q->size; k++) {
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

cky_status pool_parse(pool *pl, const sentence *s, int n, parse_result *out, int chunk)
{
    int live = 0;
    for (int k = 0; k < pl->n; k++)
        live += !pl->dead[k];
    if (n == 0)
        return CKY_OK;
    int size = chunk > 0 ? chunk : (n + 2 * (live ? live : 1) - 1) / (2 * (live ? live : 1));
    queue q = {.pl = pl, .s = s, .out = out, .n = n, .size = size,
               .nchunks = (n + size - 1) / size, .lock = PTHREAD_MUTEX_INITIALIZER,
               .changed = PTHREAD_COND_INITIALIZER};
    q.retry = calloc((size_t)q.nchunks, sizeof *q.retry);
    if (!q.retry)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (live > 0)
        workers_run(live, worker, &q);
    fail_leftovers(&q);
    free(q.retry);
    pthread_cond_destroy(&q.changed);
    pthread_mutex_destroy(&q.lock);
    return q.st;
}
