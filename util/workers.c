/* workers: see workers.h. */
#include "workers.h"

#include <stdio.h>
#include <stdlib.h>

void workers_run(int n, void *(*fn)(void *), void *arg)
{
    pthread_t *tid = n > 1 ? malloc((size_t)n * sizeof *tid) : NULL;
    int started = 0;
    while (tid && started < n && pthread_create(&tid[started], NULL, fn, arg) == 0)
        started++;
    if (started == 0)
        fn(arg);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
}

typedef struct for_loop {
    cky_status (*fn)(void *arg, long k, int worker);
    void *arg;
    long n, next;     /* the next k to take, under lock */
    int workers;      /* threads that have started */
    cky_status st;    /* the first failure */
    char error[1024]; /* its message */
    pthread_mutex_t lock;
} for_loop;

static void *for_worker(void *arg)
{
    for_loop *l = arg;
    pthread_mutex_lock(&l->lock);
    int worker = l->workers++;
    pthread_mutex_unlock(&l->lock);
    for (;;) {
        pthread_mutex_lock(&l->lock);
        long k = l->st ? l->n : l->next++;
        pthread_mutex_unlock(&l->lock);
        if (k >= l->n)
            return NULL;
        cky_status st = l->fn(l->arg, k, worker);
        if (st) {
            pthread_mutex_lock(&l->lock);
            if (!l->st) {
                l->st = st;
                snprintf(l->error, sizeof l->error, "%s", cky_last_error());
            }
            pthread_mutex_unlock(&l->lock);
        }
    }
}

cky_status workers_for(int threads, long n, cky_status (*fn)(void *arg, long k, int worker),
                       void *arg)
{
    for_loop l = {fn, arg, n, 0, 0, CKY_OK, "", PTHREAD_MUTEX_INITIALIZER};
    if (n <= 0)
        return CKY_OK;
    workers_run(threads < n ? threads : (int)n, for_worker, &l);
    pthread_mutex_destroy(&l.lock);
    return l.st ? cky_fail(l.st, "%s", l.error) : CKY_OK;
}

static void *task_main(void *arg)
{
    workers_task *t = arg;
    if ((t->st = t->fn(t->arg)))
        snprintf(t->error, sizeof t->error, "%s", cky_last_error());
    return NULL;
}

void workers_start(workers_task *t, cky_status (*fn)(void *arg), void *arg)
{
    *t = (workers_task){.fn = fn, .arg = arg};
    t->started = pthread_create(&t->thread, NULL, task_main, t) == 0;
}

cky_status workers_wait_all(workers_task *t, int n, cky_status st)
{
    for (int k = 0; k < n; k++)
        if (t[k].started)
            pthread_join(t[k].thread, NULL);
        else
            task_main(&t[k]);
    for (int k = 0; k < n && !st; k++)
        if (t[k].st)
            return cky_fail(t[k].st, "%s", t[k].error);
    return st;
}
