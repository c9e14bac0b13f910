/* workers: see workers.h. */
#include "workers.h"

#include <pthread.h>
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
