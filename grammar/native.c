/* native: the Berkeley Parser's .gr file (gzip + Java serialization of ParserData) to a
 * grammar, following docs/berkeley-grammar-spec.md §1.13: symbols from numbs["tags"], nsub
 * and isGrammarTag from the Grammar, binaryRulesWithParent and closedViterbiRulesWithParent
 * in list order, the sum closure of the max-rule decoder (native_sum.c), the
 * SophisticatedLexicon's counts, and from them all the coarse-to-fine cascade (the split
 * trees and raw rules: native_cascade.c; the levels: cascade.c).
 *
 * Every node reached is checked for its class and array type, and every table length against
 * the substate counts. The work is bounded by a cell budget proportional to the stream size,
 * so a small file that references one huge rule table many times cannot make the loader
 * allocate or loop without end. */
#include "native.h"

#include <stdlib.h>
#include <string.h>

#include "cascade_src.h"
#include "internal.h"
#include "jser.h"
#include "lexicon_berkeley.h"

#define PKG "edu.berkeley.nlp.PCFGLA."
#define MAX_STATES 65536
#define BUDGET_PER_BYTE 64       /* table cells allowed per byte of the stream */
#define BUDGET_BASE (1u << 22)

/* Take n cells from the budget (native.h). */
cky_status native_spend(native_ctx *c, size_t n, const char *what)
{
    if (n > c->budget)
        return cky_fail(CKY_ERR_FORMAT, "%s: %s: tables larger than the file can describe",
                        c->source, what);
    c->budget -= n;
    return CKY_OK;
}

/* A zeroed scratch table of n doubles (n within the budget). */
static cky_status scratch(native_ctx *c, size_t n, double **out)
{
    if (n > c->cap_scratch) {
        double *p = realloc(c->scratch, n * sizeof *p);
        if (!p)
            return cky_fail(CKY_ERR_NOMEM, "%s: out of memory", c->source);
        c->scratch = p;
        c->cap_scratch = n;
    }
    memset(c->scratch, 0, n * sizeof *c->scratch);
    *out = c->scratch;
    return CKY_OK;
}

/* Field `name` of obj as an int in [lo, hi]. */
static cky_status get_int_in(const jser_node *obj, const char *name, int64_t lo, int64_t hi,
                             int *out)
{
    int64_t v;
    cky_status st = jser_get_int(obj, name, &v);
    if (st)
        return st;
    if (v < lo || v > hi)
        return cky_fail(CKY_ERR_FORMAT, "%s.%s = %lld, outside [%lld, %lld]",
                        jser_class_name(obj), name, (long long)v, (long long)lo, (long long)hi);
    *out = (int)v;
    return CKY_OK;
}

/* The object field `name` of obj, which must be an instance of `cls`. */
static cky_status get_instance(const jser_node *obj, const char *name, const char *cls,
                               const jser_node **out)
{
    cky_status st = jser_get_object(obj, name, out);
    if (st)
        return st;
    if (!jser_is_instance(*out, cls))
        return cky_fail(CKY_ERR_FORMAT, "%s.%s is %s, expected %s", jser_class_name(obj), name,
                        *out ? jser_class_name(*out) : "null", cls);
    return CKY_OK;
}

/* Field `name` of obj as an array of element type `elem` with at least `min` elements. */
cky_status native_array_field(const jser_node *obj, const char *name, char elem, size_t min,
                                  const jser_node **out)
{
    const jser_node *a;
    cky_status st = jser_get_object(obj, name, &a);
    if (!st)
        st = jser_get_array(a, elem, name, out);
    if (!st && (*out)->u.array.length < min)
        st = cky_fail(CKY_ERR_FORMAT, "%s has %zu elements, expected %zu", name,
                      (*out)->u.array.length, min);
    return st;
}

/* A double[] node of exactly n elements copied to dst; Java null leaves dst zero. */
static cky_status read_row(native_ctx *c, const jser_node *row, size_t n, const char *what,
                           double *dst)
{
    if (!row)
        return CKY_OK;
    const jser_node *a;
    cky_status st = jser_get_array(row, 'D', what, &a);
    if (st)
        return st;
    if (a->u.array.length != n)
        return cky_fail(CKY_ERR_FORMAT, "%s: %s has %zu values, expected %zu", c->source, what,
                        a->u.array.length, n);
    memcpy(dst, a->u.array.data, n * sizeof *dst);
    return CKY_OK;
}

