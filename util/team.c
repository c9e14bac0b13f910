/* team: see team.h. The caller publishes a loop by raising the generation (release); each
 * helper that sees it (acquire) takes indices from a shared counter and then lowers the
 * count of members still in the loop (release), which the caller waits to see reach 0
 * (acquire). */
#include "team.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SPINS 4096 /* busy polls before each yield of a waiting thread */

struct team {
    int size; /* the caller and the helpers started */
    pthread_t *thread;
    struct helper *helper;
    atomic_long generation; /* the loop published last */
    atomic_int stopping;
    atomic_long next;       /* the next index to take */
    atomic_int busy;        /* helpers not yet done with the loop */
    long n;
    void (*fn)(void *arg, long k, int member);
    void *arg;
};

typedef struct helper {
    team *t;
    int member;
} helper;

static void relax(int *spins)
{
    if (++*spins >= SPINS) {
        *spins = 0;
        sched_yield();
    }
}

static void take_share(team *t, int member)
{
    for (long k; (k = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed)) < t->n;)
        t->fn(t->arg, k, member);
}

static void *helper_main(void *arg)
{
    const helper *h = arg;
    team *t = h->t;
    long seen = 0;
    for (;;) {
        long g;
        int spins = 0;
        while ((g = atomic_load_explicit(&t->generation, memory_order_acquire)) == seen)
            relax(&spins);
        seen = g;
        if (atomic_load_explicit(&t->stopping, memory_order_relaxed))
            return NULL;
        take_share(t, h->member);
        atomic_fetch_sub_explicit(&t->busy, 1, memory_order_release);
    }
}

cky_status team_start(int size, team **out)
{
    *out = NULL;
    if (size <= 1)
        return CKY_OK;
    team *t = calloc(1, sizeof *t);
    if (!t || !(t->thread = calloc((size_t)size, sizeof *t->thread)) ||
        !(t->helper = calloc((size_t)size, sizeof *t->helper))) {
        if (t)
            free(t->thread);
        free(t);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    atomic_init(&t->generation, 0);
    atomic_init(&t->stopping, 0);
    atomic_init(&t->next, 0);
    atomic_init(&t->busy, 0);
    t->size = 1;
    while (t->size < size) {
        t->helper[t->size] = (helper){t, t->size};
        if (pthread_create(&t->thread[t->size], NULL, helper_main, &t->helper[t->size]))
            break;
        t->size++;
    }
    *out = t;
    return CKY_OK;
}

int team_size(const team *t) { return t ? t->size : 1; }

void team_for(team *t, long n, void (*fn)(void *arg, long k, int member), void *arg)
{
    if (!t || t->size == 1 || n <= 1) {
        for (long k = 0; k < n; k++)
            fn(arg, k, 0);
        return;
    }
    t->n = n;
    t->fn = fn;
    t->arg = arg;
    atomic_store_explicit(&t->next, 0, memory_order_relaxed);
    atomic_store_explicit(&t->busy, t->size - 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->generation, 1, memory_order_release);
    take_share(t, 0);
    int spins = 0;
    while (atomic_load_explicit(&t->busy, memory_order_acquire) > 0)
        relax(&spins);
}

void team_stop(team *t)
{
    if (!t)
        return;
    atomic_store_explicit(&t->stopping, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->generation, 1, memory_order_release);
    for (int m = 1; m < t->size; m++)
        pthread_join(t->thread[m], NULL);
    free(t->thread);
    free(t->helper);
    free(t);
}
