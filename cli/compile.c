/* cky compile: compile a grammar's kernels into the cache (by default every program a run of
 * the grammar uses, for the gpu or the cpu engine) and report the partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/codegen.h"
#include "../gpu/gpu.h"
#include "cli.h"
#include "guard.h"
#include "progress.h"

static const cli_use uses[] = {
    {CLI_GRAMMAR, NULL}, {CLI_ENGINE, "gpu: cubins; cpu: the cpu engine's host objects, as "
                                      "--no-gpu-code --host"},
    {CLI_SHAPE, NULL}, {CLI_LIVE_LIMIT, NULL}, {CLI_ARCH, NULL}, {CLI_NO_GPU_CODE, NULL},
    {CLI_HOST_BUILD, NULL}, {CLI_DUMP_CU, NULL}, {CLI_SEMIRING, NULL}, {CLI_ROLE, NULL},
    {CLI_CACHE, NULL}, {CLI_THREADS, NULL}, {CLI_FAMILY, NULL}, {CLI_REPORT, NULL},
    {CLI_JSON, NULL}, {CLI_WARM, NULL}, {CLI_QUIET, NULL}, {CLI_HELP, NULL}, {CLI_END, NULL}};

static void compile_usage(FILE *f)
{
    fprintf(f,
        "usage: cky compile -g GRAMMAR [OPTIONS]\n\n"
        "Partition the grammar's binary rules (families XX, XT, TX, TT) into spectral major\n"
        "cubes (kernels) and minor cubes (code blocks), generate the kernel source, compile it\n"
        "with NVRTC into the kernel cache, and print the partition report. No GPU is needed.\n"
        "By default it compiles every program a run of the grammar uses, so that a later\n"
        "cky parse (or cky bench) of it compiles nothing: the max-plus kernels (Viterbi, and\n"
        "the layout of max-rule's workspaces) and max-rule's sum-product kernels for the\n"
        "inside pass and turned for each child of the outside pass, and Viterbi's fixed-point\n"
        "kernels where --arith auto takes them (the cpu engine, sm_90 or later); the report is\n"
        "the max-plus program's, then a line per program. --semiring or --role compiles that\n"
        "one.\n\n"
        "options:\n");
    cli_options_help(f, uses);
    fprintf(f, "\n"
        "The report gives per family: rules, kernels, code blocks, rules per block\n"
        "(min/mean/max), distinct rows per block, row loads per work item (all blocks of the\n"
        "family, rows reloaded under the live budget counted again) and the reload rate (mean\n"
        "number of kernels that use a row, over all P, L and R rows), each against\n"
        "equal-width blocking of the same shape in parentheses, the most values live at once\n"
        "in a block, ptxas' registers and spill bytes per kernel (max), the machine\n"
        "instructions per rule (the family's kernels' code in their cubins, 16 bytes an\n"
        "instruction; the add+max and sum-product peaks count 2 and 1), and the candidate\n"
        "partition chosen: of spectral, spectral+moves (refined by local moves of rows\n"
        "between cubes), equal-width and equal-width+moves, the one with the fewest loads of\n"
        "those no worse than equal-width on both figures; the next line gives every\n"
        "candidate's figures. Then the partition and compile times and cache hits.\n"
        "A warm start reads each family's partition from the cache (a manifest keyed by its\n"
        "rules and shape) and each kernel's cubin or .so without generating its source.\n"
        "ptxas compiles with -O3; a kernel that spills is compiled again with -O1, then\n"
        "with -O1 and fewer thread blocks per SM. The developers' channel\n"
        "CKY_TUNE=ptxas=OPTION (one ptxas option, e.g. -O1; docs/development.md) replaces\n"
        "that.\n");
}

typedef struct family_summary {
    long min, max;
    double mean, rows; /* rows: mean distinct rows per block */
    long loads;        /* planned row loads per work item, all blocks */
    long slots;        /* sum-product partial slots per work item (codegen_kernel_slots) */
    int regs_min, regs_max, spill_max;
    long spill_total;
    double instructions; /* machine instructions per rule, all kernels (-1: not measured) */
} family_summary;

