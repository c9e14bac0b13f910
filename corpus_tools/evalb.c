/* evalb: EVALB with COLLINS.prm (see evalb.h and /work/shared/docs/evalb-spec.md).
 *
 * The structure follows evalb.c so that every quirk is kept: a sentence is read into kept
 * words (terminals) and brackets; calc_result decides skip / error / valid; brackets are
 * matched greedily, gold by gold; crossing is counted per test bracket; totals are kept for
 * all sentences and for those with gold length <= cutoff. Strings are slices of the line. */
#include "evalb.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"

typedef struct slice {
    const char *s;
    int n;
} slice;

typedef struct term {
    slice word, tag;
} term;

typedef struct bracket {
    int start, end; /* kept words before it, kept words up to its end; end -1 if unclosed */
    slice label;
    int result; /* 0 unmatched, 1 matched, 5 deleted */
} bracket;

/* One side (gold or test) of the sentence being scored; arrays are reused. */
typedef struct sentence {
    term *terms;
    int nterm, capterm;
    bracket *brs;
    int nbr, capbr;
    int *stack;
    int depth, capstack; /* depth may go negative on extra ')' as in EVALB */
    int len;             /* leaves not tagged -NONE- (EVALB's r_wn1) */
    int kept_brackets;   /* brackets not deleted (r_bn) */
} sentence;

typedef struct totals {
    int sent, error, skip, gold, test, match, complete, words, tags, crossing, no_cross,
        two_cross;
} totals;

struct evalb {
    evalb_params p;
    FILE *out, *err;
    int line;        /* EVALB's Line */
    int status;      /* of the current sentence: 0 valid, 1 error, 2 skip */
    int error_count; /* EVALB's Error_count */
    int stopped;
    int nomem;
    sentence gold, test;
    totals all, cut;
};

static const char *const delete_labels[] = {"TOP", "-NONE-", ",", ":", "``", "''", "."};
static const char *const eq_labels[][2] = {{"ADVP", "PRT"}};

evalb_params evalb_params_default(void)
{
    return (evalb_params){.cutoff_len = 40, .max_error = 10, .sentences = 0};
}

/* ---- labels ---- */

static int slice_is(slice a, const char *s) { return (int)strlen(s) == a.n && !memcmp(a.s, s, a.n); }

static int slice_eq(slice a, slice b) { return a.n == b.n && !memcmp(a.s, b.s, a.n); }

/* EVALB's label_comp: equal, or an EQ_LABEL pair. */
static int label_eq(slice a, slice b)
{
    if (slice_eq(a, b))
        return 1;
    for (size_t i = 0; i < sizeof eq_labels / sizeof eq_labels[0]; i++)
        if ((slice_is(a, eq_labels[i][0]) && slice_is(b, eq_labels[i][1])) ||
            (slice_is(a, eq_labels[i][1]) && slice_is(b, eq_labels[i][0])))
            return 1;
    return 0;
}

/* Preterminal deletion uses exact comparison (is_deletelabel)... */
static int is_delete_tag(slice tag)
{
    for (size_t i = 0; i < sizeof delete_labels / sizeof delete_labels[0]; i++)
        if (slice_is(tag, delete_labels[i]))
            return 1;
    return 0;
}

/* ...bracket deletion uses label_comp. */
static int is_delete_bracket(slice label)
{
    for (size_t i = 0; i < sizeof delete_labels / sizeof delete_labels[0]; i++) {
        slice d = {delete_labels[i], (int)strlen(delete_labels[i])};
        if (label_eq(label, d))
            return 1;
    }
    return 0;
}

/* ---- errors ---- */

/* EVALB's Error(): mark the sentence as an error, print "LINE : message", and stop once
 * the count passes the limit. */
static void evalb_error(evalb *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void evalb_error(evalb *e, const char *fmt, ...)
{
    e->status = 1;
    if (e->err) {
        va_list ap;
        fprintf(e->err, "%d : ", e->line);
        va_start(ap, fmt);
        vfprintf(e->err, fmt, ap);
        va_end(ap);
        fputc('\n', e->err);
    }
    if (e->error_count++ > e->p.max_error)
        e->stopped = 1;
}

/* ---- reading one line (EVALB's read_line) ---- */

static int grow(void **a, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 1;
    int c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*a, (size_t)c * size);
    if (!p)
        return 0;
    *a = p;
    *cap = c;
    return 1;
}

static int is_space(char c) { return isspace((unsigned char)c); }

/* EVALB's is_terminator, with the end of the line added (EVALB reads past it). */
static int is_term(char c) { return c == '\0' || is_space(c) || c == '(' || c == ')'; }

