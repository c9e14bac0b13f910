/* Tests of the generated kernel text: NVRTC compiles it to an sm_90 cubin without a GPU, a
 * broken text fails with the NVRTC log, and the host build of the same text gives parent
 * values bit-identical to a plain C loop over all rules, without touching guard regions. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/internal.h"
#include "test_codegen_synth.h"

#define GUARD 64                 /* sentinel floats before and after every buffer */
#define SENTINEL 0x7fc0beefu     /* a NaN pattern no kernel writes */

typedef struct guarded {
    float *mem, *data; /* data = mem + GUARD */
    size_t n;          /* floats in data */
} guarded;

static guarded guarded_new(size_t n)
{
    guarded g = {malloc((n + 2 * GUARD) * sizeof(float)), NULL, n};
    uint32_t s = SENTINEL;
    for (size_t i = 0; i < n + 2 * GUARD; i++)
        memcpy(&g.mem[i], &s, sizeof s);
    g.data = g.mem + GUARD;
    return g;
}

/* Guards intact, and columns n..stride-1 of every row still the sentinel. */
static void guarded_check(const guarded *g, const char *what, int rows, int n, int stride)
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

/* Random finite log scores in (-40, 0], some -inf, never -0 or NaN. */
static void fill_scores(float *x, int rows, int n, int stride)
{
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < n; t++) {
            int u = rand();
            x[(size_t)r * stride + t] = u % 13 == 0 ? -INFINITY
                                                    : -(float)(u % 400000) / 10007.0f;
        }
}

Test(codegen_emit, host_build_matches_plain_loop)
{
    codegen_family f;
    synth_family(&f, 40, 3000, 21);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("2x2x1/2x1x2", &shape), CKY_OK);
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    cr_assert_gt(p.nkernel, 1);
    const int n = 77, stride = 96, rows = 40;
    guarded left = guarded_new((size_t)rows * stride), right = guarded_new((size_t)rows * stride),
            parent = guarded_new((size_t)rows * stride);
    fill_scores(left.data, rows, n, stride);
    fill_scores(right.data, rows, n, stride);
    fill_scores(parent.data, rows, n, stride);
    float *expect = malloc((size_t)rows * stride * sizeof *expect);
    memcpy(expect, parent.data, (size_t)rows * stride * sizeof *expect);
    for (long i = 0; i < f.nrule; i++) { /* the textbook loop, in the grammar's order */
        const codegen_rule *r = &f.rule[i];
        for (int t = 0; t < n; t++) {
            float v = (left.data[(size_t)r->l * stride + t] + right.data[(size_t)r->r * stride + t]) + r->w;
            float *e = &expect[(size_t)r->p * stride + t];
            *e = fmaxf(*e, v);
        }
    }
    for (int k = 0; k < p.nkernel; k++) {
        char *src = NULL, name[32];
        cr_assert_eq(codegen_emit_kernel(&p, k, 0, &src), CKY_OK);
        codegen_kernel_name(CODEGEN_XX, k, name, sizeof name);
        void *handle = NULL;
        codegen_host_fn fn = NULL;
        int hit = 1;
        uint64_t key = codegen_hash_str(CODEGEN_FNV_INIT, src);
        cr_assert_eq(codegen_host_load(NULL, key, src, name, &handle, &fn, &hit), CKY_OK, "%s",
                     cky_last_error());
        cr_assert_eq(hit, 0);
        fn(left.data, right.data, parent.data, n, stride);
        dlclose(handle);
        free(src);
    }
    guarded_check(&left, "left", rows, n, stride);
    guarded_check(&right, "right", rows, n, stride);
    guarded_check(&parent, "parent", rows, n, stride);
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < n; t++) {
            size_t i = (size_t)r * stride + t;
            cr_assert_eq(memcmp(&parent.data[i], &expect[i], sizeof(float)), 0,
                         "parent row %d work item %d: got %a, want %a", r, t,
                         (double)parent.data[i], (double)expect[i]);
        }
    free(expect);
    free(left.mem);
    free(right.mem);
    free(parent.mem);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

Test(codegen_emit, nvrtc_compiles_sm90_cubin)
{
    codegen_family f;
    synth_family(&f, 30, 800, 4);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("1x1x1/2x2x1", &shape), CKY_OK);
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    char *src = NULL;
    cr_assert_eq(codegen_emit_kernel(&p, 0, 0, &src), CKY_OK);
    cr_assert(strstr(src, "__launch_bounds__(128, 4)"));
    unsigned char *cubin = NULL;
    size_t size = 0;
    int regs = -1, spill = -1;
    cr_assert_eq(
        codegen_nvrtc_compile(src, "cky_XX_k0", "sm_90", NULL, &cubin, &size, &regs, &spill),
        CKY_OK, "%s", cky_last_error());
    cr_assert_gt(size, 64);
    cr_assert_eq(memcmp(cubin, "\177ELF", 4), 0, "not an ELF cubin");
    cr_assert_gt(regs, 0, "ptxas register count not parsed");
    cr_assert_eq(spill, 0);
    free(cubin);
    free(src);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

/* A row loaded again after an eviction must read a different address expression
 * (row + zero * gen), or ptxas merges the loads and spills the value in between. */
Test(codegen_emit, reloads_are_numbered_per_block)
{
    codegen_family f;
    synth_family(&f, 30, 800, 4);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("1x1x1/1x1x1", &shape), CKY_OK);
    shape.live_limit = 8; /* forces evictions and reloads */
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    char *src = NULL;
    cr_assert_eq(codegen_emit_kernel(&p, 0, 0, &src), CKY_OK);
    int count[2][30] = {{0}}, reloads = 0;
    for (const char *c = strstr(src, "\nCKY_BLOCK"); c; c = strchr(c + 1, '\n')) {
        char base[8];
        int row, gen;
        if (!strncmp(c, "\nCKY_BLOCK", 10))
            memset(count, 0, sizeof count); /* numbering restarts in every code block */
        else if (sscanf(c, "\n    CKY_LOAD(%*[^,], %7[a-z], %d, %d);", base, &row, &gen) == 3) {
            int *k = &count[base[0] == 'r'][row];
            cr_assert_eq(gen, *k, "load of %s row %d numbered %d, want %d", base, row, gen, *k);
            reloads += (*k)++ > 0;
        }
    }
    cr_assert_gt(reloads, 0, "the live limit caused no reloads");
    free(src);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

Test(codegen_emit, nvrtc_error_returns_log)
{
    const char *src = "extern \"C\" __global__ void cky_bad(float *x) { x[0] = undeclared_y; }\n";
    unsigned char *cubin = NULL;
    size_t size = 0;
    int regs, spill;
    cky_status st =
        codegen_nvrtc_compile(src, "cky_bad", "sm_90", NULL, &cubin, &size, &regs, &spill);
    cr_assert_eq(st, CKY_ERR_COMPILE);
    cr_assert(strstr(cky_last_error(), "undeclared_y"), "no NVRTC log in: %s", cky_last_error());
    cr_assert_null(cubin);
}

Test(codegen_emit, host_compiler_error_returns_log)
{
    void *handle = NULL;
    codegen_host_fn fn = NULL;
    int hit;
    cky_status st = codegen_host_load(NULL, 1, "int f(void) { return undeclared_z; }\n", "f",
                                      &handle, &fn, &hit);
    cr_assert_eq(st, CKY_ERR_COMPILE);
    cr_assert(strstr(cky_last_error(), "undeclared_z"), "no compiler log in: %s",
              cky_last_error());
}
