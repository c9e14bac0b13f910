/* status: thread-local error messages for cky_status returns (see status.h). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

void cky_assert_fail(const char *cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: invariant broken: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
