/* tokenize_lines: the tokenizer alone (corpus_tools/tokenize.h), for tools/check-tokenizer:
 * raw text in, one sentence per line (plain or gzipped file, or stdin), the tokens of each
 * line out, separated by single spaces, one line per input line.
 * Usage: tokenize_lines [FILE] */
#include <stdio.h>
#include <stdlib.h>

#include "../../corpus_tools/tokenize.h"
#include "../../util/io.h"

int main(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "usage: tokenize_lines [FILE]\n");
        return 2;
    }
    io_lines *in;
    if (io_lines_open(argc == 2 ? argv[1] : "-", &in)) {
        fprintf(stderr, "tokenize_lines: %s\n", cky_last_error());
        return 1;
    }
    char *line;
    size_t len;
    cky_status st;
    while (!(st = io_lines_next(in, &line, &len)) && line) {
        char *tokens;
        int n;
        if ((st = tokenize_line(line, len, &tokens, &n)))
            break;
        puts(tokens);
        free(tokens);
    }
    io_lines_close(in);
    if (st) {
        fprintf(stderr, "tokenize_lines: %s\n", cky_last_error());
        return 1;
    }
    return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
