/* util/workers: tasks on threads of their own, their statuses and messages kept for the
 * thread that waits for them; util/team: loops shared by a team of threads. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "../util/team.h"
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

typedef struct team_check {
    int *seen;       /* how often each k ran */
    int *member_of;  /* which member ran it */
} team_check;

static void count_k(void *arg, long k, int member)
{
    team_check *c = arg;
    c->seen[k]++;
    c->member_of[k] = member;
}

/* A team of 4 (util/team.h) runs every k of each of 500 loops once, on members 0 .. 3, each
 * loop done when team_for returns; no team (size 1) runs them on the caller as member 0. */
Test(team, each_k_once_per_loop)
{
    enum { N = 97, LOOPS = 500 };
    int seen[N], member_of[N];
    team_check c = {seen, member_of};
    for (int size = 1; size <= 4; size += 3) {
        team *t;
        cr_assert_eq(team_start(size, &t), CKY_OK);
        cr_assert_eq(size == 1, t == NULL);
        cr_assert_leq(team_size(t), size);
        for (int loop = 0; loop < LOOPS; loop++) {
            long n = loop % N + 1;
            memset(seen, 0, sizeof seen);
            team_for(t, n, count_k, &c);
            for (long k = 0; k < N; k++) {
                cr_assert_eq(seen[k], k < n, "loop %d: k %ld ran %d times", loop, k, seen[k]);
                if (k < n)
                    cr_assert(member_of[k] >= 0 && member_of[k] < team_size(t));
            }
        }
        team_stop(t);
    }
}
