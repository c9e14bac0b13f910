/* Tests of the flat C API of libcky.so (api/cky.h): open errors with messages, raw and
 * tokenized lines giving the same trees, outcomes and messages of sentences without a tree. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../api/cky.h"

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
