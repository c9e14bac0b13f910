/* Tests of util/jdouble.h: Java 17's Double.toString, against Java 17's own output on
 * thousands of values (test/data/jdouble.tsv, made by tools/JDoubleVectors.java) and against
 * every score the Berkeley parser printed in ../shared/reference/berkeley. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"
#include "../util/jdouble.h"

#define VECTORS CKY_SOURCE "/test/data/jdouble.tsv"
#define REFERENCE CKY_SHARED "/reference/berkeley"

static const char *format(double x, char *buf)
{
    size_t len = jdouble_format(x, buf, JDOUBLE_BUFSIZE);
    cr_assert_lt(len, JDOUBLE_BUFSIZE);
    cr_assert_eq(strlen(buf), len);
    return buf;
}

static double from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

Test(jdouble, special_values)
{
    char buf[JDOUBLE_BUFSIZE];
    cr_expect_str_eq(format(0.0, buf), "0.0");
    cr_expect_str_eq(format(-0.0, buf), "-0.0");
    cr_expect_str_eq(format(from_bits(0x7ff8000000000000), buf), "NaN");
    cr_expect_str_eq(format(from_bits(0xfff8000000000001), buf), "NaN");
    cr_expect_str_eq(format(from_bits(0x7ff0000000000000), buf), "Infinity");
    cr_expect_str_eq(format(from_bits(0xfff0000000000000), buf), "-Infinity");
    cr_expect_str_eq(format(1.0, buf), "1.0");
    cr_expect_str_eq(format(100.0, buf), "100.0");
    cr_expect_str_eq(format(0.001, buf), "0.001");
    cr_expect_str_eq(format(0.000999, buf), "9.99E-4");
    cr_expect_str_eq(format(9999999.0, buf), "9999999.0");
    cr_expect_str_eq(format(1e7, buf), "1.0E7");
    cr_expect_str_eq(format(from_bits(1), buf), "4.9E-324");
    cr_expect_str_eq(format(1.7976931348623157e308, buf), "1.7976931348623157E308");
    /* Not the shortest digits: Java 17's own. */
    cr_expect_str_eq(format(0x1p-44, buf), "5.6843418860808015E-14");
    cr_expect_str_eq(format(1e23, buf), "9.999999999999999E22");
    cr_expect_str_eq(format(2.82879384806159e17, buf), "2.82879384806159008E17");
}

Test(jdouble, short_buffer)
{
    char buf[6];
    cr_expect_eq(jdouble_format(-169.81876448005028, buf, sizeof buf), 19);
    cr_expect_str_eq(buf, "-169.");
    cr_expect_eq(jdouble_format(1.0, buf, 0), 3);
}

/* Every line of the vectors: the bits in hex, a tab, Java 17's text. */
Test(jdouble, java17_vectors)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(VECTORS, &in), CKY_OK, "%s", cky_last_error());
    char *line, buf[JDOUBLE_BUFSIZE];
    size_t len;
    long n = 0, bad = 0;
    while (io_lines_next(in, &line, &len) == CKY_OK && line) {
        char *tab = strchr(line, '\t');
        cr_assert(tab && tab - line == 16, "%s:%ld: not HEX<TAB>TEXT", VECTORS,
                  io_lines_number(in));
        double x = from_bits(strtoull(line, NULL, 16));
        n++;
        if (strcmp(format(x, buf), tab + 1) && bad++ < 10)
            cr_expect_fail("%s:%ld: bits %.16s: Java 17 prints %s, jdouble_format %s", VECTORS,
                           io_lines_number(in), line, tab + 1, buf);
    }
    io_lines_close(in);
    cr_expect_eq(bad, 0, "%ld of %ld values differ", bad, n);
    cr_expect_gt(n, 5000, "only %ld vectors", n);
}

/* 1 if s[0..n) is a number as Double.toString writes one: NaN, [-]Infinity, or
 * [-]DIGITS.DIGITS[E[-]DIGITS]. */
static int java_number(const char *s, size_t n)
{
    if ((n == 3 && !memcmp(s, "NaN", 3)) || (n == 8 && !memcmp(s, "Infinity", 8)) ||
        (n == 9 && !memcmp(s, "-Infinity", 9)))
        return 1;
    size_t i = s[0] == '-', k = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == k || i == n || s[i++] != '.')
        return 0;
    for (k = i; i < n && s[i] >= '0' && s[i] <= '9';)
        i++;
    if (i == k)
        return 0;
    if (i < n && s[i] == 'E') {
        i += i + 1 < n && s[i + 1] == '-';
        for (k = ++i; i < n && s[i] >= '0' && s[i] <= '9';)
            i++;
        if (i == k)
            return 0;
    }
    return i == n;
}

