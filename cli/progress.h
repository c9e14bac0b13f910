/* progress: the lines on stderr that say what a long wait is (README, "Progress"): reading a
 * grammar, writing its image, compiling kernels (the library's reports, util/progress.h) and
 * the parse itself (sentences, sentences/s).
 *
 * A stage gets a line once it has lasted CLI_PROGRESS_AFTER seconds (2; the environment
 * variable CKY_PROGRESS_AFTER=S sets it): on a terminal one line redrawn in place a few times
 * a second, and when the stage ends a last line that stays; elsewhere (a log) a line at that
 * moment and every 30 s, and the last line (the parse: the last line only). Shorter stages
 * print nothing. A command's --quiet gives the library no sink and skips the parse calls. */
#ifndef CKY_CLI_PROGRESS_H
#define CKY_CLI_PROGRESS_H

#include "../util/progress.h"

#define CLI_PROGRESS_AFTER 2.0

/* Start the lines of command `cmd` ("parse": "cky parse: ..."), the thread that redraws them
 * included. A start inside a started run (cky bench's end-to-end parse) only counts. */
void cli_progress_start(const char *cmd);

/* Stop what cli_progress_start started (the last stop joins the thread). */
void cli_progress_stop(void);

/* The sink of the library's reports: lines as above, or none when `quiet`. */
progress_sink cli_progress_sink(int quiet);

/* The parse: it begins, `n` more sentences are written, it ends (with its last line, or
 * without when not `summary`: the reader of the trees went away). */
void cli_progress_parse_begin(void);
void cli_progress_parse_add(long n);
void cli_progress_parse_end(int summary);

/* Erase the line being redrawn on the terminal, before another message (it comes back with
 * the next redraw). */
void cli_progress_clear(void);

#endif
