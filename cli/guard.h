/* guard: the safety checks of the `cky` commands that read sentences and write results:
 * paths checked before anything is written, SIGINT/SIGTERM caught so that finished work is
 * flushed, an unusable kernel cache replaced by in-memory compilation, suspicious input
 * bytes reported. Messages go to stderr as "cky CMD: ...". */
#ifndef CKY_CLI_GUARD_H
#define CKY_CLI_GUARD_H

#include <stddef.h>

/* Exit status of a run in which some sentences hit an internal error (each printed (()) and
 * named on stderr); 0 ok, 1 failure, 2 usage error as in cli.h; 128+N after signal N. */
#define GUARD_EXIT_INTERNAL 3

/* Usage checks of the files of a run: the grammar must not be a directory or a device, and no
 * output (NULL entries skipped) may be one of the inputs, the grammar's files or another
 * output. Returns 0, or the exit status after printing the error. */
int guard_check_paths(const char *cmd, const char *gram, const char *const *inputs,
                      int ninputs, const char *const *outputs, int noutputs);

/* Hold SIGINT and SIGTERM back (while threads that must not take them are started), then
 * catch them: the first one sets a flag (guard_interrupted) and makes a blocked read return;
 * a second one kills the process as usual. */
void guard_signals_block(void);
void guard_signals_catch(void);

/* The signal caught (SIGINT, SIGTERM), or 0. */
int guard_interrupted(void);

/* Make sure the kernel cache can be used: a cache folder that cannot be created or written
 * is replaced by compiling in memory (CKY_CACHE=off for this process) with one warning. */
void guard_cache(const char *cmd);

/* Warn (for the first few lines only) about a NUL byte or invalid UTF-8 in input line
 * `line` of `src`, which the parser reads as U+FFFD. */
void guard_text(const char *cmd, const char *src, long line, const char *s, size_t n);

#endif
