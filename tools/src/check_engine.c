/* check_engine: the long acceptance check of the CPU generated path (make check-cpu).
 *
 * Parses the sentences of a file in batches with the cpu engine (the generated float32
 * kernels, engines/cpu/cpu.h) and checks every chart against the reference parser
 * (engines/ref/ref.h):
 *
 *   --against float   the float32 reference chart must be identical bit for bit (every cell,
 *                     both layers), and so must the exact trees extracted from both charts
 *                     (the viterbi_node arrays and the written Penn Treebank trees);
 *   --against double  the exact trees of the cpu engine's chart are compared with those of
 *                     the double-precision reference (the Berkeley parser's arithmetic). They
 *                     may differ only where two parses are within float32 rounding of each
 *                     other: for every sentence the float tree is re-scored in double and its
 *                     gap to the double root score must be >= 0, below --max-gap and below
 *                     the rounding bound of the two trees (see check_double_one).
 *
 * With --arith fixed the cpu engine runs its fixed-point kernels (util/fixedpoint.h) and
 * --against float compares with the reference in that arithmetic (CHART_FIXED).
 *
 * Not part of the Criterion suite: a standalone program over the whole dev set (minutes),
 * run by tools/check-cpu. Exit status: 0 all checks passed, 1 a mismatch or an error,
 * 2 a usage error. */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../corpus_tools/tree.h"
#include "../../grammar/grammar.h"
#include "../../chart/chart.h"
#include "../../engines/cpu/cpu.h"
#include "../../engines/ref/ref.h"
#include "../../corpus_tools/sentence.h"
#include "../../util/clock.h"
#include "../../util/io.h"
#include "../../util/workers.h"
#include "../../decoders/viterbi/viterbi.h"

#define PROG "check_engine"

/* Default bound on the gap between the double root score and the double score of the float
 * path's tree. Both trees' float scores drift from their double scores by the float32
 * roundings along them: for a 30-word sentence about 60 binary and unary rule applications
 * (two or three float adds each, plus the float rounding of every rule weight and lexical
 * score), on partial sums of magnitude up to |root| ~ 100..300 nats, where half an ulp is
 * 2^-24 * 256 ~ 1.5e-5 nats. The roundings have random signs, so a typical drift is ~1e-4;
 * the worst case, every rounding the same way on the largest partial sums, is a few 1e-3.
 * The float tree can only lose against the double argmax by the two drifts together, so a
 * gap above 1e-3 nats is not a near-tie any more but a sign of a wrong rule or chart. The
 * exact per-sentence rounding bound (check_double_one) is checked as well. */
#define DEFAULT_MAX_GAP 1e-3
#define DEFAULT_MIN_AGREE 99.5
#define DEFAULT_MAX_LENGTH 40
#define DEFAULT_BATCH 32

static const char usage_text[] =
    "usage: check_engine -g GRAMMAR -i SENTENCES --against float|double [OPTIONS]\n"
    "\n"
    "Parse one tokenized sentence per line with the cpu engine (generated float32 kernels) and\n"
    "check its charts and exact trees against the reference parser.\n"
    "\n"
    "options:\n"
    "  -g, --grammar GRAMMAR   a Berkeley .gr file, or the prefix of a text export\n"
    "  -i, --input FILE        sentences, one per line, plain or gzipped\n"
    "      --against MODE      float: charts bit-identical to the float32 reference, trees\n"
    "                          identical; double: trees against the double reference, gaps\n"
    "                          of differing trees within float32 rounding\n"
    "      --arith float|fixed the cpu engine's binary arithmetic (default float); --against\n"
    "                          float then compares with the reference in the same one\n"
    "      --max-length N      check sentences of 1..N words (default 40)\n"
    "      --threads N         CPU threads (default: one per core)\n"
    "      --batch N           sentences per cpu engine batch (default 32)\n"
    "      --min-agree PCT     double: least percentage of identical trees (default 99.5)\n"
    "      --max-gap NATS      double: largest allowed score gap (default 1e-3)\n"
    "  -h, --help              this help\n";

typedef struct options {
    const char *grammar, *input;
    int against_double;
    int fixed; /* --arith fixed */
    int max_length, threads, batch;
    double min_agree, max_gap;
} options;

/* ---- options ----------------------------------------------------------------------- */

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, PROG ": ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\ntry '" PROG " --help'\n");
    return 2;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno || !(v >= lo && v <= hi))
        return 0;
    *out = v;
    return 1;
}

