/* Tests of the flat C API of libcky.so (api/cky.h): open errors with messages, raw and
 * tokenized lines giving the same trees, outcomes and messages of sentences without a tree,
 * k-best lists, the scores against the Berkeley parser's own, and parses with gold tags
 * against its -useGoldPOS output and cky parse --gold-pos's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../api/cky.h"
#include "../corpus_tools/tree.h"
#include "../util/jdouble.h"
#include "test_cli_run.h"

#define SM1 CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr"
#define SM5 CKY_SHARED "/grammars/sample-sm5/sample-sm5.gr"
#define REF CKY_SHARED "/reference/berkeley"

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
 * up to its tab, into field[k] (malloc'ed), the rest (the tree) into text[k]. */
static void jar_lines(const char *name, int n, char **field, char **text)
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
        text[k] = strdup(tab + 1);
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
        char *field[N], *text[N];
        jar_lines(files[f], N, field, text);
        for (int k = 0; k < N; k++) {
            char buf[64];
            double x = sc[k * CKY_NSCORE + index[f]];
            if (index[f] == CKY_SCORE_MODEL)
                jdouble_format_fixed(x, 8, buf, sizeof buf);
            else
                jdouble_format(x, buf, sizeof buf);
            cr_expect_str_eq(buf, field[k], "%s, line %d", files[f], k + 1);
            cr_expect_str_eq(trees[k], text[k], "%s, line %d", files[f], k + 1);
            free(field[k]);
            free(text[k]);
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

/* The preterminals under t, -NONE- left out: their words and tags appended to w and g, each
 * followed by a space. */
static void add_tagged(const tree *t, char *w, char *g, size_t size)
{
    for (const tree *c = t->child; c; c = c->next) {
        if (c->child && !c->child->child && !c->child->next) {
            if (strcmp(c->label, "-NONE-")) {
                cr_assert_lt(strlen(w) + strlen(c->child->label) + 1, size);
                cr_assert_lt(strlen(g) + strlen(c->label) + 1, size);
                strcat(strcat(w, c->child->label), " ");
                strcat(strcat(g, c->label), " ");
            }
        } else if (c->child) {
            add_tagged(c, w, g, size);
        }
    }
}

/* The words and gold tags of the first n trees of dev.mrg as the jar read them for its
 * -useGoldPOS file (tools/berkeley/make-cli-refs.sh's gold_pos: the preterminals' words and
 * tags as written, -NONE- left out), each a line separated by spaces, into words[k] and
 * tags[k] (malloc'ed). */
static void dev_tagged(int n, char **words, char **tags)
{
    tree_reader *rd;
    cr_assert_eq(tree_reader_open(CKY_SHARED "/data/ptb-sample/dev.mrg", &rd), CKY_OK);
    for (int k = 0; k < n; k++) {
        tree *t;
        cr_assert_eq(tree_reader_next(rd, &t), CKY_OK);
        cr_assert_not_null(t);
        words[k] = calloc(1, 65536);
        tags[k] = calloc(1, 65536);
        cr_assert(words[k] && tags[k]);
        add_tagged(t, words[k], tags[k], 65536);
        tree_free(t);
    }
    tree_reader_close(rd);
}

/* The first n lines of `path` (without their line ends) into line[k] (malloc'ed). */
static void read_lines_of(const char *path, int n, char **line)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    for (int k = 0; k < n; k++) {
        cr_assert_not_null(fgets(buf, sizeof buf, f), "%s: line %d", path, k + 1);
        buf[strcspn(buf, "\n")] = 0;
        line[k] = strdup(buf);
    }
    fclose(f);
}

/* The word<TAB>tag lines of cky parse --gold-pos for the n sentences words[k] / tags[k]
 * (separated by single spaces, as dev_tagged writes them) into the file at path. */
static void write_gold_pos(const char *path, int n, char **words, char **tags)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    for (int k = 0; k < n; k++) {
        char *w = strdup(words[k]), *g = strdup(tags[k]), *ws, *gs;
        for (char *a = strtok_r(w, " ", &ws), *b = strtok_r(g, " ", &gs); a && b;
             a = strtok_r(NULL, " ", &ws), b = strtok_r(NULL, " ", &gs))
            fprintf(f, "%s\t%s\n", a, b);
        fputc('\n', f);
        free(w);
        free(g);
    }
    fclose(f);
}

