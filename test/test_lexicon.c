/* Tests of the Berkeley lexicon (grammar/lexicon_berkeley.c) and `cky lexicon` against the
 * Berkeley Parser's own scores in ../shared/reference/lexicon: the same tags with a nonzero
 * score for every token, every value within 1 ulp; the log scores the parser uses; and the
 * refusal of a text-export grammar. tools/check-lexicon runs the same comparison on the
 * command's output for both reference files. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../grammar/cascade.h"
#include "../grammar/grammar.h"
#include "../grammar/internal.h"
#include "../grammar/lexicon_berkeley.h"
#include "../util/io.h"

#define GRAMMARS CKY_SHARED "/grammars/"
#define REFERENCE CKY_SHARED "/reference/lexicon/"

/* Distance in units in the last place between two doubles of the same sign. */
static uint64_t ulps(double a, double b)
{
    if (a == b)
        return 0;
    if (isnan(a) || isnan(b) || signbit(a) != signbit(b))
        return UINT64_MAX;
    int64_t ia, ib;
    a = fabs(a);
    b = fabs(b);
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    return (uint64_t)(ia > ib ? ia - ib : ib - ia);
}

/* One TSV row split in place: fields[0..n). */
static int split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    fields[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            fields[n++] = p + 1;
        }
    return n;
}

/* Check the values of a row (fields[4..n)) against the scores of tag `tag`. */
static void check_values(const grammar *g, int tag, char **fields, int n, const double *score,
                         const char *where)
{
    cr_assert_eq(n - 4, g->nsub[tag], "%s: %d values for %s, expected %d", where, n - 4,
                 g->name[tag], g->nsub[tag]);
    for (int s = 0; s < g->nsub[tag]; s++) {
        double want = strtod(fields[4 + s], NULL), got = score[g->sub_offset[tag] + s];
        cr_assert_leq(ulps(want, got), 1, "%s: %s substate %d: %.17g, reference %s", where,
                      g->name[tag], s, got, fields[4 + s]);
    }
}

/* Every row of a reference table: for each token the rows name exactly the tags with a
 * nonzero linear score, in symbol order, with the same values (1 ulp). Returns the rows. */
static long check_reference(const char *gr_path, const char *ref_path)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_native(gr_path, &g), CKY_OK, "%s", cky_last_error());
    double *score = malloc((size_t)g->nsub_total * sizeof *score);
    io_lines *in;
    cr_assert_eq(io_lines_open(ref_path, &in), CKY_OK);
    char *line, *fields[2048];
    size_t len;
    long rows = 0;
    char token[1024] = ""; /* "sentence\tposition\tword" of the current group */
    int next_tag = g->nsym; /* the tag after the last row's, scanning nonzero tags */
    for (;;) {
        cr_assert_eq(io_lines_next(in, &line, &len), CKY_OK);
        if (!line)
            break;
        rows++;
        int n = split_tabs(line, fields, 2048);
        cr_assert_geq(n, 5, "row %ld", rows);
        char key[1024];
        snprintf(key, sizeof key, "%s\t%s\t%s", fields[0], fields[1], fields[2]);
        if (strcmp(key, token) != 0) { /* a new token: the previous one had no more tags */
            for (int t = next_tag; t < g->nsym; t++)
                for (int s = 0; !g->phrasal[t] && s < g->nsub[t]; s++)
                    cr_assert_eq(score[g->sub_offset[t] + s], 0.0, "%s: tag %s missing", token,
                                 g->name[t]);
            snprintf(token, sizeof token, "%s", key);
            cr_assert_eq(lexicon_berkeley_score_linear(g, fields[2], atoi(fields[1]), 0, NULL, score),
                         CKY_OK);
            next_tag = 0;
        }
        int tag = grammar_find_symbol(g, fields[3]);
        cr_assert_geq(tag, next_tag, "%s: tag %s out of order or unknown", token, fields[3]);
        for (int t = next_tag; t < tag; t++) /* tags skipped by the reference are all zero */
            for (int s = 0; !g->phrasal[t] && s < g->nsub[t]; s++)
                cr_assert_eq(score[g->sub_offset[t] + s], 0.0, "%s: tag %s missing", token,
                             g->name[t]);
        check_values(g, tag, fields, n, score, token);
        next_tag = tag + 1;
    }
    io_lines_close(in);
    free(score);
    grammar_free(g);
    return rows;
}

