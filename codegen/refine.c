/* codegen refine: local moves that lower the rows a partition's parts load (internal to
 * codegen/; see codegen_refine_parts in internal.h).
 *
 * A part (a major cube or a code block) loads each distinct row of each axis it uses; the
 * cost of a partition is the weighted sum over parts of those distinct rows (for major cubes
 * the numerator of the reload rate). A move takes a fiber, the rules of one part sharing one
 * row x of one axis, to another part of the same group that already uses x: the rows only
 * the fiber used leave the source, the fiber's rows the target lacks join it. A move is made
 * when it lowers the cost (strictly: the passes end) and keeps the target within its size
 * cap. Fibers are visited in a fixed order (axis, then part, then row) and targets in
 * ascending order, the first best kept, so the result depends on nothing but the input. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int rule_row(const codegen_rule *r, int axis)
{
    return axis == 0 ? r->p : axis == 1 ? r->l : r->r;
}

typedef struct refiner {
    const codegen_rule *rule;
    long n;
    int dim[3], off[3], width; /* pins[part * width + off[axis] + row] */
    int *part, npart;
    const int *gfirst, *gend; /* [part] -> its group's parts [gfirst, gend) */
    int weight[3];
    int *pins;
    long *size, *cap;
    long *idx, *tmp;           /* rule indices sorted by (part, row) */
    long *fiber;               /* the current fiber's rules */
    int *cnt;                  /* [off[b] + row]: the fiber's rules with that row */
    int *rows[3];              /* distinct rows of the fiber per axis */
} refiner;

/* Sort the rule indices by (part, row of `axis`): two stable counting passes. */
static void refiner_sort(refiner *z, int axis, long *count)
{
    long nb = z->dim[axis] > z->npart ? z->dim[axis] : z->npart;
    memset(count, 0, (size_t)(nb + 1) * sizeof *count);
    for (long i = 0; i < z->n; i++)
        count[rule_row(&z->rule[i], axis) + 1]++;
    for (long b = 0; b < nb; b++)
        count[b + 1] += count[b];
    for (long i = 0; i < z->n; i++)
        z->tmp[count[rule_row(&z->rule[i], axis)]++] = i;
    memset(count, 0, (size_t)(nb + 1) * sizeof *count);
    for (long i = 0; i < z->n; i++)
        count[z->part[i] + 1]++;
    for (long b = 0; b < nb; b++)
        count[b + 1] += count[b];
    for (long k = 0; k < z->n; k++) {
        long i = z->tmp[k];
        z->idx[count[z->part[i]]++] = i;
    }
}

/* Try to move fiber z->fiber[0..nf) (part s, row x of axis a) to the part of the group
 * that lowers the cost most, by at least min_gain (which may be negative: then by at most
 * *budget more, which the move spends); 1 if moved. */
static int refiner_move(refiner *z, int s, int a, int x, long nf, long min_gain, long *budget)
{
    int nrow[3] = {0, 0, 0};
    for (long k = 0; k < nf; k++)
        for (int b = 0; b < 3; b++) {
            int y = z->off[b] + rule_row(&z->rule[z->fiber[k]], b);
            if (z->cnt[y]++ == 0)
                z->rows[b][nrow[b]++] = y;
        }
    long freed = 0;
    const int *ps = z->pins + (long)s * z->width;
    for (int b = 0; b < 3; b++)
        for (int k = 0; k < nrow[b]; k++)
            freed += z->weight[b] * (ps[z->rows[b][k]] == z->cnt[z->rows[b][k]]);
    int best = -1;
    long best_gain = min_gain - 1;
    if (best_gain < -*budget - 1)
        best_gain = -*budget - 1;
    for (int t = z->gfirst[s]; t < z->gend[s] && freed > best_gain; t++) {
        const int *pt = z->pins + (long)t * z->width;
        if (t == s || pt[z->off[a] + x] == 0 || z->size[t] + nf > z->cap[t])
            continue;
        long added = 0;
        for (int b = 0; b < 3 && freed - added > best_gain; b++)
            for (int k = 0; k < nrow[b]; k++)
                added += z->weight[b] * (pt[z->rows[b][k]] == 0);
        if (freed - added > best_gain)
            best_gain = freed - added, best = t;
    }
    for (int b = 0; b < 3; b++)
        for (int k = 0; k < nrow[b]; k++)
            z->cnt[z->rows[b][k]] = 0;
    if (best < 0)
        return 0;
    if (best_gain < 0)
        *budget += best_gain;
    int *from = z->pins + (long)s * z->width, *to = z->pins + (long)best * z->width;
    for (long k = 0; k < nf; k++) {
        long i = z->fiber[k];
        for (int b = 0; b < 3; b++) {
            int y = z->off[b] + rule_row(&z->rule[i], b);
            from[y]--;
            to[y]++;
        }
        z->part[i] = best;
    }
    z->size[s] -= nf;
    z->size[best] += nf;
    return 1;
}

/* One pass over all fibers (of parts over their cap only, when `over`); moves made. */
static long refiner_pass(refiner *z, long *count, int over, long min_gain, long *budget)
{
    long moved = 0;
    for (int a = 0; a < 3; a++) {
        refiner_sort(z, a, count);
        for (long k = 0; k < z->n;) {
            long e = k;
            int s = z->part[z->idx[k]], x = rule_row(&z->rule[z->idx[k]], a);
            long nf = 0;
            while (e < z->n && z->part[z->idx[e]] == s && rule_row(&z->rule[z->idx[e]], a) == x)
                z->fiber[nf++] = z->idx[e++];
            if (nf < z->size[s] && (!over || z->size[s] > z->cap[s])) /* never emptied */
                moved += refiner_move(z, s, a, x, nf, min_gain, budget);
            k = e;
        }
    }
    return moved;
}

