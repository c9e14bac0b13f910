/* pruned_decode: the pruned decoder's parts (see pruned.h): per sentence on a host thread,
 * the cascade's masks, the final pass within the fine mask, and the fallbacks. */
#include "pruned.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../engines/ref/ref.h"
#include "../../grammar/cascade.h"
#include "../../prune/prune.h"
#include "../../prune/prune_gpu.h"
#include "../../util/clock.h"
#include "../../util/workers.h"
#include "../decoder.h"
#include "../maxrule/maxrule.h"
#include "../viterbi/viterbi.h"

/* Lanes of the device cascade, each with its own buffers and stream: while one lane's chunk
 * is on the device, another's is scored (the lexicon) or unpacked on the host (decoder_env's
 * prune_lanes, at most LANES_MAX; 0: LANES). */
#define LANES 2
#define LANES_MAX 4

/* The most host threads one sentence's cascade takes in a batch smaller than the host
 * threads (decoder_env's prune_team: another number). On the H200 machine (16 cores), one
 * sentence per request to cky serve: p50 24 ms on one thread, 14 ms on 4, 13 ms on 16
 * (docs/serve.md). */
#define TEAM_MAX 16

typedef struct state {
    const decoder_env *env;
    int nplan;
    prune_plan **plan; /* one per host thread: a plan serves one sentence at a time */
    int nlane;
    prune_gpu *gpu[LANES_MAX]; /* the gpu part: the first pass's cascade on the device, one
                                  chunk of sentences after another in each of its lanes */
} state;

static void part_close(void *arg)
{
    state *s = arg;
    if (!s)
        return;
    for (int k = 0; k < s->nplan; k++)
        prune_free_plan(s->plan[k]);
    free(s->plan);
    for (int l = 0; l < s->nlane; l++)
        prune_gpu_free(s->gpu[l]);
    free(s);
}

