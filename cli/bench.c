/* cky bench: parse a file with each decoder (one row each) after a warm-up and report
 * throughput; on the gpu engine also rule evaluations against the GPU's measured peak of
 * each semiring (add+max, sum-product: gpu/gpu.h), per pass, and where the time goes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/gpu.h"
#include "../util/clock.h"
#include "../util/io.h"
#include "../grammar/cascade.h"
#include "../prune/prune.h"
#include "bench.h"
#include "cli.h"
#include "guard.h"
#include "multi.h"
#include "progress.h"

static const char usage_text[] =
    "usage: cky bench -g GRAMMAR -i FILE [--engine gpu|cpu] [--decoder viterbi|maxrule]\n"
    "                 [--max-length N] [--repeat K] [--device N | --devices LIST|all]\n"
    "                 [--threads N] [--workspace N] [--json [--bucket-width W]]\n"
    "\n"
    "Parse the sentences of FILE (one per line) with each decoder, one row each: a warm-up\n"
    "pass, then K timed passes end to end (nothing is written; on the gpu engine charts and\n"
    "trees on the GPU, un-annotation on the host), then, on the gpu engine, one more pass with\n"
    "CUDA events around every stage. Without --decoder both decoders run; one the engine or\n"
    "grammar cannot run (max-rule on the gpu engine, or with a text grammar) gets a row\n"
    "saying why. Each row gives sentences/s and words/s; on the gpu engine also the rule\n"
    "evaluations (work items x rules of the kernels they ran through) and their rate against\n"
    "the peak of the decoder's semiring, end to end and for each pass in its rule kernels,\n"
    "the XX kernels alone, and the time per stage. The peaks, one add and one max per rule\n"
    "(add+max: Viterbi) and one fused multiply-add per rule (sum-product: max-rule's inside\n"
    "and outside passes), are measured here by micro-benchmarks. Then, for each row, the same\n"
    "sentences go through the `cky parse` path (written to a temporary file and parsed in\n"
    "this process by the pipeline cky parse runs: read, parse, write): its sentences/s with\n"
    "and without its start-up (grammar, engine, kernels from the cache) beside the pass's.\n"
    "\n"
    "With --json, one JSON object instead of the table (a \"decoders\" entry per row; the\n"
    "first row that ran also at the top level), with the speed by sentence length: each\n"
    "bucket of W lengths (1..W, W+1..2W, ...) parsed as a batch of its own, best of K passes,\n"
    "and on the gpu engine its stage times from one more pass with CUDA events.\n"
    "\n";

static const cli_use uses[] = {
    {CLI_GRAMMAR, NULL}, {CLI_INPUT, NULL}, {CLI_ENGINE, "gpu"}, {CLI_DECODER, "both"},
    {CLI_PRUNE, "none: the exhaustive passes"},
    {CLI_MAX_LENGTH, "40"}, {CLI_REPEAT, NULL}, {CLI_DEVICE, NULL}, {CLI_DEVICES, NULL},
    {CLI_THREADS, NULL}, {CLI_ARITH, NULL}, {CLI_WORKSPACE, NULL}, {CLI_JSON, NULL}, {CLI_BUCKET_WIDTH, NULL},
    {CLI_QUIET, NULL}, {CLI_HELP, NULL}, {CLI_END, NULL}};


/* Engine statistics of a parser, summed over its engines (gpu only; zero for cpu). */
typedef struct sums {
    gpu_stats g;
    bench_pass_stats pass;
    int pass_known; /* every engine keeps per-pass figures */
} sums;

static sums sum_stats(const parser *p)
{
    sums t;
    memset(&t, 0, sizeof t);
    if (!parser_gpu_at(p, 0))
        return t;
    t.pass_known = 1;
    for (int e = 0; e < parser_engine_count(p); e++) {
        const gpu_engine *ge = parser_gpu_at(p, e);
        const gpu_stats *x = gpu_engine_stats(ge);
        t.g.nstage = x->nstage;
        for (int k = 0; k < x->nstage; k++) {
            t.g.stage_name[k] = x->stage_name[k];
            t.g.seconds[k] += x->seconds[k];
        }
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            t.g.work_items[f] += x->work_items[f];
            t.g.family_evaluations[f] += x->family_evaluations[f];
        }
        t.g.rule_evaluations += x->rule_evaluations;
        t.g.sentences += x->sentences;
        t.g.sub_batches += x->sub_batches;
        t.g.oom_retries += x->oom_retries;
        bench_pass_stats ps;
        if (!bench_pass_read(ge, &ps))
            t.pass_known = 0;
        for (int a = 0; a < BENCH_NPASS; a++)
            for (int b = 0; b < BENCH_NSEMIRING; b++) {
                t.pass.seconds[a][b] += ps.seconds[a][b];
                t.pass.evaluations[a][b] += ps.evaluations[a][b];
            }
    }
    return t;
}

