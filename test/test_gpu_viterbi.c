/* The GPU Viterbi (decoders/viterbi/viterbi_kernels.h) against the CPU exact extraction
 * viterbi_extract_array on the same float charts: every node of every sentence equal, status
 * 1 for sentences without a parse, status 2 where the CPU finds the chart inconsistent. The
 * charts come from the reference parser in CHART_FLOAT mode (bit-identical to the CPU engine's,
 * test_cpu.c), on real grammars and on a small grammar of integer scores built so that ties
 * abound (every tie-break rule is exercised). The gpu_viterbi tests skip without a GPU; the
 * viterbi_tables tests check the host table builder everywhere. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/internal.h"
#include "../gpu/gpu.h"
#include "../engines/ref/ref.h"
#include "../corpus_tools/sentence.h"
#include "../util/io.h"
#include "../decoders/viterbi/viterbi.h"
#include "../decoders/viterbi/viterbi_gpu.h"

#define MAXSENT 64

/* ---- inputs ---------------------------------------------------------------------------- */

/* Append to out[*n] the first `want` dev sentences of minlen .. maxlen words. */
static void dev_sentences(int want, int minlen, int maxlen, sentence *out, int *n)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(CKY_SHARED "/data/ptb-sample/dev.txt", &in), CKY_OK);
    char *line;
    size_t len;
    int got = 0;
    while (got < want && *n < MAXSENT && !io_lines_next(in, &line, &len) && line) {
        sentence s;
        cr_assert_eq(sentence_from_line(line, len, &s), CKY_OK);
        if (s.n >= minlen && s.n <= maxlen) {
            out[(*n)++] = s;
            got++;
        } else {
            sentence_free(&s);
        }
    }
    io_lines_close(in);
    cr_assert_eq(got, want, "dev.txt has too few sentences of %d..%d words", minlen, maxlen);
}

/* Deterministic pseudo-random numbers (a 64-bit LCG). */
static unsigned next_rand(unsigned long long *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(*state >> 33);
}

/* ---- the tie grammar: integer scores, so that equal sums are exactly equal ---------------- */

enum { T_ROOT, T_X, T_Y, T_AX, T_A, T_B, T_NSYM };

/* "a": A_0 = A_1 = -1; "b": B = -1; "c": A_0 = -2, B = -1. */
static cky_status tie_score(const grammar_lexicon *lex, const grammar *g, const char *word,
                            int loc, const unsigned char *tags, double *out)
{
    (void)tags; /* every tag */
    int a = g->sub_offset[T_A], b = g->sub_offset[T_B];
    if (!strcmp(word, "a")) {
        out[a] = -1;
        out[a + 1] = -1;
    } else if (!strcmp(word, "b")) {
        out[b] = -1;
    } else if (!strcmp(word, "c")) {
        out[a] = -2;
        out[b] = -1;
    }
    return CKY_OK;
}

static void tie_free(grammar_lexicon *lex) { free(lex); }

/* A random weight from {0, -1, -2} or, one time in `ninf`, -inf. */
static double tie_weight(unsigned long long *rng, int ninf)
{
    unsigned x = next_rand(rng);
    if (x % ninf == 0)
        return -INFINITY;
    return -(double)((x / ninf) % 3);
}