static cky_status part_open(const decoder_env *env, void **out)
{
    state *s = calloc(1, sizeof *s);
    int n = env->threads > 0 ? env->threads : 1;
    if (!s || !(s->plan = calloc((size_t)n, sizeof *s->plan))) {
        free(s);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    s->env = env;
    cky_status st = CKY_OK;
    for (; s->nplan < n && !st; s->nplan++)
        st = prune_new_plan(env->g, &s->plan[s->nplan]);
    if (st) {
        part_close(s);
        return st;
    }
    *out = s;
    return CKY_OK;
}

/* The tree of the final pass as written: un-annotated, or (decoder_options.binarize) as
 * built, its ROOT label made "" (printed "( ... )"). */
static tree *output_tree(const decoder_env *env, tree *t)
{
    if (!t || !env->opt.binarize)
        return tree_unannotate(t);
    t->label[0] = '\0';
    return t;
}

/* The max-rule final pass within `mask` (NULL: exhaustive) into r, with the jar's scores of
 * the tree (decoder_options.tree_scores): getLogLikelihood(tree) of the binarized tree,
 * getConfidence of the tree as written. */
static cky_status final_maxrule(const decoder_env *env, const sentence *s,
                                const chart_mask *mask, parse_result *r)
{
    const grammar *g = env->g;
    maxrule_options mo = {0};
    mo.mask = mask;
    maxrule_result m;
    if (env->opt.kbest > 1) { /* a list of un-annotated trees (the Berkeley options refused) */
        mo.kbest = env->opt.kbest;
        cky_status st = maxrule_parse(g, s->words, s->n, &mo, &m);
        if (!st)
            maxrule_result_move(&m, r);
        return st;
    }
    mo.binarized = 1;
    mo.variational = env->opt.variational;
    cky_status st = maxrule_parse(g, s->words, s->n, &mo, &m);
    if (st)
        return st;
    r->loglik = m.loglik;
    r->score = m.tree ? m.score : -INFINITY;
    double built = -INFINITY, written = -INFINITY;
    if (m.tree && env->opt.tree_scores)
        st = maxrule_tree_loglik(g, m.tree, &built);
    r->tree = output_tree(env, m.tree);
    if (!st && r->tree && env->opt.tree_scores && !m.underflow) {
        if (env->opt.binarize)
            written = built;
        else
            st = maxrule_tree_loglik(g, r->tree, &written);
        r->bk_sentence = m.loglik;
        r->bk_tree = built;
        r->bk_confidence = written - m.loglik;
    }
    return st;
}

/* The final pass of sentence `s` within `mask` (NULL: exhaustive) into r. */
static cky_status final_pass(const decoder_env *env, const sentence *s, const chart_mask *mask,
                             parse_result *r)
{
    const grammar *g = env->g;
    if (!env->opt.final)
        return final_maxrule(env, s, mask, r);
    chart *c = NULL;
    tree *t = NULL;
    cky_status st = ref_parse_masked(g, s->words, s->n, CHART_DOUBLE, mask, &c);
    double root = st ? -INFINITY : chart_post(c, 0, s->n)[g->sub_offset[0]];
    if (!st && root != -INFINITY)
        st = viterbi_extract_labeled(g, c, s->words, mask, env->opt.labels, &t);
    chart_free(c);
    if (st)
        return st;
    r->score = t ? root : -INFINITY;
    r->tree = output_tree(env, t);
    if (t && env->opt.tree_scores) { /* the jar's Viterbi likelihoods are the root score */
        r->bk_sentence = r->bk_tree = root;
        r->bk_confidence = 0.0;
    }
    return CKY_OK;
}

/* The final pass within mask m (NULL: exhaustive), over gold tags where given (NULL: none),
 * and the levels' statistics of m into r when asked for. */
static cky_status finish_pass(const decoder_env *env, const sentence *sn, const int *gold,
                              prune_mask *m, parse_result *r)
{
    if (m && gold)
        prune_mask_gold(env->g, gold, &m->fine);
    tree_free(r->tree);
    r->tree = NULL;
    r->bk_sentence = r->bk_tree = r->bk_confidence = -INFINITY;
    double t0 = clock_seconds();
    cky_status st = final_pass(env, sn, m ? &m->fine : NULL, r);
    r->seconds[1] += clock_seconds() - t0;
    if (!st && env->opt.levels && m) {
        free(r->level);
        r->nlevel = 0;
        if (!(r->level = malloc((size_t)m->nlevel * sizeof *r->level)))
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        else
            memcpy(r->level, m->level, (size_t)(r->nlevel = m->nlevel) * sizeof *r->level);
    }
    return st;
}

/* One pass on this host thread: the cascade with thresholds `mode` (exhaustive: none), then
 * the final pass. gold (NULL: none): the gold tag of each word, which alone gets a lexical
 * score, at every level and in the final pass (not exhaustive). */
static cky_status one_pass(state *s, int worker, const sentence *sn, const int *gold,
                           int exhaustive, prune_mode mode, parse_result *r)
{
    if (exhaustive)
        return finish_pass(s->env, sn, NULL, NULL, r);
    prune_mask m;
    double t0 = clock_seconds();
    cky_status st = prune_build_mask_tagged(s->plan[worker], sn->words, gold, sn->n, mode,
                                            NULL, NULL, &m);
    r->seconds[0] += clock_seconds() - t0;
    if (!st)
        st = finish_pass(s->env, sn, gold, &m, r);
    prune_free_mask(&m);
    return st;
}

/* The device's masks of a batch, made chunk by chunk on a task of their own for each lane
 * (chunk c in lane c % nlane) while the host threads take each sentence's final pass as soon
 * as its chunk is there. */
typedef struct feed {
    pthread_mutex_t lock;
    pthread_cond_t more;
    unsigned char *ready; /* [chunks]: 1 when the chunk's masks are made */
    int failed;           /* the device failed: no more come */
} feed;

typedef struct job {
    state *s;
    const sentence *sn;
    int n;
    parse_result *out;
    int **gold;        /* [n]: each sentence's gold tags as symbols (NULL: none) */
    int chunk;         /* sentences per launch (chunk_of) */
    prune_mask *masks; /* [n]: the first pass's masks, made on the device (NULL: on the host
                          threads, sentence by sentence) */
    char *const **words;
    int *len;
    feed feed;
} job;

/* Sentences per launch of the device cascade (decoder_env's prune_chunk; 0: about a quarter
 * of the batch, so that each lane has a chunk on the device while its next is made ready,
 * within [CHUNK_MIN, CHUNK_MAX]: enough to fill the GPU, few enough that the host threads
 * start soon and the last chunk's final passes end soon; on the H200 machine, batches of
 * 8,192, 512 was about 6% faster than 1,024 and 128 slower: docs/history.md). */
#define CHUNK_MIN 256
#define CHUNK_MAX 512

static int chunk_of(const state *s, int n)
{
    if (s->env->prune_chunk > 0)
        return s->env->prune_chunk;
    int c = (n + 2 * s->nlane - 1) / (2 * s->nlane);
    return c < CHUNK_MIN ? CHUNK_MIN : c > CHUNK_MAX ? CHUNK_MAX : c;
}

/* A lane of a job: its chunks are l, l + nlane, l + 2 nlane, ... */
typedef struct lane {
    job *j;
    int l;
} lane;

/* A lane's task: the masks of its chunks in turn, each chunk's seconds (wall and the
 * kernel's device time) shared among its sentences' first-pass times. */
static cky_status make_masks(void *arg)
{
    const lane *ln = arg;
    job *j = ln->j;
    state *s = j->s;
    cky_status st = CKY_OK;
    long stride = (long)s->nlane * j->chunk;
    for (long first = (long)ln->l * j->chunk; first < j->n && !st; first += stride) {
        int m = j->n - first < j->chunk ? (int)(j->n - first) : j->chunk;
        double t0 = clock_seconds(), k0 = prune_gpu_times_of(s->gpu[ln->l]).kernel;
        st = prune_gpu_build_masks(s->gpu[ln->l], j->words + first, j->len + first,
                                   (const int *const *)j->gold + first, m,
                                   (prune_mode)s->env->opt.prune, s->env->opt.levels,
                                   s->nplan, j->masks + first);
        double each = (clock_seconds() - t0) / m;
        double kernel = (prune_gpu_times_of(s->gpu[ln->l]).kernel - k0) / m;
        pthread_mutex_lock(&j->feed.lock);
        if (st) {
            j->feed.failed = 1;
        } else {
            for (long k = first; k < first + m; k++) {
                j->out[k].seconds[0] += each;
                j->out[k].seconds[2] += kernel;
            }
            j->feed.ready[first / j->chunk] = 1;
        }
        pthread_cond_broadcast(&j->feed.more);
        pthread_mutex_unlock(&j->feed.lock);
    }
    return st;
}

/* Wait until sentence k's mask is made; 0 when it never will be. */
static int wait_mask(job *j, long k)
{
    pthread_mutex_lock(&j->feed.lock);
    while (!j->feed.ready[k / j->chunk] && !j->feed.failed)
        pthread_cond_wait(&j->feed.more, &j->feed.lock);
    int ok = j->feed.ready[k / j->chunk];
    pthread_mutex_unlock(&j->feed.lock);
    return ok;
}

/* The gold tags of sn as symbols of g (-1 for a tag g lacks or a phrasal symbol: no tag of
 * the word gets a score, as the jar's tag numberer gives such a name a number of its own)
 * into *out (malloc'ed; NULL without tags). */
static cky_status gold_symbols(const grammar *g, const sentence *sn, int **out)
{
    *out = NULL;
    if (!sn->tags)
        return CKY_OK;
    int *gold = malloc((size_t)sn->n * sizeof *gold);
    if (!gold)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int i = 0; i < sn->n; i++) {
        int t = grammar_find_symbol(g, sn->tags[i]);
        gold[i] = t >= 0 && !g->phrasal[t] ? t : -1;
    }
    *out = gold;
    return CKY_OK;
}

