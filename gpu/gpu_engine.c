/* gpu_engine: the GPU engine (see gpu.h): sub-batches, lexical scores on host threads, the
 * plan's item arrays, the decoder's passes on the device and its steps. */
#include "gpu.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../semiring/sum_rules.h"
#include "../util/clock.h"
#include "../util/workers.h"
#include "internal.h"

#define MEMORY_SHARE 0.8 /* of the free device memory, for the charts and items */

struct gpu_engine {
    const grammar *g;
    gpu_dev *dev;
    int threads;     /* host threads for the lexicon and the item lists */
    gpu_buffer h_lex; /* lexical scores of the one-word cells (pinned) */
    gpu_buffer h_lexexp; /* their exponents, for the sum-product passes (pinned) */
    gpu_buffer h_lexrep; /* each word's row there: the first of its repeats (pinned) */
    gpu_sum *sum;     /* the sum-product passes, made on first use */
};

gpu_sum_layers gpu_engine_sum_layers(gpu_engine *e)
{
    gpu_sum *s = e->sum;
    if (!s)
        return (gpu_sum_layers){0};
    return (gpu_sum_layers){e->dev->pre.p, e->dev->post.p, s->opre.p, s->opost.p,
                            s->epre, s->epost, s->eopre, s->eopost};
}

void gpu_engine_profile(gpu_engine *e, int on) { e->dev->profile = on; }

const gpu_stats *gpu_engine_stats(const gpu_engine *e) { return &e->dev->stats; }

const char *gpu_engine_device(const gpu_engine *e) { return e->dev->desc; }

int gpu_engine_width(const gpu_engine *e) { return e->dev->width; }

gpu_dev *gpu_engine_dev(gpu_engine *e) { return e->dev; }

cky_status gpu_engine_new(const grammar *g, const gpu_dev_options *o, gpu_engine **out)
{
    gpu_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    e->g = g;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    e->threads = cores > 0 ? (int)cores : 1;
    cky_status st = gpu_dev_new(g, o, &e->dev);
    if (!st && o->semiring == CODEGEN_SEMIRING_SUM_PRODUCT) /* its kernels now, not at the
                                                               first parse */
        st = gpu_sum_new(e->dev, &e->sum);
    if (st) {
        gpu_dev_free(e->dev);
        free(e);
        return st;
    }
    *out = e;
    return CKY_OK;
}

void gpu_engine_free(gpu_engine *e)
{
    if (!e)
        return;
    gpu_buffer_free(&e->h_lex, 1);
    gpu_buffer_free(&e->h_lexexp, 1);
    gpu_buffer_free(&e->h_lexrep, 1);
    gpu_sum_free(e->sum);
    gpu_dev_free(e->dev);
    free(e);
}

/* ---- lexical scores on host threads ---- */
typedef struct lex_job {
    const grammar *g;
    const sentence *s;
    const long *word0; /* first one-word cell row of each sentence in the lexical buffer */
    const int *rep;    /* words whose rep is not themselves are not scored (find_repeats) */
    float *out;
    int *exps; /* not NULL: the sum-product passes' scaled linear scores and exponents */
    double *scratch; /* nsub_total doubles per worker */
} lex_job;

/* The lexical scores of sentence k's words. */
static cky_status lex_sentence(void *arg, long k, int worker)
{
    lex_job *j = arg;
    int nsub = j->g->nsub_total;
    double *scratch = j->scratch + (size_t)worker * nsub;
    for (int i = 0; i < j->s[k].n; i++) {
        if (j->rep[j->word0[k] + i] != j->word0[k] + i)
            continue;
        float *o = j->out + (size_t)(j->word0[k] + i) * nsub;
        cky_status st = j->exps ? sum_rules_lexical(j->g, j->s[k].words[i], i, o,
                                                    j->exps + j->word0[k] + i, scratch)
                                : grammar_score_word(j->g, j->s[k].words[i], i, scratch);
        if (st)
            return st;
        for (int x = 0; x < nsub && !j->exps; x++)
            o[x] = (float)scratch[x];
    }
    return CKY_OK;
}

