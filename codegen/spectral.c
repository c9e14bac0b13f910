/* codegen spectral: order the rows of one axis of a rule cube by the Fiedler vector
 * (paper section 5.1).
 *
 * Each row occurring on the axis is a graph node with the feature vector a = (a1, 0.1 a2,
 * 0.1 a3): a1 counts its rules per pair of rows of the other two axes, a2 and a3 per row of
 * each other axis. The adjacency is W = A^T A; the order is that of the eigenvector of the
 * second-smallest eigenvalue of the symmetric normalized Laplacian I - D^-1/2 W D^-1/2
 * (dense, LAPACKE_dsyevr). W is accumulated feature by feature from the sorted
 * (feature, node) incidences, so only nodes sharing a feature cost work.
 *
 * Where LAPACK is OpenBLAS, its threads are held at one during the call: the eigenvector's
 * rounding (hence the order, the partition and the kernel cache keys) then does not depend
 * on the number of cores (with 2 threads, sample-sm6 partitions differently than with 1). */
#include <dlfcn.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "codegen.h"

typedef struct incidence {
    long feature; /* kind in the top bits, then the row(s) of the other axes */
    int node;
} incidence;

typedef struct keyed {
    double v;
    int row;
} keyed;

static int incidence_cmp(const void *a, const void *b)
{
    const incidence *x = a, *y = b;
    if (x->feature != y->feature)
        return x->feature < y->feature ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int rule_axis(const codegen_rule *r, int axis)
{
    return axis == 0 ? r->p : axis == 1 ? r->l : r->r;
}

/* Add the contributions of every feature group to the dense n x n matrix w. */
static void spectral_accumulate(incidence *inc, long ninc, int n, double *w)
{
    static const double kind_weight[3] = {1.0, 0.1, 0.1};
    long i = 0;
    int *node = malloc((size_t)n * sizeof *node);
    double *val = malloc((size_t)n * sizeof *val);
    if (!node || !val) { /* caller checks allocation of w; degrade to no edges */
        free(node);
        free(val);
        return;
    }
    while (i < ninc) {
        long j = i;
        int m = 0;
        double kw = kind_weight[inc[i].feature >> 60];
        while (j < ninc && inc[j].feature == inc[i].feature) { /* (node, count) runs */
            long k = j;
            while (k < ninc && inc[k].feature == inc[i].feature && inc[k].node == inc[j].node)
                k++;
            node[m] = inc[j].node;
            val[m++] = kw * (double)(k - j);
            j = k;
        }
        for (int a = 0; a < m; a++)
            for (int b = 0; b < m; b++)
                w[(size_t)node[a] * n + node[b]] += val[a] * val[b];
        i = j;
    }
    free(node);
    free(val);
}

typedef int (*blas_threads_get)(void);
typedef void (*blas_threads_set)(int);
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;

/* LAPACKE_dsyevr for the two smallest eigenpairs, on one BLAS thread (see the file
 * comment); calls are serialized. */
static lapack_int spectral_dsyevr(int n, double *w, lapack_int *m, double *ev, double *zz,
                                  lapack_int *support)
{
    pthread_mutex_lock(&blas_lock);
    blas_threads_get get = (blas_threads_get)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    blas_threads_set set = (blas_threads_set)dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    int threads = get && set ? get() : 0;
    if (threads > 1)
        set(1);
    lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', n, w, n, 0.0, 0.0, 1, 2,
                                     0.0, m, ev, zz, 2, support);
    if (threads > 1)
        set(threads);
    pthread_mutex_unlock(&blas_lock);
    return info;
}

