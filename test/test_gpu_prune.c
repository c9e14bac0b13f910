/* The cascade on the GPU (prune/prune_gpu.h) against the Berkeley parser's masks and the ref
 * engine's: for every dev sentence, with sample-sm1, sm3, sm5 and sm6, in each of the twelve
 * reference files (fast, -viterbi, -accurate), every level's counts and hash equal the
 * file's rows, and the fine mask is the ref engine's (prune_build_mask) byte for byte; on
 * train.txt sentences (no reference file has them) every level and the fine mask equal the
 * ref engine's; one batch of everything and batches of a few sentences give the same
 * masks; gold tags restrict the device's lexicon as the ref's; through the parser, the gpu
 * engine's pruned trees and scores are the ref engine's bits. Skips without a GPU. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../corpus_tools/sentence.h"
#include "../gpu/gpu.h"
#include "../grammar/cascade.h"
#include "../parser/parser.h"
#include "../prune/prune.h"
#include "../prune/prune_gpu.h"
#include "../util/io.h"
#include "test_dev.h"

#define REF CKY_SHARED "/reference/berkeley/"
#define GR(name) CKY_SHARED "/grammars/" name "/" name ".gr"
#define MAXSENT 4096

typedef struct corpus {
    int n;
    sentence s[MAXSENT];
    char *const *words[MAXSENT];
    int len[MAXSENT];
} corpus;

/* The sentences of `file` of at most maxlen words, up to `want`. */
static corpus *read_corpus(const char *file, int maxlen, int want)
{
    corpus *c = calloc(1, sizeof *c);
    io_lines *in;
    char *line;
    size_t len;
    cr_assert_not_null(c);
    cr_assert_eq(io_lines_open(file, &in), CKY_OK, "%s", file);
    while (c->n < want && !io_lines_next(in, &line, &len) && line) {
        sentence s;
        cr_assert_eq(sentence_from_line(line, len, &s), CKY_OK);
        if (s.n < 1 || s.n > maxlen) {
            sentence_free(&s);
            continue;
        }
        c->s[c->n] = s;
        c->words[c->n] = c->s[c->n].words;
        c->len[c->n] = s.n;
        c->n++;
    }
    io_lines_close(in);
    return c;
}

static void free_corpus(corpus *c)
{
    for (int k = 0; k < c->n; k++)
        sentence_free(&c->s[k]);
    free(c);
}

static grammar *load(const char *path)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(path, &g), CKY_OK, "%s", cky_last_error());
    return g;
}

static void format_level(const prune_level *l, char *out, size_t size)
{
    if (l->failed)
        snprintf(out, size, "-1\t-1\t-");
    else
        snprintf(out, size, "%ld\t%ld\t%016" PRIx64, l->symbols, l->substates, l->hash);
}

static void same_masks(const prune_mask *a, const prune_mask *b, int k)
{
    cr_assert_eq(a->nlevel, b->nlevel);
    for (int l = 0; l < a->nlevel; l++) {
        char x[96], y[96];
        format_level(&a->level[l], x, sizeof x);
        format_level(&b->level[l], y, sizeof y);
        cr_assert_str_eq(x, y, "sentence %d level %d: %s against %s", k + 1, l, x, y);
    }
    size_t cells = chart_ncells(a->fine.n);
    cr_assert_eq(a->fine.n, b->fine.n);
    cr_assert_eq(memcmp(a->fine.state, b->fine.state, cells * a->fine.nsym), 0,
                 "sentence %d: the fine masks' symbols differ", k + 1);
    cr_assert_eq(memcmp(a->fine.sub, b->fine.sub, cells * a->fine.nsub), 0,
                 "sentence %d: the fine masks' substates differ", k + 1);
}

static prune_mask *gpu_masks(prune_gpu *pg, const corpus *c, const int *const *gold,
                             prune_mode mode, int batch)
{
    prune_mask *m = calloc((size_t)c->n, sizeof *m);
    cr_assert_not_null(m);
    for (int k = 0; k < c->n; k += batch) {
        int nb = c->n - k < batch ? c->n - k : batch;
        cr_assert_eq(prune_gpu_build_masks(pg, c->words + k, c->len + k, gold ? gold + k : NULL,
                                           nb, mode, 1, 2, m + k),
                     CKY_OK, "%s", cky_last_error());
    }
    return m;
}

static void free_masks(prune_mask *m, int n)
{
    for (int k = 0; k < n; k++)
        prune_free_mask(&m[k]);
    free(m);
}