static family_summary summarize(const codegen_program *prog, int f)
{
    const codegen_partition *p = &prog->part[f];
    family_summary s = {p->nblock ? p->block[0].nrule : 0, 0, 0, 0, 0, 0, -1, -1, -1, 0, -1};
    for (int b = 0; b < p->nblock; b++) {
        const codegen_block *blk = &p->block[b];
        s.min = blk->nrule < s.min ? blk->nrule : s.min;
        s.max = blk->nrule > s.max ? blk->nrule : s.max;
        s.rows += blk->nleft + blk->nright;
        s.loads += blk->loads;
        s.slots += blk->nparent;
    }
    if (p->nblock) {
        s.mean = (double)p->nrule / p->nblock;
        s.rows /= p->nblock;
    }
    for (int k = 0; k < p->nkernel; k++) {
        const codegen_compiled *c = &prog->kernel[f][k];
        if (c->registers < 0)
            continue;
        s.regs_min = s.regs_min < 0 || c->registers < s.regs_min ? c->registers : s.regs_min;
        s.regs_max = c->registers > s.regs_max ? c->registers : s.regs_max;
        s.spill_max = c->spill_bytes > s.spill_max ? c->spill_bytes : s.spill_max;
        s.spill_total += c->spill_bytes > 0 ? c->spill_bytes : 0;
    }
    long instructions = 0;
    for (int k = 0; k < p->nkernel && instructions >= 0; k++)
        instructions = prog->kernel[f][k].instructions < 0
                           ? -1 : instructions + prog->kernel[f][k].instructions;
    if (instructions >= 0 && p->nkernel && p->nrule)
        s.instructions = (double)instructions / p->nrule;
    return s;
}

static void print_report(const codegen_program *prog, const char *gname, double warm)
{
    printf("grammar %s\n", gname);
    printf("%-3s %9s %7s %6s %22s %8s %17s %13s %8s %13s %9s %10s  %s\n", "fam", "rules",
           "kernels", "blocks", "rules/block min/mean/max", "rows/blk", "loads/item(eq-w)",
           "reload(eq-w)", "max_live", "registers", "spill(B)", "instr/rule", "partition");
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        const codegen_partition *p = &prog->part[f];
        family_summary s = summarize(prog, f);
        char rb[48], rl[48], ld[48], rg[32], sp[32], in[32] = "-";
        snprintf(rb, sizeof rb, "%ld/%.0f/%ld", s.min, s.mean, s.max);
        snprintf(rl, sizeof rl, "%.2f (%.2f)", p->reload_rate, p->naive_reload_rate);
        snprintf(ld, sizeof ld, "%ld (%ld)", s.loads, p->naive_loads);
        if (s.regs_max >= 0) {
            snprintf(rg, sizeof rg, "%d..%d", s.regs_min, s.regs_max);
            snprintf(sp, sizeof sp, "%d", s.spill_max);
        } else {
            snprintf(rg, sizeof rg, "-");
            snprintf(sp, sizeof sp, "-");
        }
        if (s.instructions >= 0)
            snprintf(in, sizeof in, "%.3f", s.instructions);
        printf("%-3s %9ld %7d %6d %22s %8.1f %17s %13s %8d %13s %9s %10s  %s\n",
               codegen_family_name(f), p->nrule, p->nkernel, p->nblock, rb, s.rows, ld, rl,
               p->max_live, rg, sp, in, codegen_origin_name(p->origin));
        printf("    shape %dx%dx%d/%dx%dx%d; sum-product partial slots/item %ld; candidates "
               "(reload, loads/item):", p->shape.major[0], p->shape.major[1], p->shape.major[2],
               p->shape.minor[0], p->shape.minor[1], p->shape.minor[2], s.slots);
        for (int o = 0; o < CODEGEN_NORIGIN; o++)
            printf("%s %s %.2f %ld", o ? "," : "", codegen_origin_name(o),
                   p->candidate_reload[o], p->candidate_loads[o]);
        printf("\n");
    }
    printf("partition %.2f s (%d of %d families from the cache), compile %.2f s (%d kernels "
           "compiled, %d from the cache)\n", prog->partition_seconds, prog->partition_hits,
           CODEGEN_NFAMILY, prog->compile_seconds, prog->nmiss, prog->nhit);
    if (warm >= 0)
        printf("warm compile %.2f s\n", warm);
}

/* Everything, partitions included, came from the cache. */
static int all_cached(const codegen_program *prog)
{
    return prog->nmiss == 0 && prog->partition_hits == CODEGEN_NFAMILY;
}

