/* parser: engine dispatch, CPU threads over sentences, and the chart-to-tree step. */
#include "parser.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/gpu.h"
#include "../maxrule/maxrule.h"
#include "../util/workers.h"
#include "cpu.h"
#include "gpu.h"
#include "ref.h"

struct parser {
    const grammar *g;
    parser_options opt;
    cpu_engine *cpu; /* engine cpu */
    gpu_engine *gpu; /* engine gpu */
};

parser_options parser_default_options(void)
{
    return (parser_options){PARSER_ENGINE_REF, VITERBI_EXACT, 0,
                            200, 0, 0, PARSER_DECODER_VITERBI};
}

parser_engine parser_default_engine(void)
{
    return gpu_count() > 0 ? PARSER_ENGINE_GPU : PARSER_ENGINE_CPU;
}

struct gpu_engine *parser_gpu(const parser *p) { return p->gpu; }

cky_status parser_new(const grammar *g, const parser_options *opt, parser **out)
{
    if (opt->max_length < 1)
        return cky_fail(CKY_ERR_ARG, "max length must be at least 1 (got %d)", opt->max_length);
    if (opt->decoder == PARSER_DECODER_MAXRULE) {
        if (opt->engine != PARSER_ENGINE_REF)
            return cky_fail(CKY_ERR_UNSUPPORTED, "the max-rule decoder currently runs with the "
                            "ref engine only");
        cky_status st = maxrule_check_grammar(g);
        if (st)
            return st;
    }
    parser *p = calloc(1, sizeof *p);
    if (!p)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    p->g = g;
    p->opt = *opt;
    if (p->opt.threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        p->opt.threads = cores > 0 ? (int)cores : 1;
    }
    cky_status st = CKY_OK;
    if (opt->engine == PARSER_ENGINE_CPU)
        st = cpu_engine_new(g, p->opt.threads, opt->workspace, &p->cpu);
    else if (opt->engine == PARSER_ENGINE_GPU)
        st = gpu_engine_new(g, opt->device, opt->workspace, &p->gpu);
    if (st) {
        free(p);
        return st;
    }
    *out = p;
    return CKY_OK;
}

void parser_free(parser *p)
{
    if (!p)
        return;
    cpu_engine_free(p->cpu);
    gpu_engine_free(p->gpu);
    free(p);
}

void parse_result_clear(parse_result *r)
{
    tree_free(r->tree);
    free(r->error);
    memset(r, 0, sizeof *r);
    r->score = r->loglik = -INFINITY;
}

static void fail_result(parse_result *r)
{
    r->outcome = PARSE_FAILED;
    r->error = strdup(cky_last_error());
}

/* Turn a filled chart into the result: score, best tree, un-annotation. */
static void finish_result(const parser *p, const chart *c, char *const *words, parse_result *r)
{
    double root = chart_post(c, 0, c->n)[p->g->sub_offset[0]];
    if (root == -INFINITY) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    tree *t;
    if (viterbi_extract(p->g, c, words, p->opt.backtrace, &t)) {
        fail_result(r);
        return;
    }
    r->outcome = PARSE_OK;
    r->score = root;
    r->tree = viterbi_unannotate(t);
}