/* Returns 0, or the exit status of a usage error (or -1 after --help). */
static int read_options(int argc, char **argv, options *o)
{
    enum { OPT_AGAINST = 256, OPT_MAXLEN, OPT_THREADS, OPT_BATCH, OPT_AGREE, OPT_GAP,
           OPT_ARITH };
    static const struct option longs[] = {
        {"grammar", required_argument, 0, 'g'},
        {"input", required_argument, 0, 'i'},
        {"against", required_argument, 0, OPT_AGAINST},
        {"arith", required_argument, 0, OPT_ARITH},
        {"max-length", required_argument, 0, OPT_MAXLEN},
        {"threads", required_argument, 0, OPT_THREADS},
        {"batch", required_argument, 0, OPT_BATCH},
        {"min-agree", required_argument, 0, OPT_AGREE},
        {"max-gap", required_argument, 0, OPT_GAP},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    *o = (options){.against_double = -1, .max_length = DEFAULT_MAX_LENGTH,
                   .batch = DEFAULT_BATCH, .min_agree = DEFAULT_MIN_AGREE,
                   .max_gap = DEFAULT_MAX_GAP};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":g:i:h", longs, NULL)) != -1) {
        switch (c) {
        case 'g': o->grammar = optarg; break;
        case 'i': o->input = optarg; break;
        case OPT_AGAINST:
            if (!strcmp(optarg, "float"))
                o->against_double = 0;
            else if (!strcmp(optarg, "double"))
                o->against_double = 1;
            else
                return usage_error("--against takes float or double, not '%s'", optarg);
            break;
        case OPT_ARITH:
            if (strcmp(optarg, "float") && strcmp(optarg, "fixed"))
                return usage_error("--arith takes float or fixed, not '%s'", optarg);
            o->fixed = !strcmp(optarg, "fixed");
            break;
        case OPT_MAXLEN:
            if (!parse_int(optarg, 1, 100000, &o->max_length))
                return usage_error("--max-length takes a number from 1 to 100000, not '%s'",
                                   optarg);
            break;
        case OPT_THREADS:
            if (!parse_int(optarg, 1, 1024, &o->threads))
                return usage_error("--threads takes a number from 1 to 1024, not '%s'", optarg);
            break;
        case OPT_BATCH:
            if (!parse_int(optarg, 1, 100000, &o->batch))
                return usage_error("--batch takes a number from 1 to 100000, not '%s'", optarg);
            break;
        case OPT_AGREE:
            if (!parse_double(optarg, 0, 100, &o->min_agree))
                return usage_error("--min-agree takes a percentage from 0 to 100, not '%s'",
                                   optarg);
            break;
        case OPT_GAP:
            if (!parse_double(optarg, 0, INFINITY, &o->max_gap))
                return usage_error("--max-gap takes a number >= 0, not '%s'", optarg);
            break;
        case 'h': fputs(usage_text, stdout); return -1;
        case ':': return usage_error("option %s needs a value", argv[optind - 1]);
        default: return usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!o->grammar || !o->input)
        return usage_error("%s", "a grammar (-g) and an input file (-i) are needed");
    if (o->against_double < 0)
        return usage_error("%s", "--against float or --against double is needed");
    if (o->threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        o->threads = cores > 0 ? (int)cores : 1;
    }
    return 0;
}

/* ---- trees ------------------------------------------------------------------------- */

/* The exact best parse of a chart: the extraction array (NULL when there is no parse) and
 * the un-annotated tree as tree_write_line writes it ("(())\n" when there is no parse). */
typedef struct best {
    viterbi_node *nodes;
    char *text;
} best;

static void best_free(best *b)
{
    free(b->nodes);
    free(b->text);
    b->nodes = NULL;
    b->text = NULL;
}

/* tree_write_line of `t` into a malloc'ed string. */
static cky_status tree_text(const tree *t, char **out)
{
    size_t size;
    FILE *f = open_memstream(out, &size);
    if (!f)
        return cky_fail(CKY_ERR_NOMEM, "out of memory writing a tree");
    tree_write_line(t, f);
    if (fclose(f)) {
        free(*out);
        *out = NULL;
        return cky_fail(CKY_ERR_NOMEM, "out of memory writing a tree");
    }
    return CKY_OK;
}

