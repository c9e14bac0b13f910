/* plan: the work of a batch of sentences laid out by span length and rule family, the one
 * listing every engine uses.
 *
 * The sentences of a batch share one cell numbering: sentence k owns cells cell0[k] ..
 * cell0[k] + chart_ncells(len[k]) - 1, cell (i, j) of it being cell0[k] + chart_cell(len[k],
 * i, j) (chart/chart.h order). A work item of a binary pass is (left cell, right cell,
 * parent cell) of one split of one parent cell. Items are grouped by span length d of the
 * parent, then by family f (codegen_family_id), into segments: within a segment, sentence
 * by sentence, start i by start i, split by split. A family's splits of a cell depend only on
 * the children's widths, so every cell of span d has plan_cell_items(f, d) items of family f:
 * that one rule gives every count here.
 *
 * A plan only numbers; the arrays it fills belong to the caller. */
#ifndef CKY_SCHED_PLAN_H
#define CKY_SCHED_PLAN_H

#include "../codegen/codegen.h"

/* A range of a plan's item or cell numbering. */
typedef struct plan_segment {
    long first, count;
} plan_segment;

typedef struct plan {
    int n;            /* sentences */
    int maxn;         /* words of the longest */
    int *len;         /* [n]: words of each sentence */
    long *cell0;      /* [n]: first cell of each sentence */
    long ncell;       /* cells of the batch */
    long nitem;       /* binary work items of the batch, all families */
    long nword;       /* words of the batch (its one-word cells) */
    long nnode;       /* nodes of a binarized tree of every sentence: sum of 2 len - 1 */
    plan_segment *bin;  /* [d * CODEGEN_NFAMILY + f], 2 <= d <= maxn: the items of span d,
                           family f (zero for d < 2) */
    plan_segment *cell; /* [d], 1 <= d <= maxn: the cells of span d in the order of
                           plan_fill_cells */
    long npull;         /* entries of the pull lists (2 nitem; 0 until plan_add_pull) */
    plan_segment *pull; /* [(d * CODEGEN_NFAMILY + f) * 2 + side], 1 <= d < maxn: the pull
                           list of (d, f, side) in the pull numbering (NULL until
                           plan_add_pull) */
} plan;

/* Work items of family f in each cell of span length d (d >= 2; 0 below). */
long plan_cell_items(codegen_family_id f, int d);

/* Work items of a sentence of n words per family: count[f] = sum over d of
 * (n - d + 1) * plan_cell_items(f, d). */
void plan_count_items(int n, long count[CODEGEN_NFAMILY]);

/* The plan of n sentences of len[k] >= 0 words. CKY_ERR_NOMEM; *p is then empty (freeing it
 * is fine). */
cky_status plan_new(const int *len, int n, plan *p);

void plan_free(plan *p);

/* Fill the items of segment (d, f), in segment order, into left/right/parent[0 ..
 * count - 1] (cells of the batch numbering); sent[t], when sent is not NULL, gets the
 * sentence of item t. */
void plan_fill_items(const plan *p, int d, codegen_family_id f, int *left, int *right,
                     int *parent, int *sent);

/* Fill the cells of span d, sentence by sentence, start by start, into cells[0 .. count - 1]. */
void plan_fill_cells(const plan *p, int d, int *cells);

/* The outside passes' listing ("pull" lists): the work items that send to the cells of
 * span d, per family f and side (0: the item's left child is the cell, 1: its right
 * child), every item once per side. A pull list runs over the cells of span d in
 * plan_fill_cells order and, for each cell, over its parents from the shortest; a cell has
 * at most one item per (family, side, parent span), and each list's items of a cell are
 * consecutive. Lists are numbered in (d, f, side) order. */

/* The most work items a plan with pull lists may have: the lists hold the items' indices as
 * int. */
#define PLAN_PULL_ITEMS 2147483647L

/* The most words of a sentence whose plan stays within PLAN_PULL_ITEMS (2,342). */
int plan_pull_words(void);

/* CKY_ERR_LIMIT, with its message, when p has more than PLAN_PULL_ITEMS items (the caller
 * parses fewer sentences at once, and a sentence longer than plan_pull_words() fails
 * alone); else CKY_OK. */
cky_status plan_check_pull(const plan *p);

/* Count the pull lists of p (p->npull, p->pull) on `threads` host threads. plan_check_pull's
 * CKY_ERR_LIMIT; CKY_ERR_NOMEM. */
cky_status plan_add_pull(plan *p, int threads);

/* Fill every pull list of p (after plan_add_pull) on `threads` host threads: list (d, f,
 * side) at item[p->pull[(d * CODEGEN_NFAMILY + f) * 2 + side].first ..], the items'
 * indices in the plan's item numbering. CKY_ERR_NOMEM. */
cky_status plan_fill_pulls(const plan *p, int threads, int *item);

/* The root cell (0, len[k]) of sentence k in the batch numbering. */
long plan_root_cell(const plan *p, int k);

#endif
