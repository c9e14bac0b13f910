/* cky berkeley: the Berkeley parser's own command line (BerkeleyParser-1.7.jar, class
 * edu.berkeley.nlp.PCFGLA.BerkeleyParser), taken exactly as the jar takes it and run as the
 * cky parse options that write what the jar writes (docs/berkeley.md).
 *
 * One table (`jar_options`) says, for every option of the jar's BerkeleyParser.Options,
 * what cky parse option it becomes, or why it is refused. The jar's reading of its
 * arguments (OptionParser): single-dash names, a flag takes no value, the others the next
 * argument, a later one overrides an earlier one, -h prints the help.
 * What cky parse adds to every run: the jar's cascade (--prune berkeley, or accurate) and
 * no fallback (--prune-fallback off: the jar's (()) where its cascade keeps no tree). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/grammar.h"
#include "cli.h"

typedef enum jar_state {
    JAR_MAPPED,  /* becomes `cky` (a value option: `cky` then the value) */
    JAR_REFUSED  /* cky does not do what it does: refused, `note` says why */
} jar_state;

typedef struct jar_option {
    const char *flag;  /* as the jar spells it */
    const char *value; /* the name of its value (NULL: a flag) */
    int lo, hi;        /* an integer value's range (lo == hi: a file name) */
    jar_state state;
    const char *cky;   /* the cky parse option it becomes (NULL: none) */
    const char *note;  /* for the help and the refusals */
} jar_option;

enum {
    J_GR, J_TOKENIZE, J_VITERBI, J_BINARIZE, J_SCORES, J_KEEP_FUNCTION_LABELS, J_SUBSTATES,
    J_ACCURATE, J_MODEL_SCORE, J_CONFIDENCE, J_SENTENCE_LIKELIHOOD, J_TREE_LIKELIHOOD,
    J_VARIATIONAL, J_RENDER, J_CHINESE, J_INPUT_FILE, J_MAX_LENGTH, J_NTHREADS, J_KBEST,
    J_OUTPUT_FILE, J_GOLD_POS, J_DUMP_POSTERIORS, J_EC_FORMAT, J_NGRAMMARS, J_NOPT
};

#define INT_RANGE(lo, hi) lo, hi
#define NO_RANGE 0, 0

