/* check_masks: the coarse-to-fine masks (prune/prune.h) against the Berkeley parser's own
 * (make check-prune; ../shared/reference/berkeley/dev.*.prune-masks*.tsv.gz, made by
 * ../shared/tools/berkeley/PruneMasks.java).
 *
 * For every sentence of the input (K = line number) the cascade runs as the reference file's
 * mode says (--accurate for the -accurate files; the -viterbi files have the default masks),
 * and each level's row (allowed symbols, allowed substates, FNV-1a hash) is compared with the
 * reference row. Prints, per level, how many sentences agree and the first that does not;
 * --dump K prints every allowed item of sentence K as PruneMasks' dump does
 * ("K LEVEL start end state substate"), --rows writes this program's own rows in the
 * reference layout.
 *
 * --final maxrule|viterbi also runs the final pass within the fine mask (maxrule_parse with
 * the mask, or ref_parse_masked and the jar's back-trace) and compares its row with the
 * reference's `final` row: the same tree, log P and score within --tolerance (relative);
 * each sentence that differs is listed with both scores and their gap. --time reports the
 * sentences per second of the cascade and the final pass in this thread's CPU time (the
 * grammar load not counted).
 *
 * Not part of the Criterion suite: a standalone program over the whole dev set (minutes),
 * run by tools/check-prune. Exit status: 0 every level of every sentence agrees, 1 a
 * difference or an error, 2 a usage error. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "../../grammar/grammar.h"
#include "../../decoders/maxrule/maxrule.h"
#include "../../engines/ref/ref.h"
#include "../../corpus_tools/sentence.h"
#include "../../prune/prune.h"
#include "../../util/io.h"
#include "../../decoders/viterbi/viterbi.h"

#define PROG "check_masks"
#define MAX_SENTENCES 100000

static const char usage_text[] =
    "usage: check_masks -g GRAMMAR -i SENTENCES -r REFERENCE.tsv.gz [OPTIONS]\n"
    "\n"
    "Run the coarse-to-fine cascade on one tokenized sentence per line and compare each\n"
    "level's allowed items with the Berkeley parser's (PruneMasks.java rows).\n"
    "\n"
    "options:\n"
    "  -g, --grammar GRAMMAR   a native Berkeley .gr file\n"
    "  -i, --input FILE        sentences, one per line, plain or gzipped\n"
    "  -r, --reference FILE    PruneMasks rows (.tsv or .tsv.gz)\n"
    "      --accurate          the jar's -accurate thresholds\n"
    "      --limit N           the first N sentences only\n"
    "      --dump K            print every allowed item of sentence K\n"
    "      --rows FILE         write this program's rows (the reference layout) to FILE\n"
    "      --final DECODER     maxrule or viterbi: also the final pass within the mask,\n"
    "                          against the reference's final rows\n"
    "      --tolerance REL     relative tolerance of the final scores (default 1e-9)\n"
    "      --min-agree PCT     least percentage of identical final trees (default 99.5)\n"
    "      --time              sentences per second of the cascade and the final pass\n"
    "  -h, --help              this help\n";

typedef struct ref_row {
    long symbols, substates;
    char hash[24]; /* 16 hex digits, or "-" */
} ref_row;

typedef struct reference {
    int nsent, nlevel;
    ref_row *row;    /* [nsent * PRUNE_MAX_LEVELS] */
    char **final;    /* [nsent] the final row's fields after "K\tfinal\t" (NULL: none) */
} reference;

enum { FINAL_NONE, FINAL_MAXRULE, FINAL_VITERBI };

typedef struct options {
    const char *grammar, *input, *reference, *rows;
    int accurate, limit, dump, final, time;
    double tolerance, min_agree;
} options;

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, PROG ": %s\n", msg);
    fputs(usage_text, stderr);
    return 2;
}