/* The report as JSON, without its closing brace (the programs follow). */
static void print_json(const codegen_program *prog, const char *gname, const char *arch,
                       double warm)
{
    printf("{\"grammar\": \"");
    for (const char *c = gname; *c; c++)
        printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
    printf("\", \"arch\": \"%s\", \"families\": [", arch);
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        const codegen_partition *p = &prog->part[f];
        family_summary s = summarize(prog, f);
        printf("%s{\"family\": \"%s\", \"rules\": %ld, \"kernels\": %d, \"blocks\": %d, "
               "\"shape\": \"%dx%dx%d/%dx%dx%d\", "
               "\"rules_per_block\": {\"min\": %ld, \"mean\": %.1f, \"max\": %ld}, "
               "\"rows_per_block\": %.2f, \"loads_per_item\": %ld, "
               "\"partial_slots_per_item\": %ld, \"reload_rate\": %.4f, "
               "\"naive_reload_rate\": %.4f, \"naive_loads_per_item\": %ld, "
               "\"partition\": \"%s\", "
               "\"max_live\": %d, ",
               f ? ", " : "", codegen_family_name(f), p->nrule, p->nkernel, p->nblock,
               p->shape.major[0], p->shape.major[1], p->shape.major[2], p->shape.minor[0],
               p->shape.minor[1], p->shape.minor[2], s.min, s.mean, s.max, s.rows, s.loads,
               s.slots, p->reload_rate, p->naive_reload_rate, p->naive_loads,
               codegen_origin_name(p->origin), p->max_live);
        printf("\"candidates\": {");
        for (int o = 0; o < CODEGEN_NORIGIN; o++)
            printf("%s\"%s\": {\"reload_rate\": %.4f, \"loads_per_item\": %ld}", o ? ", " : "",
                   codegen_origin_name(o), p->candidate_reload[o], p->candidate_loads[o]);
        printf("}, ");
        if (s.regs_max >= 0)
            printf("\"registers\": %d, \"spill_bytes\": %d, \"kernel_registers\": [", s.regs_max,
                   s.spill_max);
        else
            printf("\"registers\": null, \"spill_bytes\": null, \"kernel_registers\": [");
        for (int k = 0; k < p->nkernel && s.regs_max >= 0; k++)
            printf("%s%d", k ? ", " : "", prog->kernel[f][k].registers);
        printf("], \"kernel_spill_bytes\": [");
        for (int k = 0; k < p->nkernel && s.regs_max >= 0; k++)
            printf("%s%d", k ? ", " : "", prog->kernel[f][k].spill_bytes);
        if (s.instructions >= 0)
            printf("], \"instructions_per_rule\": %.4f, \"kernel_instructions\": [",
                   s.instructions);
        else
            printf("], \"instructions_per_rule\": null, \"kernel_instructions\": [");
        for (int k = 0; k < p->nkernel && s.instructions >= 0; k++)
            printf("%s%ld", k ? ", " : "", prog->kernel[f][k].instructions);
        printf("], \"kernel_max_live\": [");
        for (int k = 0; k < p->nkernel; k++)
            printf("%s%d", k ? ", " : "", prog->kernel[f][k].max_live);
        printf("]}");
    }
    printf("], \"partition_seconds\": %.3f, \"compile_seconds\": %.3f, ",
           prog->partition_seconds, prog->compile_seconds);
    if (warm >= 0)
        printf("\"warm_seconds\": %.3f, ", warm);
    printf("\"partitions_cached\": %d, \"kernels_compiled\": %d, \"kernels_cached\": %d, "
           "\"cache_hit\": %s", prog->partition_hits, prog->nmiss, prog->nhit,
           all_cached(prog) ? "true" : "false");
}

/* A program of a grammar's kernels: the semiring of its rules and the role its families are
 * turned for. */
typedef struct program_def {
    codegen_semiring semiring;
    codegen_role role;
    const char *name;
} program_def;

/* What a run of the grammar uses (parser/cpu.c, parser/gpu_dev.c): the max-plus program
 * (Viterbi's in float32; a max-rule engine builds it too, its classes lay out the
 * workspaces), max-rule's sum-product programs, the inside pass's and the outside pass's
 * two, and Viterbi's fixed-point program where --arith auto takes it (the cpu engine, GPUs
 * of sm_90 or later, a grammar whose weights fit: parser_arith_fixed). */
