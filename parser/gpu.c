/* gpu: the GPU engine (see gpu.h). */
#include "gpu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../codegen/codegen.h"
#include "../kernels/gpu.h"
#include "../kernels/kernels.h"
#include "../kernels/viterbi_gpu.h"
#include "../util/workers.h"
#include "engine.h"
#include "plan.h"

#define DEFAULT_WIDTH (1 << 17) /* work items per workspace: a launch must fill 132 SMs */
#define MEMORY_SHARE 0.8        /* of the free device memory, for the charts and items */

_Static_assert(KERNELS_TILE == CODEGEN_THREADS, "one workspace tile layout");

/* A grow-only buffer, on the device or pinned on the host. */
typedef struct buffer {
    void *p;
    size_t cap;
} buffer;

/* Grow b to hold `bytes` (its contents are not kept): device memory, or pinned host memory
 * when `pinned`. */
static cky_status buffer_need(buffer *b, size_t bytes, int pinned)
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

static cky_status device_need(buffer *b, size_t bytes) { return buffer_need(b, bytes, 0); }
static cky_status host_need(buffer *b, size_t bytes) { return buffer_need(b, bytes, 1); }

typedef struct event_pair {
    cudaEvent_t start, stop;
    gpu_stage stage;
} event_pair;

struct gpu_engine {
    const grammar *g;
    gpu_device dev;
    char desc[320];
    codegen_program *prog;
    gpu_kernel *kernel[CODEGEN_NFAMILY];
    kviterbi_tables *vt;
    cudaStream_t stream;
    int width, nsub, threads;
    int tile;          /* floats per workspace tile: the most rows of a class x KERNELS_TILE */
    int block_tiles;   /* tiles per thread block of a binary kernel (codegen.h): 4, so that
                          the warps of an SM run few code blocks and share the instruction
                          cache; CKY_GPU_BLOCK_TILES overrides it */
    int chunk;         /* tiles per chunk of a binary kernel's grid (codegen.h): one per SM,
                          so the code blocks of one tile run together and its rows are
                          loaded once into L1/L2 (docs/performance.md, 2026-11-22);
                          CKY_GPU_CHUNK overrides it (0: code block by code block) */
    int unary_lanes;   /* cells per block of the unary step */
    int *d_row[2];     /* class-local row -> global id, classes X and T */
    int *d_root_row;   /* { ROOT's global id } */
    float *ws[3];      /* left, right, parent workspaces: width / KERNELS_TILE tiles */
    /* per sub-batch, grown as needed */
    buffer pre, post;              /* device charts */
    buffer d_items, h_items;       /* left, right, parent cell of every work item, then the
                                      cells of each span length, then the root cells */
    buffer d_meta, h_meta;         /* n, node0, root score (float), cell0 (long long) */
    buffer d_nodes, h_nodes;       /* viterbi nodes, then statuses */
    buffer h_lex;                  /* lexical scores of the one-word cells */
    int profile;
    event_pair *ev;
    int nev, cap_ev;
    gpu_stats stats;
};

