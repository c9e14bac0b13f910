// probe-maxplus-forms.cu: register-only throughput of the forms a max-plus (Viterbi) rule
// evaluation can take on the GPU, to compare with the add+max peak of kernels/peak.h: the
// float add and max of the generated kernels, the same in int32 (which ptxas fuses into one
// VIADDMNMX, Hopper's DPX "max(a + b, c)"), three-input forms, and the XX kernels' mix of one
// (L, R) pair add shared by two rules, in float and in int32. Not part of the build
// (docs/performance.md, session 25, says what it measured):
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
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s\n", cudaGetErrorString(e)); return 1; } } while (0)

// one rule: acc[i] = max(acc[i], lr + w), lr from another chain (no pair sharing): add + max
__global__ void f_addmax(float *out, float w0) {
  float a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 0.5f + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i++) a[i] = fmaxf(a[i], a[(i + 5) & (N - 1)] + (w0 + i));
  float s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void i_addmax(int *out, int w0) {
  int a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 3 + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i++) a[i] = max(a[i], a[(i + 5) & (N - 1)] + (w0 + i));
  int s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void i_dpx(int *out, int w0) {
  int a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 3 + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i++) a[i] = __viaddmax_s32(a[(i + 5) & (N - 1)], w0 + i, a[i]);
  int s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
// three-input add (left + right + w, no pair) then max
__global__ void i_add3max(int *out, int w0) {
  int a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 3 + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i++) a[i] = max(a[i], a[(i + 5) & (N - 1)] + a[(i + 9) & (N - 1)] + (w0 + i));
  int s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
// two rules a step: two three-input adds and one three-input max
__global__ void i_add3max3(int *out, int w0) {
  int a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 3 + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      int t1 = a[(i + 5) & (N - 1)] + a[(i + 9) & (N - 1)] + (w0 + i);
      int t2 = a[(i + 6) & (N - 1)] + a[(i + 11) & (N - 1)] + (w0 + i + 1);
      a[i] = __vimax3_s32(a[i], t1, t2);
      int t3 = a[(i + 7) & (N - 1)] + a[(i + 13) & (N - 1)] + (w0 + i + 2);
      int t4 = a[(i + 3) & (N - 1)] + a[(i + 10) & (N - 1)] + (w0 + i + 3);
      a[i + 1] = __vimax3_s32(a[i + 1], t3, t4);
    }
  int s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void f_fma(float *out, float w0) {
  float a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 0.5f + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i++) a[i] = fmaf(a[(i + 5) & (N - 1)], w0 + i, a[i]);
  float s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}


// the XX kernels' mix: one pair add shared by two rules (0.5 adds a rule besides the rule's own)
__global__ void f_pair2(float *out, float w0) {
  float a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 0.5f + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      float lr = a[(i + 5) & (N - 1)] + a[(i + 9) & (N - 1)];
      a[i] = fmaxf(a[i], lr + (w0 + i));
      a[i + 1] = fmaxf(a[i + 1], lr + (w0 + i + 1));
    }
  float s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void i_pair2(int *out, int w0) {
  int a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 3 + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      int lr = a[(i + 5) & (N - 1)] + a[(i + 9) & (N - 1)];
      a[i] = __viaddmax_s32(lr, w0 + i, a[i]);
      a[i + 1] = __viaddmax_s32(lr, w0 + i + 1, a[i + 1]);
    }
  int s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void i_pair2mad(int *out, int w0) {
  int a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 3 + i;
  int one = w0 / w0;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      int lr;
      asm volatile("mad.lo.s32 %0, %1, %2, %3;" : "=r"(lr) : "r"(a[(i + 5) & (N - 1)]), "r"(one), "r"(a[(i + 9) & (N - 1)]));
      a[i] = __viaddmax_s32(lr, w0 + i, a[i]);
      a[i + 1] = __viaddmax_s32(lr, w0 + i + 1, a[i + 1]);
    }
  int s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
// the pair as a float add of the int bits is wrong arithmetic, but times an FMA-pipe add beside the max
__global__ void i_pair2fadd(int *out, int w0) {
  int a[N]; for (int i = 0; i < N; i++) a[i] = threadIdx.x * 3 + i;
  for (int k = 0; k < IT; k++)
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      int lr = __float_as_int(__int_as_float(a[(i + 5) & (N - 1)]) + __int_as_float(a[(i + 9) & (N - 1)]));
      a[i] = __viaddmax_s32(lr, w0 + i, a[i]);
      a[i + 1] = __viaddmax_s32(lr, w0 + i + 1, a[i + 1]);
    }
  int s = 0; for (int i = 0; i < N; i++) s += a[i]; out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <typename T, typename K> int run(const char *name, K kern, T w, int rules_per_step, int blocks, int threads, void *out) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  kern<<<blocks, threads>>>((T *)out, w); CK(cudaDeviceSynchronize());
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
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  int blocks = p.multiProcessorCount * 16, threads = 128;
  void *out; CK(cudaMalloc(&out, (size_t)blocks * threads * 4));
  printf("%s, %d SMs, %d blocks of %d threads, %d steps x %d chains\n", p.name, p.multiProcessorCount, blocks, threads, IT, N);
  run<float>("f add+max", f_addmax, -0.25f, 1, blocks, threads, out);
  run<int>("i add+max", i_addmax, -3, 1, blocks, threads, out);
  run<int>("i viaddmax", i_dpx, -3, 1, blocks, threads, out);
  run<int>("i add3+max", i_add3max, -3, 1, blocks, threads, out);
  run<int>("i add3 max3", i_add3max3, -3, 2, blocks, threads, out);
  run<float>("f pair2", f_pair2, -0.25f, 1, blocks, threads, out);
  run<int>("i pair2", i_pair2, -3, 1, blocks, threads, out);
  run<int>("i pair2 mad", i_pair2mad, -3, 1, blocks, threads, out);
  run<int>("i pair2 fadd", i_pair2fadd, -3, 1, blocks, threads, out);
  run<float>("f fma", f_fma, 0.999f, 1, blocks, threads, out);
  return 0;
}
