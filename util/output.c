/* output: whole-or-nothing result files, plain or gzip (see output.h). */
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cachedir.h"

struct output {
    FILE *f;
    char *path, *tmp; /* tmp: NULL when writing the target (or stdout) directly */
    char *target;     /* where tmp goes: path, or the file its symbolic links name */
    int in_place;     /* commit copies tmp into target (keeping its inode) instead of a rename */
    gzFile gz;        /* gzip output: f is a cookie stream over it */
    int err;          /* errno of the first failed write */
    int sync_fd;      /* a duplicate of the temporary file's descriptor, for fsync; or -1 */
};

static ssize_t gz_cookie_write(void *cookie, const char *buf, size_t n)
{
    output *o = cookie;
    if (n == 0)
        return 0;
    errno = 0;
    int put = gzwrite(o->gz, buf, (unsigned)n);
    if (put <= 0) {
        o->err = errno ? errno : EIO;
        errno = o->err;
        return -1;
    }
    return put;
}

/* mkstemp makes 0600: give a new file the mode fopen would (0666 less the umask), a
 * replaced one its old mode. */
static void set_mode(int fd, const char *target)
{
    struct stat sb;
    if (stat(target, &sb) == 0) {
        fchmod(fd, sb.st_mode & 07777);
        return;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
}

static cky_status open_fail(output *o, const char *fmt, int err)
{
    cky_status st = cky_fail(CKY_ERR_IO, fmt, o->path, strerror(err));
    output_abort(o);
    return st;
}

/* The file `path` names after its symbolic links (at most 40), whether it exists or not: a
 * link's relative target is read from the link's folder. Malloc'ed (NULL: out of memory). */
static char *follow_links(const char *path)
{
    char *p = strdup(path);
    for (int hop = 0; p && hop < 40; hop++) {
        struct stat sb;
        char link[4096];
        ssize_t n;
        if (lstat(p, &sb) != 0 || !S_ISLNK(sb.st_mode) ||
            (n = readlink(p, link, sizeof link - 1)) < 0)
            return p;
        link[n] = '\0';
        const char *slash = strrchr(p, '/');
        char *next = NULL;
        if (link[0] == '/' || !slash)
            next = strdup(link);
        else if (asprintf(&next, "%.*s/%s", (int)(slash - p), p, link) < 0)
            next = NULL;
        free(p);
        p = next;
    }
    return p;
}

/* Remove what killed runs left in `dir`: the temporary files PREFIXtmp-PID-HOST~XXXXXX
 * (PREFIX: ".NAME." of the target) whose process is gone, or a day old (cachedir.h). */
static void remove_leftovers(const char *dir, const char *prefix)
{
    char start[4096];
    int len = snprintf(start, sizeof start, "%stmp-", prefix);
    DIR *d = len < (int)sizeof start ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[8192];
        struct stat sb;
        if (!strncmp(e->d_name, start, (size_t)len) &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
            lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
            cachedir_temp_is_leftover(e->d_name + len - 4, &sb))
            unlink(path);
    }
    if (d)
        closedir(d);
}

/* Make the temporary file of the regular target o->target (`exists`: it is there):
 * .NAME.tmp-PID-HOST~XXXXXX beside it, or, for a target we may write in a folder we may not,
 * in $TMPDIR (copied in place at the end); first remove the ones killed runs left there.
 * Returns its descriptor or -1 (errno). */
static int make_temp(output *o, int exists)
{
    const char *t = o->target, *slash = strrchr(t, '/');
    char *dir = slash ? strndup(t, (size_t)(slash - t + (slash == t))) : strdup(".");
    char *prefix = NULL;
    if (!dir || asprintf(&prefix, ".%s.", slash ? slash + 1 : t) < 0) {
        free(dir);
        errno = ENOMEM;
        return -1;
    }
    remove_leftovers(dir, prefix);
    int fd = -1;
    if ((o->tmp = cachedir_temp_template_named(dir, prefix, "")))
        fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0 && exists && errno == EACCES) {
        const char *tmpdir = getenv("TMPDIR");
        tmpdir = tmpdir && *tmpdir ? tmpdir : "/tmp";
        free(o->tmp);
        remove_leftovers(tmpdir, prefix);
        if ((o->tmp = cachedir_temp_template_named(tmpdir, prefix, "")))
            fd = mkostemp(o->tmp, O_CLOEXEC);
        o->in_place = 1;
    }
    int err = errno;
    free(dir);
    free(prefix);
    if (fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
    }
    errno = err;
    return fd;
}

