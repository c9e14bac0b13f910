/* gpu_device: device plumbing (see gpu.h). */
#include "gpu.h"

#include <stdio.h>
#include <string.h>

int gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no driver" error */
        return 0;
    }
    return n;
}

cky_status gpu_open(int id, gpu_device *out)
{
    int n = gpu_count();
    if (n == 0)
        return cky_fail(CKY_ERR_NO_DEVICE, "no CUDA device (no GPU, or no usable driver)");
    if (id < 0 || id >= n)
        return cky_fail(CKY_ERR_NO_DEVICE, "no CUDA device %d (this machine has %d: 0..%d)", id,
                        n, n - 1);
    GPU_CHECK(cudaSetDevice(id));
    struct cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, id));
    memset(out, 0, sizeof *out);
    out->id = id;
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->sm_count = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->total_memory = prop.totalGlobalMem;
    return CKY_OK;
}

cky_status gpu_kernel_load(const void *cubin, size_t size, const char *name, gpu_kernel *out)
{
    (void)size; /* a cubin is self-describing */
    memset(out, 0, sizeof *out);
    GPU_CHECK(cudaLibraryLoadData(&out->library, cubin, NULL, NULL, 0, NULL, NULL, 0));
    cky_status st = GPU_STATUS(cudaLibraryGetKernel(&out->kernel, out->library, name));
    struct cudaFuncAttributes attr;
    if (!st && !(st = GPU_STATUS(cudaFuncGetAttributes(&attr, (const void *)out->kernel))))
        out->max_threads = attr.maxThreadsPerBlock;
    if (st) {
        cudaLibraryUnload(out->library);
        memset(out, 0, sizeof *out);
    }
    return st;
}

cky_status gpu_kernel_launch(const gpu_kernel *k, dim3 grid, dim3 block, void **args,
                             cudaStream_t stream)
{
    GPU_CHECK(cudaLaunchKernel((const void *)k->kernel, grid, block, args, 0, stream));
    return CKY_OK;
}

void gpu_kernel_unload(gpu_kernel *k)
{
    if (k->library)
        cudaLibraryUnload(k->library);
    memset(k, 0, sizeof *k);
}
