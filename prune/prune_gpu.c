/* prune_gpu: the cascade of a batch on the GPU (see prune_gpu.h): the level tables in one
 * upload, the batch's work space grown to the largest batch seen, batches bounded by
 * device memory. */
#include "prune_gpu.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/cascade.h"
#include "../util/clock.h"
#include "../util/gpu_check.h"
#include "../util/workers.h"
#include "prune_kernels.h"

/* The most device memory one batch's work space takes (a longer sentence alone may take
 * more). */
#define BATCH_BYTES (4ull << 30)

/* Device arrays, grown on need. */
typedef struct dbuf {
    void *p;
    size_t cap;
} dbuf;

static cky_status dbuf_need(dbuf *b, size_t bytes)
{
    if (bytes <= b->cap)
        return CKY_OK;
    cudaFree(b->p);
    b->p = NULL;
    b->cap = 0;
    GPU_CHECK(cudaMalloc(&b->p, bytes ? bytes : 1));
    b->cap = bytes;
    return CKY_OK;
}

/* Pinned host memory, grown on need. */
typedef struct hbuf {
    void *p;
    size_t cap;
} hbuf;

static cky_status hbuf_need(hbuf *b, size_t bytes)
{
    if (bytes <= b->cap)
        return CKY_OK;
    cudaFreeHost(b->p);
    b->p = NULL;
    b->cap = 0;
    GPU_CHECK(cudaHostAlloc(&b->p, bytes, cudaHostAllocDefault));
    b->cap = bytes;
    return CKY_OK;
}

enum {
    B_META, B_LEX, B_VI, B_VO, B_IN, B_OUT, B_STATE, B_SUB, B_SUB2, B_LBITS, B_RBITS, B_FINE,
    B_STATS, NBUF
};

struct prune_gpu {
    const grammar *fine;
    const grammar_cascade *c;
    int device;
    void *tables;         /* the level tables (device) */
    prune_dev_level *dlv; /* [nlevel] (device) */
    int tot_max;          /* the most substates of a coarse level */
    int maxsub;           /* the most substates of a symbol at a level >= 1 */
    long long lex_width, lex_at[PRUNE_DEV_LEVELS];
    int *fine_nsub, *fine_off; /* device */
    dbuf buf[NBUF];
    hbuf host; /* the uploads and downloads of a batch */
    cudaStream_t stream;
    cudaEvent_t ev[4]; /* before the uploads, the kernel, the downloads; after them */
    prune_gpu_times times;
};

/* ---- the tables: host arrays put one after another, then uploaded at once ---- */

typedef struct blob {
    char *data;
    size_t len, cap;
    int failed;
} blob;

/* Append `bytes` of src (aligned to 16); its offset (as a pointer, rebased after upload). */
static const void *put(blob *b, const void *src, size_t bytes)
{
    size_t at = (b->len + 15) & ~(size_t)15;
    if (at + bytes > b->cap) {
        size_t cap = 2 * (at + bytes) + 4096;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return NULL;
        }
        b->data = d;
        b->cap = cap;
    }
    if (bytes)
        memcpy(b->data + at, src, bytes);
    b->len = at + bytes;
    return (const void *)(uintptr_t)at;
}

#define REBASE(f) ((f) = (void *)(base + (uintptr_t)(f)))

static void rebase_level(prune_dev_level *l, char *base)
{
    REBASE(l->nsub);
    REBASE(l->off);
    REBASE(l->phrasal);
    REBASE(l->bin_first);
    REBASE(l->bin_parent);
    REBASE(l->bin_left);
    REBASE(l->bin_right);
    REBASE(l->row_first);
    REBASE(l->row_l);
    REBASE(l->row_r);
    REBASE(l->w_first);
    REBASE(l->un_first);
    REBASE(l->un_parent);
    REBASE(l->un_child);
    REBASE(l->unc_first);
    REBASE(l->unc_rule);
    REBASE(l->un_w);
    REBASE(l->w);
    if (l->lchild) {
        REBASE(l->lchild);
        REBASE(l->rchild);
    }
}