static void sentence_add_term(evalb *e, sentence *s, slice word, slice tag)
{
    if (!grow((void **)&s->terms, &s->capterm, s->nterm + 1, sizeof *s->terms)) {
        e->nomem = 1;
        return;
    }
    s->terms[s->nterm++] = (term){word, tag};
}

static void sentence_push(evalb *e, sentence *s, slice label)
{
    if (!grow((void **)&s->brs, &s->capbr, s->nbr + 1, sizeof *s->brs) ||
        !grow((void **)&s->stack, &s->capstack, s->depth + 1, sizeof *s->stack)) {
        e->nomem = 1;
        return;
    }
    s->brs[s->nbr] = (bracket){.start = s->nterm, .end = -1, .label = label};
    if (s->depth >= 0)
        s->stack[s->depth] = s->nbr;
    s->depth++;
    s->nbr++;
}

static void sentence_pop(evalb *e, sentence *s)
{
    int item = s->depth > 0 ? s->stack[s->depth - 1] : -1;
    if (s->depth-- < 0)
        evalb_error(e, "Bracketing unbalance (too many close bracket)");
    if (item >= 0)
        s->brs[item].end = s->nterm;
}

static void sentence_read(evalb *e, sentence *s, const char *buf)
{
    s->nterm = s->nbr = s->depth = s->len = s->kept_brackets = 0;
    const char *p = buf;
    while (*p && !e->stopped && !e->nomem) {
        if (is_space(*p)) {
            p++;
        } else if (*p == '(') {
            const char *lab = ++p;
            while (!is_term(*p))
                p++;
            slice label = {lab, (int)(p - lab)};
            const char *q = p;
            if (is_space(*q)) {
                while (is_space(*q))
                    q++;
                const char *w = q;
                while (!is_term(*q))
                    q++;
                slice word = {w, (int)(q - w)};
                if (*q == ')' && !slice_is(label, "-NONE-"))
                    s->len++;
                if (*q == ')') {
                    if (!is_delete_tag(label))
                        sentence_add_term(e, s, word, label);
                    p = q + 1;
                    continue;
                }
                if (*q != '(')
                    evalb_error(e, "More than two elements in a bracket");
            }
            sentence_push(e, s, label);
        } else if (*p == ')') {
            sentence_pop(e, s);
            p++;
        } else {
            /* EVALB does not move past the character: it repeats the error until the
             * error limit stops the program. */
            while (!e->stopped)
                evalb_error(e, "Reading sentence");
        }
    }
    if (!e->stopped && s->depth != 0)
        evalb_error(e, "Bracketing is unbalanced (too many open bracket)");
}

/* ---- scoring (EVALB's calc_result, massage_data, individual_result) ---- */

static void sentence_massage(sentence *s)
{
    s->kept_brackets = 0;
    for (int i = 0; i < s->nbr; i++) {
        bracket *b = &s->brs[i];
        b->result = 0;
        if (b->start == b->end) {
            b->result = 5;
            continue;
        }
        int cut = 0;
        while (cut < b->label.n && b->label.s[cut] != '-' && b->label.s[cut] != '=')
            cut++;
        b->label.n = cut;
        if (is_delete_bracket(b->label))
            b->result = 5;
        s->kept_brackets += b->result != 5;
    }
}

static void totals_add(totals *t, int status, int words, int gold, int test, int match,
                       int crossing, int tags)
{
    t->sent++;
    if (status == 1) {
        t->error++;
    } else if (status == 2) {
        t->skip++;
    } else {
        t->gold += gold;
        t->test += test;
        t->match += match;
        t->complete += gold == test && test == match;
        t->words += words;
        t->crossing += crossing;
        t->no_cross += crossing == 0;
        t->two_cross += crossing <= 2;
        t->tags += tags;
    }
}

static void evalb_result(evalb *e, int words, int gold, int test, int match, int crossing,
                         int tags)
{
    totals_add(&e->all, e->status, words, gold, test, match, crossing, tags);
    if (e->gold.len <= e->p.cutoff_len)
        totals_add(&e->cut, e->status, words, gold, test, match, crossing, tags);
    if (e->out && e->p.sentences)
        fprintf(e->out, "%4d  %3d    %d  %6.2f %6.2f   %3d    %3d  %3d    %3d   %4d  %4d   %6.2f\n",
                e->line, e->gold.len, e->status, gold == 0 ? 0.0 : 100.0 * match / gold,
                test == 0 ? 0.0 : 100.0 * match / test, match, gold, test, crossing, words, tags,
                words == 0 ? 0.0 : 100.0 * tags / words);
}

