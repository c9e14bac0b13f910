/* bench_print: cky bench's report (see bench.h), as JSON or as a text table. */
#include <string.h>
#include <stdio.h>

#include "bench.h"

gpu_peak_kind bench_semiring_peak(codegen_semiring sr)
{
    return sr == CODEGEN_SEMIRING_SUM_PRODUCT ? GPU_PEAK_SUM_PRODUCT : GPU_PEAK_ADD_MAX;
}

/* `s` as a JSON string. */
static void print_json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    putchar('"');
}

/* The stage times of row w as the members of a JSON object: {"lexicon": 0.0012, ...}; {}
 * for the cpu engine. */
static void print_stages_json(const bench_row *w, const double *stage, int gpu)
{
    printf("{");
    for (int k = 0; gpu && k < w->nstage; k++)
        printf("%s\"%s\": %.6f", k ? ", " : "", w->stage_name[k], stage[k]);
    printf("}");
}

/* The "buckets" member of the JSON output. */
static void print_buckets_json(const bench_row *w, const bench_bucket *b, int nb, int width,
                               int gpu)
{
    printf(", \"bucket_width\": %d, \"buckets\": [", width);
    for (int k = 0; k < nb; k++) {
        printf("%s{\"min_length\": %d, \"max_length\": %d, \"sentences\": %d, "
               "\"words\": %ld, \"seconds\": %.6f, \"sentences_per_second\": %.1f, "
               "\"words_per_second\": %.1f, \"stage_seconds\": ",
               k ? ", " : "", b[k].lo, b[k].hi, b[k].sentences, b[k].words, b[k].seconds,
               b[k].seconds > 0 ? b[k].sentences / b[k].seconds : 0.0,
               b[k].seconds > 0 ? b[k].words / b[k].seconds : 0.0);
        print_stages_json(w, b[k].stage, gpu);
        printf("}");
    }
    printf("]");
}

/* The rate of x per y seconds (0 without time). */
static double rate(double x, double y)
{
    return y > 0 ? x / y : 0;
}

/* The members of a supported row (after an opening "{" or ", "), without braces. */
static void print_row_members_json(const bench_run *b, const bench_row *w)
{
    printf("\"setup_seconds\": %.3f, \"warmup_seconds\": %.4f, \"seconds\": %.4f, "
           "\"sentences_per_second\": %.1f, \"words_per_second\": %.1f, \"prune\": \"%s\"",
           w->setup, w->warm, w->best, b->n / w->best, b->words / w->best,
           parser_prune_name(b->prune));
    if (b->prune) {
        const bench_prune *pr = &w->prune;
        printf(", \"pruned\": {\"coarse_seconds\": %.4f, \"final_seconds\": %.4f, "
               "\"coarse_kernel_seconds\": %.6f, \"fallbacks_accurate\": %ld, "
               "\"fallbacks_exhaustive\": %ld, \"levels\": [",
               pr->seconds[0], pr->seconds[1], pr->seconds[2], pr->fallback[0], pr->fallback[1]);
        for (int l = 0; l < pr->nlevel; l++)
            printf("%s{\"level\": %d, \"kept\": %.0f, \"share_kept\": %.6g}", l ? ", " : "",
                   l, pr->kept[l], rate(pr->kept[l], pr->possible[l]));
        printf("]}");
    }
    if (b->gpu) {
        double peak = b->peak[bench_semiring_peak(w->dec->semiring)];
        double xx = rate(w->xx_evals, w->stage[GPU_STAGE_XX]);
        printf(", \"rule_evaluations\": %.6g, \"rule_evaluations_per_second\": %.6g, "
               "\"peak_per_second\": %.6g, \"fraction_of_peak\": %.4f, \"passes_from\": \"%s\", "
               "\"passes\": [",
               w->evals, w->evals / w->best, peak, rate(w->evals / w->best, peak),
               w->source == BENCH_PASS_ENGINE ? "engine" : w->source == BENCH_PASS_TOTALS ? "totals"
                                                                              : "none");
        for (int k = 0; k < w->npass; k++) {
            const bench_pass_fig *f = &w->pass[k];
            double pk = b->peak[bench_semiring_peak((codegen_semiring)f->semiring)];
            double rt = rate(f->evals, f->seconds);
            printf("%s{\"pass\": \"%s\", \"semiring\": \"%s\", \"rule_evaluations\": %.6g, "
                   "\"seconds\": %.6f, \"rule_evaluations_per_second\": %.6g, "
                   "\"peak\": \"%s\", \"peak_per_second\": %.6g, \"fraction_of_peak\": %.4f}",
                   k ? ", " : "", bench_pass_name(f->pass), bench_semiring_name(f->semiring),
                   f->evals, f->seconds, rt,
                   gpu_peak_kind_name(bench_semiring_peak((codegen_semiring)f->semiring)), pk,
                   rate(rt, pk));
        }
        /* the XX kernels against the peak of the decoder's semiring */
        printf("], \"xx_rule_evaluations_per_second\": %.6g, \"xx_fraction_of_peak\": %.4f, "
               "\"stage_seconds\": ",
               xx, rate(xx, peak));
        print_stages_json(w, w->stage, 1);
        printf(", \"profiled_pass_seconds\": %.4f, \"sub_batches\": %ld, \"oom_retries\": %ld",
               w->profiled, w->sub_batches, w->oom_retries);
    }
    const bench_e2e *e = &w->e2e;
    double kernel = b->n / w->best, run = e->total - e->startup;
    printf(", \"end_to_end\": {\"seconds\": %.4f, \"startup_seconds\": %.4f, "
           "\"seconds_without_startup\": %.4f, \"sentences_per_second\": %.1f, "
           "\"sentences_per_second_without_startup\": %.1f, \"fraction_of_kernel_pass\": "
           "%.4f, \"fraction_of_kernel_pass_without_startup\": %.4f, "
           "\"engine_idle_seconds\": %.4f}",
           e->total, e->startup, run, rate(b->n, e->total), rate(b->n, run),
           rate(rate(b->n, e->total), kernel), rate(rate(b->n, run), kernel), e->idle);
    print_buckets_json(w, w->buckets, w->nbuckets, b->width, b->gpu);
}

