/* tagged: the -useGoldPOS input, word<TAB>tag lines into sentences (see tagged.h). */
#include "tagged.h"

#include <stdlib.h>
#include <string.h>

struct tagged_reader {
    char **words, **tags; /* the word lines of the sentence being read (malloc'ed copies) */
    int n, cap;
};

cky_status tagged_new(tagged_reader **out)
{
    if (!(*out = calloc(1, sizeof **out)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    return CKY_OK;
}

static void drop_words(tagged_reader *r)
{
    for (int k = 0; k < r->n; k++) {
        free(r->words[k]);
        free(r->tags[k]);
    }
    r->n = 0;
}

void tagged_free(tagged_reader *r)
{
    if (!r)
        return;
    drop_words(r);
    free(r->words);
    free(r->tags);
    free(r);
}

int tagged_pending(const tagged_reader *r) { return r->n > 0; }

/* Java's String.trim: the bytes <= ' ' at both ends of s[*at .. *end). */
static void trim(const char *s, size_t *at, size_t *end)
{
    while (*at < *end && (unsigned char)s[*at] <= ' ')
        (*at)++;
    while (*end > *at && (unsigned char)s[*end - 1] <= ' ')
        (*end)--;
}

static char *copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* The end of the tag s[t0 .. t1) as the jar reads it: before its first '-' (Java's
 * tag.split("-")[0]). */
static size_t tag_end(const char *s, size_t t0, size_t t1)
{
    const char *dash = memchr(s + t0, '-', t1 - t0);
    return dash ? (size_t)(dash - s) : t1;
}

/* The words so far as a sentence (*done = 1), or *done = 0 without any. */
static cky_status emit(tagged_reader *r, int *done, sentence *out)
{
    *done = r->n > 0;
    if (!*done)
        return CKY_OK;
    cky_status st = sentence_from_tagged(r->words, r->tags, r->n, out);
    drop_words(r);
    return st;
}

cky_status tagged_add_line(tagged_reader *r, const char *line, size_t len, int *done,
                           sentence *out)
{
    *done = 0;
    size_t at = 0, end = len;
    trim(line, &at, &end);
    if (at == end)
        return emit(r, done, out);
    const char *tab = memchr(line + at, '\t', end - at);
    if (!tab)
        return cky_fail(CKY_ERR_FORMAT, "no tab: a --gold-pos line is WORD<TAB>TAG");
    size_t w0 = at, w1 = (size_t)(tab - line), t0 = w1 + 1, t1 = end;
    const char *tab2 = memchr(line + t0, '\t', t1 - t0);
    if (tab2)
        t1 = (size_t)(tab2 - line);
    trim(line, &w0, &w1);
    trim(line, &t0, &t1);
    if (w0 == w1)
        return cky_fail(CKY_ERR_FORMAT, "no word before the tab");
    t1 = tag_end(line, t0, t1);
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        char **w = realloc(r->words, (size_t)cap * sizeof *w);
        if (w)
            r->words = w;
        char **t = w ? realloc(r->tags, (size_t)cap * sizeof *t) : NULL;
        if (t)
            r->tags = t;
        if (!w || !t)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        r->cap = cap;
    }
    char *word = copy(line + w0, w1 - w0), *tag = copy(line + t0, t1 - t0);
    if (!word || !tag) {
        free(word);
        free(tag);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    r->words[r->n] = word;
    r->tags[r->n++] = tag;
    return CKY_OK;
}

cky_status tagged_finish(tagged_reader *r, int *done, sentence *out)
{
    return emit(r, done, out);
}

/* The white space sentence_from_line splits words on. */
static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

cky_status tagged_from_lines(const char *words, const char *tags, sentence *out)
{
    sentence w;
    cky_status st = sentence_from_line(words, strlen(words), &w);
    if (st)
        return st;
    size_t len = strlen(tags);
    char *buf = malloc(len + 1), **tag = malloc((len / 2 + 1) * sizeof *tag);
    int n = 0;
    if (!buf || !tag)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    else
        memcpy(buf, tags, len + 1);
    for (size_t i = 0; !st && i < len;) { /* tags cut in place, each NUL-terminated */
        while (i < len && is_space((unsigned char)buf[i]))
            i++;
        if (i == len)
            break;
        size_t t0 = i;
        while (i < len && !is_space((unsigned char)buf[i]))
            i++;
        size_t end = tag_end(buf, t0, i);
        if (i < len)
            i++; /* past the separator, which the NUL may overwrite */
        buf[end] = '\0';
        tag[n++] = buf + t0;
    }
    if (!st && n != w.n)
        st = cky_fail(CKY_ERR_FORMAT, "%d word%s but %d tag%s: a tag per word", w.n,
                      w.n == 1 ? "" : "s", n, n == 1 ? "" : "s");
    if (!st)
        st = sentence_from_tagged(w.words, tag, n, out);
    sentence_free(&w);
    free(buf);
    free(tag);
    return st;
}
