/* pipeline: reader, parse and writer stages on host threads over a ring of batches
 * (pipeline.h). */
#include "pipeline.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../util/clock.h"

/* A slot of the ring. Batches pass through the slots in order: the reader fills slot
 * nread % depth, the parse stage takes slot nparsed % depth, the writer slot
 * nwritten % depth; nwritten <= nparsed <= nread <= nwritten + depth. */
typedef struct slot {
    pipeline_batch b;
    int dropped; /* not parsed (a stop): released without writing */
} slot;

typedef struct ring {
    parser *p;
    const pipeline_stages *st;
    slot *slots;
    int depth;
    long nread, nparsed, nwritten;
    int read_done;  /* the reader published its last batch */
    int parse_done; /* the parse stage is through */
    int abort;      /* the writer stopped the run */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    pipeline_stats stats;
} ring;

static int batch_alloc(pipeline_batch *b, int cap)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->s = calloc((size_t)cap, sizeof *b->s);
    b->line = calloc((size_t)cap, sizeof *b->line);
    b->item = calloc((size_t)cap, sizeof *b->item);
    b->gold = calloc((size_t)cap, sizeof *b->gold);
    b->r = calloc((size_t)cap, sizeof *b->r);
    return b->s && b->line && b->item && b->gold && b->r;
}

static void batch_release(pipeline_batch *b)
{
    free(b->s);
    free(b->line);
    free(b->item);
    free(b->gold);
    free(b->r);
}

/* Free what the sentences of b hold (and their results, and gold trees) and empty it. */
static void batch_clear(pipeline_batch *b)
{
    for (int k = 0; k < b->n; k++) {
        sentence_free(&b->s[k]);
        tree_free(b->gold[k]);
        b->gold[k] = NULL;
        parse_result_clear(&b->r[k]);
        memset(&b->r[k], 0, sizeof b->r[k]);
    }
    b->n = 0;
}

static void parse_batch(ring *rg, pipeline_batch *b)
{
    double t0 = clock_seconds();
    if (parser_parse(rg->p, b->s, b->n, b->r)) {
        const char *why = cky_last_error();
        for (int k = 0; k < b->n; k++) {
            parse_result_clear(&b->r[k]);
            memset(&b->r[k], 0, sizeof b->r[k]);
            b->r[k].outcome = PARSE_FAILED;
            b->r[k].score = b->r[k].loglik = -(double)INFINITY;
            b->r[k].error = strdup(why);
        }
    }
    rg->stats.parse_seconds += clock_seconds() - t0;
    if (rg->st->parsed)
        rg->st->parsed(rg->st->ctx, b);
}

static void *parse_thread(void *arg)
{
    ring *rg = arg;
    double waited_since = -1;
    pthread_mutex_lock(&rg->lock);
    for (;;) {
        while (rg->nparsed == rg->nread && !rg->read_done) {
            if (waited_since < 0 && rg->nparsed > 0)
                waited_since = clock_seconds();
            pthread_cond_wait(&rg->changed, &rg->lock);
        }
        if (waited_since >= 0) {
            rg->stats.idle_seconds += clock_seconds() - waited_since;
            waited_since = -1;
        }
        if (rg->nparsed == rg->nread)
            break;
        slot *sl = &rg->slots[rg->nparsed % rg->depth];
        int drop = rg->abort;
        pthread_mutex_unlock(&rg->lock);
        if (!drop && rg->st->stopped && rg->st->stopped(rg->st->ctx))
            drop = 1;
        sl->dropped = drop;
        if (!drop) {
            parse_batch(rg, &sl->b);
            rg->stats.batches++;
            rg->stats.sentences += sl->b.n;
        }
        pthread_mutex_lock(&rg->lock);
        rg->nparsed++;
        pthread_cond_broadcast(&rg->changed);
    }
    rg->parse_done = 1;
    pthread_cond_broadcast(&rg->changed);
    pthread_mutex_unlock(&rg->lock);
    return NULL;
}

