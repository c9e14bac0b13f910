/* cky: the flat C API of the shared library libcky.so, for bindings (the Python package in
 * python/ uses it through ctypes); the cky command does not use it.
 *
 * Only C strings, ints, doubles (scores) and opaque pointers cross it. A parser owns its grammar; calls on one
 * parser are serialized (a mutex), separate parsers may be used from separate threads.
 * Failing functions return NULL or -1 and record a message that cky_error_message() returns
 * on the same thread. Strings the library returns are freed with cky_string_free(). */
#ifndef CKY_API_CKY_H
#define CKY_API_CKY_H

typedef struct cky_parser cky_parser;

/* What became of one sentence (cky_parser_parse). */
enum {
    CKY_PARSE_OK = 0,       /* a tree */
    CKY_PARSE_EMPTY = 1,    /* no words */
    CKY_PARSE_TOO_LONG = 2, /* more words than max_length */
    CKY_PARSE_NO_PARSE = 3, /* the grammar derives no tree */
    CKY_PARSE_FAILED = 4    /* an error while parsing it */
};

/* Load a grammar (a Berkeley .gr file or the prefix of a text export) and open a parser on
 * it. engine: "auto" (the GPU where one is usable, else the CPU), "gpu", "cpu" or "ref";
 * decoder: "maxrule" (the tree of the best rule posteriors, the Berkeley parser's default;
 * exact with a native .gr grammar, approximate with a text export), "viterbi" (the best
 * derivation) or "auto" (NULL: maxrule with a native .gr grammar, else viterbi: see
 * parser_default_decoder); every engine runs both; threads: CPU threads (0:
 * one per core); max_length: longest sentence parsed, in words (0: 200); device: the CUDA
 * device of the gpu engine.
 * NULL on failure (unreadable grammar, unknown engine or decoder, no GPU for "gpu"). */
cky_parser *cky_parser_open(const char *grammar, const char *engine, const char *decoder,
                            int threads, int max_length, int device);

/* What a progress function hears of the open's long steps. stage: "grammar" (reading the
 * grammar's files, when the cache has no image of it), "image" (writing that image into the
 * kernel cache) or "compile" (compiling the kernels, or loading them from the cache); state:
 * 0 the stage begins, 1 its counts changed, 2 it is over; done of total kernels so far,
 * cached of them from the cache (0 for the other stages). It is called from the library's
 * threads, one call at a time, before cky_parser_open_progress returns. */
typedef void (*cky_progress_fn)(void *ctx, const char *stage, int state, long done,
                                long total, long cached);

/* cky_parser_open, telling fn(ctx, ...) of its progress (fn NULL: as cky_parser_open). */
cky_parser *cky_parser_open_progress(const char *grammar, const char *engine,
                                     const char *decoder, int threads, int max_length,
                                     int device, cky_progress_fn fn, void *ctx);

/* cky_parser_open_progress with a prune mode: "berkeley" (the Berkeley parser's
 * coarse-to-fine cascade, its default answer), "accurate" (its -accurate thresholds), "none"
 * (the exhaustive passes, exact) or "auto"/NULL (berkeley with a native .gr grammar, none
 * with a text export: what the other open functions take). */
cky_parser *cky_parser_open_prune(const char *grammar, const char *engine, const char *decoder,
                                  const char *prune, int threads, int max_length, int device,
                                  cky_progress_fn fn, void *ctx);

/* The pruning the parser runs: "berkeley", "accurate" or "none". */
const char *cky_parser_prune(const cky_parser *p);

/* The engine the parser runs: "gpu", "cpu" or "ref". */
const char *cky_parser_engine(const cky_parser *p);

/* The decoder the parser runs: "maxrule" or "viterbi". */
const char *cky_parser_decoder(const cky_parser *p);

/* How many lines to hand cky_parser_parse at once to keep the engine busy (as `cky parse`
 * does: 8,192 on the gpu engine, 256 on the cpu engine, 64 on the ref engine). */
int cky_parser_batch_size(const cky_parser *p);

/* Parse n lines (UTF-8; n >= 0). tokenize: 1 if the lines are raw text (tokenized as the
 * Penn Treebank, corpus_tools/tokenize.h), 0 if they are tokens separated by white space.
 * For each k: trees[k] = the tree on one line, Berkeley style "( (S ...) )", or "(())" when
 * there is none; outcomes[k] = a CKY_PARSE_* value; messages[k] (if messages is not NULL)
 * = why there is no tree, or NULL for CKY_PARSE_OK. Every string set must be freed with
 * cky_string_free. Returns 0, or -1 if the batch could not be parsed at all (nothing set). */
int cky_parser_parse(cky_parser *p, const char *const *lines, int n, int tokenize,
                     char **trees, int *outcomes, char **messages);

