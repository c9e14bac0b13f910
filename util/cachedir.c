/* cachedir: the cache folder (see cachedir.h): where it is, whether it can be used, atomic
 * writes into it, and the removal of what interrupted runs left there.
 *
 * Every temporary file or folder written there is named tmp-PID-HOST~XXXXXX, so that a
 * later run can tell leftovers from work in progress: a name whose process is gone (same
 * host), or any temporary older than a day, is removed when a run prepares the folder. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cachedir.h"

#define STALE_SECONDS (24 * 3600) /* a temporary this old is a leftover, whoever made it */

cky_status cachedir_resolve(const char *given, char **dir)
{
    const char *d = given ? given : getenv("CKY_CACHE");
    char *out = NULL;
    *dir = NULL;
    if (d && *d) {
        if (!strcasecmp(d, "off"))
            return CKY_OK;
        out = strdup(d);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        const char *base = xdg && xdg[0] == '/' ? xdg : home && *home ? home : "/tmp";
        size_t n = strlen(base) + 16;
        if ((out = malloc(n)))
            snprintf(out, n, "%s%s/cky", base, base == xdg ? "" : "/.cache");
    }
    if (!out)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    *dir = out;
    return CKY_OK;
}

cky_status cachedir_mkdirs(const char *dir)
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

char *cachedir_temp_template_named(const char *dir, const char *prefix, const char *suffix)
{
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    for (char *c = host; *c; c++)
        if (*c == '/' || *c == '~')
            *c = '_';
    size_t n = strlen(dir) + strlen(prefix) + strlen(host) + strlen(suffix) + 48;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%s/%stmp-%ld-%s~XXXXXX%s", dir, prefix, (long)getpid(), host, suffix);
    return t;
}

char *cachedir_temp_template(const char *dir, const char *suffix)
{
    return cachedir_temp_template_named(dir, "", suffix);
}

int cachedir_temp_is_leftover(const char *name, const struct stat *sb)
{
    double age = difftime(time(NULL), sb->st_mtime);
    char *end;
    long pid = strtol(name + 4, &end, 10);
    const char *tilde = strrchr(name, '~');
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    if (age > STALE_SECONDS)
        return 1;
    if (*end != '-' || !tilde || pid <= 0 || (size_t)(tilde - end - 1) != strlen(host) ||
        strncmp(end + 1, host, strlen(host)))
        return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* 1 if `name` (in a folder) is a temporary whose writer is gone or that is older than a day;
 * also the build-* and *.tmpXXXXXX names of earlier versions, after an hour. */
static int is_leftover(const char *name, const struct stat *sb)
{
    if (!strncmp(name, "tmp-", 4))
        return cachedir_temp_is_leftover(name, sb);
    double age = difftime(time(NULL), sb->st_mtime);
    return age > 3600 && (!strncmp(name, "build-", 6) || strstr(name, ".tmp"));
}

/* Remove a leftover file, or a leftover folder and the files in it. */
static void remove_leftover(const char *path, const struct stat *sb)
{
    if (!S_ISDIR(sb->st_mode)) {
        unlink(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char sub[4096];
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
            unlink(sub);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

cky_status cachedir_prepare(const char *dir)
{
    cky_status st = cachedir_mkdirs(dir);
    if (st)
        return cky_fail(st, "kernel cache %s: %s", dir, cky_last_error());
    char *probe = cachedir_temp_template(dir, "");
    if (!probe)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    int fd = mkstemp(probe);
    if (fd < 0) {
        st = cky_fail(CKY_ERR_IO, "kernel cache %s: cannot write there: %s", dir,
                      strerror(errno));
        free(probe);
        return st;
    }
    close(fd);
    unlink(probe);
    free(probe);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[4096];
        struct stat sb;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
            lstat(path, &sb) == 0 && is_leftover(e->d_name, &sb))
            remove_leftover(path, &sb);
    }
    if (d)
        closedir(d);
    return CKY_OK;
}

cky_status cachedir_write_atomic(const char *path, const void *data, size_t len)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    char *tmp = dir ? cachedir_temp_template(dir, "") : NULL;
    free(dir);
    if (!tmp)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
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
