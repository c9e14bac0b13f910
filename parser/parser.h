/* parser: the parsing front door shared by all engines and decoders.
 *
 * An engine computes the passes a decoder asks for: `ref` is the exact double-precision
 * reference (engines/ref), `cpu` the generated float32 kernels on CPU threads (engines/cpu),
 * `gpu` the same kernels on an NVIDIA GPU (gpu/). A decoder (decoders/decoder.h: Viterbi,
 * max-rule) turns what they computed into trees; the table of decoders (parser/decoders.c)
 * and the names of engines and decoders are here, for every caller (the command line, the
 * C API, Python). Sentences come back in input order, one result per sentence, whatever
 * happens to the others. */
#ifndef CKY_PARSER_H
#define CKY_PARSER_H

#include "../corpus_tools/sentence.h"
#include "../corpus_tools/tree.h"
#include "../decoders/decoder.h"
#include "../decoders/viterbi/viterbi.h"
#include "../grammar/grammar.h"
#include "../util/progress.h"
#include "pool.h"

typedef enum parser_engine { PARSER_ENGINE_REF, PARSER_ENGINE_CPU, PARSER_ENGINE_GPU } parser_engine;

/* Which tree: the best derivation (Viterbi, decoders/viterbi), or the tree that maximizes
 * the product of its anchored rules' posteriors (max-rule, decoders/maxrule). The rows of
 * the decoders' table (parser/decoders.c), in this order. */
typedef enum parser_decoder { PARSER_DECODER_VITERBI, PARSER_DECODER_MAXRULE } parser_decoder;

#define PARSER_NDECODER 2

/* Pruning: none (the exhaustive passes, exact), or the Berkeley parser's coarse-to-fine
 * cascade with its default or -accurate thresholds (decoders/pruned: its masks, then the
 * decoder's final pass within them). */
typedef enum parser_prune { PARSER_PRUNE_NONE, PARSER_PRUNE_BERKELEY, PARSER_PRUNE_ACCURATE } parser_prune;

/* The prune mode named `name` ("none", "berkeley", "accurate"): 1 with *out set, or 0; its
 * name; the names for messages. */
int parser_prune_find(const char *name, parser_prune *out);
const char *parser_prune_name(parser_prune p);
const char *parser_prune_names(void);

/* The decoder `id` of the table; NULL for an unknown one. */
const decoder_def *parser_decoder_def(parser_decoder id);

/* The decoder named `name` (decoder_def.name: "viterbi", "maxrule"): 1 with *out set, or 0. */
int parser_decoder_find(const char *name, parser_decoder *out);

/* The engine named `name` ("ref", "cpu", "gpu"): 1 with *out set, or 0; and its name. */
int parser_engine_find(const char *name, parser_engine *out);
const char *parser_engine_name(parser_engine e);

/* The names of the decoders, or of the engines, joined by ", " ("viterbi, maxrule"), for
 * messages and help. */
const char *parser_decoder_names(void);
const char *parser_engine_names(void);

#define PARSER_MAX_ENGINES 64 /* the most engines of a pool (--devices) */

/* Tuning knobs of the gpu engine: they change speed and memory, never results (the
 * command line reads them from the developers' channel, CKY_TUNE: docs/development.md). */
typedef struct parser_tune {
    int block_tiles; /* workspace tiles per thread block of a binary kernel, 1 to 8 (0: the
                        default, 4) */
    int chunk;       /* tiles per chunk of a binary kernel's grid (-1: the defaults, one per
                        two SMs for max-plus kernels, per four for sum-product ones; 0: each
                        code block over all tiles) */
    int part_mb;     /* MiB for the sum-product kernels' partial slots (0: the default) */
    const char *ptxas; /* one option for ptxas on every kernel (NULL: the default, -O3 with
                          the retries of codegen/build.c) */
    int prune_host;  /* 1: the gpu engine's pruned cascade on host threads, as the other
                        engines' (0, the default: on the device, prune/prune_gpu.h) */
    int prune_chunk; /* sentences per launch of the device cascade (0: the default, a quarter
                        of the batch within [256, 512]) */
    int prune_lanes; /* lanes of the device cascade, 1 to 4 (0: the default, 2) */
    int prune_team;  /* host threads for each sentence's cascade when a batch has fewer
                        sentences than host threads (0: the default, those threads shared
                        among its sentences, at most 16 each and no more than the cores
                        allow) */
    int kernels_wait; /* 1: the gpu engine parses once every generated kernel is compiled
                         (cky bench, which times them); 0, the default: a grammar's first
                         run parses at once, the generic kernel standing in for each kernel
                         still compiling (gpu/gpu.h: GPU_KERNELS_EARLY; the same bits) */
} parser_tune;

