/* codegen emit: the source text of one kernel (paper section 4).
 *
 * Each code block becomes a function; its rules, in the order and with the register plan
 * of schedule.h (parent groups, each sorted by (L, R, P)), become straight-line code: a left
 * or right row is loaded right before its use (again after an eviction), `lr = L + R` is
 * computed once per (L, R) pair, each rule is one `P = max(P, lr + w)` line (the first one
 * of a parent just assigns, max(-inf, x) being x), and a parent is stored (atomic max; on
 * the GPU of an order-preserving integer key, codegen.h) right after its last use. A small
 * macro prelude makes the same text CUDA C for NVRTC (one __global__ kernel choosing its
 * code block and tile from its block index, codegen.h) and plain C for the host compiler
 * (a function that loops over code blocks and work items). Weights are printed with %.8e
 * (9 significant digits), which reads back as the same float.
 *
 * On the GPU each code block's body is that same straight-line code written once more, as
 * PTX in one inline asm statement: the same instructions in the same order (PTX hex floats
 * for the weights, so the same bits), which NVRTC's front end passes through instead of
 * optimizing 2,000 lines of C per block, so a kernel compiles 3-4 times faster and ptxas
 * makes the same machine code of it (eng-sm6-shape XX kernel 0: 0.3 s instead of 15.3 s in
 * NVRTC's front end, 5.6 s against 6.6 s in ptxas, 50,472 instructions both ways).
 *
 * The sum-product text (codegen.h) has the same blocks, rules, order and loads: `lr = L * R`,
 * each rule `P = fmaf(lr, w, P)` (the first of a parent fmaf(lr, w, 0)) with w the linear
 * weight, a parent added into its row after its last rule; its GPU entry runs every code
 * block of its work item in one thread, in order. The fixed max-plus text is the max-plus
 * text on int32 (util/fixedpoint.h): the weights are integer literals, each rule
 * `P = CKY_ADDMAX(lr, w, P)` (max(lr + w, P), one DPX instruction on the GPU), a parent
 * stored by a plain integer atomic max. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fixedpoint.h"
#include "internal.h"
#include "schedule.h"

typedef struct text {
    char *buf;
    size_t len, cap;
    int failed;
} text;

static void text_printf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_printf(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = 2 * (t->cap + (size_t)n) + 4096;
        char *b = realloc(t->buf, cap);
        if (!b) {
            t->failed = 1;
            return;
        }
        t->buf = b;
        t->cap = cap;
    }
}

int codegen_blocks_per_sm(int max_live)
{
    /* Spills are ruinous, and the kernels wait on DRAM and on instruction fetch, so more
     * warps per SM help (docs/performance.md, 2026-11-22): the most blocks, up to eight
     * (64 registers each), whose register share still holds every live value plus the
     * margin. */
    for (int blocks = 8; blocks > 1; blocks--) {
        int regs = 65536 / (CODEGEN_THREADS * blocks);
        if (regs > 255)
            regs = 255;
        if (max_live + CODEGEN_REGISTER_MARGIN <= regs)
            return blocks;
    }
    return 1;
}

float codegen_weight(codegen_semiring sr, float w)
{
    return sr == CODEGEN_SEMIRING_SUM_PRODUCT ? (float)exp((double)w) : w;
}

void codegen_kernel_name(codegen_family_id id, int k, char *buf, size_t size)
{
    snprintf(buf, size, "cky_%s_k%d", codegen_family_name(id), k);
}

/* The GPU side of every prelude: a code block is a function inlined into the kernel's switch,
 * its body one inline asm statement (emit_block). */
#define GPU_PRELUDE                                                                   \
    "#ifdef __CUDACC__\n"                                                              \
    "#define CKY_BLOCK static __device__ __forceinline__ void\n"                       \
    "#define CKY_RESTRICT __restrict__\n"

