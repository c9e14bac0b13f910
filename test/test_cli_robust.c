/* cky parse as a user and a hostile tester run it (issue 19): output written whole or not
 * at all, exit statuses that tell failures apart, line-by-line answers through a pipe,
 * signals, messages that name the file and the reason, options an engine ignores. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "test_cli_run.h"

#define PARSE "'" RUN_CKY "' parse -g '" RUN_GRAMMAR "' "
#define CPU "CKY_CACHE=cache " PARSE "--engine cpu "

Test(cli_robust, failed_run_leaves_output_untouched)
{
    char d[64];
    run_setup(d);
    const char *bad[] = {"-i /nonexistent", "--treebank /nonexistent.mrg"};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(run_sh(d, "echo keep > f && " CPU "%s -o f 2>err", bad[k]), 1);
        char *f = run_read(d, "f"), *err = run_read(d, "err");
        cr_assert_str_eq(f, "keep\n", "%s: -o f became '%s'", bad[k], f);
        cr_assert(strstr(err, "/nonexistent") && strstr(err, "No such file"), "%s", err);
        free(f);
        free(err);
    }
    /* nothing but f, in, err and the cache: no temporary file left behind */
    cr_assert_eq(run_sh(d, "test $(ls -A | wc -l) -eq 4"), 0);
    run_cleanup(d);
}

Test(cli_robust, output_that_is_an_input_is_refused)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "cp in.txt x && " CPU "-i x -o x 2>err"), 2);
    cr_assert_eq(run_sh(d, "cmp -s in.txt x"), 0, "x was changed");
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "refusing"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, "ln -s in.txt link && " CPU "-i in.txt -o link 2>/dev/null"), 2);
    run_cleanup(d);
}

Test(cli_robust, gzip_output_and_symbolic_links)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, CPU "-i in.txt > plain && echo old > t.gz && " CPU "-i in.txt "
                        "-o t.gz"), 0);
    cr_assert_eq(run_sh(d, "gzip -dc t.gz | cmp -s - plain"), 0, "t.gz is not the trees");
    cr_assert_eq(run_sh(d, "test $(wc -l < plain) -eq 5"), 0);
    /* through a symbolic link: the file it names gets the trees, the link stays */
    cr_assert_eq(run_sh(d, "echo old > real && ln -s real link && " CPU "-i in.txt -o link && "
                        "test -L link && cmp -s real plain"), 0);
    run_cleanup(d);
}

/* A sentence whose chart cannot be allocated is an internal error: (()) in its line, the
 * other lines parsed, exit status 3, not 0. */
Test(cli_robust, internal_error_has_its_own_exit_status)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "(yes the | head -3000 | tr '\\n' ' '; echo; "
                        "echo 'The dog barks .') > big.txt"), 0);
    int st = run_sh(d, "ulimit -v 600000 && " PARSE "--engine ref --max-length 100000 -i big.txt "
                    "> out 2>err");
    char *out = run_read(d, "out"), *err = run_read(d, "err");
    if (strstr(err, "AddressSanitizer failed to allocate")) {
        run_cleanup(d);
        cr_skip_test("AddressSanitizer cannot run under ulimit -v");
    }
    cr_assert_eq(st, 3, "exit status %d; stderr: %s", st, err);
    cr_assert(!strncmp(out, "(())\n( (S ", 10), "%s", out);
    cr_assert(strstr(err, "big.txt:1:"), "%s", err);
    free(out);
    free(err);
    run_cleanup(d);
}

/* One sentence too big for the memory fails alone in every engine and decoder: its line is
 * (()), named on stderr, every other line of its batch is parsed (issue 41). */
