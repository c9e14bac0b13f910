/* lexicon_text: the lexicon of the Berkeley text export (PREFIX.lexicon + PREFIX.words), and
 * the line cursor its loader shares with grammar/text.c. Internal to the grammar module.
 *
 * The export holds final linear scores for the (tag, word) and (tag, signature) pairs seen in
 * training (spec §2.3, §2.6). Scoring a word: an unknown word gets the lines of its signature
 * (level 5, spec §3.6), -inf where there is none; a known word (listed in .words) gets the
 * log of its own lines and, for tags it has no line for, its signature's lines times a
 * back-off weight (lexicon_text.c), an approximation of what the export lacks. */
#ifndef CKY_GRAMMAR_LEXICON_TEXT_H
#define CKY_GRAMMAR_LEXICON_TEXT_H

#include <stddef.h>

#include "internal.h"

/* ---- text_lines: the lines of a file read whole (io_read_file), split in place ---- */

typedef struct text_lines {
    char *p, *end;
    long number; /* 1-based number of the line last returned */
} text_lines;

/* Start at buf[0..len). */
text_lines text_lines_start(char *buf, size_t len);

/* The next line, NUL-terminated in place without its '\n' or a trailing '\r'; *len = its
 * length. NULL at the end of the buffer. */
char *text_lines_next(text_lines *it, size_t *len);

/* ---- the text lexicon ---- */

typedef struct lexicon_text lexicon_text;

/* Read PREFIX.lexicon and PREFIX.words (paths given, possibly gzipped). Tags are numbered in
 * order of first appearance in the .lexicon file; every line of a tag must have the same
 * number of values. Errors: CKY_ERR_IO (a file), CKY_ERR_FORMAT "path:line: problem". */
cky_status lexicon_text_read(const char *lexicon_path, const char *words_path,
                             lexicon_text **out);

/* The tags of the .lexicon file: count, name, number of values, first line (for messages). */
int lexicon_text_count_tags(const lexicon_text *lex);
const char *lexicon_text_tag_name(const lexicon_text *lex, int tag);
int lexicon_text_tag_nsub(const lexicon_text *lex, int tag);
long lexicon_text_tag_line(const lexicon_text *lex, int tag);

/* Set the grammar symbol of every tag (symbol[tag], copied) before the lexicon scores. */
cky_status lexicon_text_bind_symbols(lexicon_text *lex, const int *symbol);

/* The lexicon as the grammar holds it (its free() frees the lexicon_text). */
grammar_lexicon *lexicon_text_base(lexicon_text *lex);

#endif
