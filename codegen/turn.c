/* codegen turn: a family with the roles of its axes turned, for the outside pass of the
 * sum-product semiring (see codegen_family_turn in codegen.h). Each rule's rows are permuted
 * so that the child being sent to is the output axis; the turned family is then partitioned
 * and planned as any other (its own cubes, code blocks and manifest), so the emitter and the
 * engines need nothing new. */
#include "codegen.h"

cky_status codegen_family_turn(codegen_family *f, codegen_role role)
{
    static const int axes[3][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}};
    if ((unsigned)role > CODEGEN_ROLE_RIGHT)
        return cky_fail(CKY_ERR_ARG, "codegen: no role %d", (int)role);
    if (role == CODEGEN_ROLE_PARENT) /* as built: nothing to permute */
        return CKY_OK;
    const int *ax = axes[role];
    int dim[3];
    for (int a = 0; a < 3; a++)
        dim[a] = f->dim[ax[a]];
    for (int a = 0; a < 3; a++)
        f->dim[a] = dim[a];
    for (long i = 0; i < f->nrule; i++) {
        codegen_rule *r = &f->rule[i];
        int rows[3] = {r->p, r->l, r->r};
        r->p = rows[ax[0]];
        r->l = rows[ax[1]];
        r->r = rows[ax[2]];
    }
    return CKY_OK;
}
