/* codegen: the grammar compiler (Canny, Hall and Klein 2013, sections 4-5).
 *
 * It turns the binary rules of a grammar into open-coded kernels:
 *   1. families: the rules split by child type into XX, XT, TX, TT (T = POS tag child,
 *      X = phrasal child; parents are always phrasal), in class-local substate numbering;
 *   2. partition: each family's P x L x R cube cut into major cubes (one kernel each) and
 *      those into minor cubes (code blocks): along spectral (Fiedler vector) orders, by
 *      equal width, refined by local moves; the best of these candidates kept;
 *   3. emission: one source text per kernel, valid CUDA C for NVRTC and valid C for the
 *      host compiler; each rule is one line `P = max(P, LR + w)`;
 *   4. compilation: NVRTC to a cubin and/or `cc -shared` to a host .so, both through an
 *      on-disk cache. A family's partition is cached under a hash of its rules, shape and
 *      the generator version, so a warm start neither partitions nor emits; kernels are
 *      keyed by that hash, the kernel, the compiler, its options and the architecture.
 *
 * Workspace contract with the parser (all float32, symbol-major): for a family, LEFT has one
 * row per substate of the left child's class, RIGHT one row per substate of the right child's
 * class, PARENT one row per phrasal substate. Host: column t is work item t and row k starts
 * at k * stride. GPU: the workspaces are tiled by thread block: work items come in tiles of
 * CODEGEN_THREADS, each tile holds its rows one after the other (`tile` floats apart), and
 * row k of work item t is at (t / CODEGEN_THREADS) * tile + k * CODEGEN_THREADS +
 * t % CODEGEN_THREADS, so a row's address is the thread's base plus a constant (one load
 * instruction with an immediate offset). Rows are numbered class-locally: the X class
 * numbers the phrasal substates in ascending global id, the T class the tag substates
 * likewise (codegen_classes). A kernel computes, for every work item t < n and every rule
 * (p, l, r, w) of its cube,
 *     parent[p][t] = max(parent[p][t], (left[l][t] + right[r][t]) + w)
 * with w = (float) of the grammar's double log score. Max is order-independent and every
 * rule value is computed with the same two float adds, so any schedule (GPU atomics, the
 * host build, a plain C loop) gives bit-identical parents. Workspace values must not be NaN.
 *
 * Kernel entry points (the same name in the cubin and in the host .so):
 *     host: void NAME(const float *left, const float *right, float *parent, int n, int stride)
 *     GPU:  void NAME(const float *left, const float *right, float *parent, int n, int tile,
 *                     int chunk)
 * GPU launch: m tiles per thread block (CODEGEN_THREADS * m threads; m at most the kernel's
 * maxThreadsPerBlock / CODEGEN_THREADS, which its launch bounds make the number of
 * CODEGEN_THREADS-thread blocks an SM holds), grid (ceil(tiles / m), nblock). Thread
 * (blockIdx.x, threadIdx.x) takes work item blockIdx.x * blockDim.x + threadIdx.x. With
 * chunk 0, blockIdx.y is the code block, so the thread blocks (dispatched x fastest) run
 * code block 0 over all tiles, then code block 1, and so on. With chunk > 0, the blocks'
 * tile groups come in chunks of `chunk` and the thread blocks run code block by code block
 * over one chunk, then over the next chunk: the code blocks of one tile run close in time,
 * while its rows may still be in L1 or L2. On the GPU the parent workspace holds int32
 * keys, not floats (util/floatkey.h): key(v) = bits(v) ^ ((bits(v) >> 31) & 0x7fffffff),
 * which orders like v as a signed int and is its own inverse; parents are combined with an
 * integer atomic max of the key, so the workspace starts as CODEGEN_KEY_NINF (the key of
 * -inf). Host: the function loops over its code blocks and work items 0..n-1 itself, on
 * floats. */
#ifndef CKY_CODEGEN_H
#define CKY_CODEGEN_H

#include <stddef.h>

