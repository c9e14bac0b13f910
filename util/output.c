/* output: whole-or-nothing result files, plain or gzip (see output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct output {
    FILE *f;
    char *path, *tmp; /* tmp: NULL when writing the target (or stdout) directly */
    char *target;     /* what tmp is renamed to: path, or the file a symbolic link names */
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
        struct stat lsb;
        if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode) && (o->target = realpath(path, NULL)))
            path = o->target; /* write the file the link names, keep the link */
        size_t n = strlen(path) + 32;
        if (!(o->tmp = malloc(n)))
            return open_fail(o, "%s: %s", ENOMEM);
        const char *slash = strrchr(path, '/');
        int dirlen = slash ? (int)(slash - path + 1) : 0;
        snprintf(o->tmp, n, "%.*s.%s.tmp-XXXXXX", dirlen, path, path + dirlen);
        if ((fd = mkostemp(o->tmp, O_CLOEXEC)) < 0) {
            free(o->tmp);
            o->tmp = NULL;
            return open_fail(o, "%s: cannot write (no temporary file beside it): %s", errno);
        }
        set_mode(fd, path);
        o->sync_fd = dup(fd);
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

cky_status output_commit(output *o)
{
    int err = output_close(o);
    cky_status st = CKY_OK;
    if (err)
        st = cky_fail(CKY_ERR_IO, "%s: write error: %s", o->path, strerror(err));
    else if (o->tmp && rename(o->tmp, o->target ? o->target : o->path) != 0)
        st = cky_fail(CKY_ERR_IO, "%s: cannot replace it with %s: %s", o->path, o->tmp,
                      strerror(errno));
    else if (o->tmp) {
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
