/* The per-kernel harness of the hand-written CUDA kernels (issue 40, as ggml's
 * test-backend-ops). Each kernel of gpu/kernels.h, the peak kernels, the GPU Viterbi
 * extraction and max-c's three kernels runs on small random inputs (fixed seeds; several
 * shapes each: sizes off the tile and warp multiples, n = 0, one element) in device buffers
 * between guard words (test_gpu_guarded.h), and its whole output buffers, the words it must
 * leave alone included, are compared with a plain host function beside the test, written
 * from the kernel's contract, not from its code: the first differing index is reported with
 * its place and both values' bits. Everything must be bit-identical: max-plus is exact, the
 * sum-product adds are in the contract's fixed order (kernels_sum_add: items in list order;
 * the fold: slots in order), the unary closure and normalization are sum_rules.h's, max-c's
 * doubles maxc_rules.h's.
 *
 * The gpu_kernels tests skip without a CUDA device. The kernels_ref tests check the host
 * references themselves everywhere: the gather against the workspace layout of
 * gpu/kernels.h, the unary layout of sum_rules_layout against sum_rules_row, the reduce's
 * max against float max, the max-c reference (every candidate summed, no bound) against the
 * cpu engine's maxc_cpu_run. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../chart/scale.h"
#include "../decoders/maxrule/maxc.h"
#include "../decoders/maxrule/maxc_kernels.h"
#include "../decoders/viterbi/viterbi.h"
#include "../decoders/viterbi/viterbi_kernels.h"
#include "../engines/cpu/cpu_sum.h"
#include "../engines/ref/ref.h"
#include "../gpu/gpu.h"
#include "../semiring/sum_rules.h"
#include "../util/floatkey.h"
#include "test_dev.h"
#include "test_gpu_guarded.h"

/* ---- common ---------------------------------------------------------------------------- */

/* splitmix64: the same numbers everywhere for a seed. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rng_below(rng *r, int n) { return n > 0 ? (int)(rng_next(r) % (uint64_t)n) : 0; }

static float rng_unit(rng *r) { return (float)(rng_next(r) >> 40) * 0x1p-24f; } /* [0, 1) */

/* k distinct values of 0 .. n - 1 in random order (k <= n; at least one int allocated). */
static int *rng_distinct(rng *r, int n, int k)
{
    int *all = malloc(((size_t)n + 1) * sizeof *all);
    cr_assert(all);
    for (int i = 0; i < n; i++)
        all[i] = i;
    for (int i = 0; i < k; i++) { /* a partial Fisher-Yates shuffle */
        int j = i + rng_below(r, n - i), x = all[i];
        all[i] = all[j];
        all[j] = x;
    }
    return all;
}

/* n ints in 0 .. below - 1 (at least one allocated). */
static int *rng_ints(rng *r, int n, int below)
{
    int *a = malloc(((size_t)n + 1) * sizeof *a);
    cr_assert(a);
    for (int i = 0; i < n; i++)
        a[i] = rng_below(r, below);
    return a;
}

/* n words of SENTINEL (at least one allocated): the initial contents of every output
 * buffer, on the device (dev_guarded_new) and in the reference. */
static void *sentinels(size_t n)
{
    uint32_t *a = malloc((n + 1) * sizeof *a);
    cr_assert(a);
    for (size_t i = 0; i < n; i++)
        a[i] = SENTINEL;
    return a;
}

static void need_gpu(void)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the hand-written kernels are not run here");
    gpu_device dev;
    cr_assert_eq(gpu_open(0, &dev), CKY_OK, "%s", cky_last_error());
}

static void cuda_ok(cudaError_t e, const char *call)
{
    cr_assert_eq(e, cudaSuccess, "%s: %s", call, cudaGetErrorName(e));
}
#define CUDA_OK(call) cuda_ok((call), #call)

/* A guarded device copy of n elements of `size` bytes at a. */
static dev_guarded up(const void *a, size_t n, size_t size)
{
    return dev_guarded_new(n * size, n ? a : NULL);
}

/* The device buffer's n words against want's (guards first), the first difference
 * reported. */
static void expect_dev_words(const char *what, const dev_guarded *d, const void *want, size_t n,
                             cmp_kind kind, cmp_where where, const void *ctx)
{
    uint32_t *got = sentinels(n);
    dev_guarded_get(d, got, n * 4, what);
    expect_same_words(what, got, want, n, kind, where, ctx);
    free(got);
}

/* The guards of d intact (a kernel's input as well as its output), then d freed. */
static void done(const char *what, dev_guarded *d)
{
    dev_guarded_check(d, what);
    dev_guarded_free(d);
}

static uint32_t bits_of(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* ---- the workspace layout (gpu/kernels.h) ---------------------------------------------- */

/* Row x of work item t: tiles of KERNELS_TILE items, `tile` words apart. */
static long long ws_at(int x, int t, long long tile)
{
    return (long long)(t / KERNELS_TILE) * tile + (long long)x * KERNELS_TILE + t % KERNELS_TILE;
}

/* Words of a workspace of n items. */
static size_t ws_words(int n, long long tile)
{
    return (size_t)((n + KERNELS_TILE - 1) / KERNELS_TILE) * (size_t)tile;
}

typedef struct ws_shape {
    long long tile;
    int rows;
} ws_shape;

static void where_ws(size_t i, const void *ctx, char *buf, size_t len)
{
    const ws_shape *w = ctx;
    long long k = (long long)i / w->tile, in = (long long)i % w->tile;
    if (in < (long long)w->rows * KERNELS_TILE)
        snprintf(buf, len, "workspace row %lld, item %lld", in / KERNELS_TILE,
                 k * KERNELS_TILE + in % KERNELS_TILE);
    else
        snprintf(buf, len, "tile %lld, padding word %lld", k,
                 in - (long long)w->rows * KERNELS_TILE);
}

/* A workspace of n items, `rows` rows: random words (of gen) at the items' rows, `poison`
 * everywhere else (the last tile's items past n and every tile's padding), so that a kernel
 * that reads outside the items shows it. */
static uint32_t *ws_random(rng *r, int n, int rows, long long tile, uint32_t (*gen)(rng *),
                           uint32_t poison)
{
    size_t words = ws_words(n, tile);
    uint32_t *ws = sentinels(words);
    for (size_t i = 0; i < words; i++)
        ws[i] = poison;
    for (int t = 0; t < n; t++)
        for (int x = 0; x < rows; x++)
            ws[ws_at(x, t, tile)] = gen(r);
    return ws;
}

/* ---- kernels_fill ---------------------------------------------------------------------- */

static void ref_fill(uint32_t *a, int rows, int n, long long stride, uint32_t value)
{
    for (int x = 0; x < rows; x++)
        for (int t = 0; t < n; t++)
            a[x * stride + t] = value;
}

TestSuite(gpu_kernels, .timeout = 300);

Test(gpu_kernels, fill)
{
    need_gpu();
    static const struct {
        int rows, n;
        long long stride;
    } shape[] = {{0, 5, 5},   {5, 0, 5},      {1, 1, 1},     {1, 7, 0}, /* one row, stride 0 */
                 {3, 300, 301}, {1030, 3, 4} /* more rows than the grid's 1024 */,
                 {2, 513, 600}};
    const uint32_t value[] = {KERNELS_NINF_BITS, 0, (unsigned)(2 * CHART_EXP_NONE)};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++)
        for (size_t v = 0; v < sizeof value / sizeof *value; v++) {
            int rows = shape[k].rows, n = shape[k].n;
            long long stride = shape[k].stride;
            /* the rows and 9 words past them, which must stay */
            size_t words = (size_t)(rows * stride > n ? rows * stride : n) + 9;
            uint32_t *want = sentinels(words);
            ref_fill(want, rows, n, stride, value[v]);
            dev_guarded d = dev_guarded_new(words * 4, NULL);
            CUDA_OK(kernels_fill(d.p, rows, n, stride, value[v], 0));
            char what[128];
            snprintf(what, sizeof what, "kernels_fill rows %d, n %d, stride %lld, value 0x%08x",
                     rows, n, stride, value[v]);
            cmp_grid g = {(size_t)(stride ? stride : n + 1), {"row", "column"}};
            expect_dev_words(what, &d, want, words, CMP_INT, cmp_where_grid, &g);
            dev_guarded_free(&d);
            free(want);
        }
}

/* ---- kernels_gather, kernels_gather_index ---------------------------------------------- */

/* WS(x, t) = chart[cell[index[t]] * nsub + row[x]] (index NULL: cell[t]). */
static void ref_gather(const float *layer, int nsub, const int *cell, const int *index, int n,
                       const int *row, int rows, float *ws, long long tile)
{
    for (int t = 0; t < n; t++)
        for (int x = 0; x < rows; x++)
            ws[ws_at(x, t, tile)] = layer[(size_t)cell[index ? index[t] : t] * nsub + row[x]];
}

/* Chart scores: log-like values, one in 8 -inf. */
static float random_score(rng *r)
{
    return rng_below(r, 8) == 0 ? -INFINITY : -(rng_unit(r) + 0x1p-20f) * 20;
}

/* The chart, the cells and rows of a gather of n items and `rows` rows: a chart of ncell
 * cells of nsub = rows + 13 substates, rows distinct substates (a class's), cell[] the
 * items' cells (through index[] when with_index: more cells than items, read in random
 * order). */
typedef struct gather_case {
    int nsub, ncell, ncellref, rows, n;
    float *layer;
    int *cell, *index, *row;
} gather_case;

static gather_case gather_random(rng *r, int n, int rows, int with_index)
{
    gather_case c = {.nsub = rows + 13, .ncell = 40, .rows = rows, .n = n};
    c.layer = malloc((size_t)c.ncell * c.nsub * sizeof *c.layer);
    cr_assert(c.layer);
    for (int i = 0; i < c.ncell * c.nsub; i++)
        c.layer[i] = random_score(r);
    c.ncellref = with_index ? n + 17 : n;
    c.cell = rng_ints(r, c.ncellref, c.ncell);
    c.index = with_index ? rng_ints(r, n, c.ncellref) : NULL;
    c.row = rng_distinct(r, c.nsub, rows);
    return c;
}

