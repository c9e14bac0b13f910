/* jser: a generic reader of Java Object Serialization streams (the payload of Berkeley .gr
 * files), internal to the grammar module.
 *
 * jser_parse() turns a stream into a small read-only object graph: class descriptors with
 * their fields as the descriptor lists them (nothing is hard-coded per class), objects with
 * one value per field of every class in the hierarchy plus the annotation contents of
 * classes with a custom writeObject, primitive arrays decoded into typed host-order buffers,
 * object arrays, strings (modified UTF-8 decoded to UTF-8) and enum constants. References
 * (TC_REFERENCE) are resolved to the shared node, so the graph may contain cycles; callers
 * walk it along known field paths and check the kind of every node they reach.
 *
 * Malformed input (truncation, wrong magic, unknown type codes, handles out of range, array
 * lengths beyond the remaining bytes, nesting deeper than JSER_MAX_DEPTH) gives CKY_ERR_FORMAT
 * with the byte offset in the decompressed stream; no input makes the reader crash, hang or
 * allocate much more than a small multiple of the input size. */
#ifndef CKY_GRAMMAR_JSER_H
#define CKY_GRAMMAR_JSER_H

#include <stddef.h>
#include <stdint.h>

#include "../util/status.h"

#define JSER_MAX_DEPTH 256                  /* nesting of objects within objects */
#define JSER_MAX_INFLATED ((size_t)1 << 31) /* refuse gzip payloads larger than 2 GiB */

typedef enum jser_kind {
    JSER_CLASSDESC, /* a class descriptor (also the class of arrays and enums) */
    JSER_OBJECT,
    JSER_ARRAY,
    JSER_STRING,
    JSER_ENUM,
    JSER_BLOCKDATA /* raw bytes inside an annotation (custom writeObject data) */
} jser_kind;

typedef struct jser_node jser_node;

/* A field of a class descriptor: type code B C D F I J S Z (primitive), L (object), [ (array). */
typedef struct jser_field {
    char type;
    const char *name;
    const char *class_name; /* JVM type string of L and [ fields ("Ljava/util/Map;"), else NULL */
} jser_field;

/* A field value: integers (B C I J S Z) in i, floating point (D F) in d, objects in obj
 * (NULL for Java null). */
typedef struct jser_value {
    int64_t i;
    double d;
    const jser_node *obj;
} jser_value;

/* The data of one class of an object's hierarchy. */
typedef struct jser_classdata {
    const jser_node *desc;        /* the class descriptor this part belongs to */
    jser_value *values;           /* one per desc->fields entry */
    const jser_node **annotation; /* contents written by writeObject (objects, NULL, blockdata) */
    size_t nannotation;
} jser_classdata;

struct jser_node {
    jser_kind kind;
    union {
        struct { /* JSER_CLASSDESC */
            const char *name;
            int64_t suid;
            unsigned char flags;
            int nfields;
            jser_field *fields;
            const jser_node *super; /* NULL at the top */
        } desc;
        struct {                   /* JSER_OBJECT */
            const jser_node *desc; /* its class */
            int nclass;            /* parts, topmost superclass first */
            jser_classdata *classdata;
        } object;
        struct { /* JSER_ARRAY */
            const jser_node *desc;
            char elem;     /* element type code: B C D F I J S Z primitive, L or [ objects */
            size_t length; /* number of elements */
            void *data;    /* B int8_t, C uint16_t, D double, F float, I int32_t, J int64_t,
                              S int16_t, Z unsigned char; L and [ const jser_node * */
        } array;
        struct { /* JSER_STRING: UTF-8, NUL-terminated (U+0000 is kept as a NUL byte) */
            const char *utf8;
            size_t len;
        } string;
        struct { /* JSER_ENUM */
            const jser_node *desc;
            const char *name; /* the constant's name */
        } enumc;
        struct { /* JSER_BLOCKDATA */
            const unsigned char *bytes;
            size_t len;
        } block;
    } u;
};

typedef struct jser_graph jser_graph;

/* Inflate a gzip member (`source` names it in messages) into a malloc'ed buffer. Refuses
 * payloads over JSER_MAX_INFLATED bytes. Bad or truncated gzip data -> CKY_ERR_FORMAT. */
cky_status jser_inflate(const unsigned char *gz, size_t len, const char *source,
                        unsigned char **out, size_t *outlen);

/* Parse a serialization stream holding one top-level object. The graph keeps no pointer into
 * `data`. Errors are CKY_ERR_FORMAT (or CKY_ERR_NOMEM) naming `source` and the byte offset. */
cky_status jser_parse(const unsigned char *data, size_t len, const char *source,
                      jser_graph **out);

/* Read a gzipped stream from a file: io_read_raw + jser_inflate + jser_parse. */
cky_status jser_read_file(const char *path, jser_graph **out);

/* The top-level object (never NULL in a parsed graph, but it may be of any kind). */
const jser_node *jser_root(const jser_graph *g);

/* The source name the graph was parsed from (for callers' messages). */
const char *jser_source(const jser_graph *g);

/* The length in bytes of the stream the graph was parsed from. */
size_t jser_stream_size(const jser_graph *g);

void jser_free(jser_graph *g);

/* The class name of an object, array or enum ("[D", "java.util.HashMap"), else "". */
const char *jser_class_name(const jser_node *n);

/* 1 if `n` is an object whose class or a superclass is named `class_name`. */
int jser_is_instance(const jser_node *n, const char *class_name);

/* The field `name` of object `obj`, searching its own class first, then its superclasses;
 * NULL if `obj` is not an object or has no such field. *type gets the type code. */
const jser_value *jser_field_value(const jser_node *obj, const char *name, char *type);

/* Typed field getters: CKY_ERR_FORMAT naming the field if it is missing or of another type.
 * jser_get_int takes B C I J S Z fields, jser_get_double D and F fields, jser_get_object
 * L and [ fields (*out may be NULL for Java null). */
cky_status jser_get_int(const jser_node *obj, const char *name, int64_t *out);
cky_status jser_get_double(const jser_node *obj, const char *name, double *out);
cky_status jser_get_object(const jser_node *obj, const char *name, const jser_node **out);

/* An array of element type `elem` (see jser_node.array), or CKY_ERR_FORMAT naming `what`
 * if `n` is not one. A NULL `n` (Java null) is an error too. */
cky_status jser_get_array(const jser_node *n, char elem, const char *what,
                          const jser_node **out);

/* The UTF-8 text of a string node, or NULL if `n` is not a string. */
const char *jser_string(const jser_node *n);

/* The elements of a java.util.ArrayList, java.util.HashSet or Collections$EmptyList: *items
 * points into the graph (elements may be NULL). CKY_ERR_FORMAT if `n` is none of these or
 * its data disagree with its size. */
cky_status jser_get_list(const jser_node *n, const char *what, const jser_node *const **items,
                         size_t *count);

/* The entries of a java.util.HashMap as 2 * *count nodes: key 0, value 0, key 1, ... */
cky_status jser_get_map(const jser_node *n, const char *what, const jser_node *const **kv,
                        size_t *count);

#endif
