/* Tests of the GPU form of the generated kernels on the CPU: each code block's inline PTX
 * (codegen/emit.c), run by a small interpreter of the instructions the emitter writes, must
 * give the host build's bits, in all three semirings, so a change to either form that the
 * other does not follow fails here, without a GPU. The interpreter reads each instruction as
 * PTX defines it: add/mul/fma .rn.f32 are one correctly rounded float operation each, max.f32
 * the larger, .s32 integer adds wrap, shr.s32 is arithmetic, red.global.max.s32 an integer
 * max into memory and st.global.f32 a store. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/internal.h"
#include "../util/fixedpoint.h"
#include "../util/floatkey.h"
#include "test_codegen_synth.h"

#define ROWS 30   /* the synthetic family's rows on every axis */
#define N 128     /* work items: one tile, rows CODEGEN_THREADS floats apart */
#define MAXREG 4096

/* The register file of one code block: P, L, R rows by number, and the temporaries. */
typedef struct regs {
    uint32_t v[3][MAXREG];
    uint32_t lr, t, k, m;
} regs;

static uint32_t *reg(regs *r, const char *name)
{
    if (!strcmp(name, "lr"))
        return &r->lr;
    if (!strcmp(name, "t"))
        return &r->t;
    if (!strcmp(name, "k"))
        return &r->k;
    if (!strcmp(name, "m"))
        return &r->m;
    const char *axes = "PLR";
    const char *a = strchr(axes, name[0]);
    int x = atoi(name + 1);
    cr_assert(a && name[0] && x >= 0 && x < MAXREG, "unknown register '%s'", name);
    return &r->v[a - axes][x];
}

