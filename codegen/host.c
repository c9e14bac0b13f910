/* codegen host: build a generated kernel's text with the host C compiler into a shared
 * object and load it, so the parser can run the very same rule code on the CPU.
 *
 * The cache entry DIR/HASH.hso (the key covers $CC and the flags below) is a header (magic,
 * format, key, size, FNV-1a digest of the object) then the object. It is loaded only after
 * the whole file is read and its digest checked, and from a private copy of those verified
 * bytes, never from the cache file itself: a truncated, corrupted or replaced entry is a
 * miss and is rebuilt, never a crash or other code. Builds run in a private temporary
 * folder (tmp-PID-HOST~XXXXXX, cachedir.c), removed afterwards or by a later run. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/io.h"
#include "internal.h"

extern char **environ;

const char *codegen_host_flags(void)
{
    /* -mfma where the CPU has it: the kernels' fmaf become one instruction instead of a call
     * into libm, with the same correctly rounded result, hence the same bits (and
     * -ffp-contract=off, so that no other product and sum is fused) */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("fma"))
        return "-O2 -shared -fPIC -std=gnu11 -w -mfma -ffp-contract=off";
#endif
    return "-O2 -shared -fPIC -std=gnu11 -w";
}

#define HOST_MAGIC "CKYHOST" /* with its NUL, 8 bytes */
#define HOST_FORMAT 1u

typedef struct host_header {
    char magic[8];
    uint32_t format, pad;
    uint64_t key, size, checksum;
} host_header;

const char *codegen_host_compiler(void)
{
    const char *cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

/* Run `cc FLAGS -o out src`, its output going to `logpath`. Returns the exit status, -1 if
 * it died of a signal, -2 if it could not be started (*err: why). */
static int host_run_cc(const char *src, const char *out, const char *logpath, int *err)
{
    char flags[128];
    snprintf(flags, sizeof flags, "%s", codegen_host_flags());
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)codegen_host_compiler();
    for (char *tok = strtok(flags, " "); tok && argc < 12; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc++] = "-o";
    argv[argc++] = (char *)out;
    argv[argc++] = (char *)src;
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        *err = rc;
        return -2;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *host_read_log(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 8192);
    if (f && buf)
        buf[fread(buf, 1, 8191, f)] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* The error of a failed compiler run: what to do about it. */
static cky_status host_cc_failed(int rc, int err, const char *log)
{
    const char *cc = codegen_host_compiler();
    if (rc == -2)
        return cky_fail(CKY_ERR_COMPILE, "cannot run the C compiler '%s': %s. The cpu engine "
                        "compiles the grammar's kernels with a C compiler at run time: install "
                        "one (e.g. apt-get install gcc), name it in CC, or parse with --engine "
                        "ref, which needs none", cc, strerror(err));
    char *text = host_read_log(log);
    cky_status st = cky_fail(CKY_ERR_COMPILE, "the C compiler '%s' failed on a generated kernel "
                             "(%s %d)%s%s", cc, rc < 0 ? "killed by a signal" : "exit status",
                             rc, text && *text ? ":\n" : "", text ? text : "");
    free(text);
    return st;
}

/* Compile `src` into a shared object, returned as bytes, in a temporary folder in `dir`. */
static cky_status host_build(const char *dir, const char *src, unsigned char **elf, size_t *n)
{
    char *tmp = cachedir_temp_template(dir, "");
    if (!tmp)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!mkdtemp(tmp)) {
        cky_status st = cky_fail(CKY_ERR_IO, "cannot create a temp folder in %s: %s", dir,
                                 strerror(errno));
        free(tmp);
        return st;
    }
    size_t len = strlen(tmp) + 16;
    char *csrc = malloc(len), *so = malloc(len), *log = malloc(len);
    cky_status st = CKY_OK;
    if (!csrc || !so || !log) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    snprintf(csrc, len, "%s/k.c", tmp);
    snprintf(so, len, "%s/k.so", tmp);
    snprintf(log, len, "%s/k.log", tmp);
    if ((st = cachedir_write_atomic(csrc, src, strlen(src))))
        goto done;
    int err = 0, rc = host_run_cc(csrc, so, log, &err);
    st = rc ? host_cc_failed(rc, err, log) : io_read_raw(so, elf, n);
done:
    if (csrc)
        unlink(csrc);
    if (so)
        unlink(so);
    if (log)
        unlink(log);
    rmdir(tmp);
    free(csrc);
    free(so);
    free(log);
    free(tmp);
    return st;
}

