/* parser: engine dispatch, CPU threads over sentences, and the chart-to-tree step. */
#include "parser.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "ref.h"

struct parser {
    const grammar *g;
    parser_options opt;
    cpu_engine *cpu; /* engine cpu */
};

parser_options parser_default_options(void)
{
    return (parser_options){PARSER_ENGINE_REF, VITERBI_EXACT, 0, 200};
}

cky_status parser_new(const grammar *g, const parser_options *opt, parser **out)
{
    if (opt->engine == PARSER_ENGINE_GPU)
        return cky_fail(CKY_ERR_UNSUPPORTED, "the gpu engine is not available in this build");
    if (opt->max_length < 1)
        return cky_fail(CKY_ERR_ARG, "max length must be at least 1 (got %d)", opt->max_length);
    parser *p = calloc(1, sizeof *p);
    if (!p)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    p->g = g;
    p->opt = *opt;
    if (p->opt.threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        p->opt.threads = cores > 0 ? (int)cores : 1;
    }
    if (opt->engine == PARSER_ENGINE_CPU) {
        cky_status st = cpu_engine_new(g, p->opt.threads, 0, &p->cpu);
        if (st) {
            free(p);
            return st;
        }
    }
    *out = p;
    return CKY_OK;
}

void parser_free(parser *p)
{
    if (!p)
        return;
    cpu_engine_free(p->cpu);
    free(p);
}

void parse_result_clear(parse_result *r)
{
    tree_free(r->tree);
    free(r->error);
    memset(r, 0, sizeof *r);
    r->score = -INFINITY;
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

static void parse_one_ref(const parser *p, const sentence *s, parse_result *r)
{
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
    int m = 0;
    for (int k = 0; k < n && !st; k++)
        if (out[k].outcome == PARSE_OK) {
            index[m] = k;
            batch[m++] = s[k];
        }
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

cky_status parser_parse(parser *p, const sentence *s, int n, parse_result *out)
{
    int todo = 0;
    for (int k = 0; k < n; k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].score = -INFINITY;
        if (s[k].n == 0)
            out[k].outcome = PARSE_EMPTY;
        else if (s[k].n > p->opt.max_length)
            out[k].outcome = PARSE_TOO_LONG;
        else
            todo++;
    }
    if (p->cpu)
        return parse_cpu(p, s, n, out, todo);
    job jb = {p, s, out, n, 0, PTHREAD_MUTEX_INITIALIZER};
    int nthreads = p->opt.threads < todo ? p->opt.threads : todo;
    if (nthreads <= 1) {
        worker(&jb);
        return CKY_OK;
    }
    pthread_t *tid = malloc((size_t)nthreads * sizeof *tid);
    if (!tid)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    int started = 0;
    while (started < nthreads && pthread_create(&tid[started], NULL, worker, &jb) == 0)
        started++;
    if (started == 0)
        worker(&jb);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
    return CKY_OK;
}
