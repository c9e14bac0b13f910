/* lexicon_text: the text-export lexicon (PREFIX.lexicon, PREFIX.words) and the small string
 * line cursor shared with the text grammar loader (see lexicon_text.h).
 *
 * Storage: words (and signatures) are interned in a name_table; the entries of the .lexicon
 * file are grouped by word, so word w owns entries first[w] .. first[w+1]-1, each a (tag,
 * offset) pair into one array of log scores. Scoring is a hash look-up plus copying. */
#include "lexicon_text.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"
#include "image.h"
#include "internal.h"
#include "signature.h"

/* ---- text_lines -------------------------------------------------------------------- */

text_lines text_lines_start(char *buf, size_t len) { return (text_lines){buf, buf + len, 0}; }

char *text_lines_next(text_lines *it, size_t *len)
{
    if (it->p >= it->end)
        return NULL;
    char *line = it->p;
    char *nl = memchr(line, '\n', (size_t)(it->end - line));
    char *stop = nl ? nl : it->end;
    it->p = nl ? nl + 1 : it->end;
    if (stop > line && stop[-1] == '\r')
        stop--;
    *stop = '\0';
    *len = (size_t)(stop - line);
    it->number++;
    return line;
}

/* ---- the lexicon ------------------------------------------------------------------- */

/* Weight of the signature's lines for a known word's unseen tags: between Berkeley's 0.1 and
 * 0.0001, chosen by measured agreement with the Berkeley parser on the dev sample (the
 * figures: docs/performance.md, "Measurements kept out of the code"). */
#define LEXICON_TEXT_BACKOFF 0.01

typedef struct lex_entry {
    int word, tag;
    size_t off; /* into logv */
} lex_entry;

struct lexicon_text {
    grammar_lexicon base; /* first member: a grammar_lexicon * is a lexicon_text * */
    name_table *words;    /* words and signatures of the .lexicon and .words files */
    unsigned char *known; /* [words]: listed in .words */
    int *first;           /* [words + 1]: entries of word w are first[w] .. first[w+1]-1 */
    lex_entry *entry;     /* grouped by word, file order within a word */
    int nentry, cap_entry;
    double *logv; /* log scores */
    size_t nlogv, cap_logv;
    name_table *tags;
    int *tag_nsub; /* [tags] */
    long *tag_line;
    int *tag_symbol; /* [tags] grammar symbol, set by lexicon_text_bind_symbols */
    int cap_tags;
};

static void lexicon_text_save(const grammar_lexicon *base, img_out *w);

static void lexicon_text_free(grammar_lexicon *base)
{
    lexicon_text *lex = (lexicon_text *)base;
    if (!lex)
        return;
    name_table_free(lex->words);
    name_table_free(lex->tags);
    free(lex->known);
    free(lex->first);
    free(lex->entry);
    free(lex->logv);
    free(lex->tag_nsub);
    free(lex->tag_line);
    free(lex->tag_symbol);
    free(lex);
}

static int lexicon_known(const char *word, void *ctx)
{
    const lexicon_text *lex = ctx;
    int w = name_table_find(lex->words, word, strlen(word));
    return w >= 0 && lex->known[w];
}

/* Copy the log scores of the lines of word (or signature) w into out, plus `shift`. */
static void copy_lines(const lexicon_text *lex, const grammar *g, int w, double shift,
                       double *out)
{
    for (int k = lex->first[w]; k < lex->first[w + 1]; k++) {
        const lex_entry *e = &lex->entry[k];
        double *dst = out + g->sub_offset[lex->tag_symbol[e->tag]];
        for (int s = 0; s < lex->tag_nsub[e->tag]; s++)
            dst[s] = lex->logv[e->off + s] + shift;
    }
}

/* An unknown word gets the lines of its signature. A known word gets its own lines; for the
 * tags it has no line for, where the Berkeley lexicon smooths in the unseen-word model (with
 * weight 0.1 for words seen at most 100 times, 0.0001 for more frequent ones; spec §3.2) but
 * the export has no counts to do so (§2.6), it gets its signature's lines times
 * LEXICON_TEXT_BACKOFF: an approximation, absent from the native lexicon. */
