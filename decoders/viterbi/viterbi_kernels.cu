/* viterbi_kernels: the GPU Viterbi extraction kernel (paper §6, Algorithm 1); see
 * viterbi_kernels.h.
 *
 * One block of KV_THREADS threads per sentence. The block walks its output array in prefix
 * order: thread 0 writes the nodes, a __syncthreads() at the top of every step publishes them,
 * and every thread then reads the current node and keeps the same control state (p, i), so
 * all branches below are block-uniform. A search is a parallel scan over one parent
 * substate's CSR entries, each thread taking entries tid, tid + KV_THREADS, ...; entries are
 * sorted by key, so a thread stops at its first match and the block minimum of the matching
 * entry indices is the matching entry of smallest key. The minimum goes through an atomicMin
 * in shared memory, with three rotating slots so that one __syncthreads() per search
 * suffices: search r uses slot r % 3 and resets slot (r + 1) % 3, which was last read in
 * search r - 2, before the barrier of search r, after which search r + 1 starts. */
#include "viterbi_kernels.h"

#include "../../chart/cell.h"
#include "../../util/fixedpoint.h"

#include <climits>
#include <cmath>

namespace {

constexpr int KV_THREADS = 128; /* the paper's choice */

/* Block-wide minimum of v (INT_MAX: no match); every thread gets the result. */
__device__ __forceinline__ int block_min(int v, int *slot, int &round)
{
    int s = round % 3;
    if (threadIdx.x == 0)
        slot[(round + 1) % 3] = INT_MAX;
    if (v != INT_MAX)
        atomicMin(&slot[s], v);
    __syncthreads();
    round++;
    return slot[s];
}

__global__ void __launch_bounds__(KV_THREADS)
viterbi_gpu_kernel(gpu_rules t, const float *__restrict__ pre, const float *__restrict__ post,
                int nsub, const int *__restrict__ n_of, const long long *__restrict__ cell0_of,
                const int *__restrict__ node0_of, viterbi_node *nodes_all, int *status, int fixed)
{
    __shared__ int slot[3];
    const int s = blockIdx.x, tid = threadIdx.x;
    const int n = n_of[s];
    if (n < 1) {
        if (tid == 0)
            status[s] = VITERBI_GPU_NO_PARSE;
        return;
    }
    const long long c0 = cell0_of[s];
    const size_t ns = (size_t)nsub;
    if (post[(size_t)(c0 + (long long)chart_cell(n, 0, n)) * ns + t.root] == -INFINITY) {
        if (tid == 0)
            status[s] = VITERBI_GPU_NO_PARSE;
        return;
    }
    viterbi_node *nodes = nodes_all + node0_of[s];
    if (tid == 0) {
        nodes[0].width = n;
        nodes[0].top_sym = 0;
        nodes[0].top_sub = 0;
        nodes[0].bot_sym = 0;
        nodes[0].bot_sub = 0;
        slot[0] = slot[1] = slot[2] = INT_MAX;
    }
    int round = 0;
    int i = 0; /* leftmost word of the current node */
    for (int p = 0; p < 2 * n - 1; p++) {
        __syncthreads(); /* node p (written by thread 0 earlier) and the slots are visible */
        const int width = nodes[p].width;
        const int top = t.sub_offset[nodes[p].top_sym] + nodes[p].top_sub;
        const int j = i + width;
        const size_t cell = (size_t)(c0 + (long long)chart_cell(n, i, j)) * ns;
        const float *cpre = pre + cell;

        /* unary step */
        const float target = post[cell + top];
        int bot = top;
        if (cpre[top] != target) {
            const int e1 = t.un_first[top + 1];
            int best = INT_MAX;
            for (int e = t.un_first[top] + tid; e < e1; e += KV_THREADS)
                if (__fadd_rn(cpre[t.un_child[e]], t.un_w[e]) == target) {
                    best = e;
                    break;
                }
            best = block_min(best, slot, round);
            if (best == INT_MAX) {
                if (tid == 0)
                    status[s] = VITERBI_GPU_INCONSISTENT;
                return;
            }
            bot = t.un_child[best];
        }
        const int bot_sym = t.sym[bot];
        if (tid == 0) {
            nodes[p].bot_sym = bot_sym;
            nodes[p].bot_sub = bot - t.sub_offset[bot_sym];
        }
        if (width == 1) {
            i++;
            continue;
        }

        /* binary step: first split with a match, smallest (left, right) there */
        const float btarget = cpre[bot];
        const int e0 = t.bin_first[bot], e1 = t.bin_first[bot + 1];
        int k = i + 1, best = INT_MAX;
        for (; k < j; k++) {
            const float *L = post + (size_t)(c0 + (long long)chart_cell(n, i, k)) * ns;
            const float *R = post + (size_t)(c0 + (long long)chart_cell(n, k, j)) * ns;
            int mine = INT_MAX;
            for (int e = e0 + tid; e < e1; e += KV_THREADS) {
                float l = L[t.bin_left[e]], r = R[t.bin_right[e]];
                if ((fixed ? fixedpoint_binary(t.bin_w[e], l, r)
                           : __fadd_rn(__fadd_rn(l, r), t.bin_w[e])) == btarget) {
                    mine = e;
                    break;
                }
            }
            best = block_min(mine, slot, round);
            if (best != INT_MAX)
                break;
        }
        if (best == INT_MAX) {
            if (tid == 0)
                status[s] = VITERBI_GPU_INCONSISTENT;
            return;
        }
        if (tid == 0) {
            const int l = t.bin_left[best], r = t.bin_right[best];
            const int ls = t.sym[l], rs = t.sym[r];
            viterbi_node *a = &nodes[p + 1], *b = &nodes[p + 2 * (k - i)];
            a->width = k - i;
            a->top_sym = a->bot_sym = ls;
            a->top_sub = a->bot_sub = l - t.sub_offset[ls];
            b->width = j - k;
            b->top_sym = b->bot_sym = rs;
            b->top_sub = b->bot_sub = r - t.sub_offset[rs];
        }
    }
    if (tid == 0)
        status[s] = VITERBI_GPU_OK;
}

} // namespace

extern "C" cudaError_t viterbi_gpu_launch(const gpu_rules *dev, const float *pre,
                                       const float *post, int nsub, int nsent, const int *n,
                                       const long long *cell0, const int *node0,
                                       viterbi_node *nodes, int *status, int fixed,
                                       cudaStream_t stream)
{
    if (nsent > 0)
        viterbi_gpu_kernel<<<nsent, KV_THREADS, 0, stream>>>(*dev, pre, post, nsub, n, cell0,
                                                          node0, nodes, status, fixed);
    return cudaGetLastError();
}
