/* jser: gzip inflation and a descriptor-driven Java Object Serialization reader (see jser.h
 * and docs/berkeley-grammar-spec.md §1.12). Everything the graph holds lives in one arena. */
#include "jser.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../util/io.h"

enum {
    TC_NULL = 0x70,
    TC_REFERENCE = 0x71,
    TC_CLASSDESC = 0x72,
    TC_OBJECT = 0x73,
    TC_STRING = 0x74,
    TC_ARRAY = 0x75,
    TC_CLASS = 0x76,
    TC_BLOCKDATA = 0x77,
    TC_ENDBLOCKDATA = 0x78,
    TC_RESET = 0x79,
    TC_BLOCKDATALONG = 0x7A,
    TC_EXCEPTION = 0x7B,
    TC_LONGSTRING = 0x7C,
    TC_PROXYCLASSDESC = 0x7D,
    TC_ENUM = 0x7E,
};

enum { SC_WRITE_METHOD = 0x01, SC_SERIALIZABLE = 0x02, SC_EXTERNALIZABLE = 0x04,
       SC_BLOCK_DATA = 0x08 };

#define JSER_BASE_HANDLE 0x7E0000
#define JSER_MAX_HIERARCHY 16 /* classes in one object's hierarchy (3 in Berkeley files) */
#define ARENA_CHUNK ((size_t)1 << 20)

/* ---- arena ------------------------------------------------------------------------------ */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, size;
    max_align_t data[];
} arena_block;

struct jser_graph {
    arena_block *blocks;
    const jser_node *root;
    char *source;
    size_t size;
};