static cky_status lexicon_text_score(const grammar_lexicon *base, const grammar *g,
                                     const char *word, int loc, const unsigned char *tags,
                                     double *out)
{
    (void)tags; /* every tag: the lines of a word are copied whole */
    const lexicon_text *lex = (const lexicon_text *)base;
    int w = name_table_find(lex->words, word, strlen(word));
    int known = w >= 0 && lex->known[w];
    char sig[128];
    signature_of(word, loc, 5, lexicon_known, (void *)lex, sig, sizeof sig);
    int sw = name_table_find(lex->words, sig, strlen(sig));
    if (sw >= 0) /* else: a signature never seen in training */
        copy_lines(lex, g, sw, known ? log(LEXICON_TEXT_BACKOFF) : 0.0, out);
    if (known)
        copy_lines(lex, g, w, 0.0, out);
    return CKY_OK;
}

/* The tag of a .lexicon line, added on first sight with `nsub` values. */
static cky_status lexicon_tag(lexicon_text *lex, const char *name, size_t len, int nsub,
                              const char *path, long line, int *tag)
{
    int added;
    cky_status st = name_table_intern(lex->tags, name, len, tag, &added);
    if (st)
        return st;
    if (added) {
        if (*tag >= lex->cap_tags) {
            int cap = lex->cap_tags ? 2 * lex->cap_tags : 64;
            int *n = realloc(lex->tag_nsub, (size_t)cap * sizeof *n);
            if (n)
                lex->tag_nsub = n;
            long *l = realloc(lex->tag_line, (size_t)cap * sizeof *l);
            if (l)
                lex->tag_line = l;
            if (!n || !l)
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
            lex->cap_tags = cap;
        }
        lex->tag_nsub[*tag] = nsub;
        lex->tag_line[*tag] = line;
    } else if (lex->tag_nsub[*tag] != nsub) {
        return cky_fail(CKY_ERR_FORMAT, "%s:%ld: tag %.*s has %d values here but %d on line %ld",
                        path, line, (int)len, name, nsub, lex->tag_nsub[*tag],
                        lex->tag_line[*tag]);
    }
    return CKY_OK;
}

/* Parse "[v0, v1, ...]" (s points at '['), appending log values; *n = count. */
static cky_status lexicon_parse_values(lexicon_text *lex, const char *s, const char *path,
                                       long line, int *n)
{
    *n = 0;
    s++; /* '[' */
    for (;;) {
        char *endp;
        double v = strtod(s, &endp);
        if (endp == s || !isfinite(v) || v < 0)
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: bad score \"%.20s\"", path, line, s);
        if (lex->nlogv == lex->cap_logv) {
            size_t cap = lex->cap_logv ? 2 * lex->cap_logv : 1 << 16;
            double *p = realloc(lex->logv, cap * sizeof *p);
            if (!p)
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
            lex->logv = p;
            lex->cap_logv = cap;
        }
        lex->logv[lex->nlogv++] = grammar_log(v);
        ++*n;
        s = endp;
        if (s[0] == ']' && s[1] == '\0')
            return CKY_OK;
        if (s[0] != ',' || s[1] != ' ')
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: expected \", \" or \"]\" after a score",
                            path, line);
        s += 2;
    }
}

/* One line "TAG word [v0, ...]". */
static cky_status lexicon_parse_line(lexicon_text *lex, char *s, size_t len, const char *path,
                                     long line)
{
    char *sp = memchr(s, ' ', len);
    char *open = NULL;
    for (char *p = s + len; p > s; p--) /* the last " [" starts the values */
        if (p[-1] == '[' && p - 1 > s && p[-2] == ' ') {
            open = p - 1;
            break;
        }
    if (!sp || sp == s || !open || open - 1 <= sp + 1)
        return cky_fail(CKY_ERR_FORMAT, "%s:%ld: expected \"TAG word [score, ...]\"", path,
                        line);
    const char *word = sp + 1;
    size_t wlen = (size_t)(open - 1 - word);
    size_t off = lex->nlogv;
    int nsub, tag, w;
    cky_status st;
    if ((st = lexicon_parse_values(lex, open, path, line, &nsub)) ||
        (st = lexicon_tag(lex, s, (size_t)(sp - s), nsub, path, line, &tag)) ||
        (st = name_table_intern(lex->words, word, wlen, &w, NULL)))
        return st;
    if (!grammar_grow((void **)&lex->entry, &lex->cap_entry, lex->nentry, sizeof *lex->entry))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    lex->entry[lex->nentry++] = (lex_entry){w, tag, off};
    return CKY_OK;
}

