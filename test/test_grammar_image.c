/* Tests of the grammar image (grammar/image.c, grammar/image_cache.c): a grammar read back
 * from its image equals the parsed one in every field and every score bit (a text export and
 * a native .gr file), the cache maps it on the second load, and a damaged, truncated, foreign
 * or stale image is never used. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../grammar/cascade.h"
#include "../grammar/grammar.h"
#include "../grammar/image.h"

#define GRAMMARS CKY_SHARED "/grammars/"
#define TEXT_SM1 GRAMMARS "sample-sm1/sample-sm1"
#define NATIVE_SM1 GRAMMARS "sample-sm1/sample-sm1.gr"
#define NATIVE_SM3 GRAMMARS "sample-sm3/sample-sm3.gr"

static grammar *load_source(const char *spec)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_source(spec, &g), CKY_OK, "%s", cky_last_error());
    return g;
}

static void same_bytes(const void *a, const void *b, size_t n, const char *what, int i)
{
    cr_assert(n == 0 || memcmp(a, b, n) == 0, "%s %d differs", what, i);
}

static void compare_sum(const grammar *a, const grammar *b)
{
    cr_assert_eq(a->sum == NULL, b->sum == NULL);
    if (!a->sum)
        return;
    const grammar_sum_closure *x = a->sum, *y = b->sum;
    cr_assert_eq(x->n, y->n);
    cr_assert_eq(x->max_closure, y->max_closure);
    for (int i = 0; i < x->n; i++) {
        cr_assert_eq(x->rule[i].parent, y->rule[i].parent);
        cr_assert_eq(x->rule[i].child, y->rule[i].child);
        same_bytes(x->rule[i].prob, y->rule[i].prob,
                   (size_t)a->nsub[x->rule[i].parent] * a->nsub[x->rule[i].child] *
                       sizeof(double), "sum rule", i);
    }
    size_t n1 = ((size_t)a->nsym + 1) * sizeof(int);
    same_bytes(x->first, y->first, n1, "sum first", 0);
    same_bytes(x->child_first, y->child_first, n1, "sum child_first", 0);
    same_bytes(x->by_child, y->by_child, (size_t)x->n * sizeof(int), "sum by_child", 0);
    same_bytes(x->path, y->path, (size_t)a->nsym * a->nsym * sizeof(int), "sum path", 0);
}

/* Lexical scores of words (known, rare, unknown with several signatures) at two positions. */
static void compare_words(const grammar *a, const grammar *b)
{
    static const char *const words[] = {"the", "company", "said", "Xylophonic", "unpredictably",
                                        "1987", "U.S.", "-LRB-", "co-operate", "'s", ","};
    double *x = malloc((size_t)a->nsub_total * sizeof *x);
    double *y = malloc((size_t)a->nsub_total * sizeof *y);
    for (size_t w = 0; w < sizeof words / sizeof *words; w++)
        for (int loc = 0; loc < 2; loc++) {
            cr_assert_eq(grammar_score_word(a, words[w], loc, x), CKY_OK);
            cr_assert_eq(grammar_score_word(b, words[w], loc, y), CKY_OK);
            same_bytes(x, y, (size_t)a->nsub_total * sizeof *x, "word score", (int)w);
        }
    free(x);
    free(y);
}

static void compare_grammars(const grammar *a, const grammar *b);

/* The coarse-to-fine cascades: every level a grammar equal in every bit, the same child maps. */
static void compare_cascades(const grammar *a, const grammar *b)
{
    const grammar_cascade *x = grammar_cascade_of(a), *y = grammar_cascade_of(b);
    cr_assert_eq(x == NULL, y == NULL, "a cascade in one grammar only");
    if (!x)
        return;
    cr_assert_eq(x->nlevel, y->nlevel);
    for (int k = 0; k < x->nlevel; k++) {
        cr_assert_null(x->level[k]->cascade);
        compare_grammars(x->level[k], y->level[k]);
        if (k == 0)
            continue;
        size_t n = (size_t)x->level[k]->nsub_total * sizeof(int);
        same_bytes(x->lchild[k], y->lchild[k], n, "cascade lchild", k);
        same_bytes(x->rchild[k], y->rchild[k], n, "cascade rchild", k);
    }
}

/* Every field of the grammar, every score bit. */
static void compare_grammars(const grammar *a, const grammar *b)
{
    cr_assert_eq(a->nsym, b->nsym);
    cr_assert_eq(a->nsub_total, b->nsub_total);
    for (int s = 0; s < a->nsym; s++)
        cr_assert_str_eq(a->name[s], b->name[s]);
    same_bytes(a->nsub, b->nsub, (size_t)a->nsym * sizeof(int), "nsub", 0);
    same_bytes(a->sub_offset, b->sub_offset, (size_t)a->nsym * sizeof(int), "sub_offset", 0);
    same_bytes(a->phrasal, b->phrasal, (size_t)a->nsym, "phrasal", 0);
    cr_assert_eq(a->nbinary, b->nbinary);
    cr_assert_eq(a->nunary, b->nunary);
    for (int i = 0; i < a->nbinary; i++) {
        const grammar_binary *x = &a->binary[i], *y = &b->binary[i];
        cr_assert(x->parent == y->parent && x->left == y->left && x->right == y->right &&
                  x->nrow == y->nrow, "binary rule %d", i);
        size_t cells = (size_t)x->nrow * a->nsub[x->parent];
        same_bytes(x->row_l, y->row_l, (size_t)x->nrow * sizeof(int), "binary row_l", i);
        same_bytes(x->row_r, y->row_r, (size_t)x->nrow * sizeof(int), "binary row_r", i);
        same_bytes(x->score, y->score, cells * sizeof(double), "binary score", i);
        cr_assert_eq(x->prob == NULL, y->prob == NULL, "binary prob %d: present in one", i);
        if (x->prob)
            same_bytes(x->prob, y->prob, cells * sizeof(double), "binary prob", i);
    }
    for (int i = 0; i < a->nunary; i++) {
        const grammar_unary *x = &a->unary[i], *y = &b->unary[i];
        cr_assert(x->parent == y->parent && x->child == y->child, "unary rule %d", i);
        same_bytes(x->score, y->score,
                   (size_t)a->nsub[x->parent] * a->nsub[x->child] * sizeof(double),
                   "unary score", i);
    }
    size_t n1 = ((size_t)a->nsym + 1) * sizeof(int);
    same_bytes(a->binary_first, b->binary_first, n1, "binary_first", 0);
    same_bytes(a->unary_first, b->unary_first, n1, "unary_first", 0);
    compare_sum(a, b);
    compare_words(a, b);
    compare_cascades(a, b);
}

