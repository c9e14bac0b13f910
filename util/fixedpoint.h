/* fixedpoint: Viterbi's fixed-point binary arithmetic (issue 45), in one header for host
 * code and device code, so that every engine computes the same integers.
 *
 * A score x (a float32 natural log) is the int32 fixedpoint_of(x) = round(x * 2^16) (half to
 * even) in units of 2^-16 nats. A binary rule's value is the integer sum
 * fixedpoint_of(left) + fixedpoint_of(right) + fixedpoint_of(w) (w the rule's float log
 * score), maxima are integer maxima, and the best sum becomes a float again by
 * fixedpoint_to_float (float(s) * 2^-16: one rounding to float32's 24 bits). Integer sums are
 * exact and associative, so every engine and every order of the rules gives the same bits.
 *
 * The range is chosen so that no sum can overflow and -inf survives every sum:
 *   - -inf is FIXEDPOINT_NINF; so is any score below FIXEDPOINT_LOWEST nats (-7,680), which
 *     is dropped as if it were -inf;
 *   - scores above FIXEDPOINT_HIGHEST nats (+256) saturate there (no log probability of a
 *     grammar comes near it);
 *   - rule weights must lie in [FIXEDPOINT_WLOWEST, 0] nats (checked at grammar load:
 *     fixedpoint_weight_ok).
 * The engines note a sentence with a clamped score (fixedpoint_clamps; chart.out_of_range)
 * and the decoders parse it again in double, so the range never changes a tree: only an
 * improbable item or an absurd score is ever clamped (with sample-sm5 the best tree of the
 * longest dev sentence, 75 words, scores -471 nats).
 * In units (F = NINF, A = -lowest, B = highest, W = -wlowest): the least sum 2F - W is
 * INT_MIN, the greatest 2B; a sum with a -inf in it is at most F + B, a sum of two finite
 * scores and a weight at least -2A - W, and FIXEDPOINT_CUT lies between the two: a sum below
 * it is -inf. */
#ifndef CKY_UTIL_FIXEDPOINT_H
#define CKY_UTIL_FIXEDPOINT_H

#include <math.h>

#ifdef __CUDACC__
#define FIXEDPOINT_HD __host__ __device__
#else
#define FIXEDPOINT_HD
#endif

#define FIXEDPOINT_ONE 65536.0f                     /* 2^16 units a nat */
#define FIXEDPOINT_NINF (-(1 << 30) + (1 << 23))    /* F: -inf */
#define FIXEDPOINT_CUT (-(1 << 30) + (1 << 25))     /* sums below it hold a -inf */
#define FIXEDPOINT_LOWEST (-7680.0f)                /* -A / 2^16: (-(1 << 29) + (1 << 25)) */
#define FIXEDPOINT_HIGHEST 256.0f                   /* B / 2^16: (1 << 24) */
#define FIXEDPOINT_WLOWEST (-256.0f)                /* -W / 2^16: (-(1 << 24)) */

/* Whether a finite score x is outside the range, and fixedpoint_of clamps it. */
static inline FIXEDPOINT_HD int fixedpoint_clamps(float x)
{
    return x != -INFINITY && (x < FIXEDPOINT_LOWEST || x > FIXEDPOINT_HIGHEST);
}

/* The fixed-point value of float score x (-inf and scores below FIXEDPOINT_LOWEST:
 * FIXEDPOINT_NINF; above FIXEDPOINT_HIGHEST: that). */
static inline FIXEDPOINT_HD int fixedpoint_of(float x)
{
    if (!(x >= FIXEDPOINT_LOWEST)) /* (NaN never reaches here: the workspaces hold none) */
        return FIXEDPOINT_NINF;
    if (x > FIXEDPOINT_HIGHEST)
        x = FIXEDPOINT_HIGHEST;
#ifdef __CUDA_ARCH__
    return __float2int_rn(x * FIXEDPOINT_ONE);
#else
    return (int)lrintf(x * FIXEDPOINT_ONE); /* the default rounding: to nearest, ties even */
#endif
}

/* The float score of sum s (-inf below FIXEDPOINT_CUT). */
static inline FIXEDPOINT_HD float fixedpoint_to_float(int s)
{
    if (s < FIXEDPOINT_CUT)
        return -INFINITY;
#ifdef __CUDA_ARCH__
    return __fmul_rn(__int2float_rn(s), 1.0f / FIXEDPOINT_ONE);
#else
    return (float)s * (1.0f / FIXEDPOINT_ONE);
#endif
}

/* The value of a binary rule of weight w over children left and right. */
static inline FIXEDPOINT_HD float fixedpoint_binary(float w, float left, float right)
{
    return fixedpoint_to_float(fixedpoint_of(left) + fixedpoint_of(right) + fixedpoint_of(w));
}

/* Whether a binary rule weight is within the range (finite weights only: rules of -inf
 * weight are not in the kernels). */
static inline int fixedpoint_weight_ok(float w)
{
    return w >= FIXEDPOINT_WLOWEST && w <= 0.0f;
}

#endif
