/* cpu engine internals shared by its files (cpu.c: the engine and the max-plus inside pass;
 * cpu_sum.c: the sum-product passes of max-rule). Not a public API. */
#ifndef CKY_ENGINES_CPU_INTERNAL_H
#define CKY_ENGINES_CPU_INTERNAL_H

#include "cpu.h"
#include "cpu_sum.h"
#include "../../sched/plan.h"
#include "../../semiring/sum_rules.h"

struct cpu_engine {
    const grammar *g;
    codegen_program *prog;     /* max-plus kernels (fixed: in fixed point) */
    codegen_program *prog_sum[3]; /* sum-product kernels by codegen_role, compiled on first
                                     use (cpu_program) */
    sum_rules *rules;          /* the sum-product passes' unary tables, made on first use */
    char *cache_dir;           /* the options' kernel cache, copied (NULL: default) */
    progress_sink progress;    /* the options' reports of the kernel compilation */
    int threads, width;
    int fixed;                    /* the max-plus kernels and charts in fixed point */
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

/* The engine's sum_rules (made on first use). */
cky_status cpu_sum_rules(cpu_engine *e, const sum_rules **out);

/* A batch of the sum-product passes (cpu_sum.c, cpu_outside.c): the charts, their plan, and
 * every work item of it (left, right, parent, sent [nitem], plan order); with the pull
 * lists, concatenated in the pull numbering (pull [npull]), for the outside pass. */
typedef struct cpu_sum_batch {
    cpu_engine *e;
    const sum_rules *rules;
    const codegen_program *prog[3]; /* sum-product kernels by codegen_role */
    sum_chart *const *ch;
    plan p;
    int *left, *right, *parent, *sent;
    int *pull;
} cpu_sum_batch;

/* The plan and items of the n charts ch (and their pull lists when `pull`); free with
 * cpu_sum_batch_free (also after a failure). */
cky_status cpu_sum_batch_new(cpu_engine *e, sum_chart *const *ch, int n, int pull,
                             cpu_sum_batch *b);

void cpu_sum_batch_free(cpu_sum_batch *b);

#endif