/* The macros that make one kernel text CUDA C and host C, for the max-plus semiring. The
 * GPU's asm: a row is loaded with a relaxed load, not a read-only (.nc) one (ptxas merges
 * .nc loads of one address and keeps the value alive in between, spilling it, which undoes
 * the plan's evictions; it does not merge these), at an immediate offset; the parent
 * workspace holds keys, not floats (key(v) = bits(v) ^ ((bits(v) >> 31) & 0x7fffffff)
 * orders like v as a signed int, and key(key(v)) = v), so a store is one integer atomic max
 * without a branch. */
static const char prelude_max_plus[] =
    GPU_PRELUDE
    "#else\n"
    "#define CKY_MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    "#define CKY_BLOCK static __attribute__((noinline)) void\n"
    "#define CKY_RESTRICT restrict\n"
    "#define CKY_LOAD(var, base, row) ((var) = *(const volatile float *)((base) + (row) * s))\n"
    "/* code blocks of one work item run one after the other: a plain float max */\n"
    "#define CKY_STORE(addr, v) (*(addr) = CKY_MAX(*(addr), v))\n"
    "#endif\n";

/* The macros of fixed max-plus: int32 rows, loads and maxima (util/fixedpoint.h). On the
 * GPU a rule's add and max (max(lr + w, P)) are one instruction, VIADDMNMX, and a parent is
 * stored by a plain integer atomic max. */
static const char prelude_fixed[] =
    GPU_PRELUDE
    "#else\n"
    "#define CKY_BLOCK static __attribute__((noinline)) void\n"
    "#define CKY_RESTRICT restrict\n"
    "#define CKY_LOAD(var, base, row) ((var) = *(const volatile int *)((base) + (row) * s))\n"
    "#define CKY_ADDMAX(a, b, c) ((a) + (b) > (c) ? (a) + (b) : (c))\n"
    "/* code blocks of one work item run one after the other: a plain max */\n"
    "#define CKY_STORE(addr, v) (*(addr) = *(addr) > (v) ? *(addr) : (v))\n"
    "#endif\n";

/* The macros of the sum-product semiring: every rule is one fused multiply-add into its
 * parent's register (CKY_FMA(acc, a, b) = fmaf(a, b, acc), correctly rounded on the GPU and
 * on the host alike, by the FMA instruction or libm, so the host build gives the GPU's
 * bits). A code block's parent register ends in CKY_STORE(row, slot, v): the host build
 * adds it into its workspace row (code blocks in order); the GPU's code blocks run in
 * parallel, each storing into slots of its own (codegen_kernel_slots), which the engine then
 * adds into the rows in slot order: the same adds in the same order, without atomics. */
static const char prelude_sum_product[] =
    GPU_PRELUDE
    "#else\n"
    "#include <math.h>\n"
    "#define CKY_BLOCK static __attribute__((noinline)) void\n"
    "#define CKY_RESTRICT restrict\n"
    "#define CKY_LOAD(var, base, row) ((var) = *(const volatile float *)((base) + (row) * s))\n"
    "#define CKY_MUL(a, b) ((a) * (b))\n"
    "#define CKY_STORE(row, slot, v) (parent[(row) * s] = parent[(row) * s] + (v))\n"
    "#define CKY_FMA(acc, a, b) fmaf(a, b, acc)\n"
    "#endif\n";

/* Declare the rows of one axis that the block uses: `    float L3, L7, ...;` in C, twelve to a
 * line, or `.reg .f32 L3, L7, ...;` lines of the asm statement (`ptx` the PTX type). */