static void gather_free(gather_case *c)
{
    free(c->layer);
    free(c->cell);
    free(c->index);
    free(c->row);
}

Test(gpu_kernels, gather)
{
    need_gpu();
    /* a block moves 32 items by up to 4 groups of 32 rows (fewer where that leaves under
     * 2,048 blocks): the last two shapes take 3 and 4 groups a block */
    static const struct {
        int n, rows;
    } shape[] = {{0, 5},     {5, 0},    {1, 1},         {31, 33},      {129, 7},
                 {300, 135}, {40, 260}, {22389, 219}, {32785, 163}};
    rng r = {1};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++)
        for (int with_index = 0; with_index < 2; with_index++) {
            int n = shape[k].n, rows = shape[k].rows;
            gather_case c = gather_random(&r, n, rows, with_index);
            long long tile = (long long)rows * KERNELS_TILE + 64; /* and 64 words of padding */
            size_t words = ws_words(n, tile);
            float *want = sentinels(words);
            ref_gather(c.layer, c.nsub, c.cell, c.index, n, c.row, rows, want, tile);
            dev_guarded layer = up(c.layer, (size_t)c.ncell * c.nsub, sizeof(float));
            dev_guarded cell = up(c.cell, c.ncellref, sizeof(int));
            dev_guarded index = up(c.index, with_index ? n : 0, sizeof(int));
            dev_guarded row = up(c.row, rows, sizeof(int));
            dev_guarded ws = dev_guarded_new(words * 4, NULL);
            if (with_index)
                CUDA_OK(kernels_gather_index(layer.p, c.nsub, cell.p, index.p, n, row.p, rows,
                                             ws.p, tile, 0));
            else
                CUDA_OK(kernels_gather(layer.p, c.nsub, cell.p, n, row.p, rows, ws.p, tile, 0));
            char what[128];
            snprintf(what, sizeof what, "%s n %d, rows %d",
                     with_index ? "kernels_gather_index" : "kernels_gather", n, rows);
            ws_shape wsh = {tile, rows};
            expect_dev_words(what, &ws, want, words, CMP_FLOAT, where_ws, &wsh);
            done(what, &layer);
            done(what, &cell);
            done(what, &index);
            done(what, &row);
            dev_guarded_free(&ws);
            free(want);
            gather_free(&c);
        }
}

/* ---- kernels_lexical ------------------------------------------------------------------- */

/* chart[cell[w] * nsub + x] = lex[r * nsub + x], cexp[cell[w]] = exps[r] (exps not NULL),
 * r = row[w] (row NULL: w). */
static void ref_lexical(const float *lex, const int *exps, const int *row, const int *cell,
                        int nword, float *layer, int *cexp, int nsub)
{
    for (int w = 0; w < nword; w++) {
        int r = row ? row[w] : w;
        for (int x = 0; x < nsub; x++)
            layer[(size_t)cell[w] * nsub + x] = lex[(size_t)r * nsub + x];
        if (exps)
            cexp[cell[w]] = exps[r];
    }
}

/* n elements of `size` bytes at a in pinned host memory (read by the kernel over the bus). */
static void *pinned_copy(const void *a, size_t n, size_t size)
{
    void *p;
    CUDA_OK(cudaMallocHost(&p, n * size + 1));
    memcpy(p, a, n * size);
    return p;
}

Test(gpu_kernels, lexical)
{
    need_gpu();
    /* nsub % 4 == 0 takes 16-byte loads */
    static const struct {
        int nword, nsub;
    } shape[] = {{0, 4}, {1, 1}, {5, 3}, {40, 8}, {7, 257}, {9, 260}, {3, 1028}};
    rng r = {2};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++)
        for (int v = 0; v < 8; v++) { /* v & 1: row[]; v & 2: exps[]; v & 4: pinned inputs */
            int nword = shape[k].nword, nsub = shape[k].nsub, with_row = v & 1;
            int with_exps = (v & 2) != 0, pinned = (v & 4) != 0;
            int nlex = with_row ? nword + 3 : nword, ncell = 2 * nword + 5;
            float *lex = malloc(((size_t)nlex * nsub + 1) * sizeof *lex);
            cr_assert(lex);
            for (int i = 0; i < nlex * nsub; i++)
                lex[i] = random_score(&r);
            int *exps = rng_ints(&r, nlex, 1 << 20), *row = rng_ints(&r, nword, nlex);
            int *cell = rng_distinct(&r, ncell, nword); /* one-word cells: distinct */
            float *want = sentinels((size_t)ncell * nsub);
            int *want_exp = sentinels(ncell);
            ref_lexical(lex, with_exps ? exps : NULL, with_row ? row : NULL, cell, nword, want,
                        want_exp, nsub);
            dev_guarded layer = dev_guarded_new((size_t)ncell * nsub * 4, NULL);
            dev_guarded cexp = dev_guarded_new((size_t)ncell * 4, NULL);
            dev_guarded d_lex = {0}, d_exps = {0}, d_row = {0}, d_cell = {0};
            const float *a_lex;
            const int *a_exps, *a_row, *a_cell;
            if (pinned) {
                a_lex = pinned_copy(lex, (size_t)nlex * nsub, sizeof *lex);
                a_exps = pinned_copy(exps, nlex, sizeof *exps);
                a_row = pinned_copy(row, nword, sizeof *row);
                a_cell = pinned_copy(cell, nword, sizeof *cell);
            } else {
                d_lex = up(lex, (size_t)nlex * nsub, sizeof *lex);
                d_exps = up(exps, nlex, sizeof *exps);
                d_row = up(row, nword, sizeof *row);
                d_cell = up(cell, nword, sizeof *cell);
                a_lex = d_lex.p, a_exps = d_exps.p, a_row = d_row.p, a_cell = d_cell.p;
            }
            CUDA_OK(kernels_lexical(a_lex, with_exps ? a_exps : NULL, with_row ? a_row : NULL,
                                    a_cell, nword, layer.p, with_exps ? cexp.p : NULL, nsub, 0));
            char what[160];
            snprintf(what, sizeof what, "kernels_lexical nword %d, nsub %d%s%s%s", nword, nsub,
                     with_row ? ", row[]" : "", with_exps ? ", exps[]" : "",
                     pinned ? ", pinned inputs" : "");
            cmp_grid g = {(size_t)nsub, {"cell", "substate"}}, ge = {1, {"cell", NULL}};
            expect_dev_words(what, &layer, want, (size_t)ncell * nsub, CMP_FLOAT, cmp_where_grid,
                             &g);
            expect_dev_words(what, &cexp, want_exp, ncell, CMP_INT, cmp_where_grid, &ge);
            if (pinned) {
                cudaFreeHost((void *)a_lex);
                cudaFreeHost((void *)a_exps);
                cudaFreeHost((void *)a_row);
                cudaFreeHost((void *)a_cell);
            } else {
                done(what, &d_lex);
                done(what, &d_exps);
                done(what, &d_row);
                done(what, &d_cell);
            }
            dev_guarded_free(&layer);
            dev_guarded_free(&cexp);
            free(lex);
            free(exps);
            free(row);
            free(cell);
            free(want);
            free(want_exp);
        }
}

/* ---- kernels_reduce -------------------------------------------------------------------- */

static int key_of(float v) { return floatkey((int)bits_of(v)); }

static float float_of_key(int k)
{
    int b = floatkey(k);
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* chart[cell[t] * nsub + row[x]] = max(itself, key(WS(x, t))): the max in the keys' order,
 * which is the floats' with -0 below +0 (util/floatkey.h). */
static void ref_reduce(const int *ws, long long tile, int n, const int *cell, const int *row,
                       int rows, float *layer, int nsub)
{
    for (int t = 0; t < n; t++)
        for (int x = 0; x < rows; x++) {
            float *c = &layer[(size_t)cell[t] * nsub + row[x]];
            int k = ws[ws_at(x, t, tile)];
            if (k > key_of(*c))
                *c = float_of_key(k);
        }
}

/* A parent score: -inf (the fill), +-0, or a log-like value, mostly a few distinct ones so
 * that equal maxima meet in one cell. */
static float reduce_value(rng *r)
{
    switch (rng_below(r, 8)) {
    case 0:
    case 1: return -INFINITY;
    case 2: return -0.0f;
    case 3: return 0.0f;
    case 4: return -(float)rng_below(r, 4);
    default: return -(rng_unit(r) + 0x1p-20f) * 20;
    }
}

static uint32_t reduce_key(rng *r) { return (uint32_t)key_of(reduce_value(r)); }

Test(gpu_kernels, reduce)
{
    need_gpu();
    static const struct {
        int n, rows;
    } shape[] = {{0, 3}, {3, 0}, {1, 1}, {33, 31}, {257, 65}, {1000, 100}, {130, 300}};
    rng r = {3};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
        int n = shape[k].n, rows = shape[k].rows, ncell = 6, nsub = rows + 5;
        long long tile = (long long)rows * KERNELS_TILE + 32;
        size_t words = ws_words(n, tile);
        /* keys past the items: +1e30, which would win any max it reached */
        int *ws = (int *)ws_random(&r, n, rows, tile, reduce_key, (uint32_t)key_of(1e30f));
        int *cell = rng_ints(&r, n, ncell); /* many items a cell: the atomics meet */
        int *row = rng_distinct(&r, nsub, rows);
        float *layer = malloc((size_t)ncell * nsub * sizeof *layer);
        cr_assert(layer);
        for (int i = 0; i < ncell * nsub; i++)
            layer[i] = reduce_value(&r);
        dev_guarded d_chart = up(layer, (size_t)ncell * nsub, sizeof *layer);
        ref_reduce(ws, tile, n, cell, row, rows, layer, nsub);
        dev_guarded d_ws = up(ws, words, 4), d_cell = up(cell, n, 4), d_row = up(row, rows, 4);
        CUDA_OK(kernels_reduce(d_ws.p, tile, n, d_cell.p, d_row.p, rows, d_chart.p, nsub, 0, 0));
        char what[128];
        snprintf(what, sizeof what, "kernels_reduce n %d, rows %d", n, rows);
        cmp_grid g = {(size_t)nsub, {"cell", "substate"}};
        expect_dev_words(what, &d_chart, layer, (size_t)ncell * nsub, CMP_FLOAT, cmp_where_grid,
                         &g);
        dev_guarded_free(&d_chart);
        done(what, &d_ws);
        done(what, &d_cell);
        done(what, &d_row);
        free(ws);
        free(cell);
        free(row);
        free(layer);
    }
}

