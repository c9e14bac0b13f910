/* Test helper: dev sentences of ../shared (not a test file itself). */
#ifndef CKY_TEST_DEV_H
#define CKY_TEST_DEV_H

#include <criterion/criterion.h>

#include "../parser/sentence.h"
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

#endif
