/* gpu_dev: one GPU of the GPU engine (gpu.h's gpu_dev; internal.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fixedpoint.h"
#include "../util/workers.h"
#include "internal.h"

#define DEFAULT_WIDTH (1 << 17) /* work items per workspace: a launch must fill 132 SMs */
#define DEFAULT_BLOCK_TILES 4

_Static_assert(KERNELS_TILE == CODEGEN_THREADS, "one workspace tile layout");

struct event_pair {
    cudaEvent_t start, stop;
    int stage;
    engine_pass pass;
    codegen_semiring semiring;
};

int gpu_dev_stage(gpu_dev *d, const char *name)
{
    gpu_stats *st = &d->stats;
    for (int k = 0; k < st->nstage; k++)
        if (!strcmp(st->stage_name[k], name))
            return k;
    CKY_ASSERT(st->nstage < GPU_MAX_STAGES, "more than %d profiling stages", GPU_MAX_STAGES);
    st->stage_name[st->nstage] = name;
    return st->nstage++;
}

/* The engine's stages, in gpu_stage order. */
static void name_engine_stages(gpu_dev *d)
{
    static const char *const name[GPU_NSTAGE_ENGINE] = {
        [GPU_STAGE_LEXICON] = "lexicon",   [GPU_STAGE_HOST] = "host",
        [GPU_STAGE_TRANSFER] = "transfer", [GPU_STAGE_GATHER] = "copy-transpose",
        [GPU_STAGE_REDUCE] = "reduce",     [GPU_STAGE_UNARY] = "unary"};
    for (int s = 0; s < GPU_NSTAGE_ENGINE; s++)
        gpu_dev_stage(d, s >= GPU_STAGE_XX && s <= GPU_STAGE_FAMILY_LAST
                             ? codegen_family_name((codegen_family_id)(s - GPU_STAGE_XX))
                             : name[s]);
}

cky_status gpu_buffer_need(gpu_buffer *b, size_t bytes, int pinned)
{
    if (bytes <= b->cap)
        return CKY_OK;
    pinned ? cudaFreeHost(b->p) : cudaFree(b->p);
    b->p = NULL;
    b->cap = 0;
    if (pinned)
        GPU_CHECK(cudaMallocHost(&b->p, bytes ? bytes : 1));
    else
        GPU_CHECK(cudaMalloc(&b->p, bytes ? bytes : 1));
    b->cap = bytes;
    return CKY_OK;
}

void gpu_buffer_free(gpu_buffer *b, int pinned)
{
    pinned ? cudaFreeHost(b->p) : cudaFree(b->p);
    b->p = NULL;
    b->cap = 0;
}

size_t gpu_items_ints(const plan *p) { return (size_t)p->nitem * 3 + p->ncell + p->n; }

gpu_items gpu_items_at(void *base, const plan *p)
{
    gpu_items it;
    it.left = base;
    it.right = it.left + p->nitem;
    it.parent = it.right + p->nitem;
    it.cells = it.parent + p->nitem;
    it.roots = it.cells + p->ncell;
    return it;
}

void gpu_dev_count(gpu_dev *d, codegen_family_id f, int n, long nrule)
{
    d->stats.work_items[f] += n;
    d->stats.rule_evaluations += (double)n * nrule;
    d->stats.family_evaluations[f] += (double)n * nrule;
    d->stats.pass_evaluations[d->pass][d->semiring] += (double)n * nrule;
}

/* ---- profiling: event pairs around device stages ---- */

cky_status gpu_dev_prof_begin(gpu_dev *d)
{
    if (!d->profile)
        return CKY_OK;
    if (d->nev == d->cap_ev) {
        int cap = d->cap_ev ? 2 * d->cap_ev : 256;
        event_pair *ev = realloc(d->ev, (size_t)cap * sizeof *ev);
        if (!ev)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        d->ev = ev;
        for (int i = d->cap_ev; i < cap; i++) {
            GPU_CHECK(cudaEventCreate(&ev[i].start));
            GPU_CHECK(cudaEventCreate(&ev[i].stop));
            d->cap_ev = i + 1;
        }
    }
    GPU_CHECK(cudaEventRecord(d->ev[d->nev].start, d->cur));
    return CKY_OK;
}

