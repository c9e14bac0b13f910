/* status: the one error convention of cky's library code.
 *
 * Every library function that can fail returns a cky_status. On failure it records a
 * human-readable message (naming the file, line and problem where there is one) in a
 * thread-local buffer with cky_fail(); the caller prints cky_last_error() or adds context
 * with cky_fail() again. Library code never prints to stdout and never exits. */
#ifndef CKY_UTIL_STATUS_H
#define CKY_UTIL_STATUS_H

typedef enum cky_status {
    CKY_OK = 0,
    CKY_ERR_IO,          /* a file could not be opened, read or written */
    CKY_ERR_FORMAT,      /* malformed input: a grammar, treebank or sentence file */
    CKY_ERR_NOMEM,       /* an allocation failed (host or device) */
    CKY_ERR_ARG,         /* a caller passed an invalid argument or option */
    CKY_ERR_UNSUPPORTED, /* valid input that this program does not handle */
    CKY_ERR_LIMIT,       /* input beyond a fixed limit (sentence length, array size) */
    CKY_ERR_NO_DEVICE,   /* no usable GPU or driver */
    CKY_ERR_CUDA,        /* a CUDA runtime or driver call failed */
    CKY_ERR_COMPILE      /* NVRTC or the host compiler rejected generated code */
} cky_status;

/* Record a printf-style message for the current thread and return `status`.
 * The message may quote the previous one (cky_last_error()) to add context. */
cky_status cky_fail(cky_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The message recorded by the last cky_fail() on this thread ("" if none). */
const char *cky_last_error(void);

/* Abort with "FILE:LINE: invariant broken: COND: MESSAGE" on stderr: for broken invariants
 * (a bug), never for what a caller can handle (that returns a status). Always on. */
#define CKY_ASSERT(cond, ...)                                                              \
    do {                                                                                   \
        if (!(cond))                                                                       \
            cky_assert_fail(#cond, __FILE__, __LINE__, __VA_ARGS__);                       \
    } while (0)

void cky_assert_fail(const char *cond, const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

#endif