/* The scores cky_parser_parse_scores gives per line, by index. */
enum {
    CKY_SCORE_MODEL,      /* the tree's score: max-rule, its max-rule score (the Berkeley
                             parser's -modelScore); Viterbi, its log score */
    CKY_SCORE_SENTENCE,   /* log P(words) (-sentence_likelihood) */
    CKY_SCORE_TREE,       /* log P(tree, words) (-tree_likelihood) */
    CKY_SCORE_CONFIDENCE, /* log P(tree | words) (-confidence) */
    CKY_NSCORE
};

/* Parse n lines as cky_parser_parse does, and set the line's scores as the Berkeley parser
 * computes them (cky parse's --model-score, --sentence-likelihood, --tree-likelihood,
 * --confidence) into scores[k * CKY_NSCORE + CKY_SCORE_*]: -inf without a tree. The tree
 * and confidence scores need pruning (NaN with prune "none"); without pruning the sentence
 * score is max-rule's log P(words) and Viterbi's log score. With pruning the parser of the
 * scores is made on the first call. Returns 0 or -1. */
int cky_parser_parse_scores(cky_parser *p, const char *const *lines, int n, int tokenize,
                            char **trees, double *scores, int *outcomes, char **messages);

/* Parse n lines as cky_parser_parse does, each into its k-best list (kb >= 1): the
 * Berkeley parser's -kbest lists of max-rule trees (best first, at most kb, maybe fewer).
 * trees and scores have n * kb slots: list k's j-th tree is trees[k * kb + j] (one line, as
 * cky_parser_parse writes them) and its max-rule score (the sum of the logs of its rules'
 * posteriors) scores[k * kb + j], for j < counts[k]; the other slots are NULL and -inf
 * (counts[k] 0: no tree, outcomes[k] and messages[k] say why). Lists need the max-rule
 * decoder and a host max-c chart: the pruned decoder on any engine, or prune
 * "none" on the ref engine; elsewhere it fails (-1) with a message naming kbest and the
 * engine or decoder. The parser of the lists is made on the first call (and again for
 * another kb). Every string set must be freed with cky_string_free. Returns 0 or -1. */
int cky_parser_parse_kbest(cky_parser *p, const char *const *lines, int n, int tokenize, int kb,
                           char **trees, double *scores, int *counts, int *outcomes,
                           char **messages);

/* Parse n sentences with gold part-of-speech tags, as `cky parse --gold-pos` (the Berkeley
 * parser's -useGoldPOS): lines[k] holds the words, separated by white space (not tokenized),
 * tags[k] their tags, one per word, separated by white space; each tag is taken up to its
 * first '-', as the jar reads it (NN-HLN gives NN, -LRB- and -NONE- the empty tag). Each
 * word's lexicon gives a score to its tag alone, in every pass of the pruned cascade and
 * in the final pass; a sentence whose tags give no tree (a tag the grammar lacks, the empty
 * tag, tags no rule combines) is parsed again without them, as the jar does, and
 * messages[k] (if not NULL) then says so beside its tree (outcome CKY_PARSE_OK). The rest as
 * cky_parser_parse: trees, outcomes, messages (NULL for any other tree). Fails (-1, nothing
 * set) where the counts of words and tags of a line differ (the message names the line and
 * both counts) or without pruning (prune "none", which a text export gets): the cascade
 * reads the tags. Returns 0 or -1. */
int cky_parser_parse_tagged(cky_parser *p, const char *const *lines, const char *const *tags,
                            int n, char **trees, int *outcomes, char **messages);

/* cky_parser_parse_scores of sentences with gold tags (read and parsed as
 * cky_parser_parse_tagged reads and parses them): the Berkeley scores of each tree, as cky
 * parse --gold-pos with --model-score and the others. Returns 0 or -1. */
int cky_parser_parse_tagged_scores(cky_parser *p, const char *const *lines,
                                   const char *const *tags, int n, char **trees,
                                   double *scores, int *outcomes, char **messages);

/* cky_parser_parse_kbest of sentences with gold tags (read and parsed as
 * cky_parser_parse_tagged reads and parses them): the k-best lists within the tags' lexicon,
 * as cky parse --gold-pos --kbest: where the tags give no tree, the list of the retry
 * without them (the jar's -kbest gives the empty list there: docs/berkeley.md). Returns 0
 * or -1. */
int cky_parser_parse_tagged_kbest(cky_parser *p, const char *const *lines,
                                  const char *const *tags, int n, int kb, char **trees,
                                  double *scores, int *counts, int *outcomes, char **messages);

/* Tokenize one line of raw text: *tokens = the tokens separated by single spaces. 0 or -1. */
int cky_tokenize(const char *line, char **tokens);

/* The message of the last failure on this thread. */
const char *cky_error_message(void);

void cky_string_free(char *s);

void cky_parser_close(cky_parser *p);

#endif
