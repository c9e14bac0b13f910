/* codegen family: the class-local substate numbering (X = phrasal, T = POS tag) and the
 * binary rules of one child-type family (XX, XT, TX, TT) in that numbering. */
#include <math.h>
#include <stdlib.h>

#include "codegen.h"
#include "../util/fixedpoint.h"

static const char *const family_names[CODEGEN_NFAMILY] = {"XX", "XT", "TX", "TT"};

const char *codegen_family_name(codegen_family_id id) { return family_names[id]; }

codegen_class codegen_family_left(codegen_family_id id)
{
    return id == CODEGEN_TX || id == CODEGEN_TT ? CODEGEN_T : CODEGEN_X;
}

codegen_class codegen_family_right(codegen_family_id id)
{
    return id == CODEGEN_XT || id == CODEGEN_TT ? CODEGEN_T : CODEGEN_X;
}

cky_status codegen_classes_init(const grammar *g, codegen_classes *c)
{
    *c = (codegen_classes){{0, 0}, {NULL, NULL}, NULL, NULL};
    size_t n = (size_t)g->nsub_total;
    c->local = malloc((n ? n : 1) * sizeof *c->local);
    c->cls = malloc(n ? n : 1);
    c->global[0] = malloc((n ? n : 1) * sizeof(int));
    c->global[1] = malloc((n ? n : 1) * sizeof(int));
    if (!c->local || !c->cls || !c->global[0] || !c->global[1]) {
        codegen_classes_free(c);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < g->nsym; s++) {
        int k = g->phrasal[s] ? CODEGEN_X : CODEGEN_T;
        for (int i = 0; i < g->nsub[s]; i++) {
            int id = g->sub_offset[s] + i;
            c->cls[id] = (unsigned char)k;
            c->local[id] = c->n[k];
            c->global[k][c->n[k]++] = id;
        }
    }
    return CKY_OK;
}

void codegen_classes_free(codegen_classes *c)
{
    free(c->local);
    free(c->cls);
    free(c->global[0]);
    free(c->global[1]);
    *c = (codegen_classes){{0, 0}, {NULL, NULL}, NULL, NULL};
}

int codegen_class_index(const codegen_classes *c, codegen_class cls, int global_sub)
{
    if (global_sub < 0 || !c->cls || c->cls[global_sub] != cls)
        return -1;
    return c->local[global_sub];
}

/* The float weight of a double log score; -0 becomes +0 so that no rule value is -0. */
static float family_weight(double score)
{
    float w = (float)score;
    return w == 0.0f ? 0.0f : w;
}

cky_status codegen_family_build(const grammar *g, const codegen_classes *c,
                                codegen_family_id id, codegen_family *f)
{
    codegen_class lc = codegen_family_left(id), rc = codegen_family_right(id);
    *f = (codegen_family){id, {c->n[CODEGEN_X], c->n[lc], c->n[rc]}, 0, NULL};
    long cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        long n = 0;
        for (int i = 0; i < g->nbinary; i++) {
            const grammar_binary *b = &g->binary[i];
            if (g->phrasal[b->left] != (lc == CODEGEN_X) ||
                g->phrasal[b->right] != (rc == CODEGEN_X))
                continue;
            int np = g->nsub[b->parent], p0 = g->sub_offset[b->parent];
            for (int k = 0; k < b->nrow; k++) {
                int l = c->local[g->sub_offset[b->left] + b->row_l[k]];
                int r = c->local[g->sub_offset[b->right] + b->row_r[k]];
                for (int p = 0; p < np; p++) {
                    double s = b->score[(long)k * np + p];
                    if (!isfinite(s) || (float)s == -INFINITY)
                        continue;
                    if (pass)
                        f->rule[n] = (codegen_rule){c->local[p0 + p], l, r, family_weight(s)};
                    n++;
                }
            }
        }
        if (pass == 0) {
            cap = n;
            f->rule = malloc((size_t)(cap ? cap : 1) * sizeof *f->rule);
            if (!f->rule)
                return cky_fail(CKY_ERR_NOMEM, "out of memory for %ld %s rules", cap,
                                codegen_family_name(id));
        }
        f->nrule = n;
    }
    return CKY_OK;
}

void codegen_family_free(codegen_family *f)
{
    free(f->rule);
    f->rule = NULL;
    f->nrule = 0;
}

const char *codegen_semiring_name(codegen_semiring sr)
{
    return sr == CODEGEN_SEMIRING_MAX_PLUS      ? "max-plus"
           : sr == CODEGEN_SEMIRING_SUM_PRODUCT ? "sum-product"
           : sr == CODEGEN_SEMIRING_FIXED       ? "fixed max-plus"
                                                : "?";
}

cky_status codegen_fixed_check(const grammar *g)
{
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        long n = (long)r->nrow * g->nsub[r->parent];
        for (long x = 0; x < n; x++) {
            float w = (float)r->score[x];
            if (w != -INFINITY && !fixedpoint_weight_ok(w))
                return cky_fail(CKY_ERR_LIMIT,
                                "fixed point: the binary rule %s -> %s %s has a weight of %g "
                                "nats, outside [%g, 0]", g->name[r->parent],
                                g->name[r->left], g->name[r->right], (double)w,
                                (double)FIXEDPOINT_WLOWEST);
        }
    }
    return CKY_OK;
}
