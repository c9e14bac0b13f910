/* image_cache: grammar images in the kernel cache (see grammar_load in grammar.h).
 *
 * DIR/GROUP-KEY.gimg is the image (grammar/image.h) of the grammar loaded from `spec`; GROUP
 * hashes where its source files are (device, inode), and writing an image removes the older
 * ones of its group (each can be hundreds of MB). KEY is a
 * 64-bit FNV-1a hash of
 *   - the image format and the sizes of the types it stores raw;
 *   - the identity of every file the loaders may read for `spec` (spec itself and the six
 *     PREFIX.grammar/.lexicon/.words[.gz] names): device, inode, size, mtime and ctime in
 *     nanoseconds, or "missing". Identity, not content: hashing the 72 MB of a large text
 *     export would cost a tenth of a second at every start, stat costs microseconds, and a
 *     rewrite of a file changes its ctime, which no tool can set back (cp -p and touch -r
 *     restore the mtime only), so an edited grammar never meets its old image;
 *   - the identity of the binary holding the loader (the cky executable or libcky.so, found
 *     with dladdr), so that a rebuilt loader never trusts images written by an older one.
 * The image is mapped and verified (checksum, then every index: grammar_image_open) before
 * use; a missing, stale or damaged one is a miss: the grammar is parsed and its image written
 * with an atomic rename. A cache that cannot be written only costs the parse next time.
 * Sources under 64 KB are always parsed (IMAGE_MIN_BYTES). */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cachedir.h"
#include "image.h"
#include "lexicon_berkeley.h"

#define FNV_INIT 0xcbf29ce484222325ULL
/* Sources smaller than this (the small grammars of tests, say) parse in a few milliseconds
 * and get no image, so that they do not fill the cache. */
#define IMAGE_MIN_BYTES (64 << 10)

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Hash the identity of the file `path` (or that it is missing): where it is (device, inode)
 * into *place, and all of it into *h. */
static void hash_identity(uint64_t *h, uint64_t *place, int64_t *bytes, const char *path)
{
    struct stat sb;
    if (!path || stat(path, &sb) != 0) {
        *h = fnv(*h, "missing", 8);
        return;
    }
    int64_t id[7] = {(int64_t)sb.st_dev, (int64_t)sb.st_ino, (int64_t)sb.st_size,
                     (int64_t)sb.st_mtim.tv_sec, (int64_t)sb.st_mtim.tv_nsec,
                     (int64_t)sb.st_ctim.tv_sec, (int64_t)sb.st_ctim.tv_nsec};
    *h = fnv(*h, id, sizeof id);
    *place = fnv(*place, id, 2 * sizeof *id);
    *bytes += sb.st_size;
}

/* The file holding this code: libcky.so, or the program it is linked into (whose dladdr
 * name may be a bare argv[0]: /proc/self/exe then). */
static const char *loader_path(void)
{
    Dl_info info;
    struct stat sb;
    if (dladdr((void *)grammar_load_source, &info) && info.dli_fname &&
        strchr(info.dli_fname, '/') && stat(info.dli_fname, &sb) == 0)
        return info.dli_fname;
    return "/proc/self/exe";
}

/* The key of the image of `spec` (see the file comment), and in *group a hash of where its
 * source files are, shared by the images of older versions of them. 0 when out of memory or
 * when the sources are smaller than IMAGE_MIN_BYTES. */