/* cky_parser_parse_tagged on the first dev sentences with dev.mrg's tags, sample-sm5 (the
 * jar's default: pruned max-rule): every tree the jar's -useGoldPOS output
 * (cli/dev.sample-sm5.goldpos.txt, 7 of these 18 trees not its plain output, so a parse that
 * ignored the tags fails) and cky parse --gold-pos's; sentence 17, whose -LRB- the jar reads
 * as the empty tag, parsed again without its tags and its message saying so. The scores
 * (cky_parser_parse_tagged_scores) are cky parse --gold-pos --tree-likelihood
 * --sentence-likelihood --confidence's; the k-best lists (cky_parser_parse_tagged_kbest)
 * start with the tree and keep every word's gold tag. */
Test(api, gold_tags_are_the_jars, .timeout = 300)
{
    enum { N = 18, RETRIED = 16, K = 3, NK = 6 };
    cky_parser *p = cky_parser_open(CKY_SHARED "/grammars/sample-sm5/sample-sm5.gr", "ref",
                                    "maxrule", 1, 200, 0);
    cr_assert_not_null(p, "%s", cky_error_message());
    char *words[N], *tags[N], *jar[N], *plain[N], *trees[N], *msg[N];
    int outcomes[N];
    dev_tagged(N, words, tags);
    read_lines_of(REF "/cli/dev.sample-sm5.goldpos.txt", N, jar);
    read_lines_of(REF "/dev.sample-sm5.maxrule.mrg", N, plain);
    const char *const *w = (const char *const *)words, *const *g = (const char *const *)tags;
    cr_assert_eq(cky_parser_parse_tagged(p, w, g, N, trees, outcomes, msg), 0, "%s",
                 cky_error_message());
    int differ = 0;
    for (int k = 0; k < N; k++) {
        cr_expect_str_eq(trees[k], jar[k], "sentence %d", k + 1);
        cr_expect_eq(outcomes[k], CKY_PARSE_OK, "sentence %d", k + 1);
        differ += strcmp(jar[k], plain[k]) != 0;
        if (k == RETRIED)
            cr_expect(msg[k] && strstr(msg[k], "no tree with the gold tags: parsed without "
                                       "them"), "sentence %d: %s", k + 1, msg[k]);
        else
            cr_expect_null(msg[k], "sentence %d: %s", k + 1, msg[k]);
    }
    cr_expect_eq(differ, 7, "the jar's trees with gold tags are not its plain ones");
    cr_expect(strstr(tags[RETRIED], "-LRB-"));

    /* cky parse --gold-pos on the same sentences */
    char d[64] = "/tmp/cky-api-test-XXXXXX";
    cr_assert_not_null(mkdtemp(d));
    char path[128];
    snprintf(path, sizeof path, "%s/in.tags", d);
    write_gold_pos(path, N, words, tags);
    cr_assert_eq(run_sh(d, "'" RUN_CKY "' parse -g '" SM5 "' --engine ref --gold-pos -i in.tags "
                        "> trees 2>/dev/null && '" RUN_CKY "' parse -g '" SM5 "' --engine ref "
                        "--gold-pos --tree-likelihood --sentence-likelihood --confidence "
                        "-i in.tags > scores 2>/dev/null"), 0);
    char *cli = run_read(d, "trees"), *cli_sc = run_read(d, "scores"), *at = cli, *sat = cli_sc;
    double sc[N * CKY_NSCORE];
    char *st[N];
    cr_assert_eq(cky_parser_parse_tagged_scores(p, w, g, N, st, sc, outcomes, NULL), 0, "%s",
                 cky_error_message());
    for (int k = 0; k < N; k++) {
        char *nl = strchr(at, '\n'), *snl = strchr(sat, '\n'), want[65536];
        cr_assert(nl && snl, "cky parse wrote fewer than %d lines", N);
        *nl = *snl = '\0';
        cr_expect_str_eq(trees[k], at, "sentence %d: not cky parse --gold-pos's", k + 1);
        char a[64], b[64], c[64];
        jdouble_format(sc[k * CKY_NSCORE + CKY_SCORE_TREE], a, sizeof a);
        jdouble_format(sc[k * CKY_NSCORE + CKY_SCORE_SENTENCE], b, sizeof b);
        jdouble_format(sc[k * CKY_NSCORE + CKY_SCORE_CONFIDENCE], c, sizeof c);
        snprintf(want, sizeof want, "%s\t%s\t%s\t%s", a, b, c, st[k]);
        cr_expect_str_eq(want, sat, "sentence %d: not cky parse --gold-pos's scores", k + 1);
        cr_expect_str_eq(st[k], trees[k], "sentence %d", k + 1);
        at = nl + 1;
        sat = snl + 1;
        cky_string_free(st[k]);
    }
    free(cli);
    free(cli_sc);
    run_sh("/", "rm -rf '%s'", d);

    /* k-best lists of the first sentences: the tree first, every tree with the gold tags */
    char *kt[NK * K];
    double ks[NK * K];
    int counts[NK];
    cr_assert_eq(cky_parser_parse_tagged_kbest(p, w, g, NK, K, kt, ks, counts, outcomes, NULL),
                 0, "%s", cky_error_message());
    for (int k = 0; k < NK; k++) {
        cr_expect_eq(counts[k], K, "sentence %d", k + 1);
        cr_expect_str_eq(kt[k * K], trees[k], "sentence %d", k + 1);
        for (int x = 0; x < counts[k]; x++) {
            char *ws, *gs, *wc = strdup(words[k]), *gc = strdup(tags[k]), pre[256];
            for (char *a = strtok_r(wc, " ", &ws), *b = strtok_r(gc, " ", &gs); a && b;
                 a = strtok_r(NULL, " ", &ws), b = strtok_r(NULL, " ", &gs)) {
                snprintf(pre, sizeof pre, "(%s %s)", b, a);
                cr_expect(strstr(kt[k * K + x], pre), "sentence %d, tree %d lacks %s: %s",
                          k + 1, x + 1, pre, kt[k * K + x]);
            }
            free(wc);
            free(gc);
            cky_string_free(kt[k * K + x]);
        }
    }
    for (int k = 0; k < N; k++) {
        cky_string_free(trees[k]);
        cky_string_free(msg[k]);
        free(words[k]);
        free(tags[k]);
        free(jar[k]);
        free(plain[k]);
    }
    cky_parser_close(p);
}

