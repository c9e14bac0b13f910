/* multi: the command line's side of running on several engines or machines: --devices
 * LIST|all, --engines N, the failure test hook, --shard K/N, and the messages that name a
 * retired engine. Shared by cky parse and cky bench. */
#ifndef CKY_CLI_MULTI_H
#define CKY_CLI_MULTI_H

#include <stdint.h>

#include "../parser/parser.h"

/* --devices: "all" (every CUDA device here) or a comma-separated list of device numbers
 * ("0,1"; a device named twice gets two engines). Sets o->device to the first and, for more than one, o->engines and
 * o->devices. Returns 0, 2 after a usage error or 1 when "all" finds no GPU (messages on
 * stderr, prefixed "cky CMD: "). */
int multi_read_devices(const char *cmd, const char *arg, parser_options *o);

/* --fail-engine K[:AFTER] (test hook): engine K (1-based) of the pool fails after parsing
 * AFTER chunks (default 1). Returns 0 or 2 after a usage error. */
int multi_read_fail(const char *cmd, const char *arg, parser_options *o);

/* --shard K/N: 1 <= K <= N. Returns 0 or 2 after a usage error. */
int multi_read_shard(const char *cmd, const char *arg, int *k, int *n);

/* 1 if the item of 1-based number `number` (a line or a tree of the input) is in shard k/n:
 * items k, k + n, k + 2n, ... (every item when n is 0). */
int multi_in_shard(long number, int k, int n);

/* The manifest of a shard's output FILE, written beside it as FILE.shard by cky parse
 * --shard K/N -o FILE when FILE is: what cky merge needs to tell a whole set of shards from
 * part of one, a shard given twice, or shards of another input. A text file:
 *     cky shard manifest 1
 *     shard K/N
 *     lines L                 (the lines of FILE)
 *     input-lines T           (the lines, or trees, of the whole input)
 *     input-hash H            (16 hex digits: FNV-1a of the input, multi_hash_item)
 *     input NAME              (the input as given, for messages) */
typedef struct multi_manifest {
    int k, n;
    long lines, input_lines;
    uint64_t input_hash;
    char input[1024];
} multi_manifest;

#define MULTI_HASH_INIT 0xcbf29ce484222325ULL

/* The input hash h continued over one item of `len` bytes (a line without its end; a tree:
 * its file's name and first line), each item ended by a newline. */
uint64_t multi_hash_item(uint64_t h, const char *s, size_t len);

/* Write TARGET.shard (whole or not at all). Returns CKY_OK or CKY_ERR_IO with a message. */
cky_status multi_manifest_write(const char *target, const multi_manifest *m);

/* Read TARGET.shard into *m: 1, or 0 when there is none; -1 after a message naming the
 * file when it is not a manifest. */
int multi_manifest_read(const char *cmd, const char *target, multi_manifest *m);

/* Remove TARGET.shard: TARGET was written by a run without --shard. */
void multi_manifest_remove(const char *target);

/* Name on stderr each engine of p retired since the last call (*reported: how many were
 * named already), with its error and that its sentences went to the others. */
void multi_report_failures(const char *cmd, const parser *p, const parser_options *o,
                           int *reported);

#endif
