/* io: gzip-transparent line and file readers (see io.h). */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static cky_status open_gz(const char *path, gzFile *out)
{
    gzFile gz = strcmp(path, "-") == 0 ? gzdopen(dup(STDIN_FILENO), "rb") : gzopen(path, "rb");
    if (!gz)
        return cky_fail(CKY_ERR_IO, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    gzbuffer(gz, 1 << 17);
    *out = gz;
    return CKY_OK;
}

/* ---- line reader: read(2) as data arrives, gunzipped when it starts with the gzip magic ---- */

#define IO_CHUNK (1 << 16)

struct io_lines {
    int fd;
    char *path;
    unsigned char *raw;      /* bytes read from fd, raw[raw_pos..raw_len) not yet decoded */
    size_t raw_len, raw_pos;
    char *text;              /* decoded bytes, text[pos..len) not yet handed out */
    size_t len, pos, cap;
    int mode;                /* 0: undecided, 1: plain, 2: gzip, 3: gzip stream ended */
    int eof;                 /* read(2) returned 0 */
    int skip_lf;             /* the last line ended in a lone CR: drop an LF that follows */
    z_stream z;
    long number;
};

cky_status io_lines_open(const char *path, io_lines **out)
{
    io_lines *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(strcmp(path, "-") ? path : "stdin")) ||
        !(r->raw = malloc(IO_CHUNK))) {
        if (r)
            free(r->path);
        free(r);
        return cky_fail(CKY_ERR_NOMEM, "%s: out of memory", path);
    }
    r->fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    int err = r->fd < 0 ? errno : fstat(r->fd, &sb) ? errno : S_ISDIR(sb.st_mode) ? EISDIR : 0;
    if (err) {
        io_lines_close(r);
        return cky_fail(CKY_ERR_IO, "%s: cannot open: %s", path, strerror(err));
    }
    *out = r;
    return CKY_OK;
}

