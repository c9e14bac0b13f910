/* image: the binary image of a loaded grammar (see image.h): the buffer and cursor, the
 * grammar's own fields and the sum closure. The lexicons save and restore themselves. */
#include "image.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../util/workers.h"
#include "cascade_src.h"

#define IMG_MAGIC "CKYGRAM" /* with its NUL, 8 bytes */
#define IMG_FORMAT 6u /* 3: text exports carry a sum closure (max_closure saved); 4: the
                         coarse-to-fine cascade of a native grammar; 5: the raw unary rules
                         beside the sum closure; 6: log scores from Java's Math.log
                         (util/jmath), no longer the C library's log */
#define IMG_MAX_SUB 4096 /* builder_add_symbol's limit */

typedef struct img_header {
    char magic[8];
    uint32_t format, header_size;
    uint64_t key;
    uint64_t payload;  /* bytes after the header */
    uint64_t checksum; /* grammar_image_checksum of the payload */
} img_header;

_Static_assert(sizeof(img_header) == 40, "img_header must have no padding");

/* ---- buffer and cursor ---- */

void img_put(img_out *w, const void *data, size_t bytes)
{
    size_t padded = (bytes + 7) & ~(size_t)7;
    if (w->failed)
        return;
    if (w->n + padded > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 1 << 16;
        while (cap < w->n + padded)
            cap *= 2;
        unsigned char *p = realloc(w->p, cap);
        if (!p) {
            w->failed = 1;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    if (data && bytes)
        memcpy(w->p + w->n, data, bytes);
    else
        memset(w->p + w->n, 0, bytes);
    memset(w->p + w->n + bytes, 0, padded - bytes);
    w->n += padded;
}

void img_put_i64(img_out *w, int64_t v) { img_put(w, &v, sizeof v); }

const void *img_get(img_in *in, size_t bytes)
{
    size_t padded = (bytes + 7) & ~(size_t)7;
    if (in->bad || padded < bytes || padded > in->n - in->at) {
        in->bad = 1;
        return NULL;
    }
    const void *p = in->p + in->at;
    in->at += padded;
    return p;
}

int64_t img_get_i64(img_in *in, int64_t lo, int64_t hi)
{
    const void *p = img_get(in, sizeof(int64_t));
    int64_t v;
    if (!p)
        return lo;
    memcpy(&v, p, sizeof v);
    if (v < lo || v > hi) {
        in->bad = 1;
        return lo;
    }
    return v;
}

void *img_get_copy(img_in *in, size_t bytes, int *nomem)
{
    const void *src = img_get(in, bytes);
    if (!src)
        return NULL;
    void *d = malloc(bytes ? bytes : 1);
    if (!d) {
        *nomem = 1;
        return NULL;
    }
    memcpy(d, src, bytes);
    return d;
}

/* The digest of one chunk: four FNV-style lanes over 64-bit words, the tail bytewise. */
static uint64_t chunk_digest(const unsigned char *p, size_t len)
{
    uint64_t h[4] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL, 0x9e3779b97f4a7c15ULL,
                     0xc2b2ae3d27d4eb4fULL};
    size_t i = 0;
    for (; i + 32 <= len; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t v;
            memcpy(&v, p + i + 8 * k, 8);
            h[k] = (h[k] ^ v) * 0x100000001b3ULL;
            h[k] ^= h[k] >> 29;
        }
    uint64_t r = h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7);
    for (; i < len; i++)
        r = (r ^ p[i]) * 0x100000001b3ULL;
    return r ^ len;
}

#define IMG_CHUNK ((size_t)8 << 20) /* bytes per chunk digest */

typedef struct digest_work {
    const unsigned char *p;
    size_t len, nchunk;
    uint64_t *digest;
    atomic_size_t next;
} digest_work;

/* The digest of chunk c of data[0..len). */
static uint64_t chunk_at(const unsigned char *p, size_t len, size_t c)
{
    size_t at = c * IMG_CHUNK;
    return chunk_digest(p + at, len - at < IMG_CHUNK ? len - at : IMG_CHUNK);
}

static void *digest_worker(void *arg)
{
    digest_work *w = arg;
    for (size_t c; (c = atomic_fetch_add(&w->next, 1)) < w->nchunk;)
        w->digest[c] = chunk_at(w->p, w->len, c);
    return NULL;
}

