/* Progress lines on stderr (issue 41 item 3): a kernel compile, the reading of a grammar and
 * the parse each get a line once they last CKY_PROGRESS_AFTER seconds (0 here, so that the
 * tests do not depend on how long anything takes); --quiet silences them; a terminal gets a
 * line redrawn in place. */
#include "test_cli_run.h"

#define FRESH "CKY_PROGRESS_AFTER=0 CKY_CACHE=fresh "
#define PARSE "'" RUN_CKY "' parse -g '" RUN_GRAMMAR "' --engine cpu -i in.txt "

/* The lines of a cold parse (nothing in the cache), then of a warm one. */
Test(cli_progress, parse_reports_grammar_kernels_and_sentences)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, FRESH PARSE "> out 2> err"), 0);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "cky parse: read the grammar " RUN_GRAMMAR " in "), "%s", err);
    cr_assert(strstr(err, "cky parse: 4 kernels ready in ") &&
              strstr(err, " (4 compiled, 0 from the cache)\n"), "%s", err);
    cr_assert(strstr(err, "cky parse: 5 sentences in ") && strstr(err, " sentences/s\n"),
              "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, FRESH PARSE "> out 2> err"), 0);
    err = run_read(d, "err");
    cr_assert(strstr(err, "cky parse: 4 kernels ready in ") &&
              strstr(err, " (0 compiled, 4 from the cache)\n"), "%s", err);
    cr_assert_null(strchr(err, '\r'), "not a terminal, yet lines redrawn: %s", err);
    free(err);
    run_cleanup(d);
}

/* --quiet (-q): nothing on stderr, from parse, compile and bench. */
Test(cli_progress, quiet_silences_every_command)
{
    char d[64];
    run_setup(d);
    const char *cmds[] = {
        "parse -g '" RUN_GRAMMAR "' --engine cpu -i in.txt --quiet > /dev/null",
        "parse -g '" RUN_GRAMMAR "' --engine cpu -i in.txt -q > /dev/null",
        "compile -g '" RUN_GRAMMAR "' --semiring max-plus --no-gpu-code --host --quiet "
        "> /dev/null",
        "bench -g '" RUN_GRAMMAR "' --engine cpu -i in.txt --repeat 1 --decoder viterbi -q "
        "> /dev/null",
    };
    for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
        cr_assert_eq(run_sh(d, "rm -rf fresh && " FRESH "'%s' %s 2> err", RUN_CKY, cmds[k]), 0,
                     "%s", cmds[k]);
        char *err = run_read(d, "err");
        cr_assert_str_eq(err, "", "%s: %s", cmds[k], err);
        free(err);
    }
    run_cleanup(d);
}

/* cky compile reports its compile too (of one program, host objects: no GPU needed, and
 * cubins take NVRTC's time). */
Test(cli_progress, compile_reports_its_kernels)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, FRESH "'%s' compile -g '%s' --semiring max-plus --no-gpu-code --host "
                        "> out 2> err", RUN_CKY, RUN_GRAMMAR), 0);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "cky compile: 4 kernels ready in ") &&
              strstr(err, " (4 compiled, 0 from the cache)\n"), "%s", err);
    free(err);
    run_cleanup(d);
}

/* On a terminal (script(1) gives the command one) the running line is redrawn in place
 * (CR, erase to the end of the line) and the last line of each stage stays. */
Test(cli_progress, terminal_line_is_redrawn)
{
    char d[64];
    if (system("script -qec true /dev/null > /dev/null 2>&1") != 0)
        cr_skip_test("script(1) is not installed (util-linux)");
    run_setup(d);
    cr_assert_eq(run_sh(d, "script -qec \"" FRESH PARSE "> out\" /dev/null > tty"), 0);
    char *tty = run_read(d, "tty");
    cr_assert(strstr(tty, "\rcky parse: ") && strstr(tty, "\033[K"), "%s", tty);
    cr_assert(strstr(tty, "cky parse: 5 sentences in "), "%s", tty);
    free(tty);
    char *out = run_read(d, "out");
    cr_assert(!strncmp(out, "( (", 3) && !strchr(out, '\r'), "trees: %s", out);
    free(out);
    run_cleanup(d);
}