/* Sentence k: the pruned pass (with gold tags, where they give no tree, the jar's retry
 * without them); where it finds no tree (fallback) the accurate one, then the exhaustive
 * one. */
static cky_status one_sentence(void *arg, long k, int worker)
{
    job *j = arg;
    const decoder_env *env = j->s->env;
    parse_result *r = &j->out[k];
    prune_mode mode = (prune_mode)env->opt.prune;
    const int *gold = j->gold[k];
    cky_status st;
    if (j->masks) {
        if (!wait_mask(j, k))
            return cky_fail(CKY_ERR_CUDA, "the device's cascade failed");
        st = finish_pass(env, &j->sn[k], gold, &j->masks[k], r);
    } else {
        st = one_pass(j->s, worker, &j->sn[k], gold, 0, mode, r);
    }
    if (!st && !r->tree && gold) {
        r->untagged = 1;
        st = one_pass(j->s, worker, &j->sn[k], NULL, 0, mode, r);
    }
    if (!st && !r->tree && env->opt.fallback && mode != PRUNE_ACCURATE) {
        r->fallback = 1;
        st = one_pass(j->s, worker, &j->sn[k], NULL, 0, PRUNE_ACCURATE, r);
    }
    if (!st && !r->tree && env->opt.fallback) {
        r->fallback = 2;
        st = one_pass(j->s, worker, &j->sn[k], NULL, 1, mode, r);
    }
    if (st)
        parse_result_fail(r);
    else if (r->tree)
        r->outcome = PARSE_OK;
    else
        r->outcome = PARSE_NO_PARSE;
    if (!r->tree)
        r->fallback = r->untagged = 0; /* no tree came of it */
    return CKY_OK;
}

/* Host threads for each sentence's cascade in a batch of n: 1 unless the batch has fewer
 * sentences than host threads and runs its cascade on them; then those threads shared among
 * its sentences, at most TEAM_MAX and no more than the machine's cores allow (a helper
 * without a core of its own would hold up every loop of its team); decoder_env's
 * prune_team instead where it is set. */