/* Profiling on or off on every device of p (nothing for the cpu engine). */
static void profile_all(parser *p, int on)
{
    for (int e = 0; e < parser_engine_count(p); e++)
        if (parser_gpu_at(p, e))
            gpu_engine_profile(parser_gpu_at(p, e), on);
}

/* Add what the pruned passes of result r (sentence s, grammar g) did to *pr. */
static void add_prune(const grammar *g, const sentence *s, const parse_result *r,
                      bench_prune *pr)
{
    const grammar_cascade *c = grammar_cascade_of(g);
    pr->seconds[0] += r->seconds[0];
    pr->seconds[1] += r->seconds[1];
    pr->seconds[2] += r->seconds[2];
    if (r->fallback)
        pr->fallback[r->fallback - 1]++;
    for (int l = 0; c && l < r->nlevel && l < 8 && l < c->nlevel; l++) {
        const grammar *lg = c->level[l];
        long all = 0, phrasal = 0; /* substates (level 0: symbols), ROOT left out */
        for (int x = 1; x < lg->nsym; x++) {
            int m = l == 0 ? 1 : lg->nsub[x];
            all += m;
            phrasal += lg->phrasal[x] ? m : 0;
        }
        pr->possible[l] += (double)s->n * all + (chart_ncells(s->n) - s->n) * (double)phrasal;
        pr->kept[l] += r->level[l].failed ? 0 : (double)r->level[l].substates;
        pr->nlevel = l + 1 > pr->nlevel ? l + 1 : pr->nlevel;
    }
}

/* One pass over all sentences; returns its wall time or -1. With pr, what the pruned passes
 * did goes there too. */
static double pass(parser *p, const grammar *g, const sentence *s, int n, parse_result *r,
                   bench_prune *pr)
{
    double t0 = clock_seconds();
    if (parser_parse(p, s, n, r)) {
        cli_error("bench", "%s", cky_last_error());
        return -1;
    }
    double t = clock_seconds() - t0;
    for (int k = 0; k < n; k++) {
        if (pr)
            add_prune(g, &s[k], &r[k], pr);
        parse_result_clear(&r[k]);
    }
    return t;
}

/* Measure every non-empty bucket of `width` lengths up to maxlen into out (room for
 * ceil(maxlen / width)): best of `repeat` passes without profiling, then on the gpu engine
 * one profiled pass for the stage times (leaving profiling on). Returns the number of
 * buckets, or -1. */
static int measure_buckets(parser *p, const sentence *s, int n, parse_result *r, int maxlen,
                           int width, int repeat, int gpu, bench_bucket *out)
{
    sentence *sub = malloc((size_t)n * sizeof *sub); /* shallow copies: s owns the words */
    if (!sub) {
        cli_error("bench", "out of memory");
        return -1;
    }
    int nb = 0;
    for (int lo = 1; lo <= maxlen; lo += width) {
        bench_bucket *b = &out[nb];
        memset(b, 0, sizeof *b);
        b->lo = lo;
        b->hi = lo + width - 1 < maxlen ? lo + width - 1 : maxlen;
        for (int k = 0; k < n; k++)
            if (s[k].n >= b->lo && s[k].n <= b->hi) {
                sub[b->sentences++] = s[k];
                b->words += s[k].n;
            }
        if (b->sentences == 0)
            continue;
        profile_all(p, 0);
        b->seconds = INFINITY;
        for (int k = 0; k < repeat; k++) {
            double t = pass(p, NULL, sub, b->sentences, r, NULL);
            if (t < 0) {
                free(sub);
                return -1;
            }
            b->seconds = t < b->seconds ? t : b->seconds;
        }
        if (gpu) {
            profile_all(p, 1);
            sums before = sum_stats(p);
            if (pass(p, NULL, sub, b->sentences, r, NULL) < 0) {
                free(sub);
                return -1;
            }
            sums after = sum_stats(p);
            for (int k = 0; k < after.g.nstage; k++)
                b->stage[k] = after.g.seconds[k] - before.g.seconds[k];
        }
        nb++;
    }
    free(sub);
    return nb;
}

