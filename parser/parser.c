/* parser: the front door (see parser.h): the engine a parser runs, its decoder's part for
 * that engine, and a pool of parsers of one engine each (parser/pool.h) when more than one
 * engine is asked for. */
#include "parser.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../decoders/pruned/pruned.h"
#include "../engines/cpu/cpu.h"
#include "../grammar/cascade.h"
#include "../prune/prune.h"
#include "../gpu/gpu.h"
#include "../util/workers.h"
#include "pool.h"

#define BATCH_GPU 8192 /* parser_batch_size: sentences per gpu engine */
#define BATCH_CPU 256
#define BATCH_REF 64

struct parser {
    const grammar *g;
    parser_options opt;
    const decoder_def *dec;
    const decoder_part *part; /* the decoder's part for the engine */
    decoder_env env;          /* what the part was opened with */
    void *state;              /* the part's state (NULL until opened) */
    cpu_engine *cpu;          /* engine cpu */
    gpu_engine *gpu;          /* engine gpu */
    parser **sub;             /* a pool's engines, each a parser of one engine */
    int nsub;
    pool *pool;
};

parser_decoder parser_default_decoder(const grammar *g)
{
    return !grammar_check_sum(g) && grammar_sum_is_exact(g) ? PARSER_DECODER_MAXRULE
                                                            : PARSER_DECODER_VITERBI;
}

parser_prune parser_default_prune(const grammar *g)
{
    return grammar_cascade_of(g) && !grammar_check_sum(g) ? PARSER_PRUNE_BERKELEY
                                                          : PARSER_PRUNE_NONE;
}

parser_options parser_default_options(void)
{
    return (parser_options){.engine = PARSER_ENGINE_REF, .decoder = PARSER_DECODER_VITERBI,
                            .prune_fallback = 1, .backtrace = VITERBI_EXACT,
                            .max_length = 200,
                            .tune = {.chunk = -1}};
}

int parser_arith_fixed(const grammar *g, const parser_options *o)
{
    if (o->engine == PARSER_ENGINE_REF || o->arith == PARSER_ARITH_FLOAT)
        return 0;
    if (o->arith == PARSER_ARITH_FIXED)
        return 1;
    int major = 0; /* AUTO: the cpu engine, or a GPU with DPX */
    if (o->engine == PARSER_ENGINE_GPU &&
        (gpu_count() <= o->device ||
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, o->device) !=
             cudaSuccess || major < 9)) {
        cudaGetLastError();
        return 0;
    }
    return codegen_fixed_check(g) == CKY_OK;
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

int parser_batch_size(const parser *p)
{
    int one = p->opt.engine == PARSER_ENGINE_GPU   ? BATCH_GPU
              : p->opt.engine == PARSER_ENGINE_CPU ? BATCH_CPU
                                                   : BATCH_REF;
    return one * (p->opt.engines > 1 ? p->opt.engines : 1);
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
    cky_status *st;   /* each engine's status */
    char (*why)[256]; /* and its message (cky_fail's is per thread) */
} making;

static cky_status make_engine(void *arg, long k, int worker)
{
    making *mk = arg;
    const parser_options *opt = &mk->p->opt;
    parser_options so = *opt;
    so.engines = so.test.fail_engine = 0;
    so.device = opt->devices[k];
    so.threads = opt->threads / opt->engines > 0 ? opt->threads / opt->engines : 1;
    mk->st[k] = parser_new(mk->p->g, &so, &mk->p->sub[k]);
    if (mk->st[k] && opt->engine == PARSER_ENGINE_GPU)
        snprintf(mk->why[k], sizeof mk->why[k], "device %d: %s", so.device, cky_last_error());
    else if (mk->st[k])
        snprintf(mk->why[k], sizeof mk->why[k], "%s", cky_last_error());
    return CKY_OK; /* each engine's own status is kept: the others go on */
}

