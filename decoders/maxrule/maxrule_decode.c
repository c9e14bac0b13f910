/* maxrule_decode: the max-rule decoder (decoders/decoder.h) on its three engines:
 *   - ref: maxrule_parse's own double-precision passes (inside, outside, max-c) and
 *     extraction, one sentence per host thread;
 *   - cpu: the cpu engine's sum-product passes (engines/cpu/cpu_sum.h) over groups of
 *     sentences, then max-c and the walk of the tree cell by cell (maxc_cpu_run);
 *   - gpu: the gpu engine's sum-product passes, then max-c and the walks on the device
 *     (maxc_gpu.h); the node codes become trees on the host.
 * The cpu and gpu engines share max-c's arithmetic (maxc_rules.h): the same bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../engines/cpu/cpu_sum.h"
#include "../../semiring/sum_rules.h"
#include "../../util/clock.h"
#include "../../util/workers.h"
#include "../decoder.h"
#include "maxc_gpu.h"
#include "maxrule.h"

#define CPU_GROUP 16 /* sentences per inside/outside batch (bounds the item buffers) */

/* A sentence's result from its max-c walk (status MAXC_*, node codes, ROOT's max-c score)
 * and log P(sentence). */
static void take_nodes(const grammar *g, const sentence *s, int status, const int *nodes,
                       int count, double score, double loglik, parse_result *r)
{
    r->loglik = loglik;
    if (status == MAXC_NO_TREE || loglik == -INFINITY) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    tree *t;
    if (status != MAXC_TREE) {
        cky_fail(CKY_ERR_FORMAT, "max-rule: the max-c scores of a sentence of %d words "
                 "(first word \"%s\") hold no tree", s->n, s->words[0]);
        parse_result_fail(r);
    } else if (maxc_tree_build(g, nodes, count, s->words, &t)) {
        parse_result_fail(r);
    } else {
        r->outcome = PARSE_OK;
        r->score = score;
        r->tree = tree_unannotate(t);
    }
}

void maxrule_result_move(maxrule_result *m, parse_result *r)
{
    for (int k = 0; k < r->nrest; k++)
        tree_free(r->rest[k]);
    free(r->rest);
    free(r->rest_score);
    r->loglik = m->loglik;
    r->score = m->tree ? m->score : -INFINITY;
    r->tree = m->tree;
    r->nrest = m->nrest;
    r->rest = m->rest;
    r->rest_score = m->rest_score;
    memset(m, 0, sizeof *m);
    m->loglik = m->score = -INFINITY;
}

/* ---- ref: one sentence per host thread ---- */

static cky_status ref_part_open(const decoder_env *env, void **state)
{
    *state = (void *)env;
    return CKY_OK;
}

typedef struct ref_job {
    const decoder_env *env;
    const sentence *s;
    parse_result *out;
} ref_job;

static cky_status ref_one(void *arg, long k, int worker)
{
    ref_job *j = arg;
    parse_result *r = &j->out[k];
    maxrule_result m;
    maxrule_options mo = {.kbest = j->env->opt.kbest};
    if (maxrule_parse(j->env->g, j->s[k].words, j->s[k].n, &mo, &m)) {
        parse_result_fail(r);
        return CKY_OK;
    }
    r->outcome = m.tree ? PARSE_OK : PARSE_NO_PARSE;
    maxrule_result_move(&m, r);
    return CKY_OK;
}

static cky_status ref_part_parse(void *state, const sentence *s, int n, parse_result *out)
{
    const decoder_env *env = state;
    ref_job j = {env, s, out};
    return workers_for(env->threads, n, ref_one, &j);
}

/* ---- cpu: the engine's sum-product passes, then max-c on the host ---- */

typedef struct cpu_state {
    const decoder_env *env;
    maxc_host *h;
} cpu_state;

static void cpu_part_close(void *state)
{
    cpu_state *c = state;
    if (!c)
        return;
    maxc_host_free(c->h);
    free(c);
}

static cky_status cpu_part_open(const decoder_env *env, void **state)
{
    cpu_state *c = calloc(1, sizeof *c);
    if (!c)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    c->env = env;
    cky_status st = maxc_host_new(env->g, &c->h);
    if (st) {
        cpu_part_close(c);
        return st;
    }
    *state = c;
    return CKY_OK;
}

static cky_status cpu_part_parse(void *state, const sentence *s, int n, parse_result *out)
{
    cpu_state *cs = state;
    const grammar *g = cs->env->g;
    sum_chart *c[CPU_GROUP];
    int maxn = 1;
    for (int k = 0; k < n; k++)
        maxn = s[k].n > maxn ? s[k].n : maxn;
    int *nodes = malloc((size_t)maxc_nodes_max(maxn) * sizeof *nodes);
    cky_status st = nodes ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int first = 0; first < n && !st; first += CPU_GROUP) {
        int m = n - first < CPU_GROUP ? n - first : CPU_GROUP;
        if ((st = cpu_engine_inside_sum(cs->env->cpu, s + first, m, c)))
            break;
        st = cpu_engine_outside_sum(cs->env->cpu, c, m);
        for (int k = 0; k < m; k++) {
            int count = 0, status = MAXC_NO_TREE;
            double score = -INFINITY, ll = sum_chart_loglik(c[k]);
            if (!st && ll != -INFINITY)
                st = maxc_cpu_run(cs->h, c[k], nodes, &count, &status, &score);
            if (!st)
                take_nodes(g, &s[first + k], status, nodes, count, score, ll, &out[first + k]);
            sum_chart_free(c[k]);
        }
    }
    free(nodes);
    return st;
}

