/* Tests of the reference parser, the Viterbi extraction and un-annotation on a toy grammar
 * whose scores can be checked by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/internal.h"
#include "../engines/ref/ref.h"
#include "../decoders/viterbi/viterbi.h"
#include "test_dev.h"

/* Toy lexicon: each word has one tag, log score -1 for every substate of that tag. */
static const char *const toy_words[][2] = {
    {"the", "DT"}, {"dog", "NN"}, {"barks", "VB"}, {"a", "A"}};

static cky_status toy_score(const grammar_lexicon *lex, const grammar *g, const char *word,
                            int loc, const unsigned char *tags, double *out)
{
    (void)tags; /* every tag */
    for (size_t k = 0; k < sizeof toy_words / sizeof *toy_words; k++) {
        if (strcmp(word, toy_words[k][0]))
            continue;
        int t = grammar_find_symbol(g, toy_words[k][1]);
        for (int s = 0; s < g->nsub[t]; s++)
            out[g->sub_offset[t] + s] = -1.0;
    }
    return CKY_OK;
}

static void toy_free(grammar_lexicon *lex) { free(lex); }

static grammar_lexicon *toy_lexicon(void)
{
    grammar_lexicon *lex = malloc(sizeof *lex);
    lex->score = toy_score;
    lex->free = toy_free;
    return lex;
}

/* ROOT -> S; S -> NP VB; S -> @S VB; @S -> NP VB (binarized); NP -> DT NN; NP_1 -> NN;
 * X -> X X and X -> A for the tie test. */
static grammar *toy_grammar(void)
{
    grammar_builder *b = builder_new();
    const char *names[] = {"ROOT", "S", "NP", "@S", "X", "DT", "NN", "VB", "A"};
    int nsub[] = {1, 1, 2, 1, 1, 1, 1, 1, 1};
    int phrasal[] = {1, 1, 1, 1, 1, 0, 0, 0, 0};
    for (int s = 0; s < 9; s++)
        cr_assert_eq(builder_add_symbol(b, names[s], nsub[s], phrasal[s]), CKY_OK);
    /* S -> NP VB: [l][r][p] with l in NP (2), r in VB (1), p in S (1) */
    double s_np_vb[] = {0.5, 0.25};
    cr_assert_eq(builder_add_binary(b, 1, 2, 7, s_np_vb), CKY_OK);
    double s_at_vb[] = {0.5};
    cr_assert_eq(builder_add_binary(b, 1, 3, 7, s_at_vb), CKY_OK);
    double at_np_vb[] = {0.5, 0.5};
    cr_assert_eq(builder_add_binary(b, 3, 2, 7, at_np_vb), CKY_OK);
    /* NP -> DT NN: p in NP (2): substate 0 gets 0.5, substate 1 gets 1e-11 (pruned) */
    double np_dt_nn[] = {0.5, 1e-11};
    cr_assert_eq(builder_add_binary(b, 2, 5, 6, np_dt_nn), CKY_OK);
    double x_x_x[] = {1.0}; /* log 1 = 0: both splits score exactly -3 */
    cr_assert_eq(builder_add_binary(b, 4, 4, 4, x_x_x), CKY_OK);
    double root_s[] = {1.0};
    cr_assert_eq(builder_add_unary(b, 0, 1, root_s), CKY_OK);
    double root_x[] = {1.0};
    cr_assert_eq(builder_add_unary(b, 0, 4, root_x), CKY_OK);
    double np_nn[] = {0.0, 0.125}; /* [c][p]: NN -> NP_1 */
    cr_assert_eq(builder_add_unary(b, 2, 6, np_nn), CKY_OK);
    double x_a[] = {1.0};
    cr_assert_eq(builder_add_unary(b, 4, 8, x_a), CKY_OK);
    grammar *g;
    cr_assert_eq(builder_finish(b, toy_lexicon(), "toy", &g), CKY_OK, "%s", cky_last_error());
    return g;
}

Test(ref, builder_prunes_and_indexes)
{
    grammar *g = toy_grammar();
    cr_assert_eq(g->nsub_total, 10);
    int np = grammar_find_symbol(g, "NP");
    const grammar_binary *r = &g->binary[g->binary_first[np]];
    cr_assert_eq(r->nrow, 1);
    cr_assert_eq(r->score[0], log(0.5));
    cr_assert(isinf(r->score[1]) && r->score[1] < 0, "1e-11 is pruned to -inf");
    cr_assert_eq(grammar_count_binary(g), 1 + 2 + 2 + 1 + 1);
    grammar_free(g);
}

