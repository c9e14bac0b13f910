/* decoder: the results every decoder fills (see decoder.h). */
#include "decoder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void parse_result_init(parse_result *r)
{
    memset(r, 0, sizeof *r);
    r->outcome = PARSE_OK;
    r->score = r->loglik = -INFINITY;
    r->bk_sentence = r->bk_tree = r->bk_confidence = -INFINITY;
}

void parse_result_clear(parse_result *r)
{
    tree_free(r->tree);
    free(r->error);
    free(r->level);
    for (int k = 0; k < r->nrest; k++)
        tree_free(r->rest[k]);
    free(r->rest);
    free(r->rest_score);
    parse_result_init(r);
}

void parse_result_fail(parse_result *r)
{
    r->outcome = PARSE_FAILED;
    r->error = strdup(cky_last_error());
}
