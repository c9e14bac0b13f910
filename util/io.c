/* io: gzip-transparent line and file readers (see io.h). */
#include "io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct io_lines {
    gzFile gz;
    char *path;
    char *buf;
    size_t cap;
    long number;
};

static cky_status open_gz(const char *path, gzFile *out)
{
    gzFile gz = strcmp(path, "-") == 0 ? gzdopen(dup(STDIN_FILENO), "rb") : gzopen(path, "rb");
    if (!gz)
        return cky_fail(CKY_ERR_IO, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    gzbuffer(gz, 1 << 17);
    *out = gz;
    return CKY_OK;
}

cky_status io_lines_open(const char *path, io_lines **out)
{
    io_lines *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return cky_fail(CKY_ERR_NOMEM, "%s: out of memory", path);
    }
    cky_status st = open_gz(path, &r->gz);
    if (st) {
        free(r->path);
        free(r);
        return st;
    }
    *out = r;
    return CKY_OK;
}

cky_status io_lines_next(io_lines *r, char **line, size_t *len)
{
    size_t n = 0;
    int c = EOF;
    *line = NULL;
    *len = 0;
    for (;;) {
        c = gzgetc(r->gz);
        if (c == EOF || c == '\n')
            break;
        if (n + 1 >= r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 256;
            char *b = realloc(r->buf, cap);
            if (!b)
                return cky_fail(CKY_ERR_NOMEM, "%s:%ld: line too long for memory", r->path,
                                r->number + 1);
            r->buf = b;
            r->cap = cap;
        }
        r->buf[n++] = (char)c;
    }
    if (c == EOF) {
        int errnum = 0;
        const char *msg = gzerror(r->gz, &errnum);
        if (errnum != Z_OK && errnum != Z_BUF_ERROR)
            return cky_fail(CKY_ERR_IO, "%s:%ld: read error: %s", r->path, r->number + 1, msg);
        if (errnum == Z_BUF_ERROR)
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: truncated gzip data", r->path, r->number + 1);
        if (n == 0)
            return CKY_OK; /* end of input */
    }
    if (n > 0 && r->buf[n - 1] == '\r')
        n--;
    if (!r->buf) { /* empty first line: still hand out a valid buffer */
        r->buf = malloc(1);
        if (!r->buf)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        r->cap = 1;
    }
    r->buf[n] = '\0';
    r->number++;
    *line = r->buf;
    *len = n;
    return CKY_OK;
}

long io_lines_number(const io_lines *r) { return r->number; }

const char *io_lines_path(const io_lines *r) { return r->path; }

void io_lines_close(io_lines *r)
{
    if (!r)
        return;
    gzclose(r->gz);
    free(r->buf);
    free(r->path);
    free(r);
}

cky_status io_read_file(const char *path, char **data, size_t *len)
{
    gzFile gz;
    cky_status st = open_gz(path, &gz);
    if (st)
        return st;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            gzclose(gz);
            return cky_fail(CKY_ERR_NOMEM, "%s: out of memory", path);
        }
        if (cap - n < (1 << 15)) {
            char *b = realloc(buf, cap * 2);
            if (!b)
                free(buf);
            buf = b;
            cap *= 2;
            continue;
        }
        int got = gzread(gz, buf + n, (unsigned)(cap - n - 1));
        if (got < 0) {
            int errnum;
            const char *msg = gzerror(gz, &errnum);
            st = cky_fail(CKY_ERR_FORMAT, "%s: cannot decompress: %s", path, msg);
            free(buf);
            gzclose(gz);
            return st;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    int errnum = 0;
    gzerror(gz, &errnum);
    gzclose(gz);
    if (errnum == Z_BUF_ERROR) {
        free(buf);
        return cky_fail(CKY_ERR_FORMAT, "%s: truncated gzip data", path);
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return CKY_OK;
}

cky_status io_read_raw(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cky_fail(CKY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            unsigned char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf)
        return cky_fail(CKY_ERR_NOMEM, "%s: out of memory", path);
    if (err) {
        free(buf);
        return cky_fail(CKY_ERR_IO, "%s: read error", path);
    }
    *data = buf;
    *len = n;
    return CKY_OK;
}

int io_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
