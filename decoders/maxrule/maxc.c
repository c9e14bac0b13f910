/* maxc: the engines' max-c tables, the cpu engine's max-c run and the trees of node codes
 * (see maxc.h). */
#include "maxc.h"

#include <stdlib.h>
#include <string.h>

/* The block's layout: each array at an offset aligned to 16 bytes. */
typedef struct layout {
    size_t sub_offset, nsub, phrasal, bin_first, bin, row_l, row_r, row_rule, row_nz, nz_p, nz_w,
        un_first, un,
        uw, path, by_rows;
} layout;

static size_t take(size_t *at, size_t bytes)
{
    size_t here = *at;
    *at += (bytes + 15) / 16 * 16;
    return here;
}

static maxc_tables tables_at(const grammar *g, const layout *l, const char *base, int nrow)
{
    int most_rows = 0, most_rules = 0;
    for (int P = 0; P < g->nsym; P++) {
        int rules = g->binary_first[P + 1] - g->binary_first[P];
        most_rules = rules > most_rules ? rules : most_rules;
    }
    for (int b = 0; b < g->nbinary; b++)
        most_rows = g->binary[b].nrow > most_rows ? g->binary[b].nrow : most_rows;
    return (maxc_tables){
        .nsym = g->nsym,
        .nbin = g->nbinary,
        .nun = g->sum->n,
        .nrow = nrow,
        .most_rows = most_rows,
        .most_rules = most_rules,
        .sub_offset = (const int *)(base + l->sub_offset),
        .nsub = (const int *)(base + l->nsub),
        .phrasal = (const unsigned char *)(base + l->phrasal),
        .bin_first = (const int *)(base + l->bin_first),
        .bin = (const maxc_binary *)(base + l->bin),
        .row_l = (const int *)(base + l->row_l),
        .row_r = (const int *)(base + l->row_r),
        .row_rule = (const int *)(base + l->row_rule),
        .row_nz = (const int *)(base + l->row_nz),
        .nz_p = (const unsigned short *)(base + l->nz_p),
        .nz_w = (const float *)(base + l->nz_w),
        .un_first = (const int *)(base + l->un_first),
        .un = (const maxc_unary *)(base + l->un),
        .uw = (const float *)(base + l->uw),
        .path = (const int *)(base + l->path),
        .by_rows = (const int *)(base + l->by_rows),
    };
}

/* The symbols in decreasing order of their binary rules' rows (then by number). */
typedef struct sym_rows {
    long rows;
    int sym;
} sym_rows;

static int by_rows_cmp(const void *a, const void *b)
{
    const sym_rows *x = a, *y = b;
    return x->rows != y->rows ? (x->rows < y->rows ? 1 : -1) : x->sym - y->sym;
}

static cky_status sort_by_rows(const grammar *g, int *order)
{
    sym_rows *s = malloc((size_t)g->nsym * sizeof *s);
    if (!s)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int P = 0; P < g->nsym; P++) {
        s[P] = (sym_rows){0, P};
        for (int b = g->binary_first[P]; b < g->binary_first[P + 1]; b++)
            s[P].rows += g->binary[b].nrow;
    }
    qsort(s, (size_t)g->nsym, sizeof *s, by_rows_cmp);
    for (int P = 0; P < g->nsym; P++)
        order[P] = s[P].sym;
    free(s);
    return CKY_OK;
}