/* engine k + 1 of the pool, for workers_for over the engines after the first */
static cky_status make_later_engine(void *arg, long k, int worker)
{
    return make_engine(arg, k + 1, worker);
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
    const parser_test_hooks *t = &opt->test;
    if (t->fail_engine < 0 || t->fail_engine > opt->engines || t->fail_after < 0)
        return cky_fail(CKY_ERR_ARG, "no engine %d of %d to fail", t->fail_engine,
                        opt->engines);
    int n = opt->engines;
    p->sub = calloc((size_t)n, sizeof *p->sub);
    making mk = {p, calloc((size_t)n, sizeof *mk.st), calloc((size_t)n, sizeof *mk.why)};
    cky_status st = CKY_OK;
    if (!p->sub || !mk.st || !mk.why) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    } else {
        p->nsub = n; /* parser_free frees what was made */
        make_engine(&mk, 0, 0);
        if (!mk.st[0] && n > 1)
            workers_for(n - 1, n - 1, make_later_engine, &mk);
        for (int k = 0; k < n && !st; k++) /* the first failure (engine 0's stops all) */
            if (mk.st[k])
                st = cky_fail(mk.st[k], "%s", mk.why[k]);
    }
    free(mk.st);
    free(mk.why);
    if (!st)
        st = pool_new((void *const *)p->sub, n, pool_engine_parse, &p->pool);
    if (!st && t->fail_engine)
        pool_inject_failure(p->pool, t->fail_engine - 1, t->fail_after);
    return st;
}

/* The part of decoder dec for engine e. */
static const decoder_part *part_for(const decoder_def *dec, parser_engine e)
{
    return e == PARSER_ENGINE_GPU ? &dec->gpu : e == PARSER_ENGINE_CPU ? &dec->cpu : &dec->ref;
}

/* Can the options give k-best lists? They are max-rule's (the Berkeley parser's -kbest:
 * CoarseToFineNBestParser), made on the host from the double max-c chart: the pruned decoder
 * (host threads) on the ref and cpu engines, the exhaustive one on the ref engine. */
static cky_status check_kbest(const parser_options *opt)
{
    if (opt->kbest < 0)
        return cky_fail(CKY_ERR_ARG, "kbest must be at least 1 (got %d)", opt->kbest);
    if (opt->kbest <= 1)
        return CKY_OK;
    if (opt->decoder != PARSER_DECODER_MAXRULE)
        return cky_fail(CKY_ERR_UNSUPPORTED, "--kbest %d: k-best lists are max-rule's; the "
                        "Viterbi decoder has none (the Berkeley parser's -viterbi -kbest stops "
                        "with a NullPointerException)", opt->kbest);
    const char *engine = parser_engine_name(opt->engine);
    if (opt->engine != PARSER_ENGINE_REF && opt->prune == PARSER_PRUNE_NONE)
        return cky_fail(CKY_ERR_UNSUPPORTED, "--kbest %d: the %s engine gives no k-best lists "
                        "with --prune none (its max-c chart is float32; use the ref engine, or "
                        "the pruned decoder, which makes them on host threads)", opt->kbest,
                        engine);
    const parser_berkeley_output *bo = &opt->berkeley;
    if (bo->binarize || bo->variational || bo->tree_scores)
        return cky_fail(CKY_ERR_UNSUPPORTED, "--kbest %d: k-best lists come as un-annotated "
                        "trees with their max-rule scores only, not with %s", opt->kbest,
                        bo->binarize ? "--binarize" : bo->variational ? "--variational"
                                                                     : "the Berkeley parser's "
                                                                       "tree scores");
    return CKY_OK;
}

