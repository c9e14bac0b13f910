/* fuzz_tokenize: libFuzzer target over the tokenizer (corpus_tools/tokenize.h). Any bytes
 * are a line of raw text; the tokens must be valid UTF-8, separated by single spaces, as many
 * as reported, none empty; tokenizing them again must hold the same. Build with `make fuzz`;
 * fuzz/README says how to run it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/tokenize.h"
#include "../util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort unless s (n tokens reported) is valid UTF-8 tokens separated by single spaces. */
static void check_tokens(const char *s, int n)
{
    size_t len = strlen(s);
    int count = len > 0;
    for (size_t k = 0; k < len;) {
        unsigned cp;
        int l = utf8_decode((const unsigned char *)s + k, len - k, &cp);
        if (l == 0 || (s[k] == ' ' && (k == 0 || k + 1 == len || s[k + 1] == ' ')))
            abort();
        count += s[k] == ' ';
        k += (size_t)l;
    }
    if (count != n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *once, *twice;
    int n1, n2;
    if (tokenize_line((const char *)data, size, &once, &n1) != CKY_OK)
        return 0;
    check_tokens(once, n1);
    if (tokenize_line(once, strlen(once), &twice, &n2) == CKY_OK) {
        check_tokens(twice, n2);
        free(twice);
    }
    free(once);
    return 0;
}