Test(lexicon, sm3_all_dev_rows, .timeout = 600)
{
    long rows = check_reference(GRAMMARS "sample-sm3/sample-sm3.gr",
                                REFERENCE "dev.sample-sm3.lexicon.tsv.gz");
    cr_assert_eq(rows, 112900);
}

Test(lexicon, sm6_first100_rows, .timeout = 600)
{
    long rows = check_reference(GRAMMARS "sample-sm6/sample-sm6.gr",
                                REFERENCE "dev.first100.sample-sm6.lexicon.tsv.gz");
    cr_assert_eq(rows, 36103);
}

/* The parser's log scores: log of the pruned linear scores (NaN -> -inf), -inf for phrasal
 * symbols. Pruning matters: "'s"/POS substate 0 of sample-sm3 has c_TW < 1e-10. */
Test(lexicon, log_scores_are_pruned_linear_logs)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_native(GRAMMARS "sample-sm3/sample-sm3.gr", &g), CKY_OK);
    double *lin = malloc((size_t)g->nsub_total * sizeof *lin);
    double *raw = malloc((size_t)g->nsub_total * sizeof *raw);
    double *lg = malloc((size_t)g->nsub_total * sizeof *lg);
    const char *words[] = {"'s", "the", "Hello", "walked", "UNK-LC-ed", "", "1990s", "Apple"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        for (int loc = 0; loc < 2; loc++) {
            cr_assert_eq(lexicon_berkeley_score_linear(g, words[w], loc, 1, NULL, lin), CKY_OK);
            cr_assert_eq(grammar_score_word(g, words[w], loc, lg), CKY_OK);
            for (int t = 0; t < g->nsym; t++)
                for (int s = 0; s < g->nsub[t]; s++) {
                    int i = g->sub_offset[t] + s;
                    double want = g->phrasal[t] ? -INFINITY : grammar_log(lin[i]);
                    cr_assert(!memcmp(&want, &lg[i], sizeof want), "%s %s_%d: %.17g vs %.17g",
                              words[w], g->name[t], s, lg[i], want);
                }
        }
    }
    int pos = grammar_find_symbol(g, "POS");
    cr_assert_eq(lexicon_berkeley_score_linear(g, "'s", 1, 0, NULL, raw), CKY_OK);
    cr_assert_eq(lexicon_berkeley_score_linear(g, "'s", 1, 1, NULL, lin), CKY_OK);
    cr_assert_gt(raw[g->sub_offset[pos]], 0.0);
    cr_assert_eq(lin[g->sub_offset[pos]], 0.0);
    free(lin);
    free(raw);
    free(lg);
    grammar_free(g);
}

Test(lexicon, text_export_has_no_raw_counts)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_text(GRAMMARS "sample-sm1/sample-sm1", &g), CKY_OK, "%s",
                 cky_last_error());
    double *out = malloc((size_t)g->nsub_total * sizeof *out);
    cr_assert_eq(lexicon_berkeley_score_linear(g, "the", 0, 0, NULL, out), CKY_ERR_UNSUPPORTED);
    cr_assert(strstr(cky_last_error(), "text export"), "%s", cky_last_error());
    free(out);
    grammar_free(g);
}

/* The linear scores of a text export (max-rule on it): the exp of its log scores, 0 for
 * phrasal substates, known, rare and unknown words alike. */
Test(lexicon, text_export_linear_is_exp_of_log)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_text(GRAMMARS "sample-sm3/sample-sm3", &g), CKY_OK, "%s",
                 cky_last_error());
    double *lin = malloc((size_t)g->nsub_total * sizeof *lin);
    double *lg = malloc((size_t)g->nsub_total * sizeof *lg);
    static const char *const words[] = {"the", "company", "Xylophonic", "1987", ",", "'s"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        cr_assert_eq(lexicon_berkeley_score_linear(g, words[w], 1, 1, NULL, lin), CKY_OK, "%s",
                     cky_last_error());
        cr_assert_eq(grammar_score_word(g, words[w], 1, lg), CKY_OK);
        int nonzero = 0;
        for (int x = 0; x < g->nsub_total; x++) {
            cr_assert_eq(lin[x], exp(lg[x]), "%s: substate %d", words[w], x);
            nonzero += lin[x] > 0;
        }
        cr_assert_gt(nonzero, 0, "%s", words[w]);
        for (int t = 0; t < g->nsym; t++)
            for (int x = 0; g->phrasal[t] && x < g->nsub[t]; x++)
                cr_assert_eq(lin[g->sub_offset[t] + x], 0.0);
    }
    free(lin);
    free(lg);
    grammar_free(g);
}

