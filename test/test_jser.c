/* Tests of the Java serialization reader (grammar/jser.c) on small hand-made streams: every
 * element kind, handles, collections, modified UTF-8, and malformed input of every kind
 * (each must give CKY_ERR_FORMAT, never a crash). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../grammar/jser.h"

/* ---- a byte-stream builder ---------------------------------------------------------------- */

typedef struct bytes {
    unsigned char b[8192];
    size_t n;
} bytes;

static void put(bytes *s, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        s->b[s->n++] = (unsigned char)(v >> (8 * i));
}

static void put_raw(bytes *s, const void *p, size_t n)
{
    memcpy(s->b + s->n, p, n);
    s->n += n;
}

static void put_utf(bytes *s, const char *str)
{
    put(s, strlen(str), 2);
    put_raw(s, str, strlen(str));
}

static void put_double(bytes *s, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    put(s, u, 8);
}

static void magic(bytes *s) { put(s, 0xACED0005u, 4); }

/* A new class descriptor with no fields beyond those written by `fields` (count given). */
static void classdesc_start(bytes *s, const char *name, uint64_t suid, int flags, int nfields)
{
    put(s, 0x72, 1);
    put_utf(s, name);
    put(s, suid, 8);
    put(s, (uint64_t)flags, 1);
    put(s, (uint64_t)nfields, 2);
}

static void classdesc_end(bytes *s) /* no annotation, no superclass */
{
    put(s, 0x78, 1);
    put(s, 0x70, 1);
}

static void field(bytes *s, char type, const char *name, const char *cls)
{
    put(s, (uint64_t)(unsigned char)type, 1);
    put_utf(s, name);
    if (cls) {
        put(s, 0x74, 1);
        put_utf(s, cls);
    }
}

static void string(bytes *s, const char *str)
{
    put(s, 0x74, 1);
    put_utf(s, str);
}

static jser_graph *parse_ok(const bytes *s)
{
    jser_graph *g = NULL;
    cky_status st = jser_parse(s->b, s->n, "test", &g);
    cr_assert_eq(st, CKY_OK, "parse failed: %s", cky_last_error());
    return g;
}

static void parse_fails(const bytes *s, const char *needle)
{
    jser_graph *g = NULL;
    cky_status st = jser_parse(s->b, s->n, "test", &g);
    cr_assert_eq(st, CKY_ERR_FORMAT, "expected a format error, got %d", st);
    cr_assert_null(g);
    if (needle)
        cr_assert(strstr(cky_last_error(), needle), "message '%s' lacks '%s'", cky_last_error(),
                  needle);
}

/* An Object[] of {T{x=42, s="hi", a=double[]{1.5,-2}}, reference to that T, null}.
 * Handles: 0 [Ljava.lang.Object; desc, 1 the array, 2 T desc, 3 "Ljava/lang/String;",
 * 4 "[D" type name, 5 the T object, 6 "hi", 7 [D desc, 8 the double array. */
static void object_stream(bytes *s)
{
    magic(s);
    put(s, 0x75, 1);
    classdesc_start(s, "[Ljava.lang.Object;", 1, 0x02, 0);
    classdesc_end(s);
    put(s, 3, 4);
    put(s, 0x73, 1);
    classdesc_start(s, "T", 7, 0x02, 3);
    field(s, 'I', "x", NULL);
    field(s, 'L', "s", "Ljava/lang/String;");
    field(s, '[', "a", "[D");
    classdesc_end(s);
    put(s, 42, 4);
    string(s, "hi");
    put(s, 0x75, 1);
    classdesc_start(s, "[D", 2, 0x02, 0);
    classdesc_end(s);
    put(s, 2, 4);
    put_double(s, 1.5);
    put_double(s, -2.0);
    put(s, 0x71, 1);
    put(s, 0x7E0005, 4);
    put(s, 0x70, 1);
}

Test(jser, string)
{
    bytes s = {.n = 0};
    magic(&s);
    string(&s, "hello");
    jser_graph *g = parse_ok(&s);
    cr_assert_str_eq(jser_string(jser_root(g)), "hello");
    jser_free(g);
}

