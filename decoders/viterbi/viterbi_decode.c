/* decode_viterbi: the Viterbi decoder on the host (see decode.h): root score, best-tree
 * extraction (viterbi/) and un-annotation. */
#include <math.h>

#include "../decoders.h"

void decode_viterbi_chart(const grammar *g, const parser_options *o, const chart *c,
                          char *const *words, parse_result *r)
{
    double root = chart_post(c, 0, c->n)[g->sub_offset[0]];
    if (root == -INFINITY) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    tree *t;
    if (viterbi_extract(g, c, words, o->backtrace, &t)) {
        decode_fail(r);
        return;
    }
    r->outcome = PARSE_OK;
    r->score = root;
    r->tree = viterbi_unannotate(t);
}

void decode_viterbi_nodes(const grammar *g, const viterbi_node *nodes, int n,
                          char *const *words, double root, parse_result *r)
{
    if (root == -INFINITY) {
        r->outcome = PARSE_NO_PARSE;
        return;
    }
    tree *t;
    if (viterbi_array_to_tree(g, nodes, n, words, &t)) {
        decode_fail(r);
        return;
    }
    r->outcome = PARSE_OK;
    r->score = root;
    r->tree = viterbi_unannotate(t);
}
