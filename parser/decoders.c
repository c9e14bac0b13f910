/* decoders: the table of decoders and the names of decoders, engines and prune modes (see
 * parser.h). A new decoder is one row here and its folder under decoders/; the pruned
 * decoder (decoders/pruned) stands beside the table: pruning picks it, the decoder asked
 * for is its final pass. */
#include "parser.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../decoders/maxrule/maxrule.h"
#include "../decoders/viterbi/viterbi.h"

static const decoder_def *const table[PARSER_NDECODER] = {
    [PARSER_DECODER_VITERBI] = &viterbi_decoder,
    [PARSER_DECODER_MAXRULE] = &maxrule_decoder,
};

static const char *const prune_name[] = {[PARSER_PRUNE_NONE] = "none",
                                         [PARSER_PRUNE_BERKELEY] = "berkeley",
                                         [PARSER_PRUNE_ACCURATE] = "accurate"};
#define NPRUNE ((int)(sizeof prune_name / sizeof *prune_name))

int parser_prune_find(const char *name, parser_prune *out)
{
    for (int k = 0; name && k < NPRUNE; k++)
        if (!strcmp(name, prune_name[k])) {
            *out = (parser_prune)k;
            return 1;
        }
    return 0;
}

const char *parser_prune_name(parser_prune p) { return (unsigned)p < NPRUNE ? prune_name[p] : "?"; }

const char *parser_prune_names(void) { return "berkeley, accurate, none"; }

static const char *const engine_name[] = {
    [PARSER_ENGINE_REF] = "ref", [PARSER_ENGINE_CPU] = "cpu", [PARSER_ENGINE_GPU] = "gpu"};
#define NENGINE ((int)(sizeof engine_name / sizeof *engine_name))

const decoder_def *parser_decoder_def(parser_decoder id)
{
    return (unsigned)id < PARSER_NDECODER ? table[id] : NULL;
}

int parser_decoder_find(const char *name, parser_decoder *out)
{
    for (int k = 0; name && k < PARSER_NDECODER; k++)
        if (!strcmp(name, table[k]->name)) {
            *out = (parser_decoder)k;
            return 1;
        }
    return 0;
}

int parser_engine_find(const char *name, parser_engine *out)
{
    for (int k = 0; name && k < NENGINE; k++)
        if (!strcmp(name, engine_name[k])) {
            *out = (parser_engine)k;
            return 1;
        }
    return 0;
}

const char *parser_engine_name(parser_engine e)
{
    return (unsigned)e < NENGINE ? engine_name[e] : "?";
}

/* The names joined by ", ", made once: decoders in table order, engines from gpu down. */
static char decoder_names[256], engine_names[64];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void make_names(void)
{
    for (int k = 0; k < PARSER_NDECODER; k++)
        snprintf(decoder_names + strlen(decoder_names),
                 sizeof decoder_names - strlen(decoder_names), "%s%s", k ? ", " : "",
                 table[k]->name);
    for (int k = NENGINE - 1; k >= 0; k--)
        snprintf(engine_names + strlen(engine_names), sizeof engine_names - strlen(engine_names),
                 "%s%s", k < NENGINE - 1 ? ", " : "", engine_name[k]);
}

const char *parser_decoder_names(void)
{
    pthread_once(&names_once, make_names);
    return decoder_names;
}

const char *parser_engine_names(void)
{
    pthread_once(&names_once, make_names);
    return engine_names;
}