/* Every level of every sentence against the rows of a reference file. */
static void against_file(const prune_mask *m, int n, const char *file)
{
    gzFile f = gzopen(file, "rb");
    char line[1 << 16];
    int rows = 0;
    cr_assert_not_null(f, "%s", file);
    while (gzgets(f, line, sizeof line)) {
        int k, level, at;
        if (sscanf(line, "%d\t%d\t%n", &k, &level, &at) != 2)
            continue; /* the final rows */
        cr_assert(k >= 1 && k <= n && level < m[k - 1].nlevel, "%s: row %s", file, line);
        line[strcspn(line, "\n")] = '\0';
        char mine[96];
        format_level(&m[k - 1].level[level], mine, sizeof mine);
        cr_expect_str_eq(mine, line + at, "%s: sentence %d level %d: %s, the jar's %s", file, k,
                         level, mine, line + at);
        rows++;
    }
    gzclose(f);
    cr_assert_eq(rows, n * m[0].nlevel, "%s: %d level rows", file, rows);
}

/* The dev set with grammar `name`: the three files, the ref engine's fine masks, two batch
 * sizes. */
static void dev_grammar(const char *name)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the GPU cascade is not tested here");
    char path[512], file[512];
    snprintf(path, sizeof path, CKY_SHARED "/grammars/%s/%s.gr", name, name);
    grammar *g = load(path);
    corpus *c = read_corpus(CKY_SHARED "/data/ptb-sample/dev.txt", 1000, MAXSENT);
    cr_assert_eq(c->n, 433);
    prune_gpu *pg = NULL;
    cr_assert_eq(prune_gpu_new(g, 0, &pg), CKY_OK, "%s", cky_last_error());
    prune_plan *p = NULL;
    cr_assert_eq(prune_new_plan(g, &p), CKY_OK, "%s", cky_last_error());
    const char *suffix[] = {"", "-viterbi", "-accurate"};
    for (int f = 0; f < 3; f++) {
        prune_mode mode = f == 2 ? PRUNE_ACCURATE : PRUNE_FAST;
        prune_mask *m = gpu_masks(pg, c, NULL, mode, c->n);
        snprintf(file, sizeof file, REF "dev.%s.prune-masks%s.tsv.gz", name, suffix[f]);
        against_file(m, c->n, file);
        if (f == 1) { /* the same as the fast file's: the ref engine's and a second batching */
            prune_mask *m7 = gpu_masks(pg, c, NULL, mode, 7);
            for (int k = 0; k < c->n; k++) {
                prune_mask r;
                cr_assert_eq(prune_build_mask(p, c->s[k].words, c->s[k].n, mode, NULL, NULL, &r),
                             CKY_OK);
                same_masks(&m[k], &r, k);
                same_masks(&m7[k], &r, k);
                prune_free_mask(&r);
            }
            free_masks(m7, c->n);
        }
        free_masks(m, c->n);
    }
    prune_free_plan(p);
    prune_gpu_free(pg);
    free_corpus(c);
    grammar_free(g);
}

Test(gpu_prune, sm1_dev_masks_are_the_jars, .timeout = 900) { dev_grammar("sample-sm1"); }
Test(gpu_prune, sm3_dev_masks_are_the_jars, .timeout = 900) { dev_grammar("sample-sm3"); }
Test(gpu_prune, sm5_dev_masks_are_the_jars, .timeout = 900) { dev_grammar("sample-sm5"); }
Test(gpu_prune, sm6_dev_masks_are_the_jars, .timeout = 900) { dev_grammar("sample-sm6"); }

/* train.txt (held out from every reference file), fast and accurate, and with gold tags
 * made up from each word's position (some right, most wrong): the ref engine's masks. */
