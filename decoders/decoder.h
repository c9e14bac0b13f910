/* decoder: what a decoder is. A decoder turns what an engine computes into results (a tree
 * and its scores per sentence); it declares the engine passes it needs and their semiring,
 * and owns a part for each engine it runs on:
 *   - ref: the plain double-precision reference, one sentence at a time (its own passes);
 *   - cpu: the cpu engine's passes (engines/cpu), then the decoder's host code;
 *   - gpu: the gpu engine's passes (gpu/gpu.h), then the decoder's device part
 *     (gpu_decoder) and host code.
 * Each part opens a state on its engine (once per parser), parses batches with it, and
 * closes it. The front door (parser/) lists the decoders in one table (parser/decoders.c)
 * and knows nothing else of them; the engines know only the passes asked of them.
 *
 * Adding a decoder: a folder decoders/NAME with its decoder_def and the parts it has, and
 * its row in parser/decoders.c (docs/engines.md has a worked example). */
#ifndef CKY_DECODERS_DECODER_H
#define CKY_DECODERS_DECODER_H

#include "../codegen/codegen.h"
#include "../corpus_tools/sentence.h"
#include "../corpus_tools/tree.h"
#include "../grammar/grammar.h"

/* What every decoder is told beside the grammar (each reads what concerns it). */
typedef struct decoder_options {
    int backtrace; /* Viterbi: its back-trace, a viterbi_mode (decoders/viterbi/viterbi.h) */
    /* the pruned decoder (decoders/pruned) */
    int prune;      /* the thresholds: a prune_mode (prune/prune.h) */
    int final;      /* its final pass: 0 max-rule, 1 Viterbi */
    int fallback;   /* 1: a sentence without a tree is parsed again with the accurate
                       thresholds, then exhaustively; 0: the jar's (()) */
    int levels;     /* 1: each result carries the coarse levels' statistics */
    int kbest;      /* max-rule, > 1: up to kbest trees per sentence, the Berkeley parser's
                       -kbest lists (parse_result.rest); 0 or 1: one tree */
    /* the Berkeley parser's output options (parser_berkeley_output) */
    int binarize;    /* the trees as the final pass builds them: binarized, not un-annotated */
    int variational; /* max-rule: the jar's variational max-c (maxrule_options.variational) */
    int tree_scores; /* each result carries bk_sentence, bk_tree and bk_confidence */
    int labels;      /* Viterbi with binarize: VITERBI_LABEL_* (the jar's -substates, -scores) */
} decoder_options;

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
    /* the pruned decoder */
    int fallback;  /* 0: the tree of the pruned pass; 1: of the accurate thresholds' pass; 2:
                      of the exhaustive pass (decoder_options.fallback) */
    int exact;     /* exhaustive Viterbi in fixed point: 1 where a score of the sentence left
                      the fixed-point range (chart.out_of_range), and the tree is the ref
                      engine's (double) */
    int untagged;  /* 1: the sentence's gold tags (sentence.tags) gave no tree, and the tree
                      is of the passes without them (the jar's -useGoldPOS retry) */
    int nlevel;    /* with decoder_options.levels: the coarse levels' statistics */
    struct prune_level *level; /* [nlevel] (malloc'ed), of the pass that gave the tree */
    double seconds[3];         /* wall seconds of the coarse passes and of the final pass;
                                  device seconds of the coarse passes' kernels (the gpu
                                  part's cascade: its chunk's, shared among its sentences) */
    /* with decoder_options.kbest > 1: tree and score are the list's first, these the trees
       after it, best first, and their max-rule scores (malloc'ed) */
    int nrest;
    tree **rest;
    double *rest_score;
    /* with decoder_options.tree_scores: the Berkeley parser's getLogLikelihood() (of the
     * sentence), getLogLikelihood(tree) of the tree as the final pass built it and
     * getConfidence(tree) of the tree as written (the jar's -sentence_likelihood,
     * -tree_likelihood, -confidence). With max-rule: log P(w) within the mask, log P(T, w)
     * (maxrule_tree_loglik) and their difference; -inf where P(w) underflowed (the jar's
     * logLikelihood stays -inf). With Viterbi: the root score, the root score and 0. -inf
     * without a tree. */
    double bk_sentence, bk_tree, bk_confidence;
} parse_result;

/* A result still to be decoded: PARSE_OK, scores -inf, nothing held. */
void parse_result_init(parse_result *r);

/* Release what a result holds and make it as parse_result_init does. */
void parse_result_clear(parse_result *r);

/* Mark r failed with the calling thread's last error message (cky_last_error). */
void parse_result_fail(parse_result *r);

struct cpu_engine;
struct gpu_engine;

/* What a part of a decoder opens its state with (valid while the state lives). */
typedef struct decoder_env {
    const grammar *g;
    decoder_options opt;
    int threads;            /* host threads it may use (the ref part: one sentence each) */
    int device;             /* the gpu part's CUDA device */
    int prune_device;       /* the pruned gpu part: its cascade on the device (parser_tune's
                               prune_host 0, the default) */
    int prune_chunk;        /* its sentences per launch (parser_tune's; 0: the default) */
    int prune_lanes;        /* its lanes (parser_tune's; 0: the default) */
    int prune_team;         /* host threads per sentence of a small batch (parser_tune's; 0:
                               the default) */
    struct cpu_engine *cpu; /* the cpu part's engine (else NULL) */
    struct gpu_engine *gpu; /* the gpu part's engine (else NULL) */
} decoder_env;

/* A decoder's part for one engine. */
typedef struct decoder_part {
    /* Make the part's state for env (its device buffers, host tables, ...). */
    cky_status (*open)(const decoder_env *env, void **state);
    /* Decode the n sentences s[0..n), each of at least one word: out[k] for s[k], each
     * given as parse_result_init makes it. One sentence's failure (no parse, an error) is
     * in its result; a status other than CKY_OK fails the whole batch (the caller then
     * clears every result). */
    cky_status (*parse)(void *state, const sentence *s, int n, parse_result *out);
    void (*close)(void *state);
} decoder_part;

typedef struct decoder_def {
    const char *name;          /* on the command line, in the C API and Python: "viterbi" */
    const char *title;         /* in messages: "Viterbi", "max-rule" */
    codegen_semiring semiring; /* of the engine passes it needs */
    unsigned passes;           /* 1u << ENGINE_PASS_* (sched/engine.h) for each */
    cky_status (*check)(const grammar *g); /* can it decode with g? (NULL: always) */
    decoder_part ref, cpu, gpu; /* open NULL: the decoder does not run on that engine */
} decoder_def;

#endif
