/* native: the Berkeley .gr loader's in-memory entry (internal to the grammar module; the
 * public entry is grammar_load_native in grammar.h). Used by the fuzz target. */
#ifndef CKY_GRAMMAR_NATIVE_H
#define CKY_GRAMMAR_NATIVE_H

#include <stddef.h>

#include "grammar.h"

/* Build a grammar from an uncompressed Java serialization stream of a ParserData object
 * (`source` names it in messages and becomes grammar.source). Malformed input gives
 * CKY_ERR_FORMAT (CKY_ERR_UNSUPPORTED for a lexicon class other than SophisticatedLexicon). */
cky_status grammar_load_native_stream(const unsigned char *data, size_t len, const char *source,
                                      grammar **out);

#endif