Test(cli_robust, big_sentence_fails_alone, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -20 '%s/data/ptb-sample/dev.txt' > mix.txt && "
                        "(yes the | head -3000 | tr '\\n' ' '; echo) >> mix.txt && "
                        "sed -n 21,40p '%s/data/ptb-sample/dev.txt' >> mix.txt",
                        CKY_SHARED, CKY_SHARED), 0);
    const char *runs[] = {"--engine cpu --decoder viterbi", "--engine cpu --decoder maxrule",
                          "--engine ref --decoder viterbi", "--engine ref --decoder maxrule"};
    for (int k = 0; k < 4; k++) {
        int st = run_sh(d, "ulimit -v 1500000 && CKY_CACHE=cache '" RUN_CKY "' parse -g '"
                        RUN_GRAMMAR ".gr' %s --max-length 100000 -i mix.txt > out 2>err",
                        runs[k]);
        char *out = run_read(d, "out"), *err = run_read(d, "err");
        if (strstr(err, "AddressSanitizer failed to allocate")) {
            run_cleanup(d);
            cr_skip_test("AddressSanitizer cannot run under ulimit -v");
        }
        cr_assert_eq(st, 3, "%s: exit status %d; stderr: %s", runs[k], st, err);
        int line = 0, empty = 0;
        for (const char *c = out; *c; c = strchr(c, '\n') + 1) {
            line++;
            if (!strncmp(c, "(())\n", 5)) {
                cr_assert_eq(line, 21, "%s: line %d is (()) too; stderr: %s", runs[k], line,
                             err);
                empty++;
            }
        }
        cr_assert_eq(line, 41, "%s: %d lines out", runs[k], line);
        cr_assert_eq(empty, 1, "%s: the big sentence's line is not (())", runs[k]);
        cr_assert(strstr(err, "mix.txt:21:") && !strstr(err, "mix.txt:20:") &&
                      !strstr(err, "mix.txt:22:"), "%s: %s", runs[k], err);
        free(out);
        free(err);
    }
    run_cleanup(d);
}

/* Max-rule's outside pass numbers a batch's work items as int: a sentence past that
 * (2,343 words) fails alone with a message saying why and the longest that fits, the lines
 * around it parsed (the cpu engine here; gpu_maxrule/item_limit_fails_alone on a GPU). */
Test(cli_robust, maxrule_past_the_item_limit_fails_alone, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -3 '%s/data/ptb-sample/dev.txt' > mix.txt && "
                        "(yes the | head -2343 | tr '\\n' ' '; echo) >> mix.txt && "
                        "sed -n 4,6p '%s/data/ptb-sample/dev.txt' >> mix.txt",
                        CKY_SHARED, CKY_SHARED), 0);
    int st = run_sh(d, CPU "--decoder maxrule --max-length 100000 -i mix.txt > out 2>err");
    char *out = run_read(d, "out"), *err = run_read(d, "err");
    cr_assert_eq(st, 3, "exit status %d; stderr: %s", st, err);
    int line = 0;
    for (const char *c = out; *c; c = strchr(c, '\n') + 1) {
        line++;
        cr_assert_eq(!strncmp(c, "(())\n", 5), line == 4, "line %d; stderr: %s", line, err);
    }
    cr_assert_eq(line, 7, "%d lines out", line);
    cr_assert(strstr(err, "mix.txt:4:") && strstr(err, "at most 2342 words"), "%s", err);
    free(out);
    free(err);
    run_cleanup(d);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Start `ENV cky parse` on the cpu engine in folder d with pipes for stdin and stdout, its
 * stderr into d/err, SIGINT and SIGTERM ignored in it when `ignore` (as `nohup` would). */