/* ---- kernels_unary_setup, kernels_unary ------------------------------------------------ */

/* post[c][p] = max(pre[c][p], max over entries (p <- q, w) of pre[c][q] + w) for the
 * listed cells (one float add each; max is exact in any order). */
static void ref_unary(const float *pre, float *post, int nsub, const int *cell, int ncell,
                      const int *first, const int *child, const float *weight)
{
    for (int c = 0; c < ncell; c++) {
        const float *in = pre + (size_t)cell[c] * nsub;
        float *out = post + (size_t)cell[c] * nsub;
        for (int p = 0; p < nsub; p++) {
            float v = in[p];
            for (int e = first[p]; e < first[p + 1]; e++) {
                float s = in[child[e]] + weight[e];
                v = s > v ? s : v;
            }
            out[p] = v;
        }
    }
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

Test(gpu_kernels, unary)
{
    need_gpu();
    int lanes = 0;
    cr_assert_eq(kernels_unary_setup(1 << 20, &lanes), cudaErrorInvalidValue,
                 "a pre layer of 4 MiB fits no block's shared memory");
    /* 32 cells a block where (33 nsub) floats fit the shared memory, fewer for nsub 2000 */
    static const struct {
        int ncell, nsub;
    } shape[] = {{0, 5}, {1, 1}, {31, 37}, {33, 300}, {70, 64}, {20, 2000}};
    rng r = {4};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
        int ncell = shape[k].ncell, nsub = shape[k].nsub, nchart = ncell + 7;
        CUDA_OK(kernels_unary_setup(nsub, &lanes));
        cr_assert(lanes >= 1 && lanes <= 32 && (nsub > 1000 || lanes == 32), "lanes %d", lanes);
        /* no -0 anywhere, so that the max of equal zeros has one answer */
        float *pre = malloc((size_t)nchart * nsub * sizeof *pre);
        cr_assert(pre);
        for (int i = 0; i < nchart * nsub; i++)
            pre[i] = rng_below(&r, 6) == 0 ? -INFINITY : -(rng_unit(&r) + 0x1p-20f) * 30;
        int *first = malloc(((size_t)nsub + 1) * sizeof *first);
        cr_assert(first);
        first[0] = 0;
        for (int p = 0; p < nsub; p++)
            first[p + 1] = first[p] + rng_below(&r, 7); /* 0 .. 6 entries, odd and even */
        int nent = first[nsub];
        int *child = rng_ints(&r, nent, nsub);
        float *weight = malloc(((size_t)nent + 1) * sizeof *weight);
        cr_assert(weight);
        for (int p = 0; p < nsub; p++) /* each parent's entries ascending by child */
            qsort(child + first[p], (size_t)(first[p + 1] - first[p]), sizeof *child, int_cmp);
        for (int e = 0; e < nent; e++)
            weight[e] = rng_below(&r, 10) == 0 ? 0.0f : -(rng_unit(&r) + 0x1p-20f) * 5;
        int *cell = rng_distinct(&r, nchart, ncell);
        float *want = sentinels((size_t)nchart * nsub);
        ref_unary(pre, want, nsub, cell, ncell, first, child, weight);
        dev_guarded d_pre = up(pre, (size_t)nchart * nsub, 4), d_cell = up(cell, ncell, 4);
        dev_guarded d_first = up(first, (size_t)nsub + 1, 4), d_child = up(child, nent, 4);
        dev_guarded d_weight = up(weight, nent, 4);
        dev_guarded d_post = dev_guarded_new((size_t)nchart * nsub * 4, NULL);
        CUDA_OK(kernels_unary(d_pre.p, d_post.p, nsub, d_cell.p, ncell, d_first.p, d_child.p,
                              d_weight.p, lanes, 0));
        char what[128];
        snprintf(what, sizeof what, "kernels_unary ncell %d, nsub %d (%d lanes, %d entries)",
                 ncell, nsub, lanes, nent);
        cmp_grid g = {(size_t)nsub, {"cell", "substate"}};
        expect_dev_words(what, &d_post, want, (size_t)nchart * nsub, CMP_FLOAT, cmp_where_grid,
                         &g);
        dev_guarded_free(&d_post);
        done(what, &d_pre);
        done(what, &d_cell);
        done(what, &d_first);
        done(what, &d_child);
        done(what, &d_weight);
        free(pre);
        free(first);
        free(child);
        free(weight);
        free(cell);
        free(want);
    }
}

/* ---- the sum-product items: kernels_sum_exp, kernels_sum_add --------------------------- */

static int item_at(const kernels_sum_items *it, int t)
{
    return it->index ? it->index[t] : (int)(it->first + t);
}

static int item_exp(const kernels_sum_items *it, int m)
{
    return it->ea[it->ca[m]] + it->eb[it->cb[m]];
}

/* top[dest] = max(itself, the item's exponent) for positions 0 .. n - 1. */
static void ref_sum_exp(const kernels_sum_items *it, int n, int *top)
{
    for (int t = 0; t < n; t++) {
        int m = item_at(it, t), e = item_exp(it, m);
        top[it->dest[m]] = e > top[it->dest[m]] ? e : top[it->dest[m]];
    }
}

/* For positions t < n in order: chart[dest * nsub + row[x]] += WS(x, t) x 2^(exponent -
 * top[dest]) (chart_scale: exact, or 0 below the normal range) where WS(x, t) > 0, one
 * rounded float add each. */
static void ref_sum_add(const float *ws, long long tile, const kernels_sum_items *it, int n,
                        const int *top, const int *row, int rows, float *layer, int nsub)
{
    for (int t = 0; t < n; t++) {
        int m = item_at(it, t), d = it->dest[m], shift = item_exp(it, m) - top[d];
        for (int x = 0; x < rows; x++) {
            float v = ws[ws_at(x, t, tile)], *c = &layer[(size_t)d * nsub + row[x]];
            if (v > 0)
                *c = *c + chart_scale(v, shift);
        }
    }
}

/* The items of a list of n positions over ncell cells, on the host and on the device: each
 * cell's items one after the other (runs of 1 .. run_max positions, each run a cell of its
 * own), item m of position t at index[t] (a random permutation of more items than
 * positions) or first + t (first: 5); ca, cb random cells, ea, eb their exponents (one in
 * 8 CHART_EXP_NONE: an all-zero layer). */
typedef struct item_set {
    int n, nitem, ncell;
    long long first;
    int *dest, *ca, *cb, *ea, *eb, *index;
    dev_guarded d[6]; /* dest, ca, cb, ea, eb, index */
} item_set;

static int random_exp(rng *r)
{
    return rng_below(r, 8) == 0 ? CHART_EXP_NONE : rng_below(r, 171) - 150;
}

static item_set items_random(rng *r, int n, int run_max, int with_index)
{
    item_set s = {.n = n, .ncell = n + 3, .first = with_index ? 0 : 5};
    s.nitem = with_index ? n + 9 : n + 5;
    s.dest = rng_ints(r, s.nitem, s.ncell);
    s.ca = rng_ints(r, s.nitem, s.ncell);
    s.cb = rng_ints(r, s.nitem, s.ncell);
    s.ea = malloc(((size_t)s.ncell + 1) * sizeof *s.ea);
    s.eb = malloc(((size_t)s.ncell + 1) * sizeof *s.eb);
    cr_assert(s.ea && s.eb);
    for (int c = 0; c < s.ncell; c++) {
        s.ea[c] = random_exp(r);
        s.eb[c] = random_exp(r);
    }
    s.index = with_index ? rng_distinct(r, s.nitem, n) : NULL;
    int *order = rng_distinct(r, s.ncell, s.ncell), runs = 0;
    for (int t = 0; t < n; runs++) /* at most n runs: ncell > n cells are enough */
        for (int len = 1 + rng_below(r, run_max); len > 0 && t < n; len--, t++)
            s.dest[with_index ? s.index[t] : s.first + t] = order[runs];
    free(order);
    const int *a[6] = {s.dest, s.ca, s.cb, s.ea, s.eb, s.index};
    int len[6] = {s.nitem, s.nitem, s.nitem, s.ncell, s.ncell, with_index ? n : 0};
    for (int k = 0; k < 6; k++)
        s.d[k] = up(a[k], len[k], sizeof(int));
    return s;
}

static kernels_sum_items items_host(const item_set *s)
{
    return (kernels_sum_items){s->index, s->first, s->dest, s->ca, s->cb, s->ea, s->eb};
}

static kernels_sum_items items_dev(const item_set *s)
{
    return (kernels_sum_items){s->index ? s->d[5].p : NULL, s->first, s->d[0].p, s->d[1].p,
                               s->d[2].p, s->d[3].p, s->d[4].p};
}

static void items_free(item_set *s, const char *what)
{
    for (int k = 0; k < 6; k++)
        done(what, &s->d[k]);
    free(s->dest);
    free(s->ca);
    free(s->cb);
    free(s->ea);
    free(s->eb);
    free(s->index);
}

/* Every top 2 CHART_EXP_NONE (as the passes fill it) but one in 4 random. */
static int *tops_random(rng *r, int ncell)
{
    int *top = malloc(((size_t)ncell + 1) * sizeof *top);
    cr_assert(top);
    for (int c = 0; c < ncell; c++)
        top[c] = rng_below(r, 4) ? 2 * CHART_EXP_NONE : rng_below(r, 100) - 80;
    return top;
}

Test(gpu_kernels, sum_exp)
{
    need_gpu();
    static const int sizes[] = {0, 1, 37, 256, 1000};
    rng r = {5};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        for (int with_index = 0; with_index < 2; with_index++) {
            int n = sizes[k];
            item_set s = items_random(&r, n, 5, with_index);
            int *top = tops_random(&r, s.ncell);
            dev_guarded d_top = up(top, s.ncell, 4);
            kernels_sum_items h = items_host(&s);
            ref_sum_exp(&h, n, top);
            CUDA_OK(kernels_sum_exp(items_dev(&s), n, d_top.p, 0));
            char what[128];
            snprintf(what, sizeof what, "kernels_sum_exp n %d%s", n,
                     with_index ? ", through an index" : "");
            cmp_grid g = {1, {"cell", NULL}};
            expect_dev_words(what, &d_top, top, s.ncell, CMP_INT, cmp_where_grid, &g);
            dev_guarded_free(&d_top);
            items_free(&s, what);
            free(top);
        }
}