cky_status gpu_dev_prof_end(gpu_dev *d, int stage)
{
    if (!d->profile)
        return CKY_OK;
    d->ev[d->nev].stage = stage;
    d->ev[d->nev].pass = d->pass;
    d->ev[d->nev].semiring = d->semiring;
    GPU_CHECK(cudaEventRecord(d->ev[d->nev++].stop, d->cur));
    return CKY_OK;
}

cky_status gpu_dev_prof_collect(gpu_dev *d, int drop)
{
    for (int i = 0; i < d->nev && !drop; i++) {
        float ms = 0;
        GPU_CHECK(cudaEventElapsedTime(&ms, d->ev[i].start, d->ev[i].stop));
        d->stats.seconds[d->ev[i].stage] += ms * 1e-3;
        if (d->ev[i].stage >= GPU_STAGE_XX && d->ev[i].stage <= GPU_STAGE_FAMILY_LAST)
            d->stats.pass_seconds[d->ev[i].pass][d->ev[i].semiring] += ms * 1e-3;
    }
    d->nev = 0;
    return CKY_OK;
}

/* ---- the two streams ---- */

gpu_lane gpu_dev_lane(gpu_dev *d, codegen_family_id f)
{
    int side = f != CODEGEN_XX;
    d->cur = side ? d->side : d->stream;
    return (gpu_lane){d->cur, side ? d->side_ws : d->ws, side};
}

cky_status gpu_dev_fork(gpu_dev *d)
{
    d->cur = d->stream;
    GPU_CHECK(cudaEventRecord(d->forked, d->stream));
    GPU_CHECK(cudaStreamWaitEvent(d->side, d->forked, 0));
    return CKY_OK;
}

cky_status gpu_dev_join(gpu_dev *d)
{
    d->cur = d->stream;
    GPU_CHECK(cudaEventRecord(d->joined, d->side));
    GPU_CHECK(cudaStreamWaitEvent(d->stream, d->joined, 0));
    return CKY_OK;
}

/* ---- setup ---- */

static cky_status upload(void **dst, const void *src, size_t bytes)
{
    GPU_CHECK(cudaMalloc(dst, bytes ? bytes : 1));
    GPU_CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return CKY_OK;
}

/* One program of the grammar's kernels (max-plus, or a sum-product role), compiled (on a
 * warm start: read from the cache) on a host thread of its own: the context, the programs
 * and the search tables take a few tenths of a second each at start-up and need nothing of
 * each other. */
typedef struct compile_job {
    const grammar *g;
    const char *cache_dir, *ptxas;
    progress_sink progress;
    char arch[16];
    codegen_semiring semiring;
    codegen_role role;
    int partition_only; /* max-rule's max-plus program: its classes, not its kernels */
    int background;     /* codegen_options.background */
    codegen_program *prog;
} compile_job;

static cky_status compile_main(void *arg)
{
    compile_job *j = arg;
    codegen_options o;
    codegen_options_default(&o);
    o.arch = j->arch;
    o.cache_dir = j->cache_dir;
    o.ptxas = j->ptxas;
    o.progress = j->progress;
    o.semiring = j->semiring;
    o.role = j->role;
    o.gpu = !j->partition_only;
    o.background = j->background;
    return codegen_compile(j->g, &o, &j->prog);
}

/* The search tables for the tree pass and the unary step, built in host memory (*arg, a
 * gpu_rules) beside the context and the compile (eng-sm6-shape: 0.3 s). */
typedef struct tables_job {
    const grammar *g;
    gpu_rules h;
} tables_job;

static cky_status tables_main(void *arg)
{
    tables_job *j = arg;
    return gpu_rules_build(j->g, &j->h);
}

/* The jobs of the max-plus program (job[0]) and, when `sum`, the three sum-product roles;
 * with `sum`, the max-plus program is partitioned only (a device made for a sum-product
 * decoder does not load its kernels). */
static int compile_jobs(gpu_dev *d, int sum, compile_job job[1 + 3])
{
    int n = sum ? 4 : 1;
    for (int k = 0; k < n; k++)
        job[k] = (compile_job){.g = d->g, .cache_dir = d->cache_dir, .ptxas = d->ptxas,
                               .progress = d->progress,
                               .semiring = k       ? CODEGEN_SEMIRING_SUM_PRODUCT
                                           : d->fixed ? CODEGEN_SEMIRING_FIXED
                                                      : CODEGEN_SEMIRING_MAX_PLUS,
                               .role = k ? (codegen_role)(k - 1) : CODEGEN_ROLE_PARENT,
                               .partition_only = sum && k == 0,
                               .background = d->kernels == GPU_KERNELS_EARLY};
    return n;
}

