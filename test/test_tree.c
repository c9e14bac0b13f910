/* Tests of corpus_tools/tree.h: reading (.mrg, one per line, gzip, strings), malformed
 * input with line:col messages, writing round trips, normalization, sentence extraction. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../corpus_tools/tree.h"
#include "../util/io.h"

#define DEV_MRG CKY_SHARED "/data/ptb-sample/dev.mrg"
#define DEV_TXT CKY_SHARED "/data/ptb-sample/dev.txt"
#define BERKELEY CKY_SHARED "/reference/berkeley/dev.sample-sm6.viterbi.mrg"

/* tree_write (or tree_write_line) of t as a malloc'ed string. */
static char *to_string(const tree *t, int line)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    cr_assert(f);
    if (line)
        tree_write_line(t, f);
    else
        tree_write(t, f);
    fclose(f);
    return s;
}

static tree *parse(const char *s)
{
    tree *t = NULL;
    cky_status st = tree_parse_string(s, &t);
    cr_assert_eq(st, CKY_OK, "parsing '%s': %s", s, cky_last_error());
    return t;
}

/* Parse s, normalize it, and compare tree_write's output with want. */
static void check_normalized(const char *s, const char *want)
{
    tree *t = parse(s);
    cr_assert_eq(tree_normalize(&t), CKY_OK);
    char *got = to_string(t, 0);
    cr_expect_str_eq(got, want, "normalizing %s", s);
    free(got);
    tree_free(t);
}

/* The error message for a malformed string must be exactly want. */
static void check_error(const char *s, const char *want)
{
    tree *t = (tree *)1;
    cky_status st = tree_parse_string(s, &t);
    cr_expect_eq(st, CKY_ERR_FORMAT, "'%s' was accepted", s);
    cr_expect_null(t);
    cr_expect_str_eq(cky_last_error(), want, "for '%s'", s);
}

Test(tree, write_forms)
{
    tree *t = parse("( (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)) )");
    char *s = to_string(t, 0);
    cr_expect_str_eq(s, "( (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))");
    free(s);
    s = to_string(t, 1);
    cr_expect_str_eq(s, "( (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)) )\n");
    free(s);
    tree_free(t);
    t = parse("(S (NN x))"); /* a labeled root is wrapped too */
    s = to_string(t, 1);
    cr_expect_str_eq(s, "( (S (NN x)) )\n");
    free(s);
    tree_free(t);
    s = to_string(NULL, 1);
    cr_expect_str_eq(s, "(())\n");
    free(s);
    for (const char *const *e = (const char *const[]){"(())", "()", "( ( ) )", NULL}; *e; e++) {
        t = parse(*e); /* the empty parse */
        cr_expect_str_eq(t->label, "");
        cr_expect_null(t->child);
        s = to_string(t, 1);
        cr_expect_str_eq(s, "(())\n");
        free(s);
        tree_free(t);
    }
}

Test(tree, build_by_hand)
{
    tree *root = tree_new(""), *s = tree_new("S"), *np = tree_new("NN"), *w = tree_new("x");
    tree_add_child(root, s);
    tree_add_child(s, np);
    tree_add_child(np, w);
    tree_add_child(s, tree_new("VP"));
    tree_add_child(s->child->next, tree_new("y"));
    char *str = to_string(root, 1);
    cr_expect_str_eq(str, "( (S (NN x) (VP y)) )\n");
    free(str);
    tree_free(root);
}

/* Every line of a one-tree-per-line file reads back and writes out unchanged. */
Test(tree, one_per_line_round_trip)
{
    io_lines *in;
    tree_reader *r;
    cr_assert_eq(io_lines_open(BERKELEY, &in), CKY_OK);
    cr_assert_eq(tree_reader_open(BERKELEY, &r), CKY_OK);
    char *line;
    size_t len;
    int n = 0;
    while (io_lines_next(in, &line, &len) == CKY_OK && line) {
        tree *t;
        cr_assert_eq(tree_reader_next(r, &t), CKY_OK, "%s", cky_last_error());
        cr_assert_not_null(t);
        n++;
        cr_expect_eq(tree_reader_line(r), n);
        char *s = to_string(t, 1);
        s[strlen(s) - 1] = '\0';
        cr_expect_str_eq(s, line, "line %d", n);
        free(s);
        tree_free(t);
    }
    tree *t = (tree *)1;
    cr_expect_eq(tree_reader_next(r, &t), CKY_OK);
    cr_expect_null(t);
    cr_expect_eq(n, 433);
    io_lines_close(in);
    tree_reader_close(r);
}

