/* fuzz_native: libFuzzer target over the native grammar reader. The input is an uncompressed
 * Java serialization stream; it goes through jser_parse and the ParserData extraction
 * (grammar_load_native_stream), and a grammar that loads is asked to score a few words.
 * Build with `make fuzz`; fuzz/README says how to run it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../grammar/grammar.h"
#include "../grammar/native.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const words[] = {"the", "Hello", "UNK-LC-ed", "", "1990s"};
    grammar *g = NULL;
    if (grammar_load_native_stream(data, size, "fuzz-input", &g) != CKY_OK)
        return 0;
    double *out = malloc((size_t)g->nsub_total * sizeof *out);
    for (size_t i = 0; out && i < sizeof words / sizeof *words; i++)
        grammar_score_word(g, words[i], (int)i, out);
    free(out);
    grammar_free(g);
    return 0;
}