/* Level-0 rules are kept as the ref's plan keeps them (prune/plan.c): a binary rule's (0, 0)
 * row and a unary's one value, where finite; the other levels keep every rule and row. */
static int xbar_binary(const grammar_binary *r)
{
    return r->nrow > 0 && r->row_l[0] == 0 && r->row_r[0] == 0 && r->score[0] != -INFINITY;
}

/* Level 0's binary rules (one row each) put in the order of their rank among their
 * parent's rules, then by parent, so that the lanes of a warp, which take consecutive rules,
 * meet different parents' maxima; bin_first then means nothing (level 0 does not use it).
 * Nonzero when out of memory. */
static int interleave(int nb, const int *bin_first, int *parent, int *left, int *right,
                      long long *w_first)
{
    int *perm = malloc(((size_t)nb + 1) * sizeof *perm), *at = calloc((size_t)nb + 2, sizeof *at);
    int *tmp = malloc(((size_t)nb + 1) * sizeof *tmp);
    long long *wt = malloc(((size_t)nb + 1) * sizeof *wt);
    if (!perm || !at || !tmp || !wt) {
        free(perm);
        free(at);
        free(tmp);
        free(wt);
        return 1;
    }
    for (int x = 0; x < nb; x++) /* counting sort by rank, stable: by parent within a rank */
        at[x - bin_first[parent[x]] + 1]++;
    for (int r = 0; r < nb; r++)
        at[r + 1] += at[r];
    for (int x = 0; x < nb; x++)
        perm[at[x - bin_first[parent[x]]]++] = x;
    int *cols[3] = {parent, left, right};
    for (int c = 0; c < 3; c++) {
        for (int x = 0; x < nb; x++)
            tmp[x] = cols[c][perm[x]];
        memcpy(cols[c], tmp, (size_t)nb * sizeof *tmp);
    }
    for (int x = 0; x < nb; x++)
        wt[x] = w_first[perm[x]];
    memcpy(w_first, wt, (size_t)nb * sizeof *wt);
    free(perm);
    free(at);
    free(tmp);
    free(wt);
    return 0;
}

/* Level g's tables into the blob (xbar: level 0; lchild, rchild: its map to the next
 * level, NULL for none). */
