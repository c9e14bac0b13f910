/* team: a few host threads that share the loops of one job, for work made of many short
 * loops (the cells of one span length of one sentence): the caller hands each loop to the
 * team, whose members (the caller among them) take its indices in turn, and gets it back
 * done. Between loops the helpers spin, then yield, waiting for the next one: a team is for
 * cores that would be idle otherwise, and lives for one job. */
#ifndef CKY_UTIL_TEAM_H
#define CKY_UTIL_TEAM_H

#include "status.h"

typedef struct team team;

/* A team of `size` members: the caller and size - 1 helper threads (fewer where no more can
 * be started: the loops only take longer). size <= 1: *out = NULL, which team_for takes as
 * the caller alone. */
cky_status team_start(int size, team **out);

/* Members, the caller included (1 for NULL). */
int team_size(const team *t);

/* fn(arg, k, member) for k = 0 .. n - 1, each k once, on the members (member 0 .. size - 1
 * names the one running it, for scratch space of its own); returns when every k is done,
 * its writes visible to the caller. fn must not fail. */
void team_for(team *t, long n, void (*fn)(void *arg, long k, int member), void *arg);

/* Stop and join the helpers (NULL: nothing). */
void team_stop(team *t);

#endif
