/* Tests of the sum-product kernel text (codegen.h): the host build of a multi-kernel
 * partition gives parents bit-identical to a plain C loop doing the same float operations in
 * the same order (kernels, code blocks, the plan's rule order, one fmaf per rule, a parent
 * register added into its row after its last rule of a block), without writing outside its
 * rows; the result is the rules' sum to float accuracy; the GPU form's partial slots, added
 * into the rows in slot order, give the same bits; NVRTC compiles the same text for
 * sm_90 without spills or atomics; the two semirings share partitions, never kernels, in
 * the cache, but for XX's automatic minor cubes; `cky compile` reports the partial slots. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codegen/internal.h"
#include "../grammar/grammar.h"
#include "../codegen/schedule.h"
#include "test_codegen_synth.h"
#include "test_guarded.h"

/* Random linear scores in [0, 1], some exactly 0 (an impossible substate). */
static void fill_probs(float *x, int rows, int n, int stride)
{
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < n; t++) {
            int u = rand();
            x[(size_t)r * stride + t] = u % 11 == 0 ? 0.0f : (float)(u % 100003) / 100003.0f;
        }
}

/* Code block b of p over n work items, its rules in the partition's (emission) order with
 * the plan's flags; each parent register, after its last rule, added into (add) or stored in
 * row to[parent] of out. */
static void run_block(const codegen_partition *p, int b, const float *left, const float *right,
                      float *out, const int *to, int add, int n, int stride)
{
    const codegen_block *blk = &p->block[b];
    const codegen_rule *rule = p->rule + blk->first;
    unsigned char *flags = malloc((size_t)blk->nrule);
    float *reg = malloc((size_t)p->dim[0] * sizeof *reg);
    int live;
    long loads;
    cr_assert_eq(codegen_block_plan(rule, blk->nrule, p->dim, p->shape.live_limit, flags, &live,
                                    &loads),
                 CKY_OK);
    for (int t = 0; t < n; t++)
        for (long i = 0; i < blk->nrule; i++) {
            const codegen_rule *r = &rule[i];
            float lr = left[(size_t)r->l * stride + t] * right[(size_t)r->r * stride + t];
            float w = codegen_weight(CODEGEN_SEMIRING_SUM_PRODUCT, r->w);
            reg[r->p] = fmaf(lr, w, (flags[i] & PLAN_FIRST_P) ? 0.0f : reg[r->p]);
            if (!(flags[i] & PLAN_LAST_P))
                continue;
            float *o = &out[(size_t)to[r->p] * stride + t];
            *o = add ? *o + reg[r->p] : reg[r->p];
        }
    free(flags);
    free(reg);
}

/* The plain loop: kernel by kernel, block by block (run_block), for every work item; parent
 * rows accumulate in `parent`. */
static void plain_loop(const codegen_partition *p, const float *left, const float *right,
                       float *parent, int n, int stride)
{
    int *same = malloc((size_t)p->dim[0] * sizeof *same);
    for (int x = 0; x < p->dim[0]; x++)
        same[x] = x;
    for (int b = 0; b < p->nblock; b++)
        run_block(p, b, left, right, parent, same, 1, n, stride);
    free(same);
}

/* Emit, host-build and run every sum-product kernel of p over n work items. */
static void host_run(const codegen_partition *p, const float *left, const float *right,
                     float *parent, int n, int stride)
{
    for (int k = 0; k < p->nkernel; k++) {
        char *src = NULL, name[32];
        cr_assert_eq(codegen_emit_kernel(p, k, 0, CODEGEN_SEMIRING_SUM_PRODUCT, &src), CKY_OK);
        cr_assert(strstr(src, "CKY_FMA(0.0f, lr, "), "no first-rule FMA in:\n%.400s", src);
        cr_assert_null(strstr(src, "CKY_MAX("), "a max in the sum-product text");
        codegen_kernel_name(p->family, k, name, sizeof name);
        void *handle = NULL;
        codegen_host_fn fn = NULL;
        cr_assert_eq(codegen_host_load(NULL, codegen_hash_str(CODEGEN_FNV_INIT, src), src, name,
                                       &handle, &fn),
                     CKY_OK, "%s", cky_last_error());
        fn(left, right, parent, n, stride);
        dlclose(handle);
        free(src);
    }
}

