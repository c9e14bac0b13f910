/* mask: which items of one sentence's chart a pruned pass may use, the Berkeley parser's
 * allowedStates (cell, symbol) and allowedSubStates (cell, substate), for one grammar (below
 * prune/, which makes masks, and the decoders, which read them).
 *
 * Cells are numbered as the charts number them (chart_cell, chart/cell.h); substates by the
 * grammar's global substate ids. A substate entry means something only where its symbol's
 * entry is set. */
#ifndef CKY_CHART_MASK_H
#define CKY_CHART_MASK_H

#include <stddef.h>

#include "../util/status.h"
#include "cell.h"

typedef struct chart_mask {
    int n;                /* sentence length in words */
    int nsym, nsub;       /* symbols and global substates of the grammar it is for */
    unsigned char *state; /* [ncells * nsym]: 1 if the symbol is allowed over the cell */
    unsigned char *sub;   /* [ncells * nsub]: 1 if the substate is allowed over the cell */
} chart_mask;

/* A mask over n words with everything disallowed (zeros). */
cky_status chart_mask_init(chart_mask *m, int n, int nsym, int nsub);

/* Release the arrays of m (a zeroed or freed mask is fine). */
void chart_mask_free(chart_mask *m);

static inline int chart_mask_state(const chart_mask *m, int i, int j, int sym)
{
    return m->state[chart_cell(m->n, i, j) * (size_t)m->nsym + sym];
}

static inline int chart_mask_sub(const chart_mask *m, int i, int j, int sub)
{
    return m->sub[chart_cell(m->n, i, j) * (size_t)m->nsub + sub];
}

#endif
