/* codegen compile: the whole grammar compiler behind one call. Builds the families,
 * partitions them, then emits and compiles every kernel (NVRTC cubin and/or host .so)
 * through the cache on a small pool of threads, each thread taking the next kernel.
 *
 * Warm starts skip the expensive steps: a family's partition is looked up in the manifest
 * cache by a key over its rules and shape (codegen_partition_key), and each kernel's cubin
 * and .so keys are derived from that key, the kernel's own rules and tables, a fingerprint
 * of the emitter, the compiler and its options, so kernel source is only emitted for a
 * compilation (a cache miss) or when a dump of it is asked for.
 *
 * In the background mode (codegen_options.background: a grammar's first run on the GPU)
 * the call looks every cubin up in the cache and returns; the misses compile on a pool of
 * their own, each kernel marked ready (an atomic flag) as its cubin arrives, while the
 * caller runs the generic kernel (generic.h) in its place. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/workers.h"
#include "internal.h"
#include "schedule.h"

typedef struct job {
    codegen_family_id family;
    int k;
    long nrule; /* the kernel's rules: the pool takes the largest first */
    cky_status st;
    char *error; /* the worker thread's cky_last_error() on failure */
    void *handle;
    int pending; /* a lookup found no cubin: left to the background (pool.lookup_only) */
} job;

typedef struct pool {
    codegen_program *prog;
    const codegen_options *opt;
    const char *cache; /* NULL: off */
    char nvrtc[32];
    uint64_t part_key[CODEGEN_NFAMILY]; /* manifest key of each family's partition */
    uint64_t emitter;                   /* fingerprint of the emitter's output */
    job *jobs;
    int njob;
    int lookup_only; /* cache lookups only: a miss marks its job pending */
} pool;

/* The compilations left to threads of their own (codegen_options.background): a copy of
 * the pool with the pending jobs, and of the options it reads. */
struct codegen_background {
    pool pl;
    codegen_options opt;
    char arch[32];
    char *ptxas;
    double t0;
    workers_task task;
    int finished; /* atomic: every job has ended */
};

static atomic_long partition_builds;

long codegen_partition_builds(void)
{
    return atomic_load(&partition_builds);
}

void codegen_options_default(codegen_options *o)
{
    memset(o, 0, sizeof *o);
    o->arch = "sm_90";
    o->gpu = 1;
    o->families = (1u << CODEGEN_NFAMILY) - 1;
}

static cky_status job_dump(const char *dir, const char *name, const char *src)
{
    size_t n = strlen(dir) + strlen(name) + 8;
    char *path = malloc(n);
    if (!path)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    snprintf(path, n, "%s/%s.cu", dir, name);
    cky_status st = cachedir_write_atomic(path, src, strlen(src));
    free(path);
    return st;
}

/* Hash of the emitter's text for a small fixed kernel of two code blocks: an edit of the
 * emitter that changes its output changes every kernel key, even before CODEGEN_VERSION is
 * bumped (kernel keys no longer hash the source itself). */
static cky_status emitter_fingerprint(codegen_semiring sr, uint64_t *out)
{
    codegen_rule rule[] = {{0, 0, 0, -1.5f}, {1, 0, 0, -2.25f}, {0, 1, 2, -0.5f},
                           {2, 2, 1, -3.0f}};
    codegen_block block[2] = {
        {.first = 0, .nrule = 2, .nleft = 1, .nright = 1, .nparent = 2, .max_live = 4},
        {.first = 2, .nrule = 2, .nleft = 2, .nright = 2, .nparent = 2, .max_live = 5}};
    codegen_kernel kernel = {.first_block = 0, .nblock = 2, .first = 0, .nrule = 4};
    codegen_partition p;
    memset(&p, 0, sizeof p);
    p.family = CODEGEN_XX;
    p.dim[0] = p.dim[1] = p.dim[2] = 3;
    p.nrule = 4;
    p.rule = rule;
    p.nkernel = 1;
    p.nblock = 2;
    p.kernel = &kernel;
    p.block = block;
    p.max_live = 5;
    char *src = NULL;
    cky_status st = codegen_emit_kernel(&p, 0, 0, sr, &src);
    if (!st)
        *out = codegen_hash_str(CODEGEN_FNV_INIT, src);
    free(src);
    return st;
}

