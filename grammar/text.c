/* text: loader of the Berkeley text export PREFIX.grammar, PREFIX.lexicon, PREFIX.words (each
 * optionally .gz; spec §2).
 *
 * .grammar lines are "P_p -> L_l R_r prob" (binary) and "P_p -> C_c prob" (closed Viterbi
 * unary, with an identity line "X_i -> X_i 1.0" for every substate of every symbol). Fields are
 * split at their last '_'. The loader derives what the export leaves out (§2.6):
 *   - symbol ids: ROOT = 0, then the symbols of the .grammar file in order of first appearance,
 *     then the tags that only the .lexicon file names, in order of first appearance there;
 *   - nsub[X] = number of identity lines of X (they must be X_0 .. X_{n-1}, each once);
 *   - phrasal (isGrammarTag) = parent of a binary line or of a non-identity unary line.
 * Rules keep the file's order: a parent's binary rules in the order their (P, L, R) first
 * appears, likewise unaries by (P, C). A line repeated with another value (berkeley-eng-sm1
 * repeats "PRN_0 -> WHADJP_0" at its end) keeps the larger value. The builder applies the
 * parse-time pruning and takes logs, and derives from the closed Viterbi unaries the sum
 * closure that the export lacks (text_sum.c), for the max-rule decoder. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"
#include "internal.h"
#include "lexicon_text.h"

#define TEXT_MAX_SUB 4096 /* the builder's limit on substates per symbol */

/* One line of the .grammar file. */
typedef struct text_line_rule {
    int sym[3]; /* parent, left/child, right (-1 for a unary) */
    int sub[3];
    double prob;
    long line;
} text_line_rule;

/* A rule (P, L, R) or (P, C) with its table of linear probabilities. */
typedef struct text_rule {
    int parent, left, right; /* right = -1 for a unary */
    double *prob;
} text_rule;

/* Everything read from the .grammar file. */
typedef struct text_grammar {
    const char *path;
    name_table *names;
    text_line_rule *lines;
    long nlines, cap_lines;
    /* per symbol: */
    int *nident, *maxident; /* identity lines, largest identity substate + 1 */
    long *first_line;
    int *nsub;
    unsigned char *phrasal;
    int cap_sym;
    /* the rules in order of first appearance */
    text_rule *rules;
    int nrules, cap_rules;
    int64_t *key; /* open-addressing hash of rules: key, -1 empty */
    int *key_rule;
    size_t nkey;
} text_grammar;

static void text_grammar_free(text_grammar *t)
{
    name_table_free(t->names);
    free(t->lines);
    free(t->nident);
    free(t->maxident);
    free(t->first_line);
    free(t->nsub);
    free(t->phrasal);
    for (int i = 0; i < t->nrules; i++)
        free(t->rules[i].prob);
    free(t->rules);
    free(t->key);
    free(t->key_rule);
}

/* Grow the per-symbol arrays to hold symbol id `s`. */
static cky_status text_grow_symbols(text_grammar *t, int s)
{
    if (s < t->cap_sym)
        return CKY_OK;
    int cap = t->cap_sym ? 2 * t->cap_sym : 128;
    int *a = realloc(t->nident, (size_t)cap * sizeof *a);
    if (a)
        t->nident = a;
    int *b = realloc(t->maxident, (size_t)cap * sizeof *b);
    if (b)
        t->maxident = b;
    long *c = realloc(t->first_line, (size_t)cap * sizeof *c);
    if (c)
        t->first_line = c;
    if (!a || !b || !c)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int i = t->cap_sym; i < cap; i++)
        t->nident[i] = t->maxident[i] = 0;
    t->cap_sym = cap;
    return CKY_OK;
}

/* Parse "NAME_sub" (split at the last '_') into a symbol id and substate. */
static cky_status text_parse_state(text_grammar *t, const char *f, long line, int *sym,
                                   int *sub)
{
    const char *us = strrchr(f, '_');
    if (!us || us == f || us[1] == '\0')
        return cky_fail(CKY_ERR_FORMAT, "%s:%ld: \"%s\" is not NAME_SUBSTATE", t->path, line, f);
    long v = 0;
    for (const char *p = us + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: bad substate in \"%s\"", t->path, line, f);
        v = v * 10 + (*p - '0');
        if (v >= TEXT_MAX_SUB)
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: substate in \"%s\" is %d or more", t->path,
                            line, f, TEXT_MAX_SUB);
    }
    int added;
    cky_status st = name_table_intern(t->names, f, (size_t)(us - f), sym, &added);
    if (st || (st = text_grow_symbols(t, *sym)))
        return st;
    if (added)
        t->first_line[*sym] = line;
    *sub = (int)v;
    return CKY_OK;
}

