/* cky berkeley, the jar's command line (issue 43, item 7), and cky parse --gold-pos, the
 * jar's -useGoldPOS (item 4): the translation of every option of the jar's
 * BerkeleyParser.Options, the refusals (unsupported options, bad values), and
 * the output against the jar's own: its default and -viterbi output on dev
 * (../shared/reference/berkeley/dev.sample-sm5.{maxrule,viterbi}.mrg) and its -useGoldPOS
 * output (cli/dev.sample-sm5.goldpos.txt) on the input the jar read, remade here from
 * dev.mrg as tools/berkeley/make-cli-refs.sh's gold_pos makes it. */
#include "test_cli_run.h"

#define GR1 CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr"
#define GR5 CKY_SHARED "/grammars/sample-sm5/sample-sm5.gr"
#define REF CKY_SHARED "/reference/berkeley"
#define DEV CKY_SHARED "/data/ptb-sample"

/* `cky berkeley --translate -gr GR1 ARGS` in dir: its stdout into *out (malloc'ed), its
 * stderr into *err; returns the exit status. */
static int translate(const char *dir, const char *args, char **out, char **err)
{
    int rc = run_sh(dir, "CKY_CACHE=cache '" RUN_CKY "' berkeley --translate -gr '" GR1
                    "' %s > tr.out 2> tr.err", args);
    *out = run_read(dir, "tr.out");
    *err = run_read(dir, "tr.err");
    return rc;
}

#define BASE "cky parse --prune berkeley --prune-fallback off -g " GR1

