/* parse_options: the command line of cky parse (parse_options.h). */
#include "parse_options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "guard.h"
#include "multi.h"

/* *slot = value for option `opt`, given once: a second one is a usage error (it would
 * silently win). Returns 0 or the exit status. */
static int set_once(const char **slot, const char *opt, const char *value)
{
    if (*slot)
        return cli_usage_error("parse", "%s given twice ('%s' and '%s'): give it once", opt,
                               *slot, value);
    *slot = value;
    return 0;
}

static int read_command_line(int argc, char **argv, parse_options *o)
{
    enum { OPT_SCORE = 256, OPT_ENGINE, OPT_BACKTRACE, OPT_MAXLEN, OPT_THREADS, OPT_TREEBANK,
           OPT_GOLD, OPT_EVAL, OPT_DEVICE, OPT_WORKSPACE, OPT_TOKENIZE, OPT_DECODER,
           OPT_DEVICES, OPT_ENGINES, OPT_SHARD, OPT_FAIL, OPT_STATS };
    static const struct option longs[] = {
        {"grammar", required_argument, 0, 'g'},   {"input", required_argument, 0, 'i'},
        {"output", required_argument, 0, 'o'},    {"score", no_argument, 0, OPT_SCORE},
        {"engine", required_argument, 0, OPT_ENGINE},
        {"decoder", required_argument, 0, OPT_DECODER},
        {"device", required_argument, 0, OPT_DEVICE},
        {"workspace", required_argument, 0, OPT_WORKSPACE},
        {"backtrace", required_argument, 0, OPT_BACKTRACE},
        {"max-length", required_argument, 0, OPT_MAXLEN},
        {"threads", required_argument, 0, OPT_THREADS},
        {"treebank", required_argument, 0, OPT_TREEBANK},
        {"gold-out", required_argument, 0, OPT_GOLD},
        {"eval", no_argument, 0, OPT_EVAL},       {"help", no_argument, 0, 'h'},
        {"tokenize", no_argument, 0, OPT_TOKENIZE},
        {"devices", required_argument, 0, OPT_DEVICES},
        {"engines", required_argument, 0, OPT_ENGINES},
        {"shard", required_argument, 0, OPT_SHARD},
        {"fail-engine", required_argument, 0, OPT_FAIL}, /* test hook, not in the help */
        {"pipeline-stats", no_argument, 0, OPT_STATS},   /* test hook, not in the help */
        {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->popt = parser_default_options();
    o->popt.engine = (parser_engine)-1; /* chosen after the options: gpu if there is one */
    o->treebanks = calloc((size_t)argc, sizeof *o->treebanks);
    if (!o->treebanks)
        return cli_error("parse", "out of memory");
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":g:i:o:hq", longs, NULL)) != -1) {
        switch (c) {
        case 'g':
            if ((rc = set_once(&o->grammar, "-g", optarg)))
                return rc;
            break;
        case 'i':
            if ((rc = set_once(&o->input, "-i", optarg)))
                return rc;
            break;
        case 'o':
            if ((rc = set_once(&o->output, "-o", optarg)))
                return rc;
            break;
        case OPT_SCORE: o->score = 1; break;
        case OPT_EVAL: o->eval = 1; break;
        case OPT_TOKENIZE: o->tokenize = 1; break;
        case OPT_GOLD:
            if ((rc = set_once(&o->gold_out, "--gold-out", optarg)))
                return rc;
            break;
        case OPT_TREEBANK: o->treebanks[o->ntreebanks++] = optarg; break;
        case OPT_ENGINE:
            o->engine_set = 1;
            if (!parser_engine_find(optarg, &o->popt.engine))
                return cli_usage_error("parse", "unknown engine '%s' (known: %s)", optarg,
                                       parser_engine_names());
            break;
        case OPT_DECODER:
            o->decoder_set = 1;
            if (!parser_decoder_find(optarg, &o->popt.decoder))
                return cli_usage_error("parse", "unknown decoder '%s' (known: %s)", optarg,
                                       parser_decoder_names());
            break;
        case OPT_DEVICE:
            o->device_set = 1;
            if (!cli_int(optarg, 0, 1024, &o->popt.device))
                return cli_usage_error("parse", "--device takes a device number (0, 1, ...)");
            break;
        case OPT_DEVICES:
            o->devices_set = 1;
            if ((rc = multi_read_devices("parse", optarg, &o->popt)))
                return rc;
            break;
        case OPT_ENGINES:
            o->engines_set = 1;
            if (!cli_int(optarg, 1, PARSER_MAX_ENGINES, &o->popt.engines))
                return cli_usage_error("parse", "--engines takes a number from 1 to %d",
                                       PARSER_MAX_ENGINES);
            break;
        case OPT_SHARD:
            if ((rc = multi_read_shard("parse", optarg, &o->shard_k, &o->shard_n)))
                return rc;
            break;
        case OPT_STATS: o->pipeline_stats = 1; break;
        case 'q': o->quiet = 1; break;
        case OPT_FAIL:
            if ((rc = multi_read_fail("parse", optarg, &o->popt)))
                return rc;
            break;
        case OPT_WORKSPACE:
            o->workspace_set = 1;
            if (!cli_int(optarg, 1, 1 << 26, &o->popt.workspace))
                return cli_usage_error("parse", "--workspace takes a number from 1 to %d",
                                       1 << 26);
            break;
        case OPT_BACKTRACE:
            o->backtrace_set = 1;
            if (!strcmp(optarg, "exact"))
                o->popt.backtrace = VITERBI_EXACT;
            else if (!strcmp(optarg, "berkeley"))
                o->popt.backtrace = VITERBI_BERKELEY;
            else
                return cli_usage_error("parse", "--backtrace takes exact or berkeley, not '%s'",
                                       optarg);
            break;
        case OPT_MAXLEN:
            if (!cli_int(optarg, 1, 100000, &o->popt.max_length))
                return cli_usage_error("parse", "--max-length takes a number from 1 to 100000");
            break;
        case OPT_THREADS:
            o->threads_set = 1;
            if (!cli_int(optarg, 1, 1024, &o->popt.threads))
                return cli_usage_error("parse", "--threads takes a number from 1 to 1024");
            break;
        case 'h': fputs(cli_parse_help, stdout); exit(0);
        case ':': return cli_usage_error("parse", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("parse", "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("parse", "unexpected argument '%s'", argv[optind]);
    if (!o->grammar)
        return cli_usage_error("parse", "no grammar given (-g GRAMMAR)");
    if (o->device_set && o->devices_set)
        return cli_usage_error("parse", "give --device or --devices, not both");
    if (o->ntreebanks && o->input)
        return cli_usage_error("parse", "give either --input or --treebank, not both");
    if (o->ntreebanks && o->tokenize)
        return cli_usage_error("parse", "--tokenize is for raw text, not with --treebank");
    if (!o->ntreebanks && (o->gold_out || o->eval))
        return cli_usage_error("parse", "--gold-out and --eval need --treebank");
    if (o->backtrace_set && o->decoder_set && o->popt.decoder == PARSER_DECODER_MAXRULE)
        return cli_usage_error("parse", "--backtrace chooses among Viterbi derivations: it "
                               "does not apply to --decoder maxrule (use --decoder viterbi)");
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
    const char *outputs[2] = {o->output, o->gold_out};
    if (o->ntreebanks)
        return guard_check_paths("parse", o->grammar, o->treebanks, o->ntreebanks, outputs, 2);
    const char *input = o->input;
    return guard_check_paths("parse", o->grammar, &input, 1, outputs, 2);
}


int parse_options_read(int argc, char **argv, parse_options *o)
{
    int rc = read_command_line(argc, argv, o);
    if (!rc)
        rc = check_engine_options(o);
    if (!rc)
        rc = check_files(o);
    if (rc) {
        free(o->treebanks);
        o->treebanks = NULL;
    }
    return rc;
}