static void emit_declare(text *t, const codegen_rule *rule, long n, int axis, int dim,
                         char *mark, const char *type, const char *ptx)
{
    static const char prefix[3] = {'P', 'L', 'R'};
    memset(mark, 0, (size_t)dim);
    for (long i = 0; i < n; i++)
        mark[axis == 0 ? rule[i].p : axis == 1 ? rule[i].l : rule[i].r] = 1;
    int col = 0;
    for (int x = 0; x < dim; x++) {
        if (!mark[x])
            continue;
        if (col == 0 && ptx)
            text_printf(t, "        \"\\t.reg .%s ", ptx);
        else if (col == 0)
            text_printf(t, "    %s ", type);
        else
            text_printf(t, ", ");
        text_printf(t, "%c%d", prefix[axis], x);
        if (++col == 12) {
            text_printf(t, ptx ? ";\\n\"\n" : ";\n");
            col = 0;
        }
    }
    if (col)
        text_printf(t, ptx ? ";\\n\"\n" : ";\n");
}

/* One instruction of a block's asm statement: a string literal line of the kernel text. */
static void asm_line(text *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void asm_line(text *a, const char *fmt, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    text_printf(a, "        \"\\t%s\\n\"\n", line);
}

/* PTX's exact form of a float: 0f and its bits in hex. */
static unsigned ptx_bits(float w)
{
    unsigned u;
    memcpy(&u, &w, sizeof u);
    return u;
}

/* The distinct parent rows of code block b marked in mark[0 .. p->dim[0]). */
static void mark_parents(const codegen_partition *p, int b, char *mark)
{
    const codegen_block *blk = &p->block[b];
    memset(mark, 0, (size_t)p->dim[0]);
    for (long i = blk->first; i < blk->first + blk->nrule; i++)
        mark[p->rule[i].p] = 1;
}

long codegen_kernel_slots(const codegen_partition *p, int k, int *rows, char *mark)
{
    const codegen_kernel *kn = &p->kernel[k];
    long n = 0;
    for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++) {
        if (!rows) {
            n += p->block[b].nparent;
            continue;
        }
        mark_parents(p, b, mark);
        for (int x = 0; x < p->dim[0]; x++)
            if (mark[x])
                rows[n++] = x;
    }
    return n;
}

/* Emit code block b; `flags` and `mark` are scratch for its rules and rows, `slot` for its
 * parent rows' slots (sum-product: the block's first is `slot0`). */