static pid_t start_coprocess_with(const char *d, const char *env, const char *extra,
                                  int ignore, int *to, int *from)
{
    int in[2], out[2];
    cr_assert_eq(pipe(in), 0);
    cr_assert_eq(pipe(out), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        if (ignore) {
            signal(SIGINT, SIG_IGN);
            signal(SIGTERM, SIG_IGN);
        }
        if (chdir(d) == 0)
            execl("/bin/sh", "sh", "-c", "exec env $0 " CPU "$1 2>err", env, extra,
                  (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    *to = in[1];
    *from = out[0];
    return pid;
}

static pid_t start_coprocess(const char *d, const char *extra, int *to, int *from)
{
    return start_coprocess_with(d, "", extra, 0, to, from);
}

/* Wait until `sh -c TEST` succeeds in folder d (a file appears, grows): no fixed delay, so
 * that a busy machine only makes it slower (the test's timeout bounds it). */
static void wait_until(const char *d, const char *test)
{
    while (run_sh(d, "%s", test) != 0)
        usleep(20 * 1000);
}

/* Read one line from fd within `seconds`; returns the time it took, or -1. */
static double read_line(int fd, char *buf, size_t size, double seconds)
{
    double t0 = now();
    size_t n = 0;
    while (n + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)((t0 + seconds - now()) * 1000);
        if (left <= 0 || poll(&p, 1, left) <= 0 || read(fd, buf + n, 1) != 1)
            return -1;
        if (buf[n++] == '\n')
            break;
    }
    buf[n] = '\0';
    return now() - t0;
}

Test(cli_robust, coprocess_gets_each_answer_at_once)
{
    char d[64];
    run_setup(d);
    int to, from;
    pid_t pid = start_coprocess(d, "", &to, &from);
    const char line[] = "The dog barks .\n";
    double t0 = now();
    cr_assert_eq(write(to, line, sizeof line - 1), (ssize_t)sizeof line - 1);
    char buf[4096];
    /* the answer must come while stdin stays open; the wait is long for a busy machine */
    double took = read_line(from, buf, sizeof buf, 120.0);
    cr_assert(took >= 0, "no answer within 120 s with stdin open");
    cr_assert(!strncmp(buf, "( (S ", 5), "%s", buf);
    cr_log_info("coprocess: first answer %.3f s after the line (cky started with it)",
                now() - t0);
    /* a second line, ending in CR LF, after the first answer */
    cr_assert_eq(write(to, "a b\r\n", 5), 5);
    cr_assert(read_line(from, buf, sizeof buf, 120.0) >= 0, "no second answer");
    cr_assert(!strncmp(buf, "( (NP ", 6), "%s", buf);
    close(to);
    cr_assert(read_line(from, buf, sizeof buf, 120.0) < 0, "more output than lines");
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    close(from);
    run_cleanup(d);
}

/* SIGTERM: every answered line is out, the exit status says so, and an -o target is left as
 * it was (with no temporary file beside it). No fixed delays: each step waits for what the
 * one before it did (an answer, the temporary file holding it). */
Test(cli_robust, signal_flushes_and_keeps_output_file)
{
    char d[64];
    run_setup(d);
    int to, from;
    pid_t pid = start_coprocess(d, "", &to, &from);
    cr_assert_eq(write(to, "a b\nc d\n", 8), 8);
    char buf[256];
    cr_assert(read_line(from, buf, sizeof buf, 600) >= 0 &&
              read_line(from, buf, sizeof buf, 600) >= 0, "answers missing");
    kill(pid, SIGTERM);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM, "status %d", st);
    close(to);
    close(from);

    cr_assert_eq(run_sh(d, "echo keep > f"), 0);
    pid = start_coprocess(d, "-o f", &to, &from);
    cr_assert_eq(write(to, "a b\n", 4), 4);
    /* its tree is in the temporary file beside f: the parse is under way */
    wait_until(d, "test -s \"$(ls -A | grep '^\\.f\\.tmp-')\"");
    kill(pid, SIGINT);
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGINT, "status %d", st);
    char *f = run_read(d, "f"), *err = run_read(d, "err");
    cr_assert_str_eq(f, "keep\n");
    cr_assert(strstr(err, "cky parse: interrupted: f left as it was\n"), "%s", err);
    free(f);
    free(err);
    cr_assert_eq(run_sh(d, "test $(ls -A | wc -l) -eq 4"), 0, "a temporary file is left");
    close(to);
    close(from);
    run_cleanup(d);
}

