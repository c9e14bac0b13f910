/* pruned: the Berkeley parser's default answer, its coarse-to-fine cascade (prune/prune.h)
 * and then its final pass within the cascade's mask: max-rule (the jar's default output) or
 * Viterbi with the jar's back-trace (its -viterbi output), in the reference arithmetic
 * (double): the masks are the jar's bits, the trees and scores its own.
 *
 * decoder_options say which thresholds (prune: fast or accurate), which final pass (final),
 * whether a sentence without a tree is parsed again (fallback: with the accurate thresholds,
 * then exhaustively, never (()) where the grammar has a parse; the result says which pass
 * gave the tree) and whether each result carries the levels' statistics (levels).
 *
 * Gold tags (sentence.tags, the jar's -useGoldPOS): each word's lexicon gives a score to its
 * gold tag alone, at every level of the cascade and in the final pass; where that finds no
 * tree, the sentence is parsed again without them, as the jar does (result.untagged), and
 * only then do the fallbacks apply.
 *
 * The pruned work is small, so the ref and cpu engines both run this code on host threads,
 * one sentence per thread; the gpu engine (decoder_env.prune_device, unless the developers'
 * CKY_TUNE=prune_host=1) puts the first pass's cascade of a whole batch on the device
 * (prune/prune_gpu.h: the ref's masks, bit for bit), chunk by chunk in two lanes so that one
 * chunk's host work overlaps the other's kernel, the final passes and the fallbacks staying
 * on host threads. A batch of no more sentences than there are host threads (a request to
 * `cky serve`, a short file) runs its cascade on them, one sentence each: on the H200 machine
 * one sentence took 27 ms that way against 55 ms through a kernel (docs/serve.md). On every
 * engine, a batch of fewer sentences than host threads shares the idle ones among its
 * sentences' cascades (prune_set_threads, at most 16 threads a sentence and no more than the
 * cores allow). Needs a native .gr grammar. */
#ifndef CKY_DECODERS_PRUNED_H
#define CKY_DECODERS_PRUNED_H

struct decoder_def;
extern const struct decoder_def pruned_decoder;

#endif
