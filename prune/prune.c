/* prune: the cascade of coarse passes over one sentence (see prune.h): the jar's doPreParses
 * level by level, its createArrays mapping of the allowed substates from level to level, and
 * what PruneMasks.java reports of each level. */
#include "prune.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* CoarseToFineMaxRuleParser.doPreParses: level k prunes with entry k + 1. */
static const double fast_thresholds[] = {-8, -9.75, -10, -9.6, -9.66, -8.01, -7.4, -10, -10};
static const double accurate_thresholds[] = {-8, -12, -12, -11, -12, -12, -14, -14};

double prune_threshold(prune_mode mode, int k)
{
    return (mode == PRUNE_ACCURATE ? accurate_thresholds : fast_thresholds)[k + 1];
}

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv_int(uint64_t h, int v)
{
    for (int i = 0; i < 4; i++) {
        h ^= ((uint32_t)v >> (8 * i)) & 0xff;
        h *= FNV_PRIME;
    }
    return h;
}

prune_level prune_count_mask(const grammar *g, int level, const chart_mask *m)
{
    prune_level r = {0, 0, 0, FNV_OFFSET};
    for (int d = 1; d <= m->n; d++)
        for (int i = 0; i + d <= m->n; i++)
            for (int s = 1; s < g->nsym; s++) {
                if ((d > 1 && !g->phrasal[s]) || !chart_mask_state(m, i, i + d, s))
                    continue;
                int any = 0;
                for (int k = 0; k < (level >= 1 ? g->nsub[s] : 1); k++) {
                    if (level >= 1 && !chart_mask_sub(m, i, i + d, g->sub_offset[s] + k))
                        continue;
                    any = 1;
                    r.substates++;
                    r.hash = fnv_int(fnv_int(fnv_int(fnv_int(r.hash, i), i + d), s), k);
                }
                r.symbols += any;
            }
    return r;
}

/* createArrays: the allowed substates of grammar `to` from those of `from` (p->sub) for the
 * allowed symbols, each substate giving its value to its two children (NULL maps: every
 * substate allowed, as the jar's first substate level), into dst. */
static void map_substates(const prune_plan *p, int n, const grammar *from, const grammar *to,
                          const int *lchild, const int *rchild, unsigned char *dst)
{
    size_t tot_to = (size_t)to->nsub_total, tot_from = (size_t)from->nsub_total;
    for (size_t c = 0; c < chart_ncells(n); c++) {
        const unsigned char *allowed = p->state + c * (size_t)to->nsym;
        const unsigned char *old = p->sub + c * tot_from;
        unsigned char *cell = dst + c * tot_to;
        memset(cell, 0, tot_to);
        for (int s = 0; s < to->nsym; s++) {
            if (!allowed[s])
                continue;
            unsigned char *nw = cell + to->sub_offset[s];
            if (!lchild) {
                memset(nw, 1, (size_t)to->nsub[s]);
                continue;
            }
            for (int x = from->sub_offset[s]; x < from->sub_offset[s] + from->nsub[s]; x++) {
                nw[lchild[x]] = old[x];
                nw[rchild[x]] = old[x];
            }
        }
    }
}

/* After level k's pruning: its statistics and the caller's look at its mask. */
static void report_level(prune_plan *p, int k, int n, int failed, prune_level_fn on_level,
                         void *ctx, prune_mask *out)
{
    const grammar *g = p->cascade->level[k];
    chart_mask m = {n, g->nsym, g->nsub_total, p->state, k >= 1 ? p->sub : NULL};
    if (failed) {
        out->level[k] = (prune_level){1, -1, -1, 0};
        return;
    }
    out->level[k] = p->no_levels ? (prune_level){0, 0, 0, 0} : prune_count_mask(g, k, &m);
    if (on_level)
        on_level(ctx, k, g, &m);
}

static cky_status build_mask(prune_plan *p, char *const *words, int n, prune_mode mode,
                             prune_level_fn on_level, void *ctx, prune_mask *out)
{
    const grammar_cascade *c = p->cascade;
    const double *thr = mode == PRUNE_ACCURATE ? accurate_thresholds : fast_thresholds;
    const grammar *fine = p->fine;
    memset(out, 0, sizeof *out);
    if (n < 1)
        return cky_fail(CKY_ERR_ARG, "prune: a sentence needs at least one word");
    cky_status st = prune_reserve(p, n);
    if (st)
        return st;
    out->nlevel = c->nlevel;
    size_t cells = chart_ncells(n);
    for (size_t x = 0; x < cells; x++) /* createArrays at level 0: allowedStates = grammarTags */
        memcpy(p->state + x * (size_t)fine->nsym, fine->phrasal, (size_t)fine->nsym);
    int parsed;
    if ((st = prune_xbar_passes(p, words, n, &parsed)))
        return st;
    if (parsed)
        prune_xbar_prune(p, n, thr[1]);
    report_level(p, 0, n, !parsed, on_level, ctx, out);
    for (int k = 1; k < c->nlevel; k++) {
        map_substates(p, n, c->level[k - 1], c->level[k], k >= 2 ? c->lchild[k - 1] : NULL,
                      k >= 2 ? c->rchild[k - 1] : NULL, p->sub2);
        unsigned char *t = p->sub;
        p->sub = p->sub2;
        p->sub2 = t;
        if ((st = prune_level_passes(p, k, words, n, &parsed)))
            return st;
        if (parsed)
            prune_level_prune(p, k, n, thr[k + 1]);
        report_level(p, k, n, !parsed, on_level, ctx, out);
    }
    int last = c->nlevel - 1;
    if ((st = chart_mask_init(&out->fine, n, fine->nsym, fine->nsub_total)))
        return st;
    memcpy(out->fine.state, p->state, cells * (size_t)fine->nsym);
    map_substates(p, n, c->level[last], fine, last >= 1 ? c->lchild[last] : NULL,
                  last >= 1 ? c->rchild[last] : NULL, out->fine.sub);
    return CKY_OK;
}

cky_status prune_build_mask(prune_plan *p, char *const *words, int n, prune_mode mode,
                            prune_level_fn on_level, void *ctx, prune_mask *out)
{
    return prune_build_mask_tagged(p, words, NULL, n, mode, on_level, ctx, out);
}

cky_status prune_build_mask_tagged(prune_plan *p, char *const *words, const int *gold, int n,
                                   prune_mode mode, prune_level_fn on_level, void *ctx,
                                   prune_mask *out)
{
    p->gold = gold;
    cky_status st = team_start(p->threads, &p->team);
    if (!st)
        st = build_mask(p, words, n, mode, on_level, ctx, out);
    team_stop(p->team);
    p->team = NULL;
    p->gold = NULL;
    return st;
}

void prune_mask_gold(const grammar *g, const int *gold, chart_mask *m)
{
    for (int i = 0; i < m->n; i++) {
        unsigned char *state = m->state + chart_cell(m->n, i, i + 1) * (size_t)m->nsym;
        for (int t = 0; t < g->nsym; t++)
            if (!g->phrasal[t] && t != gold[i])
                state[t] = 0;
    }
}

void prune_free_mask(prune_mask *m)
{
    chart_mask_free(&m->fine);
}