const char *gpu_stage_name(gpu_stage s)
{
    static const char *const name[GPU_NSTAGE] = {
        "lexicon", "host", "transfer", "copy-transpose", "XX", "XT", "TX", "TT",
        "reduce", "unary", "viterbi"};
    return s < GPU_NSTAGE ? name[s] : "?";
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- profiling: event pairs around device stages ---- */

static cky_status prof_begin(gpu_engine *e)
{
    if (!e->profile)
        return CKY_OK;
    if (e->nev == e->cap_ev) {
        int cap = e->cap_ev ? 2 * e->cap_ev : 256;
        event_pair *ev = realloc(e->ev, (size_t)cap * sizeof *ev);
        if (!ev)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        e->ev = ev;
        for (int i = e->cap_ev; i < cap; i++) {
            GPU_CHECK(cudaEventCreate(&ev[i].start));
            GPU_CHECK(cudaEventCreate(&ev[i].stop));
            e->cap_ev = i + 1;
        }
    }
    GPU_CHECK(cudaEventRecord(e->ev[e->nev].start, e->stream));
    return CKY_OK;
}

static cky_status prof_end(gpu_engine *e, gpu_stage stage)
{
    if (!e->profile)
        return CKY_OK;
    e->ev[e->nev].stage = stage;
    GPU_CHECK(cudaEventRecord(e->ev[e->nev++].stop, e->stream));
    return CKY_OK;
}

/* After a stream synchronization: add the recorded stage times to the statistics. */
static cky_status prof_collect(gpu_engine *e)
{
    for (int i = 0; i < e->nev; i++) {
        float ms = 0;
        GPU_CHECK(cudaEventElapsedTime(&ms, e->ev[i].start, e->ev[i].stop));
        e->stats.seconds[e->ev[i].stage] += ms * 1e-3;
    }
    e->nev = 0;
    return CKY_OK;
}

void gpu_engine_profile(gpu_engine *e, int on) { e->profile = on; }

const gpu_stats *gpu_engine_stats(const gpu_engine *e) { return &e->stats; }

const char *gpu_engine_device(const gpu_engine *e) { return e->desc; }

int gpu_engine_width(const gpu_engine *e) { return e->width; }

/* ---- setup ---- */

static cky_status upload(void **dst, const void *src, size_t bytes)
{
    GPU_CHECK(cudaMalloc(dst, bytes ? bytes : 1));
    GPU_CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return CKY_OK;
}

/* *out = the integer in environment variable `name` when it is set; an error naming the
 * variable and its value when that is not a number in lo..hi (`what` says what it counts). */
static cky_status env_int(const char *name, long lo, long hi, const char *what, int *out)
{
    const char *text = getenv(name);
    if (!text)
        return CKY_OK;
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < lo || v > hi)
        return cky_fail(CKY_ERR_ARG, "%s='%s': want %ld to %ld (%s)", name, text, lo, hi, what);
    *out = (int)v;
    return CKY_OK;
}

static cky_status engine_load(gpu_engine *e)
{
    const grammar *g = e->g;
    codegen_options o;
    codegen_options_default(&o);
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", e->dev.cc_major, e->dev.cc_minor);
    o.arch = arch;
    e->block_tiles = 4;
    e->chunk = e->dev.sm_count;
    cky_status st;
    if ((st = env_int("CKY_GPU_BLOCK_TILES", 1, 8, "tiles per thread block", &e->block_tiles)) ||
        (st = env_int("CKY_GPU_CHUNK", 0, 1 << 20,
                      "tiles per chunk; 0: each code block over all tiles", &e->chunk)) ||
        (st = codegen_compile(g, &o, &e->prog)))
        return st;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        int nk = e->prog->part[f].nkernel;
        if (!(e->kernel[f] = calloc((size_t)nk + 1, sizeof **e->kernel)))
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        for (int k = 0; k < nk; k++) {
            const codegen_compiled *c = &e->prog->kernel[f][k];
            if ((st = gpu_kernel_load(c->cubin, c->cubin_size, c->name, &e->kernel[f][k])))
                return st;
        }
    }
    const codegen_classes *cl = &e->prog->classes;
    for (int c = 0; c < 2; c++)
        if ((st = upload((void **)&e->d_row[c], cl->global[c], (size_t)cl->n[c] * sizeof(int))))
            return st;
    int root = g->sub_offset[0];
    if ((st = upload((void **)&e->d_root_row, &root, sizeof root)))
        return st;
    if ((st = kviterbi_tables_new(g, &e->vt)))
        return st;
    int rows = cl->n[CODEGEN_X] > cl->n[CODEGEN_T] ? cl->n[CODEGEN_X] : cl->n[CODEGEN_T];
    e->tile = (rows ? rows : 1) * KERNELS_TILE;
    size_t tiles = ((size_t)e->width + KERNELS_TILE - 1) / KERNELS_TILE;
    for (int w = 0; w < 3; w++)
        GPU_CHECK(cudaMalloc((void **)&e->ws[w], tiles * e->tile * sizeof(float)));
    cudaError_t unary = kernels_unary_setup(e->nsub, &e->unary_lanes);
    if (unary == cudaErrorInvalidValue)
        return cky_fail(CKY_ERR_CUDA, "gpu engine: the unary step needs %zu bytes of shared "
                        "memory for one cell of %d substates, more than %s allows",
                        2 * (size_t)e->nsub * sizeof(float), e->nsub, e->dev.name);
    GPU_CHECK(unary);
    GPU_CHECK(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    return CKY_OK;
}

