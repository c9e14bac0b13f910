/* sentence: turning an input line into the words the parser sees.
 *
 * As the Berkeley parser: the line is split on runs of ASCII white space (space, \t, \n,
 * \v, \f, \r); leading and trailing white space is ignored. In addition, so that every output
 * tree can be read back: invalid UTF-8 bytes (and NUL bytes) become U+FFFD, and the Penn
 * Treebank escapes replace brackets inside words ("(" -> "-LRB-", ")" -> "-RRB-"), which is
 * also how the treebank the grammars were trained on spells them. */
#ifndef CKY_PARSER_SENTENCE_H
#define CKY_PARSER_SENTENCE_H

#include <stddef.h>

#include "../util/status.h"

typedef struct sentence {
    int n;        /* number of words */
    char **words; /* n NUL-terminated UTF-8 words */
    char *buf;    /* storage of the words */
} sentence;

/* Split `line` (len bytes, may contain NULs) into a sentence. */
cky_status sentence_from_line(const char *line, size_t len, sentence *out);

/* A sentence holding copies of n given words (for words taken from treebank trees). */
cky_status sentence_from_words(char *const *words, int n, sentence *out);

void sentence_free(sentence *s);

#endif