static cky_status best_extract(const grammar *g, const chart *c, char *const *words, best *b)
{
    memset(b, 0, sizeof *b);
    if (chart_post(c, 0, c->n)[g->sub_offset[0]] == -INFINITY)
        return tree_text(NULL, &b->text);
    b->nodes = malloc((size_t)(2 * c->n - 1) * sizeof *b->nodes);
    if (!b->nodes)
        return cky_fail(CKY_ERR_NOMEM, "out of memory for an extraction array");
    tree *t = NULL;
    cky_status st = viterbi_extract_array(g, c, b->nodes);
    if (!st)
        st = viterbi_array_to_tree(g, b->nodes, c->n, words, &t);
    if (!st)
        st = tree_text(t = tree_unannotate(t), &b->text);
    tree_free(t);
    if (st)
        best_free(b);
    return st;
}

/* Index of the first node where two extraction arrays of n words differ, or -1. */
static int first_node_difference(const viterbi_node *a, const viterbi_node *b, int n)
{
    for (int p = 0; p < 2 * n - 1; p++)
        if (a[p].width != b[p].width || a[p].top_sym != b[p].top_sym ||
            a[p].top_sub != b[p].top_sub || a[p].bot_sym != b[p].bot_sym ||
            a[p].bot_sub != b[p].bot_sub)
            return p;
    return -1;
}

/* ---- re-scoring a tree ------------------------------------------------------------- */

/* Double log score of rule P -> L R at substates (p, l, r); -inf if the grammar lacks it. */
static double binary_weight(const grammar *g, int P, int p, int L, int l, int R, int r)
{
    for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++) {
        const grammar_binary *rule = &g->binary[b];
        if (rule->left != L || rule->right != R)
            continue;
        int lo = 0, hi = rule->nrow - 1; /* rows ascend in (l, r) */
        while (lo <= hi) {
            int mid = lo + (hi - lo) / 2;
            int cmp = rule->row_l[mid] != l ? rule->row_l[mid] - l : rule->row_r[mid] - r;
            if (cmp == 0)
                return rule->score[(size_t)mid * g->nsub[P] + p];
            if (cmp < 0)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
    }
    return -INFINITY;
}

/* Double log score of the closed unary P -> C at substates (p, c); -inf if absent. */
static double unary_weight(const grammar *g, int P, int p, int C, int c)
{
    for (int u = g->unary_first[P]; u < g->unary_first[P + 1]; u++)
        if (g->unary[u].child == C)
            return g->unary[u].score[(size_t)c * g->nsub[P] + p];
    return -INFINITY;
}

/* The score of the tree `nodes` (n words) in the arithmetic of `lex->mode`, in the order of
 * chart_binary and chart_unary, with the lexical scores of the span-1 pre-unary layer of
 * `lex` (a chart of the same sentence). A tree that is the argmax of a chart of that mode
 * re-scores to exactly its root score. top and start are scratch arrays of 2n - 1 entries
 * (node scores and first words). A rule missing from the grammar scores -inf. */
static double rescore(const grammar *g, const viterbi_node *nodes, const chart *lex,
                      double *top, int *start)
{
    int n = lex->n, m = 2 * n - 1;
    chart_mode mode = lex->mode;
    start[0] = 0;
    for (int p = 0; p < m; p++) /* word offsets: children come after their parent */
        if (nodes[p].width > 1) {
            int right = p + 2 * nodes[p + 1].width;
            start[p + 1] = start[p];
            start[right] = start[p] + nodes[p + 1].width;
        }
    for (int p = m - 1; p >= 0; p--) { /* children before parents */
        const viterbi_node *t = &nodes[p];
        double bot;
        if (t->width == 1) {
            bot = chart_pre(lex, start[p], start[p] + 1)[g->sub_offset[t->bot_sym] + t->bot_sub];
        } else {
            int left = p + 1, right = p + 2 * nodes[p + 1].width;
            double w = binary_weight(g, t->bot_sym, t->bot_sub, nodes[left].top_sym,
                                     nodes[left].top_sub, nodes[right].top_sym,
                                     nodes[right].top_sub);
            bot = chart_binary(mode, w, top[left], top[right]);
        }
        if (t->bot_sym == t->top_sym && t->bot_sub == t->top_sub)
            top[p] = bot;
        else
            top[p] = chart_unary(mode, unary_weight(g, t->top_sym, t->top_sub, t->bot_sym,
                                                    t->bot_sub), bot);
    }
    return top[0];
}

/* ---- checking one sentence --------------------------------------------------------- */

