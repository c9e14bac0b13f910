/* parse_options: the command line of cky parse, read and checked (cli/parse.c runs it). */
#ifndef CKY_CLI_PARSE_OPTIONS_H
#define CKY_CLI_PARSE_OPTIONS_H

#include "../parser/parser.h"
#include "options.h"

typedef struct parse_options {
    const char *grammar, *input, *output, *gold_out, *masks;
    const char *render;   /* --render DIR: a picture per sentence there (parse.c) */
    const char **treebanks;
    int ntreebanks;
    int score, eval, tokenize;
    /* the Berkeley parser's scores beside each tree, in its order (parse.c) */
    int tree_likelihood, sentence_likelihood, confidence, model_score;
    int quiet;            /* --quiet: no progress lines */
    int engine_set, device_set, workspace_set, threads_set; /* given on the command line */
    int devices_set, engines_set;
    int decoder_set, backtrace_set, prune_set;
    int shard_k, shard_n; /* --shard K/N (shard_n 0: every line) */
    int gold_pos;         /* --gold-pos: word<TAB>tag lines, a sentence per block */
    int pipeline_stats;   /* test hook: what the pipeline did, on stderr */
    parser_options popt;
    cli_args args; /* as read (the treebanks point into it) */
} parse_options;

/* Read the options of `cky parse ARGS` (argv[0] is "parse") into *o (release them with
 * cli_args_free(&o->args)), choose the engine when none is given, and check them: the
 * options the engine does not use, the files (no output may be an input or a grammar file),
 * the --render folder (made if it is not there: one level).
 * --help prints the help and exits. Returns 0, or the exit status after a message on stderr. */
int parse_options_read(int argc, char **argv, parse_options *o);

#endif
