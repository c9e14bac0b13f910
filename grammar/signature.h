/* signature: the Berkeley Parser's unknown-word signatures (SophisticatedLexicon.getSignature),
 * with Java character semantics (UTF-16 code units, Java's Unicode character classes).
 * Internal to the grammar module; used by both lexicons. */
#ifndef CKY_GRAMMAR_SIGNATURE_H
#define CKY_GRAMMAR_SIGNATURE_H

#include <stddef.h>

/* Is the lower-cased word a key of the lexicon's word counter? (for "-KNOWNLC") */
typedef int (*signature_known_fn)(const char *word_utf8, void *ctx);

/* Write the signature of `word` (UTF-8; invalid bytes read as U+FFFD) at 0-based sentence
 * position `loc` for `unknown_level` (5: English, 4: other languages) into out (NUL-terminated,
 * at most outsize bytes, truncated if longer). Returns the length it needed. */
size_t signature_of(const char *word, int loc, int unknown_level, signature_known_fn known,
                    void *ctx, char *out, size_t outsize);

#endif