/* All dev trees (multi-line .mrg, traces) give exactly the sentences of dev.txt. */
Test(tree, dev_sentences_match_dev_txt)
{
    io_lines *in;
    tree_reader *r;
    cr_assert_eq(io_lines_open(DEV_TXT, &in), CKY_OK);
    cr_assert_eq(tree_reader_open(DEV_MRG, &r), CKY_OK);
    char *line;
    size_t len;
    int n = 0;
    while (io_lines_next(in, &line, &len) == CKY_OK && line) {
        tree *t;
        cr_assert_eq(tree_reader_next(r, &t), CKY_OK, "%s", cky_last_error());
        cr_assert_not_null(t, "dev.mrg ends before dev.txt line %d", n + 1);
        if (n == 0) {
            cr_expect_eq(tree_reader_line(r), 2); /* dev.mrg starts with a blank line */
            cr_expect_str_eq(line, "Criminal charges were filed against Diceon Electronics Inc. "
                                   "and two company officials alleging waste disposal "
                                   "violations in its Chatsworth , Calif. , facility .");
        }
        if (n == 1)
            cr_expect_eq(tree_reader_line(r), 26);
        n++;
        char *s;
        cr_assert_eq(tree_sentence(t, &s), CKY_OK);
        cr_expect_str_eq(s, line, "dev sentence %d", n);
        free(s);
        /* normalization keeps the words */
        cr_assert_eq(tree_normalize(&t), CKY_OK);
        cr_assert_eq(tree_sentence(t, &s), CKY_OK);
        cr_expect_str_eq(s, line, "normalized dev sentence %d", n);
        free(s);
        tree_free(t);
    }
    tree *t;
    cr_expect_eq(tree_reader_next(r, &t), CKY_OK);
    cr_expect_null(t, "dev.mrg has more trees than dev.txt lines");
    cr_expect_eq(n, 433);
    io_lines_close(in);
    tree_reader_close(r);
}

Test(tree, words_array)
{
    tree *t = parse("( (S (NP-SBJ (-NONE- *T*-1)) (NP (PRP$ its) (NN (x y))) (. .)) )");
    char **w;
    int n;
    /* (NN (x y)) is a phrase NN over a preterminal x: the word is y */
    cr_assert_eq(tree_words(t, &w, &n), CKY_OK);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(w[0], "its");
    cr_expect_str_eq(w[1], "y");
    cr_expect_str_eq(w[2], ".");
    cr_expect_null(w[3]);
    free(w);
    tree_free(t);
    cr_assert_eq(tree_words(NULL, &w, &n), CKY_OK);
    cr_expect_eq(n, 0);
    free(w);
}

Test(tree, gzip_and_several_trees_per_line)
{
    const char *path = "/tmp/cky_test_tree.mrg.gz";
    gzFile g = gzopen(path, "wb");
    cr_assert(g);
    gzputs(g, "(S (NN a)) ( (S (NN b)\n  (VB c)) )\n\n(NN d)");
    gzclose(g);
    tree_reader *r;
    cr_assert_eq(tree_reader_open(path, &r), CKY_OK);
    const char *want[] = {"(S (NN a))", "( (S (NN b) (VB c)))", "(NN d)"};
    long lines[] = {1, 1, 4};
    for (int i = 0; i < 3; i++) {
        tree *t;
        cr_assert_eq(tree_reader_next(r, &t), CKY_OK, "%s", cky_last_error());
        cr_assert_not_null(t);
        char *s = to_string(t, 0);
        cr_expect_str_eq(s, want[i]);
        cr_expect_eq(tree_reader_line(r), lines[i]);
        free(s);
        tree_free(t);
    }
    tree *t;
    cr_expect_eq(tree_reader_next(r, &t), CKY_OK);
    cr_expect_null(t);
    tree_reader_close(r);
    remove(path);
}

Test(tree, open_missing_file)
{
    tree_reader *r;
    cr_expect_eq(tree_reader_open("/nonexistent/x.mrg", &r), CKY_ERR_IO);
    cr_expect(strstr(cky_last_error(), "/nonexistent/x.mrg"));
}

Test(tree, normalize)
{
    check_normalized("( (S (NP-SBJ-1 (NN a)) (VP=2 (VB b))) )", "( (S (NP (NN a)) (VP (VB b))))");
    check_normalized("(S (NP^g (NN a)) (ADVP|PRT (RB b)) (NP (PRP$ c)))",
                     "(S (NP (NN a)) (ADVP|PRT (RB b)) (NP (PRP$ c)))");
    /* -LRB- keeps its dash at position 0, as a tag and as a word */
    check_normalized("(NP (-LRB- -LRB-) (NN-HL a) (-RRB- -RRB-))",
                     "(NP (-LRB- -LRB-) (NN a) (-RRB- -RRB-))");
    /* traces go, and constituents left empty, up the chain */
    check_normalized("( (S (NP-SBJ (-NONE- *-1)) (VP (VBD went) (S (NP (-NONE- *)) (VP (-NONE- *T*)))) (. .)) )",
                     "( (S (VP (VBD went)) (. .)))");
    check_normalized("(TOP (S (NN a)))", "( (S (NN a)))");
    check_normalized("(ROOT (S (NN a)))", "( (S (NN a)))");
    check_normalized("(S (NP (NP (NN a))))", "(S (NP (NP (NN a))))"); /* X over X stays */
    check_normalized("(NP-SBJ-1 a-b)", "(NP a-b)");                  /* words unchanged */
    check_normalized("(-LRB-=2 a)", "(-LRB- a)");
    check_normalized("(NP-SBJ=2 a)", "(NP a)");
    check_normalized("(NP=2-SBJ a)", "(NP a)");
    tree *t = parse("( (S (-NONE- *)) )");
    cr_assert_eq(tree_normalize(&t), CKY_OK);
    cr_expect_null(t);
    t = parse("(())");
    cr_assert_eq(tree_normalize(&t), CKY_OK);
    cr_expect_not_null(t);
    tree_free(t);
}