cky_status maxc_host_new(const grammar *g, maxc_host **out)
{
    const grammar_sum_closure *s = g->sum;
    if (!s)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: max-rule needs the sum closure", g->source);
    size_t rows = 0, nz = 0, uw = 0, ns = (size_t)g->nsym;
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        if (!r->prob)
            return cky_fail(CKY_ERR_UNSUPPORTED, "%s: max-rule needs the rules' linear "
                            "probabilities", g->source);
        rows += (size_t)r->nrow;
        for (size_t e = 0; e < (size_t)r->nrow * g->nsub[r->parent]; e++)
            nz += (float)r->prob[e] != 0;
    }
    for (int u = 0; u < s->n; u++)
        uw += (size_t)g->nsub[s->rule[u].parent] * g->nsub[s->rule[u].child];
    if (rows > (size_t)1 << 30 || nz > (size_t)1 << 30 || uw > (size_t)1 << 30)
        return cky_fail(CKY_ERR_UNSUPPORTED, "%s: %zu rule rows and %zu + %zu weights: too "
                        "many for the max-c tables' int offsets", g->source, rows, nz, uw);
    for (size_t P = 0; P < ns; P++)
        if (g->nsub[P] > 65536)
            return cky_fail(CKY_ERR_UNSUPPORTED, "%s: %d substates: too many for the max-c "
                            "tables", g->source, g->nsub[P]);
    maxc_host *h = calloc(1, sizeof *h);
    if (!h)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    layout lay, *l = &lay;
    size_t at = 0;
    l->sub_offset = take(&at, ns * sizeof(int));
    l->nsub = take(&at, ns * sizeof(int));
    l->phrasal = take(&at, ns);
    l->bin_first = take(&at, (ns + 1) * sizeof(int));
    l->bin = take(&at, (size_t)g->nbinary * sizeof(maxc_binary));
    l->row_l = take(&at, rows * sizeof(int));
    l->row_r = take(&at, rows * sizeof(int));
    l->row_rule = take(&at, rows * sizeof(int));
    l->row_nz = take(&at, (rows + 1) * sizeof(int));
    l->nz_p = take(&at, nz * sizeof(unsigned short));
    l->nz_w = take(&at, nz * sizeof(float));
    l->un_first = take(&at, (ns + 1) * sizeof(int));
    l->un = take(&at, (size_t)s->n * sizeof(maxc_unary));
    l->uw = take(&at, uw * sizeof(float));
    l->path = take(&at, ns * ns * sizeof(int));
    l->by_rows = take(&at, ns * sizeof(int));
    char *block = calloc(1, at);
    if (!block) {
        free(block);
        free(h);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the max-c tables");
    }
    memcpy(block + l->sub_offset, g->sub_offset, ns * sizeof(int));
    memcpy(block + l->nsub, g->nsub, ns * sizeof(int));
    memcpy(block + l->phrasal, g->phrasal, ns);
    memcpy(block + l->bin_first, g->binary_first, (ns + 1) * sizeof(int));
    memcpy(block + l->un_first, s->first, (ns + 1) * sizeof(int));
    memcpy(block + l->path, s->path, ns * ns * sizeof(int));
    maxc_binary *bin = (maxc_binary *)(block + l->bin);
    int *rl = (int *)(block + l->row_l), *rr = (int *)(block + l->row_r);
    int *rb = (int *)(block + l->row_rule);
    int *row_nz = (int *)(block + l->row_nz);
    unsigned short *nz_p = (unsigned short *)(block + l->nz_p);
    float *nz_w = (float *)(block + l->nz_w);
    size_t row = 0, x = 0;
    for (int b = 0; b < g->nbinary; b++) {
        const grammar_binary *r = &g->binary[b];
        size_t np = (size_t)g->nsub[r->parent];
        bin[b] = (maxc_binary){r->parent, r->left, r->right, r->nrow, (int)row};
        memcpy(rl + row, r->row_l, (size_t)r->nrow * sizeof(int));
        memcpy(rr + row, r->row_r, (size_t)r->nrow * sizeof(int));
        for (int q = 0; q < r->nrow; q++, row++) {
            rb[row] = b;
            row_nz[row] = (int)x;
            for (size_t p = 0; p < np; p++) {
                float w = (float)r->prob[q * np + p];
                if (w != 0) {
                    nz_p[x] = (unsigned short)p;
                    nz_w[x++] = w;
                }
            }
        }
    }
    row_nz[row] = (int)x;
    maxc_unary *un = (maxc_unary *)(block + l->un);
    float *v = (float *)(block + l->uw);
    x = 0;
    for (int u = 0; u < s->n; u++) {
        const grammar_sum_unary *r = &s->rule[u];
        size_t cells = (size_t)g->nsub[r->parent] * g->nsub[r->child];
        un[u] = (maxc_unary){r->parent, r->child, (int)x};
        for (size_t e = 0; e < cells; e++)
            v[x + e] = (float)r->prob[e];
        x += cells;
    }
    cky_status st = sort_by_rows(g, (int *)(block + l->by_rows));
    if (st) {
        free(block);
        free(h);
        return st;
    }
    h->block = block;
    h->bytes = at;
    h->t = tables_at(g, l, block, (int)rows);
    *out = h;
    return CKY_OK;
}

