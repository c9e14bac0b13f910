/* jdouble: Java 17's Double.toString (jdouble.h).
 *
 * The digits come from JDK 17's FloatingDecimal.BinaryToASCIIBuffer.dtoa, reproduced here
 * with its quirks, for they decide the bytes:
 *  - integers below 2^63 are printed from the integer itself (their last digits rounded off
 *    past 2^54, where the double no longer holds them);
 *  - otherwise the value is B / S * 10^e with an error margin M (half an ulp, a quarter of
 *    one at a power of two), and digits are generated until the remainder is within M of
 *    either end: a symmetric test, so values just above a power of two may get a digit more
 *    than the shortest;
 *  - for E notation (|x| < 1e-3 or >= 1e7) the test is skipped after the first digit, so
 *    those always have at least two digits;
 *  - the arithmetic, 64-bit or big integers, is chosen by estimated bit counts, and the two
 *    paths differ: the 64-bit one stops when B + M > 10 S, the big one when B + M >= 10 S,
 *    and the 64-bit one wraps around on overflow (M * 10, B + M, 2 B), as Java's long does.
 * The estimate of the decimal exponent is a double computation that must round as Java's
 * does: plain IEEE double arithmetic, no fused multiply-add (-std=c11 keeps GCC from
 * contracting). */
#include "jdouble.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

/* ---- exact unsigned integers, just big enough for dtoa's B, S, M and 10 S ---- */

/* B < 10 S <= 2^1030 for the largest doubles, B <= 2^860 for the least; M grows by 10 per
 * digit (at most 19): 1536 bits leave room. */
#define BIG_WORDS 48

typedef struct big {
    uint32_t w[BIG_WORDS]; /* little-endian words */
    int n;                 /* words in use; w[n - 1] != 0 unless n == 0 */
} big;

static void big_trim(big *a)
{
    while (a->n > 0 && a->w[a->n - 1] == 0)
        a->n--;
}

static void big_mul_small(big *a, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->w[i] * m + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) {
        CKY_ASSERT(a->n < BIG_WORDS, "jdouble: %d words are not enough", BIG_WORDS);
        a->w[a->n++] = (uint32_t)carry;
    }
}

static void big_shl(big *a, int bits)
{
    int words = bits / 32, r = bits % 32;
    if (a->n == 0)
        return;
    CKY_ASSERT(a->n + words + 1 <= BIG_WORDS, "jdouble: %d words are not enough", BIG_WORDS);
    a->w[a->n + words] = 0;
    for (int i = a->n - 1; i >= 0; i--) {
        uint64_t t = (uint64_t)a->w[i] << r;
        a->w[i + words + 1] |= (uint32_t)(t >> 32);
        a->w[i + words] = (uint32_t)t;
    }
    memset(a->w, 0, (size_t)words * sizeof a->w[0]);
    a->n += words + 1;
    big_trim(a);
}

/* a = v * 5^p5 * 2^p2 */
static void big_set(big *a, uint64_t v, int p5, int p2)
{
    a->w[0] = (uint32_t)v;
    a->w[1] = (uint32_t)(v >> 32);
    a->n = 2;
    big_trim(a);
    for (; p5 >= 13; p5 -= 13)
        big_mul_small(a, 1220703125u); /* 5^13 */
    uint32_t rest = 1;
    while (p5-- > 0)
        rest *= 5;
    big_mul_small(a, rest);
    big_shl(a, p2);
}

