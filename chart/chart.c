/* chart: allocation of span-major CKY charts (see chart.h). */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cky_status chart_new(int n, int nsub, chart_mode mode, chart **out)
{
    chart *c = calloc(1, sizeof *c);
    size_t m = chart_ncells(n) * (size_t)nsub;
    if (c) {
        c->pre = malloc(m * sizeof *c->pre);
        c->post = malloc(m * sizeof *c->post);
    }
    if (!c || !c->pre || !c->post) {
        chart_free(c);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the chart of a %d-word sentence", n);
    }
    for (size_t k = 0; k < m; k++)
        c->pre[k] = c->post[k] = -INFINITY;
    c->n = n;
    c->nsub = nsub;
    c->mode = mode;
    *out = c;
    return CKY_OK;
}

void chart_free(chart *c)
{
    if (!c)
        return;
    free(c->pre);
    free(c->post);
    free(c);
}

int chart_compare(const chart *a, const chart *b, char *msg, size_t size)
{
    if (a->n != b->n || a->nsub != b->nsub) {
        snprintf(msg, size, "charts of different shapes (%d words x %d substates vs %d x %d)",
                 a->n, a->nsub, b->n, b->nsub);
        return 1;
    }
    for (int d = 1; d <= a->n; d++)
        for (int i = 0; i + d <= a->n; i++)
            for (int layer = 0; layer < 2; layer++) {
                const double *x = layer ? chart_post(a, i, i + d) : chart_pre(a, i, i + d);
                const double *y = layer ? chart_post(b, i, i + d) : chart_pre(b, i, i + d);
                for (int s = 0; s < a->nsub; s++) {
                    if (memcmp(&x[s], &y[s], sizeof x[s]) == 0)
                        continue;
                    snprintf(msg, size,
                             "cell (%d, %d) %s-unary substate %d: %.17g vs %.17g (diff %.3g)", i,
                             i + d, layer ? "post" : "pre", s, x[s], y[s], x[s] - y[s]);
                    return 1;
                }
            }
    return 0;
}
