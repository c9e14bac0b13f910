/* maxc: the host side of the engines' max-c scores and max-rule trees (the arithmetic is
 * decoders/maxrule/maxc_rules.h, shared with the device): the grammar's tables in one block that the
 * gpu engine copies to the device as it is, the cpu engine's run over one sentence's
 * sum_chart, and the tree of a sentence's node codes. */
#ifndef CKY_DECODERS_MAXC_H
#define CKY_DECODERS_MAXC_H

#include "../../corpus_tools/tree.h"
#include "../../grammar/grammar.h"
#include "../../engines/cpu/cpu_sum.h"
#include "maxc_rules.h"

/* The tables of a grammar in one block of `bytes` bytes at `block`; `t` points into it. */
typedef struct maxc_host {
    void *block;
    size_t bytes;
    maxc_tables t;
} maxc_host;

/* The tables of g (which grammar_check_sum accepts: its binary rules have linear
 * probabilities and it has a sum closure). CKY_ERR_UNSUPPORTED, CKY_ERR_NOMEM. */
cky_status maxc_host_new(const grammar *g, maxc_host **out);

void maxc_host_free(maxc_host *h);

/* The tables with their pointers moved into a copy of the block at `base` (a device copy). */
maxc_tables maxc_tables_at(const maxc_host *h, const void *base);

/* The max-c arrays of one sentence, its charts c (inside and outside passes done): every
 * cell and symbol, span by span, then the walk. *status: MAXC_TREE (nodes[0 .. *count)
 * written; room maxc_nodes_max(c->n)), MAXC_NO_TREE or MAXC_BROKEN; *score the max-rule
 * score of ROOT. CKY_ERR_NOMEM. */
cky_status maxc_cpu_run(const maxc_host *h, const sum_chart *c, int *nodes, int *count,
                        int *status, double *score);

/* The annotated tree of the node codes nodes[0 .. count) (maxc_extract) over words. */
cky_status maxc_tree_build(const grammar *g, const int *nodes, int count, char *const *words,
                           tree **out);

#endif
