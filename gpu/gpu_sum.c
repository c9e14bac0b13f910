/* gpu_sum: the sum-product passes on a GPU device (internal.h; what they leave: gpu.h's
 * gpu_sum_layers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../semiring/sum_rules.h"
#include "../util/workers.h"
#include "internal.h"

/* ---- setup ---- */

/* Load the compiled kernels of the three roles, in one batch (arg: the gpu_sum), on the
 * device's threads. */
static cky_status load_roles(void *arg)
{
    gpu_sum *s = arg;
    GPU_CHECK(cudaSetDevice(s->d->info.id)); /* on a thread of its own */
    const codegen_program *p[3] = {s->prog[0], s->prog[1], s->prog[2]};
    return gpu_dev_load_programs(s->d, p, s->kernel, 3);
}

static size_t layout_bytes(const sum_unary_layout *l)
{
    return 4 * ((size_t)l->nslot + (size_t)l->ngroup + 1 + 2 * (size_t)l->nent);
}

/* ---- the kernels' partial slots ---- */

/* Work items per launch of a kernel of nslot slots: as many whole tiles as the partial slots'
 * room holds (at least one), at most a workspace. */
static int part_items(const gpu_dev *d, int nslot)
{
    size_t tile = (size_t)(nslot > 0 ? nslot : 1) * KERNELS_TILE * sizeof(float);
    size_t most = ((size_t)d->width + KERNELS_TILE - 1) / KERNELS_TILE, t = d->part_bytes / tile;
    return (int)((t < 1 ? 1 : t > most ? most : t) * KERNELS_TILE);
}

/* Kernel k's fold (kernels_sum_fold) staged at the end of the ints *buf (grown as needed):
 * its rows in ascending order, their first slots and the slots, at offsets off[0 .. 2] (each
 * row's slots in slot order). Scratch: rows (the kernel's slots), pos and mark (dim[0] each). */
static cky_status fold_stage(const codegen_partition *part, int k, int **buf, size_t *cap,
                             size_t *used, kernels_sum_fold *f, size_t off[3], int *rows,
                             int *pos, char *mark)
{
    long n = codegen_kernel_slots(part, k, rows, mark);
    int dim = part->dim[0], nrow = 0;
    memset(pos, 0, (size_t)dim * sizeof *pos);
    for (long j = 0; j < n; j++)
        nrow += pos[rows[j]]++ == 0;
    size_t need = *used + (size_t)n + 2 * (size_t)nrow + 1;
    if (need > *cap) {
        size_t c = need > 2 * *cap ? need : 2 * *cap;
        int *b = realloc(*buf, c * sizeof *b);
        if (!b)
            return cky_fail(CKY_ERR_NOMEM, "out of memory");
        *buf = b;
        *cap = c;
    }
    int *row = *buf + *used, *first = row + nrow, *slot = first + nrow + 1;
    int r = 0, at = 0;
    for (int x = 0; x < dim; x++) /* pos[x]: where row x's slots go */
        if (pos[x]) {
            row[r] = x;
            first[r++] = at;
            at += pos[x];
            pos[x] = at - pos[x];
        }
    first[nrow] = at;
    for (long j = 0; j < n; j++)
        slot[pos[rows[j]]++] = (int)j;
    *f = (kernels_sum_fold){.nslot = (int)n, .nrow = nrow};
    off[0] = *used;
    off[1] = *used + (size_t)nrow;
    off[2] = *used + 2 * (size_t)nrow + 1;
    *used = need;
    return CKY_OK;
}

/* The folds of every kernel of the three roles, in one device allocation, and the partial
 * slots' buffer for the largest launch (part_items). */
