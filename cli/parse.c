/* cky parse: sentences (or the words of treebank trees) in, one tree per line out, in order. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../corpus_tools/evalb.h"
#include "../corpus_tools/tokenize.h"
#include "../corpus_tools/tree.h"
#include "../maxrule/maxrule.h"
#include "../parser/parser.h"
#include "../util/io.h"
#include "../util/output.h"
#include "cli.h"
#include "guard.h"
#include "multi.h"

#define BATCH 8192 /* most sentences handed to one engine at once (gpu engine) */

static const char usage_text[] =
    "usage: cky parse -g GRAMMAR [-i FILE] [-o FILE] [OPTIONS]\n"
    "       cky parse -g GRAMMAR --treebank FILE.mrg [--gold-out FILE] [--eval] [OPTIONS]\n"
    "\n"
    "Parse one tokenized sentence per input line into one Penn Treebank tree per output line,\n"
    "in order: exactly one output line per input line (a line ends at LF, CR LF or CR). An\n"
    "empty line, a sentence longer than --max-length or one with no parse gives the Berkeley\n"
    "parser's failure output (()) and a message on stderr naming the input line; so does a\n"
    "sentence that hits an internal error (exit status 3). NUL bytes and invalid UTF-8 are\n"
    "read as U+FFFD, with a warning.\n"
    "\n"
    "Input that is not a regular file (a pipe, a terminal) is answered line by line: each\n"
    "batch holds the lines that have arrived, so cky parse works as a coprocess. SIGINT or\n"
    "SIGTERM stops the run after writing every sentence already parsed.\n"
    "\n"
    "options:\n"
    "  -g, --grammar GRAMMAR   a Berkeley .gr file, or the prefix of a text export\n"
    "                          (PREFIX.grammar[.gz], PREFIX.lexicon[.gz], PREFIX.words[.gz])\n"
    "  -i, --input FILE        sentences, one per line, plain or gzipped (default: stdin)\n"
    "  -o, --output FILE       where the trees go (default: stdout); gzip-compressed if FILE\n"
    "                          ends in .gz. Written to a temporary file beside FILE and renamed\n"
    "                          onto it only when the run succeeds (exit status 0 or 3): a\n"
    "                          failed or interrupted run leaves FILE as it was. FILE may not be\n"
    "                          an input or a grammar file.\n"
    "      --tokenize          the input is raw text, one sentence per line: tokenize it as\n"
    "                          the Penn Treebank is (`` '' quotes, n't 's splits, -LRB-,\n"
    "                          the final period, ...) before parsing\n"
    "      --decoder DECODER   maxrule: the tree that maximizes the product of its rules'\n"
    "                          posteriors, the Berkeley parser's default and ours with a\n"
    "                          native .gr grammar (exact; with a text export, whose unary\n"
    "                          closure is the Viterbi one, approximate: a note on stderr says\n"
    "                          so); viterbi: the best derivation, the default with a text\n"
    "                          export or --backtrace. Every engine runs both.\n"
    "      --score             viterbi: prefix each tree with the root log score of the best\n"
    "                          parse and a tab (-inf when there is no parse); maxrule: with\n"
    "                          log P(sentence), a tab, the tree's max-rule score and a tab\n"
    "      --engine ENGINE     gpu: the generated float32 kernels on the GPU (the default\n"
    "                          where there is one); cpu: the same kernels on CPU threads\n"
    "                          (the default without a GPU; bit-identical charts and trees;\n"
    "                          needs a C compiler, cc or $CC, the first time a grammar is\n"
    "                          used); ref: the exact double-precision reference (Berkeley's\n"
    "                          arithmetic; needs no compiler)\n"
    "      --device N          CUDA device of the gpu engine (default 0; gpu engine only)\n"
    "      --devices LIST|all  several GPUs at once (0,1 or all): one gpu engine per device,\n"
    "                          each on its own thread, fed batches from one queue; the same\n"
    "                          output as one GPU. A device that fails is named on stderr and\n"
    "                          the others parse its sentences (exit status 0). A device named\n"
    "                          twice (0,0) runs two engines, overlapping their host work\n"
    "      --engines N         N cpu (or ref) engines at once, as --devices does for GPUs,\n"
    "                          sharing --threads\n"
    "      --shard K/N         parse only input lines (or trees) K, K+N, K+2N, ... (1 <= K <=\n"
    "                          N); messages name the real input line. N runs, one per shard,\n"
    "                          cover the input; `cky merge` puts their outputs back in order\n"
    "      --workspace N       work items per kernel launch (default: gpu 131072, cpu 512;\n"
    "                          not the ref engine); changes speed and memory, never results\n"
    "      --backtrace MODE    exact: the true argmax with cky's tie-break (default);\n"
    "                          berkeley: the Berkeley parser's own back-trace (first derivation\n"
    "                          within relative 1e-5), to match its trees\n"
    "      --max-length N      longest sentence parsed, in words (default 200)\n"
    "      --threads N         CPU threads (default: one per core): the ref engine's sentences,\n"
    "                          the cpu engine's generated kernels (its gather, unary and\n"
    "                          back-trace steps run on one thread); not the gpu engine\n"
    "      --treebank FILE     parse the words of the trees of a Penn Treebank file (.mrg,\n"
    "                          multi-line or one tree per line, plain or gzipped) instead of\n"
    "                          sentences; may be given several times\n"
    "      --gold-out FILE     with --treebank: write the normalized gold trees, one per line\n"
    "                          (whole or not at all, as -o)\n"
    "      --eval              with --treebank: print the EVALB summary (COLLINS.prm) of the\n"
    "                          parses against the gold trees (on stdout with -o, else stderr)\n"
    "  -h, --help              this help\n"
    "\n"
    "An option the chosen engine does not use is a usage error (a warning when the engine was\n"
    "chosen for want of a GPU). The kernel cache is $CKY_CACHE, else $XDG_CACHE_HOME/cky, else\n"
    "~/.cache/cky; CKY_CACHE=off compiles in memory, as does a cache folder that cannot be\n"
    "written (with a warning). Cached kernels are checked against their digest before use.\n"
    "\n"
    "exit status: 0 every sentence parsed or legitimately unparsable (empty, too long, no\n"
    "parse); 1 a file could not be read or written, or the grammar or engine failed; 2 usage\n"
    "error; 3 some sentences hit an internal error (their lines are (()), each named on\n"
    "stderr); 128+N stopped by signal N (130 SIGINT, 143 SIGTERM).\n";

