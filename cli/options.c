/* options: the command line's one table of options and its reader (see options.h). */
#include "options.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "multi.h"

typedef enum kind {
    FLAG,   /* no value */
    INT,    /* an integer in lo .. hi */
    TEXT,   /* one value, given once */
    LIST,   /* a value, repeatable */
    CHOICE, /* one of the names of `names` */
} kind;

typedef struct option_def {
    const char *name; /* --name */
    char letter;      /* -x, or 0 */
    const char *value; /* the value's name in the help (NULL: a flag) */
    kind kind;
    int lo, hi;        /* INT */
    const char *def;   /* the default, for the help (NULL: none said) */
    const char *help;  /* NULL: not in the help (a test hook) */
    int (*find)(const char *name, int *out); /* CHOICE: its index, 1 if known */
    const char *(*names)(void);              /* CHOICE: the known names, for messages */
} option_def;

static int find_engine(const char *s, int *out)
{
    parser_engine e;
    return parser_engine_find(s, &e) ? (*out = (int)e, 1) : 0;
}

static int find_decoder(const char *s, int *out)
{
    parser_decoder d;
    return parser_decoder_find(s, &d) ? (*out = (int)d, 1) : 0;
}

/* A name among the NULL-terminated list: its index. */
static int find_in(const char *const *list, const char *s, int *out)
{
    for (int k = 0; list[k]; k++)
        if (!strcmp(list[k], s)) {
            *out = k;
            return 1;
        }
    return 0;
}

static const char *const backtraces[] = {[VITERBI_EXACT] = "exact",
                                         [VITERBI_BERKELEY] = "berkeley", NULL};
static const char *const semirings[] = {[CODEGEN_SEMIRING_MAX_PLUS] = "max-plus",
                                        [CODEGEN_SEMIRING_SUM_PRODUCT] = "sum-product",
                                        [CODEGEN_SEMIRING_FIXED] = "fixed", NULL};
static const char *const roles[] = {[CODEGEN_ROLE_PARENT] = "parent",
                                    [CODEGEN_ROLE_LEFT] = "left",
                                    [CODEGEN_ROLE_RIGHT] = "right", NULL};
static int find_prune(const char *s, int *out)
{
    parser_prune p;
    return parser_prune_find(s, &p) ? (*out = (int)p, 1) : 0;
}

static const char *const switches[] = {"off", "on", NULL};
static int find_switch(const char *s, int *out) { return find_in(switches, s, out); }
static const char *switch_names(void) { return "on, off"; }

static int find_backtrace(const char *s, int *out) { return find_in(backtraces, s, out); }
static const char *const ariths[] = {[PARSER_ARITH_AUTO] = "auto", [PARSER_ARITH_FLOAT] = "float",
                                     [PARSER_ARITH_FIXED] = "fixed", NULL};
static int find_arith(const char *s, int *out) { return find_in(ariths, s, out); }
static const char *arith_names(void) { return "auto, float, fixed"; }
static int find_semiring(const char *s, int *out) { return find_in(semirings, s, out); }
static int find_role(const char *s, int *out) { return find_in(roles, s, out); }
static const char *backtrace_names(void) { return "exact, berkeley"; }
static const char *semiring_names(void) { return "max-plus, sum-product, fixed"; }
static const char *role_names(void) { return "parent, left, right"; }

#define NUMBER(lo, hi) INT, lo, hi