Test(codegen_sumprod, host_build_matches_plain_loop)
{
    codegen_family f;
    synth_family(&f, 40, 3000, 33);
    for (long i = 0; i < f.nrule; i++) /* log scores of probabilities: (-10, 0] */
        f.rule[i].w = f.rule[i].w / 10.0f;
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("2x2x1/2x1x2", &shape), CKY_OK);
    shape.live_limit = 16; /* parents regrouped and rows reloaded within blocks */
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    cr_assert_gt(p.nkernel, 1);
    const int n = 77, stride = 96, rows = 40;
    guarded left = guarded_new((size_t)rows * stride), right = guarded_new((size_t)rows * stride),
            parent = guarded_new((size_t)rows * stride);
    fill_probs(left.data, rows, n, stride);
    fill_probs(right.data, rows, n, stride);
    float *expect = malloc((size_t)rows * stride * sizeof *expect);
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < n; t++)
            parent.data[(size_t)r * stride + t] = expect[(size_t)r * stride + t] = 0.0f;
    plain_loop(&p, left.data, right.data, expect, n, stride);
    host_run(&p, left.data, right.data, parent.data, n, stride);
    guarded_check(&left, "left", rows, n, stride);
    guarded_check(&right, "right", rows, n, stride);
    guarded_check(&parent, "parent", rows, n, stride);
    int nonzero = 0;
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < n; t++) {
            size_t i = (size_t)r * stride + t;
            nonzero += expect[i] > 0.0f;
            cr_assert_eq(memcmp(&parent.data[i], &expect[i], sizeof(float)), 0,
                         "parent row %d work item %d: got %a, want %a", r, t,
                         (double)parent.data[i], (double)expect[i]);
        }
    cr_assert_gt(nonzero, rows * n / 2, "too few parents reached (%d)", nonzero);
    free(expect);
    free(left.mem);
    free(right.mem);
    free(parent.mem);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

/* The sum the kernels compute is the textbook one up to float rounding: a plain double loop
 * over the rules in the grammar's order agrees to a relative 1e-5. */
Test(codegen_sumprod, host_build_is_the_sum)
{
    codegen_family f;
    synth_family(&f, 24, 1500, 7);
    for (long i = 0; i < f.nrule; i++)
        f.rule[i].w = f.rule[i].w / 20.0f;
    codegen_partition p;
    codegen_shape shape;
    memset(&shape, 0, sizeof shape); /* automatic */
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    const int n = 9, stride = 9, rows = 24;
    float *left = malloc(sizeof(float) * rows * stride), *right = malloc(sizeof(float) * rows * stride);
    float *parent = calloc((size_t)rows * stride, sizeof(float));
    double *sum = calloc((size_t)rows * stride, sizeof(double));
    fill_probs(left, rows, n, stride);
    fill_probs(right, rows, n, stride);
    for (long i = 0; i < f.nrule; i++)
        for (int t = 0; t < n; t++)
            sum[f.rule[i].p * stride + t] += (double)left[f.rule[i].l * stride + t] *
                                             right[f.rule[i].r * stride + t] * exp(f.rule[i].w);
    host_run(&p, left, right, parent, n, stride);
    for (int i = 0; i < rows * stride; i++)
        cr_assert_leq(fabs(parent[i] - sum[i]), 1e-5 * sum[i] + 1e-30, "row %d: %g vs %g",
                      i / stride, (double)parent[i], sum[i]);
    free(left);
    free(right);
    free(parent);
    free(sum);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

/* The outside roles: the turned families' partitions give the plain loop's bits (same
 * order) and the textbook outside sums: out_left[l] = sum of outside[p] * inside_right[r] *
 * w, and out_right[r] = sum of outside[p] * inside_left[l] * w, over the family's rules.
 * Dimensions differ per axis so that a mixed-up axis shows. */
Test(codegen_sumprod, turned_partitions_send_to_children)
{
    codegen_family f;
    synth_family(&f, 40, 2500, 5);
    f.dim[1] = 41; /* rows 40 (left) and 42, 43 (right) stay unused */
    f.dim[2] = 44;
    for (long i = 0; i < f.nrule; i++)
        f.rule[i].w = f.rule[i].w / 10.0f;
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("2x1x2/2x2x1", &shape), CKY_OK);
    shape.live_limit = 16;
    const int n = 13, stride = 16;
    float *outside = malloc(sizeof(float) * 40 * stride), *in[1]; /* in[0]: sibling rows */
    fill_probs(outside, 40, n, stride); /* the parents' outside rows */
    for (codegen_role role = CODEGEN_ROLE_LEFT; role <= CODEGEN_ROLE_RIGHT; role++) {
        codegen_family tf = f;
        tf.rule = malloc((size_t)f.nrule * sizeof *tf.rule);
        memcpy(tf.rule, f.rule, (size_t)f.nrule * sizeof *tf.rule);
        cr_assert_eq(codegen_family_turn(&tf, role), CKY_OK, "%s", cky_last_error());
        codegen_partition t;
        cr_assert_eq(codegen_partition_build(&tf, shape, &t), CKY_OK, "%s", cky_last_error());
        int nout = role == CODEGEN_ROLE_LEFT ? 41 : 44, nsib = role == CODEGEN_ROLE_LEFT ? 44 : 41;
        cr_assert(t.dim[0] == nout && t.dim[1] == 40 && t.dim[2] == nsib);
        cr_assert_eq(t.nrule, f.nrule);
        in[0] = malloc(sizeof(float) * nsib * stride);
        fill_probs(in[0], nsib, n, stride);
        float *got = calloc((size_t)nout * stride, sizeof(float));
        float *expect = calloc((size_t)nout * stride, sizeof(float));
        double *sum = calloc((size_t)nout * stride, sizeof(double));
        host_run(&t, outside, in[0], got, n, stride);
        plain_loop(&t, outside, in[0], expect, n, stride);
        cr_assert_eq(memcmp(got, expect, sizeof(float) * nout * stride), 0,
                     "role %d: not the plain loop's bits", (int)role);
        for (long i = 0; i < f.nrule; i++) {
            const codegen_rule *r = &f.rule[i];
            int to = role == CODEGEN_ROLE_LEFT ? r->l : r->r;
            int sib = role == CODEGEN_ROLE_LEFT ? r->r : r->l;
            for (int x = 0; x < n; x++)
                sum[to * stride + x] += (double)outside[r->p * stride + x] *
                                        in[0][sib * stride + x] * exp(r->w);
        }
        for (int i = 0; i < nout * stride; i++)
            cr_assert_leq(fabs(got[i] - sum[i]), 1e-5 * sum[i] + 1e-30,
                          "role %d row %d: %g vs %g", (int)role, i / stride, (double)got[i],
                          sum[i]);
        free(in[0]);
        free(got);
        free(expect);
        free(sum);
        codegen_partition_free(&t);
        codegen_family_free(&tf);
    }
    free(outside);
    codegen_family_free(&f);
}

