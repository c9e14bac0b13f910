/* cachedir: the cache folder of compiled kernels and grammar images: where it is, whether it
 * can be used, atomic writes into it, and the removal of what interrupted runs left there.
 *
 * Every temporary file or folder written there is named tmp-PID-HOST~XXXXXX, so that a later
 * run can tell leftovers from work in progress (cachedir_prepare). */
#ifndef CKY_UTIL_CACHEDIR_H
#define CKY_UTIL_CACHEDIR_H

#include <stddef.h>
#include <sys/stat.h>

#include "status.h"

/* The cache folder: `given` (an explicit folder, e.g. from the options), else $CKY_CACHE,
 * else $XDG_CACHE_HOME/cky, else ~/.cache/cky; *dir NULL when it is "off" (any case).
 * Malloc'ed. */
cky_status cachedir_resolve(const char *given, char **dir);

/* Write `len` bytes to `path` atomically (a temp file in the same folder, then rename). */
cky_status cachedir_write_atomic(const char *path, const void *data, size_t len);

/* Make `dir` and its parents. */
cky_status cachedir_mkdirs(const char *dir);

/* Make the cache folder `dir` ready: created, writable (a file can be made there), the
 * leftovers of interrupted runs removed. Fails with a message naming the folder and the
 * reason (the kernel compiler then compiles without a cache). */
cky_status cachedir_prepare(const char *dir);

/* Malloc'ed mkstemp/mkdtemp template DIR/tmp-PID-HOST~XXXXXX then `suffix`: the name of
 * every temporary in the cache, which cachedir_prepare removes once its writer is gone. */
char *cachedir_temp_template(const char *dir, const char *suffix);

/* The same with `prefix` before "tmp-" (DIR/PREFIXtmp-PID-HOST~XXXXXX): util/output.c's. */
char *cachedir_temp_template_named(const char *dir, const char *prefix, const char *suffix);

/* 1 if `name` (from its "tmp-" on), a temporary of that form whose file has status *sb, is a
 * leftover: its writer (a process of this host) is gone, or it is older than a day. */
int cachedir_temp_is_leftover(const char *name, const struct stat *sb);

#endif
