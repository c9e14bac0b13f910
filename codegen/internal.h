/* codegen internals shared by the files of the codegen module (not a public API). */
#ifndef CKY_CODEGEN_INTERNAL_H
#define CKY_CODEGEN_INTERNAL_H

#include <stdint.h>

#include "../util/cachedir.h"
#include "codegen.h"

/* FNV-1a 64 over `len` bytes, continuing from `h` (start with CODEGEN_FNV_INIT). */
#define CODEGEN_FNV_INIT 0xcbf29ce484222325ULL
uint64_t codegen_hash(uint64_t h, const void *data, size_t len);
uint64_t codegen_hash_str(uint64_t h, const char *s); /* includes the terminating NUL */

/* Cubin cache entries: DIR/HASH.cubin, a header (magic, version, key, registers, spill
 * bytes, size) then the cubin. Lookup returns 1 on a valid hit, 0 on a miss. */
int codegen_cache_get_cubin(const char *dir, uint64_t key, unsigned char **cubin,
                            size_t *size, int *registers, int *spill_bytes);
cky_status codegen_cache_put_cubin(const char *dir, uint64_t key, const unsigned char *cubin,
                                   size_t size, int registers, int spill_bytes);

/* Key of the partition manifest of family `f` cut with the resolved (never automatic)
 * `shape`: FNV-1a over "partition", CODEGEN_VERSION, the manifest format, the sizes of the
 * partition's element types, the family id, dims, rule count, rule array bytes and the shape
 * field by field. The kernel cache keys are derived from it (codegen/compile.c). */
uint64_t codegen_partition_key(const codegen_family *f, const codegen_shape *shape);

/* Partition manifests: DIR/HASH.part (see cache.c). Lookup returns 1 and fills `out` (free
 * with codegen_partition_free) when the file is a valid manifest of `key` for family `f`
 * and `shape`; anything missing, stale, short, corrupt or foreign is a miss (0). */
int codegen_cache_get_partition(const char *dir, uint64_t key, const codegen_family *f,
                                const codegen_shape *shape, codegen_partition *out);
cky_status codegen_cache_put_partition(const char *dir, uint64_t key,
                                       const codegen_partition *p);

/* Calls of codegen_partition_build made by codegen_compile in this process (manifest
 * misses and compilations without a cache): lets tests see that a warm start skipped it. */
long codegen_partition_builds(void);



/* Local moves lowering sum over parts of weight[axis] x distinct rows (codegen/refine.c):
 * rule i is in part[i] (0..npart-1, updated in place); group[part] is ascending and a rule
 * only moves between parts of one group. A move takes the rules of one part that share a row
 * of one axis to another part of the group already using that row, if that lowers the sum
 * and leaves the target within max(its size now, the group's mean size + slack percent);
 * no part is emptied. At most max_pass passes over all such fibers. Then, with budget > 0,
 * parts larger than their group's mean + slack percent give fibers away to parts with room
 * under that size, at a loss of 0, 1, 2, 4, ... per move, while the sum has risen by at
 * most `budget` in all. Deterministic. */
cky_status codegen_refine_parts(const codegen_rule *rule, long n, const int dim[3], int *part,
                                int npart, const int *group, const int weight[3], int slack,
                                int max_pass, long budget);

/* The sum codegen_refine_parts lowers: over parts, weight[axis] x distinct rows; -1 when out
 * of memory. */
long codegen_parts_cost(const codegen_rule *rule, long n, const int dim[3], const int *part,
                        const int weight[3]);

/* "nvrtc MAJOR.MINOR" of the linked NVRTC, for cache keys. */
void codegen_nvrtc_version(char *buf, size_t size);

/* The host build (host.c): a verified cache entry DIR/HASH.hso loaded and `name` looked up
 * in it: 1, else 0 (missing, stale or damaged: a miss). */
int codegen_host_cached(const char *dir, uint64_t key, const char *name, void **handle,
                        codegen_host_fn *fn);

/* Compile `src` with $CC (default cc) -O2 -shared -fPIC, store it in DIR/HASH.hso (dir NULL:
 * no cache; a failed store is ignored), load it and look up `name`. */
cky_status codegen_host_load(const char *dir, uint64_t key, const char *src, const char *name,
                             void **handle, codegen_host_fn *fn);

/* The host build's compiler ($CC, else cc) and its flags (-mfma where the CPU has FMA), both
 * in the cache key. */
const char *codegen_host_compiler(void);
const char *codegen_host_flags(void);

/* Registers a kernel needs beyond its live values (the three workspace addresses, the thread
 * index, temporaries: loads use immediate offsets). */
#define CODEGEN_REGISTER_MARGIN 12

/* CODEGEN_THREADS-thread blocks per SM for a kernel whose code blocks keep at most
 * `max_live` values live: the most (8 down to 1) whose share of the 64K-register file still
 * holds them. The kernel's launch bounds allow one block of that many times
 * CODEGEN_THREADS threads, so the GPU engine may launch blocks of up to that many tiles. */
int codegen_blocks_per_sm(int max_live);

#endif
