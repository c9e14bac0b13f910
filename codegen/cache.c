/* codegen cache: hashing and the on-disk caches of cubins and of partition manifests (the
 * folder itself, atomic writes and leftovers: cachedir.c; host objects: host.c).
 *
 * Entries are named by a 64-bit FNV-1a hash of everything that determines them (generator
 * version, compiler version and options, architecture, and the family's rules and shape;
 * codegen/compile.c derives the kernel keys from the partition key). Every entry starts with
 * a magic and a format version; a stale, short, corrupt or foreign file is a miss and gets
 * rewritten. Writes go to a temp file in the same folder and are renamed into place, so
 * concurrent compilers never see half a file.
 *
 * A partition manifest, DIR/HASH.part, holds a whole codegen_partition: a header (magic,
 * format, element sizes, key, payload checksum, counts, shape, statistics) then the rule,
 * kernel and block arrays as raw bytes. It is read back only if every size agrees, the
 * checksum matches and every table entry stays inside the arrays, so a bad file can never
 * make the emitter or the parser read out of bounds. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CACHE_MAGIC "CKYCUBIN"
#define CACHE_FORMAT 2u /* 2: with the checksum of the cubin */
#define PART_MAGIC "CKYPART" /* with its NUL, 8 bytes */
#define PART_FORMAT 2u /* 2: loads, equal-width figures, the candidates */
#define PART_MAX_RULES (1L << 36) /* sanity bound on a manifest's counts */

typedef struct cache_header {
    char magic[8];
    uint32_t format, pad;
    uint64_t key;
    int32_t registers, spill_bytes;
    uint64_t size;
    uint64_t checksum; /* FNV-1a of the cubin (format 2) */
} cache_header;

uint64_t codegen_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t codegen_hash_str(uint64_t h, const char *s)
{
    return codegen_hash(h, s, strlen(s) + 1);
}

/* The manifest header: fixed-width fields, no padding (checked below). */
typedef struct part_header {
    char magic[8];
    uint32_t format;
    uint32_t rule_size, kernel_size, block_size; /* sizeof of the array elements */
    uint64_t key;
    uint64_t checksum; /* FNV-1a of the figures and the payload (part_checksum) */
    int64_t nrule;
    int32_t family, dim[3];
    int32_t major[3], minor[3], live_limit;
    int32_t nkernel, nblock, max_live;
    double reload_rate, naive_reload_rate;
    int64_t loads, naive_loads;
    int32_t origin, pad;
    double candidate_reload[CODEGEN_NORIGIN];
    int64_t candidate_loads[CODEGEN_NORIGIN];
} part_header;

_Static_assert(sizeof(part_header) == 120 + 24 + 16 * CODEGEN_NORIGIN,
               "part_header must have no padding");
_Static_assert(sizeof(codegen_shape) == 7 * sizeof(int),
               "codegen_shape changed: update the partition key and manifest (cache.c)");

/* The fields of codegen_partition the manifest restores, in order: a new field makes this
 * assertion fail (as long as it does not hide in padding) until the manifest learns it. */
struct partition_fields {
    codegen_family_id family;
    int dim[3];
    codegen_shape shape;
    long nrule;
    codegen_rule *rule;
    int nkernel, nblock;
    codegen_kernel *kernel;
    codegen_block *block;
    double reload_rate, naive_reload_rate;
    int max_live;
    long loads, naive_loads;
    codegen_origin origin;
    double candidate_reload[CODEGEN_NORIGIN];
    long candidate_loads[CODEGEN_NORIGIN];
};
_Static_assert(sizeof(struct partition_fields) == sizeof(codegen_partition),
               "codegen_partition changed: update the manifest (cache.c)");

static char *cache_path(const char *dir, uint64_t key, const char *ext)
{
    size_t n = strlen(dir) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%016llx%s", dir, (unsigned long long)key, ext);
    return p;
}