cky_status parser_new(const grammar *g, const parser_options *opt, parser **out)
{
    cky_status kst = check_kbest(opt);
    if (kst)
        return kst;
    if (opt->max_length < 1)
        return cky_fail(CKY_ERR_ARG, "max length must be at least 1 (got %d)", opt->max_length);
    if ((unsigned)opt->engine > PARSER_ENGINE_GPU)
        return cky_fail(CKY_ERR_ARG, "unknown engine %d", (int)opt->engine);
    const decoder_def *dec = parser_decoder_def(opt->decoder);
    if (!dec)
        return cky_fail(CKY_ERR_ARG, "unknown decoder %d", (int)opt->decoder);
    if ((unsigned)opt->prune > PARSER_PRUNE_ACCURATE)
        return cky_fail(CKY_ERR_ARG, "unknown prune mode %d", (int)opt->prune);
    const parser_berkeley_output *bo = &opt->berkeley;
    const char *jar_only = bo->binarize ? "binarized trees" : bo->variational ? "variational "
                           "scores" : bo->tree_scores ? "the tree likelihood and confidence"
                           : NULL;
    if (jar_only && opt->prune == PARSER_PRUNE_NONE)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s come from the pruned decoder only (--prune "
                        "berkeley or accurate), not from the exhaustive %s decoder on the %s "
                        "engine", jar_only, dec->title, parser_engine_name(opt->engine));
    if ((bo->substates || bo->scores) && (opt->decoder != PARSER_DECODER_VITERBI ||
                                          !bo->binarize || opt->prune == PARSER_PRUNE_NONE))
        return cky_fail(CKY_ERR_UNSUPPORTED, "substates and inside scores in the labels come "
                        "with the pruned Viterbi decoder's binarized trees only (--decoder "
                        "viterbi --binarize, pruning on), not the %s%s decoder on the %s "
                        "engine", opt->prune == PARSER_PRUNE_NONE ? "exhaustive " : "pruned ",
                        dec->title, parser_engine_name(opt->engine));
    if (bo->variational && opt->decoder != PARSER_DECODER_MAXRULE)
        return cky_fail(CKY_ERR_UNSUPPORTED, "variational scores replace max-rule's: they "
                        "need the max-rule decoder, not %s", dec->title);
    if (opt->prune != PARSER_PRUNE_NONE) /* the decoder asked for is its final pass */
        dec = &pruned_decoder;
    const decoder_part *part = part_for(dec, opt->engine);
    if (!part->open)
        return cky_fail(CKY_ERR_UNSUPPORTED, "the %s decoder does not run on the %s engine",
                        dec->title, parser_engine_name(opt->engine));
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
    p->dec = dec;
    p->part = part;
    if (p->opt.threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        p->opt.threads = cores > 0 ? (int)cores : 1;
    }
    cky_status st = CKY_OK;
    /* (fixed point is for the max-plus passes: the exhaustive Viterbi decoder's) */
    int fixed = dec->semiring == CODEGEN_SEMIRING_MAX_PLUS && dec->passes &&
                parser_arith_fixed(g, opt);
    if (opt->engines > 1 || opt->test.fail_engine) { /* the test hook needs the pool */
        st = pool_start(p);
    } else {
        if (!dec->passes) {
            /* a decoder that asks the engine for no pass runs on host threads alone; the
             * engine asked for must still be there */
            if (opt->engine == PARSER_ENGINE_GPU && gpu_count() == 0)
                st = cky_fail(CKY_ERR_NO_DEVICE, "no usable CUDA device (no GPU, or no "
                              "driver): the gpu engine cannot run");
        } else if (opt->engine == PARSER_ENGINE_CPU) {
            cpu_engine_options co = {.threads = p->opt.threads, .width = opt->workspace,
                                     .cache_dir = opt->cache_dir,
                                     .sum = dec->semiring == CODEGEN_SEMIRING_SUM_PRODUCT,
                                     .fixed = fixed,
                                     .progress = opt->progress};
            st = cpu_engine_new(g, &co, &p->cpu);
        } else if (opt->engine == PARSER_ENGINE_GPU) {
            gpu_dev_options go = {.device = opt->device,
                                  .width = opt->workspace,
                                  .block_tiles = opt->tune.block_tiles,
                                  .chunk = opt->tune.chunk,
                                  .cache_dir = opt->cache_dir,
                                  .semiring = dec->semiring,
                                  .fixed = fixed,
                                  .part_mb = opt->tune.part_mb,
                                  .ptxas = opt->tune.ptxas,
                                  .progress = opt->progress,
                                  .kernels = opt->test.generic_kernels ? GPU_KERNELS_GENERIC
                                             : opt->tune.kernels_wait  ? GPU_KERNELS_WAIT
                                                                       : GPU_KERNELS_EARLY};
            st = gpu_engine_new(g, &go, &p->gpu);
        }
        p->env = (decoder_env){.g = g,
                               .opt = {.backtrace = opt->backtrace,
                                       .prune = opt->prune == PARSER_PRUNE_ACCURATE
                                                    ? PRUNE_ACCURATE
                                                    : PRUNE_FAST,
                                       .final = opt->decoder == PARSER_DECODER_VITERBI,
                                       .fallback = opt->prune_fallback,
                                       .levels = opt->prune_levels,
                                       .kbest = opt->kbest,
                                       .binarize = opt->berkeley.binarize,
                                       .variational = opt->berkeley.variational,
                                       .tree_scores = opt->berkeley.tree_scores,
                                       .labels = (opt->berkeley.substates
                                                      ? VITERBI_LABEL_SUBSTATES : 0) |
                                                 (opt->berkeley.scores
                                                      ? VITERBI_LABEL_SCORES : 0)},
                               .threads = p->opt.threads, .device = opt->device,
                               .prune_device = !opt->tune.prune_host,
                               .prune_chunk = opt->tune.prune_chunk,
                               .prune_lanes = opt->tune.prune_lanes,
                               .prune_team = opt->tune.prune_team,
                               .cpu = p->cpu, .gpu = p->gpu};
        if (!st)
            st = part->open(&p->env, &p->state);
    }
    if (st) {
        parser_free(p);
        return st;
    }
    *out = p;
    return CKY_OK;
}