void maxc_host_free(maxc_host *h)
{
    if (!h)
        return;
    free(h->block);
    free(h);
}

maxc_tables maxc_tables_at(const maxc_host *h, const void *base)
{
    maxc_tables t = h->t;
    const char *from = h->block, *to = base;
#define MOVE(field) t.field = (void *)(to + ((const char *)h->t.field - from))
    MOVE(sub_offset);
    MOVE(nsub);
    MOVE(phrasal);
    MOVE(bin_first);
    MOVE(bin);
    MOVE(row_l);
    MOVE(row_r);
    MOVE(row_rule);
    MOVE(row_nz);
    MOVE(nz_p);
    MOVE(nz_w);
    MOVE(un_first);
    MOVE(un);
    MOVE(uw);
    MOVE(path);
    MOVE(by_rows);
#undef MOVE
    return t;
}

/* P's score over (i, j) before the cell's unaries: lexical, or the best binary candidate,
 * those that cannot come within MAXC_SLACK of the best so far skipped (maxc_rules.h). */
static void cell_binary(const maxc_tables *t, const maxc_layers *y, int n, int i, int j, int P,
                        const double *kids, int e0, double logx0)
{
    size_t at = chart_cell(n, i, j) * t->nsym + P;
    double best = MAXC_NEG_INF;
    int bk = -1, bb = -1;
    if (logx0 != MAXC_NEG_INF && j - i == 1 && !t->phrasal[P])
        best = maxc_lexical(t, y, 0, n, i, P, e0, logx0);
    else if (logx0 != MAXC_NEG_INF && j - i > 1 && t->phrasal[P]) {
        double upper = maxc_upper(t, y, 0, n, i, j, P, e0, logx0);
        for (int b = t->bin_first[P]; b < t->bin_first[P + 1]; b++) {
            int kmin, kmax;
            maxc_splits(t, b, i, j, &kmin, &kmax);
            for (int k = kmin; k <= kmax; k++) {
                double ks = maxc_binary_kids(t, kids, b, i, k, j);
                if (!maxc_may_beat(ks, upper, best))
                    continue;
                double gs = maxc_candidate(ks, maxc_binary_item(t, y, 0, n, i, k, j, b),
                                           maxc_binary_exp(y, 0, n, i, k, j, e0), logx0);
                if (gs > best) {
                    best = gs;
                    bk = k;
                    bb = b;
                }
            }
        }
    }
    y->bscore[at] = best;
    y->split[at] = bk;
    y->left[at] = bb < 0 ? -1 : t->bin[bb].left;
    y->right[at] = bb < 0 ? -1 : t->bin[bb].right;
}