/* Start the jobs job[from .. n) for architecture sm_<major><minor>, each on a thread. */
static void compile_start(compile_job *job, workers_task *task, int from, int n, int major,
                          int minor)
{
    for (int k = from; k < n; k++) {
        snprintf(job[k].arch, sizeof job[k].arch, "sm_%d%d", major, minor);
        workers_start(&task[k], compile_main, &job[k]);
    }
}

/* Open device `id` (its context), compile the kernels for it (d->prog, and d->sum_prog
 * when `sum`) and build the search tables (*h, host memory), in parallel where the
 * threads start (the compile also needs the device's architecture before its context
 * exists). */
static cky_status dev_open_compile(gpu_dev *d, int id, int sum, gpu_rules *h)
{
    compile_job job[4];
    workers_task task[4], tables;
    tables_job tj = {.g = d->g};
    int n = compile_jobs(d, sum, job), major = 0, minor = 0, early = 0;
    /* one stage of progress for the programs compiled at once */
    progress_report(&d->progress, PROGRESS_COMPILE, PROGRESS_BEGIN, NULL, 0, 0, 0);
    workers_start(&tables, tables_main, &tj);
    if (id >= 0 && id < gpu_count() &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, id) == cudaSuccess) {
        early = 1;
        compile_start(job, task, 0, n, major, minor);
    }
    cudaGetLastError(); /* a failed attribute query is gpu_open's to report */
    cky_status st = gpu_open(id, &d->info);
    if (!early && !st)
        compile_start(job, task, 0, n, d->info.cc_major, d->info.cc_minor);
    if (early || !st)
        st = workers_wait_all(task, n, st);
    progress_report(&d->progress, PROGRESS_COMPILE, PROGRESS_END, NULL, 0, 0, 0);
    st = workers_wait_all(&tables, 1, st);
    d->prog = job[0].prog;
    for (int r = 0; r < n - 1; r++)
        d->sum_prog[r] = job[1 + r].prog;
    *h = tj.h;
    return st;
}

cky_status gpu_dev_compile_sum(gpu_dev *d)
{
    if (d->sum_prog[0])
        return CKY_OK;
    compile_job job[4];
    workers_task task[4];
    compile_start(job, task, 1, compile_jobs(d, 1, job), d->info.cc_major, d->info.cc_minor);
    cky_status st = workers_wait_all(task + 1, 3, CKY_OK);
    for (int r = 0; r < 3; r++)
        d->sum_prog[r] = job[1 + r].prog;
    return st;
}

/* The kernels of a program loaded by a few host threads (a module load takes a
 * millisecond or two, and eng-sm6-shape has 128), each on the calling thread's device. */
#define LOAD_THREADS 8

typedef struct load_job {
    const gpu_dev *d;
    const codegen_program *const *p; /* n programs */
    gpu_kernel *(*kernel)[CODEGEN_NFAMILY];
    int n;
    int device; /* the CUDA device current on the calling thread */
} load_job;

/* Load kernel x of the programs, counted in program and family order. */
static cky_status load_kernel(void *arg, long x, int worker)
{
    load_job *j = arg;
    GPU_CHECK(cudaSetDevice(j->device));
    int q = 0, f = 0;
    while (x >= j->p[q]->part[f].nkernel) {
        x -= j->p[q]->part[f].nkernel;
        if (++f == CODEGEN_NFAMILY) {
            f = 0;
            q++;
        }
    }
    const codegen_compiled *c = &j->p[q]->kernel[f][x];
    if (j->d->kernels == GPU_KERNELS_GENERIC || !codegen_kernel_ready(j->p[q], f, (int)x))
        return CKY_OK;
    return gpu_kernel_load(c->cubin, c->cubin_size, c->name, &j->kernel[q][f][x]);
}