/* Split a line at spaces into at most `max` fields; returns the count (max + 1 if more). */
static int text_split(char *s, char **field, int max)
{
    int n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            *s++ = '\0';
        if (!*s)
            return n;
        if (n == max)
            return max + 1;
        field[n++] = s;
        while (*s && *s != ' ' && *s != '\t')
            s++;
    }
}

/* Parse one .grammar line into t->lines. */
static cky_status text_parse_rule_line(text_grammar *t, char *s, long line)
{
    char *f[5];
    int n = text_split(s, f, 5);
    if ((n != 4 && n != 5) || strcmp(f[1], "->") != 0)
        return cky_fail(CKY_ERR_FORMAT,
                        "%s:%ld: expected \"P_p -> L_l R_r prob\" or \"P_p -> C_c prob\"",
                        t->path, line);
    text_line_rule r = {{-1, -1, -1}, {0, 0, 0}, 0, line};
    cky_status st;
    if ((st = text_parse_state(t, f[0], line, &r.sym[0], &r.sub[0])) ||
        (st = text_parse_state(t, f[2], line, &r.sym[1], &r.sub[1])) ||
        (n == 5 && (st = text_parse_state(t, f[3], line, &r.sym[2], &r.sub[2]))))
        return st;
    char *endp;
    r.prob = strtod(f[n - 1], &endp);
    if (endp == f[n - 1] || *endp || !isfinite(r.prob) || r.prob <= 0)
        return cky_fail(CKY_ERR_FORMAT, "%s:%ld: bad probability \"%s\"", t->path, line,
                        f[n - 1]);
    if (r.prob > 1 + 1e-6) /* (rounding may put a probability of 1 a little above it) */
        return cky_fail(CKY_ERR_FORMAT, "%s:%ld: probability %s is above 1", t->path, line,
                        f[n - 1]);
    if (n == 4 && r.sym[0] == r.sym[1]) {
        if (r.sub[0] != r.sub[1])
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: unary from %s to itself changes substate",
                            t->path, line, name_table_str(t->names, r.sym[0]));
        t->nident[r.sym[0]]++;
        if (r.sub[0] + 1 > t->maxident[r.sym[0]])
            t->maxident[r.sym[0]] = r.sub[0] + 1;
    }
    if (t->nlines == t->cap_lines) {
        long cap = t->cap_lines ? 2 * t->cap_lines : 1 << 14;
        text_line_rule *p = realloc(t->lines, (size_t)cap * sizeof *p);
        if (!p)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        t->lines = p;
        t->cap_lines = cap;
    }
    t->lines[t->nlines++] = r;
    return CKY_OK;
}

/* Read the .grammar file into t->lines; ROOT is interned first so that it gets id 0. */
static cky_status text_read_lines(text_grammar *t)
{
    int root;
    cky_status st = name_table_intern(t->names, "ROOT", 4, &root, NULL);
    if (st || (st = text_grow_symbols(t, root)))
        return st;
    t->first_line[root] = 0;
    char *buf;
    size_t n;
    if ((st = io_read_file(t->path, &buf, &n)))
        return st;
    text_lines it = text_lines_start(buf, n);
    char *line;
    size_t len;
    while (!st && (line = text_lines_next(&it, &len)))
        if (len > 0)
            st = text_parse_rule_line(t, line, it.number);
    free(buf);
    return st;
}

/* nsub from the identity lines; every substate index must be below it. */
static cky_status text_check_substates(text_grammar *t)
{
    int nsym = name_table_count(t->names);
    if (!(t->nsub = malloc((size_t)nsym * sizeof *t->nsub)) ||
        !(t->phrasal = calloc((size_t)nsym, 1)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int s = 0; s < nsym; s++) {
        const char *name = name_table_str(t->names, s);
        if (t->nident[s] == 0) {
            if (s == 0 && t->first_line[0] == 0)
                return cky_fail(CKY_ERR_FORMAT, "%s: no ROOT symbol", t->path);
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: symbol %s has no identity line %s_0 -> %s_0",
                            t->path, t->first_line[s], name, name, name);
        }
        if (t->nident[s] != t->maxident[s])
            return cky_fail(CKY_ERR_FORMAT,
                            "%s: symbol %s has %d identity lines for substates 0..%d (first "
                            "seen on line %ld)",
                            t->path, name, t->nident[s], t->maxident[s] - 1, t->first_line[s]);
        t->nsub[s] = t->nident[s];
    }
    for (long i = 0; i < t->nlines; i++) {
        const text_line_rule *r = &t->lines[i];
        for (int k = 0; k < 3; k++)
            if (r->sym[k] >= 0 && r->sub[k] >= t->nsub[r->sym[k]])
                return cky_fail(CKY_ERR_FORMAT, "%s:%ld: substate %d of %s, which has %d",
                                t->path, r->line, r->sub[k], name_table_str(t->names, r->sym[k]),
                                t->nsub[r->sym[k]]);
    }
    return CKY_OK;
}