static cky_status put_level(blob *bl, const grammar *g, int xbar, const int *lchild,
                            const int *rchild, prune_dev_level *out)
{
    int nsym = g->nsym, nb = 0, nu = 0;
    long rows = 0;
    long long nw = 0;
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        if (xbar && !xbar_binary(r))
            continue;
        nb++;
        rows += xbar ? 1 : r->nrow;
        nw += xbar ? 1 : (long long)r->nrow * g->nsub[r->parent];
    }
    for (int u = 0; u < g->nunary; u++) {
        const grammar_unary *r = &g->unary[u];
        if (xbar && r->score[0] == -INFINITY)
            continue;
        nu++;
        nw += xbar ? 1 : (long long)g->nsub[r->child] * g->nsub[r->parent];
    }
    int *ints = malloc(((size_t)6 * nb + 2 * (size_t)rows + 5 * (size_t)nu + 3 * (size_t)nsym + 8) *
                       sizeof *ints);
    long long *lls = malloc(((size_t)nb + nu + 1) * sizeof *lls);
    double *w = malloc((size_t)(nw ? nw : 1) * sizeof *w);
    if (!ints || !lls || !w) {
        free(ints);
        free(lls);
        free(w);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    int *bin_first = ints, *bin_parent = bin_first + nsym + 1, *bin_left = bin_parent + nb;
    int *bin_right = bin_left + nb, *row_first = bin_right + nb, *row_l = row_first + nb + 1;
    int *row_r = row_l + rows, *un_first = row_r + rows, *un_parent = un_first + nsym + 1;
    int *un_child = un_parent + nu, *unc_first = un_child + nu, *unc_rule = unc_first + nsym + 1;
    long long *w_first = lls, *un_w = lls + nb;
    long long wat = 0;
    int x = 0;
    long row = 0;
    for (int P = 0; P < nsym; P++) {
        bin_first[P] = x;
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
            const grammar_binary *r = &g->binary[b];
            if (xbar && !xbar_binary(r))
                continue;
            bin_parent[x] = P;
            bin_left[x] = r->left;
            bin_right[x] = r->right;
            row_first[x] = (int)row;
            w_first[x] = wat;
            int nrow = xbar ? 1 : r->nrow;
            for (int k = 0; k < nrow; k++, row++) {
                row_l[row] = r->row_l[k];
                row_r[row] = r->row_r[k];
            }
            size_t m = xbar ? 1 : (size_t)r->nrow * g->nsub[P];
            memcpy(w + wat, r->score, m * sizeof *w);
            wat += (long long)m;
            x++;
        }
    }
    bin_first[nsym] = x;
    row_first[x] = (int)row;
    if (xbar && interleave(nb, bin_first, bin_parent, bin_left, bin_right, w_first)) {
        free(ints);
        free(lls);
        free(w);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    x = 0;
    for (int P = 0; P < nsym; P++) {
        un_first[P] = x;
        for (int u = g->unary_first[P]; u < g->unary_first[P + 1]; u++) {
            const grammar_unary *r = &g->unary[u];
            if (xbar && r->score[0] == -INFINITY)
                continue;
            un_parent[x] = P;
            un_child[x] = r->child;
            un_w[x] = wat;
            size_t m = xbar ? 1 : (size_t)g->nsub[r->child] * g->nsub[P];
            memcpy(w + wat, r->score, m * sizeof *w);
            wat += (long long)m;
            x++;
        }
    }
    un_first[nsym] = x;
    memset(unc_first, 0, ((size_t)nsym + 1) * sizeof *unc_first); /* by child, stable */
    for (int u = 0; u < nu; u++)
        unc_first[un_child[u] + 1]++;
    for (int s = 0; s < nsym; s++)
        unc_first[s + 1] += unc_first[s];
    {
        int *fill = malloc((size_t)(nsym ? nsym : 1) * sizeof *fill);
        if (!fill) {
            free(ints);
            free(lls);
            free(w);
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        }
        memcpy(fill, unc_first, (size_t)nsym * sizeof *fill);
        for (int u = 0; u < nu; u++)
            unc_rule[fill[un_child[u]]++] = u;
        free(fill);
    }
    prune_dev_level l = {.nsym = nsym, .tot = g->nsub_total, .nbin = nb};
    l.nsub = put(bl, g->nsub, (size_t)nsym * sizeof(int));
    l.off = put(bl, g->sub_offset, (size_t)nsym * sizeof(int));
    l.phrasal = put(bl, g->phrasal, (size_t)nsym);
    l.bin_first = put(bl, bin_first, ((size_t)nsym + 1) * sizeof(int));
    l.bin_parent = put(bl, bin_parent, (size_t)nb * sizeof(int));
    l.bin_left = put(bl, bin_left, (size_t)nb * sizeof(int));
    l.bin_right = put(bl, bin_right, (size_t)nb * sizeof(int));
    l.row_first = put(bl, row_first, ((size_t)nb + 1) * sizeof(int));
    l.row_l = put(bl, row_l, (size_t)rows * sizeof(int));
    l.row_r = put(bl, row_r, (size_t)rows * sizeof(int));
    l.w_first = put(bl, w_first, (size_t)nb * sizeof(long long));
    l.un_first = put(bl, un_first, ((size_t)nsym + 1) * sizeof(int));
    l.un_parent = put(bl, un_parent, (size_t)nu * sizeof(int));
    l.un_child = put(bl, un_child, (size_t)nu * sizeof(int));
    l.unc_first = put(bl, unc_first, ((size_t)nsym + 1) * sizeof(int));
    l.unc_rule = put(bl, unc_rule, (size_t)nu * sizeof(int));
    l.un_w = put(bl, un_w, (size_t)nu * sizeof(long long));
    l.w = put(bl, w, (size_t)nw * sizeof(double));
    if (lchild) {
        l.lchild = put(bl, lchild, (size_t)g->nsub_total * sizeof(int));
        l.rchild = put(bl, rchild, (size_t)g->nsub_total * sizeof(int));
    }
    free(ints);
    free(lls);
    free(w);
    *out = l;
    return bl->failed ? cky_fail(CKY_ERR_NOMEM, "out of memory") : CKY_OK;
}