cky_status gpu_dev_load_programs(const gpu_dev *d, const codegen_program *const *p,
                                 gpu_kernel *kernel[][CODEGEN_NFAMILY], int n)
{
    load_job j = {.d = d, .p = p, .kernel = kernel, .n = n};
    GPU_CHECK(cudaGetDevice(&j.device));
    long total = 0;
    for (int q = 0; q < n; q++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            int nk = p[q]->part[f].nkernel;
            if (!(kernel[q][f] = calloc((size_t)nk + 1, sizeof **kernel[q])))
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
            total += nk;
        }
    return workers_for(LOAD_THREADS, total, load_kernel, &j);
}

void gpu_dev_unload_kernels(const codegen_program *p, gpu_kernel *kernel[CODEGEN_NFAMILY])
{
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        for (int k = 0; kernel[f] && p && k < p->part[f].nkernel; k++)
            gpu_kernel_unload(&kernel[f][k]);
        free(kernel[f]);
        kernel[f] = NULL;
    }
}

/* Load the compiled kernels (the max-plus ones unless `sum_only`), upload the search tables
 * h, make the workspaces and the stream. */
static cky_status dev_load(gpu_dev *d, const gpu_rules *h, int sum_only)
{
    cky_status st = sum_only ? CKY_OK
                             : gpu_dev_load_programs(d, (const codegen_program *const *)&d->prog,
                                                     &d->kernel, 1);
    if (!st && !sum_only)
        st = gpu_generic_new(d, d->prog,
                             d->fixed ? CODEGEN_SEMIRING_FIXED : CODEGEN_SEMIRING_MAX_PLUS,
                             &d->generic);
    if (st)
        return st;
    const codegen_classes *cl = &d->prog->classes;
    for (int c = 0; c < 2; c++)
        if ((st = upload((void **)&d->d_row[c], cl->global[c], (size_t)cl->n[c] * sizeof(int))))
            return st;
    if ((st = gpu_rule_tables_upload(h, &d->tables)))
        return st;
    int rows = cl->n[CODEGEN_X] > cl->n[CODEGEN_T] ? cl->n[CODEGEN_X] : cl->n[CODEGEN_T];
    d->tile = (rows ? rows : 1) * KERNELS_TILE;
    size_t tiles = ((size_t)d->width + KERNELS_TILE - 1) / KERNELS_TILE;
    for (int w = 0; w < 3; w++) {
        GPU_CHECK(cudaMalloc((void **)&d->ws[w], tiles * d->tile * sizeof(float)));
        GPU_CHECK(cudaMalloc((void **)&d->side_ws[w], tiles * d->tile * sizeof(float)));
    }
    cudaError_t unary = kernels_unary_setup(d->nsub, &d->unary_lanes);
    if (unary == cudaErrorInvalidValue)
        return cky_fail(CKY_ERR_CUDA, "gpu engine: the unary step needs %zu bytes of shared "
                        "memory for one cell of %d substates, more than %s allows",
                        2 * (size_t)d->nsub * sizeof(float), d->nsub, d->info.name);
    GPU_CHECK(unary);
    GPU_CHECK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    GPU_CHECK(cudaStreamCreateWithFlags(&d->side, cudaStreamNonBlocking));
    GPU_CHECK(cudaEventCreateWithFlags(&d->forked, cudaEventDisableTiming));
    GPU_CHECK(cudaEventCreateWithFlags(&d->joined, cudaEventDisableTiming));
    d->cur = d->stream;
    return CKY_OK;
}

