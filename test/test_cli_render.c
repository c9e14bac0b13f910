/* cky parse --render DIR (issue 43, item 6, the jar's -render): one SVG per input line,
 * DIR/NNNNNN.svg after its line number (empty and too-long lines too), each the picture
 * `cky draw` makes of that line's output, well-formed, its <text> elements the tree's labels
 * and words in prefix order; the trees on stdout unchanged; --kbest lists stacked in one
 * picture; --shard and --treebank numbering; a folder that cannot be used refused before
 * anything is parsed; a picture that cannot be written failing the run; cky berkeley
 * -render. */
#include "test_cli_run.h"

#define GR1 CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr"
#define PARSE "CKY_CACHE=cache '" RUN_CKY "' parse -q --engine cpu --max-length 40 "
#define TEXT_EXPORT PARSE "-g '" RUN_GRAMMAR "' "

/* A test's folder (run_setup) with in4.txt: a dev sentence, one of 56 words (over
 * --max-length 40), an empty line, another dev sentence. */
static void setup_in4(char *d)
{
    run_setup(d);
    cr_assert_eq(run_sh(d, "(sed -n 1,2p in.txt; echo; sed -n 3p in.txt) > in4.txt"), 0);
}

/* The labels and words of the tree lines in `trees` (several: a k-best list), in prefix
 * order, one a line: what the <text> elements of their picture hold ("(no parse)" for a tree
 * without any, (())). Malloc'ed. */
static char *tree_texts(const char *trees)
{
    size_t cap = 2 * strlen(trees) + 64, n = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    for (const char *line = trees; *line;) {
        size_t len = strcspn(line, "\n"), before = n;
        for (size_t i = 0; i < len;) {
            size_t w = strcspn(line + i, " ()\n");
            if (w == 0) {
                i++;
                continue;
            }
            memcpy(out + n, line + i, w);
            n += w;
            out[n++] = '\n';
            i += w;
        }
        if (n == before && len > 0)
            n += (size_t)sprintf(out + n, "(no parse)\n");
        line += len + (line[len] == '\n');
    }
    out[n] = '\0';
    return out;
}

/* The texts of the <text> elements of dir/svg in document order, one a line, as an XML
 * parser reads them (which fails on a file that is not well-formed XML). Malloc'ed. */
static char *svg_texts(const char *dir, const char *svg)
{
    cr_assert_eq(run_sh(dir, "command -v python3 >/dev/null"), 0, "python3 reads the SVG");
    cr_assert_eq(run_sh(dir, "python3 -c 'import sys, xml.etree.ElementTree as E\n"
                        "r = E.parse(sys.argv[1]).getroot()\n"
                        "assert r.tag == \"{http://www.w3.org/2000/svg}svg\", r.tag\n"
                        "for t in r.iter(\"{http://www.w3.org/2000/svg}text\"): print(t.text)' "
                        "'%s' > texts 2> texts.err", svg), 0, "%s is not well-formed SVG", svg);
    return run_read(dir, "texts");
}

/* dir/svg is the picture `cky draw` makes of the trees in dir/trees, and its texts are their
 * labels and words in prefix order. */
static void check_picture(const char *dir, const char *svg, const char *trees)
{
    cr_assert_eq(run_sh(dir, "'" RUN_CKY "' draw -i '%s' > drawn.svg && cmp -s drawn.svg '%s'",
                        trees, svg), 0, "%s is not cky draw's picture of %s", svg, trees);
    char *t = run_read(dir, trees), *want = tree_texts(t), *got = svg_texts(dir, svg);
    cr_assert_str_eq(got, want, "%s: the texts are not the labels and words of %s", svg, t);
    free(t);
    free(want);
    free(got);
}