/* The GPU form (codegen_kernel_slots): every CKY_STORE(row, slot, P) of a kernel's text names
 * the slot that the map gives the row in its block, each slot once; each block's parent
 * registers stored into their slots and then added into the rows in slot order give the host
 * build's bits (its in-place adds, block after block). */
Test(codegen_sumprod, slots_then_fold_are_the_host_bits)
{
    codegen_family f;
    synth_family(&f, 40, 2500, 5);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("2x1x2/2x2x1", &shape), CKY_OK);
    shape.live_limit = 16;
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    const int n = 13, stride = 16, dim = p.dim[0];
    float *left = malloc(sizeof(float) * p.dim[1] * stride);
    float *right = malloc(sizeof(float) * p.dim[2] * stride);
    fill_probs(left, p.dim[1], n, stride);
    fill_probs(right, p.dim[2], n, stride);
    float *host = calloc((size_t)dim * stride, sizeof(float));
    float *fold = calloc((size_t)dim * stride, sizeof(float));
    int *slot = malloc(sizeof(int) * dim);
    char *mark = malloc((size_t)dim);
    host_run(&p, left, right, host, n, stride);
    int several = 0;
    for (int k = 0; k < p.nkernel; k++) {
        const codegen_kernel *kn = &p.kernel[k];
        long ns = codegen_kernel_slots(&p, k, NULL, NULL);
        int *rows = malloc(sizeof(int) * (size_t)ns), *seen = calloc((size_t)ns, sizeof(int));
        cr_assert_eq(codegen_kernel_slots(&p, k, rows, mark), ns);
        several |= kn->nblock > 1;
        char *src = NULL;
        cr_assert_eq(codegen_emit_kernel(&p, k, 0, CODEGEN_SEMIRING_SUM_PRODUCT, &src), CKY_OK);
        long stores = 0;
        for (const char *at = src; (at = strstr(at, "    CKY_STORE(")); at++) {
            int row, sl;
            cr_assert_eq(sscanf(at, "    CKY_STORE(%d, %d, P", &row, &sl), 2, "%.60s", at);
            cr_assert(sl >= 0 && sl < ns && rows[sl] == row && !seen[sl]++,
                      "kernel %d: row %d into slot %d", k, row, sl);
            stores++;
        }
        cr_assert_eq(stores, ns);
        free(src);
        float *part = calloc((size_t)ns * stride, sizeof(float));
        long base = 0;
        for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++) {
            for (int x = 0; x < dim; x++)
                slot[x] = -1;
            for (long sl = base; sl < base + p.block[b].nparent; sl++)
                slot[rows[sl]] = (int)sl;
            for (long i = p.block[b].first; i < p.block[b].first + p.block[b].nrule; i++)
                cr_assert_geq(slot[p.rule[i].p], 0, "block %d: row %d has no slot", b,
                              p.rule[i].p);
            run_block(&p, b, left, right, part, slot, 0, n, stride);
            base += p.block[b].nparent;
        }
        cr_assert_eq(base, ns);
        for (long sl = 0; sl < ns; sl++) /* the fold: slot order */
            for (int t = 0; t < n; t++)
                fold[(size_t)rows[sl] * stride + t] += part[(size_t)sl * stride + t];
        free(part);
        free(rows);
        free(seen);
    }
    cr_assert(several, "no kernel with several code blocks");
    for (int x = 0; x < dim; x++)
        cr_assert_eq(memcmp(host + (size_t)x * stride, fold + (size_t)x * stride,
                            sizeof(float) * n),
                     0, "row %d: slots and fold differ from the host build", x);
    free(left);
    free(right);
    free(host);
    free(fold);
    free(slot);
    free(mark);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

