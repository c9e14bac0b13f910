/* Tests of the k-best lists (--kbest, decoders/maxrule/maxrule_kbest.c): on dev sentences
 * cky parse --kbest 10 writes the Berkeley jar's own -kbest 10 output byte for byte
 * (../shared/reference/berkeley/cli/dev.sample-sm5.kbest10.txt and
 * dev.sample-sm3.kbest10-sm3.txt: the first NLIST lists; all of them: make check-kbest), on
 * the ref and cpu engines alike; the layout of failures ((()) and a blank line), of
 * --kbest 1 (the one-tree output), of --score; the exhaustive lists' first tree is the
 * max-rule tree; the engines and decoders that have no lists refuse the option, naming it
 * and the engine. */
#include <criterion/criterion.h>
#include <math.h>

#include "../decoders/maxrule/maxrule.h"
#include "../grammar/grammar.h"
#include "../parser/parser.h"
#include "test_cli_run.h"
#include "test_dev.h"

#define GR3 CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr"
#define GR5 CKY_SHARED "/grammars/sample-sm5/sample-sm5.gr"
#define CLI_REFS CKY_SHARED "/reference/berkeley/cli/"
#define NLIST 30

/* cky's lists of the first NLIST dev sentences against the jar's file `ref`. */
static void lists_are_the_jars(const char *gr, const char *ref)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -%d '%s/data/ptb-sample/dev.txt' > dev.txt", NLIST,
                        CKY_SHARED), 0);
    cr_assert_eq(run_sh(d, "awk 'BEGIN {RS = \"\"; ORS = \"\\n\\n\"} NR <= %d' '%s' > ref",
                        NLIST, ref), 0);
    char *want = run_read(d, "ref");
    for (int e = 0; e < 2; e++) {
        const char *engine = e ? "cpu" : "ref";
        cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' parse -q -g '%s' --engine %s "
                            "--kbest 10 -i dev.txt > out 2>err", gr, engine), 0, "%s", engine);
        char *out = run_read(d, "out");
        if (strcmp(out, want)) {
            cr_assert_eq(run_sh(d, "cmp out ref > cmp.txt"), 1);
            char *where = run_read(d, "cmp.txt");
            cr_assert_fail("%s engine: the lists differ from the jar's %s: %s", engine, ref,
                           where);
        }
        free(out);
    }
    free(want);
    run_cleanup(d);
}

Test(kbest, sample_sm5_lists_are_the_jars, .timeout = 600)
{
    lists_are_the_jars(GR5, CLI_REFS "dev.sample-sm5.kbest10.txt");
}

Test(kbest, sample_sm3_lists_are_the_jars, .timeout = 600)
{
    lists_are_the_jars(GR3, CLI_REFS "dev.sample-sm3.kbest10-sm3.txt");
}

/* Failures write the jar's (()) and the blank line; --kbest 1 is the one-tree output; a list
 * of a short sentence may hold fewer than K trees; --score prefixes each tree. */
Test(kbest, layout, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "printf 'The dog barks .\\n\\nto to to to to to\\nIt rains .\\n' "
                        "> in4.txt"), 0);
    const char *base = "CKY_CACHE=cache '" RUN_CKY "' parse -q -g '" GR3 "' --engine ref "
                       "-i in4.txt --prune-fallback off";
    cr_assert_eq(run_sh(d, "%s --kbest 4 > k4 2>/dev/null", base), 0);
    cr_assert_eq(run_sh(d, "%s > one 2>/dev/null && %s --kbest 1 > k1 2>/dev/null && "
                        "cmp -s one k1", base, base), 0, "--kbest 1 is not the default output");
    /* the lists: 4 trees, (()), (()), then the trees of "It rains ." */
    cr_assert_eq(run_sh(d, "awk 'BEGIN {RS = \"\"} {n = split($0, t, \"\\n\"); print n}' k4 "
                        "> counts"), 0);
    char *counts = run_read(d, "counts");
    cr_assert_eq(counts[0], '4', "%s", counts);
    cr_assert(!strncmp(counts + 1, "\n1\n1\n", 5), "%s", counts);
    free(counts);
    char *k4 = run_read(d, "k4");
    cr_assert(strstr(k4, "\n\n(())\n\n(())\n\n"), "the failures: %s", k4);
    size_t len = strlen(k4);
    cr_assert(len > 2 && !strcmp(k4 + len - 2, "\n\n"), "no blank line at the end: %s", k4);
    /* the first tree of each list is the one-tree output's */
    char *one = run_read(d, "one");
    cr_assert(!strncmp(k4, one, strcspn(one, "\n") + 1), "%s\n%s", k4, one);
    free(one);
    /* --score: log P, the tree's max-rule score, the tree; scores do not increase */
    cr_assert_eq(run_sh(d, "%s --kbest 4 --score > s4 2>/dev/null", base), 0);
    cr_assert_eq(run_sh(d, "head -4 s4 | cut -f3 > s4.trees && head -4 k4 > k4.trees && "
                        "cmp -s s4.trees k4.trees"), 0);
    cr_assert_eq(run_sh(d, "head -4 s4 | awk -F'\\t' 'NR > 1 && ($2 > last || $1 != lp) "
                        "{bad = 1} {last = $2; lp = $1} END {exit bad}'"), 0);
    free(k4);
    run_cleanup(d);
}

/* With --prune none (ref engine) the first tree of a list is the exhaustive max-rule tree,
 * with its score; the lists have K distinct trees. */