/* Key part shared by a kernel's cubin and .so: its family's partition key, the emitter's
 * fingerprint, its index, and what of the partition the emitter reads for it (family, dims,
 * shape, its kernel and block entries, its rules), so the key names the very source it
 * would emit even if a partition were rebuilt differently. The table entries are hashed as
 * raw bytes, so new fields count too; their padding bytes are the ones a manifest restores,
 * so they can cost a compilation after a rebuild, never a wrong hit. */
static uint64_t kernel_key(const pool *pl, const job *j)
{
    const codegen_partition *p = &pl->prog->part[j->family];
    const codegen_kernel *kn = &p->kernel[j->k];
    const codegen_shape *s = &p->shape;
    int64_t head[14] = {(int64_t)pl->part_key[j->family], (int64_t)pl->emitter, j->k,
                        p->family, p->dim[0], p->dim[1], p->dim[2], s->major[0], s->major[1],
                        s->major[2], s->minor[0], s->minor[1], s->minor[2], s->live_limit};
    uint64_t h = codegen_hash(CODEGEN_FNV_INIT, head, sizeof head);
    if (pl->opt->role != CODEGEN_ROLE_PARENT) /* (the parent role's keys as before) */
        h = codegen_hash(h, &pl->opt->role, sizeof pl->opt->role);
    h = codegen_hash(h, kn, sizeof *kn);
    h = codegen_hash(h, p->block + kn->first_block, (size_t)kn->nblock * sizeof *p->block);
    return codegen_hash(h, p->rule + kn->first, (size_t)kn->nrule * sizeof *p->rule);
}

/* The kernel's source in *src, emitted on first use. */
static cky_status job_source(pool *pl, job *j, char **src)
{
    if (*src)
        return CKY_OK;
    return codegen_emit_kernel(&pl->prog->part[j->family], j->k, 0, pl->opt->semiring, src);
}

#define RETRY_WAVE 4 /* -O1 variants of a spilling kernel compiled at once */

/* One -O1 variant of a spilling kernel: `blocks` thread blocks per SM. */
typedef struct retry {
    const pool *pl;
    const job *j;
    const codegen_compiled *c;
    const char *src; /* the kernel text for the default block count, else NULL */
    int blocks;
    unsigned char *cubin;
    size_t size;
    int registers, spill_bytes;
} retry;

static cky_status retry_main(void *arg)
{
    retry *r = arg;
    char *text = NULL;
    cky_status st = r->src ? CKY_OK
                           : codegen_emit_kernel(&r->pl->prog->part[r->j->family], r->j->k,
                                                 r->blocks, r->pl->opt->semiring, &text);
    if (!st)
        st = codegen_nvrtc_compile(r->src ? r->src : text, r->c->name, r->pl->opt->arch, "-O1",
                                   &r->cubin, &r->size, &r->registers, &r->spill_bytes);
    free(text);
    return st;
}

/* Replace c's spilling cubin by the -O1 variant with the most blocks per SM that does not
 * spill, else the one-block variant (see job_gpu). */
static cky_status retry_spilled(pool *pl, job *j, codegen_compiled *c, const char *src)
{
    int top = codegen_blocks_per_sm(c->max_live);
    retry r[RETRY_WAVE];
    workers_task task[RETRY_WAVE];
    for (int hi = top; hi >= 1; hi -= RETRY_WAVE) {
        int n = hi < RETRY_WAVE ? hi : RETRY_WAVE;
        for (int i = 0; i < n; i++) {
            r[i] = (retry){pl, j, c, hi - i == top ? src : NULL, hi - i, NULL, 0, -1, -1};
            workers_start(&task[i], retry_main, &r[i]);
        }
        cky_status st = workers_wait_all(task, n, CKY_OK);
        int pick = -1;
        for (int i = 0; i < n && pick < 0 && !st; i++)
            if (r[i].spill_bytes <= 0 || r[i].blocks == 1)
                pick = i;
        for (int i = 0; i < n; i++)
            if (i != pick)
                free(r[i].cubin);
        if (st)
            return st;
        if (pick >= 0) {
            free(c->cubin);
            c->cubin = r[pick].cubin;
            c->cubin_size = r[pick].size;
            c->registers = r[pick].registers;
            c->spill_bytes = r[pick].spill_bytes;
            return CKY_OK;
        }
    }
    return CKY_OK; /* not reached: the last wave holds the one-block variant */
}