static int big_cmp(const big *a, const big *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

static void big_add(big *sum, const big *a, const big *b)
{
    uint64_t carry = 0;
    int n = a->n > b->n ? a->n : b->n;
    for (int i = 0; i < n; i++) {
        uint64_t t = carry + (i < a->n ? a->w[i] : 0) + (i < b->n ? b->w[i] : 0);
        sum->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    sum->n = n;
    if (carry) {
        CKY_ASSERT(n < BIG_WORDS, "jdouble: %d words are not enough", BIG_WORDS);
        sum->w[sum->n++] = 1;
    }
}

static void big_sub(big *a, const big *b) /* a -= b, a >= b */
{
    int64_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t t = (int64_t)a->w[i] - (i < b->n ? b->w[i] : 0) - borrow;
        borrow = t < 0;
        a->w[i] = (uint32_t)(t + (borrow << 32));
    }
    big_trim(a);
}

/* FDBigInteger.quoRemIteration: returns q = b / s (a digit), b = 10 * (b mod s). */
static int big_digit(big *b, const big *s)
{
    int q = 0;
    while (big_cmp(b, s) >= 0) {
        big_sub(b, s);
        q++;
    }
    CKY_ASSERT(q < 10, "jdouble: digit %d", q);
    big_mul_small(b, 10);
    return q;
}

/* ---- the digits ---- */

/* The decimal digits of a positive double and Java's decExponent: the value is
 * 0.d[0]d[1]...d[n-1] * 10^exp. */
typedef struct digits {
    char d[24];
    int n, exp;
} digits;

/* ceil(log2(5^i)) for i < 27: the bit counts dtoa chooses its arithmetic by. */
static const int n5bits[27] = {0,  3,  5,  7,  10, 12, 14, 17, 19, 21, 24, 26, 28, 31,
                               33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61};

static uint64_t pow5(int i)
{
    uint64_t p = 1;
    while (i-- > 0)
        p *= 5;
    return p;
}

/* Add one to the last digit (FloatingDecimal.roundup): a carry out of the first digit makes
 * it 1 and the exponent one more, leaving the others (zeros) in place. */
static void round_up(digits *g)
{
    int i = g->n - 1;
    while (i > 0 && g->d[i] == '9')
        g->d[i--] = '0';
    if (g->d[i] == '9') {
        g->d[0] = '1';
        g->exp++;
    } else {
        g->d[i]++;
    }
}

/* The digits of the integer v (a double's value, below 2^63), the last `drop` of them
 * rounded off half up (developLongDigits). Trailing zeros are not digits. */
static void integer_digits(uint64_t v, int drop, digits *g)
{
    int exp = drop;
    if (drop) {
        uint64_t p10 = 1;
        for (int k = 0; k < drop; k++)
            p10 *= 10;
        uint64_t rest = v % p10;
        v = v / p10 + (rest >= p10 / 2);
    }
    while (v % 10 == 0) {
        v /= 10;
        exp++;
    }
    char rev[24];
    int n = 0;
    for (; v; v /= 10)
        rev[n++] = (char)('0' + v % 10);
    for (int k = 0; k < n; k++)
        g->d[k] = rev[n - 1 - k];
    g->n = n;
    g->exp = exp + n;
}

/* floor(log10(x)) estimated from x's significand and binary exponent (estimateDecExp): at
 * most one too high, never too low. */
static int estimate_exp10(uint64_t fract, int bin_exp)
{
    uint64_t one = (uint64_t)1023 << 52;
    double d2;
    uint64_t b = one | (fract & (((uint64_t)1 << 52) - 1));
    memcpy(&d2, &b, sizeof d2);
    double d = (d2 - 1.5) * 0.289529654 + 0.176091259 + (double)bin_exp * 0.301029995663981;
    int r = (int)d; /* floor(d), which Java takes from d's bits */
    return (double)r > d ? r - 1 : r;
}

/* The digits of the positive finite double 2^bin_exp * fract / 2^52 (fract normalized: bit
 * 52 set; nsig its significant bits, 53 but for subnormals), as FloatingDecimal.dtoa does
 * them for Double.toString. */
static void dtoa(int bin_exp, uint64_t fract, int nsig, digits *g)
{
    int tail = __builtin_ctzll(fract);
    int nfract = 53 - tail;                           /* significant bits of fract */
    int ntiny = nfract - bin_exp - 1 > 0 ? nfract - bin_exp - 1 : 0; /* bits after the point */
    if (ntiny == 0 && bin_exp <= 62) { /* (then bin_exp >= 0) */
        /* An integer: its digits, less those beyond the double's precision (one fewer than
         * 2^(bin_exp - nsig - 1) has). */
        static const int drop[] = {0, 0, 0, 0, 1, 1, 1, 2, 2};
        int d = bin_exp > nsig ? drop[bin_exp - nsig - 1] : 0;
        fract = bin_exp >= 52 ? fract << (bin_exp - 52) : fract >> (52 - bin_exp);
        integer_digits(fract, d, g);
        return;
    }
    int exp10 = estimate_exp10(fract, bin_exp);
    int b5 = exp10 < 0 ? -exp10 : 0, b2 = b5 + ntiny + bin_exp;
    int s5 = exp10 > 0 ? exp10 : 0, s2 = s5 + ntiny;
    int m5 = b5, m2 = b2 - nsig;
    fract >>= tail;
    b2 -= nfract - 1;
    int common = b2 < s2 ? b2 : s2;
    b2 -= common;
    s2 -= common;
    m2 -= common;
    if (nfract == 1) /* a power of two: the next double down is half as far */
        m2 -= 1;
    if (m2 < 0) {
        b2 -= m2;
        s2 -= m2;
        m2 = 0;
    }
    int bbits = nfract + b2 + (b5 < 27 ? n5bits[b5] : b5 * 3);
    int tensbits = s2 + 1 + (s5 + 1 < 27 ? n5bits[s5 + 1] : (s5 + 1) * 3);
    int n = 0, low, high;
    int64_t low_diff; /* 2 * remainder - 10 S, when both low and high */
    if (bbits < 64 && tensbits < 64) {
        /* In 64 bits, wrapping around as Java's long does (m * 10 and b + m can overflow:
         * the values are unsigned here, compared as two's complement). Java's 32-bit path
         * (bbits, tensbits < 32) serves floats only: for a double m2 >= 0 makes b2 at least
         * nsig (53) or b5 is at least 308. */
        uint64_t b = (fract * pow5(b5)) << b2, s = pow5(s5) << s2;
        uint64_t m = pow5(m5) << m2, tens = s * 10;
        int q = (int)(b / s);
        b = 10 * (b % s);
        m *= 10;
        low = (int64_t)b < (int64_t)m;
        high = (int64_t)(b + m) > (int64_t)tens;
        if (q == 0 && !high)
            exp10--;
        else
            g->d[n++] = (char)('0' + q);
        if (exp10 < -3 || exp10 >= 8)
            high = low = 0;
        while (!low && !high) {
            q = (int)(b / s);
            b = 10 * (b % s);
            m *= 10;
            if ((int64_t)m > 0) {
                low = (int64_t)b < (int64_t)m;
                high = (int64_t)(b + m) > (int64_t)tens;
            } else {
                low = high = 1;
            }
            g->d[n++] = (char)('0' + q);
        }
        low_diff = (int64_t)((b << 1) - tens);
    } else {
        big b, s, m, tens, sum;
        big_set(&b, fract, b5, b2);
        big_set(&s, 1, s5, s2);
        big_set(&m, 10, m5, m2); /* the margin, already times 10 as b will be */
        big_set(&tens, 10, s5, s2);
        int q = big_digit(&b, &s);
        big_add(&sum, &b, &m);
        low = big_cmp(&b, &m) < 0;
        high = big_cmp(&tens, &sum) <= 0;
        if (q == 0 && !high)
            exp10--;
        else
            g->d[n++] = (char)('0' + q);
        if (exp10 < -3 || exp10 >= 8)
            high = low = 0;
        while (!low && !high) {
            q = big_digit(&b, &s);
            big_mul_small(&m, 10);
            big_add(&sum, &b, &m);
            low = big_cmp(&b, &m) < 0;
            high = big_cmp(&tens, &sum) <= 0;
            g->d[n++] = (char)('0' + q);
        }
        low_diff = 0;
        if (high && low) {
            big_shl(&b, 1);
            low_diff = big_cmp(&b, &tens);
        }
    }
    CKY_ASSERT(n > 0 && n < (int)sizeof g->d, "jdouble: %d digits", n);
    g->n = n;
    g->exp = exp10 + 1;
    /* The last digit: rounded up when the remainder is nearer the next one (ties to even). */
    if (high && (!low || low_diff > 0 || (low_diff == 0 && (g->d[n - 1] & 1))))
        round_up(g);
}

/* Lay out the digits as Double.toString does (BinaryToASCIIBuffer.getChars). */
static size_t layout(int negative, const digits *g, char *out)
{
    char *p = out;
    if (negative)
        *p++ = '-';
    if (g->exp > 0 && g->exp < 8) { /* ddd.ddd */
        int whole = g->n < g->exp ? g->n : g->exp;
        memcpy(p, g->d, (size_t)whole);
        p += whole;
        if (whole < g->exp) {
            memset(p, '0', (size_t)(g->exp - whole));
            p += g->exp - whole;
            *p++ = '.';
            *p++ = '0';
        } else {
            *p++ = '.';
            if (whole < g->n) {
                memcpy(p, g->d + whole, (size_t)(g->n - whole));
                p += g->n - whole;
            } else {
                *p++ = '0';
            }
        }
    } else if (g->exp <= 0 && g->exp > -3) { /* 0.00ddd */
        *p++ = '0';
        *p++ = '.';
        memset(p, '0', (size_t)-g->exp);
        p += -g->exp;
        memcpy(p, g->d, (size_t)g->n);
        p += g->n;
    } else { /* d.dddEx */
        *p++ = g->d[0];
        *p++ = '.';
        if (g->n > 1) {
            memcpy(p, g->d + 1, (size_t)(g->n - 1));
            p += g->n - 1;
        } else {
            *p++ = '0';
        }
        *p++ = 'E';
        int e = g->exp - 1;
        if (e < 0) {
            *p++ = '-';
            e = -e;
        }
        if (e >= 100)
            *p++ = (char)('0' + e / 100);
        if (e >= 10)
            *p++ = (char)('0' + e / 10 % 10);
        *p++ = (char)('0' + e % 10);
    }
    return (size_t)(p - out);
}

size_t jdouble_format(double x, char *buf, size_t n)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int negative = (int)(bits >> 63);
    int bin_exp = (int)(bits >> 52) & 0x7ff;
    uint64_t fract = bits & (((uint64_t)1 << 52) - 1);
    char text[JDOUBLE_BUFSIZE];
    size_t len;
    if (bin_exp == 0x7ff) {
        len = (size_t)sprintf(text, "%s", fract ? "NaN" : negative ? "-Infinity" : "Infinity");
    } else if (bin_exp == 0 && fract == 0) {
        len = (size_t)sprintf(text, "%s", negative ? "-0.0" : "0.0");
    } else {
        int nsig = 53;
        if (bin_exp == 0) { /* subnormal: normalize, counting its significant bits */
            int lead = __builtin_clzll(fract);
            int shift = lead - 11;
            fract <<= shift;
            bin_exp = 1 - shift;
            nsig = 64 - lead;
        } else {
            fract |= (uint64_t)1 << 52;
        }
        digits g;
        dtoa(bin_exp - 1023, fract, nsig, &g);
        len = layout(negative, &g, text);
    }
    text[len] = '\0';
    if (n > 0) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(buf, text, k);
        buf[k] = '\0';
    }
    return len;
}

