/* multi: the command line's side of running on several engines or machines: --devices
 * LIST|all, --engines N, the failure test hook, --shard K/N, and the messages that name a
 * retired engine. Shared by cky parse and cky bench. */
#ifndef CKY_CLI_MULTI_H
#define CKY_CLI_MULTI_H

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

/* Name on stderr each engine of p retired since the last call (*reported: how many were
 * named already), with its error and that its sentences went to the others. */
void multi_report_failures(const char *cmd, const parser *p, const parser_options *o,
                           int *reported);

#endif