void prune_gpu_free(prune_gpu *p)
{
    if (!p)
        return;
    cudaSetDevice(p->device);
    for (int k = 0; k < NBUF; k++)
        cudaFree(p->buf[k].p);
    cudaFreeHost(p->host.p);
    cudaFree(p->tables);
    for (int k = 0; k < 4; k++)
        if (p->ev[k])
            cudaEventDestroy(p->ev[k]);
    if (p->stream)
        cudaStreamDestroy(p->stream);
    free(p);
}

cky_status prune_gpu_new(const grammar *g, int device, prune_gpu **out)
{
    const grammar_cascade *c = grammar_cascade_of(g);
    if (!c)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: pruning needs the coarse-to-fine cascade of "
                        "a native .gr grammar, which this grammar lacks", g->source);
    if (c->nlevel > PRUNE_DEV_LEVELS || c->nlevel >= PRUNE_MAX_LEVELS)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: %d coarse levels, more than the Berkeley "
                        "parser's thresholds cover", g->source, c->nlevel);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || device < 0 || device >= ndev) {
        cudaGetLastError();
        return cky_fail(CKY_ERR_NO_DEVICE, "no CUDA device %d for the pruned passes", device);
    }
    GPU_CHECK(cudaSetDevice(device));
    prune_gpu *p = calloc(1, sizeof *p);
    if (!p)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    p->fine = g;
    p->c = c;
    p->device = device;
    blob bl = {0};
    prune_dev_level lv[PRUNE_DEV_LEVELS];
    cky_status st = CKY_OK;
    for (int k = 0; k < c->nlevel && !st; k++) {
        const grammar *lg = c->level[k];
        st = put_level(&bl, lg, k == 0, k ? c->lchild[k] : NULL, k ? c->rchild[k] : NULL,
                       &lv[k]);
        p->lex_at[k] = p->lex_width;
        p->lex_width += lg->nsub_total;
        if (k >= 1 && lg->nsub_total > p->tot_max)
            p->tot_max = lg->nsub_total;
        for (int sy = 0; k >= 1 && sy < lg->nsym; sy++)
            if (lg->nsub[sy] > p->maxsub)
                p->maxsub = lg->nsub[sy];
    }
    if (p->tot_max < c->level[0]->nsym)
        p->tot_max = c->level[0]->nsym;
    const void *fnsub = put(&bl, g->nsub, (size_t)g->nsym * sizeof(int));
    const void *foff = put(&bl, g->sub_offset, (size_t)g->nsym * sizeof(int));
    const void *lvat = put(&bl, lv, 0); /* the level structs go last, after rebasing */
    if (!st && bl.failed)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    size_t lv_bytes = (size_t)c->nlevel * sizeof *lv;
    if (!st)
        st = GPU_STATUS(cudaMalloc(&p->tables, (uintptr_t)lvat + lv_bytes));
    if (!st) {
        char *base = p->tables;
        for (int k = 0; k < c->nlevel; k++)
            rebase_level(&lv[k], base);
        p->fine_nsub = (int *)(base + (uintptr_t)fnsub);
        p->fine_off = (int *)(base + (uintptr_t)foff);
        p->dlv = (prune_dev_level *)(base + (uintptr_t)lvat);
        st = GPU_STATUS(cudaMemcpy(base, bl.data, (uintptr_t)lvat, cudaMemcpyHostToDevice));
        if (!st)
            st = GPU_STATUS(cudaMemcpy(p->dlv, lv, lv_bytes, cudaMemcpyHostToDevice));
    }
    if (!st)
        st = GPU_STATUS(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
    for (int k = 0; k < 4 && !st; k++)
        st = GPU_STATUS(cudaEventCreate(&p->ev[k]));
    free(bl.data);
    if (st) {
        prune_gpu_free(p);
        return st;
    }
    *out = p;
    return CKY_OK;
}