static const option_def table[CLI_NOPT] = {
    [CLI_GRAMMAR] = {"grammar", 'g', "GRAMMAR", TEXT, 0, 0, NULL,
                     "a Berkeley .gr file, or the prefix of a text export (PREFIX.grammar[.gz], "
                     "PREFIX.lexicon[.gz], PREFIX.words[.gz])"},
    [CLI_INPUT] = {"input", 'i', "FILE", TEXT, 0, 0, "stdin",
                   "sentences, one per line, plain or gzipped"},
    [CLI_OUTPUT] = {"output", 'o', "FILE", TEXT, 0, 0, "stdout",
                    "where the output goes; gzip-compressed if FILE ends in .gz; written to a "
                    "temporary file beside FILE and renamed onto it only when the run succeeds, "
                    "so a failed or interrupted run leaves FILE as it was; refused where a "
                    "shell's > would fail, and when FILE is an input or a grammar file"},
    [CLI_ENGINE] = {"engine", 0, "ENGINE", CHOICE, 0, 0, NULL,
                    "gpu: the generated float32 kernels on the GPU (the default where there is "
                    "one); cpu: the same kernels on CPU threads (the default without a GPU; "
                    "bit-identical charts and trees; needs a C compiler, cc or $CC, the first "
                    "time a grammar is used); ref: the exact double-precision reference "
                    "(Berkeley's arithmetic; needs no compiler)",
                    find_engine, parser_engine_names},
    [CLI_DECODER] = {"decoder", 0, "DECODER", CHOICE, 0, 0, NULL,
                     "maxrule: the tree that maximizes the product of its rules' posteriors, "
                     "the Berkeley parser's default and ours with a native .gr grammar (exact; "
                     "with a text export, whose unary closure is the Viterbi one, approximate: "
                     "a note on stderr says so); viterbi: the best derivation, the default with "
                     "a text export or --backtrace. Every engine runs both",
                     find_decoder, parser_decoder_names},
    [CLI_BACKTRACE] = {"backtrace", 0, "MODE", CHOICE, 0, 0, "exact",
                       "exact: the true argmax with cky's tie-break; berkeley: the Berkeley "
                       "parser's own back-trace (first derivation within relative 1e-5), to "
                       "match its trees; Viterbi only",
                       find_backtrace, backtrace_names},
    [CLI_ARITH] = {"arith", 0, "auto|float|fixed", CHOICE, 0, 0, "auto",
                   "the arithmetic of the exhaustive Viterbi pass's binary rules on the cpu "
                   "and gpu engines: float (float32) or fixed (int32 in units of 2^-16 nats, "
                   "one instruction a rule on Hopper GPUs, where it is faster); their trees "
                   "agree with the exact ones alike. auto: fixed on GPUs of compute "
                   "capability 9.0 or later and on the cpu engine (the GPU's bits; float is "
                   "faster there), float on other GPUs and for a grammar whose weights fit no "
                   "fixed point (said on stderr); fixed refuses such a grammar",
                   find_arith, arith_names},
    [CLI_DEVICE] = {"device", 0, "N", NUMBER(0, 1024), "0", "CUDA device of the gpu engine"},
    [CLI_DEVICES] = {"devices", 0, "LIST|all", TEXT, 0, 0, NULL,
                     "several GPUs at once (0,1 or all): one gpu engine per device, each on its "
                     "own thread, fed batches from one queue; the same output as one GPU. A "
                     "device that fails is named on stderr and the others parse its sentences. "
                     "A device named twice (0,0) runs two engines, overlapping their host work"},
    [CLI_ENGINES] = {"engines", 0, "N", NUMBER(1, PARSER_MAX_ENGINES), NULL,
                     "N cpu (or ref) engines at once, as --devices does for GPUs, sharing "
                     "--threads"},
    [CLI_THREADS] = {"threads", 0, "N", NUMBER(1, 4096), "one per core",
                     "CPU threads: the ref engine's sentences, the cpu engine's generated "
                     "kernels (its gather, unary and back-trace steps run on one thread), the "
                     "compiler's compilations; not the gpu engine"},
    [CLI_WORKSPACE] = {"workspace", 0, "N", NUMBER(1, 1 << 26), "gpu 131072, cpu 512",
                       "work items per kernel launch (not the ref engine); changes speed and "
                       "memory, never results"},
    [CLI_MAX_LENGTH] = {"max-length", 0, "N", NUMBER(1, 100000), "200",
                        "longest sentence parsed, in words"},
    [CLI_PRUNE] = {"prune", 0, "MODE", CHOICE, 0, 0, "berkeley with a native .gr grammar, none "
                   "with a text export or --backtrace",
                   "berkeley: the Berkeley parser's coarse-to-fine cascade with its default "
                   "thresholds, then the decoder's pass within what it kept: the jar's default "
                   "output with max-rule, its -viterbi output with viterbi (and its "
                   "back-trace); accurate: the cascade with the jar's -accurate thresholds; "
                   "none: the exhaustive passes over the whole grammar, exact",
                   find_prune, parser_prune_names},
    [CLI_PRUNE_FALLBACK] = {"prune-fallback", 0, "on|off", CHOICE, 0, 0, "on",
                            "on: a sentence the pruned pass finds no tree for is parsed again "
                            "with the accurate thresholds, then exhaustively, and its line is "
                            "named on stderr; off: the jar's (())",
                            find_switch, switch_names},
    [CLI_MASKS] = {"masks", 0, "FILE", TEXT, 0, 0, NULL,
                   "with pruning: write each sentence's coarse levels as the Berkeley parser's "
                   "PruneMasks rows (line, level, allowed (span, symbol) pairs, allowed (span, "
                   "symbol, substate) triples, their FNV-1a hash), then its final row (line, "
                   "final, log P, score, tree)"},
    [CLI_TOKENIZE] = {"tokenize", 0, NULL, FLAG, 0, 0, NULL,
                      "the input is raw text, one sentence per line: tokenize it as the Penn "
                      "Treebank is (`` '' quotes, n't 's splits, -LRB-, the final period, ...) "
                      "before parsing"},
    [CLI_GOLD_POS] = {"gold-pos", 0, NULL, FLAG, 0, 0, NULL,
                      "the input has gold part-of-speech tags, as the Berkeley parser's "
                      "-useGoldPOS reads them: a line WORD<TAB>TAG per word, the tag up to its "
                      "first '-', a blank line after each sentence; a word's lexicon gives a "
                      "score to its tag alone, in every pass of the cascade, and a sentence "
                      "without a tree so is parsed again without its tags (named on stderr), "
                      "as the jar does; one tree per sentence. Needs pruning"},
    [CLI_SCORE] = {"score", 0, NULL, FLAG, 0, 0, NULL,
                   "viterbi: prefix each tree with the root log score of the best parse and a "
                   "tab (-inf when there is no parse); maxrule: with log P(sentence), a tab, the "
                   "tree's max-rule score and a tab"},
    [CLI_SHARD] = {"shard", 0, "K/N", TEXT, 0, 0, NULL,
                   "parse only input lines (or trees) K, K+N, K+2N, ... (1 <= K <= N); messages "
                   "name the real input line. N runs, one per shard, cover the input; with -o "
                   "each writes a manifest FILE.shard, and `cky merge` puts their outputs back "
                   "in order"},
    [CLI_TREEBANK] = {"treebank", 0, "FILE", LIST, 0, 0, NULL,
                      "parse the words of the trees of a Penn Treebank file (.mrg, multi-line "
                      "or one tree per line, plain or gzipped) instead of sentences; may be "
                      "given several times"},
    [CLI_GOLD_OUT] = {"gold-out", 0, "FILE", TEXT, 0, 0, NULL,
                      "with --treebank: write the normalized gold trees, one per line (whole "
                      "or not at all, as -o)"},
    [CLI_EVAL] = {"eval", 0, NULL, FLAG, 0, 0, NULL,
                  "with --treebank: print the EVALB summary (COLLINS.prm) of the parses against "
                  "the gold trees (on stdout with -o, else stderr)"},
    [CLI_RENDER] = {"render", 0, "DIR", TEXT, 0, 0, NULL,
                    "also draw each sentence's tree (as `cky draw` draws it; with --kbest its "
                    "list, stacked) into DIR/NNNNNN.svg, NNNNNN the input line (the first line "
                    "of a --gold-pos sentence, the number of a --treebank tree), six digits or "
                    "more, every line getting one ((()): \"(no parse)\"); each file written "
                    "whole or not at all; DIR is made if it is not there (one level, as mkdir) "
                    "and refused if it is not a folder cky can write in; the Berkeley parser's "
                    "-render, which writes PNG files"},
    [CLI_CONFIDENCE] = {"confidence", 0, NULL, FLAG, 0, 0, NULL,
                        "prefix each tree with log P(tree | words) and a tab, as the Berkeley "
                        "parser's -confidence (its tree re-binarized and scored over every "
                        "substate, less log P(words) within the pruned chart, so it can be "
                        "above 0); with pruning only"},
    [CLI_MODEL_SCORE] = {"model-score", 0, NULL, FLAG, 0, 0, NULL,
                         "prefix each tree with the decoder's score (max-rule: the tree's "
                         "max-rule score; viterbi: its log score) with 8 decimals and a tab, "
                         "as the Berkeley parser's -modelScore (after --confidence's)"},
    [CLI_SENTENCE_LIKELIHOOD] = {"sentence-likelihood", 0, NULL, FLAG, 0, 0, NULL,
                                 "prefix each tree with log P(words) and a tab, as the "
                                 "Berkeley parser's -sentence_likelihood (with viterbi the "
                                 "tree's log score; -Infinity where P underflows, as the jar)"},
    [CLI_TREE_LIKELIHOOD] = {"tree-likelihood", 0, NULL, FLAG, 0, 0, NULL,
                             "prefix each tree with log P(tree, words) and a tab, first, as "
                             "the Berkeley parser's -tree_likelihood, which writes no line at "
                             "all for a sentence whose tree scores -Infinity (named on "
                             "stderr); with pruning only"},
    [CLI_BINARIZE] = {"binarize", 0, NULL, FLAG, 0, 0, NULL,
                      "write the trees binarized as the decoder builds them (@X nodes, no "
                      "un-annotation), as the Berkeley parser's -binarize; with pruning only"},
    [CLI_VARIATIONAL] = {"variational", 0, NULL, FLAG, 0, 0, NULL,
                         "max-rule with the Berkeley parser's -variational rule scores (each "
                         "rule's posterior divided by its parent's, the raw unaries closed by "
                         "its own loop, its quirks included: many sentences get no tree, "
                         "(()), as from the jar; --prune-fallback off gives its lines); with "
                         "pruning only"},
    [CLI_SUBSTATES] = {"substates", 0, NULL, FLAG, 0, 0, NULL,
                       "with --decoder viterbi --binarize: each label with its substate "
                       "(NP-3), as the Berkeley parser's -substates; with pruning only"},
    [CLI_SCORES] = {"scores", 0, NULL, FLAG, 0, 0, NULL,
                    "with --decoder viterbi --binarize: each label with its node's inside "
                    "(Viterbi) log score (NP -12.5, after --substates' -3), as the Berkeley "
                    "parser's -scores; with pruning only"},
    [CLI_REPEAT] = {"repeat", 0, "K", NUMBER(1, 1000000), "3",
                    "timed passes; the best is reported"},
    [CLI_BUCKET_WIDTH] = {"bucket-width", 0, "W", NUMBER(0, 100000), "10",
                          "with --json: lengths per bucket of the speed by sentence length (0: "
                          "no buckets)"},
    [CLI_KBEST] = {"kbest", 0, "K", NUMBER(1, 10000), "1",
                   "max-rule: the K best trees of each sentence, the Berkeley parser's -kbest "
                   "lists (its lazy k-best extraction over the max-rule chart), one tree a "
                   "line, best first, and a blank line after each list (which may hold fewer "
                   "than K trees; (()) for a sentence without one); with --score each line "
                   "has its own max-rule score. The pruned decoder on any engine (host "
                   "threads), --prune none on ref; not with viterbi (the jar has no such "
                   "lists), nor with the Berkeley output options other than --score"},
    [CLI_SHAPE] = {"shape", 0, "[FAM=]SHAPE", LIST, 0, 0, "automatic, code blocks of about "
                   "1,800 rules",
                   "cube shape MAJOR[/MINOR], each PxLxR (e.g. 6x2x2/2x2x2; minor defaults to "
                   "2x2x2); FAM= (XX, XT, TX, TT) limits it to one family; repeatable"},
    [CLI_LIVE_LIMIT] = {"live-limit", 0, "N", NUMBER(1, 255), "48",
                        "most values a code block keeps live: parents are grouped and rows "
                        "reloaded to stay within it"},
    [CLI_ARCH] = {"arch", 0, "ARCH", TEXT, 0, 0, "the first GPU's, else sm_90",
                  "GPU architecture for NVRTC"},
    [CLI_NO_GPU_CODE] = {"no-gpu-code", 0, NULL, FLAG, 0, 0, NULL,
                         "skip NVRTC (partition and, with --host, the host build only)"},
    [CLI_HOST_BUILD] = {"host", 0, NULL, FLAG, 0, 0, NULL,
                        "also build the host (.so) version of every kernel and load it"},
    [CLI_DUMP_CU] = {"dump-cu", 0, "DIR", TEXT, 0, 0, NULL,
                     "write every kernel's source to DIR/NAME.cu"},
    [CLI_SEMIRING] = {"semiring", 0, "SR", CHOICE, 0, 0, NULL,
                      "compile one program: max-plus (Viterbi), fixed (Viterbi in fixed "
                      "point, --arith fixed) or sum-product (max-rule's inside and outside "
                      "scores): the same partition each way, but for XX's automatic minor "
                      "cubes (sum-product: 4x1x2)",
                      find_semiring, semiring_names},
    [CLI_ROLE] = {"role", 0, "ROLE", CHOICE, 0, 0, "parent",
                  "compile one program: parent (the inside pass), left or right (the family "
                  "turned towards that child and partitioned: the outside pass's kernels, with "
                  "--semiring sum-product; a --shape then names the child's axis first)",
                  find_role, role_names},
    [CLI_CACHE] = {"cache", 0, "DIR", TEXT, 0, 0, "$CKY_CACHE, else ~/.cache/cky",
                   "cache folder, the grammar's image too; 'off' (or CKY_CACHE=off) compiles "
                   "without a cache"},
    [CLI_FAMILY] = {"family", 0, "FAM[,FAM..]", TEXT, 0, 0, NULL,
                    "compile only these families (the others are partitioned and reported "
                    "without registers)"},
    [CLI_REPORT] = {"report", 0, NULL, FLAG, 0, 0, NULL,
                    "print the partition report (the default output)"},
    [CLI_WARM] = {"warm", 0, NULL, FLAG, 0, 0, NULL,
                  "compile a second time and report that warm start's time too (partition and "
                  "compile, the grammar already loaded)"},
    [CLI_LISTEN] = {"host", 0, "HOST", TEXT, 0, 0, "127.0.0.1, the loopback",
                    "address to listen on; any other needs --token-file"},
    [CLI_PORT] = {"port", 0, "N", NUMBER(0, 65535), "9000", "port (0: a free one, named on "
                  "stderr)"},
    [CLI_TOKEN_FILE] = {"token-file", 0, "FILE", TEXT, 0, 0, NULL,
                        "requests (but the page, /live and /ready) must carry \"Authorization: "
                        "Bearer TOKEN\", TOKEN the file's first line"},
    [CLI_BATCH] = {"batch", 0, "N", NUMBER(1, 1 << 20), "gpu 8192, cpu 256, ref 64, times the "
                   "engines", "most sentences per engine batch"},
    [CLI_BATCH_WAIT] = {"batch-wait", 0, "MS", NUMBER(0, 10000), "5",
                        "longest wait for a batch to fill, while another request arrives"},
    [CLI_QUEUE] = {"queue", 0, "N", NUMBER(1, 1 << 24), "32 batches",
                   "most sentences queued; a request beyond gets 503 with Retry-After"},
    [CLI_MAX_SENTENCES] = {"max-sentences", 0, "N", NUMBER(1, 1 << 24), "1000",
                           "most sentences per request (413 beyond)"},
    [CLI_MAX_REQUEST_BYTES] = {"max-request-bytes", 0, "N", NUMBER(1, 1 << 30), "4194304",
                               "largest request body (413 beyond)"},
    [CLI_MAX_SENTENCE_BYTES] = {"max-sentence-bytes", 0, "N", NUMBER(1, 1 << 30), "65536",
                                "largest sentence (413 beyond)"},
    [CLI_TIMEOUT] = {"timeout", 0, "S", NUMBER(1, 86400), "60",
                     "a request not answered within S seconds gets 503"},
    [CLI_MAX_CONNECTIONS] = {"max-connections", 0, "N", NUMBER(1, 1 << 20), "256",
                             "connections at once"},
    [CLI_IDLE_TIMEOUT] = {"idle-timeout", 0, "S", NUMBER(1, 86400), "30",
                          "an idle connection is closed after S seconds"},
    [CLI_HTTP_THREADS] = {"http-threads", 0, "N", NUMBER(1, 256), "4", "HTTP threads"},
    [CLI_GRACE] = {"grace", 0, "S", NUMBER(0, 86400), "60",
                   "on SIGTERM, how long to wait for requests in flight"},
    [CLI_PRUNED] = {"pruned", 0, NULL, FLAG, 0, 0, NULL,
                    "apply the parser's load-time pruning first (word-tag counts below 1e-10 "
                    "read as 0): the values whose logs `cky parse` uses"},
    [CLI_CUTOFF] = {"cutoff", 'c', "N", NUMBER(INT_MIN, INT_MAX), "40",
                    "cut-off length of the second summary section"},
    [CLI_ERRORS] = {"errors", 'e', "N", NUMBER(INT_MIN, INT_MAX), "10",
                    "stop with status 1 at the (N+2)-th error message"},
    [CLI_SENTENCES] = {"sentences", 's', NULL, FLAG, 0, 0, "the summary only",
                       "print EVALB's whole output: the per-sentence table, the totals line "
                       "and the summary"},
    [CLI_VERBOSE] = {"verbose", 'v', NULL, FLAG, 0, 0, NULL, "the same as --sentences"},
    [CLI_JSON] = {"json", 0, NULL, FLAG, 0, 0, NULL, "one JSON object instead of the text"},
    [CLI_QUIET] = {"quiet", 'q', NULL, FLAG, 0, 0, NULL,
                   "no progress lines on stderr (a wait of over 2 s gets them)"},
    [CLI_HELP] = {"help", 'h', NULL, FLAG, 0, 0, NULL, "this help"},
    [CLI_FAIL_ENGINE] = {"fail-engine", 0, "K[:AFTER]", TEXT, 0, 0, NULL, NULL},
    [CLI_PIPELINE_STATS] = {"pipeline-stats", 0, NULL, FLAG, 0, 0, NULL, NULL},
};