/* Make room for `more` decoded bytes at text[len..). */
static cky_status lines_reserve(io_lines *r, size_t more)
{
    if (r->pos > 0 && r->pos == r->len)
        r->pos = r->len = 0;
    if (r->len + more + 1 <= r->cap)
        return CKY_OK;
    if (r->pos > 0) { /* drop what was handed out */
        memmove(r->text, r->text + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    size_t cap = r->cap ? r->cap : IO_CHUNK;
    while (r->len + more + 1 > cap)
        cap *= 2;
    if (cap != r->cap) {
        char *t = realloc(r->text, cap);
        if (!t)
            return cky_fail(CKY_ERR_NOMEM, "%s:%ld: line too long for memory", r->path,
                            r->number + 1);
        r->text = t;
        r->cap = cap;
    }
    return CKY_OK;
}

/* One read(2): whatever is there, waiting only if nothing is. */
static cky_status lines_read(io_lines *r)
{
    if (r->raw_pos > 0) {
        memmove(r->raw, r->raw + r->raw_pos, r->raw_len - r->raw_pos);
        r->raw_len -= r->raw_pos;
        r->raw_pos = 0;
    }
    ssize_t got = read(r->fd, r->raw + r->raw_len, IO_CHUNK - r->raw_len);
    if (got < 0)
        return cky_fail(CKY_ERR_IO, "%s:%ld: read error: %s", r->path, r->number + 1,
                        strerror(errno));
    if (got == 0)
        r->eof = 1;
    r->raw_len += (size_t)got;
    return CKY_OK;
}

/* Decode the raw bytes there are into text. */
static cky_status lines_decode(io_lines *r)
{
    size_t avail = r->raw_len - r->raw_pos;
    if (r->mode == 0) {
        if (avail < 2 && !r->eof && !(avail == 1 && r->raw[r->raw_pos] != 0x1f))
            return CKY_OK; /* wait for the second byte of a possible gzip magic */
        r->mode = avail >= 2 && r->raw[r->raw_pos] == 0x1f && r->raw[r->raw_pos + 1] == 0x8b
                      ? 2 : 1;
        if (r->mode == 2 && inflateInit2(&r->z, 15 + 16) != Z_OK)
            return cky_fail(CKY_ERR_NOMEM, "%s: out of memory", r->path);
    }
    if (r->mode == 3) { /* after a gzip member: another member, or trailing bytes ignored */
        if (avail < 2 && !r->eof)
            return CKY_OK;
        if (avail >= 2 && r->raw[r->raw_pos] == 0x1f && r->raw[r->raw_pos + 1] == 0x8b) {
            inflateReset(&r->z);
            r->mode = 2;
        } else {
            r->raw_pos = r->raw_len;
            return CKY_OK;
        }
    }
    cky_status st;
    if (r->mode == 1) {
        if ((st = lines_reserve(r, avail)))
            return st;
        memcpy(r->text + r->len, r->raw + r->raw_pos, avail);
        r->len += avail;
        r->raw_pos = r->raw_len;
        return CKY_OK;
    }
    while (r->mode == 2 && r->raw_pos < r->raw_len) {
        if ((st = lines_reserve(r, IO_CHUNK)))
            return st;
        r->z.next_in = r->raw + r->raw_pos;
        r->z.avail_in = (uInt)(r->raw_len - r->raw_pos);
        r->z.next_out = (unsigned char *)r->text + r->len;
        r->z.avail_out = IO_CHUNK;
        int zr = inflate(&r->z, Z_NO_FLUSH);
        r->len += IO_CHUNK - r->z.avail_out;
        r->raw_pos = r->raw_len - r->z.avail_in;
        if (zr == Z_STREAM_END)
            r->mode = 3;
        else if (zr != Z_OK && zr != Z_BUF_ERROR)
            return cky_fail(CKY_ERR_FORMAT, "%s:%ld: cannot decompress: %s", r->path,
                            r->number + 1, r->z.msg ? r->z.msg : "corrupt gzip data");
    }
    return CKY_OK;
}

/* Index of the first line end (LF or CR) in text[pos..len), or len. */
static size_t lines_find_end(const io_lines *r)
{
    for (size_t k = r->pos; k < r->len; k++)
        if (r->text[k] == '\n' || r->text[k] == '\r')
            return k;
    return r->len;
}

/* After a line that ended in CR: drop the LF of a CRLF once it has arrived. */
static void lines_skip_lf(io_lines *r)
{
    if (r->skip_lf && r->pos < r->len) {
        if (r->text[r->pos] == '\n')
            r->pos++;
        r->skip_lf = 0;
    }
}

cky_status io_lines_next(io_lines *r, char **line, size_t *len)
{
    *line = NULL;
    *len = 0;
    cky_status st;
    size_t end;
    for (;;) {
        lines_skip_lf(r);
        end = lines_find_end(r);
        if (end < r->len || (r->eof && r->raw_pos == r->raw_len))
            break;
        if ((st = lines_read(r)) || (st = lines_decode(r)))
            return st;
    }
    if (end == r->len && r->mode == 2)
        return cky_fail(CKY_ERR_FORMAT, "%s:%ld: truncated gzip data", r->path, r->number + 1);
    if (end == r->len && r->pos == r->len)
        return CKY_OK; /* end of input */
    if ((st = lines_reserve(r, 1)))
        return st;
    end = lines_find_end(r); /* reserve may have moved the text */
    char *s = r->text + r->pos;
    size_t n = end - r->pos;
    if (end < r->len) {
        r->skip_lf = r->text[end] == '\r';
        r->pos = end + 1;
    } else {
        r->pos = end;
    }
    s[n] = '\0';
    r->number++;
    *line = s;
    *len = n;
    return CKY_OK;
}

int io_lines_pending(io_lines *r)
{
    lines_skip_lf(r);
    if (lines_find_end(r) < r->len || r->raw_pos < r->raw_len || r->eof)
        return 1;
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    return poll(&p, 1, 0) != 0;
}

long io_lines_number(const io_lines *r) { return r->number; }

const char *io_lines_path(const io_lines *r) { return r->path; }

void io_lines_close(io_lines *r)
{
    if (!r)
        return;
    if (r->mode >= 2)
        inflateEnd(&r->z);
    if (r->fd >= 0)
        close(r->fd);
    free(r->raw);
    free(r->text);
    free(r->path);
    free(r);
}

cky_status io_read_file(const char *path, char **data, size_t *len)
{
    gzFile gz = NULL;
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

long io_text_check(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c == 0)
            return (long)i;
        if (c < 0x80) {
            i++;
            continue;
        }
        /* lead byte: sequence length and the smallest code point it may encode */
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
        if (len == 0 || c > 0xF4 || i + len > n)
            return (long)i;
        unsigned long cp = c & (0xFFu >> (len + 1));
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return (long)i;
            cp = cp << 6 | (p[i + k] & 0x3Fu);
        }
        static const unsigned long min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return (long)i;
        i += len;
    }
    return -1;
}
