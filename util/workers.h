/* workers: one function run on several host threads that share its argument, or on one
 * host thread of its own beside the caller (a task). */
#ifndef CKY_UTIL_WORKERS_H
#define CKY_UTIL_WORKERS_H

#include <pthread.h>

#include "status.h"

/* Run fn(arg) on n threads and wait for all of them (on the calling thread alone when no
 * thread can be started). The workers take their work from `arg` until none is left, so
 * fewer threads than asked only make the work slower. */
void workers_run(int n, void *(*fn)(void *), void *arg);

/* Run fn(arg, k, worker) for k = 0 .. n - 1 on up to `threads` host threads (no more than n;
 * the calling thread alone when none can be started), each taking the next k in turn;
 * `worker` (0 .. threads - 1) names the thread, for scratch space of its own. When a call
 * fails, no further k is taken: the first failure's status is returned, with its message as
 * the calling thread's cky_last_error(); else CKY_OK. */
cky_status workers_for(int threads, long n, cky_status (*fn)(void *arg, long k, int worker),
                       void *arg);

/* A function run on a thread of its own while the caller goes on; its status and message
 * are kept for the thread that waits for it. */
typedef struct workers_task {
    cky_status (*fn)(void *arg);
    void *arg;
    pthread_t thread;
    int started;
    cky_status st;
    char error[1024]; /* the thread's cky_last_error() on failure */
} workers_task;

/* Start fn(arg) on a thread of its own (when none can be started, workers_wait_all runs it). */
void workers_start(workers_task *t, cky_status (*fn)(void *arg), void *arg);

/* Wait for the n tasks t[0 .. n), each started once by workers_start (or run it now on the
 * calling thread): st when it is a failure already (the calling thread's message kept),
 * else the first failed task's status, with its message as the calling thread's
 * cky_last_error(). */
cky_status workers_wait_all(workers_task *t, int n, cky_status st);

#endif
