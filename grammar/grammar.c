/* grammar: the grammar object, its builder (shared by both loaders) and format detection. */
#include "cascade_src.h"
#include "image.h"
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../util/io.h"
#include "../util/jmath.h"
#include "lexicon_berkeley.h"

struct grammar_builder {
    int nsym, cap_sym;
    char **name;
    int *nsub;
    unsigned char *phrasal;
    int nbinary, cap_binary;
    grammar_binary *binary; /* score holds linear probabilities, full [l][r][p] until finish */
    int nunary, cap_unary;
    grammar_unary *unary;
    grammar_sum_closure *sum;
    int sum_from_unary; /* derive sum from the unaries at finish (builder_sum_from_unary) */
};

double grammar_log(double x)
{
    double y = jmath_log(x);
    return isnan(y) ? -INFINITY : y;
}

grammar_builder *builder_new(void) { return calloc(1, sizeof(grammar_builder)); }

void builder_free(grammar_builder *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->nsym; i++)
        free(b->name[i]);
    for (int i = 0; i < b->nbinary; i++) {
        free(b->binary[i].score);
        free(b->binary[i].prob);
        free(b->binary[i].row_l);
        free(b->binary[i].row_r);
    }
    for (int i = 0; i < b->nunary; i++)
        free(b->unary[i].score);
    grammar_sum_free(b->sum);
    free(b->name);
    free(b->nsub);
    free(b->phrasal);
    free(b->binary);
    free(b->unary);
    free(b);
}

int grammar_grow(void **arr, int *cap, int n, size_t size)
{
    if (n < *cap)
        return 1;
    int c = *cap ? 2 * *cap : 64;
    void *p = realloc(*arr, (size_t)c * size);
    if (!p)
        return 0;
    *arr = p;
    *cap = c;
    return 1;
}

cky_status builder_add_symbol(grammar_builder *b, const char *name, int nsub, int phrasal)
{
    if (nsub <= 0 || nsub > 4096)
        return cky_fail(CKY_ERR_FORMAT, "symbol %s has %d substates", name, nsub);
    int c = b->cap_sym;
    if (!grammar_grow((void **)&b->name, &c, b->nsym, sizeof *b->name) ||
        !grammar_grow((void **)&b->nsub, &b->cap_sym, b->nsym, sizeof *b->nsub))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    unsigned char *ph = realloc(b->phrasal, (size_t)b->cap_sym);
    if (!ph)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    b->phrasal = ph;
    if (!(b->name[b->nsym] = strdup(name)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    b->nsub[b->nsym] = nsub;
    b->phrasal[b->nsym] = (unsigned char)(phrasal != 0);
    b->nsym++;
    return CKY_OK;
}

static cky_status check_symbol(const grammar_builder *b, int s)
{
    if (s < 0 || s >= b->nsym)
        return cky_fail(CKY_ERR_FORMAT, "rule names symbol id %d of %d", s, b->nsym);
    return CKY_OK;
}

cky_status builder_adopt_binary(grammar_builder *b, int parent, int left, int right,
                                double *prob)
{
    cky_status st;
    if ((st = check_symbol(b, parent)) || (st = check_symbol(b, left)) ||
        (st = check_symbol(b, right)))
        goto fail;
    if (!grammar_grow((void **)&b->binary, &b->cap_binary, b->nbinary, sizeof *b->binary)) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto fail;
    }
    b->binary[b->nbinary++] = (grammar_binary){parent, left, right, 0, NULL, NULL, prob, NULL};
    return CKY_OK;
fail:
    free(prob);
    return st;
}

cky_status builder_adopt_rows(grammar_builder *b, int parent, int left, int right, int nrow,
                              int *row_l, int *row_r, double *prob)
{
    cky_status st;
    if ((st = check_symbol(b, parent)) || (st = check_symbol(b, left)) ||
        (st = check_symbol(b, right)))
        goto fail;
    for (int k = 0; k < nrow; k++)
        if (row_l[k] < 0 || row_l[k] >= b->nsub[left] || row_r[k] < 0 ||
            row_r[k] >= b->nsub[right] ||
            (k > 0 && (row_l[k] < row_l[k - 1] ||
                       (row_l[k] == row_l[k - 1] && row_r[k] <= row_r[k - 1])))) {
            st = cky_fail(CKY_ERR_ARG, "binary rule rows out of order");
            goto fail;
        }
    if (!grammar_grow((void **)&b->binary, &b->cap_binary, b->nbinary, sizeof *b->binary)) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto fail;
    }
    /* row_l set before builder_finish marks a table given by its rows */
    b->binary[b->nbinary++] = (grammar_binary){parent, left, right, nrow, row_l, row_r, prob,
                                               NULL};
    return CKY_OK;
fail:
    free(row_l);
    free(row_r);
    free(prob);
    return st;
}

