/* clock: wall-clock seconds for the stage timings of the engines, the compiler and the
 * commands. */
#ifndef CKY_UTIL_CLOCK_H
#define CKY_UTIL_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock (an arbitrary origin: use differences). */
static inline double clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