/* One picture per input line, named after it, each the line's tree; stdout as without. */
Test(cli_render, one_picture_per_input_line, .timeout = 600)
{
    char d[64];
    setup_in4(d);
    cr_assert_eq(run_sh(d, TEXT_EXPORT "-i in4.txt --render pics > with 2> err"), 0);
    cr_assert_eq(run_sh(d, TEXT_EXPORT "-i in4.txt > without 2> /dev/null"), 0);
    cr_assert_eq(run_sh(d, "cmp -s with without"), 0, "--render changed stdout");
    cr_assert_eq(run_sh(d, "test $(wc -l < with) -eq 4"), 0);
    char *names = (run_sh(d, "ls -A pics > names"), run_read(d, "names"));
    cr_assert_str_eq(names, "000001.svg\n000002.svg\n000003.svg\n000004.svg\n",
                     "no temporary files, a picture per line");
    free(names);
    for (int k = 1; k <= 4; k++) {
        char svg[64];
        snprintf(svg, sizeof svg, "pics/%06d.svg", k);
        cr_assert_eq(run_sh(d, "sed -n %dp with > line", k), 0);
        check_picture(d, svg, "line");
    }
    char *two = run_read(d, "pics/000002.svg"), *three = run_read(d, "pics/000003.svg");
    cr_expect(strstr(two, ">(no parse)</text>") && strstr(three, ">(no parse)</text>"),
              "the too-long and the empty line: %s", two);
    free(two);
    free(three);
    /* a second run over the same folder replaces the pictures */
    cr_assert_eq(run_sh(d, "echo old > pics/000001.svg && " TEXT_EXPORT
                        "-i in4.txt --render pics > /dev/null 2>&1 && head -1 with > line"), 0);
    check_picture(d, "pics/000001.svg", "line");
    run_cleanup(d);
}

/* --kbest K: each sentence's list in one picture, its trees one below the other. */
Test(cli_render, kbest_lists_are_stacked, .timeout = 600)
{
    char d[64];
    setup_in4(d);
    const char *kbest = PARSE "-g '" GR1 "' --kbest 3 -i in4.txt";
    cr_assert_eq(run_sh(d, "%s --render k > with 2> err", kbest), 0);
    cr_assert_eq(run_sh(d, "%s > without 2> /dev/null && cmp -s with without", kbest), 0,
                 "--render changed stdout");
    cr_assert_eq(run_sh(d, "test \"$(ls -A k | tr '\\n' ' ')\" = "
                        "'000001.svg 000002.svg 000003.svg 000004.svg '"), 0);
    int most = 0;
    for (int k = 1; k <= 4; k++) {
        char svg[64];
        snprintf(svg, sizeof svg, "k/%06d.svg", k);
        cr_assert_eq(run_sh(d, "awk -v RS= 'NR == %d' with > list", k), 0);
        check_picture(d, svg, "list");
        char *list = run_read(d, "list"), *pic = run_read(d, svg);
        int trees = 0, groups = 0;
        for (const char *p = list; (p = strchr(p, '\n')); p++)
            trees++;
        for (const char *p = pic; (p = strstr(p, "<g stroke")); p++)
            groups++;
        cr_expect_eq(groups, strstr(list, "(())") ? 0 : trees, "%s: %d trees drawn of %d",
                     svg, groups, trees);
        cr_expect(strstr(pic, "<svg ") && !strstr(strstr(pic, "<svg ") + 1, "<svg "),
                  "%s: not one SVG document", svg);
        most = trees > most ? trees : most;
        free(list);
        free(pic);
    }
    cr_expect_eq(most, 3, "no list of 3 trees: nothing was stacked");
    run_cleanup(d);
}

/* The pictures are named after the input's own numbering whoever parses: shards (each its
 * lines, one folder for all), several engines, --treebank trees counted over the files. */
Test(cli_render, shards_and_treebanks_keep_the_input_numbers, .timeout = 600)
{
    char d[64];
    setup_in4(d);
    cr_assert_eq(run_sh(d, TEXT_EXPORT "-i in4.txt --render all > out 2> /dev/null"), 0);
    cr_assert_eq(run_sh(d, TEXT_EXPORT "--shard 2/2 -i in4.txt --render s > /dev/null 2>&1"), 0);
    cr_assert_eq(run_sh(d, "test \"$(ls -A s | tr '\\n' ' ')\" = '000002.svg 000004.svg '"), 0,
                 "shard 2/2: not the pictures of lines 2 and 4");
    cr_assert_eq(run_sh(d, TEXT_EXPORT "--shard 1/2 -i in4.txt --render s > /dev/null 2>&1"), 0);
    cr_assert_eq(run_sh(d, "diff -r all s"), 0, "the two shards' pictures are not the run's");
    cr_assert_eq(run_sh(d, TEXT_EXPORT "--engines 2 -i in4.txt --render e > /dev/null 2>&1 && "
                        "diff -r all e"), 0, "two engines: other pictures");
    /* three trees in two files: 1, 2, 3, not the line each starts at in its file */
    cr_assert_eq(run_sh(d, "sed -n 1p out > a.mrg && (sed -n 4p out; sed -n 1p out) > b.mrg && "
                        TEXT_EXPORT "--treebank a.mrg --treebank b.mrg --render t > tb "
                        "2> /dev/null"), 0);
    cr_assert_eq(run_sh(d, "test \"$(ls -A t | tr '\\n' ' ')\" = "
                        "'000001.svg 000002.svg 000003.svg '"), 0);
    cr_assert_eq(run_sh(d, "sed -n 2p tb > line"), 0);
    check_picture(d, "t/000002.svg", "line");
    run_cleanup(d);
}