/* Each message names the file and the reason. */
Test(cli_robust, messages_name_file_and_reason)
{
    char d[64];
    run_setup(d);
    const char *cases[][3] = {
        {"-g . -i in.txt", "2", "is a directory"},
        {"-g /dev/null -i in.txt", "2", "not a regular file"},
        {"-i in.txt -o /tmp", "1", "/tmp: cannot write: Is a directory"},
        {"-i in.txt -o /proc/x", "1", "/proc/x: cannot write"},
        {"-i in.txt -o /dev/full", "1", "/dev/full: write error: No space left on device"},
        {"-i in.txt --device 5", "2", "--device does not apply to the cpu engine"},
        /* issue 41 item 8 */
        {"-g /nonexistent/x.gr -i in.txt", "1", "cky parse: /nonexistent/x.gr: no such file\n"},
        {"-i in.txt -i in.txt", "2", "-i given twice"},
        {"-i in.txt -o a -o b", "2", "-o given twice"},
        {"-i in.txt --backtrace berkeley --decoder maxrule", "2",
         "--backtrace chooses among Viterbi derivations: it does not apply to --decoder "
         "maxrule"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int st = run_sh(d, "CKY_CACHE=cache '%s' parse %s --engine cpu %s > /dev/null 2>err",
                        RUN_CKY, strncmp(cases[k][0], "-g", 2) ? "-g " RUN_GRAMMAR : "",
                        cases[k][0]);
        char *err = run_read(d, "err");
        cr_expect_eq(st, atoi(cases[k][1]), "%s: status %d: %s", cases[k][0], st, err);
        cr_expect(strstr(err, cases[k][2]), "%s: want '%s' in: %s", cases[k][0], cases[k][2],
                  err);
        free(err);
    }
    run_cleanup(d);
}

/* CR-only line ends make lines; NUL bytes and invalid UTF-8 are warned about. */
Test(cli_robust, line_ends_and_bad_bytes)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "printf 'a b\\rc d\\r\\ne\\0f \\377g\\n' | " CPU "> out 2>err"), 0);
    char *out = run_read(d, "out"), *err = run_read(d, "err");
    cr_assert_eq(run_sh(d, "test $(wc -l < out) -eq 3"), 0, "%s", out);
    cr_assert(strstr(err, "stdin:3: byte 2 is a NUL byte"), "%s", err);
    free(out);
    free(err);
    run_cleanup(d);
}

/* cky eval given --score output says so once instead of failing on every line. */
Test(cli_robust, eval_of_scored_output)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, CPU "--score -i in.txt > s && " CPU "-i in.txt > t"), 0);
    cr_assert_eq(run_sh(d, "'%s' eval t s > out 2> err", RUN_CKY), 1);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "cut -f2"), "%s", err);
    cr_assert(!strchr(strchr(err, '\n') + 1, '\n'), "more than one message: %s", err);
    free(err);
    run_cleanup(d);
}

/* Every command that loads a grammar names a directory given as -g as a directory. */
Test(cli_robust, every_command_names_a_directory_grammar)
{
    char d[64];
    run_setup(d);
    const char *cmds[] = {"parse -i in.txt", "lexicon -i in.txt", "compile", "bench -i in.txt"};
    for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
        int st = run_sh(d, "'%s' %s -g . > /dev/null 2> err", RUN_CKY, cmds[k]);
        char *err = run_read(d, "err");
        cr_expect(st == 2 && strstr(err, "-g .: is a directory"), "%s: status %d: %s", cmds[k],
                  st, err);
        free(err);
    }
    run_cleanup(d);
}

/* -o as a shell's > (issue 41 item 6). */
#define REF "CKY_CACHE=off '" RUN_CKY "' parse -g '" RUN_GRAMMAR "' --engine ref -i in.txt "
/* A command prefix that runs as user nobody where the tests run as root (who may write any
 * file), else nothing; NULL (skip) where that cannot be done. */