cky_status codegen_refine_parts(const codegen_rule *rule, long n, const int dim[3], int *part,
                                int npart, const int *group, const int weight[3], int slack,
                                int max_pass, long budget)
{
    refiner z;
    memset(&z, 0, sizeof z);
    z.rule = rule;
    z.n = n;
    z.part = part;
    z.npart = npart;
    memcpy(z.dim, dim, sizeof z.dim);
    memcpy(z.weight, weight, sizeof z.weight);
    z.off[0] = 0;
    z.off[1] = dim[0];
    z.off[2] = dim[0] + dim[1];
    z.width = dim[0] + dim[1] + dim[2];
    int dmax = dim[0] > dim[1] ? dim[0] : dim[1];
    dmax = dim[2] > dmax ? dim[2] : dmax;
    long nb = (dmax > npart ? dmax : npart) + 1;
    int *gfirst = malloc((size_t)(npart ? npart : 1) * sizeof *gfirst);
    int *gend = malloc((size_t)(npart ? npart : 1) * sizeof *gend);
    long *count = malloc((size_t)nb * sizeof *count);
    z.gfirst = gfirst;
    z.gend = gend;
    z.pins = calloc((size_t)npart * (size_t)z.width + 1, sizeof *z.pins);
    z.size = calloc((size_t)npart + 1, sizeof *z.size);
    z.cap = calloc((size_t)npart + 1, sizeof *z.cap);
    z.idx = malloc((size_t)(n ? n : 1) * sizeof *z.idx);
    z.tmp = malloc((size_t)(n ? n : 1) * sizeof *z.tmp);
    z.fiber = malloc((size_t)(n ? n : 1) * sizeof *z.fiber);
    z.cnt = calloc((size_t)z.width + 1, sizeof *z.cnt);
    for (int b = 0; b < 3; b++)
        z.rows[b] = malloc((size_t)(n ? n : 1) * sizeof *z.rows[b]);
    cky_status st = CKY_OK;
    if (!gfirst || !gend || !count || !z.pins || !z.size || !z.cap || !z.idx || !z.tmp ||
        !z.fiber || !z.cnt || !z.rows[0] || !z.rows[1] || !z.rows[2]) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory refining a partition of %ld rules", n);
        goto done;
    }
    for (int s = 0; s < npart;) { /* groups: runs of equal group ids */
        int e = s;
        while (e < npart && group[e] == group[s])
            e++;
        for (int t = s; t < e; t++)
            gfirst[t] = s, gend[t] = e;
        s = e;
    }
    for (long i = 0; i < n; i++) {
        z.size[part[i]]++;
        for (int b = 0; b < 3; b++)
            z.pins[(long)part[i] * z.width + z.off[b] + rule_row(&rule[i], b)]++;
    }
    for (int s = 0; s < npart; s++) { /* cap: the group's mean + slack %, or the size now */
        long total = 0;
        for (int t = gfirst[s]; t < gend[s]; t++)
            total += z.size[t];
        long parts = gend[s] - gfirst[s];
        long mean = (total + parts - 1) / parts;
        z.cap[s] = mean + mean * slack / 100;
        if (z.size[s] > z.cap[s])
            z.cap[s] = z.size[s];
    }
    long none = 0;
    for (int pass = 0; pass < max_pass; pass++)
        if (!refiner_pass(&z, count, 0, 1, &none))
            break;
    if (budget > 0) { /* balance: parts over mean + slack give rows away, at rising cost */
        long total = 0;
        for (int s = 0; s < npart; s++) {
            long sum = 0, parts = z.gend[s] - z.gfirst[s];
            for (int t = gfirst[s]; t < gend[s]; t++)
                sum += z.size[t];
            long mean = (sum + parts - 1) / parts;
            z.cap[s] = mean + mean * slack / 100;
            total += z.size[s] > z.cap[s];
        }
        for (long loss = 0; total && budget > 0 && loss <= budget; loss = loss ? 2 * loss : 1) {
            refiner_pass(&z, count, 1, -loss, &budget);
            total = 0;
            for (int s = 0; s < npart; s++)
                total += z.size[s] > z.cap[s];
        }
    }
done:
    free(gfirst);
    free(gend);
    free(count);
    free(z.pins);
    free(z.size);
    free(z.cap);
    free(z.idx);
    free(z.tmp);
    free(z.fiber);
    free(z.cnt);
    for (int b = 0; b < 3; b++)
        free(z.rows[b]);
    return st;
}

long codegen_parts_cost(const codegen_rule *rule, long n, const int dim[3], const int *part,
                        const int weight[3])
{
    long *key = malloc((size_t)(n ? n : 1) * sizeof *key), cost = 0;
    if (!key)
        return -1;
    for (int b = 0; b < 3; b++) { /* distinct (part, row) pairs per axis */
        for (long i = 0; i < n; i++)
            key[i] = (long)part[i] * dim[b] + rule_row(&rule[i], b);
        qsort(key, (size_t)n, sizeof *key, long_cmp);
        for (long i = 0; i < n; i++)
            cost += weight[b] * (i == 0 || key[i] != key[i - 1]);
    }
    free(key);
    return cost;
}