static int64_t text_rule_key(const text_line_rule *r)
{
    return ((int64_t)r->sym[0] << 42) | ((int64_t)r->sym[1] << 21) | (int64_t)(r->sym[2] + 1);
}

/* The first slot to probe for key k in a table of n (a power of two) slots. */
static size_t text_key_home(int64_t k, size_t n)
{
    return (size_t)(((uint64_t)k * 0x9E3779B97F4A7C15ULL) >> 20) & (n - 1);
}

/* The rule of line r, created (zero probabilities) on first sight. */
static cky_status text_rule_of(text_grammar *t, const text_line_rule *r, text_rule **out)
{
    if ((size_t)(t->nrules + 1) * 2 > t->nkey) { /* grow and rehash */
        size_t n = t->nkey ? 2 * t->nkey : 4096;
        int64_t *key = malloc(n * sizeof *key);
        int *key_rule = malloc(n * sizeof *key_rule);
        if (!key || !key_rule) {
            free(key);
            free(key_rule);
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++)
            key[i] = -1;
        for (size_t i = 0; i < t->nkey; i++) {
            if (t->key[i] < 0)
                continue;
            size_t j = text_key_home(t->key[i], n);
            while (key[j] >= 0)
                j = (j + 1) & (n - 1);
            key[j] = t->key[i];
            key_rule[j] = t->key_rule[i];
        }
        free(t->key);
        free(t->key_rule);
        t->key = key;
        t->key_rule = key_rule;
        t->nkey = n;
    }
    int64_t k = text_rule_key(r);
    size_t j = text_key_home(k, t->nkey);
    while (t->key[j] >= 0 && t->key[j] != k)
        j = (j + 1) & (t->nkey - 1);
    if (t->key[j] == k) {
        *out = &t->rules[t->key_rule[j]];
        return CKY_OK;
    }
    if (!grammar_grow((void **)&t->rules, &t->cap_rules, t->nrules, sizeof *t->rules))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    size_t size = (size_t)t->nsub[r->sym[0]] * t->nsub[r->sym[1]] *
                  (r->sym[2] >= 0 ? t->nsub[r->sym[2]] : 1);
    double *prob = calloc(size, sizeof *prob);
    if (!prob)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    t->rules[t->nrules] = (text_rule){r->sym[0], r->sym[1], r->sym[2], prob};
    t->key[j] = k;
    t->key_rule[j] = t->nrules;
    *out = &t->rules[t->nrules++];
    return CKY_OK;
}

/* Gather the lines into rules (Java index order) and mark the phrasal symbols. */
static cky_status text_build_rules(text_grammar *t)
{
    for (long i = 0; i < t->nlines; i++) {
        const text_line_rule *r = &t->lines[i];
        text_rule *rule = NULL;
        cky_status st = text_rule_of(t, r, &rule);
        if (st)
            return st;
        int np = t->nsub[r->sym[0]];
        size_t idx = r->sym[2] >= 0 /* binary: [(l * nsub[R] + r) * nsub[P] + p] */
                         ? ((size_t)r->sub[1] * t->nsub[r->sym[2]] + r->sub[2]) * np + r->sub[0]
                         : (size_t)r->sub[1] * np + r->sub[0];
        if (r->prob > rule->prob[idx]) /* a repeated line: the best value, as a parser */
            rule->prob[idx] = r->prob;  /* holding both rules would use */
        if (r->sym[2] >= 0 || r->sym[0] != r->sym[1])
            t->phrasal[r->sym[0]] = 1;
    }
    return CKY_OK;
}

/* Symbol of every lexicon tag: a POS tag of the grammar with the same number of substates,
 * or a new symbol (added to t->names and t->nsub). */
