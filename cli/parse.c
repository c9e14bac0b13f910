/* cky parse: sentences (or the words of treebank trees) in, one tree per line out, in order.
 * The reading, the engine and the writing run as the stages of a pipeline (pipeline.h); this
 * file holds the reader and writer stages and the run's exit status (the options:
 * parse_options.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../corpus_tools/evalb.h"
#include "../corpus_tools/tagged.h"
#include "../corpus_tools/tokenize.h"
#include "../corpus_tools/tree.h"
#include "../corpus_tools/tree_draw.h"
#include "../decoders/maxrule/maxrule.h"
#include "../parser/parser.h"
#include "../prune/prune.h"
#include "../util/clock.h"
#include "../util/io.h"
#include "../util/jdouble.h"
#include "../util/output.h"
#include "cli.h"
#include "guard.h"
#include "multi.h"
#include "parse_options.h"
#include "pipeline.h"
#include "progress.h"

#define DEPTH 4     /* batches in the pipeline at once: one read, one parsed, one written, and
                       one read ahead so the engine does not wait for the reader */

/* The decoder asked for; else max-rule, as the Berkeley parser, where g gives it exactly
 * (a native .gr grammar), and Viterbi for a text export or with --backtrace. */
static parser_decoder default_decoder(const parse_options *o, const grammar *g)
{
    if (o->decoder_set)
        return o->popt.decoder;
    return o->backtrace_set ? PARSER_DECODER_VITERBI : parser_default_decoder(g);
}

/* The pruning asked for; else the Berkeley parser's where g has its cascade (a native .gr
 * grammar), none for a text export (said on stderr) or with --backtrace (an exhaustive
 * Viterbi option). */
static parser_prune default_prune(const parse_options *o, const grammar *g)
{
    if (o->prune_set)
        return o->popt.prune;
    if (o->backtrace_set)
        return PARSER_PRUNE_NONE;
    parser_prune p = parser_default_prune(g);
    if (p == PARSER_PRUNE_NONE && !o->quiet)
        fprintf(stderr, "cky parse: note: %s has no coarse-to-fine cascade (a text export): "
                "the passes are exhaustive, as --prune none\n", o->grammar);
    return p;
}

/* --arith auto with an exhaustive Viterbi pass on the cpu or gpu engine and a grammar whose
 * weights fit no fixed point: say why its binary rules are in float32. */
static void note_arith(const parse_options *o, const grammar *g)
{
    const parser_options *p = &o->popt;
    if (!o->quiet && p->arith == PARSER_ARITH_AUTO && p->engine != PARSER_ENGINE_REF &&
        p->decoder == PARSER_DECODER_VITERBI && p->prune == PARSER_PRUNE_NONE &&
        codegen_fixed_check(g))
        fprintf(stderr, "cky parse: note: %s: %s: Viterbi's binary rules in float32\n",
                o->grammar, cky_last_error());
}

/* The Berkeley parser's options that only the pruned decoder gives (and those that need its
 * Viterbi or max-rule pass), refused by name with the engine and decoder that would run
 * instead. Returns 0 or the exit status of a usage error. */
