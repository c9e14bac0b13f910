/* util/workers: tasks on threads of their own, their statuses and messages kept for the
 * thread that waits for them. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "../util/workers.h"

typedef struct job {
    int value;        /* what the task writes */
    cky_status fails; /* what it returns (with a message naming the value) */
    pthread_t thread; /* the thread it ran on */
} job;

static cky_status job_main(void *arg)
{
    job *j = arg;
    j->thread = pthread_self();
    j->value *= 10;
    return j->fails ? cky_fail(j->fails, "job %d failed", j->value) : CKY_OK;
}

/* The three jobs j[] started as tasks t[]. */
static void start_three(workers_task t[3], job j[3])
{
    for (int k = 0; k < 3; k++)
        workers_start(&t[k], job_main, &j[k]);
}

Test(workers, tasks_run_beside_the_caller)
{
    job j[3] = {{1, CKY_OK, 0}, {2, CKY_OK, 0}, {3, CKY_OK, 0}};
    workers_task t[3];
    start_three(t, j);
    cr_assert_eq(workers_wait_all(t, 3, CKY_OK), CKY_OK);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(j[k].value, 10 * (k + 1));
        cr_assert(!pthread_equal(j[k].thread, pthread_self()), "task %d ran on the caller", k);
    }
}

Test(workers, the_first_failure_and_its_message)
{
    job j[3] = {{1, CKY_OK, 0}, {2, CKY_ERR_IO, 0}, {3, CKY_ERR_ARG, 0}};
    workers_task t[3];
    start_three(t, j);
    cr_assert_eq(workers_wait_all(t, 3, CKY_OK), CKY_ERR_IO);
    cr_assert_str_eq(cky_last_error(), "job 20 failed");
    cr_assert_eq(j[2].value, 30, "every task is waited for");
}

Test(workers, an_earlier_failure_keeps_its_message)
{
    job j = {4, CKY_ERR_ARG, 0};
    workers_task t;
    workers_start(&t, job_main, &j);
    cr_assert_eq(workers_wait_all(&t, 1, cky_fail(CKY_ERR_CUDA, "the caller's")), CKY_ERR_CUDA);
    cr_assert_str_eq(cky_last_error(), "the caller's");
    cr_assert_eq(j.value, 40);
}