void bench_print_json(const bench_run *b, const bench_header *h, const bench_row *rows,
                      int nrow)
{
    printf("{\"grammar\": ");
    print_json_string(h->gpath);
    printf(", \"input\": ");
    print_json_string(h->input);
    printf(", \"engine\": \"%s\", \"device\": ", h->engine);
    print_json_string(h->device);
    printf(", \"sentences\": %d, \"words\": %ld, \"max_length\": %d, \"repeat\": %d, "
           "\"grammar_seconds\": %.3f, \"arith\": \"%s\"",
           b->n, b->words, b->maxlen, b->repeat, h->grammar_seconds, h->arith);
    if (b->gpu)
        printf(", \"workspace\": %d, \"peak_add_max_per_second\": %.6g, "
               "\"peak_sum_product_per_second\": %.6g",
               h->workspace, b->peak[GPU_PEAK_ADD_MAX], b->peak[GPU_PEAK_SUM_PRODUCT]);
    else
        printf(", \"threads\": %d", h->threads);
    for (int k = 0; k < nrow; k++) /* the first row that ran, as before there were rows */
        if (rows[k].supported) {
            printf(", \"decoder\": \"%s\", ", rows[k].dec->name);
            print_row_members_json(b, &rows[k]);
            break;
        }
    printf(", \"decoders\": [");
    for (int k = 0; k < nrow; k++) {
        printf("%s{\"decoder\": \"%s\", \"supported\": %s", k ? ", " : "", rows[k].dec->name,
               rows[k].supported ? "true" : "false");
        if (rows[k].supported) {
            printf(", ");
            print_row_members_json(b, &rows[k]);
        } else {
            printf(", \"reason\": ");
            print_json_string(rows[k].reason ? rows[k].reason : "");
        }
        printf("}");
    }
    printf("]}\n");
}

