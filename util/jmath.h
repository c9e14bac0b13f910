/* jmath: Java's Math.log as HotSpot computes it on x86_64, bit for bit.
 *
 * The Berkeley parser takes the logs of its rule and lexical probabilities with Math.log
 * (-viterbi mode; docs/berkeley.md), and on x86_64 HotSpot does not call StrictMath's fdlibm
 * for it but a stub of its own (StubRoutines::dlog, the Intel LIBM algorithm of
 * macroAssembler_x86_log.cpp in JDK 17, stubGenerator_x86_64_log.cpp later), which the
 * interpreter and both compilers use. It is not correctly rounded: it differs from
 * StrictMath.log and rarely from the C library's log in the last bit. This module repeats
 * its instructions in scalar C, so cky prints the digits the jar prints.
 *
 * One step of it depends on the processor: the stub starts from RCPPS, the approximate
 * reciprocal, whose bits Intel and AMD compute differently. The stub rounds it to 8 bits,
 * and for 65 of the 4096 12-bit prefixes of a mantissa (1.6%) the two round it to
 * neighbouring values; the log's last bit changes with it only rarely (25 of 60 million
 * random inputs in [0.5, 1), none of 50 million random doubles). jmath_log_cpu holds both
 * maps, measured over all 2^23 inputs the stub can give RCPPS on an AMD EPYC and an Intel
 * Xeon. jmath_log is the AMD one, checked bit for bit against Java 17 on the AMD EPYC
 * development machine (test/data/jmath_log.tsv, made by tools/JLogVectors.java; make
 * check-jlog: 10 million random doubles and every probability of the sample grammars); the
 * Intel one gives the same bytes on the jar's reference outputs. */
#ifndef CKY_UTIL_JMATH_H
#define CKY_UTIL_JMATH_H

/* The processors whose RCPPS jmath_log_cpu knows. */
typedef enum {
    JMATH_CPU_AMD,   /* AMD EPYC (Zen) */
    JMATH_CPU_INTEL, /* Intel Xeon */
} jmath_cpu;

/* Math.log(x) of Java 17 on x86_64 with `cpu`'s RCPPS: the same bits for every double,
 * the special cases as Java's: log(+0) = log(-0) = -inf, log(+inf) = +inf, log(1) = +0, a
 * negative x or -inf gives the x86 default NaN (sign bit set), a NaN itself quietened. */
double jmath_log_cpu(double x, jmath_cpu cpu);

/* Math.log(x) of Java 17 on an AMD x86_64 processor: jmath_log_cpu(x, JMATH_CPU_AMD). */
double jmath_log(double x);

#endif