/* What the check of one sentence found. */
typedef struct verdict {
    char *error;       /* the sentence could not be checked (malloc'ed message) */
    int chart_same;    /* float: chart_compare found nothing */
    int tree_same;     /* the written un-annotated trees are identical */
    int nodes_same;    /* the extraction arrays are identical */
    char chart_msg[320]; /* float: the first differing cell */
    char msg[320];       /* the first differing tree node, or what is wrong with the gap */
    double gap, bound; /* double: root score minus the float tree's double score; bound */
    double root;       /* double: the double root score */
    int bad;           /* double: gap negative, over --max-gap or over the bound */
} verdict;

/* The work shared by the threads of one batch. */
typedef struct batch_job {
    const grammar *g;
    const options *o;
    const sentence *s;
    chart **cpu;       /* the cpu engine's charts */
    verdict *v;
} batch_job;

static void verdict_error(verdict *v, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s: %s", what, cky_last_error());
    v->error = strdup(buf);
    if (!v->error)
        v->error = strdup("out of memory");
}

/* Compare the trees of two charts: node arrays and written trees. */
static void compare_best(const grammar *g, const best *a, const best *b, int n, verdict *v)
{
    v->tree_same = strcmp(a->text, b->text) == 0;
    if (!a->nodes || !b->nodes) {
        v->nodes_same = !a->nodes && !b->nodes;
        return;
    }
    int p = first_node_difference(a->nodes, b->nodes, n);
    v->nodes_same = p < 0;
    if (p >= 0)
        snprintf(v->msg, sizeof v->msg, "first differing node %d (prefix order): %s_%d over "
                 "%s_%d, %d words, vs %s_%d over %s_%d, %d words", p,
                 g->name[a->nodes[p].top_sym], a->nodes[p].top_sub,
                 g->name[a->nodes[p].bot_sym], a->nodes[p].bot_sub, a->nodes[p].width,
                 g->name[b->nodes[p].top_sym], b->nodes[p].top_sub,
                 g->name[b->nodes[p].bot_sym], b->nodes[p].bot_sub, b->nodes[p].width);
}

/* --against float: the cpu chart against the float32 reference (fixed: the reference in
 * fixed point), then both exact trees. */
static void check_float_one(const grammar *g, const sentence *s, const chart *cpu, verdict *v)
{
    chart *ref;
    if (ref_parse(g, s->words, s->n, cpu->mode, &ref)) {
        verdict_error(v, "float reference");
        return;
    }
    v->chart_same = !chart_compare(cpu, ref, v->chart_msg, sizeof v->chart_msg);
    best a, b;
    if (best_extract(g, cpu, s->words, &a)) {
        verdict_error(v, "exact extraction from the cpu chart");
    } else {
        if (best_extract(g, ref, s->words, &b)) {
            verdict_error(v, "exact extraction from the reference chart");
        } else {
            compare_best(g, &a, &b, s->n, v);
            best_free(&b);
        }
        best_free(&a);
    }
    chart_free(ref);
}

/* The gap checks of --against double, for a sentence both charts parse. Let D_x and F_x be
 * the double and float scores of tree x, d the double argmax, f the float one. Rounded
 * addition is monotone, so no tree re-scores above its chart's root: D_f <= D_d = the double
 * root, F_d <= F_f = the float root. Hence 0 <= gap = D_d - D_f and
 *     gap = (D_d - F_d) + (F_d - F_f) + (F_f - D_f) <= (D_d - F_d) + (F_f - D_f) = bound,
 * the float32 drift of the two trees, computed exactly here: a gap beyond it means the cpu
 * chart is not the float argmax chart. A negative gap means a broken re-scoring or chart. */
