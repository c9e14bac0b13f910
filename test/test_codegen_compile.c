/* Tests of the whole grammar compiler on grammars: families cover every binary rule,
 * class numbering, the cache (miss, then hit; CKY_CACHE=off), the host build through
 * codegen_compile, and the partition manifests behind warm starts (a warm start restores
 * identical partitions without partitioning; bad manifest files are misses and repaired). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/codegen.h"
#include "../codegen/internal.h"
#include "../grammar/internal.h"
#include "test_codegen_synth.h"

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

/* Files in `dir` whose name ends in `ext`. */
static int count_ext(const char *dir, const char *ext)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    size_t m = strlen(ext);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > m && !strcmp(e->d_name + len - m, ext);
    }
    closedir(d);
    return n;
}

static void remove_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
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
    int files = count_ext(dir, ".cubin") + count_ext(dir, ".hso");
    cr_assert_eq(files, 2 * a->nmiss, "want a cubin and a .hso per kernel, found %d files", files);
    cr_assert_eq(count_ext(dir, ".part"), CODEGEN_NFAMILY, "want a manifest per family");
    cr_assert_eq(count_files(dir), files + CODEGEN_NFAMILY, "stray files in the cache");
    cr_assert_eq(codegen_compile(g, &o, &b), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(b->nmiss, 0);
    cr_assert_eq(b->nhit, a->nmiss);
    cr_assert_eq(b->partition_hits, CODEGEN_NFAMILY);
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        for (int k = 0; k < a->part[f].nkernel; k++) {
            const codegen_compiled *x = &a->kernel[f][k], *y = &b->kernel[f][k];
            cr_assert_eq(x->cubin_size, y->cubin_size);
            cr_assert_eq(memcmp(x->cubin, y->cubin, x->cubin_size), 0);
            cr_assert_eq(x->registers, y->registers);
            cr_assert_geq(x->instructions, x->nrule, "%s: %ld instructions for %ld rules",
                          x->name, x->instructions, x->nrule); /* an add and a max a rule */
            cr_assert_eq(x->instructions, y->instructions); /* measured on a hit too */
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
        long builds = codegen_partition_builds();
        cr_assert_eq(codegen_compile(g, &o, &p), CKY_OK, "%s", cky_last_error());
        cr_assert_eq(p->nhit, 0, "round %d hit a cache that is off", round);
        cr_assert_eq(p->partition_hits, 0, "round %d found a manifest", round);
        cr_assert_eq(codegen_partition_builds() - builds, CODEGEN_NFAMILY);
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

/* ---- partition manifests ---- */

/* Every field and table of two partitions agree; `raw`: the block entries byte for byte too
 * (fields added to codegen_block included), for a partition restored from a manifest. */
static void assert_same_partition(const codegen_partition *a, const codegen_partition *b,
                                  int raw)
{
    cr_assert_eq(a->family, b->family);
    cr_assert_eq(memcmp(a->dim, b->dim, sizeof a->dim), 0);
    cr_assert_eq(memcmp(a->shape.major, b->shape.major, sizeof a->shape.major), 0);
    cr_assert_eq(memcmp(a->shape.minor, b->shape.minor, sizeof a->shape.minor), 0);
    cr_assert_eq(a->shape.live_limit, b->shape.live_limit);
    cr_assert_eq(a->nrule, b->nrule);
    cr_assert(a->loads == b->loads && a->naive_loads == b->naive_loads &&
              a->origin == b->origin, "%s: figures differ", codegen_family_name(a->family));
    for (int o = 0; o < CODEGEN_NORIGIN; o++)
        cr_assert(a->candidate_loads[o] == b->candidate_loads[o] &&
                  a->candidate_reload[o] == b->candidate_reload[o]);
    for (long i = 0; i < a->nrule; i++) {
        const codegen_rule *x = &a->rule[i], *y = &b->rule[i];
        cr_assert(x->p == y->p && x->l == y->l && x->r == y->r && x->w == y->w,
                  "%s rule %ld differs", codegen_family_name(a->family), i);
    }
    cr_assert_eq(a->nkernel, b->nkernel);
    for (int k = 0; k < a->nkernel; k++) {
        const codegen_kernel *x = &a->kernel[k], *y = &b->kernel[k];
        cr_assert(x->first_block == y->first_block && x->nblock == y->nblock &&
                  x->first == y->first && x->nrule == y->nrule, "kernel %d differs", k);
    }
    cr_assert_eq(a->nblock, b->nblock);
    for (int i = 0; i < a->nblock; i++) {
        const codegen_block *x = &a->block[i], *y = &b->block[i];
        cr_assert(x->first == y->first && x->nrule == y->nrule && x->nleft == y->nleft &&
                  x->nright == y->nright && x->nparent == y->nparent &&
                  x->max_live == y->max_live, "block %d differs", i);
    }
    if (raw)
        cr_assert_eq(memcmp(a->block, b->block, (size_t)a->nblock * sizeof *a->block), 0);
    cr_assert_eq(a->reload_rate, b->reload_rate);
    cr_assert_eq(a->naive_reload_rate, b->naive_reload_rate);
    cr_assert_eq(a->max_live, b->max_live);
}

/* Several kernels and code blocks per family, so the manifest tables are not trivial. */
static void small_shapes(codegen_options *o)
{
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        o->shape[f] = (codegen_shape){{2, 1, 1}, {2, 1, 1}, 0};
    o->shape[CODEGEN_XX] = (codegen_shape){{2, 2, 1}, {1, 2, 1}, 0};
}

static char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_whole(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

Test(codegen_compile, manifest_warm_start_skips_partition)
{
    char dir[] = "/tmp/cky-test-manifest-XXXXXX", dump[] = "/tmp/cky-test-dump-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_not_null(mkdtemp(dump));
    grammar *g = toy_grammar();
    codegen_options o;
    codegen_options_default(&o);
    o.cache_dir = dir;
    o.threads = 2;
    small_shapes(&o);
    codegen_program *a = NULL, *b = NULL, *c = NULL;
    long builds = codegen_partition_builds();
    cr_assert_eq(codegen_compile(g, &o, &a), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(codegen_partition_builds() - builds, CODEGEN_NFAMILY);
    cr_assert_eq(a->partition_hits, 0);
    cr_assert_eq(a->nhit, 0);
    cr_assert_eq(count_ext(dir, ".part"), CODEGEN_NFAMILY);
    cr_assert_gt(a->part[CODEGEN_XX].nkernel, 1);

    builds = codegen_partition_builds();
    cr_assert_eq(codegen_compile(g, &o, &b), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(codegen_partition_builds(), builds, "a warm start partitioned");
    cr_assert_eq(b->partition_hits, CODEGEN_NFAMILY);
    cr_assert_eq(b->nmiss, 0);
    cr_assert_eq(b->nhit, a->nmiss);
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        assert_same_partition(&a->part[f], &b->part[f], 1);
        for (int k = 0; k < a->part[f].nkernel; k++) {
            const codegen_compiled *x = &a->kernel[f][k], *y = &b->kernel[f][k];
            cr_assert_str_eq(x->name, y->name);
            cr_assert(x->nblock == y->nblock && x->nrule == y->nrule &&
                      x->max_live == y->max_live, "%s: tables differ", x->name);
            cr_assert(x->registers == y->registers && x->spill_bytes == y->spill_bytes);
            cr_assert_eq(x->cubin_size, y->cubin_size);
            cr_assert_eq(memcmp(x->cubin, y->cubin, x->cubin_size), 0);
            cr_assert(!x->cache_hit && y->cache_hit, "%s: cache_hit", x->name);
        }
    }

    /* a warm start asked for the source still writes it, the same text as a cold one */
    o.dump_dir = dump;
    cr_assert_eq(codegen_compile(g, &o, &c), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(c->partition_hits, CODEGEN_NFAMILY);
    cr_assert_eq(c->nmiss, 0);
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        for (int k = 0; k < a->part[f].nkernel; k++) {
            char path[256], *want = NULL;
            size_t len;
            snprintf(path, sizeof path, "%s/%s.cu", dump, a->kernel[f][k].name);
            char *got = read_whole(path, &len);
            cr_assert_eq(codegen_emit_kernel(&a->part[f], k, 0, CODEGEN_SEMIRING_MAX_PLUS,
                                             &want),
                         CKY_OK);
            cr_assert_str_eq(got, want, "%s differs from the cold source", path);
            free(got);
            free(want);
        }
    codegen_program_free(a);
    codegen_program_free(b);
    codegen_program_free(c);
    grammar_free(g);
    remove_tree(dir);
    remove_tree(dump);
}

/* Damage every manifest of `dir` the same way (`kind`), keeping an intact copy of the first
 * one for the foreign-file case. */
static void damage_manifests(const char *dir, int kind)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    char names[CODEGEN_NFAMILY][300];
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".part") && n < CODEGEN_NFAMILY)
            snprintf(names[n++], sizeof names[0], "%s/%s", dir, e->d_name);
    closedir(d);
    cr_assert_eq(n, CODEGEN_NFAMILY);
    size_t first_len;
    char *first = read_whole(names[0], &first_len);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *buf = read_whole(names[i], &len);
        cr_assert_gt(len, 200);
        switch (kind) {
        case 0: len = 0; break;                       /* empty */
        case 1: len = 10; break;                      /* part of the magic */
        case 2: len = 224; break;                     /* the header alone */
        case 3: len /= 2; break;                      /* truncated */
        case 4: len -= 1; break;                      /* one byte short */
        case 5: buf = realloc(buf, len + 1); buf[len++] = 'x'; break; /* one byte long */
        case 6: for (size_t j = 0; j < len; j++) buf[j] = (char)(j * 131 + 7); break;
        case 7: buf[len - 3] ^= 0x40; break;          /* a flipped bit in the payload */
        case 8: buf[234] ^= 0x01; break;              /* ... in the first rule */
        case 12: buf[130] ^= 0x01; break;             /* ... in the header's figures */
        case 9: buf[24] ^= 0x01; break;               /* ... in the header's key */
        case 10: memcpy(buf, "CKYCUBIN", 8); break;   /* another kind of entry */
        case 11: /* a foreign manifest: another family's file under this name */
            free(buf);
            buf = malloc(first_len);
            memcpy(buf, first, first_len);
            len = first_len;
            if (i == 0)
                buf[40] ^= 0x01; /* the first file itself: a wrong rule count */
            break;
        }
        write_whole(names[i], buf, len);
        free(buf);
    }
    free(first);
}

Test(codegen_compile, manifest_damaged_files_are_misses)
{
    char dir[] = "/tmp/cky-test-manifest-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    grammar *g = toy_grammar();
    codegen_options o;
    codegen_options_default(&o);
    o.cache_dir = dir;
    o.gpu = 0; /* partitions only: fast */
    small_shapes(&o);
    codegen_program *cold = NULL;
    cr_assert_eq(codegen_compile(g, &o, &cold), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(cold->partition_hits, 0);
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        for (int k = 0; k < cold->part[f].nkernel; k++)
            cr_assert_eq(cold->kernel[f][k].instructions, -1, "measured without GPU code");
    for (int kind = 0; kind < 13; kind++) {
        damage_manifests(dir, kind);
        codegen_program *p = NULL, *q = NULL;
        long builds = codegen_partition_builds();
        cr_assert_eq(codegen_compile(g, &o, &p), CKY_OK, "kind %d: %s", kind, cky_last_error());
        cr_assert_eq(p->partition_hits, 0, "kind %d: a damaged manifest was used", kind);
        cr_assert_eq(codegen_partition_builds() - builds, CODEGEN_NFAMILY);
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            assert_same_partition(&cold->part[f], &p->part[f], 0);
        /* repaired: the next start finds every manifest again */
        cr_assert_eq(codegen_compile(g, &o, &q), CKY_OK, "%s", cky_last_error());
        cr_assert_eq(q->partition_hits, CODEGEN_NFAMILY, "kind %d: not repaired", kind);
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            assert_same_partition(&cold->part[f], &q->part[f], 0);
        codegen_program_free(p);
        codegen_program_free(q);
    }
    cr_assert_eq(count_files(dir), CODEGEN_NFAMILY, "temp files left behind");
    codegen_program_free(cold);
    grammar_free(g);
    remove_tree(dir);
}

/* A manifest whose checksum is right but whose tables point outside the arrays (written by
 * a buggy or hostile writer) is rejected, as are lookups for another family or shape. */
Test(codegen_compile, manifest_rejects_bad_tables)
{
    char dir[] = "/tmp/cky-test-manifest-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    codegen_family fam;
    synth_family(&fam, 40, 3000, 5);
    codegen_shape shape = {{2, 2, 1}, {2, 1, 2}, 64};
    codegen_partition p, got;
    cr_assert_eq(codegen_partition_build(&fam, shape, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(memcmp(&p.shape, &shape, sizeof shape), 0);
    uint64_t key = codegen_partition_key(&fam, &shape);
    cr_assert_eq(codegen_cache_put_partition(dir, key, &p), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(codegen_cache_get_partition(dir, key, &fam, &shape, &got), 1);
    assert_same_partition(&p, &got, 1);
    codegen_partition_free(&got);

    codegen_shape other = shape;
    other.live_limit = 65;
    cr_assert_neq(codegen_partition_key(&fam, &other), key);
    cr_assert_eq(codegen_cache_get_partition(dir, key, &fam, &other, &got), 0);
    cr_assert_eq(codegen_cache_get_partition(dir, key ^ 1, &fam, &shape, &got), 0);
    fam.nrule--;
    cr_assert_eq(codegen_cache_get_partition(dir, key, &fam, &shape, &got), 0);
    fam.nrule++;
    fam.id = CODEGEN_TT;
    cr_assert_eq(codegen_cache_get_partition(dir, key, &fam, &shape, &got), 0);
    fam.id = CODEGEN_XX;

    for (int kind = 0; kind < 6; kind++) {
        codegen_partition bad = p;
        size_t nr = (size_t)p.nrule * sizeof *p.rule, nb = (size_t)p.nblock * sizeof *p.block;
        bad.rule = malloc(nr);
        bad.block = malloc(nb);
        memcpy(bad.rule, p.rule, nr);
        memcpy(bad.block, p.block, nb);
        codegen_kernel kn = p.kernel[p.nkernel - 1];
        switch (kind) {
        case 0: bad.rule[7].l = p.dim[1]; break;
        case 1: bad.rule[0].p = -1; break;
        case 2: bad.block[p.nblock - 1].nrule += 1; break;
        case 3: bad.block[1].first = p.nrule + 5; break;
        case 4: bad.max_live = p.max_live + 1; break;
        case 5: /* the last kernel claims one block too many */
            kn.nblock += 1;
            bad.kernel = malloc((size_t)p.nkernel * sizeof *p.kernel);
            memcpy(bad.kernel, p.kernel, (size_t)p.nkernel * sizeof *p.kernel);
            bad.kernel[p.nkernel - 1] = kn;
            break;
        }
        cr_assert_eq(codegen_cache_put_partition(dir, key, &bad), CKY_OK);
        cr_assert_eq(codegen_cache_get_partition(dir, key, &fam, &shape, &got), 0,
                     "bad table %d accepted", kind);
        free(bad.rule);
        free(bad.block);
        if (bad.kernel != p.kernel)
            free(bad.kernel);
    }
    codegen_partition_free(&p);
    codegen_family_free(&fam);
    remove_tree(dir);
}

/* Read `cky compile ARGS --json` (the whole object) into json. */
static void compile_json(const char *args, char *json, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/cky' compile %s --json 2>/dev/null", CKY_BUILD, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(json, 1, cap - 1, p);
    json[n] = '\0';
    cr_assert_eq(pclose(p), 0, "%s failed", cmd);
}

/* `cky compile --json` reports each family's machine instructions per rule, the sum of its
 * kernels' (codegen_compiled.instructions, listed too) over its rules, and null without GPU
 * code. */
Test(codegen_compile, compile_reports_instructions_per_rule, .timeout = 600)
{
    if (access(CKY_BUILD "/cky", X_OK) != 0)
        cr_skip_test("%s/cky is not built", CKY_BUILD);
    char dir[] = "/tmp/cky-test-instr-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *gname = CKY_SHARED "/grammars/sample-sm1/sample-sm1";
    grammar *g;
    cr_assert_eq(grammar_load(gname, &g), CKY_OK, "%s", cky_last_error());
    codegen_options o;
    codegen_options_default(&o);
    o.cache_dir = dir;
    codegen_program *prog;
    cr_assert_eq(codegen_compile(g, &o, &prog), CKY_OK, "%s", cky_last_error());
    char args[512], json[1 << 16];
    snprintf(args, sizeof args, "-g '%s' --cache '%s'", gname, dir);
    compile_json(args, json, sizeof json);
    const char *at = json;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        long sum = 0;
        for (int k = 0; k < prog->part[f].nkernel; k++) {
            cr_assert_gt(prog->kernel[f][k].instructions, 0);
            sum += prog->kernel[f][k].instructions;
        }
        at = strstr(at, "\"instructions_per_rule\": ");
        cr_assert_not_null(at, "family %d: no instructions_per_rule in %s", f, json);
        at += strlen("\"instructions_per_rule\": ");
        double want = (double)sum / prog->part[f].nrule, got = strtod(at, NULL);
        cr_assert(got > want - 1e-4 && got < want + 1e-4, "family %d: %g, want %g", f, got, want);
        cr_assert_geq(got, 1.0, "family %d: under an instruction a rule", f);
        at = strstr(at, "\"kernel_instructions\": [");
        cr_assert_not_null(at);
        cr_assert_eq(strtol(at + strlen("\"kernel_instructions\": ["), NULL, 10),
                     prog->kernel[f][0].instructions, "family %d", f);
    }
    snprintf(args, sizeof args, "-g '%s' --cache off --no-gpu-code", gname);
    compile_json(args, json, sizeof json);
    cr_assert_not_null(strstr(json, "\"instructions_per_rule\": null"), "%s", json);
    cr_assert_null(strstr(json, "\"instructions_per_rule\": 0"), "%s", json);
    codegen_program_free(prog);
    grammar_free(g);
    remove_tree(dir);
}