#include "../grammar/grammar.h"
#include "../util/floatkey.h"
#include "../util/progress.h"
#include "generic.h"
#include "../util/status.h"

#define CODEGEN_VERSION "cky-codegen-10" /* part of every cache key: bump when output changes */
#define CODEGEN_THREADS 128             /* work items (threads) per workspace tile */
#define CODEGEN_KEY_NINF FLOATKEY_NINF  /* key(-inf): see the GPU workspace contract */

/* The semiring of the generated binary rules, over the same partition (same rules, blocks
 * and emission order):
 *   - max-plus (Viterbi): parent = max over rules of (left + right) + w, w the log score;
 *   - sum-product (max-rule's inside and outside scores, linear and scaled by the caller):
 *     per work item, the code blocks run in order and each rule is one
 *     P = fmaf(lr, w, P) with lr = left * right (once per (l, r) pair of the plan) and w
 *     the linear weight codegen_weight(); a parent's register starts at fmaf(lr, w, 0) with
 *     its first rule of a block and is added into the workspace row (parent += P, no
 *     atomics) after its last; the workspace starts at 0. The same float operations in the
 *     same order on the host and on the GPU (one thread runs all code blocks of its work
 *     item there), hence the same bits. Workspace values must be finite and >= 0;
 *   - fixed max-plus (Viterbi in fixed point, util/fixedpoint.h): max-plus on int32 scores
 *     in units of 2^-16 nats, w = fixedpoint_of((float) log score); the three workspaces hold
 *     int32 fixed-point values (-inf as FIXEDPOINT_NINF, which the parent workspace starts
 *     as), parents are combined by a plain integer atomic max (no key), and each rule is
 *     one `P = max(P, lr + w)` in integers, which Hopper's DPX does in one instruction. */
typedef enum codegen_semiring {
    CODEGEN_SEMIRING_MAX_PLUS = 0,
    CODEGEN_SEMIRING_SUM_PRODUCT = 1,
    CODEGEN_SEMIRING_FIXED = 2
} codegen_semiring;

#define CODEGEN_NSEMIRING 3

/* "max-plus", "sum-product", "fixed max-plus" ("?" for another value). */
const char *codegen_semiring_name(codegen_semiring sr);

/* ---- classes: class-local substate numbering ---- */

typedef enum codegen_class { CODEGEN_X = 0, CODEGEN_T = 1 } codegen_class;

typedef struct codegen_classes {
    int n[2];       /* number of substates in class X (phrasal) and T (tag) */
    int *global[2]; /* [class][local index] -> global substate id (ascending) */
    int *local;     /* [global substate id] -> its index within its own class */
    unsigned char *cls; /* [global substate id] -> codegen_class */
} codegen_classes;

/* Build the class numbering of `g`. Free with codegen_classes_free. */
cky_status codegen_classes_init(const grammar *g, codegen_classes *c);
void codegen_classes_free(codegen_classes *c);

/* Class-local row of global substate `global_sub` in class `cls`, or -1 if it is not in it. */
int codegen_class_index(const codegen_classes *c, codegen_class cls, int global_sub);

/* ---- families ---- */

typedef enum codegen_family_id {
    CODEGEN_XX = 0, CODEGEN_XT, CODEGEN_TX, CODEGEN_TT, CODEGEN_NFAMILY
} codegen_family_id;

/* "XX", "XT", "TX", "TT" */
const char *codegen_family_name(codegen_family_id id);
/* Whether family `id` handles the split k of cell (i, j): XX every split, XT where the right
 * child is one word, TX where the left child is, TT two-word cells. (Inline: the plan asks it
 * for every split of every cell of a batch.) */
static inline int codegen_family_has_split(codegen_family_id id, int i, int k, int j)
{
    switch (id) {
    case CODEGEN_XX: return 1;
    case CODEGEN_XT: return j - k == 1;
    case CODEGEN_TX: return k - i == 1;
    case CODEGEN_TT: return j - i == 2;
    default: return 0;
    }
}