Test(gpu_prune, sm6_train_masks_are_the_ref_engines, .timeout = 900)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the GPU cascade is not tested here");
    grammar *g = load(GR("sample-sm6"));
    corpus *c = read_corpus(CKY_SHARED "/data/ptb-sample/train.txt", 60, 600);
    prune_gpu *pg = NULL;
    prune_plan *p = NULL;
    cr_assert_eq(prune_gpu_new(g, 0, &pg), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(prune_new_plan(g, &p), CKY_OK, "%s", cky_last_error());
    int **gold = calloc((size_t)c->n, sizeof *gold);
    cr_assert_not_null(gold);
    for (int k = 0; k < c->n; k++) {
        gold[k] = malloc((size_t)c->len[k] * sizeof **gold);
        for (int i = 0; i < c->len[k]; i++) { /* a tag of the grammar, or -1 */
            int t = (k * 7 + i * 3) % (g->nsym + 1) - 1;
            gold[k][i] = t >= 0 && !g->phrasal[t] ? t : -1;
        }
    }
    for (int round = 0; round < 3; round++) {
        prune_mode mode = round == 1 ? PRUNE_ACCURATE : PRUNE_FAST;
        const int *const *gd = round == 2 ? (const int *const *)gold : NULL;
        prune_mask *m = gpu_masks(pg, c, gd, mode, 64);
        for (int k = 0; k < c->n; k++) {
            prune_mask r;
            cr_assert_eq(prune_build_mask_tagged(p, c->s[k].words, gd ? gd[k] : NULL,
                                                 c->s[k].n, mode, NULL, NULL, &r),
                         CKY_OK);
            same_masks(&m[k], &r, k);
            prune_free_mask(&r);
        }
        free_masks(m, c->n);
    }
    for (int k = 0; k < c->n; k++)
        free(gold[k]);
    free(gold);
    prune_free_plan(p);
    prune_gpu_free(pg);
    free_corpus(c);
    grammar_free(g);
}

/* Through the parser: the gpu engine's pruned decoder (the cascade on the device, the final
 * passes on host threads) gives the ref engine's results bit for bit (log P, score, tree),
 * max-rule and Viterbi, the batch whole or cut in two. */
static void parse_with(const grammar *g, parser_engine engine, parser_decoder decoder,
                       const sentence *s, int n, int cut, parse_result *out)
{
    parser_options o = parser_default_options();
    o.engine = engine;
    o.decoder = decoder;
    o.prune = PARSER_PRUNE_BERKELEY;
    parser *p;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(parser_parse(p, s, cut, out), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(parser_parse(p, s + cut, n - cut, out + cut), CKY_OK, "%s", cky_last_error());
    parser_free(p);
}

Test(gpu_prune, sm5_dev_parse_is_the_ref_engines, .timeout = 900)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the GPU cascade is not tested here");
    grammar *g = load(GR("sample-sm5"));
    corpus *c = read_corpus(CKY_SHARED "/data/ptb-sample/dev.txt", 40, MAXSENT);
    int n = c->n;
    parse_result *ref = calloc((size_t)n, sizeof *ref), *gpu = calloc((size_t)n, sizeof *gpu);
    parse_result *cut = calloc((size_t)n, sizeof *cut);
    cr_assert(ref && gpu && cut);
    for (int d = 0; d < 2; d++) {
        parser_decoder dec = d ? PARSER_DECODER_VITERBI : PARSER_DECODER_MAXRULE;
        parse_with(g, PARSER_ENGINE_REF, dec, c->s, n, n, ref);
        parse_with(g, PARSER_ENGINE_GPU, dec, c->s, n, n, gpu);
        parse_with(g, PARSER_ENGINE_GPU, dec, c->s, n, n / 3, cut);
        int trees = 0;
        for (int k = 0; k < n; k++) {
            trees += ref[k].outcome == PARSE_OK;
            for (int w = 0; w < 2; w++) {
                const parse_result *a = &ref[k], *b = w ? &cut[k] : &gpu[k];
                cr_assert_eq(a->outcome, b->outcome, "sentence %d: outcome", k);
                cr_assert(!memcmp(&a->loglik, &b->loglik, sizeof a->loglik) &&
                              !memcmp(&a->score, &b->score, sizeof a->score),
                          "%s, sentence %d: log P %.17g, score %.17g against the ref's %.17g, "
                          "%.17g", w ? "cut batch" : "whole batch", k, b->loglik, b->score,
                          a->loglik, a->score);
                char *ta = tree_text(a->tree), *tb = tree_text(b->tree);
                cr_assert_str_eq(tb, ta, "sentence %d: trees differ", k);
                free(ta);
                free(tb);
            }
        }
        cr_assert_geq(trees, n - 1, "%d trees of %d", trees, n);
        for (int k = 0; k < n; k++) {
            parse_result_clear(&ref[k]);
            parse_result_clear(&gpu[k]);
            parse_result_clear(&cut[k]);
        }
    }
    free(ref);
    free(gpu);
    free(cut);
    free_corpus(c);
    grammar_free(g);
}