uint64_t grammar_image_checksum(const void *data, size_t len)
{
    size_t nchunk = len / IMG_CHUNK + 1;
    uint64_t *digest = malloc(nchunk * sizeof *digest);
    if (digest) {
        digest_work w = {data, len, nchunk, digest, 0};
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        size_t threads = cores < 1 ? 1 : (size_t)cores < nchunk ? (size_t)cores : nchunk;
        workers_run((int)threads, digest_worker, &w);
    }
    uint64_t r = 0xcbf29ce484222325ULL;
    for (size_t c = 0; c < nchunk; c++) /* out of memory: one chunk after the other */
        r = (r ^ (digest ? digest[c] : chunk_at(data, len, c))) * 0x100000001b3ULL;
    free(digest);
    return r;
}

/* ---- writing ---- */

static void save_ints(img_out *w, const int *v, size_t n) { img_put(w, v, n * sizeof *v); }

static void save_sum(img_out *w, const grammar *g, const grammar_sum_closure *s)
{
    img_put_i64(w, s->n);
    img_put_i64(w, s->max_closure);
    for (int i = 0; i < s->n; i++) {
        int pc[2] = {s->rule[i].parent, s->rule[i].child};
        save_ints(w, pc, 2);
        img_put(w, s->rule[i].prob,
                (size_t)g->nsub[pc[0]] * g->nsub[pc[1]] * sizeof *s->rule[i].prob);
    }
    save_ints(w, s->first, (size_t)g->nsym + 1);
    save_ints(w, s->by_child, (size_t)s->n);
    save_ints(w, s->child_first, (size_t)g->nsym + 1);
    save_ints(w, s->path, (size_t)g->nsym * g->nsym);
    img_put_i64(w, s->raw_first ? s->nraw : -1);
    for (int i = 0; s->raw_first && i < s->nraw; i++) {
        int pc[2] = {s->raw[i].parent, s->raw[i].child};
        save_ints(w, pc, 2);
        img_put(w, s->raw[i].prob,
                (size_t)g->nsub[pc[0]] * g->nsub[pc[1]] * sizeof *s->raw[i].prob);
    }
    if (s->raw_first)
        save_ints(w, s->raw_first, (size_t)g->nsym + 1);
}

/* A grammar's own fields, rules, sum closure and lexicon (not its cascade). */
static void save_grammar(img_out *w, const grammar *g)
{
    int64_t head[6] = {g->nsym, g->nsub_total, g->nbinary, g->nunary, g->sum != NULL,
                       g->lexicon->kind};
    img_put(w, head, sizeof head);
    save_ints(w, g->nsub, (size_t)g->nsym);
    img_put(w, g->phrasal, (size_t)g->nsym);
    for (int s = 0; s < g->nsym; s++) {
        img_put_i64(w, (int64_t)strlen(g->name[s]));
        img_put(w, g->name[s], strlen(g->name[s]));
    }
    for (int i = 0; i < g->nbinary; i++) {
        const grammar_binary *r = &g->binary[i];
        int rule_head[5] = {r->parent, r->left, r->right, r->nrow, r->prob != NULL};
        size_t cells = (size_t)r->nrow * g->nsub[r->parent];
        save_ints(w, rule_head, 5);
        save_ints(w, r->row_l, (size_t)r->nrow);
        save_ints(w, r->row_r, (size_t)r->nrow);
        img_put(w, r->score, cells * sizeof *r->score);
        if (r->prob) /* only grammars with the sum closure keep the linear table */
            img_put(w, r->prob, cells * sizeof *r->prob);
    }
    save_ints(w, g->binary_first, (size_t)g->nsym + 1);
    for (int i = 0; i < g->nunary; i++) {
        const grammar_unary *r = &g->unary[i];
        int pc[2] = {r->parent, r->child};
        save_ints(w, pc, 2);
        img_put(w, r->score, (size_t)g->nsub[r->parent] * g->nsub[r->child] * sizeof *r->score);
    }
    save_ints(w, g->unary_first, (size_t)g->nsym + 1);
    if (g->sum)
        save_sum(w, g, g->sum);
    g->lexicon->save(g->lexicon, w);
}

/* The cascade: its level count, then each level's grammar and child maps. */
static void save_cascade(img_out *w, const grammar_cascade *c)
{
    img_put_i64(w, c ? c->nlevel : 0);
    for (int k = 0; c && k < c->nlevel; k++) {
        save_grammar(w, c->level[k]);
        if (k >= 1) {
            save_ints(w, c->lchild[k], (size_t)c->level[k]->nsub_total);
            save_ints(w, c->rchild[k], (size_t)c->level[k]->nsub_total);
        }
    }
}

