/* Tests of util/jmath.h: HotSpot's Math.log, against Java 17's own bits on thousands of
 * values (test/data/jmath_log.tsv, made by tools/JLogVectors.java on x86_64; make check-jlog
 * checks ten million more), the special cases, and that the C library's log and the Intel
 * variant would not pass for it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/io.h"
#include "../util/jmath.h"

#define VECTORS CKY_SOURCE "/test/data/jmath_log.tsv"

static double from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

typedef struct {
    long n;
    uint64_t (*x)[2]; /* [n]: the input's bits, Java's log's bits */
} vectors;

/* Every line of the vectors file: HEX<TAB>HEX. */
static vectors read_vectors(void)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(VECTORS, &in), CKY_OK, "%s", cky_last_error());
    vectors v = {0, NULL};
    long cap = 0;
    char *line;
    size_t len;
    while (io_lines_next(in, &line, &len) == CKY_OK && line) {
        char *end;
        uint64_t x = strtoull(line, &end, 16), y = 0;
        int ok = end == line + 16 && *end == '\t';
        if (ok) {
            y = strtoull(end + 1, &end, 16);
            ok = end == line + 33 && !*end;
        }
        cr_assert(ok, "%s:%ld: not HEX<TAB>HEX", VECTORS, io_lines_number(in));
        if (v.n == cap) {
            cap = cap ? 2 * cap : 4096;
            v.x = realloc(v.x, (size_t)cap * sizeof *v.x);
            cr_assert(v.x);
        }
        v.x[v.n][0] = x;
        v.x[v.n++][1] = y;
    }
    io_lines_close(in);
    cr_assert_gt(v.n, 4000, "only %ld vectors", v.n);
    return v;
}

/* The number of vectors whose log by f differs from Java's (the first few fail when `fail`). */
static long count_differences(const vectors *v, double (*f)(double), int fail)
{
    long bad = 0;
    for (long k = 0; k < v->n; k++) {
        uint64_t got = bits(f(from_bits(v->x[k][0])));
        if (got != v->x[k][1] && bad++ < 10 && fail)
            cr_expect_fail("log of %016llx: Java %016llx, jmath_log %016llx",
                           (unsigned long long)v->x[k][0], (unsigned long long)v->x[k][1],
                           (unsigned long long)got);
    }
    return bad;
}

Test(jmath, java17_vectors)
{
    vectors v = read_vectors();
    long bad = count_differences(&v, jmath_log, 1);
    cr_expect_eq(bad, 0, "%ld of %ld logs differ from Java's", bad, v.n);
    free(v.x);
}

/* The vectors tell HotSpot's log from the C library's: some would fail with C's log. */
Test(jmath, c_log_fails_the_vectors)
{
    vectors v = read_vectors();
    long bad = count_differences(&v, log, 0);
    cr_expect_geq(bad, 50, "C's log differs from Java's on only %ld of %ld vectors", bad, v.n);
    free(v.x);
}

static double log_intel(double x) { return jmath_log_cpu(x, JMATH_CPU_INTEL); }

/* With Intel's RCPPS the stub takes another table entry for some mantissas, and then its
 * log can be one ulp away (the vectors hold some such inputs); jmath_log is the AMD one. */
Test(jmath, intel_rcpps_moves_some_logs_one_ulp)
{
    vectors v = read_vectors();
    long moved = 0;
    for (long k = 0; k < v.n; k++) {
        double x = from_bits(v.x[k][0]);
        uint64_t amd = bits(jmath_log_cpu(x, JMATH_CPU_AMD)), intel = bits(log_intel(x));
        cr_assert_eq(amd, bits(jmath_log(x)));
        if (intel != amd) {
            moved++;
            cr_expect(intel - amd == 1 || amd - intel == 1, "%016llx: %016llx vs %016llx",
                      (unsigned long long)v.x[k][0], (unsigned long long)intel,
                      (unsigned long long)amd);
        }
    }
    cr_expect_geq(moved, 10, "the Intel variant differs on only %ld vectors", moved);
    free(v.x);
}

Test(jmath, special_cases)
{
    cr_expect_eq(bits(jmath_log(1.0)), 0, "log(1) = +0");
    cr_expect_eq(jmath_log(0.0), -INFINITY);
    cr_expect_eq(jmath_log(-0.0), -INFINITY);
    cr_expect_eq(jmath_log(INFINITY), INFINITY);
    /* Negative inputs and -inf: the x86 default NaN (0 * inf), sign bit set. */
    cr_expect_eq(bits(jmath_log(-1.0)), 0xfff8000000000000);
    cr_expect_eq(bits(jmath_log(-INFINITY)), 0xfff8000000000000);
    cr_expect_eq(bits(jmath_log(from_bits(0x8000000000000001))), 0xfff8000000000000);
    /* A NaN comes back quietened, its payload and sign kept (x + x). */
    cr_expect_eq(bits(jmath_log(from_bits(0x7ff0000000000001))), 0x7ff8000000000001);
    cr_expect_eq(bits(jmath_log(from_bits(0xfff4000000000000))), 0xfffc000000000000);
    /* The subnormals' path, the ends of the range, and log 2 itself (the last bit of which
     * the stub gets right). */
    cr_expect_eq(jmath_log(from_bits(1)), -744.4400719213812);
    cr_expect_eq(jmath_log(1.7976931348623157e308), 709.782712893384);
    cr_expect_eq(bits(jmath_log(2.0)), 0x3fe62e42fefa39ef);
}