Test(codegen_sumprod, nvrtc_compiles_sm90_cubin)
{
    codegen_family f;
    synth_family(&f, 30, 800, 4);
    codegen_shape shape;
    cr_assert_eq(codegen_shape_parse("1x1x1/2x2x1", &shape), CKY_OK);
    codegen_partition p;
    cr_assert_eq(codegen_partition_build(&f, shape, &p), CKY_OK);
    char *src = NULL, *maxplus = NULL;
    cr_assert_eq(codegen_emit_kernel(&p, 0, 0, CODEGEN_SEMIRING_SUM_PRODUCT, &src), CKY_OK);
    cr_assert_eq(codegen_emit_kernel(&p, 0, 0, CODEGEN_SEMIRING_MAX_PLUS, &maxplus), CKY_OK);
    cr_assert_neq(strcmp(src, maxplus), 0);
    cr_assert_null(strstr(src, "atomic"), "an atomic in the sum-product text");
    unsigned char *cubin = NULL;
    size_t size = 0;
    int regs = -1, spill = -1;
    cr_assert_eq(codegen_nvrtc_compile(src, "cky_XX_k0", "sm_90", NULL, &cubin, &size, &regs,
                                       &spill),
                 CKY_OK, "%s", cky_last_error());
    cr_assert_eq(memcmp(cubin, "\177ELF", 4), 0, "not an ELF cubin");
    cr_assert_gt(regs, 0);
    cr_assert_eq(spill, 0, "%d registers, %d spill bytes", regs, spill);
    cr_assert_eq(codegen_emit_kernel(&p, 0, 0, (codegen_semiring)7, &src), CKY_ERR_ARG);
    free(cubin);
    free(src);
    free(maxplus);
    codegen_partition_free(&p);
    codegen_family_free(&f);
}

/* The semirings share partitions but never kernels: a cache filled by one semiring gives the
 * other no hit, and a second sum-product compilation is all hits. */
Test(codegen_sumprod, semirings_have_their_own_cache_entries, .timeout = 600)
{
    char dir[] = "/tmp/cky-test-semiring-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK, "%s",
                 cky_last_error());
    codegen_options o;
    codegen_options_default(&o);
    o.gpu = 0;
    o.host = 1;
    o.cache_dir = dir;
    o.families = 1u << CODEGEN_TT;
    codegen_program *prog[3];
    codegen_semiring sr[3] = {CODEGEN_SEMIRING_MAX_PLUS, CODEGEN_SEMIRING_SUM_PRODUCT,
                              CODEGEN_SEMIRING_SUM_PRODUCT};
    for (int k = 0; k < 3; k++) {
        o.semiring = sr[k];
        cr_assert_eq(codegen_compile(g, &o, &prog[k]), CKY_OK, "%s", cky_last_error());
    }
    cr_assert_gt(prog[1]->nmiss, 0);
    cr_assert_eq(prog[1]->nhit, 0, "a max-plus kernel served a sum-product one");
    cr_assert_eq(prog[1]->partition_hits, CODEGEN_NFAMILY, "the partition was built again");
    cr_assert_eq(prog[2]->nmiss, 0);
    for (int k = 0; k < 3; k++)
        codegen_program_free(prog[k]);
    grammar_free(g);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The automatic shape splits the sum-product XX kernels' output axis more (minor 4x1x2
 * where max-plus has 2x1x4: fewer partial slots per work item); every other family, and
 * every family too small for 2x1x4, keeps the max-plus shape. */
