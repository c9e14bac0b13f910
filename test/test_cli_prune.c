/* cky parse with the Berkeley parser's coarse-to-fine cascade (--prune, issue 42): with a
 * native grammar it is the default; the masks it writes (--masks) are the jar's rows and its
 * trees the jar's own output (../shared/reference/berkeley/dev.*.prune-masks*.tsv.gz) in the
 * default, -viterbi and -accurate modes, on the ref and cpu engines alike; a sentence the
 * pruned pass finds no tree for is parsed again (named on stderr), or gives (()) with
 * --prune-fallback off; --prune none is the exhaustive pass. The whole dev set: make
 * check-prune. */
#include "test_cli_run.h"

#define GR3 CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr"
#define REF3 CKY_SHARED "/reference/berkeley/dev.sample-sm3.prune-masks"
#define NLINE 40

/* The rows of the reference file for sentences 1..NLINE (zcat), as one string. */
static char *reference_rows(const char *dir, const char *suffix)
{
    cr_assert_eq(run_sh(dir, "zcat '" REF3 "%s.tsv.gz' | awk -F'\\t' '$1 <= %d' > ref.tsv",
                        suffix, NLINE), 0);
    return run_read(dir, "ref.tsv");
}

/* The trees of the final rows of reference rows, one per line. */
static char *reference_trees(const char *dir)
{
    cr_assert_eq(run_sh(dir, "awk -F'\\t' '$2 == \"final\" {print $5}' ref.tsv > ref-trees"), 0);
    return run_read(dir, "ref-trees");
}

/* Level rows only (the final rows' scores are printed as cky prints them, not as Java). */
static char *level_rows(const char *dir, const char *file)
{
    cr_assert_eq(run_sh(dir, "awk -F'\\t' '$2 != \"final\"' %s > %s.levels", file, file), 0);
    char name[256];
    snprintf(name, sizeof name, "%s.levels", file);
    return run_read(dir, name);
}

Test(cli_prune, masks_and_trees_are_the_jars, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -%d '%s/data/ptb-sample/dev.txt' > dev.txt", NLINE, CKY_SHARED),
                 0);
    const char *modes[][2] = {{"", ""}, {"--decoder viterbi", "-viterbi"},
                              {"--prune accurate", "-accurate"}};
    for (int m = 0; m < 3; m++) {
        char *ref = reference_rows(d, modes[m][1]), *trees = reference_trees(d);
        char *ref_levels = level_rows(d, "ref.tsv");
        for (int e = 0; e < 2; e++) {
            const char *engine = e ? "cpu" : "ref";
            cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' parse -q -g '" GR3 "' "
                                "--engine %s %s -i dev.txt --masks masks.tsv > out 2>err",
                                engine, modes[m][0]), 0, "%s %s", engine, modes[m][0]);
            char *out = run_read(d, "out"), *levels = level_rows(d, "masks.tsv");
            cr_assert_str_eq(levels, ref_levels, "%s %s: the masks differ from the jar's",
                             engine, modes[m][0]);
            cr_assert_str_eq(out, trees, "%s %s: the trees differ from the jar's", engine,
                             modes[m][0]);
            free(out);
            free(levels);
        }
        free(ref);
        free(trees);
        free(ref_levels);
    }
    run_cleanup(d);
}

/* A file of fewer sentences than threads: each sentence's cascade on several of them (by
 * default as many as the machine's cores allow, four with CKY_TUNE=prune_team=4), the jar's
 * masks and trees still. */
Test(cli_prune, a_short_file_shares_the_threads, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -3 '%s/data/ptb-sample/dev.txt' > dev.txt", CKY_SHARED), 0);
    cr_assert_eq(run_sh(d, "zcat '" REF3 ".tsv.gz' | awk -F'\\t' '$1 <= 3' > ref.tsv"), 0);
    char *trees = reference_trees(d), *ref_levels = level_rows(d, "ref.tsv");
    for (int t = 0; t < 2; t++) {
        cr_assert_eq(run_sh(d, "%s '" RUN_CKY "' parse -q -g '" GR3 "' --engine ref --threads 8 "
                            "-i dev.txt --masks masks.tsv > out 2>err",
                            t ? "CKY_TUNE=prune_team=4" : ""), 0);
        char *out = run_read(d, "out"), *levels = level_rows(d, "masks.tsv");
        cr_assert_str_eq(levels, ref_levels, "the masks differ from the jar's");
        cr_assert_str_eq(out, trees, "the trees differ from the jar's");
        free(out);
        free(levels);
    }
    free(trees);
    free(ref_levels);
    run_cleanup(d);
}

/* A sentence without a tree in the pruned pass: parsed again exhaustively (its line named),
 * or the jar's (()) with --prune-fallback off; the exhaustive pass has its tree. */
Test(cli_prune, no_tree_in_the_pruned_pass_falls_back, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "printf 'The dog barks .\\nto to to to to to\\n' > in2.txt"), 0);
    const char *base = "CKY_CACHE=cache '" RUN_CKY "' parse -q -g '" GR3 "' --engine ref "
                       "-i in2.txt";
    cr_assert_eq(run_sh(d, "%s > on 2>on.err", base), 0);
    cr_assert_eq(run_sh(d, "%s --prune-fallback off > off 2>off.err", base), 0);
    cr_assert_eq(run_sh(d, "%s --prune none > none 2>/dev/null", base), 0);
    char *on = run_read(d, "on"), *off = run_read(d, "off"), *none = run_read(d, "none");
    char *err = run_read(d, "on.err");
    cr_assert(strstr(err, "in2.txt:2: no tree within the pruned pass: parsed again "
                          "exhaustively"), "%s", err);
    cr_assert_str_eq(on, none, "the fallback is the exhaustive tree");
    const char *second = strchr(off, '\n');
    cr_assert(second && !strcmp(second + 1, "(())\n"), "%s", off);
    cr_assert(strncmp(none, "( (", 3) == 0 && strstr(strchr(none, '\n') + 1, "( ("),
              "%s", none);
    free(on);
    free(off);
    free(none);
    free(err);
    run_cleanup(d);
}

/* The default: pruned with a native grammar (the same as --prune berkeley); a text export
 * stays exhaustive, said on stderr; --backtrace asks for the exhaustive Viterbi pass. */
Test(cli_prune, defaults, .timeout = 600)
{
    char d[64];
    run_setup(d);
    const char *gr = "CKY_CACHE=cache '" RUN_CKY "' parse -g '" GR3 "' --engine ref -i in.txt";
    cr_assert_eq(run_sh(d, "%s > a 2>/dev/null && %s --prune berkeley > b 2>/dev/null && "
                        "cmp -s a b", gr, gr), 0);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' parse -g '" RUN_GRAMMAR "' --engine "
                        "ref -i in.txt > t 2>err"), 0);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "no coarse-to-fine cascade"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' parse -g '" RUN_GRAMMAR "' --engine "
                        "ref --prune berkeley -i in.txt > t 2>err"), 1);
    cr_assert_eq(run_sh(d, "%s --backtrace berkeley --prune berkeley > t 2>err", gr), 2);
    run_cleanup(d);
}