/* rep[w] for each word w of the batch (word0[k] + i: word i of sentence k):
 * grammar_word_repeats. */
static cky_status find_repeats(const sentence *s, int n, const long *word0, long nword,
                               int *rep)
{
    const char **text = malloc((size_t)(nword ? nword : 1) * sizeof *text);
    unsigned char *first = malloc((size_t)(nword ? nword : 1));
    cky_status st = CKY_OK;
    if (!text || !first)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n && !st; k++)
        for (int i = 0; i < s[k].n; i++) {
            text[word0[k] + i] = s[k].words[i];
            first[word0[k] + i] = i == 0;
        }
    if (!st)
        st = grammar_word_repeats(text, first, nword, rep);
    free(text);
    free(first);
    return st;
}

static cky_status score_words(gpu_engine *e, const sentence *s, int n, const long *word0,
                              const int *rep, float *out, int *exps)
{
    int threads = e->threads < n ? e->threads : n;
    lex_job j = {e->g, s, word0, rep, out, exps,
                 malloc((size_t)(threads > 0 ? threads : 1) * e->g->nsub_total * sizeof(double))};
    cky_status st = j.scratch ? workers_for(threads, n, lex_sentence, &j)
                              : cky_fail(CKY_ERR_NOMEM, "out of memory");
    free(j.scratch);
    return st;
}

/* ---- one sub-batch ---- */

/* The binary work items of a sentence of n words, all families. */
static long sentence_items(int n)
{
    long c[CODEGEN_NFAMILY], nitem = 0;
    plan_count_items(n, c);
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        nitem += c[f];
    return nitem;
}

/* Device bytes a sentence of n words and nitem work items needs (charts, items, the
 * sum-product layers, the decoder's own), for sub-batch sizing. */
static size_t sentence_bytes(const gpu_engine *e, int n, long nitem, const gpu_decoder *dec)
{
    size_t items = (size_t)nitem * 3 + chart_ncells(n) + 1;
    size_t b = chart_ncells(n) * (size_t)e->dev->nsub * 2 * sizeof(float) + items * sizeof(int) +
               dec->sentence_bytes(dec->ctx, n);
    if (dec->semiring == CODEGEN_SEMIRING_SUM_PRODUCT)
        b += chart_ncells(n) * gpu_sum_cell_bytes(e->sum) + nitem * gpu_sum_item_bytes();
    return b;
}

/* Filling the work items of a plan, one span length at a time (d = k + 2), on host threads. */
typedef struct fill_job {
    const plan *p;
    gpu_items it;
} fill_job;

static cky_status fill_span(void *arg, long k, int worker)
{
    fill_job *j = arg;
    int d = (int)k + 2;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        long m = j->p->bin[d * CODEGEN_NFAMILY + f].first;
        plan_fill_items(j->p, d, (codegen_family_id)f, j->it.left + m, j->it.right + m,
                        j->it.parent + m, NULL);
    }
    return CKY_OK;
}

