/* codegen generic: the generic kernel's table of a partition, and the host reference of
 * the kernel (generic.h says why a run's value is the open code's, bit for bit). */
#include <stdlib.h>
#include <string.h>

#include "../util/fixedpoint.h"
#include "internal.h"

cky_status codegen_generic_table(const codegen_partition *p, codegen_semiring sr,
                                 codegen_generic_rule **out)
{
    codegen_generic_rule *t = malloc(((size_t)p->nrule + 1) * sizeof *t);
    long *at = malloc(((size_t)p->dim[0] + 1) * sizeof *at);
    if (!t || !at) {
        free(t);
        free(at);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the generic kernel's table");
    }
    for (int b = 0; b < p->nblock; b++) { /* a counting sort by parent row: stable */
        const codegen_block *blk = &p->block[b];
        const codegen_rule *rule = p->rule + blk->first;
        memset(at, 0, ((size_t)p->dim[0] + 1) * sizeof *at);
        for (long i = 0; i < blk->nrule; i++)
            at[rule[i].p + 1]++;
        for (int x = 0; x < p->dim[0]; x++)
            at[x + 1] += at[x];
        for (long i = 0; i < blk->nrule; i++) {
            const codegen_rule *r = &rule[i];
            float w = codegen_weight(sr, r->w);
            int bits;
            memcpy(&bits, &w, sizeof bits);
            t[blk->first + at[r->p]++] = (codegen_generic_rule){
                r->l, r->r, r->p, sr == CODEGEN_SEMIRING_FIXED ? fixedpoint_of(r->w) : bits};
        }
    }
    free(at);
    *out = t;
    return CKY_OK;
}

void codegen_generic_host(const codegen_partition *p, const codegen_generic_rule *table, int k,
                          codegen_semiring sr, const float *left, const float *right,
                          float *parent, int n, int stride)
{
    const codegen_kernel *kn = &p->kernel[k];
    long long s = stride;
    for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++) {
        long end = p->block[b].first + p->block[b].nrule;
        for (int t = 0; t < n; t++)
            for (long i = p->block[b].first; i < end;) {
                int row = table[i].p;
                int v = codegen_generic_run((int)sr, table, &i, end, left + t, right + t, s);
                float *dst = parent + (long long)row * s + t;
                if (sr == CODEGEN_SEMIRING_SUM_PRODUCT) {
                    *dst = *dst + codegen_generic_float(v);
                } else if (sr == CODEGEN_SEMIRING_FIXED) {
                    int *d = (int *)dst;
                    *d = v > *d ? v : *d;
                } else {
                    float f = codegen_generic_float(floatkey(v));
                    *dst = f > *dst ? f : *dst;
                }
            }
    }
}