static int check_pruned_only(const parse_options *o)
{
    const parser_berkeley_output *b = &o->popt.berkeley;
    const char *opt = o->confidence ? "--confidence" : o->tree_likelihood ? "--tree-likelihood"
                      : b->binarize ? "--binarize" : b->variational ? "--variational"
                      : b->substates ? "--substates" : b->scores ? "--scores" : NULL;
    const char *engine = parser_engine_name(o->popt.engine);
    int viterbi = o->popt.decoder == PARSER_DECODER_VITERBI;
    if (opt && o->popt.prune == PARSER_PRUNE_NONE)
        return cli_usage_error("parse", "%s comes from the pruned decoder only (--prune "
                               "berkeley or accurate, with a native .gr grammar): the "
                               "exhaustive %s decoder on the %s engine does not give it", opt,
                               viterbi ? "viterbi" : "maxrule", engine);
    if (b->variational && viterbi)
        return cli_usage_error("parse", "--variational replaces max-rule's scores: not with "
                               "the viterbi decoder (on the %s engine)", engine);
    if ((b->substates || b->scores) && (!viterbi || !b->binarize))
        return cli_usage_error("parse", "%s labels the binarized Viterbi trees: it needs "
                               "--decoder viterbi --binarize (the jar's -viterbi -binarize), "
                               "not the %s decoder%s on the %s engine",
                               b->substates ? "--substates" : "--scores",
                               viterbi ? "viterbi" : "maxrule",
                               b->binarize ? "" : " without --binarize", engine);
    return 0;
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
                           int max_length, int variational)
{
    switch (r->outcome) {
    case PARSE_EMPTY: fprintf(stderr, "cky parse: %s:%ld: empty sentence\n", src, line); break;
    case PARSE_TOO_LONG:
        fprintf(stderr, "cky parse: %s:%ld: %d words, longer than --max-length %d: not parsed\n",
                src, line, s->n, max_length);
        break;
    case PARSE_NO_PARSE:
        if (variational && r->loglik != -INFINITY)
            fprintf(stderr, "cky parse: %s:%ld: the variational scores give no tree (the "
                    "Berkeley parser's -variational writes (()) too)\n", src, line);
        else
            fprintf(stderr, "cky parse: %s:%ld: the grammar has no parse for this sentence\n",
                    src, line);
        break;
    case PARSE_FAILED:
        fprintf(stderr, "cky parse: %s:%ld: %s\n", src, line, r->error ? r->error : "failed");
        break;
    case PARSE_OK: break;
    }
}

#define WRITE_PIPE_GONE 2 /* run.write_failed: the reader of a pipe went away (EPIPE) */

/* The state of a run, shared by the stages: the reader's (the main thread) input, the
 * writer's outputs and counts. */
typedef struct run {
    const parse_options *o;
    int batch;                   /* sentences per engine call */
    parser *p;
    /* reader */
    io_lines *in;                /* sentences, or */
    tree_reader *rd;             /* the treebank file being read */
    int next_treebank;           /* the next --treebank file to open */
    const char *src;             /* the input being read, for messages */
    tagged_reader *tagged;       /* --gold-pos: the sentence being read */
    long tagged_line;            /* and the input line it starts at */
    long item;                   /* input lines (or trees) read, for --shard */
    uint64_t input_hash;         /* --shard: of every item read (multi_hash_item) */
    cky_status read_status;      /* a read error (its message in read_error) */
    char read_error[1024];
    /* parse stage */
    int failures_reported;       /* retired engines named on stderr */
    /* writer */
    output *out, *gold_out, *masks;
    FILE *out_f;                 /* output_file(out) */
    tree **gold_all, **test_all; /* --eval: every tree, in order */
    long nall, capall;
    long internal;               /* sentences that hit an internal error */
    long written;                /* lines written to out */
    _Atomic int write_failed;    /* a write error: stop (WRITE_PIPE_GONE: quietly) */
} run;

/* The reader stops with a read error: keep its message (the thread's own). */
static pipeline_read read_failed(run *rn, cky_status st)
{
    rn->read_status = st;
    snprintf(rn->read_error, sizeof rn->read_error, "%s", cky_last_error());
    return PIPELINE_STOP;
}

/* Reader stage: sentences, one per line. A batch is handed on when it is full or when no
 * more input has arrived yet, so that a pipe or a terminal gets each answer as soon as its
 * line is in. */