int codegen_cache_get_cubin(const char *dir, uint64_t key, unsigned char **cubin,
                            size_t *size, int *registers, int *spill_bytes)
{
    char *path = cache_path(dir, key, ".cubin");
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    if (!f)
        return 0;
    cache_header h;
    unsigned char *data = NULL;
    struct stat sb;
    int hit = fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, CACHE_MAGIC, 8) &&
              h.format == CACHE_FORMAT && h.key == key && h.size > 0 && h.size < (1ULL << 32) &&
              fstat(fileno(f), &sb) == 0 && (uint64_t)sb.st_size == sizeof h + h.size;
    if (hit) {
        data = malloc(h.size);
        hit = data && fread(data, 1, h.size, f) == h.size &&
              codegen_hash(CODEGEN_FNV_INIT, data, h.size) == h.checksum;
    }
    fclose(f);
    if (!hit) {
        free(data);
        return 0;
    }
    *cubin = data;
    *size = h.size;
    *registers = h.registers;
    *spill_bytes = h.spill_bytes;
    return 1;
}

cky_status codegen_cache_put_cubin(const char *dir, uint64_t key, const unsigned char *cubin,
                                   size_t size, int registers, int spill_bytes)
{
    cache_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.format = CACHE_FORMAT;
    h.key = key;
    h.registers = registers;
    h.spill_bytes = spill_bytes;
    h.size = size;
    h.checksum = codegen_hash(CODEGEN_FNV_INIT, cubin, size);
    unsigned char *buf = malloc(sizeof h + size);
    char *path = cache_path(dir, key, ".cubin");
    cky_status st;
    if (!buf || !path) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    } else {
        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, cubin, size);
        st = cachedir_write_atomic(path, buf, sizeof h + size);
    }
    free(buf);
    free(path);
    return st;
}

uint64_t codegen_partition_key(const codegen_family *f, const codegen_shape *shape)
{
    uint64_t h = codegen_hash_str(CODEGEN_FNV_INIT, "partition");
    h = codegen_hash_str(h, CODEGEN_VERSION);
    uint64_t sizes[4] = {sizeof(codegen_block), sizeof(codegen_kernel), sizeof(codegen_rule),
                         PART_FORMAT};
    h = codegen_hash(h, sizes, sizeof sizes);
    int32_t head[4] = {(int32_t)f->id, f->dim[0], f->dim[1], f->dim[2]};
    int64_t nrule = f->nrule;
    h = codegen_hash(h, head, sizeof head);
    h = codegen_hash(h, &nrule, sizeof nrule);
    h = codegen_hash(h, f->rule, (size_t)f->nrule * sizeof *f->rule);
    int32_t s[7] = {shape->major[0], shape->major[1], shape->major[2], shape->minor[0],
                    shape->minor[1], shape->minor[2], shape->live_limit};
    return codegen_hash(h, s, sizeof s);
}

/* FNV-1a of the arrays and the figures the report shows (reload rates, loads, origin, the
 * candidates' figures), so a damaged figure is a miss too. */
static uint64_t part_checksum(const codegen_partition *p)
{
    int64_t fig[3 + 2 * CODEGEN_NORIGIN] = {p->loads, p->naive_loads, p->origin};
    double rate[2] = {p->reload_rate, p->naive_reload_rate};
    for (int o = 0; o < CODEGEN_NORIGIN; o++) {
        fig[3 + o] = p->candidate_loads[o];
        memcpy(&fig[3 + CODEGEN_NORIGIN + o], &p->candidate_reload[o], sizeof(double));
    }
    uint64_t h = codegen_hash(CODEGEN_FNV_INIT, fig, sizeof fig);
    h = codegen_hash(h, rate, sizeof rate);
    h = codegen_hash(h, p->rule, (size_t)p->nrule * sizeof *p->rule);
    h = codegen_hash(h, p->kernel, (size_t)p->nkernel * sizeof *p->kernel);
    return codegen_hash(h, p->block, (size_t)p->nblock * sizeof *p->block);
}

static int range_ok(long first, long n, long total)
{
    return first >= 0 && n >= 0 && first <= total && n <= total - first;
}

/* Every table entry inside the arrays, every rule row inside its axis, max_live the largest
 * block's: what the emitter, the report and the parser rely on. */
