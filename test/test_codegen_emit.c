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
#include "test_guarded.h"

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
        cr_assert_eq(codegen_emit_kernel(&p, k, 0, CODEGEN_SEMIRING_MAX_PLUS, &src),
                     CKY_OK);
        codegen_kernel_name(CODEGEN_XX, k, name, sizeof name);
        void *handle = NULL;
        codegen_host_fn fn = NULL;
        uint64_t key = codegen_hash_str(CODEGEN_FNV_INIT, src);
        cr_assert_eq(codegen_host_load(NULL, key, src, name, &handle, &fn), CKY_OK, "%s",
                     cky_last_error());
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

/* The source of kernel 0 of a synthetic family cut with `shape` (and `live_limit`); free
 * p, f and the source. */
static char *synth_kernel(const char *shape_text, int live_limit, codegen_family *f,
                          codegen_partition *p)
{
    synth_family(f, 30, 800, 4);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse(shape_text, &shape), CKY_OK);
    shape.live_limit = live_limit;
    cr_assert_eq(codegen_partition_build(f, shape, p), CKY_OK);
    char *src = NULL;
    cr_assert_eq(codegen_emit_kernel(p, 0, 0, CODEGEN_SEMIRING_MAX_PLUS, &src), CKY_OK);
    return src;
}

/* NVRTC's sm_90 cubin of kernel cky_XX_k0 in `src`. */
static unsigned char *compile_sm90(const char *src, size_t *size, int *regs, int *spill)
{
    unsigned char *cubin = NULL;
    cr_assert_eq(codegen_nvrtc_compile(src, "cky_XX_k0", "sm_90", NULL, &cubin, size, regs,
                                       spill),
                 CKY_OK, "%s", cky_last_error());
    return cubin;
}

Test(codegen_emit, nvrtc_compiles_sm90_cubin)
{
    codegen_family f;
    codegen_partition p;
    char *src = synth_kernel("1x1x1/2x2x1", 0, &f, &p);
    char bounds[64]; /* the default live budget fits 8 x 128 threads per SM (64 registers) */
    cr_assert_leq(p.max_live, 48);
    snprintf(bounds, sizeof bounds, "__launch_bounds__(%d, 1)", 8 * 128);
    cr_assert(strstr(src, bounds), "no %s", bounds);
    size_t size = 0;
    int regs = -1, spill = -1;
    unsigned char *cubin = compile_sm90(src, &size, &regs, &spill);
    cr_assert_gt(size, 64);
    cr_assert_eq(memcmp(cubin, "\177ELF", 4), 0, "not an ELF cubin");
    cr_assert_gt(regs, 0, "ptxas register count not parsed");
    cr_assert_leq(regs, 64);
    cr_assert_eq(spill, 0);
    free(cubin);
    free(src);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

/* Instructions of sm_90 SASS (16 bytes each, the opcode in the low 12 bits) in kernel
 * `name` of a cubin whose opcode is `op` (0x981: LDG, a global load). */
static int count_sass(const unsigned char *elf, size_t size, const char *name, unsigned op)
{
    const unsigned char *code = NULL;
    size_t bytes = 0;
    cr_assert_eq(codegen_cubin_code(elf, size, name, &code, &bytes), CKY_OK, "%s",
                 cky_last_error());
    int n = 0;
    for (size_t k = 0; k + 16 <= bytes; k += 16) {
        uint64_t lo;
        memcpy(&lo, code + k, 8);
        n += (lo & 0xfff) == op;
    }
    return n;
}

/* The kernel's code is found in its cubin, within the file, whole instructions, at least one
 * per rule (a max-plus rule is an add and a max); other names, damaged or foreign files are
 * CKY_ERR_FORMAT. */
Test(codegen_emit, cubin_code_is_found_and_checked)
{
    codegen_family f;
    codegen_partition p;
    char *src = synth_kernel("1x1x1/2x2x1", 0, &f, &p);
    size_t size = 0;
    int regs = -1, spill = -1;
    unsigned char *cubin = compile_sm90(src, &size, &regs, &spill);
    const unsigned char *code = NULL;
    size_t bytes = 0;
    cr_assert_eq(codegen_cubin_code(cubin, size, "cky_XX_k0", &code, &bytes), CKY_OK, "%s",
                 cky_last_error());
    cr_assert(code > cubin && code + bytes <= cubin + size);
    cr_assert_eq(bytes % 16, 0);
    cr_assert_geq((long)(bytes / 16), p.kernel[0].nrule, "%zu bytes for %ld rules", bytes,
                  p.kernel[0].nrule);
    cr_assert_eq(codegen_cubin_code(cubin, size, "cky_XX_k1", &code, &bytes), CKY_ERR_FORMAT);
    cr_assert_eq(codegen_cubin_code(cubin, size, "cky_XX_k", &code, &bytes), CKY_ERR_FORMAT);
    cr_assert_eq(codegen_cubin_code(cubin, 63, "cky_XX_k0", &code, &bytes), CKY_ERR_FORMAT);
    cr_assert_eq(codegen_cubin_code(cubin, size / 2, "cky_XX_k0", &code, &bytes),
                 CKY_ERR_FORMAT);
    unsigned char *bad = malloc(size);
    memcpy(bad, cubin, size);
    bad[0] = 'X';
    cr_assert_eq(codegen_cubin_code(bad, size, "cky_XX_k0", &code, &bytes), CKY_ERR_FORMAT);
    memcpy(bad, cubin, size);
    memset(bad + 0x28, 0xff, 8); /* the section table far outside */
    cr_assert_eq(codegen_cubin_code(bad, size, "cky_XX_k0", &code, &bytes), CKY_ERR_FORMAT);
    free(bad);
    free(cubin);
    free(src);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

/* Every load of the plan, reloads after evictions included, must survive ptxas as its own
 * instruction: ptxas merges read-only loads of one address and keeps the value alive in
 * between, spilling it. */
Test(codegen_emit, ptxas_keeps_every_planned_load)
{
    codegen_family f;
    codegen_partition p;
    char *src = synth_kernel("1x1x1/1x1x1", 8, &f, &p); /* live limit 8: reloads */
    int loads = 0, rows = 0;
    for (const char *c = strstr(src, "\n    CKY_LOAD("); c; c = strstr(c + 1, "\n    CKY_LOAD("))
        loads++;
    for (const char *c = strstr(src, "\n    float "); c; c = strstr(c + 1, "\n    float ")) {
        const char *end = strchr(c + 1, '\n');
        for (const char *x = c + 10; x < end; x++) /* L<row> and R<row> declarations */
            rows += (*x == 'L' || *x == 'R') && (x[-1] == ' ');
    }
    cr_assert_gt(loads, rows, "the live limit caused no reloads (%d loads, %d rows)", loads,
                 rows);
    size_t size = 0;
    int regs = -1, spill = -1;
    unsigned char *cubin = compile_sm90(src, &size, &regs, &spill);
    cr_assert_eq(count_sass(cubin, size, "cky_XX_k0", 0x981), loads,
                 "ptxas kept a different number of loads than the %d planned", loads);
    free(cubin);
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
    cky_status st = codegen_host_load(NULL, 1, "int f(void) { return undeclared_z; }\n", "f",
                                      &handle, &fn);
    cr_assert_eq(st, CKY_ERR_COMPILE);
    cr_assert(strstr(cky_last_error(), "undeclared_z"), "no compiler log in: %s",
              cky_last_error());
}
