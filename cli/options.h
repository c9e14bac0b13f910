/* options: the command line's one table of options (name, value, range, default, help) that
 * every subcommand reads. A command lists the options it takes (cli_use: an option of the
 * table, and the command's own default where it differs), reads argv with
 * cli_options_read and prints their help lines with cli_options_help: the same spelling,
 * range, refusal and help text in every command. Engine, decoder and back-trace names are
 * the library's (parser/parser.h). */
#ifndef CKY_CLI_OPTIONS_H
#define CKY_CLI_OPTIONS_H

#include <stdio.h>

#include "../parser/parser.h"

typedef enum cli_opt {
    /* the parser's: what a grammar is parsed with */
    CLI_GRAMMAR, CLI_INPUT, CLI_OUTPUT, CLI_ENGINE, CLI_DECODER, CLI_BACKTRACE, CLI_ARITH,
    CLI_DEVICE,
    CLI_DEVICES, CLI_ENGINES, CLI_THREADS, CLI_WORKSPACE, CLI_MAX_LENGTH,
    /* pruning */
    CLI_PRUNE, CLI_PRUNE_FALLBACK, CLI_MASKS,
    CLI_GOLD_POS, /* cky parse --gold-pos, the jar's -useGoldPOS */
    /* cky parse */
    CLI_TOKENIZE, CLI_SCORE, CLI_SHARD, CLI_TREEBANK, CLI_GOLD_OUT, CLI_EVAL,
    CLI_RENDER, /* cky parse --render DIR, the jar's -render */
    /* cky parse: the Berkeley parser's scores and trees (its -confidence, -modelScore,
     * -sentence_likelihood, -tree_likelihood, -binarize, -variational, -substates,
     * -scores) */
    CLI_CONFIDENCE, CLI_MODEL_SCORE, CLI_SENTENCE_LIKELIHOOD, CLI_TREE_LIKELIHOOD,
    CLI_BINARIZE, CLI_VARIATIONAL, CLI_SUBSTATES, CLI_SCORES,
    /* cky bench */
    CLI_REPEAT, CLI_BUCKET_WIDTH,
    /* k-best lists (cky parse) */
    CLI_KBEST,
    /* cky compile */
    CLI_SHAPE, CLI_LIVE_LIMIT, CLI_ARCH, CLI_NO_GPU_CODE, CLI_HOST_BUILD, CLI_DUMP_CU,
    CLI_SEMIRING, CLI_ROLE, CLI_CACHE, CLI_FAMILY, CLI_REPORT, CLI_WARM,
    /* cky serve */
    CLI_LISTEN, CLI_PORT, CLI_TOKEN_FILE, CLI_BATCH, CLI_BATCH_WAIT, CLI_QUEUE,
    CLI_MAX_SENTENCES, CLI_MAX_REQUEST_BYTES, CLI_MAX_SENTENCE_BYTES, CLI_TIMEOUT,
    CLI_MAX_CONNECTIONS, CLI_IDLE_TIMEOUT, CLI_HTTP_THREADS, CLI_GRACE,
    /* cky lexicon */
    CLI_PRUNED,
    /* cky eval */
    CLI_CUTOFF, CLI_ERRORS, CLI_SENTENCES, CLI_VERBOSE,
    /* several */
    CLI_JSON, CLI_QUIET, CLI_HELP,
    /* test hooks, never in the help */
    CLI_FAIL_ENGINE, CLI_PIPELINE_STATS,
    CLI_NOPT,
    CLI_END = -1
} cli_opt;

/* One option a command takes; def: its default there for the help (NULL: the table's). */
typedef struct cli_use {
    cli_opt id;
    const char *def;
} cli_use;

/* What cli_options_read found. num: an integer option's value, a choice's index (engine:
 * parser_engine, decoder: parser_decoder, back-trace: viterbi_mode, semiring, role), a
 * flag's 1; text: a value as given; a repeatable option's values in items[id][0 .. n). */
typedef struct cli_args {
    int given[CLI_NOPT];
    int num[CLI_NOPT];
    const char *text[CLI_NOPT];
    const char **items[CLI_NOPT];
    int nitems[CLI_NOPT];
    char **args; /* the operands after the options (only where the command takes them) */
    int nargs;
} cli_args;

/* Read the options of `cky CMD ARGS` (argv[0] is the subcommand) that `uses` lists (ending
 * in CLI_END) into *a; operands are taken when `operands` is set, else refused. An unknown
 * option, a missing value, a number out of its range, an unknown name, an option given
 * twice that takes one value: a usage error naming it (returns 2); 0 otherwise. --help is
 * given[CLI_HELP]: the command prints its help. Release *a with cli_args_free. */
int cli_options_read(const char *cmd, const cli_use *uses, int operands, int argc, char **argv,
                     cli_args *a);

void cli_args_free(cli_args *a);

/* The help lines of the options `uses` lists, as the table has them ("  -g, --grammar
 * GRAMMAR   a Berkeley .gr file ..."), wrapped. */
void cli_options_help(FILE *f, const cli_use *uses);

/* `text` from column `col` on (the caller printed up to it), its words wrapped at column
 * `width` onto lines indented by `indent`, then a newline: the layout of the help lines. */
void cli_options_wrap(FILE *f, const char *text, int col, int indent, int width);

/* The parser options given in *a (engine, decoder, back-trace, device(s), engines, threads,
 * workspace, max length) into *o, over its present values. Returns 0 or the exit status of
 * a usage error (--device with --devices, --backtrace with --decoder maxrule). */
int cli_args_parser(const char *cmd, const cli_args *a, parser_options *o);

#endif
