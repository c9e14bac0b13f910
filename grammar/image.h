/* image: the binary image of a loaded grammar, internal to the grammar module.
 *
 * An image is a header (magic, format, key, payload size, payload checksum) then the
 * grammar's fields and arrays, each array 8-byte aligned, in the order image.c writes them.
 * Reading maps the file and points the large rule tables (binary rows and scores, unary
 * scores) into the mapping; the small parts (names, index arrays, the sum closure, the
 * lexicon) are copied. The payload's checksum is verified and every index is checked against
 * the sizes before anything is used, so a damaged or foreign image is refused (and rebuilt by
 * the caller), never trusted. The cache side (keys, paths, atomic writes): image_cache.c. */
#ifndef CKY_GRAMMAR_IMAGE_H
#define CKY_GRAMMAR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* ---- writing: a growing buffer ---- */

typedef struct img_out {
    unsigned char *p;
    size_t n, cap;
    int failed; /* out of memory at some point: the buffer is incomplete */
} img_out;

/* Append `bytes` bytes (data NULL: zeros), then pad to a multiple of 8. */
void img_put(img_out *w, const void *data, size_t bytes);
void img_put_i64(img_out *w, int64_t v);

/* ---- reading: a bounds-checked cursor ---- */

typedef struct img_in {
    const unsigned char *p;
    size_t n, at;
    int bad; /* a read went past the end, or a check failed */
} img_in;

/* The next `bytes` bytes (8-byte aligned, skipping the padding), or NULL (and in->bad) if
 * they are not there. Zero bytes give a valid non-NULL pointer. */
const void *img_get(img_in *in, size_t bytes);
/* A value in [lo, hi]; anything else marks the image bad and gives lo. */
int64_t img_get_i64(img_in *in, int64_t lo, int64_t hi);
/* A malloc'ed copy of the next `bytes` bytes (at least 1 byte allocated), or NULL (bad or out
 * of memory: *nomem says which). */
void *img_get_copy(img_in *in, size_t bytes, int *nomem);

/* Lexicon kinds in an image (grammar_lexicon.kind). */
enum { IMG_LEXICON_TEXT = 1, IMG_LEXICON_BERKELEY = 2 };

/* Serialize / restore a name_table (restore: a new table, NULL when bad or out of memory). */
void name_table_save(const name_table *t, img_out *w);
name_table *name_table_restore(img_in *in, int *nomem);

/* Restore the lexicons saved by their own `save` (lexicon_text.c, lexicon_berkeley.c) for
 * grammar `g` (whose symbols are already restored). CKY_ERR_FORMAT when the image is bad. */
cky_status lexicon_text_restore(img_in *in, const grammar *g, grammar_lexicon **out);
cky_status lexicon_berkeley_restore(img_in *in, const grammar *g, grammar_lexicon **out);

/* The image of `g` under `key` (malloc'ed, *len bytes). */
cky_status grammar_image_build(const grammar *g, uint64_t key, unsigned char **buf, size_t *len);

/* The grammar of the image data[0..len) if it is a valid image of `key`: its rule tables
 * point into data, which the grammar owns from then on when `owned` (munmap at free; the
 * caller keeps it otherwise and must outlive the grammar). `source` becomes g->source.
 * CKY_ERR_FORMAT (a bad, stale or foreign image) or CKY_ERR_NOMEM. */
cky_status grammar_image_open(void *data, size_t len, uint64_t key, const char *source,
                              int owned, grammar **out);

/* 1 if p points into the image data g's tables come from (grammar_free must not free it). */
int grammar_image_owns(const grammar *g, const void *p);

/* Unmap the image g owns, if any. */
void grammar_image_release(grammar *g);

/* Checksum of the image payload: the digests of its 8 MB chunks (64-bit words in four
 * FNV-style lanes, the tail bytewise), computed on all cores, combined with FNV-1a: a few
 * milliseconds for hundreds of MB at start-up. */
uint64_t grammar_image_checksum(const void *data, size_t len);

#endif
