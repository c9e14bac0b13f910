/* Tests of the max-rule decoder (decoders/maxrule/): on short dev sentences it gives the Berkeley jar's
 * own unpruned max-rule output (../shared/reference/berkeley/\*exhaustive-maxrule.tsv: log
 * likelihood and max-rule score within 1e-9 relative, the same tree); the scaled passes agree
 * with the unscaled ones; a sentence whose probability underflows goes through the scaled
 * passes to a finite score and a tree; the sum closure is loaded from .gr files, and a text
 * export's closed Viterbi unaries stand in for it (not exact); the --score layout; the
 * parser's decoder option; cky parse --engine cpu --decoder maxrule (same output for two
 * workspaces, the ref engine's trees), on a .gr file and on a text export (a tree for every
 * sentence, cpu = ref, one note on stderr). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/grammar.h"
#include "../decoders/maxrule/maxrule.h"
#include "../decoders/maxrule/maxrule_internal.h"
#include "../grammar/lexicon_berkeley.h"
#include "../parser/parser.h"
#include "../corpus_tools/sentence.h"
#include "../util/io.h"
#include "test_dev.h"

#define GRAMMARS CKY_SHARED "/grammars/"
#define DATA CKY_SHARED "/data/ptb-sample/"
#define REFS CKY_SHARED "/reference/berkeley/"

static grammar *load(const char *spec)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(spec, &g), CKY_OK, "%s", cky_last_error());
    return g;
}

/* The tree as one line, as cky parse prints it, without the newline (malloc'ed). */
static char *tree_string(const tree *t)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    cr_assert_not_null(f);
    tree_write_line(t, f);
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static int close_rel(double a, double b, double tol)
{
    return a == b || fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

/* Lines 1..max of `path` whose sentence has at most `max_words` words: the sentences and
 * their 0-based line numbers (at most `want`). */
static int pick_sentences(const char *path, int max_lines, int max_words, int want,
                          sentence *s, int *line)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(path, &in), CKY_OK, "%s", cky_last_error());
    char *text;
    size_t len;
    int m = 0;
    for (int k = 0; m < want && k < max_lines; k++) {
        cr_assert_eq(io_lines_next(in, &text, &len), CKY_OK);
        if (!text)
            break;
        cr_assert_eq(sentence_from_line(text, len, &s[m]), CKY_OK);
        if (s[m].n >= 1 && s[m].n <= max_words)
            line[m++] = k;
        else
            sentence_free(&s[m]);
    }
    io_lines_close(in);
    return m;
}

/* Field `k` (0-based) of line `line` of a reference file, copied into buf. */
static void ref_field(const char *path, int line, int k, char *buf, size_t size)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(path, &in), CKY_OK, "%s", cky_last_error());
    char *text = NULL;
    size_t len;
    for (int i = 0; i <= line; i++)
        cr_assert_eq(io_lines_next(in, &text, &len), CKY_OK);
    cr_assert_not_null(text, "%s has no line %d", path, line + 1);
    for (int i = 0; i < k; i++) {
        text = strchr(text, '\t');
        cr_assert_not_null(text, "%s:%d: too few fields", path, line + 1);
        text++;
    }
    size_t n = strcspn(text, "\t\n");
    cr_assert_lt(n, size);
    memcpy(buf, text, n);
    buf[n] = '\0';
    io_lines_close(in);
}

