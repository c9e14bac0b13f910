/* progress: progress lines on stderr (progress.h). One state for the process, under a mutex:
 * the library reports from its threads, the writer stage counts sentences, and a thread of
 * its own redraws the line while nothing reports (a kernel that compiles for a minute). */
#include "progress.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/clock.h"

#define STAGE_PARSE PROGRESS_NSTAGE /* the parse, after the library's stages */
#define NSTAGE (PROGRESS_NSTAGE + 1)
#define REDRAW 0.25      /* seconds between redraws on a terminal */
#define LOG_EVERY 30.0   /* seconds between the lines of a stage elsewhere */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int depth, thread_on, stopping;
    const char *cmd;
    int tty;
    double after;
    progress_tally tally[NSTAGE];
    double since[NSTAGE];  /* when the stage began */
    double printed[NSTAGE]; /* when its line was last drawn or logged (0: not yet) */
    char what[NSTAGE][256];
    int latest;            /* the stage that began last (the one a terminal shows) */
    int drawn;             /* a line is on the terminal */
} pr = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .latest = -1};

/* "12 s", "3 min 05 s", "2 h 10 min" */
static void duration(double s, char *buf, size_t n)
{
    long t = (long)(s + 0.5);
    if (s < 10)
        snprintf(buf, n, "%.1f s", s);
    else if (t < 60)
        snprintf(buf, n, "%ld s", t);
    else if (t < 3600)
        snprintf(buf, n, "%ld min %02ld s", t / 60, t % 60);
    else
        snprintf(buf, n, "%ld h %02ld min", t / 3600, t / 60 % 60);
}

/* The line of stage k at time now: while it runs, or its last one (`last`). */
static void describe(int k, double now, int last, char *buf, size_t n)
{
    const progress_tally *t = &pr.tally[k];
    double s = now - pr.since[k];
    char took[32], left[48] = "";
    duration(s, took, sizeof took);
    switch (k) {
    case PROGRESS_GRAMMAR:
        snprintf(buf, n, last ? "read the grammar %s in %s" : "reading the grammar %s: %s",
                 pr.what[k], took);
        break;
    case PROGRESS_IMAGE:
        snprintf(buf, n, last ? "wrote the grammar's image into the kernel cache in %s"
                              : "writing the grammar's image into the kernel cache: %s", took);
        break;
    case PROGRESS_COMPILE:
        if (last) {
            snprintf(buf, n, "%ld kernels ready in %s (%ld compiled, %ld from the cache)",
                     t->done, took, t->done - t->cached, t->cached);
            break;
        }
        if (t->done > t->cached && t->total > t->done) {
            char est[32];
            duration(s / (double)(t->done - t->cached) * (double)(t->total - t->done), est,
                     sizeof est);
            snprintf(left, sizeof left, ", about %s left", est);
        }
        snprintf(buf, n, "compiling kernels: %ld/%ld (%ld from the cache), %s%s", t->done,
                 t->total, t->cached, took, left);
        break;
    default:
        if (last)
            snprintf(buf, n, "%ld sentences in %s, %.1f sentences/s", t->done, took,
                     s > 0 ? (double)t->done / s : 0.0);
        else
            snprintf(buf, n, "%ld sentences, %.1f sentences/s, %s", t->done,
                     s > 0 ? (double)t->done / s : 0.0, took);
        break;
    }
}

/* Draw (terminal) or log the running line of the stage to show, if it has lasted long
 * enough. Under the lock. */
static void draw(double now)
{
    char line[512];
    if (pr.tty) {
        int k = pr.latest;
        if (k < 0 || !pr.tally[k].open || now - pr.since[k] < pr.after)
            return;
        describe(k, now, 0, line, sizeof line);
        fprintf(stderr, "\r%s: %s\033[K", pr.cmd, line);
        fflush(stderr);
        pr.drawn = 1;
        pr.printed[k] = now;
        return;
    }
    for (int k = 0; k < PROGRESS_NSTAGE; k++) /* the parse: its last line only */
        if (pr.tally[k].open && now - pr.since[k] >= pr.after &&
            (!pr.printed[k] || now - pr.printed[k] >= LOG_EVERY)) {
            describe(k, now, 0, line, sizeof line);
            fprintf(stderr, "%s: %s\n", pr.cmd, line);
            pr.printed[k] = now;
        }
}