Test(ref, chart_scores_by_hand)
{
    grammar *g = toy_grammar();
    char *words[] = {"the", "dog", "barks"};
    chart *c;
    cr_assert_eq(ref_parse(g, words, 3, CHART_DOUBLE, &c), CKY_OK);
    int np = grammar_find_symbol(g, "NP"), s = grammar_find_symbol(g, "S");
    /* NP_0 over "the dog": (log .5 + -1) + -1 */
    cr_assert_eq(chart_pre(c, 0, 2)[g->sub_offset[np]], (log(0.5) + -1.0) + -1.0);
    /* NP_1 over "dog": unary from NN: -1 + log .125 */
    cr_assert_eq(chart_post(c, 1, 2)[g->sub_offset[np] + 1], -1.0 + log(0.125));
    double s_score = (log(0.5) + ((log(0.5) + -1.0) + -1.0)) + -1.0;
    cr_assert_eq(chart_pre(c, 0, 3)[g->sub_offset[s]], s_score);
    cr_assert_eq(chart_post(c, 0, 3)[0], s_score + log(1.0));

    tree *t;
    cr_assert_eq(viterbi_extract(g, c, words, VITERBI_EXACT, &t), CKY_OK);
    t = tree_unannotate(t);
    char *str = tree_text(t);
    cr_assert_str_eq(str, "( (S (NP (DT the) (NN dog)) (VB barks)) )\n");
    free(str);
    tree_free(t);
    chart_free(c);
    grammar_free(g);
}

Test(ref, float_mode_rounds_like_float32)
{
    grammar *g = toy_grammar();
    char *words[] = {"the", "dog", "barks"};
    chart *c;
    cr_assert_eq(ref_parse(g, words, 3, CHART_FLOAT, &c), CKY_OK);
    int np = grammar_find_symbol(g, "NP");
    float want = (-1.0f + -1.0f) + (float)log(0.5);
    cr_assert_eq(chart_pre(c, 0, 2)[g->sub_offset[np]], (double)want);
    chart_free(c);
    grammar_free(g);
}

Test(ref, exact_tie_break_takes_smallest_split)
{
    grammar *g = toy_grammar();
    char *words[] = {"a", "a", "a"};
    chart *c;
    cr_assert_eq(ref_parse(g, words, 3, CHART_DOUBLE, &c), CKY_OK);
    viterbi_node nodes[5];
    cr_assert_eq(viterbi_extract_array(g, c, nodes), CKY_OK);
    int x = grammar_find_symbol(g, "X");
    cr_assert_eq(nodes[0].bot_sym, x);
    cr_assert_eq(nodes[1].width, 1, "split 1 (smallest) is taken on a tie");
    cr_assert_eq(nodes[2].width, 2);
    tree *t;
    cr_assert_eq(viterbi_array_to_tree(g, nodes, 3, words, &t), CKY_OK);
    char *str = tree_text(tree_unannotate(t));
    cr_assert_str_eq(str, "( (X (X (A a)) (X (X (A a)) (X (A a)))) )\n");
    free(str);
    tree_free(t);
    chart_free(c);
    grammar_free(g);
}

Test(ref, no_parse_gives_null_tree)
{
    grammar *g = toy_grammar();
    char *words[] = {"barks", "the"};
    chart *c;
    cr_assert_eq(ref_parse(g, words, 2, CHART_DOUBLE, &c), CKY_OK);
    cr_assert(isinf(chart_post(c, 0, 2)[0]));
    tree *t = (tree *)1;
    cr_assert_eq(viterbi_extract(g, c, words, VITERBI_EXACT, &t), CKY_OK);
    cr_assert_null(t);
    chart_free(c);
    grammar_free(g);
}

Test(ref, berkeley_backtrace_agrees_on_clear_winner)
{
    grammar *g = toy_grammar();
    char *words[] = {"the", "dog", "barks"};
    chart *c;
    cr_assert_eq(ref_parse(g, words, 3, CHART_DOUBLE, &c), CKY_OK);
    tree *t;
    cr_assert_eq(viterbi_extract(g, c, words, VITERBI_BERKELEY, &t), CKY_OK);
    char *str = tree_text(tree_unannotate(t));
    cr_assert_str_eq(str, "( (S (NP (DT the) (NN dog)) (VB barks)) )\n");
    free(str);
    tree_free(t);
    chart_free(c);
    grammar_free(g);
}

Test(ref, unannotate_splices_intermediates_and_strips_labels)
{
    tree *root = tree_new("ROOT"), *s = tree_new("S-8"), *at = tree_new("@S"),
         *np = tree_new("NP^g"), *vp = tree_new("VP=2"), *dot = tree_new(".");
    tree *lrb = tree_new("-LRB-");
    tree_add_child(root, s);
    tree_add_child(s, at);
    tree_add_child(s, dot);
    tree_add_child(at, np);
    tree_add_child(at, vp);
    tree_add_child(np, tree_new("x"));
    tree_add_child(vp, lrb);
    tree_add_child(lrb, tree_new("-LRB-"));
    tree_add_child(dot, tree_new("."));
    char *str = tree_text(tree_unannotate(root));
    cr_assert_str_eq(str, "( (S (NP x) (VP (-LRB- -LRB-)) (. .)) )\n");
    free(str);
    tree_free(root);
}
