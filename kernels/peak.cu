/* peak.cu: the add+max peak kernel (see peak.h). Each rule evaluation compiles to one FADD
 * with an immediate weight and one FMNMX; check with
 *     cuobjdump -sass build/kernels/peak.o | grep -c FMNMX     (and FADD)
 * that the loop body holds KPEAK_RULES_PER_TRIP (256) of each. Seen for sm_90 with nvcc 13.0:
 * 256 FADD, 263 FMNMX (the loop's 256 and the final reduction's 7), no FFMA; the loop's only
 * other instructions are its counter, compare and branch. */
#include "peak.h"

namespace {

/* Rule weight of (from j, to k): distinct, negative, exact in float; a compile-time
 * constant, as in the generated kernels, so that it becomes the FADD's immediate. */
__host__ __device__ constexpr float weight(int j, int k)
{
    return -(float)(1 + j * KPEAK_CHAINS + k) * 0.0078125f;
}

__global__ void __launch_bounds__(KPEAK_THREADS)
kpeak_kernel(float *out, int trips, float seed)
{
    const int tid = blockIdx.x * KPEAK_THREADS + threadIdx.x;
    float p[KPEAK_CHAINS];
#pragma unroll
    for (int k = 0; k < KPEAK_CHAINS; k++)
        p[k] = seed * (float)(tid % 1024 + k);
    for (int trip = 0; trip < trips; trip++) {
#pragma unroll
        for (int step = 0; step < KPEAK_STEPS; step++) {
            float lr[KPEAK_CHAINS]; /* the scores of the step before */
#pragma unroll
            for (int k = 0; k < KPEAK_CHAINS; k++)
                lr[k] = p[k];
#pragma unroll
            for (int k = 0; k < KPEAK_CHAINS; k++)
#pragma unroll
                for (int j = 0; j < KPEAK_CHAINS; j++)
                    p[k] = fmaxf(p[k], lr[j] + weight(j, k));
        }
    }
    float m = p[0];
#pragma unroll
    for (int k = 1; k < KPEAK_CHAINS; k++)
        m = fmaxf(m, p[k]);
    out[tid] = m;
}

} // namespace

extern "C" cudaError_t kpeak_blocks_per_sm(int *blocks_per_sm)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, kpeak_kernel,
                                                         KPEAK_THREADS, 0);
}

extern "C" cudaError_t kpeak_launch(float *out, int blocks, int trips, float seed,
                                    cudaStream_t stream)
{
    kpeak_kernel<<<blocks, KPEAK_THREADS, 0, stream>>>(out, trips, seed);
    return cudaGetLastError();
}