static pipeline_read read_lines(void *ctx, pipeline_batch *b)
{
    run *rn = ctx;
    b->src = rn->src;
    char *line;
    size_t len;
    cky_status st;
    for (;;) {
        if (guard_interrupted() || rn->write_failed)
            return PIPELINE_STOP;
        if ((st = io_lines_next(rn->in, &line, &len)))
            return read_failed(rn, st);
        if (!line)
            return PIPELINE_END;
        if (rn->o->shard_n)
            rn->input_hash = multi_hash_item(rn->input_hash, line, len);
        if (multi_in_shard(++rn->item, rn->o->shard_k, rn->o->shard_n)) {
            guard_text("parse", rn->src, io_lines_number(rn->in), line, len);
            char *tokens = NULL;
            int ntokens;
            if (rn->o->tokenize && (st = tokenize_line(line, len, &tokens, &ntokens)))
                return read_failed(rn, st);
            st = sentence_from_line(tokens ? tokens : line, tokens ? strlen(tokens) : len,
                                    &b->s[b->n]);
            free(tokens);
            if (st)
                return read_failed(rn, st);
            b->item[b->n] = io_lines_number(rn->in);
            b->line[b->n] = b->item[b->n];
            b->n++;
        }
        if (b->n == b->cap || !io_lines_pending(rn->in))
            return PIPELINE_MORE;
    }
}

/* --gold-pos: the sentence just read into b (b->s[b->n]) is in: its first line names it. */
static void add_tagged(const run *rn, pipeline_batch *b)
{
    b->line[b->n] = b->item[b->n] = rn->tagged_line;
    b->n++;
}

/* Reader stage, --gold-pos: sentences of word<TAB>tag lines (corpus_tools/tagged.h), each
 * named by its first line. A batch is handed on as read_lines does. */
static pipeline_read read_tagged(void *ctx, pipeline_batch *b)
{
    run *rn = ctx;
    b->src = rn->src;
    char *line;
    size_t len;
    cky_status st;
    for (;;) {
        if (guard_interrupted() || rn->write_failed)
            return PIPELINE_STOP;
        if ((st = io_lines_next(rn->in, &line, &len)))
            return read_failed(rn, st);
        int done = 0;
        if (!line) {
            if ((st = tagged_finish(rn->tagged, &done, &b->s[b->n])))
                return read_failed(rn, st);
            if (done)
                add_tagged(rn, b);
            return PIPELINE_END;
        }
        long at = io_lines_number(rn->in);
        guard_text("parse", rn->src, at, line, len);
        if (!tagged_pending(rn->tagged))
            rn->tagged_line = at;
        if ((st = tagged_add_line(rn->tagged, line, len, &done, &b->s[b->n])))
            return read_failed(rn, cky_fail(st, "%s:%ld: %s", rn->src, at, cky_last_error()));
        if (done)
            add_tagged(rn, b);
        if (b->n == b->cap || (b->n && !io_lines_pending(rn->in)))
            return PIPELINE_MORE;
    }
}

/* Reader stage: the words of the trees of the --treebank files, one file after the other (a
 * batch holds the trees of one file). */
static pipeline_read read_treebanks(void *ctx, pipeline_batch *b)
{
    run *rn = ctx;
    cky_status st;
    if (!rn->rd) {
        if (rn->next_treebank == rn->o->ntreebanks)
            return PIPELINE_END;
        rn->src = rn->o->treebanks[rn->next_treebank++];
        if ((st = tree_reader_open(rn->src, &rn->rd)))
            return read_failed(rn, st);
    }
    b->src = rn->src;
    tree *t;
    while (b->n < b->cap) {
        if (guard_interrupted() || rn->write_failed)
            return PIPELINE_STOP;
        if ((st = tree_reader_next(rn->rd, &t)))
            return read_failed(rn, st);
        if (!t) {
            tree_reader_close(rn->rd);
            rn->rd = NULL;
            return rn->next_treebank == rn->o->ntreebanks ? PIPELINE_END : PIPELINE_MORE;
        }
        long line = tree_reader_line(rn->rd);
        if (rn->o->shard_n) { /* a tree: its file and where it starts */
            char id[4200];
            int n = snprintf(id, sizeof id, "%s:%ld", rn->src, line);
            rn->input_hash = multi_hash_item(rn->input_hash, id, (size_t)n);
        }
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
            return read_failed(rn, CKY_ERR_FORMAT);
        }
        free(words);
        b->gold[b->n] = t;
        b->item[b->n] = rn->item;
        b->line[b->n++] = line;
    }
    return PIPELINE_MORE;
}

