/* Tests of the flat C API of libcky.so (api/cky.h): open errors with messages, raw and
 * tokenized lines giving the same trees, outcomes and messages of sentences without a tree,
 * k-best lists, and the scores against the Berkeley parser's own. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../api/cky.h"
#include "../util/jdouble.h"

#define SM1 CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr"

Test(api, open_errors)
{
    cr_expect_null(cky_parser_open(SM1, "tpu", NULL, 0, 0, 0));
    cr_expect(strstr(cky_error_message(), "unknown engine 'tpu'"), "%s", cky_error_message());
    cr_expect_null(cky_parser_open(SM1, "ref", "nbest", 0, 0, 0));
    cr_expect(strstr(cky_error_message(), "unknown decoder 'nbest'"), "%s",
              cky_error_message());
    cr_expect_null(cky_parser_open("/nonexistent/g.gr", "ref", "viterbi", 0, 0, 0));
    cr_expect(strstr(cky_error_message(), "/nonexistent/g"), "%s", cky_error_message());
    cr_expect_null(cky_parser_open(SM1, "ref", NULL, -1, 0, 0));
}

Test(api, raw_and_tokenized_lines)
{
    cky_parser *p = cky_parser_open(SM1, "ref", "viterbi", 1, 10, 0);
    cr_assert_not_null(p, "%s", cky_error_message());
    cr_expect_str_eq(cky_parser_engine(p), "ref");
    const char *raw[] = {"\"Stocks didn't fall,\" he said.", "", "1 2 3 4 5 6 7 8 9 10 11"};
    const char *tok[] = {"`` Stocks did n't fall , '' he said .", "  ",
                         "1 2 3 4 5 6 7 8 9 10 11"};
    char *t1[3], *t2[3], *m1[3];
    int o1[3], o2[3];
    cr_assert_eq(cky_parser_parse(p, raw, 3, 1, t1, o1, m1), 0, "%s", cky_error_message());
    cr_assert_eq(cky_parser_parse(p, tok, 3, 0, t2, o2, NULL), 0, "%s", cky_error_message());
    int expect[3] = {CKY_PARSE_OK, CKY_PARSE_EMPTY, CKY_PARSE_TOO_LONG};
    for (int k = 0; k < 3; k++) {
        cr_expect_str_eq(t1[k], t2[k], "line %d", k);
        cr_expect_eq(o1[k], expect[k], "line %d", k);
        cr_expect_eq(o2[k], expect[k], "line %d", k);
    }
    cr_expect(!strncmp(t1[0], "( (", 3) && strstr(t1[0], "(RB n't)"), "%s", t1[0]);
    cr_expect_str_eq(t1[1], "(())");
    cr_expect_null(m1[0]);
    cr_expect_str_eq(m1[1], "empty sentence");
    cr_expect_str_eq(m1[2], "11 words, longer than max_length 10: not parsed");
    for (int k = 0; k < 3; k++) {
        cky_string_free(t1[k]);
        cky_string_free(t2[k]);
        cky_string_free(m1[k]);
    }
    const char *bad[] = {"a", NULL};
    cr_expect_eq(cky_parser_parse(p, bad, 2, 0, t1, o1, NULL), -1);
    cr_expect(strstr(cky_error_message(), "line 2"), "%s", cky_error_message());
    cr_expect_eq(cky_parser_parse(p, NULL, 0, 0, NULL, NULL, NULL), 0);
    cky_parser_close(p);
}

Test(api, tokenize)
{
    char *t;
    cr_assert_eq(cky_tokenize("It's (done).", &t), 0);
    cr_expect_str_eq(t, "It 's -LRB- done -RRB- .");
    cky_string_free(t);
    cr_expect_eq(cky_tokenize(NULL, &t), -1);
}

/* cky_parser_parse_kbest: lists of the pruned max-rule decoder (first tree = the one-tree
 * answer, scores not increasing, the other slots NULL and -inf, raw text tokenized); a
 * sentence without a tree: count 0 and its outcome; a viterbi parser refuses, naming kbest. */
Test(api, kbest_lists)
{
    cky_parser *p = cky_parser_open(SM1, "ref", "maxrule", 1, 10, 0);
    cr_assert_not_null(p, "%s", cky_error_message());
    const char *lines[] = {"Stocks fell sharply on Friday.", "", "The dog barks."};
    enum { K = 4 };
    char *trees[3 * K], *one[3], *msg[3];
    double scores[3 * K];
    int counts[3], outcomes[3], o1[3];
    cr_assert_eq(cky_parser_parse_kbest(p, lines, 3, 1, K, trees, scores, counts, outcomes,
                                        msg), 0, "%s", cky_error_message());
    cr_assert_eq(cky_parser_parse(p, lines, 3, 1, one, o1, NULL), 0);
    cr_expect_eq(counts[1], 0);
    cr_expect_eq(outcomes[1], CKY_PARSE_EMPTY);
    cr_expect_str_eq(msg[1], "empty sentence");
    for (int k = 0; k < 3; k++) {
        cr_expect_eq(outcomes[k], o1[k]);
        if (k != 1) {
            cr_expect_gt(counts[k], 1, "line %d", k);
            cr_expect_str_eq(trees[k * K], one[k], "line %d", k);
        }
        for (int x = 0; x < K; x++) {
            if (x < counts[k]) {
                cr_expect_not_null(trees[k * K + x]);
                cr_expect(x == 0 || scores[k * K + x] <= scores[k * K + x - 1]);
            } else {
                cr_expect_null(trees[k * K + x]);
                cr_expect(scores[k * K + x] < -1e308);
            }
            cky_string_free(trees[k * K + x]);
        }
        cky_string_free(one[k]);
        cky_string_free(msg[k]);
    }
    cky_parser_close(p);
    p = cky_parser_open(SM1, "ref", "viterbi", 1, 10, 0);
    cr_assert_not_null(p, "%s", cky_error_message());
    cr_expect_eq(cky_parser_parse_kbest(p, lines, 1, 1, 3, trees, scores, counts, outcomes,
                                        NULL), -1);
    cr_expect(strstr(cky_error_message(), "--kbest 3"), "%s", cky_error_message());
    cky_parser_close(p);
}

