/* cpu: the CPU fast path. The scheduler of the paper (§3) run on CPU threads: for each span
 * length, over all sentences of a batch, work items (sentence, parent cell, left cell, right
 * cell) per split and rule family are gathered into symbol-major float32 workspaces, the
 * generated kernels (compiled for the host, codegen/) run over them, and the parent workspace
 * is max-reduced into the chart; then the unary step closes the new cells.
 *
 * The charts it fills are CHART_FLOAT charts, bit-identical to ref_parse(..., CHART_FLOAT);
 * with the fixed-point option CHART_FIXED charts (the binary rules in util/fixedpoint.h's
 * integers), bit-identical to ref_parse(..., CHART_FIXED). */
#ifndef CKY_ENGINES_CPU_H
#define CKY_ENGINES_CPU_H

#include "../../codegen/codegen.h"
#include "../../chart/chart.h"
#include "../../corpus_tools/sentence.h"

typedef struct cpu_engine cpu_engine;

/* Settings of the cpu engine (parser_options fills them; tests set them directly). */
typedef struct cpu_engine_options {
    int threads;           /* worker threads (0: one per core) */
    int width;             /* work items per workspace (0: default, 512) */
    const char *cache_dir; /* kernel cache (NULL: $CKY_CACHE, else ~/.cache/cky; "off") */
    int sum;               /* also the sum-product kernels now (a max-rule parser), not at
                              their first use */
    int fixed;             /* Viterbi's binary rules in fixed point (CHART_FIXED charts):
                              CKY_ERR_LIMIT from cpu_engine_new if the grammar's weights do
                              not fit (codegen_fixed_check) */
    progress_sink progress; /* reports of the kernel compilation (util/progress.h) */
} cpu_engine_options;

/* Compile (or fetch from the cache) the host kernels of g (the max-plus ones; with o->sum
 * the sum-product ones too) and set up the workers and workspaces of o. */
cky_status cpu_engine_new(const grammar *g, const cpu_engine_options *o, cpu_engine **out);

/* Fill charts for n sentences (each with at least one word): out[k] is a new CHART_FLOAT
 * (fixed: CHART_FIXED) chart of s[k]. On failure no chart is returned. */
cky_status cpu_engine_parse(cpu_engine *e, const sentence *s, int n, chart **out);

/* Rule evaluations done so far: work items x rules of the kernels they ran through. */
double cpu_engine_rule_evaluations(const cpu_engine *e);

void cpu_engine_free(cpu_engine *e);

#endif
