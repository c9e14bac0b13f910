/* Test helper of the tests that run the `cky` binary (not a test file itself): a private
 * folder per test with five dev sentences, a copy of a kernel cache of sample-sm1 compiled
 * once for the whole suite, shell runs, and file reading. */
#ifndef CKY_TEST_CLI_RUN_H
#define CKY_TEST_CLI_RUN_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_CKY CKY_BUILD "/cky"
#define RUN_GRAMMAR CKY_SHARED "/grammars/sample-sm1/sample-sm1"
#define RUN_BASE_CACHE CKY_BUILD "/test-cache-sample-sm1" /* compiled once, then copied */

/* Run `sh -c CMD` (printf-style) in folder `dir`; returns the exit status (-1 if killed). */
__attribute__((format(printf, 2, 3))) static inline int run_sh(const char *dir, const char *fmt,
                                                                ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd, "cd '%s' && ", dir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The contents of dir/name (malloc'ed, NUL-terminated; "" if missing). */
static inline char *run_read(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    while (f && (n += fread(buf + n, 1, cap - 1 - n, f)) == cap - 1)
        cr_assert_not_null(buf = realloc(buf, cap *= 2));
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* A new folder for one test: in.txt (five dev sentences) and cache/ (a copy of the shared
 * compiled kernel cache of sample-sm1; the first test to need it compiles it, under a lock).
 * Progress lines (cli/progress.h) only for waits of over 10 minutes, so that what a test
 * reads on stderr does not depend on how busy the machine is (a test of them sets its own
 * CKY_PROGRESS_AFTER). */
static inline void run_setup(char *dir)
{
    if (access(RUN_CKY, X_OK) != 0)
        cr_skip_test("%s is not built", RUN_CKY);
    setenv("CKY_PROGRESS_AFTER", "600", 1);
    strcpy(dir, "/tmp/cky-cli-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(run_sh(dir, "head -5 '%s/data/ptb-sample/dev.txt' > in.txt", CKY_SHARED), 0);
    int lock = open(CKY_BUILD "/test-cache.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    cr_assert(lock >= 0);
    flock(lock, LOCK_EX);
    int st = run_sh(dir, "CKY_CACHE='%s' '%s' parse -g '%s' --engine cpu -i in.txt >/dev/null 2>&1 && "
                    "mkdir cache && cp -p '%s'/* cache/", RUN_BASE_CACHE,
                    RUN_CKY, RUN_GRAMMAR, RUN_BASE_CACHE);
    flock(lock, LOCK_UN);
    close(lock);
    cr_assert_eq(st, 0, "cannot make the kernel cache of %s", RUN_GRAMMAR);
}

/* Remove a test's folder. */
static inline void run_cleanup(const char *dir) { run_sh("/", "rm -rf '%s'", dir); }

#endif