/* ---- a batch ---- */

typedef struct lexjob {
    const prune_gpu *p;
    char *const *const *words;
    const int *n;
    const int *const *gold;
    const long long *word0;
    const int *rep; /* a word's scores are those of word rep[w] (grammar_word_repeats) */
    double *lex;
} lexjob;

/* The lexical scores of sentence k's words at every level, with its gold tags: those of the
 * words that are their own rep. */
static cky_status lex_sentence(void *arg, long k, int worker)
{
    (void)worker;
    const lexjob *j = arg;
    const grammar_cascade *c = j->p->c;
    const int *gold = j->gold ? j->gold[k] : NULL;
    for (int i = 0; i < j->n[k]; i++) {
        long long w = j->word0[k] + i;
        if (j->rep[w] != w)
            continue;
        double *row = j->lex + w * j->p->lex_width;
        for (int lvl = 0; lvl < c->nlevel; lvl++) {
            const grammar *g = c->level[lvl];
            double *lex = row + j->p->lex_at[lvl];
            cky_status st = grammar_score_word(g, j->words[k][i], i, lex);
            if (st)
                return st;
            for (int t = 0; gold && t < g->nsym; t++) /* prune_gold_lexicon */
                if (!g->phrasal[t] && t != gold[i])
                    for (int x = 0; x < g->nsub[t]; x++)
                        lex[g->sub_offset[t] + x] = -INFINITY;
        }
    }
    return CKY_OK;
}

/* The rows of sentence k's other words: their reps'. */
static cky_status lex_copy(void *arg, long k, int worker)
{
    (void)worker;
    const lexjob *j = arg;
    size_t width = (size_t)j->p->lex_width;
    for (int i = 0; i < j->n[k]; i++) {
        long long w = j->word0[k] + i;
        if (j->rep[w] != w)
            memcpy(j->lex + w * width, j->lex + j->rep[w] * width, width * sizeof *j->lex);
    }
    return CKY_OK;
}

/* The lexical scores of a batch's words at every level (lex: a row of lex_width per word),
 * each word text scored once: a word of a sentence with gold tags on its own. */
static cky_status score_lexicon(const prune_gpu *p, char *const *const *words, const int *n,
                                const int *const *gold, int nsent, const long long *word0,
                                long long nwords, int threads, double *lex)
{
    size_t m = (size_t)(nwords ? nwords : 1);
    const char **text = malloc(m * sizeof *text);
    unsigned char *first = malloc(m);
    int *rep = malloc(m * sizeof *rep);
    cky_status st = text && first && rep ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int k = 0; k < nsent && !st; k++)
        for (int i = 0; i < n[k]; i++) {
            text[word0[k] + i] = gold && gold[k] ? NULL : words[k][i];
            first[word0[k] + i] = i == 0;
        }
    if (!st)
        st = grammar_word_repeats(text, first, nwords, rep);
    lexjob j = {p, words, n, gold, word0, rep, lex};
    if (!st)
        st = workers_for(threads, nsent, lex_sentence, &j);
    if (!st)
        st = workers_for(threads, nsent, lex_copy, &j);
    free(text);
    free(first);
    free(rep);
    return st;
}

/* Bytes of device work space per cell. */
static size_t cell_bytes(const prune_gpu *p)
{
    size_t nsym = (size_t)p->fine->nsym, T = (size_t)p->tot_max;
    return 2 * nsym * sizeof(double) + 2 * T * sizeof(double) + nsym + 2 * T +
           2 * sizeof(int) + (size_t)p->fine->nsub_total;
}