Test(jser, modified_utf8)
{
    /* "a" U+0000 "b" U+00E9 U+1F600 (as a CESU-8 surrogate pair), then a lone low surrogate */
    static const unsigned char m[] = {'a', 0xC0, 0x80, 'b', 0xC3, 0xA9, 0xED, 0xA0, 0xBD,
                                      0xED, 0xB8, 0x80, 0xED, 0xB0, 0x80};
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x74, 1);
    put(&s, sizeof m, 2);
    put_raw(&s, m, sizeof m);
    jser_graph *g = parse_ok(&s);
    const jser_node *n = jser_root(g);
    static const char want[] = "a\0b\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBD";
    cr_assert_eq(n->u.string.len, sizeof want - 1);
    cr_assert(!memcmp(n->u.string.utf8, want, sizeof want - 1));
    jser_free(g);

    bytes bad = {.n = 0};
    magic(&bad);
    put(&bad, 0x74, 1);
    put(&bad, 2, 2);
    put(&bad, 0xC3, 1);
    put(&bad, 'x', 1); /* not a continuation byte */
    parse_fails(&bad, "UTF-8");
}

Test(jser, objects_arrays_and_references)
{
    bytes s = {.n = 0};
    object_stream(&s);
    jser_graph *g = parse_ok(&s);
    const jser_node *root = jser_root(g), *arr;
    cr_assert_eq(jser_get_array(root, 'L', "root", &arr), CKY_OK);
    cr_assert_eq(arr->u.array.length, 3);
    const jser_node *const *e = arr->u.array.data;
    cr_assert_str_eq(jser_class_name(e[0]), "T");
    cr_assert_eq(e[1], e[0], "TC_REFERENCE resolves to the same node");
    cr_assert_null(e[2]);
    int64_t x;
    cr_assert_eq(jser_get_int(e[0], "x", &x), CKY_OK);
    cr_assert_eq(x, 42);
    const jser_node *str, *d;
    cr_assert_eq(jser_get_object(e[0], "s", &str), CKY_OK);
    cr_assert_str_eq(jser_string(str), "hi");
    cr_assert_eq(jser_get_object(e[0], "a", &d), CKY_OK);
    cr_assert_eq(jser_get_array(d, 'D', "a", &d), CKY_OK);
    cr_assert_eq(d->u.array.length, 2);
    cr_assert_eq(((const double *)d->u.array.data)[0], 1.5);
    cr_assert_eq(((const double *)d->u.array.data)[1], -2.0);
    /* typed getters refuse fields of the wrong type or missing fields */
    double dv;
    cr_assert_eq(jser_get_double(e[0], "x", &dv), CKY_ERR_FORMAT);
    cr_assert_eq(jser_get_int(e[0], "nope", &x), CKY_ERR_FORMAT);
    cr_assert_eq(jser_get_array(d, 'I', "a", &d), CKY_ERR_FORMAT);
    jser_free(g);
}

Test(jser, superclass_fields_and_enum)
{
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x75, 1);
    classdesc_start(&s, "[Ljava.lang.Object;", 1, 0x02, 0);
    classdesc_end(&s);
    put(&s, 2, 4);
    put(&s, 0x73, 1); /* Sub extends Base: Base's data first */
    classdesc_start(&s, "Sub", 3, 0x02, 1);
    field(&s, 'S', "b", NULL);
    put(&s, 0x78, 1);
    classdesc_start(&s, "Base", 4, 0x02, 1);
    field(&s, 'Z', "a", NULL);
    classdesc_end(&s);
    put(&s, 1, 1);      /* Base.a = true */
    put(&s, 0xFFFE, 2); /* Sub.b = -2 */
    put(&s, 0x7E, 1);   /* enum constant Color.RED */
    classdesc_start(&s, "Color", 0, 0x12, 0);
    put(&s, 0x78, 1);
    classdesc_start(&s, "java.lang.Enum", 0, 0x12, 0);
    classdesc_end(&s);
    string(&s, "RED");
    jser_graph *g = parse_ok(&s);
    const jser_node *const *e = jser_root(g)->u.array.data;
    int64_t v;
    cr_assert(jser_is_instance(e[0], "Base"));
    cr_assert_eq(jser_get_int(e[0], "a", &v), CKY_OK);
    cr_assert_eq(v, 1);
    cr_assert_eq(jser_get_int(e[0], "b", &v), CKY_OK);
    cr_assert_eq(v, -2);
    cr_assert_eq(e[1]->kind, JSER_ENUM);
    cr_assert_str_eq(e[1]->u.enumc.name, "RED");
    cr_assert_str_eq(jser_class_name(e[1]), "Color");
    jser_free(g);
}

