/* Tests of the text-export loader (grammar/text.c, grammar/lexicon_text.c): counts of the
 * sample grammars, rule and lexicon values against lines of the files, the symbol order, and
 * the errors for malformed or missing files.
 *
 * How the counts of ../shared/README.md are defined: "binary rules" and "unary rules" are
 * lines of the .grammar file. The loader drops binary values < 1e-10 (parse-time pruning) and
 * identity unaries, so grammar_count_binary = binary lines - lines below 1e-10, and
 * grammar_count_unary + nsub_total = unary lines (one identity line per substate). The
 * README's substate counts (144 / 317) are 5 more than the files hold: the identity lines, the
 * .splits trees and the native .gr's numSubStates all give 139 / 312. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../grammar/grammar.h"

#define SM1 CKY_SHARED "/grammars/sample-sm1/sample-sm1"
#define SM3 CKY_SHARED "/grammars/sample-sm3/sample-sm3"

static grammar *load_ok(const char *prefix)
{
    grammar *g = NULL;
    cky_status st = grammar_load_text(prefix, &g);
    cr_assert_eq(st, CKY_OK, "loading %s: %s", prefix, cky_last_error());
    return g;
}

static void expect_counts(const char *prefix, int nsub_total, long binary_lines,
                          long binary_pruned, long unary_lines)
{
    grammar *g = load_ok(prefix);
    cr_expect_eq(g->nsym, 93);
    cr_expect_eq(g->nsub_total, nsub_total);
    cr_expect_eq(grammar_count_binary(g), binary_lines - binary_pruned);
    cr_expect_eq(grammar_count_unary(g) + g->nsub_total, unary_lines);
    cr_expect_eq(g->sub_offset[g->nsym - 1] + g->nsub[g->nsym - 1], g->nsub_total);
    grammar_free(g);
}

Test(text_grammar, counts_sm1) { expect_counts(SM1, 139, 3322, 785, 996); }

Test(text_grammar, counts_sm3) { expect_counts(SM3, 312, 32214, 12325, 4315); }

Test(text_grammar, symbols)
{
    grammar *g = load_ok(SM1);
    cr_expect_str_eq(g->name[0], "ROOT");
    cr_expect_eq(g->nsub[0], 1);
    cr_expect(g->phrasal[0]);
    /* order of first appearance: the first line is "S_0 -> CC_0 VP_0 ..." */
    cr_expect_str_eq(g->name[1], "S");
    cr_expect_str_eq(g->name[2], "CC");
    cr_expect_str_eq(g->name[3], "VP");
    int np = grammar_find_symbol(g, "NP"), atnp = grammar_find_symbol(g, "@NP");
    int nn = grammar_find_symbol(g, "NN"), comma = grammar_find_symbol(g, ",");
    cr_assert(np > 0 && atnp > 0 && nn > 0 && comma > 0);
    cr_expect(g->phrasal[np] && g->phrasal[atnp]);
    cr_expect(!g->phrasal[nn] && !g->phrasal[comma]);
    int nphrasal = 0;
    for (int s = 0; s < g->nsym; s++)
        nphrasal += g->phrasal[s];
    cr_expect_eq(nphrasal, 48); /* 93 symbols, 45 POS tags in the lexicon */
    grammar_free(g);
}

static const grammar_binary *find_binary(const grammar *g, const char *p, const char *l,
                                         const char *r)
{
    int P = grammar_find_symbol(g, p), L = grammar_find_symbol(g, l),
        R = grammar_find_symbol(g, r);
    for (int i = g->binary_first[P]; i < g->binary_first[P + 1]; i++)
        if (g->binary[i].left == L && g->binary[i].right == R)
            return &g->binary[i];
    return NULL;
}