/* Class of the left / right child of a family. */
codegen_class codegen_family_left(codegen_family_id id);
codegen_class codegen_family_right(codegen_family_id id);

/* One substate rule in class-local rows: parent row p (X), left row l, right row r. */
typedef struct codegen_rule {
    int p, l, r;
    float w; /* (float) of the double log score; finite, never -0 */
} codegen_rule;

typedef struct codegen_family {
    codegen_family_id id;
    int dim[3];         /* rows of PARENT, LEFT, RIGHT (class sizes) */
    long nrule;
    codegen_rule *rule; /* in the grammar's order */
} codegen_family;

/* Collect the finite-score rules of family `id`. Free with codegen_family_free. */
cky_status codegen_family_build(const grammar *g, const codegen_classes *c,
                                codegen_family_id id, codegen_family *f);
void codegen_family_free(codegen_family *f);

/* ---- partition ---- */

/* Major cubes per axis (P, L, R) and minor cubes per axis within each major cube.
 * All zero means "choose automatically" (codegen_shape_auto). */
typedef struct codegen_shape {
    int major[3], minor[3];
    int live_limit; /* live budget of a code block's plan (codegen/schedule.h): parents are
                       grouped and right rows reloaded so at most this many values are
                       live; 0 = the default, CODEGEN_LIVE_BUDGET */
} codegen_shape;

/* Parse "6x2x2/2x2x2" (major/minor; "6x2x2" alone keeps minor 2x2x2). CKY_ERR_ARG on junk. */
cky_status codegen_shape_parse(const char *text, codegen_shape *out);

/* Default shape for a family of `nrule` rules: code blocks of about 1,800 rules, minor
 * 2x1x4 where there are enough rules (R split first), major cubes P-first (codegen_compile
 * turns the sum-product XX kernels' 2x1x4 into 4x1x2). */
codegen_shape codegen_shape_auto(long nrule);

/* Order the `n` nodes of axis `axis` (0 = P, 1 = L, 2 = R; node = that axis's row) of the
 * rules by the Fiedler vector of the symmetric normalized Laplacian of A^T A, A's columns
 * being the node feature vectors (rule counts per pair of the other two axes, 0.1 x counts
 * per each other axis). Only nodes occurring in the rules are ordered: writes their rows to
 * order[0..*count) (order needs room for `dim` entries). Deterministic: the eigenvector's
 * first clearly nonzero component is made positive and ties keep ascending row order. */
cky_status codegen_spectral_order(const codegen_rule *rule, long nrule, int axis, int dim,
                                  int *order, int *count);

typedef struct codegen_block {
    long first, nrule;  /* rules [first, first + nrule) of the partition's rule array */
    int nleft, nright, nparent; /* distinct rows loaded / stored by the block */
    int max_live;       /* most values simultaneously live (L, R, P and the L+R temp) */
    long loads;         /* row loads of its plan (a row evicted and used again counts twice) */
} codegen_block;

typedef struct codegen_kernel {
    int first_block, nblock; /* blocks [first_block, first_block + nblock) */
    long first, nrule;       /* its rules, contiguous in the partition's rule array */
} codegen_kernel;

/* The candidate partitions codegen_partition_build compares, in the order tried:
 *   - SPECTRAL: the spectral cuts (codegen_spectral_order, cut by equal rule counts);
 *   - SPECTRAL_MOVES: those refined by local moves (codegen/refine.c): rows moved between
 *     major cubes to lower the reload rate, then between the code blocks of a kernel (minor
 *     cubes cut spectrally again) to lower the loads;
 *   - EQUAL_WIDTH: equal-width blocking of the same shape in the grammar's own row order:
 *     on each axis of dim rows, row x is in major interval x * K / dim and in minor
 *     interval x * K * M / dim - (its major interval) * M (K major, M minor cubes per axis);
 *   - EQUAL_WIDTH_MOVES: that refined by the same local moves;
 *   - MIXED: the refined equal-width major cubes balanced (rows moved out of cubes over the
 *     mean size + 10 % while the reload rate stays within equal-width's), each cut into
 *     spectral minor cubes, a cube t times the mean size into t times as many R intervals,
 *     rows then moved between the code blocks of a kernel;
 *   - BALANCED: the same balanced major cubes with equal-width minor cubes (t times as many
 *     R intervals likewise), rows then moved between the code blocks of a kernel. */