cky_status gpu_engine_new(const grammar *g, int device, int width, gpu_engine **out)
{
    gpu_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    e->g = g;
    e->nsub = g->nsub_total;
    e->width = width > 0 ? width : DEFAULT_WIDTH;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    e->threads = cores > 0 ? (int)cores : 1;
    cky_status st = gpu_open(device, &e->dev);
    if (!st) {
        snprintf(e->desc, sizeof e->desc, "%s (device %d, sm_%d%d, %d SMs, %.1f GiB)",
                 e->dev.name, e->dev.id, e->dev.cc_major, e->dev.cc_minor, e->dev.sm_count,
                 e->dev.total_memory / 1073741824.0);
        st = engine_load(e);
    }
    if (st) {
        gpu_engine_free(e);
        return st;
    }
    *out = e;
    return CKY_OK;
}

void gpu_engine_free(gpu_engine *e)
{
    if (!e)
        return;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        for (int k = 0; e->kernel[f] && e->prog && k < e->prog->part[f].nkernel; k++)
            gpu_kernel_unload(&e->kernel[f][k]);
        free(e->kernel[f]);
    }
    codegen_program_free(e->prog);
    kviterbi_tables_free(e->vt);
    for (int c = 0; c < 2; c++)
        cudaFree(e->d_row[c]);
    cudaFree(e->d_root_row);
    for (int w = 0; w < 3; w++)
        cudaFree(e->ws[w]);
    buffer *dev[] = {&e->pre, &e->post, &e->d_items, &e->d_meta, &e->d_nodes};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
        cudaFree(dev[i]->p);
    buffer *host[] = {&e->h_items, &e->h_meta, &e->h_nodes, &e->h_lex};
    for (size_t i = 0; i < sizeof host / sizeof *host; i++)
        cudaFreeHost(host[i]->p);
    for (int i = 0; i < e->cap_ev; i++) {
        cudaEventDestroy(e->ev[i].start);
        cudaEventDestroy(e->ev[i].stop);
    }
    free(e->ev);
    if (e->stream)
        cudaStreamDestroy(e->stream);
    free(e);
}

/* ---- lexical scores on host threads ---- */

typedef struct lex_job {
    const grammar *g;
    const sentence *s;
    const long *word0; /* first one-word cell row of each sentence in the lexical buffer */
    float *out;
    int n, next;
    cky_status st;
    char *error;
    pthread_mutex_t lock;
} lex_job;

static void *lex_worker(void *arg)
{
    lex_job *j = arg;
    int nsub = j->g->nsub_total;
    double *scratch = malloc((size_t)nsub * sizeof *scratch);
    for (;;) {
        pthread_mutex_lock(&j->lock);
        int k = j->st || !scratch ? j->n : j->next++;
        if (!scratch && !j->st) {
            j->st = cky_fail(CKY_ERR_NOMEM, "out of memory");
            j->error = strdup(cky_last_error());
        }
        pthread_mutex_unlock(&j->lock);
        if (k >= j->n)
            break;
        for (int i = 0; i < j->s[k].n; i++) {
            cky_status st = grammar_score_word(j->g, j->s[k].words[i], i, scratch);
            if (st) {
                pthread_mutex_lock(&j->lock);
                if (!j->st) {
                    j->st = st;
                    j->error = strdup(cky_last_error());
                }
                pthread_mutex_unlock(&j->lock);
                break;
            }
            float *o = j->out + (size_t)(j->word0[k] + i) * nsub;
            for (int x = 0; x < nsub; x++)
                o[x] = (float)scratch[x];
        }
    }
    free(scratch);
    return NULL;
}

static cky_status score_words(gpu_engine *e, const sentence *s, int n, const long *word0,
                              float *out)
{
    lex_job j = {e->g, s, word0, out, n, 0, CKY_OK, NULL, PTHREAD_MUTEX_INITIALIZER};
    workers_run(e->threads < n ? e->threads : n, lex_worker, &j);
    cky_status st = j.st ? cky_fail(j.st, "%s", j.error ? j.error : "lexicon failed") : CKY_OK;
    free(j.error);
    return st;
}

/* ---- one sub-batch ---- */

