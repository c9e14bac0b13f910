/* generic_kernels: the generic kernel (codegen/generic.h), which runs a kernel of the
 * grammar's partition from its table while its open-coded form still compiles: the same
 * grid as the compiled kernel without chunks (blockIdx.y the code block), a thread a work
 * item, each parent's run of rules into a register and then stored as the compiled kernel
 * stores it. */
#include "../codegen/generic.h"
#include "kernels.h"

template <int SR>
static __global__ void __launch_bounds__(KERNELS_TILE)
    generic(const float *__restrict__ left, const float *__restrict__ right,
            float *__restrict__ parent, int n, int tile, int ptile,
            const codegen_generic_rule *__restrict__ rule,
            const kernels_generic_block *__restrict__ blocks)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    long long o = (long long)(t / KERNELS_TILE) * tile + t % KERNELS_TILE;
    kernels_generic_block b = blocks[blockIdx.y];
    int slot = b.slot0;
    for (long i = b.first; i < b.end;) {
        int row = rule[i].p;
        int v = codegen_generic_run(SR, rule, &i, b.end, left + o, right + o, KERNELS_TILE);
        if (SR == 1) /* its slot of the partial workspace */
            parent[(long long)(t / KERNELS_TILE) * ptile + t % KERNELS_TILE +
                   (long long)slot++ * KERNELS_TILE] = codegen_generic_float(v);
        else
            atomicMax((int *)parent + o + (long long)row * KERNELS_TILE, v);
    }
}

extern "C" cudaError_t kernels_generic(int semiring, const float *left, const float *right,
                                       float *parent, int n, int tile, int ptile,
                                       const struct codegen_generic_rule *rule,
                                       const kernels_generic_block *blocks, int nblock,
                                       cudaStream_t stream)
{
    if (n <= 0 || nblock <= 0)
        return cudaSuccess;
    dim3 grid((n + KERNELS_TILE - 1) / KERNELS_TILE, nblock);
    if (semiring == 1)
        generic<1><<<grid, KERNELS_TILE, 0, stream>>>(left, right, parent, n, tile, ptile, rule,
                                                      blocks);
    else if (semiring == 2)
        generic<2><<<grid, KERNELS_TILE, 0, stream>>>(left, right, parent, n, tile, ptile, rule,
                                                      blocks);
    else
        generic<0><<<grid, KERNELS_TILE, 0, stream>>>(left, right, parent, n, tile, ptile, rule,
                                                      blocks);
    return cudaGetLastError();
}