static const char *as_user(void)
{
    if (geteuid() != 0)
        return "";
    if (system("setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null") != 0)
        return NULL;
    return "setpriv --reuid=65534 --regid=65534 --clear-groups env ";
}

/* Refused where > would fail: an existing file the user may not write, left as it was. */
Test(cli_robust, output_refused_where_a_shell_would_fail)
{
    char d[64];
    const char *as = as_user();
    if (!as)
        cr_skip_test("running as root without setpriv(1): no way to test as another user");
    run_setup(d);
    cr_assert_eq(run_sh(d, "chmod 777 . && echo keep > locked && chmod 444 locked"), 0);
    cr_assert_eq(run_sh(d, "! %ssh -c 'echo x > locked' 2>/dev/null", as), 0,
                 "a shell's > could write it");
    cr_assert_eq(run_sh(d, "%s" REF "-o locked 2>err", as), 1);
    char *f = run_read(d, "locked"), *err = run_read(d, "err");
    cr_assert_str_eq(f, "keep\n");
    cr_assert(strstr(err, "locked: cannot write: Permission denied"), "%s", err);
    free(f);
    free(err);
    cr_assert_eq(run_sh(d, "test -z \"$(ls -A | grep tmp-)\""), 0, "a temporary file is left");
    run_cleanup(d);
}

/* A file with other hard links, or another user's that we may write, is written in place
 * (its inode, links and owner kept, as by >); a symbolic link that names no file yet makes
 * it, and stays a link. */
Test(cli_robust, output_keeps_links_and_owner)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, REF "> plain"), 0);
    cr_assert_eq(run_sh(d, "echo old > f && ln f g && " REF "-o f && cmp -s g plain && "
                        "test $(stat -c %%h f) = 2"), 0, "the hard link g lost the output");
    cr_assert_eq(run_sh(d, "ln -s new.txt dangling && " REF "-o dangling && test -L dangling "
                        "&& cmp -s new.txt plain"), 0, "the dangling link was replaced");
    const char *as = as_user();
    if (as && *as) { /* root's file, writable by all, written by nobody: still root's */
        cr_assert_eq(run_sh(d, "chmod 777 . && echo x > theirs && chmod 666 theirs && "
                            "%s" REF "-o theirs && cmp -s theirs plain && "
                            "test $(stat -c %%u theirs) = 0", as), 0,
                     "another user's file changed hands");
    }
    run_cleanup(d);
}

/* The temporary file of a run killed with SIGKILL is removed by the next run for the same
 * target; another running process's is not. */
Test(cli_robust, output_removes_a_killed_runs_temporary)
{
    char d[64];
    run_setup(d);
    int to, from;
    pid_t pid = start_coprocess(d, "-o f", &to, &from);
    /* the temporary file appears once the grammar and kernels are loaded */
    wait_until(d, "ls -A | grep -q '^\\.f\\.tmp-'");
    kill(pid, SIGKILL);
    cr_assert_eq(waitpid(pid, NULL, 0), pid);
    close(to);
    close(from);
    cr_assert_eq(run_sh(d, "ls -A | grep -q '^\\.f\\.tmp-'"), 0, "nothing left to remove");
    cr_assert_eq(run_sh(d, "touch -d '2 days ago' .f.tmp-Ab12Cd && "
                        "sh -c 'touch .f.tmp-$$-'$(uname -n)'~alive1 && " REF "-o f'"), 0);
    cr_assert_eq(run_sh(d, "ls -A | grep '^\\.f\\.tmp-' > left; grep -q '~alive1$' left && "
                        "test $(wc -l < left) = 1"), 0, "left: %s", run_read(d, "left"));
    run_cleanup(d);
}

/* Signals as Unix programs keep them (issue 41 item 7). SIGINT and SIGTERM ignored when cky
 * starts (nohup, `cky parse &` in a script) stay ignored: the run goes on and ends with 0. */