/* A workspace value of the sum-product kernels: mostly positive, over many binades (so
 * that the order of the adds shows), some 0, -0, negative or subnormal (not added: > 0
 * only, or 0 after chart_scale). */
static float sum_value(rng *r)
{
    switch (rng_below(r, 32)) {
    case 0:
    case 1:
    case 2:
    case 3: return 0.0f;
    case 4:
    case 5: return -0.0f;
    case 6: return -rng_unit(r);
    case 7: return (float)rng_below(r, 1 << 20) * 0x1p-149f; /* subnormal */
    default: return ldexpf(0.5f + rng_unit(r) / 2, -rng_below(r, 30));
    }
}

static uint32_t sum_word(rng *r) { return bits_of(sum_value(r)); }

Test(gpu_kernels, sum_add)
{
    need_gpu();
    /* a block looks at 32 positions and adds each run starting there, its threads over 256
     * rows at a time, the run's items in windows of 256: rows > 256 and runs > 256 and > 32
     * included, and every item a cell of its own */
    static const struct {
        int n, rows, run_max;
    } shape[] = {{0, 5, 1},     {1, 1, 1},    {37, 7, 3},    {100, 300, 40},
                 {700, 20, 600}, {129, 33, 1}, {1000, 3, 64}, {5, 0, 2}};
    rng r = {6};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++)
        for (int with_index = 0; with_index < 2; with_index++) {
            int n = shape[k].n, rows = shape[k].rows, nsub = rows + 11;
            item_set s = items_random(&r, n, shape[k].run_max, with_index);
            kernels_sum_items h = items_host(&s);
            int *top = tops_random(&r, s.ncell);
            ref_sum_exp(&h, n, top); /* the cells' exponents, as the passes take them first */
            long long tile = (long long)rows * KERNELS_TILE + 32;
            size_t words = ws_words(n, tile);
            /* past the items: 1.0, which would show in any sum that read it */
            float *ws = (float *)ws_random(&r, n, rows, tile, sum_word, bits_of(1.0f));
            int *row = rng_distinct(&r, nsub, rows);
            size_t nchart = (size_t)s.ncell * nsub;
            float *layer = malloc((nchart + 1) * sizeof *layer);
            cr_assert(layer);
            for (size_t i = 0; i < nchart; i++) /* what earlier families left */
                layer[i] = rng_below(&r, 3) ? 0.0f : rng_unit(&r);
            dev_guarded d_chart = up(layer, nchart, 4), d_top = up(top, s.ncell, 4);
            dev_guarded d_ws = up(ws, words, 4), d_row = up(row, rows, 4);
            ref_sum_add(ws, tile, &h, n, top, row, rows, layer, nsub);
            CUDA_OK(kernels_sum_add(d_ws.p, tile, items_dev(&s), n, d_top.p, d_row.p, rows,
                                    d_chart.p, nsub, 0));
            char what[160];
            snprintf(what, sizeof what, "kernels_sum_add n %d, rows %d, runs of 1 .. %d%s", n,
                     rows, shape[k].run_max, with_index ? ", through an index" : "");
            cmp_grid g = {(size_t)nsub, {"cell", "substate"}};
            expect_dev_words(what, &d_chart, layer, nchart, CMP_FLOAT, cmp_where_grid, &g);
            dev_guarded_free(&d_chart);
            done(what, &d_top);
            done(what, &d_ws);
            done(what, &d_row);
            items_free(&s, what);
            free(top);
            free(ws);
            free(row);
            free(layer);
        }
}

/* ---- kernels_sum_fold_slots ------------------------------------------------------------ */

/* WS(row, t) = WS(row, t) + PART(slot, t) for each row of f and its slots in order, t < n. */
static void ref_sum_fold(const float *part, int ptile, float *ws, int tile, int n,
                         const kernels_sum_fold *f)
{
    for (int t = 0; t < n; t++)
        for (int r = 0; r < f->nrow; r++) {
            float *o = &ws[ws_at(f->row[r], t, tile)];
            for (int j = f->first[r]; j < f->first[r + 1]; j++)
                *o = *o + part[ws_at(f->slot[j], t, ptile)];
        }
}

Test(gpu_kernels, sum_fold_slots)
{
    need_gpu();
    /* threads: 128 items x 4 rows a block */
    static const struct {
        int n, nrow, nslot, wsrows;
    } shape[] = {{0, 3, 5, 4},    {5, 0, 0, 2},    {1, 1, 1, 1},      {127, 5, 9, 7},
                 {129, 7, 20, 9}, {300, 4, 4, 4}, {257, 13, 40, 30}, {200, 3, 0, 3}};
    rng r = {7};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
        int n = shape[k].n, nrow = shape[k].nrow, nslot = shape[k].nslot;
        int wsrows = shape[k].wsrows;
        /* the fold as fold_stage makes it: rows ascending, each slot in one row (rows
         * without a slot allowed), each row's slots ascending */
        int *row = rng_distinct(&r, wsrows, nrow);
        qsort(row, (size_t)nrow, sizeof *row, int_cmp);
        int *of = rng_ints(&r, nslot, nrow > 0 ? nrow : 1); /* each slot's row */
        int *first = calloc((size_t)nrow + 2, sizeof *first), *slot = sentinels(nslot);
        cr_assert(first);
        for (int s = 0; s < nslot && nrow > 0; s++)
            first[of[s] + 1]++;
        for (int x = 0; x < nrow; x++)
            first[x + 1] += first[x];
        int *at = malloc(((size_t)nrow + 1) * sizeof *at);
        cr_assert(at);
        memcpy(at, first, (size_t)nrow * sizeof *at);
        for (int s = 0; s < nslot && nrow > 0; s++)
            slot[at[of[s]]++] = s;
        if (nrow == 0)
            nslot = 0;
        int ptile = nslot * KERNELS_TILE + 32, tile = wsrows * KERNELS_TILE + 16;
        float *part = (float *)ws_random(&r, n, nslot, ptile, sum_word, bits_of(1.0f));
        float *ws = (float *)ws_random(&r, n, wsrows, tile, sum_word, bits_of(2.0f));
        size_t pwords = ws_words(n, ptile), words = ws_words(n, tile);
        dev_guarded d_part = up(part, pwords, 4), d_ws = up(ws, words, 4);
        dev_guarded d_row = up(row, nrow, 4), d_first = up(first, (size_t)nrow + 1, 4);
        dev_guarded d_slot = up(slot, nslot, 4);
        kernels_sum_fold h = {nslot, nrow, row, first, slot};
        kernels_sum_fold d = {nslot, nrow, d_row.p, d_first.p, d_slot.p};
        ref_sum_fold(part, ptile, ws, tile, n, &h);
        CUDA_OK(kernels_sum_fold_slots(d_part.p, ptile, d_ws.p, tile, n, d, 0));
        char what[128];
        snprintf(what, sizeof what, "kernels_sum_fold_slots n %d, %d rows, %d slots", n, nrow,
                 nslot);
        ws_shape wsh = {tile, wsrows};
        expect_dev_words(what, &d_ws, ws, words, CMP_FLOAT, where_ws, &wsh);
        dev_guarded_free(&d_ws);
        done(what, &d_part);
        done(what, &d_row);
        done(what, &d_first);
        done(what, &d_slot);
        free(row);
        free(of);
        free(first);
        free(slot);
        free(at);
        free(part);
        free(ws);
    }
}

/* ---- kernels_sum_unary_setup, kernels_sum_unary ---------------------------------------- */

/* A random closure table over n substates: rows of 0 .. most entries (one row in 3 none),
 * weights in (0, 1), half the rows phrasal. */
static sum_unary_table table_random(rng *r, int n, int most)
{
    sum_unary_table t = {.n = n};
    t.first = malloc(((size_t)n + 1) * sizeof *t.first);
    t.phrasal = malloc((size_t)n + 1);
    cr_assert(t.first && t.phrasal);
    t.first[0] = 0;
    for (int x = 0; x < n; x++) {
        t.first[x + 1] = t.first[x] + (rng_below(r, 3) ? 1 + rng_below(r, most) : 0);
        t.phrasal[x] = (unsigned char)rng_below(r, 2);
    }
    int nent = t.first[n];
    t.from = rng_ints(r, nent, n);
    t.w = malloc(((size_t)nent + 1) * sizeof *t.w);
    cr_assert(t.w);
    for (int e = 0; e < nent; e++)
        t.w[e] = rng_unit(r) + 0x1p-24f;
    return t;
}

static void table_free(sum_unary_table *t)
{
    free(t->first);
    free(t->from);
    free(t->w);
    free(t->phrasal);
}

/* For each listed cell c: out[c] = in[c] + the table's rows over in[c] (sum_rules_row, in
 * cells of `span` words), normalized (sum_rules_normalize: eout[c] = ein[c] + the exponent
 * taken out, or CHART_EXP_NONE). */
static void ref_sum_unary(const float *in, const int *ein, float *out, int *eout, int nsub,
                          const int *cell, int ncell, int span, const sum_unary_table *t)
{
    for (int c = 0; c < ncell; c++) {
        const float *v = in + (size_t)cell[c] * nsub;
        float *o = out + (size_t)cell[c] * nsub;
        for (int x = 0; x < nsub; x++)
            o[x] = v[x] + sum_rules_row(t, x, v, span);
        eout[cell[c]] = sum_rules_normalize(o, nsub, ein[cell[c]]);
    }
}

/* A layout's arrays on the device, and the kernel's view of them. */
typedef struct dev_layout {
    dev_guarded row, off, from, w;
    kernels_sum_layout k;
} dev_layout;

