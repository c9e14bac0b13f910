/* cell: the numbering of the cells of a chart, in one header for host and device code
 * (C and CUDA C++): cells (i, j), 0 <= i < j <= n, by span length, then start. */
#ifndef CKY_CHART_CELL_H
#define CKY_CHART_CELL_H

#include <stddef.h>

#ifdef __CUDACC__
#define CHART_HD __host__ __device__
#else
#define CHART_HD
/* The exponent of an all-zero layer in the scaled sum-product charts (value = float x 2^e):
 * far below any real one, and the sum of three of them still fits an int. */
#define CHART_EXP_NONE (-(1 << 29))

#endif

/* Number of cells of a chart over n words: n(n+1)/2. */
static inline CHART_HD size_t chart_ncells(int n) { return (size_t)n * (n + 1) / 2; }

/* Index of cell (i, j): cells of span d = j - i start after all shorter spans. */
static inline CHART_HD size_t chart_cell(int n, int i, int j)
{
    int d = j - i;
    return (size_t)(d - 1) * n - (size_t)(d - 1) * (d - 2) / 2 + i;
}

/* The exponent of an all-zero layer in the scaled sum-product charts (value = float x 2^e):
 * far below any real one, and the sum of three of them still fits an int. */
#define CHART_EXP_NONE (-(1 << 29))

#endif
