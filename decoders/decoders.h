/* decode: the decoders, which turn what an engine computed into results; the parser picks
 * one through parser_options.decoder.
 *
 * A decoder says which engine passes it needs (parser/engine.h; the Viterbi decoder needs
 * the inside pass in max-plus) and turns the filled host chart of one sentence into its
 * result. Engines know nothing of decoders beyond the passes asked of them; a decoder that
 * also runs on the GPU engine's device has a device part beside it (the Viterbi decoder:
 * parser/gpu_viterbi.h).
 *
 * Adding a decoder: a value of parser_decoder (parser.h), its file (decode_NAME.c, or its
 * own module as viterbi/ and maxrule/ are), and its row in decode.c's table. */
#ifndef CKY_PARSER_DECODE_H
#define CKY_PARSER_DECODE_H

#include "viterbi/viterbi.h"
#include "../engines/cpu/cpu.h"
#include "../sched/engine.h"
#include "../gpu/gpu_engine.h"
#include "../parser/parser.h"

/* Turn the filled chart c of `words` into result r (outcome, score, tree; r starts as
 * PARSE_OK with score -inf). */
typedef void (*decode_chart_fn)(const grammar *g, const parser_options *o, const chart *c,
                                char *const *words, parse_result *r);

/* Decode the sentence words[0..n) from scratch in the reference arithmetic (double), the
 * decoder running its own passes: the ref engine of a decoder whose passes the generated
 * engines do not run yet. */
typedef void (*decode_words_fn)(const grammar *g, const parser_options *o, char *const *words,
                                int n, parse_result *r);

/* Decode the n sentences s[0..n) on the cpu engine e, the decoder asking the engine for the
 * passes it needs (out[k]: the result of s[k]); the error of a pass fails the call. */
typedef cky_status (*decode_cpu_fn)(const grammar *g, const parser_options *o, cpu_engine *e,
                                    const sentence *s, int n, parse_result *out);

/* Decode the n sentences s[0..n) on the gpu engine e (as decode_cpu_fn). */
typedef cky_status (*decode_gpu_fn)(const grammar *g, const parser_options *o, gpu_engine *e,
                                    const sentence *s, int n, parse_result *out);

typedef struct decode_def {
    const char *name;
    unsigned passes;       /* bit 1u << p for each engine_pass p it needs */
    decode_chart_fn chart; /* the host decoder of a filled chart (NULL: none yet) */
    decode_words_fn words; /* the ref engine's own decoding (NULL: ref_parse, then chart) */
    decode_cpu_fn cpu;     /* the cpu engine's decoding (NULL: cpu_engine_parse, then chart) */
    decode_gpu_fn gpu;     /* the gpu engine's decoding (NULL: parser/gpu_viterbi.h) */
    cky_status (*check)(const grammar *g); /* can it decode with g? (NULL: always) */
} decode_def;

/* The decoder `id`; NULL for an unknown one. */
const decode_def *decode_get(parser_decoder id);

/* Mark r failed with the last error's message. */
void decode_fail(parse_result *r);

/* The Viterbi decoder (decode_viterbi.c): the best tree of a filled chart, in the
 * back-trace mode o->backtrace, un-annotated. */
void decode_viterbi_chart(const grammar *g, const parser_options *o, const chart *c,
                          char *const *words, parse_result *r);

/* The max-rule decoder (decode_maxrule.c, through maxrule/) in the ref engine. */
void decode_maxrule_words(const grammar *g, const parser_options *o, char *const *words, int n,
                          parse_result *r);

/* The max-rule decoder on the cpu engine (decode_maxrule.c): the sum-product inside and
 * outside passes (parser/cpu_sum.h) over groups of sentences, then max-c and the tree
 * (parser/maxc.h: maxc_cpu_run, the gpu engine's arithmetic). */
cky_status decode_maxrule_cpu(const grammar *g, const parser_options *o, cpu_engine *e,
                              const sentence *s, int n, parse_result *out);

/* The max-rule decoder on the gpu engine (decode_maxrule.c): the sum-product passes, max-c
 * and the walks of the trees on the device (parser/gpu_sum.h, parser/gpu_maxc.h), the node
 * codes made into trees on the host. */
cky_status decode_maxrule_gpu(const grammar *g, const parser_options *o, gpu_engine *e,
                              const sentence *s, int n, parse_result *out);

/* The Viterbi decoder's result from an exact extraction array (the GPU Viterbi's) of a
 * sentence with root score `root`. */
void decode_viterbi_nodes(const grammar *g, const viterbi_node *nodes, int n,
                          char *const *words, double root, parse_result *r);

#endif