/* grammar_score_word's contract (what scoring each distinct word of a batch once would rest
 * on): the position matters only as first or not, for the native lexicon and a text export,
 * known and unknown words (capitalized, numbers, punctuation) alike. */
Test(lexicon, scores_depend_on_the_position_only_as_first_or_not)
{
    static const char *const spec[] = {GRAMMARS "sample-sm3/sample-sm3.gr",
                                       GRAMMARS "sample-sm3/sample-sm3"};
    static const char *const words[] = {"the", "The", "Xylophonic", "xylophonic", "Zqx-ing",
                                        "1987", "3,456.5", ",", "-LRB-", "IBM", "running"};
    for (int k = 0; k < 2; k++) {
        grammar *g = NULL;
        cr_assert_eq(grammar_load(spec[k], &g), CKY_OK, "%s", cky_last_error());
        size_t n = (size_t)g->nsub_total;
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
            cr_assert_eq(grammar_score_word(g, words[w], 1, a), CKY_OK);
            for (int loc = 2; loc < 40; loc += 7) {
                cr_assert_eq(grammar_score_word(g, words[w], loc, b), CKY_OK);
                cr_assert(memcmp(a, b, n * sizeof *a) == 0, "%s: %s at 1 and %d differ",
                          spec[k], words[w], loc);
            }
        }
        free(a);
        free(b);
        grammar_free(g);
    }
}

/* grammar_score_tags: the tags asked for get grammar_score_word's values bit for bit, for
 * sample-sm6 and every level of its cascade (the lexicons the pruned levels ask with the
 * tags their cells allow), a text export, known and unknown words, first or not; and
 * lexicon_berkeley_score_linear's with tags (the final pass's) likewise. */
Test(lexicon, scores_of_some_tags_are_those_of_all)
{
    static const char *const spec[] = {GRAMMARS "sample-sm6/sample-sm6.gr",
                                       GRAMMARS "sample-sm3/sample-sm3"};
    static const char *const words[] = {"the", "The", "Xylophonic", "1987", ",", "running"};
    for (int k = 0; k < 2; k++) {
        grammar *fine = NULL;
        cr_assert_eq(grammar_load(spec[k], &fine), CKY_OK, "%s", cky_last_error());
        const grammar_cascade *c = grammar_cascade_of(fine);
        for (int level = 0; level <= (c ? c->nlevel : 0); level++) {
            const grammar *g = c && level < c->nlevel ? c->level[level] : fine;
            size_t n = (size_t)g->nsub_total;
            double *all = malloc(n * sizeof *all), *some = malloc(n * sizeof *some);
            unsigned char *tags = calloc((size_t)g->nsym, 1);
            cr_assert(all && some && tags);
            for (int t = 0; t < g->nsym; t++)
                tags[t] = t % 3 == 1;
            for (size_t w = 0; w < sizeof words / sizeof *words; w++)
                for (int loc = 0; loc < 2; loc++) {
                    int linear = k == 0 && g == fine && loc; /* also the linear scores */
                    if (linear) {
                        cr_assert_eq(lexicon_berkeley_score_linear(g, words[w], loc, 1, NULL, all),
                                     CKY_OK);
                        cr_assert_eq(lexicon_berkeley_score_linear(g, words[w], loc, 1, tags, some),
                                     CKY_OK);
                    } else {
                        cr_assert_eq(grammar_score_word(g, words[w], loc, all), CKY_OK);
                        cr_assert_eq(grammar_score_tags(g, words[w], loc, tags, some), CKY_OK);
                    }
                    for (int t = 0; t < g->nsym; t++)
                        for (int x = g->sub_offset[t]; tags[t] && x < g->sub_offset[t] + g->nsub[t];
                             x++)
                            cr_assert(!memcmp(&all[x], &some[x], sizeof *all),
                                      "%s level %d, %s at %d, %s: %.17g against %.17g", spec[k],
                                      level, words[w], loc, g->name[t], some[x], all[x]);
                }
            free(all);
            free(some);
            free(tags);
        }
        grammar_free(fine);
    }
}