Test(kbest, exhaustive_first_is_the_maxrule_tree, .timeout = 600)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(GR3, &g), CKY_OK, "%s", cky_last_error());
    sentence s[6];
    int n = dev_sentences(6, 12, s);
    cr_assert_gt(n, 2);
    for (int k = 0; k < n; k++) {
        maxrule_result one, list;
        maxrule_options mo = {.kbest = 5};
        cr_assert_eq(maxrule_parse(g, s[k].words, s[k].n, NULL, &one), CKY_OK);
        cr_assert_eq(maxrule_parse(g, s[k].words, s[k].n, &mo, &list), CKY_OK);
        cr_assert_not_null(one.tree);
        cr_assert_not_null(list.tree);
        char *a = tree_text(one.tree), *b = tree_text(list.tree);
        cr_assert_str_eq(a, b, "sentence %d", k);
        cr_assert_eq(one.score, list.score, "sentence %d: %.17g %.17g", k, one.score,
                     list.score);
        cr_assert_eq(one.loglik, list.loglik);
        cr_assert_eq(list.nrest, 4, "sentence %d of %d words: %d trees", k, s[k].n,
                     list.nrest + 1);
        for (int x = 0; x < list.nrest; x++) {
            char *c = tree_text(list.rest[x]);
            cr_assert_str_neq(c, a, "sentence %d: tree %d is the first", k, x + 2);
            cr_assert_leq(list.rest_score[x], x ? list.rest_score[x - 1] : list.score);
            free(c);
        }
        free(a);
        free(b);
        maxrule_result_clear(&one);
        maxrule_result_clear(&list);
        sentence_free(&s[k]);
    }
    grammar_free(g);
}

/* Where there are no lists, parser_new refuses, naming the option and the engine (or the
 * decoder); where there are, the results carry them. */
Test(kbest, refusals)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(GR3, &g), CKY_OK, "%s", cky_last_error());
    struct {
        parser_engine e;
        parser_decoder d;
        parser_prune p;
        int binarize, variational;
        const char *says;
    } no[] = {{PARSER_ENGINE_GPU, PARSER_DECODER_MAXRULE, PARSER_PRUNE_NONE, 0, 0, "gpu engine"},
              {PARSER_ENGINE_CPU, PARSER_DECODER_MAXRULE, PARSER_PRUNE_NONE, 0, 0, "cpu engine"},
              {PARSER_ENGINE_REF, PARSER_DECODER_VITERBI, PARSER_PRUNE_BERKELEY, 0, 0, "Viterbi"},
              {PARSER_ENGINE_REF, PARSER_DECODER_VITERBI, PARSER_PRUNE_NONE, 0, 0, "Viterbi"},
              {PARSER_ENGINE_REF, PARSER_DECODER_MAXRULE, PARSER_PRUNE_BERKELEY, 1, 0,
               "--binarize"},
              {PARSER_ENGINE_CPU, PARSER_DECODER_MAXRULE, PARSER_PRUNE_BERKELEY, 0, 1,
               "--variational"}};
    for (size_t k = 0; k < sizeof no / sizeof *no; k++) {
        parser_options o = parser_default_options();
        o.engine = no[k].e;
        o.decoder = no[k].d;
        o.prune = no[k].p;
        o.berkeley.binarize = no[k].binarize;
        o.berkeley.variational = no[k].variational;
        o.kbest = 3;
        parser *p = NULL;
        cr_assert_eq(parser_new(g, &o, &p), CKY_ERR_UNSUPPORTED, "case %zu", k);
        const char *msg = cky_last_error();
        cr_assert(strstr(msg, "--kbest 3") && strstr(msg, no[k].says), "case %zu: %s", k, msg);
    }
    parser_options o = parser_default_options();
    o.decoder = PARSER_DECODER_MAXRULE;
    o.prune = PARSER_PRUNE_BERKELEY;
    o.kbest = 3;
    o.threads = 1;
    parser *p = NULL;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    sentence s[2];
    cr_assert_eq(dev_sentences(2, 40, s), 2);
    parse_result r[2];
    cr_assert_eq(parser_parse(p, s, 2, r), CKY_OK);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(r[k].outcome, PARSE_OK);
        cr_assert_eq(r[k].nrest, 2);
        cr_assert(isfinite(r[k].score) && r[k].rest_score[1] <= r[k].rest_score[0] &&
                  r[k].rest_score[0] <= r[k].score);
        parse_result_clear(&r[k]);
        sentence_free(&s[k]);
    }
    parser_free(p);
    grammar_free(g);
}

/* The command line: --kbest with viterbi or --shard is refused (2, or 1 from the parser),
 * naming the option. */
Test(kbest, cli_refusals, .timeout = 600)
{
    char d[64];
    run_setup(d);
    const char *base = "CKY_CACHE=cache '" RUN_CKY "' parse -q -g '" GR3 "' -i in.txt --kbest 3";
    cr_assert_eq(run_sh(d, "%s --shard 1/2 > o 2>err", base), 2);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "--kbest") && strstr(err, "--shard"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, "%s --engine ref --decoder viterbi > o 2>err", base), 1);
    err = run_read(d, "err");
    cr_assert(strstr(err, "--kbest 3") && strstr(err, "Viterbi"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, "%s --engine cpu --prune none > o 2>err", base), 1);
    err = run_read(d, "err");
    cr_assert(strstr(err, "--kbest 3") && strstr(err, "cpu engine"), "%s", err);
    free(err);
    run_cleanup(d);
}
