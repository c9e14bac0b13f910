/* codegen cache: hashing, atomic file writes and the on-disk cubin cache.
 *
 * Entries are named by a 64-bit FNV-1a hash of everything that determines them (generator
 * version, compiler version and options, architecture, source text). A cubin entry starts
 * with a magic and a format version; a stale or foreign file is a miss and gets rewritten.
 * Writes go to a temp file in the same folder and are renamed into place, so concurrent
 * compilers never see half a file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CACHE_MAGIC "CKYCUBIN"
#define CACHE_FORMAT 1u

typedef struct cache_header {
    char magic[8];
    uint32_t format, pad;
    uint64_t key;
    int32_t registers, spill_bytes;
    uint64_t size;
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

cky_status codegen_mkdirs(const char *dir)
{
    char *path = strdup(dir);
    if (!path)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                cky_status st = cky_fail(CKY_ERR_IO, "cannot create %s: %s", path,
                                         strerror(errno));
                free(path);
                return st;
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    free(path);
    return CKY_OK;
}

cky_status codegen_write_atomic(const char *path, const void *data, size_t len)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cky_status st = cky_fail(CKY_ERR_IO, "cannot create a temp file beside %s: %s", path,
                                 strerror(errno));
        free(tmp);
        return st;
    }
    fchmod(fd, 0644); /* mkstemp makes 0600; cache and dumps are ordinary files */
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    ok = (f ? fclose(f) == 0 : (close(fd), 0)) && ok;
    if (!ok || rename(tmp, path) != 0) {
        cky_status st = cky_fail(CKY_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return CKY_OK;
}

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
    int hit = fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, CACHE_MAGIC, 8) &&
              h.format == CACHE_FORMAT && h.key == key && h.size > 0 && h.size < (1ULL << 32);
    if (hit) {
        data = malloc(h.size);
        hit = data && fread(data, 1, h.size, f) == h.size;
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
    unsigned char *buf = malloc(sizeof h + size);
    char *path = cache_path(dir, key, ".cubin");
    cky_status st;
    if (!buf || !path) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
    } else {
        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, cubin, size);
        st = codegen_write_atomic(path, buf, sizeof h + size);
    }
    free(buf);
    free(path);
    return st;
}

cky_status codegen_cache_dir(const codegen_options *o, char **dir)
{
    const char *d = o && o->cache_dir ? o->cache_dir : getenv("CKY_CACHE");
    char *out = NULL;
    *dir = NULL;
    if (d && *d) {
        if (!strcmp(d, "off"))
            return CKY_OK;
        out = strdup(d);
    } else {
        const char *home = getenv("HOME");
        size_t n = (home ? strlen(home) : 4) + 16;
        if ((out = malloc(n)))
            snprintf(out, n, "%s/.cache/cky", home && *home ? home : "/tmp");
    }
    if (!out)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    *dir = out;
    return CKY_OK;
}