static cky_status emit_block(text *t, const codegen_partition *p, codegen_semiring sr,
                             const char *name, int b, long slot0, unsigned char *flags,
                             char *mark, long *slot)
{
    const codegen_block *blk = &p->block[b];
    const codegen_rule *rule = p->rule + blk->first;
    int live;
    long loads;
    cky_status st = codegen_block_plan(rule, blk->nrule, p->dim, p->shape.live_limit, flags,
                                       &live, &loads);
    if (st)
        return st;
    int fixed = sr == CODEGEN_SEMIRING_FIXED, sum = sr == CODEGEN_SEMIRING_SUM_PRODUCT;
    const char *type = fixed ? "int" : "float", *ptx = fixed ? "s32" : "f32";
    const int row = CODEGEN_THREADS * (int)sizeof(float); /* bytes between rows */
    text_printf(t,
                "\n/* code block %d: %ld rules, %d left, %d right, %d parent rows, %ld loads, "
                "at most %d values live */\n"
                "CKY_BLOCK %s_b%d(const %s *CKY_RESTRICT left, const %s *CKY_RESTRICT "
                "right, %s *CKY_RESTRICT parent, long long s)\n{\n"
                "#ifdef __CUDACC__\n    asm volatile(\"{\\n\"\n",
                b, blk->nrule, blk->nleft, blk->nright, blk->nparent, loads, live, name, b,
                type, type, type);
    text c = {NULL, 0, 0, 0}; /* the host's C, after the GPU's asm */
    text_printf(&c, "#else\n    %s lr;\n", type);
    asm_line(t, ".reg .%s lr, t;", ptx);
    if (sr == CODEGEN_SEMIRING_MAX_PLUS)
        asm_line(t, ".reg .b32 k, m;");
    for (int a = 0; a < 3; a++) {
        emit_declare(t, rule, blk->nrule, a, p->dim[a], mark, type, ptx);
        emit_declare(&c, rule, blk->nrule, a, p->dim[a], mark, type, NULL);
    }
    mark_parents(p, b, mark);
    for (int x = 0; x < p->dim[0]; x++)
        if (mark[x])
            slot[x] = slot0++;
    for (long i = 0; i < blk->nrule; i++) {
        const codegen_rule *r = &rule[i];
        const char *ld = fixed ? "ld.relaxed.cta.global.s32" : "ld.relaxed.cta.global.f32";
        if (flags[i] & PLAN_LOAD_L) {
            asm_line(t, "%s L%d, [%%0+%d];", ld, r->l, r->l * row);
            text_printf(&c, "    CKY_LOAD(L%d, left, %d);\n", r->l, r->l);
        }
        if (flags[i] & PLAN_LOAD_R) {
            asm_line(t, "%s R%d, [%%1+%d];", ld, r->r, r->r * row);
            text_printf(&c, "    CKY_LOAD(R%d, right, %d);\n", r->r, r->r);
        }
        if (flags[i] & PLAN_PAIR) {
            asm_line(t, fixed ? "add.s32 lr, L%d, R%d;" : sum ? "mul.rn.f32 lr, L%d, R%d;"
                                                              : "add.rn.f32 lr, L%d, R%d;",
                     r->l, r->r);
            text_printf(&c, sum ? "    lr = CKY_MUL(L%d, R%d);\n" : "    lr = L%d + R%d;\n",
                        r->l, r->r);
        }
        float w = codegen_weight(sr, r->w);
        int first = flags[i] & PLAN_FIRST_P;
        if (fixed && first) {
            asm_line(t, "add.s32 P%d, lr, %d;", r->p, fixedpoint_of(r->w));
            text_printf(&c, "    P%d = lr + %d;\n", r->p, fixedpoint_of(r->w));
        } else if (fixed) { /* ptxas fuses the add and the max (VIADDMNMX) */
            asm_line(t, "add.s32 t, lr, %d;", fixedpoint_of(r->w));
            asm_line(t, "max.s32 P%d, t, P%d;", r->p, r->p);
            text_printf(&c, "    P%d = CKY_ADDMAX(lr, %d, P%d);\n", r->p, fixedpoint_of(r->w),
                        r->p);
        } else if (sum) {
            char acc[16] = "0f00000000", cacc[16] = "0.0f"; /* the first rule's: 0 */
            if (!first) {
                snprintf(acc, sizeof acc, "P%d", r->p);
                snprintf(cacc, sizeof cacc, "P%d", r->p);
            }
            asm_line(t, "fma.rn.f32 P%d, lr, 0f%08X, %s;", r->p, ptx_bits(w), acc);
            text_printf(&c, "    P%d = CKY_FMA(%s, lr, %.8ef);\n", r->p, cacc, (double)w);
        } else if (first) {
            asm_line(t, "add.rn.f32 P%d, lr, 0f%08X;", r->p, ptx_bits(w));
            text_printf(&c, "    P%d = lr + %.8ef;\n", r->p, (double)w);
        } else {
            asm_line(t, "add.rn.f32 t, lr, 0f%08X;", ptx_bits(w));
            asm_line(t, "max.f32 P%d, P%d, t;", r->p, r->p);
            text_printf(&c, "    P%d = CKY_MAX(P%d, lr + %.8ef);\n", r->p, r->p, (double)w);
        }
        if (!(flags[i] & PLAN_LAST_P))
            continue;
        if (sum) {
            asm_line(t, "st.global.f32 [%%2+%ld], P%d;", slot[r->p] * row, r->p);
            text_printf(&c, "    CKY_STORE(%d, %ld, P%d);\n", r->p, slot[r->p], r->p);
            continue;
        }
        if (fixed) {
            asm_line(t, "red.global.max.s32 [%%2+%d], P%d;", r->p * row, r->p);
        } else { /* the key of P's bits */
            asm_line(t, "mov.b32 k, P%d;", r->p);
            asm_line(t, "shr.s32 m, k, 31;");
            asm_line(t, "and.b32 m, m, 2147483647;");
            asm_line(t, "xor.b32 k, k, m;");
            asm_line(t, "red.global.max.s32 [%%2+%d], k;", r->p * row);
        }
        text_printf(&c, "    CKY_STORE(&parent[%d * s], P%d);\n", r->p, r->p);
    }
    text_printf(t, "        \"}\" : : \"l\"(left), \"l\"(right), \"l\"(parent) : \"memory\");\n");
    text_printf(&c, "#endif\n}\n");
    if (c.failed)
        t->failed = 1;
    else
        text_printf(t, "%s", c.buf);
    free(c.buf);
    return CKY_OK;
}