cky_status builder_add_binary(grammar_builder *b, int parent, int left, int right,
                              const double *prob)
{
    cky_status st;
    if ((st = check_symbol(b, parent)) || (st = check_symbol(b, left)) ||
        (st = check_symbol(b, right)))
        return st;
    size_t n = (size_t)b->nsub[left] * b->nsub[right] * b->nsub[parent];
    double *copy = malloc(n * sizeof *copy);
    if (!copy)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    memcpy(copy, prob, n * sizeof *copy);
    return builder_adopt_binary(b, parent, left, right, copy);
}

cky_status builder_add_unary(grammar_builder *b, int parent, int child, const double *prob)
{
    cky_status st;
    if ((st = check_symbol(b, parent)) || (st = check_symbol(b, child)))
        return st;
    if (parent == child)
        return CKY_OK;
    if (!grammar_grow((void **)&b->unary, &b->cap_unary, b->nunary, sizeof *b->unary))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    size_t n = (size_t)b->nsub[child] * b->nsub[parent];
    double *score = malloc(n * sizeof *score);
    if (!score)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        score[i] = grammar_log(prob[i]);
    b->unary[b->nunary++] = (grammar_unary){parent, child, score};
    return CKY_OK;
}

void builder_set_sum(grammar_builder *b, grammar_sum_closure *sum)
{
    grammar_sum_free(b->sum);
    b->sum = sum;
}

void builder_sum_from_unary(grammar_builder *b) { b->sum_from_unary = 1; }

void grammar_sum_free(grammar_sum_closure *sum)
{
    if (!sum)
        return;
    for (int i = 0; i < sum->n; i++)
        free(sum->rule[i].prob);
    free(sum->rule);
    free(sum->first);
    free(sum->by_child);
    free(sum->child_first);
    free(sum->path);
    for (int i = 0; i < sum->nraw; i++)
        free(sum->raw[i].prob);
    free(sum->raw);
    free(sum->raw_first);
    free(sum);
}

const grammar_sum_unary *grammar_raw_unary(const grammar *g, int parent, int child)
{
    const grammar_sum_closure *s = g->sum;
    if (!s || !s->raw_first || parent < 0 || parent >= g->nsym)
        return NULL;
    for (int k = s->raw_first[parent]; k < s->raw_first[parent + 1]; k++)
        if (s->raw[k].child == child)
            return &s->raw[k];
    return NULL;
}

/* Prune a binary rule's full linear table to its non-zero rows, in log space and, for a
 * grammar with a sum unary closure (the only one max-rule decodes), as pruned linear
 * probabilities (prob; NULL otherwise, which saves half the memory of the rule tables). */