Test(text_grammar, rule_values)
{
    grammar *g = load_ok(SM1);
    int S = grammar_find_symbol(g, "S");
    /* "S_0 -> CC_0 VP_0 2.1101014021452893E-4" is the first line: S's first rule */
    const grammar_binary *b = find_binary(g, "S", "CC", "VP");
    cr_assert(b);
    cr_expect_eq(b, &g->binary[g->binary_first[S]]);
    int np = g->nsub[S];
    int found00 = 0;
    for (int k = 0; k < b->nrow; k++) {
        if (b->row_l[k] == 0 && b->row_r[k] == 0) {
            found00 = 1;
            cr_expect_eq(b->score[k * np + 0], log(2.1101014021452893E-4));
        }
        /* "S_0 -> CC_0 VP_1 2.3372589586304488E-21" is below 1e-10: pruned */
        if (b->row_l[k] == 0 && b->row_r[k] == 1)
            cr_expect(isinf(b->score[k * np + 0]) && b->score[k * np + 0] < 0);
    }
    cr_expect(found00);
    /* "ROOT_0 -> S_1 0.9018904823989567" */
    const grammar_unary *u = NULL;
    for (int i = g->unary_first[0]; i < g->unary_first[1]; i++)
        if (g->unary[i].child == S)
            u = &g->unary[i];
    cr_assert(u);
    cr_expect_eq(u->score[1 * g->nsub[0] + 0], log(0.9018904823989567));
    grammar_free(g);
}

/* Expect the scores of tag `tag` in out to be the logs of v[0..n). */
static void expect_tag(const grammar *g, const double *out, const char *tag, const double *v,
                       int n)
{
    int t = grammar_find_symbol(g, tag);
    cr_assert(t >= 0 && g->nsub[t] == n, "tag %s", tag);
    for (int s = 0; s < n; s++)
        cr_expect_eq(out[g->sub_offset[t] + s], log(v[s]), "%s_%d: %.17g vs log %.17g", tag, s,
                     out[g->sub_offset[t] + s], v[s]);
}

/* Number of finite scores in out. */
static int count_finite(const grammar *g, const double *out)
{
    int n = 0;
    for (int i = 0; i < g->nsub_total; i++)
        n += out[i] > -INFINITY;
    return n;
}

Test(text_grammar, lexicon_scores)
{
    grammar *g = load_ok(SM1);
    double *out = malloc((size_t)g->nsub_total * sizeof *out);
    /* known word with one line: "NNP Reserve [7.587897781190091E-4, 5.593809580089643E-4]" */
    cr_assert_eq(grammar_score_word(g, "Reserve", 3, out), CKY_OK);
    expect_tag(g, out, "NNP", (double[]){7.587897781190091E-4, 5.593809580089643E-4}, 2);
    /* tags without a line for the known word: its signature (UNK-CAPS) times 0.01 */
    double sig[] = {8.189295787947535E-5};
    int uh = grammar_find_symbol(g, "UH");
    cr_expect_eq(out[g->sub_offset[uh]], log(sig[0]) + log(0.01));
    /* "the": lines for NNP, CD, JJ, DT */
    cr_assert_eq(grammar_score_word(g, "the", 1, out), CKY_OK);
    expect_tag(g, out, "DT", (double[]){0.4186811148239653, 0.5039057039160494}, 2);
    expect_tag(g, out, "JJ", (double[]){1.3023510163155817E-7, 0.0011962470791242277}, 2);
    /* unknown word at position 1: UNK-CAPS */
    cr_assert_eq(grammar_score_word(g, "Blorfle", 1, out), CKY_OK);
    expect_tag(g, out, "NNP", (double[]){1.2066415695380164E-4, 7.911099904037477E-5}, 2);
    expect_tag(g, out, "EX", (double[]){1.0E-87}, 1);
    expect_tag(g, out, "UH", (double[]){8.189295787947535E-5}, 1);
    /* "Acne" is unknown, "acne" known: UNK-INITC-KNOWNLC at position 0 */
    cr_assert_eq(grammar_score_word(g, "Acne", 0, out), CKY_OK);
    expect_tag(g, out, "TO", (double[]){1.3983239563310956E-5}, 1);
    expect_tag(g, out, "RBR", (double[]){9.329984563059586E-5, 3.302280402746595E-32}, 2);
    /* phrasal substates stay -inf */
    cr_expect(isinf(out[0]) && out[0] < 0);
    free(out);
    grammar_free(g);
}

/* ---- small hand-written exports ---- */

static const char *mini_grammar = "S_0 -> NN_0 NN_1 0.5\n"
                                  "S_0 -> NN_1 NN_0 1.0E-12\n"
                                  "ROOT_0 -> ROOT_0 1.0\n"
                                  "ROOT_0 -> S_0 0.25\n"
                                  "S_0 -> S_0 1.0\n"
                                  "NN_0 -> NN_0 1.0\n"
                                  "NN_1 -> NN_1 1.0\n";