/* The per-sentence arrays of a sub-batch of n sentences in one buffer (host or device). */
typedef struct meta {
    long long *cell0; /* first cell */
    int *n;           /* words */
    int *node0;       /* first viterbi node */
    float *root;      /* root score */
} meta;

static size_t meta_bytes(int n) { return (size_t)n * (sizeof(long long) + 3 * sizeof(int)); }

static meta meta_at(void *base, int n)
{
    meta m;
    m.cell0 = base;
    m.n = (int *)(m.cell0 + n);
    m.node0 = m.n + n;
    m.root = (float *)(m.node0 + n);
    return m;
}

/* Device bytes a sentence of n words needs (charts, items, nodes), for sub-batch sizing. */
static size_t sentence_bytes(const gpu_engine *e, int n)
{
    long c[CODEGEN_NFAMILY], nitem = 0;
    plan_count_items(n, c);
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        nitem += c[f];
    size_t items = (size_t)nitem * 3 + chart_ncells(n) + 1;
    return chart_ncells(n) * (size_t)e->nsub * 2 * sizeof(float) + items * sizeof(int) +
           (size_t)(2 * n) * (sizeof(viterbi_node) + sizeof(int)) + 32;
}

/* Filling the work items of a plan, one span length at a time, on host threads. */
typedef struct fill_job {
    const plan *p;
    int *left, *right, *parent;
    int next; /* the next span length to fill */
    pthread_mutex_t lock;
} fill_job;

static void *fill_worker(void *arg)
{
    fill_job *j = arg;
    const plan *p = j->p;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        int d = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (d > p->maxn)
            break;
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            long m = p->bin[d * CODEGEN_NFAMILY + f].first;
            plan_fill_items(p, d, (codegen_family_id)f, j->left + m, j->right + m,
                            j->parent + m, NULL);
        }
    }
    return NULL;
}

/* The plan of a sub-batch, and its host arrays: work items, cells, roots and the
 * per-sentence arrays (meta). */