/* Parse stage, after each batch: name the engines a pool retired. */
static void parsed(void *ctx, const pipeline_batch *b)
{
    run *rn = ctx;
    multi_report_failures("parse", rn->p, &rn->o->popt, &rn->failures_reported);
}

static int stopped(void *ctx) { return guard_interrupted(); }

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

/* --masks: the coarse levels of a result as PruneMasks rows, then its final row. */
static void write_masks(run *rn, long line, const parse_result *r)
{
    FILE *f = output_file(rn->masks);
    for (int l = 0; l < r->nlevel; l++) {
        const prune_level *v = &r->level[l];
        if (v->failed)
            fprintf(f, "%ld\t%d\t-1\t-1\t-\n", line, l);
        else
            fprintf(f, "%ld\t%d\t%ld\t%ld\t%016" PRIx64 "\n", line, l, v->symbols, v->substates,
                    v->hash);
    }
    fprintf(f, "%ld\tfinal\t", line);
    print_score(f, rn->o->popt.decoder == PARSER_DECODER_MAXRULE ? r->loglik : r->score);
    fputc('\t', f);
    print_score(f, r->score);
    fputc('\t', f);
    tree_write_line(r->tree, f);
}

/* --kbest: the trees of the list after the first, one a line (with --score, each with
 * log P(sentence) and its own max-rule score), then the blank line that ends a list, as the
 * Berkeley parser writes them. */
static void write_kbest_rest(run *rn, const parse_result *r)
{
    for (int k = 0; k < r->nrest; k++) {
        if (rn->o->score) {
            print_score(rn->out_f, r->loglik);
            fputc('\t', rn->out_f);
            print_score(rn->out_f, r->rest_score[k]);
            fputc('\t', rn->out_f);
        }
        tree_write_line(r->rest[k], rn->out_f);
    }
    fputc('\n', rn->out_f);
}

/* The Berkeley parser's line for result r (BerkeleyParser.outputTrees): its scores, each
 * followed by a tab, in its order (-tree_likelihood, -sentence_likelihood, then -confidence
 * or else -modelScore), then the tree. A sentence too long gets (()) alone, as from the jar;
 * one whose tree scores -inf under --tree-likelihood no line at all (said on stderr). */
static void write_berkeley(run *rn, const char *src, long line, const parse_result *r)
{
    const parse_options *o = rn->o;
    FILE *f = rn->out_f;
    char buf[JDOUBLE_BUFSIZE + 360];
    double sc[PARSER_NSCORE];
    if (r->outcome == PARSE_TOO_LONG) {
        fputs("(())\n", f);
        return;
    }
    parser_berkeley_scores(&o->popt, r, sc);
    if (o->tree_likelihood) {
        if (sc[PARSER_SCORE_TREE] == -INFINITY) {
            fprintf(stderr, "cky parse: %s:%ld: %s: no line written, as the Berkeley parser's "
                    "-tree_likelihood writes none\n", src, line, r->outcome == PARSE_OK ?
                    "the tree has probability 0 (or P(words) underflowed)" : "no tree");
            return;
        }
        jdouble_format(sc[PARSER_SCORE_TREE], buf, sizeof buf);
        fprintf(f, "%s\t", buf);
    }
    if (o->sentence_likelihood) {
        jdouble_format(sc[PARSER_SCORE_SENTENCE], buf, sizeof buf);
        fprintf(f, "%s\t", buf);
    }
    if (o->confidence) {
        jdouble_format(sc[PARSER_SCORE_CONFIDENCE], buf, sizeof buf);
        fprintf(f, "%s\t", buf);
    } else if (o->model_score) {
        jdouble_format_fixed(sc[PARSER_SCORE_MODEL], 8, buf, sizeof buf);
        fprintf(f, "%s\t", buf);
    }
    tree_write_line(r->tree, f);
}

