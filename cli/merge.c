/* cky merge: the outputs of `cky parse --shard K/N` (K = 1..N) back into input order, checked
 * against their manifests (multi.h) to be the whole set of shards of one input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"
#include "../util/output.h"
#include "cli.h"
#include "multi.h"

static const char usage_text[] =
    "usage: cky merge [-o FILE] SHARD1 SHARD2 ... SHARDN\n"
    "\n"
    "Interleave the outputs of `cky parse --shard K/N` back into input order: line 1 of shard\n"
    "1, line 1 of shard 2, ..., line 1 of shard N, line 2 of shard 1, ... Shards may be\n"
    "gzipped.\n"
    "\n"
    "cky parse --shard K/N -o FILE writes a manifest FILE.shard beside FILE (K, N, the lines\n"
    "of FILE, the lines and a hash of the whole input). With manifests the shards may be given\n"
    "in any order, and the set is refused before anything is written unless it is every shard\n"
    "1..N of one input once, each with the lines its manifest says. Without manifests (shards\n"
    "written to stdout) they are taken in the order given and only their line counts are\n"
    "checked (each shard has as many lines as the next or one more, the first as many as the\n"
    "last or one more; no file given twice), with a warning.\n"
    "\n"
    "options:\n";

static const char outro[] =
    "\n"
    "exit status: 0 merged; 1 a file could not be read or written, or the shards are not the\n"
    "whole set of one input (or their line counts cannot be); 2 usage error.\n";

static const cli_use uses[] = {{CLI_OUTPUT, NULL}, {CLI_HELP, NULL}, {CLI_END, NULL}};

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

/* The shards of a set that m[0..n) (each of a different K) lacks, "2/5, 4/5" (at most 8). */
static void missing_shards(const multi_manifest *m, int n, char *buf, size_t size)
{
    int listed = 0;
    buf[0] = '\0';
    for (int k = 1; k <= m[0].n && listed <= 8; k++) {
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = m[j].k == k;
        if (!seen && strlen(buf) + 32 < size)
            snprintf(buf + strlen(buf), size - strlen(buf), "%s%d/%d", listed++ ? ", " : "",
                     k, m[0].n);
    }
    if (listed > 8 && strlen(buf) + 8 < size)
        strcat(buf, ", ...");
}

/* The shards in the order of their K (insertion sort: a handful of shards). */
static void sort_by_shard(multi_manifest *m, char **paths, long *count, int n)
{
    for (int k = 1; k < n; k++)
        for (int j = k; j > 0 && m[j - 1].k > m[j].k; j--) {
            multi_manifest t = m[j];
            m[j] = m[j - 1];
            m[j - 1] = t;
            char *p = paths[j];
            paths[j] = paths[j - 1];
            paths[j - 1] = p;
            long c = count[j];
            count[j] = count[j - 1];
            count[j - 1] = c;
        }
}

/* Check the n shards (count: their lines) against their manifests (multi.h), and sort them
 * (paths, count) by K. Returns 0 when each has one and they are every shard of one input
 * once, each with the lines its manifest says; 1 after a message when not; -1 when none of
 * them has a manifest. */
static int check_manifests(char **paths, int n, long *count)
{
    multi_manifest *m = calloc((size_t)n, sizeof *m);
    if (!m)
        return cli_error("merge", "out of memory");
    int with = -1, without = -1, rc = 0;
    for (int k = 0; k < n && !rc; k++) {
        int r = multi_manifest_read("merge", paths[k], &m[k]);
        if (r < 0)
            rc = 1;
        else if (r)
            with = k;
        else
            without = k;
    }
    if (!rc && with < 0)
        rc = -1;
    else if (!rc && without >= 0)
        rc = cli_error("merge", "%s has no manifest %s.shard, but %s has one: give the "
                       "outputs of one set of runs of cky parse --shard K/N -o FILE",
                       paths[without], paths[without], paths[with]);
    const multi_manifest *a = m;
    for (int k = 0; k < n && !rc; k++) {
        const multi_manifest *b = &m[k];
        if (b->n != a->n || b->input_hash != a->input_hash || b->input_lines != a->input_lines)
            rc = cli_error("merge", "%s is shard %d/%d of %s (%ld lines), but %s is shard "
                           "%d/%d of %s (%ld lines): not the shards of one input", paths[0],
                           a->k, a->n, a->input, a->input_lines, paths[k], b->k, b->n,
                           b->input, b->input_lines);
        else if (count[k] != b->lines)
            rc = cli_error("merge", "%s has %ld lines, but its manifest %s.shard says %ld: not "
                           "the output it describes", paths[k], count[k], paths[k], b->lines);
        for (int j = 0; j < k && !rc; j++)
            if (output_same_file(paths[j], paths[k]) || !strcmp(paths[j], paths[k]))
                rc = cli_error("merge", "%s is given twice (shard %d/%d of %s)", paths[k],
                               b->k, b->n, b->input);
            else if (m[j].k == b->k)
                rc = cli_error("merge", "%s and %s are both shard %d/%d of %s", paths[j],
                               paths[k], b->k, b->n, b->input);
    }
    if (!rc && n < a->n) { /* (more than n would repeat a shard) */
        char list[256];
        missing_shards(m, n, list, sizeof list);
        rc = cli_error("merge", "%d of the %d shards of %s given: shard%s %s missing", n,
                       a->n, a->input, a->n - n > 1 ? "s" : "", list);
    }
    if (!rc)
        sort_by_shard(m, paths, count, n);
    free(m);
    return rc;
}

/* Without manifests: no file given twice, and the line counts those of shards 1..n given in
 * order (check_counts), with a warning that no more can be checked. Returns 0 or 1. */
static int check_without_manifests(char **paths, int n, const long *count)
{
    for (int k = 0; k < n; k++)
        for (int j = 0; j < k; j++)
            if (output_same_file(paths[j], paths[k]) || !strcmp(paths[j], paths[k]))
                return cli_error("merge", "%s is given twice", paths[k]);
    int rc = check_counts(paths, n, count);
    if (!rc)
        fprintf(stderr, "cky merge: warning: no shard manifests (FILE.shard, written by cky "
                "parse --shard K/N -o FILE): the shards are taken in the order given, and "
                "only their line counts are checked, not that they are all there\n");
    return rc;
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
    cli_args a;
    int rc = cli_options_read("merge", uses, 1, argc, argv, &a);
    if (rc)
        return rc;
    if (a.given[CLI_HELP]) {
        cli_args_free(&a);
        fputs(usage_text, stdout);
        cli_options_help(stdout, uses);
        fputs(outro, stdout);
        return 0;
    }
    const char *path = a.given[CLI_OUTPUT] ? a.text[CLI_OUTPUT] : "-";
    int n = a.nargs;
    char **paths = a.args; /* into argv */
    cli_args_free(&a);
    if (n < 1)
        return cli_usage_error("merge", "no shard outputs given");
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
    rc = count_lines(paths, n, count);
    if (!rc && (rc = check_manifests(paths, n, count)) < 0)
        rc = check_without_manifests(paths, n, count);
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