static dev_layout layout_up(const sum_unary_layout *l)
{
    dev_layout d = {up(l->row, l->nslot, 4), up(l->off, (size_t)l->ngroup + 1, 4),
                    up(l->from, l->nent, 4), up(l->w, l->nent, 4), {0}};
    d.k = (kernels_sum_layout){l->nslot, d.row.p, d.off.p, d.from.p, d.w.p};
    return d;
}

static void layout_done(const char *what, dev_layout *d)
{
    done(what, &d->row);
    done(what, &d->off);
    done(what, &d->from);
    done(what, &d->w);
}

/* The layer of cell c of a sum_unary case: all 0 (c = 0), subnormal and 0 (c = 1: the
 * charts' 0), tiny (c = 2: normalized upwards), else random in [0, 1), one in 4 0. */
static float sum_layer_value(rng *r, int c)
{
    switch (c) {
    case 0: return 0.0f;
    case 1: return rng_below(r, 2) ? (float)rng_below(r, 1 << 22) * 0x1p-149f : 0.0f;
    case 2: return ldexpf(0.5f + rng_unit(r) / 2, -120 - rng_below(r, 4));
    default: return rng_below(r, 4) ? rng_unit(r) : 0.0f;
    }
}

Test(gpu_kernels, sum_unary)
{
    need_gpu();
    /* a block of 256 threads a cell: nsub and the slots past 256 included (nsub 450: about
     * 300 rows with entries), rows longer than a group of 32 entries */
    static const struct {
        int ncell, nsub, most, span;
    } shape[] = {{0, 5, 3, 1},    {1, 1, 1, 1},    {3, 5, 3, 2},    {20, 40, 8, 1},
                 {20, 40, 8, 3},  {7, 450, 40, 1}, {7, 450, 40, 2}, {5, 33, 70, 1}};
    rng r = {8};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
        int ncell = shape[k].ncell, nsub = shape[k].nsub, span = shape[k].span;
        int nchart = ncell + 4;
        sum_unary_table t = table_random(&r, nsub, shape[k].most);
        sum_unary_layout lw, lp;
        cr_assert_eq(sum_rules_layout(&t, 0, &lw), CKY_OK);
        cr_assert_eq(sum_rules_layout(&t, 1, &lp), CKY_OK);
        int *cell = rng_distinct(&r, nchart, ncell);
        float *in = malloc((size_t)nchart * nsub * sizeof *in);
        int *ein = malloc((size_t)nchart * sizeof *ein);
        cr_assert(in && ein);
        for (int c = 0; c < nchart; c++) {
            int kind = -1; /* the listed cells' kinds by list position */
            for (int q = 0; q < ncell; q++)
                kind = cell[q] == c ? q : kind;
            for (int x = 0; x < nsub; x++)
                in[(size_t)c * nsub + x] = sum_layer_value(&r, kind < 0 ? 3 : kind);
            ein[c] = rng_below(&r, 201) - 100;
        }
        float *want = sentinels((size_t)nchart * nsub);
        int *want_e = sentinels(nchart);
        ref_sum_unary(in, ein, want, want_e, nsub, cell, ncell, span, &t);
        dev_guarded d_in = up(in, (size_t)nchart * nsub, 4), d_ein = up(ein, nchart, 4);
        dev_guarded d_cell = up(cell, ncell, 4);
        dev_guarded d_out = dev_guarded_new((size_t)nchart * nsub * 4, NULL);
        dev_guarded d_eout = dev_guarded_new((size_t)nchart * 4, NULL);
        dev_layout dw = layout_up(&lw), dp = layout_up(&lp);
        CUDA_OK(kernels_sum_unary_setup(nsub));
        CUDA_OK(kernels_sum_unary(d_in.p, d_ein.p, d_out.p, d_eout.p, nsub, d_cell.p, ncell, span,
                                  (kernels_sum_table){dw.k, dp.k}, 0));
        char what[160];
        snprintf(what, sizeof what, "kernels_sum_unary ncell %d, nsub %d, span %d (%d slots)",
                 ncell, nsub, span, span == 1 ? lw.nslot : lp.nslot);
        cmp_grid g = {(size_t)nsub, {"cell", "substate"}}, ge = {1, {"cell", NULL}};
        expect_dev_words(what, &d_out, want, (size_t)nchart * nsub, CMP_FLOAT, cmp_where_grid,
                         &g);
        expect_dev_words(what, &d_eout, want_e, nchart, CMP_INT, cmp_where_grid, &ge);
        dev_guarded_free(&d_out);
        dev_guarded_free(&d_eout);
        done(what, &d_in);
        done(what, &d_ein);
        done(what, &d_cell);
        layout_done(what, &dw);
        layout_done(what, &dp);
        sum_rules_layout_free(&lw);
        sum_rules_layout_free(&lp);
        table_free(&t);
        free(cell);
        free(in);
        free(ein);
        free(want);
        free(want_e);
    }
}

/* ---- kernels_sum_roots ----------------------------------------------------------------- */

/* ROOT (global substate 0) 1 and exponent 0 in the root cells. */
static void ref_sum_roots(float *opost, int *eopost, int nsub, const int *roots, int n)
{
    for (int k = 0; k < n; k++) {
        opost[(size_t)roots[k] * nsub] = 1.0f;
        eopost[roots[k]] = 0;
    }
}

Test(gpu_kernels, sum_roots)
{
    need_gpu();
    static const struct {
        int n, nsub;
    } shape[] = {{0, 3}, {1, 1}, {5, 7}, {300, 2}};
    rng r = {9};
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
        int n = shape[k].n, nsub = shape[k].nsub, ncell = 2 * n + 3;
        int *roots = rng_distinct(&r, ncell, n);
        float *opost = malloc((size_t)ncell * nsub * sizeof *opost);
        cr_assert(opost);
        for (int i = 0; i < ncell * nsub; i++)
            opost[i] = rng_unit(&r);
        int *eopost = rng_ints(&r, ncell, 1000);
        dev_guarded d_opost = up(opost, (size_t)ncell * nsub, 4), d_eopost = up(eopost, ncell, 4);
        dev_guarded d_roots = up(roots, n, 4);
        ref_sum_roots(opost, eopost, nsub, roots, n);
        CUDA_OK(kernels_sum_roots(d_opost.p, d_eopost.p, nsub, d_roots.p, n, 0));
        char what[64];
        snprintf(what, sizeof what, "kernels_sum_roots n %d, nsub %d", n, nsub);
        cmp_grid g = {(size_t)nsub, {"cell", "substate"}}, ge = {1, {"cell", NULL}};
        expect_dev_words(what, &d_opost, opost, (size_t)ncell * nsub, CMP_FLOAT, cmp_where_grid,
                         &g);
        expect_dev_words(what, &d_eopost, eopost, ncell, CMP_INT, cmp_where_grid, &ge);
        dev_guarded_free(&d_opost);
        dev_guarded_free(&d_eopost);
        done(what, &d_roots);
        free(roots);
        free(opost);
        free(eopost);
    }
}

/* ---- gpu_peak_launch ------------------------------------------------------------------- */

/* A micro-benchmark whose arithmetic is its own (gpu/peak.cu): what can be checked is that
 * every thread writes its one result, finite, the same bits on a second launch, nothing
 * outside out[], and that an unknown kind is refused. (The rates: test_gpu_peak.c.) */
Test(gpu_kernels, peak)
{
    need_gpu();
    static const struct {
        int blocks, trips;
        float seed;
    } shape[] = {{1, 0, -0.001f}, {3, 5, -0.001f}, {2, 64, 0.5f}};
    for (int kind = 0; kind < GPU_PEAK_NKIND; kind++) {
        int per_sm = 0;
        CUDA_OK(gpu_peak_blocks_per_sm((gpu_peak_kind)kind, &per_sm));
        cr_assert_gt(per_sm, 0);
        for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
            size_t n = (size_t)shape[k].blocks * GPU_PEAK_THREADS;
            dev_guarded a = dev_guarded_new(n * 4, NULL), b = dev_guarded_new(n * 4, NULL);
            CUDA_OK(gpu_peak_launch((gpu_peak_kind)kind, a.p, shape[k].blocks, shape[k].trips,
                                    shape[k].seed, 0));
            CUDA_OK(gpu_peak_launch((gpu_peak_kind)kind, b.p, shape[k].blocks, shape[k].trips,
                                    shape[k].seed, 0));
            char what[96];
            snprintf(what, sizeof what, "gpu_peak_launch %s, %d blocks, %d trips",
                     gpu_peak_kind_name((gpu_peak_kind)kind), shape[k].blocks, shape[k].trips);
            float *first = sentinels(n);
            dev_guarded_get(&a, first, n * 4, what);
            for (size_t i = 0; i < n; i++)
                cr_assert(isfinite(first[i]), "%s: thread %zu: %a (0x%08x)", what, i, first[i],
                          bits_of(first[i]));
            cmp_grid g = {GPU_PEAK_THREADS, {"block", "thread"}};
            expect_dev_words(what, &b, first, n, CMP_FLOAT, cmp_where_grid, &g);
            dev_guarded_free(&a);
            dev_guarded_free(&b);
            free(first);
        }
    }
    int per_sm;
    cr_assert_eq(gpu_peak_blocks_per_sm(GPU_PEAK_NKIND, &per_sm), cudaErrorInvalidValue);
    cr_assert_eq(gpu_peak_launch(GPU_PEAK_NKIND, NULL, 1, 1, 1.0f, 0), cudaErrorInvalidValue);
}

/* ---- viterbi_gpu_launch ---------------------------------------------------------------- */

/* test_gpu_viterbi.c compares the extraction with viterbi_extract_array on real grammars
 * and on ties; here the launch itself: a batch with a sentence of no words (status
 * VITERBI_GPU_NO_PARSE, nothing written) between real ones, their nodes apart with gaps that
 * must stay untouched, every buffer guarded; and an empty batch. */