/* A tag the grammar lacks: the sentence parsed again without its tags (the tree of its plain
 * parse, the message saying so); a tag up to its first '-' (NN-HLN is NN); the refusals:
 * counts of words and tags that differ, NULL tags, a parser without pruning. */
Test(api, wrong_gold_tags)
{
    cky_parser *p = cky_parser_open(SM1, "ref", "maxrule", 1, 200, 0);
    cr_assert_not_null(p, "%s", cky_error_message());
    const char *lines[] = {"The dog barks .", "Time flies like an arrow",
                           "Time flies like an arrow", ""};
    const char *tags[] = {"DT NOSUCHTAG VBZ .", "VB-HLN NNS IN DT-X NN", "VB NNS IN DT NN", ""};
    char *t[4], *m[4], *plain[1];
    int o[4];
    cr_assert_eq(cky_parser_parse_tagged(p, lines, tags, 4, t, o, m), 0, "%s",
                 cky_error_message());
    cr_assert_eq(cky_parser_parse(p, lines, 1, 0, plain, o, NULL), 0);
    cr_expect_str_eq(t[0], plain[0], "a tag the grammar lacks: the plain parse");
    cr_expect(m[0] && strstr(m[0], "no tree with the gold tags"), "%s", m[0]);
    cr_expect(strstr(t[1], "(VB Time)") && strstr(t[1], "(NNS flies)"), "%s", t[1]);
    cr_expect_str_eq(t[1], t[2], "the tag up to its first '-'");
    cr_expect_null(m[1]);
    cr_expect_eq(o[3], CKY_PARSE_EMPTY);
    cr_expect_str_eq(m[3], "empty sentence");
    for (int k = 0; k < 4; k++) {
        cky_string_free(t[k]);
        cky_string_free(m[k]);
    }
    cky_string_free(plain[0]);
    const char *fewer[] = {"DT NN VBZ .", "NN VBZ IN DT"};
    cr_expect_eq(cky_parser_parse_tagged(p, lines, fewer, 2, t, o, NULL), -1);
    cr_expect(strstr(cky_error_message(), "line 2: 5 words but 4 tags"), "%s",
              cky_error_message());
    const char *none[] = {"DT NN VBZ .", NULL};
    cr_expect_eq(cky_parser_parse_tagged(p, lines, none, 2, t, o, NULL), -1);
    cr_expect(strstr(cky_error_message(), "line 2: its tags are NULL"), "%s",
              cky_error_message());
    cr_expect_eq(cky_parser_parse_tagged(p, lines, NULL, 1, t, o, NULL), -1);
    cky_parser_close(p);
    p = cky_parser_open_prune(SM1, "ref", "maxrule", "none", 1, 200, 0, NULL, NULL);
    cr_assert_not_null(p, "%s", cky_error_message());
    cr_expect_eq(cky_parser_parse_tagged(p, lines, tags, 1, t, o, NULL), -1);
    cr_expect(strstr(cky_error_message(), "gold tags need pruning"), "%s", cky_error_message());
    double sc[CKY_NSCORE];
    cr_expect_eq(cky_parser_parse_tagged_scores(p, lines, tags, 1, t, sc, o, NULL), -1);
    cky_parser_close(p);
}
