/* parse_options: the command line of cky parse (parse_options.h). */
#include "parse_options.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "guard.h"
#include "multi.h"
#include "options.h"

static int refuse_two_score_layouts(void)
{
    return cli_usage_error("parse", "--score has a layout of its own: give it or the "
                           "Berkeley parser's scores (--tree-likelihood, "
                           "--sentence-likelihood, --confidence, --model-score), not both");
}

static int read_command_line(int argc, char **argv, parse_options *o)
{
    memset(o, 0, sizeof *o);
    o->popt = parser_default_options();
    cli_args *a = &o->args;
    int rc = cli_options_read("parse", cli_parse_options, 0, argc, argv, a);
    if (rc)
        return rc;
    if (a->given[CLI_HELP]) {
        cli_parse_usage(stdout);
        exit(0);
    }
    o->grammar = a->text[CLI_GRAMMAR];
    o->input = a->text[CLI_INPUT];
    o->output = a->text[CLI_OUTPUT];
    o->gold_out = a->text[CLI_GOLD_OUT];
    o->masks = a->text[CLI_MASKS];
    o->render = a->text[CLI_RENDER];
    o->prune_set = a->given[CLI_PRUNE];
    o->gold_pos = a->given[CLI_GOLD_POS];
    o->treebanks = a->items[CLI_TREEBANK];
    o->ntreebanks = a->nitems[CLI_TREEBANK];
    o->score = a->given[CLI_SCORE];
    o->eval = a->given[CLI_EVAL];
    o->tokenize = a->given[CLI_TOKENIZE];
    o->tree_likelihood = a->given[CLI_TREE_LIKELIHOOD];
    o->sentence_likelihood = a->given[CLI_SENTENCE_LIKELIHOOD];
    o->confidence = a->given[CLI_CONFIDENCE];
    o->model_score = a->given[CLI_MODEL_SCORE];
    o->popt.berkeley.binarize = a->given[CLI_BINARIZE];
    o->popt.berkeley.variational = a->given[CLI_VARIATIONAL];
    o->popt.berkeley.substates = a->given[CLI_SUBSTATES];
    o->popt.berkeley.scores = a->given[CLI_SCORES];
    o->popt.berkeley.tree_scores = o->tree_likelihood || o->confidence;
    o->quiet = a->given[CLI_QUIET];
    o->pipeline_stats = a->given[CLI_PIPELINE_STATS];
    o->engine_set = a->given[CLI_ENGINE];
    o->device_set = a->given[CLI_DEVICE];
    o->devices_set = a->given[CLI_DEVICES];
    o->engines_set = a->given[CLI_ENGINES];
    o->workspace_set = a->given[CLI_WORKSPACE];
    o->threads_set = a->given[CLI_THREADS];
    o->decoder_set = a->given[CLI_DECODER];
    o->backtrace_set = a->given[CLI_BACKTRACE];
    o->popt.engine = (parser_engine)-1; /* chosen after the options: gpu if there is one */
    if ((rc = cli_args_parser("parse", a, &o->popt)))
        return rc;
    if (a->given[CLI_KBEST])
        o->popt.kbest = a->num[CLI_KBEST];
    if (a->given[CLI_SHARD] &&
        (rc = multi_read_shard("parse", a->text[CLI_SHARD], &o->shard_k, &o->shard_n)))
        return rc;
    if (!o->grammar)
        return cli_usage_error("parse", "no grammar given (-g GRAMMAR)");
    if (o->popt.kbest > 1 && o->shard_n)
        return cli_usage_error("parse", "--kbest writes several lines per sentence, which "
                               "`cky merge` cannot put back in order: not with --shard");
    if (o->popt.kbest > 1 && (o->sentence_likelihood || o->model_score))
        return cli_usage_error("parse", "--kbest gives each tree with --score only, not with "
                               "--sentence-likelihood or --model-score");
    if (o->ntreebanks && o->input)
        return cli_usage_error("parse", "give either --input or --treebank, not both");
    if (o->ntreebanks && o->tokenize)
        return cli_usage_error("parse", "--tokenize is for raw text, not with --treebank");
    if (o->score && (o->tree_likelihood || o->sentence_likelihood || o->confidence ||
                     o->model_score))
        return refuse_two_score_layouts();
    if (!o->ntreebanks && (o->gold_out || o->eval))
        return cli_usage_error("parse", "--gold-out and --eval need --treebank");
    if ((int)o->popt.engine == -1) {
        o->popt.engine = parser_default_engine();
        if (o->popt.engine == PARSER_ENGINE_CPU)
            fprintf(stderr, "cky parse: no usable GPU: parsing with the CPU engine\n");
        if (o->popt.engine == PARSER_ENGINE_CPU && o->devices_set)
            o->popt.engines = 0; /* --devices is ignored (a warning follows) */
    }
    if (o->popt.test.fail_engine && o->popt.test.fail_engine > o->popt.engines)
        return cli_usage_error("parse", "--fail-engine %d: there are %d engines (--devices, "
                               "--engines)", o->popt.test.fail_engine, o->popt.engines);
    if (o->popt.engine == PARSER_ENGINE_GPU && cli_tune("parse", &o->popt.tune))
        return 1;
    return 0;
}


