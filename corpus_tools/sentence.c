/* sentence: tokenization of input lines (see sentence.h). */
#include "sentence.h"

#include <stdlib.h>
#include <string.h>

#include "../util/io.h"
#include "../util/utf8.h"

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Append the escaped form of one input byte sequence to out; returns bytes consumed. */
static size_t copy_char(const unsigned char *s, size_t n, char **out)
{
    if (s[0] == '(' || s[0] == ')') {
        memcpy(*out, s[0] == '(' ? "-LRB-" : "-RRB-", 5);
        *out += 5;
        return 1;
    }
    unsigned cp;
    int len = utf8_decode(s, n, &cp);
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

cky_status sentence_from_tagged(char *const *words, char *const *tags, int n, sentence *out)
{
    size_t total = 0;
    for (int k = 0; k < n; k++)
        total += 5 * strlen(words[k]) + strlen(tags[k]) + 2;
    memset(out, 0, sizeof *out);
    out->buf = malloc(total + 1);
    out->words = malloc((size_t)(n ? n : 1) * sizeof *out->words);
    out->tags = malloc((size_t)(n ? n : 1) * sizeof *out->tags);
    if (!out->buf || !out->words || !out->tags) {
        sentence_free(out);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    char *w = out->buf;
    for (int k = 0; k < n; k++) {
        const unsigned char *s = (const unsigned char *)words[k];
        size_t len = strlen(words[k]), i = 0;
        out->words[k] = w;
        while (i < len)
            i += copy_char(s + i, len - i, &w);
        *w++ = '\0';
        size_t m = strlen(tags[k]) + 1;
        memcpy(w, tags[k], m);
        out->tags[k] = w;
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
    free(s->tags);
    s->buf = NULL;
    s->words = NULL;
    s->tags = NULL;
    s->n = 0;
}

void sentence_list_free(sentence_list *l)
{
    for (int k = 0; k < l->n; k++)
        sentence_free(&l->s[k]);
    free(l->s);
    free(l->line);
    memset(l, 0, sizeof *l);
}

/* Append s (taken over) from line `line` to l. */
static cky_status list_add(sentence_list *l, const sentence *s, long line, int *cap)
{
    if (l->n == *cap) {
        int c = *cap ? 2 * *cap : 1024;
        sentence *a = realloc(l->s, (size_t)c * sizeof *a);
        if (a)
            l->s = a;
        long *b = a ? realloc(l->line, (size_t)c * sizeof *b) : NULL;
        if (b)
            l->line = b;
        if (!a || !b)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        *cap = c;
    }
    l->s[l->n] = *s;
    l->line[l->n++] = line;
    return CKY_OK;
}

cky_status sentence_read_file(const char *path, int max_words, sentence_list *out)
{
    memset(out, 0, sizeof *out);
    io_lines *in;
    cky_status st = io_lines_open(path, &in);
    if (st)
        return st;
    char *text;
    size_t len;
    int cap = 0;
    while (!(st = io_lines_next(in, &text, &len)) && text) {
        sentence s;
        if ((st = sentence_from_line(text, len, &s))) {
            st = cky_fail(st, "%s:%ld: %s", path, io_lines_number(in), cky_last_error());
            break;
        }
        if (s.n < 1 || s.n > max_words) {
            out->skipped++;
            sentence_free(&s);
            continue;
        }
        out->words += s.n;
        if ((st = list_add(out, &s, io_lines_number(in), &cap))) {
            sentence_free(&s);
            break;
        }
    }
    io_lines_close(in);
    if (st)
        sentence_list_free(out);
    return st;
}