/* grammar_word_repeats: each word's rep is the first word of the same text and the same
 * "first of its sentence?", a word without text its own; many words through a small table
 * of slots (collisions, the table's growth). */
Test(lexicon, word_repeats_are_the_first_of_the_same_text_and_place)
{
    const char *text[] = {"The", "dog", "the", "dog", NULL, "The", "The", "dog", NULL, "the"};
    const unsigned char first[] = {1, 0, 0, 0, 0, 1, 0, 1, 1, 0};
    const int want[] = {0, 1, 2, 1, 4, 0, 6, 7, 8, 2};
    int rep[10];
    cr_assert_eq(grammar_word_repeats(text, first, 10, rep), CKY_OK);
    for (int w = 0; w < 10; w++)
        cr_assert_eq(rep[w], want[w], "word %d: rep %d, want %d", w, rep[w], want[w]);
    enum { N = 5000 };
    static char buf[N][8];
    static const char *many[2 * N];
    static unsigned char none[2 * N];
    static int reps[2 * N];
    for (int w = 0; w < N; w++) {
        snprintf(buf[w], sizeof buf[w], "w%d", w);
        many[w] = many[2 * N - 1 - w] = buf[w];
    }
    cr_assert_eq(grammar_word_repeats(many, none, 2 * N, reps), CKY_OK);
    for (int w = 0; w < 2 * N; w++)
        cr_assert_eq(reps[w], w < N ? w : 2 * N - 1 - w, "word %d: rep %d", w, reps[w]);
}

/* `cky lexicon` end to end: the same rows as the reference, values within 1 ulp. */
Test(lexicon, command_reproduces_reference, .timeout = 600)
{
    const char *cky = CKY_BUILD "/cky";
    if (access(cky, X_OK) != 0)
        cr_skip_test("%s is not built", cky);
    char out_path[] = "/tmp/cky-lexicon-XXXXXX";
    int fd = mkstemp(out_path);
    cr_assert_geq(fd, 0);
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' lexicon -g '" GRAMMARS "sample-sm3/sample-sm3.gr' -i '" CKY_SHARED
             "/data/ptb-sample/dev.txt' -o '%s'",
             cky, out_path);
    cr_assert_eq(system(cmd), 0, "%s failed", cmd);
    io_lines *ref, *out;
    cr_assert_eq(io_lines_open(REFERENCE "dev.sample-sm3.lexicon.tsv.gz", &ref), CKY_OK);
    cr_assert_eq(io_lines_open(out_path, &out), CKY_OK);
    long rows = 0;
    for (;; rows++) {
        char *a, *b, *fa[2048], *fb[2048];
        size_t la, lb;
        cr_assert_eq(io_lines_next(ref, &a, &la), CKY_OK);
        char *copy = a ? strdup(a) : NULL;
        cr_assert_eq(io_lines_next(out, &b, &lb), CKY_OK);
        cr_assert_eq(!copy, !b, "row %ld: one file ends early", rows + 1);
        if (!copy)
            break;
        int na = split_tabs(copy, fa, 2048), nb = split_tabs(b, fb, 2048);
        cr_assert_eq(na, nb, "row %ld: %d vs %d fields", rows + 1, nb, na);
        for (int i = 0; i < 4; i++)
            cr_assert_str_eq(fb[i], fa[i], "row %ld field %d", rows + 1, i);
        for (int i = 4; i < na; i++)
            cr_assert_leq(ulps(strtod(fa[i], NULL), strtod(fb[i], NULL)), 1,
                          "row %ld: %s vs reference %s", rows + 1, fb[i], fa[i]);
        free(copy);
    }
    cr_assert_eq(rows, 112900);
    io_lines_close(ref);
    io_lines_close(out);
    unlink(out_path);
}