/* In the order of the jar's Options class. */
static const jar_option jar_options[J_NOPT] = {
    [J_GR] = {"-gr", "FILE", NO_RANGE, JAR_MAPPED, "-g", "the grammar, a native .gr file (required)"},
    [J_TOKENIZE] = {"-tokenize", NULL, NO_RANGE, JAR_MAPPED, "--tokenize",
                    "cky's Penn Treebank tokenizer, made to the conventions of the jar's "
                    "PTBLineLexer (not a copy of it); left out with -useGoldPOS, which the "
                    "jar reads untokenized"},
    [J_VITERBI] = {"-viterbi", NULL, NO_RANGE, JAR_MAPPED, "--decoder viterbi",
                   "the Viterbi pass within the cascade, with the jar's back-trace"},
    [J_BINARIZE] = {"-binarize", NULL, NO_RANGE, JAR_MAPPED, "--binarize",
                    "binarized trees, as the grammar has them"},
    [J_SCORES] = {"-scores", NULL, NO_RANGE, JAR_MAPPED, "--scores",
                  "the inside score beside each label; with -viterbi -binarize (the jar's "
                  "max-rule and k-best trees take none: left out without -viterbi; refused "
                  "without -binarize, where the jar's label stripping mangles them)"},
    [J_KEEP_FUNCTION_LABELS] = {"-keepFunctionLabels", NULL, NO_RANGE, JAR_MAPPED, NULL,
                                "no option: accepted for a grammar whose labels the jar's "
                                "FunctionNodeStripper leaves alone (no '-', '=' or '^' after "
                                "the first character: then it changes nothing); refused for a "
                                "grammar trained with function labels"},
    [J_SUBSTATES] = {"-substates", NULL, NO_RANGE, JAR_MAPPED, "--substates",
                     "the substate of each label; with -viterbi -binarize (left out without "
                     "-viterbi and refused without -binarize, as -scores)"},
    [J_ACCURATE] = {"-accurate", NULL, NO_RANGE, JAR_MAPPED, "--prune accurate",
                    "the cascade's -accurate thresholds (without it: --prune berkeley)"},
    [J_MODEL_SCORE] = {"-modelScore", NULL, NO_RANGE, JAR_MAPPED, "--model-score",
                       "the max-rule (or Viterbi) score before the tree; left out with "
                       "-confidence, which the jar prints instead"},
    [J_CONFIDENCE] = {"-confidence", NULL, NO_RANGE, JAR_MAPPED, "--confidence",
                      "log P(tree | words) before the tree"},
    [J_SENTENCE_LIKELIHOOD] = {"-sentence_likelihood", NULL, NO_RANGE, JAR_MAPPED,
                               "--sentence-likelihood", "log P(words) before the tree"},
    [J_TREE_LIKELIHOOD] = {"-tree_likelihood", NULL, NO_RANGE, JAR_MAPPED, "--tree-likelihood",
                           "log P(tree, words) before the tree (the jar leaves out a tree of "
                           "likelihood -Infinity)"},
    [J_VARIATIONAL] = {"-variational", NULL, NO_RANGE, JAR_MAPPED, "--variational",
                       "the variational rule scores instead of max-rule"},
    [J_RENDER] = {"-render", NULL, NO_RANGE, JAR_MAPPED, "--render .",
                  "a picture of each tree in the working folder, as the jar: cky's are SVG, "
                  "NNNNNN.svg after the input line's number (the jar: a PNG named after the "
                  "letters of the line)"},
    [J_CHINESE] = {"-chinese", NULL, NO_RANGE, JAR_REFUSED, NULL,
                   "the jar's Chinese unknown-word features: cky's lexicon has the English "
                   "signatures only, and no Chinese grammar is here"},
    [J_INPUT_FILE] = {"-inputFile", "FILE", NO_RANGE, JAR_MAPPED, "-i",
                      "the input (default: stdin)"},
    [J_MAX_LENGTH] = {"-maxLength", "N", INT_RANGE(1, 100000), JAR_MAPPED, "--max-length",
                      "longer sentences give (()) (default 200, the jar's)"},
    [J_NTHREADS] = {"-nThreads", "N", INT_RANGE(-2147483647 - 1, 2147483647), JAR_MAPPED,
                    "--threads", "host threads (N < 1: 1; without it, cky's default, one per "
                    "core); the output is the jar's single-threaded one whatever N"},
    [J_KBEST] = {"-kbest", "K", INT_RANGE(1, 100000), JAR_MAPPED, "--kbest",
                 "the K best max-rule trees, a blank line after each list; -kbest 1, the "
                 "jar's default, needs no option"},
    [J_OUTPUT_FILE] = {"-outputFile", "FILE", NO_RANGE, JAR_MAPPED, "-o",
                       "the output (default: stdout)"},
    [J_GOLD_POS] = {"-useGoldPOS", NULL, NO_RANGE, JAR_MAPPED, "--gold-pos",
                    "WORD<TAB>TAG lines, a blank line after each sentence; not with "
                    "-nThreads above 1, with which the jar drops the tags"},
    [J_DUMP_POSTERIORS] = {"-dumpPosteriors", NULL, NO_RANGE, JAR_REFUSED, NULL,
                           "the jar's max-rule posteriors in Java serialization "
                           "(GRAMMAR.posteriors): not done"},
    [J_EC_FORMAT] = {"-ec_format", NULL, NO_RANGE, JAR_REFUSED, NULL,
                     "Eugene Charniak's input and output format: not done"},
    [J_NGRAMMARS] = {"-nGrammars", "N", INT_RANGE(-2147483647 - 1, 2147483647), JAR_REFUSED, NULL,
                     "a product of N grammars (GRAMMAR.0, GRAMMAR.1, ...): not done; "
                     "-nGrammars 1, the jar's default, is accepted"},
};

/* What the jar's command line said: each option's last value (flags: "1"). */
typedef struct jar_args {
    const char *value[J_NOPT];
    int num[J_NOPT];
    int translate; /* --translate: print the cky parse command line */
} jar_args;

