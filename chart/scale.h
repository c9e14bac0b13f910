/* scale: the exact power-of-two scaling of the sum-product charts (parser/sum_rules.h), in
 * one header for host and device code (C and CUDA C++), so that the cpu and gpu engines do
 * the same thing bit for bit.
 *
 * v x 2^shift is exact whenever the result is a normal float; a result below the normal
 * range would be rounded (and libraries differ there, the GPU's ldexpf included), so it is
 * dropped to 0 instead: the value is below 2^-126 of its cell's scale. */
#ifndef CKY_CHART_SCALE_H
#define CKY_CHART_SCALE_H

#include <math.h>

#include "cell.h"

/* v x 2^shift for v >= 0, or 0 where the result would be below FLT_MIN (never rounded). */
static inline CHART_HD float chart_scale(float v, int shift)
{
    int e;
    frexpf(v, &e); /* v = m x 2^e, m in [0.5, 1) */
    if (v == 0 || e + shift < -125)
        return 0;
    return ldexpf(v, shift);
}

#endif