static void evalb_calc(evalb *e)
{
    sentence *g = &e->gold, *t = &e->test;
    if (t->nterm == 0) {
        e->status = 2;
        evalb_result(e, 0, 0, 0, 0, 0, 0);
        return;
    }
    if (g->nterm != t->nterm) {
        evalb_error(e, "Length unmatch (%d|%d)", g->nterm, t->nterm);
        if (!e->stopped)
            evalb_result(e, 0, 0, 0, 0, 0, 0);
        return;
    }
    for (int i = 0; i < g->nterm; i++) {
        if (!slice_eq(g->terms[i].word, t->terms[i].word)) {
            evalb_error(e, "Words unmatch (%.*s|%.*s)", g->terms[i].word.n, g->terms[i].word.s,
                        t->terms[i].word.n, t->terms[i].word.s);
            if (!e->stopped)
                evalb_result(e, 0, 0, 0, 0, 0, 0);
            return;
        }
    }
    sentence_massage(g);
    sentence_massage(t);
    int match = 0;
    for (int i = 0; i < g->nbr; i++) {
        bracket *a = &g->brs[i];
        for (int j = 0; j < t->nbr && a->result != 5; j++) {
            bracket *b = &t->brs[j];
            if (b->result == 0 && a->start == b->start && a->end == b->end &&
                label_eq(a->label, b->label)) {
                a->result = b->result = 1;
                match++;
                break;
            }
        }
    }
    int crossing = 0;
    for (int j = 0; j < t->nbr; j++) {
        bracket *b = &t->brs[j];
        for (int i = 0; i < g->nbr && b->result != 5; i++) {
            bracket *a = &g->brs[i];
            if (a->result != 5 &&
                ((a->start < b->start && a->end > b->start && a->end < b->end) ||
                 (a->start > b->start && a->start < b->end && a->end > b->end))) {
                crossing++;
                break;
            }
        }
    }
    int tags = 0;
    for (int i = 0; i < g->nterm; i++)
        tags += label_eq(g->terms[i].tag, t->terms[i].tag);
    evalb_result(e, g->nterm, g->kept_brackets, t->kept_brackets, match, crossing, tags);
}

/* ---- the public incremental API ---- */

cky_status evalb_new(const evalb_params *p, FILE *out, FILE *err, evalb **out_e)
{
    evalb *e = calloc(1, sizeof *e);
    if (!e)
        return cky_fail(CKY_ERR_NOMEM, "out of memory starting EVALB scoring");
    e->p = *p;
    e->out = out;
    e->err = err;
    if (out && p->sentences)
        fputs("  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
              " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n"
              "============================================================================\n",
              out);
    *out_e = e;
    return CKY_OK;
}

void evalb_add_line(evalb *e, const char *gold, const char *test)
{
    if (e->stopped || e->nomem)
        return;
    e->line++;
    e->status = 0;
    sentence_read(e, &e->gold, gold);
    if (!e->stopped && !e->nomem)
        sentence_read(e, &e->test, test);
    if (!e->stopped && !e->nomem)
        evalb_calc(e);
}

/* tree_write_line() into a malloc'ed string, without the newline. */
static cky_status evalb_tree_line(const tree *t, char **line)
{
    size_t len = 0;
    FILE *f = open_memstream(line, &len);
    if (!f)
        return cky_fail(CKY_ERR_NOMEM, "out of memory writing a tree");
    tree_write_line(t, f);
    if (fclose(f) != 0) {
        free(*line);
        return cky_fail(CKY_ERR_NOMEM, "out of memory writing a tree");
    }
    if (len && (*line)[len - 1] == '\n')
        (*line)[len - 1] = '\0';
    return CKY_OK;
}

cky_status evalb_add_trees(evalb *e, const tree *gold, const tree *test)
{
    char *g = NULL, *t = NULL;
    cky_status st = evalb_tree_line(gold, &g);
    if (st == CKY_OK && (st = evalb_tree_line(test, &t)) == CKY_OK)
        evalb_add_line(e, g, t);
    free(g);
    free(t);
    if (st == CKY_OK && e->nomem)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory scoring sentence %d", e->line);
    return st;
}