static uint64_t image_key(const char *spec, uint64_t *group)
{
    int64_t bytes = 0, unused_bytes = 0;
    uint64_t sizes[5] = {sizeof(int), sizeof(size_t), sizeof(double), sizeof(long),
                         sizeof(lexicon_berkeley_params)};
    uint64_t h = fnv(FNV_INIT, "cky-grammar-image", 17), unused = FNV_INIT;
    *group = FNV_INIT;
    h = fnv(h, sizes, sizeof sizes);
    hash_identity(&h, &unused, &unused_bytes, loader_path());
    hash_identity(&h, group, &bytes, spec);
    char *prefix = grammar_text_prefix(spec);
    size_t n = prefix ? strlen(prefix) + 16 : 0;
    char *path = prefix ? malloc(n) : NULL;
    for (int i = 0; path && i < GRAMMAR_NTEXT_SUFFIX; i++) {
        snprintf(path, n, "%s%s", prefix, grammar_text_suffix[i]);
        hash_identity(&h, group, &bytes, path);
    }
    uint64_t key = path && bytes >= IMAGE_MIN_BYTES ? h | 1 : 0;
    free(prefix);
    free(path);
    return key;
}

/* Remove the images DIR/GROUP-*.gimg other than `keep` (older versions of the grammar or of
 * the loader: each can be hundreds of MB). */
static void remove_older(const char *dir, uint64_t group, const char *keep)
{
    char prefix[24];
    snprintf(prefix, sizeof prefix, "%016llx-", (unsigned long long)group);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char path[4096];
        if (!strncmp(e->d_name, prefix, 17) && n > 5 && !strcmp(e->d_name + n - 5, ".gimg") &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
            strcmp(path, keep))
            unlink(path);
    }
    if (d)
        closedir(d);
}

/* Map DIR/KEY.gimg and open it: CKY_OK with *out, or a miss (any error). */
static cky_status image_read(const char *path, uint64_t key, const char *spec, grammar **out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cky_fail(CKY_ERR_IO, "%s: no grammar image", path);
    struct stat sb;
    void *data = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && sb.st_size > 0)
        data = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                    fd, 0);
    close(fd);
    if (data == MAP_FAILED)
        return cky_fail(CKY_ERR_IO, "%s: cannot map the grammar image", path);
    cky_status st = grammar_image_open(data, (size_t)sb.st_size, key, spec, 1, out);
    if (st)
        munmap(data, (size_t)sb.st_size);
    return st;
}

/* Write the image of g to `path` (errors ignored: the next run parses again). */
static void image_write(const char *dir, const char *path, uint64_t group, uint64_t key,
                        const grammar *g)
{
    unsigned char *buf;
    size_t len;
    if (cachedir_mkdirs(dir) || grammar_image_build(g, key, &buf, &len))
        return;
    if (!cachedir_write_atomic(path, buf, len))
        remove_older(dir, group, path);
    free(buf);
}

cky_status grammar_load_cached(const char *spec, const char *cache_dir, grammar **out)
{
    return grammar_load_with(spec, cache_dir, NULL, out);
}

cky_status grammar_load_with(const char *spec, const char *cache_dir,
                             const progress_sink *progress, grammar **out)
{
    char *dir = NULL;
    uint64_t key = 0, group = 0;
    char *path = NULL;
    if (!cachedir_resolve(cache_dir, &dir) && dir && (key = image_key(spec, &group)) &&
        (path = malloc(strlen(dir) + 48)))
        snprintf(path, strlen(dir) + 48, "%s/%016llx-%016llx.gimg", dir,
                 (unsigned long long)group, (unsigned long long)key);
    cky_status st = path ? image_read(path, key, spec, out) : CKY_ERR_IO;
    if (st) {
        progress_report(progress, PROGRESS_GRAMMAR, PROGRESS_BEGIN, spec, 0, 0, 0);
        st = grammar_load_source(spec, out);
        progress_report(progress, PROGRESS_GRAMMAR, PROGRESS_END, spec, 0, 0, 0);
        if (!st && path) {
            progress_report(progress, PROGRESS_IMAGE, PROGRESS_BEGIN, spec, 0, 0, 0);
            image_write(dir, path, group, key, *out);
            progress_report(progress, PROGRESS_IMAGE, PROGRESS_END, spec, 0, 0, 0);
        }
    }
    free(path);
    free(dir);
    return st;
}

cky_status grammar_load(const char *spec, grammar **out)
{
    return grammar_load_cached(spec, NULL, out);
}
