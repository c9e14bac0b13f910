/* Tests of the native .gr loader (grammar/native.c): the .gr grammars equal their text
 * exports rule for rule and bit for bit, sample-sm6 has the sizes ../shared/README.md gives,
 * it loads fast, bad files give clear errors, and every fuzzer regression input is refused
 * without a crash. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../grammar/grammar.h"
#include "../grammar/jser.h"
#include "../grammar/native.h"
#include "../util/io.h"

#define GRAMMARS CKY_SHARED "/grammars/"

static grammar *load_native(const char *path)
{
    grammar *g = NULL;
    cky_status st = grammar_load_native(path, &g);
    cr_assert_eq(st, CKY_OK, "%s", cky_last_error());
    return g;
}

static int same_bits(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* Load NAME.gr and the text export NAME.*, match symbols by name, compare everything. */
static void compare_with_text(const char *name)
{
    char gr[512], prefix[512];
    snprintf(gr, sizeof gr, GRAMMARS "%s/%s.gr", name, name);
    snprintf(prefix, sizeof prefix, GRAMMARS "%s/%s", name, name);
    grammar *n = load_native(gr), *t = NULL;
    cr_assert_eq(grammar_load_text(prefix, &t), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(n->nsym, t->nsym);
    int *map = malloc((size_t)n->nsym * sizeof *map); /* native id -> text id */
    for (int s = 0; s < n->nsym; s++) {
        map[s] = grammar_find_symbol(t, n->name[s]);
        cr_assert_geq(map[s], 0, "%s: symbol %s missing from the text export", name,
                      n->name[s]);
        cr_assert_eq(n->nsub[s], t->nsub[map[s]], "%s: nsub of %s", name, n->name[s]);
        cr_assert_eq(n->phrasal[s], t->phrasal[map[s]], "%s: phrasal flag of %s", name,
                     n->name[s]);
    }
    cr_assert_eq(n->nbinary, t->nbinary, "%s: binary rules %d vs %d", name, n->nbinary,
                 t->nbinary);
    cr_assert_eq(n->nunary, t->nunary, "%s: unary rules %d vs %d", name, n->nunary, t->nunary);
    for (int P = 0; P < n->nsym; P++) {
        int tp = map[P];
        int nb = n->binary_first[P + 1] - n->binary_first[P];
        cr_assert_eq(nb, t->binary_first[tp + 1] - t->binary_first[tp], "%s: rules of %s", name,
                     n->name[P]);
        for (int k = 0; k < nb; k++) { /* same order within the parent */
            const grammar_binary *a = &n->binary[n->binary_first[P] + k];
            const grammar_binary *b = &t->binary[t->binary_first[tp] + k];
            cr_assert(map[a->left] == b->left && map[a->right] == b->right,
                      "%s: rule %d of %s: %s %s vs %s %s", name, k, n->name[P],
                      n->name[a->left], n->name[a->right], t->name[b->left], t->name[b->right]);
            cr_assert_eq(a->nrow, b->nrow, "%s: rows of %s -> %s %s", name, n->name[P],
                         n->name[a->left], n->name[a->right]);
            cr_assert(!memcmp(a->row_l, b->row_l, (size_t)a->nrow * sizeof(int)) &&
                      !memcmp(a->row_r, b->row_r, (size_t)a->nrow * sizeof(int)));
            cr_assert(same_bits(a->score, b->score, (size_t)a->nrow * n->nsub[P]),
                      "%s: scores of %s -> %s %s differ", name, n->name[P], n->name[a->left],
                      n->name[a->right]);
        }
        int nu = n->unary_first[P + 1] - n->unary_first[P];
        cr_assert_eq(nu, t->unary_first[tp + 1] - t->unary_first[tp]);
        for (int k = 0; k < nu; k++) {
            const grammar_unary *a = &n->unary[n->unary_first[P] + k];
            const grammar_unary *b = &t->unary[t->unary_first[tp] + k];
            cr_assert_eq(map[a->child], b->child, "%s: unary %d of %s", name, k, n->name[P]);
            cr_assert(same_bits(a->score, b->score, (size_t)n->nsub[a->child] * n->nsub[P]),
                      "%s: scores of %s -> %s differ", name, n->name[P], n->name[a->child]);
        }
    }
    free(map);
    grammar_free(n);
    grammar_free(t);
}

Test(native, sm1_equals_text_export) { compare_with_text("sample-sm1"); }
Test(native, sm3_equals_text_export) { compare_with_text("sample-sm3"); }
Test(native, sm5_equals_text_export, .timeout = 600) { compare_with_text("sample-sm5"); }

/* Cells of a [[[D or [[D table that are nonzero, recursively (null rows count nothing). */
static long nonzero_cells(const jser_node *a)
{
    if (!a)
        return 0;
    long n = 0;
    if (a->u.array.elem == 'D') {
        for (size_t i = 0; i < a->u.array.length; i++)
            n += ((const double *)a->u.array.data)[i] != 0;
        return n;
    }
    for (size_t i = 0; i < a->u.array.length; i++)
        n += nonzero_cells(((const jser_node *const *)a->u.array.data)[i]);
    return n;
}

/* Nonzero score cells of all rules in the List[] field `field` of the Grammar. */
static long file_rule_cells(const jser_graph *js, const char *field)
{
    const jser_node *gr, *lists, *scores;
    cr_assert_eq(jser_get_object(jser_root(js), "gr", &gr), CKY_OK);
    cr_assert_eq(jser_get_object(gr, field, &lists), CKY_OK);
    long n = 0;
    for (size_t P = 0; P < lists->u.array.length; P++) {
        const jser_node *const *rules;
        size_t k;
        cr_assert_eq(jser_get_list(((const jser_node *const *)lists->u.array.data)[P], field,
                                   &rules, &k),
                     CKY_OK);
        for (size_t i = 0; i < k; i++) {
            cr_assert_eq(jser_get_object(rules[i], "scores", &scores), CKY_OK);
            n += nonzero_cells(scores);
        }
    }
    return n;
}

/* ../shared/README.md's sample-sm6 sizes, and how each is defined:
 * - 93 symbols; 645 phrasal substates; the substates sum to 1,076 (the README's 1,081 and
 *   436 tag substates are 5 more than numSubStates gives: 431 tag substates; sample-sm1/3/5
 *   show the same +5: 139/312/711 against 144/317/716);
 * - 515,604 binary rules = nonzero cells of binaryRulesWithParent in the file, before the
 *   parse-time pruning (342,714 remain >= 1e-10, which grammar_count_binary counts);
 * - 34,901 unary rules = nonzero cells of closedViterbiRulesWithParent including the 1,076
 *   identity cells (grammar_count_unary: 33,825 without them). */
Test(native, sm6_sizes, .timeout = 600)
{
    const char *path = GRAMMARS "sample-sm6/sample-sm6.gr";
    grammar *g = load_native(path);
    cr_assert_eq(g->nsym, 93);
    cr_assert_eq(g->nsub_total, 1076);
    int phrasal = 0, tags = 0;
    for (int s = 0; s < g->nsym; s++) {
        phrasal += g->phrasal[s] ? g->nsub[s] : 0;
        tags += !g->phrasal[s];
    }
    cr_assert_eq(phrasal, 645);
    cr_assert_eq(tags, 45);
    cr_assert_str_eq(g->name[0], "ROOT");
    cr_assert_geq(grammar_find_symbol(g, "@NP"), 0);
    cr_assert_eq(grammar_find_symbol(g, "NP^g"), -1, "the ^g suffix is dropped");
    cr_assert_eq(grammar_count_binary(g), 342714);
    cr_assert_eq(grammar_count_unary(g), 33825);
    grammar_free(g);

    jser_graph *js;
    cr_assert_eq(jser_read_file(path, &js), CKY_OK);
    cr_assert_eq(file_rule_cells(js, "binaryRulesWithParent"), 515604);
    cr_assert_eq(file_rule_cells(js, "closedViterbiRulesWithParent"), 34901);
    jser_free(js);
}

Test(native, grammar_load_recognises_gr)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(GRAMMARS "sample-sm1/sample-sm1.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    cr_assert_eq(g->nsub_total, 139);
    double *out = malloc((size_t)g->nsub_total * sizeof *out);
    cr_assert_eq(grammar_score_word(g, "the", 3, out), CKY_OK);
    int dt = grammar_find_symbol(g, "DT"), np = grammar_find_symbol(g, "NP");
    cr_assert(isfinite(out[g->sub_offset[dt]]) && out[g->sub_offset[dt]] < 0);
    cr_assert(isinf(out[g->sub_offset[np]]) && out[g->sub_offset[np]] < 0);
    free(out);
    grammar_free(g);
}

Test(native, bad_files)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_native("/nonexistent/x.gr", &g), CKY_ERR_IO);
    cr_assert_eq(grammar_load_native(GRAMMARS "sample-sm1/sample-sm1.splits", &g),
                 CKY_ERR_FORMAT);
    cr_assert(strstr(cky_last_error(), "sample-sm1.splits"), "%s", cky_last_error());
    /* a valid stream whose top-level object is not a ParserData */
    static const unsigned char str[] = {0xAC, 0xED, 0x00, 0x05, 0x74, 0x00, 0x01, 'x'};
    cr_assert_eq(grammar_load_native_stream(str, sizeof str, "s", &g), CKY_ERR_FORMAT);
    cr_assert(strstr(cky_last_error(), "ParserData"), "%s", cky_last_error());
    cr_assert_null(g);
}

