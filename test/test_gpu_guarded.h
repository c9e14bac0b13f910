/* Test helpers of the GPU kernel tests (not a test file itself):
 *   - device buffers between guard regions of test_guarded.h's SENTINEL words, GUARD words
 *     (256 bytes: the data keeps cudaMalloc's alignment, float4 loads included) before and
 *     after, to catch a kernel writing outside its buffer (dev_guarded_check);
 *   - the first difference of two arrays, reported with its place (a callback names it:
 *     row and column, cell and substate, workspace row and item), both values and their
 *     bits (expect_same_words for 32-bit floats or ints, expect_same_doubles). */
#ifndef CKY_TEST_GPU_GUARDED_H
#define CKY_TEST_GPU_GUARDED_H

#include <cuda_runtime_api.h>
#include <stdio.h>

#include "test_guarded.h"

#define DEV_GUARD_BYTES (GUARD * sizeof(uint32_t))

/* ---- guarded device buffers ---- */

typedef struct dev_guarded {
    unsigned char *mem; /* cudaMalloc'ed: the guard, the data, the guard */
    void *p;            /* the data */
    size_t bytes;       /* data bytes, a whole number of words */
} dev_guarded;

/* `bytes` of device memory (rounded up to words) between guards, holding init (NULL:
 * SENTINEL words). Zero bytes is a valid, empty buffer. */
static inline dev_guarded dev_guarded_new(size_t bytes, const void *init)
{
    dev_guarded g = {NULL, NULL, (bytes + 3) / 4 * 4};
    size_t total = g.bytes + 2 * DEV_GUARD_BYTES, words = total / 4;
    uint32_t *host = malloc(total);
    cr_assert(host, "out of memory");
    for (size_t i = 0; i < words; i++)
        host[i] = SENTINEL;
    if (init)
        memcpy((unsigned char *)host + DEV_GUARD_BYTES, init, bytes);
    cr_assert_eq(cudaMalloc((void **)&g.mem, total), cudaSuccess, "cudaMalloc of %zu bytes",
                 total);
    cr_assert_eq(cudaMemcpy(g.mem, host, total, cudaMemcpyHostToDevice), cudaSuccess);
    free(host);
    g.p = g.mem + DEV_GUARD_BYTES;
    return g;
}

/* Both guards still SENTINEL words (waits for the device). */
static inline void dev_guarded_check(const dev_guarded *g, const char *what)
{
    uint32_t w[2][GUARD];
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess, "%s: %s", what,
                 cudaGetErrorString(cudaGetLastError()));
    cr_assert_eq(cudaMemcpy(w[0], g->mem, DEV_GUARD_BYTES, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert_eq(cudaMemcpy(w[1], g->mem + DEV_GUARD_BYTES + g->bytes, DEV_GUARD_BYTES,
                            cudaMemcpyDeviceToHost),
                 cudaSuccess);
    for (int i = 0; i < GUARD; i++) {
        cr_assert_eq(w[0][i], SENTINEL, "%s: the guard before the buffer overwritten at word "
                     "-%d (0x%08x)", what, GUARD - i, w[0][i]);
        cr_assert_eq(w[1][i], SENTINEL, "%s: the guard after the buffer (%zu bytes) "
                     "overwritten at word +%d (0x%08x)", what, g->bytes, i, w[1][i]);
    }
}

/* The data, `bytes` of it, into host (guards checked first). */
static inline void dev_guarded_get(const dev_guarded *g, void *host, size_t bytes,
                                   const char *what)
{
    dev_guarded_check(g, what);
    cr_assert_leq(bytes, g->bytes);
    cr_assert_eq(cudaMemcpy(host, g->p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
}

static inline void dev_guarded_free(dev_guarded *g)
{
    cudaFree(g->mem);
    *g = (dev_guarded){0};
}

/* ---- first differences ---- */

/* Names element i of an array in words of its layout (into buf). */
typedef void (*cmp_where)(size_t i, const void *ctx, char *buf, size_t len);

/* Row-major: element i is (name[0] i / ncol, name[1] i % ncol); name[0] i alone for one
 * column. */
typedef struct cmp_grid {
    size_t ncol;
    const char *name[2];
} cmp_grid;

static inline void cmp_where_grid(size_t i, const void *ctx, char *buf, size_t len)
{
    const cmp_grid *g = ctx;
    if (g->ncol == 1)
        snprintf(buf, len, "%s %zu", g->name[0], i);
    else
        snprintf(buf, len, "%s %zu, %s %zu", g->name[0], i / g->ncol, g->name[1], i % g->ncol);
}

typedef enum cmp_kind { CMP_FLOAT, CMP_INT } cmp_kind;

/* got[0 .. n) and want[0 .. n), 32-bit floats or ints, the same bits, or the first
 * difference reported (where(i) names its place; NULL: the index alone). */
static inline void expect_same_words(const char *what, const void *got, const void *want,
                                     size_t n, cmp_kind kind, cmp_where where, const void *ctx)
{
    const uint32_t *a = got, *b = want;
    for (size_t i = 0; i < n; i++) {
        if (a[i] == b[i])
            continue;
        char place[160] = "";
        if (where)
            where(i, ctx, place, sizeof place);
        float fa, fb;
        memcpy(&fa, &a[i], sizeof fa);
        memcpy(&fb, &b[i], sizeof fb);
        if (kind == CMP_FLOAT)
            cr_assert_fail("%s: first difference at index %zu (%s): got %a (0x%08x), want %a "
                           "(0x%08x)", what, i, place, fa, a[i], fb, b[i]);
        else
            cr_assert_fail("%s: first difference at index %zu (%s): got %d (0x%08x), want %d "
                           "(0x%08x)", what, i, place, (int)a[i], a[i], (int)b[i], b[i]);
    }
}

/* The same for doubles. */
static inline void expect_same_doubles(const char *what, const double *got, const double *want,
                                       size_t n, cmp_where where, const void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t a, b;
        memcpy(&a, &got[i], sizeof a);
        memcpy(&b, &want[i], sizeof b);
        if (a == b)
            continue;
        char place[160] = "";
        if (where)
            where(i, ctx, place, sizeof place);
        cr_assert_fail("%s: first difference at index %zu (%s): got %.17g (0x%016llx), want "
                       "%.17g (0x%016llx)", what, i, place, got[i], (unsigned long long)a,
                       want[i], (unsigned long long)b);
    }
}

#endif