/* The user's ptxas option, or NULL for the default. */
static const char *user_ptxas(const pool *pl)
{
    return pl->opt->ptxas && *pl->opt->ptxas ? pl->opt->ptxas : NULL;
}

/* The cache key of a kernel's cubin, from its key part `base` (kernel_key). */
static uint64_t cubin_key(const pool *pl, uint64_t base)
{
    const char *user = user_ptxas(pl);
    uint64_t key = codegen_hash_str(CODEGEN_FNV_INIT, "cubin");
    key = codegen_hash_str(key, CODEGEN_VERSION);
    key = codegen_hash_str(key, pl->nvrtc);
    key = codegen_hash_str(key, "-arch --ptxas-options=-v; on spills -O1, then fewer blocks");
    key = codegen_hash_str(key, user ? user : "");
    key = codegen_hash_str(key, pl->opt->arch);
    return codegen_hash(key, &base, sizeof base);
}

static cky_status job_gpu(pool *pl, job *j, codegen_compiled *c, uint64_t base, char **src)
{
    const char *user = user_ptxas(pl);
    uint64_t key = cubin_key(pl, base);
    if (pl->cache && codegen_cache_get_cubin(pl->cache, key, &c->cubin, &c->cubin_size,
                                             &c->registers, &c->spill_bytes))
        return CKY_OK;
    c->cache_hit = 0;
    if (pl->lookup_only) {
        j->pending = 1;
        return CKY_OK;
    }
    cky_status st = job_source(pl, j, src);
    if (!st)
        st = codegen_nvrtc_compile(*src, c->name, pl->opt->arch, user, &c->cubin,
                                   &c->cubin_size, &c->registers, &c->spill_bytes);
    /* ptxas -O3 hoists loads far ahead of their use and can then need more registers than
     * the launch bounds give, though the plan keeps few values live; its -O1 scheduler
     * hoists less. So a kernel that spills is compiled again with -O1, then (rarely) with
     * -O1 and one thread block per SM fewer, down to one, and the most blocks without a
     * spill (else one block) kept; not when the user chose the ptxas options. These are
     * the largest kernels, which the pool starts first and which then end last, so the
     * variants are compiled RETRY_WAVE at a time, in parallel: the same choice as trying
     * them in turn, sooner (sample-sm6's XX kernel 0: six compilations in a row). */
    if (!st && !user && c->spill_bytes > 0)
        st = retry_spilled(pl, j, c, *src);
    if (!st && pl->cache) /* a cache that cannot take it costs a compilation next time */
        codegen_cache_put_cubin(pl->cache, key, c->cubin, c->cubin_size, c->registers,
                                c->spill_bytes);
    return st;
}

static cky_status job_host(pool *pl, job *j, codegen_compiled *c, uint64_t base, char **src)
{
    uint64_t key = codegen_hash_str(CODEGEN_FNV_INIT, "host");
    key = codegen_hash_str(key, CODEGEN_VERSION);
    key = codegen_hash_str(key, codegen_host_compiler());
    key = codegen_hash_str(key, codegen_host_flags());
    key = codegen_hash(key, &base, sizeof base);
    if (pl->cache && codegen_host_cached(pl->cache, key, c->name, &j->handle, &c->host))
        return CKY_OK;
    c->cache_hit = 0;
    cky_status st = job_source(pl, j, src);
    if (!st)
        st = codegen_host_load(pl->cache, key, *src, c->name, &j->handle, &c->host);
    return st;
}

