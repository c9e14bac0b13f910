/* output: a result file that appears whole or not at all.
 *
 * output_open writes to a temporary file beside the target, .NAME.tmp-PID-HOST~XXXXXX, which
 * output_commit puts in place only when the run succeeded; output_abort removes it, leaving
 * the target as it was. It is refused where a shell's > would fail: a target that exists and
 * that the user may not write. "-" is stdout (nothing is renamed); a target that exists and
 * is not a regular file (a device, a FIFO) is written directly; symbolic links are followed
 * (the file they name gets the output, created if it is not there yet; the links stay). The
 * temporary file is renamed onto the target, unless the target has other hard links or
 * another owner: then it is copied into the target at the end, which keeps its inode (every
 * link sees the output, as with >) and its owner; so is a target the user may write in a
 * folder the user may not (the temporary file is then in $TMPDIR, else /tmp). Temporary
 * files of killed runs for the same target (their process gone, or a day old) are removed
 * by output_open. A target ending in ".gz" is written gzip-compressed. Every error names
 * the file and the system's reason. */
#ifndef CKY_UTIL_OUTPUT_H
#define CKY_UTIL_OUTPUT_H

#include <stdio.h>

#include "status.h"

typedef struct output output;

/* Open `path` for writing (see above). Fails with a message naming the path and the reason
 * (a directory, a missing folder, no permission). */
cky_status output_open(const char *path, output **out);

/* The stream to write to (valid until commit or abort). */
FILE *output_file(output *o);

/* The path given to output_open ("stdout" for "-"), for messages. */
const char *output_name(const output *o);

/* Flush: CKY_ERR_IO naming the file and the reason if anything written so far failed. */
cky_status output_flush(output *o);

/* The errno of the first failed write (EPIPE: the reader of a pipe is gone), or 0. */
int output_error(const output *o);

/* Finish: flush, close, rename the temporary file onto the target. Frees o either way; on
 * failure the temporary file is removed and the target left as it was. */
cky_status output_commit(output *o);

/* Drop what was written (the target is left as it was) and free o. NULL is a no-op. */
void output_abort(output *o);

/* 1 if paths a and b both name the same existing regular file (after symbolic links). */
int output_same_file(const char *a, const char *b);

#endif
