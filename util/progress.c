/* progress: reports of long steps to the caller (see progress.h). */
#include "progress.h"

#include <stddef.h>

void progress_report(const progress_sink *s, progress_stage stage, progress_kind kind,
                     const char *what, long total, long done, long cached)
{
    if (!s || !s->fn)
        return;
    progress_event e = {stage, kind, what, total, done, cached};
    s->fn(s->ctx, &e);
}

int progress_tally_add(progress_tally *t, const progress_event *e)
{
    int began = 0;
    if (e->kind == PROGRESS_BEGIN && t->open++ == 0) {
        *t = (progress_tally){.open = 1};
        began = 1;
    }
    t->total += e->total;
    t->done += e->done;
    t->cached += e->cached;
    if (e->kind == PROGRESS_END && t->open > 0 && --t->open == 0)
        return 2;
    return began;
}
