/* scaling: the jar's ScalingTools (edu.berkeley.nlp.util), with Java's int arithmetic, and
 * the two steps its scaled passes repeat: folding a batch of terms into a scaled vector, and
 * adding a cell's unary terms to it. */
#include <math.h>
#include <string.h>

#include "maxrule_internal.h"

#define MR_LOGSCALE 100

static double scale_base(void) { return exp(MR_LOGSCALE); }

double mr_scale_factor(int log_scale)
{
    double s = scale_base();
    if (log_scale == MR_NO_SCALE)
        return 0.0;
    switch (log_scale) {
    case 0: return 1.0;
    case 1: return s;
    case 2: return s * s;
    case 3: return s * s * s;
    case -1: return 1.0 / s;
    case -2: return 1.0 / s / s;
    case -3: return 1.0 / s / s / s;
    default: return pow(s, (double)log_scale);
    }
}

double mr_array_max(const double *v, int len)
{
    double m = -INFINITY;
    for (int i = 0; i < len; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

int mr_scale_array(double *scores, int len, int previous)
{
    if (previous == MR_NO_SCALE)
        return previous;
    double s = scale_base();
    int log_scale = 0;
    double scale = 1.0, max = mr_array_max(scores, len);
    if (max == INFINITY)
        return 0;
    if (max == 0)
        return previous;
    while (max > s) {
        max /= s;
        scale *= s;
        log_scale += 1;
    }
    while (max > 0.0 && max < 1.0 / s) {
        max *= s;
        scale /= s;
        log_scale -= 1;
    }
    if (log_scale != 0)
        for (int i = 0; i < len; i++)
            scores[i] /= scale;
    return mr_jadd(previous, log_scale);
}

void mr_scale_to(double *scores, int len, int previous, int scale)
{
    int diff = mr_jsub(previous, scale);
    if (diff == 0)
        return;
    double max = mr_array_max(scores, len);
    if (isinf(max) || isnan(max) || max == 0.0) /* SloppyMath.isDangerous */
        return;
    double f = mr_scale_factor(diff);
    if (diff != INT_MIN && (diff >= 800 || diff <= -800)) { /* Math.abs(MIN_VALUE) < 0 */
        memset(scores, 0, (size_t)len * sizeof *scores);
        return;
    }
    for (int i = 0; i < len; i++)
        scores[i] *= f;
}

void mr_fold_add(mr_chart *c, double *acc, int scale, double *dst, int ndst, int *dst_scale)
{
    int cur = mr_scale_array(acc, c->maxsub, scale);
    if (*dst_scale != cur) {
        if (*dst_scale == MR_NO_SCALE) {
            *dst_scale = cur;
        } else {
            int ns = cur > *dst_scale ? cur : *dst_scale;
            mr_scale_to(acc, c->maxsub, cur, ns);
            mr_scale_to(dst, ndst, *dst_scale, ns);
            *dst_scale = ns;
        }
    }
    for (int x = 0; x < ndst; x++)
        if (acc[x] > 0)
            dst[x] += acc[x];
    memset(acc, 0, (size_t)c->maxsub * sizeof *acc);
}

void mr_add_unaries(double *vec, int n, int *scale, double *after, int after_scale)
{
    int ns = *scale > after_scale ? *scale : after_scale;
    mr_scale_to(vec, n, *scale, ns);
    mr_scale_to(after, n, after_scale, ns);
    *scale = ns;
    for (int x = 0; x < n; x++)
        if (after[x] > 0)
            vec[x] += after[x];
}