static const char *mini_lexicon = "NN dog [0.5, 0.25]\n"
                                  "NN UNK-LC [0.1, 0.0]\n"
                                  "DT the [1.0]\n";
static const char *mini_words = "dog\nthe\nUNK-LC\n";

/* A temporary folder holding PREFIX.grammar/.lexicon/.words; NULL content = no file. */
typedef struct mini {
    char dir[64];
    char prefix[96];
} mini;

static void write_file(const char *path, const char *content)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(content, f);
    fclose(f);
}

static void mini_write(mini *m, const char *gr, const char *lex, const char *words)
{
    strcpy(m->dir, "/tmp/cky_text_XXXXXX");
    cr_assert(mkdtemp(m->dir));
    snprintf(m->prefix, sizeof m->prefix, "%s/mini", m->dir);
    const char *content[3] = {gr, lex, words};
    const char *ext[3] = {".grammar", ".lexicon", ".words"};
    for (int i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s%s", m->prefix, ext[i]);
        if (content[i])
            write_file(path, content[i]);
    }
}

static void mini_remove(mini *m)
{
    const char *ext[3] = {".grammar", ".lexicon", ".words"};
    for (int i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s%s", m->prefix, ext[i]);
        unlink(path);
    }
    rmdir(m->dir);
}

Test(text_grammar, mini_export)
{
    mini m;
    mini_write(&m, mini_grammar, mini_lexicon, mini_words);
    grammar *g = load_ok(m.prefix);
    /* ROOT, then the .grammar order (S, NN), then the lexicon-only tag DT */
    cr_expect_eq(g->nsym, 4);
    cr_expect_str_eq(g->name[0], "ROOT");
    cr_expect_str_eq(g->name[1], "S");
    cr_expect_str_eq(g->name[2], "NN");
    cr_expect_str_eq(g->name[3], "DT");
    cr_expect_eq(g->nsub[2], 2);
    cr_expect_eq(g->nsub[3], 1);
    cr_expect(g->phrasal[0] && g->phrasal[1] && !g->phrasal[2] && !g->phrasal[3]);
    cr_expect_eq(grammar_count_binary(g), 1); /* the 1e-12 line is pruned */
    cr_expect_eq(grammar_count_unary(g), 1);
    double out[6];
    cr_assert_eq(grammar_score_word(g, "dog", 2, out), CKY_OK);
    cr_expect_eq(out[g->sub_offset[2]], log(0.5));
    cr_expect_eq(out[g->sub_offset[2] + 1], log(0.25));
    cr_expect(isinf(out[g->sub_offset[3]])); /* DT: no line, nor for its signature UNK-LC */
    cr_assert_eq(grammar_score_word(g, "the", 2, out), CKY_OK);
    cr_expect_eq(out[g->sub_offset[3]], log(1.0));
    cr_expect_eq(out[g->sub_offset[2]], log(0.1) + log(0.01), "NN: back-off to UNK-LC x 0.01");
    cr_expect(isinf(out[g->sub_offset[2] + 1]));
    cr_assert_eq(grammar_score_word(g, "cat", 2, out), CKY_OK); /* UNK-LC */
    cr_expect_eq(out[g->sub_offset[2]], log(0.1));
    cr_expect(isinf(out[g->sub_offset[2] + 1])); /* 0.0 -> -inf */
    cr_assert_eq(grammar_score_word(g, "Cat", 2, out), CKY_OK); /* UNK-CAPS: no lines */
    cr_expect_eq(count_finite(g, out), 0);
    grammar_free(g);
    mini_remove(&m);
}

/* Loading fails with `status` and a message containing `where` and `what`. */
static void expect_error(const char *gr, const char *lex, const char *words, cky_status status,
                         const char *where, const char *what)
{
    mini m;
    mini_write(&m, gr, lex, words);
    grammar *g = NULL;
    cky_status st = grammar_load_text(m.prefix, &g);
    const char *msg = cky_last_error();
    cr_expect_eq(st, status, "status %d (%s)", st, msg);
    char want[160];
    snprintf(want, sizeof want, "%s/%s", m.dir, where);
    cr_expect(strstr(msg, want) != NULL, "message \"%s\" lacks \"%s\"", msg, want);
    cr_expect(strstr(msg, what) != NULL, "message \"%s\" lacks \"%s\"", msg, what);
    if (st == CKY_OK)
        grammar_free(g);
    mini_remove(&m);
}