/* Test hooks: the tests' ways into the pool (never set them otherwise). */
typedef struct parser_test_hooks {
    int pool_chunk;  /* sentences per queue item of the pool (0: the batch cut by estimated
                        work, words cubed, into one item per engine for gpu, the fewest
                        launches, and four per engine for cpu and ref) */
    int fail_engine; /* 0 none; k: engine k-1 of the pool fails, as a device error would, on
                        its chunk after its first fail_after chunks (with engines 1, a pool
                        of one engine: nothing is left to parse after it) */
    int fail_after;
    int generic_kernels; /* 1: the gpu engine runs the generic kernel only
                            (GPU_KERNELS_GENERIC: the generated kernels' bits) */
} parser_test_hooks;

/* The Berkeley parser's output options, which only the pruned decoder gives (parser_new
 * refuses them without pruning, naming the option): its trees binarized (-binarize), its
 * variational max-c (-variational, max-rule only), Viterbi's binarized trees with substates
 * and inside scores in the labels (-substates, -scores), and each result's scores as the jar
 * computes them (parse_result.bk_*: -tree_likelihood, -confidence). */
typedef struct parser_berkeley_output {
    int binarize, variational, tree_scores;
    int substates, scores; /* Viterbi's binarized trees: labels with the node's substate and
                              inside score (-viterbi -binarize -substates / -scores) */
} parser_berkeley_output;

/* The arithmetic of the exhaustive Viterbi pass's binary rules on the cpu and gpu engines:
 * float32, or int32 fixed point (util/fixedpoint.h; CHART_FIXED charts). AUTO: fixed point
 * on the cpu engine and on a GPU with Hopper's DPX instructions (compute capability 9.0 or
 * later), where it is faster, if the grammar's weights fit (codegen_fixed_check); float32
 * otherwise. FIXED where they do not fit: CKY_ERR_LIMIT from parser_new. */
typedef enum parser_arith { PARSER_ARITH_AUTO, PARSER_ARITH_FLOAT, PARSER_ARITH_FIXED } parser_arith;

typedef struct parser_options {
    parser_engine engine;
    parser_decoder decoder; /* with pruning: its final pass */
    parser_arith arith;     /* exhaustive Viterbi's binary rules (default AUTO) */
    parser_prune prune;
    int prune_fallback;     /* pruned: a sentence without a tree is parsed again with the
                               accurate thresholds, then exhaustively (0: the jar's (())) */
    int prune_levels;       /* pruned: results carry the coarse levels' statistics */
    int kbest;              /* max-rule, > 1: up to kbest trees per sentence, the Berkeley
                               parser's -kbest lists (parse_result.rest); the pruned decoder
                               on the ref and cpu engines, --prune none on ref; 0 or 1: one */
    viterbi_mode backtrace; /* exhaustive Viterbi (pruned Viterbi takes the jar's) */
    parser_berkeley_output berkeley; /* the jar's output options (pruned decoder only) */
    int threads;    /* CPU worker threads (0: one per core) */
    int max_length; /* longer sentences are not parsed (PARSE_TOO_LONG) */
    int device;     /* CUDA device of the gpu engine */
    int workspace;  /* work items per kernel launch (0: the engine's default) */
    const char *cache_dir; /* kernel cache of the cpu and gpu engines (NULL: $CKY_CACHE, else
                              ~/.cache/cky; "off": none) */
    int engines;     /* engines at once (parser/pool.h), each on its own thread, fed chunks of
                        a batch from one queue (0 or 1: one engine, no pool). gpu: one per
                        device devices[0..engines); cpu and ref: that many engines of the kind
                        (standing in for devices), sharing `threads` */
    int devices[PARSER_MAX_ENGINES]; /* gpu with engines > 1: the CUDA devices */
    progress_sink progress; /* reports of the kernel compilation (util/progress.h; default:
                               none) */
    parser_tune tune;
    parser_test_hooks test;
} parser_options;

