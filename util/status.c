/* status: thread-local error messages for cky_status returns (see status.h). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[1024];

cky_status cky_fail(cky_status status, const char *fmt, ...)
{
    char buf[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap); /* buf, not last_message: fmt may quote it */
    va_end(ap);
    memcpy(last_message, buf, sizeof buf);
    return status;
}

const char *cky_last_error(void) { return last_message; }

const char *cky_status_name(cky_status status)
{
    switch (status) {
    case CKY_OK: return "ok";
    case CKY_ERR_IO: return "I/O error";
    case CKY_ERR_FORMAT: return "format error";
    case CKY_ERR_NOMEM: return "out of memory";
    case CKY_ERR_ARG: return "invalid argument";
    case CKY_ERR_UNSUPPORTED: return "unsupported";
    case CKY_ERR_LIMIT: return "limit exceeded";
    case CKY_ERR_NO_DEVICE: return "no GPU";
    case CKY_ERR_CUDA: return "CUDA error";
    case CKY_ERR_COMPILE: return "compile error";
    }
    return "unknown error";
}