static int parse_options(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"grammar", required_argument, NULL, 'g'}, {"input", required_argument, NULL, 'i'},
        {"reference", required_argument, NULL, 'r'}, {"accurate", no_argument, NULL, 'a'},
        {"limit", required_argument, NULL, 'l'}, {"dump", required_argument, NULL, 'd'},
        {"rows", required_argument, NULL, 'w'}, {"final", required_argument, NULL, 'f'},
        {"tolerance", required_argument, NULL, 't'}, {"min-agree", required_argument, NULL, 'm'},
        {"time", no_argument, NULL, 'T'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    memset(o, 0, sizeof *o);
    o->dump = -1;
    o->tolerance = 1e-9;
    o->min_agree = 99.5;
    while ((c = getopt_long(argc, argv, ":g:i:r:h", longs, NULL)) != -1) {
        switch (c) {
        case 'g': o->grammar = optarg; break;
        case 'i': o->input = optarg; break;
        case 'r': o->reference = optarg; break;
        case 'a': o->accurate = 1; break;
        case 'l': o->limit = atoi(optarg); break;
        case 'd': o->dump = atoi(optarg); break;
        case 'w': o->rows = optarg; break;
        case 'f':
            if (!strcmp(optarg, "maxrule"))
                o->final = FINAL_MAXRULE;
            else if (!strcmp(optarg, "viterbi"))
                o->final = FINAL_VITERBI;
            else
                return usage("--final takes maxrule or viterbi");
            break;
        case 't': o->tolerance = atof(optarg); break;
        case 'm': o->min_agree = atof(optarg); break;
        case 'T': o->time = 1; break;
        case 'h': fputs(usage_text, stdout); exit(0);
        default: return usage("unknown option or missing argument");
        }
    }
    if (!o->grammar || !o->input || !o->reference)
        return usage("-g, -i and -r are required");
    return 0;
}

/* ---- the reference file ---- */

