/* cky draw: Penn Treebank trees into SVG pictures (corpus_tools/tree_draw.h), one file of
 * all of them stacked, or one file per tree in a folder. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus_tools/tree_draw.h"
#include "../util/cachedir.h"
#include "../util/output.h"
#include "cli.h"

static const char usage_text[] =
    "usage: cky draw [-i FILE] [-o FILE | -d DIR]\n"
    "\n"
    "Draw Penn Treebank trees as SVG pictures: the words in order on the bottom row, each\n"
    "phrase centred over its parts, no two labels overlapping, readable at full size in a\n"
    "browser for sentences of 60 words and more. Trees are read as cky parse writes them and\n"
    "as treebanks hold them: one per line or spread over lines (.mrg), plain or gzipped; a\n"
    "failed parse \"(())\" is drawn as \"(no parse)\".\n"
    "\n"
    "options:\n"
    "  -i, --input FILE   the trees (default: stdin)\n"
    "  -o, --output FILE  one SVG of all the trees, one below the other (default: stdout);\n"
    "                     written whole or not at all, gzip-compressed if FILE ends in .gz\n"
    "  -d, --dir DIR      one SVG per tree instead: DIR/0001.svg, DIR/0002.svg, ... (DIR is\n"
    "                     made if it is not there)\n"
    "  -h, --help         this help\n"
    "\n"
    "exit status: 0 drawn; 1 a file could not be read or written, or a tree is malformed\n"
    "(the message names the file, line and column); 2 usage error.\n";

/* Write the n trees into `path` as one SVG (stdout for "-", gzipped for .gz). Returns 0 or
 * 1 after a message. */
static int write_svg(const char *path, const tree *const *trees, int n)
{
    tree_draw_style style = tree_draw_style_default();
    output *out;
    if (output_open(path, &out) != CKY_OK)
        return cli_error("draw", "%s", cky_last_error());
    if (tree_draw_svg_trees(output_file(out), trees, n, &style) != CKY_OK) {
        output_abort(out);
        return cli_error("draw", "%s", cky_last_error());
    }
    if (output_commit(out) != CKY_OK)
        return cli_error("draw", "%s", cky_last_error());
    return 0;
}

/* Keep t at the end of *trees (of *n, room for *cap). Returns 0 or 1 after a message (t is
 * freed then). */
static int keep_tree(tree ***trees, int *n, int *cap, tree *t)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 64;
        tree **a = realloc(*trees, (size_t)c * sizeof *a);
        if (!a) {
            tree_free(t);
            return cli_error("draw", "out of memory");
        }
        *trees = a;
        *cap = c;
    }
    (*trees)[(*n)++] = t;
    return 0;
}

/* Read every tree of `in`; with `dir`, write each into DIR/NNNN.svg as it comes, else keep
 * them all and write one SVG into `path`. Returns the exit status. */
static int draw(const char *in, const char *path, const char *dir)
{
    const char *name = strcmp(in, "-") ? in : "stdin";
    tree_reader *r;
    if (tree_reader_open(in, &r) != CKY_OK)
        return cli_error("draw", "%s", cky_last_error());
    tree_draw_style style = tree_draw_style_default();
    tree **trees = NULL; /* what the stacked picture keeps */
    int n = 0, cap = 0, rc = 0;
    for (long count = 1; !rc; count++) {
        tree *t;
        if (tree_reader_next(r, &t) != CKY_OK) {
            rc = cli_error("draw", "%s", cky_last_error());
            break;
        }
        if (!t)
            break;
        if (!dir) {
            rc = keep_tree(&trees, &n, &cap, t);
            continue;
        }
        char file[4096];
        snprintf(file, sizeof file, "%s/%04ld.svg", dir, count);
        if (tree_draw_write_file(file, (const tree *const *)&t, 1, &style) != CKY_OK)
            rc = cli_error("draw", "%s:%ld: %s", name, tree_reader_line(r), cky_last_error());
        tree_free(t);
    }
    tree_reader_close(r);
    if (!rc && !dir && n == 0)
        rc = cli_error("draw", "%s: no trees", name);
    if (!rc && !dir)
        rc = write_svg(path, (const tree *const *)trees, n);
    for (int k = 0; k < n; k++)
        tree_free(trees[k]);
    free(trees);
    return rc;
}

int cli_draw(int argc, char **argv)
{
    static const struct option longs[] = {{"input", required_argument, 0, 'i'},
                                          {"output", required_argument, 0, 'o'},
                                          {"dir", required_argument, 0, 'd'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *in = "-", *path = NULL, *dir = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":i:o:d:h", longs, NULL)) != -1) {
        switch (c) {
        case 'i': in = optarg; break;
        case 'o': path = optarg; break;
        case 'd': dir = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case ':': return cli_usage_error("draw", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("draw", "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("draw", "unexpected argument '%s' (the input is -i FILE)",
                               argv[optind]);
    if (path && dir)
        return cli_usage_error("draw", "-o FILE and -d DIR: one or the other");
    if (dir && cachedir_mkdirs(dir) != CKY_OK)
        return cli_error("draw", "%s", cky_last_error());
    return draw(in, path ? path : "-", dir);
}