static cky_status text_bind_lexicon(text_grammar *t, lexicon_text *lex, const char *lex_path)
{
    int ntag = lexicon_text_count_tags(lex);
    int *symbol = malloc((size_t)(ntag ? ntag : 1) * sizeof *symbol);
    int nsym = name_table_count(t->names);
    int *nsub = realloc(t->nsub, ((size_t)nsym + ntag) * sizeof *nsub);
    if (nsub)
        t->nsub = nsub;
    if (!symbol || !nsub) {
        free(symbol);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int tag = 0; tag < ntag; tag++) {
        const char *name = lexicon_text_tag_name(lex, tag);
        int n = lexicon_text_tag_nsub(lex, tag), added, s;
        cky_status st = name_table_intern(t->names, name, strlen(name), &s, &added);
        if (!st && added) {
            t->nsub[s] = n;
        } else if (!st && s < nsym && (s == 0 || t->phrasal[s])) {
            st = cky_fail(CKY_ERR_FORMAT, "%s:%ld: tag %s is a phrasal symbol of the grammar",
                          lex_path, lexicon_text_tag_line(lex, tag), name);
        } else if (!st && t->nsub[s] != n) {
            st = cky_fail(CKY_ERR_FORMAT, "%s:%ld: tag %s has %d values but %d substates in %s",
                          lex_path, lexicon_text_tag_line(lex, tag), name, n, t->nsub[s],
                          t->path);
        }
        if (st) {
            free(symbol);
            return st;
        }
        symbol[tag] = s;
    }
    cky_status st = lexicon_text_bind_symbols(lex, symbol);
    free(symbol);
    return st;
}

/* Hand symbols and rules to a builder: rules grouped by parent (ascending), in order of first
 * appearance within a parent, binaries first. The binary tables move to the builder. */
static cky_status text_fill_builder(text_grammar *t, int ngrammar_sym, grammar_builder *b)
{
    int nsym = name_table_count(t->names);
    cky_status st;
    for (int s = 0; s < nsym; s++)
        if ((st = builder_add_symbol(b, name_table_str(t->names, s), t->nsub[s],
                                     s < ngrammar_sym && t->phrasal[s])))
            return cky_fail(st, "%s: %s", t->path, cky_last_error());
    int *order = malloc((size_t)(t->nrules ? t->nrules : 1) * sizeof *order);
    int *first = calloc((size_t)nsym + 1, sizeof *first);
    if (!order || !first) {
        free(order);
        free(first);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < t->nrules; i++)
        first[t->rules[i].parent + 1]++;
    for (int s = 0; s < nsym; s++)
        first[s + 1] += first[s];
    for (int i = 0; i < t->nrules; i++)
        order[first[t->rules[i].parent]++] = i;
    free(first);
    st = CKY_OK;
    for (int pass = 0; pass < 2 && !st; pass++) {
        for (int i = 0; i < t->nrules && !st; i++) {
            const text_rule *r = &t->rules[order[i]];
            if (pass == 0 && r->right >= 0) {
                st = builder_adopt_binary(b, r->parent, r->left, r->right, r->prob);
                t->rules[order[i]].prob = NULL; /* the builder owns it now */
            }
            else if (pass == 1 && r->right < 0)
                st = builder_add_unary(b, r->parent, r->left, r->prob);
        }
    }
    free(order);
    return st;
}

/* PREFIX + ext, or PREFIX + ext + ".gz" if only that exists; CKY_ERR_IO if neither. */
static cky_status text_find_file(const char *prefix, const char *ext, char **path)
{
    size_t n = strlen(prefix) + strlen(ext) + 4;
    char *p = malloc(n);
    if (!p)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    snprintf(p, n, "%s%s", prefix, ext);
    if (!io_file_exists(p)) {
        snprintf(p, n, "%s%s.gz", prefix, ext);
        if (!io_file_exists(p)) {
            cky_status st = cky_fail(CKY_ERR_IO, "%s%s: no such file (nor %s)", prefix, ext, p);
            free(p);
            return st;
        }
    }
    *path = p;
    return CKY_OK;
}

cky_status grammar_load_text(const char *prefix, grammar **out)
{
    char *gpath = NULL, *lpath = NULL, *wpath = NULL;
    text_grammar t = {0};
    lexicon_text *lex = NULL;
    cky_status st;
    if ((st = text_find_file(prefix, ".grammar", &gpath)) ||
        (st = text_find_file(prefix, ".lexicon", &lpath)) ||
        (st = text_find_file(prefix, ".words", &wpath)))
        goto done;
    t.path = gpath;
    if (!(t.names = name_table_new())) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = text_read_lines(&t)) || (st = text_check_substates(&t)) ||
        (st = text_build_rules(&t)) || (st = lexicon_text_read(lpath, wpath, &lex)))
        goto done;
    int ngrammar_sym = name_table_count(t.names);
    if ((st = text_bind_lexicon(&t, lex, lpath)))
        goto done;
    grammar_builder *b = builder_new();
    if (!b) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = text_fill_builder(&t, ngrammar_sym, b))) {
        builder_free(b);
        goto done;
    }
    builder_sum_from_unary(b);
    st = builder_finish(b, lexicon_text_base(lex), prefix, out); /* consumes b and lex */
    lex = NULL;
done:
    if (lex)
        lexicon_text_base(lex)->free(lexicon_text_base(lex));
    text_grammar_free(&t);
    free(gpath);
    free(lpath);
    free(wpath);
    return st;
}
