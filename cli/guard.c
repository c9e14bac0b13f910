/* guard: path checks, signals, cache fallback and input warnings of cky parse (guard.h). */
#include "guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cachedir.h"
#include "../util/io.h"
#include "../util/output.h"
#include "cli.h"

static volatile sig_atomic_t caught;
static const int handled[2] = {SIGINT, SIGTERM};
static struct sigaction before[2]; /* the handling cky started with */
static sigset_t watched;           /* those of them not ignored then */
static char note[4200];            /* guard_note_interrupted's, made before any signal */
static size_t note_len;
static pthread_t watcher;
static int watching;

/* Before the outputs are open: the run ends now (only async-signal-safe calls). */
static void on_early_signal(int sig)
{
    if (note_len && write(STDERR_FILENO, note, note_len) < 0)
        note_len = 0;
    _exit(128 + sig);
}

/* The thread that takes the blocked signals before the outputs are open. */
static void *watch_main(void *arg)
{
    for (int sig;;)
        if (sigwait(&watched, &sig) == 0)
            on_early_signal(sig);
    return NULL;
}

static void on_signal(int sig) { caught = sig; }

/* Handle the watched signals with `fn` (flags: sigaction's). */
static void handle(void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 2; k++)
        if (sigismember(&watched, handled[k]))
            sigaction(handled[k], &sa, NULL);
}

void guard_signals_block(const char *cmd, const char *target)
{
    sigemptyset(&watched);
    for (int k = 0; k < 2; k++)
        if (sigaction(handled[k], NULL, &before[k]) == 0 && before[k].sa_handler != SIG_IGN)
            sigaddset(&watched, handled[k]);
    struct stat sb;
    note_len = 0;
    if (target && strcmp(target, "-"))
        note_len = (size_t)snprintf(note, sizeof note, "cky %s: interrupted: %s %s\n", cmd,
                                    target, stat(target, &sb) == 0 ? "left as it was"
                                                                   : "not written");
    note_len = note_len < sizeof note ? note_len : 0;
    caught = 0;
    handle(on_early_signal, 0);
    pthread_sigmask(SIG_BLOCK, &watched, NULL);
    watching = pthread_create(&watcher, NULL, watch_main, NULL) == 0;
}

void guard_signals_catch(void)
{
    if (watching) {
        pthread_cancel(watcher); /* sigwait is a cancellation point */
        pthread_join(watcher, NULL);
        watching = 0;
    }
    handle(on_signal, SA_RESETHAND); /* no SA_RESTART: a blocked read returns EINTR */
    pthread_sigmask(SIG_UNBLOCK, &watched, NULL);
}

void guard_signals_restore(void)
{
    for (int k = 0; k < 2; k++)
        if (sigismember(&watched, handled[k]))
            sigaction(handled[k], &before[k], NULL);
}

int guard_interrupted(void) { return caught; }

void guard_note_interrupted(void)
{
    if (note_len)
        fputs(note, stderr);
}

/* The files a grammar argument may stand for: itself and a text export's three files. */
static int grammar_clash(const char *gram, const char *out)
{
    static const char *const ext[] = {"", ".grammar", ".lexicon", ".words",
                                      ".grammar.gz", ".lexicon.gz", ".words.gz"};
    char path[4096];
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++)
        if (snprintf(path, sizeof path, "%s%s", gram, ext[k]) < (int)sizeof path &&
            output_same_file(path, out))
            return 1;
    return 0;
}

int guard_check_paths(const char *cmd, const char *gram, const char *const *inputs,
                      int ninputs, const char *const *outputs, int noutputs)
{
    struct stat sb;
    if (stat(gram, &sb) == 0 && S_ISDIR(sb.st_mode))
        return cli_usage_error(cmd, "-g %s: is a directory (give a .gr file or the PREFIX of a "
                               "text export PREFIX.grammar, PREFIX.lexicon, PREFIX.words)",
                               gram);
    if (stat(gram, &sb) == 0 && !S_ISREG(sb.st_mode))
        return cli_usage_error(cmd, "-g %s: not a regular file", gram);
    for (int o = 0; o < noutputs; o++) {
        if (!outputs[o])
            continue;
        for (int i = 0; i < ninputs; i++)
            if (inputs[i] && output_same_file(inputs[i], outputs[o]))
                return cli_usage_error(cmd, "output %s is the input %s: refusing to overwrite "
                                       "it", outputs[o], inputs[i]);
        if (grammar_clash(gram, outputs[o]))
            return cli_usage_error(cmd, "output %s is a file of the grammar %s: refusing to "
                                   "overwrite it", outputs[o], gram);
        for (int p = 0; p < o; p++)
            if (outputs[p] && (output_same_file(outputs[p], outputs[o]) ||
                               !strcmp(outputs[p], outputs[o])))
                return cli_usage_error(cmd, "%s is given as two outputs", outputs[o]);
    }
    return 0;
}

void guard_cache(const char *cmd)
{
    char *dir = NULL;
    if (cachedir_resolve(NULL, &dir) || !dir) {
        free(dir);
        return;
    }
    if (cachedir_prepare(dir)) {
        fprintf(stderr, "cky %s: warning: %s; compiling the kernels in memory, without a cache "
                "(CKY_CACHE=off says so and silences this)\n", cmd, cky_last_error());
        setenv("CKY_CACHE", "off", 1);
    }
    free(dir);
}

#define TEXT_WARNINGS 10 /* lines reported before going quiet */

void guard_text(const char *cmd, const char *src, long line, const char *s, size_t n)
{
    static int reported;
    long at = io_text_check(s, n);
    if (at < 0 || reported > TEXT_WARNINGS)
        return;
    if (++reported > TEXT_WARNINGS) {
        fprintf(stderr, "cky %s: warning: more lines with NUL bytes or invalid UTF-8 (not "
                "reported)\n", cmd);
        return;
    }
    fprintf(stderr, "cky %s: warning: %s:%ld: byte %ld is %s: read as U+FFFD\n", cmd, src, line,
            at + 1, s[at] ? "not valid UTF-8" : "a NUL byte");
}