/* A double[n1][n2] node (rows may be null) into dst[i * n2 + j]; dst zeroed by the caller. */
cky_status native_read_matrix(native_ctx *c, const jser_node *m, size_t n1, size_t n2,
                              const char *what, double *dst)
{
    const jser_node *a;
    cky_status st = jser_get_array(m, '[', what, &a);
    if (st)
        return st;
    if (a->u.array.length != n1)
        return cky_fail(CKY_ERR_FORMAT, "%s: %s has %zu rows, expected %zu", c->source, what,
                        a->u.array.length, n1);
    const jser_node *const *rows = a->u.array.data;
    for (size_t i = 0; i < n1; i++)
        if ((st = read_row(c, rows[i], n2, what, dst + i * n2)))
            return st;
    return CKY_OK;
}

/* ---- symbols ------------------------------------------------------------------------------ */

/* names[s] from the Numberer numbs["tags"]: intToObject maps MutableInteger(i) to String. */
static cky_status read_names(native_ctx *c, const jser_node *parser_data, const char **names)
{
    const jser_node *numbs, *tags = NULL, *int_to_object;
    const jser_node *const *kv;
    size_t n;
    cky_status st = jser_get_object(parser_data, "numbs", &numbs);
    if (!st)
        st = jser_get_map(numbs, "ParserData.numbs", &kv, &n);
    for (size_t i = 0; !st && i < n; i++)
        if (jser_string(kv[2 * i]) && !strcmp(jser_string(kv[2 * i]), "tags"))
            tags = kv[2 * i + 1];
    if (st)
        return st;
    if (!tags)
        return cky_fail(CKY_ERR_FORMAT, "ParserData.numbs has no \"tags\" Numberer");
    if ((st = jser_get_object(tags, "intToObject", &int_to_object)) ||
        (st = jser_get_map(int_to_object, "Numberer.intToObject", &kv, &n)))
        return st;
    for (size_t i = 0; i < n; i++) {
        int id;
        const char *name = jser_string(kv[2 * i + 1]);
        if ((st = get_int_in(kv[2 * i], "i", 0, INT32_MAX, &id)))
            return st;
        if (!name)
            return cky_fail(CKY_ERR_FORMAT, "the name of symbol %d is not a string", id);
        if (id >= c->nsym)
            continue; /* a label the grammar does not use */
        if (names[id])
            return cky_fail(CKY_ERR_FORMAT, "symbol %d is named twice", id);
        names[id] = name;
    }
    for (int s = 0; s < c->nsym; s++)
        if (!names[s])
            return cky_fail(CKY_ERR_FORMAT, "symbol %d has no name", s);
    return CKY_OK;
}

static cky_status add_symbols(native_ctx *c, const jser_node *parser_data, const jser_node *gr,
                              grammar_builder *b)
{
    const jser_node *nsub_arr, *tag_arr;
    cky_status st;
    if ((st = native_array_field(gr, "numSubStates", 'S', (size_t)c->nsym, &nsub_arr)) ||
        (st = native_array_field(gr, "isGrammarTag", 'Z', (size_t)c->nsym, &tag_arr)))
        return st;
    const char **names = calloc((size_t)c->nsym, sizeof *names);
    char *buf = NULL;
    if (!names)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    st = read_names(c, parser_data, names);
    const int16_t *nsub = nsub_arr->u.array.data;
    const unsigned char *phrasal = tag_arr->u.array.data;
    for (int s = 0; !st && s < c->nsym; s++) {
        size_t len = strlen(names[s]);
        free(buf);
        if (!(buf = strdup(names[s]))) {
            st = cky_fail(CKY_ERR_NOMEM, "out of memory");
            break;
        }
        if (len >= 2 && !strcmp(buf + len - 2, "^g"))
            buf[len - 2] = '\0';
        c->nsub[s] = nsub[s];
        st = builder_add_symbol(b, buf, nsub[s], s == 0 || phrasal[s]);
    }
    free(buf);
    free(names);
    return st;
}

/* ---- rules -------------------------------------------------------------------------------- */