/* Stage k is over: its last line if it lasted long enough (and `summary`). Under the lock. */
static void finish(int k, double now, int summary)
{
    if (!summary && pr.drawn) {
        fputs("\r\033[K", stderr);
        pr.drawn = 0;
    } else if (summary && now - pr.since[k] >= pr.after) {
        char line[512];
        describe(k, now, 1, line, sizeof line);
        fprintf(stderr, "%s%s: %s%s\n", pr.tty ? "\r" : "", pr.cmd, line,
                pr.tty ? "\033[K" : "");
        pr.drawn = 0;
    }
    if (pr.latest == k) { /* show the latest stage still open, if any */
        pr.latest = -1;
        for (int j = 0; j < NSTAGE; j++)
            if (pr.tally[j].open && (pr.latest < 0 || pr.since[j] > pr.since[pr.latest]))
                pr.latest = j;
    }
}

/* Add event e to stage k (an end with its last line if `summary`). Under the lock. */
static void add(int k, const progress_event *e, int summary)
{
    double now = clock_seconds();
    int r = progress_tally_add(&pr.tally[k], e);
    if (r == 1) {
        pr.since[k] = now;
        pr.printed[k] = 0;
        pr.latest = k;
        snprintf(pr.what[k], sizeof pr.what[k], "%s", e->what ? e->what : "");
    } else if (r == 2) {
        finish(k, now, summary);
    } else if (pr.tty && k == pr.latest && now - pr.printed[k] >= REDRAW) {
        draw(now); /* a count changed: show it without waiting for the thread */
    }
}

static void on_report(void *ctx, const progress_event *e)
{
    pthread_mutex_lock(&pr.lock);
    if (pr.depth > 0 && (unsigned)e->stage < PROGRESS_NSTAGE)
        add((int)e->stage, e, 1);
    pthread_mutex_unlock(&pr.lock);
}

/* The redrawing thread: every REDRAW seconds until stopped. */
static void *redraw_main(void *arg)
{
    pthread_mutex_lock(&pr.lock);
    while (!pr.stopping) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += (long)(REDRAW * 1e9);
        t.tv_sec += t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&pr.wake, &pr.lock, &t);
        if (!pr.stopping)
            draw(clock_seconds());
    }
    pthread_mutex_unlock(&pr.lock);
    return NULL;
}

void cli_progress_start(const char *cmd)
{
    pthread_mutex_lock(&pr.lock);
    if (pr.depth++ == 0) {
        static char prefix[64];
        snprintf(prefix, sizeof prefix, "cky %s", cmd);
        pr.cmd = prefix;
        pr.tty = isatty(STDERR_FILENO);
        const char *env = getenv("CKY_PROGRESS_AFTER");
        char *end;
        double after = env ? strtod(env, &end) : CLI_PROGRESS_AFTER;
        pr.after = env && (end == env || *end || !(after >= 0)) ? CLI_PROGRESS_AFTER : after;
        pr.stopping = 0;
        /* the thread takes no signal: they are the main thread's (cli/guard.h) */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        pr.thread_on = pthread_create(&pr.thread, NULL, redraw_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&pr.lock);
}

void cli_progress_stop(void)
{
    pthread_mutex_lock(&pr.lock);
    int last = pr.depth > 0 && --pr.depth == 0;
    if (last) {
        pr.stopping = 1;
        pthread_cond_signal(&pr.wake);
    }
    pthread_mutex_unlock(&pr.lock);
    if (last && pr.thread_on)
        pthread_join(pr.thread, NULL);
    if (last)
        pr.thread_on = 0;
}

progress_sink cli_progress_sink(int quiet)
{
    return (progress_sink){quiet ? NULL : on_report, NULL};
}

static void parse_event(progress_kind kind, long n, int summary)
{
    progress_event e = {PROGRESS_NSTAGE, kind, NULL, 0, n, 0};
    pthread_mutex_lock(&pr.lock);
    if (pr.depth > 0)
        add(STAGE_PARSE, &e, summary);
    pthread_mutex_unlock(&pr.lock);
}

void cli_progress_parse_begin(void) { parse_event(PROGRESS_BEGIN, 0, 1); }

void cli_progress_parse_add(long n) { parse_event(PROGRESS_STEP, n, 1); }

void cli_progress_parse_end(int summary) { parse_event(PROGRESS_END, 0, summary); }

void cli_progress_clear(void)
{
    pthread_mutex_lock(&pr.lock);
    if (pr.drawn) {
        fputs("\r\033[K", stderr);
        pr.drawn = 0;
    }
    pthread_mutex_unlock(&pr.lock);
}