static const char intro[] =
    "usage: cky berkeley -gr GRAMMAR.gr [JAR OPTIONS] [< INPUT] [> OUTPUT]\n"
    "       cky berkeley --translate -gr GRAMMAR.gr [JAR OPTIONS]\n"
    "\n"
    "The Berkeley parser's command line (java -jar BerkeleyParser-1.7.jar ...), read as the\n"
    "jar reads it, run as the cky parse options that write what the jar writes: its\n"
    "coarse-to-fine cascade (--prune berkeley, or accurate), no fallback where the cascade\n"
    "keeps no tree (--prune-fallback off: the jar's (())). --translate prints that cky parse\n"
    "command line and exits. docs/berkeley.md has the table and the differences.\n"
    "\n"
    "jar options (-h: this help), and what they become:\n";

static void usage(FILE *f)
{
    fputs(intro, f);
    for (int k = 0; k < J_NOPT; k++) {
        const jar_option *o = &jar_options[k];
        char head[64], cky[64];
        snprintf(head, sizeof head, "%s%s%s", o->flag, o->value ? " " : "",
                 o->value ? o->value : "");
        snprintf(cky, sizeof cky, "%s%s%s", o->cky ? o->cky : "-", o->cky && o->value ? " " : "",
                 o->cky && o->value ? o->value : "");
        const char *state = o->state == JAR_REFUSED ? " (refused)" : "";
        char text[1024];
        snprintf(text, sizeof text, "%s%s: %s", cky, state, o->note);
        int col = fprintf(f, "  %-22s  ", head);
        cli_options_wrap(f, text, col, 26, 91);
    }
}

/* The jar's OptionParser over argv[1..argc): each option's value into *a. Returns 0, -1
 * after the help (exit 0), or the exit status of a usage error. */
static int read_jar_args(int argc, char **argv, jar_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(argv[i], "--translate")) {
            a->translate = 1;
            continue;
        }
        int k = 0;
        while (k < J_NOPT && strcmp(argv[i], jar_options[k].flag))
            k++;
        if (k == J_NOPT)
            return cli_usage_error("berkeley", "the Berkeley parser has no option '%s'",
                                   argv[i]);
        const jar_option *o = &jar_options[k];
        if (!o->value) {
            a->value[k] = "1";
            a->num[k] = 1;
            continue;
        }
        if (i + 1 == argc)
            return cli_usage_error("berkeley", "%s needs a value (%s)", o->flag, o->value);
        a->value[k] = argv[++i];
        if (o->lo != o->hi && !cli_int(a->value[k], o->lo, o->hi, &a->num[k]))
            return cli_usage_error("berkeley", "%s takes a number from %d to %d, not '%s'",
                                   o->flag, o->lo, o->hi, a->value[k]);
    }
    if (!a->value[J_GR])
        return cli_usage_error("berkeley", "-gr GRAMMAR is required (a native .gr file)");
    return 0;
}

/* The jar's FunctionNodeStripper.transformLabel would change `label` (of an inner node):
 * its cut, step for step (at the first '-', or an earlier '=' or '^', at an index > 0). */
static int has_function_label(const char *label)
{
    const char *d = strchr(label, '-'), *e = strchr(label, '='), *c = strchr(label, '^');
    long cut = d ? d - label : -1, cut2 = e ? e - label : -1, cut3 = c ? c - label : -1;
    if (cut3 > 0 && (cut3 < cut2 || cut2 == -1))
        cut2 = cut3;
    if (cut2 > 0 && (cut2 < cut || cut <= 0))
        cut = cut2;
    return cut > 0;
}

/* -keepFunctionLabels: 0 if the grammar's labels are ones the jar's stripper leaves alone
 * (then the option changes nothing), else the exit status of an error naming one. */
static int check_function_labels(const char *path)
{
    grammar *g;
    if (grammar_load(path, &g))
        return cli_error("berkeley", "%s", cky_last_error());
    int rc = 0;
    for (int s = 1; s < g->nsym && !rc; s++)
        if (has_function_label(g->name[s]))
            rc = cli_usage_error("berkeley", "-keepFunctionLabels: %s has function labels (%s), "
                                 "which cky parse always strips", path, g->name[s]);
    grammar_free(g);
    return rc;
}

