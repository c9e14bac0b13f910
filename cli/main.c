/* cky: command-line front end. Thin: parses the subcommand and hands over to cli/<cmd>.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../gpu/gpu.h"

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
    {"serve", cli_serve, "answer parsing requests over HTTP, the grammar loaded once"},
    {"draw", cli_draw, "draw Penn Treebank trees as SVG pictures"},
    {"berkeley", cli_berkeley, "the Berkeley parser's command line (-gr G.gr -viterbi ...), as cky parse"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: cky COMMAND [OPTIONS]\n\n"
               "cky parses English sentences into Penn Treebank trees with a Berkeley\n"
               "latent-variable grammar: with a native .gr grammar, by default, the Berkeley\n"
               "parser's own answer (its coarse-to-fine pruning, then the max-rule parse, or\n"
               "Viterbi with --decoder viterbi); with --prune none (and with a text export),\n"
               "the exact parse over the whole grammar.\n\ncommands:\n");
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

int cli_tune(const char *cmd, parser_tune *t)
{
    static const char *const gone[] = {"CKY_GPU_BLOCK_TILES", "CKY_GPU_CHUNK",
                                       "CKY_GPU_SUM_PART_MB", "CKY_PTXAS_OPTIONS"};
    for (size_t k = 0; k < sizeof gone / sizeof *gone; k++)
        if (getenv(gone[k]))
            return cli_error(cmd, "%s is gone: set CKY_TUNE (docs/development.md), e.g. "
                             "CKY_TUNE=chunk=66,block_tiles=2", gone[k]);
    const char *env = getenv("CKY_TUNE");
    if (!env || !*env)
        return 0;
    const struct {
        const char *key, *what;
        int lo, hi;
        int *out;
    } knobs[] = {
        {"block_tiles", "tiles per thread block", 1, 8, &t->block_tiles},
        {"chunk", "tiles per chunk; 0: each code block over all tiles", 0, GPU_DEV_MAX_CHUNK,
         &t->chunk},
        {"part_mb", "MiB for the sum-product kernels' partial slots", 1, GPU_DEV_MAX_PART_MB,
         &t->part_mb},
        {"prune_host", "1: the gpu engine's pruned cascade on host threads", 0, 1,
         &t->prune_host},
        {"prune_chunk", "sentences per launch of the device cascade", 1, 65536,
         &t->prune_chunk},
        {"prune_lanes", "lanes of the device cascade", 1, 4, &t->prune_lanes},
        {"prune_team", "host threads for each sentence's cascade in a small batch", 1, 64,
         &t->prune_team},
    };
    static char text[1024]; /* the ptxas option points into it: one CKY_TUNE per process */
    if (snprintf(text, sizeof text, "%s", env) >= (int)sizeof text)
        return cli_error(cmd, "CKY_TUNE is too long");
    for (char *item = strtok(text, ","); item; item = strtok(NULL, ",")) {
        char *eq = strchr(item, '=');
        if (!eq)
            return cli_error(cmd, "CKY_TUNE: '%s' is not KEY=VALUE", item);
        *eq = '\0';
        const char *value = eq + 1;
        if (!strcmp(item, "ptxas")) {
            t->ptxas = value;
            continue;
        }
        size_t k = 0;
        while (k < sizeof knobs / sizeof *knobs && strcmp(item, knobs[k].key))
            k++;
        if (k == sizeof knobs / sizeof *knobs)
            return cli_error(cmd, "CKY_TUNE: unknown key '%s' (known: block_tiles, chunk, "
                             "part_mb, ptxas, prune_host, prune_chunk, prune_lanes, "
                             "prune_team)", item);
        if (!cli_int(value, knobs[k].lo, knobs[k].hi, knobs[k].out))
            return cli_error(cmd, "CKY_TUNE: %s='%s': want %d to %d (%s)", item, value,
                             knobs[k].lo, knobs[k].hi, knobs[k].what);
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