static void *write_thread(void *arg)
{
    ring *rg = arg;
    pthread_mutex_lock(&rg->lock);
    for (;;) {
        while (rg->nwritten == rg->nparsed && !rg->parse_done)
            pthread_cond_wait(&rg->changed, &rg->lock);
        if (rg->nwritten == rg->nparsed)
            break;
        slot *sl = &rg->slots[rg->nwritten % rg->depth];
        int skip = sl->dropped || rg->abort;
        pthread_mutex_unlock(&rg->lock);
        int stop = !skip && rg->st->write(rg->st->ctx, &sl->b);
        batch_clear(&sl->b);
        pthread_mutex_lock(&rg->lock);
        if (stop)
            rg->abort = 1;
        rg->nwritten++;
        pthread_cond_broadcast(&rg->changed);
    }
    pthread_mutex_unlock(&rg->lock);
    return NULL;
}

/* Start a thread that blocks every signal. */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* The reader's loop on the calling thread. */
static void read_loop(ring *rg)
{
    pthread_mutex_lock(&rg->lock);
    for (;;) {
        while (rg->nread - rg->nwritten == rg->depth && !rg->abort)
            pthread_cond_wait(&rg->changed, &rg->lock);
        if (rg->abort)
            break;
        slot *sl = &rg->slots[rg->nread % rg->depth];
        long in_use = rg->nread - rg->nwritten + 1;
        pthread_mutex_unlock(&rg->lock);
        sl->b.n = 0;
        sl->b.src = NULL;
        pipeline_read what = rg->st->read(rg->st->ctx, &sl->b);
        if (what == PIPELINE_STOP)
            batch_clear(&sl->b);
        pthread_mutex_lock(&rg->lock);
        if (what != PIPELINE_STOP && sl->b.n > 0) {
            if (in_use > rg->stats.most_in_use)
                rg->stats.most_in_use = (int)in_use;
            rg->nread++;
            pthread_cond_broadcast(&rg->changed);
        }
        if (what != PIPELINE_MORE)
            break;
    }
    rg->read_done = 1;
    pthread_cond_broadcast(&rg->changed);
    pthread_mutex_unlock(&rg->lock);
}

cky_status pipeline_run(parser *p, int batch, int depth, const pipeline_stages *stages,
                        pipeline_stats *stats)
{
    if (batch < 1 || depth < 2)
        return cky_fail(CKY_ERR_ARG, "pipeline: batch %d, depth %d", batch, depth);
    ring rg = {.p = p, .st = stages, .depth = depth};
    rg.stats.slots = depth;
    cky_status st = CKY_OK;
    if (!(rg.slots = calloc((size_t)depth, sizeof *rg.slots)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int k = 0; k < depth && !st; k++)
        if (!batch_alloc(&rg.slots[k].b, batch))
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    pthread_t parse_t, write_t;
    int started = 0;
    if (!st) {
        pthread_mutex_init(&rg.lock, NULL);
        pthread_cond_init(&rg.changed, NULL);
        if (start_thread(&parse_t, parse_thread, &rg) == 0)
            started++;
        if (started == 1 && start_thread(&write_t, write_thread, &rg) == 0)
            started++;
        if (started == 2) {
            read_loop(&rg);
        } else {
            pthread_mutex_lock(&rg.lock);
            rg.read_done = 1; /* the parse thread, if any, ends at once */
            pthread_cond_broadcast(&rg.changed);
            pthread_mutex_unlock(&rg.lock);
            st = cky_fail(CKY_ERR_IO, "pipeline: cannot start a thread");
        }
        if (started >= 1)
            pthread_join(parse_t, NULL);
        if (started == 2)
            pthread_join(write_t, NULL);
        pthread_cond_destroy(&rg.changed);
        pthread_mutex_destroy(&rg.lock);
    }
    for (int k = 0; k < depth; k++)
        batch_release(&rg.slots[k].b);
    free(rg.slots);
    if (stats)
        *stats = rg.stats;
    return st;
}
