/* cky eval: score parses against gold trees exactly as `evalb -p COLLINS.prm GOLD TEST`
 * (corpus_tools/evalb.h): the summary by default, EVALB's whole output with --sentences;
 * EVALB's messages on stderr and its exit status. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/evalb.h"
#include "../util/io.h"
#include "cli.h"

static const cli_use uses[] = {{CLI_CUTOFF, NULL}, {CLI_ERRORS, NULL}, {CLI_SENTENCES, NULL},
                               {CLI_VERBOSE, NULL}, {CLI_HELP, NULL}, {CLI_END, NULL}};

static void eval_usage(FILE *f)
{
    fputs("usage: cky eval [OPTIONS] GOLD TEST\n"
          "\n"
          "Score the trees of TEST against those of GOLD exactly as EVALB does with\n"
          "COLLINS.prm (evalb -p COLLINS.prm [-c N] [-e N] GOLD TEST): same numbers, same\n"
          "messages on stderr, same exit status. Line k of TEST is scored against line k of\n"
          "GOLD (one tree per line, as the Berkeley parser and cky parse write them). A\n"
          "multi-line .mrg file (some line leaves brackets open) is first converted to one\n"
          "tree per line, so its k-th tree counts as line k. Files may be gzipped; '-' is\n"
          "stdin.\n"
          "\n"
          "options:\n",
          f);
    cli_options_help(f, uses);
    fputs(
          "\n"
          "exit status: 0 scored; 1 stopped by the error limit or a file could not be read;\n"
          "2 usage error.\n",
          f);
}

/* 1 (after the error) if the first non-empty line of `path` starts with a number or -inf and
 * a tab before a bracket: the output of cky parse --score, which EVALB cannot read. */
static int scored_trees(const char *path)
{
    io_lines *in;
    if (!strcmp(path, "-") || io_lines_open(path, &in))
        return 0; /* stdin cannot be read twice; an unreadable file is reported by evalb */
    char *line;
    size_t len;
    while (!io_lines_next(in, &line, &len) && line && len == 0)
        ;
    int scored = 0;
    if (line) {
        char *end;
        strtod(line, &end);
        scored = end != line && end[0] == '\t' && end[1] == '(';
    }
    if (scored)
        cli_error("eval", "%s:%ld: a score and a tab before the tree (the output of cky parse "
                  "--score): give the trees alone (cut -f2 %s)", path, io_lines_number(in), path);
    io_lines_close(in);
    return scored;
}

int cli_eval(int argc, char **argv)
{
    evalb_params p = evalb_params_default();
    cli_args a;
    int rc = cli_options_read("eval", uses, 1, argc, argv, &a);
    if (rc)
        return rc;
    if (a.given[CLI_HELP]) {
        cli_args_free(&a);
        eval_usage(stdout);
        return 0;
    }
    p.sentences = a.given[CLI_SENTENCES] || a.given[CLI_VERBOSE];
    if (a.given[CLI_CUTOFF])
        p.cutoff_len = a.num[CLI_CUTOFF];
    if (a.given[CLI_ERRORS])
        p.max_error = a.num[CLI_ERRORS];
    int nfiles = a.nargs;
    const char *files[2] = {nfiles > 0 ? a.args[0] : NULL, nfiles > 1 ? a.args[1] : NULL};
    cli_args_free(&a);
    if (nfiles > 2)
        return cli_usage_error("eval", "too many files: give GOLD and TEST");
    if (nfiles != 2)
        return cli_usage_error("eval", "needs GOLD and TEST files");
    if (scored_trees(files[0]) || scored_trees(files[1]))
        return 1;
    int status = 1;
    cky_status st = evalb_score_files(files[0], files[1], &p, stdout, stderr, &status, NULL);
    if (st != CKY_OK)
        return cli_error("eval", "%s", cky_last_error());
    if (fflush(stdout) != 0)
        return cli_error("eval", "cannot write the output");
    return status;
}
