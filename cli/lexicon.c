/* cky lexicon: print the Berkeley lexicon's score of every POS tag substate for the tokens of
 * input sentences, in the layout of the files in ../shared/reference/lexicon/, so that the
 * lexicon can be checked against the Berkeley Parser's own numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/grammar.h"
#include "../grammar/lexicon_berkeley.h"
#include "../corpus_tools/sentence.h"
#include "../util/io.h"
#include "cli.h"
#include "guard.h"
#include "progress.h"

static const char *const CMD = "lexicon";

static const cli_use uses[] = {
    {CLI_GRAMMAR, "none; a native .gr grammar: the text export has no raw lexicon counts and "
                  "is refused"},
    {CLI_INPUT, NULL}, {CLI_OUTPUT, NULL}, {CLI_PRUNED, NULL}, {CLI_QUIET, NULL},
    {CLI_HELP, NULL}, {CLI_END, NULL}};

static void lexicon_usage(FILE *f)
{
    fprintf(f,
            "usage: cky lexicon -g GRAMMAR [-i FILE] [-o FILE] [--pruned] [--quiet]\n\n"
            "For each input sentence (one per line, split on white space like `cky parse`),\n"
            "print the lexical score P(word | tag substate) of every POS tag with a nonzero\n"
            "score, as the Berkeley Parser computes it (linear, before the log):\n\n"
            "  sentence<TAB>position<TAB>word<TAB>tag<TAB>p_0<TAB>p_1 ...\n\n"
            "sentence and position are 0-based; each (word, first-word-or-not) pair is printed\n"
            "only at its first occurrence; tags come in grammar symbol order; each value is the\n"
            "shortest decimal that reads back as the same double. By default the word-tag\n"
            "counts are scored as the .gr file stores them, like the reference tables in\n"
            "../shared/reference/lexicon.\n\n"
            "options:\n");
    cli_options_help(f, uses);

}

/* ---- a set of (word, first-word-or-not) keys ---------------------------------------------- */

typedef struct key_set {
    char **slot;
    size_t cap, n;
} key_set;

static size_t key_hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* Insert `key`; returns 1 if it was new, 0 if present, -1 when out of memory. */
static int key_set_add(key_set *s, const char *key)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        char **slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slot[i])
                continue;
            size_t j = key_hash(s->slot[i]) & (cap - 1);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = s->slot[i];
        }
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    size_t j = key_hash(key) & (s->cap - 1);
    for (; s->slot[j]; j = (j + 1) & (s->cap - 1))
        if (!strcmp(s->slot[j], key))
            return 0;
    if (!(s->slot[j] = strdup(key)))
        return -1;
    s->n++;
    return 1;
}

static void key_set_free(key_set *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slot[i]);
    free(s->slot);
}

/* ---- output ------------------------------------------------------------------------------- */

/* The shortest %.Ng that reads back as x (searched from 15 digits, where most values land). */
static void print_double(FILE *out, double x)
{
    char buf[40], shorter[40];
    int prec = 15;
    snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (isnan(x) || strtod(buf, NULL) == x) {
        while (prec > 1) {
            snprintf(shorter, sizeof shorter, "%.*g", --prec, x);
            if (strtod(shorter, NULL) != x)
                break;
            memcpy(buf, shorter, sizeof buf);
        }
    } else {
        while (prec < 17 && strtod(buf, NULL) != x)
            snprintf(buf, sizeof buf, "%.*g", ++prec, x);
    }
    fputs(buf, out);
}