static cky_status plan_build(gpu_engine *e, const sentence *s, int n, plan *p)
{
    int *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    if (!len) {
        memset(p, 0, sizeof *p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < n; k++)
        len[k] = s[k].n;
    cky_status st = plan_new(len, n, p);
    free(len);
    if (st)
        return st;
    /* host layout of h_items: left[nitem] right[nitem] parent[nitem] cells[ncell] roots[n] */
    size_t ints = (size_t)p->nitem * 3 + p->ncell + n;
    if ((st = host_need(&e->h_items, ints * sizeof(int))) ||
        (st = host_need(&e->h_meta, meta_bytes(n))) ||
        (st = host_need(&e->h_lex, (size_t)p->nword * e->nsub * sizeof(float))) ||
        (st = host_need(&e->h_nodes, (size_t)p->nnode * sizeof(viterbi_node) +
                                         (size_t)n * sizeof(int))))
        return st;
    int *left = e->h_items.p, *right = left + p->nitem, *parent = right + p->nitem;
    int *cells = parent + p->nitem, *roots = cells + p->ncell;
    meta hm = meta_at(e->h_meta.p, n);
    long nd = 0;
    for (int k = 0; k < n; k++) {
        hm.n[k] = s[k].n;
        hm.node0[k] = (int)nd;
        hm.cell0[k] = p->cell0[k];
        roots[k] = (int)plan_root_cell(p, k);
        nd += 2L * s[k].n - 1;
    }
    fill_job j = {p, left, right, parent, 2, PTHREAD_MUTEX_INITIALIZER};
    workers_run(e->threads < p->maxn ? e->threads : p->maxn, fill_worker, &j);
    for (int d = 1; d <= p->maxn; d++)
        plan_fill_cells(p, d, cells + p->cell[d].first);
    return CKY_OK;
}

/* Run family f's kernels over the items of segment sg, `width` at a time. */
static cky_status run_family(gpu_engine *e, const plan *p, codegen_family_id f, plan_segment sg)
{
    const codegen_classes *cl = &e->prog->classes;
    codegen_class lc = codegen_family_left(f), rc = codegen_family_right(f);
    const int *left = (const int *)e->d_items.p, *right = left + p->nitem;
    const int *parent = right + p->nitem;
    const codegen_partition *part = &e->prog->part[f];
    int tile = e->tile, rows_x = cl->n[CODEGEN_X];
    for (long first = sg.first; first < sg.first + sg.count; first += e->width) {
        int n = (int)(sg.first + sg.count - first < e->width ? sg.first + sg.count - first
                                                              : e->width);
        cky_status st;
        if ((st = prof_begin(e)))
            return st;
        int tiles = (n + KERNELS_TILE - 1) / KERNELS_TILE;
        GPU_CHECK(kernels_fill(e->ws[2], tiles, rows_x * KERNELS_TILE, tile, CODEGEN_KEY_NINF,
                               e->stream));
        GPU_CHECK(kernels_gather(e->post.p, e->nsub, left + first, n, e->d_row[lc], cl->n[lc],
                                 e->ws[0], tile, e->stream));
        GPU_CHECK(kernels_gather(e->post.p, e->nsub, right + first, n, e->d_row[rc],
                                 cl->n[rc], e->ws[1], tile, e->stream));
        if ((st = prof_end(e, GPU_STAGE_GATHER)) || (st = prof_begin(e)))
            return st;
        for (int k = 0; k < part->nkernel; k++) {
            int m = e->kernel[f][k].max_threads / CODEGEN_THREADS; /* tiles per block */
            if (m > e->block_tiles)
                m = e->block_tiles;
            if (m < 1) /* not with the kernels' launch bounds; the launch would say so */
                m = 1;
            int chunk = (e->chunk + m - 1) / m; /* in blocks of m tiles */
            void *args[] = {&e->ws[0], &e->ws[1], &e->ws[2], &n, &tile, &chunk};
            dim3 grid = {(unsigned)((tiles + m - 1) / m), (unsigned)part->kernel[k].nblock, 1};
            dim3 block = {(unsigned)(CODEGEN_THREADS * m), 1, 1};
            if ((st = gpu_kernel_launch(&e->kernel[f][k], grid, block, args, e->stream)))
                return st;
        }
        if ((st = prof_end(e, (gpu_stage)(GPU_STAGE_XX + f))) || (st = prof_begin(e)))
            return st;
        GPU_CHECK(kernels_reduce((const int *)e->ws[2], tile, n, parent + first,
                                 e->d_row[CODEGEN_X], rows_x, e->pre.p, e->nsub, e->stream));
        if ((st = prof_end(e, GPU_STAGE_REDUCE)))
            return st;
        e->stats.work_items[f] += n;
        e->stats.rule_evaluations += (double)n * part->nrule;
        e->stats.family_evaluations[f] += (double)n * part->nrule;
    }
    return CKY_OK;
}

/* Enqueue the unary step over the cells of segment sg of the plan's cell list. */
static cky_status run_unary(gpu_engine *e, const plan *p, plan_segment sg)
{
    const int *cells = (const int *)e->d_items.p + 3 * p->nitem;
    cky_status st = prof_begin(e);
    if (st)
        return st;
    const kviterbi_csr *t = &e->vt->dev;
    GPU_CHECK(kernels_unary(e->pre.p, e->post.p, e->nsub, cells + sg.first, (int)sg.count,
                            t->un_first, t->un_child, t->un_w, e->unary_lanes, e->stream));
    return prof_end(e, GPU_STAGE_UNARY);
}

/* The binary step (engine.h): family f's kernels over the items of span d. */
static cky_status gpu_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    gpu_engine *e = ctx;
    if (e->prog->part[f].nrule == 0)
        return CKY_OK;
    return run_family(e, p, f, p->bin[d * CODEGEN_NFAMILY + f]);
}

/* The unary step (engine.h) over the cells of span d. */
static cky_status gpu_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    return run_unary(ctx, p, p->cell[d]);
}

static const engine_ops gpu_ops = {gpu_binary, gpu_unary, NULL};

