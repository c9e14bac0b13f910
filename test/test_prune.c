/* Tests of the coarse-to-fine cascade (prune/prune.h): on the first dev sentences, every
 * level's allowed symbols, substates and hash equal the Berkeley parser's own
 * (../shared/reference/berkeley/dev.*.prune-masks*.tsv.gz, PruneMasks.java), in the fast and
 * the accurate mode; a level without a parse (sample-sm6, sentence 212, level 5) keeps the
 * previous mask; the fine mask allows only substates of allowed symbols. The whole dev set:
 * make check-prune. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../grammar/cascade.h"
#include "../parser/sentence.h"
#include "../prune/prune.h"

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

/* The reference row of sentence k, level `level` ("SYMBOLS\tSUBSTATES\tHASH"). */
static void reference_row(const char *file, int k, int level, char *out, size_t size)
{
    gzFile f = gzopen(file, "rb");
    char line[1 << 16], key[32];
    cr_assert_not_null(f, "%s", file);
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

/* Sentences first..last of dev.txt against the reference file: every level's row. */
static void check_sentences(const grammar *g, const char *ref, prune_mode mode, int first,
                            int last)
{
    prune_plan *p = NULL;
    cr_assert_eq(prune_new_plan(g, &p), CKY_OK, "%s", cky_last_error());
    for (int k = first; k <= last; k++) {
        sentence s = dev_sentence(k);
        prune_mask m;
        cr_assert_eq(prune_build_mask(p, s.words, s.n, mode, NULL, NULL, &m), CKY_OK, "%s",
                     cky_last_error());
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