/* Every prefix length class of the real stream fails cleanly. */
Test(native, truncated_real_stream, .timeout = 600)
{
    unsigned char *raw, *data;
    size_t nraw, n;
    cr_assert_eq(io_read_raw(GRAMMARS "sample-sm1/sample-sm1.gr", &raw, &nraw), CKY_OK);
    cr_assert_eq(jser_inflate(raw, nraw, "sm1", &data, &n), CKY_OK);
    for (size_t len = 0; len < n; len += 1 + len / 3) {
        grammar *g = NULL;
        cr_assert_eq(grammar_load_native_stream(data, len, "sm1", &g), CKY_ERR_FORMAT,
                     "prefix of %zu bytes", len);
    }
    grammar *g = NULL;
    cr_assert_eq(grammar_load_native_stream(data, n, "sm1", &g), CKY_OK, "%s", cky_last_error());
    grammar_free(g);
    free(raw);
    free(data);
}

/* fuzz/regressions: inputs that once crashed or hung the reader; each must now be refused. */
Test(native, fuzz_regressions)
{
    const char *dirs[] = {"fuzz/regressions", CKY_BUILD "/../fuzz/regressions"};
    DIR *d = NULL;
    const char *dir = NULL;
    for (size_t i = 0; !d && i < 2; i++)
        d = opendir(dir = dirs[i]);
    cr_assert_not_null(d, "no fuzz/regressions folder");
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unsigned char *data;
        size_t n;
        cr_assert_eq(io_read_raw(path, &data, &n), CKY_OK);
        grammar *g = NULL;
        cky_status st = grammar_load_native_stream(data, n, e->d_name, &g);
        cr_expect_neq(st, CKY_OK, "%s loaded", e->d_name);
        grammar_free(g);
        free(data);
        count++;
    }
    closedir(d);
    cr_log_info("%d fuzz regression inputs refused", count);
}