/* The rule list of parent P in a List[] field (null = no rules). */
cky_status native_rule_list(const jser_node *lists, int P, const char *what,
                            const jser_node *const **rules, size_t *n)
{
    const jser_node *l = ((const jser_node *const *)lists->u.array.data)[P];
    if (!l) {
        *n = 0;
        return CKY_OK;
    }
    return jser_get_list(l, what, rules, n);
}

/* A child state field of a rule, as a symbol id. */
cky_status native_rule_state(native_ctx *c, const jser_node *rule, const char *field, int *out)
{
    return get_int_in(rule, field, 0, c->nsym - 1, out);
}

/* The non-null (l, r) rows of BinaryRule.scores (outer: double[nl][nr][np]) in ascending
 * order: *nrow rows (l, r) and their np values each (malloc'ed). */
static cky_status read_binary_rows(native_ctx *c, const jser_node *outer, size_t nr, size_t np,
                                   int *nrow, int **row_l, int **row_r, double **prob)
{
    const jser_node *const *lrows = outer->u.array.data;
    size_t nl = outer->u.array.length, n = 0;
    cky_status st;
    *row_l = *row_r = NULL;
    *prob = NULL;
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0;
        for (size_t l = 0; l < nl; l++) {
            const jser_node *m;
            if (!lrows[l])
                continue;
            if ((st = jser_get_array(lrows[l], '[', "BinaryRule.scores[l]", &m)))
                return st;
            if (m->u.array.length != nr)
                return cky_fail(CKY_ERR_FORMAT, "%s: BinaryRule.scores[l] has %zu rows, "
                                "expected %zu", c->source, m->u.array.length, nr);
            const jser_node *const *rrows = m->u.array.data;
            for (size_t r = 0; r < nr; r++) {
                if (!rrows[r])
                    continue;
                if (pass == 1) {
                    (*row_l)[k] = (int)l;
                    (*row_r)[k] = (int)r;
                    if ((st = read_row(c, rrows[r], np, "BinaryRule.scores[l][r]",
                                       *prob + k * np)))
                        return st;
                }
                k++;
            }
        }
        if (pass == 0) {
            n = k;
            *row_l = malloc((n ? n : 1) * sizeof **row_l);
            *row_r = malloc((n ? n : 1) * sizeof **row_r);
            *prob = malloc((n ? n : 1) * np * sizeof **prob);
            if (!*row_l || !*row_r || !*prob)
                return cky_fail(CKY_ERR_NOMEM, "out of memory");
        }
    }
    *nrow = (int)n;
    return CKY_OK;
}

static cky_status add_binaries(native_ctx *c, const jser_node *gr, grammar_builder *b)
{
    const jser_node *lists;
    cky_status st = native_array_field(gr, "binaryRulesWithParent", 'L', (size_t)c->nsym, &lists);
    for (int P = 0; !st && P < c->nsym; P++) {
        const jser_node *const *rules;
        size_t n;
        if ((st = native_rule_list(lists, P, "binaryRulesWithParent", &rules, &n)))
            break;
        for (size_t i = 0; !st && i < n; i++) {
            int parent, L, R, nrow = 0, *row_l = NULL, *row_r = NULL;
            const jser_node *scores, *outer;
            double *prob = NULL;
            if (!jser_is_instance(rules[i], PKG "BinaryRule"))
                return cky_fail(CKY_ERR_FORMAT, "binaryRulesWithParent[%d] holds %s", P,
                                rules[i] ? jser_class_name(rules[i]) : "null");
            if ((st = native_rule_state(c, rules[i], "parentState", &parent)) ||
                (st = native_rule_state(c, rules[i], "leftChildState", &L)) ||
                (st = native_rule_state(c, rules[i], "rightChildState", &R)))
                break;
            if (parent != P)
                return cky_fail(CKY_ERR_FORMAT, "binaryRulesWithParent[%d] holds a rule of "
                                                "parent %d", P, parent);
            size_t nl = (size_t)c->nsub[L], nr = (size_t)c->nsub[R], np = (size_t)c->nsub[P];
            if ((st = native_spend(c, nl * nr * np, "binary rule")) ||
                (st = jser_get_object(rules[i], "scores", &scores)) ||
                (st = jser_get_array(scores, '[', "BinaryRule.scores", &outer)))
                break;
            if (outer->u.array.length != nl)
                return cky_fail(CKY_ERR_FORMAT, "binary rule %d -> %d %d: %zu left substates, "
                                "expected %zu", P, L, R, outer->u.array.length, nl);
            st = read_binary_rows(c, outer, nr, np, &nrow, &row_l, &row_r, &prob);
            if (!st)
                st = cascade_src_add_rows(c->cascade, P, L, R, nrow, row_l, row_r, prob);
            if (!st) {
                st = builder_adopt_rows(b, P, L, R, nrow, row_l, row_r, prob);
            } else {
                free(row_l);
                free(row_r);
                free(prob);
            }
        }
    }
    return st;
}

