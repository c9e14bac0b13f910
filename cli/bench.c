/* cky bench: parse a file on the GPU after a warm-up and report throughput, rule evaluations
 * against the GPU's measured add+max peak, and where the time goes. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../codegen/codegen.h"
#include "../kernels/peak.h"
#include "../parser/gpu.h"
#include "../parser/parser.h"
#include "../util/clock.h"
#include "../util/io.h"
#include "cli.h"
#include "guard.h"
#include "multi.h"

static const char usage_text[] =
    "usage: cky bench -g GRAMMAR -i FILE [--max-length N] [--repeat K] [--workspace N]\n"
    "                 [--json [--bucket-width W]]\n"
    "\n"
    "Parse the sentences of FILE (one per line) with the gpu engine: a warm-up pass, then K\n"
    "timed passes end to end (charts, trees on the GPU, un-annotation on the host; nothing is\n"
    "written), then one more pass with CUDA events around every stage. Prints sentences,\n"
    "words, wall time, sentences/s, words/s, rule evaluations (work items x rules of the\n"
    "kernels they ran through) and their rate, the GPU's peak for one add and one max per\n"
    "rule (measured here by a micro-benchmark), the fraction of it reached, end to end and\n"
    "by the XX kernels alone, and the time per stage. Then the same sentences go through\n"
    "the `cky parse` path (written to a temporary file and parsed in this process by the\n"
    "pipeline cky parse runs: read, parse, write): its sentences/s with and without its\n"
    "start-up (grammar, engine, kernels from the cache) beside the kernel pass's.\n"
    "\n"
    "options:\n"
    "  -g, --grammar GRAMMAR   a Berkeley .gr file or text-export prefix\n"
    "  -i, --input FILE        sentences, one per line (plain or gzipped)\n"
    "      --max-length N      only sentences of at most N words (default 40)\n"
    "      --repeat K          timed passes (default 3); the best is reported\n"
    "      --device N          CUDA device (default 0)\n"
    "      --devices LIST|all  several GPUs at once (0,1 or all), as cky parse --devices:\n"
    "                          the throughput is of all of them; rule evaluations and\n"
    "                          stage times are summed over the devices\n"
    "      --workspace N       work items per kernel launch (default 131072)\n"
    "      --json              one JSON object instead of the table; it adds the speed by\n"
    "                          sentence length: each bucket of W lengths (1..W, W+1..2W,\n"
    "                          ...) parsed as a batch of its own, best of K passes, and\n"
    "                          its stage times from one more pass with CUDA events\n"
    "      --bucket-width W    lengths per bucket (default 10; 0: no buckets)\n"
    "  -h, --help              this help\n";

/* The sentences of 1..maxlen words of a file. */
static int read_sentences(const char *path, int maxlen, sentence **out, int *n, long *words)
{
    io_lines *in;
    if (io_lines_open(path, &in))
        return cli_error("bench", "%s", cky_last_error());
    sentence *s = NULL;
    int cap = 0;
    char *line;
    size_t len;
    *n = 0;
    *words = 0;
    cky_status st;
    while (!(st = io_lines_next(in, &line, &len)) && line) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            sentence *b = realloc(s, (size_t)cap * sizeof *b);
            if (!b) {
                st = cky_fail(CKY_ERR_NOMEM, "out of memory");
                break;
            }
            s = b;
        }
        if ((st = sentence_from_line(line, len, &s[*n])))
            break;
        if (s[*n].n >= 1 && s[*n].n <= maxlen)
            *words += s[(*n)++].n;
        else
            sentence_free(&s[*n]);
    }
    io_lines_close(in);
    *out = s;
    if (st)
        return cli_error("bench", "%s", cky_last_error());
    return 0;
}

/* The end-to-end figure: the sentences through cky parse's own code (cli_parse_timed). */
typedef struct end_to_end {
    double total;   /* seconds, start-up included */
    double startup; /* seconds of start-up */
    double idle;    /* seconds the engine waited for the reader */
} end_to_end;

/* Write the n sentences of s into a temporary file, one per line, and run `cky parse` on it
 * in this process with the engine options of the bench (`devices`: the --devices argument or
 * NULL), the trees going to another temporary file; both are removed. Returns 0 or 1 after an
 * error on stderr. */
static int run_end_to_end(const char *gpath, const sentence *s, int n, int maxlen,
                          const parser_options *popt, const char *devices, end_to_end *out)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], in[4200], outp[4200], num[3][32];
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
        snprintf(num[0], sizeof num[0], "%d", maxlen);
        snprintf(num[1], sizeof num[1], "%d", popt->device);
        snprintf(num[2], sizeof num[2], "%d", popt->workspace);
        char *argv[16] = {"parse", "-g", (char *)gpath, "-i", in, "-o", outp, "--engine", "gpu",
                          "--max-length", num[0]};
        int argc = 11;
        argv[argc++] = devices ? "--devices" : "--device";
        argv[argc++] = devices ? (char *)devices : num[1];
        if (popt->workspace) {
            argv[argc++] = "--workspace";
            argv[argc++] = num[2];
        }
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

