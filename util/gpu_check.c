/* gpu_check: decoding CUDA runtime and NVRTC errors into cky_status (see gpu_check.h). */
#include "gpu_check.h"

cky_status gpu_check_cuda(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess)
        return CKY_OK;
    cky_status st = CKY_ERR_CUDA;
    if (e == cudaErrorMemoryAllocation) {
        /* not sticky, but kept as the runtime's last error: cleared here, or the next
         * launch's cudaGetLastError would report it again (a later sentence failing) */
        cudaGetLastError();
        st = CKY_ERR_NOMEM;
    }
    else if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
             e == cudaErrorInvalidDevice)
        st = CKY_ERR_NO_DEVICE;
    return cky_fail(st, "%s:%d: %s: %s: %s", file, line, call, cudaGetErrorName(e),
                    cudaGetErrorString(e));
}

cky_status gpu_check_nvrtc(nvrtcResult e, const char *call, const char *file, int line)
{
    if (e == NVRTC_SUCCESS)
        return CKY_OK;
    return cky_fail(CKY_ERR_COMPILE, "%s:%d: %s: %s", file, line, call,
                    nvrtcGetErrorString(e));
}