/* Parse a few short sentences of `input` and compare with the jar's reference lines. */
static void check_against_jar(const char *gr, const char *input, const char *ref, int max_words,
                              int want)
{
    grammar *g = load(gr);
    sentence s[8];
    int line[8];
    int m = pick_sentences(input, 80, max_words, want, s, line);
    cr_assert_eq(m, want, "found %d short sentences in %s", m, input);
    for (int k = 0; k < m; k++) {
        maxrule_result r;
        cr_assert_eq(maxrule_parse(g, s[k].words, s[k].n, NULL, &r), CKY_OK, "%s",
                     cky_last_error());
        char ll[64], sc[64], tr[8192];
        ref_field(ref, line[k], 0, ll, sizeof ll);
        ref_field(ref, line[k], 1, sc, sizeof sc);
        ref_field(ref, line[k], 2, tr, sizeof tr);
        cr_assert(close_rel(r.loglik, strtod(ll, NULL), 1e-9), "%s line %d: log likelihood %.17g,"
                  " jar %s", ref, line[k] + 1, r.loglik, ll);
        cr_assert(close_rel(r.score, strtod(sc, NULL), 1e-9), "%s line %d: max-rule score %.17g,"
                  " jar %s", ref, line[k] + 1, r.score, sc);
        cr_assert_not_null(r.tree);
        char *t = tree_string(r.tree);
        cr_assert_str_eq(t, tr, "%s line %d: tree differs", ref, line[k] + 1);
        cr_assert_eq(r.scaled, 0);
        free(t);
        tree_free(r.tree);
        sentence_free(&s[k]);
    }
    grammar_free(g);
}

Test(maxrule, sample_sm3_matches_jar)
{
    check_against_jar(GRAMMARS "sample-sm3/sample-sm3.gr", DATA "dev.txt",
                      REFS "dev.sample-sm3.exhaustive-maxrule.tsv", 14, 6);
}

Test(maxrule, sample_sm5_matches_jar)
{
    check_against_jar(GRAMMARS "sample-sm5/sample-sm5.gr", DATA "dev.le25.txt",
                      REFS "dev.le25.sample-sm5.exhaustive-maxrule.tsv", 10, 3);
}

/* The scaled passes (forced) give the unscaled passes' answer. */
static void check_forced_scaling(const char *gr, int max_words, int want)
{
    grammar *g = load(gr);
    sentence s[8];
    int line[8];
    int m = pick_sentences(DATA "dev.txt", 80, max_words, want, s, line);
    cr_assert_eq(m, want);
    maxrule_options forced = {.force_scaled = 1, .scaled_unaries_from_pre = 1}; /* scaled, unaries as the unscaled passes read them */
    for (int k = 0; k < m; k++) {
        maxrule_result a, b;
        cr_assert_eq(maxrule_parse(g, s[k].words, s[k].n, NULL, &a), CKY_OK);
        cr_assert_eq(maxrule_parse(g, s[k].words, s[k].n, &forced, &b), CKY_OK);
        cr_assert(!a.scaled && b.scaled);
        cr_assert(close_rel(a.loglik, b.loglik, 1e-12), "line %d: log likelihood %.17g vs "
                  "scaled %.17g", line[k] + 1, a.loglik, b.loglik);
        cr_assert(close_rel(a.score, b.score, 1e-9), "line %d: max-rule score %.17g vs scaled "
                  "%.17g", line[k] + 1, a.score, b.score);
        char *ta = tree_string(a.tree), *tb = tree_string(b.tree);
        cr_assert_str_eq(ta, tb, "line %d", line[k] + 1);
        free(ta);
        free(tb);
        tree_free(a.tree);
        tree_free(b.tree);
        sentence_free(&s[k]);
    }
    grammar_free(g);
}

Test(maxrule, forced_scaling_agrees_sm1)
{
    check_forced_scaling(GRAMMARS "sample-sm1/sample-sm1.gr", 20, 6);
}

Test(maxrule, forced_scaling_agrees_sm3)
{
    check_forced_scaling(GRAMMARS "sample-sm3/sample-sm3.gr", 12, 4);
}

/* 70 words of the training data that occur there twice: P(sentence) underflows a double. */
static const char rare_words[] =
    "abortionist abroad absorbed acceleration acceptance accepting accessories accurate "
    "acquiring acres actively actually adjustable adjusting admitted adult advancing "
    "advantages advertised advertisements advised advocates affiliates aftermath agenda "
    "aggressively agrees agricultural aides ailing aim air aircraft airlines alive "
    "allocated ambitions ambitious amendments amounted amusing analysis ancient angry "
    "announce anticipated anticipation anxieties anxious apartment apology appealing "
    "application appointment appropriators approximately architect arguing argument "
    "arguments artist assault assembled asserted assertion asset assist associate "
    "associated associates";