/* Zeroed, aligned memory owned by the graph; NULL when out of memory. */
static void *arena_alloc(jser_graph *g, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    arena_block *b = g->blocks;
    if (!b || b->size - b->used < n) {
        size_t size = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->size = size;
        b->used = 0;
        if (size == n && g->blocks) { /* a big one-off: keep filling the current chunk */
            b->next = g->blocks->next;
            g->blocks->next = b;
        } else {
            b->next = g->blocks;
            g->blocks = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

void jser_free(jser_graph *g)
{
    if (!g)
        return;
    for (arena_block *b = g->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(g->source);
    free(g);
}

const jser_node *jser_root(const jser_graph *g) { return g->root; }

const char *jser_source(const jser_graph *g) { return g->source; }

size_t jser_stream_size(const jser_graph *g) { return g->size; }

/* ---- gzip ------------------------------------------------------------------------------- */

cky_status jser_inflate(const unsigned char *gz, size_t len, const char *source,
                        unsigned char **out, size_t *outlen)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return cky_fail(CKY_ERR_NOMEM, "%s: cannot initialise zlib", source);
    size_t cap = len < ((size_t)1 << 20) ? ((size_t)1 << 20) : len * 4, n = 0;
    if (cap > JSER_MAX_INFLATED)
        cap = JSER_MAX_INFLATED;
    unsigned char *buf = malloc(cap);
    cky_status st = CKY_OK;
    size_t in_pos = 0;
    int rc = Z_OK;
    while (buf && rc != Z_STREAM_END) {
        if (n == cap) {
            if (cap >= JSER_MAX_INFLATED) {
                st = cky_fail(CKY_ERR_FORMAT, "%s: decompressed data larger than %zu bytes",
                              source, (size_t)JSER_MAX_INFLATED);
                break;
            }
            size_t ncap = cap * 2 > JSER_MAX_INFLATED ? JSER_MAX_INFLATED : cap * 2;
            unsigned char *b = realloc(buf, ncap);
            if (!b)
                break;
            buf = b;
            cap = ncap;
        }
        size_t in_chunk = len - in_pos > (1u << 30) ? (1u << 30) : len - in_pos;
        size_t out_chunk = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        zs.next_in = (unsigned char *)gz + in_pos;
        zs.avail_in = (uInt)in_chunk;
        zs.next_out = buf + n;
        zs.avail_out = (uInt)out_chunk;
        rc = inflate(&zs, Z_NO_FLUSH);
        in_pos += in_chunk - zs.avail_in;
        n += out_chunk - zs.avail_out;
        if (rc == Z_BUF_ERROR && in_pos == len && zs.avail_out > 0) {
            st = cky_fail(CKY_ERR_FORMAT, "%s: truncated gzip data (%zu compressed bytes)",
                          source, len);
            break;
        }
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            st = cky_fail(CKY_ERR_FORMAT, "%s: bad gzip data at compressed byte %zu: %s",
                          source, in_pos, zs.msg ? zs.msg : "inflate failed");
            break;
        }
    }
    inflateEnd(&zs);
    if (!buf || (!st && rc != Z_STREAM_END)) {
        free(buf);
        return st ? st : cky_fail(CKY_ERR_NOMEM, "%s: out of memory while decompressing", source);
    }
    if (st) {
        free(buf);
        return st;
    }
    *out = buf;
    *outlen = n;
    return CKY_OK;
}

/* ---- stream reader ---------------------------------------------------------------------- */

typedef struct reader {
    const unsigned char *p;
    size_t len, pos;
    jser_graph *g;
    const jser_node **handle;
    size_t nhandle, cap_handle;
} reader;

static cky_status fail_at(const reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static cky_status fail_at(const reader *r, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cky_fail(CKY_ERR_FORMAT, "%s: byte %zu of the serialized stream: %s", r->g->source,
                    r->pos, msg);
}

static cky_status nomem(const reader *r)
{
    return cky_fail(CKY_ERR_NOMEM, "%s: out of memory reading the serialized stream",
                    r->g->source);
}

static cky_status need(const reader *r, size_t n)
{
    if (r->len - r->pos < n)
        return fail_at(r, "truncated stream (%zu more bytes needed, %zu left)", n,
                       r->len - r->pos);
    return CKY_OK;
}

/* Big-endian unsigned integer of n <= 8 bytes at the cursor (caller checked need()). */
static uint64_t take_be(reader *r, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | r->p[r->pos++];
    return v;
}

#define READ_BE(r, n, dst)                                                                     \
    do {                                                                                       \
        cky_status st_ = need(r, n);                                                           \
        if (st_)                                                                               \
            return st_;                                                                        \
        dst = take_be(r, n);                                                                   \
    } while (0)

static cky_status new_handle(reader *r, const jser_node *n)
{
    if (r->nhandle == r->cap_handle) {
        size_t cap = r->cap_handle ? 2 * r->cap_handle : 1024;
        const jser_node **h = realloc(r->handle, cap * sizeof *h);
        if (!h)
            return nomem(r);
        r->handle = h;
        r->cap_handle = cap;
    }
    r->handle[r->nhandle++] = n;
    return CKY_OK;
}

static cky_status read_reference(reader *r, const jser_node **out)
{
    uint64_t h;
    READ_BE(r, 4, h);
    if (h < JSER_BASE_HANDLE || h - JSER_BASE_HANDLE >= r->nhandle)
        return fail_at(r, "reference to handle 0x%llx out of range (%zu handles assigned)",
                       (unsigned long long)h, r->nhandle);
    *out = r->handle[h - JSER_BASE_HANDLE];
    return CKY_OK;
}

/* Append the UTF-8 encoding of code point c to s. */
static size_t utf8_put(char *s, uint32_t c)
{
    if (c < 0x80) {
        s[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        s[0] = (char)(0xC0 | c >> 6);
        s[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        s[0] = (char)(0xE0 | c >> 12);
        s[1] = (char)(0x80 | (c >> 6 & 0x3F));
        s[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    s[0] = (char)(0xF0 | c >> 18);
    s[1] = (char)(0x80 | (c >> 12 & 0x3F));
    s[2] = (char)(0x80 | (c >> 6 & 0x3F));
    s[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Decode n bytes of modified UTF-8 (Java's DataInput.readUTF) at the cursor into UTF-8:
 * surrogate pairs become 4-byte sequences, lone surrogates U+FFFD. */
static cky_status read_mutf8(reader *r, size_t n, const char **out, size_t *outlen)
{
    cky_status st = need(r, n);
    if (st)
        return st;
    char *s = arena_alloc(r->g, n + 1); /* UTF-8 is never longer than modified UTF-8 */
    if (!s)
        return nomem(r);
    const unsigned char *b = r->p + r->pos;
    size_t i = 0, k = 0;
    uint32_t pending = 0; /* a high surrogate waiting for its low half */
    while (i < n) {
        uint32_t c;
        if (b[i] < 0x80 && b[i] != 0) {
            c = b[i++];
        } else if ((b[i] & 0xE0) == 0xC0 && i + 1 < n && (b[i + 1] & 0xC0) == 0x80) {
            c = (uint32_t)(b[i] & 0x1F) << 6 | (b[i + 1] & 0x3F);
            i += 2;
        } else if ((b[i] & 0xF0) == 0xE0 && i + 2 < n && (b[i + 1] & 0xC0) == 0x80 &&
                   (b[i + 2] & 0xC0) == 0x80) {
            c = (uint32_t)(b[i] & 0x0F) << 12 | (uint32_t)(b[i + 1] & 0x3F) << 6 |
                (b[i + 2] & 0x3F);
            i += 3;
        } else {
            r->pos += i;
            return fail_at(r, "malformed modified UTF-8 in a string");
        }
        if (pending && c >= 0xDC00 && c <= 0xDFFF) {
            k += utf8_put(s + k, 0x10000 + ((pending - 0xD800) << 10) + (c - 0xDC00));
            pending = 0;
            continue;
        }
        if (pending)
            k += utf8_put(s + k, 0xFFFD);
        pending = 0;
        if (c >= 0xD800 && c <= 0xDBFF)
            pending = c;
        else
            k += utf8_put(s + k, c >= 0xDC00 && c <= 0xDFFF ? 0xFFFD : c);
    }
    if (pending)
        k += utf8_put(s + k, 0xFFFD);
    s[k] = '\0';
    r->pos += n;
    *out = s;
    *outlen = k;
    return CKY_OK;
}

static cky_status read_utf(reader *r, const char **out)
{
    uint64_t n;
    size_t len;
    READ_BE(r, 2, n);
    return read_mutf8(r, (size_t)n, out, &len);
}

static cky_status read_content(reader *r, int depth, const jser_node **out);
static cky_status read_classdesc(reader *r, int depth, const jser_node **out);

/* A string body after its type code (TC_STRING: 2-byte length, TC_LONGSTRING: 8-byte). */
static cky_status read_string(reader *r, int long_form, const jser_node **out)
{
    uint64_t n;
    if (long_form)
        READ_BE(r, 8, n);
    else
        READ_BE(r, 2, n);
    if (n > r->len - r->pos)
        return fail_at(r, "string of %llu bytes beyond the end of the stream",
                       (unsigned long long)n);
    jser_node *s = arena_alloc(r->g, sizeof *s);
    if (!s)
        return nomem(r);
    s->kind = JSER_STRING;
    cky_status st = new_handle(r, s);
    if (!st)
        st = read_mutf8(r, (size_t)n, &s->u.string.utf8, &s->u.string.len);
    *out = s;
    return st;
}

/* A content item that must be a string (field type names, enum constant names). */
static cky_status read_string_item(reader *r, int depth, const char *what, const char **out)
{
    const jser_node *n;
    cky_status st = read_content(r, depth, &n);
    if (st)
        return st;
    if (!n || n->kind != JSER_STRING)
        return fail_at(r, "%s is not a string", what);
    *out = n->u.string.utf8;
    return CKY_OK;
}

/* Contents up to and including TC_ENDBLOCKDATA (class and object annotations). */
static cky_status read_annotation(reader *r, int depth, const jser_node ***items, size_t *count)
{
    const jser_node **v = NULL;
    size_t n = 0, cap = 0;
    cky_status st = CKY_OK;
    for (;;) {
        if ((st = need(r, 1)))
            break;
        unsigned char tc = r->p[r->pos];
        if (tc == TC_ENDBLOCKDATA) {
            r->pos++;
            break;
        }
        const jser_node *item = NULL;
        if (tc == TC_BLOCKDATA || tc == TC_BLOCKDATALONG) {
            uint64_t blen;
            r->pos++;
            if ((st = need(r, tc == TC_BLOCKDATA ? 1 : 4)))
                break;
            blen = take_be(r, tc == TC_BLOCKDATA ? 1 : 4);
            if (blen > r->len - r->pos) {
                st = fail_at(r, "block data of %llu bytes beyond the end of the stream",
                             (unsigned long long)blen);
                break;
            }
            jser_node *b = arena_alloc(r->g, sizeof *b);
            if (!b) {
                st = nomem(r);
                break;
            }
            b->kind = JSER_BLOCKDATA;
            b->u.block.len = (size_t)blen;
            unsigned char *copy = arena_alloc(r->g, blen ? (size_t)blen : 1);
            if (!copy) {
                st = nomem(r);
                break;
            }
            memcpy(copy, r->p + r->pos, (size_t)blen);
            b->u.block.bytes = copy;
            r->pos += (size_t)blen;
            item = b;
        } else if ((st = read_content(r, depth, &item))) {
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            const jser_node **nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                st = nomem(r);
                break;
            }
            v = nv;
        }
        v[n++] = item;
    }
    if (!st && n) {
        const jser_node **keep = arena_alloc(r->g, n * sizeof *keep);
        if (!keep)
            st = nomem(r);
        else
            memcpy(keep, v, n * sizeof *keep);
        *items = keep;
    } else {
        *items = NULL;
    }
    free(v);
    *count = n;
    return st;
}

static int is_field_type(int t)
{
    return t && strchr("BCDFIJSZL[", t) != NULL;
}

/* A class descriptor where one is expected: TC_CLASSDESC, TC_REFERENCE to one, or TC_NULL. */
static cky_status read_classdesc(reader *r, int depth, const jser_node **out)
{
    uint64_t tc;
    READ_BE(r, 1, tc);
    if (tc == TC_NULL) {
        *out = NULL;
        return CKY_OK;
    }
    if (tc == TC_REFERENCE) {
        cky_status st = read_reference(r, out);
        if (!st && (!*out || (*out)->kind != JSER_CLASSDESC))
            return fail_at(r, "reference to a non-class where a class descriptor is expected");
        return st;
    }
    if (tc == TC_PROXYCLASSDESC)
        return fail_at(r, "proxy class descriptors are not supported");
    if (tc != TC_CLASSDESC) {
        r->pos--;
        return fail_at(r, "type code 0x%02x where a class descriptor is expected", (int)tc);
    }
    if (depth > JSER_MAX_DEPTH)
        return fail_at(r, "nesting deeper than %d", JSER_MAX_DEPTH);
    jser_node *d = arena_alloc(r->g, sizeof *d);
    if (!d)
        return nomem(r);
    d->kind = JSER_CLASSDESC;
    cky_status st = read_utf(r, &d->u.desc.name);
    if (st)
        return st;
    uint64_t v;
    READ_BE(r, 8, v);
    d->u.desc.suid = (int64_t)v;
    if ((st = new_handle(r, d)))
        return st;
    READ_BE(r, 1, v);
    d->u.desc.flags = (unsigned char)v;
    READ_BE(r, 2, v);
    if (v > (r->len - r->pos) / 3)
        return fail_at(r, "class %s declares %llu fields, more than the stream can hold",
                       d->u.desc.name, (unsigned long long)v);
    d->u.desc.nfields = (int)v;
    d->u.desc.fields = arena_alloc(r->g, (v ? v : 1) * sizeof(jser_field));
    if (!d->u.desc.fields)
        return nomem(r);
    for (int i = 0; i < d->u.desc.nfields; i++) {
        jser_field *f = &d->u.desc.fields[i];
        READ_BE(r, 1, v);
        f->type = (char)v;
        if (!is_field_type(f->type)) {
            r->pos--;
            return fail_at(r, "class %s: unknown field type code 0x%02x", d->u.desc.name,
                           (int)v);
        }
        if ((st = read_utf(r, &f->name)))
            return st;
        if ((f->type == 'L' || f->type == '[') &&
            (st = read_string_item(r, depth + 1, "a field's type name", &f->class_name)))
            return st;
    }
    const jser_node **ann;
    size_t nann;
    if ((st = read_annotation(r, depth + 1, &ann, &nann)) ||
        (st = read_classdesc(r, depth + 1, &d->u.desc.super)))
        return st;
    /* The super chain was acyclic before this link, so a cycle would pass through d. */
    int levels = 1;
    for (const jser_node *s = d->u.desc.super; s; s = s->u.desc.super, levels++)
        if (s == d || levels >= JSER_MAX_HIERARCHY)
            return fail_at(r, "class %s: cyclic or too deep class hierarchy", d->u.desc.name);
    *out = d;
    return CKY_OK;
}

static cky_status read_value(reader *r, int depth, char type, jser_value *v)
{
    static const char *const codes = "BCDFIJSZ";
    static const int size[] = {1, 2, 8, 4, 4, 8, 2, 1};
    if (type == 'L' || type == '[')
        return read_content(r, depth, &v->obj);
    int k = (int)(strchr(codes, type) - codes);
    uint64_t x;
    READ_BE(r, size[k], x);
    switch (type) {
    case 'B': v->i = (int8_t)x; break;
    case 'C': v->i = (uint16_t)x; break;
    case 'S': v->i = (int16_t)x; break;
    case 'I': v->i = (int32_t)x; break;
    case 'J': v->i = (int64_t)x; break;
    case 'Z': v->i = x != 0; break;
    case 'D': memcpy(&v->d, &x, 8); break;
    case 'F': {
        uint32_t y = (uint32_t)x;
        float f;
        memcpy(&f, &y, 4);
        v->d = f;
        break;
    }
    }
    return CKY_OK;
}

static cky_status read_object(reader *r, int depth, const jser_node **out)
{
    jser_node *o = arena_alloc(r->g, sizeof *o);
    if (!o)
        return nomem(r);
    o->kind = JSER_OBJECT;
    cky_status st = read_classdesc(r, depth, &o->u.object.desc);
    if (st)
        return st;
    if (!o->u.object.desc)
        return fail_at(r, "object with a null class descriptor");
    if ((st = new_handle(r, o)))
        return st;
    const jser_node *chain[JSER_MAX_HIERARCHY];
    int n = 0;
    for (const jser_node *d = o->u.object.desc; d && n < JSER_MAX_HIERARCHY; d = d->u.desc.super)
        chain[n++] = d;
    o->u.object.nclass = n;
    o->u.object.classdata = arena_alloc(r->g, (size_t)n * sizeof(jser_classdata));
    if (!o->u.object.classdata)
        return nomem(r);
    *out = o;
    for (int k = 0; k < n; k++) { /* topmost superclass first */
        const jser_node *d = chain[n - 1 - k];
        jser_classdata *cd = &o->u.object.classdata[k];
        cd->desc = d;
        unsigned char flags = d->u.desc.flags;
        if (flags & SC_EXTERNALIZABLE) {
            if (!(flags & SC_BLOCK_DATA))
                return fail_at(r, "class %s: old-protocol externalizable data", d->u.desc.name);
            if ((st = read_annotation(r, depth + 1, &cd->annotation, &cd->nannotation)))
                return st;
            continue;
        }
        if (!(flags & SC_SERIALIZABLE))
            continue;
        int nf = d->u.desc.nfields;
        cd->values = arena_alloc(r->g, (size_t)(nf ? nf : 1) * sizeof(jser_value));
        if (!cd->values)
            return nomem(r);
        for (int i = 0; i < nf; i++)
            if ((st = read_value(r, depth + 1, d->u.desc.fields[i].type, &cd->values[i])))
                return st;
        if ((flags & SC_WRITE_METHOD) &&
            (st = read_annotation(r, depth + 1, &cd->annotation, &cd->nannotation)))
            return st;
    }
    return CKY_OK;
}

static size_t prim_size(char elem)
{
    switch (elem) {
    case 'B': case 'Z': return 1;
    case 'C': case 'S': return 2;
    case 'F': case 'I': return 4;
    case 'D': case 'J': return 8;
    }
    return 0;
}

static cky_status read_array(reader *r, int depth, const jser_node **out)
{
    jser_node *a = arena_alloc(r->g, sizeof *a);
    if (!a)
        return nomem(r);
    a->kind = JSER_ARRAY;
    cky_status st = read_classdesc(r, depth, &a->u.array.desc);
    if (st)
        return st;
    const jser_node *d = a->u.array.desc;
    if (!d || d->u.desc.name[0] != '[' || !is_field_type(d->u.desc.name[1]))
        return fail_at(r, "array with class %s", d ? d->u.desc.name : "null");
    a->u.array.elem = d->u.desc.name[1];
    if ((st = new_handle(r, a)))
        return st;
    uint64_t v;
    READ_BE(r, 4, v);
    int32_t length = (int32_t)v;
    size_t esize = prim_size(a->u.array.elem);
    size_t left = r->len - r->pos;
    if (length < 0 || (size_t)length > left / (esize ? esize : 1))
        return fail_at(r, "array %s of length %d does not fit in the %zu bytes left",
                       d->u.desc.name, length, left);
    a->u.array.length = (size_t)length;
    *out = a;
    size_t n = (size_t)length;
    if (esize == 0) { /* object elements: at least one byte each */
        const jser_node **e = arena_alloc(r->g, (n ? n : 1) * sizeof *e);
        if (!e)
            return nomem(r);
        a->u.array.data = (void *)e;
        for (size_t i = 0; i < n; i++)
            if ((st = read_content(r, depth + 1, &e[i])))
                return st;
        return CKY_OK;
    }
    unsigned char *data = arena_alloc(r->g, n ? n * esize : 1);
    if (!data)
        return nomem(r);
    a->u.array.data = data;
    const unsigned char *src = r->p + r->pos;
    for (size_t i = 0; i < n; i++, src += esize) {
        uint64_t x = 0;
        for (size_t b = 0; b < esize; b++)
            x = x << 8 | src[b];
        switch (esize) {
        case 1: data[i] = a->u.array.elem == 'Z' ? x != 0 : (unsigned char)x; break;
        case 2: ((uint16_t *)data)[i] = (uint16_t)x; break;
        case 4: ((uint32_t *)data)[i] = (uint32_t)x; break;
        case 8: ((uint64_t *)data)[i] = x; break;
        }
    }
    r->pos += n * esize;
    return CKY_OK;
}

static cky_status read_enum(reader *r, int depth, const jser_node **out)
{
    jser_node *e = arena_alloc(r->g, sizeof *e);
    if (!e)
        return nomem(r);
    e->kind = JSER_ENUM;
    cky_status st = read_classdesc(r, depth, &e->u.enumc.desc);
    if (st)
        return st;
    if (!e->u.enumc.desc)
        return fail_at(r, "enum constant with a null class descriptor");
    if ((st = new_handle(r, e)))
        return st;
    *out = e;
    return read_string_item(r, depth + 1, "an enum constant's name", &e->u.enumc.name);
}

/* One `content` item of the grammar in spec §1.12.1 (blockdata excluded). */
static cky_status read_content(reader *r, int depth, const jser_node **out)
{
    *out = NULL;
    if (depth > JSER_MAX_DEPTH)
        return fail_at(r, "nesting deeper than %d", JSER_MAX_DEPTH);
    uint64_t tc;
    READ_BE(r, 1, tc);
    switch (tc) {
    case TC_NULL:
        return CKY_OK;
    case TC_REFERENCE:
        return read_reference(r, out);
    case TC_OBJECT:
        return read_object(r, depth, out);
    case TC_ARRAY:
        return read_array(r, depth, out);
    case TC_STRING:
    case TC_LONGSTRING:
        return read_string(r, tc == TC_LONGSTRING, out);
    case TC_ENUM:
        return read_enum(r, depth, out);
    case TC_CLASSDESC:
    case TC_PROXYCLASSDESC:
        r->pos--;
        return read_classdesc(r, depth, out);
    case TC_CLASS: {
        const jser_node *d = NULL;
        cky_status st = read_classdesc(r, depth, &d);
        if (!st && !d)
            return fail_at(r, "class object with a null descriptor");
        if (!st)
            st = new_handle(r, d);
        *out = d;
        return st;
    }
    }
    r->pos--;
    if (tc == TC_RESET || tc == TC_EXCEPTION || tc == TC_BLOCKDATA || tc == TC_BLOCKDATALONG ||
        tc == TC_ENDBLOCKDATA)
        return fail_at(r, "type code 0x%02x not allowed here", (int)tc);
    return fail_at(r, "unknown type code 0x%02x", (int)tc);
}

cky_status jser_parse(const unsigned char *data, size_t len, const char *source,
                      jser_graph **out)
{
    jser_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->source = strdup(source))) {
        free(g);
        return cky_fail(CKY_ERR_NOMEM, "%s: out of memory", source);
    }
    g->size = len;
    reader r = {data, len, 0, g, NULL, 0, 0};
    cky_status st = CKY_OK;
    uint64_t magic = 0;
    if (len < 4 || (magic = take_be(&r, 4)) != 0xACED0005u) {
        r.pos = 0;
        st = fail_at(&r, "not a Java serialization stream (magic %08llx, expected aced0005)",
                     (unsigned long long)magic);
    }
    if (!st)
        st = read_content(&r, 0, &g->root);
    if (!st && !g->root)
        st = fail_at(&r, "the top-level object is null");
    if (!st && r.pos != len)
        st = fail_at(&r, "%zu unexpected bytes after the top-level object", len - r.pos);
    free(r.handle);
    if (st) {
        jser_free(g);
        return st;
    }
    *out = g;
    return CKY_OK;
}

cky_status jser_read_file(const char *path, jser_graph **out)
{
    unsigned char *raw = NULL, *data = NULL;
    size_t nraw, n;
    cky_status st = io_read_raw(path, &raw, &nraw);
    if (!st)
        st = jser_inflate(raw, nraw, path, &data, &n);
    free(raw);
    if (!st)
        st = jser_parse(data, n, path, out);
    free(data);
    return st;
}

/* ---- accessors ---------------------------------------------------------------------------- */

const char *jser_class_name(const jser_node *n)
{
    if (!n)
        return "";
    switch (n->kind) {
    case JSER_OBJECT: return n->u.object.desc->u.desc.name;
    case JSER_ARRAY: return n->u.array.desc->u.desc.name;
    case JSER_ENUM: return n->u.enumc.desc->u.desc.name;
    default: return "";
    }
}

int jser_is_instance(const jser_node *n, const char *class_name)
{
    if (!n || n->kind != JSER_OBJECT)
        return 0;
    for (int k = 0; k < n->u.object.nclass; k++)
        if (!strcmp(n->u.object.classdata[k].desc->u.desc.name, class_name))
            return 1;
    return 0;
}

const jser_value *jser_field_value(const jser_node *obj, const char *name, char *type)
{
    if (!obj || obj->kind != JSER_OBJECT)
        return NULL;
    for (int k = obj->u.object.nclass - 1; k >= 0; k--) {
        const jser_classdata *cd = &obj->u.object.classdata[k];
        if (!cd->values)
            continue;
        for (int i = 0; i < cd->desc->u.desc.nfields; i++) {
            if (!strcmp(cd->desc->u.desc.fields[i].name, name)) {
                *type = cd->desc->u.desc.fields[i].type;
                return &cd->values[i];
            }
        }
    }
    return NULL;
}

/* The field `name` if its type code is one of `types`, else an error naming it. */
static cky_status get_typed(const jser_node *obj, const char *name, const char *types,
                            const jser_value **out)
{
    char type = 0;
    const jser_value *v = jser_field_value(obj, name, &type);
    if (!v)
        return cky_fail(CKY_ERR_FORMAT, "%s has no field %s",
                        obj && obj->kind == JSER_OBJECT ? jser_class_name(obj) : "a non-object",
                        name);
    if (!strchr(types, type))
        return cky_fail(CKY_ERR_FORMAT, "field %s.%s has type %c, expected one of %s",
                        jser_class_name(obj), name, type, types);
    *out = v;
    return CKY_OK;
}

cky_status jser_get_int(const jser_node *obj, const char *name, int64_t *out)
{
    const jser_value *v;
    cky_status st = get_typed(obj, name, "BCIJSZ", &v);
    if (!st)
        *out = v->i;
    return st;
}

cky_status jser_get_double(const jser_node *obj, const char *name, double *out)
{
    const jser_value *v;
    cky_status st = get_typed(obj, name, "DF", &v);
    if (!st)
        *out = v->d;
    return st;
}

cky_status jser_get_object(const jser_node *obj, const char *name, const jser_node **out)
{
    const jser_value *v;
    cky_status st = get_typed(obj, name, "L[", &v);
    if (!st)
        *out = v->obj;
    return st;
}

cky_status jser_get_array(const jser_node *n, char elem, const char *what,
                          const jser_node **out)
{
    if (!n || n->kind != JSER_ARRAY || n->u.array.elem != elem)
        return cky_fail(CKY_ERR_FORMAT, "%s is %s, not an array of type %c", what,
                        !n ? "null" : n->kind == JSER_ARRAY ? jser_class_name(n) : "no array",
                        elem);
    *out = n;
    return CKY_OK;
}

const char *jser_string(const jser_node *n)
{
    return n && n->kind == JSER_STRING ? n->u.string.utf8 : NULL;
}

/* The annotation of the class `class_name` in n's hierarchy: one leading block of
 * `block_len` bytes, then objects only; *items and *count give the objects. */
static cky_status collection_items(const jser_node *n, const char *class_name, size_t block_len,
                                   const char *what, const jser_node *const **items,
                                   size_t *count, const unsigned char **block)
{
    for (int k = 0; k < n->u.object.nclass; k++) {
        const jser_classdata *cd = &n->u.object.classdata[k];
        if (strcmp(cd->desc->u.desc.name, class_name) != 0)
            continue;
        if (cd->nannotation < 1 || !cd->annotation[0] ||
            cd->annotation[0]->kind != JSER_BLOCKDATA ||
            cd->annotation[0]->u.block.len != block_len)
            break;
        for (size_t i = 1; i < cd->nannotation; i++)
            if (cd->annotation[i] && cd->annotation[i]->kind == JSER_BLOCKDATA)
                return cky_fail(CKY_ERR_FORMAT, "%s: block data among the elements", what);
        *items = cd->annotation + 1;
        *count = cd->nannotation - 1;
        *block = cd->annotation[0]->u.block.bytes;
        return CKY_OK;
    }
    return cky_fail(CKY_ERR_FORMAT, "%s: %s without its serialized contents", what, class_name);
}

static int64_t be32(const unsigned char *b)
{
    return (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
}

cky_status jser_get_list(const jser_node *n, const char *what, const jser_node *const **items,
                         size_t *count)
{
    static const jser_node *const none[1] = {NULL};
    const unsigned char *block;
    int64_t size;
    cky_status st;
    if (jser_is_instance(n, "java.util.Collections$EmptyList")) {
        *items = none;
        *count = 0;
        return CKY_OK;
    }
    if (jser_is_instance(n, "java.util.ArrayList")) {
        if ((st = jser_get_int(n, "size", &size)) ||
            (st = collection_items(n, "java.util.ArrayList", 4, what, items, count, &block)))
            return st;
    } else if (jser_is_instance(n, "java.util.HashSet")) {
        if ((st = collection_items(n, "java.util.HashSet", 12, what, items, count, &block)))
            return st;
        size = be32(block + 8);
    } else {
        return cky_fail(CKY_ERR_FORMAT, "%s is %s, not a list or set", what,
                        n ? jser_class_name(n) : "null");
    }
    if (size < 0 || (size_t)size != *count)
        return cky_fail(CKY_ERR_FORMAT, "%s: size %lld but %zu elements", what,
                        (long long)size, *count);
    return CKY_OK;
}

cky_status jser_get_map(const jser_node *n, const char *what, const jser_node *const **kv,
                        size_t *count)
{
    const unsigned char *block;
    size_t nitems;
    if (!jser_is_instance(n, "java.util.HashMap"))
        return cky_fail(CKY_ERR_FORMAT, "%s is %s, not a HashMap", what,
                        n ? jser_class_name(n) : "null");
    cky_status st = collection_items(n, "java.util.HashMap", 8, what, kv, &nitems, &block);
    if (st)
        return st;
    int64_t size = be32(block + 4);
    if (size < 0 || nitems % 2 || (size_t)size != nitems / 2)
        return cky_fail(CKY_ERR_FORMAT, "%s: size %lld but %zu keys and values", what,
                        (long long)size, nitems);
    *count = nitems / 2;
    return CKY_OK;
}