/* Check every score of one reference file: each token (split at spaces and tabs) that looks
 * like a Java number and is not a word of a tree (a leaf's word ends in ')'): the fields
 * before a tree, the inside scores of -scores trees, the columns of the prune masks.
 * Returns how many were checked; the first differences fail. */
static long check_file(const char *path)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(path, &in), CKY_OK, "%s", cky_last_error());
    char *line, buf[JDOUBLE_BUFSIZE];
    size_t len;
    long checked = 0, bad = 0;
    while (io_lines_next(in, &line, &len) == CKY_OK && line) {
        for (char *tok = line; *tok;) {
            size_t n = strcspn(tok, " \t");
            if (n && tok[n - 1] != ')' && java_number(tok, n)) {
                char *end;
                double x = strtod(tok, &end);
                cr_assert_eq(end, tok + n);
                checked++;
                format(x, buf);
                if ((strlen(buf) != n || memcmp(buf, tok, n)) && bad++ < 5)
                    cr_expect_fail("%s:%ld: the jar printed %.*s, jdouble_format %s", path,
                                   io_lines_number(in), (int)n, tok, buf);
            }
            tok += n + (tok[n] != '\0');
        }
    }
    io_lines_close(in);
    return checked;
}

/* Every score the jar printed with Double.toString in ../shared/reference/berkeley: its .tsv
 * and .tsv.gz files and the .txt files of cli/, but for the -modelScore one: the jar prints
 * that score with String.format("%.8f"), not Double.toString. */
Test(jdouble, berkeley_references)
{
    static const char *const dirs[] = {REFERENCE, REFERENCE "/cli"};
    long total = 0;
    int files = 0;
    for (int k = 0; k < 2; k++) {
        DIR *d = opendir(dirs[k]);
        if (!d)
            cr_skip_test("no %s: the reference outputs of ../shared", dirs[k]);
        for (struct dirent *e; (e = readdir(d));) {
            const char *name = e->d_name;
            size_t n = strlen(name);
            int tsv = (n > 4 && !strcmp(name + n - 4, ".tsv")) ||
                      (n > 7 && !strcmp(name + n - 7, ".tsv.gz"));
            int txt = k == 1 && n > 4 && !strcmp(name + n - 4, ".txt") &&
                      !strstr(name, "modelscore");
            if (!tsv && !txt)
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dirs[k], name);
            total += check_file(path);
            files++;
        }
        closedir(d);
    }
    cr_expect_geq(files, 20, "only %d reference files", files);
    cr_expect_gt(total, 30000, "only %ld numbers in %d files", total, files);
    cr_log_info("jdouble: %ld numbers of %d reference files printed back as the jar did",
                total, files);
}

/* String.format("%.8f", x) as Java 17 prints it (the values and texts from Java 17 itself):
 * the half-up rounding of Double.toString's digits, the sign of a negative zero result. */
Test(jdouble, java17_fixed_decimals)
{
    static const struct {
        double x;
        const char *text;
    } v[] = {
        {-3.650252299549541, "-3.65025230"}, {0.125, "0.12500000"}, {-0.125, "-0.12500000"},
        {-1e-10, "-0.00000000"}, {0.0, "0.00000000"}, {-0.0, "-0.00000000"},
        {1e-9, "0.00000000"}, {5e-9, "0.00000001"}, {-4.999999999e-9, "-0.00000000"},
        {123.456789125, "123.45678913"}, {-9.999999995, "-10.00000000"},
        {99999.999999995, "100000.00000000"}, {1e7, "10000000.00000000"},
        {-2.5e-9, "-0.00000000"}, {1.5e-8, "0.00000002"}, {0.00123456789, "0.00123457"},
        {-22.16834602283579, "-22.16834602"}, {1e20, "100000000000000000000.00000000"},
        {0.5, "0.50000000"}, {4.5e-9, "0.00000000"},
    };
    char buf[JDOUBLE_BUFSIZE + 360];
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
        size_t n = jdouble_format_fixed(v[k].x, 8, buf, sizeof buf);
        cr_expect_str_eq(buf, v[k].text, "%.17g", v[k].x);
        cr_expect_eq(n, strlen(v[k].text));
    }
    cr_expect_str_eq((jdouble_format_fixed(-1.0 / 0.0, 8, buf, sizeof buf), buf), "-Infinity");
    cr_expect_str_eq((jdouble_format_fixed(0.0 / 0.0, 8, buf, sizeof buf), buf), "NaN");
    cr_expect_str_eq((jdouble_format_fixed(0.125, 2, buf, sizeof buf), buf), "0.13");
    cr_expect_str_eq((jdouble_format_fixed(2.5, 0, buf, sizeof buf), buf), "3");
}
