/* batch: dynamic batching (serve_internal.h). Jobs (the sentences of one request) wait in a
 * FIFO; the engine thread takes sentences from its head, across jobs, into one batch of at
 * most `batch` sentences, as soon as the batch is full, or the oldest queued job has waited
 * `wait` seconds, or no other request is on its way (serve_batcher_new's `arriving`: waiting
 * could bring nothing); parses the batch; and hands the results to their jobs, calling a job's
 * done() when its last sentence is in. A job whose deadline has passed when its sentences
 * come to be taken is dropped (TIMEOUT). All job state is changed under one lock; done() is
 * called without it. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/clock.h"
#include "serve_internal.h"

#define RATE_SLOTS 10 /* seconds of history of the recent rate */

struct serve_batcher {
    parser *p;
    int batch, queue_limit;
    double wait;
    const atomic_int *arriving; /* requests begun and not yet submitted (NULL: unknown) */
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stopping;
    serve_job *head, *tail;
    serve_batch_stats st;
    long rate_count[RATE_SLOTS];      /* sentences parsed in each of the last seconds */
    long rate_second[RATE_SLOTS];     /* which second each slot counts */
    /* the batch being parsed (engine thread only) */
    sentence *bs;
    parse_result *br;
    serve_job **bjob;
    int *bindex;
};

static double now(void) { return clock_seconds(); }

/* Add m parsed sentences to the per-second counts (under the lock). */
static void rate_add(serve_batcher *b, long m)
{
    long sec = (long)now();
    int k = (int)(sec % RATE_SLOTS);
    if (b->rate_second[k] != sec) {
        b->rate_second[k] = sec;
        b->rate_count[k] = 0;
    }
    b->rate_count[k] += m;
}

static double rate_recent(const serve_batcher *b)
{
    long sec = (long)now(), total = 0;
    for (int k = 0; k < RATE_SLOTS; k++)
        if (b->rate_second[k] > sec - RATE_SLOTS)
            total += b->rate_count[k];
    return (double)total / RATE_SLOTS;
}

/* Remove the head job from the queue (under the lock). */
static void pop_head(serve_batcher *b)
{
    serve_job *j = b->head;
    b->head = j->queue_next;
    if (!b->head)
        b->tail = NULL;
    j->queue_next = NULL;
}

/* Fill the batch from the head of the queue (under the lock); jobs found past their deadline
 * are dropped and chained on *expired. Returns the batch's size. */
static int take_batch(serve_batcher *b, serve_job **expired)
{
    int m = 0;
    double t = now();
    while (b->head && m < b->batch) {
        serve_job *j = b->head;
        if (t > j->deadline) {
            b->st.queued -= j->n - j->next;
            j->state = SERVE_JOB_TIMEOUT;
            b->st.jobs_timed_out++;
            pop_head(b);
            j->queue_next = *expired;
            *expired = j;
            continue;
        }
        while (j->next < j->n && m < b->batch) {
            b->bs[m] = j->s[j->next];
            b->bjob[m] = j;
            b->bindex[m] = j->next++;
            m++;
        }
        if (j->next == j->n)
            pop_head(b);
    }
    b->st.queued -= m;
    return m;
}

/* Call done() of each job of a chain (without the lock: done may resume a connection). */
static void call_done(serve_job *chain)
{
    while (chain) {
        serve_job *next = chain->queue_next;
        chain->queue_next = NULL;
        chain->done(chain);
        chain = next;
    }
}

/* Parse the batch (without the lock); a batch that could not be attempted fails each of its
 * sentences with the message, as cky parse does. */
static void parse_batch(serve_batcher *b, int m)
{
    memset(b->br, 0, (size_t)m * sizeof *b->br);
    if (parser_parse(b->p, b->bs, m, b->br) == CKY_OK)
        return;
    const char *why = cky_last_error();
    for (int k = 0; k < m; k++) {
        parse_result_clear(&b->br[k]);
        memset(&b->br[k], 0, sizeof b->br[k]);
        b->br[k].outcome = PARSE_FAILED;
        b->br[k].score = b->br[k].loglik = -(double)INFINITY;
        b->br[k].error = strdup(why);
    }
}

/* Hand the results of the batch to their jobs (under the lock); the jobs now done are
 * chained on *done. */
static void deliver(serve_batcher *b, int m, serve_job **done)
{
    for (int k = 0; k < m; k++) {
        serve_job *j = b->bjob[k];
        j->r[b->bindex[k]] = b->br[k];
        if (--j->left == 0) {
            if (j->state == SERVE_JOB_TIMEOUT) { /* cut short by serve_batcher_stop */
                b->st.jobs_timed_out++;
            } else {
                j->state = SERVE_JOB_DONE;
                b->st.jobs_done++;
            }
            j->queue_next = *done;
            *done = j;
        }
    }
    int bucket = 0;
    while (bucket + 1 < SERVE_BATCH_BUCKETS && (2 << bucket) <= m)
        bucket++;
    b->st.batch_sizes[bucket]++;
    b->st.batches++;
    b->st.sentences += m;
    if (m > b->st.batch_max)
        b->st.batch_max = m;
    rate_add(b, m);
}

/* Wait (under the lock) until the queue holds a full batch, or its head has waited `wait`,
 * or no other request is arriving, or the batcher stops. Returns 0 when stopping with
 * nothing queued. */