/* The prelude of each semiring: its max (CKY_MAX) and its store into the parent workspace
 * (CKY_STORE). */
static const char *const prelude[] = {[CODEGEN_SEMIRING_MAX_PLUS] = prelude_max_plus,
                                      [CODEGEN_SEMIRING_SUM_PRODUCT] = prelude_sum_product,
                                      [CODEGEN_SEMIRING_FIXED] = prelude_fixed};

/* The GPU entry of a kernel: blockIdx.y (or the chunk order) picks the code block, and the
 * code blocks of one work item run in parallel. Max-plus: combined by atomic max into the
 * parent workspace. Sum-product: each into its slots of the partial workspace `parent`,
 * whose tiles are `ptile` floats apart. Fixed max-plus: as max-plus, its float-typed
 * workspaces read as int32. */
static void emit_entry(text *t, const char *name, const codegen_kernel *kn, int blocks_per_sm,
                       codegen_semiring sr)
{
    int max = sr != CODEGEN_SEMIRING_SUM_PRODUCT;
    int fixed = sr == CODEGEN_SEMIRING_FIXED;
    text_printf(t,
                "\n#ifdef __CUDACC__\n"
                "extern \"C\" __global__ void __launch_bounds__(%d, 1)\n"
                "%s(const float *__restrict__ left, const float *__restrict__ right, "
                "float *__restrict__ parent, int n, int tile, %sint chunk)\n{\n"
                "    unsigned x = blockIdx.x, y = blockIdx.y; /* tile group, code block */\n"
                "    if (chunk > 0) { /* codegen.h: code block by code block over chunks */\n"
                "        unsigned id = blockIdx.y * gridDim.x + blockIdx.x;\n"
                "        unsigned c = id / ((unsigned)chunk * gridDim.y), "
                "r = id %% ((unsigned)chunk * gridDim.y);\n"
                "        unsigned width = min((unsigned)chunk, gridDim.x - c * chunk);\n"
                "        y = r / width;\n"
                "        x = c * chunk + r %% width;\n"
                "    }\n"
                "    unsigned t = x * blockDim.x + threadIdx.x; /* work item */\n"
                "    if (t >= n)\n        return;\n"
                "    long long o = (long long)(t / %d) * tile + t %% %d; /* codegen.h */\n",
                CODEGEN_THREADS * blocks_per_sm, name, max ? "" : "int ptile, ", CODEGEN_THREADS,
                CODEGEN_THREADS);
    if (!max)
        text_printf(t, "    long long op = (long long)(t / %d) * ptile + t %% %d;\n",
                    CODEGEN_THREADS, CODEGEN_THREADS);
    text_printf(t, "    switch (y) {\n");
    for (int b = 0; b < kn->nblock; b++)
        text_printf(t,
                    fixed ? "    case %d: %s_b%d((const int *)(left + o), (const int *)(right + o), "
                            "(int *)(parent + %s), %d); break;\n"
                          : "    case %d: %s_b%d(left + o, right + o, parent + %s, %d); break;\n",
                    b, name, kn->first_block + b, max ? "o" : "op", CODEGEN_THREADS);
    text_printf(t, "    }\n}\n");
}