/* Write the n sentences of s into a temporary file, one per line, and run `cky parse` on it
 * in this process with the bench's engine options and decoder (`devices`: the --devices
 * argument or NULL), the trees going to another temporary file; both are removed. Returns 0
 * or 1 after an error on stderr. */
static int run_end_to_end(const char *gpath, const sentence *s, int n, int maxlen,
                          const parser_options *popt, int fixed, const char *decoder,
                          const char *devices, bench_e2e *out)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], in[4200], outp[4200], num[4][32];
    snprintf(dir, sizeof dir, "%s/cky-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return cli_error("bench", "%s: %s", dir, strerror(errno));
    snprintf(in, sizeof in, "%s/sentences.txt", dir);
    snprintf(outp, sizeof outp, "%s/trees.txt", dir);
    FILE *f = fopen(in, "w");
    for (int k = 0; f && k < n; k++)
        for (int w = 0; w < s[k].n; w++)
            fprintf(f, "%s%c", s[k].words[w], w + 1 < s[k].n ? ' ' : '\n');
    int rc = 0;
    if (!f || fclose(f)) {
        rc = cli_error("bench", "%s: %s", in, strerror(errno));
    } else {
        int gpu = popt->engine == PARSER_ENGINE_GPU;
        snprintf(num[0], sizeof num[0], "%d", maxlen);
        snprintf(num[1], sizeof num[1], "%d", popt->device);
        snprintf(num[2], sizeof num[2], "%d", popt->workspace);
        snprintf(num[3], sizeof num[3], "%d", popt->threads);
        char *argv[24] = {"parse", "-g", (char *)gpath, "-i", in, "-o", outp, "--engine",
                          gpu ? "gpu" : "cpu", "--max-length", num[0], "--decoder",
                          (char *)decoder, "--quiet", /* the bench's own progress lines */
                          "--prune", (char *)parser_prune_name(popt->prune)};
        int argc = 16;
        if (gpu) {
            argv[argc++] = devices ? "--devices" : "--device";
            argv[argc++] = devices ? (char *)devices : num[1];
        } else if (popt->threads > 0) {
            argv[argc++] = "--threads";
            argv[argc++] = num[3];
        }
        if (popt->workspace) {
            argv[argc++] = "--workspace";
            argv[argc++] = num[2];
        }
        argv[argc++] = "--arith"; /* as the bench's own parser chose */
        argv[argc++] = fixed ? "fixed" : "float";
        argv[argc] = NULL;
        cli_parse_timing t = {0};
        int prc = cli_parse_timed(argc, argv, &t);
        if (prc != 0 && prc != GUARD_EXIT_INTERNAL)
            rc = cli_error("bench", "the end-to-end run (cky parse) failed (exit status %d)",
                           prc);
        out->total = t.total_seconds;
        out->startup = t.startup_seconds;
        out->idle = t.stats.idle_seconds;
    }
    remove(in);
    remove(outp);
    rmdir(dir);
    return rc;
}

/* Fill the per-pass figures of row w from the statistics after the timed passes (a) and
 * after the profiled pass (b). */
static void row_passes(bench_row *w, const sums *a, const sums *b)
{
    w->npass = 0;
    w->source = BENCH_PASS_NONE;
    if (b->pass_known) {
        w->source = BENCH_PASS_ENGINE;
        for (int ps = 0; ps < BENCH_NPASS; ps++)
            for (int sr = 0; sr < BENCH_NSEMIRING; sr++) {
                double ev = b->pass.evaluations[ps][sr] - a->pass.evaluations[ps][sr];
                if (ev > 0)
                    w->pass[w->npass++] = (bench_pass_fig){
                        ps, sr, ev, b->pass.seconds[ps][sr] - a->pass.seconds[ps][sr]};
            }
    } else if (w->dec->passes == 1u << ENGINE_PASS_INSIDE) {
        w->source = BENCH_PASS_TOTALS;
        double sec = 0;
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            sec += w->stage[GPU_STAGE_XX + f];
        w->pass[w->npass++] = (bench_pass_fig){ENGINE_PASS_INSIDE, (int)w->dec->semiring,
                                         b->g.rule_evaluations - a->g.rule_evaluations, sec};
    }
}

/* Measure row w on parser p (its decoder's): warm-up, timed passes, the profiled pass and
 * the buckets, and the peaks once (while a gpu parser holds its device). Returns 0 or the
 * exit status after an error. */
