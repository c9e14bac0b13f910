/* Tests of corpus_tools/evalb.h: every fixture of reference/evalb reproduced digit for
 * digit (stdout, stderr, exit status), in full and summary-only mode, from files, from a
 * multi-line .mrg and from trees in memory; plus the spec's edge cases. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/evalb.h"
#include "../util/io.h"

#define FIXTURES CKY_SHARED "/reference/evalb"

typedef struct result {
    char *out, *err;
    size_t out_len, err_len;
    int exit_status;
    evalb_summary all;
} result;

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

static char *slurp(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!io_file_exists(path))
        return NULL;
    char *data;
    size_t len;
    cr_assert_eq(io_read_file(path, &data, &len), CKY_OK, "%s", cky_last_error());
    return data;
}

static result score_files(const char *gold, const char *test, const evalb_params *p)
{
    result r = {0};
    FILE *out = open_memstream(&r.out, &r.out_len), *err = open_memstream(&r.err, &r.err_len);
    cky_status st = evalb_score_files(gold, test, p, out, err, &r.exit_status, &r.all);
    cr_assert_eq(st, CKY_OK, "%s", cky_last_error());
    fclose(out);
    fclose(err);
    return r;
}

/* The options of args.txt ("-c 20 -e 30"), if the fixture has one. */
static evalb_params fixture_params(const char *dir, int sentences)
{
    evalb_params p = evalb_params_default();
    p.sentences = sentences;
    char *args = slurp(dir, "args.txt");
    if (args) {
        char *save, *tok = strtok_r(args, " \t\n", &save);
        while (tok) {
            char *val = strtok_r(NULL, " \t\n", &save);
            cr_assert(val && (!strcmp(tok, "-c") || !strcmp(tok, "-e")), "args.txt of %s", dir);
            *(tok[1] == 'c' ? &p.cutoff_len : &p.max_error) = atoi(val);
            tok = strtok_r(NULL, " \t\n", &save);
        }
        free(args);
    }
    return p;
}

/* Compare a result with a fixture's expected files; summary-only mode expects the part
 * of expected.txt from "=== Summary ===" on (nothing when EVALB stopped). */
static void check_fixture(const char *dir, const result *r, int sentences)
{
    char *want_out = slurp(dir, "expected.txt"), *want_err = slurp(dir, "expected.stderr");
    char *want_exit = slurp(dir, "expected.exit");
    cr_assert(want_out && want_err && want_exit, "fixture %s incomplete", dir);
    const char *want = want_out;
    if (!sentences) {
        const char *s = strstr(want_out, "=== Summary ===");
        want = s ? s : "";
    }
    cr_expect_str_eq(r->out, want, "stdout of %s (sentences=%d)", dir, sentences);
    cr_expect_str_eq(r->err, want_err, "stderr of %s", dir);
    int code = -1;
    cr_assert_eq(sscanf(want_exit, "exit=%d", &code), 1);
    cr_expect_eq(r->exit_status, code, "exit status of %s", dir);
    free(want_out);
    free(want_err);
    free(want_exit);
}

Test(evalb, all_fixtures_digit_for_digit)
{
    DIR *d = opendir(FIXTURES);
    cr_assert(d);
    struct dirent *ent;
    int n = 0;
    while ((ent = readdir(d))) {
        if (ent->d_name[0] == '.')
            continue;
        char dir[1024], gold[1100], test[1100];
        snprintf(dir, sizeof dir, "%s/%s", FIXTURES, ent->d_name);
        snprintf(gold, sizeof gold, "%s/gold.mrg", dir);
        snprintf(test, sizeof test, "%s/test.mrg", dir);
        if (!io_file_exists(gold))
            continue;
        for (int sentences = 0; sentences <= 1; sentences++) {
            evalb_params p = fixture_params(dir, sentences);
            result r = score_files(gold, test, &p);
            check_fixture(dir, &r, sentences);
            result_free(&r);
        }
        n++;
    }
    closedir(d);
    cr_expect_geq(n, 13, "only %d fixture folders found", n);
}