/* --render DIR: the picture of result r, DIR/NNNNNN.svg for input item `item` (six digits
 * or more): its tree, or with --kbest its list stacked, best first; (()) as "(no parse)".
 * Written whole or not at all (tree_draw_write_file). Returns 0 or 1 after a message. */
static int write_picture(run *rn, long item, const parse_result *r)
{
    int n = 1 + (rn->o->popt.kbest > 1 ? r->nrest : 0);
    const tree **trees = malloc((size_t)n * sizeof *trees);
    char path[4200];
    snprintf(path, sizeof path, "%s/%06ld.svg", rn->o->render, item);
    tree_draw_style style = tree_draw_style_default();
    cky_status st = trees ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (trees) {
        trees[0] = r->tree;
        for (int k = 1; k < n; k++)
            trees[k] = r->rest[k - 1];
        st = tree_draw_write_file(path, trees, n, &style);
    }
    free(trees);
    if (!st)
        return 0;
    cli_progress_clear();
    return cli_error("parse", "--render %s: %s", rn->o->render, cky_last_error());
}

/* Writer stage: the lines of a parsed batch, in order, then a flush. Returns nonzero after a
 * write error. */
static int write_batch(void *ctx, pipeline_batch *b)
{
    run *rn = ctx;
    for (int k = 0; k < b->n; k++) {
        parse_result *r = &b->r[k];
        if (r->outcome != PARSE_OK) {
            cli_progress_clear();
            report_failure(b->src, b->line[k], &b->s[k], r, rn->o->popt.max_length,
                           rn->o->popt.berkeley.variational);
        }
        if (r->outcome == PARSE_FAILED)
            rn->internal++;
        if (rn->o->tree_likelihood || rn->o->sentence_likelihood || rn->o->confidence ||
            rn->o->model_score) {
            write_berkeley(rn, b->src, b->line[k], r);
            goto written;
        }
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
        if (rn->o->popt.kbest > 1)
            write_kbest_rest(rn, r);
    written:
        if (rn->o->render && write_picture(rn, b->item[k], r)) {
            rn->write_failed = 1;
            break;
        }
        if (rn->masks)
            write_masks(rn, b->line[k], r);
        if (r->untagged)
            fprintf(stderr, "cky parse: %s:%ld: no tree with the gold tags: parsed without "
                    "them, as the Berkeley parser does\n", b->src, b->line[k]);
        if (r->exact)
            fprintf(stderr, "cky parse: %s:%ld: a score left the fixed-point range (--arith "
                    "fixed): parsed again by the ref engine, in double\n", b->src, b->line[k]);
        if (r->fallback)
            fprintf(stderr, "cky parse: %s:%ld: no tree within the pruned pass: parsed again "
                    "%s\n", b->src, b->line[k], r->fallback == 1 ? "with the accurate "
                    "thresholds" : "exhaustively");
        if (b->gold[k] && rn->gold_out)
            tree_write_line(b->gold[k], output_file(rn->gold_out));
        if (b->gold[k] && rn->o->eval && keep_for_eval(rn, b->gold[k], r->tree)) {
            b->gold[k] = NULL; /* kept: owned by rn now */
            r->tree = NULL;
        }
    }
    if (output_flush(rn->out) || (rn->gold_out && output_flush(rn->gold_out)) ||
        (rn->masks && output_flush(rn->masks))) {
        /* `cky parse | head`: the rest is not wanted, and that is no error to report */
        if (output_error(rn->out) == EPIPE ||
            (rn->gold_out && output_error(rn->gold_out) == EPIPE)) {
            rn->write_failed = WRITE_PIPE_GONE;
        } else {
            cli_error("parse", "%s", cky_last_error());
            rn->write_failed = 1;
        }
    }
    rn->written += b->n;
    if (!rn->o->quiet)
        cli_progress_parse_add(b->n);
    return rn->write_failed;
}