/* Sentence k's mask from the batch's downloads (the fine state and substates, the levels'
 * statistics). */
typedef struct unpackjob {
    const prune_gpu *p;
    const int *n;
    const long long *cell0;
    const unsigned char *state, *fine;
    const prune_dev_stats *stats;
    prune_mask *out;
} unpackjob;

static cky_status unpack_sentence(void *arg, long k, int worker)
{
    (void)worker;
    const unpackjob *j = arg;
    int nlevel = j->p->c->nlevel, nsym = j->p->fine->nsym, ftot = j->p->fine->nsub_total;
    prune_mask *m = &j->out[k];
    m->nlevel = nlevel;
    for (int l = 0; l < nlevel; l++) {
        const prune_dev_stats *d = &j->stats[k * nlevel + l];
        m->level[l] = d->failed ? (prune_level){1, -1, -1, 0}
                                : (prune_level){0, (long)d->symbols, (long)d->substates, d->hash};
    }
    cky_status st = chart_mask_init(&m->fine, j->n[k], nsym, ftot);
    if (st)
        return st;
    size_t nc = chart_ncells(j->n[k]);
    memcpy(m->fine.state, j->state + j->cell0[k] * nsym, nc * nsym);
    memcpy(m->fine.sub, j->fine + j->cell0[k] * ftot, nc * ftot);
    return CKY_OK;
}

/* The blocks' order: the longest sentences (n: their lengths) first, as they take the
 * longest, then by index. */
static int longest_first(const void *a, const void *b, void *n)
{
    int x = *(const int *)a, y = *(const int *)b;
    const int *len = n;
    return len[x] != len[y] ? len[y] - len[x] : x - y;
}

