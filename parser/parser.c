/* parser: engine dispatch, CPU threads over sentences, the decoder's steps, and a pool of
 * engines (parser/pool.h) when more than one is asked for. */
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
#include "decode.h"
#include "gpu.h"
#include "gpu_viterbi.h"
#include "pool.h"
#include "ref.h"

struct parser {
    const grammar *g;
    parser_options opt;
    cpu_engine *cpu; /* engine cpu */
    gpu_engine *gpu; /* engine gpu */
    gpu_viterbi *gpu_viterbi; /* the Viterbi decoder on its device */
    const decode_def *decoder;
    parser **sub; /* a pool's engines, each a parser of one engine */
    int nsub;
    pool *pool;
};

parser_decoder parser_default_decoder(const grammar *g)
{
    return !maxrule_check_grammar(g) && maxrule_grammar_is_exact(g) ? PARSER_DECODER_MAXRULE
                                                                   : PARSER_DECODER_VITERBI;
}

parser_options parser_default_options(void)
{
    return (parser_options){.engine = PARSER_ENGINE_REF, .backtrace = VITERBI_EXACT,
                            .threads = 0, .max_length = 200, .device = 0, .workspace = 0,
                            .block_tiles = 0, .chunk = -1, .decoder = PARSER_DECODER_VITERBI,
                            .cache_dir = NULL, .engines = 0, .pool_chunk = 0,
                            .fail_engine = 0, .fail_after = 0};
}

parser_engine parser_default_engine(void)
{
    return gpu_count() > 0 ? PARSER_ENGINE_GPU : PARSER_ENGINE_CPU;
}

struct gpu_engine *parser_gpu(const parser *p) { return p->pool ? p->sub[0]->gpu : p->gpu; }

int parser_engine_count(const parser *p) { return p->pool ? p->nsub : 1; }

struct gpu_engine *parser_gpu_at(const parser *p, int k)
{
    return p->pool ? p->sub[k]->gpu : p->gpu;
}

int parser_failures(const parser *p, const parser_failure **out)
{
    *out = NULL;
    return p->pool ? pool_failures(p->pool, out) : 0;
}

static cky_status pool_engine_parse(void *engine, const sentence *s, int n, parse_result *out)
{
    return parser_parse(engine, s, n, out);
}

/* The making of a pool's engines: engine k is a parser of one engine, on devices[k]. */
typedef struct making {
    parser *p;
    int next;                     /* next engine to make, under lock */
    cky_status *st;               /* each engine's status */
    char (*why)[256];             /* and its message (cky_fail's is per thread) */
    pthread_mutex_t lock;
} making;

static void make_engine(making *mk, int k)
{
    const parser_options *opt = &mk->p->opt;
    parser_options so = *opt;
    so.engines = so.fail_engine = 0;
    so.device = opt->devices[k];
    so.threads = opt->threads / opt->engines > 0 ? opt->threads / opt->engines : 1;
    mk->st[k] = parser_new(mk->p->g, &so, &mk->p->sub[k]);
    if (mk->st[k] && opt->engine == PARSER_ENGINE_GPU)
        snprintf(mk->why[k], sizeof mk->why[k], "device %d: %s", so.device, cky_last_error());
    else if (mk->st[k])
        snprintf(mk->why[k], sizeof mk->why[k], "%s", cky_last_error());
}

static void *make_worker(void *arg)
{
    making *mk = arg;
    for (;;) {
        pthread_mutex_lock(&mk->lock);
        int k = mk->next++;
        pthread_mutex_unlock(&mk->lock);
        if (k >= mk->p->nsub)
            return NULL;
        make_engine(mk, k);
    }
}

/* The engines of a pool, one parser each: the first alone (it compiles the kernels into the
 * cache), then the others at once, each on a thread of its own (they load the kernels from
 * the cache; a GPU's start-up overlaps the others'); then the pool over them. */
