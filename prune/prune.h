/* prune: the Berkeley parser's coarse-to-fine pruning, per sentence, in the jar's own
 * arithmetic (CoarseToFineMaxRuleParser.doPreParses and pruneChart) over the cascade of a
 * native grammar (grammar/cascade.h).
 *
 * For each coarse level k = 0 .. nlevel-1, over what the previous level allowed:
 *  - the level's lexicon on the words (initializeChart), then Viterbi (max, log) inside and
 *    outside scores with the level's binary rules and closed Viterbi unaries: level 0 per
 *    (cell, symbol) (doConstrainedViterbiInsideScores / OutsideScores, whose unaries update
 *    a cell in place in symbol order), later levels per (cell, symbol, substate)
 *    (doConstrainedInsideScores / OutsideScores with viterbi = true, logScores = true);
 *  - then an item stays iff inside + outside - root > the level's threshold (the jar's fast
 *    or -accurate array, indexed by level + 1); level 0 keeps or drops symbols, later levels
 *    substates (a symbol without a substate left is dropped); ROOT stays everywhere;
 *  - a level without a parse (root -inf) prunes nothing: its mask is the previous one;
 *  - the surviving substates of level k allow their children at level k+1 (the cascade's
 *    lchild/rchild); every substate of a symbol that survived level 0 is allowed at level 1.
 * The mask for the fine grammar is the last level's, mapped the same way.
 *
 * The jar's -viterbi mode runs the same cascade (only its final pass differs): its masks are
 * the default mode's. Max is exact and order-independent, so the masks are the jar's bits
 * wherever the scores are; the level grammars' scores are (grammar/cascade.h). */
#ifndef CKY_PRUNE_H
#define CKY_PRUNE_H

#include <stdint.h>

#include "../chart/mask.h"
#include "../grammar/grammar.h"

#define PRUNE_MAX_LEVELS 7 /* the jar's threshold arrays cover levels 0 .. 6 (accurate) */

typedef enum prune_mode {
    PRUNE_FAST,    /* the jar's default thresholds: -9.75 -10 -9.6 -9.66 -8.01 -7.4 -10 */
    PRUNE_ACCURATE /* -accurate: -12 -12 -11 -12 -12 -14 -14 */
} prune_mode;

/* The threshold of level k (0 <= k < PRUNE_MAX_LEVELS) under `mode`: the jar's array at
 * index k + 1. */
double prune_threshold(prune_mode mode, int k);

/* What one level kept, as ../shared/tools/berkeley/PruneMasks.java reports it. */
typedef struct prune_level {
    int failed;     /* 1: the level found no parse (nothing pruned; the counts are -1) */
    long symbols;   /* allowed (span, symbol) pairs, ROOT left out */
    long substates; /* allowed (span, symbol, substate) triples (level 0: one per symbol) */
    uint64_t hash;  /* FNV-1a 64 over the allowed triples as four 32-bit little-endian ints
                       (start, end, symbol, substate), by span length, start, symbol,
                       substate; POS tags only over one word */
} prune_level;

typedef struct prune_mask {
    int nlevel;
    prune_level level[PRUNE_MAX_LEVELS];
    chart_mask fine; /* the items of the fine grammar the final pass may use */
} prune_mask;

/* Called after each level's pruning with the level's mask over the level grammar (for
 * dumps); the mask is valid only during the call. */
typedef void (*prune_level_fn)(void *ctx, int level, const grammar *level_grammar,
                               const chart_mask *mask);

/* The per-grammar part (rule lists of the passes) and the reusable work space of one
 * thread. */
typedef struct prune_plan prune_plan;

/* A plan for the cascade of g (which must outlive it); CKY_ERR_UNSUPPORTED if g has no
 * cascade (a text export) or more levels than the jar's thresholds cover. */
cky_status prune_new_plan(const grammar *g, prune_plan **out);

void prune_free_plan(prune_plan *p);

/* Host threads for each sentence's passes (1, the default: the calling thread alone): the
 * words of each level's lexicon and the cells of one span length, in every pass, are shared
 * among them, with the same bits. Helper threads are started for each sentence and spin
 * between its loops: for a few sentences on otherwise idle cores (a request to cky serve),
 * not for a batch that already keeps every core busy. */
void prune_set_threads(prune_plan *p, int threads);

/* Whether prune_build_mask counts each level's allowed items and hashes them (1, the
 * default) or leaves the counts and hashes 0, as the device cascade does without them (the
 * counting is a pass over every level's mask). A failed level is said either way. */
void prune_set_levels(prune_plan *p, int levels);

/* The coarse passes over words[0..n) (n >= 1): per-level statistics and the fine mask into
 * *out (free with prune_free_mask). on_level may be NULL. A plan serves one call at a time. */
cky_status prune_build_mask(prune_plan *p, char *const *words, int n, prune_mode mode,
                            prune_level_fn on_level, void *ctx, prune_mask *out);

/* prune_build_mask with gold POS tags (the jar's -useGoldPOS): at every level the lexicon of
 * word i gives a score to the tag gold[i] alone (a fine symbol id, the same at every level;
 * -1 or a phrasal symbol: to no tag), as the jar's initializeChart skips the other tags.
 * gold NULL: prune_build_mask. The fine mask is the cascade's; the final pass restricts its
 * own lexicon (prune_mask_gold). */
cky_status prune_build_mask_tagged(prune_plan *p, char *const *words, const int *gold, int n,
                                   prune_mode mode, prune_level_fn on_level, void *ctx,
                                   prune_mask *out);

/* The final pass's side of the gold tags: over each one-word cell (i, i+1) of mask m (for
 * grammar g), disallow every POS tag but gold[i] (all of them where gold[i] is -1), which is
 * what the jar's initializeChart does to the final level's lexicon. */
void prune_mask_gold(const grammar *g, const int *gold, chart_mask *m);

void prune_free_mask(prune_mask *m);

/* The statistics of a mask over a level grammar, as prune_level documents (`level` 0 counts
 * symbols only). */
prune_level prune_count_mask(const grammar *level_grammar, int level, const chart_mask *m);

#endif