static int measure_row(bench_run *b, parser *p, bench_row *w)
{
    parse_result *r = calloc((size_t)b->n, sizeof *r);
    if (!r)
        return cli_error("bench", "out of memory");
    int rc = 1;
    w->warm = pass(p, b->g, b->s, b->n, r, b->prune ? &w->prune : NULL);
    if (w->warm < 0)
        goto done;
    sums before = sum_stats(p);
    w->best = INFINITY;
    for (int k = 0; k < b->repeat; k++) {
        double t = pass(p, NULL, b->s, b->n, r, NULL);
        if (t < 0)
            goto done;
        w->best = t < w->best ? t : w->best;
    }
    if (b->gpu) {
        sums after = sum_stats(p);
        profile_all(p, 1);
        if ((w->profiled = pass(p, NULL, b->s, b->n, r, NULL)) < 0)
            goto done;
        sums prof = sum_stats(p);
        w->evals = (after.g.rule_evaluations - before.g.rule_evaluations) / b->repeat;
        w->sub_batches = after.g.sub_batches - before.g.sub_batches;
        w->oom_retries = after.g.oom_retries - before.g.oom_retries;
        w->nstage = prof.g.nstage;
        for (int k = 0; k < prof.g.nstage; k++) {
            w->stage_name[k] = prof.g.stage_name[k];
            w->stage[k] = prof.g.seconds[k] - after.g.seconds[k];
        }
        w->xx_evals = prof.g.family_evaluations[CODEGEN_XX] -
                      after.g.family_evaluations[CODEGEN_XX];
        row_passes(w, &after, &prof);
    }
    if (b->json && b->width > 0) {
        if (!(w->buckets = calloc((size_t)(b->maxlen / b->width + 1), sizeof *w->buckets))) {
            cli_error("bench", "out of memory");
            goto done;
        }
        if ((w->nbuckets = measure_buckets(p, b->s, b->n, r, b->maxlen, b->width, b->repeat,
                                           b->gpu, w->buckets)) < 0)
            goto done;
    }
    if (b->gpu && !b->peaks_measured) {
        for (int k = 0; k < GPU_PEAK_NKIND; k++) {
            if (gpu_peak_measure((gpu_peak_kind)k, 300, &b->peak[k], NULL)) {
                cli_error("bench", "%s", cky_last_error());
                goto done;
            }
            b->peak[k] *= parser_engine_count(p); /* of all the devices (one measured) */
        }
        b->peaks_measured = 1;
    }
    rc = 0;
done:
    free(r);
    return rc;
}

