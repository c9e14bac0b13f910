/* codegen schedule: emission order and register plan of a code block (see schedule.h). */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

typedef struct keyed {
    int group;
    codegen_rule r;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->r.l != y->r.l)
        return x->r.l < y->r.l ? -1 : 1;
    if (x->r.r != y->r.r)
        return x->r.r < y->r.r ? -1 : 1;
    return (x->r.p > y->r.p) - (x->r.p < y->r.p);
}

/* Most parents a group may hold: two thirds of the budget, less L and the L+R temporary. */
static int group_limit(int budget)
{
    int g = budget - budget / 3 - 2;
    return g > 1 ? g : 1;
}

cky_status codegen_block_order(codegen_rule *rule, long n, const int dim[3], int budget)
{
    int *group = calloc((size_t)(dim[0] ? dim[0] : 1), sizeof *group);
    keyed *k = malloc((size_t)(n ? n : 1) * sizeof *k);
    if (!group || !k) {
        free(group);
        free(k);
        return cky_fail(CKY_ERR_NOMEM, "out of memory ordering a code block");
    }
    for (long i = 0; i < n; i++)
        group[rule[i].p] = 1;
    int nparent = 0;
    for (int p = 0; p < dim[0]; p++)
        nparent += group[p];
    int limit = group_limit(budget > 0 ? budget : CODEGEN_LIVE_BUDGET);
    int ngroup = (nparent + limit - 1) / limit, size = 1;
    if (ngroup > 0)
        size = (nparent + ngroup - 1) / ngroup; /* balanced groups of consecutive rows */
    for (int p = 0, rank = 0; p < dim[0]; p++)
        if (group[p])
            group[p] = 1 + rank++ / size; /* 0 stays "not in the block" */
    for (long i = 0; i < n; i++)
        k[i] = (keyed){group[rule[i].p], rule[i]};
    qsort(k, (size_t)n, sizeof *k, keyed_cmp);
    for (long i = 0; i < n; i++)
        rule[i] = k[i].r;
    free(group);
    free(k);
    return CKY_OK;
}

static int same_pair(const codegen_rule *a, const codegen_rule *b)
{
    return a->l == b->l && a->r == b->r;
}

cky_status codegen_block_plan(const codegen_rule *rule, long n, const int dim[3], int budget,
                              unsigned char *flags, int *max_live, long *loads)
{
    if (budget <= 0)
        budget = CODEGEN_LIVE_BUDGET;
    int dp = dim[0] ? dim[0] : 1, dr = dim[2] ? dim[2] : 1;
    long *last_p = malloc((size_t)dp * sizeof *last_p);
    char *started = calloc((size_t)dp, 1);
    long *next = malloc((size_t)(n ? n : 1) * sizeof *next); /* pair start -> next of its R */
    long *seen = malloc((size_t)dr * sizeof *seen);          /* right row -> next pair start */
    int *slot_of = malloc((size_t)dr * sizeof *slot_of);     /* right row -> cache slot */
    int *slot_row = malloc((size_t)dr * sizeof *slot_row);
    long *slot_next = malloc((size_t)dr * sizeof *slot_next);
    if (!last_p || !started || !next || !seen || !slot_of || !slot_row || !slot_next) {
        free(last_p), free(started), free(next), free(seen);
        free(slot_of), free(slot_row), free(slot_next);
        return cky_fail(CKY_ERR_NOMEM, "out of memory planning a code block");
    }
    for (int p = 0; p < dp; p++)
        last_p[p] = -1;
    for (int r = 0; r < dr; r++)
        seen[r] = n, slot_of[r] = -1;
    for (long i = 0; i < n; i++)
        last_p[rule[i].p] = i;
    for (long i = n - 1; i >= 0; i--)
        if (i == 0 || !same_pair(&rule[i], &rule[i - 1])) {
            next[i] = seen[rule[i].r];
            seen[rule[i].r] = i;
        }
    /* the parents live at once bound the room left for caching right rows */
    int live_p = 0, most_p = 0;
    for (long i = 0; i < n; i++) {
        if (!started[rule[i].p]) {
            started[rule[i].p] = 1;
            most_p = ++live_p > most_p ? live_p : most_p;
        }
        if (last_p[rule[i].p] == i)
            live_p--;
    }
    memset(started, 0, (size_t)dp);
    int cap = budget - most_p - 2, cached = 0, cur_l = -1, best = 0;
    if (cap < 1)
        cap = 1;
    long nload = 0;
    for (long i = 0; i < n; i++) {
        const codegen_rule *r = &rule[i];
        unsigned char f = 0;
        if (i == 0 || !same_pair(r, &rule[i - 1])) {
            f |= PLAN_PAIR;
            if (r->l != cur_l) {
                f |= PLAN_LOAD_L;
                cur_l = r->l;
                nload++;
            }
            int s = slot_of[r->r];
            if (s < 0) {
                f |= PLAN_LOAD_R;
                nload++;
                if (cached == cap) { /* evict the cached row used again furthest ahead */
                    s = 0;
                    for (int c = 1; c < cached; c++)
                        if (slot_next[c] > slot_next[s])
                            s = c;
                    slot_of[slot_row[s]] = -1;
                } else {
                    s = cached++;
                }
                slot_row[s] = r->r;
                slot_of[r->r] = s;
            }
            slot_next[s] = next[i];
        }
        if (!started[r->p]) {
            started[r->p] = 1;
            f |= PLAN_FIRST_P;
            live_p++;
        }
        int live = live_p + cached + 2; /* + the left row and the L+R temporary */
        best = live > best ? live : best;
        if (last_p[r->p] == i) {
            f |= PLAN_LAST_P;
            live_p--;
        }
        int s = slot_of[r->r];
        if ((i == n - 1 || !same_pair(r, &rule[i + 1])) && slot_next[s] == n) {
            slot_of[r->r] = -1; /* dead: free its slot (the last slot moves in) */
            if (s != --cached) {
                slot_row[s] = slot_row[cached];
                slot_next[s] = slot_next[cached];
                slot_of[slot_row[s]] = s;
            }
        }
        flags[i] = f;
    }
    *max_live = n ? best : 0;
    *loads = nload;
    free(last_p), free(started), free(next), free(seen);
    free(slot_of), free(slot_row), free(slot_next);
    return CKY_OK;
}