/* Parse `spec`, build its image, open it: equal to the parsed grammar, and its own image is
 * byte for byte the first one (so the lexicon's every array came back too). */
static void round_trip(const char *spec)
{
    grammar *g = load_source(spec), *h = NULL;
    unsigned char *img, *again;
    size_t len, len2;
    cr_assert_eq(grammar_image_build(g, 42, &img, &len), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(grammar_image_open(img, len, 42, spec, 0, &h), CKY_OK, "%s", cky_last_error());
    compare_grammars(g, h);
    cr_assert_str_eq(h->source, spec);
    cr_assert_eq(grammar_image_build(h, 42, &again, &len2), CKY_OK);
    cr_assert(len == len2 && memcmp(img, again, len) == 0, "image of the image differs");
    grammar_free(h);
    /* another key, every truncation and a flipped bit anywhere are refused */
    cr_assert_eq(grammar_image_open(img, len, 43, spec, 0, &h), CKY_ERR_FORMAT);
    for (size_t cut = 0; cut < len; cut += len / 97 + 1)
        cr_assert_eq(grammar_image_open(img, cut, 42, spec, 0, &h), CKY_ERR_FORMAT, "cut %zu",
                     cut);
    for (size_t at = 0; at < len; at += len / 89 + 1) {
        img[at] ^= 0x10;
        cr_assert_eq(grammar_image_open(img, len, 42, spec, 0, &h), CKY_ERR_FORMAT, "bit at %zu",
                     at);
        img[at] ^= 0x10;
    }
    free(again);
    free(img);
    grammar_free(g);
}

Test(grammar_image, text_export_round_trip) { round_trip(TEXT_SM1); }

Test(grammar_image, native_round_trip) { round_trip(NATIVE_SM1); }

/* sample-sm3: a cascade of three levels (X-bar, 2 and 4 substates), child maps included. */
Test(grammar_image, native_cascade_round_trip, .timeout = 600)
{
    grammar *g = load_source(NATIVE_SM3);
    const grammar_cascade *c = grammar_cascade_of(g);
    cr_assert_not_null(c);
    cr_assert_eq(c->nlevel, 3);
    for (int s = 0; s < g->nsym; s++)
        cr_assert_eq(c->level[0]->nsub[s], 1, "level 0 is X-bar");
    grammar_free(g);
    round_trip(NATIVE_SM3);
}

/* A temp folder holding copies of the sample-sm1 text export, and a cache inside it. */
static char dir[] = "/tmp/cky-gimg-XXXXXX";

static void run(const char *fmt, const char *arg)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, arg, arg, arg);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static int count_images(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/cache/*.gimg 2>/dev/null | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    cr_assert(p && fscanf(p, "%d", &n) == 1);
    pclose(p);
    return n;
}

static grammar *load_cached(int mapped)
{
    char spec[128], cache[128];
    snprintf(spec, sizeof spec, "%s/g", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    grammar *g = NULL;
    cr_assert_eq(grammar_load_cached(spec, cache, &g), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(g->image != NULL, mapped, "image %s", mapped ? "not used" : "used");
    cr_assert_eq(count_images(), 1);
    return g;
}

Test(grammar_image, cache_maps_then_rebuilds_damaged_and_stale)
{
    cr_assert(mkdtemp(dir));
    run("for f in grammar lexicon words; do cp " TEXT_SM1 ".$f.gz %s/g.$f.gz; done", dir);
    grammar *src = load_source(TEXT_SM1);
    grammar_free(load_cached(0)); /* parsed, image written */
    grammar *g = load_cached(1);  /* mapped */
    compare_grammars(src, g);
    grammar_free(g);
    /* damage the image in the middle: refused, parsed, rewritten */
    run("f=$(ls %s/cache/*.gimg); printf 'XXXXXXXX' | dd of=$f bs=1 seek=$(($(stat -c %%s $f) / 2))"
        " conv=notrunc status=none", dir);
    grammar_free(load_cached(0));
    grammar_free(load_cached(1));
    /* truncated: likewise */
    run("f=$(ls %s/cache/*.gimg); truncate -s 1000 $f", dir);
    grammar_free(load_cached(0));
    grammar_free(load_cached(1));
    /* a source file rewritten (same content, new ctime): a new image replaces the old */
    usleep(20000);
    run("cp " TEXT_SM1 ".words.gz %s/g.words.gz", dir);
    grammar_free(load_cached(0));
    g = load_cached(1);
    compare_grammars(src, g);
    grammar_free(g);
    grammar_free(src);
    run("rm -rf %s", dir);
}

Test(grammar_image, off_never_writes)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_cached(TEXT_SM1, "off", &g), CKY_OK, "%s", cky_last_error());
    cr_assert_null(g->image);
    grammar_free(g);
}