/* Run the pipeline over the input; returns the exit status of the reading and writing: a
 * signal, a write error, a read error, or 0. */
static int run_pipeline(run *rn, pipeline_stats *stats)
{
    const parse_options *o = rn->o;
    pipeline_stages stages = {rn, o->ntreebanks ? read_treebanks
                                  : o->gold_pos ? read_tagged
                                                : read_lines,
                              parsed, write_batch, stopped};
    if (o->gold_pos && tagged_new(&rn->tagged))
        return cli_error("parse", "%s", cky_last_error());
    if (!o->ntreebanks) {
        const char *path = o->input ? o->input : "-";
        if (io_lines_open(path, &rn->in))
            return cli_error("parse", "%s", cky_last_error());
        rn->src = strcmp(path, "-") ? path : "stdin";
    }
    cky_status st = pipeline_run(rn->p, rn->batch, DEPTH, &stages, stats);
    if (rn->in)
        io_lines_close(rn->in);
    if (rn->rd)
        tree_reader_close(rn->rd);
    tagged_free(rn->tagged);
    rn->tagged = NULL;
    rn->in = NULL;
    rn->rd = NULL;
    if (st)
        return cli_error("parse", "%s", cky_last_error());
    if (guard_interrupted())
        return 128 + guard_interrupted();
    if (rn->write_failed) /* a pipe closed early: the status of a filter killed by SIGPIPE */
        return rn->write_failed == WRITE_PIPE_GONE ? 128 + SIGPIPE : 1;
    if (rn->read_status)
        return cli_error("parse", "%s", rn->read_error);
    return 0;
}

/* Open the outputs: temporary files renamed into place by finish_outputs. */
static int open_outputs(run *rn, const parse_options *o)
{
    if (output_open(o->output ? o->output : "-", &rn->out) ||
        (o->gold_out && output_open(o->gold_out, &rn->gold_out)) ||
        (o->masks && output_open(o->masks, &rn->masks)))
        return cli_error("parse", "%s", cky_last_error());
    rn->out_f = output_file(rn->out);
    return 0;
}

/* After -o FILE is committed: FILE.shard, the manifest of a --shard run for cky merge, or
 * no FILE.shard (an older run's) without --shard. Returns 0 or 1 after an error. */
static int write_manifest(const run *rn)
{
    const parse_options *o = rn->o;
    if (!o->output || !strcmp(o->output, "-"))
        return 0;
    if (!o->shard_n) {
        multi_manifest_remove(o->output);
        return 0;
    }
    multi_manifest m = {o->shard_k, o->shard_n, rn->written, rn->item, rn->input_hash, ""};
    snprintf(m.input, sizeof m.input, "%s", o->ntreebanks ? o->treebanks[0]
                                            : o->input ? o->input : "stdin");
    if (multi_manifest_write(o->output, &m))
        return cli_error("parse", "%s (the trees are in %s; cky merge needs both)",
                         cky_last_error(), o->output);
    return 0;
}

/* Commit the outputs if the run went well (rc 0 or only internal errors), else drop them
 * (the targets keep what they had). Returns the final exit status. */
static int finish_outputs(run *rn, int rc)
{
    int keep = rc == 0 || rc == GUARD_EXIT_INTERNAL;
    output *outs[3] = {rn->out, rn->gold_out, rn->masks};
    for (int k = 0; k < 3; k++) {
        if (!outs[k])
            continue;
        if (!keep) {
            output_abort(outs[k]);
        } else if (output_commit(outs[k])) {
            rc = cli_error("parse", "%s", cky_last_error());
            keep = 0;
        } else if (k == 0 && write_manifest(rn)) {
            rc = 1;
        }
    }
    rn->out = rn->gold_out = rn->masks = NULL;
    if (guard_interrupted())
        guard_note_interrupted();
    return rc;
}

