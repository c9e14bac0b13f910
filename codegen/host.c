/* codegen host: build a generated kernel's text with the host C compiler into a shared
 * object and load it, so the parser can run the very same rule code on the CPU.
 *
 * The .so is cached as DIR/HASH.so (the key covers $CC and the flags below); without a
 * cache it is built in a private temp folder that is removed once the object is loaded. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

const char *const codegen_host_flags = "-O2 -shared -fPIC -std=gnu11 -w";

const char *codegen_host_compiler(void)
{
    const char *cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

/* Run `cc FLAGS -o out src`, its output going to `logpath`. Returns the exit status or -1. */
static int host_run_cc(const char *src, const char *out, const char *logpath)
{
    char flags[128];
    snprintf(flags, sizeof flags, "%s", codegen_host_flags);
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
    if (rc != 0)
        return -1;
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

/* Build `src` into `so` (atomically: a temp name in the same folder, then rename). */
static cky_status host_build(const char *dir, const char *src, const char *so)
{
    size_t n = strlen(dir) + 64;
    char *csrc = malloc(n), *tmp_so = malloc(n), *log = malloc(n);
    cky_status st = CKY_OK;
    int fd[3] = {-1, -1, -1};
    if (!csrc || !tmp_so || !log) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    snprintf(csrc, n, "%s/build-XXXXXX.c", dir);
    snprintf(tmp_so, n, "%s/build-XXXXXX.so", dir);
    snprintf(log, n, "%s/build-XXXXXX.log", dir);
    if ((fd[0] = mkstemps(csrc, 2)) < 0 || (fd[1] = mkstemps(tmp_so, 3)) < 0 ||
        (fd[2] = mkstemps(log, 4)) < 0) {
        st = cky_fail(CKY_ERR_IO, "cannot create temp files in %s: %s", dir, strerror(errno));
        goto done;
    }
    size_t len = strlen(src);
    if (write(fd[0], src, len) != (ssize_t)len) {
        st = cky_fail(CKY_ERR_IO, "cannot write %s: %s", csrc, strerror(errno));
        goto done;
    }
    int rc = host_run_cc(csrc, tmp_so, log);
    if (rc != 0) {
        char *text = host_read_log(log);
        st = cky_fail(CKY_ERR_COMPILE, "host compiler '%s' failed (status %d) on %s:\n%s",
                      codegen_host_compiler(), rc, csrc, text ? text : "");
        free(text);
        goto done;
    }
    if (rename(tmp_so, so) != 0)
        st = cky_fail(CKY_ERR_IO, "cannot rename %s to %s: %s", tmp_so, so, strerror(errno));
done:
    for (int i = 0; i < 3; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    if (csrc && fd[0] >= 0)
        unlink(csrc);
    if (tmp_so && fd[1] >= 0)
        unlink(tmp_so); /* gone already after a successful rename */
    if (log && fd[2] >= 0)
        unlink(log);
    free(csrc);
    free(tmp_so);
    free(log);
    return st;
}

cky_status codegen_host_load(const char *dir, uint64_t key, const char *src, const char *name,
                             void **handle, codegen_host_fn *fn, int *hit)
{
    char tmpdir[64] = "";
    if (!dir) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/cky-host-XXXXXX",
                 t && *t && strlen(t) < 40 ? t : "/tmp");
        if (!mkdtemp(tmpdir))
            return cky_fail(CKY_ERR_IO, "cannot create a temp folder: %s", strerror(errno));
    }
    const char *d = dir ? dir : tmpdir;
    size_t n = strlen(d) + 32;
    char *so = malloc(n);
    if (!so)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    snprintf(so, n, "%s/%016llx.so", d, (unsigned long long)key);
    cky_status st = CKY_OK;
    *hit = dir && access(so, R_OK) == 0;
    void *h = NULL;
    if (*hit && !(h = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
        *hit = 0; /* a broken cache entry: rebuild it */
    if (!h) {
        if ((st = host_build(d, src, so)))
            goto done;
        if (!(h = dlopen(so, RTLD_NOW | RTLD_LOCAL))) {
            st = cky_fail(CKY_ERR_COMPILE, "cannot load %s: %s", so, dlerror());
            goto done;
        }
    }
    void *sym = dlsym(h, name);
    if (!sym) {
        dlclose(h);
        st = cky_fail(CKY_ERR_COMPILE, "%s has no function %s", so, name);
        goto done;
    }
    *handle = h;
    *fn = (codegen_host_fn)sym;
done:
    if (!dir) {
        unlink(so);
        rmdir(tmpdir);
    }
    free(so);
    return st;
}