static cky_status pool_start(parser *p)
{
    const parser_options *opt = &p->opt;
    if (opt->engines > PARSER_MAX_ENGINES)
        return cky_fail(CKY_ERR_ARG, "at most %d engines at once (got %d)", PARSER_MAX_ENGINES,
                        opt->engines);
    if (opt->fail_engine < 0 || opt->fail_engine > opt->engines || opt->fail_after < 0)
        return cky_fail(CKY_ERR_ARG, "no engine %d of %d to fail", opt->fail_engine,
                        opt->engines);
    int n = opt->engines;
    p->sub = calloc((size_t)n, sizeof *p->sub);
    making mk = {p, 1, calloc((size_t)n, sizeof *mk.st), calloc((size_t)n, sizeof *mk.why),
                 PTHREAD_MUTEX_INITIALIZER};
    cky_status st = CKY_OK;
    if (!p->sub || !mk.st || !mk.why) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    } else {
        p->nsub = n; /* parser_free frees what was made */
        make_engine(&mk, 0);
        if (!mk.st[0] && n > 1)
            workers_run(n - 1, make_worker, &mk);
        for (int k = 0; k < n && !st; k++) /* the first failure (engine 0's stops all) */
            if (mk.st[k])
                st = cky_fail(mk.st[k], "%s", mk.why[k]);
    }
    free(mk.st);
    free(mk.why);
    pthread_mutex_destroy(&mk.lock);
    if (!st)
        st = pool_new((void *const *)p->sub, n, pool_engine_parse, &p->pool);
    if (!st && opt->fail_engine)
        pool_inject_failure(p->pool, opt->fail_engine - 1, opt->fail_after);
    return st;
}

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
    if (opt->engine == PARSER_ENGINE_GPU && opt->decoder != PARSER_DECODER_VITERBI && !dec->gpu)
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
    if (opt->engines > 1 || opt->fail_engine) { /* the test hook needs the pool */
        st = pool_start(p);
    } else if (opt->engine == PARSER_ENGINE_CPU) {
        cpu_engine_options co = {.threads = p->opt.threads, .width = opt->workspace,
                                 .cache_dir = opt->cache_dir,
                                 .sum = opt->decoder == PARSER_DECODER_MAXRULE,
                                 .progress = opt->progress};
        st = cpu_engine_new(g, &co, &p->cpu);
    } else if (opt->engine == PARSER_ENGINE_GPU) {
        /* a max-rule parser runs the sum-product kernels alone */
        gpu_dev_options go = {.device = opt->device,
                              .width = opt->workspace,
                              .block_tiles = opt->block_tiles,
                              .chunk = opt->chunk,
                              .cache_dir = opt->cache_dir,
                              .sum_only = opt->decoder == PARSER_DECODER_MAXRULE,
                              .part_mb = opt->part_mb,
                              .progress = opt->progress};
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
    pool_free(p->pool);
    for (int k = 0; k < p->nsub; k++)
        parser_free(p->sub[k]);
    free(p->sub);
    if (p->gpu)
        gpu_engine_use(p->gpu); /* its device, whichever thread made it */
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
    if (!st && p->decoder->gpu) { /* the decoder asks the engine for its passes */
        parse_result *res = calloc((size_t)todo, sizeof *res);
        if (!res)
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        for (int k = 0; k < m && res; k++)
            res[k] = out[index[k]];
        if (res)
            st = p->decoder->gpu(p->g, &p->opt, p->gpu, batch, m, res);
        for (int k = 0; k < m && res; k++)
            out[index[k]] = res[k];
        free(res);
        m = 0;
    } else if (!st) {
        st = gpu_viterbi_parse(p->gpu_viterbi, batch, m, root, nodes, charts);
    }
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
    if (p->pool)
        return pool_parse(p->pool, s, n, out, p->opt.pool_chunk,
                          p->opt.engine == PARSER_ENGINE_GPU ? 1 : 4);
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
