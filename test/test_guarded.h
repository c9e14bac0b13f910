/* Test helper of the codegen tests: float buffers between guard regions of sentinel NaNs,
 * to catch a kernel writing outside its workspace (not a test file itself). */
#ifndef CKY_TEST_GUARDED_H
#define CKY_TEST_GUARDED_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64                 /* sentinel floats before and after every buffer */
#define SENTINEL 0x7fc0beefu     /* a NaN pattern no kernel writes */

typedef struct guarded {
    float *mem, *data; /* data = mem + GUARD */
    size_t n;          /* floats in data */
} guarded;

static inline guarded guarded_new(size_t n)
{
    guarded g = {malloc((n + 2 * GUARD) * sizeof(float)), NULL, n};
    uint32_t s = SENTINEL;
    for (size_t i = 0; i < n + 2 * GUARD; i++)
        memcpy(&g.mem[i], &s, sizeof s);
    g.data = g.mem + GUARD;
    return g;
}

/* Guards intact, and columns n..stride-1 of every row still the sentinel. */
static inline void guarded_check(const guarded *g, const char *what, int rows, int n, int stride)
{
    uint32_t s = SENTINEL, v;
    for (size_t i = 0; i < GUARD; i++) {
        memcpy(&v, &g->mem[i], sizeof v);
        cr_assert_eq(v, s, "%s: guard before the buffer overwritten at -%zu", what, GUARD - i);
        memcpy(&v, &g->data[g->n + i], sizeof v);
        cr_assert_eq(v, s, "%s: guard after the buffer overwritten at +%zu", what, i);
    }
    for (int r = 0; r < rows; r++)
        for (int t = n; t < stride; t++) {
            memcpy(&v, &g->data[(size_t)r * stride + t], sizeof v);
            cr_assert_eq(v, s, "%s: padding row %d column %d overwritten", what, r, t);
        }
}

#endif
