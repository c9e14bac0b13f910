/* decode: the table of decoders (see decode.h). */
#include "decoders.h"

#include "maxrule/maxrule.h"

#include <stdlib.h>
#include <string.h>

static const decode_def decoders[] = {
    [PARSER_DECODER_VITERBI] = {"viterbi", 1u << ENGINE_PASS_INSIDE, decode_viterbi_chart,
                                NULL, NULL, NULL, NULL},
    [PARSER_DECODER_MAXRULE] = {"max-rule", 1u << ENGINE_PASS_INSIDE | 1u << ENGINE_PASS_OUTSIDE,
                                NULL, decode_maxrule_words, decode_maxrule_cpu,
                                decode_maxrule_gpu, maxrule_check_grammar},
};

const decode_def *decode_get(parser_decoder id)
{
    if ((unsigned)id >= sizeof decoders / sizeof *decoders ||
        (!decoders[id].chart && !decoders[id].words))
        return NULL;
    return &decoders[id];
}

void decode_fail(parse_result *r)
{
    r->outcome = PARSE_FAILED;
    r->error = strdup(cky_last_error());
}
