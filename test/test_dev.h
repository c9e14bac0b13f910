/* Test helpers: dev sentences of ../shared, and a tree as text (not a test file itself). */
#ifndef CKY_TEST_DEV_H
#define CKY_TEST_DEV_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "../corpus_tools/tree.h"
#include "../corpus_tools/sentence.h"
#include "../util/io.h"

/* The first `want` dev sentences of at most `maxlen` words. */
static inline int dev_sentences(int want, int maxlen, sentence *out)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(CKY_SHARED "/data/ptb-sample/dev.txt", &in), CKY_OK);
    char *line;
    size_t len;
    int n = 0;
    while (n < want && !io_lines_next(in, &line, &len) && line) {
        sentence s;
        cr_assert_eq(sentence_from_line(line, len, &s), CKY_OK);
        if (s.n >= 1 && s.n <= maxlen)
            out[n++] = s;
        else
            sentence_free(&s);
    }
    io_lines_close(in);
    return n;
}

/* One sentence of the first `words` words of the dev sentences of at most `maxlen` words, in
 * order (a long sentence made of real words). */
static inline void dev_long_sentence(int words, int maxlen, sentence *out)
{
    sentence s[256];
    int n = dev_sentences(256, maxlen, s), m = 0;
    char **w = malloc((size_t)words * sizeof *w);
    for (int k = 0; k < n && m < words; k++)
        for (int i = 0; i < s[k].n && m < words; i++)
            w[m++] = s[k].words[i];
    cr_assert_eq(m, words, "only %d dev words", m);
    cr_assert_eq(sentence_from_words(w, m, out), CKY_OK);
    free(w);
    for (int k = 0; k < n; k++)
        sentence_free(&s[k]);
}

/* A tree as tree_write_line writes it (malloc'ed). */
static inline char *tree_text(const tree *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tree_write_line(t, f);
    fclose(f);
    return buf;
}

#endif
