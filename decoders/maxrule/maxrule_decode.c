/* decode_maxrule: the max-rule decoder (see decode.h): in the ref engine maxrule/ runs its
 * own double-precision passes (inside, outside, max-c) and extraction for one sentence; the
 * cpu and gpu engines run the sum-product passes and then max-c and the walk of the tree
 * with the same arithmetic (parser/maxc_rules.h), on the host or on the device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "maxrule.h"
#include "../../util/clock.h"
#include "../viterbi/viterbi.h"
#include "../../engines/cpu/cpu_sum.h"
#include "../decoders.h"
#include "maxc_gpu.h"
#include "../../gpu/gpu_sum.h"
#include "../../semiring/sum_rules.h"

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
        decode_fail(r);
    } else if (maxc_tree_build(g, nodes, count, s->words, &t)) {
        decode_fail(r);
    } else {
        r->outcome = PARSE_OK;
        r->score = score;
        r->tree = viterbi_unannotate(t);
    }
}

cky_status decode_maxrule_cpu(const grammar *g, const parser_options *o, cpu_engine *e,
                              const sentence *s, int n, parse_result *out)
{
    (void)o;
    sum_chart *c[CPU_GROUP];
    maxc_host *h;
    cky_status st = maxc_host_new(g, &h);
    int maxn = 1;
    for (int k = 0; k < n; k++)
        maxn = s[k].n > maxn ? s[k].n : maxn;
    int *nodes = st ? NULL : malloc((size_t)maxc_nodes_max(maxn) * sizeof *nodes);
    if (!st && !nodes)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int first = 0; first < n && !st; first += CPU_GROUP) {
        int m = n - first < CPU_GROUP ? n - first : CPU_GROUP;
        if ((st = cpu_engine_inside_sum(e, s + first, m, c)))
            break;
        st = cpu_engine_outside_sum(e, c, m);
        for (int k = 0; k < m; k++) {
            int count = 0, status = MAXC_NO_TREE;
            double score = -INFINITY, ll = sum_chart_loglik(c[k]);
            if (!st && ll != -INFINITY)
                st = maxc_cpu_run(h, c[k], nodes, &count, &status, &score);
            if (!st)
                take_nodes(g, &s[first + k], status, nodes, count, score, ll, &out[first + k]);
            sum_chart_free(c[k]);
        }
    }
    free(nodes);
    maxc_host_free(h);
    return st;
}

/* ---- the gpu engine: passes, max-c and the walks on the device, trees on the host ---- */

typedef struct gpu_mr {
    const grammar *g;
    gpu_engine *e;
    const sentence *s; /* the batch */
    parse_result *out;
} gpu_mr;

static cky_status mr_prepare(void *ctx, gpu_dev *d, const plan *p, const sentence *s, int first)
{
    return CKY_OK;
}

/* gpu_decoder.finish: max-c and the walks on the device, then the trees. */
static cky_status mr_finish(void *ctx, gpu_dev *d, const plan *p, int first)
{
    gpu_mr *m = ctx;
    gpu_sum *s = gpu_engine_sum(m->e);
    gpu_maxc *x = s->maxc;
    if (d->profile) /* the outside pass done first: the max-c stage times its own work */
        GPU_CHECK(cudaStreamSynchronize(d->stream));
    double t0 = clock_seconds(), *sec = d->stats.seconds;
    double kernels = sec[GPU_STAGE_MAXC_SUMS] + sec[GPU_STAGE_MAXC_CELLS];
    cky_status st = gpu_maxc_run(x, s, p);
    if (!st) /* the run synchronized: its kernels' times are known */
        st = gpu_dev_prof_collect(d, 0);
    if (st)
        return st;
    double t1 = clock_seconds();
    kernels = sec[GPU_STAGE_MAXC_SUMS] + sec[GPU_STAGE_MAXC_CELLS] - kernels;
    sec[GPU_STAGE_MAXC] += t1 - t0 - kernels;
    for (int k = 0; k < p->n; k++) {
        const int *r = x->result + 4 * k;
        float root;
        memcpy(&root, &r[2], sizeof root);
        take_nodes(m->g, &m->s[first + k], r[0], x->nodes + x->node0[k], r[1], x->score[k],
                   sum_rules_loglik(root, r[3]), &m->out[first + k]);
    }
    d->stats.seconds[GPU_STAGE_HOST] += clock_seconds() - t1;
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
    gpu_mr m = {.g = g, .e = e, .s = s, .out = out};
    gpu_decoder dec = {&m, mr_prepare, mr_finish, mr_discard, 1};
    return gpu_engine_parse(e, s, n, &dec);
}

void decode_maxrule_words(const grammar *g, const parser_options *o, char *const *words, int n,
                          parse_result *r)
{
    maxrule_result m;
    if (maxrule_parse(g, words, n, NULL, &m)) {
        decode_fail(r);
        return;
    }
    r->loglik = m.loglik;
    if (!m.tree) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    r->outcome = PARSE_OK;
    r->score = m.score;
    r->tree = m.tree;
}