/* The max-rule decoder (ref engine). */
static void parse_one_maxrule(const parser *p, const sentence *s, parse_result *r)
{
    maxrule_result m;
    if (maxrule_parse(p->g, s->words, s->n, NULL, &m)) {
        fail_result(r);
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

static void parse_one_ref(const parser *p, const sentence *s, parse_result *r)
{
    if (p->opt.decoder == PARSER_DECODER_MAXRULE) {
        parse_one_maxrule(p, s, r);
        return;
    }
    chart *c;
    if (ref_parse(p->g, s->words, s->n, CHART_DOUBLE, &c)) {
        fail_result(r);
        return;
    }
    finish_result(p, c, s->words, r);
    chart_free(c);
}

typedef struct job {
    const parser *p;
    const sentence *s;
    parse_result *out;
    int n;
    int next; /* next sentence to take, under lock */
    pthread_mutex_t lock;
} job;

static void *worker(void *arg)
{
    job *jb = arg;
    for (;;) {
        pthread_mutex_lock(&jb->lock);
        int k = jb->next++;
        pthread_mutex_unlock(&jb->lock);
        if (k >= jb->n)
            return NULL;
        if (jb->out[k].outcome == PARSE_OK)
            parse_one_ref(jb->p, &jb->s[k], &jb->out[k]);
    }
}

/* The sentences still to parse (outcome PARSE_OK so far): batch[0..m) and their positions. */
static int collect_todo(const sentence *s, int n, const parse_result *out, sentence *batch,
                        int *index)
{
    int m = 0;
    for (int k = 0; k < n; k++)
        if (out[k].outcome == PARSE_OK) {
            index[m] = k;
            batch[m++] = s[k];
        }
    return m;
}

/* The cpu engine fills the charts of all parseable sentences of the batch together. */
static cky_status parse_cpu(parser *p, const sentence *s, int n, parse_result *out, int todo)
{
    if (todo == 0)
        return CKY_OK;
    sentence *batch = calloc((size_t)todo, sizeof *batch);
    chart **charts = calloc((size_t)todo, sizeof *charts);
    int *index = calloc((size_t)todo, sizeof *index);
    cky_status st = !batch || !charts || !index ? cky_fail(CKY_ERR_NOMEM, "out of memory")
                                                : CKY_OK;
    int m = st ? 0 : collect_todo(s, n, out, batch, index);
    if (!st)
        st = cpu_engine_parse(p->cpu, batch, m, charts);
    for (int k = 0; k < m && !st; k++) {
        finish_result(p, charts[k], batch[k].words, &out[index[k]]);
        chart_free(charts[k]);
    }
    free(batch);
    free(charts);
    free(index);
    return st;
}

/* A result from a GPU extraction array (exact back-trace) or from the chart (berkeley). */
static void finish_gpu(const parser *p, const sentence *s, double root, const viterbi_node *nodes,
                       const chart *c, parse_result *r)
{
    if (root == -INFINITY) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    if (c) {
        finish_result(p, c, s->words, r);
        return;
    }
    tree *t;
    if (viterbi_array_to_tree(p->g, nodes, s->n, s->words, &t)) {
        fail_result(r);
        return;
    }
    r->outcome = PARSE_OK;
    r->score = root;
    r->tree = viterbi_unannotate(t);
}

/* The gpu engine parses the whole batch and extracts the trees on the device (the Berkeley
 * back-trace runs on the host, over charts copied back). */
static cky_status parse_gpu(parser *p, const sentence *s, int n, parse_result *out, int todo)
{
    if (todo == 0)
        return CKY_OK;
    sentence *batch = calloc((size_t)todo, sizeof *batch);
    int *index = calloc((size_t)todo, sizeof *index);
    double *root = calloc((size_t)todo, sizeof *root);
    viterbi_node **nodes = calloc((size_t)todo, sizeof *nodes);
    chart **charts = p->opt.backtrace == VITERBI_BERKELEY ? calloc((size_t)todo, sizeof *charts)
                                                          : NULL;
    cky_status st = !batch || !index || !root || !nodes ||
                            (p->opt.backtrace == VITERBI_BERKELEY && !charts)
                        ? cky_fail(CKY_ERR_NOMEM, "out of memory")
                        : CKY_OK;
    int m = st ? 0 : collect_todo(s, n, out, batch, index);
    if (!st)
        st = gpu_engine_parse(p->gpu, batch, m, root, nodes, charts);
    for (int k = 0; k < m && !st; k++) {
        finish_gpu(p, &batch[k], root[k], nodes[k], charts ? charts[k] : NULL, &out[index[k]]);
        free(nodes[k]);
        if (charts)
            chart_free(charts[k]);
    }
    free(batch);
    free(index);
    free(root);
    free(nodes);
    free(charts);
    return st;
}

cky_status parser_parse(parser *p, const sentence *s, int n, parse_result *out)
{
    int todo = 0;
    for (int k = 0; k < n; k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].score = out[k].loglik = -INFINITY;
        if (s[k].n == 0)
            out[k].outcome = PARSE_EMPTY;
        else if (s[k].n > p->opt.max_length)
            out[k].outcome = PARSE_TOO_LONG;
        else
            todo++;
    }
    if (p->cpu)
        return parse_cpu(p, s, n, out, todo);
    if (p->gpu)
        return parse_gpu(p, s, n, out, todo);
    job jb = {p, s, out, n, 0, PTHREAD_MUTEX_INITIALIZER};
    workers_run(p->opt.threads < todo ? p->opt.threads : todo, worker, &jb);
    return CKY_OK;
}