typedef struct options {
    const char *grammar, *input, *output, *gold_out;
    const char **treebanks;
    int ntreebanks;
    int score, eval, tokenize;
    int engine_set, device_set, workspace_set, threads_set; /* given on the command line */
    int decoder_set, backtrace_set;
    int devices_set, engines_set;
    int shard_k, shard_n; /* --shard K/N (shard_n 0: every line) */
    parser_options popt;
} options;

/* The decoder asked for; else max-rule, as the Berkeley parser, where g gives it exactly
 * (a native .gr grammar), and Viterbi for a text export or with --backtrace. */
static parser_decoder default_decoder(const options *o, const grammar *g)
{
    if (o->decoder_set)
        return o->popt.decoder;
    return o->backtrace_set ? PARSER_DECODER_VITERBI : parser_default_decoder(g);
}

static int read_options(int argc, char **argv, options *o)
{
    enum { OPT_SCORE = 256, OPT_ENGINE, OPT_BACKTRACE, OPT_MAXLEN, OPT_THREADS, OPT_TREEBANK,
           OPT_GOLD, OPT_EVAL, OPT_DEVICE, OPT_WORKSPACE, OPT_TOKENIZE, OPT_DECODER,
           OPT_DEVICES, OPT_ENGINES, OPT_SHARD, OPT_FAIL };
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
    while ((c = getopt_long(argc, argv, ":g:i:o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'g': o->grammar = optarg; break;
        case 'i': o->input = optarg; break;
        case 'o': o->output = optarg; break;
        case OPT_SCORE: o->score = 1; break;
        case OPT_EVAL: o->eval = 1; break;
        case OPT_TOKENIZE: o->tokenize = 1; break;
        case OPT_GOLD: o->gold_out = optarg; break;
        case OPT_TREEBANK: o->treebanks[o->ntreebanks++] = optarg; break;
        case OPT_ENGINE:
            o->engine_set = 1;
            if (!strcmp(optarg, "ref"))
                o->popt.engine = PARSER_ENGINE_REF;
            else if (!strcmp(optarg, "cpu"))
                o->popt.engine = PARSER_ENGINE_CPU;
            else if (!strcmp(optarg, "gpu"))
                o->popt.engine = PARSER_ENGINE_GPU;
            else
                return cli_usage_error("parse", "unknown engine '%s' (known: gpu, cpu, ref)",
                                       optarg);
            break;
        case OPT_DECODER:
            o->decoder_set = 1;
            if (!strcmp(optarg, "viterbi"))
                o->popt.decoder = PARSER_DECODER_VITERBI;
            else if (!strcmp(optarg, "maxrule"))
                o->popt.decoder = PARSER_DECODER_MAXRULE;
            else
                return cli_usage_error("parse", "unknown decoder '%s' (known: viterbi, maxrule)",
                                       optarg);
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
        case 'h': fputs(usage_text, stdout); exit(0);
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
    if ((int)o->popt.engine == -1) {
        o->popt.engine = parser_default_engine();
        if (o->popt.engine == PARSER_ENGINE_CPU)
            fprintf(stderr, "cky parse: no usable GPU: parsing with the CPU engine\n");
        if (o->popt.engine == PARSER_ENGINE_CPU && o->devices_set)
            o->popt.engines = 0; /* --devices is ignored (a warning follows) */
    }
    if (o->popt.fail_engine && o->popt.fail_engine > o->popt.engines)
        return cli_usage_error("parse", "--fail-engine %d: there are %d engines (--devices, "
                               "--engines)", o->popt.fail_engine, o->popt.engines);
    if (o->popt.engine == PARSER_ENGINE_GPU && cli_gpu_env("parse", &o->popt))
        return 1;
    return 0;
}

/* Progress on stderr, only when it is a terminal. */
typedef struct progress {
    int on;
    long done;
    struct timespec start;
} progress;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void progress_add(progress *pr, int n)
{
    pr->done += n;
    if (!pr->on)
        return;
    double s = seconds_since(&pr->start);
    fprintf(stderr, "\r%ld sentences, %.1f sentences/s ", pr->done, s > 0 ? pr->done / s : 0.0);
}

/* The sentences of one batch, where they came from, and their results. */
typedef struct batch {
    sentence *s;
    long *line;                 /* input line (or tree) number, for messages */
    tree **gold;                /* --treebank: the normalized gold tree */
    parse_result *r;
    int n;
} batch;

/* Room for `cap` sentences in b (zeroed); 0 when out of memory. */
static int batch_alloc(batch *b, int cap)
{
    b->s = calloc((size_t)cap, sizeof *b->s);
    b->line = calloc((size_t)cap, sizeof *b->line);
    b->gold = calloc((size_t)cap, sizeof *b->gold);
    b->r = calloc((size_t)cap, sizeof *b->r);
    return b->s && b->line && b->gold && b->r;
}

static void batch_release(batch *b)
{
    free(b->s);
    free(b->line);
    free(b->gold);
    free(b->r);
}

/* Print x with the fewest digits that read back (strtod) as the same double. */
static void print_score(FILE *f, double x)
{
    char buf[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    fputs(buf, f);
}

/* Report a sentence that got no tree, naming the input line. */
static void report_failure(const char *src, long line, const sentence *s, const parse_result *r,
                           int max_length)
{
    switch (r->outcome) {
    case PARSE_EMPTY: fprintf(stderr, "cky parse: %s:%ld: empty sentence\n", src, line); break;
    case PARSE_TOO_LONG:
        fprintf(stderr, "cky parse: %s:%ld: %d words, longer than --max-length %d: not parsed\n",
                src, line, s->n, max_length);
        break;
    case PARSE_NO_PARSE:
        fprintf(stderr, "cky parse: %s:%ld: the grammar has no parse for this sentence\n", src,
                line);
        break;
    case PARSE_FAILED:
        fprintf(stderr, "cky parse: %s:%ld: %s\n", src, line, r->error ? r->error : "failed");
        break;
    case PARSE_OK: break;
    }
}

typedef struct run {
    const options *o;
    int batch;                   /* sentences per engine call */
    parser *p;
    output *out, *gold_out;
    FILE *out_f;                 /* output_file(out) */
    const char *src;
    progress pr;
    tree **gold_all, **test_all; /* --eval: every tree, in order */
    long nall, capall;
    long internal;               /* sentences that hit an internal error */
    long item;                   /* input lines (or trees) read, for --shard */
    int failures_reported;       /* retired engines named on stderr */
    int write_failed;            /* a write error: stop */
} run;

static int keep_for_eval(run *rn, tree *gold, tree *test)
{
    if (rn->nall == rn->capall) {
        long cap = rn->capall ? 2 * rn->capall : 1024;
        tree **g = realloc(rn->gold_all, (size_t)cap * sizeof *g);
        if (!g)
            return 0;
        rn->gold_all = g;
        tree **t = realloc(rn->test_all, (size_t)cap * sizeof *t);
        if (!t)
            return 0;
        rn->test_all = t;
        rn->capall = cap;
    }
    rn->gold_all[rn->nall] = gold;
    rn->test_all[rn->nall] = test;
    rn->nall++;
    return 1;
}

/* Parse a batch and write its lines in order. Returns nonzero after a write error. */
static int flush_batch(run *rn, batch *b)
{
    if (b->n == 0)
        return rn->write_failed;
    if (parser_parse(rn->p, b->s, b->n, b->r)) {
        const char *why = cky_last_error();
        for (int k = 0; k < b->n; k++) {
            parse_result_clear(&b->r[k]);
            b->r[k].outcome = PARSE_FAILED;
            b->r[k].error = strdup(why);
        }
    }
    multi_report_failures("parse", rn->p, &rn->o->popt, &rn->failures_reported);
    for (int k = 0; k < b->n; k++) {
        parse_result *r = &b->r[k];
        if (r->outcome != PARSE_OK)
            report_failure(rn->src, b->line[k], &b->s[k], r, rn->o->popt.max_length);
        if (r->outcome == PARSE_FAILED)
            rn->internal++;
        if (rn->o->score && rn->o->popt.decoder == PARSER_DECODER_MAXRULE) {
            print_score(rn->out_f, r->loglik); /* -inf prints as "-inf" */
            fputc('\t', rn->out_f);
        }
        if (rn->o->score) {
            if (r->outcome == PARSE_OK)
                print_score(rn->out_f, r->score);
            else
                fputs("-inf", rn->out_f);
            fputc('\t', rn->out_f);
        }
        tree_write_line(r->tree, rn->out_f);
        if (b->gold[k] && rn->gold_out)
            tree_write_line(b->gold[k], output_file(rn->gold_out));
        if (b->gold[k] && rn->o->eval && keep_for_eval(rn, b->gold[k], r->tree)) {
            b->gold[k] = NULL; /* kept: owned by rn now */
            r->tree = NULL;
        }
        tree_free(b->gold[k]);
        b->gold[k] = NULL;
        parse_result_clear(r);
        sentence_free(&b->s[k]);
    }
    if (output_flush(rn->out) || (rn->gold_out && output_flush(rn->gold_out))) {
        cli_error("parse", "%s", cky_last_error());
        rn->write_failed = 1;
    }
    progress_add(&rn->pr, b->n);
    b->n = 0;
    return rn->write_failed;
}

/* Sentences read but not parsed when the run stops early. */
static void drop_batch(batch *b)
{
    for (int k = 0; k < b->n; k++) {
        sentence_free(&b->s[k]);
        tree_free(b->gold[k]);
        b->gold[k] = NULL;
    }
    b->n = 0;
}

/* Status of a read loop that ended: a signal, a write error, a read error, or 0 (the last
 * batch parsed and written). */
static int loop_status(run *rn, batch *b, cky_status st)
{
    if (guard_interrupted()) {
        drop_batch(b);
        return 128 + guard_interrupted();
    }
    if (rn->write_failed)
        return 1;
    if (st) {
        int rc = cli_error("parse", "%s", cky_last_error());
        drop_batch(b);
        return rc;
    }
    return flush_batch(rn, b);
}

/* Sentences, one per line. A batch is parsed when it is full or when no more input has
 * arrived yet, so that a pipe or a terminal gets each answer as soon as its line is in. */
static int parse_lines(run *rn, batch *b, const char *path)
{
    io_lines *in;
    if (io_lines_open(path, &in))
        return cli_error("parse", "%s", cky_last_error());
    rn->src = strcmp(path, "-") ? path : "stdin";
    char *line;
    size_t len;
    cky_status st;
    while (!guard_interrupted() && !(st = io_lines_next(in, &line, &len)) && line) {
        if (multi_in_shard(++rn->item, rn->o->shard_k, rn->o->shard_n)) {
            guard_text("parse", rn->src, io_lines_number(in), line, len);
            char *tokens = NULL;
            int ntokens;
            if (rn->o->tokenize && (st = tokenize_line(line, len, &tokens, &ntokens)))
                break;
            st = sentence_from_line(tokens ? tokens : line, tokens ? strlen(tokens) : len,
                                    &b->s[b->n]);
            free(tokens);
            if (st)
                break;
            b->line[b->n++] = io_lines_number(in);
        }
        if ((b->n == rn->batch || !io_lines_pending(in)) && flush_batch(rn, b))
            break;
    }
    io_lines_close(in);
    return loop_status(rn, b, st);
}

static int parse_treebank(run *rn, batch *b, const char *path)
{
    tree_reader *rd;
    if (tree_reader_open(path, &rd))
        return cli_error("parse", "%s", cky_last_error());
    rn->src = path;
    tree *t;
    cky_status st;
    while (!guard_interrupted() && !(st = tree_reader_next(rd, &t)) && t) {
        long line = tree_reader_line(rd);
        if (!multi_in_shard(++rn->item, rn->o->shard_k, rn->o->shard_n)) {
            tree_free(t);
            continue;
        }
        char **words = NULL;
        int n = 0;
        if (tree_normalize(&t) || (t && tree_words(t, &words, &n)) ||
            sentence_from_words(words, n, &b->s[b->n])) {
            tree_free(t);
            free(words);
            st = CKY_ERR_FORMAT;
            break;
        }
        free(words);
        b->gold[b->n] = t;
        b->line[b->n++] = line;
        if (b->n == rn->batch && flush_batch(rn, b))
            break;
    }
    tree_reader_close(rd);
    return loop_status(rn, b, st);
}

/* Options an engine does not use: a usage error when the engine was asked for, a warning
 * when it was chosen for want of a GPU. Returns 0 or the exit status. */
static int check_engine_options(const options *o)
{
    const char *unused = NULL, *engine = o->popt.engine == PARSER_ENGINE_GPU ? "gpu"
                                         : o->popt.engine == PARSER_ENGINE_CPU ? "cpu" : "ref";
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
static int check_files(const options *o)
{
    const char *outputs[2] = {o->output, o->gold_out};
    if (o->ntreebanks)
        return guard_check_paths("parse", o->grammar, o->treebanks, o->ntreebanks, outputs, 2);
    const char *input = o->input;
    return guard_check_paths("parse", o->grammar, &input, 1, outputs, 2);
}

/* Open the outputs: temporary files renamed into place by finish_outputs. */
static int open_outputs(run *rn, const options *o)
{
    if (output_open(o->output ? o->output : "-", &rn->out) ||
        (o->gold_out && output_open(o->gold_out, &rn->gold_out)))
        return cli_error("parse", "%s", cky_last_error());
    rn->out_f = output_file(rn->out);
    return 0;
}

/* Commit the outputs if the run went well (rc 0 or only internal errors), else drop them
 * (the targets keep what they had). Returns the final exit status. */
static int finish_outputs(run *rn, int rc)
{
    int keep = rc == 0 || rc == GUARD_EXIT_INTERNAL;
    output *outs[2] = {rn->out, rn->gold_out};
    for (int k = 0; k < 2; k++) {
        if (!outs[k])
            continue;
        if (!keep) {
            output_abort(outs[k]);
        } else if (output_commit(outs[k])) {
            rc = cli_error("parse", "%s", cky_last_error());
            keep = 0;
        }
    }
    rn->out = rn->gold_out = NULL;
    if (rc > 128 && rn->o->output)
        fprintf(stderr, "cky parse: interrupted: %s left as it was\n", rn->o->output);
    return rc;
}

int cli_parse(int argc, char **argv)
{
    options o;
    int rc = read_options(argc, argv, &o);
    if (!rc)
        rc = check_engine_options(&o);
    if (!rc)
        rc = check_files(&o);
    if (rc) {
        free(o.treebanks);
        return rc;
    }
    run rn = {.o = &o};
    /* the gpu engine wants many sentences at once, the others a few; a batch is parsed early
     * when no more input has arrived (parse_lines) */
    rn.batch = o.popt.engine == PARSER_ENGINE_GPU ? BATCH
               : o.popt.engine == PARSER_ENGINE_CPU ? 256 : 64;
    rn.batch *= o.popt.engines > 1 ? o.popt.engines : 1; /* one BATCH per engine */
    grammar *g = NULL;
    batch *b = calloc(1, sizeof *b);
    if (b && !batch_alloc(b, rn.batch)) {
        batch_release(b);
        free(b);
        b = NULL;
    }
    guard_signals_block(); /* engine threads started now never take SIGINT or SIGTERM */
    if (o.popt.engine != PARSER_ENGINE_REF)
        guard_cache("parse");
    if (!b) {
        rc = cli_error("parse", "out of memory");
    } else if (grammar_load(o.grammar, &g) ||
               (o.popt.decoder = default_decoder(&o, g), parser_new(g, &o.popt, &rn.p))) {
        rc = cli_error("parse", "%s", cky_last_error());
    } else if (o.popt.decoder == PARSER_DECODER_MAXRULE && !maxrule_grammar_is_exact(g)) {
        fprintf(stderr, "cky parse: note: %s is a text export, which lacks the sum closure "
                "of the unary rules: max-rule uses its closed Viterbi unaries instead, so the "
                "trees approximate the Berkeley parser's (its .gr file gives them exactly)\n",
                o.grammar);
    }
    guard_signals_catch();
    if (!rc)
        rc = guard_interrupted() ? 128 + guard_interrupted() : open_outputs(&rn, &o);
    if (rc)
        goto done;
    rn.pr.on = isatty(STDERR_FILENO);
    clock_gettime(CLOCK_MONOTONIC, &rn.pr.start);
    if (o.ntreebanks) {
        for (int k = 0; k < o.ntreebanks && !rc; k++)
            rc = parse_treebank(&rn, b, o.treebanks[k]);
    } else {
        rc = parse_lines(&rn, b, o.input ? o.input : "-");
    }
    if (rn.pr.on)
        fputc('\n', stderr);
    if (!rc && o.eval) {
        /* the summary goes to stdout unless the trees do */
        evalb_params ep = evalb_params_default();
        int evalb_rc;
        if (evalb_score_trees((const tree *const *)rn.gold_all, (int)rn.nall,
                              (const tree *const *)rn.test_all, (int)rn.nall, &ep,
                              o.output ? stdout : stderr, stderr, &evalb_rc, NULL))
            rc = cli_error("parse", "%s", cky_last_error());
    }
    if (!rc && rn.internal) {
        cli_error("parse", "%ld sentence%s failed with an internal error (exit status %d)",
                  rn.internal, rn.internal > 1 ? "s" : "", GUARD_EXIT_INTERNAL);
        rc = GUARD_EXIT_INTERNAL;
    }
done:
    rc = finish_outputs(&rn, rc);
    for (long k = 0; k < rn.nall; k++) {
        tree_free(rn.gold_all[k]);
        tree_free(rn.test_all[k]);
    }
    free(rn.gold_all);
    free(rn.test_all);
    parser_free(rn.p);
    grammar_free(g);
    if (b)
        batch_release(b);
    free(b);
    free(o.treebanks);
    return rc;
}