static void check_gap(const grammar *g, const options *o, const chart *cpu, const chart *dbl,
                      const best *f, const best *d, verdict *v)
{
    int m = 2 * dbl->n - 1;
    double *top = malloc((size_t)m * sizeof *top);
    int *start = malloc((size_t)m * sizeof *start);
    if (!top || !start) {
        free(top);
        free(start);
        v->error = strdup("out of memory re-scoring a tree");
        return;
    }
    double Dd = chart_post(dbl, 0, dbl->n)[g->sub_offset[0]];
    double Ff = chart_post(cpu, 0, cpu->n)[g->sub_offset[0]];
    double Df = rescore(g, f->nodes, dbl, top, start);
    double Fd = rescore(g, d->nodes, cpu, top, start);
    double Dd2 = rescore(g, d->nodes, dbl, top, start);
    double Ff2 = rescore(g, f->nodes, cpu, top, start);
    free(top);
    free(start);
    v->root = Dd;
    v->gap = Dd - Df;
    v->bound = (Dd - Fd) + (Ff - Df);
    if (Dd2 != Dd || Ff2 != Ff) {
        v->bad = 1;
        snprintf(v->msg, sizeof v->msg, "re-scoring is off: double tree %.17g vs root %.17g, "
                 "float tree %.17g vs root %.17g", Dd2, Dd, Ff2, Ff);
    } else if (!(v->gap >= 0) || v->gap > o->max_gap ||
               v->gap > v->bound + 4 * DBL_EPSILON * fabs(Dd)) {
        v->bad = 1;
        snprintf(v->msg, sizeof v->msg, "gap %.3g is %s", v->gap,
                 !(v->gap >= 0) ? "negative" : v->gap > o->max_gap ? "over --max-gap"
                                                                   : "over the rounding bound");
    }
}

/* --against double: the cpu engine's exact tree against the double reference's. */
static void check_double_one(const grammar *g, const options *o, const sentence *s,
                             const chart *cpu, verdict *v)
{
    chart *dbl;
    if (ref_parse(g, s->words, s->n, CHART_DOUBLE, &dbl)) {
        verdict_error(v, "double reference");
        return;
    }
    best f, d;
    if (best_extract(g, cpu, s->words, &f)) {
        verdict_error(v, "exact extraction from the cpu chart");
    } else {
        if (best_extract(g, dbl, s->words, &d)) {
            verdict_error(v, "exact extraction from the double chart");
        } else {
            compare_best(g, &f, &d, s->n, v);
            v->msg[0] = '\0'; /* the node message: not needed, the gap says more */
            if (f.nodes && d.nodes) {
                check_gap(g, o, cpu, dbl, &f, &d, v);
            } else if (f.nodes || d.nodes) {
                v->bad = 1;
                v->gap = INFINITY;
                snprintf(v->msg, sizeof v->msg, "only the %s chart has a parse",
                         f.nodes ? "cpu" : "double");
            }
            best_free(&d);
        }
        best_free(&f);
    }
    chart_free(dbl);
}

static cky_status check_sentence(void *arg, long k, int worker)
{
    batch_job *jb = arg;
    if (jb->o->against_double)
        check_double_one(jb->g, jb->o, &jb->s[k], jb->cpu[k], &jb->v[k]);
    else
        check_float_one(jb->g, &jb->s[k], jb->cpu[k], &jb->v[k]);
    chart_free(jb->cpu[k]); /* keeps memory bounded by the batch */
    jb->cpu[k] = NULL;
    return CKY_OK;
}

/* ---- the run ----------------------------------------------------------------------- */

typedef struct tally {
    long checked, chart_same, tree_same, nodes_same, errors, bad;
    double max_gap;
    long max_gap_line;
} tally;

/* Print the mismatch line of one sentence (if any) and count it. */
static void report(const options *o, const sentence *s, long line, const verdict *v, tally *t)
{
    t->checked++;
    t->chart_same += v->chart_same;
    if (!o->against_double && !v->chart_same && v->chart_msg[0])
        printf("line %ld (%d words): chart differs: %s\n", line, s->n, v->chart_msg);
    if (v->error) {
        t->errors++;
        printf("line %ld (%d words): error: %s\n", line, s->n, v->error);
        return;
    }
    t->nodes_same += v->nodes_same;
    /* float: identical arrays and written trees; double: identical Penn Treebank trees */
    t->tree_same += o->against_double ? v->tree_same : v->tree_same && v->nodes_same;
    if (!o->against_double) {
        if (!v->nodes_same || !v->tree_same)
            printf("line %ld (%d words): trees differ: %s\n", line, s->n,
                   v->nodes_same ? "the written trees differ" : v->msg);
        return;
    }
    t->bad += v->bad;
    if (v->gap > t->max_gap || t->max_gap_line == 0) {
        t->max_gap = v->gap;
        t->max_gap_line = line;
    }
    if (!v->tree_same || v->bad)
        printf("line %ld (%d words): trees %s, gap %.6g nats (relative %.3g), rounding bound "
               "%.3g%s%s\n", line, s->n, v->tree_same ? "identical" : "differ", v->gap,
               v->gap / fabs(v->root), v->bound, v->bad ? ": FAIL: " : "", v->msg);
}