/* Every option the jar has that cky parse does: what it becomes. */
Test(cli_berkeley, every_mapped_option_translates)
{
    char d[64];
    run_setup(d);
    static const char *const cases[][2] = {
        {"", BASE},
        {"-tokenize", BASE " --tokenize"},
        {"-viterbi", BASE " --decoder viterbi"},
        {"-accurate", "cky parse --prune accurate --prune-fallback off -g " GR1},
        {"-keepFunctionLabels", BASE},
        {"-inputFile in.txt", BASE " -i in.txt"},
        {"-outputFile 'o u t'", BASE " -o 'o u t'"},
        {"-maxLength 40", BASE " --max-length 40"},
        {"-nThreads 3", BASE " --threads 3"},
        {"-nThreads 0", BASE " --threads 1"},
        {"-useGoldPOS", BASE " --gold-pos"},
        {"-binarize", BASE " --binarize"},
        {"-viterbi -binarize -scores", BASE " --decoder viterbi --binarize --scores"},
        {"-viterbi -binarize -substates", BASE " --decoder viterbi --binarize --substates"},
        {"-modelScore", BASE " --model-score"},
        {"-confidence -modelScore", BASE " --confidence"},
        {"-sentence_likelihood", BASE " --sentence-likelihood"},
        {"-tree_likelihood", BASE " --tree-likelihood"},
        {"-variational", BASE " --variational"},
        {"-kbest 10", BASE " --kbest 10"},
        {"-render", BASE " --render ."},
        /* the jar's defaults, and what the jar ignores in some company */
        {"-kbest 1", BASE},
        {"-nGrammars 1", BASE},
        {"-scores", BASE},
        {"-substates", BASE},
        {"-useGoldPOS -tokenize", BASE " --gold-pos"},
        {"-useGoldPOS -nThreads 1", BASE " --threads 1 --gold-pos"},
        /* a later value overrides an earlier one, as the jar's OptionParser does */
        {"-maxLength 10 -maxLength 20", BASE " --max-length 20"},
        {"-viterbi -accurate -maxLength 30 -inputFile a -outputFile b",
         "cky parse --prune accurate --prune-fallback off -g " GR1
         " --decoder viterbi -i a --max-length 30 -o b"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *out, *err, want[1024];
        snprintf(want, sizeof want, "%s\n", cases[k][1]);
        cr_expect_eq(translate(d, cases[k][0], &out, &err), 0, "%s: %s", cases[k][0], err);
        cr_expect_str_eq(out, want, "%s", cases[k][0]);
        free(out);
        free(err);
    }
    run_cleanup(d);
}

/* An option cky does not do, and bad values: refused (exit status 2), the message naming
 * it. */
Test(cli_berkeley, unsupported_options_are_refused)
{
    char d[64];
    run_setup(d);
    static const char *const refused[][2] = {
        {"-chinese", "-chinese is not supported"},
        {"-dumpPosteriors", "-dumpPosteriors is not supported"},
        {"-ec_format", "-ec_format is not supported"},
        {"-nGrammars 2", "-nGrammars is not supported"},
        {"-useGoldPOS -nThreads 2", "-useGoldPOS with -nThreads 2"},
        {"-viterbi -scores", "-scores with -viterbi but without -binarize"},
        {"-viterbi -substates", "-substates with -viterbi but without -binarize"},
        {"-maxLength", "-maxLength needs a value"},
        {"-maxLength x", "-maxLength takes a number"},
        {"-kbest 0", "-kbest takes a number"},
        {"-foo", "no option '-foo'"},
        {"--tokenize", "no option '--tokenize'"},
        {"dev.txt", "no option 'dev.txt'"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
        char *out, *err;
        cr_expect_eq(translate(d, refused[k][0], &out, &err), 2, "%s", refused[k][0]);
        cr_expect(strstr(err, refused[k][1]), "%s: %s", refused[k][0], err);
        free(out);
        free(err);
    }
    cr_expect_eq(run_sh(d, "'" RUN_CKY "' berkeley -viterbi > o 2> e"), 2);
    char *err = run_read(d, "e");
    cr_expect(strstr(err, "-gr GRAMMAR is required"), "%s", err);
    free(err);
    /* the help names every option of the jar */
    cr_assert_eq(run_sh(d, "'" RUN_CKY "' berkeley -h > help"), 0);
    char *help = run_read(d, "help");
    static const char *const jar[] = {
        "-gr", "-tokenize", "-viterbi", "-binarize", "-scores", "-keepFunctionLabels",
        "-substates", "-accurate", "-modelScore", "-confidence", "-sentence_likelihood",
        "-tree_likelihood", "-variational", "-render", "-chinese", "-inputFile", "-maxLength",
        "-nThreads", "-kbest", "-outputFile", "-useGoldPOS", "-dumpPosteriors", "-ec_format",
        "-nGrammars"};
    for (size_t k = 0; k < sizeof jar / sizeof *jar; k++) {
        char row[64];
        snprintf(row, sizeof row, "\n  %s ", jar[k]);
        cr_expect(strstr(help, row), "the help lacks %s", jar[k]);
    }
    free(help);
    run_cleanup(d);
}

/* The translated options run: cky berkeley writes what cky parse writes with them. */
Test(cli_berkeley, runs_cky_parse, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' berkeley -gr '" GR1 "' -viterbi "
                        "-accurate -maxLength 30 -nThreads 1 -inputFile in.txt -outputFile a "
                        "-keepFunctionLabels 2>/dev/null"), 0);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' parse -g '" GR1 "' --decoder viterbi "
                        "--prune accurate --prune-fallback off --max-length 30 -i in.txt > b "
                        "2>/dev/null && cmp a b"), 0);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' berkeley -gr '" GR1 "' < in.txt > c "
                        "2>/dev/null && CKY_CACHE=cache '" RUN_CKY "' parse -g '" GR1 "' "
                        "--prune-fallback off < in.txt > e 2>/dev/null && cmp c e"), 0);
    run_cleanup(d);
}

/* The jar's default command-line output (max-rule within its cascade), and its -viterbi
 * output, on all of dev: byte for byte. */
Test(cli_berkeley, dev_output_is_the_jars, .timeout = 900)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' berkeley -gr '" GR5 "' < '" DEV
                        "/dev.txt' > default 2>/dev/null"), 0);
    cr_expect_eq(run_sh(d, "cmp default '" REF "/dev.sample-sm5.maxrule.mrg'"), 0,
                 "the default output differs from the jar's");
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' berkeley -gr '" GR5 "' -viterbi "
                        "-inputFile '" DEV "/dev.txt' -outputFile viterbi 2>/dev/null"), 0);
    cr_expect_eq(run_sh(d, "cmp viterbi '" REF "/dev.sample-sm5.viterbi.mrg'"), 0,
                 "the -viterbi output differs from the jar's");
    run_cleanup(d);
}

