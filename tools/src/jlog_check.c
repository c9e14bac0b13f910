/* jlog_check: util/jmath's Math.log against Java's own, for tools/check-jlog: reads lines
 * HEX<TAB>HEX (a double's bits and the bits of its log, as tools/JLogVectors.java prints
 * them) and counts the inputs where jmath_log's bits differ (the first ten are listed), and,
 * for comparison, where the C library's log and jmath_log_cpu with Intel's RCPPS differ.
 * Exit status 1 if jmath_log differs on any. --libc N: print (to stdout) the bits of the
 * first N inputs where the C library's log differs.
 * Usage: jlog_check [--libc N] < VECTORS */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/io.h"
#include "../../util/jmath.h"

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

int main(int argc, char **argv)
{
    long libc_list = 0;
    if (argc == 3 && !strcmp(argv[1], "--libc")) {
        libc_list = atol(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: jlog_check [--libc N] < VECTORS\n");
        return 2;
    }
    io_lines *in;
    if (io_lines_open("-", &in)) {
        fprintf(stderr, "jlog_check: %s\n", cky_last_error());
        return 1;
    }
    char *line;
    size_t len;
    long n = 0, bad = 0, libc = 0, intel = 0;
    while (!io_lines_next(in, &line, &len) && line) {
        char *end;
        uint64_t xb = strtoull(line, &end, 16), want;
        if (end != line + 16 || *end != '\t' ||
            (want = strtoull(end + 1, &end, 16), end != line + 33 || *end)) {
            fprintf(stderr, "jlog_check: line %ld: not HEX<TAB>HEX\n", io_lines_number(in));
            io_lines_close(in);
            return 2;
        }
        double x;
        memcpy(&x, &xb, sizeof x);
        uint64_t got = bits(jmath_log(x));
        n++;
        if (got != want && bad++ < 10)
            fprintf(stderr, "jlog_check: log of %016llx: Java %016llx, jmath_log %016llx\n",
                    (unsigned long long)xb, (unsigned long long)want,
                    (unsigned long long)got);
        if (bits(log(x)) != got && !isnan(x) && libc++ < libc_list)
            printf("%016llx\n", (unsigned long long)xb);
        intel += bits(jmath_log_cpu(x, JMATH_CPU_INTEL)) != got;
    }
    io_lines_close(in);
    fprintf(stderr,
            "jlog_check: %ld inputs: jmath_log differs from Java on %ld (%.4f%%); the C "
            "library's log from jmath_log on %ld (%.4f%%), Intel's RCPPS on %ld\n",
            n, bad, n ? 100.0 * bad / n : 0.0, libc, n ? 100.0 * libc / n : 0.0, intel);
    return bad != 0;
}