static void totals_summary(const totals *t, evalb_summary *s)
{
    int valid = t->sent - t->error - t->skip;
    double r = t->gold > 0 ? 100.0 * t->match / t->gold : 0.0;
    double p = t->test > 0 ? 100.0 * t->match / t->test : 0.0;
    *s = (evalb_summary){
        .sentences = t->sent,
        .errors = t->error,
        .skips = t->skip,
        .valid = valid,
        .gold_brackets = t->gold,
        .test_brackets = t->test,
        .matched = t->match,
        .recall = r,
        .precision = p,
        .fmeasure = p + r == 0 ? NAN : 2 * p * r / (p + r),
        .complete_match = valid > 0 ? 100.0 * t->complete / valid : 0.0,
        .average_crossing = valid > 0 ? 1.0 * t->crossing / valid : 0.0,
        .no_crossing = valid > 0 ? 100.0 * t->no_cross / valid : 0.0,
        .two_or_less_crossing = valid > 0 ? 100.0 * t->two_cross / valid : 0.0,
        .tagging_accuracy = t->words > 0 ? 100.0 * t->tags / t->words : 0.0,
    };
}

static void summary_print(FILE *f, const char *title, const totals *t)
{
    evalb_summary s;
    totals_summary(t, &s);
    fprintf(f, "\n-- %s --\n", title);
    fprintf(f, "Number of sentence        = %6d\n", s.sentences);
    fprintf(f, "Number of Error sentence  = %6d\n", s.errors);
    fprintf(f, "Number of Skip  sentence  = %6d\n", s.skips);
    fprintf(f, "Number of Valid sentence  = %6d\n", s.valid);
    fprintf(f, "Bracketing Recall         = %6.2f\n", s.recall);
    fprintf(f, "Bracketing Precision      = %6.2f\n", s.precision);
    if (isnan(s.fmeasure)) /* EVALB divides 0 by 0; glibc prints the result as -nan */
        fprintf(f, "Bracketing FMeasure       = %6s\n", "-nan");
    else
        fprintf(f, "Bracketing FMeasure       = %6.2f\n", s.fmeasure);
    fprintf(f, "Complete match            = %6.2f\n", s.complete_match);
    fprintf(f, "Average crossing          = %6.2f\n", s.average_crossing);
    fprintf(f, "No crossing               = %6.2f\n", s.no_crossing);
    fprintf(f, "2 or less crossing        = %6.2f\n", s.two_or_less_crossing);
    fprintf(f, "Tagging accuracy          = %6.2f\n", s.tagging_accuracy);
}

int evalb_finish(evalb *e, int more_gold, int more_test)
{
    if (!e->stopped && (more_gold || more_test)) {
        e->line++;
        evalb_error(e, "Number of lines unmatch (too many lines in %s file)",
                    more_gold ? "gold" : "test");
    }
    if (e->stopped)
        return 1;
    if (!e->out)
        return 0;
    const totals *a = &e->all;
    if (e->p.sentences) {
        fputs("============================================================================\n",
              e->out);
        if (a->gold > 0 && a->test > 0)
            fprintf(e->out, "                %6.2f %6.2f %6d %5d %5d  %5d",
                    100.0 * a->match / a->gold, 100.0 * a->match / a->test, a->match, a->gold,
                    a->test, a->crossing);
        fprintf(e->out, "  %5d %5d   %6.2f\n", a->words, a->tags,
                a->words > 0 ? 100.0 * a->tags / a->words : 0.0);
    }
    fputs("=== Summary ===\n", e->out);
    summary_print(e->out, "All", &e->all);
    char title[32];
    snprintf(title, sizeof title, "len<=%d", e->p.cutoff_len);
    summary_print(e->out, title, &e->cut);
    return 0;
}

void evalb_get_summary(const evalb *e, int cutoff, evalb_summary *s)
{
    totals_summary(cutoff ? &e->cut : &e->all, s);
}

void evalb_free(evalb *e)
{
    if (!e)
        return;
    free(e->gold.terms);
    free(e->gold.brs);
    free(e->gold.stack);
    free(e->test.terms);
    free(e->test.brs);
    free(e->test.stack);
    free(e);
}

/* ---- whole inputs ---- */

/* The lines of a file as EVALB's fgets loop sees them (NUL-terminated in place). */
typedef struct line_list {
    char *text;
    char **line;
    size_t n;
} line_list;

static void lines_free(line_list *l)
{
    free(l->text);
    free(l->line);
    *l = (line_list){0};
}

/* Split `text` (taken over) at '\n'; a last line without '\n' counts. */
static cky_status lines_split(char *text, size_t len, line_list *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    n += len > 0 && text[len - 1] != '\n';
    char **line = malloc((n + 1) * sizeof *line);
    if (!line) {
        free(text);
        return cky_fail(CKY_ERR_NOMEM, "out of memory splitting lines");
    }
    size_t k = 0;
    for (size_t i = 0; i < len && k < n; k++) {
        line[k] = text + i;
        char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            break;
        *nl = '\0';
        i = (size_t)(nl - text) + 1;
    }
    *out = (line_list){text, line, n};
    return CKY_OK;
}

