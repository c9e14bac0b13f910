/* cli: the `cky` command's subcommands. Each takes the arguments after its name (argv[0] is
 * the subcommand name), prints results to stdout and diagnostics to stderr, and returns the
 * process exit status (0 ok, 1 failure, 2 usage error). */
#ifndef CKY_CLI_H
#define CKY_CLI_H

#include <stdio.h>

#include "../parser/parser.h"
#include "options.h"
#include "pipeline.h"

int cli_parse(int argc, char **argv);   /* cky parse   (cli/parse.c) */
int cli_eval(int argc, char **argv);    /* cky eval    (cli/eval.c) */
int cli_lexicon(int argc, char **argv); /* cky lexicon (cli/lexicon.c) */
int cli_compile(int argc, char **argv); /* cky compile (cli/compile.c) */
int cli_bench(int argc, char **argv);   /* cky bench   (cli/bench.c) */
int cli_merge(int argc, char **argv);   /* cky merge   (cli/merge.c) */
int cli_serve(int argc, char **argv);   /* cky serve   (cli/serve.c) */
int cli_draw(int argc, char **argv);    /* cky draw    (cli/draw.c) */
int cli_berkeley(int argc, char **argv); /* cky berkeley (cli/berkeley.c) */

/* The version of cky (python/cky's __version__ is the same) and `cky --version`, which
 * prints it, the commit, the CUDA runtime, driver and NVRTC versions and the GPUs
 * (cli/version.c). */
#define CKY_VERSION "0.1.0"
int cli_version(void);

/* `cky parse --help` (cli/parse_help.c), and the options cky parse takes (cli/options.h). */
void cli_parse_usage(FILE *f);
extern const cli_use cli_parse_options[];

/* What a run of cky parse took (cli_parse_timed), for cky bench's end-to-end figure. */
typedef struct cli_parse_timing {
    double startup_seconds; /* from the call to the parser ready and the outputs open */
    double total_seconds;   /* from the call to the outputs committed */
    pipeline_stats stats;   /* what the pipeline did */
} cli_parse_timing;

/* cky parse, as cli_parse, timing itself into *t (zeroed first; the times are set only when
 * the run got as far). The same code path: cli_parse is cli_parse_timed(argc, argv, NULL). */
int cli_parse_timed(int argc, char **argv, cli_parse_timing *t);

/* Print "cky SUBCOMMAND: MESSAGE" to stderr; returns 1 for convenience. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* *out = the decimal integer `s` if it is all digits (optionally signed) and in lo..hi:
 * returns 1; else 0 and *out unchanged. */
int cli_int(const char *s, int lo, int hi, int *out);

/* The developers' channel: the tuning knobs of CKY_TUNE ("KEY=VALUE,...": block_tiles 1 to
 * 8, chunk 0 to 2^20, part_mb 1 to 65536, ptxas one ptxas option; docs/development.md) into
 * t; they change speed, never results. Returns 0, or 1 after an error on stderr naming the
 * key and its value (or a variable of the old channel, CKY_GPU_*, that is set). */
int cli_tune(const char *cmd, parser_tune *t);

/* Print a usage error and "try 'cky CMD --help'"; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
