/* pool: several engines at once, each on its own host thread, fed the chunks of one batch
 * from one queue (several GPUs, or several cpu engines standing in for them).
 *
 * A batch of n sentences is cut into chunks of consecutive sentences; each engine's thread
 * takes the next chunk, parses it into the chunk's own slots of `out` and takes another, so
 * results stay in input order whoever parses them. An engine whose parse fails (a device
 * error, out of memory after the engine's own retries) is retired for good: its chunk goes
 * back to the queue for the others and the failure is recorded (pool_failures). Only when no
 * engine is left do the remaining sentences come back PARSE_FAILED. */
#ifndef CKY_PARSER_POOL_H
#define CKY_PARSER_POOL_H

#include "../corpus_tools/sentence.h"
#include "../decoders/decoder.h"

/* An engine that failed and was retired (its chunk went to the others). */
typedef struct pool_failure {
    int engine;        /* its index in the pool */
    const char *error; /* what went wrong (NULL if even that could not be kept) */
} pool_failure;

/* Parse s[0..n) into out[0..n) with one engine, as parser_parse does (parser/parser.h; out
 * is the caller's; the function sets every slot). */
typedef cky_status (*pool_parse_fn)(void *engine, const sentence *s, int n, parse_result *out);

typedef struct pool pool;

/* A pool of the n engines engines[0..n) (the caller's; they outlive the pool), all parsed
 * through `parse`. */
cky_status pool_new(void *const *engines, int n, pool_parse_fn parse, pool **out);

/* Test hook: engine `engine` fails (as a device error would, after parsing into its slots)
 * on the chunk after its first `after` chunks. */
void pool_inject_failure(pool *pl, int engine, int after);

/* Parse s[0..n) into out[0..n) in chunks of `chunk` consecutive sentences, or (chunk 0)
 * `per_engine` chunks per live engine of about equal work (words cubed). Engines that fail are retired (pool_failures); out[k] is PARSE_FAILED, naming the
 * last failure, only for sentences no engine was left to parse. Not CKY_OK only when the
 * batch could not be attempted (out of memory). */
cky_status pool_parse(pool *pl, const sentence *s, int n, parse_result *out, int chunk,
                      int per_engine);

/* The engines retired so far, in the order they failed: *out points at them (valid until the
 * next pool_parse or pool_free). Returns their number. */
int pool_failures(const pool *pl, const pool_failure **out);

void pool_free(pool *pl);

#endif