static const program_def run_programs[] = {
    {CODEGEN_SEMIRING_MAX_PLUS, CODEGEN_ROLE_PARENT, "max-plus"},
    {CODEGEN_SEMIRING_SUM_PRODUCT, CODEGEN_ROLE_PARENT, "sum-product"},
    {CODEGEN_SEMIRING_SUM_PRODUCT, CODEGEN_ROLE_LEFT, "sum-product left"},
    {CODEGEN_SEMIRING_SUM_PRODUCT, CODEGEN_ROLE_RIGHT, "sum-product right"},
    {CODEGEN_SEMIRING_FIXED, CODEGEN_ROLE_PARENT, "fixed max-plus"},
};
#define NRUN_PROGRAMS ((int)(sizeof run_programs / sizeof *run_programs))

/* The figures of a compiled program for the report's last lines. */
typedef struct program_done {
    const char *name;
    int kernels, compiled, cached;
    double seconds; /* partition and compile */
} program_done;

static void print_programs(const program_done *d, int n, int json)
{
    for (int k = 0; k < n; k++)
        if (json)
            printf("%s{\"program\": \"%s\", \"kernels\": %d, \"kernels_compiled\": %d, "
                   "\"kernels_cached\": %d, \"seconds\": %.3f}", k ? ", " : ", \"programs\": [",
                   d[k].name, d[k].kernels, d[k].compiled, d[k].cached, d[k].seconds);
        else
            printf("program %-17s %d kernels, %d compiled, %d from the cache, %.2f s\n",
                   d[k].name, d[k].kernels, d[k].compiled, d[k].cached, d[k].seconds);
    if (json)
        printf("%s}\n", n ? "]" : "");
}

/* The architecture the gpu engine compiles for here: the first GPU's (sm_<major><minor>),
 * or `fallback` without one. */
static const char *engine_arch(char *buf, size_t size, const char *fallback)
{
    int major, minor;
    if (gpu_count() > 0 &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) == cudaSuccess) {
        snprintf(buf, size, "sm_%d%d", major, minor);
        return buf;
    }
    cudaGetLastError();
    return fallback;
}

/* --shape [FAM=]SHAPE into o->shape. Returns 0 or a usage error status. */
static int apply_shape(codegen_options *o, const char *arg)
{
    int fam = -1;
    const char *eq = strchr(arg, '=');
    if (eq) {
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            if ((size_t)(eq - arg) == 2 && !strncmp(arg, codegen_family_name(f), 2))
                fam = f;
        if (fam < 0)
            return cli_usage_error("compile", "--shape: unknown family in '%s'", arg);
        arg = eq + 1;
    }
    codegen_shape s;
    if (codegen_shape_parse(arg, &s))
        return cli_usage_error("compile", "--shape: %s", cky_last_error());
    for (int f = 0; f < CODEGEN_NFAMILY; f++)
        if (fam < 0 || fam == f)
            o->shape[f] = s;
    return 0;
}

/* --family XX,TT into o->families. Returns 0 or a usage error status. */
static int apply_families(codegen_options *o, const char *arg)
{
    o->families = 0;
    for (const char *p = arg; *p;) {
        int fam = -1;
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            if (!strncmp(p, codegen_family_name(f), 2) && (p[2] == ',' || p[2] == '\0'))
                fam = f;
        if (fam < 0)
            return cli_usage_error("compile", "--family: bad family list '%s'", arg);
        o->families |= 1u << fam;
        p += p[2] == ',' ? 3 : 2;
    }
    return 0;
}

