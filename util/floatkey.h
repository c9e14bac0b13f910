/* floatkey: the order-preserving integer key of a float32, in one header for host code,
 * device code and the kernel text the grammar compiler writes.
 *
 * key(v) = bits(v) ^ ((bits(v) >> 31) & 0x7fffffff) (bits as int32, arithmetic shift)
 * orders like v as a signed int and is its own inverse, so a float max is one integer
 * atomic max of keys (the GPU parent workspaces, codegen/codegen.h) and a key turns back
 * into its float with the same expression. */
#ifndef CKY_UTIL_FLOATKEY_H
#define CKY_UTIL_FLOATKEY_H

/* The key expression of int32 bits `b` (an identifier), as code and as text. */
#define FLOATKEY_EXPR(b) b ^ ((b >> 31) & 0x7fffffff)
#define FLOATKEY_STR_(x) #x
#define FLOATKEY_STR(x) FLOATKEY_STR_(x) /* x expanded, then made text */
#define FLOATKEY_TEXT(b) FLOATKEY_STR(FLOATKEY_EXPR(b))

#define FLOATKEY_NINF 0x807fffff /* key(-inf) */

#ifdef __CUDACC__
#define FLOATKEY_HD __host__ __device__
#else
#define FLOATKEY_HD
#endif

/* The key of float bits b, or the float bits of key b. */
static inline FLOATKEY_HD int floatkey(int b) { return FLOATKEY_EXPR(b); }

#endif