/* Parse one sub-batch (all outputs set on success). */
static cky_status parse_sub(gpu_engine *e, const sentence *s, int n, double *root,
                            viterbi_node **nodes, chart **charts)
{
    plan p;
    double t0 = now_seconds();
    cky_status st = plan_build(e, s, n, &p);
    if (st) {
        plan_free(&p);
        return st;
    }
    size_t ints = (size_t)p.nitem * 3 + p.ncell + n, nsub = (size_t)e->nsub;
    size_t chart_floats = (size_t)p.ncell * nsub;
    if ((st = device_need(&e->pre, chart_floats * sizeof(float))) ||
        (st = device_need(&e->post, chart_floats * sizeof(float))) ||
        (st = device_need(&e->d_items, ints * sizeof(int))) ||
        (st = device_need(&e->d_meta, meta_bytes(n))) ||
        (st = device_need(&e->d_nodes, (size_t)p.nnode * sizeof(viterbi_node) +
                                           (size_t)n * sizeof(int)))) {
        plan_free(&p);
        return st;
    }
    double t1 = now_seconds();
    e->stats.seconds[GPU_STAGE_HOST] += t1 - t0;
    /* lexical scores (host threads), uploaded into the one-word cells */
    meta hm = meta_at(e->h_meta.p, n), dm = meta_at(e->d_meta.p, n);
    const int *nw = hm.n;
    const long long *cell0 = hm.cell0;
    long *word0 = malloc((size_t)n * sizeof *word0);
    if (!word0) {
        plan_free(&p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int k = 0, w = 0; k < n; w += nw[k], k++)
        word0[k] = w;
    st = score_words(e, s, n, word0, e->h_lex.p);
#define TRY(call)                                                                          \
    do {                                                                                   \
        if (!st)                                                                           \
            st = GPU_STATUS(call);                                                         \
    } while (0)
    /* pre starts at -inf (binary results are maxed into it); post needs no fill: the unary
     * step writes every substate of every cell, span by span */
    TRY(kernels_fill(e->pre.p, p.ncell, e->nsub, e->nsub, KERNELS_NINF_BITS, e->stream));
    for (int k = 0; k < n && !st; k++) /* the one-word cells of a sentence are its first */
        TRY(cudaMemcpyAsync((float *)e->pre.p + (size_t)cell0[k] * nsub,
                            (float *)e->h_lex.p + (size_t)word0[k] * nsub,
                            (size_t)nw[k] * nsub * sizeof(float), cudaMemcpyHostToDevice,
                            e->stream));
    TRY(cudaStreamSynchronize(e->stream));
    double t2 = now_seconds();
    e->stats.seconds[GPU_STAGE_LEXICON] += t2 - t1;
    TRY(cudaMemcpyAsync(e->d_items.p, e->h_items.p, ints * sizeof(int), cudaMemcpyHostToDevice,
                        e->stream));
    TRY(cudaMemcpyAsync(e->d_meta.p, e->h_meta.p, meta_bytes(n), cudaMemcpyHostToDevice,
                        e->stream));
    TRY(cudaStreamSynchronize(e->stream));
    e->stats.seconds[GPU_STAGE_TRANSFER] += now_seconds() - t2;
    /* span by span: binary families, then the unary step */
    const int *items = e->d_items.p;
    const int *cells = items + 3 * p.nitem;
    if (!st)
        st = engine_run_pass(&gpu_ops, e, &p, ENGINE_PASS_INSIDE, CODEGEN_SEMIRING_MAX_PLUS);
    /* root scores and trees */
    viterbi_node *d_nodes = e->d_nodes.p;
    int *d_status = (int *)(d_nodes + p.nnode);
    TRY(kernels_gather(e->post.p, e->nsub, cells + p.ncell, n, e->d_root_row, 1, dm.root,
                       KERNELS_TILE, e->stream)); /* one row: root[t] */
    if (!st)
        st = prof_begin(e);
    if (!st)
        st = kviterbi_run(e->vt, e->pre.p, e->post.p, e->nsub, n, dm.n, dm.cell0, dm.node0,
                          d_nodes, d_status, e->stream);
    if (!st)
        st = prof_end(e, GPU_STAGE_VITERBI);
    TRY(cudaStreamSynchronize(e->stream));
    double t3 = now_seconds();
    TRY(cudaMemcpy(e->h_nodes.p, d_nodes, (size_t)p.nnode * sizeof(viterbi_node) +
                                               (size_t)n * sizeof(int),
                   cudaMemcpyDeviceToHost));
    TRY(cudaMemcpy(hm.root, dm.root, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    if (!st)
        st = prof_collect(e);
    /* results */
    const viterbi_node *h_nodes = e->h_nodes.p;
    const int *status = (const int *)(h_nodes + p.nnode);
    const int *node0 = hm.node0;
    const float *h_root = hm.root;
    for (int k = 0; k < n && !st; k++) {
        nodes[k] = NULL;
        root[k] = h_root[k];
        if (status[k] == KVITERBI_NO_PARSE) {
            root[k] = -INFINITY;
            continue;
        }
        if (status[k] != KVITERBI_OK) {
            st = cky_fail(CKY_ERR_CUDA, "GPU Viterbi: no derivation matches the chart of "
                          "sentence %d of the batch (%d words)", k + 1, nw[k]);
            break;
        }
        size_t bytes = (size_t)(2 * nw[k] - 1) * sizeof(viterbi_node);
        if (!(nodes[k] = malloc(bytes))) {
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
            break;
        }
        memcpy(nodes[k], h_nodes + node0[k], bytes);
    }
    for (int k = 0; charts && k < n && !st; k++) { /* copied back on request */
        size_t cn = chart_ncells(nw[k]) * nsub;
        float *buf = malloc(2 * cn * sizeof *buf);
        if (!buf || (st = chart_new(nw[k], e->nsub, CHART_FLOAT, &charts[k]))) {
            free(buf);
            st = st ? st : cky_fail(CKY_ERR_NOMEM, "out of memory");
            break;
        }
        TRY(cudaMemcpy(buf, (float *)e->pre.p + cell0[k] * nsub, cn * sizeof *buf,
                       cudaMemcpyDeviceToHost));
        TRY(cudaMemcpy(buf + cn, (float *)e->post.p + cell0[k] * nsub, cn * sizeof *buf,
                       cudaMemcpyDeviceToHost));
        for (size_t x = 0; x < cn && !st; x++) {
            charts[k]->pre[x] = buf[x];
            charts[k]->post[x] = buf[cn + x];
        }
        free(buf);
    }
#undef TRY
    e->stats.seconds[GPU_STAGE_TRANSFER] += now_seconds() - t3;
    if (st) {
        for (int k = 0; k < n; k++) {
            free(nodes[k]);
            nodes[k] = NULL;
            if (charts) {
                chart_free(charts[k]);
                charts[k] = NULL;
            }
        }
        e->nev = 0;
    } else {
        e->stats.sentences += n;
        e->stats.sub_batches++;
    }
    free(word0);
    plan_free(&p);
    return st;
}

cky_status gpu_engine_parse(gpu_engine *e, const sentence *s, int n, double *root,
                            viterbi_node **nodes, chart **charts)
{
    for (int k = 0; k < n; k++) {
        nodes[k] = NULL;
        if (charts)
            charts[k] = NULL;
        if (s[k].n < 1)
            return cky_fail(CKY_ERR_ARG, "gpu engine: sentence %d has no words", k + 1);
    }
    size_t free_bytes = 0, total = 0;
    GPU_CHECK(cudaMemGetInfo(&free_bytes, &total));
    /* what the engine's buffers already hold is reusable */
    size_t budget = (size_t)(MEMORY_SHARE * (double)free_bytes) + e->pre.cap + e->post.cap +
                    e->d_items.cap + e->d_nodes.cap;
    int first = 0, limit = n;
    while (first < n) {
        size_t bytes = 0;
        int m = 0;
        while (first + m < n && m < limit) {
            size_t b = sentence_bytes(e, s[first + m].n);
            if (m > 0 && bytes + b > budget)
                break;
            bytes += b;
            m++;
        }
        cky_status st = parse_sub(e, s + first, m, root + first, nodes + first,
                                  charts ? charts + first : NULL);
        if (st == CKY_ERR_NOMEM && m > 1) { /* shrink the sub-batch and try again */
            cudaGetLastError();
            e->stats.oom_retries++;
            limit = m / 2;
            budget = bytes / 2;
            continue;
        }
        if (st) {
            for (int k = 0; k < first; k++) {
                free(nodes[k]);
                nodes[k] = NULL;
                if (charts) {
                    chart_free(charts[k]);
                    charts[k] = NULL;
                }
            }
            return st;
        }
        first += m;
    }
    return CKY_OK;
}