/* Machine instructions of c's kernel in its cubin, 16 bytes each from sm_70 on; -1 for an
 * older architecture, or a cubin whose code is not found (a measure only: no failure). */
static long kernel_instructions(const char *arch, const codegen_compiled *c)
{
    const unsigned char *code;
    size_t bytes;
    if (strncmp(arch, "sm_", 3) || atoi(arch + 3) < 70 ||
        codegen_cubin_code(c->cubin, c->cubin_size, c->name, &code, &bytes))
        return -1;
    return (long)(bytes / 16);
}

static cky_status job_run(pool *pl, job *j)
{
    codegen_program *prog = pl->prog;
    const codegen_partition *p = &prog->part[j->family];
    codegen_compiled *c = &prog->kernel[j->family][j->k];
    const codegen_kernel *kn = &p->kernel[j->k];
    codegen_kernel_name(j->family, j->k, c->name, sizeof c->name);
    c->nblock = kn->nblock;
    c->nrule = kn->nrule;
    c->registers = c->spill_bytes = -1;
    c->instructions = -1;
    c->cache_hit = pl->opt->gpu || pl->opt->host; /* cleared by any compilation */
    uint64_t base = c->cache_hit ? kernel_key(pl, j) : 0; /* 0: nothing to look up */
    char *src = NULL;
    cky_status st = CKY_OK;
    if (pl->opt->dump_dir && !(st = job_source(pl, j, &src)))
        st = job_dump(pl->opt->dump_dir, c->name, src);
    if (!st && pl->opt->gpu)
        st = job_gpu(pl, j, c, base, &src);
    if (!st && c->cubin)
        c->instructions = kernel_instructions(pl->opt->arch, c);
    if (!st && pl->opt->host)
        st = job_host(pl, j, c, base, &src);
    free(src);
    if (!st && !j->pending)
        __atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
    return st;
}

/* Job i of the pool; its failure is its own (every job runs, each reports). */
static cky_status pool_job(void *arg, long i, int worker)
{
    pool *pl = arg;
    job *j = &pl->jobs[i];
    if ((j->st = job_run(pl, j)))
        j->error = strdup(cky_last_error());
    if (j->pending)
        return CKY_OK;
    progress_report(&pl->opt->progress, PROGRESS_COMPILE, PROGRESS_STEP, NULL, 0, 1,
                    !j->st && pl->prog->kernel[j->family][j->k].cache_hit);
    return CKY_OK;
}

static int pool_threads(const pool *pl)
{
    int threads = pl->opt->threads > 0 ? pl->opt->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    return threads < 1 ? 1 : threads;
}

/* What the jobs left: the host builds' handles, the counts, the first failure. */
static cky_status jobs_collect(pool *pl)
{
    cky_status st = CKY_OK;
    codegen_program *prog = pl->prog;
    for (int i = 0; i < pl->njob; i++) {
        job *j = &pl->jobs[i];
        if (j->handle)
            prog->handles[prog->nhandle++] = j->handle;
        if (j->st && !st)
            st = cky_fail(j->st, "%s", j->error ? j->error : "compilation failed");
        free(j->error);
        if (!j->st && (pl->opt->gpu || pl->opt->host)) { /* nothing to compile: neither */
            if (prog->kernel[j->family][j->k].cache_hit)
                prog->nhit++;
            else
                prog->nmiss++;
        }
    }
    return st;
}

static cky_status background_main(void *arg)
{
    struct codegen_background *bg = arg;
    workers_for(pool_threads(&bg->pl), bg->pl.njob, pool_job, &bg->pl);
    cky_status st = jobs_collect(&bg->pl);
    bg->pl.prog->compile_seconds = clock_seconds() - bg->t0;
    progress_report(&bg->opt.progress, PROGRESS_COMPILE, PROGRESS_END, NULL, 0, 0, 0);
    __atomic_store_n(&bg->finished, 1, __ATOMIC_RELEASE);
    return st;
}

