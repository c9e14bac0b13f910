/* gpu: device plumbing shared by the GPU engine, its kernels and the tests.
 *
 * cky links the CUDA runtime statically and never needs the driver at load time: on a
 * machine without a GPU or driver gpu_count() is 0 and nothing else here is called. All
 * device errors go through GPU_CHECK (util/gpu_check.h). */
#ifndef CKY_KERNELS_GPU_H
#define CKY_KERNELS_GPU_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "../util/gpu_check.h"

typedef struct gpu_device {
    int id;
    char name[256];
    int sm_count;
    int cc_major, cc_minor;
    size_t total_memory;
} gpu_device;

/* Number of usable CUDA devices: 0 when there is no GPU, no driver or a driver too old. */
int gpu_count(void);

/* Make device `id` current for the calling thread and describe it. CKY_ERR_NO_DEVICE if there
 * is no such device. */
cky_status gpu_open(int id, gpu_device *out);

/* A kernel of a cubin loaded into the current device's context. */
typedef struct gpu_kernel {
    cudaLibrary_t library;
    cudaKernel_t kernel;
    int max_threads; /* the most threads a block of it may have (launch bounds, registers) */
} gpu_kernel;

/* Load `cubin` (size bytes, e.g. from NVRTC) and look up its entry point `name`. */
cky_status gpu_kernel_load(const void *cubin, size_t size, const char *name, gpu_kernel *out);

/* Launch a loaded kernel; args as for cudaLaunchKernel. */
cky_status gpu_kernel_launch(const gpu_kernel *k, dim3 grid, dim3 block, void **args,
                             cudaStream_t stream);

void gpu_kernel_unload(gpu_kernel *k);

#endif
