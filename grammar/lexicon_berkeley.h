/* lexicon_berkeley: the Berkeley Parser's SophisticatedLexicon (word and signature counts,
 * smoothed P(word | tag substate)), internal to the grammar module; `cky lexicon` also reads
 * its linear scores.
 *
 * The native loader fills a lexicon_berkeley with the serialized counts, then finishes it into
 * a grammar_lexicon. Scoring follows SophisticatedLexicon.score bit for bit
 * (docs/berkeley-grammar-spec.md §3.2-3.4): known-word and unknown-word (signature) branches,
 * the 1e-87 floor, the substate smoother, log with NaN -> -inf. The counts are kept as the
 * file has them; the parser's load-time pruning (wordToTagCounters entries < 1e-10 read as 0,
 * §3.3) is applied when scoring for the grammar (grammar_score_word) and on request in linear
 * mode. The reference tables in ../shared/reference/lexicon were made without it.
 * lexicon_berkeley_score_linear also serves the text export's lexicon (exp of its scores). */
#ifndef CKY_GRAMMAR_LEXICON_BERKELEY_H
#define CKY_GRAMMAR_LEXICON_BERKELEY_H

#include "grammar.h"

#define LEXICON_BERKELEY_PRUNE 1e-10 /* removeUnlikelyTags(1e-10, 1.0) */

/* The scalar fields of a SophisticatedLexicon. */
typedef struct lexicon_berkeley_params {
    double total_tokens;        /* totalTokens */
    double total_unseen_tokens; /* totalUnseenTokens */
    double smooth[2];           /* smooth[0] for signatures, smooth[1] for rare known words */
    double smooth_in_unknowns_threshold;
    int unknown_level; /* signature scheme: 5 English, 4 other languages */
} lexicon_berkeley_params;

typedef struct lexicon_berkeley lexicon_berkeley;

/* A lexicon for nsym states with nsub[s] substates each (copied); NULL when out of memory. */
lexicon_berkeley *lexicon_berkeley_new(int nsym, const int *nsub,
                                       const lexicon_berkeley_params *params);

void lexicon_berkeley_free(lexicon_berkeley *lb);

/* Per-tag counts: tagCounter[tag], unseenTagCounter[tag] (nsub[tag] values each, NULL = all
 * zero) and the smoother's diffWeights[tag] as nsub*nsub values [i*nsub + k] (NULL = no
 * smoothing). Tags never set have zero counts and no smoothing. */
cky_status lexicon_berkeley_set_tag(lexicon_berkeley *lb, int tag, const double *tag_count,
                                    const double *unseen_tag_count, const double *diff_weights);

/* wordCounter[word] = count (a word or signature string, UTF-8). */
cky_status lexicon_berkeley_add_word(lexicon_berkeley *lb, const char *word, double count);

/* wordToTagCounters[tag][word] (unseen == 0) or
 * unseenWordToTagCounters[tag][signature] (unseen == 1): nsub[tag] counts (copied). */
cky_status lexicon_berkeley_add_tag_word(lexicon_berkeley *lb, int tag, const char *word,
                                         const double *counts, int unseen);

/* Index the counts and hand back the lexicon as a grammar_lexicon (its free() releases
 * everything). The builder is consumed either way. */
cky_status lexicon_berkeley_finish(lexicon_berkeley *lb, grammar_lexicon **out);

/* CKY_OK if g's lexicon is a Berkeley lexicon, else CKY_ERR_UNSUPPORTED with a message. */
cky_status lexicon_berkeley_check(const grammar *g);

/* LINEAR scores of `word` at 0-based position `loc`, as SophisticatedLexicon.score returns
 * them before the log: out[nsub_total], 0 for phrasal substates. `pruned` = 1 applies the
 * parse-time pruning (the values whose logs grammar_score_word gives), 0 scores the counts as
 * stored in the file. The one entry point of linear lexical scores (the max-rule decoder and
 * the cpu engine's sum-product pass): for a grammar loaded from a text export, `pruned` = 1
 * gives the exp of grammar_score_word's scores, and `pruned` = 0 is CKY_ERR_UNSUPPORTED (the
 * export lacks the raw counts), as is any other lexicon. With tags (NULL: every tag), the
 * Berkeley lexicon scores the tags t with tags[t] set alone, the others staying 0 (the same
 * values for those asked). */
cky_status lexicon_berkeley_score_linear(const grammar *g, const char *word, int loc, int pruned,
                                         const unsigned char *tags, double *out);

/* The lexicon of g projected for a coarse-to-fine level (grammar/cascade.h), as
 * SophisticatedLexicon.projectLexicon, then removeUnlikelyTags(prune): symbol s gets
 * nsub_to[s] substates; fine substate x (a global id of g) goes to substate to_sub[x] of its
 * symbol with weight cond[x]: tag counts and word-tag counts summed with those weights in
 * substate order, the smoother's weights projected and normalized per row
 * (SmoothAcrossParentBits.updateWeights), word-tag counts < prune set to 0. The words,
 * signatures and parameters are the fine lexicon's. CKY_ERR_UNSUPPORTED unless g's lexicon is
 * a Berkeley lexicon. */
cky_status lexicon_berkeley_project(const grammar *g, const int *nsub_to, const int *to_sub,
                                    const double *cond, double prune, grammar_lexicon **out);

#endif