Test(cli_robust, ignored_signals_stay_ignored)
{
    char d[64];
    run_setup(d);
    int to, from;
    pid_t pid = start_coprocess_with(d, "", "", 1, &to, &from);
    char buf[4096];
    cr_assert_eq(write(to, "a b\n", 4), 4);
    cr_assert(read_line(from, buf, sizeof buf, 600) >= 0, "no first answer");
    kill(pid, SIGINT); /* (the reader waits for the next line: a caught one would stop it) */
    kill(pid, SIGTERM);
    cr_assert_eq(write(to, "c d\n", 4), 4);
    cr_assert(read_line(from, buf, sizeof buf, 600) >= 0, "stopped by an ignored signal");
    close(to);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    close(from);
    run_cleanup(d);
}

/* A signal while the kernels compile ends the run at once, with 128+N and nothing written:
 * it does not wait for the compiler (here one that runs as long as cky does: a cky that
 * waited for it would hang until the test's timeout). */
Test(cli_robust, signal_during_compile_stops_at_once, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "printf '#!/bin/sh\\necho $$ >> cc.pids\\nwhile kill -0 $PPID; do "
                        "sleep 0.1; done\\n' > slowcc && chmod +x slowcc"), 0);
    int to, from;
    pid_t pid = start_coprocess_with(d, "CC=./slowcc CKY_CACHE=fresh", "-o out.txt", 0, &to,
                                     &from);
    wait_until(d, "test -s cc.pids"); /* the compiler runs */
    kill(pid, SIGINT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGINT, "status %d", st);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "cky parse: interrupted: out.txt not written\n"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, "test -z \"$(ls -A | grep out.txt)\""), 0, "out.txt written");
    close(to);
    close(from);
    run_cleanup(d);
}

/* The reader of the trees gone (`cky parse | head`): the run ends quietly, with the status of
 * a filter killed by SIGPIPE (128 + 13), no "write error". */
Test(cli_robust, closed_pipe_ends_quietly)
{
    char d[64];
    run_setup(d);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    close(p[0]); /* every write to p[1] fails with EPIPE */
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        if (chdir(d) == 0)
            execl("/bin/sh", "sh", "-c", "exec env CKY_PROGRESS_AFTER=600 " CPU "--prune none -i in.txt 2>err",
                  (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    char *err = run_read(d, "err");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGPIPE, "status %d: %s", st, err);
    cr_assert_str_eq(err, "");
    free(err);
    run_cleanup(d);
}

/* A text grammar's probability above 1 is refused, naming the file and the line (issue 41
 * item 8: 1e300 was taken, its log 690 in every score). */
Test(cli_robust, text_grammar_probability_above_one)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "for x in lexicon words; do ln -s '%s'.$x.gz g.$x.gz; done && "
                        "gzip -dc '%s.grammar.gz' | sed '3s/[^ ]*$/1e300/' > g.grammar",
                        RUN_GRAMMAR, RUN_GRAMMAR), 0);
    cr_assert_eq(run_sh(d, "echo a b | CKY_CACHE=off '%s' parse -g g --engine ref > /dev/null "
                        "2> err", RUN_CKY), 1);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "g.grammar:3: probability 1e300 is above 1"), "%s", err);
    free(err);
    run_cleanup(d);
}

/* cky bench without a GPU says that --engine cpu measures the cpu engine. */
Test(cli_robust, bench_without_gpu_names_the_cpu_engine)
{
    char d[64];
    run_setup(d);
    int st = run_sh(d, "CKY_CACHE=cache '%s' bench -g '%s' -i in.txt --repeat 1 > /dev/null "
                    "2> err", RUN_CKY, RUN_GRAMMAR);
    if (st == 0) {
        run_cleanup(d);
        cr_skip_test("a GPU is here: cky bench ran on it");
    }
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "--engine cpu measures the cpu engine"), "%s", err);
    free(err);
    run_cleanup(d);
}