Test(evalb, summary_numbers)
{
    evalb_params p = evalb_params_default();
    result r = score_files(FIXTURES "/01-berkeley-sm6-viterbi/gold.mrg",
                           FIXTURES "/01-berkeley-sm6-viterbi/test.mrg", &p);
    cr_expect_eq(r.all.sentences, 433);
    cr_expect_eq(r.all.matched, 7249);
    cr_expect_eq(r.all.gold_brackets, 8590);
    cr_expect_eq(r.all.test_brackets, 8715);
    cr_expect(fabs(r.all.fmeasure - 83.78) < 0.005);
    result_free(&r);
}

/* A multi-line .mrg gold (dev.mrg, whose trees are fixture 01's gold lines) is converted. */
Test(evalb, multiline_mrg_gold)
{
    const char *dir = FIXTURES "/01-berkeley-sm6-viterbi";
    evalb_params p = fixture_params(dir, 1);
    result r = score_files(CKY_SHARED "/data/ptb-sample/dev.mrg",
                           FIXTURES "/01-berkeley-sm6-viterbi/test.mrg", &p);
    check_fixture(dir, &r, 1);
    result_free(&r);
}

static tree **read_trees(const char *path, int *n)
{
    tree_reader *rd;
    cr_assert_eq(tree_reader_open(path, &rd), CKY_OK);
    tree **v = NULL, *t;
    cky_status st;
    *n = 0;
    while ((st = tree_reader_next(rd, &t)) == CKY_OK && t) {
        v = realloc(v, (*n + 1) * sizeof *v);
        v[(*n)++] = t;
    }
    cr_assert_eq(st, CKY_OK, "%s", cky_last_error());
    tree_reader_close(rd);
    return v;
}

/* The in-memory path gives the same output as the file path. */
Test(evalb, trees_in_memory)
{
    const char *fixtures[] = {"01-berkeley-sm6-viterbi", "02-berkeley-sm5-maxrule"};
    for (int k = 0; k < 2; k++) {
        char dir[1024], gold[1100], test[1100];
        snprintf(dir, sizeof dir, "%s/%s", FIXTURES, fixtures[k]);
        snprintf(gold, sizeof gold, "%s/gold.mrg", dir);
        snprintf(test, sizeof test, "%s/test.mrg", dir);
        int ng, nt;
        tree **g = read_trees(gold, &ng), **t = read_trees(test, &nt);
        cr_assert_eq(ng, 433);
        cr_assert_eq(nt, 433);
        result r = {0};
        evalb_params p = evalb_params_default();
        p.sentences = 1;
        FILE *out = open_memstream(&r.out, &r.out_len), *err = open_memstream(&r.err, &r.err_len);
        cr_assert_eq(evalb_score_trees((const tree *const *)g, ng, (const tree *const *)t, nt, &p,
                                       out, err, &r.exit_status, &r.all),
                     CKY_OK);
        fclose(out);
        fclose(err);
        check_fixture(dir, &r, 1);
        result_free(&r);
        /* the incremental API too */
        evalb *e;
        char *sum = NULL;
        size_t len;
        out = open_memstream(&sum, &len);
        p.sentences = 0;
        cr_assert_eq(evalb_new(&p, out, NULL, &e), CKY_OK);
        for (int i = 0; i < ng; i++)
            cr_assert_eq(evalb_add_trees(e, g[i], t[i]), CKY_OK);
        cr_expect_eq(evalb_finish(e, 0, 0), 0);
        evalb_free(e);
        fclose(out);
        r = (result){.out = sum, .err = strdup("")};
        check_fixture(dir, &r, 0);
        result_free(&r);
        for (int i = 0; i < ng; i++)
            tree_free(g[i]);
        for (int i = 0; i < nt; i++)
            tree_free(t[i]);
        free(g);
        free(t);
    }
}

/* Score single lines; returns the row, stderr and exit status in r. */
static result score_lines(const char *gold, const char *test, int max_error)
{
    result r = {0};
    evalb_params p = evalb_params_default();
    p.sentences = 1;
    p.max_error = max_error;
    FILE *out = open_memstream(&r.out, &r.out_len), *err = open_memstream(&r.err, &r.err_len);
    evalb *e;
    cr_assert_eq(evalb_new(&p, out, err, &e), CKY_OK);
    evalb_add_line(e, gold, test);
    r.exit_status = evalb_finish(e, 0, 0);
    evalb_get_summary(e, 0, &r.all);
    evalb_free(e);
    fclose(out);
    fclose(err);
    return r;
}