/* dlopen a shared object given as bytes, from a private copy in `dir` (removed once it is
 * loaded: nothing can change it between the check and the load). Returns the handle or NULL
 * (*why: the reason). dlopen needs a file of its own name per object: it would hand back an
 * object already loaded under the same name, so a reused memfd path cannot serve. */
static void *host_dlopen_bytes(const char *dir, const unsigned char *elf, size_t n,
                               const char **why)
{
    char *path = cachedir_temp_template(dir, ".so");
    int fd = path ? mkstemps(path, 3) : -1;
    *why = path ? strerror(errno) : "out of memory";
    if (fd < 0) {
        free(path);
        return NULL;
    }
    void *h = NULL;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, elf + done, n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    *why = done < n ? strerror(errno ? errno : EIO) : NULL;
    if (close(fd) == 0 && done == n && !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
        *why = dlerror();
    unlink(path);
    free(path);
    return h;
}

/* Look up `name` in a loaded object: CKY_OK, or an error naming `what`. */
static cky_status host_symbol(void *h, const char *what, const char *name, void **handle,
                              codegen_host_fn *fn)
{
    void *sym = dlsym(h, name);
    if (!sym) {
        dlclose(h);
        return cky_fail(CKY_ERR_COMPILE, "%s has no function %s", what, name);
    }
    *handle = h;
    *fn = (codegen_host_fn)sym;
    return CKY_OK;
}

static char *host_path(const char *dir, uint64_t key)
{
    size_t n = strlen(dir) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%016llx.hso", dir, (unsigned long long)key);
    return p;
}

int codegen_host_cached(const char *dir, uint64_t key, const char *name, void **handle,
                        codegen_host_fn *fn)
{
    char *path = host_path(dir, key);
    unsigned char *data = NULL;
    size_t n = 0;
    int hit = 0;
    if (path && io_file_exists(path) && !io_read_raw(path, &data, &n) &&
        n > sizeof(host_header)) {
        host_header h;
        memcpy(&h, data, sizeof h);
        const unsigned char *elf = data + sizeof h;
        void *lib;
        const char *why;
        hit = !memcmp(h.magic, HOST_MAGIC, 8) && h.format == HOST_FORMAT && h.key == key &&
              h.size == n - sizeof h &&
              codegen_hash(CODEGEN_FNV_INIT, elf, h.size) == h.checksum &&
              (lib = host_dlopen_bytes(dir, elf, h.size, &why)) &&
              !host_symbol(lib, path, name, handle, fn);
    }
    free(data);
    free(path);
    return hit;
}

cky_status codegen_host_load(const char *dir, uint64_t key, const char *src, const char *name,
                             void **handle, codegen_host_fn *fn)
{
    const char *t = getenv("TMPDIR"), *work = dir ? dir : t && *t ? t : "/tmp";
    unsigned char *elf = NULL;
    size_t n = 0;
    cky_status st = host_build(work, src, &elf, &n);
    if (st)
        return st;
    char *path = dir ? host_path(dir, key) : NULL;
    unsigned char *entry = path ? malloc(sizeof(host_header) + n) : NULL;
    if (entry) { /* a cache that cannot take it costs a compilation next time, nothing else */
        host_header h = {HOST_MAGIC, HOST_FORMAT, 0, key, n,
                         codegen_hash(CODEGEN_FNV_INIT, elf, n)};
        memcpy(entry, &h, sizeof h);
        memcpy(entry + sizeof h, elf, n);
        cachedir_write_atomic(path, entry, sizeof h + n);
    }
    free(entry);
    free(path);
    const char *why;
    void *h = host_dlopen_bytes(work, elf, n, &why);
    free(elf);
    if (!h)
        return cky_fail(CKY_ERR_COMPILE, "cannot load the compiled kernel %s (from a copy in "
                        "%s): %s", name, work, why);
    return host_symbol(h, name, name, handle, fn);
}