/* An engine of a pool that failed and was retired (its chunk went to the others): engine,
 * its index in the pool (the gpu engine: of devices[]), and error, what went wrong. */
typedef pool_failure parser_failure;

/* Whether exhaustive Viterbi with options o runs g's binary rules in fixed point on o's
 * engine (parser_arith; the ref engine: never, it is the double reference). */
int parser_arith_fixed(const grammar *g, const parser_options *o);

/* Defaults: engine ref, the Viterbi decoder, no pruning (fallback on when pruning), exact
 * back-trace, one thread per core, max length 200, device 0, the engines' workspace width
 * and tuning, no test hook. */
parser_options parser_default_options(void);

/* The Berkeley parser's scores of a result (parser_berkeley_scores), by index. */
enum {
    PARSER_SCORE_MODEL,    /* -modelScore: max-rule, the tree's max-rule score; Viterbi, its
                              log score */
    PARSER_SCORE_SENTENCE, /* -sentence_likelihood: log P(words) */
    PARSER_SCORE_TREE,     /* -tree_likelihood: log P(tree, words) */
    PARSER_SCORE_CONFIDENCE, /* -confidence: log P(tree | words) */
    PARSER_NSCORE
};

/* The scores the Berkeley parser prints beside result r of a parser made with options o (cky
 * parse's --model-score, --sentence-likelihood, --tree-likelihood, --confidence), into
 * out[PARSER_SCORE_*]: -inf without a tree. The tree and confidence scores come from the
 * pruned decoder with o->berkeley.tree_scores (as is the sentence score with pruning): NaN
 * where o does not give them. Without pruning the sentence score is max-rule's log P(words)
 * and Viterbi's log score, as cky parse prints them. */
void parser_berkeley_scores(const parser_options *o, const parse_result *r,
                            double out[PARSER_NSCORE]);

typedef struct parser parser;

/* The decoder to use with g when none is asked for: max-rule, the Berkeley parser's default,
 * where g gives it exactly (a native .gr grammar), else Viterbi (a text export, whose unary
 * closure is the Viterbi one). */
parser_decoder parser_default_decoder(const grammar *g);

/* The pruning to use with g when none is asked for: the Berkeley parser's (its default) where
 * g has the cascade (a native .gr grammar), else none (a text export). */
parser_prune parser_default_prune(const grammar *g);

/* The engine to use when none is asked for: gpu where a CUDA device is usable, else cpu. */
parser_engine parser_default_engine(void);

/* A parser for grammar g (which must outlive it). Fails with CKY_ERR_NO_DEVICE for the gpu
 * engine on a machine without one, with CKY_ERR_UNSUPPORTED for a decoder that cannot run
 * on the engine or with the grammar (max-rule with a grammar that has no sum closure). */
cky_status parser_new(const grammar *g, const parser_options *opt, parser **out);

/* Parse n sentences; out[k] is the result of s[k]. A failure of one sentence (no parse, too
 * long, even an error: a sentence whose chart or workspace cannot be allocated fails alone)
 * is reported in its result and does not stop the others; the return value is not CKY_OK
 * only if the whole batch could not be attempted (or an engine failed: a device error).
 * Sentences with gold tags (sentence.tags) need pruning, whose decoder reads them:
 * CKY_ERR_UNSUPPORTED otherwise. */
cky_status parser_parse(parser *p, const sentence *s, int n, parse_result *out);

/* How many sentences to hand parser_parse at once: enough to fill the engines (8,192 per
 * gpu engine, 256 for the cpu engine, 64 for the ref engine, times the engines of a pool),
 * few enough to answer soon. */
int parser_batch_size(const parser *p);

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
