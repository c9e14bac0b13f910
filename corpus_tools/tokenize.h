/* tokenize: raw English text into Penn Treebank tokens, one sentence per line.
 *
 * The conventions of the treebank the grammars were trained on, as the Berkeley parser's
 * -tokenize and NLTK's Treebank word tokenizer apply them:
 *   - double quotes become `` (opening) and '' (closing); a single opening quote becomes `;
 *     curly quotes, the em dash (--) and the ellipsis character (...) are mapped to ASCII;
 *   - clitics are split: n't, 's, 'm, 'd, 'll, 're, 've, a final possessive ', and
 *     cannot / gonna / gotta / wanna / gimme / lemme into two tokens (can not, gon na, ...);
 *   - brackets become -LRB- -RRB- (round), -LSB- -RSB- (square), -LCB- -RCB- (curly);
 *   - , ; : ? ! % # $ -- ... are tokens of their own, except a comma or colon between
 *     digits (1,000  10:30); a leading $ is split from a number (US$ and C$ stay words);
 *   - the sentence-final period is a token of its own; a final abbreviation gives its
 *     period to it (... Inc. -> ... Inc .), except U.S. (... U.S. .), as the treebank has it;
 *   - / and * inside words are escaped as \/ and \* (3\/4), as the treebank spells them.
 * Text that is already tokenized this way comes back unchanged. Any bytes are accepted:
 * invalid UTF-8 (and NUL) becomes U+FFFD, so every token is valid UTF-8 and not empty. */
#ifndef CKY_CORPUS_TOOLS_TOKENIZE_H
#define CKY_CORPUS_TOOLS_TOKENIZE_H

#include <stddef.h>

#include "../util/status.h"

/* Tokenize one line (`len` bytes; any bytes, NULs included). *out = a malloc'ed,
 * NUL-terminated string of the tokens separated by single spaces ("" when there are none)
 * and *ntokens their number. Fails only when memory runs out (CKY_ERR_NOMEM). */
cky_status tokenize_line(const char *line, size_t len, char **out, int *ntokens);

#endif