size_t jdouble_format_fixed(double x, int decimals, char *buf, size_t n)
{
    char text[JDOUBLE_BUFSIZE], dig[JDOUBLE_BUFSIZE + 2];
    if (x != x || x == 1.0 / 0.0 || x == -1.0 / 0.0 || decimals < 0 || decimals > 17)
        return jdouble_format(x, buf, n);
    jdouble_format(x, text, sizeof text);
    /* the dig d1 d2 ... of |x| = 0.d1d2... * 10^exp10: the mantissa's dig, less its
     * leading zeros, the point after its integer part, then the E exponent */
    const char *p = text + (text[0] == '-');
    int nd = 0, exp10 = 0, before_point = 1;
    for (; *p && *p != 'E'; p++) {
        if (*p == '.') {
            before_point = 0;
        } else if (nd == 0 && *p == '0') {
            exp10 -= !before_point;
        } else {
            dig[nd++] = *p;
            exp10 += before_point;
        }
    }
    if (*p == 'E')
        exp10 += atoi(p + 1);
    if (nd == 0) /* 0.0 */
        exp10 = 0;
    /* keep the dig down to 10^-decimals, the next rounding half up */
    int keep = exp10 + decimals;
    if (keep < 0) {
        nd = 0;
    } else if (keep < nd) {
        int up = dig[keep] >= '5';
        nd = keep;
        for (int k = nd - 1; up && k >= 0; k--) {
            if (dig[k] == '9') {
                dig[k] = '0';
            } else {
                dig[k]++;
                up = 0;
            }
        }
        if (up) { /* 999.. became 1000.. */
            memmove(dig + 1, dig, (size_t)nd);
            dig[0] = '1';
            nd++;
            exp10++;
        }
    }
    /* write: sign, integer part, point, decimals */
    char out[JDOUBLE_BUFSIZE + 360];
    size_t w = 0;
    if (text[0] == '-')
        out[w++] = '-';
    if (exp10 <= 0)
        out[w++] = '0';
    for (int k = 0; k < exp10; k++)
        out[w++] = k < nd ? dig[k] : '0';
    if (decimals > 0)
        out[w++] = '.';
    for (int k = 0; k < decimals; k++) {
        int at = exp10 + k;
        out[w++] = at >= 0 && at < nd ? dig[at] : '0';
    }
    out[w] = '\0';
    if (n > 0) {
        size_t c = w < n - 1 ? w : n - 1;
        memcpy(buf, out, c);
        buf[c] = '\0';
    }
    return w;
}
