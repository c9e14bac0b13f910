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

/* The GPU load of both semirings (explained in the max-plus text's comment). */
#define GPU_LOAD                                                                      \
    "#define CKY_LOAD(var, base, row)                                                  \\\n" \
    "    asm volatile(\"ld.relaxed.cta.global.f32 %0, [%1+%2];\"                       \\\n" \
    "                 : \"=f\"(var) : \"l\"(base), \"n\"((row) * CKY_ROW_BYTES))\n"

/* The macros that make one kernel text CUDA C and host C, for the max-plus semiring. */
static const char prelude_max_plus[] =
    "#ifdef __CUDACC__\n"
    "#define CKY_MAX(a, b) fmaxf(a, b)\n"
    "#define CKY_BLOCK static __device__ __forceinline__ void\n"
    "#define CKY_RESTRICT __restrict__\n"
    "/* VAR = row ROW of this thread's tile of workspace BASE (rows are CKY_ROW_BYTES apart,\n"
    "   codegen.h). A relaxed load, not a read-only (.nc) one: ptxas merges .nc loads of one\n"
    "   address and keeps the value alive in between, spilling it, which undoes the plan's\n"
    "   evictions; it does not merge these. The offset is an immediate. */\n"
    GPU_LOAD
    "/* The parent workspace holds keys, not floats: key(v) = bits(v) ^ ((bits(v) >> 31) &\n"
    "   0x7fffffff) orders like v as a signed int (and key(key(v)) = v), so a max is one\n"
    "   integer atomic without a branch */\n"
    "#define CKY_STORE(addr, v) cky_store_key((int *)(addr), __float_as_int(v))\n"
    "static __device__ __forceinline__ void cky_store_key(int *addr, int b)\n"
    "{\n"
    "    atomicMax(addr, " FLOATKEY_TEXT(b) ");\n"
    "}\n"
    "#else\n"
    "#define CKY_MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    "#define CKY_BLOCK static __attribute__((noinline)) void\n"
    "#define CKY_RESTRICT restrict\n"
    "#define CKY_LOAD(var, base, row) ((var) = *(const volatile float *)((base) + (row) * s))\n"
    "/* code blocks of one work item run one after the other: a plain float max */\n"
    "#define CKY_STORE(addr, v) (*(addr) = CKY_MAX(*(addr), v))\n"
    "#endif\n";

/* The macros of fixed max-plus: int32 rows, loads and maxima (util/fixedpoint.h). */
static const char prelude_fixed[] =
    "#ifdef __CUDACC__\n"
    "#define CKY_BLOCK static __device__ __forceinline__ void\n"
    "#define CKY_RESTRICT __restrict__\n"
    "#define CKY_LOAD(var, base, row)                                                  \\\n"
    "    asm volatile(\"ld.relaxed.cta.global.s32 %0, [%1+%2];\"                       \\\n"
    "                 : \"=r\"(var) : \"l\"(base), \"n\"((row) * CKY_ROW_BYTES))\n"
    "/* max(a + b, c) in one instruction (VIADDMNMX) */\n"
    "#define CKY_ADDMAX(a, b, c) __viaddmax_s32(a, b, c)\n"
    "#define CKY_STORE(addr, v) atomicMax((int *)(addr), v)\n"
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
    "#ifdef __CUDACC__\n"
    "#define CKY_BLOCK static __device__ __forceinline__ void\n"
    "#define CKY_RESTRICT __restrict__\n"
    GPU_LOAD
    "#define CKY_MUL(a, b) __fmul_rn(a, b)\n"
    "#define CKY_STORE(row, slot, v) (parent[(slot) * s] = (v))\n"
    "#else\n"
    "#include <math.h>\n"
    "#define CKY_BLOCK static __attribute__((noinline)) void\n"
    "#define CKY_RESTRICT restrict\n"
    "#define CKY_LOAD(var, base, row) ((var) = *(const volatile float *)((base) + (row) * s))\n"
    "#define CKY_MUL(a, b) ((a) * (b))\n"
    "#define CKY_STORE(row, slot, v) (parent[(row) * s] = parent[(row) * s] + (v))\n"
    "#endif\n"
    "#define CKY_FMA(acc, a, b) fmaf(a, b, acc)\n";

