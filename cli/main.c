/* cky: command-line front end. Thin: parses the subcommand and hands over to cli/<cmd>.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../parser/gpu_dev.h"

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"parse", cli_parse, "parse sentences or treebank files into Penn Treebank trees"},
    {"eval", cli_eval, "score parses against gold trees exactly as EVALB with COLLINS.prm"},
    {"lexicon", cli_lexicon, "print the lexical score of every tag substate for input tokens"},
    {"compile", cli_compile, "compile a grammar's kernels into the cache and report the partition"},
    {"bench", cli_bench, "measure parsing speed on the GPU against its add+max peak"},
    {"merge", cli_merge, "put the outputs of cky parse --shard K/N back in input order"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: cky COMMAND [OPTIONS]\n\n"
               "cky parses English sentences into Penn Treebank trees with a Berkeley\n"
               "latent-variable grammar, computing the exact max-rule parse (the Berkeley\n"
               "parser's default) or Viterbi parse over the whole grammar (no pruning).\n\ncommands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f, "\n'cky COMMAND --help' describes the options of a command; 'cky --version' says\n"
               "which cky this is, with its CUDA, NVRTC and the GPU it finds.\n");
}

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "cky %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int cli_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

int cli_gpu_env(const char *cmd, parser_options *o)
{
    const struct {
        const char *name, *what;
        int lo, hi;
        int *out;
    } vars[] = {
        {"CKY_GPU_BLOCK_TILES", "tiles per thread block", 1, 8, &o->block_tiles},
        {"CKY_GPU_CHUNK", "tiles per chunk; 0: each code block over all tiles", 0,
         GPU_DEV_MAX_CHUNK, &o->chunk},
        {"CKY_GPU_SUM_PART_MB", "MiB for the sum-product kernels' partial slots", 1,
         GPU_DEV_MAX_PART_MB, &o->part_mb},
    };
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++) {
        const char *text = getenv(vars[k].name);
        if (text && !cli_int(text, vars[k].lo, vars[k].hi, vars[k].out))
            return cli_error(cmd, "%s='%s': want %d to %d (%s)", vars[k].name, text,
                             vars[k].lo, vars[k].hi, vars[k].what);
    }
    return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "cky %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ntry 'cky %s --help'\n", cmd);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version"))
        return cli_version();
    for (const struct command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name))
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "cky: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
