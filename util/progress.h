/* progress: how library code tells its caller about a step that can take long (reading a
 * grammar, writing its image, compiling kernels), without printing anything itself. The
 * caller decides what to show: the cky command turns the reports into lines on stderr
 * (cli/progress.h), the C API into calls of a binding's function (api/cky.h).
 *
 * A report is a change: a source opens a step of its stage (BEGIN), adds to its counts
 * (STEP: more kernels to do, kernels done, of them from the cache), and closes it (END).
 * Several sources may report on one stage at once (the GPU engine compiles four programs on
 * four threads, a pool's engines load theirs together), so a receiver adds the changes up
 * (progress_tally) and the stage is over when every source that opened it has closed it.
 * Reports come from any thread: the receiver's function must be thread-safe. */
#ifndef CKY_UTIL_PROGRESS_H
#define CKY_UTIL_PROGRESS_H

typedef enum progress_stage {
    PROGRESS_GRAMMAR, /* reading a grammar's files (`what`: the grammar given) */
    PROGRESS_IMAGE,   /* building the grammar's binary image and writing it to the cache */
    PROGRESS_COMPILE, /* compiling kernels (counts: kernels) */
    PROGRESS_NSTAGE
} progress_stage;

typedef enum progress_kind { PROGRESS_BEGIN, PROGRESS_STEP, PROGRESS_END } progress_kind;

typedef struct progress_event {
    progress_stage stage;
    progress_kind kind;
    const char *what; /* the stage's object for messages, or NULL */
    long total;       /* added to the things to do */
    long done;        /* added to the things done */
    long cached;      /* of those done, added to the ones served by the cache */
} progress_event;

/* Where reports go: fn(ctx, event), or nowhere when fn is NULL (a zeroed sink). */
typedef struct progress_sink {
    void (*fn)(void *ctx, const progress_event *e);
    void *ctx;
} progress_sink;

/* Send one report to s (nothing when s is NULL or has no function). */
void progress_report(const progress_sink *s, progress_stage stage, progress_kind kind,
                     const char *what, long total, long done, long cached);

/* What the reports of one stage add up to. */
typedef struct progress_tally {
    int open;          /* sources that began and have not ended */
    long total, done, cached;
} progress_tally;

/* Add e into t (the receiver serializes the calls). Returns 1 when e began the stage (no
 * source was open), 2 when it ended it (none is left open), else 0. A stage that begins
 * again starts from zero counts. */
int progress_tally_add(progress_tally *t, const progress_event *e);

#endif
