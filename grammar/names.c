/* names: interned strings with dense ids (name_table, see internal.h), an FNV-1a hash table
 * with open addressing. Used for symbol names and for the words of both lexicons. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "internal.h"

struct name_table {
    char *chars; /* all strings, NUL-terminated, back to back */
    size_t nchars, cap_chars;
    size_t *start; /* [count] offset of each string in chars */
    int count, cap_start;
    int *slot; /* open addressing: id + 1, 0 = empty; nslot is a power of two */
    size_t nslot;
};

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

name_table *name_table_new(void) { return calloc(1, sizeof(name_table)); }

void name_table_free(name_table *t)
{
    if (!t)
        return;
    free(t->chars);
    free(t->start);
    free(t->slot);
    free(t);
}

/* The slot holding s, or the empty slot where it would go. */
static size_t name_table_slot(const name_table *t, const char *s, size_t len)
{
    size_t mask = t->nslot - 1, i = (size_t)name_hash(s, len) & mask;
    for (;; i = (i + 1) & mask) {
        int id = t->slot[i] - 1;
        if (id < 0)
            return i;
        const char *str = t->chars + t->start[id];
        if (strncmp(str, s, len) == 0 && str[len] == '\0')
            return i;
    }
}

int name_table_find(const name_table *t, const char *s, size_t len)
{
    if (t->nslot == 0)
        return -1;
    return t->slot[name_table_slot(t, s, len)] - 1;
}

static int name_table_rehash(name_table *t)
{
    size_t n = t->nslot ? 2 * t->nslot : 256;
    int *slot = calloc(n, sizeof *slot);
    if (!slot)
        return 0;
    free(t->slot);
    t->slot = slot;
    t->nslot = n;
    for (int id = 0; id < t->count; id++) {
        const char *s = t->chars + t->start[id];
        t->slot[name_table_slot(t, s, strlen(s))] = id + 1;
    }
    return 1;
}

cky_status name_table_intern(name_table *t, const char *s, size_t len, int *id, int *added)
{
    if (added)
        *added = 0;
    if ((*id = name_table_find(t, s, len)) >= 0)
        return CKY_OK;
    if ((size_t)(t->count + 1) * 2 > t->nslot && !name_table_rehash(t))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (t->nchars + len + 1 > t->cap_chars) {
        size_t cap = t->cap_chars ? 2 * t->cap_chars : 4096;
        while (cap < t->nchars + len + 1)
            cap *= 2;
        char *c = realloc(t->chars, cap);
        if (!c)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        t->chars = c;
        t->cap_chars = cap;
    }
    if (!grammar_grow((void **)&t->start, &t->cap_start, t->count, sizeof *t->start))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    size_t slot = name_table_slot(t, s, len);
    memcpy(t->chars + t->nchars, s, len);
    t->chars[t->nchars + len] = '\0';
    t->start[t->count] = t->nchars;
    t->nchars += len + 1;
    *id = t->count++;
    t->slot[slot] = *id + 1;
    if (added)
        *added = 1;
    return CKY_OK;
}

const char *name_table_str(const name_table *t, int id) { return t->chars + t->start[id]; }

int name_table_count(const name_table *t) { return t->count; }

/* ---- images (grammar/image.h) ---- */

void name_table_save(const name_table *t, img_out *w)
{
    int64_t head[3] = {t->count, (int64_t)t->nchars, (int64_t)t->nslot};
    img_put(w, head, sizeof head);
    img_put(w, t->chars, t->nchars);
    img_put(w, t->start, (size_t)t->count * sizeof *t->start);
    img_put(w, t->slot, t->nslot * sizeof *t->slot);
}

name_table *name_table_restore(img_in *in, int *nomem)
{
    name_table *t = calloc(1, sizeof *t);
    if (!t) {
        *nomem = 1;
        return NULL;
    }
    t->count = t->cap_start = (int)img_get_i64(in, 0, 1 << 30);
    t->nchars = t->cap_chars = (size_t)img_get_i64(in, 0, (int64_t)1 << 40);
    t->nslot = (size_t)img_get_i64(in, 0, (int64_t)1 << 32);
    t->chars = img_get_copy(in, t->nchars, nomem);
    t->start = img_get_copy(in, (size_t)t->count * sizeof *t->start, nomem);
    t->slot = img_get_copy(in, t->nslot * sizeof *t->slot, nomem);
    int ok = !in->bad && t->chars && t->start && t->slot && (t->nslot & (t->nslot - 1)) == 0 &&
             (t->nslot > (size_t)t->count || (t->nslot == 0 && t->count == 0)) &&
             (t->nchars == 0 || t->chars[t->nchars - 1] == '\0');
    for (int i = 0; ok && i < t->count; i++) /* each string NUL-terminated inside chars */
        ok = t->start[i] < t->nchars && (i == 0 ? t->start[i] == 0
                                                 : t->chars[t->start[i] - 1] == '\0');
    for (size_t i = 0; ok && i < t->nslot; i++)
        ok = t->slot[i] >= 0 && t->slot[i] <= t->count;
    if (!ok) {
        if (!*nomem)
            in->bad = 1;
        name_table_free(t);
        return NULL;
    }
    return t;
}