/* Every output option of the jar through cky berkeley, on the first 40 dev sentences: the
 * jar's bytes (its files in cli/, made by make-cli-refs.sh on all of dev; a k-best list
 * counts as one sentence). -scores prints Viterbi scores made of the jar's Math.log of each
 * rule and lexical probability, HotSpot's own (util/jmath), which the C library's log missed
 * by one ulp for "%" under NN (sentences 15, 18, 19, 20, 25, ...). */
Test(cli_berkeley, output_options_are_the_jars, .timeout = 900)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -40 '" DEV "/dev.txt' > in.txt"), 0);
    static const char *const cases[][2] = {
        {"kbest10", "-kbest 10"},
        {"confidence", "-confidence"},
        {"modelscore", "-modelScore"},
        {"sentence-likelihood", "-sentence_likelihood"},
        {"tree-likelihood", "-tree_likelihood"},
        {"binarize", "-binarize"},
        {"viterbi-binarize-substates", "-viterbi -binarize -substates"},
        {"viterbi-binarize-scores", "-viterbi -binarize -scores"},
        {"variational", "-variational"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' berkeley -gr '" GR5 "' %s "
                            "< in.txt > out 2>/dev/null", cases[k][1]), 0, "%s", cases[k][1]);
        /* the reference's first 40 sentences: 40 lines, or 40 lists ended by blank lines
         * (-tree_likelihood leaves out a line whose tree has likelihood -Infinity: none of
         * these 40) */
        const char *cut = k == 0 ? "awk '{ print } /^$/ && ++n == 40 { exit }'" : "head -40";
        cr_expect_eq(run_sh(d, "%s '" REF "/cli/dev.sample-sm5.%s.txt' > want && cmp out want",
                            cut, cases[k][0]), 0, "%s: not the jar's output", cases[k][1]);
    }
    run_cleanup(d);
}

/* make-cli-refs.sh's gold_pos over the text of an .mrg file: per tree (a tree starts at a
 * line that starts with '('), its leaves "(TAG word)" (no space or bracket inside either),
 * -NONE- left out, as word<TAB>tag lines and a blank line; trees without a leaf left out. */
static void write_gold_pos(const char *mrg, FILE *out)
{
    size_t n = strlen(mrg);
    for (size_t at = 0; at < n;) {
        size_t end = at + 1;
        while (end < n && !(mrg[end - 1] == '\n' && mrg[end] == '('))
            end++;
        int pairs = 0;
        for (size_t i = at; i < end; i++) {
            if (mrg[i] != '(')
                continue;
            size_t t0 = i + 1, t1 = t0;
            while (t1 < end && !strchr(" \t\n\r\f\v()", mrg[t1]))
                t1++;
            if (t1 == t0 || t1 >= end || mrg[t1] != ' ')
                continue;
            size_t w0 = t1 + 1, w1 = w0;
            while (w1 < end && !strchr(" \t\n\r\f\v()", mrg[w1]))
                w1++;
            if (w1 == w0 || w1 >= end || mrg[w1] != ')')
                continue;
            if (!(t1 - t0 == 6 && !strncmp(mrg + t0, "-NONE-", 6))) {
                fprintf(out, "%.*s\t%.*s\n", (int)(w1 - w0), mrg + w0, (int)(t1 - t0), mrg + t0);
                pairs++;
            }
            i = w1;
        }
        if (pairs)
            fputc('\n', out);
        at = end;
    }
}

/* The next line of *p (advanced past it), NUL-terminated in place; NULL at the end. */
static char *next_line(char **p)
{
    if (!**p)
        return NULL;
    char *line = *p, *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p += strlen(line);
    }
    return line;
}

/* -useGoldPOS on dev, as the jar read it: at least 99.5% of the trees the jar's (all of
 * them today), the others listed; and cky berkeley -useGoldPOS the same as cky parse
 * --gold-pos. */