/* Options an engine does not use: a usage error when the engine was asked for, a warning
 * when it was chosen for want of a GPU. Returns 0 or the exit status. */
static int check_engine_options(const parse_options *o)
{
    const char *unused = NULL, *engine = parser_engine_name(o->popt.engine);
    if (o->device_set && o->popt.engine != PARSER_ENGINE_GPU)
        unused = "--device";
    else if (o->devices_set && o->popt.engine != PARSER_ENGINE_GPU)
        unused = "--devices";
    else if (o->engines_set && o->popt.engine == PARSER_ENGINE_GPU)
        unused = "--engines (the gpu engine takes --devices)";
    else if (o->workspace_set && o->popt.engine == PARSER_ENGINE_REF)
        unused = "--workspace";
    else if (o->threads_set && o->popt.engine == PARSER_ENGINE_GPU)
        unused = "--threads";
    if (!unused)
        return 0;
    if (o->engine_set)
        return cli_usage_error("parse", "%s does not apply to the %s engine", unused, engine);
    fprintf(stderr, "cky parse: warning: %s is ignored by the %s engine\n", unused, engine);
    return 0;
}

/* The files of the run checked before anything is written (guard_check_paths). */
static int check_files(const parse_options *o)
{
    const char *outputs[3] = {o->output, o->gold_out, o->masks};
    if (o->ntreebanks)
        return guard_check_paths("parse", o->grammar, o->treebanks, o->ntreebanks, outputs, 3);
    const char *input = o->input;
    return guard_check_paths("parse", o->grammar, &input, 1, outputs, 3);
}


/* --gold-pos: the options it cannot go with. Returns 0 or the exit status. */
static int check_gold_pos(const parse_options *o)
{
    const char *with = !o->gold_pos          ? NULL
                       : o->ntreebanks       ? "--treebank"
                       : o->tokenize         ? "--tokenize"
                       : o->args.given[CLI_SHARD] ? "--shard"
                       : o->prune_set && o->popt.prune == PARSER_PRUNE_NONE ? "--prune none"
                       : o->backtrace_set    ? "--backtrace"
                                             : NULL;
    if (with)
        return cli_usage_error("parse", "--gold-pos does not go with %s (gold tags are read "
                               "from WORD<TAB>TAG lines by the pruned cascade)", with);
    return 0;
}

/* --render DIR: made if it is not there (one level, as mkdir does), then it must be a folder
 * cky may write in; checked before the grammar is read, so that no run parses for pictures
 * it cannot write. Returns 0 or the exit status of a usage error. */
static int check_render_dir(const parse_options *o)
{
    const char *dir = o->render;
    struct stat sb;
    if (!dir)
        return 0;
    if (!*dir)
        return cli_usage_error("parse", "--render takes a folder, not ''");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_usage_error("parse", "--render %s: cannot create it: %s", dir,
                               strerror(errno));
    if (stat(dir, &sb) != 0)
        return cli_usage_error("parse", "--render %s: %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return cli_usage_error("parse", "--render %s: not a directory (the pictures go into a "
                               "folder, one file per sentence)", dir);
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        return cli_usage_error("parse", "--render %s: cannot write there: %s", dir,
                               strerror(errno));
    return 0;
}

int parse_options_read(int argc, char **argv, parse_options *o)
{
    int rc = read_command_line(argc, argv, o);
    if (!rc)
        rc = check_engine_options(o);
    if (!rc)
        rc = check_gold_pos(o);
    if (!rc)
        rc = check_files(o);
    if (!rc)
        rc = check_render_dir(o);
    if (rc)
        cli_args_free(&o->args);
    return rc;
}