int cli_bench(int argc, char **argv)
{
    cli_args a;
    int rc = cli_options_read("bench", uses, 0, argc, argv, &a);
    if (rc)
        return rc;
    if (a.given[CLI_HELP]) {
        fputs(usage_text, stdout);
        fputs("options:\n", stdout);
        cli_options_help(stdout, uses);
        return 0;
    }
    const char *gpath = a.text[CLI_GRAMMAR], *input = a.text[CLI_INPUT];
    const char *devices = a.text[CLI_DEVICES];
    int repeat = a.given[CLI_REPEAT] ? a.num[CLI_REPEAT] : 3, json = a.given[CLI_JSON];
    int width = a.given[CLI_BUCKET_WIDTH] ? a.num[CLI_BUCKET_WIDTH] : 10;
    int decoder = a.given[CLI_DECODER] ? a.num[CLI_DECODER] : -1; /* -1: every decoder */
    int device_set = a.given[CLI_DEVICE] || a.given[CLI_DEVICES];
    int threads_set = a.given[CLI_THREADS], quiet = a.given[CLI_QUIET];
    parser_options popt = parser_default_options();
    popt.engine = PARSER_ENGINE_GPU;
    popt.max_length = 40;
    rc = cli_args_parser("bench", &a, &popt);
    cli_args_free(&a);
    if (rc)
        return rc;
    if (popt.engine == PARSER_ENGINE_REF)
        return cli_usage_error("bench", "--engine ref: the bench runs the gpu or cpu engine");
    int maxlen = popt.max_length;
    if (!gpath || !input)
        return cli_usage_error("bench", "give a grammar (-g) and an input file (-i)");
    int gpu = popt.engine == PARSER_ENGINE_GPU;
    if (!gpu && device_set)
        return cli_usage_error("bench", "--device and --devices are for the gpu engine");
    if (gpu && threads_set)
        return cli_usage_error("bench", "--threads is for the cpu engine");
    if (gpu && cli_tune("bench", &popt.tune))
        return 1;
    popt.tune.kernels_wait = 1; /* it times the compiled kernels */
    sentence_list in = {0};
    int nrow = 0;
    grammar *g = NULL;
    parser *p = NULL;
    bench_row rows[PARSER_NDECODER];
    memset(rows, 0, sizeof rows);
    char device[1024] = "";
    int workspace = 0;
    cli_progress_start("bench");
    popt.progress = cli_progress_sink(quiet);
    if (sentence_read_file(input, maxlen, &in)) {
        rc = cli_error("bench", "%s", cky_last_error());
        goto done;
    }
    const sentence *s = in.s;
    int n = in.n;
    long words = in.words;
    if (n == 0) {
        rc = cli_error("bench", "%s: no sentence of 1 to %d words", input, maxlen);
        goto done;
    }
    if ((rc = guard_check_paths("bench", gpath, NULL, 0, NULL, 0)))
        goto done;
    if (gpu && gpu_count() == 0) {
        rc = cli_error("bench", "no usable GPU here (no CUDA device, or no driver): the gpu "
                       "engine, the default, cannot run; --engine cpu measures the cpu engine");
        goto done;
    }
    double t0 = clock_seconds();
    if (grammar_load_with(gpath, NULL, &popt.progress, &g)) {
        rc = cli_error("bench", "%s", cky_last_error());
        goto done;
    }
    double grammar_seconds = clock_seconds() - t0;
    bench_run b = {.s = s, .n = n, .words = words, .maxlen = maxlen, .repeat = repeat,
                   .json = json, .width = width, .gpu = gpu, .prune = popt.prune, .g = g};
    popt.prune_levels = popt.prune != PARSER_PRUNE_NONE;
    /* the arithmetic of exhaustive Viterbi's binary rules (the pruned passes are the ref's) */
    int fixed = popt.prune == PARSER_PRUNE_NONE && parser_arith_fixed(g, &popt);
    for (int d = 0; d < PARSER_NDECODER; d++) {
        if (decoder >= 0 && d != decoder)
            continue;
        bench_row *w = &rows[nrow++];
        w->dec = parser_decoder_def((parser_decoder)d);
        popt.decoder = (parser_decoder)d;
        t0 = clock_seconds();
        cky_status st = parser_new(g, &popt, &p);
        if (st == CKY_ERR_UNSUPPORTED && decoder < 0) { /* a row saying why */
            p = NULL;
            if (!(w->reason = strdup(cky_last_error()))) {
                rc = cli_error("bench", "out of memory");
                goto done;
            }
            continue;
        }
        if (st) {
            p = NULL;
            rc = cli_error("bench", "%s", cky_last_error());
            goto done;
        }
        w->setup = clock_seconds() - t0;
        w->supported = 1;
        if (gpu && !device[0] && !parser_gpu(p)) { /* the pruned passes: no gpu engine */
            gpu_device dv;
            if (!gpu_open(popt.device, &dv))
                snprintf(device, sizeof device, "%s", dv.name);
        } else if (gpu && !device[0]) {
            for (int k = 0; k < parser_engine_count(p); k++)
                snprintf(device + strlen(device), sizeof device - strlen(device), "%s%s",
                         k ? "; " : "", gpu_engine_device(parser_gpu_at(p, k)));
            workspace = gpu_engine_width(parser_gpu(p));
        }
        if ((rc = measure_row(&b, p, w)))
            goto done;
        /* the end-to-end run makes its own parser: this one gives the device memory back */
        parser_free(p);
        p = NULL;
        if ((rc = run_end_to_end(gpath, s, n, maxlen, &popt, fixed, w->dec->name, devices,
                                 &w->e2e)))
            goto done;
    }
    int threads = popt.threads; /* the cpu engine's: one per core when not given */
    if (threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int)cores : 1;
    }
    bench_header h = {gpath, input, gpu ? "gpu" : "cpu", gpu ? device : "cpu", workspace,
                      threads, grammar_seconds, fixed ? "fixed" : "float"};
    if (json)
        bench_print_json(&b, &h, rows, nrow);
    else
        bench_print_text(&b, &h, rows, nrow);
done:
    sentence_list_free(&in);
    for (int k = 0; k < nrow; k++) {
        free(rows[k].reason);
        free(rows[k].buckets);
    }
    parser_free(p);
    grammar_free(g);
    cli_progress_stop();
    return rc;
}