Test(text_grammar, malformed_grammar)
{
    expect_error("S_0 -> NN_0 NN_1 0.5 extra\n", mini_lexicon, mini_words, CKY_ERR_FORMAT,
                 "mini.grammar:1:", "expected");
    expect_error("S_0 => NN_0 NN_1 0.5\n", mini_lexicon, mini_words, CKY_ERR_FORMAT,
                 "mini.grammar:1:", "expected");
    expect_error("ROOT_0 -> ROOT_0 1.0\nS_0 -> NN_0 NN_1 0.5x\n", mini_lexicon, mini_words,
                 CKY_ERR_FORMAT, "mini.grammar:2:", "bad probability");
    expect_error("ROOT_0 -> ROOT_0 1.0\nS_0 -> NN_0 NN_x 0.5\n", mini_lexicon, mini_words,
                 CKY_ERR_FORMAT, "mini.grammar:2:", "bad substate");
    expect_error("ROOT_0 -> ROOT_0 1.0\nS_0 -> NN NN_1 0.5\n", mini_lexicon, mini_words,
                 CKY_ERR_FORMAT, "mini.grammar:2:", "NAME_SUBSTATE");
    /* NN has two identity lines, so NN_2 is out of range */
    char buf[512];
    snprintf(buf, sizeof buf, "%sS_0 -> NN_2 NN_0 0.5\n", mini_grammar);
    expect_error(buf, mini_lexicon, mini_words, CKY_ERR_FORMAT, "mini.grammar:8:",
                 "substate 2 of NN");
    /* VB (first seen on line 8) has no identity line */
    snprintf(buf, sizeof buf, "%sS_0 -> VB_0 NN_0 0.5\n", mini_grammar);
    expect_error(buf, mini_lexicon, mini_words, CKY_ERR_FORMAT, "mini.grammar:8:",
                 "VB has no identity line");
    expect_error("S_0 -> S_0 1.0\n", mini_lexicon, mini_words, CKY_ERR_FORMAT, "mini.grammar",
                 "no ROOT");
}

Test(text_grammar, malformed_lexicon)
{
    expect_error(mini_grammar, "NN dog [0.5 0.25]\n", mini_words, CKY_ERR_FORMAT,
                 "mini.lexicon:1:", "expected");
    expect_error(mini_grammar, "NN dog [0.5, 0.25]\nNN cat 0.5\n", mini_words,
                 CKY_ERR_FORMAT, "mini.lexicon:2:", "expected");
    expect_error(mini_grammar, "NN dog [0.5, -1]\n", mini_words, CKY_ERR_FORMAT,
                 "mini.lexicon:1:", "bad score");
    /* NN has 2 substates in the grammar */
    expect_error(mini_grammar, "DT the [1.0]\nNN dog [0.5]\n", mini_words, CKY_ERR_FORMAT,
                 "mini.lexicon:2:", "NN has 1 values but 2 substates");
    expect_error(mini_grammar, "DT the [1.0]\nDT a [1.0, 2.0]\n", mini_words, CKY_ERR_FORMAT,
                 "mini.lexicon:2:", "DT has 2 values here but 1 on line 1");
    expect_error(mini_grammar, "S dog [0.5]\n", mini_words, CKY_ERR_FORMAT, "mini.lexicon:1:",
                 "phrasal");
}

Test(text_grammar, missing_file)
{
    expect_error(mini_grammar, mini_lexicon, NULL, CKY_ERR_IO, "mini.words", "no such file");
    expect_error(NULL, mini_lexicon, mini_words, CKY_ERR_IO, "mini.grammar", "no such file");
}

static int near(double a, double b) { return fabs(a - b) <= 1e-15 * fabs(b); }

/* The sum closure that stands in for the one the export lacks (grammar/text_sum.c): one rule
 * per (P, C) pair of non-identity unary lines, prob[c * nsub[P] + p] = exp(score), no
 * identity rule, rules by parent (first) and by child (by_child, child_first) consistent,
 * no intermediate symbols; the linear lexicon is the exp of the log scores. */