typedef enum codegen_origin {
    CODEGEN_SPECTRAL = 0, CODEGEN_SPECTRAL_MOVES, CODEGEN_EQUAL_WIDTH,
    CODEGEN_EQUAL_WIDTH_MOVES, CODEGEN_MIXED, CODEGEN_BALANCED, CODEGEN_NORIGIN
} codegen_origin;

/* "spectral", "spectral+moves", "equal-width", "equal-width+moves", "mixed", "balanced" */
const char *codegen_origin_name(codegen_origin o);

typedef struct codegen_partition {
    codegen_family_id family;
    int dim[3];
    codegen_shape shape;    /* as used (automatic shapes resolved) */
    long nrule;
    codegen_rule *rule;     /* kernel by kernel, block by block, each in emission order */
    int nkernel, nblock;
    codegen_kernel *kernel;
    codegen_block *block;
    double reload_rate;       /* sum over major cubes of the distinct P, L and R rows each
                                 uses, over the distinct rows of the family (all three axes):
                                 the mean number of kernels that use a row */
    double naive_reload_rate; /* the same for equal-width blocking with the same shape */
    int max_live;             /* largest codegen_block.max_live */
    long loads;               /* planned row loads per work item: sum of codegen_block.loads */
    long naive_loads;         /* the same for equal-width blocking with the same shape */
    codegen_origin origin;    /* the candidate chosen */
    double candidate_reload[CODEGEN_NORIGIN]; /* every candidate's reload rate and loads */
    long candidate_loads[CODEGEN_NORIGIN];
} codegen_partition;

/* Partition family `f` with `shape` (all-zero: automatic). Empty cubes are dropped, every
 * rule lands in exactly one block. Of the candidates (codegen_origin), those whose reload
 * rate and loads are both at most equal-width blocking's are eligible (equal-width always
 * is); of those, the even ones (no code block over 3 times the shape's mean, nrule over the
 * product of the major and minor cubes per axis) come first, then the fewest loads, the
 * lowest reload rate, the first tried. Deterministic: the same family and shape give the same partition, bit
 * for bit (on one machine: the spectral order rests on LAPACK's floating point).
 * Free with codegen_partition_free. */
cky_status codegen_partition_build(const codegen_family *f, codegen_shape shape,
                                   codegen_partition *out);
void codegen_partition_free(codegen_partition *p);

/* The role of a family's output axis. PARENT: the family as built (inside: parent +=
 * left * right * w). LEFT and RIGHT: turned for the outside pass, each rule (p, l, r, w)
 * becoming (l, p, r, w), resp. (r, p, l, w): the kernels then compute out_left[l] +=
 * outside[p] * inside_right[r] * w, resp. out_right[r] += outside[p] * inside_left[l] * w,
 * with the workspaces PARENT = the child's class, LEFT = X (the parent outside rows),
 * RIGHT = the sibling's class. */
typedef enum codegen_role {
    CODEGEN_ROLE_PARENT = 0, CODEGEN_ROLE_LEFT, CODEGEN_ROLE_RIGHT
} codegen_role;

/* Turn family f in place for `role` (rows of each rule and the dimensions permuted), to be
 * partitioned as it is: a partition of its own fits the output axis, where the parent's
 * partition turned would not (eng-sm6-shape XX, left: 23,372 partial slots per work item
 * against 8,506; right: 98,137 loads against 48,435; docs/performance.md, session 14). */
cky_status codegen_family_turn(codegen_family *f, codegen_role role);

/* ---- emission ---- */