static int part_valid(const codegen_partition *p)
{
    for (long i = 0; i < p->nrule; i++) {
        const codegen_rule *r = &p->rule[i];
        if (r->p < 0 || r->p >= p->dim[0] || r->l < 0 || r->l >= p->dim[1] || r->r < 0 ||
            r->r >= p->dim[2])
            return 0;
    }
    int live = 0;
    for (int b = 0; b < p->nblock; b++) {
        const codegen_block *blk = &p->block[b];
        if (!range_ok(blk->first, blk->nrule, p->nrule) || blk->nparent < 0 ||
            blk->nparent > p->dim[0] || blk->nleft < 0 || blk->nleft > p->dim[1] ||
            blk->nright < 0 || blk->nright > p->dim[2] || blk->max_live < 0)
            return 0;
        live = blk->max_live > live ? blk->max_live : live;
    }
    for (int k = 0; k < p->nkernel; k++) {
        const codegen_kernel *kn = &p->kernel[k];
        if (!range_ok(kn->first_block, kn->nblock, p->nblock) ||
            !range_ok(kn->first, kn->nrule, p->nrule))
            return 0;
        for (int b = kn->first_block; b < kn->first_block + kn->nblock; b++)
            if (p->block[b].first < kn->first ||
                p->block[b].first + p->block[b].nrule > kn->first + kn->nrule)
                return 0;
    }
    long loads = 0;
    for (int b = 0; b < p->nblock; b++)
        loads += p->block[b].loads;
    return live == p->max_live && loads == p->loads && (unsigned)p->origin < CODEGEN_NORIGIN;
}

/* The header describes a manifest of `key` for family `f` partitioned with `shape`, and a
 * payload of exactly `payload` bytes. */
static int part_header_ok(const part_header *h, uint64_t key, const codegen_family *f,
                          const codegen_shape *shape, long long payload)
{
    if (memcmp(h->magic, PART_MAGIC, 8) || h->format != PART_FORMAT || h->key != key ||
        h->rule_size != sizeof(codegen_rule) || h->kernel_size != sizeof(codegen_kernel) ||
        h->block_size != sizeof(codegen_block) || h->family != (int32_t)f->id ||
        h->nrule != f->nrule || h->nrule < 0 || h->nrule > PART_MAX_RULES ||
        h->nkernel < 0 || h->nblock < 0)
        return 0;
    const int32_t s[7] = {shape->major[0], shape->major[1], shape->major[2], shape->minor[0],
                          shape->minor[1], shape->minor[2], shape->live_limit};
    if (memcmp(h->dim, f->dim, sizeof h->dim) || memcmp(h->major, s, sizeof h->major) ||
        memcmp(h->minor, s + 3, sizeof h->minor) || h->live_limit != s[6])
        return 0;
    long long want = (long long)h->nrule * h->rule_size +
                     (long long)h->nkernel * h->kernel_size + (long long)h->nblock * h->block_size;
    return want == payload;
}

/* Read the arrays of a manifest whose header `h` passed into `p`. Returns 1 on success. */
static int part_read_arrays(FILE *in, const part_header *h, codegen_partition *p)
{
    p->family = (codegen_family_id)h->family;
    memcpy(p->dim, h->dim, sizeof p->dim);
    memcpy(p->shape.major, h->major, sizeof p->shape.major);
    memcpy(p->shape.minor, h->minor, sizeof p->shape.minor);
    p->shape.live_limit = h->live_limit;
    p->nrule = (long)h->nrule;
    p->nkernel = h->nkernel;
    p->nblock = h->nblock;
    p->reload_rate = h->reload_rate;
    p->naive_reload_rate = h->naive_reload_rate;
    p->max_live = h->max_live;
    p->loads = (long)h->loads;
    p->naive_loads = (long)h->naive_loads;
    p->origin = (codegen_origin)h->origin;
    for (int o = 0; o < CODEGEN_NORIGIN; o++) {
        p->candidate_reload[o] = h->candidate_reload[o];
        p->candidate_loads[o] = (long)h->candidate_loads[o];
    }
    p->rule = malloc((size_t)(p->nrule ? p->nrule : 1) * sizeof *p->rule);
    p->kernel = malloc((size_t)(p->nkernel ? p->nkernel : 1) * sizeof *p->kernel);
    p->block = malloc((size_t)(p->nblock ? p->nblock : 1) * sizeof *p->block);
    return p->rule && p->kernel && p->block &&
           fread(p->rule, sizeof *p->rule, (size_t)p->nrule, in) == (size_t)p->nrule &&
           fread(p->kernel, sizeof *p->kernel, (size_t)p->nkernel, in) == (size_t)p->nkernel &&
           fread(p->block, sizeof *p->block, (size_t)p->nblock, in) == (size_t)p->nblock &&
           part_checksum(p) == h->checksum && part_valid(p);
}