Test(cli_berkeley, gold_pos_is_the_jars, .timeout = 900)
{
    char d[64];
    run_setup(d);
    char *mrg = run_read(CKY_SHARED "/data/ptb-sample", "dev.mrg");
    char path[128];
    snprintf(path, sizeof path, "%s/dev.goldpos", d);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    write_gold_pos(mrg, f);
    fclose(f);
    free(mrg);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' parse -g '" GR5 "' --gold-pos "
                        "--prune-fallback off -i dev.goldpos > cky 2> err"), 0);
    char *got = run_read(d, "cky"), *want = run_read(REF "/cli", "dev.sample-sm5.goldpos.txt");
    char *g = got, *w = want, *gl, *wl;
    int n = 0, same = 0;
    while ((wl = next_line(&w))) {
        gl = next_line(&g);
        n++;
        if (gl && !strcmp(gl, wl))
            same++;
        else
            cr_log_warn("sentence %d differs from the jar's:\n  jar %s\n  cky %s", n, wl,
                        gl ? gl : "(none)");
    }
    cr_expect_null(next_line(&g), "more trees than the jar's");
    cr_expect_eq(n, 433);
    cr_expect_geq(same * 1000, n * 995, "%d of %d trees the jar's", same, n);
    char *err = run_read(d, "err");
    cr_expect(strstr(err, "dev.goldpos:"), "the retries without tags are named: %s", err);
    free(err);
    free(got);
    free(want);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' berkeley -gr '" GR5 "' -useGoldPOS "
                        "< dev.goldpos > jar-like 2>/dev/null && cmp jar-like cky"), 0);
    run_cleanup(d);
}

/* The gold tags are what the tree takes (a tag the plain parse does not choose), a sentence
 * the tags give no tree is parsed without them (named on stderr: a tag the grammar lacks,
 * or -LRB-, which the jar reads as the empty tag), and --gold-pos's refusals. */
Test(cli_berkeley, gold_tags_are_used_or_dropped, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "printf 'Time\\tNN\\nflies\\tVBZ\\nlike\\tIN\\nan\\tDT\\narrow\\tNN\\n"
                        "\\nTime\\tVB\\nflies\\tNNS\\nlike\\tIN\\nan\\tDT\\narrow\\tNN\\n\\n"
                        "The\\tDT\\ndog\\tNOSUCHTAG\\n\\nThe\\tDT\\n(\\t-LRB-\\ndog\\tNN\\n)\\t-RRB-\\n'"
                        " > in.tags && printf 'The dog\\nThe ( dog )\\n' > plain.txt"), 0);
    const char *cky = "CKY_CACHE=cache '" RUN_CKY "' parse -g '" GR1 "'";
    cr_assert_eq(run_sh(d, "%s --gold-pos -i in.tags > out 2> err && %s -i plain.txt > plain "
                        "2>/dev/null", cky, cky), 0);
    char *out = run_read(d, "out"), *err = run_read(d, "err"), *plain = run_read(d, "plain");
    char *p = out, *l1 = next_line(&p), *l2 = next_line(&p), *rest = p;
    cr_assert(l1 && strstr(l1, "(NN Time)") && strstr(l1, "(VBZ flies)"), "%s", l1);
    cr_assert(l2 && strstr(l2, "(VB Time)") && strstr(l2, "(NNS flies)"), "%s", l2);
    cr_expect_str_eq(rest, plain, "the sentences without a tree under their tags");
    cr_expect(strstr(err, "in.tags:13: no tree with the gold tags") &&
              strstr(err, "in.tags:16: no tree with the gold tags"), "%s", err);
    free(out);
    free(err);
    free(plain);
    static const char *const refused[] = {"--prune none", "--tokenize", "--shard 1/2",
                                          "--backtrace berkeley"};
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
        cr_expect_eq(run_sh(d, "%s --gold-pos %s -i in.tags > o 2>/dev/null", cky, refused[k]),
                     2, "%s", refused[k]);
    cr_expect_eq(run_sh(d, "CKY_CACHE=cache '" RUN_CKY "' parse -g '" RUN_GRAMMAR "' --gold-pos "
                        "-i in.tags > o 2> e"), 1, "a text export has no cascade");
    cr_expect_eq(run_sh(d, "printf 'a\\tDT\\nb NN\\n' > bad && %s --gold-pos -i bad > o 2> e",
                        cky), 1);
    char *e = run_read(d, "e");
    cr_expect(strstr(e, "bad:2: no tab"), "%s", e);
    free(e);
    run_cleanup(d);
}