/* The weight a rule of log score w has in the kernel text of semiring sr: w itself for
 * max-plus and fixed max-plus (whose text holds fixedpoint_of(w)), (float) exp((double) w)
 * for sum-product (0 where that underflows). */
float codegen_weight(codegen_semiring sr, float w);

/* Whether g's binary rules can be run in fixed max-plus: every finite weight within
 * util/fixedpoint.h's range. CKY_ERR_LIMIT otherwise, with a message naming the first rule
 * outside it and its weight. */
cky_status codegen_fixed_check(const grammar *g);

/* Name of kernel `k` of family `id`: "cky_XX_k3". `buf` holds at least 32 bytes. */
void codegen_kernel_name(codegen_family_id id, int k, char *buf, size_t size);

/* The partial slots of kernel k in the sum-product semiring's GPU form: code block b of the
 * kernel stores each of its parent rows (each once) into a slot of its own, the blocks' slots
 * one after the other in block order, a block's in ascending row order; rows[s] (when rows is
 * not NULL) = the workspace row of slot s (`mark`: p->dim[0] bytes of scratch). Returns the
 * number of slots, the sum of the blocks' nparent. Adding each row's slots into it in slot
 * order gives the host build's in-place adds, the same bits. */
long codegen_kernel_slots(const codegen_partition *p, int k, int *rows, char *mark);

/* Generate the source text of kernel `k` of partition `p` (malloc'ed, NUL-terminated), with
 * __launch_bounds__ room for `blocks_per_sm` CODEGEN_THREADS-thread blocks per SM, as one
 * block of that many threads (0: as many as the register file allows for the kernel's
 * max_live, codegen_blocks_per_sm). */
cky_status codegen_emit_kernel(const codegen_partition *p, int k, int blocks_per_sm,
                               codegen_semiring sr, char **src);

/* ---- the generic kernel (generic.h) ---- */

/* The generic kernel's table of partition p in semiring sr (malloc'ed, p->nrule entries):
 * rule i of p->rule becomes an entry in the same code block, each block's entries sorted
 * stably by parent row, with the weight as semiring sr's kernel text holds it. Free with
 * free(). */
cky_status codegen_generic_table(const codegen_partition *p, codegen_semiring sr,
                                 codegen_generic_rule **out);

/* Kernel k of p run from its table, with the host entry point's contract (the file
 * comment: n work items, rows `stride` apart, code blocks in order): the host build's
 * bits, the plain reference of the GPU's generic kernel. */
void codegen_generic_host(const codegen_partition *p, const codegen_generic_rule *table, int k,
                          codegen_semiring sr, const float *left, const float *right,
                          float *parent, int n, int stride);

/* ---- compilation ---- */

/* Compile CUDA source `src` with NVRTC for `arch` ("sm_90") into a malloc'ed cubin, and
 * report ptxas' registers and spill bytes (stores + loads) of kernel `name`. `ptxas` adds
 * options for ptxas ("-O1"), or is NULL. NVRTC's rejection returns CKY_ERR_COMPILE with its
 * log in the message. No GPU is needed. */
cky_status codegen_nvrtc_compile(const char *src, const char *name, const char *arch,
                                 const char *ptxas, unsigned char **cubin, size_t *size,
                                 int *registers, int *spill_bytes);

/* The machine code of kernel `name` in `cubin`, an ELF64 file of `size` bytes: *code and
 * *bytes are its section ".text.NAME" inside the cubin (16 bytes an instruction on sm_70 and
 * later). CKY_ERR_FORMAT when the file is not such a cubin or has no such section. */
cky_status codegen_cubin_code(const unsigned char *cubin, size_t size, const char *name,
                              const unsigned char **code, size_t *bytes);

/* Host entry point of a kernel (see the file comment). */
typedef void (*codegen_host_fn)(const float *left, const float *right, float *parent, int n,
                                int stride);