/* The option as a user spells it: "-i" where it has a letter, else "--name". */
static const char *spelled(const option_def *d, char *buf, size_t size)
{
    if (d->letter)
        snprintf(buf, size, "-%c", d->letter);
    else
        snprintf(buf, size, "--%s", d->name);
    return buf;
}

#define VALUE_BASE 1000 /* getopt's value of table entry k without a letter: VALUE_BASE + k */

int cli_options_read(const char *cmd, const cli_use *uses, int operands, int argc, char **argv,
                     cli_args *a)
{
    memset(a, 0, sizeof *a);
    struct option longs[CLI_NOPT + 1];
    char shorts[2 * CLI_NOPT + 2] = ":";
    int n = 0;
    for (const cli_use *u = uses; u->id != CLI_END; u++) {
        const option_def *d = &table[u->id];
        longs[n++] = (struct option){d->name, d->value ? required_argument : no_argument, 0,
                                     d->letter ? d->letter : VALUE_BASE + (int)u->id};
        if (d->letter) {
            size_t at = strlen(shorts);
            shorts[at] = d->letter;
            shorts[at + 1] = d->value ? ':' : '\0';
            shorts[at + 2] = '\0';
        }
        if (d->kind == LIST && !(a->items[u->id] = calloc((size_t)argc, sizeof(char *))))
            return cli_error(cmd, "out of memory");
    }
    longs[n] = (struct option){0, 0, 0, 0};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == ':')
            return cli_usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        int id = -1;
        for (const cli_use *u = uses; u->id != CLI_END && id < 0; u++)
            if (c == (table[u->id].letter ? table[u->id].letter : VALUE_BASE + (int)u->id))
                id = u->id;
        if (id < 0)
            return cli_usage_error(cmd, "unknown option %s", argv[optind - 1]);
        const option_def *d = &table[id];
        char sp[64];
        if (d->kind != LIST && a->given[id] && d->value)
            return cli_usage_error(cmd, "%s given twice ('%s' and '%s'): give it once",
                                   spelled(d, sp, sizeof sp), a->text[id], optarg);
        a->given[id] = 1;
        a->text[id] = optarg;
        switch (d->kind) {
        case FLAG: a->num[id] = 1; break;
        case INT:
            if (!cli_int(optarg, d->lo, d->hi, &a->num[id]))
                return cli_usage_error(cmd, "%s takes a number from %d to %d, not '%s'",
                                       spelled(d, sp, sizeof sp), d->lo, d->hi, optarg);
            break;
        case CHOICE:
            if (!d->find(optarg, &a->num[id]))
                return cli_usage_error(cmd, "%s: unknown %s '%s' (known: %s)",
                                       spelled(d, sp, sizeof sp), d->name, optarg, d->names());
            break;
        case LIST: a->items[id][a->nitems[id]++] = optarg; break;
        case TEXT: break;
        }
    }
    a->args = argv + optind;
    a->nargs = argc - optind;
    if (!operands && a->nargs > 0 && !a->given[CLI_HELP])
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return 0;
}

