/* viterbi_gpu: the GPU Viterbi extraction (Canny, Hall and Klein 2013, §6 and Algorithm 1),
 * bit for bit viterbi_extract_array (viterbi/viterbi.h) on the float chart of every sentence.
 *
 * One thread block per sentence walks the output array in prefix order, which is its own work
 * queue (node p's children are p + 1 and p + 2 * width(left child)); for each node the block's
 * threads search the parent substate's rules in parallel and take a block-wide minimum:
 *   - unary step: identity if post == pre at the node's substate; else, over the closed unary
 *     entries (child, w) of the parent substate, the smallest global child id whose float
 *     pre[child] + w equals post;
 *   - binary step: split k = i + 1, i + 2, ... in turn; over the binary entries (left, right,
 *     w) of the parent substate, the smallest (global left id, global right id) whose float
 *     (post[left] + post[right]) + w equals pre; the first split with a match wins.
 * The arithmetic is CHART_FLOAT's (chart/chart.h): w is the grammar's double score cast to
 * float, and the two adds are done in that order, rounded to nearest, never fused.
 *
 * The tables are CSR arrays over global parent substate ids, built on the host from the
 * grammar (entries with a -inf score dropped: they can never match a finite score), each
 * parent's entries sorted by (left, right) or by child, so that the smallest matching key is
 * the smallest matching entry index. */
#ifndef CKY_KERNELS_VITERBI_GPU_H
#define CKY_KERNELS_VITERBI_GPU_H

#include <cuda_runtime_api.h>

#include "../grammar/grammar.h"
#include "../decoders/viterbi/viterbi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-sentence results of kviterbi_run. */
enum {
    KVITERBI_OK = 0,          /* nodes hold the extraction */
    KVITERBI_NO_PARSE = 1,    /* the ROOT post score over (0, n) is -inf (or n < 1): nodes
                               * untouched */
    KVITERBI_INCONSISTENT = 2 /* no derivation matches some node's score: the chart is not
                               * a max-sum chart of this grammar (nodes partly written) */
};

/* The search tables, all arrays in one memory space (host for kviterbi_csr_build, device
 * inside kviterbi_tables). Global substate ids are grammar.sub_offset[sym] + sub. */
typedef struct kviterbi_csr {
    int nsym;        /* grammar.nsym */
    int nsub;        /* grammar.nsub_total */
    int root;        /* global id of ROOT's substate 0: grammar.sub_offset[0] */
    int nbinary;     /* binary entries: grammar_count_binary(g) */
    int nunary;      /* unary entries: grammar_count_unary(g) */
    int *sym;        /* [nsub]: symbol of each global id */
    int *sub_offset; /* [nsym]: grammar.sub_offset */
    /* binary entries of parent substate p: bin_first[p] .. bin_first[p + 1] - 1, ascending
     * by (bin_left, bin_right), both global ids; bin_w the float score */
    int *bin_first;  /* [nsub + 1] */
    int *bin_left, *bin_right;
    float *bin_w;
    /* closed unary entries of parent substate p: un_first[p] .. un_first[p + 1] - 1,
     * ascending by un_child (global id); un_w the float score */
    int *un_first;   /* [nsub + 1] */
    int *un_child;
    float *un_w;
} kviterbi_csr;

/* Build the tables of g in host memory (malloc). CKY_ERR_LIMIT if g has more than INT_MAX
 * binary or unary entries, CKY_ERR_NOMEM on allocation failure; *out is then untouched.
 * Release with kviterbi_csr_free_host. */
cky_status kviterbi_csr_build(const grammar *g, kviterbi_csr *out);

/* Free the arrays of a table built by kviterbi_csr_build and zero it; NULL or zeroed is fine. */
void kviterbi_csr_free_host(kviterbi_csr *c);

/* The tables on the current device. */
typedef struct kviterbi_tables {
    kviterbi_csr dev; /* device pointers */
} kviterbi_tables;

/* Build g's tables and upload them to the current device (synchronously). Errors as
 * kviterbi_csr_build, and GPU_CHECK's for the device calls; *out is NULL then. */
cky_status kviterbi_tables_new(const grammar *g, kviterbi_tables **out);

/* Upload tables built by kviterbi_csr_build (h stays the caller's) to the current device
 * (synchronously). GPU_CHECK's errors; *out is NULL then. */
cky_status kviterbi_tables_upload(const kviterbi_csr *h, kviterbi_tables **out);

/* Free the device tables; NULL is fine. */
void kviterbi_tables_free(kviterbi_tables *t);

/* Enqueue the extraction of a batch of nsent sentences on `stream` (asynchronous: sync the
 * stream before reading the results). All pointers but t are device pointers:
 *   - pre, post: the batch device chart of kernels/kernels.h, nsub (= t->dev.nsub) floats
 *     per cell layer; sentence s has n[s] words and its cells start at cell0[s];
 *   - nodes: sentence s gets its 2 n[s] - 1 nodes at nodes[node0[s] ...], in prefix order,
 *     exactly as viterbi_extract_array on the CHART_FLOAT chart of the same scores;
 *   - status[s]: KVITERBI_OK, KVITERBI_NO_PARSE or KVITERBI_INCONSISTENT.
 * CKY_ERR_ARG if nsub differs from the tables' or nsent < 0; nsent == 0 enqueues nothing. */
cky_status kviterbi_run(const kviterbi_tables *t, const float *pre, const float *post, int nsub,
                        int nsent, const int *n, const long long *cell0, const int *node0,
                        viterbi_node *nodes, int *status, cudaStream_t stream);

/* The kernel launcher behind kviterbi_run (kernels/viterbi.cu), same arguments, `dev` the
 * device tables; no checks. Returns cudaGetLastError(). */
cudaError_t kviterbi_launch(const kviterbi_csr *dev, const float *pre, const float *post,
                            int nsub, int nsent, const int *n, const long long *cell0,
                            const int *node0, viterbi_node *nodes, int *status,
                            cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
