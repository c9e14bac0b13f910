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

/* SIGINT and SIGTERM, as Unix programs keep them. One ignored when cky started (`nohup`,
 * `cky ... &` from a script) stays ignored throughout. Otherwise, from guard_signals_block
 * (before the grammar is loaded and the kernels compiled) to guard_signals_catch (before the
 * outputs are opened), one ends the process at once with exit status 128+N: nothing has
 * been written then but the kernel cache's temporary files, which later runs remove; the
 * signals are blocked on the calling thread meanwhile (so that the engine threads started
 * then never take them) and taken by a thread of guard's. From guard_signals_catch on, the
 * first one sets a flag (guard_interrupted) and makes a blocked read of the calling thread
 * return, so that the sentences already parsed are written; a second one kills the process
 * as usual. guard_signals_restore puts back the handling cky started with (cky bench goes
 * on after its end-to-end parse). `target` (the -o FILE, or NULL) is named in the note on
 * stderr after a signal: "interrupted: FILE left as it was" when it existed when the run
 * began, "interrupted: FILE not written" when not. */
void guard_signals_block(const char *cmd, const char *target);
void guard_signals_catch(void);
void guard_signals_restore(void);

/* The signal caught (SIGINT, SIGTERM) since guard_signals_catch, or 0. */
int guard_interrupted(void);

/* Print the note of an interrupted run on stderr (see guard_signals_block; nothing without
 * an output). */
void guard_note_interrupted(void);

/* Make sure the kernel cache can be used: a cache folder that cannot be created or written
 * is replaced by compiling in memory (CKY_CACHE=off for this process) with one warning. */
void guard_cache(const char *cmd);

/* Warn (for the first few lines only) about a NUL byte or invalid UTF-8 in input line
 * `line` of `src`, which the parser reads as U+FFFD. */
void guard_text(const char *cmd, const char *src, long line, const char *s, size_t n);

#endif
