// probe-maxplus-forms.cu: register-only throughput of the forms a max-plus (Viterbi) rule
// evaluation can take on the GPU, to compare with the add+max peak of gpu/peak.h: the
// float add and max of the generated kernels, the same in int32 (which ptxas fuses into one
// VIADDMNMX, Hopper's DPX "max(a + b, c)"), three-input forms, and the XX kernels' mix of one
// (L, R) pair add shared by two rules, in float and in int32. Not part of the build
// (docs/history.md, session 25, says what it measured):
//
//     nvcc -O3 -arch=sm_90 -o probe-maxplus-forms tools/probe-maxplus-forms.cu
//     ./probe-maxplus-forms      # on the GPU machine; cuobjdump -sass shows the instructions
//
// Each thread runs IT steps of N dependent-by-rotation chains; a kernel's rate is rule
// evaluations per second, best of 5 launches by CUDA events after a warm-up.
#include <cstdio>
#include <cuda_runtime.h>
#define N 16
#define IT 4096
#define CK(x) do { cudaError_t e = (x); if (e) { fprintf(stderr, "probe-maxplus-forms: %s\n", cudaGetErrorString(e)); return 1; } } while (0)

/* A kernel NAME over chains a[0 .. N) of type T: IT steps, each the statements STMT for
 * i = 0, STEP, 2 STEP, ... < N (A(j) is chain i + j, rotated), then the chains' sum stored. */
#define A(j) a[(i + (j)) & (N - 1)]
#define PROBE(NAME, T, STEP, STMT)                                                    \
    __global__ void NAME(T *out, T w0)                                                \
    {                                                                                 \
        T a[N];                                                                       \
        for (int i = 0; i < N; i++)                                                   \
            a[i] = (T)(threadIdx.x * 3 + i);                                          \
        for (int k = 0; k < IT; k++) {                                                \
            _Pragma("unroll") for (int i = 0; i < N; i += STEP) { STMT }              \
        }                                                                             \
        T s = 0;                                                                      \
        for (int i = 0; i < N; i++)                                                   \
            s += a[i];                                                                \
        out[blockIdx.x * blockDim.x + threadIdx.x] = s;                               \
    }

// one rule a statement, its (L, R) sum not shared: the generated kernels' add and max
PROBE(f_addmax, float, 1, a[i] = fmaxf(a[i], A(5) + (w0 + i));)
// the same in int32 (ptxas fuses it into VIADDMNMX), and by the DPX intrinsic
PROBE(i_addmax, int, 1, a[i] = max(a[i], A(5) + (w0 + i));)
PROBE(i_dpx, int, 1, a[i] = __viaddmax_s32(A(5), w0 + i, a[i]);)
// left + right + w in one three-input add, then the max
PROBE(i_add3max, int, 1, a[i] = max(a[i], A(5) + A(9) + (w0 + i));)
// two rules a max: two three-input adds and one three-input max (four rules a statement)
PROBE(i_add3max3, int, 2,
      a[i] = __vimax3_s32(a[i], A(5) + A(9) + (w0 + i), A(6) + A(11) + (w0 + i + 1));
      a[i + 1] = __vimax3_s32(a[i + 1], A(7) + A(13) + (w0 + i + 2), A(3) + A(10) + (w0 + i + 3));)
// the XX kernels' mix: one (L, R) pair sum shared by two rules, in float and in int32 (ptxas
// makes the int32 pair sum an IMAD, on the FMA pipe)
PROBE(f_pair2, float, 2, float lr = A(5) + A(9);
      a[i] = fmaxf(a[i], lr + (w0 + i)); a[i + 1] = fmaxf(a[i + 1], lr + (w0 + i + 1));)
PROBE(i_pair2, int, 2, int lr = A(5) + A(9);
      a[i] = __viaddmax_s32(lr, w0 + i, a[i]); a[i + 1] = __viaddmax_s32(lr, w0 + i + 1, a[i + 1]);)
// the sum-product peak's form: one fused multiply-add a rule
PROBE(f_fma, float, 1, a[i] = fmaf(A(5), w0 + i, a[i]);)

template <typename T, typename K> int run(const char *name, K kern, T w, int rules_per_step, int blocks, int threads, void *out) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  kern<<<blocks, threads>>>((T *)out, w); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < 5; r++) {
    cudaEventRecord(a); kern<<<blocks, threads>>>((T *)out, w); cudaEventRecord(b); CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
  }
  double rules = (double)blocks * threads * IT * N * rules_per_step;
  printf("%-12s %8.3f ms  %.3e rule evals/s\n", name, best, rules / (best * 1e-3));
  return 0;
}
int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  int blocks = p.multiProcessorCount * 16, threads = 128;
  void *out; CK(cudaMalloc(&out, (size_t)blocks * threads * 4));
  printf("%s, %d SMs, %d blocks of %d threads, %d steps x %d chains\n", p.name, p.multiProcessorCount, blocks, threads, IT, N);
  if (run<float>("f add+max", f_addmax, -0.25f, 1, blocks, threads, out) ||
      run<int>("i add+max", i_addmax, -3, 1, blocks, threads, out) ||
      run<int>("i viaddmax", i_dpx, -3, 1, blocks, threads, out) ||
      run<int>("i add3+max", i_add3max, -3, 1, blocks, threads, out) ||
      run<int>("i add3 max3", i_add3max3, -3, 2, blocks, threads, out) ||
      run<float>("f pair2", f_pair2, -0.25f, 1, blocks, threads, out) ||
      run<int>("i pair2", i_pair2, -3, 1, blocks, threads, out) ||
      run<float>("f fma", f_fma, 0.999f, 1, blocks, threads, out))
    return 1;
  return 0;
}