typedef struct codegen_options {
    codegen_shape shape[CODEGEN_NFAMILY]; /* all-zero: automatic */
    const char *arch;      /* NVRTC architecture, default "sm_90" */
    int gpu;               /* compile cubins (default 1) */
    int host;              /* build and load host .so files (default 0) */
    const char *cache_dir; /* NULL: $CKY_CACHE, else ~/.cache/cky; "off": no cache */
    const char *dump_dir;  /* if set, write every kernel's source there as NAME.cu */
    int threads;           /* parallel compilations; 0 = number of online cores */
    unsigned families;     /* bit f set: compile family f (default all); the others are
                              partitioned only, their kernels have no cubin and no host code */
    codegen_semiring semiring; /* of the kernels' rules (default max-plus) */
    codegen_role role;         /* each family turned for this role before it is
                                  partitioned (default: PARENT, as built) */
    const char *ptxas;         /* one option for ptxas on every kernel (NULL or "": the
                                  default, -O3, and -O1 for a kernel that spills) */
    progress_sink progress;    /* reports (util/progress.h): the compile as a stage
                                  PROGRESS_COMPILE, its kernels as they are done (default:
                                  none) */
    int background;            /* 1: codegen_compile looks the cubins up in the cache and
                                  returns, the others compiling on threads of its own
                                  (codegen_kernel_ready, codegen_program_wait; the stage
                                  then ends with them); GPU code only: not with host or
                                  dump_dir (default 0: it returns with every kernel) */
} codegen_options;

void codegen_options_default(codegen_options *o);

typedef struct codegen_compiled {
    char name[32];
    int nblock;
    long nrule;
    int max_live;
    int registers, spill_bytes; /* from ptxas; -1 without GPU code */
    long instructions;          /* machine instructions in the cubin (codegen_cubin_code);
                                   -1 without GPU code or before sm_70 */
    unsigned char *cubin;       /* NULL without GPU code */
    size_t cubin_size;
    codegen_host_fn host;       /* NULL without the host build */
    int cache_hit;              /* every requested artefact came from the cache */
    int ready;                  /* the artefacts are there (atomic: codegen_kernel_ready) */
} codegen_compiled;

typedef struct codegen_program {
    codegen_partition part[CODEGEN_NFAMILY];
    codegen_compiled *kernel[CODEGEN_NFAMILY]; /* [family][k], part[f].nkernel entries */
    codegen_classes classes;
    double partition_seconds; /* wall time of families + partition */
    double compile_seconds;   /* wall time of emission + compilation (cache lookups included) */
    int nhit, nmiss;        /* kernels served by the cache / compiled */
    int partition_hits;     /* families whose partition came from the manifest cache */
    void **handles;         /* dlopen handles of host builds */
    int nhandle;
    struct codegen_background *background; /* compilations under way (options.background) */
} codegen_program;

/* Partition, emit and compile every family of `g` with options `o` (NULL: defaults) using
 * up to o->threads threads, through the cache. Free with codegen_program_free. */
cky_status codegen_compile(const grammar *g, const codegen_options *o,
                           codegen_program **out);

/* Whether kernel k of family f has its cubin (and host code, as asked): always, once
 * codegen_compile has returned, but for the kernels a background compile has still to
 * finish (codegen_options.background). Any thread; a kernel that is ready stays so, and
 * its codegen_compiled entry no longer changes. */
int codegen_kernel_ready(const codegen_program *p, codegen_family_id f, int k);

/* Whether p's background compilations are still under way (0 once they have all ended,
 * and without any). */
int codegen_program_compiling(const codegen_program *p);

/* Wait for p's background compilations (none: at once): the first failure's status and
 * message, else CKY_OK; then every kernel is ready and the counts and compile_seconds
 * are final. */
cky_status codegen_program_wait(codegen_program *p);

/* Free p (after waiting for its background compilations, whose failure it drops). */
void codegen_program_free(codegen_program *p);

/* Cache directory the options resolve to: o->cache_dir, else as cachedir_resolve
 * (util/cachedir.h) says. Malloc'ed; NULL when the cache is off. */
cky_status codegen_cache_dir(const codegen_options *o, char **dir);

#endif
