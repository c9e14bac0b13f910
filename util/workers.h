/* workers: one function run on several host threads that share its argument. */
#ifndef CKY_UTIL_WORKERS_H
#define CKY_UTIL_WORKERS_H

/* Run fn(arg) on n threads and wait for all of them (on the calling thread alone when no
 * thread can be started). The workers take their work from `arg` until none is left, so
 * fewer threads than asked only make the work slower. */
void workers_run(int n, void *(*fn)(void *), void *arg);

#endif
