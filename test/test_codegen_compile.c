/* Tests of the whole grammar compiler on grammars: families cover every binary rule,
 * class numbering, the cache (miss, then hit; CKY_CACHE=off) and the host build through
 * codegen_compile. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/codegen.h"
#include "../grammar/internal.h"

/* ROOT, two phrasal symbols (3 and 4 substates), two tags (2 and 3): rules of all four
 * families, some probabilities zero or below the pruning threshold. */
static grammar *toy_grammar(void)
{
    static const char *const names[] = {"ROOT", "S", "NP", "DT", "NN"};
    static const int nsub[] = {1, 3, 4, 2, 3}, phrasal[] = {1, 1, 1, 0, 0};
    static const int rules[][3] = {{1, 1, 2}, {1, 2, 4}, {1, 3, 2}, {2, 3, 4}, {2, 2, 2}};
    grammar_builder *b = builder_new();
    for (int s = 0; s < 5; s++)
        cr_assert_eq(builder_add_symbol(b, names[s], nsub[s], phrasal[s]), CKY_OK);
    srand(9);
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        int p = rules[i][0], l = rules[i][1], r = rules[i][2];
        int n = nsub[p] * nsub[l] * nsub[r];
        double *prob = malloc((size_t)n * sizeof *prob);
        for (int k = 0; k < n; k++)
            prob[k] = k % 7 == 3 ? 0.0 : k % 11 == 5 ? 1e-12 : (rand() % 1000 + 1) / 1000.0;
        cr_assert_eq(builder_add_binary(b, p, l, r, prob), CKY_OK);
        free(prob);
    }
    grammar *g = NULL;
    cr_assert_eq(builder_finish(b, NULL, "toy", &g), CKY_OK, "%s", cky_last_error());
    return g;
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

Test(codegen_compile, families_cover_all_rules)
{
    grammar *g = toy_grammar();
    codegen_classes c;
    cr_assert_eq(codegen_classes_init(g, &c), CKY_OK);
    cr_assert_eq(c.n[CODEGEN_X], 8);
    cr_assert_eq(c.n[CODEGEN_T], 5);
    cr_assert_eq(codegen_class_index(&c, CODEGEN_X, 0), 0);            /* ROOT */
    cr_assert_eq(codegen_class_index(&c, CODEGEN_T, g->sub_offset[3]), 0); /* DT_0 */
    cr_assert_eq(codegen_class_index(&c, CODEGEN_X, g->sub_offset[3]), -1);
    long total = 0;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        codegen_family fam;
        cr_assert_eq(codegen_family_build(g, &c, (codegen_family_id)f, &fam), CKY_OK);
        cr_assert_gt(fam.nrule, 0, "family %s empty", codegen_family_name(f));
        total += fam.nrule;
        codegen_family_free(&fam);
    }
    cr_assert_eq(total, grammar_count_binary(g));
    codegen_classes_free(&c);
    grammar_free(g);
}

Test(codegen_compile, cache_miss_then_hit)
{
    char dir[] = "/tmp/cky-test-cache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    grammar *g = toy_grammar();
    codegen_options o;
    codegen_options_default(&o);
    o.cache_dir = dir;
    o.host = 1;
    codegen_program *a = NULL, *b = NULL;
    cr_assert_eq(codegen_compile(g, &o, &a), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(a->nhit, 0);
    cr_assert_gt(a->nmiss, 0);
    int files = count_files(dir);
    cr_assert_eq(files, 2 * a->nmiss, "want a cubin and a .so per kernel, found %d files", files);
    cr_assert_eq(codegen_compile(g, &o, &b), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(b->nmiss, 0);
    cr_assert_eq(b->nhit, a->nmiss);
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        for (int k = 0; k < a->part[f].nkernel; k++) {
            const codegen_compiled *x = &a->kernel[f][k], *y = &b->kernel[f][k];
            cr_assert_eq(x->cubin_size, y->cubin_size);
            cr_assert_eq(memcmp(x->cubin, y->cubin, x->cubin_size), 0);
            cr_assert_eq(x->registers, y->registers);
            cr_assert_not_null(y->host);
        }
    codegen_program_free(a);
    codegen_program_free(b);
    grammar_free(g);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(codegen_compile, cache_off)
{
    char home[] = "/tmp/cky-test-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    setenv("HOME", home, 1);
    setenv("CKY_CACHE", "off", 1);
    grammar *g = toy_grammar();
    codegen_options o;
    codegen_options_default(&o);
    o.host = 1;
    char *dir = (char *)1;
    cr_assert_eq(codegen_cache_dir(&o, &dir), CKY_OK);
    cr_assert_null(dir);
    for (int round = 0; round < 2; round++) {
        codegen_program *p = NULL;
        cr_assert_eq(codegen_compile(g, &o, &p), CKY_OK, "%s", cky_last_error());
        cr_assert_eq(p->nhit, 0, "round %d hit a cache that is off", round);
        cr_assert_not_null(p->kernel[CODEGEN_XX][0].host);
        codegen_program_free(p);
    }
    cr_assert_eq(count_files(home), 0, "something was written under HOME");
    grammar_free(g);
    rmdir(home);
}

Test(codegen_compile, sample_sm3_partition)
{
    grammar *g = NULL;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm3/sample-sm3", &g), CKY_OK, "%s",
                 cky_last_error());
    codegen_classes c;
    cr_assert_eq(codegen_classes_init(g, &c), CKY_OK);
    long total = 0;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        codegen_family fam;
        codegen_partition p;
        cr_assert_eq(codegen_family_build(g, &c, (codegen_family_id)f, &fam), CKY_OK);
        cr_assert_eq(codegen_partition_build(&fam, codegen_shape_auto(fam.nrule), &p), CKY_OK);
        cr_assert_eq(p.nrule, fam.nrule);
        long in_blocks = 0;
        for (int b = 0; b < p.nblock; b++)
            in_blocks += p.block[b].nrule;
        cr_assert_eq(in_blocks, fam.nrule);
        total += fam.nrule;
        codegen_partition_free(&p);
        codegen_family_free(&fam);
    }
    cr_assert_eq(total, grammar_count_binary(g));
    codegen_classes_free(&c);
    grammar_free(g);
}
