/* decode_maxrule: the max-rule decoder (see decode.h): in the ref engine maxrule/ runs its
 * own double-precision passes (inside, outside, max-c) and extraction for one sentence; on
 * the cpu engine the engine runs the inside and outside passes (sum-product kernels) and
 * maxrule/ the max-c scores and the tree from them. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../maxrule/maxrule.h"
#include "../util/clock.h"
#include "../util/workers.h"
#include "cpu_sum.h"
#include "decode.h"
#include "gpu_sum.h"

#define CPU_GROUP 16 /* sentences per inside/outside batch (bounds the item buffers) */

/* A maxrule_result into a parse result. */
static void take_result(maxrule_result *m, parse_result *r)
{
    r->loglik = m->loglik;
    if (!m->tree) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    r->outcome = PARSE_OK;
    r->score = m->score;
    r->tree = m->tree;
}

cky_status decode_maxrule_cpu(const grammar *g, const parser_options *o, cpu_engine *e,
                              const sentence *s, int n, parse_result *out)
{
    (void)o;
    sum_chart *c[CPU_GROUP];
    cky_status st = CKY_OK;
    for (int first = 0; first < n && !st; first += CPU_GROUP) {
        int m = n - first < CPU_GROUP ? n - first : CPU_GROUP;
        if ((st = cpu_engine_inside_sum(e, s + first, m, c)))
            break;
        st = cpu_engine_outside_sum(e, c, m);
        for (int k = 0; k < m; k++) {
            maxrule_engine_scores sc = {c[k]->post, c[k]->opre, c[k]->epost, c[k]->eopre,
                                        sum_chart_loglik(c[k]), 0};
            maxrule_result r;
            if (!st && maxrule_decode_engine(g, s[first + k].words, s[first + k].n, &sc, &r))
                decode_fail(&out[first + k]);
            else if (!st)
                take_result(&r, &out[first + k]);
            sum_chart_free(c[k]);
        }
    }
    return st;
}

/* ---- the gpu engine: the passes on the device, max-c and the tree on host threads ---- */

typedef struct gpu_mr {
    const grammar *g;
    gpu_engine *e;
    const sentence *s; /* the batch */
    parse_result *out;
    gpu_buffer h_in, h_out, h_exp; /* a sub-batch's post, opre layers and their exponents */
    /* the sub-batch being decoded */
    const plan *p;
    int first, next;
    pthread_mutex_t lock;
} gpu_mr;

static cky_status mr_prepare(void *ctx, gpu_dev *d, const plan *p, const sentence *s, int first)
{
    return CKY_OK;
}

static void *mr_worker(void *arg)
{
    gpu_mr *m = arg;
    size_t nsub = (size_t)m->g->nsub_total;
    const float *in = m->h_in.p, *out = m->h_out.p;
    const int *ein = m->h_exp.p, *eout = ein + m->p->ncell;
    for (;;) {
        pthread_mutex_lock(&m->lock);
        int k = m->next++;
        pthread_mutex_unlock(&m->lock);
        if (k >= m->p->n)
            break;
        long c0 = m->p->cell0[k];
        int n = m->p->len[k];
        size_t root = (size_t)c0 + chart_cell(n, 0, n);
        float v = in[root * nsub]; /* ROOT: global substate 0 */
        double ll = v > 0 ? log((double)v) + ein[root] * M_LN2 : -INFINITY;
        maxrule_engine_scores sc = {in + c0 * nsub, out + c0 * nsub, ein + c0, eout + c0, ll, 0};
        const sentence *s = &m->s[m->first + k];
        parse_result *r = &m->out[m->first + k];
        maxrule_result res;
        if (maxrule_decode_engine(m->g, s->words, s->n, &sc, &res))
            decode_fail(r);
        else
            take_result(&res, r);
    }
    return NULL;
}

/* gpu_decoder.finish: the inside and outside layers downloaded, then decoded. */
static cky_status mr_finish(void *ctx, gpu_dev *d, const plan *p, int first)
{
    gpu_mr *m = ctx;
    gpu_sum *s = gpu_engine_sum(m->e);
    size_t floats = (size_t)p->ncell * d->nsub;
    cky_status st;
    if ((st = gpu_buffer_need(&m->h_in, floats * sizeof(float), 1)) ||
        (st = gpu_buffer_need(&m->h_out, floats * sizeof(float), 1)) ||
        (st = gpu_buffer_need(&m->h_exp, (size_t)p->ncell * 2 * sizeof(int), 1)))
        return st;
    double t0 = clock_seconds();
    GPU_CHECK(cudaMemcpyAsync(m->h_in.p, d->post.p, floats * sizeof(float),
                              cudaMemcpyDeviceToHost, d->stream));
    GPU_CHECK(cudaMemcpyAsync(m->h_out.p, s->opre.p, floats * sizeof(float),
                              cudaMemcpyDeviceToHost, d->stream));
    GPU_CHECK(cudaMemcpyAsync(m->h_exp.p, s->epost, (size_t)p->ncell * sizeof(int),
                              cudaMemcpyDeviceToHost, d->stream));
    GPU_CHECK(cudaMemcpyAsync((int *)m->h_exp.p + p->ncell, s->eopre,
                              (size_t)p->ncell * sizeof(int), cudaMemcpyDeviceToHost, d->stream));
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    double t1 = clock_seconds();
    d->stats.seconds[GPU_STAGE_TRANSFER] += t1 - t0;
    m->p = p;
    m->first = first;
    m->next = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    workers_run(cores < p->n ? (int)cores : p->n, mr_worker, m);
    d->stats.seconds[GPU_STAGE_MAXC] += clock_seconds() - t1;
    return CKY_OK;
}

static void mr_discard(void *ctx, int first, int n)
{
    gpu_mr *m = ctx;
    for (int k = first; k < first + n; k++) {
        parse_result_clear(&m->out[k]);
        m->out[k].outcome = PARSE_OK;
        m->out[k].score = m->out[k].loglik = -INFINITY;
    }
}

cky_status decode_maxrule_gpu(const grammar *g, const parser_options *o, gpu_engine *e,
                              const sentence *s, int n, parse_result *out)
{
    gpu_mr m = {.g = g, .e = e, .s = s, .out = out, .lock = PTHREAD_MUTEX_INITIALIZER};
    gpu_decoder dec = {&m, mr_prepare, mr_finish, mr_discard, 1};
    cky_status st = gpu_engine_parse(e, s, n, &dec);
    gpu_buffer_free(&m.h_in, 1);
    gpu_buffer_free(&m.h_out, 1);
    gpu_buffer_free(&m.h_exp, 1);
    return st;
}

void decode_maxrule_words(const grammar *g, const parser_options *o, char *const *words, int n,
                          parse_result *r)
{
    maxrule_result m;
    if (maxrule_parse(g, words, n, NULL, &m)) {
        decode_fail(r);
        return;
    }
    take_result(&m, r);
}