static cky_status add_unaries(native_ctx *c, const jser_node *gr, grammar_builder *b)
{
    const jser_node *lists;
    cky_status st =
        native_array_field(gr, "closedViterbiRulesWithParent", 'L', (size_t)c->nsym, &lists);
    for (int P = 0; !st && P < c->nsym; P++) {
        const jser_node *const *rules;
        size_t n;
        if ((st = native_rule_list(lists, P, "closedViterbiRulesWithParent", &rules, &n)))
            break;
        for (size_t i = 0; !st && i < n; i++) {
            int parent, C;
            const jser_node *scores;
            double *prob;
            if (!jser_is_instance(rules[i], PKG "UnaryRule"))
                return cky_fail(CKY_ERR_FORMAT, "closedViterbiRulesWithParent[%d] holds %s", P,
                                rules[i] ? jser_class_name(rules[i]) : "null");
            if ((st = native_rule_state(c, rules[i], "parentState", &parent)) ||
                (st = native_rule_state(c, rules[i], "childState", &C)))
                break;
            if (parent != P)
                return cky_fail(CKY_ERR_FORMAT, "closedViterbiRulesWithParent[%d] holds a rule "
                                                "of parent %d", P, parent);
            size_t nc = (size_t)c->nsub[C], np = (size_t)c->nsub[P];
            if ((st = native_spend(c, nc * np, "unary rule")) || (st = scratch(c, nc * np, &prob)) ||
                (st = jser_get_object(rules[i], "scores", &scores)) ||
                (st = native_read_matrix(c, scores, nc, np, "UnaryRule.scores", prob)))
                break;
            st = builder_add_unary(b, P, C, prob);
        }
    }
    return st;
}

/* ---- lexicon ------------------------------------------------------------------------------ */

/* An optional boolean field that must be false if present. */
static cky_status require_false(const jser_node *obj, const char *name)
{
    char type;
    const jser_value *v = jser_field_value(obj, name, &type);
    if (v && type == 'Z' && v->i)
        return cky_fail(CKY_ERR_UNSUPPORTED, "SophisticatedLexicon.%s = true is not supported",
                        name);
    return CKY_OK;
}

static cky_status lexicon_params(const jser_node *lex, lexicon_berkeley_params *p)
{
    const jser_node *smooth;
    int64_t level;
    cky_status st;
    if ((st = require_false(lex, "isConditional")) || (st = require_false(lex, "logarithmMode")) ||
        (st = jser_get_double(lex, "totalTokens", &p->total_tokens)) ||
        (st = jser_get_double(lex, "totalUnseenTokens", &p->total_unseen_tokens)) ||
        (st = jser_get_double(lex, "smoothInUnknownsThreshold",
                              &p->smooth_in_unknowns_threshold)) ||
        (st = jser_get_int(lex, "unknownLevel", &level)) ||
        (st = native_array_field(lex, "smooth", 'D', 2, &smooth)))
        return st;
    p->unknown_level = level < 0 || level > 5 ? -1 : (int)level;
    memcpy(p->smooth, smooth->u.array.data, 2 * sizeof(double));
    return CKY_OK;
}

/* diffWeights of a SmoothAcrossParentBits smoother (NULL for NoSmoothing). */
static cky_status smoother_weights(const jser_node *lex, const jser_node **weights)
{
    const jser_node *sm;
    cky_status st = jser_get_object(lex, "smoother", &sm);
    if (st)
        return st;
    const char *cls = jser_class_name(sm);
    const char *dot = strrchr(cls, '.');
    const char *base = dot ? dot + 1 : cls;
    *weights = NULL;
    if (!strcmp(base, "NoSmoothing"))
        return CKY_OK;
    if (strcmp(base, "SmoothAcrossParentBits") != 0)
        return cky_fail(CKY_ERR_UNSUPPORTED, "lexicon smoother %s is not supported",
                        sm ? cls : "null");
    return jser_get_object(sm, "diffWeights", weights);
}

