/* parser: engine dispatch, CPU threads over sentences, and the decoder's steps. */
#include "parser.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/gpu.h"
#include "../util/workers.h"
#include "cpu.h"
#include "decode.h"
#include "gpu.h"
#include "gpu_viterbi.h"
#include "ref.h"

struct parser {
    const grammar *g;
    parser_options opt;
    cpu_engine *cpu; /* engine cpu */
    gpu_engine *gpu; /* engine gpu */
    gpu_viterbi *gpu_viterbi; /* the Viterbi decoder on its device */
    const decode_def *decoder;
};

parser_options parser_default_options(void)
{
    return (parser_options){.engine = PARSER_ENGINE_REF, .backtrace = VITERBI_EXACT,
                            .threads = 0, .max_length = 200, .device = 0, .workspace = 0,
                            .block_tiles = 0, .chunk = -1, .decoder = PARSER_DECODER_VITERBI,
                            .cache_dir = NULL};
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
    if ((unsigned)opt->engine > PARSER_ENGINE_GPU)
        return cky_fail(CKY_ERR_ARG, "unknown engine %d", (int)opt->engine);
    const decode_def *dec = decode_get(opt->decoder);
    if (!dec)
        return cky_fail(CKY_ERR_ARG, "unknown decoder %d", (int)opt->decoder);
    if (opt->engine == PARSER_ENGINE_CPU && !dec->chart && !dec->cpu)
        return cky_fail(CKY_ERR_UNSUPPORTED, "the %s decoder does not run on the cpu engine "
                        "(use --engine ref)", dec->name);
    if (opt->engine == PARSER_ENGINE_GPU && opt->decoder != PARSER_DECODER_VITERBI)
        return cky_fail(CKY_ERR_UNSUPPORTED, "the gpu engine has no device part for the %s "
                        "decoder yet (use --engine cpu or ref)", dec->name);
    if (dec->check) {
        cky_status st = dec->check(g);
        if (st)
            return st;
    }
    parser *p = calloc(1, sizeof *p);
    if (!p)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    p->g = g;
    p->opt = *opt;
    p->decoder = dec;
    if (p->opt.threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        p->opt.threads = cores > 0 ? (int)cores : 1;
    }
    cky_status st = CKY_OK;
    if (opt->engine == PARSER_ENGINE_CPU) {
        cpu_engine_options co = {p->opt.threads, opt->workspace, opt->cache_dir};
        st = cpu_engine_new(g, &co, &p->cpu);
    } else if (opt->engine == PARSER_ENGINE_GPU) {
        gpu_dev_options go = {opt->device, opt->workspace, opt->block_tiles, opt->chunk,
                              opt->cache_dir};
        st = gpu_engine_new(g, &go, &p->gpu);
        if (!st)
            st = gpu_viterbi_new(p->gpu, &p->gpu_viterbi);
    }
    if (st) {
        parser_free(p);
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
    gpu_viterbi_free(p->gpu_viterbi);
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

static void parse_one_ref(const parser *p, const sentence *s, parse_result *r)
{
    if (p->decoder->words) {
        p->decoder->words(p->g, &p->opt, s->words, s->n, r);
        return;
    }
    chart *c;
    if (ref_parse(p->g, s->words, s->n, CHART_DOUBLE, &c)) {
        decode_fail(r);
        return;
    }
    p->decoder->chart(p->g, &p->opt, c, s->words, r);
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

/* The ref engine parses one sentence per worker thread. */
static cky_status parse_ref(parser *p, const sentence *s, int n, parse_result *out, int todo)
{
    job jb = {p, s, out, n, 0, PTHREAD_MUTEX_INITIALIZER};
    workers_run(p->opt.threads < todo ? p->opt.threads : todo, worker, &jb);
    return CKY_OK;
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
    parse_result *res = p->decoder->cpu && !st ? calloc((size_t)todo, sizeof *res) : NULL;
    if (p->decoder->cpu && !st && !res)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (res) { /* the decoder asks the engine for its passes */
        for (int k = 0; k < m; k++)
            res[k] = out[index[k]];
        st = p->decoder->cpu(p->g, &p->opt, p->cpu, batch, m, res);
        for (int k = 0; k < m; k++)
            out[index[k]] = res[k];
        free(res);
        m = 0;
    } else if (!st) {
        st = cpu_engine_parse(p->cpu, batch, m, charts);
    }
    for (int k = 0; k < m && !st; k++) {
        p->decoder->chart(p->g, &p->opt, charts[k], batch[k].words, &out[index[k]]);
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
    if (c)
        p->decoder->chart(p->g, &p->opt, c, s->words, r);
    else
        decode_viterbi_nodes(p->g, nodes, s->n, s->words, root, r);
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
        st = gpu_viterbi_parse(p->gpu_viterbi, batch, m, root, nodes, charts);
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
    static cky_status (*const engine_parse[])(parser *, const sentence *, int, parse_result *,
                                              int) = {[PARSER_ENGINE_REF] = parse_ref,
                                                      [PARSER_ENGINE_CPU] = parse_cpu,
                                                      [PARSER_ENGINE_GPU] = parse_gpu};
    return engine_parse[p->opt.engine](p, s, n, out, todo);
}