static grammar *tie_grammar(unsigned long long seed)
{
    grammar_builder *b = builder_new();
    const char *names[] = {"ROOT", "X", "Y", "@X", "A", "B"};
    int nsub[] = {1, 3, 2, 2, 2, 1}, phrasal[] = {1, 1, 1, 1, 0, 0};
    for (int s = 0; s < T_NSYM; s++)
        cr_assert_eq(builder_add_symbol(b, names[s], nsub[s], phrasal[s]), CKY_OK);
    static const int bin[][3] = {{T_X, T_X, T_Y},  {T_X, T_Y, T_X},  {T_X, T_AX, T_Y},
                                 {T_X, T_A, T_A},  {T_Y, T_Y, T_Y},  {T_Y, T_B, T_X},
                                 {T_Y, T_A, T_Y},  {T_AX, T_X, T_X}, {T_AX, T_X, T_A}};
    static const int un[][2] = {{T_ROOT, T_X}, {T_ROOT, T_Y}, {T_X, T_Y},  {T_X, T_A},
                                {T_Y, T_B},    {T_Y, T_A},    {T_Y, T_AX}, {T_AX, T_B}};
    double ones[64];
    for (int k = 0; k < 64; k++)
        ones[k] = 1.0;
    for (size_t r = 0; r < sizeof bin / sizeof *bin; r++)
        cr_assert_eq(builder_add_binary(b, bin[r][0], bin[r][1], bin[r][2], ones), CKY_OK);
    for (size_t r = 0; r < sizeof un / sizeof *un; r++)
        cr_assert_eq(builder_add_unary(b, un[r][0], un[r][1], ones), CKY_OK);
    grammar_lexicon *lex = malloc(sizeof *lex);
    lex->score = tie_score;
    lex->free = tie_free;
    grammar *g;
    cr_assert_eq(builder_finish(b, lex, "ties", &g), CKY_OK, "%s", cky_last_error());
    /* every score was log 1 = 0: make them small integers, some -inf */
    unsigned long long rng = seed;
    for (int r = 0; r < g->nbinary; r++) {
        grammar_binary *br = &g->binary[r];
        for (long k = 0; k < (long)br->nrow * g->nsub[br->parent]; k++)
            br->score[k] = tie_weight(&rng, 7);
    }
    for (int u = 0; u < g->nunary; u++) {
        grammar_unary *ur = &g->unary[u];
        for (long k = 0; k < (long)g->nsub[ur->child] * g->nsub[ur->parent]; k++)
            ur->score[k] = tie_weight(&rng, 5);
    }
    return g;
}

/* `count` random sentences of 1 .. maxlen words over {a, b, c}. */
static int tie_sentences(unsigned long long seed, int count, int maxlen, sentence *out)
{
    unsigned long long rng = seed;
    for (int k = 0; k < count; k++) {
        char line[256];
        int n = 1 + (int)(next_rand(&rng) % maxlen), len = 0;
        for (int w = 0; w < n; w++)
            len += snprintf(line + len, sizeof line - len, "%s%c", w ? " " : "",
                            "abc"[next_rand(&rng) % 3]);
        cr_assert_eq(sentence_from_line(line, (size_t)len, &out[k]), CKY_OK);
    }
    return count;
}

/* ---- the GPU run and the comparison ------------------------------------------------------ */

static void skip_without_gpu(void)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the GPU Viterbi is not tested here");
    gpu_device dev;
    cr_assert_eq(gpu_open(0, &dev), CKY_OK, "%s", cky_last_error());
}

#define CUDA_OK(call) cr_assert_eq((call), cudaSuccess, "%s", #call)

/* Run the GPU Viterbi over the batch of charts c[0 .. nsent): nodes[node0[s] ...], status[s].
 * The caller frees *nodes_out, *node0_out and *status_out. */
