/* decode_maxrule: the max-rule decoder in the ref engine (see decode.h): maxrule/ runs its
 * own double-precision passes (inside, outside, max-c) and extraction for one sentence. */
#include <math.h>

#include "../maxrule/maxrule.h"
#include "decode.h"

void decode_maxrule_words(const grammar *g, const parser_options *o, char *const *words, int n,
                          parse_result *r)
{
    maxrule_result m;
    if (maxrule_parse(g, words, n, NULL, &m)) {
        decode_fail(r);
        return;
    }
    r->loglik = m.loglik;
    if (!m.tree) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    r->outcome = PARSE_OK;
    r->score = m.score;
    r->tree = m.tree;
}
