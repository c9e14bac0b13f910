/* tagged: sentences with gold part-of-speech tags, in the input that the Berkeley parser's
 * -useGoldPOS reads (cky parse --gold-pos): one line per word, `word<TAB>tag` (more
 * tab-separated fields are ignored), a blank line after each sentence.
 *
 * As the jar reads a line (BerkeleyParser.main): the word is the text before the first tab,
 * the tag the text after it up to the next tab, cut before its first '-' (Java's
 * tag.split("-")[0]: NN-HLN gives NN, -LRB- and -NONE- give the empty tag, which no grammar
 * has, so that sentence is parsed without its tags). Where the jar fails (an exception that
 * ends its run) cky is lenient or names the line: each line is trimmed (the jar trims only
 * a sentence's first line), blank lines in a row are one separator, the last sentence needs
 * no blank line after it, and a line without a tab is an error naming it.
 *
 * The same sentences also come as two lines (tagged_from_lines, the C API's tagged parse):
 * the words, and their tags, each separated by white space. */
#ifndef CKY_CORPUS_TAGGED_H
#define CKY_CORPUS_TAGGED_H

#include <stddef.h>

#include "../util/status.h"
#include "sentence.h"

typedef struct tagged_reader tagged_reader;

cky_status tagged_new(tagged_reader **out);

void tagged_free(tagged_reader *r);

/* Take one input line (len bytes, without its line end). A word line is kept; a blank line
 * after word lines ends their sentence: *done = 1 and *out is it (sentence_from_tagged;
 * the caller frees it). Otherwise *done = 0. CKY_ERR_FORMAT for a line without a tab or
 * without a word (the message says why; the caller names the line). */
cky_status tagged_add_line(tagged_reader *r, const char *line, size_t len, int *done,
                           sentence *out);

/* At the end of the input: the sentence of the word lines since the last blank line, if any
 * (*done = 1), else *done = 0. */
cky_status tagged_finish(tagged_reader *r, int *done, sentence *out);

/* 1 if word lines of an unfinished sentence are held. */
int tagged_pending(const tagged_reader *r);

/* A sentence of the words of `words` (split and written as sentence_from_line does) with the
 * gold tags of `tags`, one per word, split on the same white space and each cut before its
 * first '-' as a word line's tag is (RB-TMP gives RB, -LRB- the empty tag). CKY_ERR_FORMAT
 * when the counts differ (the message gives both); no words and no tags is a sentence of
 * none. */
cky_status tagged_from_lines(const char *words, const char *tags, sentence *out);

#endif