static float f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* An operand: a register, a PTX float (0fXXXXXXXX) or an integer. */
static uint32_t operand(regs *r, const char *s)
{
    if (s[0] == '0' && s[1] == 'f')
        return (uint32_t)strtoul(s + 2, NULL, 16);
    if (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
        return (uint32_t)strtol(s, NULL, 10);
    return *reg(r, s);
}

/* Run one instruction for work item t; base[0..2] are left, right, parent (uint32 words). */
static void step(regs *r, const char *ins, uint32_t *const base[3], int t)
{
    char op[40], a[24], b[24], c[24], d[24];
    a[0] = b[0] = c[0] = d[0] = '\0';
    if (!strncmp(ins, ".reg", 4))
        return;
    int base_no, off;
    if (sscanf(ins, "ld.relaxed.cta.global.%*[fs]32 %23[^,], [%%%d+%d];", a, &base_no, &off) == 3) {
        cr_assert(base_no == 0 || base_no == 1, "%s", ins);
        *reg(r, a) = base[base_no][off / 4 + t];
        return;
    }
    if (sscanf(ins, "red.global.max.s32 [%%2+%d], %23[^;];", &off, a) == 2) {
        uint32_t *m = &base[2][off / 4 + t];
        int32_t v = (int32_t)*reg(r, a);
        if (v > (int32_t)*m)
            *m = (uint32_t)v;
        return;
    }
    if (sscanf(ins, "st.global.f32 [%%2+%d], %23[^;];", &off, a) == 2) {
        base[2][off / 4 + t] = *reg(r, a);
        return;
    }
    int n = sscanf(ins, "%39s %23[^,], %23[^,;], %23[^,;], %23[^;];", op, d, a, b, c);
    cr_assert_geq(n, 3, "cannot read '%s'", ins);
    uint32_t x = operand(r, a), y = n > 3 ? operand(r, b) : 0, z = n > 4 ? operand(r, c) : 0;
    uint32_t *out = reg(r, d);
    if (!strcmp(op, "add.rn.f32"))
        *out = bits(f32(x) + f32(y));
    else if (!strcmp(op, "mul.rn.f32"))
        *out = bits(f32(x) * f32(y));
    else if (!strcmp(op, "fma.rn.f32"))
        *out = bits(fmaf(f32(x), f32(y), f32(z)));
    else if (!strcmp(op, "max.f32"))
        *out = bits(fmaxf(f32(x), f32(y)));
    else if (!strcmp(op, "add.s32"))
        *out = x + y;
    else if (!strcmp(op, "max.s32"))
        *out = (int32_t)x > (int32_t)y ? x : y;
    else if (!strcmp(op, "mov.b32"))
        *out = x;
    else if (!strcmp(op, "shr.s32"))
        *out = (uint32_t)((int32_t)x < 0 ? ~(~(int32_t)x >> y) : (int32_t)x >> y);
    else if (!strcmp(op, "and.b32"))
        *out = x & y;
    else if (!strcmp(op, "xor.b32"))
        *out = x ^ y;
    else
        cr_assert_fail("an instruction the interpreter does not know: '%s'", ins);
}

/* Run every code block's asm statement in `src` (text order) over work items 0..N-1. */
static int run_asm(const char *src, uint32_t *const base[3])
{
    static regs r;
    int nblock = 0;
    for (const char *at = src; (at = strstr(at, "asm volatile(\"{\\n\"\n")); nblock++) {
        at += strlen("asm volatile(\"{\\n\"\n");
        const char *end = strstr(at, "\"}\"");
        cr_assert_not_null(end);
        for (int t = 0; t < N; t++)
            for (const char *line = at, *q; (q = strstr(line, "\"\\t")) && q < end;) {
                const char *e = strstr(q, "\\n\"\n");
                cr_assert(e && e < end, "an asm line not as emitted: %.60s", q);
                char ins[200];
                size_t len = (size_t)(e - q - 3);
                cr_assert_lt(len, sizeof ins);
                memcpy(ins, q + 3, len);
                ins[len] = '\0';
                step(&r, ins, base, t);
                line = e + 4;
            }
        at = end;
    }
    return nblock;
}

/* The host build of kernel `name` in `src`, run on the workspaces (stride N). */
static void run_host(const char *src, const char *name, void *left, void *right, void *parent)
{
    void *handle = NULL;
    codegen_host_fn fn = NULL;
    cr_assert_eq(codegen_host_load(NULL, codegen_hash_str(CODEGEN_FNV_INIT, src), src, name,
                                   &handle, &fn),
                 CKY_OK, "%s", cky_last_error());
    fn(left, right, parent, N, N);
    dlclose(handle);
}

/* One workspace value of semiring sr: log scores in (-40, 0] and some -inf (max-plus), their
 * fixed-point units (fixed), or probabilities in [0, 1) and some 0 (sum-product). */
static uint32_t random_value(codegen_semiring sr)
{
    int u = rand();
    float x = u % 13 == 0 ? -INFINITY : -(float)(u % 400000) / 10007.0f;
    if (sr == CODEGEN_SEMIRING_FIXED)
        return (uint32_t)(isinf(x) ? FIXEDPOINT_NINF : fixedpoint_of(x));
    return bits(sr == CODEGEN_SEMIRING_SUM_PRODUCT ? expf(x) : x);
}

static void check_semiring(codegen_semiring sr, const char *shape_text)
{
    codegen_family f;
    synth_family(&f, ROWS, 2500, 7 + (unsigned)sr);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse(shape_text, &shape), CKY_OK);
    shape.live_limit = 12; /* reloads after evictions too */
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    size_t words = (size_t)ROWS * N;
    uint32_t *left = malloc(words * 4), *right = malloc(words * 4), *host = malloc(words * 4),
             *gpu = malloc(words * 4);
    for (size_t i = 0; i < words; i++) {
        left[i] = random_value(sr);
        right[i] = random_value(sr);
        host[i] = sr == CODEGEN_SEMIRING_SUM_PRODUCT ? bits(0.0f) : random_value(sr);
        gpu[i] = sr == CODEGEN_SEMIRING_MAX_PLUS ? (uint32_t)floatkey((int)host[i]) : host[i];
    }
    long nslot = 0;
    for (int k = 0; k < p.nkernel; k++)
        nslot = codegen_kernel_slots(&p, k, NULL, NULL) > nslot
                    ? codegen_kernel_slots(&p, k, NULL, NULL)
                    : nslot;
    uint32_t *slots = calloc((size_t)nslot * N, 4);
    int *rows = malloc((size_t)nslot * sizeof *rows);
    char *mark = malloc(ROWS);
    int nblock = 0;
    for (int k = 0; k < p.nkernel; k++) {
        char *src = NULL, name[32];
        cr_assert_eq(codegen_emit_kernel(&p, k, 0, sr, &src), CKY_OK);
        codegen_kernel_name(CODEGEN_XX, k, name, sizeof name);
        run_host(src, name, left, right, host);
        int sum = sr == CODEGEN_SEMIRING_SUM_PRODUCT;
        nblock += run_asm(src, (uint32_t *const[3]){left, right, sum ? slots : gpu});
        if (sum) { /* the engine's adds of the slots into their rows, in slot order */
            long n = codegen_kernel_slots(&p, k, rows, mark);
            for (long s = 0; s < n; s++)
                for (int t = 0; t < N; t++) {
                    uint32_t *w = &gpu[(size_t)rows[s] * N + t];
                    *w = bits(f32(*w) + f32(slots[(size_t)s * N + t]));
                }
        }
        free(src);
    }
    cr_assert_eq(nblock, p.nblock, "%d asm statements for %d code blocks", nblock, p.nblock);
    for (size_t i = 0; i < words; i++) {
        uint32_t g = sr == CODEGEN_SEMIRING_MAX_PLUS ? (uint32_t)floatkey((int)gpu[i]) : gpu[i];
        cr_assert_eq(g, host[i], "%s: row %zu work item %zu: asm %08x, host %08x",
                     codegen_semiring_name(sr), i / N, i % N, g, host[i]);
    }
    free(left);
    free(right);
    free(host);
    free(gpu);
    free(slots);
    free(rows);
    free(mark);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

Test(codegen_ptx, max_plus_asm_gives_the_host_bits) { check_semiring(CODEGEN_SEMIRING_MAX_PLUS, "2x2x1/2x1x2"); }
Test(codegen_ptx, fixed_asm_gives_the_host_bits) { check_semiring(CODEGEN_SEMIRING_FIXED, "2x2x1/2x1x2"); }
Test(codegen_ptx, sum_product_asm_gives_the_host_bits)
{
    check_semiring(CODEGEN_SEMIRING_SUM_PRODUCT, "2x1x2/2x2x1");
}