/* Declare `float X<row>, ...;` for the rows of one axis that the block uses. */
static void emit_declare(text *t, const codegen_rule *rule, long n, int axis, int dim,
                         char *mark, const char *type)
{
    static const char prefix[3] = {'P', 'L', 'R'};
    memset(mark, 0, (size_t)dim);
    for (long i = 0; i < n; i++)
        mark[axis == 0 ? rule[i].p : axis == 1 ? rule[i].l : rule[i].r] = 1;
    int col = 0;
    for (int x = 0; x < dim; x++) {
        if (!mark[x])
            continue;
        if (col == 0)
            text_printf(t, "    %s ", type);
        else
            text_printf(t, ", ");
        text_printf(t, "%c%d", prefix[axis], x);
        if (++col == 12) {
            text_printf(t, ";\n");
            col = 0;
        }
    }
    if (col)
        text_printf(t, ";\n");
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
    const char *type = sr == CODEGEN_SEMIRING_FIXED ? "int" : "float";
    text_printf(t,
                "\n/* code block %d: %ld rules, %d left, %d right, %d parent rows, %ld loads, "
                "at most %d values live */\n"
                "CKY_BLOCK %s_b%d(const %s *CKY_RESTRICT left, const %s *CKY_RESTRICT "
                "right, %s *CKY_RESTRICT parent, long long s)\n{\n    %s lr;\n",
                b, blk->nrule, blk->nleft, blk->nright, blk->nparent, loads, live, name, b,
                type, type, type, type);
    for (int a = 0; a < 3; a++)
        emit_declare(t, rule, blk->nrule, a, p->dim[a], mark, type);
    mark_parents(p, b, mark);
    for (int x = 0; x < p->dim[0]; x++)
        if (mark[x])
            slot[x] = slot0++;
    for (long i = 0; i < blk->nrule; i++) {
        const codegen_rule *r = &rule[i];
        if (flags[i] & PLAN_LOAD_L)
            text_printf(t, "    CKY_LOAD(L%d, left, %d);\n", r->l, r->l);
        if (flags[i] & PLAN_LOAD_R)
            text_printf(t, "    CKY_LOAD(R%d, right, %d);\n", r->r, r->r);
        double w = (double)codegen_weight(sr, r->w);
        if (flags[i] & PLAN_PAIR)
            text_printf(t, sr != CODEGEN_SEMIRING_SUM_PRODUCT ? "    lr = L%d + R%d;\n"
                                                              : "    lr = CKY_MUL(L%d, R%d);\n",
                        r->l, r->r);
        if (sr == CODEGEN_SEMIRING_FIXED && (flags[i] & PLAN_FIRST_P))
            text_printf(t, "    P%d = lr + %d;\n", r->p, fixedpoint_of(r->w));
        else if (sr == CODEGEN_SEMIRING_FIXED)
            text_printf(t, "    P%d = CKY_ADDMAX(lr, %d, P%d);\n", r->p, fixedpoint_of(r->w), r->p);
        else if (sr == CODEGEN_SEMIRING_SUM_PRODUCT && (flags[i] & PLAN_FIRST_P))
            text_printf(t, "    P%d = CKY_FMA(0.0f, lr, %.8ef);\n", r->p, w);
        else if (sr == CODEGEN_SEMIRING_SUM_PRODUCT)
            text_printf(t, "    P%d = CKY_FMA(P%d, lr, %.8ef);\n", r->p, r->p, w);
        else if (flags[i] & PLAN_FIRST_P)
            text_printf(t, "    P%d = lr + %.8ef;\n", r->p, w);
        else
            text_printf(t, "    P%d = CKY_MAX(P%d, lr + %.8ef);\n", r->p, r->p, w);
        if ((flags[i] & PLAN_LAST_P) && sr == CODEGEN_SEMIRING_SUM_PRODUCT)
            text_printf(t, "    CKY_STORE(%d, %ld, P%d);\n", r->p, slot[r->p], r->p);
        else if (flags[i] & PLAN_LAST_P)
            text_printf(t, "    CKY_STORE(&parent[%d * s], P%d);\n", r->p, r->p);
    }
    text_printf(t, "}\n");
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