/* Group the entries by word (stable) and reject a (tag, word) pair given twice. */
static cky_status lexicon_group(lexicon_text *lex, const char *path)
{
    int nw = name_table_count(lex->words);
    lex->first = calloc((size_t)nw + 1, sizeof *lex->first);
    int *fill = malloc(((size_t)nw + 1) * sizeof *fill);
    lex_entry *sorted = malloc(((size_t)lex->nentry + 1) * sizeof *sorted);
    if (!lex->first || !fill || !sorted) {
        free(fill);
        free(sorted);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < lex->nentry; k++)
        lex->first[lex->entry[k].word + 1]++;
    for (int w = 0; w < nw; w++)
        lex->first[w + 1] += lex->first[w];
    memcpy(fill, lex->first, ((size_t)nw + 1) * sizeof *fill);
    for (int k = 0; k < lex->nentry; k++)
        sorted[fill[lex->entry[k].word]++] = lex->entry[k];
    free(fill);
    free(lex->entry);
    lex->entry = sorted;
    for (int w = 0; w < nw; w++)
        for (int a = lex->first[w]; a < lex->first[w + 1]; a++)
            for (int b = a + 1; b < lex->first[w + 1]; b++)
                if (lex->entry[a].tag == lex->entry[b].tag)
                    return cky_fail(CKY_ERR_FORMAT, "%s: tag %s has two lines for \"%s\"", path,
                                    name_table_str(lex->tags, lex->entry[a].tag),
                                    name_table_str(lex->words, w));
    return CKY_OK;
}