/* Parse and check the sentences of `c` batch by batch; prints mismatches as it goes. */
static int run_batches(const grammar *g, const options *o, cpu_engine *e, const sentence_list *c,
                       tally *t)
{
    chart **charts = calloc((size_t)o->batch, sizeof *charts);
    verdict *v = calloc((size_t)o->batch, sizeof *v);
    if (!charts || !v) {
        free(charts);
        free(v);
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    double t0 = clock_seconds();
    int rc = 0;
    for (int first = 0; first < c->n && !rc; first += o->batch) {
        int n = c->n - first < o->batch ? c->n - first : o->batch;
        if (cpu_engine_parse(e, c->s + first, n, charts)) {
            fprintf(stderr, PROG ": cpu engine, batch from line %ld: %s\n", c->line[first],
                    cky_last_error());
            rc = 1;
            break;
        }
        memset(v, 0, (size_t)n * sizeof *v);
        batch_job jb = {.g = g, .o = o, .s = c->s + first, .cpu = charts, .v = v};
        workers_for(o->threads, n, check_sentence, &jb);
        for (int k = 0; k < n; k++) {
            report(o, &c->s[first + k], c->line[first + k], &v[k], t);
            free(v[k].error);
        }
        fflush(stdout);
        fprintf(stderr, PROG ": %d/%d sentences checked, %.1f s\n", first + n, c->n,
                clock_seconds() - t0);
    }
    free(charts);
    free(v);
    return rc;
}

static double percent(long a, long b) { return b ? 100.0 * (double)a / (double)b : 100.0; }

/* Print the summary line; returns the exit status. */
static int summarize(const options *o, const sentence_list *c, const tally *t, double seconds)
{
    printf("%s on %s, --arith %s, --against %s, 1..%d words: %ld sentences checked (%ld "
           "skipped), ", o->grammar, o->input, o->fixed ? "fixed" : "float",
           o->against_double ? "double" : "float", o->max_length,
           t->checked, c->skipped);
    if (!o->against_double) {
        int ok = t->errors == 0 && t->chart_same == t->checked && t->tree_same == t->checked;
        printf("charts identical %ld/%ld, trees identical %ld/%ld, errors %ld, %.0f s: %s\n",
               t->chart_same, t->checked, t->tree_same, t->checked, t->errors, seconds, ok ? "PASS" : "FAIL");
        return !ok;
    }
    double agree = percent(t->tree_same, t->checked);
    int ok = t->errors == 0 && t->bad == 0 && agree >= o->min_agree;
    char where[48] = "";
    if (t->max_gap != 0)
        snprintf(where, sizeof where, " (line %ld)", t->max_gap_line);
    printf("identical trees %ld/%ld (%.2f%%; annotated trees %ld), largest gap %.3g nats%s, "
           "gap failures %ld, errors %ld, %.0f s: %s\n", t->tree_same, t->checked, agree,
           t->nodes_same, t->max_gap, where, t->bad, t->errors, seconds, ok ? "PASS" : "FAIL");
    if (agree < o->min_agree)
        printf("FAIL: agreement %.2f%% is below --min-agree %.2f%%\n", agree, o->min_agree);
    return !ok;
}

int main(int argc, char **argv)
{
    options o;
    int rc = read_options(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    double t0 = clock_seconds();
    sentence_list c;
    if (sentence_read_file(o.input, o.max_length, &c)) {
        fprintf(stderr, PROG ": %s\n", cky_last_error());
        return 1;
    }
    grammar *g = NULL;
    cpu_engine *e = NULL;
    tally t = {0};
    if (grammar_load(o.grammar, &g)) {
        fprintf(stderr, PROG ": %s\n", cky_last_error());
        rc = 1;
    } else if (cpu_engine_new(g, &(cpu_engine_options){.threads = o.threads, .fixed = o.fixed},
                              &e)) {
        fprintf(stderr, PROG ": cpu engine for %s: %s\n", o.grammar, cky_last_error());
        rc = 1;
    } else {
        fprintf(stderr, PROG ": %d sentences of 1..%d words (%ld skipped), engine ready "
                "after %.1f s\n", c.n, o.max_length, c.skipped, clock_seconds() - t0);
        rc = run_batches(g, &o, e, &c, &t);
        if (!rc)
            rc = summarize(&o, &c, &t, clock_seconds() - t0);
    }
    cpu_engine_free(e);
    grammar_free(g);
    sentence_list_free(&c);
    return rc;
}
