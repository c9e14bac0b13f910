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