/* The plan of a sub-batch and its host item arrays (gpu_items in the device's h_items). */
static cky_status plan_build(gpu_engine *e, const sentence *s, int n, int sum, plan *p)
{
    int *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    if (!len) {
        memset(p, 0, sizeof *p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < n; k++)
        len[k] = s[k].n;
    cky_status st = plan_new(len, n, p);
    free(len);
    if (!st && sum && !(st = plan_add_pull(p, e->threads)))
        st = gpu_buffer_need(&e->h_lexexp, (size_t)p->nword * sizeof(int), 1);
    if (st || (st = gpu_dev_reserve(e->dev, p, 1)) ||
        (st = gpu_buffer_need(&e->h_lex, (size_t)p->nword * e->dev->nsub * sizeof(float), 1)) ||
        (st = gpu_buffer_need(&e->h_lexrep, (size_t)p->nword * sizeof(int), 1)))
        return st;
    gpu_items it = gpu_items_at(e->dev->h_items.p, p);
    for (int k = 0; k < n; k++)
        it.roots[k] = (int)plan_root_cell(p, k);
    fill_job j = {p, it};
    workers_for(e->threads, p->maxn - 1, fill_span, &j);
    for (int d = 1; d <= p->maxn; d++)
        plan_fill_cells(p, d, it.cells + p->cell[d].first);
    return CKY_OK;
}

/* Parse one sub-batch, sentences first .. first + n - 1 of the batch (the decoder's results
 * set on success, discarded on failure). */
static cky_status parse_sub(gpu_engine *e, const sentence *s, int n, int first,
                            const gpu_decoder *dec)
{
    gpu_dev *d = e->dev;
    plan p;
    int sum = dec->semiring == CODEGEN_SEMIRING_SUM_PRODUCT;
    double t0 = clock_seconds();
    cky_status st = plan_build(e, s, n, sum, &p);
    if (!st)
        st = gpu_dev_reserve(d, &p, 0);
    if (!st && sum)
        st = gpu_sum_reserve(e->sum, &p);
    if (st) {
        plan_free(&p);
        return st;
    }
    double t1 = clock_seconds();
    d->stats.seconds[GPU_STAGE_HOST] += t1 - t0;
    /* lexical scores (host threads), uploaded into the one-word cells */
    long *word0 = malloc((size_t)(n ? n : 1) * sizeof *word0);
    if (!word0) {
        plan_free(&p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int k = 0, w = 0; k < n; w += p.len[k], k++)
        word0[k] = w;
    int *rep = e->h_lexrep.p;
    st = find_repeats(s, n, word0, p.nword, rep);
    if (!st)
        st = score_words(e, s, n, word0, rep, e->h_lex.p, sum ? e->h_lexexp.p : NULL);
#define TRY(call)                                                                          \
    do {                                                                                   \
        if (!st)                                                                           \
            st = GPU_STATUS(call);                                                         \
    } while (0)
    /* pre starts at -inf (binary results are maxed into it); post needs no fill: the unary
     * step writes every substate of every cell, span by span */
    const int *words = gpu_items_at(d->h_items.p, &p).cells + p.cell[1].first; /* pinned */
    if (!st && sum)
        st = gpu_sum_begin_inside(e->sum, &p, e->h_lex.p, e->h_lexexp.p, rep, words);
    else
        TRY(kernels_fill(d->pre.p, p.ncell, d->nsub, d->nsub, KERNELS_NINF_BITS, d->stream));
    if (d->fixed)
        TRY(cudaMemsetAsync(d->clamped.p, 0, (size_t)p.ncell, d->stream));
    if (!sum)
        TRY(kernels_lexical(e->h_lex.p, NULL, rep, words, (int)p.nword, d->pre.p, NULL,
                            d->nsub, d->stream));
    TRY(cudaStreamSynchronize(d->stream));
    double t2 = clock_seconds();
    d->stats.seconds[GPU_STAGE_LEXICON] += t2 - t1;
    TRY(cudaMemcpyAsync(d->d_items.p, d->h_items.p, gpu_items_ints(&p) * sizeof(int),
                        cudaMemcpyHostToDevice, d->stream));
    if (!st && sum)
        st = gpu_sum_pull(e->sum, &p, e->threads);
    if (!st)
        st = dec->prepare(dec->ctx, d, &p, s, first);
    TRY(cudaStreamSynchronize(d->stream));
    d->stats.seconds[GPU_STAGE_TRANSFER] += clock_seconds() - t2;
#undef TRY
    /* the decoder's passes in its semiring: inside, then (sum-product) outside */
    const engine_ops *ops = sum ? &gpu_sum_ops : &gpu_dev_ops;
    void *ctx = sum ? (void *)e->sum : (void *)d;
    for (int pass = 0; pass < ENGINE_NPASS && !st; pass++) {
        if (!(dec->passes & 1u << pass))
            continue;
        if (pass == ENGINE_PASS_OUTSIDE)
            st = gpu_sum_begin_outside(e->sum, &p);
        if (!st)
            st = engine_run_pass(ops, ctx, &p, (engine_pass)pass, dec->semiring);
    }
    if (!st)
        st = dec->finish(dec->ctx, d, &p, first);
    if (!st)
        st = gpu_dev_prof_collect(d, 0);
    if (st) {
        gpu_dev_join(d); /* what a failed pass left on the side stream comes before the next */
        dec->discard(dec->ctx, first, n);
        gpu_dev_prof_collect(d, 1);
    } else {
        d->stats.sentences += n;
        d->stats.sub_batches++;
    }
    free(word0);
    plan_free(&p);
    return st;
}

cky_status gpu_engine_use(const gpu_engine *e)
{
    GPU_CHECK(cudaSetDevice(e->dev->info.id));
    return CKY_OK;
}

/* The programs whose background compile has ended, joined: a failure fails the batch (its
 * kernels will not come; the generic kernel would go on alone). */
static cky_status join_compiles(gpu_engine *e)
{
    gpu_dev *d = e->dev;
    codegen_program *p[7] = {d->prog, d->sum_prog[0], d->sum_prog[1], d->sum_prog[2]};
    for (int r = 0; r < 3 && e->sum; r++)
        p[4 + r] = e->sum->prog[r];
    cky_status st = CKY_OK;
    for (int q = 0; q < 7 && !st; q++)
        if (p[q] && p[q]->background && !codegen_program_compiling(p[q]))
            st = codegen_program_wait(p[q]);
    return st;
}

cky_status gpu_engine_parse(gpu_engine *e, const sentence *s, int n, const gpu_decoder *dec)
{
    cky_status use = gpu_engine_use(e); /* a pool parses on threads of its own */
    if (use)
        return use;
    for (int k = 0; k < n; k++)
        if (s[k].n < 1)
            return cky_fail(CKY_ERR_ARG, "gpu engine: sentence %d has no words", k + 1);
    int sum = dec->semiring == CODEGEN_SEMIRING_SUM_PRODUCT;
    unsigned inside = 1u << ENGINE_PASS_INSIDE, outside = 1u << ENGINE_PASS_OUTSIDE;
    if (dec->semiring >= CODEGEN_NSEMIRING ||
        (dec->passes != inside && !(sum && dec->passes == (inside | outside))))
        return cky_fail(CKY_ERR_ARG, "gpu engine: no such passes (0x%x) in the %s semiring",
                        dec->passes, codegen_semiring_name(dec->semiring));
    gpu_dev *d = e->dev;
    if (sum && !e->sum) {
        cky_status st = gpu_sum_new(d, &e->sum);
        if (st)
            return st;
    }
    cky_status joined = join_compiles(e);
    if (joined)
        return joined;
    size_t free_bytes = 0, total = 0;
    GPU_CHECK(cudaMemGetInfo(&free_bytes, &total));
    /* what the device's buffers already hold is reusable */
    size_t budget = (size_t)(MEMORY_SHARE * (double)free_bytes) + d->pre.cap + d->post.cap +
                    d->d_items.cap;
    if (e->sum)
        budget += e->sum->opre.cap + e->sum->opost.cap + e->sum->exps.cap + e->sum->d_pull.cap;
    int first = 0, limit = n;
    while (first < n) {
        size_t bytes = 0;
        long items = 0; /* a sum-product plan numbers its items as int (plan_add_pull) */
        int m = 0;
        while (first + m < n && m < limit) {
            long c = sentence_items(s[first + m].n);
            size_t b = sentence_bytes(e, s[first + m].n, c, dec);
            if (m > 0 && (bytes + b > budget || (sum && items + c > PLAN_PULL_ITEMS)))
                break;
            bytes += b;
            items += c;
            m++;
        }
        cky_status st = parse_sub(e, s + first, m, first, dec);
        if (st == CKY_ERR_NOMEM && m > 1) { /* shrink the sub-batch and try again */
            cudaGetLastError();
            d->stats.oom_retries++;
            limit = m / 2;
            budget = bytes / 2;
            continue;
        }
        if (st) {
            dec->discard(dec->ctx, 0, first);
            return st;
        }
        first += m;
    }
    return CKY_OK;
}