static cky_status compress_binary(const grammar_builder *b, grammar_binary *r)
{
    int linear = b->sum || b->sum_from_unary;
    int nl = b->nsub[r->left], nr = b->nsub[r->right], np = b->nsub[r->parent];
    double *full = r->score;
    /* the input rows: every (l, r) of a full table, or the given ones (builder_adopt_rows) */
    int *in_l = r->row_l, *in_r = r->row_r, nin = in_l ? r->nrow : nl * nr, nrow = 0;
    for (int x = 0; x < nin; x++)
        for (int p = 0; p < np; p++)
            if (full[(size_t)x * np + p] >= GRAMMAR_BINARY_PRUNE) {
                nrow++;
                break;
            }
    r->row_l = malloc((size_t)(nrow ? nrow : 1) * sizeof(int));
    r->row_r = malloc((size_t)(nrow ? nrow : 1) * sizeof(int));
    double *score = malloc((size_t)(nrow ? nrow : 1) * np * sizeof(double));
    double *prob = linear ? malloc((size_t)(nrow ? nrow : 1) * np * sizeof(double)) : NULL;
    if (!r->row_l || !r->row_r || !score || (linear && !prob)) {
        free(score);
        free(prob);
        free(in_l);
        free(in_r);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    int k = 0;
    for (int x = 0; x < nin; x++) {
        const double *row = full + (size_t)x * np;
        int any = 0;
        for (int p = 0; p < np; p++)
            any |= row[p] >= GRAMMAR_BINARY_PRUNE;
        if (!any)
            continue;
        r->row_l[k] = in_l ? in_l[x] : x / nr;
        r->row_r[k] = in_r ? in_r[x] : x % nr;
        for (int p = 0; p < np; p++) {
            int kept = row[p] >= GRAMMAR_BINARY_PRUNE;
            score[(size_t)k * np + p] = kept ? grammar_log(row[p]) : -INFINITY;
            if (prob)
                prob[(size_t)k * np + p] = kept ? row[p] : 0.0;
        }
        k++;
    }
    r->nrow = nrow;
    r->score = score;
    r->prob = prob;
    free(full);
    free(in_l);
    free(in_r);
    return CKY_OK;
}

/* Stable sort of rules by parent (insertion order kept within a parent), and the index. */
static cky_status index_by_parent(void *rules, int n, size_t size, int nsym,
                                  int (*parent_of)(const void *), int **first_out)
{
    int *first = calloc((size_t)nsym + 1, sizeof *first);
    char *sorted = malloc((size_t)(n ? n : 1) * size);
    if (!first || !sorted) {
        free(first);
        free(sorted);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        first[parent_of((char *)rules + (size_t)i * size) + 1]++;
    for (int s = 0; s < nsym; s++)
        first[s + 1] += first[s];
    int *fill = malloc((size_t)(nsym ? nsym : 1) * sizeof *fill);
    if (!fill) {
        free(first);
        free(sorted);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    memcpy(fill, first, (size_t)nsym * sizeof *fill);
    for (int i = 0; i < n; i++) {
        const char *r = (char *)rules + (size_t)i * size;
        memcpy(sorted + (size_t)fill[parent_of(r)]++ * size, r, size);
    }
    memcpy(rules, sorted, (size_t)n * size);
    free(sorted);
    free(fill);
    *first_out = first;
    return CKY_OK;
}

static int binary_parent(const void *r) { return ((const grammar_binary *)r)->parent; }
static int unary_parent(const void *r) { return ((const grammar_unary *)r)->parent; }

cky_status builder_finish(grammar_builder *b, grammar_lexicon *lex, const char *source,
                          grammar **out)
{
    cky_status st = CKY_OK;
    grammar *g = calloc(1, sizeof *g);
    if (!g) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (b->nsym == 0 || strcmp(b->name[0], "ROOT") != 0 || b->nsub[0] != 1) {
        st = cky_fail(CKY_ERR_FORMAT, "%s: symbol 0 must be ROOT with one substate", source);
        goto fail;
    }
    for (int i = 0; i < b->nbinary; i++)
        if ((st = compress_binary(b, &b->binary[i])))
            goto fail;
    /* drop rules with no row left after pruning */
    int kept = 0;
    for (int i = 0; i < b->nbinary; i++) {
        if (b->binary[i].nrow > 0) {
            b->binary[kept++] = b->binary[i];
        } else {
            free(b->binary[i].score);
            free(b->binary[i].prob);
            free(b->binary[i].row_l);
            free(b->binary[i].row_r);
        }
    }
    b->nbinary = kept;
    if ((st = index_by_parent(b->binary, b->nbinary, sizeof *b->binary, b->nsym, binary_parent,
                              &g->binary_first)) ||
        (st = index_by_parent(b->unary, b->nunary, sizeof *b->unary, b->nsym, unary_parent,
                              &g->unary_first)))
        goto fail;
    if (b->sum_from_unary && !b->sum &&
        (st = grammar_sum_from_unary(b->nsym, b->nsub, b->unary, b->nunary, g->unary_first,
                                     &b->sum)))
        goto fail;

    g->nsym = b->nsym;
    g->name = b->name;
    g->nsub = b->nsub;
    g->phrasal = b->phrasal;
    g->phrasal[0] = 1; /* the parser forces grammarTags[0] = true */
    g->nbinary = b->nbinary;
    g->binary = b->binary;
    g->nunary = b->nunary;
    g->unary = b->unary;
    g->sum = b->sum;
    g->lexicon = lex;
    g->source = strdup(source);
    g->sub_offset = malloc((size_t)g->nsym * sizeof *g->sub_offset);
    if (!g->source || !g->sub_offset) {
        free(b);
        grammar_free(g);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < g->nsym; s++) {
        g->sub_offset[s] = g->nsub_total;
        g->nsub_total += g->nsub[s];
    }
    free(b); /* its arrays now belong to g */
    *out = g;
    return CKY_OK;
fail:
    free(g ? g->binary_first : NULL);
    free(g ? g->unary_first : NULL);
    free(g);
    builder_free(b);
    if (lex)
        lex->free(lex);
    return st;
}

void grammar_free(grammar *g)
{
    if (!g)
        return;
    for (int i = 0; g->name && i < g->nsym; i++)
        free(g->name[i]);
    for (int i = 0; g->binary && i < g->nbinary; i++) {
        void *own[4] = {g->binary[i].row_l, g->binary[i].row_r, g->binary[i].score,
                        g->binary[i].prob};
        for (int k = 0; k < 4; k++)
            if (!grammar_image_owns(g, own[k]))
                free(own[k]);
    }
    for (int i = 0; g->unary && i < g->nunary; i++)
        if (!grammar_image_owns(g, g->unary[i].score))
            free(g->unary[i].score);
    grammar_cascade_free(g->cascade); /* before the image its levels may point into */
    grammar_sum_free(g->sum);
    if (g->lexicon)
        g->lexicon->free(g->lexicon);
    free(g->name);
    free(g->nsub);
    free(g->sub_offset);
    free(g->phrasal);
    free(g->binary);
    free(g->binary_first);
    free(g->unary);
    free(g->unary_first);
    free(g->source);
    grammar_image_release(g);
    free(g);
}

int grammar_find_symbol(const grammar *g, const char *name)
{
    for (int s = 0; s < g->nsym; s++)
        if (strcmp(g->name[s], name) == 0)
            return s;
    return -1;
}

cky_status grammar_score_tags(const grammar *g, const char *word, int loc,
                              const unsigned char *tags, double *out)
{
    for (int i = 0; i < g->nsub_total; i++)
        out[i] = -INFINITY;
    return g->lexicon->score(g->lexicon, g, word, loc, tags, out);
}

cky_status grammar_score_word(const grammar *g, const char *word, int loc, double *out)
{
    return grammar_score_tags(g, word, loc, NULL, out);
}

cky_status grammar_word_repeats(const char *const *text, const unsigned char *first, long nword,
                                int *rep)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)nword)
        cap *= 2;
    long *slot = malloc(cap * sizeof *slot); /* a word, or -1 */
    if (!slot)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    memset(slot, 0xff, cap * sizeof *slot);
    for (long w = 0; w < nword; w++) {
        rep[w] = (int)w;
        if (!text[w])
            continue;
        uint32_t h = first[w] ? 2166136261u : 2166136262u; /* FNV-1a, first or not */
        for (const unsigned char *c = (const unsigned char *)text[w]; *c; c++)
            h = (h ^ *c) * 16777619u;
        for (size_t at = h & (cap - 1);; at = (at + 1) & (cap - 1)) {
            long o = slot[at];
            if (o < 0) {
                slot[at] = w;
                break;
            }
            if (first[o] == first[w] && strcmp(text[o], text[w]) == 0) {
                rep[w] = (int)o;
                break;
            }
        }
    }
    free(slot);
    return CKY_OK;
}

