/* grammar: the immutable Berkeley latent-variable grammar shared by every other module.
 *
 * A grammar has symbols (states), each with nsub[s] substates. Global substate ids number
 * all substates of all symbols: symbol s owns ids sub_offset[s] .. sub_offset[s]+nsub[s]-1.
 * Symbol 0 is ROOT (one substate, never a child). "Phrasal" symbols (Berkeley's
 * isGrammarTag: ROOT, X, @X) are parents of rules; the others are POS tags, which only
 * span one word and get their scores from the lexicon.
 *
 * All scores are natural-log probabilities in double; -INFINITY means impossible. Loading
 * applies the Berkeley parser's parse-time pruning (binary probabilities < 1e-10 are zero,
 * and so are lexicon word-tag counts < 1e-10), then takes logs.
 *
 * Two file formats load into the same object: the Berkeley Parser's native .gr file and its
 * text export (PREFIX.grammar, PREFIX.lexicon, PREFIX.words, each optionally .gz). */
#ifndef CKY_GRAMMAR_H
#define CKY_GRAMMAR_H

#include <stddef.h>

#include "../util/progress.h"
#include "../util/status.h"

/* Binary rules P -> L R between three symbols, kept as the rows (l, r) that have at least
 * one finite score; row k scores parent substate p with score[k * nsub[parent] + p].
 * Rows are in ascending (l, r) order. */
typedef struct grammar_binary {
    int parent, left, right;
    int nrow;
    int *row_l, *row_r;
    double *score;
    double *prob; /* the same rows as LINEAR probabilities (pruned ones 0), for max-rule;
                     NULL unless the grammar has a sum closure (grammar.sum) */
} grammar_binary;

/* Closed Viterbi unary rules P -> C (P != C; identity rules are not stored):
 * score[c * nsub[parent] + p] for every child substate c and parent substate p. */
typedef struct grammar_unary {
    int parent, child;
    double *score;
} grammar_unary;

/* The sum closure of the unary rules, used by the max-rule decoder: LINEAR probabilities
 * prob[c * nsub[P] + p]. Identity rules are not stored (the passes add the closure's terms
 * to the values before it: post = pre + closure(pre)).
 *  - A native .gr file: its closedSumRulesWithParent/Child and closedSumPaths, with the jar's
 *    parse-time pruning (the derived rules that the file shares with unaryRulesWithParent
 *    have values <= 1e-10 set to 0; the others are kept as stored).
 *  - A text export, which has no sum closure: its closed Viterbi unaries stand in for one
 *    (max_closure = 1): one rule per (P, C) of grammar.unary, in that order, prob = exp of
 *    its score; by_child lists a child's rules in ascending parent order; path is all 0 (the
 *    export names no intermediate symbols). Max-rule trees then approximate the jar's. */
typedef struct grammar_sum_unary {
    int parent, child;
    double *prob;
} grammar_sum_unary;

typedef struct grammar_sum_closure {
    int n;
    grammar_sum_unary *rule; /* closedSumRulesWithParent: by parent, list order within one */
    int *first;              /* [nsym + 1]: parent P owns rule[first[P] .. first[P+1]) */
    int *by_child;           /* [n] rule indices in closedSumRulesWithChild order, by child */
    int *child_first;        /* [nsym + 1]: child C owns by_child[child_first[C] .. [C+1]) */
    int *path;               /* [nsym * nsym]: closedSumPaths[P][C], the intermediate symbol
                                restored by max-rule extraction when > 0 */
    int max_closure;         /* 1: the max (Viterbi) closure of a text export stands in */
    /* The raw unary rules of a native .gr file, Grammar.unaryRulesWithParent (the rules its
     * unaryRuleMap holds): by parent, in list order, identity rules included, LINEAR
     * probabilities prob[c * nsub[P] + p] with the jar's parse-time pruning (values <= 1e-10
     * are 0: removeUnlikelyRules). What the jar scores a given tree with (P(T, w):
     * ArrayParser.doInsideScores) and its variational max-c's unaries walk. nraw 0 and
     * raw_first NULL for a text export, which has none. */
    int nraw;
    grammar_sum_unary *raw;
    int *raw_first;          /* [nsym + 1]: parent P owns raw[raw_first[P] .. raw_first[P+1]) */
} grammar_sum_closure;

typedef struct grammar_lexicon grammar_lexicon; /* the lexicon (text table or Berkeley's) */
struct grammar_cascade;                         /* grammar/cascade.h */

