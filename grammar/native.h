/* native: the Berkeley .gr loader's in-memory entry (internal to the grammar module; the
 * public entry is grammar_load_native in grammar.h). Used by the fuzz target. */
#ifndef CKY_GRAMMAR_NATIVE_H
#define CKY_GRAMMAR_NATIVE_H

#include <stddef.h>

#include "grammar.h"
#include "internal.h"
#include "jser.h"

/* Build a grammar from an uncompressed Java serialization stream of a ParserData object
 * (`source` names it in messages and becomes grammar.source). Malformed input gives
 * CKY_ERR_FORMAT (CKY_ERR_UNSUPPORTED for a lexicon class other than SophisticatedLexicon). */
cky_status grammar_load_native_stream(const unsigned char *data, size_t len, const char *source,
                                      grammar **out);

/* ---- shared by the parts of the loader (native.c, native_sum.c) ---- */

struct cascade_src;

typedef struct native_ctx {
    const char *source;
    int nsym;
    int *nsub;
    size_t budget; /* table cells left to fill */
    double *scratch;
    size_t cap_scratch;
    struct cascade_src *cascade; /* what the coarse-to-fine cascade is computed from */
} native_ctx;

/* Take n table cells from the budget; CKY_ERR_FORMAT naming `what` when it is spent. */
cky_status native_spend(native_ctx *c, size_t n, const char *what);

/* Field `name` of obj as an array of element type `elem` with at least `min` elements. */
cky_status native_array_field(const jser_node *obj, const char *name, char elem, size_t min,
                              const jser_node **out);

/* A double[n1][n2] node (rows may be null) into dst[i * n2 + j]; dst zeroed by the caller. */
cky_status native_read_matrix(native_ctx *c, const jser_node *m, size_t n1, size_t n2,
                              const char *what, double *dst);

/* The rule list of parent P in a List[] array node (null = no rules). */
cky_status native_rule_list(const jser_node *lists, int P, const char *what,
                            const jser_node *const **rules, size_t *n);

/* A state field of a rule, as a symbol id. */
cky_status native_rule_state(native_ctx *c, const jser_node *rule, const char *field, int *out);

/* Read the sum closure (closedSumRulesWithParent/Child, closedSumPaths) with the jar's
 * parse-time pruning of the rules shared with unaryRulesWithParent, into the builder. */
cky_status native_read_sum(native_ctx *c, const jser_node *gr, grammar_builder *b);

/* Read what the cascade needs beyond the grammar (grammar/cascade_src.h): the split trees,
 * unaryRulesWithParent and unaryRuleMap's keys in Java's iteration order. A file without
 * split trees leaves src->tree NULL (no cascade). native_cascade.c. */
cky_status native_read_cascade(native_ctx *c, const jser_node *gr, struct cascade_src *src);

#endif