Test(maxrule, underflow_takes_the_scaled_passes)
{
    grammar *g = load(GRAMMARS "sample-sm1/sample-sm1.gr");
    sentence s;
    cr_assert_eq(sentence_from_line(rare_words, strlen(rare_words), &s), CKY_OK);
    cr_assert_eq(s.n, 70);
    maxrule_result r;
    cr_assert_eq(maxrule_parse(g, s.words, s.n, NULL, &r), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(r.scaled, 1, "log likelihood %g without scaling", r.loglik);
    cr_assert(isfinite(r.loglik) && r.loglik < log(4.9e-324), "log likelihood %g", r.loglik);
    cr_assert(isfinite(r.score) && r.score < 0, "max-rule score %g", r.score);
    cr_assert_not_null(r.tree);
    char **words;
    int n;
    cr_assert_eq(tree_words(r.tree, &words, &n), CKY_OK);
    cr_assert_eq(n, 70);
    free(words);
    tree_free(r.tree);
    sentence_free(&s);
    grammar_free(g);
}

/* The scaled passes that follow an unscaled inside pass whose P(sentence) underflowed run on
 * the same chart as scaled passes from the start (force_scaled): the same bits. (The unscaled
 * inside pass leaves its last parent's sums in the chart's scratch; the scaled passes add
 * into it.) sample-sm3: a grammar with substates, so the scratch holds non-zero sums. */
Test(maxrule, underflow_scaled_passes_as_from_the_start)
{
    grammar *g = load(GRAMMARS "sample-sm3/sample-sm3.gr");
    sentence s;
    cr_assert_eq(sentence_from_line(rare_words, strlen(rare_words), &s), CKY_OK);
    maxrule_options forced = {.force_scaled = 1};
    maxrule_result a, b;
    cr_assert_eq(maxrule_parse(g, s.words, s.n, NULL, &a), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(maxrule_parse(g, s.words, s.n, &forced, &b), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(a.scaled, 1, "log likelihood %g without scaling", a.loglik);
    cr_assert_eq(b.scaled, 1);
    cr_assert_not_null(a.tree);
    cr_assert_not_null(b.tree);
    cr_assert(memcmp(&a.loglik, &b.loglik, sizeof a.loglik) == 0, "log P %.17g against %.17g",
              a.loglik, b.loglik);
    cr_assert(memcmp(&a.score, &b.score, sizeof a.score) == 0, "score %.17g against %.17g",
              a.score, b.score);
    char *ta = tree_text(a.tree), *tb = tree_text(b.tree);
    cr_assert_str_eq(ta, tb);
    free(ta);
    free(tb);
    maxrule_result_clear(&a);
    maxrule_result_clear(&b);
    sentence_free(&s);
    grammar_free(g);
}

/* The scaled inside chart of s, with the chart's scratch sums set to `dirt` first (what an
 * unscaled pass before it leaves there); in [cells * nsub] and scales [cells * nsym],
 * malloc'ed. */
static void scaled_inside(const grammar *g, const sentence *s, double dirt, double **in,
                          int **scale, size_t *nin, size_t *nscale)
{
    mr_chart *c;
    cr_assert_eq(mr_chart_take(g, s->n, &c), CKY_OK);
    for (int i = 0; i < s->n; i++)
        cr_assert_eq(lexicon_berkeley_score_linear(g, s->words[i], i, 1, NULL,
                                                   c->lex + (size_t)i * c->nsub),
                     CKY_OK);
    for (int x = 0; x < c->maxsub; x++)
        c->acc[x] = c->acc2[x] = dirt;
    cr_assert_eq(mr_setup_scaling(c), CKY_OK);
    mr_inside_scaled(c);
    *nin = chart_ncells(s->n) * (size_t)c->nsub;
    *nscale = chart_ncells(s->n) * (size_t)c->nsym;
    *in = malloc(*nin * sizeof **in);
    *scale = malloc(*nscale * sizeof **scale);
    memcpy(*in, c->in, *nin * sizeof **in);
    memcpy(*scale, c->iscale, *nscale * sizeof **scale);
    mr_chart_done(c);
}

/* The scaled passes start from zero sums whatever the scratch holds: the unscaled inside
 * pass leaves its last parent's sums there, and a P(sentence) that underflows runs the
 * scaled passes right after it. */
Test(maxrule, scaled_inside_ignores_the_scratch)
{
    grammar *g = load(GRAMMARS "sample-sm3/sample-sm3.gr");
    sentence s;
    const char line[] = "The company said it expects to report a loss for the quarter .";
    cr_assert_eq(sentence_from_line(line, strlen(line), &s), CKY_OK);
    double *in0, *in1;
    int *sc0, *sc1;
    size_t nin, nsc;
    scaled_inside(g, &s, 0, &in0, &sc0, &nin, &nsc);
    scaled_inside(g, &s, 0.5, &in1, &sc1, &nin, &nsc);
    size_t differ = 0;
    for (size_t x = 0; x < nin; x++)
        differ += memcmp(&in0[x], &in1[x], sizeof *in0) != 0;
    for (size_t x = 0; x < nsc; x++)
        differ += sc0[x] != sc1[x];
    cr_assert_eq(differ, 0, "%zu of %zu scores and scales differ", differ, nin + nsc);
    free(in0);
    free(in1);
    free(sc0);
    free(sc1);
    sentence_free(&s);
    grammar_free(g);
}

Test(maxrule, sum_closure_of_native_file_and_text_export)
{
    grammar *g = load(GRAMMARS "sample-sm1/sample-sm1.gr");
    const grammar_sum_closure *s = g->sum;
    cr_assert_not_null(s);
    cr_assert_gt(s->n, g->nsym, "%d sum rules", s->n);
    cr_assert_eq(s->first[0], 0);
    cr_assert_eq(s->first[g->nsym], s->n);
    int *seen = calloc((size_t)s->n, sizeof *seen), restored = 0;
    for (int C = 0; C < g->nsym; C++)
        for (int x = s->child_first[C]; x < s->child_first[C + 1]; x++) {
            cr_assert_eq(s->rule[s->by_child[x]].child, C);
            cr_assert_eq(seen[s->by_child[x]]++, 0, "rule %d listed twice", s->by_child[x]);
        }
    cr_assert_eq(s->child_first[g->nsym], s->n);
    for (int k = 0; k < s->n; k++) {
        const grammar_sum_unary *u = &s->rule[k];
        cr_assert(k >= s->first[u->parent] && k < s->first[u->parent + 1]);
        cr_assert_neq(u->parent, u->child);
        int mid = s->path[u->parent * g->nsym + u->child];
        cr_assert(mid >= -1 && mid < g->nsym);
        restored += mid > 0;
    }
    cr_assert_gt(restored, 0, "no closed sum rule has an intermediate symbol");
    free(seen);
    cr_assert_eq(grammar_check_sum(g), CKY_OK);
    cr_assert_eq(s->max_closure, 0);
    cr_assert_eq(grammar_sum_is_exact(g), 1);
    grammar_free(g);

    g = load(GRAMMARS "sample-sm1/sample-sm1");
    cr_assert_not_null(g->sum);
    cr_assert_eq(g->sum->max_closure, 1);
    cr_assert_eq(g->sum->n, g->nunary);
    cr_assert_eq(grammar_check_sum(g), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(grammar_sum_is_exact(g), 0);
    char *w[] = {"Stocks", "fell", "."};
    maxrule_result r;
    cr_assert_eq(maxrule_parse(g, w, 3, NULL, &r), CKY_OK, "%s", cky_last_error());
    cr_assert(isfinite(r.loglik) && isfinite(r.score), "%g %g", r.loglik, r.score);
    cr_assert_not_null(r.tree);
    tree_free(r.tree);
    grammar_free(g);
}

/* cky parse --decoder maxrule --score prints log P<TAB>max-rule score<TAB>tree. */
Test(maxrule, score_layout)
{
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "echo 'Stocks fell sharply .' | '%s/cky' parse --engine ref "
             "--decoder maxrule --prune none --score -g '%s'", CKY_BUILD,
             GRAMMARS "sample-sm3/sample-sm3.gr");
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0, "%s", out);
    char *tab1 = strchr(out, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    cr_assert(tab1 && tab2, "%s", out);
    double ll = strtod(out, NULL), sc = strtod(tab1 + 1, NULL);
    cr_assert(isfinite(ll) && isfinite(sc) && ll < sc && sc <= 0, "%s", out);
    cr_assert(!strncmp(tab2 + 1, "( (", 3), "%s", out);

    grammar *g = load(GRAMMARS "sample-sm3/sample-sm3.gr");
    char *w[] = {"Stocks", "fell", "sharply", "."};
    maxrule_result r;
    cr_assert_eq(maxrule_parse(g, w, 4, NULL, &r), CKY_OK);
    cr_assert_eq(ll, r.loglik, "printed %s", out);
    cr_assert_eq(sc, r.score, "printed %s", out);
    tree_free(r.tree);
    grammar_free(g);
}

/* The parser's decoder option: max-rule through parser_parse gives maxrule_parse's answer
 * with the ref engine, its trees with the cpu engine (scores to 1e-4); the gpu engine is
 * refused up front, text grammars are accepted; Viterbi leaves loglik at -inf. */
Test(maxrule, parser_dispatch)
{
    grammar *g = load(GRAMMARS "sample-sm1/sample-sm1.gr");
    parser_options opt = parser_default_options();
    cr_assert_eq(opt.decoder, PARSER_DECODER_VITERBI);
    parser *p;
    opt.decoder = PARSER_DECODER_MAXRULE;
    opt.engine = PARSER_ENGINE_GPU; /* every engine has it: no device here is the only error */
    cky_status st = parser_new(g, &opt, &p);
    cr_assert(st == CKY_OK || st == CKY_ERR_NO_DEVICE, "%s", cky_last_error());
    if (!st)
        parser_free(p);
    opt.threads = 2;
    opt.cache_dir = CKY_BUILD "/test-cache";
    const char *lines[] = {"Stocks fell .", "", "The market closed higher on Friday ."};
    sentence s[3];
    parse_result r[3];
    for (int k = 0; k < 3; k++)
        cr_assert_eq(sentence_from_line(lines[k], strlen(lines[k]), &s[k]), CKY_OK);
    for (int e = 0; e < 2; e++) { /* ref: maxrule_parse's bits; cpu: its tree, LL to 1e-4 */
        opt.engine = e ? PARSER_ENGINE_CPU : PARSER_ENGINE_REF;
        cr_assert_eq(parser_new(g, &opt, &p), CKY_OK, "%s", cky_last_error());
        cr_assert_eq(parser_parse(p, s, 3, r), CKY_OK);
        cr_assert_eq(r[1].outcome, PARSE_EMPTY);
        for (int k = 0; k < 3; k += 2) {
            maxrule_result m;
            cr_assert_eq(maxrule_parse(g, s[k].words, s[k].n, NULL, &m), CKY_OK);
            cr_assert_eq(r[k].outcome, PARSE_OK);
            cr_assert(e ? close_rel(r[k].loglik, m.loglik, 1e-4) : r[k].loglik == m.loglik,
                      "engine %d: log likelihood %.17g, maxrule %.17g", e, r[k].loglik,
                      m.loglik);
            cr_assert(e ? close_rel(r[k].score, m.score, 1e-4) : r[k].score == m.score,
                      "engine %d: score %.17g, maxrule %.17g", e, r[k].score, m.score);
            char *a = tree_string(r[k].tree), *b = tree_string(m.tree);
            cr_assert_str_eq(a, b);
            free(a);
            free(b);
            tree_free(m.tree);
        }
        for (int k = 0; k < 3; k++)
            parse_result_clear(&r[k]);
        parser_free(p);
    }

    opt.decoder = PARSER_DECODER_VITERBI;
    cr_assert_eq(parser_new(g, &opt, &p), CKY_OK);
    cr_assert_eq(parser_parse(p, s, 1, r), CKY_OK);
    cr_assert_eq(r[0].outcome, PARSE_OK);
    cr_assert(isinf(r[0].loglik) && r[0].loglik < 0);
    parse_result_clear(&r[0]);
    parser_free(p);
    for (int k = 0; k < 3; k++)
        sentence_free(&s[k]);
    grammar_free(g);

    g = load(GRAMMARS "sample-sm1/sample-sm1");
    opt.decoder = PARSER_DECODER_MAXRULE;
    opt.engine = PARSER_ENGINE_REF;
    cr_assert_eq(parser_new(g, &opt, &p), CKY_OK, "%s", cky_last_error());
    parser_free(p);
    grammar_free(g);
}

/* The output of `cky parse` (malloc'ed) for the shell command `cmd`. */
static char *run_output(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 16;
    char *out = malloc(cap);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0, "%s: %s", cmd, out);
    return out;
}

/* cky parse --engine cpu --decoder maxrule: the same output for two workspace sizes and
 * thread counts, and the ref engine's trees, on eight dev sentences. */
Test(maxrule, cli_cpu_engine, .timeout = 600)
{
    char cmd[3][1024];
    const char *opts[3] = {"--engine cpu --workspace 512 --threads 1",
                           "--engine cpu --workspace 7 --threads 2", "--engine ref"};
    for (int k = 0; k < 3; k++)
        snprintf(cmd[k], sizeof cmd[k], "head -30 '%s' | awk 'NF <= 25' | head -8 | "
                 "CKY_CACHE='%s/test-cache' '%s/cky' parse %s --decoder maxrule -g '%s' | "
                 "cat", DATA "dev.txt", CKY_BUILD, CKY_BUILD, opts[k],
                 GRAMMARS "sample-sm1/sample-sm1.gr");
    char *a = run_output(cmd[0]), *b = run_output(cmd[1]), *r = run_output(cmd[2]);
    int lines = 0;
    for (const char *c = a; *c; c++)
        lines += *c == '\n';
    cr_assert_eq(lines, 8, "%s", a);
    cr_assert_str_eq(a, b, "workspace 512 and 7 differ");
    cr_assert_str_eq(a, r, "cpu and ref trees differ");
    free(a);
    free(b);
    free(r);
}

/* cky parse --decoder maxrule on the text export of sample-sm3: the ref and cpu engines give
 * a tree for every one of six short dev sentences, the same trees, and one note on stderr
 * saying that the trees approximate the Berkeley parser's. */
Test(maxrule, cli_text_export, .timeout = 600)
{
    char cmd[2][1024];
    const char *engines[2] = {"cpu --threads 2", "ref"};
    for (int k = 0; k < 2; k++)
        snprintf(cmd[k], sizeof cmd[k], "head -40 '%s' | awk 'NF <= 15' | head -6 | "
                 "CKY_CACHE='%s/test-cache' '%s/cky' parse --quiet --engine %s --decoder maxrule "
                 "-g '%s' 2>&1 | cat", DATA "dev.txt", CKY_BUILD, CKY_BUILD, engines[k],
                 GRAMMARS "sample-sm3/sample-sm3");
    char *out[2];
    for (int k = 0; k < 2; k++) {
        out[k] = run_output(cmd[k]);
        int lines = 0, notes = 0, trees = 0;
        for (char *c = out[k]; c && *c; c = strchr(c, '\n') ? strchr(c, '\n') + 1 : NULL) {
            lines++;
            notes += !strncmp(c, "cky parse: note: ", 17);
            trees += !strncmp(c, "( (", 3);
        }
        cr_assert_eq(notes, 1, "%s", out[k]);
        cr_assert(strstr(out[k], "text export") && strstr(out[k], "approximate"), "%s", out[k]);
        cr_assert_eq(trees, 6, "%s", out[k]);
        cr_assert_eq(lines, 7, "%s", out[k]);
    }
    cr_assert_str_eq(out[0], out[1], "cpu and ref differ on the text export");
    free(out[0]);
    free(out[1]);
}