/* ---- gpu: the passes, max-c and the walks on the device, trees on the host ---- */

typedef struct gpu_state {
    const decoder_env *env;
    gpu_maxc *x;
    int stage_rest;    /* "max-c": the rest of max-c (lists, walks, transfers, trees) */
    const sentence *s; /* the batch under way */
    parse_result *out;
} gpu_state;

static void gpu_part_close(void *state)
{
    gpu_state *m = state;
    if (!m)
        return;
    gpu_maxc_free(m->x);
    free(m);
}

static cky_status gpu_part_open(const decoder_env *env, void **state)
{
    gpu_state *m = calloc(1, sizeof *m);
    if (!m)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    m->env = env;
    gpu_dev *d = gpu_engine_dev(env->gpu);
    cky_status st = gpu_maxc_new(d, &m->x);
    if (st) {
        gpu_part_close(m);
        return st;
    }
    m->stage_rest = gpu_dev_stage(d, "max-c");
    *state = m;
    return CKY_OK;
}

/* gpu_decoder.sentence_bytes: max-c's arrays, lists, node codes and stacks. */
static size_t mr_sentence_bytes(void *ctx, int n)
{
    gpu_state *m = ctx;
    return chart_ncells(n) * gpu_maxc_cell_bytes(m->x->d) + 32;
}

static cky_status mr_prepare(void *ctx, gpu_dev *d, const plan *p, const sentence *s, int first)
{
    return CKY_OK;
}

/* gpu_decoder.finish: max-c and the walks on the device, then the trees. */
static cky_status mr_finish(void *ctx, gpu_dev *d, const plan *p, int first)
{
    gpu_state *m = ctx;
    gpu_maxc *x = m->x;
    if (d->profile) /* the outside pass done first: the max-c stage times its own work */
        GPU_CHECK(cudaStreamSynchronize(d->stream));
    double t0 = clock_seconds(), *sec = d->stats.seconds;
    double kernels = sec[x->stage_sums] + sec[x->stage_cells];
    gpu_sum_layers y = gpu_engine_sum_layers(m->env->gpu);
    cky_status st = gpu_maxc_run(x, &y, p);
    if (!st) /* the run synchronized: its kernels' times are known */
        st = gpu_dev_prof_collect(d, 0);
    if (st)
        return st;
    double t1 = clock_seconds();
    kernels = sec[x->stage_sums] + sec[x->stage_cells] - kernels;
    sec[m->stage_rest] += t1 - t0 - kernels;
    for (int k = 0; k < p->n; k++) {
        const int *r = x->result + 4 * k;
        float root;
        memcpy(&root, &r[2], sizeof root);
        take_nodes(m->env->g, &m->s[first + k], r[0], x->nodes + x->node0[k], r[1],
                   x->score[k], sum_rules_loglik(root, r[3]), &m->out[first + k]);
    }
    d->stats.seconds[GPU_STAGE_HOST] += clock_seconds() - t1;
    return CKY_OK;
}

static void mr_discard(void *ctx, int first, int n)
{
    gpu_state *m = ctx;
    for (int k = first; k < first + n; k++)
        parse_result_clear(&m->out[k]);
}

static cky_status gpu_part_parse(void *state, const sentence *s, int n, parse_result *out)
{
    gpu_state *m = state;
    m->s = s;
    m->out = out;
    gpu_decoder dec = {m, CODEGEN_SEMIRING_SUM_PRODUCT,
                       1u << ENGINE_PASS_INSIDE | 1u << ENGINE_PASS_OUTSIDE, mr_sentence_bytes,
                       mr_prepare, mr_finish, mr_discard};
    cky_status st = gpu_engine_parse(m->env->gpu, s, n, &dec);
    m->s = NULL;
    m->out = NULL;
    return st;
}

const decoder_def maxrule_decoder = {
    .name = "maxrule",
    .title = "max-rule",
    .semiring = CODEGEN_SEMIRING_SUM_PRODUCT,
    .passes = 1u << ENGINE_PASS_INSIDE | 1u << ENGINE_PASS_OUTSIDE,
    .check = grammar_check_sum,
    .ref = {ref_part_open, ref_part_parse, NULL},
    .cpu = {cpu_part_open, cpu_part_parse, cpu_part_close},
    .gpu = {gpu_part_open, gpu_part_parse, gpu_part_close},
};