cky_status gpu_dev_new(const grammar *g, const gpu_dev_options *o, gpu_dev **out)
{
    if (o->block_tiles < 0 || o->block_tiles > 8)
        return cky_fail(CKY_ERR_ARG, "gpu engine: %d tiles per thread block: want 1 to 8",
                        o->block_tiles);
    if (o->chunk < -1 || o->chunk > GPU_DEV_MAX_CHUNK)
        return cky_fail(CKY_ERR_ARG, "gpu engine: %d tiles per chunk: want 0 to %d",
                        o->chunk, GPU_DEV_MAX_CHUNK);
    if (o->part_mb < 0 || o->part_mb > GPU_DEV_MAX_PART_MB)
        return cky_fail(CKY_ERR_ARG, "gpu engine: %d MiB of partial slots: want 1 to %d",
                        o->part_mb, GPU_DEV_MAX_PART_MB);
    gpu_dev *d = calloc(1, sizeof *d);
    if (!d)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    d->g = g;
    d->nsub = g->nsub_total;
    d->width = o->width > 0 ? o->width : DEFAULT_WIDTH;
    d->block_tiles = o->block_tiles > 0 ? o->block_tiles : DEFAULT_BLOCK_TILES;
    d->part_bytes = (size_t)(o->part_mb > 0 ? o->part_mb : GPU_DEV_PART_MB) << 20;
    d->progress = o->progress;
    d->fixed = o->fixed;
    d->kernels = o->kernels;
    cky_status fst = d->fixed ? codegen_fixed_check(g) : CKY_OK;
    if (fst) {
        free(d);
        return fst;
    }
    if ((o->cache_dir && !(d->cache_dir = strdup(o->cache_dir))) ||
        (o->ptxas && !(d->ptxas = strdup(o->ptxas)))) {
        free(d->cache_dir);
        free(d);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    name_engine_stages(d);
    int sum_only = o->semiring == CODEGEN_SEMIRING_SUM_PRODUCT;
    gpu_rules h = {0};
    cky_status st = dev_open_compile(d, o->device, sum_only, &h);
    if (!st) {
        int sms = d->info.sm_count;
        d->chunk = o->chunk >= 0 ? o->chunk : sms / 2 > 1 ? sms / 2 : 1;
        d->sum_chunk = o->chunk >= 0 ? o->chunk : sms / 4 > 1 ? sms / 4 : 1;
        snprintf(d->desc, sizeof d->desc, "%s (device %d, sm_%d%d, %d SMs, %.1f GiB)",
                 d->info.name, d->info.id, d->info.cc_major, d->info.cc_minor,
                 d->info.sm_count, d->info.total_memory / 1073741824.0);
        st = dev_load(d, &h, sum_only);
    }
    gpu_rules_free(&h);
    if (st) {
        gpu_dev_free(d);
        return st;
    }
    *out = d;
    return CKY_OK;
}

void gpu_dev_free(gpu_dev *d)
{
    if (!d)
        return;
    gpu_dev_unload_kernels(d->prog, d->kernel);
    gpu_generic_free(d->generic);
    codegen_program_free(d->prog);
    for (int r = 0; r < 3; r++)
        codegen_program_free(d->sum_prog[r]);
    free(d->cache_dir);
    free(d->ptxas);
    gpu_rule_tables_free(d->tables);
    for (int c = 0; c < 2; c++)
        cudaFree(d->d_row[c]);
    for (int w = 0; w < 3; w++) {
        cudaFree(d->ws[w]);
        cudaFree(d->side_ws[w]);
    }
    gpu_buffer_free(&d->pre, 0);
    gpu_buffer_free(&d->post, 0);
    gpu_buffer_free(&d->clamped, 0);
    gpu_buffer_free(&d->d_items, 0);
    gpu_buffer_free(&d->h_items, 1);
    for (int i = 0; i < d->cap_ev; i++) {
        cudaEventDestroy(d->ev[i].start);
        cudaEventDestroy(d->ev[i].stop);
    }
    free(d->ev);
    if (d->forked)
        cudaEventDestroy(d->forked);
    if (d->joined)
        cudaEventDestroy(d->joined);
    if (d->side)
        cudaStreamDestroy(d->side);
    if (d->stream)
        cudaStreamDestroy(d->stream);
    free(d);
}

cky_status gpu_dev_reserve(gpu_dev *d, const plan *p, int host)
{
    size_t ints = gpu_items_ints(p), floats = (size_t)p->ncell * d->nsub;
    cky_status st;
    if (host)
        return gpu_buffer_need(&d->h_items, ints * sizeof(int), 1);
    if ((st = gpu_buffer_need(&d->pre, floats * sizeof(float), 0)) ||
        (st = gpu_buffer_need(&d->post, floats * sizeof(float), 0)) ||
        (d->fixed && (st = gpu_buffer_need(&d->clamped, (size_t)p->ncell, 0))))
        return st;
    return gpu_buffer_need(&d->d_items, ints * sizeof(int), 0);
}

/* ---- the engine steps ---- */

/* ---- the generic kernel ---- */

cky_status gpu_generic_new(const gpu_dev *d, const codegen_program *p, codegen_semiring sr,
                           gpu_generic **out)
{
    *out = NULL;
    if (d->kernels != GPU_KERNELS_GENERIC && !codegen_program_compiling(p))
        return CKY_OK;
    gpu_generic *g = calloc(1, sizeof *g);
    if (!g)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    cky_status st = CKY_OK;
    for (int f = 0; f < CODEGEN_NFAMILY && !st; f++) {
        const codegen_partition *part = &p->part[f];
        codegen_generic_rule *rule = NULL;
        kernels_generic_block *block = calloc((size_t)part->nblock + 1, sizeof *block);
        st = block ? codegen_generic_table(part, sr, &rule)
                   : cky_fail(CKY_ERR_NOMEM, "out of memory");
        for (int k = 0; k < part->nkernel && !st; k++) { /* slots: codegen_kernel_slots' */
            const codegen_kernel *kn = &part->kernel[k];
            int slot = 0;
            for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++) {
                const codegen_block *cb = &part->block[b];
                block[b] = (kernels_generic_block){cb->first, cb->first + cb->nrule, slot, 0};
                slot += cb->nparent;
            }
        }
        if (!st)
            st = upload((void **)&g->rule[f], rule, (size_t)part->nrule * sizeof *rule);
        if (!st)
            st = upload((void **)&g->block[f], block, (size_t)part->nblock * sizeof *block);
        free(rule);
        free(block);
    }
    if (st) {
        gpu_generic_free(g);
        return st;
    }
    *out = g;
    return CKY_OK;
}

