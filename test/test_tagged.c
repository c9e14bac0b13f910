/* Tests of corpus_tools/tagged.h, the -useGoldPOS input: word<TAB>tag lines into sentences
 * with their tags, the tag cut before its first '-' as the jar cuts it, blank lines, and the
 * lines it refuses; and the same sentences from a line of words and a line of tags
 * (tagged_from_lines, the C API's). */
#include <criterion/criterion.h>
#include <string.h>

#include "../corpus_tools/tagged.h"

/* Feed the lines of `text` (separated by '\n'), then the end; the sentences as
 * "word/tag word/tag|word/tag|" into out. Returns the status of the first failing line. */
static cky_status feed(const char *text, char *out, size_t size)
{
    tagged_reader *r;
    cr_assert_eq(tagged_new(&r), CKY_OK);
    out[0] = '\0';
    cky_status st = CKY_OK;
    const char *p = text;
    for (int last = 0; !st && !last;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sentence s;
        int done = 0;
        if (!nl && len == 0)
            st = tagged_finish(r, &done, &s);
        else
            st = tagged_add_line(r, p, len, &done, &s);
        last = !nl && len == 0;
        if (!st && done) {
            cr_assert_not_null(s.tags);
            for (int k = 0; k < s.n; k++) {
                strncat(out, s.words[k], size - strlen(out) - 1);
                strncat(out, "/", size - strlen(out) - 1);
                strncat(out, s.tags[k], size - strlen(out) - 1);
                strncat(out, k + 1 < s.n ? " " : "|", size - strlen(out) - 1);
            }
            sentence_free(&s);
        }
        p = nl ? nl + 1 : p + len;
    }
    tagged_free(r);
    return st;
}

Test(tagged, sentences_and_their_tags)
{
    char out[1024];
    cr_assert_eq(feed("The\tDT\ndog\tNN\nbarks\tVBZ\n.\t.\n\nIt\tPRP\nis\tVBZ\n\n", out,
                      sizeof out), CKY_OK);
    cr_expect_str_eq(out, "The/DT dog/NN barks/VBZ ./.|It/PRP is/VBZ|");
}

/* Java's tag.split("-")[0]: the text before the first '-', empty for -LRB- and -NONE-. */
Test(tagged, the_tag_up_to_its_first_dash)
{
    char out[1024];
    cr_assert_eq(feed("Now\tRB-TMP\n(\t-LRB-\nx\t-NONE-\ny\tNN-\n\n", out, sizeof out), CKY_OK);
    cr_expect_str_eq(out, "Now/RB -LRB-/ x/ y/NN|");
}

/* More fields are ignored; each line trimmed; blank lines in a row are one separator; the
 * last sentence needs no blank line after it. */
Test(tagged, lenient_where_the_jar_fails)
{
    char out[1024];
    cr_assert_eq(feed("  a\tDT\tB-NP\textra\n b \t NN \n\n\n   \nc\tVB", out, sizeof out),
                 CKY_OK);
    cr_expect_str_eq(out, "a/DT b/NN|c/VB|");
}

Test(tagged, a_line_without_a_tab_or_a_word_is_refused)
{
    char out[1024];
    cr_assert_eq(feed("a\tDT\nb NN\n\n", out, sizeof out), CKY_ERR_FORMAT);
    cr_expect(strstr(cky_last_error(), "no tab"), "%s", cky_last_error());
    cr_assert_eq(feed(" \tNN\n\n", out, sizeof out), CKY_ERR_FORMAT);
}

/* The words are written as an input line's words are: brackets escaped. */
Test(tagged, brackets_in_words_are_escaped)
{
    char out[1024];
    cr_assert_eq(feed("f(x)\tNN\n\n", out, sizeof out), CKY_OK);
    cr_expect_str_eq(out, "f-LRB-x-RRB-/NN|");
}

/* s as "word/tag word/tag" into out. */
static void show(const sentence *s, char *out, size_t size)
{
    out[0] = '\0';
    cr_assert_not_null(s->tags);
    for (int k = 0; k < s->n; k++) {
        strncat(out, s->words[k], size - strlen(out) - 1);
        strncat(out, "/", size - strlen(out) - 1);
        strncat(out, s->tags[k], size - strlen(out) - 1);
        if (k + 1 < s->n)
            strncat(out, " ", size - strlen(out) - 1);
    }
}

/* Two lines: split on white space, the words written as an input line's, the tags cut as a
 * word line's; the counts must agree. */
Test(tagged, from_a_line_of_words_and_one_of_tags)
{
    char out[1024];
    sentence s;
    cr_assert_eq(tagged_from_lines(" Now ( x  f(y)\t", "RB-TMP\t-LRB- -NONE-   NN- ", &s),
                 CKY_OK);
    show(&s, out, sizeof out);
    cr_expect_str_eq(out, "Now/RB -LRB-/ x/ f-LRB-y-RRB-/NN");
    sentence_free(&s);
    cr_assert_eq(tagged_from_lines("", "  ", &s), CKY_OK);
    cr_expect_eq(s.n, 0);
    sentence_free(&s);
    cr_expect_eq(tagged_from_lines("The dog barks", "DT NN", &s), CKY_ERR_FORMAT);
    cr_expect(strstr(cky_last_error(), "3 words but 2 tags"), "%s", cky_last_error());
    cr_expect_eq(tagged_from_lines("dog", "NN VBZ", &s), CKY_ERR_FORMAT);
    cr_expect(strstr(cky_last_error(), "1 word but 2 tags"), "%s", cky_last_error());
}