static cky_status make_folds(gpu_sum *s)
{
    long most = 1;
    int dim = 1, nk = 0;
    for (int r = 0; r < 3; r++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++) {
            const codegen_partition *part = &s->prog[r]->part[f];
            dim = part->dim[0] > dim ? part->dim[0] : dim;
            for (int k = 0; k < part->nkernel; k++, nk++) {
                long n = codegen_kernel_slots(part, k, NULL, NULL);
                most = n > most ? n : most;
            }
        }
    int *buf = NULL, *rows = malloc((size_t)most * sizeof *rows);
    int *pos = malloc((size_t)dim * sizeof *pos);
    char *mark = malloc((size_t)dim);
    size_t (*off)[3] = malloc(((size_t)nk + 1) * sizeof *off), cap = 0, used = 0;
    cky_status st = rows && pos && mark && off ? CKY_OK : cky_fail(CKY_ERR_NOMEM, "out of memory");
    for (int r = 0, j = 0; r < 3 && !st; r++)
        for (int f = 0; f < CODEGEN_NFAMILY && !st; f++) {
            const codegen_partition *part = &s->prog[r]->part[f];
            s->fold[r][f] = calloc((size_t)part->nkernel + 1, sizeof *s->fold[r][f]);
            if (!s->fold[r][f])
                st = cky_fail(CKY_ERR_NOMEM, "out of memory");
            for (int k = 0; k < part->nkernel && !st; k++, j++)
                st = fold_stage(part, k, &buf, &cap, &used, &s->fold[r][f][k], off[j], rows, pos,
                                mark);
        }
    if (!st)
        st = GPU_STATUS(cudaMalloc(&s->folds, (used + 1) * sizeof(int)));
    if (!st)
        st = GPU_STATUS(cudaMemcpy(s->folds, buf, used * sizeof(int), cudaMemcpyHostToDevice));
    for (int r = 0, j = 0; r < 3 && !st; r++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            for (int k = 0; k < s->prog[r]->part[f].nkernel; k++, j++) {
                kernels_sum_fold *fo = &s->fold[r][f][k];
                const int *dev = s->folds;
                fo->row = dev + off[j][0];
                fo->first = dev + off[j][1];
                fo->slot = dev + off[j][2];
            }
    size_t bytes = 0; /* the largest kernel launch's slots */
    for (int r = 0; r < 3 && !st; r++)
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            for (int k = 0; k < s->prog[r]->part[f].nkernel; k++) {
                int ns = s->fold[r][f][k].nslot;
                size_t b = (size_t)part_items(s->d, ns) * (size_t)ns * sizeof(float);
                bytes = b > bytes ? b : bytes;
            }
    if (!st)
        st = gpu_buffer_need(&s->part, bytes, 0);
    if (!st)
        st = gpu_buffer_need(&s->side_part, bytes, 0);
    free(buf);
    free(rows);
    free(pos);
    free(mark);
    free(off);
    return st;
}

/* Copy `bytes` of a into the staging buffer at *at; the device address of the copy. */
static const void *put(const void *a, size_t bytes, char *host, char *dev, size_t *at)
{
    memcpy(host + *at, a, bytes);
    *at += bytes;
    return dev + *at - bytes;
}

static kernels_sum_layout put_layout(const sum_unary_layout *l, char *host, char *dev, size_t *at)
{
    kernels_sum_layout k = {.nslot = l->nslot};
    k.row = put(l->row, (size_t)l->nslot * 4, host, dev, at);
    k.off = put(l->off, ((size_t)l->ngroup + 1) * 4, host, dev, at);
    k.from = put(l->from, (size_t)l->nent * 4, host, dev, at);
    k.w = put(l->w, (size_t)l->nent * 4, host, dev, at);
    return k;
}

/* The closure's two tables in both kinds of cells, in one device allocation. */
static cky_status upload_tables(gpu_sum *s)
{
    sum_rules *r;
    cky_status st = sum_rules_new(s->d->g, &r);
    if (st)
        return st;
    sum_unary_layout l[4] = {{0}}; /* up: word, phrase; down: word, phrase */
    size_t bytes = 0;
    for (int k = 0; k < 4 && !st; k++)
        if (!(st = sum_rules_layout(k < 2 ? &r->up : &r->down, k % 2, &l[k])))
            bytes += layout_bytes(&l[k]);
    sum_rules_free(r);
    char *host = st ? NULL : malloc(bytes);
    cudaError_t err = st ? cudaSuccess
                         : host ? cudaMalloc(&s->tables, bytes) : cudaErrorMemoryAllocation;
    if (!st && err == cudaSuccess) {
        size_t at = 0;
        kernels_sum_layout k[4];
        for (int j = 0; j < 4; j++)
            k[j] = put_layout(&l[j], host, s->tables, &at);
        s->up = (kernels_sum_table){k[0], k[1]};
        s->down = (kernels_sum_table){k[2], k[3]};
        err = cudaMemcpy(s->tables, host, bytes, cudaMemcpyHostToDevice);
    }
    if (!st && err == cudaSuccess)
        err = kernels_sum_unary_setup(s->d->nsub);
    free(host);
    for (int k = 0; k < 4; k++)
        sum_rules_layout_free(&l[k]);
    return st ? st : GPU_STATUS(err);
}

cky_status gpu_sum_new(gpu_dev *d, gpu_sum **out)
{
    gpu_sum *s = calloc(1, sizeof *s);
    if (!s)
        return cky_fail(CKY_ERR_NOMEM, "out of memory");
    s->d = d;
    cky_status st = gpu_dev_compile_sum(d);
    for (int r = 0; r < 3; r++) { /* s owns them now */
        s->prog[r] = d->sum_prog[r];
        d->sum_prog[r] = NULL;
    }
    for (int r = 0; r < 3 && !st; r++) /* the workspaces and row tables are max-plus's */
        for (int c = 0; c < 2; c++)
            CKY_ASSERT(s->prog[r]->classes.n[c] == d->prog->classes.n[c],
                       "the sum-product kernels' classes differ");
    if (!st) { /* the module loads (a driver lock serializes them) beside the tables */
        workers_task load;
        workers_start(&load, load_roles, s);
        st = upload_tables(s);
        if (!st)
            st = make_folds(s);
        for (int r = 0; r < 3 && !st; r++)
            st = gpu_generic_new(d, s->prog[r], CODEGEN_SEMIRING_SUM_PRODUCT, &s->generic[r]);
        if (!st)
            st = GPU_STATUS(cudaEventCreateWithFlags(&s->xx_added, cudaEventDisableTiming));
        st = workers_wait_all(&load, 1, st);
    }
    if (st) {
        gpu_sum_free(s);
        return st;
    }
    *out = s;
    return CKY_OK;
}

void gpu_sum_free(gpu_sum *s)
{
    if (!s)
        return;
    for (int r = 0; r < 3; r++) {
        gpu_dev_unload_kernels(s->prog[r], s->kernel[r]);
        gpu_generic_free(s->generic[r]);
        codegen_program_free(s->prog[r]);
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            free(s->fold[r][f]);
    }
    cudaFree(s->folds);
    gpu_buffer_free(&s->part, 0);
    gpu_buffer_free(&s->side_part, 0);
    if (s->xx_added)
        cudaEventDestroy(s->xx_added);
    cudaFree(s->tables);
    gpu_buffer_free(&s->opre, 0);
    gpu_buffer_free(&s->opost, 0);
    gpu_buffer_free(&s->exps, 0);
    gpu_buffer_free(&s->d_pull, 0);
    gpu_buffer_free(&s->h_pull, 1);
    free(s);
}

size_t gpu_sum_cell_bytes(const gpu_sum *s)
{
    return 2 * (size_t)s->d->nsub * 4 + 4 * 4;
}

size_t gpu_sum_item_bytes(void) { return 2 * sizeof(int); }

cky_status gpu_sum_reserve(gpu_sum *s, const plan *p)
{
    size_t floats = (size_t)p->ncell * s->d->nsub;
    cky_status st;
    if ((st = gpu_buffer_need(&s->opre, floats * sizeof(float), 0)) ||
        (st = gpu_buffer_need(&s->opost, floats * sizeof(float), 0)) ||
        (st = gpu_buffer_need(&s->exps, (size_t)p->ncell * 4 * sizeof(int), 0)) ||
        (st = gpu_buffer_need(&s->d_pull, (size_t)p->npull * sizeof(int), 0)) ||
        (st = gpu_buffer_need(&s->h_pull, (size_t)p->npull * sizeof(int), 1)))
        return st;
    s->epre = s->exps.p;
    s->epost = s->epre + p->ncell;
    s->eopre = s->epost + p->ncell;
    s->eopost = s->eopre + p->ncell;
    return CKY_OK;
}

cky_status gpu_sum_pull(gpu_sum *s, const plan *p, int threads)
{
    int *h = s->h_pull.p;
    cky_status st = plan_fill_pulls(p, threads, h);
    if (st)
        return st;
    GPU_CHECK(cudaMemcpyAsync(s->d_pull.p, h, (size_t)p->npull * sizeof(int),
                              cudaMemcpyHostToDevice, s->d->stream));
    return CKY_OK;
}

#define NONE2 ((unsigned)(2 * CHART_EXP_NONE))

cky_status gpu_sum_begin_inside(gpu_sum *s, const plan *p, const float *lex, const int *lexexp,
                                const int *rep, const int *cells)
{
    gpu_dev *d = s->d;
    GPU_CHECK(kernels_fill(d->pre.p, (int)p->ncell, d->nsub, d->nsub, 0, d->stream));
    GPU_CHECK(kernels_fill(s->epre, 1, (int)p->ncell, 0, NONE2, d->stream));
    GPU_CHECK(kernels_lexical(lex, lexexp, rep, cells, (int)p->nword, d->pre.p, s->epre,
                              d->nsub, d->stream));
    return CKY_OK;
}

cky_status gpu_sum_begin_outside(gpu_sum *s, const plan *p)
{
    gpu_dev *d = s->d;
    GPU_CHECK(kernels_fill(s->opost.p, (int)p->ncell, d->nsub, d->nsub, 0, d->stream));
    GPU_CHECK(kernels_fill(s->eopost, 1, (int)p->ncell, 0, NONE2, d->stream));
    GPU_CHECK(kernels_sum_roots(s->opost.p, s->eopost, d->nsub,
                                gpu_items_at(d->d_items.p, p).roots, p->n, d->stream));
    return CKY_OK;
}

/* ---- the steps ---- */

/* The items of a binary step: inside, segment (d, f) sent to the parents; outside, the pull
 * list (d, f, side) sent to the children. */
static kernels_sum_items items_of(const gpu_sum *s, const plan *p, engine_pass pass, int d,
                                  int f, int side)
{
    gpu_items it = gpu_items_at(s->d->d_items.p, p);
    if (pass == ENGINE_PASS_INSIDE)
        return (kernels_sum_items){NULL, p->bin[d * CODEGEN_NFAMILY + f].first, it.parent,
                                   it.left, it.right, s->epost, s->epost};
    const int *list = (const int *)s->d_pull.p + p->pull[(d * CODEGEN_NFAMILY + f) * 2 + side].first;
    return (kernels_sum_items){list, 0, side ? it.right : it.left, it.parent,
                               side ? it.left : it.right, s->eopre, s->epost};
}

static long items_count(const plan *p, engine_pass pass, int d, int f, int side)
{
    return pass == ENGINE_PASS_INSIDE ? p->bin[d * CODEGEN_NFAMILY + f].count
                                      : p->pull[(d * CODEGEN_NFAMILY + f) * 2 + side].count;
}

/* Run one list of items through the kernels of `role`, `width` at a time, adding each into
 * its cell (kernels_sum_add). */
static cky_status run_list(gpu_sum *s, const plan *p, engine_pass pass, int d,
                           codegen_family_id f, int side)
{
    gpu_dev *dev = s->d;
    int inside = pass == ENGINE_PASS_INSIDE;
    codegen_role role = inside ? CODEGEN_ROLE_PARENT
                               : (side ? CODEGEN_ROLE_RIGHT : CODEGEN_ROLE_LEFT);
    const codegen_partition *part = &s->prog[role]->part[f];
    codegen_class lc = codegen_family_left(f), rc = codegen_family_right(f);
    /* the kernels' factors and output: inside (left, right) -> parent; outside (parent's
     * opre, sibling's post) -> child */
    codegen_class ca = inside ? lc : CODEGEN_X, cb = inside ? rc : (side ? lc : rc);
    codegen_class out = inside ? CODEGEN_X : (side ? rc : lc);
    const codegen_classes *cl = &s->prog[role]->classes;
    const float *fa = inside ? dev->post.p : s->opre.p;
    float *dst = inside ? dev->pre.p : s->opost.p;
    int *top = inside ? s->epre : s->eopost;
    kernels_sum_items all = items_of(s, p, pass, d, f, side);
    long count = items_count(p, pass, d, f, side);
    gpu_lane lane = gpu_dev_lane(dev, f);
    float *const *ws = lane.ws;
    cudaStream_t stream = lane.stream;
    for (long first = 0; first < count; first += dev->width) {
        int n = (int)(count - first < dev->width ? count - first : dev->width);
        kernels_sum_items it = all;
        if (it.index)
            it.index += first;
        else
            it.first += first;
        int tiles = (n + KERNELS_TILE - 1) / KERNELS_TILE;
        cky_status st = gpu_dev_prof_begin(dev);
        if (st)
            return st;
        GPU_CHECK(kernels_fill(ws[2], tiles, cl->n[out] * KERNELS_TILE, dev->tile, 0,
                               stream));
        if (it.index) {
            GPU_CHECK(kernels_gather_index(fa, dev->nsub, it.ca, it.index, n, dev->d_row[ca],
                                           cl->n[ca], ws[0], dev->tile, stream));
            GPU_CHECK(kernels_gather_index(dev->post.p, dev->nsub, it.cb, it.index, n,
                                           dev->d_row[cb], cl->n[cb], ws[1], dev->tile,
                                           stream));
        } else {
            GPU_CHECK(kernels_gather(fa, dev->nsub, it.ca + it.first, n, dev->d_row[ca],
                                     cl->n[ca], ws[0], dev->tile, stream));
            GPU_CHECK(kernels_gather(dev->post.p, dev->nsub, it.cb + it.first, n,
                                     dev->d_row[cb], cl->n[cb], ws[1], dev->tile,
                                     stream));
        }
        if ((st = gpu_dev_prof_end(dev, GPU_STAGE_GATHER)) || (st = gpu_dev_prof_begin(dev)))
            return st;
        int tile = dev->tile;
        for (int k = 0; k < part->nkernel; k++) { /* code blocks in parallel, into slots */
            const gpu_kernel *gk = gpu_dev_compiled(dev, s->prog[role], s->kernel[role], f, k,
                                                    &st);
            if (st)
                return st;
            int m = gk ? gk->max_threads / CODEGEN_THREADS : 1;
            m = m > dev->block_tiles ? dev->block_tiles : m < 1 ? 1 : m;
            int chunk = (dev->sum_chunk + m - 1) / m; /* in blocks of m tiles */
            const kernels_sum_fold *fo = &s->fold[role][f][k];
            int ptile = fo->nslot * KERNELS_TILE;
            int sub = part_items(dev, fo->nslot);
            for (int at = 0; at < n; at += sub) { /* at: a whole number of tiles */
                int sn = n - at < sub ? n - at : sub;
                int stiles = (sn + KERNELS_TILE - 1) / KERNELS_TILE;
                long long o = (long long)(at / KERNELS_TILE) * tile;
                const float *l = ws[0] + o, *r = ws[1] + o;
                float *pp = lane.side ? s->side_part.p : s->part.p;
                void *args[] = {&l, &r, &pp, &sn, &tile, &ptile, &chunk};
                dim3 grid = {(unsigned)((stiles + m - 1) / m),
                             (unsigned)part->kernel[k].nblock, 1};
                dim3 block = {(unsigned)(CODEGEN_THREADS * m), 1, 1};
                st = gk ? gpu_kernel_launch(gk, grid, block, args, stream)
                        : gpu_generic_launch(s->generic[role], part, f, k,
                                             CODEGEN_SEMIRING_SUM_PRODUCT, l, r, pp, sn, tile,
                                             ptile, stream);
                if (st)
                    return st;
                GPU_CHECK(kernels_sum_fold_slots(pp, ptile, ws[2] + o, tile, sn, *fo,
                                                 stream));
            }
        }
        if ((st = gpu_dev_prof_end(dev, GPU_STAGE_XX + f)))
            return st;
        if (lane.side) /* after XX's adds (not counted in the stage) */
            GPU_CHECK(cudaStreamWaitEvent(stream, s->xx_added, 0));
        if ((st = gpu_dev_prof_begin(dev)))
            return st;
        GPU_CHECK(kernels_sum_add(ws[2], tile, it, n, top, dev->d_row[out], cl->n[out], dst,
                                  dev->nsub, stream));
        if (!lane.side)
            GPU_CHECK(cudaEventRecord(s->xx_added, stream));
        if ((st = gpu_dev_prof_end(dev, GPU_STAGE_REDUCE)))
            return st;
        gpu_dev_count(dev, f, n, part->nrule);
    }
    return CKY_OK;
}

static cky_status sum_binary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                             int d, codegen_family_id f)
{
    gpu_sum *s = ctx;
    int sides = pass == ENGINE_PASS_INSIDE ? 1 : 2;
    s->d->pass = pass;
    s->d->semiring = sr;
    if (f == 0) /* the exponents of the span's cells, from every family with rules */
        for (int g = 0; g < CODEGEN_NFAMILY; g++)
            for (int side = 0; side < sides && s->prog[0]->part[g].nrule; side++)
                GPU_CHECK(kernels_sum_exp(items_of(s, p, pass, d, g, side),
                                          (int)items_count(p, pass, d, g, side),
                                          pass == ENGINE_PASS_INSIDE ? s->epre : s->eopost,
                                          s->d->stream));
    if (f == 0) {
        cky_status st = gpu_dev_fork(s->d);
        if (st)
            return st;
    }
    for (int side = 0; side < sides && s->prog[0]->part[f].nrule; side++) {
        cky_status st = run_list(s, p, pass, d, f, side);
        if (st)
            return st;
    }
    return CKY_OK;
}

static cky_status sum_unary(void *ctx, const plan *p, engine_pass pass, codegen_semiring sr,
                            int d)
{
    gpu_sum *s = ctx;
    gpu_dev *dev = s->d;
    cky_status st = gpu_dev_join(dev);
    if (!st)
        st = gpu_dev_prof_begin(dev);
    if (st)
        return st;
    plan_segment sg = p->cell[d];
    const int *cells = gpu_items_at(dev->d_items.p, p).cells + sg.first;
    if (pass == ENGINE_PASS_INSIDE)
        GPU_CHECK(kernels_sum_unary(dev->pre.p, s->epre, dev->post.p, s->epost, dev->nsub, cells,
                                    (int)sg.count, d, s->up, dev->stream));
    else
        GPU_CHECK(kernels_sum_unary(s->opost.p, s->eopost, s->opre.p, s->eopre, dev->nsub, cells,
                                    (int)sg.count, d, s->down, dev->stream));
    return gpu_dev_prof_end(dev, GPU_STAGE_UNARY);
}

const engine_ops gpu_sum_ops = {sum_binary, sum_unary, NULL};