static cky_status run_batch(prune_gpu *p, char *const *const *words, const int *n,
                            const int *const *gold, int nsent, prune_mode mode, int levels,
                            int threads, prune_mask *out)
{
    const grammar_cascade *c = p->c;
    int nlevel = c->nlevel, nsym = p->fine->nsym, ftot = p->fine->nsub_total;
    long long cells = 0, nwords = 0;
    int nmax = 0;
    for (int k = 0; k < nsent; k++) {
        cells += (long long)chart_ncells(n[k]);
        nwords += n[k];
        nmax = n[k] > nmax ? n[k] : nmax;
    }
    /* meta: cell0, word0 [nsent], n, order [nsent], span_cell [2 cells] */
    size_t meta = (size_t)nsent * (2 * sizeof(int) + 2 * sizeof(long long)) +
                  2 * (size_t)cells * sizeof(int);
    size_t lex_bytes = (size_t)nwords * p->lex_width * sizeof(double);
    size_t state_bytes = (size_t)cells * nsym, fine_bytes = (size_t)cells * ftot;
    size_t stats_bytes = (size_t)nsent * nlevel * sizeof(prune_dev_stats);
    int nword = (nmax + 64) / 64;
    size_t bits_bytes = (size_t)(nwords + nsent) * nsym * nword * sizeof(unsigned long long);
    size_t T = (size_t)p->tot_max, need[NBUF] = {
        [B_META] = meta, [B_LEX] = lex_bytes,
        [B_VI] = (size_t)cells * nsym * sizeof(double), [B_VO] = (size_t)cells * nsym * sizeof(double),
        [B_IN] = (size_t)cells * T * sizeof(double), [B_OUT] = (size_t)cells * T * sizeof(double),
        [B_STATE] = state_bytes, [B_SUB] = (size_t)cells * T, [B_SUB2] = (size_t)cells * T,
        [B_LBITS] = bits_bytes, [B_RBITS] = bits_bytes,
        [B_FINE] = fine_bytes, [B_STATS] = stats_bytes};
    long long *span_first = malloc(((size_t)nmax + 2) * sizeof *span_first);
    cky_status st = span_first ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int b = 0; b < NBUF && !st; b++)
        st = dbuf_need(&p->buf[b], need[b]);
    /* host side, pinned: the uploads (meta, lexicon) and the downloads one after another */
    size_t lex_at = (meta + 15) & ~(size_t)15, up = lex_at + lex_bytes;
    size_t down = state_bytes + fine_bytes + stats_bytes;
    if (!st)
        st = hbuf_need(&p->host, up + down + 16);
    if (st) {
        free(span_first);
        return st;
    }
    char *hm = p->host.p;
    long long *cell0 = (long long *)hm, *word0 = cell0 + nsent;
    int *hn = (int *)(word0 + nsent), *order = hn + nsent;
    double *lex = (double *)(hm + lex_at);
    prune_dev_stats *hstats = (prune_dev_stats *)(hm + ((up + 15) & ~(size_t)15));
    unsigned char *hstate = (unsigned char *)(hstats + (size_t)nsent * nlevel);
    unsigned char *hfine = hstate + state_bytes;
    cells = nwords = 0;
    for (int k = 0; k < nsent; k++) {
        cell0[k] = cells;
        word0[k] = nwords;
        hn[k] = n[k];
        cells += (long long)chart_ncells(n[k]);
        nwords += n[k];
        order[k] = k;
    }
    qsort_r(order, (size_t)nsent, sizeof *order, longest_first, (void *)n);
    int *span_cell = order + nsent; /* span by span, the longest sentences first */
    long long f = 0;
    for (int d = 1; d <= nmax; d++) {
        span_first[d] = f;
        for (int t = 0; t < nsent && n[order[t]] >= d; t++)
            for (int i = 0; i + d <= n[order[t]]; i++, f++) {
                span_cell[2 * f] = order[t];
                span_cell[2 * f + 1] = i;
            }
    }
    span_first[0] = 0;
    span_first[nmax + 1] = f;
    double t0 = clock_seconds();
    st = score_lexicon(p, words, n, gold, nsent, word0, nwords, threads, lex);
    p->times.lexicon += clock_seconds() - t0;
    if (!st) {
        char *dm = p->buf[B_META].p;
        prune_dev_batch b = {.nsent = nsent, .nlevel = nlevel, .nsym0 = c->level[0]->nsym,
                             .tot_max = p->tot_max, .fine_tot = ftot,
                             .maxsub = p->maxsub,
                             .fine_nsub = p->fine_nsub, .fine_off = p->fine_off,
                             .n = (int *)(dm + 2 * (size_t)nsent * sizeof(long long)),
                             .order = (int *)(dm + 2 * (size_t)nsent * sizeof(long long)) + nsent,
                             .span_cell = (int *)(dm + 2 * (size_t)nsent * sizeof(long long)) +
                                          2 * (size_t)nsent,
                             .cell0 = (long long *)dm,
                             .word0 = (long long *)dm + nsent,
                             .lex = p->buf[B_LEX].p, .lex_width = p->lex_width,
                             .vi = p->buf[B_VI].p, .vo = p->buf[B_VO].p,
                             .in = p->buf[B_IN].p, .out = p->buf[B_OUT].p,
                             .state = p->buf[B_STATE].p, .sub = p->buf[B_SUB].p,
                             .sub2 = p->buf[B_SUB2].p,
                             .lbits = p->buf[B_LBITS].p, .rbits = p->buf[B_RBITS].p,
                             .nword = nword,
                             .fine_sub = p->buf[B_FINE].p,
                             .stats = p->buf[B_STATS].p, .hash = levels};
        for (int k = 0; k < nlevel; k++) {
            b.lex_at[k] = p->lex_at[k];
            b.threshold[k] = prune_threshold(mode, k);
        }
        cudaStream_t s = p->stream;
        st = GPU_STATUS(cudaEventRecord(p->ev[0], s));
        if (!st)
            st = GPU_STATUS(cudaMemcpyAsync(dm, hm, meta, cudaMemcpyHostToDevice, s));
        if (!st)
            st = GPU_STATUS(
                cudaMemcpyAsync(p->buf[B_LEX].p, lex, lex_bytes, cudaMemcpyHostToDevice, s));
        if (!st)
            st = GPU_STATUS(cudaMemsetAsync(b.stats, 0, stats_bytes, s));
        if (!st)
            st = GPU_STATUS(cudaEventRecord(p->ev[1], s));
        if (!st)
            st = GPU_STATUS(prune_dev_launch(p->dlv, &b, span_first, nmax, s));
        if (!st)
            st = GPU_STATUS(cudaEventRecord(p->ev[2], s));
        if (!st)
            st = GPU_STATUS(cudaMemcpyAsync(hstate, b.state, state_bytes, cudaMemcpyDeviceToHost, s));
        if (!st)
            st = GPU_STATUS(cudaMemcpyAsync(hfine, b.fine_sub, fine_bytes, cudaMemcpyDeviceToHost, s));
        if (!st)
            st = GPU_STATUS(cudaMemcpyAsync(hstats, b.stats, stats_bytes, cudaMemcpyDeviceToHost, s));
        if (!st)
            st = GPU_STATUS(cudaEventRecord(p->ev[3], s));
        if (!st)
            st = GPU_STATUS(cudaStreamSynchronize(s));
        float ms[3] = {0, 0, 0};
        for (int k = 0; k < 3 && !st; k++)
            st = GPU_STATUS(cudaEventElapsedTime(&ms[k], p->ev[k], p->ev[k + 1]));
        p->times.upload += ms[0] * 1e-3;
        p->times.kernel += ms[1] * 1e-3;
        p->times.download += ms[2] * 1e-3;
    }
    t0 = clock_seconds();
    unpackjob uj = {p, n, cell0, hstate, hfine, hstats, out};
    if (!st)
        st = workers_for(threads, nsent, unpack_sentence, &uj);
    p->times.unpack += clock_seconds() - t0;
    free(span_first);
    return st;
}