/* The rows of one token (skipped if its key was printed before). */
static cky_status print_token(const grammar *g, int pruned, long sent, int pos,
                              const char *word, key_set *seen, double *score, char **keybuf,
                              size_t *keycap, FILE *out)
{
    size_t len = strlen(word);
    if (len + 2 > *keycap) {
        char *k = realloc(*keybuf, len + 2);
        if (!k)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        *keybuf = k;
        *keycap = len + 2;
    }
    (*keybuf)[0] = pos == 0 ? '0' : '1';
    memcpy(*keybuf + 1, word, len + 1);
    int fresh = key_set_add(seen, *keybuf);
    if (fresh < 0)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!fresh)
        return CKY_OK;
    cky_status st = lexicon_berkeley_score_linear(g, word, pos, pruned, NULL, score);
    if (st)
        return st;
    for (int t = 0; t < g->nsym; t++) {
        const double *p = score + g->sub_offset[t];
        int nonzero = 0;
        for (int s = 0; !g->phrasal[t] && s < g->nsub[t]; s++)
            nonzero |= p[s] != 0.0;
        if (!nonzero)
            continue;
        fprintf(out, "%ld\t%d\t%s\t%s", sent, pos, word, g->name[t]);
        for (int s = 0; s < g->nsub[t]; s++) {
            fputc('\t', out);
            print_double(out, p[s]);
        }
        fputc('\n', out);
    }
    return CKY_OK;
}

/* Score every token of every line of `in`. */
static cky_status print_scores(const grammar *g, int pruned, io_lines *in, FILE *out)
{
    key_set seen = {NULL, 0, 0};
    char *keybuf = NULL;
    size_t keycap = 0;
    double *score = malloc((size_t)g->nsub_total * sizeof *score);
    cky_status st = score ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    char *line;
    size_t len;
    for (long sent = 0; !st; sent++) {
        sentence s;
        if ((st = io_lines_next(in, &line, &len)) || !line)
            break;
        if ((st = sentence_from_line(line, len, &s)))
            break;
        for (int pos = 0; !st && pos < s.n; pos++)
            st = print_token(g, pruned, sent, pos, s.words[pos], &seen, score, &keybuf, &keycap,
                             out);
        sentence_free(&s);
    }
    free(score);
    free(keybuf);
    key_set_free(&seen);
    return st;
}

int cli_lexicon(int argc, char **argv)
{
    cli_args a;
    int rc = cli_options_read(CMD, uses, 0, argc, argv, &a);
    if (rc)
        return rc;
    if (a.given[CLI_HELP]) {
        cli_args_free(&a);
        lexicon_usage(stdout);
        return 0;
    }
    const char *grammar_path = a.text[CLI_GRAMMAR], *output = a.text[CLI_OUTPUT];
    const char *input = a.given[CLI_INPUT] ? a.text[CLI_INPUT] : "-";
    int pruned = a.given[CLI_PRUNED], quiet = a.given[CLI_QUIET];
    cli_args_free(&a);
    if (!grammar_path)
        return cli_usage_error(CMD, "no grammar given (-g GRAMMAR)");
    rc = guard_check_paths(CMD, grammar_path, NULL, 0, NULL, 0);
    if (rc)
        return rc;

    grammar *g = NULL;
    io_lines *in = NULL;
    FILE *out = stdout;
    cli_progress_start(CMD);
    progress_sink progress = cli_progress_sink(quiet);
    cky_status st = grammar_load_with(grammar_path, NULL, &progress, &g);
    cli_progress_stop();
    if (!st)
        st = lexicon_berkeley_check(g);
    if (!st)
        st = io_lines_open(input, &in);
    if (!st && output && !(out = fopen(output, "w"))) {
        out = stdout;
        st = cky_fail(CKY_ERR_IO, "%s: cannot open for writing", output);
    }
    if (!st)
        st = print_scores(g, pruned, in, out);
    if (!st && (fflush(out) != 0 || ferror(out)))
        st = cky_fail(CKY_ERR_IO, "%s: write error", output ? output : "stdout");
    if (out != stdout && fclose(out) != 0 && !st)
        st = cky_fail(CKY_ERR_IO, "%s: write error", output);
    io_lines_close(in);
    grammar_free(g);
    return st ? cli_error(CMD, "%s", cky_last_error()) : 0;
}