static int team_of(const state *s, int n, int device)
{
    if (device || n <= 0 || n >= s->nplan)
        return 1;
    if (s->env->prune_team > 0)
        return s->env->prune_team;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int t = s->nplan / n, fit = cores > n ? (int)(cores / n) : 1;
    t = t < fit ? t : fit;
    return t > TEAM_MAX ? TEAM_MAX : t;
}

static cky_status part_parse(void *arg, const sentence *sn, int n, parse_result *out)
{
    state *s = arg;
    size_t m = (size_t)(n ? n : 1);
    job j = {.s = s, .sn = sn, .n = n, .out = out, .gold = calloc(m, sizeof *j.gold)};
    if (!j.gold)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    cky_status st = CKY_OK;
    for (int k = 0; k < n && !st; k++)
        st = gold_symbols(s->env->g, &sn[k], &j.gold[k]);
    workers_task task[LANES_MAX] = {{0}};
    lane lanes[LANES_MAX];
    int ntask = 0;
    /* the first pass's cascade on the device, beside the final passes; a batch the host
     * threads take in one round is done sooner on them, one sentence each (pruned.h) */
    int device = !st && s->gpu[0] && n > s->nplan;
    if (device) {
        j.words = malloc(m * sizeof *j.words);
        j.len = malloc(m * sizeof *j.len);
        j.masks = calloc(m, sizeof *j.masks);
        j.chunk = chunk_of(s, n);
        j.feed.ready = calloc(m / (size_t)j.chunk + 1, 1);
        if (!j.words || !j.len || !j.masks || !j.feed.ready)
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        for (int k = 0; k < n && !st; k++) {
            j.words[k] = sn[k].words;
            j.len[k] = sn[k].n;
        }
        pthread_mutex_init(&j.feed.lock, NULL);
        pthread_cond_init(&j.feed.more, NULL);
        for (int l = 0; l < s->nlane && !st; l++) {
            lanes[l] = (lane){&j, l};
            workers_start(&task[ntask], make_masks, &lanes[l]);
            if (task[ntask].started)
                ntask++;
            else /* no thread of its own: the lane's chunks first */
                st = make_masks(&lanes[l]);
        }
    }
    int team = team_of(s, n, device);
    for (int k = 0; k < s->nplan; k++) {
        prune_set_threads(s->plan[k], team);
        prune_set_levels(s->plan[k], s->env->opt.levels);
    }
    if (!st)
        st = workers_for(s->nplan, n, one_sentence, &j);
    if (ntask) { /* the device's failure first: the host threads' is its consequence */
        cky_status dev = workers_wait_all(task, ntask, CKY_OK);
        st = dev ? dev : st;
    }
    if (device) {
        pthread_mutex_destroy(&j.feed.lock);
        pthread_cond_destroy(&j.feed.more);
    }
    free(j.feed.ready);
    for (int k = 0; k < n; k++) {
        free(j.gold[k]);
        if (j.masks)
            prune_free_mask(&j.masks[k]);
    }
    free(j.gold);
    free(j.masks);
    free(j.words);
    free(j.len);
    return st;
}

/* The gpu part: the host part, and (decoder_env.prune_device) the cascade of each batch's
 * first pass on the device, in lanes. */
static cky_status part_open_gpu(const decoder_env *env, void **out)
{
    cky_status st = part_open(env, out);
    if (st || !env->prune_device)
        return st;
    state *s = *out;
    s->nlane = env->prune_lanes > 0 ? env->prune_lanes : LANES;
    if (s->nlane > LANES_MAX)
        s->nlane = LANES_MAX;
    for (int l = 0; l < s->nlane && !st; l++)
        st = prune_gpu_new(env->g, env->device, &s->gpu[l]);
    if (st) {
        part_close(s);
        *out = NULL;
    }
    return st;
}

/* The cascade exists for a native .gr grammar (its split trees); the final passes need what
 * max-rule needs. */
static cky_status check(const grammar *g)
{
    if (!grammar_cascade_of(g))
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: pruning needs the coarse-to-fine cascade "
                        "of a native .gr grammar, which this grammar lacks", g->source);
    return grammar_check_sum(g);
}

const decoder_def pruned_decoder = {
    .name = "pruned",
    .title = "pruned",
    .semiring = CODEGEN_SEMIRING_SUM_PRODUCT,
    .passes = 0, /* its passes are its own, on host threads */
    .check = check,
    .ref = {part_open, part_parse, part_close},
    .cpu = {part_open, part_parse, part_close},
    .gpu = {part_open_gpu, part_parse, part_close},
};