/* tagCounter, unseenTagCounter and smoother weights of every state. */
static cky_status lexicon_tags(native_ctx *c, const jser_node *lex, lexicon_berkeley *lb)
{
    const jser_node *tc, *utc, *dw = NULL;
    cky_status st;
    if ((st = native_array_field(lex, "tagCounter", '[', (size_t)c->nsym, &tc)) ||
        (st = native_array_field(lex, "unseenTagCounter", '[', (size_t)c->nsym, &utc)) ||
        (st = smoother_weights(lex, &dw)) ||
        (dw && (st = jser_get_array(dw, '[', "SmoothAcrossParentBits.diffWeights", &dw))))
        return st;
    if (dw && dw->u.array.length < (size_t)c->nsym)
        return cky_fail(CKY_ERR_FORMAT, "diffWeights has %zu states, expected %d",
                        dw->u.array.length, c->nsym);
    for (int t = 0; t < c->nsym; t++) {
        size_t n = (size_t)c->nsub[t];
        const jser_node *w = dw ? ((const jser_node *const *)dw->u.array.data)[t] : NULL;
        double *buf;
        if ((st = native_spend(c, n * n + 2 * n, "lexicon tag")) ||
            (st = scratch(c, n * n + 2 * n, &buf)) ||
            (st = read_row(c, ((const jser_node *const *)tc->u.array.data)[t], n,
                           "tagCounter[tag]", buf)) ||
            (st = read_row(c, ((const jser_node *const *)utc->u.array.data)[t], n,
                           "unseenTagCounter[tag]", buf + n)) ||
            (w && (st = native_read_matrix(c, w, n, n, "diffWeights[tag]", buf + 2 * n))) ||
            (st = lexicon_berkeley_set_tag(lb, t, buf, buf + n, w ? buf + 2 * n : NULL)))
            return st;
    }
    return CKY_OK;
}

/* wordCounter.entries: String -> java.lang.Double. */
static cky_status lexicon_word_counts(native_ctx *c, const jser_node *lex, lexicon_berkeley *lb)
{
    const jser_node *counter, *entries;
    const jser_node *const *kv;
    size_t n;
    cky_status st;
    if ((st = jser_get_object(lex, "wordCounter", &counter)) ||
        (st = jser_get_object(counter, "entries", &entries)) ||
        (st = jser_get_map(entries, "wordCounter.entries", &kv, &n)) ||
        (st = native_spend(c, n, "wordCounter")))
        return st;
    for (size_t i = 0; i < n; i++) {
        const char *word = jser_string(kv[2 * i]);
        double count;
        if (!word)
            return cky_fail(CKY_ERR_FORMAT, "a wordCounter key is not a string");
        if ((st = jser_get_double(kv[2 * i + 1], "value", &count)) ||
            (st = lexicon_berkeley_add_word(lb, word, count)))
            return st;
    }
    return CKY_OK;
}

/* (unseen)wordToTagCounters: HashMap<String, double[nsub]>[numStates]. */
static cky_status lexicon_tag_words(native_ctx *c, const jser_node *lex, const char *field,
                                    int unseen, lexicon_berkeley *lb)
{
    const jser_node *maps;
    cky_status st = native_array_field(lex, field, 'L', (size_t)c->nsym, &maps);
    for (int t = 0; !st && t < c->nsym; t++) {
        const jser_node *map = ((const jser_node *const *)maps->u.array.data)[t];
        const jser_node *const *kv;
        size_t n;
        if (!map)
            continue;
        if ((st = jser_get_map(map, field, &kv, &n)) ||
            (st = native_spend(c, n * (size_t)c->nsub[t], field)))
            break;
        for (size_t i = 0; !st && i < n; i++) {
            const char *word = jser_string(kv[2 * i]);
            const jser_node *counts;
            if (!word)
                return cky_fail(CKY_ERR_FORMAT, "a %s key is not a string", field);
            if ((st = jser_get_array(kv[2 * i + 1], 'D', field, &counts)))
                break;
            if (counts->u.array.length != (size_t)c->nsub[t])
                return cky_fail(CKY_ERR_FORMAT, "%s[%d][%s] has %zu values, expected %d", field,
                                t, word, counts->u.array.length, c->nsub[t]);
            st = lexicon_berkeley_add_tag_word(lb, t, word, counts->u.array.data, unseen);
        }
    }
    return st;
}

