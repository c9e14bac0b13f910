/* pipeline: cky parse's three stages on host threads, so that reading and writing overlap
 * the engine's work.
 *
 * A reader stage (the calling thread) fills a batch of sentences, a parse stage (a thread of
 * its own) runs parser_parse on it, and a writer stage (another thread) writes its results,
 * batch after batch in input order. The batches are a ring of `depth` slots allocated once,
 * each of room for `batch` sentences: a stage that gets ahead waits for a slot, so memory is
 * bounded by depth x batch sentences (and their trees) however long the input is. While the
 * engine parses batch k, the reader reads batch k + 1 (and beyond) and the writer writes
 * batch k - 1.
 *
 * What a stage does with a batch is the caller's (pipeline_stages): this module only moves
 * batches between the threads, runs the parser, and releases what a batch holds after it is
 * written or dropped. The two threads it starts block every signal, so that a signal reaches
 * the reader's thread (and interrupts a read that waits for input). */
#ifndef CKY_CLI_PIPELINE_H
#define CKY_CLI_PIPELINE_H

#include "../corpus_tools/tree.h"
#include "../parser/parser.h"

/* A batch of sentences, where they came from, and their results. */
typedef struct pipeline_batch {
    sentence *s;
    long *line;      /* input line (or tree) number of each sentence, for messages */
    long *item;      /* its number in the whole input: its line (a sentence of several lines:
                        its first), a tree's over every file read (names its picture) */
    tree **gold;     /* the gold tree of each sentence (--treebank), or NULL */
    parse_result *r; /* the results, set by the parse stage */
    const char *src; /* the input the sentences came from, for messages */
    int n;           /* sentences in the batch */
    int cap;         /* room (the `batch` of pipeline_run) */
} pipeline_batch;

/* What the reader stage says after filling a batch. */
typedef enum pipeline_read {
    PIPELINE_MORE, /* the batch (possibly empty: skipped) is ready; more input follows */
    PIPELINE_END,  /* the input is over; the batch (possibly empty) is the last */
    PIPELINE_STOP  /* stop now (a read error, a signal): the batch is dropped, the batches
                      before it are still parsed and written unless `stopped` says not */
} pipeline_read;

typedef struct pipeline_stages {
    void *ctx; /* passed to every callback */
    /* Reader (the calling thread): put up to b->cap sentences into b (b->n is 0 on entry;
     * set s, line, item, gold, src and n). It may hand over a batch that is not full: a
     * pipe's lines that have arrived. */
    pipeline_read (*read)(void *ctx, pipeline_batch *b);
    /* Parse stage (its thread), after parser_parse filled b->r: e.g. name the engines a pool
     * retired. May be NULL. */
    void (*parsed)(void *ctx, const pipeline_batch *b);
    /* Writer (its thread): write the results of b in order. It may take trees it keeps
     * (setting b->gold[k] or b->r[k].tree to NULL); the pipeline releases the rest. Returns
     * nonzero to stop the run (a write error): the reader stops, nothing more is written. */
    int (*write)(void *ctx, pipeline_batch *b);
    /* Parse stage, before each batch: nonzero drops the batches not parsed yet (a signal).
     * May be NULL. */
    int (*stopped)(void *ctx);
} pipeline_stages;

/* What a run did, for tests and measurements. */
typedef struct pipeline_stats {
    long batches;        /* batches parsed */
    long sentences;      /* sentences parsed */
    int slots;           /* the ring's depth */
    int most_in_use;     /* most slots that held sentences at once (at most `slots`) */
    double parse_seconds; /* time the parse stage spent in parser_parse */
    double idle_seconds;  /* time the parse stage waited for the reader (after the first
                             batch): the engine idle for want of input */
} pipeline_stats;

/* Run the stages with parser p over batches of at most `batch` sentences in a ring of
 * `depth` (at least 2) slots, until the reader says END or STOP or the writer stops the run;
 * stats (may be NULL) says what happened. parser_parse failing on a whole batch makes each of
 * its sentences PARSE_FAILED with the error. Returns CKY_OK, or CKY_ERR_NOMEM / CKY_ERR_IO
 * when the slots or the threads could not be made (nothing was read then). */
cky_status pipeline_run(parser *p, int batch, int depth, const pipeline_stages *stages,
                        pipeline_stats *stats);

#endif
