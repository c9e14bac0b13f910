/* cky --version: the version and commit of this build, the CUDA runtime it links, the
 * driver and NVRTC it finds, and the GPUs (or that there is none). */
#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <stdio.h>

#include "../gpu/gpu.h"
#include "cli.h"

#ifndef CKY_COMMIT
#define CKY_COMMIT "unknown" /* the Makefile sets it from git */
#endif

/* "12.4" of a CUDA version number 12040, or "none" for 0. */
static const char *cuda_version(int v, char *buf, size_t size)
{
    if (v <= 0)
        return "none";
    snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
    return buf;
}

int cli_version(void)
{
    int runtime = 0, driver = 0, major = 0, minor = 0;
    char rb[16], db[16];
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    printf("cky %s (commit %s)\n", CKY_VERSION, CKY_COMMIT);
    printf("CUDA runtime %s (linked in), driver %s\n", cuda_version(runtime, rb, sizeof rb),
           cuda_version(driver, db, sizeof db));
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
        printf("NVRTC %d.%d\n", major, minor);
    int n = gpu_count();
    for (int k = 0; k < n; k++) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, k) == cudaSuccess)
            printf("GPU %d: %s (sm_%d%d, %d SMs, %.1f GiB)\n", k, p.name, p.major, p.minor,
                   p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
    }
    if (n == 0)
        printf("GPU: no GPU (no CUDA device, or no usable driver): the cpu and ref engines "
               "parse here\n");
    cudaGetLastError();
    return 0;
}
