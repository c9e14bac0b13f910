/* scale: the exact power-of-two scaling of the sum-product charts (semiring/sum_rules.h), in
 * one header for host and device code (C and CUDA C++), done on the bits of the float with
 * integer operations only, so that the cpu and gpu engines do the same thing bit for bit
 * whatever their libraries' frexpf and ldexpf do with subnormal numbers.
 *
 * Subnormal floats are 0 here: a value below 2^-126 of its scale, in or out, is dropped. */
#ifndef CKY_CHART_SCALE_H
#define CKY_CHART_SCALE_H

#include <stdint.h>
#include <string.h>

#include "cell.h"

static inline CHART_HD uint32_t chart_bits(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static inline CHART_HD float chart_float(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* For v > 0 normal: the k with v in [2^(k-1), 2^k) (frexpf's exponent); CHART_EXP_NONE for
 * 0 or a subnormal v (which the charts treat as 0). */
static inline CHART_HD int chart_exponent(float v)
{
    int e = (int)((chart_bits(v) >> 23) & 0xff);
    return e == 0 ? CHART_EXP_NONE : e - 126;
}

/* v x 2^shift for v >= 0 finite: exact; 0 where v or the result is below the normal range. */
static inline CHART_HD float chart_scale(float v, int shift)
{
    uint32_t b = chart_bits(v);
    int e = (int)((b >> 23) & 0xff);
    if (e == 0 || shift <= -e)
        return 0;
    if (e + shift >= 255) /* beyond float: cannot happen for scores <= 1 scaled down */
        return chart_float(0x7f800000u);
    return chart_float((b & 0x807fffffu) | ((uint32_t)(e + shift) << 23));
}

#endif