void gpu_generic_free(gpu_generic *g)
{
    if (!g)
        return;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        cudaFree(g->rule[f]);
        cudaFree(g->block[f]);
    }
    free(g);
}

const gpu_kernel *gpu_dev_compiled(const gpu_dev *d, const codegen_program *p,
                                   gpu_kernel *const kernel[CODEGEN_NFAMILY],
                                   codegen_family_id f, int k, cky_status *st)
{
    gpu_kernel *gk = &kernel[f][k];
    *st = CKY_OK;
    if (gk->kernel)
        return gk;
    if (d->kernels == GPU_KERNELS_GENERIC || !codegen_kernel_ready(p, f, k))
        return NULL;
    const codegen_compiled *c = &p->kernel[f][k];
    return (*st = gpu_kernel_load(c->cubin, c->cubin_size, c->name, gk)) ? NULL : gk;
}

cky_status gpu_generic_launch(const gpu_generic *g, const codegen_partition *part,
                              codegen_family_id f, int k, codegen_semiring sr,
                              const float *left, const float *right, float *parent, int n,
                              int tile, int ptile, cudaStream_t stream)
{
    if (!g)
        return cky_fail(CKY_ERR_UNSUPPORTED, "gpu engine: %s kernel %d is not compiled and has "
                        "no generic table", codegen_family_name(f), k);
    const codegen_kernel *kn = &part->kernel[k];
    GPU_CHECK(kernels_generic((int)sr, left, right, parent, n, tile, ptile, g->rule[f],
                              g->block[f] + kn->first_block, kn->nblock, stream));
    return CKY_OK;
}