/* Fiedler vector of the normalized Laplacian of adjacency w (overwritten) into z[n]. */
static cky_status spectral_fiedler(double *w, int n, double *z)
{
    /* ev: dsyevr's W has room for n eigenvalues (LAPACK uses all of it as workspace, even
     * when 2 are asked for; two doubles on the stack were overrun and the caller's frames
     * corrupted: sample-sm6 at 6x2x2/2x2x2 crashed) */
    double *d = malloc((size_t)n * sizeof *d), *ev = malloc((size_t)n * sizeof *ev);
    double *zz = malloc((size_t)n * 2 * sizeof *zz);
    lapack_int *support = malloc((size_t)n * 2 * sizeof *support);
    if (!d || !ev || !zz || !support) {
        free(d);
        free(ev);
        free(zz);
        free(support);
        return cky_fail(CKY_ERR_NOMEM, "out of memory in the spectral partition");
    }
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++)
            s += w[(size_t)i * n + j];
        d[i] = s > 0 ? 1.0 / sqrt(s) : 0.0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            w[(size_t)i * n + j] = (i == j) - d[i] * w[(size_t)i * n + j] * d[j];
    lapack_int m = 0;
    lapack_int info = spectral_dsyevr(n, w, &m, ev, zz, support);
    cky_status st = CKY_OK;
    if (info != 0 || m != 2)
        st = cky_fail(CKY_ERR_ARG, "LAPACKE_dsyevr failed (info %d) on a %d-node graph",
                      (int)info, n);
    else
        for (int i = 0; i < n; i++)
            z[i] = zz[(size_t)i * 2 + 1];
    free(d);
    free(ev);
    free(zz);
    free(support);
    return st;
}

cky_status codegen_spectral_order(const codegen_rule *rule, long nrule, int axis, int dim,
                                  int *order, int *count)
{
    int b = (axis + 1) % 3, c = (axis + 2) % 3;
    int *node_of = malloc((size_t)(dim ? dim : 1) * sizeof *node_of);
    incidence *inc = malloc((size_t)(nrule ? nrule : 1) * 3 * sizeof *inc);
    if (!node_of || !inc) {
        free(node_of);
        free(inc);
        return cky_fail(CKY_ERR_NOMEM, "out of memory in the spectral partition");
    }
    int n = 0;
    for (int i = 0; i < dim; i++)
        node_of[i] = -1;
    for (long k = 0; k < nrule; k++) { /* nodes numbered in ascending row order */
        int row = rule_axis(&rule[k], axis);
        node_of[row] = 0;
    }
    for (int i = 0; i < dim; i++)
        if (node_of[i] >= 0)
            order[n] = i, node_of[i] = n++;
    *count = n;
    cky_status st = CKY_OK;
    if (n <= 2) { /* nothing to order: ascending rows */
        free(node_of);
        free(inc);
        return CKY_OK;
    }
    for (long k = 0; k < nrule; k++) {
        long rb = rule_axis(&rule[k], b), rc = rule_axis(&rule[k], c);
        int v = node_of[rule_axis(&rule[k], axis)];
        inc[3 * k] = (incidence){(rb << 24) | rc, v}; /* rows < 2^24 */
        inc[3 * k + 1] = (incidence){(1L << 60) | rb, v};
        inc[3 * k + 2] = (incidence){(2L << 60) | rc, v};
    }
    qsort(inc, (size_t)nrule * 3, sizeof *inc, incidence_cmp);
    double *w = calloc((size_t)n * n, sizeof *w), *z = malloc((size_t)n * sizeof *z);
    keyed *key = malloc((size_t)n * sizeof *key);
    if (!w || !z || !key) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory for a %d x %d adjacency matrix", n, n);
        goto done;
    }
    spectral_accumulate(inc, nrule * 3, n, w);
    if ((st = spectral_fiedler(w, n, z)))
        goto done;
    double big = 0;
    for (int i = 0; i < n; i++)
        big = fmax(big, fabs(z[i]));
    for (int i = 0; i < n; i++) { /* sign convention: first clearly nonzero entry > 0 */
        if (fabs(z[i]) > 1e-6 * big) {
            if (z[i] < 0)
                for (int j = 0; j < n; j++)
                    z[j] = -z[j];
            break;
        }
    }
    for (int i = 0; i < n; i++)
        key[i] = (keyed){z[i], order[i]};
    qsort(key, (size_t)n, sizeof *key, keyed_cmp);
    for (int i = 0; i < n; i++)
        order[i] = key[i].row;
done:
    free(node_of);
    free(inc);
    free(w);
    free(z);
    free(key);
    return st;
}