void cli_args_free(cli_args *a)
{
    for (int k = 0; k < CLI_NOPT; k++)
        free(a->items[k]);
    memset(a, 0, sizeof *a);
}

/* The words of `text` from column `col` on, up to column `width`, continued on new lines at
 * column `indent`. */
static void wrap(FILE *f, const char *text, int col, int indent, int width)
{
    while (*text) {
        while (*text == ' ')
            text++;
        size_t w = strcspn(text, " ");
        if (col > indent && col + 1 + (int)w > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) { /* a space between words */
            fputc(' ', f);
            col++;
        }
        fwrite(text, 1, w, f);
        col += (int)w;
        text += w;
    }
    fputc('\n', f);
}

void cli_options_help(FILE *f, const cli_use *uses)
{
    enum { INDENT = 26, WIDTH = 91 };
    for (const cli_use *u = uses; u->id != CLI_END; u++) {
        const option_def *d = &table[u->id];
        if (!d->help)
            continue;
        const char *sp = d->value ? " " : "", *v = d->value ? d->value : "";
        int col = d->letter ? fprintf(f, "  -%c, --%s%s%s", d->letter, d->name, sp, v)
                            : fprintf(f, "      --%s%s%s", d->name, sp, v);
        if (col >= INDENT - 1) /* a long head: the help on the next line */
            fprintf(f, "\n%*s", INDENT, "");
        else
            fprintf(f, "%*s", INDENT - col, "");
        const char *def = u->def ? u->def : d->def;
        char text[1024];
        snprintf(text, sizeof text, "%s%s%s%s", d->help, def ? " (default: " : "",
                 def ? def : "", def ? ")" : "");
        wrap(f, text, INDENT, INDENT, WIDTH);
    }
}

