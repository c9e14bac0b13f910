/* Tests of the generic kernel's table and loop (codegen/generic.h): the table holds each
 * code block's rules sorted by parent, stably; run from it, every kernel of a partition
 * whose plan interleaves parents (live limit 16) gives the host build's parents bit for
 * bit, in max-plus, fixed max-plus and sum-product; and the comparison sees an order
 * change: the sum-product runs reversed give other bits. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/internal.h"
#include "../util/fixedpoint.h"
#include "test_codegen_synth.h"

#define DIM 40
#define N 77
#define STRIDE 96

static void partition(codegen_partition *p, codegen_family *f)
{
    synth_family(f, DIM, 3000, 33);
    for (long i = 0; i < f->nrule; i++) /* log scores of probabilities: (-10, 0] */
        f->rule[i].w = f->rule[i].w / 10.0f;
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("2x2x1/2x1x2", &shape), CKY_OK);
    shape.live_limit = 16; /* parents regrouped and rows reloaded within blocks */
    cr_assert_eq(codegen_partition_build(f, shape, p), CKY_OK);
    cr_assert_gt(p->nkernel, 1);
}

/* Child rows: log scores in (-20, 0] (max-plus), their fixed-point values, or
 * probabilities in [0, 1] with some exact zeros (sum-product). */
static void fill(float *x, codegen_semiring sr)
{
    for (int i = 0; i < DIM * STRIDE; i++) {
        int u = rand();
        float v = -(float)(u % 100003) / 5000.0f;
        if (sr == CODEGEN_SEMIRING_FIXED) {
            int q = fixedpoint_of(v);
            memcpy(&x[i], &q, sizeof q);
        } else {
            x[i] = sr == CODEGEN_SEMIRING_SUM_PRODUCT ? (u % 11 ? expf(v / 4) : 0.0f) : v;
        }
    }
}

/* The parent workspace's start: -inf, or 0 for sum-product. */
static void start(float *x, codegen_semiring sr)
{
    for (int i = 0; i < DIM * STRIDE; i++)
        if (sr == CODEGEN_SEMIRING_FIXED) {
            int q = FIXEDPOINT_NINF;
            memcpy(&x[i], &q, sizeof q);
        } else {
            x[i] = sr == CODEGEN_SEMIRING_SUM_PRODUCT ? 0.0f : -INFINITY;
        }
}

/* Every kernel of p through the host build. */
static void host_build(const codegen_partition *p, codegen_semiring sr, const float *left,
                       const float *right, float *parent)
{
    for (int k = 0; k < p->nkernel; k++) {
        char *src = NULL, name[32];
        cr_assert_eq(codegen_emit_kernel(p, k, 0, sr, &src), CKY_OK);
        codegen_kernel_name(p->family, k, name, sizeof name);
        void *handle = NULL;
        codegen_host_fn fn = NULL;
        cr_assert_eq(codegen_host_load(NULL, codegen_hash_str(CODEGEN_FNV_INIT, src), src, name,
                                       &handle, &fn),
                     CKY_OK, "%s", cky_last_error());
        fn(left, right, parent, N, STRIDE);
        dlclose(handle);
        free(src);
    }
}

/* The number of parent entries (of the N work items) whose bits differ. */
static int differ(const float *a, const float *b)
{
    int n = 0;
    for (int r = 0; r < DIM; r++)
        for (int t = 0; t < N; t++)
            n += memcmp(&a[r * STRIDE + t], &b[r * STRIDE + t], sizeof(float)) != 0;
    return n;
}

Test(codegen_generic, table_sorts_each_block_by_parent_stably)
{
    codegen_family f;
    codegen_partition p;
    partition(&p, &f);
    codegen_generic_rule *t;
    cr_assert_eq(codegen_generic_table(&p, CODEGEN_SEMIRING_MAX_PLUS, &t), CKY_OK);
    long interleaved = 0;
    for (int b = 0; b < p.nblock; b++) {
        const codegen_block *blk = &p.block[b];
        long at = blk->first;
        for (int x = 0; x < DIM; x++) /* parent x's rules, in the block's order */
            for (long i = blk->first; i < blk->first + blk->nrule; i++) {
                const codegen_rule *r = &p.rule[i];
                if (r->p != x)
                    continue;
                float w;
                memcpy(&w, &t[at].w, sizeof w);
                cr_assert(t[at].p == r->p && t[at].l == r->l && t[at].r == r->r && w == r->w,
                          "block %d entry %ld: not rule %ld", b, at, i);
                at++;
            }
        cr_assert_eq(at, blk->first + blk->nrule);
        for (long i = blk->first + 1; i < blk->first + blk->nrule; i++)
            interleaved += p.rule[i].p < p.rule[i - 1].p;
    }
    cr_assert_gt(interleaved, 0, "no block's order interleaves its parents: nothing sorted");
    free(t);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

Test(codegen_generic, host_reference_is_the_host_build_bit_for_bit, .timeout = 300)
{
    codegen_family f;
    codegen_partition p;
    partition(&p, &f);
    const codegen_semiring srs[] = {CODEGEN_SEMIRING_MAX_PLUS, CODEGEN_SEMIRING_FIXED,
                                    CODEGEN_SEMIRING_SUM_PRODUCT};
    static float left[DIM * STRIDE], right[DIM * STRIDE], want[DIM * STRIDE],
        got[DIM * STRIDE];
    for (int s = 0; s < 3; s++) {
        codegen_semiring sr = srs[s];
        fill(left, sr);
        fill(right, sr);
        start(want, sr);
        start(got, sr);
        host_build(&p, sr, left, right, want);
        codegen_generic_rule *t;
        cr_assert_eq(codegen_generic_table(&p, sr, &t), CKY_OK);
        for (int k = 0; k < p.nkernel; k++)
            codegen_generic_host(&p, t, k, sr, left, right, got, N, STRIDE);
        cr_assert_eq(differ(want, got), 0, "%s: %d parents differ",
                     codegen_semiring_name(sr), differ(want, got));
        static float empty[DIM * STRIDE]; /* the rules reach most parent rows */
        start(empty, sr);
        int reached = 0;
        for (int r = 0; r < DIM; r++)
            reached += memcmp(&got[r * STRIDE], &empty[r * STRIDE], sizeof(float)) != 0;
        cr_assert_gt(reached, DIM / 2, "%s: %d rows reached", codegen_semiring_name(sr),
                     reached);
        if (sr == CODEGEN_SEMIRING_SUM_PRODUCT) { /* each run backwards: other sums */
            for (int b = 0; b < p.nblock; b++) {
                long end = p.block[b].first + p.block[b].nrule;
                for (long i = p.block[b].first, j; i < end; i = j) {
                    for (j = i; j < end && t[j].p == t[i].p; j++)
                        ;
                    for (long x = i, y = j - 1; x < y; x++, y--) {
                        codegen_generic_rule q = t[x];
                        t[x] = t[y];
                        t[y] = q;
                    }
                }
            }
            start(got, sr);
            for (int k = 0; k < p.nkernel; k++)
                codegen_generic_host(&p, t, k, sr, left, right, got, N, STRIDE);
            cr_assert_gt(differ(want, got), 0, "reversed runs gave the same sums");
        }
        free(t);
    }
    codegen_partition_free(&p);
    codegen_family_free(&f);
}