int codegen_cache_get_partition(const char *dir, uint64_t key, const codegen_family *f,
                                const codegen_shape *shape, codegen_partition *out)
{
    char *path = cache_path(dir, key, ".part");
    FILE *in = path ? fopen(path, "rb") : NULL;
    free(path);
    if (!in)
        return 0;
    struct stat sb;
    part_header h;
    codegen_partition p;
    memset(&p, 0, sizeof p);
    int hit = fstat(fileno(in), &sb) == 0 && sb.st_size >= (off_t)sizeof h &&
              fread(&h, sizeof h, 1, in) == 1 &&
              part_header_ok(&h, key, f, shape, (long long)sb.st_size - (long long)sizeof h) &&
              part_read_arrays(in, &h, &p);
    fclose(in);
    if (!hit) {
        codegen_partition_free(&p);
        return 0;
    }
    *out = p;
    return 1;
}

cky_status codegen_cache_put_partition(const char *dir, uint64_t key, const codegen_partition *p)
{
    part_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, PART_MAGIC, 8);
    h.format = PART_FORMAT;
    h.rule_size = sizeof *p->rule;
    h.kernel_size = sizeof *p->kernel;
    h.block_size = sizeof *p->block;
    h.key = key;
    h.checksum = part_checksum(p);
    h.nrule = p->nrule;
    h.family = (int32_t)p->family;
    memcpy(h.dim, p->dim, sizeof h.dim);
    memcpy(h.major, p->shape.major, sizeof h.major);
    memcpy(h.minor, p->shape.minor, sizeof h.minor);
    h.live_limit = p->shape.live_limit;
    h.nkernel = p->nkernel;
    h.nblock = p->nblock;
    h.max_live = p->max_live;
    h.reload_rate = p->reload_rate;
    h.naive_reload_rate = p->naive_reload_rate;
    h.loads = p->loads;
    h.naive_loads = p->naive_loads;
    h.origin = (int32_t)p->origin;
    for (int o = 0; o < CODEGEN_NORIGIN; o++) {
        h.candidate_reload[o] = p->candidate_reload[o];
        h.candidate_loads[o] = p->candidate_loads[o];
    }
    size_t sizes[3] = {(size_t)p->nrule * sizeof *p->rule,
                       (size_t)p->nkernel * sizeof *p->kernel,
                       (size_t)p->nblock * sizeof *p->block};
    const void *arrays[3] = {p->rule, p->kernel, p->block};
    size_t total = sizeof h + sizes[0] + sizes[1] + sizes[2];
    unsigned char *buf = malloc(total);
    char *path = cache_path(dir, key, ".part");
    cky_status st;
    if (!buf || !path) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    } else {
        memcpy(buf, &h, sizeof h);
        for (size_t i = 0, at = sizeof h; i < 3; at += sizes[i], i++)
            if (sizes[i])
                memcpy(buf + at, arrays[i], sizes[i]);
        st = cachedir_write_atomic(path, buf, total);
    }
    free(buf);
    free(path);
    return st;
}

cky_status codegen_cache_dir(const codegen_options *o, char **dir)
{
    return cachedir_resolve(o ? o->cache_dir : NULL, dir);
}