/* A --render that is not a folder, or one that cannot be made: a usage error before the
 * grammar is read, nothing written. */
Test(cli_render, unusable_folder_is_refused)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "touch notdir && " TEXT_EXPORT "-i in.txt --render notdir > out "
                        "2> err"), 2);
    char *out = run_read(d, "out"), *err = run_read(d, "err");
    cr_expect_str_eq(out, "");
    cr_expect(strstr(err, "cky parse: --render notdir: not a directory"), "%s", err);
    cr_expect_eq(run_sh(d, "test -f notdir && ! test -s notdir"), 0, "notdir was changed");
    free(out);
    free(err);
    cr_assert_eq(run_sh(d, TEXT_EXPORT "-i in.txt --render no/such > out 2> err"), 2);
    err = run_read(d, "err");
    cr_expect(strstr(err, "cky parse: --render no/such: cannot create it"), "%s", err);
    cr_expect_eq(run_sh(d, "! test -e no && ! test -s out"), 0);
    free(err);
    /* before the grammar: a missing one is exit status 1, after the folder's 2 */
    cr_assert_eq(run_sh(d, PARSE "-g /nonexistent.gr -i in.txt > out 2> /dev/null"), 1);
    cr_assert_eq(run_sh(d, PARSE "-g /nonexistent.gr -i in.txt --render notdir > out "
                        "2> /dev/null"), 2);
    run_cleanup(d);
}

/* A picture that cannot be written (a folder in its place) fails the run (exit status 1,
 * the -o file not written), and leaves no temporary file. */
Test(cli_render, picture_that_cannot_be_written_fails_the_run, .timeout = 600)
{
    char d[64];
    setup_in4(d);
    cr_assert_eq(run_sh(d, "mkdir -p p/000002.svg && " TEXT_EXPORT "-i in4.txt --render p "
                        "-o out 2> err"), 1);
    char *err = run_read(d, "err");
    cr_expect(strstr(err, "cky parse: --render p: p/000002.svg"), "%s", err);
    free(err);
    cr_expect_eq(run_sh(d, "! test -e out"), 0, "-o out written after a failed run");
    cr_expect_eq(run_sh(d, "test \"$(ls -A p | tr '\\n' ' ')\" = '000001.svg 000002.svg '"), 0,
                 "a temporary file left, or a picture after the failure");
    run_cleanup(d);
}

/* cky berkeley -render: the pictures in the working folder, the trees as without it. */
Test(cli_render, berkeley_render_writes_the_pictures, .timeout = 600)
{
    char d[64];
    setup_in4(d);
    const char *jar = "CKY_CACHE=../cache '" RUN_CKY "' berkeley -gr '" GR1 "' -maxLength 40 "
                      "-inputFile ../in4.txt";
    cr_assert_eq(run_sh(d, "mkdir work && cd work && %s -render > ../with 2> ../err", jar), 0);
    cr_assert_eq(run_sh(d, "cd work && %s > ../without 2> /dev/null", jar), 0);
    cr_assert_eq(run_sh(d, "cmp -s with without"), 0, "-render changed stdout");
    cr_assert_eq(run_sh(d, "test \"$(ls -A work | tr '\\n' ' ')\" = "
                        "'000001.svg 000002.svg 000003.svg 000004.svg '"), 0);
    for (int k = 1; k <= 4; k++) {
        char svg[64];
        snprintf(svg, sizeof svg, "work/%06d.svg", k);
        cr_assert_eq(run_sh(d, "sed -n %dp with > line", k), 0);
        check_picture(d, svg, "line");
    }
    run_cleanup(d);
}