Test(tree, malformed_input_messages)
{
    check_error("(NN a b)", "<string>:1:7: a second word 'b' in the leaf (NN a ...)");
    check_error("(S (NP (NN a)) junk (VP (VB b)))",
                "<string>:1:16: the word 'junk' among the subtrees of (S ...)");
    check_error("(NN a (X b))", "<string>:1:7: a subtree after the word 'a' of (NN ...)");
    check_error("(S (NP (NN a))", "<string>:1:15: end of input inside the tree that starts at "
                                   "line 1 (1 bracket(s) not closed)");
    check_error("(S (NN a)))", "<string>:1:11: text after the tree");
    check_error(")", "<string>:1:1: ')' without a matching '('");
    check_error("junk (S (NN a))", "<string>:1:1: text 'junk' outside a tree");
    check_error("( a)", "<string>:1:1: the constituent (a) has no children");
    check_error("(S ( (NN a)))", "<string>:1:4: a constituent without a label");
    check_error("(S (X) (NN a))", "<string>:1:4: the constituent (X) has no children");
    check_error("(S () (NN a))", "<string>:1:4: an empty constituent ()");
    check_error("( () (S (NN a)) )", "<string>:1:6: a subtree after the empty parse ()");
    check_error("", "<string>:1:1: no tree");
    check_error("  \n  ", "<string>:2:3: no tree");
    check_error("(S\n  (NP (NN a) b))", "<string>:2:14: the word 'b' among the subtrees of (NP ...)");
}

Test(tree, reader_errors_name_file_line_col)
{
    tree_reader *r;
    cr_assert_eq(tree_reader_open_string("x.mrg", "(S (NN a))\n\n  (S\n (NN b c))\n", &r), CKY_OK);
    tree *t;
    cr_assert_eq(tree_reader_next(r, &t), CKY_OK);
    tree_free(t);
    cr_expect_eq(tree_reader_next(r, &t), CKY_ERR_FORMAT);
    cr_expect_str_eq(cky_last_error(), "x.mrg:4:8: a second word 'c' in the leaf (NN b ...)");
    cr_expect_null(t);
    cr_expect_eq(tree_reader_next(r, &t), CKY_ERR_FORMAT); /* sticky */
    cr_expect_str_eq(cky_last_error(), "x.mrg:4:8: a second word 'c' in the leaf (NN b ...)");
    tree_reader_close(r);
}

/* Very deep nesting: no recursion anywhere. */
Test(tree, deep_nesting)
{
    enum { DEPTH = 200000 };
    char *s = malloc(DEPTH * 4 + 16), *p = s;
    for (int i = 0; i < DEPTH; i++)
        p += sprintf(p, "(A ");
    p += sprintf(p, "(B-1 x)");
    for (int i = 0; i < DEPTH; i++)
        *p++ = ')';
    *p = '\0';
    tree *t = parse(s);
    char *w = to_string(t, 0);
    cr_expect_str_eq(w, s); /* "B-1" printed as is */
    free(w);
    cr_assert_eq(tree_normalize(&t), CKY_OK);
    char *sent;
    cr_assert_eq(tree_sentence(t, &sent), CKY_OK);
    cr_expect_str_eq(sent, "x");
    free(sent);
    tree_free(t);
    s[strlen(s) - 1] = '\0'; /* unbalanced */
    tree *bad;
    cr_expect_eq(tree_parse_string(s, &bad), CKY_ERR_FORMAT);
    free(s);
}

/* Random garbage never crashes: each string is accepted or rejected with a message. */
Test(tree, fuzz_garbage)
{
    const char alphabet[] = "((()))  \n\tabNP-=^\x01\xff";
    srand(12345);
    char buf[64];
    for (int iter = 0; iter < 20000; iter++) {
        int n = rand() % (int)(sizeof buf - 1);
        for (int i = 0; i < n; i++)
            buf[i] = alphabet[rand() % (int)(sizeof alphabet - 1)];
        buf[n] = '\0';
        tree *t;
        cky_status st = tree_parse_string(buf, &t);
        cr_assert(st == CKY_OK || st == CKY_ERR_FORMAT);
        if (st == CKY_OK) {
            char *s = to_string(t, 0), *sent;
            tree *back;
            cr_assert_eq(tree_parse_string(s, &back), CKY_OK, "'%s' -> '%s'", buf, s);
            char *s2 = to_string(back, 0);
            cr_assert_str_eq(s, s2);
            cr_assert_eq(tree_normalize(&t), CKY_OK);
            cr_assert_eq(tree_sentence(t, &sent), CKY_OK);
            free(sent);
            free(s);
            free(s2);
            tree_free(back);
            tree_free(t);
        } else {
            cr_assert(strncmp(cky_last_error(), "<string>:", 9) == 0);
        }
    }
}