cky_status prune_gpu_build_masks(prune_gpu *p, char *const *const *words, const int *n,
                                 const int *const *gold, int nsent, prune_mode mode,
                                 int levels, int threads, prune_mask *out)
{
    double t0 = clock_seconds();
    memset(out, 0, (size_t)nsent * sizeof *out);
    GPU_CHECK(cudaSetDevice(p->device));
    size_t per_cell = cell_bytes(p), per_word = (size_t)p->lex_width * sizeof(double);
    size_t per_row = 2 * (size_t)p->fine->nsym * sizeof(unsigned long long); /* a bit set word */
    for (int k = 0; k < nsent; k++)
        if (n[k] < 1)
            return cky_fail(CKY_ERR_ARG, "prune: a sentence needs at least one word");
    int first = 0;
    while (first < nsent) { /* batches within BATCH_BYTES (at least one sentence each) */
        size_t bytes = 0, rows = 0; /* rows: of the bit sets, n + 1 a sentence */
        int last = first, nmax = 0;
        while (last < nsent) {
            size_t b = chart_ncells(n[last]) * per_cell + (size_t)n[last] * per_word;
            int m = n[last] > nmax ? n[last] : nmax;
            size_t bits = (rows + n[last] + 1) * per_row * (size_t)((m + 64) / 64);
            if (last > first && bytes + b + bits > BATCH_BYTES)
                break;
            bytes += b;
            rows += (size_t)n[last] + 1;
            nmax = m;
            last++;
        }
        cky_status st = run_batch(p, words + first, n + first, gold ? gold + first : NULL,
                                  last - first, mode, levels, threads, out + first);
        if (st) {
            for (int k = 0; k < nsent; k++)
                prune_free_mask(&out[k]);
            return st;
        }
        first = last;
    }
    p->times.total += clock_seconds() - t0;
    return CKY_OK;
}

prune_gpu_times prune_gpu_times_of(const prune_gpu *p) { return p->times; }
