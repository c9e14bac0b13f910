/* bench: what cky bench measures (cli/bench.c) and prints (cli/bench_print.c): one row per
 * decoder, with its passes, stages, speed by sentence length and end-to-end figure. Internal
 * to the command line. */
#ifndef CKY_CLI_BENCH_H
#define CKY_CLI_BENCH_H

#include "../codegen/codegen.h"
#include "../gpu/gpu.h"
#include "../parser/parser.h"
#include "bench_pass.h"

/* The speed of the sentences of lengths lo..hi, parsed as a batch of their own. */
typedef struct bench_bucket {
    int lo, hi, sentences;
    long words;
    double seconds;           /* best of the timed passes */
    double stage[GPU_MAX_STAGES]; /* one profiled pass (gpu engine; the row's stages) */
} bench_bucket;

/* The end-to-end figure: the sentences through cky parse's own code (cli_parse_timed). */
typedef struct bench_e2e {
    double total;   /* seconds, start-up included */
    double startup; /* seconds of start-up */
    double idle;    /* seconds the engine waited for the reader */
} bench_e2e;

/* One pass of the engine in one semiring, from the profiled pass. */
typedef struct bench_pass_fig {
    int pass, semiring;
    double evals, seconds; /* rule evaluations, device seconds of its rule kernels */
} bench_pass_fig;

/* How a row's per-pass figures were found. */
typedef enum bench_pass_source {
    BENCH_PASS_NONE,   /* not known: the engine keeps no per-pass figures and the decoder
                          has several passes */
    BENCH_PASS_ENGINE, /* the engine's per-pass statistics */
    BENCH_PASS_TOTALS  /* the engine's totals, the decoder having one pass */
} bench_pass_source;

/* What the pruned passes did over the sentences of one pass (--prune). */
typedef struct bench_prune {
    int nlevel;
    double kept[8], possible[8]; /* items kept per coarse level, and of every item there */
    double seconds[3];           /* coarse passes, final pass: summed over the threads; the
                                    device cascade's kernels (CUDA events, 0 without) */
    long fallback[2];            /* sentences parsed again: accurate, exhaustive */
} bench_prune;

/* One row: a decoder on the engine (the semiring of its passes picks the peak it is held
 * to). */
typedef struct bench_row {
    const decoder_def *dec;
    int supported;
    char *reason;               /* why not (malloc'ed), when not supported */
    double setup, warm, best;   /* seconds */
    /* gpu engine */
    double profiled;            /* the profiled pass's wall seconds */
    double evals;               /* rule evaluations per timed pass */
    int nstage;                 /* the engine's and the decoder's stages */
    const char *stage_name[GPU_MAX_STAGES];
    double stage[GPU_MAX_STAGES]; /* of the profiled pass */
    double xx_evals;            /* the XX kernels' rule evaluations in the profiled pass */
    long sub_batches, oom_retries; /* over the timed passes (an out-of-memory error halves
                                      a sub-batch and parses it again) */
    bench_pass_source source;
    int npass;
    bench_pass_fig pass[BENCH_NPASS * BENCH_NSEMIRING];
    bench_bucket *buckets;
    int nbuckets;
    bench_e2e e2e;              /* the same sentences through cky parse */
    bench_prune prune;          /* with --prune: of the warm-up pass */
} bench_row;

/* The sentences parsed and the peaks they are held to. */
typedef struct bench_run {
    const sentence *s;
    int n;
    long words;
    int maxlen, repeat, json, width, gpu;
    parser_prune prune;
    const grammar *g;
    double peak[GPU_PEAK_NKIND]; /* rule evaluations/s of all devices (gpu engine) */
    int peaks_measured;
} bench_run;

/* What the output names besides the rows. */
typedef struct bench_header {
    const char *gpath, *input, *engine, *device; /* device: "cpu" on the cpu engine */
    int workspace, threads;
    double grammar_seconds;
    const char *arith; /* of the exhaustive Viterbi pass's binary rules: "float", "fixed" */
} bench_header;

/* The peak kernel of a semiring's rule evaluation. */
gpu_peak_kind bench_semiring_peak(codegen_semiring sr);

/* The report on stdout: one JSON object, or the text table. */
void bench_print_json(const bench_run *b, const bench_header *h, const bench_row *rows,
                      int nrow);
void bench_print_text(const bench_run *b, const bench_header *h, const bench_row *rows,
                      int nrow);

#endif