typedef struct grammar {
    int nsym;
    char **name;            /* symbol names without the trainer's "^g" (NP, @NP, ROOT, NN) */
    int *nsub;              /* substates per symbol */
    int *sub_offset;        /* first global substate id of each symbol */
    int nsub_total;         /* number of global substate ids */
    unsigned char *phrasal; /* 1 for ROOT, phrasal and @ symbols; 0 for POS tags */

    int nbinary;
    grammar_binary *binary; /* sorted by parent; within a parent in the file's order */
    int *binary_first;      /* [nsym + 1]: parent P owns binary[binary_first[P] .. binary_first[P+1]) */

    int nunary;
    grammar_unary *unary;   /* sorted by parent; within a parent in the file's order */
    int *unary_first;       /* [nsym + 1], like binary_first */

    grammar_sum_closure *sum; /* from a .gr file or a text export; NULL for a .gr file
                                 without one */

    grammar_lexicon *lexicon;
    char *source;           /* the path or prefix it was loaded from */

    struct grammar_cascade *cascade; /* the coarse-to-fine grammars (grammar/cascade.h): a
                                        native .gr file's, else NULL */

    /* Loaded from a binary image (grammar/image.h): the rule tables point into image_data
     * (image_size bytes), mapped and owned by the grammar when `image` is set. */
    void *image;
    const void *image_data;
    size_t image_size;
} grammar;

/* Load a grammar. `spec` is a native .gr file, or the prefix of a text export (PREFIX.grammar
 * [.gz], PREFIX.lexicon[.gz], PREFIX.words[.gz]); a path to one of the text files also works.
 * The format is recognised from the file contents. Errors name the file and the problem.
 * Through the kernel cache (cachedir_resolve, util/cachedir.h: $CKY_CACHE, else ~/.cache/cky; "off": never):
 * a binary image of the loaded grammar, keyed by the identity of its source files and of the
 * loader (grammar/image_cache.c), is mapped instead of parsed when it is there and valid, and
 * written after a parse otherwise (for sources of 64 KB or more). The grammar is the same
 * either way. */
cky_status grammar_load(const char *spec, grammar **out);

/* Load and parse the source files, never through the cache (as grammar_load otherwise). */
cky_status grammar_load_source(const char *spec, grammar **out);

/* grammar_load with the cache folder `cache_dir` (NULL: as grammar_load; "off": none). */
cky_status grammar_load_cached(const char *spec, const char *cache_dir, grammar **out);

/* grammar_load_cached reporting to `progress` (util/progress.h; NULL: nowhere) the reading of
 * the source files (PROGRESS_GRAMMAR, what: spec), when there is no image to map, and the
 * building and writing of the image (PROGRESS_IMAGE). */
cky_status grammar_load_with(const char *spec, const char *cache_dir,
                             const progress_sink *progress, grammar **out);

/* Load the text export with prefix `prefix` (see grammar_load). */
cky_status grammar_load_text(const char *prefix, grammar **out);

/* Load a native Berkeley .gr file (gzip + Java serialization of ParserData). */
cky_status grammar_load_native(const char *path, grammar **out);

void grammar_free(grammar *g);

/* Id of the symbol named `name` (as in grammar.name), or -1. */
int grammar_find_symbol(const grammar *g, const char *name);

/* Log lexical scores of `word` at 0-based sentence position `loc`: writes out[nsub_total],
 * the score of every substate of every POS tag, and -INFINITY for all phrasal substates.
 * `word` is UTF-8 (invalid bytes are read as U+FFFD). The scores depend on `loc` only through
 * loc == 0 (an unknown word's signature marks a sentence-initial capital): the same word at
 * two positions other than the first has the same scores. */
cky_status grammar_score_word(const grammar *g, const char *word, int loc, double *out);

/* grammar_score_word for the tags t with tags[t] set (NULL: every tag), the same values;
 * the entries of the other tags are -INFINITY or their scores (the Berkeley lexicon skips
 * them: a pruned cell asks for the few tags it allows). */
cky_status grammar_score_tags(const grammar *g, const char *word, int loc,
                              const unsigned char *tags, double *out);

/* rep[w] for each word w < nword of a batch: the first word with the same text[w] and the
 * same first[w] (is it the first of its sentence?), on which alone grammar_score_word's
 * scores depend, so that each is scored once; w itself where text[w] is NULL (a word to be
 * scored on its own). CKY_ERR_NOMEM when out of memory. */
cky_status grammar_word_repeats(const char *const *text, const unsigned char *first, long nword,
                                int *rep);

/* Number of binary substate rules (parent substate, left substate, right substate) with a
 * finite score, and likewise for unaries. */
long grammar_count_binary(const grammar *g);
long grammar_count_unary(const grammar *g);

/* The raw unary rule P -> C of g (grammar_sum_closure.raw: Grammar.getUnaryRule), or NULL
 * when g has none (or no raw rules at all). */
const grammar_sum_unary *grammar_raw_unary(const grammar *g, int parent, int child);

/* CKY_OK if g has what the sum-product passes (the max-rule decoder) need: a sum closure of
 * its unary rules and, unless the closure is a text export's stand-in (max_closure), the
 * native .gr file's lexicon; CKY_ERR_UNSUPPORTED with a message otherwise. */
cky_status grammar_check_sum(const grammar *g);

/* 1 if the sum-product passes over g are the Berkeley parser's (a native .gr file's sum
 * closure and lexicon); 0 for a text export, whose closed Viterbi (max) unaries stand in for
 * the sum closure it lacks (grammar_sum_closure.max_closure) and whose lexicon lacks the
 * unseen-pair scores: max-rule trees then approximate the jar's. */
int grammar_sum_is_exact(const grammar *g);

#endif
