/* sentence: turning an input line into the words the parser sees.
 *
 * As the Berkeley parser: the line is split on runs of ASCII white space (space, \t, \n,
 * \v, \f, \r); leading and trailing white space is ignored. In addition, so that every output
 * tree can be read back: invalid UTF-8 bytes (and NUL bytes) become U+FFFD, and the Penn
 * Treebank escapes replace brackets inside words ("(" -> "-LRB-", ")" -> "-RRB-"), which is
 * also how the treebank the grammars were trained on spells them. */
#ifndef CKY_CORPUS_SENTENCE_H
#define CKY_CORPUS_SENTENCE_H

#include <stddef.h>

#include "../util/status.h"

typedef struct sentence {
    int n;        /* number of words */
    char **words; /* n NUL-terminated UTF-8 words */
    char *buf;    /* storage of the words */
    char **tags;  /* NULL, or n gold POS tags (sentence_from_tagged): the pruned decoder then
                     restricts each word's lexicon to its tag, as the jar's -useGoldPOS */
} sentence;

/* Split `line` (len bytes, may contain NULs) into a sentence. */
cky_status sentence_from_line(const char *line, size_t len, sentence *out);

/* A sentence holding copies of n given words (for words taken from treebank trees). */
cky_status sentence_from_words(char *const *words, int n, sentence *out);

/* A sentence of n words, each with its gold POS tag (copies of both). The words are written
 * as sentence_from_line writes a word (invalid UTF-8 as U+FFFD, brackets as -LRB- -RRB-);
 * the tags are kept as given. */
cky_status sentence_from_tagged(char *const *words, char *const *tags, int n, sentence *out);

void sentence_free(sentence *s);

/* The sentences of a file read whole, with the input line of each. */
typedef struct sentence_list {
    sentence *s;
    long *line; /* 1-based input line of s[k] */
    int n;
    long words;   /* of the n sentences */
    long skipped; /* lines of no word or of more than the words asked for */
} sentence_list;

/* The sentences of 1 to max_words words of the lines of `path` (plain or gzipped, as
 * io_lines reads it) into *out, in input order. Errors name the file (and the line). */
cky_status sentence_read_file(const char *path, int max_words, sentence_list *out);

void sentence_list_free(sentence_list *l);

#endif