int cli_parse(int argc, char **argv) { return cli_parse_timed(argc, argv, NULL); }

int cli_parse_timed(int argc, char **argv, cli_parse_timing *timing)
{
    double t0 = clock_seconds();
    if (timing)
        memset(timing, 0, sizeof *timing);
    parse_options o;
    int rc = parse_options_read(argc, argv, &o);
    if (rc)
        return rc;
    run rn = {.o = &o, .input_hash = MULTI_HASH_INIT};
    grammar *g = NULL;
    pipeline_stats stats = {0};
    cli_progress_start("parse");
    o.popt.progress = cli_progress_sink(o.quiet);
    guard_signals_block("parse", o.output); /* until the outputs open: a signal ends the run */
    if (o.popt.engine != PARSER_ENGINE_REF)
        guard_cache("parse");
    int loaded = !grammar_load_with(o.grammar, NULL, &o.popt.progress, &g);
    if (loaded) {
        o.popt.decoder = default_decoder(&o, g);
        o.popt.prune = default_prune(&o, g);
        o.popt.prune_levels = o.masks != NULL;
        o.popt.berkeley.tree_scores |= o.sentence_likelihood &&
                                       o.popt.prune != PARSER_PRUNE_NONE;
        note_arith(&o, g);
    }
    if (loaded && (rc = check_pruned_only(&o))) {
        /* a usage error, said */
    } else if (!loaded || parser_new(g, &o.popt, &rn.p)) {
        rc = cli_error("parse", "%s", cky_last_error());
    } else if (o.gold_pos && o.popt.prune == PARSER_PRUNE_NONE) {
        rc = cli_error("parse", "--gold-pos needs the coarse-to-fine cascade of a native .gr "
                       "grammar, which %s lacks", o.grammar);
    } else if (o.popt.decoder == PARSER_DECODER_MAXRULE && !grammar_sum_is_exact(g)) {
        fprintf(stderr, "cky parse: note: %s is a text export, which lacks the sum closure "
                "of the unary rules: max-rule uses its closed Viterbi unaries instead, so the "
                "trees approximate the Berkeley parser's (its .gr file gives them exactly)\n",
                o.grammar);
    }
    guard_signals_catch();
    /* the gpu engine wants many sentences at once, the others a few; a batch is handed on
     * early when no more input has arrived (read_lines) */
    if (!rc)
        rn.batch = parser_batch_size(rn.p);
    if (!rc)
        rc = guard_interrupted() ? 128 + guard_interrupted() : open_outputs(&rn, &o);
    if (rc)
        goto done;
    if (timing)
        timing->startup_seconds = clock_seconds() - t0;
    if (!o.quiet)
        cli_progress_parse_begin();
    rc = run_pipeline(&rn, &stats);
    if (!o.quiet)
        cli_progress_parse_end(rn.write_failed != WRITE_PIPE_GONE);
    if (o.pipeline_stats)
        fprintf(stderr, "cky parse: pipeline: %ld batches, %ld sentences, at most %d of %d "
                "slots in use, batch %d, engine %.3f s, engine idle %.3f s\n", stats.batches,
                stats.sentences, stats.most_in_use, stats.slots, rn.batch, stats.parse_seconds,
                stats.idle_seconds);
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
    if (timing && timing->startup_seconds > 0) {
        timing->total_seconds = clock_seconds() - t0;
        timing->stats = stats;
    }
    for (long k = 0; k < rn.nall; k++) {
        tree_free(rn.gold_all[k]);
        tree_free(rn.test_all[k]);
    }
    free(rn.gold_all);
    free(rn.test_all);
    parser_free(rn.p);
    grammar_free(g);
    cli_args_free(&o.args);
    cli_progress_stop();
    guard_signals_restore();
    return rc;
}