long grammar_count_binary(const grammar *g)
{
    long n = 0;
    for (int i = 0; i < g->nbinary; i++) {
        const grammar_binary *r = &g->binary[i];
        int np = g->nsub[r->parent];
        for (long k = 0; k < (long)r->nrow * np; k++)
            n += r->score[k] > -INFINITY;
    }
    return n;
}

long grammar_count_unary(const grammar *g)
{
    long n = 0;
    for (int i = 0; i < g->nunary; i++) {
        const grammar_unary *r = &g->unary[i];
        long m = (long)g->nsub[r->child] * g->nsub[r->parent];
        for (long k = 0; k < m; k++)
            n += r->score[k] > -INFINITY;
    }
    return n;
}

/* 1 if `path` is a gzip file whose payload starts with the Java serialization magic. */
static int is_java_serialized(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return 0;
    unsigned char magic[2] = {0, 0};
    int n = gzread(gz, magic, 2);
    gzclose(gz);
    return n == 2 && magic[0] == 0xAC && magic[1] == 0xED;
}

const char *const grammar_text_suffix[GRAMMAR_NTEXT_SUFFIX] = {
    ".grammar", ".grammar.gz", ".lexicon", ".lexicon.gz", ".words", ".words.gz"};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

char *grammar_text_prefix(const char *spec)
{
    char *prefix = strdup(spec);
    for (int i = 0; prefix && i < GRAMMAR_NTEXT_SUFFIX; i++)
        if (ends_with(spec, grammar_text_suffix[i])) {
            prefix[strlen(spec) - strlen(grammar_text_suffix[i])] = '\0';
            break;
        }
    return prefix;
}

