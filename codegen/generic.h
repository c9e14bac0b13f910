/* generic: the generic kernel's rules and its loop, in one header for host code and device
 * code (the GPU engine's generic kernel, gpu/generic_kernels.cu, and its host reference,
 * codegen_generic_host).
 *
 * The generic kernel runs any kernel of a partition from a table instead of open code,
 * while the open-coded kernels still compile (the first run of a grammar). Its table
 * (codegen_generic_table) holds the partition's rules in their places, each code block's
 * sorted by parent row, stably: the rules of one parent are consecutive (a run) and keep
 * their order. A run's value is then the open-coded block's parent register, bit for bit:
 *   - max-plus: the max of (l + r) + w over the run, the same two float adds per rule and
 *     an exact max (taken on floatkey keys, util/floatkey.h, so it is the integer order the
 *     workspace's atomics use);
 *   - fixed max-plus: the max of (l + r) + w in int32 (util/fixedpoint.h);
 *   - sum-product: fmaf(l * r, w, acc) rule by rule in the block's order, acc from 0: the
 *     chain the open code computes for the parent (its `lr` is the same product).
 * The kernel stores a run as the open code stores its parent (codegen.h): an atomic max
 * of the key or of the integer, or the block's partial slot. */
#ifndef CKY_CODEGEN_GENERIC_H
#define CKY_CODEGEN_GENERIC_H

#include "../util/floatkey.h"

/* One rule of the table: rows l, r, p of the kernel's workspaces, and w: the float bits
 * of the weight the semiring's kernel text holds (codegen_weight), or the fixed-point
 * weight. */
typedef struct codegen_generic_rule {
    int l, r, p, w;
} codegen_generic_rule;

#ifdef __CUDACC__
#define CODEGEN_GENERIC_HD __host__ __device__
#else
#define CODEGEN_GENERIC_HD
#include <math.h>
#endif

static inline CODEGEN_GENERIC_HD float codegen_generic_float(int bits)
{
    union {
        int i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

static inline CODEGEN_GENERIC_HD int codegen_generic_bits(float f)
{
    union {
        float f;
        int i;
    } u;
    u.f = f;
    return u.i;
}

/* The value of the run that starts at rule[*i] (its parent: rule[*i].p), *i moved past it
 * (the run ends at `end`, the code block's end), for the work item whose rows are s apart
 * from left and right: the key of the max (max-plus), the int32 max (fixed), the float
 * bits of the sum (sum-product). `semiring` is codegen_semiring's value: 0 max-plus, 1
 * sum-product, 2 fixed. */
static inline CODEGEN_GENERIC_HD int codegen_generic_run(int semiring,
                                                         const codegen_generic_rule *rule,
                                                         long *i, long end, const float *left,
                                                         const float *right, long long s)
{
    long k = *i;
    int p = rule[k].p;
    int acc = (int)0x80000000; /* below every key and every fixed-point score */
    float sum = 0.0f;
    for (; k < end && rule[k].p == p; k++) {
        codegen_generic_rule q = rule[k];
        if (semiring == 2) {
            int v = ((const int *)left)[q.l * s] + ((const int *)right)[q.r * s] + q.w;
            acc = v > acc ? v : acc;
        } else if (semiring == 1) {
#ifdef __CUDA_ARCH__
            float lr = __fmul_rn(left[q.l * s], right[q.r * s]);
            sum = __fmaf_rn(lr, codegen_generic_float(q.w), sum);
#else
            float lr = left[q.l * s] * right[q.r * s];
            sum = fmaf(lr, codegen_generic_float(q.w), sum);
#endif
        } else {
#ifdef __CUDA_ARCH__
            float v = __fadd_rn(__fadd_rn(left[q.l * s], right[q.r * s]),
                                codegen_generic_float(q.w));
#else
            float v = (left[q.l * s] + right[q.r * s]) + codegen_generic_float(q.w);
#endif
            int key = floatkey(codegen_generic_bits(v));
            acc = key > acc ? key : acc;
        }
    }
    *i = k;
    return semiring == 1 ? codegen_generic_bits(sum) : acc;
}

#endif