int cli_compile(int argc, char **argv)
{
    cli_args a;
    int rc = cli_options_read("compile", uses, 0, argc, argv, &a);
    if (rc)
        return rc;
    if (a.given[CLI_HELP]) {
        cli_args_free(&a);
        compile_usage(stdout);
        return 0;
    }
    codegen_options o;
    codegen_options_default(&o);
    const char *gpath = a.text[CLI_GRAMMAR];
    int json = a.given[CLI_JSON], warm = a.given[CLI_WARM], quiet = a.given[CLI_QUIET];
    int live_limit = a.given[CLI_LIVE_LIMIT] ? a.num[CLI_LIVE_LIMIT] : 0;
    int one_program = a.given[CLI_SEMIRING] || a.given[CLI_ROLE];
    char arch[16];
    o.arch = a.text[CLI_ARCH]; /* NULL: the engine's, below */
    o.gpu = !a.given[CLI_NO_GPU_CODE];
    o.host = a.given[CLI_HOST_BUILD];
    o.dump_dir = a.text[CLI_DUMP_CU];
    o.cache_dir = a.text[CLI_CACHE];
    if (a.given[CLI_THREADS])
        o.threads = a.num[CLI_THREADS];
    if (a.given[CLI_SEMIRING])
        o.semiring = (codegen_semiring)a.num[CLI_SEMIRING];
    if (a.given[CLI_ROLE])
        o.role = (codegen_role)a.num[CLI_ROLE];
    if (a.given[CLI_ENGINE] && a.num[CLI_ENGINE] == PARSER_ENGINE_CPU) {
        o.gpu = 0;
        o.host = 1;
    } else if (a.given[CLI_ENGINE] && a.num[CLI_ENGINE] != PARSER_ENGINE_GPU) {
        rc = cli_usage_error("compile", "--engine ref compiles nothing: give gpu or cpu");
    }
    for (int k = 0; k < a.nitems[CLI_SHAPE] && !rc; k++)
        rc = apply_shape(&o, a.items[CLI_SHAPE][k]);
    if (!rc && a.given[CLI_FAMILY])
        rc = apply_families(&o, a.text[CLI_FAMILY]);
    cli_args_free(&a);
    if (rc)
        return rc;
    if (!gpath)
        return cli_usage_error("compile", "-g GRAMMAR is required");
    parser_tune tune = {0};
    if (cli_tune("compile", &tune))
        return 1;
    o.ptxas = tune.ptxas;
    for (int f = 0; f < CODEGEN_NFAMILY; f++) {
        if (live_limit > 0 && !o.shape[f].major[0]) { /* automatic shape, with the limit */
            o.shape[f] = (codegen_shape){{0, 0, 0}, {0, 0, 0}, live_limit};
        }
        o.shape[f].live_limit = live_limit;
    }
    grammar *g = NULL;
    rc = guard_check_paths("compile", gpath, NULL, 0, NULL, 0);
    if (rc)
        return rc;
    if (!o.arch)
        o.arch = engine_arch(arch, sizeof arch, "sm_90");
    program_def asked = {o.semiring, o.role, "asked"};
    const program_def *defs = one_program ? &asked : run_programs;
    int ndef = one_program ? 1 : NRUN_PROGRAMS;
    program_done done[NRUN_PROGRAMS];
    cli_progress_start("compile");
    o.progress = cli_progress_sink(quiet);
    codegen_program *prog = NULL; /* the first, for the report */
    double warm_seconds = -1;
    rc = grammar_load_with(gpath, o.cache_dir, &o.progress, &g) ? 1 : 0;
    /* one progress stage for all the programs */
    progress_report(&o.progress, PROGRESS_COMPILE, PROGRESS_BEGIN, NULL, 0, 0, 0);
    /* the fixed-point program where a Viterbi run would take it */
    int fixed = !rc && (o.gpu ? atoi(o.arch + 3) >= 90 : 1) && !codegen_fixed_check(g);
    int ndone = 0;
    for (int k = 0; k < ndef && !rc; k++) {
        codegen_program *p = NULL;
        if (!one_program && defs[k].semiring == CODEGEN_SEMIRING_FIXED && !fixed)
            continue;
        o.semiring = defs[k].semiring;
        o.role = defs[k].role;
        if (codegen_compile(g, &o, &p)) {
            rc = 1;
            break;
        }
        int kernels = 0;
        for (int f = 0; f < CODEGEN_NFAMILY; f++)
            kernels += p->part[f].nkernel;
        done[ndone++] = (program_done){defs[k].name, kernels, p->nmiss, p->nhit,
                                       p->partition_seconds + p->compile_seconds};
        if (k == 0)
            prog = p;
        else
            codegen_program_free(p);
    }
    progress_report(&o.progress, PROGRESS_COMPILE, PROGRESS_END, NULL, 0, 0, 0);
    o.semiring = defs[0].semiring;
    o.role = defs[0].role;
    if (!rc && warm) {
        codegen_program *again = NULL;
        rc = codegen_compile(g, &o, &again) ? 1 : 0;
        if (again)
            warm_seconds = again->partition_seconds + again->compile_seconds;
        codegen_program_free(again);
    }
    cli_progress_stop();
    if (rc) {
        rc = cli_error("compile", "%s", cky_last_error());
    } else if (json) {
        print_json(prog, gpath, o.arch, warm_seconds);
        print_programs(done, one_program ? 0 : ndone, 1);
    } else {
        print_report(prog, gpath, warm_seconds);
        print_programs(done, one_program ? 0 : ndone, 0);
    }
    codegen_program_free(prog);
    grammar_free(g);
    return rc;
}