/* A HashMap {"a": "x", "b": "x"} (the second value a reference) and an ArrayList ["p", null]. */
static void collections_stream(bytes *s, int map_size, int list_size)
{
    magic(s);
    put(s, 0x75, 1);
    classdesc_start(s, "[Ljava.lang.Object;", 1, 0x02, 0);
    classdesc_end(s); /* handles 0, 1 */
    put(s, 2, 4);
    put(s, 0x73, 1);
    classdesc_start(s, "java.util.HashMap", 362498820763181265u, 0x03, 2); /* handle 2 */
    field(s, 'F', "loadFactor", NULL);
    field(s, 'I', "threshold", NULL);
    classdesc_end(s);
    put(s, 0x3F400000u, 4); /* 0.75f; object = handle 3 */
    put(s, 12, 4);
    put(s, 0x77, 1);
    put(s, 8, 1);
    put(s, 16, 4);
    put(s, (uint64_t)map_size, 4);
    string(s, "a"); /* 4 */
    string(s, "x"); /* 5 */
    string(s, "b"); /* 6 */
    put(s, 0x71, 1);
    put(s, 0x7E0005, 4);
    put(s, 0x78, 1);
    put(s, 0x73, 1);
    classdesc_start(s, "java.util.ArrayList", 8683452581122892189u, 0x03, 1);
    field(s, 'I', "size", NULL);
    classdesc_end(s);
    put(s, (uint64_t)list_size, 4);
    put(s, 0x77, 1);
    put(s, 4, 1);
    put(s, (uint64_t)list_size, 4);
    string(s, "p");
    put(s, 0x70, 1);
    put(s, 0x78, 1);
}

Test(jser, hashmap_and_arraylist)
{
    bytes s = {.n = 0};
    collections_stream(&s, 2, 2);
    jser_graph *g = parse_ok(&s);
    const jser_node *const *e = jser_root(g)->u.array.data;
    const jser_node *const *kv, *const *items;
    size_t n;
    cr_assert_eq(jser_get_map(e[0], "map", &kv, &n), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(n, 2);
    cr_assert_str_eq(jser_string(kv[0]), "a");
    cr_assert_str_eq(jser_string(kv[1]), "x");
    cr_assert_str_eq(jser_string(kv[2]), "b");
    cr_assert_eq(kv[3], kv[1]);
    double lf;
    cr_assert_eq(jser_get_double(e[0], "loadFactor", &lf), CKY_OK);
    cr_assert_eq(lf, 0.75);
    cr_assert_eq(jser_get_list(e[1], "list", &items, &n), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(n, 2);
    cr_assert_str_eq(jser_string(items[0]), "p");
    cr_assert_null(items[1]);
    /* a map is not a list and the other way round */
    cr_assert_eq(jser_get_list(e[0], "map", &items, &n), CKY_ERR_FORMAT);
    cr_assert_eq(jser_get_map(e[1], "list", &kv, &n), CKY_ERR_FORMAT);
    jser_free(g);
}

Test(jser, collection_sizes_must_match)
{
    bytes s = {.n = 0};
    collections_stream(&s, 3, 5);
    jser_graph *g = parse_ok(&s);
    const jser_node *const *e = jser_root(g)->u.array.data;
    const jser_node *const *items;
    size_t n;
    cr_assert_eq(jser_get_map(e[0], "map", &items, &n), CKY_ERR_FORMAT);
    cr_assert_eq(jser_get_list(e[1], "list", &items, &n), CKY_ERR_FORMAT);
    jser_free(g);
}

Test(jser, every_truncation_fails)
{
    bytes s = {.n = 0};
    collections_stream(&s, 2, 2);
    bytes t = {.n = 0};
    object_stream(&t);
    const bytes *streams[] = {&s, &t};
    for (int k = 0; k < 2; k++) {
        for (size_t n = 0; n < streams[k]->n; n++) {
            jser_graph *g = NULL;
            cr_assert_eq(jser_parse(streams[k]->b, n, "test", &g), CKY_ERR_FORMAT,
                         "prefix of %zu bytes", n);
            cr_assert_null(g);
        }
    }
}

Test(jser, bad_magic)
{
    bytes s = {.n = 0};
    put(&s, 0xACED0004u, 4);
    string(&s, "x");
    parse_fails(&s, "magic");
}

Test(jser, unknown_type_code)
{
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x42, 1);
    parse_fails(&s, "unknown type code 0x42");
}

Test(jser, handle_out_of_range)
{
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x71, 1);
    put(&s, 0x7E0099, 4);
    parse_fails(&s, "out of range");
}

