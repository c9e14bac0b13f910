/* cky merge: the outputs of `cky parse --shard K/N` (K = 1..N) back into input order. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"
#include "../util/output.h"
#include "cli.h"

static const char usage_text[] =
    "usage: cky merge [-o FILE] SHARD1 SHARD2 ... SHARDN\n"
    "\n"
    "Interleave the outputs of `cky parse --shard K/N`, given in the order K = 1..N, back into\n"
    "input order: line 1 of SHARD1, line 1 of SHARD2, ..., line 1 of SHARDN, line 2 of SHARD1,\n"
    "... Their line counts must be those of the shards of one file (each shard has as many\n"
    "lines as the next or one more, the first as many as the last or one more): other inputs\n"
    "are refused before anything is written. Shards may be gzipped.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE       where the lines go (default: stdout); gzip-compressed if FILE\n"
    "                          ends in .gz; written whole or not at all, as by cky parse\n"
    "  -h, --help              this help\n"
    "\n"
    "exit status: 0 merged; 1 a file could not be read or written, or the line counts do not\n"
    "come from the shards of one file; 2 usage error.\n";

/* The number of lines of each file into count[]. Returns 0 or 1 after a message. */
static int count_lines(char **paths, int n, long *count)
{
    for (int k = 0; k < n; k++) {
        io_lines *in = NULL;
        char *line;
        size_t len;
        cky_status st = io_lines_open(paths[k], &in);
        for (count[k] = 0; !st && !(st = io_lines_next(in, &line, &len)) && line;)
            count[k]++;
        if (in)
            io_lines_close(in);
        if (st)
            return cli_error("merge", "%s", cky_last_error());
    }
    return 0;
}

/* 0 if counts c[0..n) can be those of shards 1..n of one file: non-increasing, the first at
 * most one more than the last; else 1 after a message naming the first shard out of line. */
static int check_counts(char **paths, int n, const long *c)
{
    for (int k = 1; k < n; k++)
        if (c[k] > c[k - 1] || c[k] < c[0] - 1)
            return cli_error("merge", "%s has %ld lines after %s with %ld: shards of one file "
                             "(given in order 1..%d) have as many lines as the first or one "
                             "less, never more than the one before", paths[k], c[k],
                             paths[k - 1], c[k - 1], n);
    return 0;
}

/* Write the lines round-robin. Returns 0 or 1 after a message. */
static int interleave(char **paths, int n, const long *count, FILE *out)
{
    io_lines **in = calloc((size_t)n, sizeof *in);
    int rc = in ? 0 : cli_error("merge", "out of memory");
    for (int k = 0; k < n && !rc; k++)
        if (io_lines_open(paths[k], &in[k]))
            rc = cli_error("merge", "%s", cky_last_error());
    for (long row = 0; row < count[0] && !rc; row++)
        for (int k = 0; k < n && !rc && row < count[k]; k++) {
            char *line = NULL;
            size_t len;
            if (io_lines_next(in[k], &line, &len) || !line)
                rc = cli_error("merge", "%s: %s", paths[k],
                               line ? cky_last_error() : "changed while being merged");
            else
                fprintf(out, "%s\n", line);
        }
    for (int k = 0; in && k < n; k++)
        if (in[k])
            io_lines_close(in[k]);
    free(in);
    return rc;
}

int cli_merge(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, 0, 'o'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *path = "-";
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'o': path = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case ':': return cli_usage_error("merge", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("merge", "unknown option %s", argv[optind - 1]);
        }
    }
    int n = argc - optind;
    if (n < 1)
        return cli_usage_error("merge", "no shard outputs given");
    char **paths = argv + optind;
    for (int k = 0; k < n; k++) {
        if (!strcmp(paths[k], "-"))
            return cli_usage_error("merge", "shards are files (read twice), not stdin");
        if (strcmp(path, "-") && output_same_file(path, paths[k]))
            return cli_usage_error("merge", "the output %s is also an input", path);
    }
    long *count = calloc((size_t)n, sizeof *count);
    if (!count)
        return cli_error("merge", "out of memory");
    output *out = NULL;
    int rc = count_lines(paths, n, count);
    if (!rc)
        rc = check_counts(paths, n, count);
    if (!rc && output_open(path, &out))
        rc = cli_error("merge", "%s", cky_last_error());
    if (!rc)
        rc = interleave(paths, n, count, output_file(out));
    if (out && rc)
        output_abort(out);
    else if (out && output_commit(out))
        rc = cli_error("merge", "%s", cky_last_error());
    free(count);
    return rc;
}