static cky_status read_lexicon(native_ctx *c, const jser_node *parser_data,
                               grammar_lexicon **out)
{
    const jser_node *lex;
    lexicon_berkeley_params p;
    cky_status st = jser_get_object(parser_data, "lex", &lex);
    if (st)
        return st;
    if (!jser_is_instance(lex, PKG "SophisticatedLexicon"))
        return cky_fail(CKY_ERR_UNSUPPORTED, "lexicon class %s is not supported (only "
                        "SophisticatedLexicon)", lex ? jser_class_name(lex) : "null");
    if ((st = lexicon_params(lex, &p)))
        return st;
    if (p.unknown_level < 0)
        return cky_fail(CKY_ERR_FORMAT, "SophisticatedLexicon.unknownLevel out of range");
    lexicon_berkeley *lb = lexicon_berkeley_new(c->nsym, c->nsub, &p);
    if (!lb)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    if ((st = lexicon_tags(c, lex, lb)) || (st = lexicon_word_counts(c, lex, lb)) ||
        (st = lexicon_tag_words(c, lex, "wordToTagCounters", 0, lb)) ||
        (st = lexicon_tag_words(c, lex, "unseenWordToTagCounters", 1, lb))) {
        lexicon_berkeley_free(lb);
        return st;
    }
    return lexicon_berkeley_finish(lb, out);
}

/* ---- entry points ------------------------------------------------------------------------- */

static cky_status build(native_ctx *c, const jser_node *root, grammar **out)
{
    const jser_node *gr;
    grammar_lexicon *lex = NULL;
    cky_status st;
    if (!jser_is_instance(root, PKG "ParserData"))
        return cky_fail(CKY_ERR_FORMAT, "the top-level object is %s, not a Berkeley ParserData",
                        root && root->kind == JSER_OBJECT ? jser_class_name(root) : "no object");
    if ((st = get_instance(root, "gr", PKG "Grammar", &gr)) ||
        (st = get_int_in(gr, "numStates", 1, MAX_STATES, &c->nsym)))
        return st;
    if (!(c->nsub = calloc((size_t)c->nsym, sizeof *c->nsub)))
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    grammar_builder *b = builder_new();
    if (!b)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    c->cascade->nsym = c->nsym;
    c->cascade->nsub = c->nsub;
    if ((st = add_symbols(c, root, gr, b)) || (st = add_binaries(c, gr, b)) ||
        (st = add_unaries(c, gr, b)) || (st = native_read_sum(c, gr, b)) ||
        (st = native_read_cascade(c, gr, c->cascade)) || (st = read_lexicon(c, root, &lex))) {
        builder_free(b);
        return st;
    }
    free(c->scratch); /* before builder_finish, which needs the memory */
    c->scratch = NULL;
    c->cap_scratch = 0;
    if ((st = builder_finish(b, lex, c->source, out)))
        return st;
    if ((st = cascade_build(c->cascade, *out, &(*out)->cascade))) {
        grammar_free(*out);
        *out = NULL;
    }
    return st;
}

/* The grammar of a parsed graph; the graph is freed. */
static cky_status build_from_graph(jser_graph *js, grammar **out)
{
    const char *source = jser_source(js);
    cascade_src src = {0};
    native_ctx c = {source, 0, NULL, BUDGET_BASE + BUDGET_PER_BYTE * jser_stream_size(js), NULL,
                    0, &src};
    cky_status st = build(&c, jser_root(js), out);
    if (st && !strstr(cky_last_error(), source))
        cky_fail(st, "%s: %s", source, cky_last_error());
    cascade_src_free(&src);
    free(c.nsub);
    free(c.scratch);
    jser_free(js);
    return st;
}

cky_status grammar_load_native_stream(const unsigned char *data, size_t len, const char *source,
                                      grammar **out)
{
    jser_graph *js;
    cky_status st = jser_parse(data, len, source, &js);
    return st ? st : build_from_graph(js, out);
}

cky_status grammar_load_native(const char *path, grammar **out)
{
    jser_graph *js;
    cky_status st = jser_read_file(path, &js);
    return st ? st : build_from_graph(js, out);
}