Test(gpu_kernels, viterbi_launch)
{
    need_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    enum { NREAL = 3, NSENT = NREAL + 1, GAP = 3 };
    sentence s[NREAL];
    cr_assert_eq(dev_sentences(NREAL, 10, s), NREAL);
    chart *c[NSENT] = {NULL}; /* c[1]: the sentence of no words */
    int nsub = g->nsub_total, n[NSENT], node0[NSENT], nnode = 0;
    long long cell0[NSENT], ncell = 0;
    for (int k = 0, m = 0; k < NSENT; k++) {
        if (k != 1) {
            cr_assert_eq(ref_parse(g, s[m].words, s[m].n, CHART_FLOAT, &c[k]), CKY_OK, "%s",
                         cky_last_error());
            m++;
        }
        n[k] = c[k] ? c[k]->n : 0;
        cell0[k] = ncell;
        node0[k] = nnode;
        ncell += (long long)chart_ncells(n[k]);
        nnode += (n[k] ? 2 * n[k] - 1 : 0) + GAP;
    }
    size_t nval = (size_t)ncell * nsub;
    float *pre = malloc(nval * sizeof *pre), *post = malloc(nval * sizeof *post);
    cr_assert(pre && post);
    viterbi_node *want = sentinels((size_t)nnode * 5);
    int want_status[NSENT];
    for (int k = 0; k < NSENT; k++) {
        for (size_t i = 0; c[k] && i < chart_ncells(n[k]) * nsub; i++) {
            pre[(size_t)cell0[k] * nsub + i] = (float)c[k]->pre[i];
            post[(size_t)cell0[k] * nsub + i] = (float)c[k]->post[i];
        }
        cky_status st = c[k] ? viterbi_extract_array(g, c[k], want + node0[k]) : CKY_ERR_ARG;
        want_status[k] = st == CKY_OK ? VITERBI_GPU_OK : VITERBI_GPU_NO_PARSE;
        cr_assert(k == 1 || st == CKY_OK, "sentence %d parses", k);
    }
    gpu_rule_tables *t;
    cr_assert_eq(gpu_rule_tables_new(g, &t), CKY_OK, "%s", cky_last_error());
    dev_guarded d_pre = up(pre, nval, 4), d_post = up(post, nval, 4), d_n = up(n, NSENT, 4);
    dev_guarded d_cell0 = up(cell0, NSENT, 8), d_node0 = up(node0, NSENT, 4);
    dev_guarded d_nodes = dev_guarded_new((size_t)nnode * sizeof(viterbi_node), NULL);
    dev_guarded d_status = dev_guarded_new(NSENT * 4, NULL);
    CUDA_OK(viterbi_gpu_launch(&t->dev, d_pre.p, d_post.p, nsub, 0, d_n.p, d_cell0.p, d_node0.p,
                               d_nodes.p, d_status.p, 0, 0));
    CUDA_OK(viterbi_gpu_launch(&t->dev, d_pre.p, d_post.p, nsub, NSENT, d_n.p, d_cell0.p,
                               d_node0.p, d_nodes.p, d_status.p, 0, 0));
    const char *what = "viterbi_gpu_launch, sample-sm1, sentences of 1 .. 10 words and one of 0";
    cmp_grid gn = {5, {"node", "field (width, top_sym, top_sub, bot_sym, bot_sub)"}};
    cmp_grid gs = {1, {"sentence", NULL}};
    expect_dev_words(what, &d_status, want_status, NSENT, CMP_INT, cmp_where_grid, &gs);
    expect_dev_words(what, &d_nodes, want, (size_t)nnode * 5, CMP_INT, cmp_where_grid, &gn);
    dev_guarded_free(&d_nodes);
    dev_guarded_free(&d_status);
    done(what, &d_pre);
    done(what, &d_post);
    done(what, &d_n);
    done(what, &d_cell0);
    done(what, &d_node0);
    gpu_rule_tables_free(t);
    for (int k = 0; k < NSENT; k++)
        chart_free(c[k]);
    for (int k = 0; k < NREAL; k++)
        sentence_free(&s[k]);
    free(pre);
    free(post);
    free(want);
    grammar_free(g);
}

/* ---- max-c: maxc_launch_sums, maxc_launch_span, maxc_launch_walk ----------------------- */

/* The sum-product layers of a batch of sample-sm1 sentences (dev sentences of up to 12
 * words, one of 1 and one of 2) from the cpu engine, in the batch layout of maxc_rules.h,
 * and a last sentence of 3 words whose layers are all 0 (no parse: every max-c score -inf). */
#define MAXC_SENT 8

typedef struct maxc_case {
    grammar *g;
    maxc_host *h;
    int nsent, maxn, nsub, nsym;
    int n[MAXC_SENT];
    long c0[MAXC_SENT], ncell;
    sum_chart *c[MAXC_SENT]; /* the real sentences' (nsent - 1) */
    sentence s[MAXC_SENT];
    float *post, *opre, *pre;
    int *epost, *eopre, *epre;
} maxc_case;