/* The text rows (after the header). */
static void print_row_text(const bench_run *b, const bench_row *w)
{
    if (!w->supported) {
        printf("%-12s unsupported: %s\n", w->dec->name, w->reason ? w->reason : "");
        return;
    }
    printf("%-12s setup %.2f s, warm-up %.3f s, best of %d %.3f s: %.1f sentences/s, "
           "%.0f words/s\n",
           w->dec->name, w->setup, w->warm, b->repeat, w->best, b->n / w->best,
           b->words / w->best);
    if (b->prune) {
        const bench_prune *pr = &w->prune;
        printf("  pruned       %s: coarse passes %.3f s, final pass %.3f s (the warm-up pass, "
               "summed over the threads)", parser_prune_name(b->prune), pr->seconds[0],
               pr->seconds[1]);
        if (pr->seconds[2] > 0)
            printf(", the device cascade's kernels %.3f s", pr->seconds[2]);
        printf("; parsed again: %ld accurate, %ld exhaustive\n  kept         ",
               pr->fallback[0], pr->fallback[1]);
        for (int l = 0; l < pr->nlevel; l++)
            printf("%slevel %d %.3g%%", l ? ", " : "", l, 100 * rate(pr->kept[l], pr->possible[l]));
        printf(" of the items of each level\n");
    }
    const bench_e2e *e = &w->e2e;
    double kernel = b->n / w->best, run = e->total - e->startup;
    printf("  cky parse    %.3f s with start-up (%.2f s): %.1f sentences/s = %.1f%% of the pass; "
           "%.3f s without: %.1f sentences/s = %.1f%% (engine idle %.3f s)\n",
           e->total, e->startup, rate(b->n, e->total), 100 * rate(rate(b->n, e->total), kernel),
           run, rate(b->n, run), 100 * rate(rate(b->n, run), kernel), e->idle);
    if (!b->gpu)
        return;
    gpu_peak_kind kind = bench_semiring_peak(w->dec->semiring);
    double peak = b->peak[kind];
    printf("  rule evals   %.4g per pass, %.4g /s = %.1f%% of the %s peak\n", w->evals,
           w->evals / w->best, 100 * rate(w->evals / w->best, peak), gpu_peak_kind_name(kind));
    for (int k = 0; k < w->npass; k++) {
        const bench_pass_fig *f = &w->pass[k];
        gpu_peak_kind pk = bench_semiring_peak((codegen_semiring)f->semiring);
        double rt = rate(f->evals, f->seconds);
        printf("  %-12s %s, %.4g rule evals in %.4f s of rule kernels: %.4g /s = %.1f%% of the "
               "%s peak\n",
               bench_pass_name(f->pass), bench_semiring_name(f->semiring), f->evals, f->seconds,
               rt, 100 * rate(rt, b->peak[pk]), gpu_peak_kind_name(pk));
    }
    printf("  sub-batches  %ld in the timed passes, %ld out-of-memory retries\n", w->sub_batches,
           w->oom_retries);
    if (w->source == BENCH_PASS_NONE)
        printf("  passes       no per-pass figures: the engine does not keep them yet\n");
    double xx = rate(w->xx_evals, w->stage[GPU_STAGE_XX]);
    printf("  XX kernels   %.4g /s = %.1f%% of the %s peak\n"
           "  stages (profiled pass, %.3f s; device stages by CUDA events, XT, TX and TT "
           "overlapping XX):\n",
           xx, 100 * rate(xx, peak), gpu_peak_kind_name(kind), w->profiled);
    for (int k = 0; k < w->nstage; k++)
        printf("    %-15s %8.4f s\n", w->stage_name[k], w->stage[k]);
}

void bench_print_text(const bench_run *b, const bench_header *h, const bench_row *rows,
                      int nrow)
{
    printf("grammar      %s\ninput        %s (%d sentences of 1..%d words, %ld words)\n",
           h->gpath, h->input, b->n, b->maxlen, b->words);
    if (b->gpu)
        printf("engine       gpu: %s\nworkspace    %d work items per launch\n", h->device,
               h->workspace);
    else
        printf("engine       cpu, %d threads\n", h->threads);
    printf("grammar load %.2f s\n", h->grammar_seconds);
    printf("arithmetic   %s (the exhaustive Viterbi pass's binary rules)\n",
           strcmp(h->arith, "fixed") ? "float32" : "fixed point, int32 in units of 2^-16 nats");
    if (b->gpu)
        printf("peak (add+max)      %.4g rule evaluations/s (one add and one max per rule)\n"
               "peak (sum-product)  %.4g rule evaluations/s (one fused multiply-add per rule)\n",
               b->peak[GPU_PEAK_ADD_MAX], b->peak[GPU_PEAK_SUM_PRODUCT]);
    for (int k = 0; k < nrow; k++)
        print_row_text(b, &rows[k]);
}