/* Read the .words file: every non-empty line is a known word. */
static cky_status lexicon_read_words(lexicon_text *lex, const char *path)
{
    char *buf;
    size_t n;
    cky_status st = io_read_file(path, &buf, &n);
    if (st)
        return st;
    size_t cap = (size_t)name_table_count(lex->words) + 1024;
    if (!(lex->known = calloc(cap, 1))) {
        free(buf);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    text_lines it = text_lines_start(buf, n);
    char *line;
    size_t len;
    int w;
    while ((line = text_lines_next(&it, &len))) {
        if (len == 0)
            continue;
        if ((st = name_table_intern(lex->words, line, len, &w, NULL)))
            break;
        if ((size_t)w >= cap) {
            unsigned char *k = realloc(lex->known, 2 * cap);
            if (!k) {
                st = cky_fail(CKY_ERR_NOMEM, "out of memory");
                break;
            }
            memset(k + cap, 0, cap);
            lex->known = k;
            cap *= 2;
        }
        lex->known[w] = 1;
    }
    free(buf);
    return st;
}

/* Read every line of the .lexicon file. */
static cky_status lexicon_read_lines(lexicon_text *lex, const char *path)
{
    char *buf;
    size_t n;
    cky_status st = io_read_file(path, &buf, &n);
    if (st)
        return st;
    text_lines it = text_lines_start(buf, n);
    char *line;
    size_t len;
    while (!st && (line = text_lines_next(&it, &len)))
        if (len > 0)
            st = lexicon_parse_line(lex, line, len, path, it.number);
    free(buf);
    return st;
}

cky_status lexicon_text_read(const char *lexicon_path, const char *words_path,
                             lexicon_text **out)
{
    lexicon_text *lex = calloc(1, sizeof *lex);
    if (!lex || !(lex->words = name_table_new()) || !(lex->tags = name_table_new())) {
        lexicon_text_free((grammar_lexicon *)lex);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    lex->base = (grammar_lexicon){IMG_LEXICON_TEXT, lexicon_text_save, lexicon_text_score,
                                  lexicon_text_free};
    cky_status st;
    if ((st = lexicon_read_lines(lex, lexicon_path)) ||
        (st = lexicon_read_words(lex, words_path)) || (st = lexicon_group(lex, lexicon_path))) {
        lexicon_text_free(&lex->base);
        return st;
    }
    *out = lex;
    return CKY_OK;
}

int lexicon_text_count_tags(const lexicon_text *lex) { return name_table_count(lex->tags); }

const char *lexicon_text_tag_name(const lexicon_text *lex, int tag)
{
    return name_table_str(lex->tags, tag);
}

int lexicon_text_tag_nsub(const lexicon_text *lex, int tag) { return lex->tag_nsub[tag]; }

long lexicon_text_tag_line(const lexicon_text *lex, int tag) { return lex->tag_line[tag]; }

cky_status lexicon_text_bind_symbols(lexicon_text *lex, const int *symbol)
{
    int n = lexicon_text_count_tags(lex);
    free(lex->tag_symbol);
    if (!(lex->tag_symbol = malloc((size_t)(n ? n : 1) * sizeof *symbol)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    memcpy(lex->tag_symbol, symbol, (size_t)n * sizeof *symbol);
    return CKY_OK;
}

grammar_lexicon *lexicon_text_base(lexicon_text *lex) { return &lex->base; }

/* ---- images (grammar/image.h) ---- */

static void lexicon_text_save(const grammar_lexicon *base, img_out *w)
{
    const lexicon_text *lex = (const lexicon_text *)base;
    int nw = name_table_count(lex->words), nt = name_table_count(lex->tags);
    name_table_save(lex->words, w);
    name_table_save(lex->tags, w);
    int64_t head[2] = {lex->nentry, (int64_t)lex->nlogv};
    img_put(w, head, sizeof head);
    img_put(w, lex->known, (size_t)nw);
    img_put(w, lex->first, ((size_t)nw + 1) * sizeof *lex->first);
    img_put(w, lex->entry, (size_t)lex->nentry * sizeof *lex->entry);
    img_put(w, lex->logv, lex->nlogv * sizeof *lex->logv);
    img_put(w, lex->tag_nsub, (size_t)nt * sizeof *lex->tag_nsub);
    img_put(w, lex->tag_line, (size_t)nt * sizeof *lex->tag_line);
    img_put(w, lex->tag_symbol, (size_t)nt * sizeof *lex->tag_symbol);
}

/* Every index of a restored lexicon inside its arrays and the grammar's substates. */
static int lexicon_text_valid(const lexicon_text *lex, const grammar *g)
{
    int nw = name_table_count(lex->words), nt = name_table_count(lex->tags);
    for (int t = 0; t < nt; t++) {
        int s = lex->tag_symbol[t];
        if (s < 0 || s >= g->nsym || g->nsub[s] != lex->tag_nsub[t])
            return 0;
    }
    if (lex->first[0] != 0 || lex->first[nw] != lex->nentry)
        return 0;
    for (int w = 0; w < nw; w++)
        if (lex->first[w] > lex->first[w + 1])
            return 0;
    for (int k = 0; k < lex->nentry; k++) {
        const lex_entry *e = &lex->entry[k];
        if (e->word < 0 || e->word >= nw || e->tag < 0 || e->tag >= nt ||
            e->off > lex->nlogv || (size_t)lex->tag_nsub[e->tag] > lex->nlogv - e->off)
            return 0;
    }
    return 1;
}

cky_status lexicon_text_restore(img_in *in, const grammar *g, grammar_lexicon **out)
{
    lexicon_text *lex = calloc(1, sizeof *lex);
    int nomem = !lex;
    if (lex) {
        lex->base = (grammar_lexicon){IMG_LEXICON_TEXT, lexicon_text_save, lexicon_text_score,
                                      lexicon_text_free};
        lex->words = name_table_restore(in, &nomem);
        lex->tags = name_table_restore(in, &nomem);
    }
    if (lex && lex->words && lex->tags) {
        size_t nw = (size_t)name_table_count(lex->words);
        size_t nt = (size_t)name_table_count(lex->tags);
        lex->nentry = lex->cap_entry = (int)img_get_i64(in, 0, 1 << 30);
        lex->nlogv = lex->cap_logv = (size_t)img_get_i64(in, 0, (int64_t)1 << 40);
        lex->known = img_get_copy(in, nw, &nomem);
        lex->first = img_get_copy(in, (nw + 1) * sizeof *lex->first, &nomem);
        lex->entry = img_get_copy(in, (size_t)lex->nentry * sizeof *lex->entry, &nomem);
        lex->logv = img_get_copy(in, lex->nlogv * sizeof *lex->logv, &nomem);
        lex->tag_nsub = img_get_copy(in, nt * sizeof *lex->tag_nsub, &nomem);
        lex->tag_line = img_get_copy(in, nt * sizeof *lex->tag_line, &nomem);
        lex->tag_symbol = img_get_copy(in, nt * sizeof *lex->tag_symbol, &nomem);
        lex->cap_tags = (int)nt;
    }
    int ok = lex && !in->bad && !nomem && lexicon_text_valid(lex, g);
    if (!ok) {
        if (lex)
            lexicon_text_free(&lex->base);
        if (nomem)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        return cky_fail(CKY_ERR_FORMAT, "grammar image: bad text lexicon");
    }
    *out = &lex->base;
    return CKY_OK;
}