static void maxc_case_new(maxc_case *mc)
{
    memset(mc, 0, sizeof *mc);
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr", &mc->g), CKY_OK,
                 "%s", cky_last_error());
    cr_assert_eq(maxc_host_new(mc->g, &mc->h), CKY_OK, "%s", cky_last_error());
    int m = dev_sentences(4, 12, mc->s);
    cr_assert_eq(m, 4);
    cr_assert_geq(mc->s[0].n, 3);
    cr_assert_eq(sentence_from_words(mc->s[0].words, 1, &mc->s[m++]), CKY_OK);
    cr_assert_eq(sentence_from_words(mc->s[0].words + 1, 2, &mc->s[m++]), CKY_OK);
    cpu_engine *e;
    const char *cache = getenv("CKY_CACHE"); /* the device scripts' carried cache */
    cpu_engine_options o = {.threads = 2, .cache_dir = cache ? cache : CKY_BUILD "/test-cache", .sum = 1};
    cr_assert_eq(cpu_engine_new(mc->g, &o, &e), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(cpu_engine_inside_sum(e, mc->s, m, mc->c), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(cpu_engine_outside_sum(e, mc->c, m), CKY_OK, "%s", cky_last_error());
    cpu_engine_free(e);
    mc->nsent = m + 1;
    mc->nsub = mc->g->nsub_total;
    mc->nsym = mc->g->nsym;
    for (int k = 0; k < mc->nsent; k++) {
        mc->n[k] = k < m ? mc->c[k]->n : 3;
        mc->c0[k] = mc->ncell;
        mc->ncell += (long)chart_ncells(mc->n[k]);
        mc->maxn = mc->n[k] > mc->maxn ? mc->n[k] : mc->maxn;
    }
    size_t vals = (size_t)mc->ncell * mc->nsub;
    mc->post = calloc(vals, sizeof(float));
    mc->opre = calloc(vals, sizeof(float));
    mc->pre = calloc(vals, sizeof(float));
    mc->epost = malloc((size_t)mc->ncell * sizeof(int));
    mc->eopre = malloc((size_t)mc->ncell * sizeof(int));
    mc->epre = malloc((size_t)mc->ncell * sizeof(int));
    cr_assert(mc->post && mc->opre && mc->pre && mc->epost && mc->eopre && mc->epre);
    for (long x = 0; x < mc->ncell; x++)
        mc->epost[x] = mc->eopre[x] = mc->epre[x] = CHART_EXP_NONE;
    for (int k = 0; k < m; k++) {
        const sum_chart *c = mc->c[k];
        size_t cells = chart_ncells(c->n), at = (size_t)mc->c0[k] * mc->nsub;
        memcpy(mc->post + at, c->post, cells * mc->nsub * sizeof(float));
        memcpy(mc->opre + at, c->opre, cells * mc->nsub * sizeof(float));
        memcpy(mc->pre + at, c->pre, cells * mc->nsub * sizeof(float));
        memcpy(mc->epost + mc->c0[k], c->epost, cells * sizeof(int));
        memcpy(mc->eopre + mc->c0[k], c->eopre, cells * sizeof(int));
        memcpy(mc->epre + mc->c0[k], c->epre, cells * sizeof(int));
    }
}

static void maxc_case_free(maxc_case *mc)
{
    for (int k = 0; k < mc->nsent - 1; k++) {
        sum_chart_free(mc->c[k]);
        sentence_free(&mc->s[k]);
    }
    free(mc->post);
    free(mc->opre);
    free(mc->pre);
    free(mc->epost);
    free(mc->eopre);
    free(mc->epre);
    maxc_host_free(mc->h);
    grammar_free(mc->g);
}

/* The reference's max-c arrays over the case's layers, every value SENTINEL words (as the
 * device's start). */
static maxc_layers maxc_arrays_new(const maxc_case *mc)
{
    size_t nv = (size_t)mc->ncell * mc->nsym;
    double *sc = sentinels(4 * nv);
    int *ix = sentinels(4 * nv);
    return (maxc_layers){mc->nsub, mc->post,  mc->opre,  mc->pre,   mc->epost,  mc->eopre,
                         mc->epre, sc,        sc + nv,   ix,        ix + nv,    ix + 2 * nv,
                         ix + 3 * nv};
}

static void maxc_arrays_free(maxc_layers *y)
{
    free(y->bscore);
    free(y->split);
}

/* The cells of span d, 3 ints each (the sentence's first cell, its words, the start): the
 * count. */
static int maxc_cells(const maxc_case *mc, int d, int *cells)
{
    int m = 0;
    for (int k = 0; k < mc->nsent; k++)
        for (int i = 0; i + d <= mc->n[k]; i++, m++) {
            cells[3 * m] = (int)mc->c0[k];
            cells[3 * m + 1] = mc->n[k];
            cells[3 * m + 2] = i;
        }
    return m;
}

/* Each symbol's best binary candidate over the listed cells of span >= 2, from every
 * candidate (rule, split) of its rules, each one's sum taken (no bound, nothing skipped):
 * the largest score, the first in (rule, split) order among equal ones; none (-inf, -1)
 * for a POS tag, a sentence without a parse or a symbol without candidates. */
static void ref_maxc_binary(const maxc_tables *t, const maxc_layers *y, const int *cells,
                            int ncell, int span)
{
    for (int q = 0; q < ncell; q++) {
        long c0 = cells[3 * q];
        int n = cells[3 * q + 1], i = cells[3 * q + 2], j = i + span, e0;
        double logx0 = maxc_root(t, y, c0, n, &e0);
        size_t at = ((size_t)c0 + chart_cell(n, i, j)) * t->nsym;
        for (int P = 0; P < t->nsym; P++) {
            double best = MAXC_NEG_INF;
            int bb = -1, bk = -1;
            for (int b = t->bin_first[P]; logx0 != MAXC_NEG_INF && t->phrasal[P] &&
                                          b < t->bin_first[P + 1];
                 b++) {
                int kmin, kmax;
                maxc_splits(t, b, i, j, &kmin, &kmax);
                for (int k = kmin; k <= kmax; k++) {
                    double gs = maxc_candidate(maxc_binary_scores(t, y, c0, n, i, k, j, b),
                                               maxc_binary_item(t, y, c0, n, i, k, j, b),
                                               maxc_binary_exp(y, c0, n, i, k, j, e0), logx0);
                    if (gs > best) {
                        best = gs;
                        bb = b;
                        bk = k;
                    }
                }
            }
            y->bscore[at + P] = best;
            y->split[at + P] = bk;
            y->left[at + P] = bb < 0 ? -1 : t->bin[bb].left;
            y->right[at + P] = bb < 0 ? -1 : t->bin[bb].right;
        }
    }
}

/* The rest of span `span` over the listed cells: in one-word cells the POS tags' lexical
 * scores (the phrasal symbols none), then every symbol's score: its best closed unary over
 * every one of its unaries (the first of equal ones), where that beats its score before
 * the unaries, else that score. */
static void ref_maxc_span(const maxc_tables *t, const maxc_layers *y, const int *cells, int ncell,
                          int span)
{
    for (int q = 0; q < ncell; q++) {
        long c0 = cells[3 * q];
        int n = cells[3 * q + 1], i = cells[3 * q + 2], j = i + span, e0;
        double logx0 = maxc_root(t, y, c0, n, &e0);
        size_t cell = (size_t)c0 + chart_cell(n, i, j), at = cell * t->nsym;
        for (int P = 0; P < t->nsym && span == 1; P++) {
            y->bscore[at + P] = logx0 != MAXC_NEG_INF && !t->phrasal[P]
                                    ? maxc_lexical(t, y, c0, n, i, P, e0, logx0)
                                    : MAXC_NEG_INF;
            y->split[at + P] = y->left[at + P] = y->right[at + P] = -1;
        }
        for (int P = 0; P < t->nsym; P++) {
            double best = y->bscore[at + P];
            int child = -1;
            for (int u = t->un_first[P]; logx0 != MAXC_NEG_INF && maxc_allowed(t, span, P) &&
                                         u < t->un_first[P + 1];
                 u++) {
                double gs = maxc_candidate(y->bscore[at + t->un[u].child],
                                           maxc_unary_item(t, y, c0, n, i, j, u),
                                           y->eopre[cell] + y->epost[cell] - e0, logx0);
                if (gs > best) {
                    best = gs;
                    child = t->un[u].child;
                }
            }
            y->score[at + P] = best;
            y->child[at + P] = child;
        }
    }
}

/* maxc_launch_walk's contract: for sentence k (sent[2 k ..]: c0, n), maxc_extract into
 * nodes + node0[k]; result[4 k ..]: the status, the node count, the bits of ROOT's post
 * value and its exponent; score[k] ROOT's max-c score. */
static void ref_maxc_walk(const maxc_tables *t, const maxc_layers *y, const int *sent, int n,
                          const long long *node0, int *nodes, int *stack, int *result,
                          double *score)
{
    for (int k = 0; k < n; k++) {
        long c0 = sent[2 * k];
        int len = sent[2 * k + 1], *r = result + 4 * k;
        r[0] = maxc_extract(t, y, c0, len, nodes + node0[k], &r[1], stack + node0[k]);
        size_t root = (size_t)c0 + chart_cell(len, 0, len);
        r[2] = (int)bits_of(y->post[root * y->nsub + t->sub_offset[0]]);
        r[3] = y->epost[root];
        score[k] = y->score[root * t->nsym];
    }
}

/* Element i of a max-c array: its sentence, cell (i, j) and symbol. */
static void where_maxc(size_t x, const void *ctx, char *buf, size_t len)
{
    const maxc_case *mc = ctx;
    long cell = (long)(x / (size_t)mc->nsym);
    int sym = (int)(x % (size_t)mc->nsym), k = 0;
    while (k + 1 < mc->nsent && mc->c0[k + 1] <= cell)
        k++;
    int n = mc->n[k], i = 0, d = 1;
    long local = cell - mc->c0[k];
    while (d < n && local >= (long)chart_cell(n, 0, d + 1))
        d++;
    i = (int)(local - (long)chart_cell(n, 0, d));
    snprintf(buf, len, "sentence %d, cell (%d, %d), symbol %s", k, i, i + d, mc->g->name[sym]);
}

/* The device's max-c arrays (bscore, score, split, left, right, child) against the
 * reference's. */
static void maxc_expect(const char *what, const maxc_case *mc, dev_guarded *d,
                        const maxc_layers *y)
{
    size_t nv = (size_t)mc->ncell * mc->nsym;
    double *sc = sentinels(4 * nv);
    int *ix = sentinels(4 * nv);
    dev_guarded_get(&d[0], sc, nv * 8, what);
    dev_guarded_get(&d[1], sc + nv, nv * 8, what);
    for (int k = 0; k < 4; k++)
        dev_guarded_get(&d[2 + k], ix + k * nv, nv * 4, what);
    const char *name[6] = {"bscore", "score", "split", "left", "right", "child"};
    const double *ws[2] = {y->bscore, y->score};
    const int *wi[4] = {y->split, y->left, y->right, y->child};
    char full[192];
    for (int k = 0; k < 2; k++) {
        snprintf(full, sizeof full, "%s: %s", what, name[k]);
        expect_same_doubles(full, sc + k * nv, ws[k], nv, where_maxc, mc);
    }
    for (int k = 0; k < 4; k++) {
        snprintf(full, sizeof full, "%s: %s", what, name[2 + k]);
        expect_same_words(full, ix + k * nv, wi[k], nv, CMP_INT, where_maxc, mc);
    }
    free(sc);
    free(ix);
}

/* The three kernels span by span as gpu_maxc_run calls them, every array compared after each
 * launch (so that the first difference is the first kernel's to go wrong: the later spans
 * read the earlier ones), then the walk. */
Test(gpu_kernels, maxc)
{
    need_gpu();
    maxc_case mc;
    maxc_case_new(&mc);
    const maxc_tables *t = &mc.h->t;
    cr_assert_leq(t->nun, MAXC_UNARIES_MAX);
    dev_guarded tables = up(mc.h->block, mc.h->bytes, 1);
    maxc_tables td = maxc_tables_at(mc.h, tables.p);
    size_t vals = (size_t)mc.ncell * mc.nsub, nv = (size_t)mc.ncell * mc.nsym;
    dev_guarded layer[6] = {up(mc.post, vals, 4),     up(mc.opre, vals, 4),
                            up(mc.pre, vals, 4),      up(mc.epost, mc.ncell, 4),
                            up(mc.eopre, mc.ncell, 4), up(mc.epre, mc.ncell, 4)};
    dev_guarded arr[6];
    for (int k = 0; k < 6; k++)
        arr[k] = dev_guarded_new(nv * (k < 2 ? 8 : 4), NULL);
    maxc_layers yd = {mc.nsub,   layer[0].p, layer[1].p, layer[2].p, layer[3].p,
                      layer[4].p, layer[5].p, arr[0].p,   arr[1].p,   arr[2].p,
                      arr[3].p,   arr[4].p,   arr[5].p};
    maxc_layers yh = maxc_arrays_new(&mc);
    int *cells = malloc(3 * (size_t)mc.ncell * sizeof *cells), most = 0;
    cr_assert(cells);
    for (int d = 2; d <= mc.maxn; d++) {
        int m = maxc_cells(&mc, d, cells);
        most = m > most ? m : most;
    }
    dev_guarded scratch = dev_guarded_new(maxc_scratch_bytes(&td, most), NULL);
    char what[128];
    for (int d = 1; d <= mc.maxn; d++) {
        int m = maxc_cells(&mc, d, cells);
        dev_guarded dc = up(cells, 3 * (size_t)m, 4);
        if (d > 1) {
            CUDA_OK(maxc_launch_sums(&td, &yd, dc.p, m, d, scratch.p, 0));
            ref_maxc_binary(t, &yh, cells, m, d);
            snprintf(what, sizeof what, "maxc_launch_sums, span %d (%d cells)", d, m);
            maxc_expect(what, &mc, arr, &yh);
            dev_guarded_check(&scratch, what);
        }
        CUDA_OK(maxc_launch_span(&td, &yd, dc.p, m, d, 0));
        ref_maxc_span(t, &yh, cells, m, d);
        snprintf(what, sizeof what, "maxc_launch_span, span %d (%d cells)", d, m);
        maxc_expect(what, &mc, arr, &yh);
        done(what, &dc);
    }
    /* the walk */
    int sent[2 * MAXC_SENT];
    long long node0[MAXC_SENT], total = 0;
    for (int k = 0; k < mc.nsent; k++) {
        sent[2 * k] = (int)mc.c0[k];
        sent[2 * k + 1] = mc.n[k];
        node0[k] = total;
        total += maxc_nodes_max(mc.n[k]);
    }
    int *nodes = sentinels((size_t)total), *stack = sentinels((size_t)total);
    int *result = sentinels(4 * (size_t)mc.nsent);
    double *score = sentinels(2 * (size_t)mc.nsent);
    ref_maxc_walk(t, &yh, sent, mc.nsent, node0, nodes, stack, result, score);
    for (int k = 0; k < mc.nsent; k++)
        cr_assert_eq(result[4 * k], k < mc.nsent - 1 ? MAXC_TREE : MAXC_NO_TREE,
                     "sentence %d: the reference's walk", k);
    dev_guarded d_sent = up(sent, 2 * (size_t)mc.nsent, 4), d_node0 = up(node0, mc.nsent, 8);
    dev_guarded d_nodes = dev_guarded_new((size_t)total * 4, NULL);
    dev_guarded d_stack = dev_guarded_new((size_t)total * 4, NULL);
    dev_guarded d_result = dev_guarded_new(16 * (size_t)mc.nsent, NULL);
    dev_guarded d_score = dev_guarded_new(8 * (size_t)mc.nsent, NULL);
    CUDA_OK(maxc_launch_walk(&td, &yd, d_sent.p, mc.nsent, d_node0.p, d_nodes.p, d_stack.p,
                             d_result.p, d_score.p, 0));
    snprintf(what, sizeof what, "maxc_launch_walk, %d sentences", mc.nsent);
    cmp_grid gr = {4, {"sentence", "result (status, count, ROOT's bits, exponent)"}};
    cmp_grid gn = {1, {"node", NULL}};
    expect_dev_words(what, &d_result, result, 4 * (size_t)mc.nsent, CMP_INT, cmp_where_grid,
                     &gr);
    expect_dev_words(what, &d_nodes, nodes, (size_t)total, CMP_INT, cmp_where_grid, &gn);
    double *got = sentinels(2 * (size_t)mc.nsent);
    dev_guarded_get(&d_score, got, 8 * (size_t)mc.nsent, what);
    cmp_grid gs = {1, {"sentence", NULL}};
    expect_same_doubles(what, got, score, mc.nsent, cmp_where_grid, &gs);
    free(got);
    dev_guarded_free(&d_nodes);
    dev_guarded_free(&d_result);
    dev_guarded_free(&d_score);
    done(what, &d_stack);
    done(what, &d_sent);
    done(what, &d_node0);
    done(what, &scratch);
    done(what, &tables);
    for (int k = 0; k < 6; k++) {
        done(what, &layer[k]);
        dev_guarded_free(&arr[k]);
    }
    free(nodes);
    free(stack);
    free(result);
    free(score);
    free(cells);
    maxc_arrays_free(&yh);
    maxc_case_free(&mc);
}

/* ---- the host references themselves (everywhere) --------------------------------------- */

/* The gather's reference writes WS in the layout of gpu/kernels.h, walked here in memory
 * order: tile k, then row x, then lane l holds item 128 k + l's row x, every other word
 * (past the items, the padding) untouched. */
Test(kernels_ref, gather_is_the_workspace_layout)
{
    static const struct {
        int n, rows;
    } shape[] = {{1, 1}, {127, 3}, {129, 5}, {300, 2}};
    rng r = {10};
    for (size_t q = 0; q < sizeof shape / sizeof *shape; q++)
        for (int with_index = 0; with_index < 2; with_index++) {
            int n = shape[q].n, rows = shape[q].rows;
            gather_case c = gather_random(&r, n, rows, with_index);
            long long tile = (long long)rows * KERNELS_TILE + 7;
            size_t words = ws_words(n, tile);
            float *ws = sentinels(words);
            ref_gather(c.layer, c.nsub, c.cell, c.index, n, c.row, rows, ws, tile);
            size_t i = 0;
            for (int k = 0; k < (n + KERNELS_TILE - 1) / KERNELS_TILE; k++)
                for (long long w = 0; w < tile; w++, i++) {
                    int x = (int)(w / KERNELS_TILE), t = k * KERNELS_TILE + (int)(w % KERNELS_TILE);
                    uint32_t want = x < rows && t < n
                                        ? bits_of(c.layer[(size_t)c.cell[c.index ? c.index[t] : t]
                                                              * c.nsub + c.row[x]])
                                        : SENTINEL;
                    cr_assert_eq(bits_of(ws[i]), want, "n %d, rows %d: tile %d, word %lld", n,
                                 rows, k, w);
                }
            cr_assert_eq(i, words);
            free(ws);
            gather_free(&c);
        }
}

/* The reduce's max in the keys' order is float max where no zeros meet; -0 is below +0. */
Test(kernels_ref, reduce_is_float_max)
{
    rng r = {11};
    enum { N = 500, ROWS = 3, NSUB = 4, NCELL = 5 };
    long long tile = ROWS * KERNELS_TILE;
    int row[ROWS] = {3, 0, 2}, *cell = rng_ints(&r, N, NCELL);
    int *ws = malloc(ws_words(N, tile) * sizeof *ws);
    float a[NCELL * NSUB], b[NCELL * NSUB];
    cr_assert(ws);
    for (int i = 0; i < NCELL * NSUB; i++)
        a[i] = b[i] = -INFINITY;
    for (int t = 0; t < N; t++)
        for (int x = 0; x < ROWS; x++) {
            float v = rng_below(&r, 4) ? -(rng_unit(&r) + 0x1p-20f) * 20 : -INFINITY;
            ws[ws_at(x, t, tile)] = key_of(v);
            float *o = &b[cell[t] * NSUB + row[x]];
            *o = fmaxf(*o, v);
        }
    ref_reduce(ws, tile, N, cell, row, ROWS, a, NSUB);
    expect_same_words("ref_reduce against fmaxf", a, b, NCELL * NSUB, CMP_FLOAT, NULL, NULL);
    for (int order = 0; order < 2; order++) {
        float z = -INFINITY;
        int k[2] = {key_of(-0.0f), key_of(0.0f)}, one = 0;
        ref_reduce(&k[order], 1, 1, &one, &one, 1, &z, 1);
        ref_reduce(&k[1 - order], 1, 1, &one, &one, 1, &z, 1);
        cr_assert_eq(bits_of(z), bits_of(0.0f), "-0 and +0 in either order: +0");
    }
    free(cell);
    free(ws);
}

/* The unary layout of sum_rules_layout read as kernels_sum_layout says (slot s: row row[s],
 * its entries at off[s / 32] + 32 j + s % 32, padded with weight 0) gives each row
 * sum_rules_row's bits, and exactly the rows with terms (with `phrasal`: the phrasal ones)
 * have a slot. */
Test(kernels_ref, unary_layout_is_sum_rules_row)
{
    static const struct {
        int n, most;
    } shape[] = {{1, 1}, {5, 3}, {40, 8}, {450, 40}, {33, 70}};
    rng r = {12};
    for (size_t q = 0; q < sizeof shape / sizeof *shape; q++)
        for (int phrasal = 0; phrasal < 2; phrasal++) {
            int n = shape[q].n;
            sum_unary_table t = table_random(&r, n, shape[q].most);
            sum_unary_layout l;
            cr_assert_eq(sum_rules_layout(&t, phrasal, &l), CKY_OK);
            cr_assert_eq(l.nslot % 32, 0);
            cr_assert_eq(l.nslot, 32 * l.ngroup);
            float *v = malloc((size_t)n * sizeof *v), *got = sentinels(n);
            int *slots = calloc((size_t)n, sizeof *slots);
            cr_assert(v && slots);
            for (int x = 0; x < n; x++)
                v[x] = rng_below(&r, 4) ? rng_unit(&r) : 0.0f;
            for (int s = 0; s < l.nslot; s++) {
                int g = s / 32, x = l.row[s];
                float acc = 0;
                for (int e = l.off[g] + s % 32; e < l.off[g + 1]; e += 32)
                    acc = fmaf(l.w[e], v[l.from[e]], acc);
                if (x >= 0) {
                    slots[x]++;
                    got[x] = acc;
                } else {
                    cr_assert_eq(bits_of(acc), 0, "slot %d without a row adds +0", s);
                }
            }
            int span = phrasal ? 2 : 1;
            for (int x = 0; x < n; x++) {
                int terms = t.first[x + 1] > t.first[x] && (!phrasal || t.phrasal[x]);
                cr_assert_eq(slots[x], terms, "n %d, phrasal %d: row %d has %d slots", n,
                             phrasal, x, slots[x]);
                float want = sum_rules_row(&t, x, v, span);
                cr_assert_eq(bits_of(terms ? got[x] : 0.0f), bits_of(want),
                             "n %d, phrasal %d: row %d: layout %a, sum_rules_row %a", n, phrasal,
                             x, got[x], want);
            }
            free(v);
            free(got);
            free(slots);
            sum_rules_layout_free(&l);
            table_free(&t);
        }
}

/* The max-c reference above (every candidate summed, nothing skipped) makes the trees and
 * scores of the cpu engine's maxc_cpu_run (which skips by maxc_upper), bit for bit; the
 * sentence without a parse has no tree. */
Test(kernels_ref, maxc_reference_is_the_cpu_run, .timeout = 300)
{
    maxc_case mc;
    maxc_case_new(&mc);
    const maxc_tables *t = &mc.h->t;
    maxc_layers y = maxc_arrays_new(&mc);
    int *cells = malloc(3 * (size_t)mc.ncell * sizeof *cells);
    cr_assert(cells);
    for (int d = 1; d <= mc.maxn; d++) {
        int m = maxc_cells(&mc, d, cells);
        if (d > 1)
            ref_maxc_binary(t, &y, cells, m, d);
        ref_maxc_span(t, &y, cells, m, d);
    }
    for (int k = 0; k < mc.nsent; k++) {
        long room = maxc_nodes_max(mc.n[k]);
        int *want = sentinels((size_t)room), *got = sentinels((size_t)room);
        int *stack = sentinels(3 * ((size_t)mc.n[k] + 1)), count = 0, want_count = 0, status;
        double want_score = 0, score = y.score[((size_t)mc.c0[k] + chart_cell(mc.n[k], 0,
                                                                               mc.n[k])) *
                                               mc.nsym];
        int st = maxc_extract(t, &y, mc.c0[k], mc.n[k], got, &count, stack);
        if (k == mc.nsent - 1) {
            cr_assert_eq(st, MAXC_NO_TREE, "the sentence of zero layers has no tree");
            cr_assert(score == MAXC_NEG_INF);
        } else {
            cr_assert_eq(maxc_cpu_run(mc.h, mc.c[k], want, &want_count, &status, &want_score),
                         CKY_OK, "%s", cky_last_error());
            char what[96];
            snprintf(what, sizeof what, "sentence %d (%d words): the reference's nodes", k,
                     mc.n[k]);
            cr_assert_eq(st, status, "%s: status", what);
            cr_assert_eq(count, want_count, "%s: count", what);
            expect_same_words(what, got, want, (size_t)room, CMP_INT, NULL, NULL);
            expect_same_doubles(what, &score, &want_score, 1, NULL, NULL);
            cr_assert_eq(status, MAXC_TREE);
        }
        free(want);
        free(got);
        free(stack);
    }
    free(cells);
    maxc_arrays_free(&y);
    maxc_case_free(&mc);
}
