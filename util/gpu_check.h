/* gpu_check: the one check macro for CUDA runtime and NVRTC calls.
 *
 *     GPU_CHECK(cudaMalloc(&p, n));        // returns a cky_status from the enclosing function
 *     GPU_CHECK(nvrtcCompileProgram(...));
 *
 * On failure it records "FILE:LINE: CALL: ERROR NAME: ERROR TEXT" with cky_fail and returns
 * CKY_ERR_CUDA (CKY_ERR_NOMEM for out-of-memory, CKY_ERR_NO_DEVICE for no device or driver,
 * CKY_ERR_COMPILE for NVRTC; an out-of-memory error is cleared from the runtime's last
 * error, so that the next call does not see it again). The result type picks the decoder (C11 _Generic), so one macro
 * serves both APIs; C only (the .cu launchers return cudaError_t to C callers). */
#ifndef CKY_UTIL_GPU_CHECK_H
#define CKY_UTIL_GPU_CHECK_H

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "status.h"

cky_status gpu_check_cuda(cudaError_t e, const char *call, const char *file, int line);
cky_status gpu_check_nvrtc(nvrtcResult e, const char *call, const char *file, int line);

#define GPU_STATUS(call)                                                                   \
    _Generic((call), cudaError_t: gpu_check_cuda, nvrtcResult: gpu_check_nvrtc)(           \
        (call), #call, __FILE__, __LINE__)

#define GPU_CHECK(call)                                                                    \
    do {                                                                                   \
        cky_status gpu_check_st_ = GPU_STATUS(call);                                       \
        if (gpu_check_st_ != CKY_OK)                                                       \
            return gpu_check_st_;                                                          \
    } while (0)

#endif
