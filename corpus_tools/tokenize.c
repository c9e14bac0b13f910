/* tokenize: Penn Treebank tokenization of raw text (see tokenize.h).
 *
 * Two passes over a line: normalize (invalid UTF-8 -> U+FFFD, Unicode quotes, dashes,
 * ellipsis and spaces -> their ASCII forms), then cut each white-space-separated chunk into
 * tokens from left to right: punctuation that is always a token of its own, then words, whose
 * clitics and final quote are split off at the end. A last step splits the sentence-final
 * period. Tokens are kept as offsets into one pool until they are joined. */
#include "tokenize.h"

#include <stdlib.h>
#include <string.h>

#include "../util/utf8.h"

/* A growable NUL-terminated byte buffer; `failed` once an allocation failed. */
typedef struct text {
    char *p;
    size_t n, cap;
    int failed;
} text;

static void text_put(text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->n + n + 1)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = '\0';
}

/* Insert n bytes at offset `at` (<= t->n). */
static void text_insert(text *t, size_t at, const char *s, size_t n)
{
    size_t old = t->n;
    text_put(t, s, n); /* grows the buffer */
    if (t->failed)
        return;
    memmove(t->p + at + n, t->p + at, old - at);
    memcpy(t->p + at, s, n);
}

/* The tokens of a line: token k is pool.p[off[k] .. off[k] + len[k]). */
typedef struct tokens {
    text pool;
    size_t *off, *len;
    int n, cap, failed;
    int open_double; /* an opening double quote is waiting for its closing one */
    int last_open;   /* the last token of this chunk opens something (`` ` -LRB- ...) */
} tokens;

/* Start a token at the end of the pool (its bytes follow with text_put, then tokens_end). */
static void tokens_begin(tokens *tk)
{
    if (tk->n == tk->cap) {
        int cap = tk->cap ? 2 * tk->cap : 64;
        size_t *off = realloc(tk->off, (size_t)cap * sizeof *off);
        if (off)
            tk->off = off;
        size_t *len = off ? realloc(tk->len, (size_t)cap * sizeof *len) : NULL;
        if (!len) {
            tk->failed = 1;
            return;
        }
        tk->len = len;
        tk->cap = cap;
    }
    tk->off[tk->n] = tk->pool.n;
}

/* Close the token started by tokens_begin (dropped if it is empty). */
static void tokens_end(tokens *tk)
{
    if (tk->failed || tk->pool.failed || tk->pool.n == tk->off[tk->n])
        return;
    tk->len[tk->n] = tk->pool.n - tk->off[tk->n];
    tk->n++;
    tk->last_open = 0;
}

static void tokens_add(tokens *tk, const char *s, size_t n)
{
    tokens_begin(tk);
    if (tk->failed)
        return;
    text_put(&tk->pool, s, n);
    tokens_end(tk);
}