/* Run family f's kernels over the items of segment sg, `width` at a time. */
static cky_status run_family(gpu_dev *d, const plan *p, codegen_family_id f, plan_segment sg)
{
    if (!d->kernel[f])
        return cky_fail(CKY_ERR_UNSUPPORTED, "gpu engine: its max-plus kernels were not "
                        "loaded (a parser made for max-rule alone)");
    const codegen_classes *cl = &d->prog->classes;
    codegen_class lc = codegen_family_left(f), rc = codegen_family_right(f);
    gpu_items it = gpu_items_at(d->d_items.p, p);
    const int *left = it.left, *right = it.right, *parent = it.parent;
    const codegen_partition *part = &d->prog->part[f];
    int tile = d->tile, rows_x = cl->n[CODEGEN_X];
    gpu_lane lane = gpu_dev_lane(d, f);
    float *const *ws = lane.ws;
    cudaStream_t stream = lane.stream;
    for (long first = sg.first; first < sg.first + sg.count; first += d->width) {
        int n = (int)(sg.first + sg.count - first < d->width ? sg.first + sg.count - first
                                                              : d->width);
        cky_status st;
        if ((st = gpu_dev_prof_begin(d)))
            return st;
        int tiles = (n + KERNELS_TILE - 1) / KERNELS_TILE;
        GPU_CHECK(kernels_fill(ws[2], tiles, rows_x * KERNELS_TILE, tile,
                               d->fixed ? (unsigned)FIXEDPOINT_NINF : CODEGEN_KEY_NINF, stream));
        if (d->fixed) {
            GPU_CHECK(kernels_gather_fixed(d->post.p, d->nsub, left + first, n, d->d_row[lc],
                                           cl->n[lc], (int *)ws[0], tile, d->clamped.p,
                                           stream));
            GPU_CHECK(kernels_gather_fixed(d->post.p, d->nsub, right + first, n, d->d_row[rc],
                                           cl->n[rc], (int *)ws[1], tile, d->clamped.p,
                                           stream));
        } else {
            GPU_CHECK(kernels_gather(d->post.p, d->nsub, left + first, n, d->d_row[lc],
                                     cl->n[lc], ws[0], tile, stream));
            GPU_CHECK(kernels_gather(d->post.p, d->nsub, right + first, n, d->d_row[rc],
                                     cl->n[rc], ws[1], tile, stream));
        }
        if ((st = gpu_dev_prof_end(d, GPU_STAGE_GATHER)) || (st = gpu_dev_prof_begin(d)))
            return st;
        for (int k = 0; k < part->nkernel; k++) {
            const gpu_kernel *gk = gpu_dev_compiled(d, d->prog, d->kernel, f, k, &st);
            if (!gk && !st)
                st = gpu_generic_launch(d->generic, part, f, k, d->fixed
                                        ? CODEGEN_SEMIRING_FIXED : CODEGEN_SEMIRING_MAX_PLUS,
                                        ws[0], ws[1], ws[2], n, tile, 0, stream);
            if (st)
                return st;
            if (!gk)
                continue;
            int m = gk->max_threads / CODEGEN_THREADS; /* tiles per block */
            if (m > d->block_tiles)
                m = d->block_tiles;
            if (m < 1) /* not with the kernels' launch bounds; the launch would say so */
                m = 1;
            int chunk = (d->chunk + m - 1) / m; /* in blocks of m tiles */
            float *w0 = ws[0], *w1 = ws[1], *w2 = ws[2];
            void *args[] = {&w0, &w1, &w2, &n, &tile, &chunk};
            dim3 grid = {(unsigned)((tiles + m - 1) / m), (unsigned)part->kernel[k].nblock, 1};
            dim3 block = {(unsigned)(CODEGEN_THREADS * m), 1, 1};
            if ((st = gpu_kernel_launch(gk, grid, block, args, stream)))
                return st;
        }
        if ((st = gpu_dev_prof_end(d, GPU_STAGE_XX + f)) ||
            (st = gpu_dev_prof_begin(d)))
            return st;
        GPU_CHECK(kernels_reduce((const int *)ws[2], tile, n, parent + first,
                                 d->d_row[CODEGEN_X], rows_x, d->pre.p, d->nsub, d->fixed,
                                 stream));
        if ((st = gpu_dev_prof_end(d, GPU_STAGE_REDUCE)))
            return st;
        gpu_dev_count(d, f, n, part->nrule);
    }
    return CKY_OK;
}

static cky_status dev_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    gpu_dev *dev = ctx;
    cky_status st = engine_check_pass("gpu", pass, sr);
    if (!st && f == 0)
        st = gpu_dev_fork(dev);
    if (st || dev->prog->part[f].nrule == 0)
        return st;
    dev->pass = pass;
    dev->semiring = sr;
    return run_family(dev, p, f, p->bin[d * CODEGEN_NFAMILY + f]);
}

/* The unary step over the cells of span length d. */
static cky_status dev_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    gpu_dev *dev = ctx;
    cky_status st = engine_check_pass("gpu", pass, sr);
    if (!st)
        st = gpu_dev_join(dev);
    if (!st)
        st = gpu_dev_prof_begin(dev);
    if (st)
        return st;
    plan_segment sg = p->cell[d];
    const int *cells = gpu_items_at(dev->d_items.p, p).cells;
    const gpu_rules *t = &dev->tables->dev;
    GPU_CHECK(kernels_unary(dev->pre.p, dev->post.p, dev->nsub, cells + sg.first, (int)sg.count,
                            t->un_first, t->un_child, t->un_w, dev->unary_lanes, dev->stream));
    return gpu_dev_prof_end(dev, GPU_STAGE_UNARY);
}

const engine_ops gpu_dev_ops = {dev_binary, dev_unary, NULL};