/* The row of sentence 1 in a full output. */
static char *row(const result *r)
{
    static char buf[256];
    const char *s = strstr(r->out, "=\n   1 ");
    cr_assert(s, "no row in %s", r->out);
    s += 2;
    size_t n = strcspn(s, "\n");
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

Test(evalb, spec_edge_cases)
{
    /* Punctuation at the edge does not change spans; the empty root counts and matches. */
    result r = score_lines("( (S (NP (DT a)) (VP (VB b)) (. .)) )", "( (S (, ,) (NP (DT a)) (VP (VB b))) )", 10);
    cr_expect_str_eq(row(&r), "   1    3    0  100.00 100.00     4      4    4      0      2     2   100.00");
    result_free(&r);
    /* a missing ')' is an error sentence whose row still shows its numbers */
    r = score_lines("( (S (NP (DT a)) (VP (VB b))) )", "( (S (NP (DT a)) (VP (VB b)))", 10);
    cr_expect_str_eq(r.err, "1 : Bracketing is unbalanced (too many open bracket)\n");
    cr_expect_eq(r.all.errors, 1);
    cr_expect_eq(r.exit_status, 0);
    result_free(&r);
    /* stray text: "Reading sentence" until the error limit, then exit 1 and no summary */
    r = score_lines("( (S (NP (DT a)) junk) )", "( (S (NP (DT a))) )", 10);
    cr_expect_eq(r.exit_status, 1);
    int lines = 0;
    for (const char *p = r.err; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 12);
    cr_expect(strstr(r.err, "1 : Reading sentence\n") == r.err);
    cr_expect_null(strstr(r.out, "Summary"));
    result_free(&r);
    /* a second word in a leaf */
    r = score_lines("(S (NN a b))", "(S (NN a))", 0);
    cr_expect_str_eq(r.err, "1 : More than two elements in a bracket\n1 : Reading sentence\n");
    cr_expect_eq(r.exit_status, 1);
    result_free(&r);
    /* (())" from a failed parse is a skip; (X) is a childless phrase, dropped */
    r = score_lines("( (S (X) (NN a)) )", "(())", 10);
    cr_expect_str_eq(row(&r), "   1    1    2    0.00   0.00     0      0    0      0      0     0     0.00");
    cr_expect_eq(r.all.skips, 1);
    result_free(&r);
    /* nothing matches: FMeasure is printed -nan */
    r = score_lines("(S (NN a) (NN b))", "(X (NN a) (NN b))", 10);
    cr_expect(strstr(r.out, "Bracketing FMeasure       =   -nan\n"));
    cr_expect(isnan(r.all.fmeasure));
    result_free(&r);
}

Test(evalb, line_count_mismatch)
{
    const char *g = "/tmp/cky_test_evalb_gold", *t = "/tmp/cky_test_evalb_test";
    FILE *f = fopen(g, "w");
    fputs("(S (NN a))\n(S (NN b))\n", f);
    fclose(f);
    f = fopen(t, "w");
    fputs("(S (NN a))\n", f);
    fclose(f);
    evalb_params p = evalb_params_default();
    result r = score_files(g, t, &p);
    cr_expect_str_eq(r.err, "2 : Number of lines unmatch (too many lines in gold file)\n");
    cr_expect_eq(r.exit_status, 0);
    cr_expect_eq(r.all.sentences, 1);
    result_free(&r);
    r = score_files(t, g, &p);
    cr_expect_str_eq(r.err, "2 : Number of lines unmatch (too many lines in test file)\n");
    result_free(&r);
    remove(g);
    remove(t);
}

Test(evalb, unreadable_file)
{
    evalb_params p = evalb_params_default();
    int status;
    cr_expect_eq(evalb_score_files("/nonexistent/gold", "/nonexistent/test", &p, NULL, NULL,
                                   &status, NULL),
                 CKY_ERR_IO);
}
