/* codegen turn: a partition with the roles of its axes turned, for the outside pass of the
 * sum-product semiring (see codegen_partition_turn in codegen.h). The cubes, kernels and
 * code blocks stay; each rule's rows are permuted so that the child being sent to is the
 * output axis, and every block is ordered and planned again for its new output rows (the
 * schedule of schedule.h), so the emitter and the engines need nothing new. */
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

/* Rows of the turned rule: (output, first factor, second factor). */
static codegen_rule turn_rule(codegen_rule r, codegen_role role)
{
    if (role == CODEGEN_ROLE_LEFT)
        return (codegen_rule){r.l, r.p, r.r, r.w};
    if (role == CODEGEN_ROLE_RIGHT)
        return (codegen_rule){r.r, r.p, r.l, r.w};
    return r;
}

cky_status codegen_partition_turn(const codegen_partition *p, codegen_role role,
                                  codegen_partition *out)
{
    static const int axes[3][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}};
    if ((unsigned)role > CODEGEN_ROLE_RIGHT)
        return cky_fail(CKY_ERR_ARG, "codegen: no role %d", (int)role);
    const int *ax = axes[role];
    *out = *p;
    out->rule = malloc((size_t)(p->nrule ? p->nrule : 1) * sizeof *out->rule);
    out->kernel = malloc((size_t)(p->nkernel ? p->nkernel : 1) * sizeof *out->kernel);
    out->block = malloc((size_t)(p->nblock ? p->nblock : 1) * sizeof *out->block);
    long most = 1;
    for (int b = 0; b < p->nblock; b++)
        most = p->block[b].nrule > most ? p->block[b].nrule : most;
    unsigned char *flags = malloc((size_t)most);
    cky_status st = CKY_OK;
    if (!out->rule || !out->kernel || !out->block || !flags) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory turning a partition");
        goto done;
    }
    for (int a = 0; a < 3; a++) {
        out->dim[a] = p->dim[ax[a]];
        out->shape.major[a] = p->shape.major[ax[a]];
        out->shape.minor[a] = p->shape.minor[ax[a]];
    }
    memcpy(out->kernel, p->kernel, (size_t)p->nkernel * sizeof *out->kernel);
    for (long i = 0; i < p->nrule; i++)
        out->rule[i] = turn_rule(p->rule[i], role);
    out->max_live = 0;
    out->loads = 0; /* of the turned blocks; the equal-width and candidate figures stay */
    for (int b = 0; b < p->nblock && !st; b++) {
        const codegen_block *old = &p->block[b];
        codegen_block *blk = &out->block[b];
        int rows[3] = {old->nparent, old->nleft, old->nright};
        *blk = (codegen_block){old->first, old->nrule, rows[ax[1]], rows[ax[2]], rows[ax[0]],
                               0, 0};
        codegen_rule *r = out->rule + blk->first;
        if (!(st = codegen_block_order(r, blk->nrule, out->dim, out->shape.live_limit)))
            st = codegen_block_plan(r, blk->nrule, out->dim, out->shape.live_limit, flags,
                                    &blk->max_live, &blk->loads);
        if (blk->max_live > out->max_live)
            out->max_live = blk->max_live;
        out->loads += blk->loads;
    }
done:
    free(flags);
    if (st) {
        free(out->rule);
        free(out->kernel);
        free(out->block);
        memset(out, 0, sizeof *out);
    }
    return st;
}