void parser_berkeley_scores(const parser_options *o, const parse_result *r,
                            double out[PARSER_NSCORE])
{
    int ok = r->outcome == PARSE_OK, pruned = o->prune != PARSER_PRUNE_NONE;
    int bk = pruned && o->berkeley.tree_scores;
    double none = -(double)INFINITY, unknown = NAN;
    out[PARSER_SCORE_MODEL] = ok ? r->score : none;
    out[PARSER_SCORE_SENTENCE] = pruned && !bk ? unknown
                                 : !ok        ? none
                                 : pruned     ? r->bk_sentence
                                 : o->decoder == PARSER_DECODER_MAXRULE ? r->loglik
                                                                        : r->score;
    out[PARSER_SCORE_TREE] = !bk ? unknown : ok ? r->bk_tree : none;
    out[PARSER_SCORE_CONFIDENCE] = !bk ? unknown : ok ? r->bk_confidence : none;
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
    if (p->state && p->part->close)
        p->part->close(p->state);
    cpu_engine_free(p->cpu);
    gpu_engine_free(p->gpu);
    free(p);
}

/* The decoder's part over batch[0..m): a sentence too large for the memory or the limits
 * of the engine (CKY_ERR_NOMEM, CKY_ERR_LIMIT: its chart, items or workspace) fails alone.
 * The batch is cut in halves and each parsed again until the sentence that fails is by
 * itself, its result PARSE_FAILED with the engine's message; the others are parsed. Any
 * other failure (a device error) fails the batch, as the pool expects (parser/pool.h). */
static cky_status parse_part(parser *p, const sentence *batch, int m, parse_result *res)
{
    cky_status st = p->part->parse(p->state, batch, m, res);
    if (st != CKY_ERR_NOMEM && st != CKY_ERR_LIMIT)
        return st;
    if (m == 1) {
        parse_result_clear(&res[0]);
        parse_result_fail(&res[0]);
        return CKY_OK;
    }
    for (int k = 0; k < m; k++)
        parse_result_clear(&res[k]);
    int half = m / 2;
    if ((st = parse_part(p, batch, half, res)))
        return st;
    return parse_part(p, batch + half, m - half, res + half);
}

cky_status parser_parse(parser *p, const sentence *s, int n, parse_result *out)
{
    if (p->pool)
        return pool_parse(p->pool, s, n, out, p->opt.test.pool_chunk,
                          p->opt.engine == PARSER_ENGINE_GPU ? 1 : 4);
    for (int k = 0; k < n; k++)
        if (s[k].tags && p->dec != &pruned_decoder)
            return cky_fail(CKY_ERR_UNSUPPORTED, "gold POS tags need pruning (the "
                            "coarse-to-fine cascade of a native .gr grammar): the exhaustive "
                            "%s decoder takes none", p->dec->title);
    int todo = 0;
    for (int k = 0; k < n; k++) {
        parse_result_init(&out[k]);
        if (s[k].n == 0)
            out[k].outcome = PARSE_EMPTY;
        else if (s[k].n > p->opt.max_length)
            out[k].outcome = PARSE_TOO_LONG;
        else
            todo++;
    }
    if (todo == 0)
        return CKY_OK;
    /* the sentences to parse, in order, handed to the decoder's part as one batch */
    sentence *batch = calloc((size_t)todo, sizeof *batch);
    int *index = calloc((size_t)todo, sizeof *index);
    parse_result *res = calloc((size_t)todo, sizeof *res);
    cky_status st = !batch || !index || !res ? cky_fail(CKY_ERR_NOMEM, "out of memory") : CKY_OK;
    int m = 0;
    for (int k = 0; k < n && !st; k++)
        if (out[k].outcome == PARSE_OK) {
            index[m] = k;
            batch[m] = s[k];
            parse_result_init(&res[m++]);
        }
    if (!st)
        st = parse_part(p, batch, m, res);
    for (int k = 0; k < m; k++)
        out[index[k]] = res[k];
    free(batch);
    free(index);
    free(res);
    return st;
}
