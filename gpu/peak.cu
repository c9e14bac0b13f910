/* peak: the peak kernels (gpu.h, gpu/kernels.h), one template over the rule of its kind.
 *
 * add+max: each rule evaluation compiles to one FADD with an immediate weight and one
 * FMNMX. sum-product: to one FFMA with an immediate weight (the generated sum-product text's
 * `P = CKY_FMA(P, lr, w)`, i.e. fmaf(lr, w, P)). Check with
 *     cuobjdump -sass build/gpu/peak.o | grep -c FFMA     (and FADD, FMNMX)
 * that each kernel's loop body holds GPU_PEAK_RULES_PER_TRIP (256) of its kind's instructions
 * (both kernels together: 256 FFMA, 256 FADD, 270 FMNMX).
 * Seen for sm_90 with nvcc 13.0: add+max 256 FADD, 263 FMNMX (the loop's 256 and the final
 * reduction's 7), no FFMA, the loop's only other instructions its counter, compare and
 * branch. sum-product, in PTX only (no cuobjdump where it was written): 256 fma.rn.f32 (each
 * weight in a mov.f32 first, for ptxas to fold into the FFMA's immediate as in the generated
 * kernels: to be seen in the SASS) and 7 max.f32, no add.f32; test_peak.c checks these PTX
 * counts for both kernels. */
#include "kernels.h"

namespace {

/* Rule weights of (from j, to k), compile-time constants as in the generated kernels, so
 * that each becomes its instruction's immediate; distinct and exact in float. */

/* add+max: negative (log scores). */
__host__ __device__ constexpr float weight_add_max(int j, int k)
{
    return -(float)(1 + j * GPU_PEAK_CHAINS + k) * 0.0078125f;
}

/* sum-product: small and positive off the diagonal, about -1/2 on it, so that a step
 * (p <- p + W^T p) shrinks every score: the scores stay finite, decaying towards 0 (the FMA
 * units run at full rate on subnormals and zeros, so the rate does not depend on them). */
__host__ __device__ constexpr float weight_sum_product(int j, int k)
{
    return j == k ? -(0.5f + (float)k * 0.015625f)
                  : (float)(1 + j * GPU_PEAK_CHAINS + k) * 0.0009765625f;
}

/* One rule evaluation of each kind: the parent's new score from its score p, the combined
 * children lr and the weight of rule (j, k). */
template <int KIND> struct rule;

template <> struct rule<GPU_PEAK_ADD_MAX> {
    static __device__ __forceinline__ float eval(float p, float lr, int j, int k)
    {
        return fmaxf(p, lr + weight_add_max(j, k)); /* FADD + FMNMX */
    }
};

template <> struct rule<GPU_PEAK_SUM_PRODUCT> {
    static __device__ __forceinline__ float eval(float p, float lr, int j, int k)
    {
        return fmaf(lr, weight_sum_product(j, k), p); /* FFMA */
    }
};

template <int KIND>
__global__ void __launch_bounds__(GPU_PEAK_THREADS) gpu_peak_kernel(float *out, int trips, float seed)
{
    const int tid = blockIdx.x * GPU_PEAK_THREADS + threadIdx.x;
    float p[GPU_PEAK_CHAINS];
#pragma unroll
    for (int k = 0; k < GPU_PEAK_CHAINS; k++)
        p[k] = seed * (float)(tid % 1024 + k);
    for (int trip = 0; trip < trips; trip++) {
#pragma unroll
        for (int step = 0; step < GPU_PEAK_STEPS; step++) {
            float lr[GPU_PEAK_CHAINS]; /* the scores of the step before */
#pragma unroll
            for (int k = 0; k < GPU_PEAK_CHAINS; k++)
                lr[k] = p[k];
#pragma unroll
            for (int k = 0; k < GPU_PEAK_CHAINS; k++)
#pragma unroll
                for (int j = 0; j < GPU_PEAK_CHAINS; j++)
                    p[k] = rule<KIND>::eval(p[k], lr[j], j, k);
        }
    }
    float m = p[0];
#pragma unroll
    for (int k = 1; k < GPU_PEAK_CHAINS; k++)
        m = fmaxf(m, p[k]);
    out[tid] = m;
}

} // namespace

extern "C" cudaError_t gpu_peak_blocks_per_sm(gpu_peak_kind kind, int *blocks_per_sm)
{
    switch (kind) {
    case GPU_PEAK_ADD_MAX:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            blocks_per_sm, gpu_peak_kernel<GPU_PEAK_ADD_MAX>, GPU_PEAK_THREADS, 0);
    case GPU_PEAK_SUM_PRODUCT:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            blocks_per_sm, gpu_peak_kernel<GPU_PEAK_SUM_PRODUCT>, GPU_PEAK_THREADS, 0);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t gpu_peak_launch(gpu_peak_kind kind, float *out, int blocks, int trips,
                                    float seed, cudaStream_t stream)
{
    switch (kind) {
    case GPU_PEAK_ADD_MAX:
        gpu_peak_kernel<GPU_PEAK_ADD_MAX><<<blocks, GPU_PEAK_THREADS, 0, stream>>>(out, trips, seed);
        break;
    case GPU_PEAK_SUM_PRODUCT:
        gpu_peak_kernel<GPU_PEAK_SUM_PRODUCT><<<blocks, GPU_PEAK_THREADS, 0, stream>>>(out, trips, seed);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