static void gpu_extract(const grammar *g, chart *const *c, int nsent, viterbi_node **nodes_out,
                        int **node0_out, int **status_out)
{
    int nsub = g->nsub_total;
    int *n = malloc(nsent * sizeof *n), *node0 = malloc(nsent * sizeof *node0);
    long long *cell0 = malloc(nsent * sizeof *cell0);
    long long ncells = 0;
    int nnodes = 0;
    for (int s = 0; s < nsent; s++) {
        cr_assert_eq(c[s]->nsub, nsub);
        n[s] = c[s]->n;
        cell0[s] = ncells;
        node0[s] = nnodes;
        ncells += (long long)chart_ncells(n[s]);
        nnodes += 2 * n[s] - 1;
    }
    size_t nval = (size_t)ncells * nsub;
    float *pre = malloc(nval * sizeof *pre), *post = malloc(nval * sizeof *post);
    for (int s = 0; s < nsent; s++) {
        size_t base = (size_t)cell0[s] * nsub, m = chart_ncells(n[s]) * nsub;
        for (size_t k = 0; k < m; k++) {
            pre[base + k] = (float)c[s]->pre[k];
            post[base + k] = (float)c[s]->post[k];
            cr_assert((double)pre[base + k] == c[s]->pre[k], "chart values are floats");
            cr_assert((double)post[base + k] == c[s]->post[k], "chart values are floats");
        }
    }

    gpu_rule_tables *t;
    cr_assert_eq(gpu_rule_tables_new(g, &t), CKY_OK, "%s", cky_last_error());
    float *d_pre, *d_post;
    int *d_n, *d_node0, *d_status;
    long long *d_cell0;
    viterbi_node *d_nodes;
    CUDA_OK(cudaMalloc((void **)&d_pre, nval * sizeof *pre));
    CUDA_OK(cudaMalloc((void **)&d_post, nval * sizeof *post));
    CUDA_OK(cudaMalloc((void **)&d_n, nsent * sizeof *n));
    CUDA_OK(cudaMalloc((void **)&d_node0, nsent * sizeof *node0));
    CUDA_OK(cudaMalloc((void **)&d_cell0, nsent * sizeof *cell0));
    CUDA_OK(cudaMalloc((void **)&d_status, nsent * sizeof(int)));
    CUDA_OK(cudaMalloc((void **)&d_nodes, nnodes * sizeof(viterbi_node)));
    CUDA_OK(cudaMemcpy(d_pre, pre, nval * sizeof *pre, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_post, post, nval * sizeof *post, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_n, n, nsent * sizeof *n, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_node0, node0, nsent * sizeof *node0, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_cell0, cell0, nsent * sizeof *cell0, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(d_status, 0xff, nsent * sizeof(int)));       /* -1: never written */
    CUDA_OK(cudaMemset(d_nodes, 0xff, nnodes * sizeof(viterbi_node)));

    cr_assert_eq(viterbi_gpu_run(t, d_pre, d_post, nsub, nsent, d_n, d_cell0, d_node0, d_nodes,
                              d_status, 0, 0),
                 CKY_OK, "%s", cky_last_error());
    CUDA_OK(cudaDeviceSynchronize());

    viterbi_node *nodes = malloc((nnodes ? nnodes : 1) * sizeof *nodes);
    int *status = malloc(nsent * sizeof *status);
    CUDA_OK(cudaMemcpy(nodes, d_nodes, nnodes * sizeof *nodes, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(status, d_status, nsent * sizeof *status, cudaMemcpyDeviceToHost));
    cudaFree(d_pre);
    cudaFree(d_post);
    cudaFree(d_n);
    cudaFree(d_node0);
    cudaFree(d_cell0);
    cudaFree(d_status);
    cudaFree(d_nodes);
    gpu_rule_tables_free(t);
    free(pre);
    free(post);
    free(n);
    free(cell0);
    *nodes_out = nodes;
    *node0_out = node0;
    *status_out = status;
}

/* Compare the GPU results with viterbi_extract_array sentence by sentence; counts of each
 * outcome into ok[3] (may be NULL). */
static void compare_with_cpu(const grammar *g, chart *const *c, int nsent, int ok[3])
{
    viterbi_node *nodes;
    int *node0, *status;
    gpu_extract(g, c, nsent, &nodes, &node0, &status);
    int count[3] = {0, 0, 0};
    for (int s = 0; s < nsent; s++) {
        int n = c[s]->n;
        viterbi_node *want = malloc((2 * n - 1) * sizeof *want);
        cky_status st = viterbi_extract_array(g, c[s], want);
        int expect = st == CKY_OK                                      ? VITERBI_GPU_OK
                     : chart_post(c[s], 0, n)[g->sub_offset[0]] == -INFINITY ? VITERBI_GPU_NO_PARSE
                                                                      : VITERBI_GPU_INCONSISTENT;
        if (expect == VITERBI_GPU_NO_PARSE)
            cr_assert_eq(st, CKY_ERR_ARG);
        cr_assert_eq(status[s], expect, "sentence %d (%d words): GPU status %d, CPU %d (%s)", s,
                     n, status[s], expect, st ? cky_last_error() : "ok");
        count[expect]++;
        if (expect == VITERBI_GPU_OK) {
            const viterbi_node *got = nodes + node0[s];
            for (int p = 0; p < 2 * n - 1; p++)
                cr_assert(got[p].width == want[p].width && got[p].top_sym == want[p].top_sym &&
                              got[p].top_sub == want[p].top_sub &&
                              got[p].bot_sym == want[p].bot_sym &&
                              got[p].bot_sub == want[p].bot_sub,
                          "sentence %d (%d words) node %d: GPU {%d, %s_%d, %s_%d}, CPU {%d, "
                          "%s_%d, %s_%d}",
                          s, n, p, got[p].width,
                          got[p].top_sym >= 0 && got[p].top_sym < g->nsym
                              ? g->name[got[p].top_sym] : "?",
                          got[p].top_sub,
                          got[p].bot_sym >= 0 && got[p].bot_sym < g->nsym
                              ? g->name[got[p].bot_sym] : "?",
                          got[p].bot_sub, want[p].width, g->name[want[p].top_sym],
                          want[p].top_sub, g->name[want[p].bot_sym], want[p].bot_sub);
        }
        free(want);
    }
    if (ok)
        memcpy(ok, count, sizeof count);
    free(nodes);
    free(node0);
    free(status);
}

/* Parse every sentence with the reference parser in CHART_FLOAT mode. */
static void parse_all(const grammar *g, sentence *s, int nsent, chart **c)
{
    for (int k = 0; k < nsent; k++)
        cr_assert_eq(ref_parse(g, s[k].words, s[k].n, CHART_FLOAT, &c[k]), CKY_OK, "%s",
                     cky_last_error());
}

static void free_all(sentence *s, chart **c, int nsent)
{
    for (int k = 0; k < nsent; k++) {
        chart_free(c[k]);
        if (s)
            sentence_free(&s[k]);
    }
}

/* Dev sentences of a real grammar: `nshort` of 1..12 words, `nlong` of 20..25, and a chart
 * without a parse (all -inf) in the middle of the batch. */
static void check_dev(const char *spec, int nshort, int nlong)
{
    skip_without_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(spec, &g), CKY_OK, "%s", cky_last_error());
    sentence s[MAXSENT];
    int n = 0;
    dev_sentences(nshort, 1, 12, s, &n);
    dev_sentences(nlong, 20, 25, s, &n);
    chart *c[MAXSENT + 1];
    parse_all(g, s, n, c);
    /* a 5-word chart with every score -inf, placed second */
    chart *none;
    cr_assert_eq(chart_new(5, g->nsub_total, CHART_FLOAT, &none), CKY_OK);
    memmove(c + 2, c + 1, (n - 1) * sizeof *c);
    c[1] = none;
    int ok[3];
    compare_with_cpu(g, c, n + 1, ok);
    cr_assert_eq(ok[VITERBI_GPU_NO_PARSE], 1);
    cr_assert_geq(ok[VITERBI_GPU_OK], n - 1, "real grammars parse the dev sentences");
    chart_free(none);
    memmove(c + 1, c + 2, (n - 1) * sizeof *c);
    free_all(s, c, n);
    grammar_free(g);
}

TestSuite(gpu_viterbi, .timeout = 300);

Test(gpu_viterbi, matches_cpu_sample_sm1_text)
{
    check_dev(CKY_SHARED "/grammars/sample-sm1/sample-sm1", 6, 2);
}

Test(gpu_viterbi, matches_cpu_sample_sm3_native)
{
    check_dev(CKY_SHARED "/grammars/sample-sm3/sample-sm3.gr", 5, 2);
}

/* Integer scores: ties between splits, left ids, right ids, unary children and identity. */
Test(gpu_viterbi, tie_break_matches_cpu)
{
    skip_without_gpu();
    int total[3] = {0, 0, 0};
    for (unsigned long long seed = 1; seed <= 4; seed++) {
        grammar *g = tie_grammar(seed * 7919);
        sentence s[48];
        int n = tie_sentences(seed * 104729, 48, 16, s);
        chart *c[48];
        parse_all(g, s, n, c);
        int ok[3];
        compare_with_cpu(g, c, n, ok);
        for (int k = 0; k < 3; k++)
            total[k] += ok[k];
        free_all(s, c, n);
        grammar_free(g);
    }
    cr_assert_gt(total[VITERBI_GPU_OK], 50, "most random sentences parse (%d did)",
                 total[VITERBI_GPU_OK]);
}

/* Charts nudged by one float ulp here and there: whatever the CPU makes of them (another
 * tree, or an inconsistent chart), the GPU must make the same. */
Test(gpu_viterbi, perturbed_charts_match_cpu)
{
    skip_without_gpu();
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence s[MAXSENT];
    int n = 0;
    dev_sentences(4, 5, 15, s, &n);
    chart *base[MAXSENT];
    parse_all(g, s, n, base);
    enum { COPIES = 12 };
    chart *c[MAXSENT * COPIES];
    int m = 0;
    unsigned long long rng = 12345;
    for (int k = 0; k < n; k++) {
        size_t size = chart_ncells(base[k]->n) * g->nsub_total;
        for (int copy = 0; copy < COPIES; copy++) {
            chart *x;
            cr_assert_eq(chart_new(base[k]->n, g->nsub_total, CHART_FLOAT, &x), CKY_OK);
            memcpy(x->pre, base[k]->pre, size * sizeof *x->pre);
            memcpy(x->post, base[k]->post, size * sizeof *x->post);
            if (copy == 0) {
                /* the root post score one ulp up: nothing can match it */
                double *root = &chart_post(x, 0, x->n)[g->sub_offset[0]];
                *root = nextafterf((float)*root, INFINITY);
            } else {
                /* nudge finite scores along the CPU's tree: up or down one ulp */
                viterbi_node *t = malloc((2 * x->n - 1) * sizeof *t);
                cr_assert_eq(viterbi_extract_array(g, x, t), CKY_OK);
                for (int nudge = 0; nudge < 1 + copy % 3; nudge++) {
                    int p = (int)(next_rand(&rng) % (2 * x->n - 1)), i = 0;
                    for (int q = 0; q < p; q++) /* leftmost word of node p */
                        if (t[q].width == 1)
                            i++;
                    int id = next_rand(&rng) % 2 ? g->sub_offset[t[p].top_sym] + t[p].top_sub
                                                 : g->sub_offset[t[p].bot_sym] + t[p].bot_sub;
                    double *layer = next_rand(&rng) % 2 ? chart_pre(x, i, i + t[p].width)
                                                        : chart_post(x, i, i + t[p].width);
                    if (isfinite(layer[id]))
                        layer[id] = nextafterf((float)layer[id],
                                               next_rand(&rng) % 2 ? INFINITY : -INFINITY);
                }
                free(t);
            }
            c[m++] = x;
        }
    }
    int ok[3];
    compare_with_cpu(g, c, m, ok);
    cr_assert_geq(ok[VITERBI_GPU_INCONSISTENT], n, "each root nudge is inconsistent");
    free_all(NULL, c, m);
    free_all(s, base, n);
    grammar_free(g);
}

/* ---- the host table builder (no GPU needed) ---------------------------------------------- */

/* Every finite grammar entry is in the tables once, with its float weight; each parent's
 * entries strictly ascending; the symbol table inverts sub_offset. */
static void check_tables(const grammar *g)
{
    gpu_rules c;
    cr_assert_eq(gpu_rules_build(g, &c), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(c.nsub, g->nsub_total);
    cr_assert_eq(c.nsym, g->nsym);
    cr_assert_eq(c.root, g->sub_offset[0]);
    cr_assert_eq(c.nbinary, grammar_count_binary(g));
    cr_assert_eq(c.nunary, grammar_count_unary(g));
    cr_assert_eq(c.bin_first[0], 0);
    cr_assert_eq(c.bin_first[c.nsub], c.nbinary);
    cr_assert_eq(c.un_first[0], 0);
    cr_assert_eq(c.un_first[c.nsub], c.nunary);
    for (int s = 0; s < g->nsym; s++) {
        cr_assert_eq(c.sub_offset[s], g->sub_offset[s]);
        for (int k = 0; k < g->nsub[s]; k++)
            cr_assert_eq(c.sym[g->sub_offset[s] + k], s);
    }
    for (int p = 0; p < c.nsub; p++) {
        cr_assert_leq(c.bin_first[p], c.bin_first[p + 1]);
        cr_assert_leq(c.un_first[p], c.un_first[p + 1]);
        for (int e = c.bin_first[p] + 1; e < c.bin_first[p + 1]; e++)
            cr_assert(c.bin_left[e - 1] < c.bin_left[e] ||
                          (c.bin_left[e - 1] == c.bin_left[e] &&
                           c.bin_right[e - 1] < c.bin_right[e]),
                      "binary entries of %d ascending by (left, right)", p);
        for (int e = c.un_first[p] + 1; e < c.un_first[p + 1]; e++)
            cr_assert_lt(c.un_child[e - 1], c.un_child[e]);
    }
    /* each grammar entry found where it belongs (entries are unique, counts are equal: so
     * the tables are exactly the grammar's finite entries) */
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        int np = g->nsub[r->parent];
        for (int row = 0; row < r->nrow; row++)
            for (int p = 0; p < np; p++) {
                double w = r->score[(size_t)row * np + p];
                if (w == -INFINITY)
                    continue;
                int par = g->sub_offset[r->parent] + p, l = g->sub_offset[r->left] + r->row_l[row],
                    rr = g->sub_offset[r->right] + r->row_r[row], found = 0;
                for (int e = c.bin_first[par]; e < c.bin_first[par + 1] && !found; e++)
                    if (c.bin_left[e] == l && c.bin_right[e] == rr) {
                        cr_assert_eq(c.bin_w[e], (float)w);
                        found = 1;
                    }
                cr_assert(found, "binary entry %d -> %d %d missing", par, l, rr);
            }
    }
    for (int u = 0; u < g->nunary; u++) {
        const grammar_unary *r = &g->unary[u];
        int np = g->nsub[r->parent];
        for (int ci = 0; ci < g->nsub[r->child]; ci++)
            for (int p = 0; p < np; p++) {
                double w = r->score[(size_t)ci * np + p];
                if (w == -INFINITY)
                    continue;
                int par = g->sub_offset[r->parent] + p, ch = g->sub_offset[r->child] + ci,
                    found = 0;
                for (int e = c.un_first[par]; e < c.un_first[par + 1] && !found; e++)
                    if (c.un_child[e] == ch) {
                        cr_assert_eq(c.un_w[e], (float)w);
                        found = 1;
                    }
                cr_assert(found, "unary entry %d -> %d missing", par, ch);
            }
    }
    gpu_rules_free(&c);
    cr_assert_null(c.bin_first);
}

Test(viterbi_tables, csr_matches_sample_sm1)
{
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK, "%s",
                 cky_last_error());
    check_tables(g);
    grammar_free(g);
}

Test(viterbi_tables, csr_matches_tie_grammar)
{
    grammar *g = tie_grammar(7919);
    check_tables(g);
    grammar_free(g);
}