/* The first fields of the first n lines of the jar's file NAME (dev.txt, sample-sm5), each
 * up to its tab, into field[k] (malloc'ed), the rest (the tree) into tree[k]. */
static void jar_lines(const char *name, int n, char **field, char **tree)
{
    char path[512], line[65536];
    snprintf(path, sizeof path, CKY_SHARED "/reference/berkeley/cli/dev.sample-sm5.%s.txt",
             name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    for (int k = 0; k < n; k++) {
        cr_assert_not_null(fgets(line, sizeof line, f), "%s: line %d", path, k + 1);
        line[strcspn(line, "\n")] = 0;
        char *tab = strchr(line, '\t');
        cr_assert_not_null(tab, "%s: line %d", path, k + 1);
        *tab = 0;
        field[k] = strdup(line);
        tree[k] = strdup(tab + 1);
    }
    fclose(f);
}

/* cky_parser_parse_scores: pruned max-rule (the jar's default) on the first dev lines, every
 * score printed as the jar prints it equal to the jar's -modelScore, -sentence_likelihood,
 * -tree_likelihood and -confidence files, the trees too; exhaustive: the tree and confidence
 * scores NaN, the sentence score log P(words). */
Test(api, scores_are_the_jars, .timeout = 300)
{
    enum { N = 12 };
    cky_parser *p = cky_parser_open(CKY_SHARED "/grammars/sample-sm5/sample-sm5.gr", "ref",
                                    "maxrule", 1, 200, 0);
    cr_assert_not_null(p, "%s", cky_error_message());
    char *words[N], line[65536];
    FILE *in = fopen(CKY_SHARED "/data/ptb-sample/dev.txt", "r");
    cr_assert_not_null(in);
    for (int k = 0; k < N; k++) {
        cr_assert_not_null(fgets(line, sizeof line, in));
        line[strcspn(line, "\n")] = 0;
        words[k] = strdup(line);
    }
    fclose(in);
    const char *files[] = {"modelscore", "sentence-likelihood", "tree-likelihood",
                           "confidence"};
    int index[] = {CKY_SCORE_MODEL, CKY_SCORE_SENTENCE, CKY_SCORE_TREE, CKY_SCORE_CONFIDENCE};
    char *trees[N];
    double sc[N * CKY_NSCORE];
    int outcomes[N];
    cr_assert_eq(cky_parser_parse_scores(p, (const char *const *)words, N, 0, trees, sc,
                                         outcomes, NULL), 0, "%s", cky_error_message());
    for (int f = 0; f < 4; f++) {
        char *field[N], *tree[N];
        jar_lines(files[f], N, field, tree);
        for (int k = 0; k < N; k++) {
            char buf[64];
            double x = sc[k * CKY_NSCORE + index[f]];
            if (index[f] == CKY_SCORE_MODEL)
                jdouble_format_fixed(x, 8, buf, sizeof buf);
            else
                jdouble_format(x, buf, sizeof buf);
            cr_expect_str_eq(buf, field[k], "%s, line %d", files[f], k + 1);
            cr_expect_str_eq(trees[k], tree[k], "%s, line %d", files[f], k + 1);
            free(field[k]);
            free(tree[k]);
        }
    }
    cky_parser_close(p);
    p = cky_parser_open_prune(CKY_SHARED "/grammars/sample-sm5/sample-sm5.gr", "ref",
                              "maxrule", "none", 1, 200, 0, NULL, NULL);
    cr_assert_not_null(p, "%s", cky_error_message());
    char *ex[2];
    cr_assert_eq(cky_parser_parse_scores(p, (const char *const *)words, 2, 0, ex, sc,
                                         outcomes, NULL), 0, "%s", cky_error_message());
    for (int k = 0; k < 2; k++) {
        cr_expect(isnan(sc[k * CKY_NSCORE + CKY_SCORE_TREE]) &&
                  isnan(sc[k * CKY_NSCORE + CKY_SCORE_CONFIDENCE]));
        cr_expect(sc[k * CKY_NSCORE + CKY_SCORE_SENTENCE] < 0 &&
                  sc[k * CKY_NSCORE + CKY_SCORE_MODEL] < 0 &&
                  sc[k * CKY_NSCORE + CKY_SCORE_MODEL] > -100, "line %d", k + 1);
        cky_string_free(ex[k]);
    }
    cky_parser_close(p);
    for (int k = 0; k < N; k++) {
        cky_string_free(trees[k]);
        free(words[k]);
    }
}