static int wait_for_batch(serve_batcher *b)
{
    while (!b->head && !b->stopping)
        pthread_cond_wait(&b->wake, &b->lock);
    while (b->head && !b->stopping && b->st.queued < b->batch) {
        double until = b->head->queued_at + b->wait;
        if (now() >= until || (b->arriving && atomic_load(b->arriving) == 0))
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts); /* pthread_cond_timedwait's clock */
        double wait = until - now();
        ts.tv_sec += (time_t)wait;
        ts.tv_nsec += (long)((wait - floor(wait)) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = pthread_cond_timedwait(&b->wake, &b->lock, &ts);
        if (rc == ETIMEDOUT)
            break;
    }
    return b->head != NULL;
}

static void *engine_thread(void *arg)
{
    serve_batcher *b = arg;
    pthread_mutex_lock(&b->lock);
    while (wait_for_batch(b)) {
        serve_job *expired = NULL, *done = NULL;
        int m = take_batch(b, &expired);
        pthread_mutex_unlock(&b->lock);
        call_done(expired);
        if (m > 0) {
            double t0 = now();
            parse_batch(b, m);
            double t1 = now();
            pthread_mutex_lock(&b->lock);
            b->st.busy_seconds += t1 - t0;
            deliver(b, m, &done);
            pthread_mutex_unlock(&b->lock);
            call_done(done);
        }
        pthread_mutex_lock(&b->lock);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

cky_status serve_batcher_new(parser *p, int batch, int wait_ms, int queue,
                             const atomic_int *arriving, serve_batcher **out)
{
    *out = NULL;
    if (batch < 1 || queue < 1 || wait_ms < 0)
        return cky_fail(CKY_ERR_ARG, "serve: batch %d, queue %d, wait %d ms: want batch and "
                        "queue >= 1, wait >= 0", batch, queue, wait_ms);
    serve_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    b->p = p;
    b->batch = batch;
    b->queue_limit = queue;
    b->wait = wait_ms * 1e-3;
    b->arriving = arriving;
    b->bs = calloc((size_t)batch, sizeof *b->bs);
    b->br = calloc((size_t)batch, sizeof *b->br);
    b->bjob = calloc((size_t)batch, sizeof *b->bjob);
    b->bindex = calloc((size_t)batch, sizeof *b->bindex);
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->wake, NULL);
    if (!b->bs || !b->br || !b->bjob || !b->bindex) {
        serve_batcher_free(b);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for a batch of %d sentences", batch);
    }
    if (pthread_create(&b->thread, NULL, engine_thread, b)) {
        serve_batcher_free(b);
        return cky_fail(CKY_ERR_NOMEM, "serve: cannot start the engine thread");
    }
    b->started = 1;
    *out = b;
    return CKY_OK;
}

int serve_batcher_submit(serve_batcher *b, serve_job *job)
{
    pthread_mutex_lock(&b->lock);
    if (b->stopping || b->st.queued + job->n > b->queue_limit) {
        job->state = SERVE_JOB_REFUSED;
        b->st.jobs_refused++;
        pthread_mutex_unlock(&b->lock);
        return 0;
    }
    job->state = SERVE_JOB_QUEUED;
    job->next = 0;
    job->left = job->n;
    job->queue_next = NULL;
    job->queued_at = now();
    if (b->tail)
        b->tail->queue_next = job;
    else
        b->head = job;
    b->tail = job;
    b->st.queued += job->n;
    if (b->st.queued > b->st.queued_max)
        b->st.queued_max = b->st.queued;
    pthread_cond_signal(&b->wake);
    pthread_mutex_unlock(&b->lock);
    return 1;
}

void serve_batcher_poke(serve_batcher *b)
{
    pthread_mutex_lock(&b->lock);
    pthread_cond_broadcast(&b->wake);
    pthread_mutex_unlock(&b->lock);
}

serve_job_state serve_batcher_state(serve_batcher *b, const serve_job *job)
{
    pthread_mutex_lock(&b->lock);
    serve_job_state st = job->state;
    pthread_mutex_unlock(&b->lock);
    return st;
}

void serve_batcher_stats(serve_batcher *b, serve_batch_stats *out)
{
    pthread_mutex_lock(&b->lock);
    *out = b->st;
    out->recent_rate = rate_recent(b);
    pthread_mutex_unlock(&b->lock);
}

void serve_batcher_stop(serve_batcher *b)
{
    if (!b || !b->started)
        return;
    pthread_mutex_lock(&b->lock);
    b->stopping = 1;
    serve_job *chain = NULL;
    while (b->head) { /* the batch being parsed, if any, is finished by the thread */
        serve_job *j = b->head;
        b->st.queued -= j->n - j->next;
        pop_head(b);
        if (j->left == j->n - j->next) { /* none of it in the batch being parsed */
            j->state = SERVE_JOB_TIMEOUT;
            b->st.jobs_timed_out++;
            j->queue_next = chain;
            chain = j;
        } else { /* over when its sentences in the batch are */
            j->state = SERVE_JOB_TIMEOUT;
            j->left -= j->n - j->next;
            j->next = j->n;
        }
    }
    pthread_cond_signal(&b->wake);
    pthread_mutex_unlock(&b->lock);
    call_done(chain);
    pthread_join(b->thread, NULL);
    b->started = 0;
}

void serve_batcher_free(serve_batcher *b)
{
    if (!b)
        return;
    serve_batcher_stop(b);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->wake);
    free(b->bs);
    free(b->br);
    free(b->bjob);
    free(b->bindex);
    free(b);
}