/* P's final score over (i, j): its score before the unaries or its best closed unary. */
static void cell_unary(const maxc_tables *t, const maxc_layers *y, int n, int i, int j, int P,
                       int e0, double logx0)
{
    size_t at = chart_cell(n, i, j) * t->nsym;
    double best = y->bscore[at + P];
    int child = -1;
    if (logx0 != MAXC_NEG_INF && maxc_allowed(t, j - i, P))
        for (int u = t->un_first[P]; u < t->un_first[P + 1]; u++) {
            int C = t->un[u].child;
            double ks = y->bscore[at + C];
            if (ks == MAXC_NEG_INF || ks + MAXC_SLACK < best)
                continue;
            double gs = maxc_candidate(ks, maxc_unary_item(t, y, 0, n, i, j, u),
                                       y->eopre[chart_cell(n, i, j)] +
                                           y->epost[chart_cell(n, i, j)] - e0,
                                       logx0);
            if (gs > best) {
                best = gs;
                child = C;
            }
        }
    y->score[at + P] = best;
    y->child[at + P] = child;
}

cky_status maxc_cpu_run(const maxc_host *h, const sum_chart *c, int *nodes, int *count,
                        int *status, double *score)
{
    const maxc_tables *t = &h->t;
    size_t cells = chart_ncells(c->n) * (size_t)t->nsym;
    double *sc = malloc(2 * cells * sizeof *sc);
    int *ix = malloc(4 * cells * sizeof *ix);
    int *stack = malloc(3 * ((size_t)c->n + 1) * sizeof *stack);
    double *kids = malloc(((size_t)maxc_kids_size(t, c->n) + 1) * sizeof *kids);
    if (!sc || !ix || !stack || !kids) {
        free(sc);
        free(ix);
        free(stack);
        free(kids);
        return cky_fail(CKY_ERR_NOMEM, "out of memory for the max-c scores of %d words", c->n);
    }
    maxc_layers y = {c->nsub, c->post, c->opre, c->pre, c->epost, c->eopre, c->epre,
                     sc, sc + cells, ix, ix + cells, ix + 2 * cells, ix + 3 * cells};
    int e0;
    double logx0 = maxc_root(t, &y, 0, c->n, &e0);
    for (int d = 1; d <= c->n; d++)
        for (int i = 0; i + d <= c->n; i++) {
            maxc_stage(t, &y, 0, c->n, i, i + d, kids, 0, 1);
            for (int P = 0; P < t->nsym; P++)
                cell_binary(t, &y, c->n, i, i + d, P, kids, e0, logx0);
            for (int P = 0; P < t->nsym; P++)
                cell_unary(t, &y, c->n, i, i + d, P, e0, logx0);
        }
    *status = maxc_extract(t, &y, 0, c->n, nodes, count, stack);
    *score = y.score[chart_cell(c->n, 0, c->n) * t->nsym];
    free(sc);
    free(ix);
    free(stack);
    free(kids);
    return CKY_OK;
}

cky_status maxc_tree_build(const grammar *g, const int *nodes, int count, char *const *words,
                           tree **out)
{
    /* the open nodes and the children each still waits for */
    tree **open = malloc((size_t)(count ? count : 1) * sizeof *open);
    int *wait = malloc((size_t)(count ? count : 1) * sizeof *wait);
    tree *root = NULL;
    cky_status st = open && wait ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    int depth = 0;
    for (int m = 0; m < count && !st; m++) {
        int code = nodes[m];
        tree *t = tree_new(code < 0 ? words[-code - 1] : g->name[code / 4]);
        if (!t) {
            st = cky_fail(CKY_ERR_NOMEM, "out of memory building a tree");
            break;
        }
        if (depth == 0 && root) {
            tree_free(t);
            st = cky_fail(CKY_ERR_FORMAT, "maxc: more than one tree in the node codes");
            break;
        }
        if (depth == 0)
            root = t;
        else {
            tree_add_child(open[depth - 1], t);
            if (--wait[depth - 1] == 0)
                depth--;
        }
        if (code >= 0) {
            open[depth] = t;
            wait[depth++] = code % 4;
        }
    }
    if (!st && (depth != 0 || !root))
        st = cky_fail(CKY_ERR_FORMAT, "maxc: the node codes do not make one tree");
    free(open);
    free(wait);
    if (st) {
        tree_free(root);
        return st;
    }
    *out = root;
    return CKY_OK;
}