cky_status grammar_image_build(const grammar *g, uint64_t key, unsigned char **buf, size_t *len)
{
    const grammar_cascade *c = g->cascade;
    if (!g->lexicon->save)
        return cky_fail(CKY_ERR_UNSUPPORTED, "this lexicon has no image");
    for (int k = 0; c && k < c->nlevel; k++)
        if (!c->level[k]->lexicon->save)
            return cky_fail(CKY_ERR_UNSUPPORTED, "this lexicon has no image");
    img_out w = {0};
    img_header h;
    memset(&h, 0, sizeof h);
    img_put(&w, &h, sizeof h);
    save_grammar(&w, g);
    save_cascade(&w, c);
    if (w.failed) {
        free(w.p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    memcpy(h.magic, IMG_MAGIC, 8);
    h.format = IMG_FORMAT;
    h.header_size = sizeof h;
    h.key = key;
    h.payload = w.n - sizeof h;
    h.checksum = grammar_image_checksum(w.p + sizeof h, w.n - sizeof h);
    memcpy(w.p, &h, sizeof h);
    *buf = w.p;
    *len = w.n;
    return CKY_OK;
}

/* ---- reading ---- */

/* n ints, each in [lo, hi], copied (malloc'ed) or pointed to (copy = 0); NULL when bad. */
static int *get_ints(img_in *in, size_t n, int lo, int hi, int copy, int *nomem)
{
    const int *v = img_get(in, n * sizeof(int));
    for (size_t i = 0; v && i < n; i++)
        if (v[i] < lo || v[i] > hi)
            in->bad = 1;
    if (!v || in->bad)
        return NULL;
    if (!copy)
        return (int *)v;
    int *d = malloc((n ? n : 1) * sizeof *d);
    if (d)
        memcpy(d, v, n * sizeof *d);
    else
        *nomem = 1;
    return d;
}

/* An index [nsym + 1] over n items grouped by owner: first[0] = 0, ascending, last = n. */
static int *get_index(img_in *in, int nsym, int n, int *nomem)
{
    int *first = get_ints(in, (size_t)nsym + 1, 0, n, 1, nomem);
    if (first && (first[0] != 0 || first[nsym] != n))
        in->bad = 1;
    for (int s = 0; first && s < nsym; s++)
        if (first[s] > first[s + 1])
            in->bad = 1;
    return first;
}

static void open_symbols(img_in *in, grammar *g, int *nomem)
{
    g->nsub = get_ints(in, (size_t)g->nsym, 1, IMG_MAX_SUB, 1, nomem);
    g->phrasal = img_get_copy(in, (size_t)g->nsym, nomem);
    g->sub_offset = malloc((size_t)g->nsym * sizeof *g->sub_offset);
    g->name = calloc((size_t)g->nsym, sizeof *g->name);
    if (!g->sub_offset || !g->name)
        *nomem = 1;
    if (!g->nsub || !g->phrasal || !g->sub_offset || !g->name)
        return;
    int total = 0;
    for (int s = 0; s < g->nsym; s++) {
        g->sub_offset[s] = total;
        total += g->nsub[s];
        size_t len = (size_t)img_get_i64(in, 0, 1 << 20);
        const char *c = img_get(in, len);
        if (!c)
            return;
        if (!(g->name[s] = strndup(c, len)))
            *nomem = 1;
    }
    if (total != g->nsub_total || strcmp(g->name[0] ? g->name[0] : "", "ROOT"))
        in->bad = 1;
}

static void open_binary(img_in *in, grammar *g, int *nomem)
{
    for (int i = 0; i < g->nbinary && !in->bad; i++) {
        grammar_binary *r = &g->binary[i];
        const int *h = get_ints(in, 5, 0, 1 << 30, 0, nomem);
        if (!h || h[0] >= g->nsym || h[1] >= g->nsym || h[2] >= g->nsym ||
            h[3] > g->nsub[h[1]] * g->nsub[h[2]] || h[4] > 1) {
            in->bad = 1;
            return;
        }
        r->parent = h[0], r->left = h[1], r->right = h[2], r->nrow = h[3];
        size_t cells = (size_t)r->nrow * g->nsub[r->parent];
        r->row_l = get_ints(in, (size_t)r->nrow, 0, g->nsub[r->left] - 1, 0, nomem);
        r->row_r = get_ints(in, (size_t)r->nrow, 0, g->nsub[r->right] - 1, 0, nomem);
        r->score = (double *)img_get(in, cells * sizeof(double));
        r->prob = h[4] ? (double *)img_get(in, cells * sizeof(double)) : NULL;
    }
    if (!in->bad && (g->binary_first = get_index(in, g->nsym, g->nbinary, nomem)))
        for (int s = 0; s < g->nsym; s++)
            for (int i = g->binary_first[s]; i < g->binary_first[s + 1]; i++)
                if (g->binary[i].parent != s)
                    in->bad = 1;
}

static void open_unary(img_in *in, grammar *g, int *nomem)
{
    for (int i = 0; i < g->nunary && !in->bad; i++) {
        grammar_unary *r = &g->unary[i];
        const int *pc = get_ints(in, 2, 0, g->nsym - 1, 0, nomem);
        if (!pc)
            return;
        r->parent = pc[0], r->child = pc[1];
        r->score = (double *)img_get(in, (size_t)g->nsub[pc[0]] * g->nsub[pc[1]] *
                                             sizeof(double));
    }
    if (!in->bad && (g->unary_first = get_index(in, g->nsym, g->nunary, nomem)))
        for (int s = 0; s < g->nsym; s++)
            for (int i = g->unary_first[s]; i < g->unary_first[s + 1]; i++)
                if (g->unary[i].parent != s)
                    in->bad = 1;
}

static grammar_sum_closure *open_sum(img_in *in, const grammar *g, int *nomem)
{
    grammar_sum_closure *s = calloc(1, sizeof *s);
    int n = (int)img_get_i64(in, 0, 1 << 28);
    if (!s || !(s->rule = calloc((size_t)n + 1, sizeof *s->rule))) {
        *nomem = 1;
        free(s);
        return NULL;
    }
    s->n = n;
    s->max_closure = (int)img_get_i64(in, 0, 1);
    for (int i = 0; i < n && !in->bad; i++) {
        const int *pc = get_ints(in, 2, 0, g->nsym - 1, 0, nomem);
        if (!pc)
            break;
        s->rule[i].parent = pc[0], s->rule[i].child = pc[1];
        s->rule[i].prob = img_get_copy(in, (size_t)g->nsub[pc[0]] * g->nsub[pc[1]] *
                                               sizeof(double), nomem);
    }
    if (!in->bad) {
        s->first = get_index(in, g->nsym, n, nomem);
        s->by_child = get_ints(in, (size_t)n, 0, n - 1, 1, nomem);
        s->child_first = get_index(in, g->nsym, n, nomem);
        s->path = get_ints(in, (size_t)g->nsym * g->nsym, -1, g->nsym - 1, 1, nomem);
    }
    int nraw = in->bad ? -1 : (int)img_get_i64(in, -1, 1 << 28);
    if (nraw >= 0 && !in->bad && !(s->raw = calloc((size_t)nraw + 1, sizeof *s->raw)))
        *nomem = 1;
    for (int i = 0; nraw >= 0 && s->raw && i < nraw && !in->bad; i++) {
        const int *pc = get_ints(in, 2, 0, g->nsym - 1, 0, nomem);
        if (!pc)
            break;
        s->raw[i].parent = pc[0], s->raw[i].child = pc[1];
        s->raw[i].prob = img_get_copy(in, (size_t)g->nsub[pc[0]] * g->nsub[pc[1]] *
                                              sizeof(double), nomem);
        s->nraw = i + 1;
    }
    if (nraw >= 0 && s->raw && !in->bad)
        s->raw_first = get_index(in, g->nsym, nraw, nomem);
    return s;
}

/* One grammar (save_grammar's part) from the cursor; its tables point into data[0..len). */
static cky_status open_grammar(img_in *in, void *data, size_t len, const char *source,
                               grammar **out)
{
    grammar *g = calloc(1, sizeof *g);
    if (!g)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    int nomem = 0;
    g->image_size = len;
    g->image_data = data;
    g->nsym = (int)img_get_i64(in, 1, 1 << 20);
    g->nsub_total = (int)img_get_i64(in, 1, 1 << 30);
    g->nbinary = (int)img_get_i64(in, 0, 1 << 28);
    g->nunary = (int)img_get_i64(in, 0, 1 << 28);
    int has_sum = (int)img_get_i64(in, 0, 1);
    int kind = (int)img_get_i64(in, IMG_LEXICON_TEXT, IMG_LEXICON_BERKELEY);
    g->binary = calloc((size_t)g->nbinary + 1, sizeof *g->binary);
    g->unary = calloc((size_t)g->nunary + 1, sizeof *g->unary);
    g->source = strdup(source);
    if (!g->binary || !g->unary || !g->source)
        nomem = 1;
    if (!in->bad && !nomem)
        open_symbols(in, g, &nomem);
    if (!in->bad && !nomem)
        open_binary(in, g, &nomem);
    for (int i = 0; i < g->nbinary && !in->bad && !nomem; i++)
        if ((g->binary[i].prob != NULL) != has_sum) /* linear tables iff the sum closure */
            in->bad = 1;
    if (!in->bad && !nomem)
        open_unary(in, g, &nomem);
    if (!in->bad && !nomem && has_sum)
        g->sum = open_sum(in, g, &nomem);
    cky_status st = CKY_OK;
    if (!in->bad && !nomem)
        st = kind == IMG_LEXICON_TEXT ? lexicon_text_restore(in, g, &g->lexicon)
                                      : lexicon_berkeley_restore(in, g, &g->lexicon);
    if (!st && nomem)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    else if (!st && in->bad)
        st = cky_fail(CKY_ERR_FORMAT, "grammar image: inconsistent contents");
    *out = g; /* also on failure: the caller frees it */
    return st;
}

/* 1 if every child of level k (lchild/rchild) is a substate of the next level. */
static int maps_valid(const grammar_cascade *c, int k, const grammar *fine)
{
    const grammar *g = c->level[k], *next = k + 1 < c->nlevel ? c->level[k + 1] : fine;
    if (next->nsym != g->nsym)
        return 0;
    for (int s = 0; s < g->nsym; s++)
        for (int x = g->sub_offset[s]; x < g->sub_offset[s] + g->nsub[s]; x++)
            if (c->lchild[k][x] >= next->nsub[s] || c->rchild[k][x] >= next->nsub[s])
                return 0;
    return 1;
}

/* The cascade of g (save_cascade's part), or none. */
static cky_status open_cascade(img_in *in, grammar *g, void *data, size_t len)
{
    int n = (int)img_get_i64(in, 0, 64), nomem = 0;
    if (n == 0 || in->bad)
        return CKY_OK;
    grammar_cascade *c = calloc(1, sizeof *c);
    if (!c || !(c->level = calloc((size_t)n, sizeof *c->level)) ||
        !(c->lchild = calloc((size_t)n, sizeof *c->lchild)) ||
        !(c->rchild = calloc((size_t)n, sizeof *c->rchild))) {
        grammar_cascade_free(c);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    c->nlevel = n;
    g->cascade = c;
    for (int k = 0; k < n; k++) {
        cky_status st = open_grammar(in, data, len, g->source, &c->level[k]);
        if (st)
            return st;
        const grammar *lg = c->level[k];
        if (lg->nsym != g->nsym || lg->sum)
            in->bad = 1;
        if (k >= 1 && !in->bad) {
            c->lchild[k] = get_ints(in, (size_t)lg->nsub_total, 0, IMG_MAX_SUB, 1, &nomem);
            c->rchild[k] = get_ints(in, (size_t)lg->nsub_total, 0, IMG_MAX_SUB, 1, &nomem);
        }
        if (nomem)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        if (in->bad)
            return cky_fail(CKY_ERR_FORMAT, "grammar image: inconsistent cascade");
    }
    for (int k = 1; k < n; k++)
        if (!maps_valid(c, k, g))
            return cky_fail(CKY_ERR_FORMAT, "grammar image: inconsistent cascade maps");
    return CKY_OK;
}

cky_status grammar_image_open(void *data, size_t len, uint64_t key, const char *source,
                              int owned, grammar **out)
{
    img_header h;
    if (len < sizeof h)
        return cky_fail(CKY_ERR_FORMAT, "grammar image: too short");
    memcpy(&h, data, sizeof h);
    if (memcmp(h.magic, IMG_MAGIC, 8) || h.format != IMG_FORMAT || h.header_size != sizeof h ||
        h.key != key || h.payload != len - sizeof h ||
        h.checksum != grammar_image_checksum((unsigned char *)data + sizeof h, h.payload))
        return cky_fail(CKY_ERR_FORMAT, "grammar image: stale, foreign or damaged");
    img_in in = {(unsigned char *)data, len, sizeof h, 0};
    grammar *g = NULL;
    cky_status st = open_grammar(&in, data, len, source, &g);
    if (!st)
        st = open_cascade(&in, g, data, len);
    if (!st && (in.bad || in.at != in.n))
        st = cky_fail(CKY_ERR_FORMAT, "grammar image: inconsistent contents");
    if (st) {
        grammar_free(g); /* what was allocated around the tables in data (not freed) */
        return st;
    }
    g->image = owned ? data : NULL;
    *out = g;
    return CKY_OK;
}

int grammar_image_owns(const grammar *g, const void *p)
{
    const unsigned char *c = p, *base = g->image_data;
    return base && c >= base && c < base + g->image_size;
}

void grammar_image_release(grammar *g)
{
    if (g->image)
        munmap(g->image, g->image_size);
    g->image = NULL;
}
