/* sentence: tokenization of input lines (see sentence.h). */
#include "sentence.h"

#include <stdlib.h>
#include <string.h>

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid. */
static int utf8_length(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    int len;
    unsigned min;
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000;
    else
        return 0;
    if ((size_t)len > n)
        return 0;
    unsigned cp = c & (0x7F >> len);
    for (int k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Append the escaped form of one input byte sequence to out; returns bytes consumed. */
static size_t copy_char(const unsigned char *s, size_t n, char **out)
{
    if (s[0] == '(' || s[0] == ')') {
        memcpy(*out, s[0] == '(' ? "-LRB-" : "-RRB-", 5);
        *out += 5;
        return 1;
    }
    int len = utf8_length(s, n);
    if (len == 0) {
        memcpy(*out, "\xEF\xBF\xBD", 3); /* U+FFFD */
        *out += 3;
        return 1;
    }
    memcpy(*out, s, (size_t)len);
    *out += len;
    return (size_t)len;
}

cky_status sentence_from_line(const char *line, size_t len, sentence *out)
{
    const unsigned char *s = (const unsigned char *)line;
    memset(out, 0, sizeof *out);
    /* at most 5 output bytes per input byte, plus a NUL per word */
    size_t words_max = len / 2 + 1;
    out->buf = malloc(5 * len + words_max + 1);
    out->words = malloc(words_max * sizeof *out->words);
    if (!out->buf || !out->words) {
        sentence_free(out);
        return cky_fail(CKY_ERR_NOMEM, "out of memory reading a %zu-byte line", len);
    }
    char *w = out->buf;
    size_t i = 0;
    while (i < len) {
        while (i < len && is_space(s[i]))
            i++;
        if (i == len)
            break;
        out->words[out->n++] = w;
        while (i < len && !is_space(s[i]))
            i += copy_char(s + i, len - i, &w);
        *w++ = '\0';
    }
    return CKY_OK;
}

cky_status sentence_from_words(char *const *words, int n, sentence *out)
{
    size_t total = 0;
    for (int k = 0; k < n; k++)
        total += strlen(words[k]) + 1;
    memset(out, 0, sizeof *out);
    out->buf = malloc(total + 1);
    out->words = malloc((size_t)(n ? n : 1) * sizeof *out->words);
    if (!out->buf || !out->words) {
        sentence_free(out);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    char *w = out->buf;
    for (int k = 0; k < n; k++) {
        size_t m = strlen(words[k]) + 1;
        memcpy(w, words[k], m);
        out->words[k] = w;
        w += m;
    }
    out->n = n;
    return CKY_OK;
}

void sentence_free(sentence *s)
{
    if (!s)
        return;
    free(s->buf);
    free(s->words);
    s->buf = NULL;
    s->words = NULL;
    s->n = 0;
}
