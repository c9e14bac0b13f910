/* jdouble: doubles printed exactly as Java 17's Double.toString prints them.
 *
 * The Berkeley parser prints its scores with Double.toString, and Java before JDK 19 (so the
 * Java 17 the jar runs on) computes those digits with FloatingDecimal's old algorithm, which
 * does not always give the shortest digits that read back to the same double: 2^-44 prints
 * as "5.6843418860808015E-14" (the shortest has 16 digits), 1e23 as "9.999999999999999E22",
 * 2.82879384806159E17 as "2.82879384806159008E17". This module reproduces that algorithm
 * step for step, its 64-bit path's wrap-around arithmetic included, so that cky writes the
 * bytes the jar writes. Checked against Java 17 itself (test/data/jdouble.tsv, made by
 * tools/JDoubleVectors.java) and on every score of the jar's reference outputs.
 *
 * The text: "NaN", "Infinity", "-Infinity", "0.0", "-0.0"; for 1e-3 <= |x| < 1e7 plain
 * decimal notation with at least one digit after the point ("100.0", "0.001", "3.25");
 * otherwise computerized scientific notation, one digit before the point, at least one after,
 * "E" and the exponent ("1.0E7", "-4.9E-324", "1.7976931348623157E308"). */
#ifndef CKY_UTIL_JDOUBLE_H
#define CKY_UTIL_JDOUBLE_H

#include <stddef.h>

/* Enough for any double's text and its NUL ("-2.2250738585072014E-308" is 24 characters). */
#define JDOUBLE_BUFSIZE 32

/* Write Double.toString(x) of Java 17 into buf (NUL-terminated, cut short to n - 1
 * characters when n is too small, as snprintf does) and return its length. */
size_t jdouble_format(double x, char *buf, size_t n);

/* Write String.format("%.<decimals>f", x) of Java 17 into buf (as jdouble_format; 0 <=
 * decimals <= 17): Java's Formatter rounds the digits of Double.toString's algorithm half up
 * (FormattedFloatingDecimal.applyPrecision), not the exact binary value, so 0.125 gives
 * "0.13" at 2 decimals where C's printf gives "0.12". A negative value that rounds to 0
 * keeps its sign ("-0.00000000"); "NaN", "Infinity", "-Infinity" as Java prints them. Buffers
 * of JDOUBLE_BUFSIZE + 340 characters hold any double. */
size_t jdouble_format_fixed(double x, int decimals, char *buf, size_t n);

#endif