Test(jser, absurd_array_length)
{
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x75, 1);
    classdesc_start(&s, "[D", 2, 0x02, 0);
    classdesc_end(&s);
    put(&s, 0x7FFFFFFF, 4);
    put_double(&s, 1.0);
    parse_fails(&s, "does not fit");
    bytes neg = {.n = 0};
    magic(&neg);
    put(&neg, 0x75, 1);
    classdesc_start(&neg, "[Ljava.lang.Object;", 1, 0x02, 0);
    classdesc_end(&neg);
    put(&neg, 0xFFFFFFFF, 4);
    parse_fails(&neg, "length -1");
}

Test(jser, excessive_nesting)
{
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x75, 1);
    classdesc_start(&s, "[Ljava.lang.Object;", 1, 0x02, 0);
    classdesc_end(&s);
    put(&s, 1, 4);
    for (int i = 0; i < 400; i++) { /* arrays inside arrays, 400 deep */
        put(&s, 0x75, 1);
        put(&s, 0x71, 1);
        put(&s, 0x7E0000, 4);
        put(&s, 1, 4);
    }
    put(&s, 0x70, 1);
    parse_fails(&s, "nesting");
}

Test(jser, cyclic_class_hierarchy)
{
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x73, 1);
    classdesc_start(&s, "Loop", 1, 0x02, 0);
    put(&s, 0x78, 1);
    put(&s, 0x71, 1); /* its superclass is itself */
    put(&s, 0x7E0000, 4);
    parse_fails(&s, "cyclic");
}

Test(jser, self_referencing_array_is_a_graph)
{
    bytes s = {.n = 0};
    magic(&s);
    put(&s, 0x75, 1);
    classdesc_start(&s, "[Ljava.lang.Object;", 1, 0x02, 0);
    classdesc_end(&s);
    put(&s, 1, 4);
    put(&s, 0x71, 1);
    put(&s, 0x7E0001, 4); /* the array holds itself */
    jser_graph *g = parse_ok(&s);
    const jser_node *r = jser_root(g);
    cr_assert_eq(((const jser_node *const *)r->u.array.data)[0], r);
    jser_free(g);
}

Test(jser, trailing_bytes)
{
    bytes s = {.n = 0};
    magic(&s);
    string(&s, "x");
    put(&s, 0x70, 1);
    parse_fails(&s, "after the top-level object");
}

/* gzip-compress s into out. */
static size_t gzip_bytes(const bytes *s, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)s->b;
    z.avail_in = (uInt)s->n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

Test(jser, inflate)
{
    bytes s = {.n = 0};
    object_stream(&s);
    unsigned char gz[16384], *out = NULL;
    size_t n = gzip_bytes(&s, gz, sizeof gz), outlen = 0;
    cr_assert_eq(jser_inflate(gz, n, "t.gz", &out, &outlen), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(outlen, s.n);
    cr_assert(!memcmp(out, s.b, s.n));
    free(out);
    cr_assert_eq(jser_inflate(gz, n / 2, "t.gz", &out, &outlen), CKY_ERR_FORMAT);
    cr_assert(strstr(cky_last_error(), "truncated"), "%s", cky_last_error());
    gz[n / 2] ^= 0xFF;
    gz[n / 2 + 1] ^= 0xFF;
    gz[n - 6] ^= 0xFF; /* the CRC, in case the body still decodes */
    cr_assert_eq(jser_inflate(gz, n, "t.gz", &out, &outlen), CKY_ERR_FORMAT);
    cr_assert_eq(jser_inflate(s.b, s.n, "t", &out, &outlen), CKY_ERR_FORMAT, "not gzip");
}

Test(jser, real_grammar_file)
{
    jser_graph *g = NULL;
    cky_status st = jser_read_file(CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr", &g);
    cr_assert_eq(st, CKY_OK, "%s", cky_last_error());
    cr_assert_str_eq(jser_class_name(jser_root(g)), "edu.berkeley.nlp.PCFGLA.ParserData");
    cr_assert_eq(jser_stream_size(g), 991364);
    jser_free(g);
    cr_assert_eq(jser_read_file(CKY_SHARED "/grammars/sample-sm1/sample-sm1.splits", &g),
                 CKY_ERR_FORMAT);
    cr_assert_eq(jser_read_file("/nonexistent/x.gr", &g), CKY_ERR_IO);
}