/* The jobs of pl in the background mode: the cache's cubins looked up now, the rest
 * started on threads of their own (prog->background) when there are any. *started: 1 when
 * they were (the progress stage then ends with them); pl->cache then belongs to them. */
static cky_status compile_background(pool *pl, double t0, int *started)
{
    *started = 0;
    pl->lookup_only = 1;
    workers_for(pool_threads(pl), pl->njob, pool_job, pl);
    pl->lookup_only = 0;
    int npending = 0;
    for (int i = 0; i < pl->njob; i++)
        npending += pl->jobs[i].pending;
    struct codegen_background *bg = npending ? calloc(1, sizeof *bg) : NULL;
    job *pending = npending ? calloc((size_t)npending, sizeof *pending) : NULL;
    const char *user = user_ptxas(pl);
    if (npending && (!bg || !pending || (user && !(bg->ptxas = strdup(user))))) {
        free(bg);
        free(pending);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    int kept = 0;
    for (int i = 0, n = 0; i < pl->njob; i++) { /* the pending jobs, in the pool's order */
        if (pl->jobs[i].pending)
            pending[n++] = (job){pl->jobs[i].family, pl->jobs[i].k, pl->jobs[i].nrule,
                                 CKY_OK, NULL, NULL, 0};
        else
            pl->jobs[kept++] = pl->jobs[i];
    }
    pl->njob = kept;
    cky_status st = jobs_collect(pl);
    if (st || !npending) {
        free(bg);
        free(pending);
        return st;
    }
    bg->opt = *pl->opt;
    snprintf(bg->arch, sizeof bg->arch, "%s", pl->opt->arch);
    bg->opt.arch = bg->arch;
    bg->opt.ptxas = bg->ptxas;
    bg->opt.cache_dir = bg->opt.dump_dir = NULL; /* resolved: pl.cache */
    bg->pl = *pl;
    bg->pl.opt = &bg->opt;
    bg->pl.jobs = pending;
    bg->pl.njob = npending;
    bg->t0 = t0;
    pl->prog->background = bg;
    workers_start(&bg->task, background_main, bg);
    *started = 1;
    return CKY_OK;
}

cky_status codegen_program_wait(codegen_program *p)
{
    struct codegen_background *bg = p ? p->background : NULL;
    if (!bg)
        return CKY_OK;
    cky_status st = workers_wait_all(&bg->task, 1, CKY_OK);
    free(bg->pl.jobs);
    free((char *)bg->pl.cache);
    free(bg->ptxas);
    free(bg);
    p->background = NULL;
    return st;
}

int codegen_program_compiling(const codegen_program *p)
{
    return p && p->background && !__atomic_load_n(&p->background->finished, __ATOMIC_ACQUIRE);
}

int codegen_kernel_ready(const codegen_program *p, codegen_family_id f, int k)
{
    return __atomic_load_n(&p->kernel[f][k].ready, __ATOMIC_ACQUIRE);
}

/* The shape codegen_partition_build uses for `shape` (it must resolve exactly the same way,
 * or every lookup misses: the manifest tests catch that): all-zero major cubes mean
 * automatic, a live limit of 0 means CODEGEN_LIVE_BUDGET. The sum-product XX kernels split
 * their output axis more (automatic minor 2x1x4 becomes 4x1x2): a work item's partial
 * slots, one per parent row of each code block, cost more than the extra row loads
 * (eng-sm6-shape's three XX passes 6% faster; docs/performance.md, sessions 14 and 16). */
static codegen_shape shape_resolve(codegen_shape shape, long nrule, codegen_semiring sr,
                                   codegen_family_id id)
{
    if (!shape.major[0] || !shape.major[1] || !shape.major[2]) {
        int limit = shape.live_limit;
        shape = codegen_shape_auto(nrule);
        shape.live_limit = limit;
        if (sr == CODEGEN_SEMIRING_SUM_PRODUCT && id == CODEGEN_XX && shape.minor[0] == 2 &&
            shape.minor[2] == 4)
            shape.minor[0] = 4, shape.minor[2] = 2;
    }
    if (shape.live_limit <= 0)
        shape.live_limit = CODEGEN_LIVE_BUDGET;
    return shape;
}

/* Partition family `id`, turned for o->role, into prog->part[id]: from the manifest cache
 * when `cache` has it, else built (and then written to the cache). Sets *key; counts hits
 * in the program. */
static cky_status family_partition(const grammar *g, const codegen_options *o,
                                   const char *cache, codegen_family_id id,
                                   codegen_program *prog, uint64_t *key)
{
    codegen_family fam;
    cky_status st = codegen_family_build(g, &prog->classes, id, &fam);
    if (!st)
        st = codegen_family_turn(&fam, o->role);
    if (st) {
        codegen_family_free(&fam);
        return st;
    }
    codegen_shape shape = shape_resolve(o->shape[id], fam.nrule, o->semiring, id);
    *key = codegen_partition_key(&fam, &shape);
    if (cache && codegen_cache_get_partition(cache, *key, &fam, &shape, &prog->part[id])) {
        __atomic_fetch_add(&prog->partition_hits, 1, __ATOMIC_RELAXED);
    } else {
        atomic_fetch_add(&partition_builds, 1);
        st = codegen_partition_build(&fam, shape, &prog->part[id]);
        if (!st && cache) /* not stored: built again next time */
            codegen_cache_put_partition(cache, *key, &prog->part[id]);
    }
    codegen_family_free(&fam);
    return st;
}

/* The families' partitions, a host thread each (a warm start reads and checks four
 * manifests: 0.16 s one after another for eng-sm6-shape). */
typedef struct family_jobs {
    const grammar *g;
    const codegen_options *o;
    pool *pl;
    int next; /* the next family (atomic) */
    cky_status st[CODEGEN_NFAMILY];
    char error[CODEGEN_NFAMILY][1024];
} family_jobs;

static cky_status family_run(const grammar *g, const codegen_options *o, pool *pl,
                             codegen_family_id f)
{
    codegen_program *prog = pl->prog;
    cky_status st = family_partition(g, o, pl->cache, f, prog, &pl->part_key[f]);
    if (!st && !(prog->kernel[f] = calloc((size_t)prog->part[f].nkernel + 1,
                                           sizeof **prog->kernel)))
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    return st;
}

static void *family_worker(void *arg)
{
    family_jobs *j = arg;
    for (int f; (f = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < CODEGEN_NFAMILY;)
        if ((j->st[f] = family_run(j->g, j->o, j->pl, (codegen_family_id)f)))
            snprintf(j->error[f], sizeof j->error[f], "%s", cky_last_error());
    return NULL;
}

static cky_status compile_partition(const grammar *g, const codegen_options *o, pool *pl)
{
    cky_status st = codegen_classes_init(g, &pl->prog->classes);
    if (st)
        return st;
    family_jobs j = {.g = g, .o = o, .pl = pl};
    workers_run(CODEGEN_NFAMILY, family_worker, &j);
    for (int f = 0; f < CODEGEN_NFAMILY; f++) /* the first family's failure */
        if (j.st[f])
            return cky_fail(j.st[f], "%s", j.error[f]);
    return CKY_OK;
}

/* Order of jobs: more rules first, then family and kernel order. */
static int job_larger_first(const void *a, const void *b)
{
    const job *x = a, *y = b;
    if (x->nrule != y->nrule)
        return x->nrule > y->nrule ? -1 : 1;
    return x->family != y->family ? (int)x->family - (int)y->family : x->k - y->k;
}

cky_status codegen_compile(const grammar *g, const codegen_options *o, codegen_program **out)
{
    codegen_options def;
    if (!o) {
        codegen_options_default(&def);
        o = &def;
    }
    codegen_program *prog = calloc(1, sizeof *prog);
    if (!prog)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    pool pl = {.prog = prog, .opt = o};
    char *cache = NULL;
    double t0 = 0;
    int began = 0; /* the progress stage */
    cky_status st = codegen_cache_dir(o, &cache);
    if (!st && cache && cachedir_prepare(cache)) { /* unusable: compile in memory */
        free(cache);
        cache = NULL;
    }
    if (!st && o->dump_dir)
        st = cachedir_mkdirs(o->dump_dir);
    if (st)
        goto done;
    pl.cache = cache;
    began = 1;
    progress_report(&o->progress, PROGRESS_COMPILE, PROGRESS_BEGIN, NULL, 0, 0, 0);
    t0 = clock_seconds();
    st = compile_partition(g, o, &pl);
    prog->partition_seconds = clock_seconds() - t0;
    if (!st && cache && (o->gpu || o->host)) /* only cache keys need it */
        st = emitter_fingerprint(o->semiring, &pl.emitter);
    if (st)
        goto done;
    codegen_nvrtc_version(pl.nvrtc, sizeof pl.nvrtc);
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        for (int k = 0; k < prog->part[f].nkernel; k++) { /* names even when not compiled */
            codegen_compiled *c = &prog->kernel[f][k];
            codegen_kernel_name((codegen_family_id)f, k, c->name, sizeof c->name);
            const codegen_partition *p = &prog->part[f];
            const codegen_kernel *kn = &p->kernel[k];
            c->registers = c->spill_bytes = -1;
            c->instructions = -1;
            for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++)
                if (p->block[b].max_live > c->max_live)
                    c->max_live = p->block[b].max_live;
        }
        if ((o->families & (1u << f)) && (o->gpu || o->host)) /* else nothing to make */
            pl.njob += prog->part[f].nkernel;
    }
    progress_report(&o->progress, PROGRESS_COMPILE, PROGRESS_STEP, NULL, pl.njob, 0, 0);
    pl.jobs = calloc((size_t)pl.njob + 1, sizeof *pl.jobs);
    prog->handles = calloc((size_t)pl.njob + 1, sizeof *prog->handles);
    if (!pl.jobs || !prog->handles) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int f = 0, n = 0; f < CODEGEN_NFAMILY; f++)
        for (int k = 0; k < prog->part[f].nkernel && (o->families & (1u << f)) &&
                        (o->gpu || o->host); k++)
            pl.jobs[n++] = (job){(codegen_family_id)f, k, prog->part[f].kernel[k].nrule, CKY_OK,
                                 NULL, NULL, 0};
    /* the largest kernels first: a kernel's compile time grows with its rules, and they
     * differ up to 200-fold (sample-sm6), so the last kernels started are the short ones */
    qsort(pl.jobs, (size_t)pl.njob, sizeof *pl.jobs, job_larger_first);
    t0 = clock_seconds();
    if (o->background && o->gpu && !o->host && !o->dump_dir) {
        int started;
        st = compile_background(&pl, t0, &started);
        if (started) { /* the background's to time and end */
            began = 0;
            cache = NULL;
        } else {
            prog->compile_seconds = clock_seconds() - t0;
        }
    } else {
        workers_for(pool_threads(&pl), pl.njob, pool_job, &pl);
        st = jobs_collect(&pl);
        prog->compile_seconds = clock_seconds() - t0;
    }
done:
    if (began)
        progress_report(&o->progress, PROGRESS_COMPILE, PROGRESS_END, NULL, 0, 0, 0);
    free(pl.jobs);
    free(cache);
    if (st) {
        codegen_program_free(prog);
        return st;
    }
    *out = prog;
    return CKY_OK;
}

void codegen_program_free(codegen_program *p)
{
    if (!p)
        return;
    codegen_program_wait(p);
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        for (int k = 0; p->kernel[f] && k < p->part[f].nkernel; k++)
            free(p->kernel[f][k].cubin);
        free(p->kernel[f]);
        codegen_partition_free(&p->part[f]);
    }
    for (int i = 0; i < p->nhandle; i++)
        dlclose(p->handles[i]);
    free(p->handles);
    codegen_classes_free(&p->classes);
    free(p);
}