cky_status output_open(const char *path, output **out)
{
    output *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(strcmp(path, "-") ? path : "stdout"))) {
        free(o);
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    }
    o->sync_fd = -1;
    int fd;
    struct stat sb;
    if (!strcmp(path, "-")) {
        fd = dup(STDOUT_FILENO);
    } else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        return open_fail(o, "%s: cannot write: %s", EISDIR);
    } else if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        fd = open(path, O_WRONLY | O_CLOEXEC);
    } else {
        if (!(o->target = follow_links(path))) /* write the file the links name, keep them */
            return open_fail(o, "%s: %s", ENOMEM);
        int exists = stat(o->target, &sb) == 0;
        /* refused where a shell's > would be: a file we may not write */
        if (exists && faccessat(AT_FDCWD, o->target, W_OK, AT_EACCESS) != 0)
            return open_fail(o, "%s: cannot write: %s", errno);
        /* a rename would cut the other hard links and make the file ours */
        o->in_place = exists && (sb.st_nlink > 1 || sb.st_uid != geteuid());
        if ((fd = make_temp(o, exists)) < 0)
            return open_fail(o, "%s: cannot write (no temporary file beside it): %s", errno);
        set_mode(fd, o->target);
        o->sync_fd = o->in_place ? -1 : dup(fd);
    }
    if (fd < 0)
        return open_fail(o, "%s: cannot write: %s", errno);
    size_t len = strlen(o->path);
    if (len > 3 && !strcmp(o->path + len - 3, ".gz")) {
        cookie_io_functions_t io = {.write = gz_cookie_write};
        if (!(o->gz = gzdopen(fd, "wb")) || !(o->f = fopencookie(o, "w", io))) {
            if (!o->gz)
                close(fd);
            return open_fail(o, "%s: cannot write: %s", errno ? errno : ENOMEM);
        }
    } else if (!(o->f = fdopen(fd, "w"))) {
        close(fd);
        return open_fail(o, "%s: cannot write: %s", errno);
    }
    *out = o;
    return CKY_OK;
}

FILE *output_file(output *o) { return o->f; }

int output_error(const output *o) { return o->err; }

const char *output_name(const output *o) { return o->path; }

cky_status output_flush(output *o)
{
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) {
        if (!o->err)
            o->err = errno ? errno : EIO;
        return cky_fail(CKY_ERR_IO, "%s: write error: %s", o->path, strerror(o->err));
    }
    return CKY_OK;
}

/* Close the stream (and the gzip layer), the temporary file synced to disk: 0 or the errno
 * of the first failure. */
static int output_close(output *o)
{
    int err = 0;
    if (o->f) {
        err = output_flush(o) ? o->err : 0;
        errno = 0;
        if (fclose(o->f) != 0 && !err)
            err = errno ? errno : EIO;
        o->f = NULL;
    }
    if (o->gz) {
        errno = 0;
        int zr = gzclose(o->gz);
        if (zr != Z_OK && !err)
            err = zr == Z_ERRNO && errno ? errno : EIO;
        o->gz = NULL;
    }
    if (o->sync_fd >= 0) { /* on disk before it is renamed into place */
        if (fsync(o->sync_fd) != 0 && !err)
            err = errno;
        close(o->sync_fd);
        o->sync_fd = -1;
    }
    return err;
}

/* Copy the file `from` into the existing file `to` (truncated first, its inode kept) and
 * sync it: 0 or the errno of the failure. */
static int copy_into(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_TRUNC | O_CLOEXEC);
    int err = in < 0 || out < 0 ? errno : 0;
    char buf[1 << 16];
    ssize_t n;
    while (!err && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0)
            err = errno;
        for (ssize_t put = 0, w; !err && put < n; put += w)
            if ((w = write(out, buf + put, (size_t)(n - put))) < 0)
                err = errno;
    }
    if (!err && fsync(out) != 0)
        err = errno;
    if (out >= 0 && close(out) != 0 && !err)
        err = errno;
    if (in >= 0)
        close(in);
    return err;
}

cky_status output_commit(output *o)
{
    int err = output_close(o);
    cky_status st = CKY_OK;
    if (err) {
        st = cky_fail(CKY_ERR_IO, "%s: write error: %s", o->path, strerror(err));
    } else if (o->tmp && o->in_place && (err = copy_into(o->tmp, o->target))) {
        st = cky_fail(CKY_ERR_IO, "%s: write error: %s (the whole output is in %s)", o->path,
                      strerror(err), o->tmp);
        free(o->tmp); /* kept for the user */
        o->tmp = NULL;
    } else if (o->tmp && !o->in_place && rename(o->tmp, o->target) != 0) {
        st = cky_fail(CKY_ERR_IO, "%s: cannot replace it with %s: %s", o->path, o->tmp,
                      strerror(errno));
    } else if (o->tmp && !o->in_place) {
        free(o->tmp); /* renamed: nothing to remove */
        o->tmp = NULL;
    }
    output_abort(o);
    return st;
}

void output_abort(output *o)
{
    if (!o)
        return;
    if (o->f || o->gz || o->sync_fd >= 0)
        output_close(o);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    free(o->target);
    free(o);
}

int output_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISREG(sa.st_mode) &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
