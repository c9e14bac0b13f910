/* grammar internals shared by the loaders of the grammar module (not a public API).
 *
 * A loader fills a grammar_builder with symbols and LINEAR rule probabilities in file order,
 * then calls builder_finish(), which applies the Berkeley parse-time pruning (binary < 1e-10
 * to 0), drops all-zero binary rows, takes logs and builds the index arrays. Both loaders go
 * through it, so the native and the text formats give bit-identical grammars. */
#ifndef CKY_GRAMMAR_INTERNAL_H
#define CKY_GRAMMAR_INTERNAL_H

#include <stddef.h>

#include "grammar.h"

#define GRAMMAR_BINARY_PRUNE 1e-10 /* CoarseToFineMaxRuleParser: removeUnlikelyRules(1e-10) */

struct img_out;

/* The lexicon: a score function behind a small vtable. */
struct grammar_lexicon {
    int kind; /* IMG_LEXICON_* (grammar/image.h) */
    /* append the lexicon to a grammar image (grammar/image.h); restored by kind */
    void (*save)(const grammar_lexicon *lex, struct img_out *w);
    /* out[nsub_total] as grammar_score_tags documents; phrasal entries are preset to -inf */
    cky_status (*score)(const grammar_lexicon *lex, const grammar *g, const char *word, int loc,
                        const unsigned char *tags, double *out);
    void (*free)(grammar_lexicon *lex);
};

typedef struct grammar_builder grammar_builder;

grammar_builder *builder_new(void);
void builder_free(grammar_builder *b);

/* Add a symbol (id = number of symbols added before); name without "^g". */
cky_status builder_add_symbol(grammar_builder *b, const char *name, int nsub, int phrasal);

/* Add a binary rule P -> L R with linear probabilities prob[(l * nsub[R] + r) * nsub[P] + p]
 * (copied). Rules must be added grouped by parent, parents in any order. */
cky_status builder_add_binary(grammar_builder *b, int parent, int left, int right,
                              const double *prob);

/* The same, taking ownership of the malloc'ed table `prob` (freed on failure too): no copy,
 * and the untouched pages of a calloc'ed table are never written. */
cky_status builder_adopt_binary(grammar_builder *b, int parent, int left, int right,
                                double *prob);

/* The same, taking ownership of the malloc'ed rows of a table: nrow (l, r) rows in ascending
 * order, row_l[k], row_r[k], linear prob[k * nsub[P] + p]; the other rows are zero (freed on
 * failure too). */
cky_status builder_adopt_rows(grammar_builder *b, int parent, int left, int right, int nrow,
                              int *row_l, int *row_r, double *prob);

/* Add a closed Viterbi unary rule P -> C with linear prob[c * nsub[P] + p] (copied). Identity
 * rules (P == C) are ignored. */
cky_status builder_add_unary(grammar_builder *b, int parent, int child, const double *prob);

/* Hand the sum closure (native files) to the builder, which owns it from now on. */
void builder_set_sum(grammar_builder *b, grammar_sum_closure *sum);

/* Make builder_finish derive the sum closure from the closed Viterbi unaries (text exports,
 * which have no other; see grammar_sum_closure.max_closure). */
void builder_sum_from_unary(grammar_builder *b);

/* The sum closure standing in for the closed Viterbi unaries unary[0..nunary), sorted by
 * parent with the index unary_first[nsym + 1] and without identity rules, as
 * grammar_sum_closure documents for a text export (max_closure = 1). */
cky_status grammar_sum_from_unary(int nsym, const int *nsub, const grammar_unary *unary,
                                  int nunary, const int *unary_first,
                                  grammar_sum_closure **out);

/* Free a sum closure and everything it holds (NULL is fine). */
void grammar_sum_free(grammar_sum_closure *sum);

/* Finish: prune, take logs, index; the builder is consumed (freed) either way. */
cky_status builder_finish(grammar_builder *b, grammar_lexicon *lex, const char *source,
                          grammar **out);

/* ---- name_table: interned strings with dense ids 0, 1, 2, ... in order of addition ---- */

typedef struct name_table name_table;

name_table *name_table_new(void);
void name_table_free(name_table *t);

/* Id of the `len` bytes at s, or -1. */
int name_table_find(const name_table *t, const char *s, size_t len);

/* Id of the `len` bytes at s, adding them if new (*added = 1 then; added may be NULL). */
cky_status name_table_intern(name_table *t, const char *s, size_t len, int *id, int *added);

/* The NUL-terminated string of id (valid until the next intern). */
const char *name_table_str(const name_table *t, int id);

int name_table_count(const name_table *t);

/* Grow *arr (of *cap elements of size `size`, doubling from 64) to hold n + 1 elements:
 * 1, or 0 when out of memory (*arr is then unchanged). */
int grammar_grow(void **arr, int *cap, int n, size_t size);

/* The file name endings of a text export, and the prefix of `spec` without the one it ends
 * with (a malloc'ed copy of spec if none; NULL when out of memory). */
#define GRAMMAR_NTEXT_SUFFIX 6
extern const char *const grammar_text_suffix[GRAMMAR_NTEXT_SUFFIX];
char *grammar_text_prefix(const char *spec);

/* The log the jar takes of a rule or lexical probability: Java's Math.log as HotSpot computes
 * it (util/jmath.h; the C library's log differs in the last bit on 20 of the 369,250
 * probabilities of sample-sm1, sm3 and sm5); 0 (and NaN) -> -inf. */
double grammar_log(double x);

#endif
