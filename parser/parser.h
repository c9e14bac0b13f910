/* parser: the parsing front door shared by all engines.
 *
 * An engine turns sentences into charts: `ref` is the exact double-precision reference
 * (parser/ref.h), `cpu` the generated float32 kernels on CPU threads, `gpu` the same kernels
 * on an NVIDIA GPU. A decoder (parser/decode.h; the Viterbi decoder: viterbi/ for the best
 * tree, un-annotated into a Penn Treebank tree) turns the charts into results. Sentences
 * come back in input order, one result per sentence, whatever happens to the others. */
#ifndef CKY_PARSER_H
#define CKY_PARSER_H

#include "../corpus_tools/tree.h"
#include "../grammar/grammar.h"
#include "../util/progress.h"
#include "../viterbi/viterbi.h"
#include "sentence.h"

typedef enum parser_engine { PARSER_ENGINE_REF, PARSER_ENGINE_CPU, PARSER_ENGINE_GPU } parser_engine;

/* Which tree: the best derivation (Viterbi), or the tree that maximizes the product of its
 * anchored rules' posteriors (max-rule, maxrule/maxrule.h; engine ref, native .gr only). */
typedef enum parser_decoder { PARSER_DECODER_VITERBI, PARSER_DECODER_MAXRULE } parser_decoder;

#define PARSER_MAX_ENGINES 64 /* the most engines of a pool (--devices) */

typedef struct parser_options {
    parser_engine engine;
    viterbi_mode backtrace;
    int threads;    /* CPU worker threads (0: one per core) */
    int max_length; /* longer sentences are not parsed (PARSE_TOO_LONG) */
    int device;     /* CUDA device of the gpu engine */
    int workspace;  /* work items per kernel launch (0: the engine's default) */
    int block_tiles; /* gpu: workspace tiles per thread block of a binary kernel, 1 to 8 (0:
                        the default, 4; the command line reads CKY_GPU_BLOCK_TILES) */
    int chunk;       /* gpu: tiles per chunk of a binary kernel's grid (-1: the defaults, one
                        per two SMs for max-plus kernels, per four for sum-product ones; 0:
                        each code block over all tiles; CKY_GPU_CHUNK) */
    int part_mb;     /* gpu, max-rule: MiB for the sum-product kernels' partial slots (0: the
                        default; CKY_GPU_SUM_PART_MB) */
    parser_decoder decoder;
    const char *cache_dir; /* kernel cache of the cpu and gpu engines (NULL: $CKY_CACHE, else
                              ~/.cache/cky; "off": none) */
    int engines;     /* engines at once (parser/pool.h), each on its own thread, fed chunks of
                        a batch from one queue (0 or 1: one engine, no pool). gpu: one per
                        device devices[0..engines); cpu and ref: that many engines of the kind
                        (standing in for devices), sharing `threads` */
    int devices[PARSER_MAX_ENGINES]; /* gpu with engines > 1: the CUDA devices */
    int pool_chunk;  /* sentences per queue item of the pool (0: the batch cut by estimated
                        work, words cubed, into one item per engine for gpu, the fewest
                        launches, and four per engine for cpu and ref) */
    int fail_engine; /* test hook: 0 none; k: engine k-1 of the pool fails, as a device error
                        would, on its chunk after its first fail_after chunks (with engines
                        1, a pool of one engine: nothing is left to parse after it) */
    int fail_after;
    progress_sink progress; /* reports of the kernel compilation (util/progress.h; default:
                               none) */
} parser_options;

/* An engine of a pool that failed and was retired (its chunk went to the others). */
typedef struct parser_failure {
    int engine;        /* index in the pool (the gpu engine: of devices[]) */
    const char *error; /* what went wrong (NULL if even that could not be kept) */
} parser_failure;

/* Defaults: engine ref, exact back-trace, one thread per core, max length 200, device 0,
 * the engines' workspace width and grid settings, the Viterbi decoder. */
parser_options parser_default_options(void);

typedef enum parse_outcome {
    PARSE_OK,       /* tree and score are set */
    PARSE_EMPTY,    /* the sentence has no words */
    PARSE_TOO_LONG, /* longer than max_length */
    PARSE_NO_PARSE, /* the grammar derives no tree (root score -inf) */
    PARSE_FAILED    /* an error (message in result.error) */
} parse_outcome;

typedef struct parse_result {
    parse_outcome outcome;
    double score;  /* Viterbi: root log score; max-rule: the tree's max-rule score (sum of the
                      logs of its rules' posteriors); -inf unless PARSE_OK */
    double loglik; /* max-rule: log P(sentence) (may be finite without a tree); else -inf */
    tree *tree;    /* Penn Treebank tree (un-annotated); NULL unless PARSE_OK */
    char *error;   /* for PARSE_FAILED: what went wrong (malloc'ed) */
} parse_result;

typedef struct parser parser;

/* The decoder to use with g when none is asked for: max-rule, the Berkeley parser's default,
 * where g gives it exactly (a native .gr grammar), else Viterbi (a text export, whose unary
 * closure is the Viterbi one). */
parser_decoder parser_default_decoder(const grammar *g);

/* The engine to use when none is asked for: gpu where a CUDA device is usable, else cpu. */
parser_engine parser_default_engine(void);

/* A parser for grammar g (which must outlive it). Fails with CKY_ERR_NO_DEVICE for the gpu
 * engine on a machine without one, with CKY_ERR_UNSUPPORTED for the max-rule decoder with an
 * engine other than ref or a grammar without the sum closure (a text export). */
cky_status parser_new(const grammar *g, const parser_options *opt, parser **out);

/* Parse n sentences; out[k] is the result of s[k]. A failure of one sentence (no parse, too
 * long, even an error) is reported in its result and does not stop the others; the return
 * value is not CKY_OK only if the whole batch could not be attempted. */
cky_status parser_parse(parser *p, const sentence *s, int n, parse_result *out);

/* Release what a result holds. */
void parse_result_clear(parse_result *r);

/* The gpu engine of a parser (NULL for the other engines; the first of a pool), for
 * statistics. */
struct gpu_engine *parser_gpu(const parser *p);

/* The number of engines of a parser (1 without a pool) and the gpu engine of engine k (NULL
 * for the other engines). */
int parser_engine_count(const parser *p);
struct gpu_engine *parser_gpu_at(const parser *p, int k);

/* The engines of the pool retired so far (in the order they failed; none without a pool):
 * *out points at them until the next parser_parse or parser_free. Returns their number. */
int parser_failures(const parser *p, const parser_failure **out);

void parser_free(parser *p);

#endif