Test(codegen_sumprod, xx_output_axis_split_more, .timeout = 600)
{
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm5/sample-sm5.gr", &g), CKY_OK, "%s",
                 cky_last_error());
    codegen_options o;
    codegen_options_default(&o);
    o.gpu = 0;
    o.host = 0;
    o.cache_dir = "off"; /* partitions built, not read back */
    codegen_program *prog[2];
    for (int k = 0; k < 2; k++) {
        o.semiring = k ? CODEGEN_SEMIRING_SUM_PRODUCT : CODEGEN_SEMIRING_MAX_PLUS;
        cr_assert_eq(codegen_compile(g, &o, &prog[k]), CKY_OK, "%s", cky_last_error());
    }
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        const codegen_shape *m = &prog[0]->part[f].shape, *s = &prog[1]->part[f].shape;
        cr_assert_eq(prog[0]->part[f].nrule, prog[1]->part[f].nrule);
        for (int a = 0; a < 3; a++)
            cr_assert_eq(m->major[a], s->major[a], "family %d axis %d", f, a);
        int turned = f == CODEGEN_XX && m->minor[0] == 2 && m->minor[1] == 1 && m->minor[2] == 4;
        if (f == CODEGEN_XX)
            cr_assert(turned, "sample-sm5's XX should be large enough for 2x1x4");
        cr_assert_eq(s->minor[0], turned ? 4 : m->minor[0], "family %d", f);
        cr_assert_eq(s->minor[1], m->minor[1], "family %d", f);
        cr_assert_eq(s->minor[2], turned ? 2 : m->minor[2], "family %d", f);
    }
    for (int k = 0; k < 2; k++)
        codegen_program_free(prog[k]);
    grammar_free(g);
}

/* `cky compile --json` reports each family's partial slots per work item: the sum of its
 * kernels' codegen_kernel_slots. */
Test(codegen_sumprod, compile_reports_the_partial_slots, .timeout = 600)
{
    const char *cky = CKY_BUILD "/cky", *gname = CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr";
    if (access(cky, X_OK) != 0)
        cr_skip_test("%s is not built", cky);
    grammar *g;
    cr_assert_eq(grammar_load(gname, &g), CKY_OK, "%s", cky_last_error());
    codegen_options o;
    codegen_options_default(&o);
    o.gpu = 0;
    o.host = 0;
    o.cache_dir = "off";
    o.semiring = CODEGEN_SEMIRING_SUM_PRODUCT;
    codegen_program *prog;
    cr_assert_eq(codegen_compile(g, &o, &prog), CKY_OK, "%s", cky_last_error());
    char cmd[1024], json[1 << 16];
    snprintf(cmd, sizeof cmd, "'%s' compile -g '%s' --semiring sum-product --no-gpu-code "
             "--cache off --json 2>/dev/null", cky, gname);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(json, 1, sizeof json - 1, p);
    json[n] = '\0';
    cr_assert_eq(pclose(p), 0);
    const char *at = json;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        const codegen_partition *part = &prog->part[f];
        char *mark = calloc((size_t)part->dim[0] + 1, 1);
        long want = 0;
        for (int k = 0; k < part->nkernel; k++)
            want += codegen_kernel_slots(part, k, NULL, mark);
        free(mark);
        at = strstr(at, "\"partial_slots_per_item\": ");
        cr_assert_not_null(at, "family %d: no partial_slots_per_item in %s", f, json);
        at += strlen("\"partial_slots_per_item\": ");
        cr_assert_eq(strtol(at, NULL, 10), want, "family %d", f);
        cr_assert_gt(want, 0);
    }
    codegen_program_free(prog);
    grammar_free(g);
}