Test(text_grammar, sum_closure)
{
    static const char *gr = "S_0 -> NP_0 NN_0 0.5\n"
                            "S_1 -> NN_1 NP_0 0.5\n"
                            "ROOT_0 -> ROOT_0 1.0\n"
                            "ROOT_0 -> S_1 0.375\n"
                            "ROOT_0 -> S_0 0.25\n"
                            "ROOT_0 -> NP_0 0.01\n"
                            "S_0 -> S_0 1.0\n"
                            "S_1 -> S_1 1.0\n"
                            "S_1 -> NN_1 0.125\n"
                            "S_0 -> NP_0 0.2\n"
                            "NP_0 -> NP_0 1.0\n"
                            "NP_0 -> NN_1 0.75\n"
                            "NP_0 -> NN_0 0.0625\n"
                            "NN_0 -> NN_0 1.0\n"
                            "NN_1 -> NN_1 1.0\n";
    mini m;
    mini_write(&m, gr, mini_lexicon, mini_words);
    grammar *g = load_ok(m.prefix);
    int S = grammar_find_symbol(g, "S"), NP = grammar_find_symbol(g, "NP"),
        NN = grammar_find_symbol(g, "NN");
    cr_assert(S > 0 && NP > 0 && NN > 0);
    cr_assert_eq(g->nsub[S], 2);
    const grammar_sum_closure *s = g->sum;
    cr_assert_not_null(s);
    cr_expect_eq(s->max_closure, 1);
    /* ROOT->S, ROOT->NP, S->NN, S->NP, NP->NN: the Viterbi unaries, no identity */
    cr_assert_eq(s->n, 5);
    cr_assert_eq(s->n, g->nunary);
    cr_assert_eq(s->first[0], 0);
    cr_assert_eq(s->first[g->nsym], s->n);
    for (int P = 0; P < g->nsym; P++)
        cr_assert_eq(s->first[P], g->unary_first[P]);
    int seen[5] = {0};
    for (int C = 0; C < g->nsym; C++) {
        cr_assert_leq(s->child_first[C], s->child_first[C + 1]);
        int last_parent = -1;
        for (int x = s->child_first[C]; x < s->child_first[C + 1]; x++) {
            const grammar_sum_unary *u = &s->rule[s->by_child[x]];
            cr_assert_eq(u->child, C);
            cr_assert_gt(u->parent, last_parent, "by_child not in parent order");
            last_parent = u->parent;
            cr_assert_eq(seen[s->by_child[x]]++, 0);
        }
    }
    cr_assert_eq(s->child_first[g->nsym], s->n);
    for (int k = 0; k < s->n; k++) {
        const grammar_sum_unary *u = &s->rule[k];
        cr_assert(k >= s->first[u->parent] && k < s->first[u->parent + 1]);
        cr_assert_neq(u->parent, u->child);
        cr_assert_eq(u->parent, g->unary[k].parent);
        cr_assert_eq(u->child, g->unary[k].child);
        int np = g->nsub[u->parent];
        for (int v = 0; v < g->nsub[u->child] * np; v++)
            cr_assert_eq(u->prob[v], exp(g->unary[k].score[v]));
    }
    for (int P = 0; P < g->nsym; P++)
        for (int C = 0; C < g->nsym; C++)
            cr_assert_eq(s->path[P * g->nsym + C], 0);
    /* the layout [child substate][parent substate] (exp(log(x)) is x to an ulp or so) */
    for (int k = 0; k < s->n; k++) {
        const grammar_sum_unary *u = &s->rule[k];
        int np = g->nsub[u->parent];
        if (u->parent == S && u->child == NN) { /* S_1 -> NN_1 0.125 */
            cr_expect(near(u->prob[1 * np + 1], 0.125));
            cr_expect_eq(u->prob[1 * np + 0] + u->prob[0 * np + 1] + u->prob[0], 0);
        }
        if (u->parent == 0 && u->child == S) { /* ROOT_0 -> S_0 0.25, S_1 0.375 */
            cr_expect(near(u->prob[0], 0.25));
            cr_expect(near(u->prob[1], 0.375));
        }
        if (u->parent == NP && u->child == NN) {
            cr_expect(near(u->prob[0], 0.0625));
            cr_expect(near(u->prob[1], 0.75));
        }
    }
    /* the binary rules keep their linear tables, as with a .gr file's closure */
    for (int i = 0; i < g->nbinary; i++)
        cr_assert_not_null(g->binary[i].prob);
    grammar_free(g);
    mini_remove(&m);
}