static int read_reference(const char *path, reference *ref)
{
    gzFile f = gzopen(path, "rb");
    char line[1 << 16];
    if (!f) {
        fprintf(stderr, PROG ": %s: cannot open\n", path);
        return 1;
    }
    memset(ref, 0, sizeof *ref);
    ref->row = calloc((size_t)MAX_SENTENCES * PRUNE_MAX_LEVELS, sizeof *ref->row);
    ref->final = calloc(MAX_SENTENCES, sizeof *ref->final);
    if (!ref->row || !ref->final) {
        gzclose(f);
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    while (gzgets(f, line, sizeof line)) {
        line[strcspn(line, "\n")] = '\0';
        char *tab = strchr(line, '\t'), *rest;
        long k = strtol(line, NULL, 10);
        if (!tab || k < 1 || k > MAX_SENTENCES)
            continue;
        rest = tab + 1;
        if (k > ref->nsent)
            ref->nsent = (int)k;
        if (!strncmp(rest, "final\t", 6)) {
            ref->final[k - 1] = strdup(rest + 6);
            continue;
        }
        int level;
        ref_row r;
        if (sscanf(rest, "%d\t%ld\t%ld\t%23s", &level, &r.symbols, &r.substates, r.hash) != 4 ||
            level < 0 || level >= PRUNE_MAX_LEVELS) {
            fprintf(stderr, PROG ": %s: bad row: %s\n", path, line);
            gzclose(f);
            return 1;
        }
        ref->row[(size_t)(k - 1) * PRUNE_MAX_LEVELS + level] = r;
        if (level + 1 > ref->nlevel)
            ref->nlevel = level + 1;
    }
    gzclose(f);
    return 0;
}

/* ---- rows and dumps ---- */

static void format_row(const prune_level *l, int k, int level, char *buf, size_t size)
{
    if (l->failed)
        snprintf(buf, size, "%d\t%d\t-1\t-1\t-", k, level);
    else
        snprintf(buf, size, "%d\t%d\t%ld\t%ld\t%016" PRIx64, k, level, l->symbols,
                 l->substates, l->hash);
}

typedef struct dump_ctx {
    int sentence;
} dump_ctx;

/* prune_level_fn: every allowed item of the level, in the hash's order. */
static void dump_level(void *ctx, int level, const grammar *g, const chart_mask *m)
{
    const dump_ctx *d = ctx;
    for (int len = 1; len <= m->n; len++)
        for (int i = 0; i + len <= m->n; i++)
            for (int s = 1; s < g->nsym; s++) {
                if ((len > 1 && !g->phrasal[s]) || !chart_mask_state(m, i, i + len, s))
                    continue;
                for (int x = 0; x < (level >= 1 ? g->nsub[s] : 1); x++)
                    if (level == 0 || chart_mask_sub(m, i, i + len, g->sub_offset[s] + x))
                        printf("%d\t%d\t%d\t%d\t%d\t%d\n", d->sentence, level, i, i + len, s, x);
            }
}

/* ---- the check ---- */

typedef struct tally {
    int equal[PRUNE_MAX_LEVELS], total[PRUNE_MAX_LEVELS], first[PRUNE_MAX_LEVELS];
} tally;

static void compare_levels(const reference *ref, const prune_mask *m, int k, tally *t,
                           FILE *rows)
{
    for (int level = 0; level < m->nlevel; level++) {
        char mine[128], theirs[128];
        const ref_row *r = &ref->row[(size_t)(k - 1) * PRUNE_MAX_LEVELS + level];
        format_row(&m->level[level], k, level, mine, sizeof mine);
        snprintf(theirs, sizeof theirs, "%d\t%d\t%ld\t%ld\t%s", k, level, r->symbols,
                 r->substates, r->hash);
        if (rows)
            fprintf(rows, "%s\n", mine);
        t->total[level]++;
        if (!strcmp(mine, theirs)) {
            t->equal[level]++;
        } else if (!t->first[level]) {
            t->first[level] = k;
            fprintf(stderr, PROG ": first difference at level %d:\n  mine:    %s\n"
                            "  the jar: %s\n", level, mine, theirs);
        }
    }
}

/* ---- the final pass ---- */

typedef struct final_tally {
    int total, trees, scores; /* sentences, identical trees, scores within tolerance */
} final_tally;

/* CPU seconds of this thread (what the passes cost, whatever else runs on the machine). */
static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The tree as the jar prints it ("( (S ...) )", "(())" for none), malloc'ed. */
static char *tree_text(const tree *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    tree_write_line(t, f);
    fclose(f);
    if (len && buf[len - 1] == '\n')
        buf[len - 1] = '\0';
    return buf;
}

static int close_enough(double a, double b, double tol)
{
    if (a == b)
        return 1;
    return isfinite(a) && isfinite(b) && fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

/* The final pass of sentence k within the mask; 1 on an error. */
static int run_final(const options *o, const grammar *g, const sentence *s, const prune_mask *m,
                     double *loglik, double *score, char **text)
{
    tree *t = NULL;
    cky_status st;
    if (o->final == FINAL_MAXRULE) {
        maxrule_options mo = {0};
        maxrule_result r;
        mo.mask = &m->fine;
        st = maxrule_parse(g, s->words, s->n, &mo, &r);
        *loglik = r.loglik;
        *score = r.score;
        t = r.tree;
    } else {
        chart *c = NULL;
        st = ref_parse_masked(g, s->words, s->n, CHART_DOUBLE, &m->fine, &c);
        if (!st) {
            *loglik = *score = chart_post(c, 0, s->n)[g->sub_offset[0]];
            st = viterbi_extract_masked(g, c, s->words, VITERBI_BERKELEY, &m->fine, &t);
            t = tree_unannotate(t);
        }
        chart_free(c);
    }
    if (st) {
        tree_free(t);
        fprintf(stderr, PROG ": %s\n", cky_last_error());
        return 1;
    }
    *text = tree_text(t);
    tree_free(t);
    return !*text;
}

/* Compare with the reference's final row "LOGLIK\tSCORE\tTREE"; list a difference. */
static void compare_final(const options *o, const reference *ref, int k, double loglik,
                          double score, const char *text, final_tally *t)
{
    const char *row = ref->final[k - 1];
    char *end1, *end2;
    t->total++;
    if (!row) {
        printf("final %d: no reference row\n", k);
        return;
    }
    double jll = strtod(row, &end1), jsc = strtod(end1, &end2);
    const char *jtree = *end2 == '\t' ? end2 + 1 : end2;
    int same_tree = !strcmp(text, jtree);
    int same_scores = close_enough(loglik, jll, o->tolerance) && close_enough(score, jsc, o->tolerance);
    t->trees += same_tree;
    t->scores += same_scores;
    if (!same_tree || !same_scores)
        printf("final %d: %s%s log P %.17g (jar %.17g), score %.17g (jar %.17g), gap %.6g\n", k,
               same_tree ? "" : "tree differs; ", same_scores ? "" : "scores differ; ", loglik,
               jll, score, jsc, jsc - score);
}

int main(int argc, char **argv)
{
    options o;
    reference ref;
    grammar *g = NULL;
    prune_plan *plan = NULL;
    io_lines *in = NULL;
    FILE *rows = NULL;
    tally t;
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;
    if (read_reference(o.reference, &ref))
        return 1;
    if (grammar_load(o.grammar, &g) || prune_new_plan(g, &plan) || io_lines_open(o.input, &in)) {
        fprintf(stderr, PROG ": %s\n", cky_last_error());
        return 1;
    }
    if (o.rows && !(rows = fopen(o.rows, "w"))) {
        fprintf(stderr, PROG ": %s: cannot write\n", o.rows);
        return 1;
    }
    memset(&t, 0, sizeof t);
    final_tally ft = {0};
    double t_mask = 0, t_final = 0;
    char *text;
    size_t len;
    int k = 0, failed = 0;
    while (!io_lines_next(in, &text, &len) && text && (!o.limit || k < o.limit)) {
        sentence s;
        prune_mask m;
        dump_ctx d = {++k};
        if (k > ref.nsent) {
            fprintf(stderr, PROG ": the reference has %d sentences\n", ref.nsent);
            failed = 1;
            break;
        }
        double t0 = seconds();
        if (sentence_from_line(text, len, &s) || s.n < 1 ||
            prune_build_mask(plan, s.words, s.n, o.accurate ? PRUNE_ACCURATE : PRUNE_FAST,
                             k == o.dump ? dump_level : NULL, &d, &m)) {
            fprintf(stderr, PROG ": sentence %d: %s\n", k, s.n < 1 ? "empty" : cky_last_error());
            sentence_free(&s);
            failed = 1;
            break;
        }
        if (m.nlevel != ref.nlevel) {
            fprintf(stderr, PROG ": %d levels, the reference has %d\n", m.nlevel, ref.nlevel);
            failed = 1;
        }
        double t1 = seconds();
        t_mask += t1 - t0;
        compare_levels(&ref, &m, k, &t, rows);
        if (o.final) {
            double loglik, score;
            char *tree_str = NULL;
            t1 = seconds();
            if (run_final(&o, g, &s, &m, &loglik, &score, &tree_str)) {
                failed = 1;
            } else {
                t_final += seconds() - t1;
                compare_final(&o, &ref, k, loglik, score, tree_str, &ft);
            }
            free(tree_str);
        }
        prune_free_mask(&m);
        sentence_free(&s);
        if (failed)
            break;
    }
    for (int level = 0; level < ref.nlevel; level++) {
        printf("level %d: %d of %d sentences equal", level, t.equal[level], t.total[level]);
        if (t.first[level])
            printf(" (first difference: sentence %d)", t.first[level]);
        printf("\n");
        failed |= t.equal[level] != t.total[level];
    }
    if (o.final) {
        double pct = ft.total ? 100.0 * ft.trees / ft.total : 0;
        printf("final: %d of %d trees identical (%.2f%%), %d of %d with log P and score within "
               "%g\n", ft.trees, ft.total, pct, ft.scores, ft.total, o.tolerance);
        failed |= pct < o.min_agree;
    }
    if (o.time)
        printf("time (CPU of this thread): %d sentences, cascade %.3f s (%.1f sentences/s), "
               "final pass %.3f s, together %.1f sentences/s\n", k, t_mask, k / t_mask, t_final,
               k / (t_mask + t_final));
    if (rows)
        fclose(rows);
    io_lines_close(in);
    prune_free_plan(plan);
    grammar_free(g);
    return failed;
}