/* The statistics of every device of p, summed. */
static gpu_stats sum_stats(const parser *p)
{
    gpu_stats t = *gpu_engine_stats(parser_gpu_at(p, 0));
    for (int e = 1; e < parser_engine_count(p); e++) {
        const gpu_stats *x = gpu_engine_stats(parser_gpu_at(p, e));
        for (int k = 0; k < GPU_NSTAGE; k++)
            t.seconds[k] += x->seconds[k];
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            t.work_items[f] += x->work_items[f];
            t.family_evaluations[f] += x->family_evaluations[f];
        }
        t.rule_evaluations += x->rule_evaluations;
        t.sentences += x->sentences;
        t.sub_batches += x->sub_batches;
        t.oom_retries += x->oom_retries;
    }
    return t;
}

/* Profiling on or off on every device of p. */
static void profile_all(parser *p, int on)
{
    for (int e = 0; e < parser_engine_count(p); e++)
        gpu_engine_profile(parser_gpu_at(p, e), on);
}

/* One pass over all sentences; returns its wall time or -1. */
static double pass(parser *p, const sentence *s, int n, parse_result *r)
{
    double t0 = clock_seconds();
    if (parser_parse(p, s, n, r)) {
        cli_error("bench", "%s", cky_last_error());
        return -1;
    }
    double t = clock_seconds() - t0;
    for (int k = 0; k < n; k++)
        parse_result_clear(&r[k]);
    return t;
}

/* The speed of the sentences of lengths lo..hi, parsed as a batch of their own. */
typedef struct bucket {
    int lo, hi, sentences;
    long words;
    double seconds;           /* best of the timed passes */
    double stage[GPU_NSTAGE]; /* one profiled pass */
} bucket;

/* Measure every non-empty bucket of `width` lengths up to maxlen into out (room for
 * ceil(maxlen / width)): best of `repeat` passes without profiling, then one profiled pass
 * for the stage times. Leaves profiling on. Returns the number of buckets, or -1. */
static int measure_buckets(parser *p, const sentence *s, int n,
                           parse_result *r, int maxlen, int width, int repeat, bucket *out)
{
    sentence *sub = malloc((size_t)n * sizeof *sub); /* shallow copies: s owns the words */
    if (!sub) {
        cli_error("bench", "out of memory");
        return -1;
    }
    int nb = 0;
    for (int lo = 1; lo <= maxlen; lo += width) {
        bucket *b = &out[nb];
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
            double t = pass(p, sub, b->sentences, r);
            if (t < 0) {
                free(sub);
                return -1;
            }
            b->seconds = t < b->seconds ? t : b->seconds;
        }
        profile_all(p, 1);
        gpu_stats before = sum_stats(p);
        if (pass(p, sub, b->sentences, r) < 0) {
            free(sub);
            return -1;
        }
        gpu_stats after = sum_stats(p);
        for (int k = 0; k < GPU_NSTAGE; k++)
            b->stage[k] = after.seconds[k] - before.seconds[k];
        nb++;
    }
    free(sub);
    return nb;
}

/* The stage times as the members of a JSON object: {"lexicon": 0.0012, ...}. */
static void print_stages_json(const double *stage)
{
    printf("{");
    for (int k = 0; k < GPU_NSTAGE; k++)
        printf("%s\"%s\": %.6f", k ? ", " : "", gpu_stage_name((gpu_stage)k), stage[k]);
    printf("}");
}

/* The "buckets" member of the JSON output. */
static void print_buckets_json(const bucket *b, int nb, int width)
{
    printf(", \"bucket_width\": %d, \"buckets\": [", width);
    for (int k = 0; k < nb; k++) {
        printf("%s{\"min_length\": %d, \"max_length\": %d, \"sentences\": %d, "
               "\"words\": %ld, \"seconds\": %.6f, \"sentences_per_second\": %.1f, "
               "\"words_per_second\": %.1f, \"stage_seconds\": ",
               k ? ", " : "", b[k].lo, b[k].hi, b[k].sentences, b[k].words, b[k].seconds,
               b[k].seconds > 0 ? b[k].sentences / b[k].seconds : 0.0,
               b[k].seconds > 0 ? b[k].words / b[k].seconds : 0.0);
        print_stages_json(b[k].stage);
        printf("}");
    }
    printf("]");
}