static void tokens_add_str(tokens *tk, const char *s) { tokens_add(tk, s, strlen(s)); }

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int lower(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* 1 if s (n bytes) starts with the literal `lit`. */
static int starts(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    return n >= m && !memcmp(s, lit, m);
}

/* 1 if s (n bytes) ends with `suffix`, ignoring ASCII case. */
static int ends_nocase(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    if (n < m)
        return 0;
    for (size_t k = 0; k < m; k++)
        if (lower(s[n - m + k]) != suffix[k])
            return 0;
    return 1;
}

/* The ASCII stand-in of a Unicode character cky maps (NULL for the others). `digits`: the
 * character stands between two digits (an en dash there is a hyphen: 1990-91). */
static const char *ascii_form(unsigned cp, int digits)
{
    switch (cp) {
    case 0xA0: case 0x202F: case 0x205F: case 0x3000: return " ";
    case 0x201C: case 0x201E: case 0x201F: case 0xAB: return "``";
    case 0x201D: case 0xBB: return "''";
    case 0x2018: case 0x201B: return "`";
    case 0x2019: return "'";
    case 0x2013: return digits ? "-" : "--";
    case 0x2014: case 0x2015: return "--";
    case 0x2026: return "...";
    default: return cp >= 0x2000 && cp <= 0x200A ? " " : NULL;
    }
}

/* Normalize a raw line into `out` (see the top of the file); ASCII white space -> ' '. */
static void normalize(const unsigned char *s, size_t len, text *out)
{
    size_t i = 0;
    while (i < len) {
        unsigned cp;
        int k = utf8_decode(s + i, len - i, &cp);
        if (k == 0) {
            text_put(out, "\xEF\xBF\xBD", 3); /* U+FFFD */
            i++;
            continue;
        }
        if (cp == '\t' || cp == '\n' || cp == '\v' || cp == '\f' || cp == '\r') {
            text_put(out, " ", 1);
        } else {
            int digits = out->n > 0 && is_digit(out->p[out->n - 1]) && i + (size_t)k < len &&
                         is_digit((char)s[i + (size_t)k]);
            const char *a = ascii_form(cp, digits);
            text_put(out, a ? a : (const char *)s + i, a ? strlen(a) : (size_t)k);
        }
        i += (size_t)k;
    }
}

/* Characters that always end a word (and start a token of their own). */
static int is_word_break(char c) { return c != '\0' && strchr("\"`()[]{};?!%#@", c) != NULL; }

/* The end of the word that starts at s[i] in the chunk s[.. b). */
static size_t word_end(const char *s, size_t i, size_t b)
{
    size_t j = i;
    while (j < b) {
        char c = s[j];
        if (c == '%' && j > i && j + 1 < b && s[j + 1] == '-') {
            j++; /* 62%-owned */
            continue;
        }
        if (is_word_break(c) || starts(s + j, b - j, "--") || starts(s + j, b - j, "...") ||
            starts(s + j, b - j, "''"))
            break;
        if ((c == ',' || c == ':') &&
            !(j > i && is_digit(s[j - 1]) && j + 1 < b && is_digit(s[j + 1])))
            break;
        j++;
    }
    return j > i ? j : i + 1;
}

/* Split words (whole word, any case): the treebank writes them as two tokens. */
static const struct { const char *word; size_t cut; } split_words[] = {
    {"cannot", 3}, {"gonna", 3}, {"gotta", 3}, {"wanna", 3}, {"gimme", 3}, {"lemme", 3},
};

/* Clitics split from the end of a word, with the shortest word they are split from. */
static const struct { const char *clitic; size_t min_word; } clitics[] = {
    {"n't", 4}, {"'ll", 4}, {"'re", 4}, {"'ve", 4}, {"'s", 3}, {"'m", 3}, {"'d", 3},
};

/* Add s[0 .. n) as one token, with / and * escaped as \/ and \* (unless they are already). */
static void add_escaped(tokens *tk, const char *s, size_t n)
{
    tokens_begin(tk);
    if (tk->failed)
        return;
    size_t from = 0;
    for (size_t k = 0; k < n; k++) {
        if ((s[k] == '/' || s[k] == '*') && !(k > 0 && s[k - 1] == '\\')) {
            text_put(&tk->pool, s + from, k - from);
            text_put(&tk->pool, "\\", 1);
            from = k;
        }
    }
    text_put(&tk->pool, s + from, n - from);
    tokens_end(tk);
}

/* Add a word stripped of its clitic and of a currency prefix before a number (C$100). */
static void add_core(tokens *tk, const char *w, size_t n)
{
    size_t d = 0;
    while (d < n && d < 3 && w[d] >= 'A' && w[d] <= 'Z')
        d++;
    if (d > 0 && d + 1 < n && w[d] == '$' && is_digit(w[d + 1])) {
        add_escaped(tk, w, d + 1);
        w += d + 1;
        n -= d + 1;
    }
    add_escaped(tk, w, n);
}

/* Add the word w (n bytes): split words, clitics and a final quote become tokens. */
static void add_word(tokens *tk, const char *w, size_t n)
{
    for (size_t k = 0; k < sizeof split_words / sizeof *split_words; k++) {
        if (n == strlen(split_words[k].word) && ends_nocase(w, n, split_words[k].word)) {
            add_escaped(tk, w, split_words[k].cut);
            add_escaped(tk, w + split_words[k].cut, n - split_words[k].cut);
            return;
        }
    }
    int quote = n > 1 && w[n - 1] == '\'' && w[n - 2] != '\'';
    if (quote)
        n--;
    size_t clitic = 0;
    for (size_t k = 0; k < sizeof clitics / sizeof *clitics && !clitic; k++)
        if (n >= clitics[k].min_word && ends_nocase(w, n, clitics[k].clitic))
            clitic = strlen(clitics[k].clitic);
    add_core(tk, w, n - clitic);
    if (clitic)
        add_escaped(tk, w + n - clitic, clitic);
    if (quote)
        tokens_add_str(tk, "'");
}

/* 1 if w (n bytes) is a clitic written as a token of its own ('s, 're, n't ...). */
static int is_clitic(const char *w, size_t n)
{
    for (size_t k = 0; k < sizeof clitics / sizeof *clitics; k++)
        if (n == strlen(clitics[k].clitic) && ends_nocase(w, n, clitics[k].clitic))
            return 1;
    return 0;
}

/* Add an opening token (after which a double quote opens too). */
static void add_open(tokens *tk, const char *s)
{
    tokens_add_str(tk, s);
    tk->last_open = 1;
}

/* A double quote at s[i] of the chunk s[a .. b): `` or ''. */
static void add_double_quote(tokens *tk, const char *s, size_t i, size_t a, size_t b)
{
    int at_start = i == a || tk->last_open || s[i - 1] == '-';
    int open;
    if (at_start && i + 1 < b && !strchr(",.;:?!)]}'", s[i + 1]))
        open = 1;                  /* "Word */
    else if (at_start)
        open = !tk->open_double;   /* a quote on its own: the other one of the pair */
    else
        open = 0;                  /* word" */
    if (open)
        add_open(tk, "``");
    else
        tokens_add_str(tk, "''");
    tk->open_double = open;
}

/* Cut the chunk s[a .. b) (no spaces) into tokens. */
static void add_chunk(tokens *tk, const char *s, size_t a, size_t b)
{
    static const char brackets[] = "([{)]}";
    static const char *const bracket_tokens[] = {"-LRB-", "-LSB-", "-LCB-",
                                                 "-RRB-", "-RSB-", "-RCB-"};
    tk->last_open = 0;
    size_t i = a;
    while (i < b && !tk->failed && !tk->pool.failed) {
        const char *c = s + i;
        size_t left = b - i;
        const char *br = strchr(brackets, *c);
        if (starts(c, left, "``")) {
            add_open(tk, "``");
            tk->open_double = 1;
            i += 2;
        } else if (starts(c, left, "''")) {
            tokens_add_str(tk, "''");
            tk->open_double = 0;
            i += 2;
        } else if (*c == '"') {
            add_double_quote(tk, s, i, a, b);
            i++;
        } else if (*c == '`') {
            add_open(tk, "`");
            i++;
        } else if (br && *c) {
            if (br - brackets < 3)
                add_open(tk, bracket_tokens[br - brackets]);
            else
                tokens_add_str(tk, bracket_tokens[br - brackets]);
            i++;
        } else if (starts(c, left, "--") || starts(c, left, "...")) {
            size_t j = i;
            while (j < b && s[j] == *c && (*c == '-' || j - i < 3))
                j++;
            tokens_add(tk, c, j - i);
            i = j;
        } else if (strchr(";?!%#@$,:", *c)) {
            tokens_add(tk, c, 1);
            i++;
        } else if (*c == '\'' && left > 1 && s[i + 1] != '\'' && !is_digit(s[i + 1])) {
            /* a quote starting a word: a clitic on its own ('s), else an opening ` */
            size_t j = word_end(s, i + 1, b);
            if (is_clitic(c, j - i)) {
                add_word(tk, c, j - i);
                i = j;
            } else if (is_alpha(s[i + 1])) {
                add_open(tk, "`");
                i++;
            } else {
                tokens_add_str(tk, "'");
                i++;
            }
        } else {
            size_t j = word_end(s, i, b);
            add_word(tk, c, j - i);
            i = j;
        }
    }
}

/* Make the sentence-final period a chunk of its own, before closing quotes and brackets:
 * "... don't." -> "... don't ." (so that the word is cut as any other); "Inc.." -> "Inc. .";
 * "U.S." keeps its period and gets another ("U.S. ."), the treebank's one exception to
 * giving an abbreviation's final period to the sentence. */
static void split_final_period(text *t)
{
    size_t p = t->n;
    while (p > 0 && strchr(" \"')]}", t->p[p - 1]))
        p--;
    if (p < 2 || t->p[p - 1] != '.' || t->p[p - 2] == ' ' ||
        (p >= 3 && t->p[p - 2] == '.' && t->p[p - 3] == '.'))
        return;
    size_t w = p - 1; /* start of the last word */
    while (w > 0 && t->p[w - 1] != ' ')
        w--;
    while (w < p && strchr("\"`'([{", t->p[w]))
        w++; /* opening quotes and brackets */
    if (p - w == 4 && !memcmp(t->p + w, "U.S.", 4))
        text_insert(t, p, " .", 2);
    else
        text_insert(t, p - 1, " ", 1);
}

cky_status tokenize_line(const char *line, size_t len, char **out, int *ntokens)
{
    text norm = {0}, joined = {0};
    tokens tk = {0};
    *out = NULL;
    *ntokens = 0;
    normalize((const unsigned char *)line, len, &norm);
    text_put(&norm, "", 0);
    split_final_period(&norm);
    text_put(&joined, "", 0);
    for (size_t i = 0; i < norm.n && !norm.failed;) {
        while (i < norm.n && norm.p[i] == ' ')
            i++;
        size_t j = i;
        while (j < norm.n && norm.p[j] != ' ')
            j++;
        if (j > i)
            add_chunk(&tk, norm.p, i, j);
        i = j;
    }
    for (int k = 0; k < tk.n; k++) {
        if (k)
            text_put(&joined, " ", 1);
        text_put(&joined, tk.pool.p + tk.off[k], tk.len[k]);
    }
    int failed = norm.failed || tk.failed || tk.pool.failed || joined.failed;
    free(norm.p);
    free(tk.pool.p);
    free(tk.off);
    free(tk.len);
    if (failed) {
        free(joined.p);
        return cky_fail(CKY_ERR_NOMEM, "out of memory tokenizing a %zu-byte line", len);
    }
    *out = joined.p;
    *ntokens = tk.n;
    return CKY_OK;
}