/* Is option k used, given the others (the jar ignores some in some company)? */
static int jar_uses(const jar_args *a, int k)
{
    if (!a->value[k])
        return 0;
    switch (k) {
    case J_TOKENIZE: return !a->num[J_GOLD_POS];
    case J_SCORES:
    case J_SUBSTATES: return a->num[J_VITERBI] && a->num[J_KBEST] <= 1;
    case J_MODEL_SCORE: return !a->num[J_CONFIDENCE];
    case J_KBEST: return a->num[J_KBEST] != 1;
    case J_NGRAMMARS: return a->num[J_NGRAMMARS] != 1;
    case J_KEEP_FUNCTION_LABELS: return 0; /* checked on its own */
    default: return 1;
    }
}

#define MAX_ARGS (3 * J_NOPT + 8)

/* Append the words of `opt` ("--decoder viterbi": two) to argv. */
static void push_words(char **argv, int *n, char *words)
{
    for (char *w = strtok(words, " "); w; w = strtok(NULL, " "))
        argv[(*n)++] = w;
}

/* The cky parse command line of the jar's options *a into argv (argv[0] "parse"; the words
 * in store). Returns 0 or the exit status of a refusal. */
static int translate(const jar_args *a, char **argv, int *argc, char store[][64])
{
    if (a->num[J_GOLD_POS] && a->value[J_NTHREADS] && a->num[J_NTHREADS] > 1)
        return cli_usage_error("berkeley", "-useGoldPOS with -nThreads %d: the jar's "
                               "threads parse without the gold tags (MultiThreadedParserWrapper "
                               "passes none); give -nThreads 1", a->num[J_NTHREADS]);
    for (int k = J_SCORES; k <= J_SUBSTATES; k += J_SUBSTATES - J_SCORES)
        if (jar_uses(a, k) && !a->num[J_BINARIZE])
            return cli_usage_error("berkeley", "%s with -viterbi but without -binarize: the jar "
                                   "then cuts its labels with its FunctionNodeStripper (NP-3 "
                                   "to NP but -LRB--3 kept, 'NP -12.5' to 'NP '); not done "
                                   "(give -binarize)", jar_options[k].flag);
    int n = 0, w = 0;
    argv[n++] = "parse";
    strcpy(store[w], a->num[J_ACCURATE] ? "--prune accurate" : "--prune berkeley");
    push_words(argv, &n, store[w++]);
    strcpy(store[w], "--prune-fallback off");
    push_words(argv, &n, store[w++]);
    for (int k = 0; k < J_NOPT; k++) {
        const jar_option *o = &jar_options[k];
        if (!jar_uses(a, k) || k == J_ACCURATE)
            continue;
        if (o->state == JAR_REFUSED)
            return cli_usage_error("berkeley", "%s is not supported: %s", o->flag, o->note);
        if (!o->cky)
            continue;
        snprintf(store[w], 64, "%s", o->cky);
        push_words(argv, &n, store[w++]);
        if (!o->value)
            continue;
        if (k == J_NTHREADS) {
            snprintf(store[w], 64, "%d", a->num[k] < 1 ? 1 : a->num[k]);
            argv[n++] = store[w++];
        } else {
            argv[n++] = (char *)a->value[k];
        }
    }
    argv[n] = NULL;
    *argc = n;
    return 0;
}

/* A word for a shell: as it is where that is safe, else in single quotes. */
static void print_word(FILE *f, const char *s)
{
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "-_./=:,+@%") == strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        *s == '\'' ? fputs("'\\''", f) : fputc(*s, f);
    fputc('\'', f);
}

int cli_berkeley(int argc, char **argv)
{
    jar_args a;
    int rc = read_jar_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char *pargv[MAX_ARGS + 1];
    char store[2 * J_NOPT + 4][64];
    int pargc = 0;
    if ((rc = translate(&a, pargv, &pargc, store)))
        return rc;
    if (a.value[J_KEEP_FUNCTION_LABELS] && (rc = check_function_labels(a.value[J_GR])))
        return rc;
    if (a.translate) {
        fputs("cky", stdout);
        for (int k = 0; k < pargc; k++) {
            fputc(' ', stdout);
            print_word(stdout, pargv[k]);
        }
        fputc('\n', stdout);
        return 0;
    }
    return cli_parse(pargc, pargv);
}
