/* align: the span of text each word of a sentence was made from (serve_internal.h).
 *
 * The words come from the text by the tokenizer (corpus_tools/tokenize.h) or by splitting at
 * white space (parser/sentence.h), both of which only cut the text and rewrite some
 * characters into Penn Treebank forms. So each word is matched against the text from where
 * the previous one ended, character by character: a character of the text matches either
 * itself or one of the forms it can be written as (a double quote as `` or '', a bracket as
 * -LRB- ..., / as \/, a curly quote or a Unicode dash in ASCII). No backtracking: the forms
 * are whole tokens or escapes, so the first that fits is the one the tokenizer wrote. */
#include <string.h>

#include "../util/utf8.h"
#include "serve_internal.h"

/* The Penn Treebank forms a character of the text may take in a word. */
static const struct {
    unsigned cp;
    const char *form;
} forms[] = {
    {'"', "``"},     {'"', "''"},     {'\'', "`"},      {'(', "-LRB-"},   {')', "-RRB-"},
    {'[', "-LSB-"},  {']', "-RSB-"},  {'{', "-LCB-"},   {'}', "-RCB-"},   {'/', "\\/"},
    {'*', "\\*"},    {0x201C, "``"},  {0x201E, "``"},   {0x201F, "``"},   {0xAB, "``"},
    {0x201D, "''"},  {0xBB, "''"},    {0x2018, "`"},    {0x201B, "`"},    {0x2019, "'"},
    {0x2013, "--"},  {0x2013, "-"},   {0x2014, "--"},   {0x2015, "--"},   {0x2026, "..."},
};

/* 1 for the characters the tokenizer and the sentence reader take as white space. */
static int is_space(unsigned cp)
{
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\v' || cp == '\f' || cp == '\r' ||
           cp == 0xA0 || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
           (cp >= 0x2000 && cp <= 0x200A);
}

/* The character at t[0] (len >= 1): its code point in *cp, its length in bytes (an invalid
 * byte counts as one). */
static size_t char_at(const char *t, size_t len, unsigned *cp)
{
    int k = utf8_decode((const unsigned char *)t, len, cp);
    if (k == 0) {
        *cp = 0xFFFD;
        return 1;
    }
    return (size_t)k;
}

/* How many bytes of the word w (wn bytes left) the character c (clen bytes at t, code point
 * cp) accounts for: its own bytes, or one of its forms; 0 if none fits. */
static size_t match_char(const char *t, size_t clen, unsigned cp, const char *w, size_t wn)
{
    if (clen <= wn && !memcmp(t, w, clen))
        return clen;
    for (size_t k = 0; k < sizeof forms / sizeof *forms; k++) {
        size_t m = strlen(forms[k].form);
        if (forms[k].cp == cp && m <= wn && !memcmp(forms[k].form, w, m))
            return m;
    }
    if (cp == 0xFFFD && wn >= 3 && !memcmp(w, "\xEF\xBF\xBD", 3))
        return 3; /* an invalid byte, read as U+FFFD */
    return 0;
}

/* The end of the word w matched from text position `at`, or -1 if it does not match there. */
static long match_word(const char *text, size_t len, size_t at, const char *w)
{
    size_t wn = strlen(w), i = at;
    while (wn > 0) {
        if (i >= len)
            return -1;
        unsigned cp;
        size_t clen = char_at(text + i, len - i, &cp);
        size_t m = match_char(text + i, clen, cp, w, wn);
        if (m == 0)
            return -1;
        i += clen;
        w += m;
        wn -= m;
    }
    return (long)i;
}

void serve_align_words(const char *text, size_t len, char *const *words, int n, long *begin,
                       long *end)
{
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        size_t i = at;
        unsigned cp;
        size_t clen;
        while (i < len && (clen = char_at(text + i, len - i, &cp), is_space(cp)))
            i += clen;
        long e = match_word(text, len, i, words[k]);
        if (e < 0) { /* made of no text of its own: an empty span */
            begin[k] = end[k] = (long)i;
            continue;
        }
        begin[k] = (long)i;
        end[k] = e;
        at = (size_t)e;
    }
}
