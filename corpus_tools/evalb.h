/* evalb: bracket scoring exactly as `evalb -p COLLINS.prm GOLD TEST` (Sekine & Collins'
 * EVALB, 2006 version), following /work/shared/docs/evalb-spec.md: same sentences, same
 * numbers, same output on the given streams, same error messages, same exit status.
 *
 * COLLINS.prm is built in: labeled brackets; DELETE_LABEL TOP -NONE- , : `` '' .;
 * DELETE_LABEL_FOR_LENGTH -NONE-; EQ_LABEL ADVP PRT. Lines are read with EVALB's own
 * tree rules (not tree_read's): k-th gold line against k-th test line, several trees on
 * a line are one sentence, "(X)" is a childless phrase, stray text makes EVALB repeat
 * "Reading sentence" until its error limit stops it.
 *
 * Known differences, all where EVALB overflows fixed buffers or reads past them: here a
 * line of any length is one sentence (EVALB splits lines over 4999 bytes), and sentences,
 * words and labels have no size limits (EVALB: 200 words, 200 brackets, 99-byte words,
 * 29-byte labels); a second unmatched ')' is reported as EVALB does but closes nothing.
 *
 * Use: evalb_score_files() for files, evalb_score_trees() for trees in memory; or, to
 * score as sentences come, evalb_new / evalb_add_line or evalb_add_trees / evalb_finish.
 * All paths share one implementation (trees are written as lines and read back). */
#ifndef CKY_CORPUS_EVALB_H
#define CKY_CORPUS_EVALB_H

#include <stdio.h>

#include "../util/status.h"
#include "tree.h"

typedef struct evalb_params {
    int cutoff_len; /* -c: the second summary covers gold lengths <= this (40) */
    int max_error;  /* -e: the (max_error + 2)-th error message stops scoring (10) */
    int sentences;  /* 1: print EVALB's whole stdout (header, one row per sentence, totals
                       line, summary); 0: only the summary, from "=== Summary ===" on */
} evalb_params;

/* COLLINS.prm's settings: cutoff 40, 10 errors; summary only. */
evalb_params evalb_params_default(void);

/* The numbers of one summary section ("-- All --" or "-- len<=N --"). */
typedef struct evalb_summary {
    int sentences, errors, skips, valid;
    int gold_brackets, test_brackets, matched;
    double recall, precision; /* percent; 0 when the denominator is 0 */
    double fmeasure;          /* percent; NaN (printed "-nan") when recall + precision = 0 */
    double complete_match, average_crossing, no_crossing, two_or_less_crossing;
    double tagging_accuracy;
} evalb_summary;

typedef struct evalb evalb;

/* Start scoring. `out` gets EVALB's stdout (header and rows only if p->sentences), `err`
 * its stderr messages ("12 : Length unmatch (3|4)"); either may be NULL. */
cky_status evalb_new(const evalb_params *p, FILE *out, FILE *err, evalb **e);

/* Score the next gold line against the next test line (each one line of a
 * one-tree-per-line file, without the newline). Does nothing once stopped. */
void evalb_add_line(evalb *e, const char *gold, const char *test);

/* Score two trees as the lines tree_write_line() gives them (NULL is "(())", a skip). */
cky_status evalb_add_trees(evalb *e, const tree *gold, const tree *test);

/* End of input: `more_gold` / `more_test` say that the gold / test input had lines left
 * over (EVALB's "Number of lines unmatch" message). Prints the totals and summary unless
 * stopped. Returns EVALB's exit status: 0, or 1 when stopped by the error limit. */
int evalb_finish(evalb *e, int more_gold, int more_test);

/* The numbers of the "-- All --" section (cutoff = 0) or of the "-- len<=N --" one
 * (cutoff = 1), as they stand. */
void evalb_get_summary(const evalb *e, int cutoff, evalb_summary *s);

void evalb_free(evalb *e);

/* Score the files exactly as `evalb -p COLLINS.prm [-c N] [-e N] GOLD TEST`, plain or
 * gzipped ("-" for stdin). A file in which some line has unbalanced brackets and which
 * reads as a sequence of trees (a multi-line .mrg) is first converted in memory to one
 * tree per line with tree_write_line(), so its k-th tree is "line" k; any other file is
 * read line by line as EVALB does. *exit_status gets EVALB's exit status (0 or 1).
 * Returns CKY_ERR_IO (or NOMEM) when a file cannot be read; EVALB's own reading errors
 * are not failures here, they are reported on `err` as EVALB does. If `summary` is not
 * NULL it gets the numbers of the "All" section. */
cky_status evalb_score_files(const char *gold_path, const char *test_path,
                             const evalb_params *p, FILE *out, FILE *err, int *exit_status,
                             evalb_summary *summary);

/* The same for trees in memory: gold[i] against test[i] (entries may be NULL, written
 * "(())"); differing counts behave as files with differing numbers of lines. */
cky_status evalb_score_trees(const tree *const *gold, int ngold, const tree *const *test,
                             int ntest, const evalb_params *p, FILE *out, FILE *err,
                             int *exit_status, evalb_summary *summary);

#endif