int cli_args_parser(const char *cmd, const cli_args *a, parser_options *o)
{
    if (a->given[CLI_DEVICE] && a->given[CLI_DEVICES])
        return cli_usage_error(cmd, "give --device or --devices, not both");
    if (a->given[CLI_BACKTRACE] && a->given[CLI_DECODER] &&
        a->num[CLI_DECODER] == PARSER_DECODER_MAXRULE)
        return cli_usage_error(cmd, "--backtrace chooses among Viterbi derivations: it does "
                               "not apply to --decoder maxrule (use --decoder viterbi)");
    if (a->given[CLI_ENGINE])
        o->engine = (parser_engine)a->num[CLI_ENGINE];
    if (a->given[CLI_DECODER])
        o->decoder = (parser_decoder)a->num[CLI_DECODER];
    if (a->given[CLI_BACKTRACE])
        o->backtrace = (viterbi_mode)a->num[CLI_BACKTRACE];
    if (a->given[CLI_ARITH])
        o->arith = (parser_arith)a->num[CLI_ARITH];
    if (a->given[CLI_BACKTRACE] && a->given[CLI_PRUNE] && a->num[CLI_PRUNE] != PARSER_PRUNE_NONE)
        return cli_usage_error(cmd, "--backtrace is for the exhaustive Viterbi pass: a pruned "
                               "pass takes the Berkeley parser's back-trace (--prune none)");
    if (a->given[CLI_PRUNE])
        o->prune = (parser_prune)a->num[CLI_PRUNE];
    if (a->given[CLI_PRUNE_FALLBACK])
        o->prune_fallback = a->num[CLI_PRUNE_FALLBACK];
    if (a->given[CLI_DEVICE])
        o->device = a->num[CLI_DEVICE];
    int rc;
    if (a->given[CLI_DEVICES] && (rc = multi_read_devices(cmd, a->text[CLI_DEVICES], o)))
        return rc;
    if (a->given[CLI_ENGINES])
        o->engines = a->num[CLI_ENGINES];
    if (a->given[CLI_THREADS])
        o->threads = a->num[CLI_THREADS];
    if (a->given[CLI_WORKSPACE])
        o->workspace = a->num[CLI_WORKSPACE];
    if (a->given[CLI_MAX_LENGTH])
        o->max_length = a->num[CLI_MAX_LENGTH];
    if (a->given[CLI_FAIL_ENGINE] && (rc = multi_read_fail(cmd, a->text[CLI_FAIL_ENGINE], o)))
        return rc;
    return 0;
}

void cli_options_wrap(FILE *f, const char *text, int col, int indent, int width)
{
    wrap(f, text, col, indent, width);
}
