/* Tests of the coarse-to-fine cascade (prune/prune.h): on the first dev sentences, every
 * level's allowed symbols, substates and hash equal the Berkeley parser's own
 * (../shared/reference/berkeley/dev.*.prune-masks*.tsv.gz, PruneMasks.java), in the fast and
 * the accurate mode; a level without a parse (sample-sm6, sentence 212, level 5) keeps the
 * previous mask; the fine mask allows only substates of allowed symbols. The final passes
 * within the mask (maxrule_parse with a mask, ref_parse_masked and the jar's back-trace) give
 * the reference files' final rows; with a mask that allows what the exhaustive passes allow
 * they give the exhaustive results bit for bit; the max-rule chart a thread keeps between
 * sentences is zero again after each. The whole dev set: make check-prune. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../grammar/cascade.h"
#include "../decoders/maxrule/maxrule.h"
#include "../decoders/maxrule/maxrule_internal.h"
#include "../engines/ref/ref.h"
#include "../corpus_tools/sentence.h"
#include "../prune/prune.h"
#include "../decoders/viterbi/viterbi.h"

#define REF CKY_SHARED "/reference/berkeley/"
#define DEV CKY_SHARED "/data/ptb-sample/dev.txt"
#define GR(name) CKY_SHARED "/grammars/" name "/" name ".gr"

static grammar *load(const char *path)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load_source(path, &g), CKY_OK, "%s", cky_last_error());
    return g;
}

/* Sentence k (1-based) of dev.txt. */
static sentence dev_sentence(int k)
{
    FILE *f = fopen(DEV, "r");
    char line[8192];
    cr_assert_not_null(f);
    for (int i = 0; i < k; i++)
        cr_assert_not_null(fgets(line, sizeof line, f), "dev.txt has no line %d", k);
    fclose(f);
    sentence s;
    cr_assert_eq(sentence_from_line(line, strlen(line), &s), CKY_OK);
    return s;
}

/* The reference row of sentence k, level `level` ("SYMBOLS\tSUBSTATES\tHASH"; level -1: the
 * final row, "LOGLIK\tSCORE\tTREE"). */
static void reference_row(const char *file, int k, int level, char *out, size_t size)
{
    gzFile f = gzopen(file, "rb");
    char line[1 << 16], key[32];
    cr_assert_not_null(f, "%s", file);
    if (level < 0)
        snprintf(key, sizeof key, "%d\tfinal\t", k);
    else
        snprintf(key, sizeof key, "%d\t%d\t", k, level);
    out[0] = '\0';
    while (gzgets(f, line, sizeof line))
        if (!strncmp(line, key, strlen(key))) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(out, size, "%s", line + strlen(key));
            break;
        }
    gzclose(f);
    cr_assert(out[0], "%s has no row for sentence %d level %d", file, k, level);
}

static void format_level(const prune_level *l, char *out, size_t size)
{
    if (l->failed)
        snprintf(out, size, "-1\t-1\t-");
    else
        snprintf(out, size, "%ld\t%ld\t%016" PRIx64, l->symbols, l->substates, l->hash);
}

/* Every allowed fine substate belongs to an allowed symbol; ROOT is allowed everywhere. */
static void check_fine_mask(const grammar *g, const prune_mask *m, int n)
{
    cr_assert_eq(m->fine.n, n);
    cr_assert_eq(m->fine.nsub, g->nsub_total);
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            cr_assert(chart_mask_state(&m->fine, i, i + d, 0), "ROOT over [%d, %d)", i, i + d);
            for (int s = 0; s < g->nsym; s++) {
                int any = 0;
                for (int x = g->sub_offset[s]; x < g->sub_offset[s] + g->nsub[s]; x++)
                    any |= chart_mask_sub(&m->fine, i, i + d, x);
                if (chart_mask_state(&m->fine, i, i + d, s))
                    cr_assert(any, "%s over [%d, %d) allowed with no substate", g->name[s], i,
                              i + d);
                if (d > 1 && !g->phrasal[s])
                    cr_assert(!chart_mask_state(&m->fine, i, i + d, s), "a tag over %d words", d);
            }
        }
}

