/* codegen compile: the whole grammar compiler behind one call. Builds the families,
 * partitions them, then emits and compiles every kernel (NVRTC cubin and/or host .so)
 * through the cache on a small pool of threads, each thread taking the next kernel. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

typedef struct job {
    codegen_family_id family;
    int k;
    cky_status st;
    char *error; /* the worker thread's cky_last_error() on failure */
    void *handle;
} job;

typedef struct pool {
    codegen_program *prog;
    const codegen_options *opt;
    const char *cache; /* NULL: off */
    char nvrtc[32];
    job *jobs;
    int njob, next;
    pthread_mutex_t lock;
} pool;

void codegen_options_default(codegen_options *o)
{
    memset(o, 0, sizeof *o);
    o->arch = "sm_90";
    o->gpu = 1;
    o->families = (1u << CODEGEN_NFAMILY) - 1;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static cky_status job_dump(const char *dir, const char *name, const char *src)
{
    size_t n = strlen(dir) + strlen(name) + 8;
    char *path = malloc(n);
    if (!path)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    snprintf(path, n, "%s/%s.cu", dir, name);
    cky_status st = codegen_write_atomic(path, src, strlen(src));
    free(path);
    return st;
}

static cky_status job_gpu(pool *pl, codegen_compiled *c, const char *src)
{
    uint64_t key = codegen_hash_str(CODEGEN_FNV_INIT, "cubin");
    key = codegen_hash_str(key, CODEGEN_VERSION);
    key = codegen_hash_str(key, pl->nvrtc);
    key = codegen_hash_str(key, "-arch --ptxas-options=-v");
    key = codegen_hash_str(key, pl->opt->arch);
    key = codegen_hash_str(key, src);
    if (pl->cache && codegen_cache_get_cubin(pl->cache, key, &c->cubin, &c->cubin_size,
                                             &c->registers, &c->spill_bytes))
        return CKY_OK;
    c->cache_hit = 0;
    cky_status st = codegen_nvrtc_compile(src, c->name, pl->opt->arch, &c->cubin,
                                          &c->cubin_size, &c->registers, &c->spill_bytes);
    if (!st && pl->cache)
        st = codegen_cache_put_cubin(pl->cache, key, c->cubin, c->cubin_size, c->registers,
                                     c->spill_bytes);
    return st;
}

static cky_status job_host(pool *pl, job *j, codegen_compiled *c, const char *src)
{
    uint64_t key = codegen_hash_str(CODEGEN_FNV_INIT, "host");
    key = codegen_hash_str(key, CODEGEN_VERSION);
    key = codegen_hash_str(key, codegen_host_compiler());
    key = codegen_hash_str(key, codegen_host_flags);
    key = codegen_hash_str(key, src);
    int hit = 0;
    cky_status st = codegen_host_load(pl->cache, key, src, c->name, &j->handle, &c->host, &hit);
    if (!hit)
        c->cache_hit = 0;
    return st;
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
    c->cache_hit = pl->opt->gpu || pl->opt->host; /* cleared by any compilation */
    char *src = NULL;
    cky_status st = codegen_emit_kernel(p, j->k, &src);
    if (!st && pl->opt->dump_dir)
        st = job_dump(pl->opt->dump_dir, c->name, src);
    if (!st && pl->opt->gpu)
        st = job_gpu(pl, c, src);
    if (!st && pl->opt->host)
        st = job_host(pl, j, c, src);
    free(src);
    return st;
}

static void *pool_worker(void *arg)
{
    pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        int i = pl->next < pl->njob ? pl->next++ : -1;
        pthread_mutex_unlock(&pl->lock);
        if (i < 0)
            return NULL;
        job *j = &pl->jobs[i];
        if ((j->st = job_run(pl, j)))
            j->error = strdup(cky_last_error());
    }
}

static cky_status compile_jobs(pool *pl)
{
    int threads = pl->opt->threads > 0 ? pl->opt->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads > pl->njob)
        threads = pl->njob;
    pthread_t *tid = calloc((size_t)(threads ? threads : 1), sizeof *tid);
    if (!tid)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, pool_worker, pl) != 0)
            break;
    if (started == 0)
        pool_worker(pl);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
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

static cky_status compile_partition(const grammar *g, const codegen_options *o,
                                    codegen_program *prog)
{
    cky_status st = codegen_classes_init(g, &prog->classes);
    for (int f = 0; f < CODEGEN_NFAMILY && !st; f++) {
        codegen_family fam;
        if ((st = codegen_family_build(g, &prog->classes, (codegen_family_id)f, &fam)))
            break;
        st = codegen_partition_build(&fam, o->shape[f], &prog->part[f]);
        codegen_family_free(&fam);
        if (!st && !(prog->kernel[f] = calloc((size_t)prog->part[f].nkernel + 1,
                                               sizeof **prog->kernel)))
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    return st;
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
    pool pl = {prog, o, NULL, "", NULL, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    char *cache = NULL;
    double t0 = now_seconds();
    cky_status st = compile_partition(g, o, prog);
    prog->partition_seconds = now_seconds() - t0;
    if (!st)
        st = codegen_cache_dir(o, &cache);
    if (!st && cache)
        st = codegen_mkdirs(cache);
    if (!st && o->dump_dir)
        st = codegen_mkdirs(o->dump_dir);
    if (st)
        goto done;
    pl.cache = cache;
    codegen_nvrtc_version(pl.nvrtc, sizeof pl.nvrtc);
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        for (int k = 0; k < prog->part[f].nkernel; k++) { /* names even when not compiled */
            codegen_compiled *c = &prog->kernel[f][k];
            codegen_kernel_name((codegen_family_id)f, k, c->name, sizeof c->name);
            const codegen_partition *p = &prog->part[f];
            const codegen_kernel *kn = &p->kernel[k];
            c->registers = c->spill_bytes = -1;
            for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++)
                if (p->block[b].max_live > c->max_live)
                    c->max_live = p->block[b].max_live;
        }
        if (o->families & (1u << f))
            pl.njob += prog->part[f].nkernel;
    }
    pl.jobs = calloc((size_t)pl.njob + 1, sizeof *pl.jobs);
    prog->handles = calloc((size_t)pl.njob + 1, sizeof *prog->handles);
    if (!pl.jobs || !prog->handles) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* kernels are of about equal size (balanced cubes), so plain order keeps threads busy */
    for (int f = 0, n = 0; f < CODEGEN_NFAMILY; f++)
        for (int k = 0; k < prog->part[f].nkernel && (o->families & (1u << f)); k++)
            pl.jobs[n++] = (job){(codegen_family_id)f, k, CKY_OK, NULL, NULL};
    t0 = now_seconds();
    st = compile_jobs(&pl);
    prog->compile_seconds = now_seconds() - t0;
done:
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
