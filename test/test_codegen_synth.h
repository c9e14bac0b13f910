/* Test helper of the codegen tests: a synthetic rule family (not a test file itself). */
#ifndef CKY_TEST_CODEGEN_SYNTH_H
#define CKY_TEST_CODEGEN_SYNTH_H

#include <stdlib.h>

#include "../codegen/codegen.h"

/* A random family with hidden block structure: rules concentrate near l = p, r = 3 l (mod
 * dim), then each axis is relabelled at random, so that only a good ordering finds it.
 * nrule must stay well below dim * 400, the number of such (p, l, r). */
static inline void synth_family(codegen_family *f, int dim, long nrule, unsigned seed)
{
    srand(seed);
    f->id = CODEGEN_XX;
    f->dim[0] = f->dim[1] = f->dim[2] = dim;
    f->rule = malloc((size_t)nrule * sizeof *f->rule);
    f->nrule = 0;
    char *seen = calloc((size_t)dim * dim * dim, 1);
    while (f->nrule < nrule) {
        int p = rand() % dim, l = (p + rand() % 20) % dim, r = (l * 3 + rand() % 20) % dim;
        if (seen[((long)p * dim + l) * dim + r])
            continue;
        seen[((long)p * dim + l) * dim + r] = 1;
        float w = -(float)(rand() % 100000) / 997.0f;
        f->rule[f->nrule++] = (codegen_rule){p, l, r, w == 0.0f ? 0.0f : w};
    }
    /* hide the structure from index order: relabel each axis by a random permutation */
    int *perm = malloc(3 * (size_t)dim * sizeof *perm);
    for (int a = 0; a < 3; a++) {
        int *pa = perm + a * dim;
        for (int i = 0; i < dim; i++)
            pa[i] = i;
        for (int i = dim - 1; i > 0; i--) {
            int j = rand() % (i + 1), t = pa[i];
            pa[i] = pa[j];
            pa[j] = t;
        }
    }
    for (long i = 0; i < f->nrule; i++) {
        codegen_rule *x = &f->rule[i];
        x->p = perm[x->p];
        x->l = perm[dim + x->l];
        x->r = perm[2 * dim + x->r];
    }
    free(perm);
    free(seen);
}

#endif