/* 1 if some line does not close all its brackets: the mark of a multi-line .mrg. */
static int lines_unbalanced(const line_list *l)
{
    for (size_t k = 0; k < l->n; k++) {
        long depth = 0;
        for (const char *p = l->line[k]; *p; p++)
            depth += (*p == '(') - (*p == ')');
        if (depth != 0)
            return 1;
    }
    return 0;
}

/* Read the trees of `text` and write them one per line into *out; CKY_ERR_FORMAT if the
 * text is not a sequence of trees. */
static cky_status lines_from_trees(const char *path, const char *text, char **out, size_t *len)
{
    tree_reader *r;
    cky_status st = tree_reader_open_string(path, text, &r);
    if (st != CKY_OK)
        return st;
    FILE *f = open_memstream(out, len);
    if (!f) {
        tree_reader_close(r);
        return cky_fail(CKY_ERR_NOMEM, "out of memory converting %s", path);
    }
    tree *t;
    while ((st = tree_reader_next(r, &t)) == CKY_OK && t) {
        tree_write_line(t, f);
        tree_free(t);
    }
    tree_reader_close(r);
    if (fclose(f) != 0 && st == CKY_OK)
        st = cky_fail(CKY_ERR_NOMEM, "out of memory converting %s", path);
    if (st != CKY_OK)
        free(*out);
    return st;
}

static cky_status lines_load(const char *path, line_list *out)
{
    char *text;
    size_t len;
    cky_status st = io_read_file(path, &text, &len);
    if (st != CKY_OK)
        return st;
    if ((st = lines_split(text, len, out)) != CKY_OK)
        return st;
    if (!lines_unbalanced(out))
        return CKY_OK;
    /* Maybe a multi-line .mrg: re-read the original text (rejoin the split lines). */
    for (size_t k = 1; k < out->n; k++)
        out->line[k][-1] = '\n';
    char *conv;
    size_t clen;
    if (lines_from_trees(path, out->text, &conv, &clen) != CKY_OK) {
        for (size_t k = 1; k < out->n; k++) /* not trees: EVALB reads it line by line */
            out->line[k][-1] = '\0';
        return CKY_OK;
    }
    lines_free(out);
    return lines_split(conv, clen, out);
}

static cky_status evalb_run(line_list *gold, line_list *test, const evalb_params *p, FILE *out,
                            FILE *err, int *exit_status, evalb_summary *summary)
{
    evalb *e;
    cky_status st = evalb_new(p, out, err, &e);
    if (st != CKY_OK)
        return st;
    size_t n = gold->n < test->n ? gold->n : test->n;
    for (size_t k = 0; k < n && !e->stopped && !e->nomem; k++)
        evalb_add_line(e, gold->line[k], test->line[k]);
    if (e->nomem) {
        evalb_free(e);
        return cky_fail(CKY_ERR_NOMEM, "out of memory scoring sentence %d", e->line);
    }
    *exit_status = evalb_finish(e, gold->n > n, test->n > n);
    if (summary)
        evalb_get_summary(e, 0, summary);
    evalb_free(e);
    return CKY_OK;
}

cky_status evalb_score_files(const char *gold_path, const char *test_path,
                             const evalb_params *p, FILE *out, FILE *err, int *exit_status,
                             evalb_summary *summary)
{
    line_list gold = {0}, test = {0};
    cky_status st = lines_load(gold_path, &gold);
    if (st == CKY_OK && (st = lines_load(test_path, &test)) == CKY_OK)
        st = evalb_run(&gold, &test, p, out, err, exit_status, summary);
    lines_free(&gold);
    lines_free(&test);
    return st;
}

/* Write trees one per line into a line_list. */
static cky_status lines_write_trees(const tree *const *t, int n, line_list *out)
{
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return cky_fail(CKY_ERR_NOMEM, "out of memory writing trees");
    for (int i = 0; i < n; i++)
        tree_write_line(t[i], f);
    if (fclose(f) != 0)
        return cky_fail(CKY_ERR_NOMEM, "out of memory writing trees");
    return lines_split(text, len, out);
}

cky_status evalb_score_trees(const tree *const *gold, int ngold, const tree *const *test,
                             int ntest, const evalb_params *p, FILE *out, FILE *err,
                             int *exit_status, evalb_summary *summary)
{
    line_list g = {0}, t = {0};
    cky_status st = lines_write_trees(gold, ngold, &g);
    if (st == CKY_OK && (st = lines_write_trees(test, ntest, &t)) == CKY_OK)
        st = evalb_run(&g, &t, p, out, err, exit_status, summary);
    lines_free(&g);
    lines_free(&t);
    return st;
}
