/* viterbi_decode: the Viterbi decoder (decoders/decoder.h), the best derivation of the inside
 * pass in max-plus, on its three engines:
 *   - ref: the reference chart in double (engines/ref), one sentence per host thread, then
 *     the extraction of viterbi.h;
 *   - cpu: the cpu engine's float charts, then the same extraction;
 *   - gpu: the gpu engine's device charts and the GPU extraction (viterbi_gpu.h), bit for
 *     bit the host's; the Berkeley back-trace runs on the host over charts copied back.
 * In fixed point (the engines' .fixed) a sentence one of whose scores left the range
 * (chart.out_of_range) is parsed again by the ref engine (parse_result.exact).
 * Trees are un-annotated into Penn Treebank trees (tree_unannotate). */
#include <math.h>
#include <stdlib.h>

#include "../../engines/cpu/cpu.h"
#include "../../engines/ref/ref.h"
#include "../../util/workers.h"
#include "../decoder.h"
#include "viterbi.h"
#include "viterbi_gpu.h"

/* The result of a filled chart: root score, the tree in the back-trace mode of env. */
static void from_chart(const decoder_env *env, const chart *c, char *const *words,
                       parse_result *r)
{
    const grammar *g = env->g;
    double root = chart_post(c, 0, c->n)[g->sub_offset[0]];
    if (root == -INFINITY) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    tree *t;
    if (viterbi_extract(g, c, words, (viterbi_mode)env->opt.backtrace, &t)) {
        parse_result_fail(r);
        return;
    }
    r->outcome = PARSE_OK;
    r->score = root;
    r->tree = tree_unannotate(t);
}

/* The result of an exact extraction array (the GPU's) with root score `root`. */
static void from_nodes(const grammar *g, const viterbi_node *nodes, int n, char *const *words,
                       double root, parse_result *r)
{
    if (root == -INFINITY) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    tree *t;
    if (viterbi_array_to_tree(g, nodes, n, words, &t)) {
        parse_result_fail(r);
        return;
    }
    r->outcome = PARSE_OK;
    r->score = root;
    r->tree = tree_unannotate(t);
}

/* The ref and cpu parts keep the environment as their state. */
static cky_status env_open(const decoder_env *env, void **state)
{
    *state = (void *)env;
    return CKY_OK;
}

/* ---- ref: one sentence per host thread ---- */

typedef struct ref_job {
    const decoder_env *env;
    const sentence *s;
    parse_result *out;
} ref_job;

static cky_status ref_one(void *arg, long k, int worker)
{
    ref_job *j = arg;
    chart *c;
    if (ref_parse(j->env->g, j->s[k].words, j->s[k].n, CHART_DOUBLE, &c)) {
        parse_result_fail(&j->out[k]);
        return CKY_OK;
    }
    from_chart(j->env, c, j->s[k].words, &j->out[k]);
    chart_free(c);
    return CKY_OK;
}

/* Sentence s again with the ref engine, its fixed-point result replaced (parse_result.exact). */
static void redo_exact(const decoder_env *env, const sentence *s, parse_result *r)
{
    parse_result_clear(r);
    ref_job j = {env, s, r};
    ref_one(&j, 0, 0);
    r->exact = 1;
}

static cky_status ref_part_parse(void *state, const sentence *s, int n, parse_result *out)
{
    const decoder_env *env = state;
    ref_job j = {env, s, out};
    return workers_for(env->threads, n, ref_one, &j);
}

/* ---- cpu: the engine fills the charts of the whole batch ---- */

static cky_status cpu_part_parse(void *state, const sentence *s, int n, parse_result *out)
{
    const decoder_env *env = state;
    chart **charts = calloc((size_t)(n ? n : 1), sizeof *charts);
    if (!charts)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    cky_status st = cpu_engine_parse(env->cpu, s, n, charts);
    for (int k = 0; k < n && !st; k++) {
        if (charts[k]->out_of_range)
            redo_exact(env, &s[k], &out[k]);
        else
            from_chart(env, charts[k], s[k].words, &out[k]);
        chart_free(charts[k]);
    }
    free(charts);
    return st;
}

/* ---- gpu: charts and extraction on the device ---- */

typedef struct gpu_state {
    const decoder_env *env;
    gpu_viterbi *v;
} gpu_state;

static void gpu_part_close(void *state)
{
    gpu_state *m = state;
    if (!m)
        return;
    gpu_viterbi_free(m->v);
    free(m);
}

static cky_status gpu_part_open(const decoder_env *env, void **state)
{
    gpu_state *m = calloc(1, sizeof *m);
    if (!m)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    m->env = env;
    cky_status st = gpu_viterbi_new(env->gpu, &m->v);
    if (st) {
        gpu_part_close(m);
        return st;
    }
    *state = m;
    return CKY_OK;
}

static cky_status gpu_part_parse(void *state, const sentence *s, int n, parse_result *out)
{
    gpu_state *m = state;
    int berkeley = m->env->opt.backtrace == VITERBI_BERKELEY;
    size_t len = (size_t)(n ? n : 1);
    double *root = calloc(len, sizeof *root);
    viterbi_node **nodes = calloc(len, sizeof *nodes);
    chart **charts = berkeley ? calloc(len, sizeof *charts) : NULL;
    unsigned char *range = malloc(len);
    cky_status st = !root || !nodes || (berkeley && !charts) || !range
                        ? cky_fail(CKY_ERR_NOMEM, "out of memory")
                        : gpu_viterbi_parse(m->v, s, n, root, nodes, charts, range);
    for (int k = 0; k < n && !st; k++) {
        if (range[k])
            redo_exact(m->env, &s[k], &out[k]);
        else if (charts)
            from_chart(m->env, charts[k], s[k].words, &out[k]);
        else
            from_nodes(m->env->g, nodes[k], s[k].n, s[k].words, root[k], &out[k]);
        free(nodes[k]);
        if (charts)
            chart_free(charts[k]);
    }
    free(root);
    free(nodes);
    free(charts);
    free(range);
    return st;
}

const decoder_def viterbi_decoder = {
    .name = "viterbi",
    .title = "Viterbi",
    .semiring = CODEGEN_SEMIRING_MAX_PLUS,
    .passes = 1u << ENGINE_PASS_INSIDE,
    .check = NULL,
    .ref = {env_open, ref_part_parse, NULL},
    .cpu = {env_open, cpu_part_parse, NULL},
    .gpu = {gpu_part_open, gpu_part_parse, gpu_part_close},
};
