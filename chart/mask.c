/* mask: allocation of chart masks (see mask.h). */
#include "mask.h"

#include <stdlib.h>

cky_status chart_mask_init(chart_mask *m, int n, int nsym, int nsub)
{
    size_t cells = chart_ncells(n);
    m->n = n;
    m->nsym = nsym;
    m->nsub = nsub;
    m->state = calloc(cells * (size_t)nsym + 1, 1);
    m->sub = calloc(cells * (size_t)nsub + 1, 1);
    if (!m->state || !m->sub) {
        chart_mask_free(m);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the mask of a %d-word sentence", n);
    }
    return CKY_OK;
}

void chart_mask_free(chart_mask *m)
{
    free(m->state);
    free(m->sub);
    m->state = m->sub = NULL;
}
