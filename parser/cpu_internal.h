/* cpu engine internals shared by its files (cpu.c: the engine and the max-plus inside pass;
 * cpu_sum.c: the sum-product passes of max-rule). Not a public API. */
#ifndef CKY_PARSER_CPU_INTERNAL_H
#define CKY_PARSER_CPU_INTERNAL_H

#include "cpu.h"

struct cpu_engine {
    const grammar *g;
    codegen_program *prog;     /* max-plus kernels */
    codegen_program *prog_sum[3]; /* sum-product kernels by codegen_role, compiled on first
                                     use (cpu_program) */
    char *cache_dir;           /* the options' kernel cache, copied (NULL: default) */
    int threads, width;
    float *left, *right, *parent; /* workspaces: rows x width, inside guard regions */
    size_t ws_size;               /* floats per workspace, guards excluded */
    double evaluations;
};

/* The engine's kernels in semiring sr for output role `role` (max-plus: PARENT only; the
 * sum-product ones compiled on first use, through the kernel cache). */
cky_status cpu_program(cpu_engine *e, codegen_semiring sr, codegen_role role,
                       const codegen_program **out);

/* Run every kernel of family f of `prog` over workspace columns [0, n), split among the
 * threads; CKY_ERR_LIMIT if a kernel wrote into a guard region. */
cky_status cpu_run_family(cpu_engine *e, const codegen_program *prog, codegen_family_id f,
                          int n);

/* Scale v[0..n) exactly by the power of two that puts its max in [0.5, 1): the exponent
 * taken out (0 for an all-zero vector). */
int cpu_sum_normalize(float *v, int n);

#endif