int cli_bench(int argc, char **argv)
{
    enum { OPT_MAXLEN = 256, OPT_REPEAT, OPT_JSON, OPT_DEVICE, OPT_WORKSPACE, OPT_BUCKET,
           OPT_DEVICES };
    static const struct option longs[] = {
        {"grammar", required_argument, 0, 'g'},        {"input", required_argument, 0, 'i'},
        {"max-length", required_argument, 0, OPT_MAXLEN},
        {"repeat", required_argument, 0, OPT_REPEAT}, {"device", required_argument, 0, OPT_DEVICE},
        {"workspace", required_argument, 0, OPT_WORKSPACE},
        {"json", no_argument, 0, OPT_JSON},           {"help", no_argument, 0, 'h'},
        {"bucket-width", required_argument, 0, OPT_BUCKET},
        {"devices", required_argument, 0, OPT_DEVICES},
        {0, 0, 0, 0}};
    const char *gpath = NULL, *input = NULL, *devices = NULL;
    int maxlen = 40, repeat = 3, json = 0, width = 10, c, rc = 0;
    parser_options popt = parser_default_options();
    popt.engine = PARSER_ENGINE_GPU;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":g:i:h", longs, NULL)) != -1) {
        switch (c) {
        case 'g': gpath = optarg; break;
        case 'i': input = optarg; break;
        case OPT_MAXLEN:
            if (!cli_int(optarg, 1, 100000, &maxlen))
                return cli_usage_error("bench", "--max-length takes a number from 1 to 100000");
            break;
        case OPT_REPEAT:
            if (!cli_int(optarg, 1, 1000000, &repeat))
                return cli_usage_error("bench", "--repeat takes a positive number");
            break;
        case OPT_DEVICE:
            if (!cli_int(optarg, 0, 1024, &popt.device))
                return cli_usage_error("bench", "--device takes a device number (0, 1, ...)");
            break;
        case OPT_WORKSPACE:
            if (!cli_int(optarg, 1, 1 << 26, &popt.workspace))
                return cli_usage_error("bench", "--workspace takes a number from 1 to %d",
                                       1 << 26);
            break;
        case OPT_DEVICES:
            if ((rc = multi_read_devices("bench", optarg, &popt)))
                return rc;
            devices = optarg;
            break;
        case OPT_JSON: json = 1; break;
        case OPT_BUCKET:
            if (!cli_int(optarg, 0, 100000, &width))
                return cli_usage_error("bench", "--bucket-width takes a number from 0 to 100000");
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        case ':': return cli_usage_error("bench", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("bench", "unknown option %s", argv[optind - 1]);
        }
    }
    if (!gpath || !input)
        return cli_usage_error("bench", "give a grammar (-g) and an input file (-i)");
    popt.max_length = maxlen;
    if (cli_gpu_env("bench", &popt))
        return 1;
    sentence *s = NULL;
    int n = 0;
    long words = 0;
    grammar *g = NULL;
    parser *p = NULL;
    parse_result *r = NULL;
    bucket *buckets = NULL;
    int nbuckets = 0;
    if ((rc = read_sentences(input, maxlen, &s, &n, &words)))
        goto done;
    if (n == 0) {
        rc = cli_error("bench", "%s: no sentence of 1 to %d words", input, maxlen);
        goto done;
    }
    double t0 = clock_seconds();
    if ((rc = guard_check_paths("bench", gpath, NULL, 0, NULL, 0)))
        goto done;
    if (grammar_load(gpath, &g) || parser_new(g, &popt, &p)) {
        rc = cli_error("bench", "%s", cky_last_error());
        goto done;
    }
    double setup = clock_seconds() - t0;
    gpu_engine *e = parser_gpu(p);
    if (!(r = calloc((size_t)n, sizeof *r))) {
        rc = cli_error("bench", "out of memory");
        goto done;
    }
    double warm = pass(p, s, n, r), best = INFINITY;
    gpu_stats before = sum_stats(p);
    for (int k = 0; k < repeat && warm >= 0; k++) {
        double t = pass(p, s, n, r);
        if (t < 0) {
            warm = -1;
            break;
        }
        best = t < best ? t : best;
    }
    gpu_stats after = sum_stats(p);
    profile_all(p, 1);
    double profiled = warm < 0 ? -1 : pass(p, s, n, r);
    gpu_stats prof = sum_stats(p);
    if (json && width > 0 && warm >= 0 && profiled >= 0) {
        if (!(buckets = calloc((size_t)(maxlen / width + 1), sizeof *buckets))) {
            rc = cli_error("bench", "out of memory");
            goto done;
        }
        if ((nbuckets = measure_buckets(p, s, n, r, maxlen, width, repeat, buckets)) < 0) {
            rc = 1;
            goto done;
        }
    }
    double peak = 0;
    if (warm < 0 || profiled < 0 || kpeak_add_max(300, &peak, NULL)) {
        rc = warm < 0 || profiled < 0 ? 1 : cli_error("bench", "%s", cky_last_error());
        goto done;
    }
    peak *= parser_engine_count(p); /* the peak of all the devices (one measured) */
    char device[1024] = "";
    for (int k = 0; k < parser_engine_count(p); k++)
        snprintf(device + strlen(device), sizeof device - strlen(device), "%s%s", k ? "; " : "",
                 gpu_engine_device(parser_gpu_at(p, k)));
    int width_items = gpu_engine_width(e);
    /* the end-to-end run makes its own parser: this one gives the device memory back */
    parser_free(p);
    p = NULL;
    end_to_end e2e = {0};
    if ((rc = run_end_to_end(gpath, s, n, maxlen, &popt, devices, &e2e)))
        goto done;
    double e2e_rate = n / e2e.total, e2e_run = e2e.total - e2e.startup;
    double evals = (after.rule_evaluations - before.rule_evaluations) / repeat;
    double stage[GPU_NSTAGE];
    for (int k = 0; k < GPU_NSTAGE; k++)
        stage[k] = prof.seconds[k] - after.seconds[k];
    double xx_evals = prof.family_evaluations[CODEGEN_XX] - after.family_evaluations[CODEGEN_XX];
    double xx_rate = stage[GPU_STAGE_XX] > 0 ? xx_evals / stage[GPU_STAGE_XX] : 0;
    if (json) {
        printf("{\"grammar\": \"%s\", \"input\": \"%s\", \"device\": \"%s\", \"sentences\": %d, "
               "\"words\": %ld, \"max_length\": %d, \"setup_seconds\": %.3f, "
               "\"warmup_seconds\": %.4f, \"seconds\": %.4f, \"sentences_per_second\": %.1f, "
               "\"words_per_second\": %.1f, \"rule_evaluations\": %.6g, "
               "\"rule_evaluations_per_second\": %.6g, \"peak_per_second\": %.6g, "
               "\"fraction_of_peak\": %.4f, \"xx_rule_evaluations_per_second\": %.6g, "
               "\"xx_fraction_of_peak\": %.4f, \"workspace\": %d, \"stage_seconds\": {",
               gpath, input, device, n, words, maxlen, setup, warm, best,
               n / best, words / best, evals, evals / best, peak, evals / best / peak, xx_rate,
               xx_rate / peak, width_items);
        for (int k = 0; k < GPU_NSTAGE; k++)
            printf("%s\"%s\": %.4f", k ? ", " : "", gpu_stage_name((gpu_stage)k), stage[k]);
        printf("}, \"profiled_pass_seconds\": %.4f", profiled);
        printf(", \"end_to_end\": {\"seconds\": %.4f, \"startup_seconds\": %.4f, "
               "\"seconds_without_startup\": %.4f, \"sentences_per_second\": %.1f, "
               "\"sentences_per_second_without_startup\": %.1f, \"fraction_of_kernel_pass\": "
               "%.4f, \"fraction_of_kernel_pass_without_startup\": %.4f, "
               "\"engine_idle_seconds\": %.4f}",
               e2e.total, e2e.startup, e2e_run, e2e_rate, n / e2e_run, e2e_rate / (n / best),
               n / e2e_run / (n / best), e2e.idle);
        print_buckets_json(buckets, nbuckets, width);
        printf("}\n");
    } else {
        printf("grammar      %s\ninput        %s (%d sentences of 1..%d words, %ld words)\n"
               "device       %s\nworkspace    %d work items per launch\n"
               "setup        %.2f s (grammar, kernels from the cache)\n"
               "warm-up      %.3f s\nbest of %d   %.3f s: %.1f sentences/s, %.0f words/s\n"
               "rule evals   %.4g per pass, %.4g /s = %.1f%% of the add+max peak %.4g /s\n"
               "XX kernels   %.4g /s = %.1f%% of peak\n"
               "stages (profiled pass, %.3f s; device stages by CUDA events):\n",
               gpath, input, n, maxlen, words, device, width_items, setup,
               warm, repeat, best,
               n / best, words / best, evals, evals / best, 100 * evals / best / peak, peak,
               xx_rate, 100 * xx_rate / peak, profiled);
        for (int k = 0; k < GPU_NSTAGE; k++)
            printf("  %-15s %8.4f s\n", gpu_stage_name((gpu_stage)k), stage[k]);
        printf("cky parse    %.3f s with start-up (%.2f s): %.1f sentences/s = %.1f%% of the "
               "kernel pass\n             %.3f s without: %.1f sentences/s = %.1f%% (engine "
               "idle %.3f s)\n", e2e.total, e2e.startup, e2e_rate, 100 * e2e_rate / (n / best),
               e2e_run, n / e2e_run, 100 * n / e2e_run / (n / best), e2e.idle);
    }
done:
    for (int k = 0; k < n; k++)
        sentence_free(&s[k]);
    free(s);
    free(r);
    free(buckets);
    parser_free(p);
    grammar_free(g);
    return rc;
}
