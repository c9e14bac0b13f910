/* `cky parse --help` (declared in cli.h): its text around the option table's lines. */
#include "cli.h"
#include "options.h"

static const char intro[] =
    "usage: cky parse -g GRAMMAR [-i FILE] [-o FILE] [OPTIONS]\n"
    "       cky parse -g GRAMMAR --treebank FILE.mrg [--gold-out FILE] [--eval] [OPTIONS]\n"
    "\n"
    "Parse one tokenized sentence per input line into one Penn Treebank tree per output line,\n"
    "in order: exactly one output line per input line (a line ends at LF, CR LF or CR). An\n"
    "empty line, a sentence longer than --max-length or one with no parse gives the Berkeley\n"
    "parser's failure output (()) and a message on stderr naming the input line; so does a\n"
    "sentence that hits an internal error (exit status 3). NUL bytes and invalid UTF-8 are\n"
    "read as U+FFFD, with a warning.\n"
    "\n"
    "Input that is not a regular file (a pipe, a terminal) is answered line by line: each\n"
    "batch holds the lines that have arrived, so cky parse works as a coprocess. SIGINT or\n"
    "SIGTERM stops the run after writing every sentence already parsed; during the grammar\n"
    "load or the kernel compile it ends the run at once, nothing written. A signal ignored\n"
    "when cky starts (nohup) stays ignored. When the reader of the trees goes away (| head)\n"
    "the run ends quietly (exit status 141, as a filter killed by SIGPIPE).\n"
    "\n"
    "The input is read (and tokenized) on one host thread and the trees are written on\n"
    "another while the engine parses the batch between them: memory stays bounded however\n"
    "long the input is (a few batches: 8192 sentences each on the gpu engine, 256 on cpu).\n"
    "\n";

static const char outro[] =
    "\n"
    "A wait of over 2 seconds gets a progress line on stderr (reading the grammar, writing its\n"
    "image into the cache, compiling kernels: kernels done of all, time, an estimate of the\n"
    "time left; the parse: sentences, sentences/s): on a terminal one line redrawn in place,\n"
    "elsewhere a line every 30 s and one when the step is over (the parse: that one only).\n"
    "CKY_PROGRESS_AFTER=S sets the 2 seconds; --quiet silences them.\n"
    "\n"
    "An option the chosen engine does not use is a usage error (a warning when the engine was\n"
    "chosen for want of a GPU). The kernel cache is $CKY_CACHE, else $XDG_CACHE_HOME/cky, else\n"
    "~/.cache/cky; CKY_CACHE=off compiles in memory, as does a cache folder that cannot be\n"
    "written (with a warning). Cached kernels are checked against their digest before use.\n"
    "\n"
    "exit status: 0 every sentence parsed or legitimately unparsable (empty, too long, no\n"
    "parse); 1 a file could not be read or written, or the grammar or engine failed; 2 usage\n"
    "error; 3 some sentences hit an internal error (their lines are (()), each named on\n"
    "stderr); 128+N stopped by signal N (130 SIGINT, 143 SIGTERM; 141: the trees' reader went\n"
    "away).\n";

const cli_use cli_parse_options[] = {
    {CLI_GRAMMAR, NULL}, {CLI_INPUT, NULL}, {CLI_OUTPUT, NULL}, {CLI_TOKENIZE, NULL},
    {CLI_KBEST, NULL}, {CLI_RENDER, NULL},
    {CLI_DECODER, NULL}, {CLI_PRUNE, NULL}, {CLI_PRUNE_FALLBACK, NULL}, {CLI_MASKS, NULL},
    {CLI_SCORE, NULL}, {CLI_ENGINE, NULL}, {CLI_DEVICE, NULL},
    {CLI_GOLD_POS, NULL},
    {CLI_DEVICES, NULL}, {CLI_ENGINES, NULL}, {CLI_SHARD, NULL}, {CLI_WORKSPACE, NULL},
    {CLI_BACKTRACE, NULL}, {CLI_ARITH, NULL}, {CLI_MAX_LENGTH, NULL}, {CLI_THREADS, NULL}, {CLI_TREEBANK, NULL},
    {CLI_GOLD_OUT, NULL}, {CLI_EVAL, NULL}, {CLI_QUIET, NULL}, {CLI_HELP, NULL},
    {CLI_TREE_LIKELIHOOD, NULL}, {CLI_SENTENCE_LIKELIHOOD, NULL}, {CLI_CONFIDENCE, NULL},
    {CLI_MODEL_SCORE, NULL}, {CLI_BINARIZE, NULL}, {CLI_VARIATIONAL, NULL},
    {CLI_SUBSTATES, NULL}, {CLI_SCORES, NULL},
    {CLI_FAIL_ENGINE, NULL}, {CLI_PIPELINE_STATS, NULL}, {CLI_END, NULL}};

void cli_parse_usage(FILE *f)
{
    fputs(intro, f);
    fputs("options:\n", f);
    cli_options_help(f, cli_parse_options);
    fputs(outro, f);
}