/* 1 if PREFIX.grammar or PREFIX.grammar.gz is there (a text export's first file). */
static int text_export_there(const char *prefix)
{
    char path[4096];
    for (int i = 0; i < 2; i++)
        if (snprintf(path, sizeof path, "%s%s", prefix, grammar_text_suffix[i]) <
                (int)sizeof path && io_file_exists(path))
            return 1;
    return 0;
}

cky_status grammar_load_source(const char *spec, grammar **out)
{
    struct stat sb;
    if (stat(spec, &sb) == 0 && S_ISDIR(sb.st_mode))
        return cky_fail(CKY_ERR_IO, "%s: is a directory (give a .gr file or the PREFIX of a "
                        "text export PREFIX.grammar, PREFIX.lexicon, PREFIX.words)", spec);
    /* a missing X.gr is named as such, not as the text export X.gr.grammar it is not */
    if (!io_file_exists(spec) && ends_with(spec, ".gr") && !text_export_there(spec))
        return cky_fail(CKY_ERR_IO, "%s: no such file", spec);
    if (!io_file_exists(spec))
        return grammar_load_text(spec, out);
    if (is_java_serialized(spec))
        return grammar_load_native(spec, out);
    char *prefix = grammar_text_prefix(spec);
    if (!prefix)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    cky_status st = strcmp(prefix, spec)
                        ? grammar_load_text(prefix, out)
                        : cky_fail(CKY_ERR_FORMAT,
                                   "%s: not a Berkeley grammar (neither a .gr file nor a text "
                                   "export PREFIX.grammar/.lexicon/.words)",
                                   spec);
    free(prefix);
    return st;
}

cky_status grammar_check_sum(const grammar *g)
{
    if (!g->sum)
        return cky_fail(CKY_ERR_UNSUPPORTED,
                        "%s: the max-rule decoder needs the sum closure of the unary rules, "
                        "which this grammar file lacks", g->source);
    if (!g->sum->max_closure && lexicon_berkeley_check(g))
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: the max-rule decoder needs the native .gr "
                        "file's lexicon: %s", g->source, cky_last_error());
    return CKY_OK;
}

int grammar_sum_is_exact(const grammar *g) { return g->sum && !g->sum->max_closure; }