/* Sentences first..last of dev.txt against the reference file: every level's row; with
 * threads > 1 (prune_set_threads), also the fine mask against one thread's, byte for byte. */
static void check_sentences_on(const grammar *g, const char *ref, prune_mode mode, int first,
                               int last, int threads)
{
    prune_plan *p = NULL, *one = NULL;
    cr_assert_eq(prune_new_plan(g, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(prune_new_plan(g, &one), CKY_OK, "%s", cky_last_error());
    prune_set_threads(p, threads);
    for (int k = first; k <= last; k++) {
        sentence s = dev_sentence(k);
        prune_mask m;
        cr_assert_eq(prune_build_mask(p, s.words, s.n, mode, NULL, NULL, &m), CKY_OK, "%s",
                     cky_last_error());
        if (threads > 1) {
            prune_mask m1;
            cr_assert_eq(prune_build_mask(one, s.words, s.n, mode, NULL, NULL, &m1), CKY_OK);
            size_t cells = chart_ncells(s.n);
            cr_assert(!memcmp(m.fine.state, m1.fine.state, cells * (size_t)g->nsym) &&
                          !memcmp(m.fine.sub, m1.fine.sub, cells * (size_t)g->nsub_total),
                      "sentence %d: %d threads' fine mask is not one thread's", k, threads);
            prune_free_mask(&m1);
        }
        cr_assert_eq(m.nlevel, g->cascade->nlevel);
        for (int level = 0; level < m.nlevel; level++) {
            char mine[96], theirs[96];
            format_level(&m.level[level], mine, sizeof mine);
            reference_row(ref, k, level, theirs, sizeof theirs);
            cr_expect_str_eq(mine, theirs, "sentence %d level %d: %s, the jar's %s", k, level,
                             mine, theirs);
        }
        check_fine_mask(g, &m, s.n);
        prune_free_mask(&m);
        sentence_free(&s);
    }
    prune_free_plan(p);
    prune_free_plan(one);
}

/* Without the levels' statistics (prune_set_levels(p, 0)), sample-sm6's sentences 211 and
 * 212: the same fine mask as with them, every count and hash 0, and 212's failed level 5
 * still said. */
Test(prune, without_statistics_the_same_mask, .timeout = 600)
{
    grammar *g = load(GR("sample-sm6"));
    prune_plan *p = NULL, *q = NULL;
    cr_assert_eq(prune_new_plan(g, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(prune_new_plan(g, &q), CKY_OK, "%s", cky_last_error());
    prune_set_levels(q, 0);
    for (int k = 211; k <= 212; k++) {
        sentence s = dev_sentence(k);
        prune_mask a, b;
        cr_assert_eq(prune_build_mask(p, s.words, s.n, PRUNE_FAST, NULL, NULL, &a), CKY_OK);
        cr_assert_eq(prune_build_mask(q, s.words, s.n, PRUNE_FAST, NULL, NULL, &b), CKY_OK);
        size_t cells = chart_ncells(s.n);
        cr_expect(!memcmp(a.fine.state, b.fine.state, cells * (size_t)g->nsym) &&
                      !memcmp(a.fine.sub, b.fine.sub, cells * (size_t)g->nsub_total),
                  "sentence %d: the fine mask without statistics differs", k);
        for (int level = 0; level < a.nlevel; level++) {
            const prune_level *x = &a.level[level], *y = &b.level[level];
            cr_expect_eq(y->failed, x->failed, "sentence %d level %d", k, level);
            if (!x->failed)
                cr_expect(x->substates > 0 && y->symbols == 0 && y->substates == 0 &&
                              y->hash == 0,
                          "sentence %d level %d: %ld %ld without statistics", k, level,
                          y->symbols, y->substates);
        }
        cr_expect_eq(b.level[5].failed, k == 212, "sentence %d: level 5", k);
        prune_free_mask(&a);
        prune_free_mask(&b);
        sentence_free(&s);
    }
    prune_free_plan(p);
    prune_free_plan(q);
    grammar_free(g);
}

static void check_sentences(const grammar *g, const char *ref, prune_mode mode, int first,
                            int last)
{
    check_sentences_on(g, ref, mode, first, last, 1);
}

Test(prune, sm1_fast_and_accurate, .timeout = 600)
{
    grammar *g = load(GR("sample-sm1"));
    check_sentences(g, REF "dev.sample-sm1.prune-masks.tsv.gz", PRUNE_FAST, 1, 6);
    check_sentences(g, REF "dev.sample-sm1.prune-masks-accurate.tsv.gz", PRUNE_ACCURATE, 1, 6);
    grammar_free(g);
}

Test(prune, sm3_fast_and_accurate, .timeout = 600)
{
    grammar *g = load(GR("sample-sm3"));
    check_sentences(g, REF "dev.sample-sm3.prune-masks.tsv.gz", PRUNE_FAST, 1, 6);
    check_sentences(g, REF "dev.sample-sm3.prune-masks-accurate.tsv.gz", PRUNE_ACCURATE, 1, 6);
    grammar_free(g);
}

/* A sentence's cells of one span length shared among 3 threads (prune_set_threads): the
 * same levels as the jar's and the same fine mask as one thread's, on sample-sm5 and, with
 * its failed level, sample-sm6's sentence 212. */
Test(prune, three_threads_give_the_same_masks, .timeout = 600)
{
    grammar *g = load(GR("sample-sm5"));
    check_sentences_on(g, REF "dev.sample-sm5.prune-masks.tsv.gz", PRUNE_FAST, 1, 8, 3);
    grammar_free(g);
    g = load(GR("sample-sm6"));
    check_sentences_on(g, REF "dev.sample-sm6.prune-masks.tsv.gz", PRUNE_FAST, 210, 212, 3);
    grammar_free(g);
}

/* Sentence 212 with sample-sm6: level 5 finds no parse, prunes nothing, and the final mask
 * comes from level 4's through two child maps. */
Test(prune, sm6_failed_level_keeps_the_mask, .timeout = 600)
{
    grammar *g = load(GR("sample-sm6"));
    check_sentences(g, REF "dev.sample-sm6.prune-masks.tsv.gz", PRUNE_FAST, 212, 212);
    grammar_free(g);
}

/* A text export has no cascade: the plan says so. */
Test(prune, text_export_has_no_cascade)
{
    grammar *g = load(CKY_SHARED "/grammars/sample-sm1/sample-sm1");
    prune_plan *p = NULL;
    cr_assert_null(grammar_cascade_of(g));
    cr_assert_eq(prune_new_plan(g, &p), CKY_ERR_UNSUPPORTED);
    cr_assert_null(p);
    grammar_free(g);
}

/* ---- the final passes ---- */

/* The tree as the jar prints it (malloc'ed). */
static char *tree_text(const tree *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    tree_write_line(t, f);
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static void expect_close(double mine, double theirs, const char *what, int k)
{
    cr_expect(mine == theirs || fabs(mine - theirs) <= 1e-9 * fabs(theirs),
              "sentence %d: %s %.17g, the jar's %.17g", k, what, mine, theirs);
}

/* Sentences first..last: the final pass within the cascade's mask against the final rows
 * ("LOGLIK\tSCORE\tTREE") of the reference file. */
static void check_final(const grammar *g, const char *ref, int viterbi, int first, int last)
{
    prune_plan *p = NULL;
    cr_assert_eq(prune_new_plan(g, &p), CKY_OK, "%s", cky_last_error());
    for (int k = first; k <= last; k++) {
        sentence s = dev_sentence(k);
        prune_mask m;
        double loglik, score;
        tree *t = NULL;
        char row[1 << 14];
        cr_assert_eq(prune_build_mask(p, s.words, s.n, PRUNE_FAST, NULL, NULL, &m), CKY_OK);
        if (viterbi) {
            chart *c = NULL;
            cr_assert_eq(ref_parse_masked(g, s.words, s.n, CHART_DOUBLE, &m.fine, &c), CKY_OK,
                         "%s", cky_last_error());
            loglik = score = chart_post(c, 0, s.n)[g->sub_offset[0]];
            cr_assert_eq(viterbi_extract_masked(g, c, s.words, VITERBI_BERKELEY, &m.fine, &t),
                         CKY_OK, "%s", cky_last_error());
            t = tree_unannotate(t);
            chart_free(c);
        } else {
            maxrule_options o = {0};
            maxrule_result r;
            o.mask = &m.fine;
            cr_assert_eq(maxrule_parse(g, s.words, s.n, &o, &r), CKY_OK, "%s", cky_last_error());
            loglik = r.loglik;
            score = r.score;
            t = r.tree;
        }
        reference_row(ref, k, -1, row, sizeof row);
        char *end1, *end2, *mine = tree_text(t);
        double jll = strtod(row, &end1), jsc = strtod(end1, &end2);
        expect_close(loglik, jll, "log P", k);
        expect_close(score, jsc, viterbi ? "Viterbi score" : "max-rule score", k);
        cr_expect_str_eq(mine, end2 + 1, "sentence %d: %s\n the jar's %s", k, mine, end2 + 1);
        free(mine);
        tree_free(t);
        prune_free_mask(&m);
        sentence_free(&s);
    }
    prune_free_plan(p);
}

Test(prune, sm3_final_maxrule_and_viterbi, .timeout = 600)
{
    grammar *g = load(GR("sample-sm3"));
    check_final(g, REF "dev.sample-sm3.prune-masks.tsv.gz", 0, 1, 5);
    check_final(g, REF "dev.sample-sm3.prune-masks-viterbi.tsv.gz", 1, 1, 5);
    grammar_free(g);
}

/* The mask of the exhaustive passes: every symbol over one word, phrasal ones over more,
 * every substate. */
static void exhaustive_mask(const grammar *g, int n, chart_mask *m)
{
    cr_assert_eq(chart_mask_init(m, n, g->nsym, g->nsub_total), CKY_OK);
    for (int d = 1; d <= n; d++)
        for (int i = 0; i + d <= n; i++) {
            size_t c = chart_cell(n, i, i + d);
            for (int s = 0; s < g->nsym; s++)
                m->state[c * g->nsym + s] = d == 1 || g->phrasal[s];
            memset(m->sub + c * g->nsub_total, 1, (size_t)g->nsub_total);
        }
}

/* With the exhaustive passes' own mask, the masked passes are the exhaustive ones, bit for
 * bit, unscaled and scaled; a mask of another sentence length is refused. */
Test(prune, exhaustive_mask_gives_the_exhaustive_passes, .timeout = 600)
{
    static const int lines[] = {6, 12, 16}; /* dev sentences of 7, 9 and 12 words */
    grammar *g = load(GR("sample-sm1"));
    for (size_t line = 0; line < sizeof lines / sizeof *lines; line++) {
        int k = lines[line];
        sentence s = dev_sentence(k);
        chart_mask m;
        exhaustive_mask(g, s.n, &m);
        for (int scaled = 0; scaled < 2; scaled++) {
            maxrule_options plain = {0}, masked = {0};
            maxrule_result a, b;
            plain.force_scaled = masked.force_scaled = scaled;
            masked.mask = &m;
            cr_assert_eq(maxrule_parse(g, s.words, s.n, &plain, &a), CKY_OK);
            cr_assert_eq(maxrule_parse(g, s.words, s.n, &masked, &b), CKY_OK);
            cr_expect(a.loglik == b.loglik && a.score == b.score, "sentence %d scaled %d", k,
                      scaled);
            char *x = tree_text(a.tree), *y = tree_text(b.tree);
            cr_expect_str_eq(x, y);
            free(x);
            free(y);
            tree_free(a.tree);
            tree_free(b.tree);
        }
        chart *c1 = NULL, *c2 = NULL;
        char msg[256];
        cr_assert_eq(ref_parse(g, s.words, s.n, CHART_DOUBLE, &c1), CKY_OK);
        cr_assert_eq(ref_parse_masked(g, s.words, s.n, CHART_DOUBLE, &m, &c2), CKY_OK);
        cr_expect_eq(chart_compare(c1, c2, msg, sizeof msg), 0, "%s", msg);
        chart_free(c1);
        chart_free(c2);
        maxrule_options wrong = {0};
        maxrule_result r;
        wrong.mask = &m;
        cr_expect_eq(maxrule_parse(g, s.words, s.n - 1, &wrong, &r), CKY_ERR_ARG);
        cr_expect_eq(ref_parse_masked(g, s.words, s.n - 1, CHART_DOUBLE, &m, &c1), CKY_ERR_ARG);
        chart_mask_free(&m);
        sentence_free(&s);
    }
    grammar_free(g);
}

/* One max-rule parse within a mask (NULL: exhaustive), its scores and tree as text. */
typedef struct kept_job {
    const grammar *g;
    const sentence *s;
    const chart_mask *mask;
    int scaled;
    double loglik, score;
    char *tree;
} kept_job;

static void *kept_parse(void *arg)
{
    kept_job *j = arg;
    maxrule_options o = {0};
    maxrule_result r;
    o.mask = j->mask;
    o.force_scaled = j->scaled;
    cr_assert_eq(maxrule_parse(j->g, j->s->words, j->s->n, &o, &r), CKY_OK, "%s",
                 cky_last_error());
    j->loglik = r.loglik;
    j->score = r.score;
    j->tree = tree_text(r.tree);
    tree_free(r.tree);
    return NULL;
}

/* The chart a thread keeps from sentence to sentence (maxrule.c: mr_chart_take) is all zero
 * after each, within a mask or not, scaled or not; and a sentence parsed after others in one
 * thread gives the bits of the same sentence parsed first, in a thread of its own. */
Test(prune, kept_chart_is_zeroed_after_each_sentence, .timeout = 600)
{
    enum { FIRST = 2, LAST = 13 };
    grammar *g = load(GR("sample-sm5"));
    prune_plan *p = NULL;
    cr_assert_eq(prune_new_plan(g, &p), CKY_OK, "%s", cky_last_error());
    sentence s[LAST + 1];
    prune_mask m[LAST + 1];
    kept_job here[LAST + 1][2];
    for (int k = FIRST; k <= LAST; k++) {
        s[k] = dev_sentence(k);
        cr_assert_eq(prune_build_mask(p, s[k].words, s[k].n, PRUNE_FAST, NULL, NULL, &m[k]),
                     CKY_OK);
        for (int scaled = 0; scaled < 2; scaled++) {
            here[k][scaled] = (kept_job){g, &s[k], &m[k].fine, scaled, 0, 0, NULL};
            kept_parse(&here[k][scaled]);
            cr_assert(mr_chart_kept_is_clean(), "sentence %d, scaled %d: the kept chart has "
                      "scores left", k, scaled);
        }
        if (k == FIRST + 3) { /* an exhaustive parse between: every block written */
            kept_job all = {g, &s[FIRST], NULL, 0, 0, 0, NULL};
            kept_parse(&all);
            free(all.tree);
            cr_assert(mr_chart_kept_is_clean(), "the kept chart after an exhaustive parse");
        }
    }
    for (int k = FIRST; k <= LAST; k++)
        for (int scaled = 0; scaled < 2; scaled++) {
            kept_job alone = {g, &s[k], &m[k].fine, scaled, 0, 0, NULL};
            pthread_t t;
            cr_assert_eq(pthread_create(&t, NULL, kept_parse, &alone), 0);
            pthread_join(t, NULL);
            const kept_job *h = &here[k][scaled];
            cr_expect(memcmp(&alone.loglik, &h->loglik, sizeof h->loglik) == 0 &&
                          memcmp(&alone.score, &h->score, sizeof h->score) == 0,
                      "sentence %d scaled %d: %.17g %.17g alone, %.17g %.17g after others", k,
                      scaled, alone.loglik, alone.score, h->loglik, h->score);
            cr_expect_str_eq(alone.tree, h->tree, "sentence %d scaled %d", k, scaled);
            free(alone.tree);
            free(h->tree);
        }
    for (int k = FIRST; k <= LAST; k++) {
        prune_free_mask(&m[k]);
        sentence_free(&s[k]);
    }
    prune_free_plan(p);
    grammar_free(g);
}