cky_status codegen_emit_kernel(const codegen_partition *p, int k, int blocks_per_sm,
                               codegen_semiring sr, char **src)
{
    if ((unsigned)sr >= sizeof prelude / sizeof *prelude)
        return cky_fail(CKY_ERR_ARG, "codegen: no kernel text for semiring %d", (int)sr);
    const codegen_kernel *kn = &p->kernel[k];
    char name[32];
    codegen_kernel_name(p->family, k, name, sizeof name);
    long most = 1;
    int dmax = 1;
    for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++)
        most = p->block[b].nrule > most ? p->block[b].nrule : most;
    for (int a = 0; a < 3; a++)
        dmax = p->dim[a] > dmax ? p->dim[a] : dmax;
    unsigned char *flags = malloc((size_t)most);
    char *mark = malloc((size_t)dmax);
    long *slot = malloc((size_t)p->dim[0] * sizeof *slot);
    if (!flags || !mark || !slot) {
        free(flags);
        free(mark);
        free(slot);
        return cky_fail(CKY_ERR_NOMEM, "out of memory emitting %s", name);
    }
    cky_status st = CKY_OK;
    int live = 0;
    for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++)
        if (p->block[b].max_live > live)
            live = p->block[b].max_live;
    if (blocks_per_sm <= 0)
        blocks_per_sm = codegen_blocks_per_sm(live);
    text t = {NULL, 0, 0, 0};
    text_printf(&t,
                "/* %s: generated by %s, family %s, %d code blocks, %ld rules.\n"
                "   %s */\n#define CKY_ROW_BYTES %d\n%s",
                name, CODEGEN_VERSION, codegen_family_name(p->family), kn->nblock, kn->nrule,
                sr == CODEGEN_SEMIRING_MAX_PLUS
                    ? "parent[p][t] = max(parent[p][t], (left[l][t] + right[r][t]) + w) for "
                      "each rule (p, l, r, w)"
                : sr == CODEGEN_SEMIRING_FIXED
                    ? "parent[p][t] = max(parent[p][t], (left[l][t] + right[r][t]) + w) for "
                      "each rule (p, l, r, w), in int32 fixed point (units of 2^-16 nats)"
                    : "parent[p][t] += sum over the rules (p, l, r, w) of (left[l][t] * "
                      "right[r][t]) * w, one fmaf each, in the order below",
                CODEGEN_THREADS * (int)sizeof(float), prelude[sr]);
    long slot0 = 0;
    for (int b = kn->first_block; b < kn->first_block + kn->nblock && !st; b++) {
        st = emit_block(&t, p, sr, name, b, slot0, flags, mark, slot);
        slot0 += p->block[b].nparent;
    }
    emit_entry(&t, name, kn, blocks_per_sm, sr);
    text_printf(&t,
                "#else\n"
                "void %s(const float *left, const float *right, float *parent, int n, "
                "int stride);\n"
                "void %s(const float *left, const float *right, float *parent, int n, "
                "int stride)\n{\n    long long s = stride;\n",
                name, name);
    for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++)
        text_printf(&t,
                    sr == CODEGEN_SEMIRING_FIXED
                        ? "    for (int t = 0; t < n; t++)\n"
                          "        %s_b%d((const int *)left + t, (const int *)right + t, "
                          "(int *)parent + t, s);\n"
                        : "    for (int t = 0; t < n; t++)\n"
                          "        %s_b%d(left + t, right + t, parent + t, s);\n",
                    name, b);
    text_printf(&t, "}\n#endif\n");
    free(flags);
    free(mark);
    free(slot);
    if (st || t.failed) {
        free(t.buf);
        return st ? st : cky_fail(CKY_ERR_NOMEM, "out of memory emitting %s", name);
    }
    *src = t.buf;
    return CKY_OK;
}
