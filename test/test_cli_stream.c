/* cky parse as a streaming pipeline (issue 16; cli/pipeline.h): the trees of a file are those
 * of the whole file parsed as one batch through the library, whether the file is read as a
 * file, through a pipe or by several engines; error lines keep their place; memory stays
 * bounded however long the input is; cky bench reports the end-to-end figure of the same
 * sentences through cky parse (with a GPU). */
#include <sys/resource.h>

#include "../api/cky.h"
#include "../gpu/gpu.h"
#include "test_cli_run.h"

#define PARSE "'" RUN_CKY "' parse -g '" RUN_GRAMMAR "' "
#define CPU "CKY_CACHE=cache " PARSE "--engine cpu "
#define REF PARSE "--engine ref "

/* The trees of the lines of dir/name parsed as one batch by the library (engine, max_length),
 * one per line: what cky parse must write. */
static char *one_batch(const char *dir, const char *name, const char *engine, int max_length)
{
    char path[1024], cache[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("CKY_CACHE", cache, 1);
    char *text = run_read(dir, name);
    int n = 0, cap = 1024;
    const char **lines = malloc((size_t)cap * sizeof *lines);
    for (char *s = text; *s; n++) {
        if (n == cap)
            lines = realloc(lines, (size_t)(cap *= 2) * sizeof *lines);
        lines[n] = s;
        char *e = strchr(s, '\n');
        if (!e)
            break;
        *e = '\0';
        s = e + 1;
    }
    cky_parser *p = cky_parser_open(RUN_GRAMMAR, engine, "viterbi", 0, max_length, 0);
    cr_assert_not_null(p, "%s", cky_error_message());
    char **trees = calloc((size_t)n, sizeof *trees);
    int *outcomes = calloc((size_t)n, sizeof *outcomes);
    cr_assert_eq(cky_parser_parse(p, lines, n, 0, trees, outcomes, NULL), 0);
    size_t size = 1, used = 0;
    for (int k = 0; k < n; k++)
        size += strlen(trees[k]) + 1;
    char *out = malloc(size);
    for (int k = 0; k < n; k++) {
        used += (size_t)sprintf(out + used, "%s\n", trees[k]);
        cky_string_free(trees[k]);
    }
    out[used] = '\0';
    cky_parser_close(p);
    free(trees);
    free(outcomes);
    free(lines);
    free(text);
    return out;
}

static void assert_file_is(const char *d, const char *name, const char *want, const char *what)
{
    char *got = run_read(d, name);
    cr_assert(!strcmp(got, want), "%s: the trees differ from one batch through the library",
              what);
    free(got);
}

/* dev.txt three times (1,299 lines: several batches of the cpu engine, 256 a batch), with
 * an empty line: the pipeline's trees are those of one batch, from a file, through a pipe,
 * and with two or three engines taking the chunks; the messages are the same too. */
Test(cli_stream, cpu_trees_as_one_batch_from_file_pipe_and_engines, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "for k in 1 2 3; do cat '%s/data/ptb-sample/dev.txt'; done | "
                        "sed '5s/.*//' > dev3.txt", CKY_SHARED), 0);
    char *want = one_batch(d, "dev3.txt", "cpu", 20);
    cr_assert_eq(run_sh(d, CPU "--max-length 20 -i dev3.txt -o file.txt 2>file.err"), 0);
    assert_file_is(d, "file.txt", want, "from a file");
    cr_assert_eq(run_sh(d, "cat dev3.txt | " CPU "--max-length 20 > pipe.txt 2>pipe.err"), 0);
    assert_file_is(d, "pipe.txt", want, "through a pipe");
    cr_assert_eq(run_sh(d, CPU "--max-length 20 --engines 2 --threads 1 -i dev3.txt "
                           "> two.txt 2>two.err"), 0);
    assert_file_is(d, "two.txt", want, "two engines");
    cr_assert_eq(run_sh(d, "cat dev3.txt | " CPU "--max-length 20 --engines 3 --threads 1 "
                           "> three.txt 2>/dev/null"), 0);
    assert_file_is(d, "three.txt", want, "three engines through a pipe");
    cr_assert_eq(run_sh(d, "cmp file.err two.err && sed 's/stdin/dev3.txt/' pipe.err | "
                           "cmp - file.err && grep -q 'dev3.txt:5: empty sentence' file.err"),
                 0, "the messages differ");
    free(want);
    run_cleanup(d);
}

/* The ref engine (64 sentences a batch): the first 100 dev sentences, with a pool of two. */
Test(cli_stream, ref_trees_as_one_batch, .timeout = 600)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -100 '%s/data/ptb-sample/dev.txt' > dev100.txt", CKY_SHARED),
                 0);
    char *want = one_batch(d, "dev100.txt", "ref", 12);
    cr_assert_eq(run_sh(d, REF "--max-length 12 -i dev100.txt > one.txt 2>/dev/null"), 0);
    assert_file_is(d, "one.txt", want, "ref");
    cr_assert_eq(run_sh(d, REF "--max-length 12 --engines 2 -i dev100.txt > two.txt "
                           "2>/dev/null"), 0);
    assert_file_is(d, "two.txt", want, "ref, two engines");
    free(want);
    run_cleanup(d);
}

/* Lines that get no tree keep their place, each named on stderr in input order: an empty
 * line, white space only, a line too long, bad bytes; one line out per line in. */
Test(cli_stream, error_lines_keep_their_place)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "printf 'The dog barks .\\n\\n   \\none two three four five six\\n"
                           "a \\377 b\\nThe cat sleeps .\\n' > e.txt"), 0);
    cr_assert_eq(run_sh(d, CPU "--max-length 5 --engines 2 -i e.txt > out 2>err"), 0);
    cr_assert_eq(run_sh(d, "test $(wc -l < out) -eq 6 && sed -n '2p;3p;4p' out | "
                           "grep -c '^(())$' | grep -qx 3 && sed -n '1p;5p;6p' out | "
                           "grep -c '^( (' | grep -qx 3"), 0);
    char *err = run_read(d, "err");
    const char *want[] = {"e.txt:2: empty sentence", "e.txt:3: empty sentence",
                          "e.txt:4: 6 words, longer than --max-length 5", "e.txt:5: byte 3"};
    for (int k = 0; k < 3; k++) {
        char *at = strstr(err, want[k]), *next = strstr(err, want[k + 1]);
        cr_assert(at && next && (k == 2 || at < next), "%s", err);
    }
    free(err);
    run_cleanup(d);
}

/* Run `sh -c 'exec CMD'` in folder d; returns the exit status, the command's peak resident
 * memory in *kb. */
static int run_rss(const char *d, const char *cmd, long *kb)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (chdir(d) == 0)
            execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
    *kb = ru.ru_maxrss;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 20,000 lines of 200 words (too long for --max-length 5, so cheap to "parse"), one in a
 * hundred a short sentence: at most the pipeline's 4 batches are ever held (its test hook
 * says so), and the peak memory is that of 2,000 such lines give or take 10 MB (all of them
 * held at once would take some 40 MB more). */
Test(cli_stream, memory_is_bounded_however_long_the_input, .timeout = 600)
{
    char d[64];
    run_setup(d);
    const char *gen = "awk 'BEGIN { w = \"w\"; for (j = 1; j < 200; j++) w = w \" w\"; "
                      "for (i = 1; i <= %d; i++) print (i %% 100 == 1 ? \"The dog barks .\" "
                      ": w) }' > big%d.txt";
    cr_assert_eq(run_sh(d, gen, 2000, 2000), 0);
    cr_assert_eq(run_sh(d, gen, 20000, 20000), 0);
    long small, large;
    cr_assert_eq(run_rss(d, "exec env " CPU "--max-length 5 -i big2000.txt -o out2000 "
                         "2>/dev/null", &small), 0);
    cr_assert_eq(run_rss(d, "exec env " CPU "--max-length 5 --pipeline-stats -i big20000.txt "
                         "-o out20000 2>err", &large), 0);
    cr_assert_eq(run_sh(d, "test $(wc -l < out20000) -eq 20000 && "
                           "test $(grep -c '^( (' out20000) -eq 200 && "
                           "head -2 out20000 | tail -1 | grep -qx '(())'"), 0);
    char *err = run_read(d, "err");
    const char *stats = strstr(err, "cky parse: pipeline: ");
    cr_assert_not_null(stats, "%s", err);
    long batches = 0;
    int most = 0, slots = 0;
    cr_assert_eq(sscanf(stats, "cky parse: pipeline: %ld batches, %*d sentences, at most %d "
                        "of %d slots", &batches, &most, &slots), 3, "%s", stats);
    cr_assert(batches >= 20000 / 256 && most >= 1 && most <= slots && slots == 4, "%s", stats);
    cr_log_info("peak RSS: %ld KB for 2,000 lines, %ld KB for 20,000", small, large);
#ifndef __SANITIZE_ADDRESS__ /* AddressSanitizer's quarantine grows with what is freed */
    cr_assert(large < small + 10240, "peak RSS %ld KB for 20,000 lines, %ld KB for 2,000",
              large, small);
#endif
    free(err);
    run_cleanup(d);
}

/* cky bench's end-to-end figure (a GPU only): the same sentences through cky parse, with
 * and without its start-up, beside the kernel pass. */
Test(gpu_bench, reports_end_to_end, .timeout = 600) /* in make test-gpu */
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: cky bench is not run here");
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "CKY_CACHE=cache '%s' bench -g '%s' -i in.txt --repeat 1 "
                        "--bucket-width 0 --json > b.json 2>err && CKY_CACHE=cache '%s' bench -g '%s' -i in.txt "
                        "--repeat 1 > b.txt 2>>err", RUN_CKY, RUN_GRAMMAR, RUN_CKY, RUN_GRAMMAR),
                 0);
    char *json = run_read(d, "b.json"), *txt = run_read(d, "b.txt");
    const char *e2e = strstr(json, "\"end_to_end\": {\"seconds\": ");
    cr_assert_not_null(e2e, "%s", json);
    double total = 0, startup = 0;
    cr_assert_eq(sscanf(e2e, "\"end_to_end\": {\"seconds\": %lf, \"startup_seconds\": %lf",
                        &total, &startup), 2, "%s", e2e);
    cr_assert(total > startup && startup > 0, "%s", e2e);
    cr_assert(strstr(e2e, "\"fraction_of_kernel_pass\": ") &&
              strstr(e2e, "\"sentences_per_second_without_startup\": "), "%s", e2e);
    cr_assert(strstr(txt, "cky parse ") && strstr(txt, "of the pass"), "%s", txt);
    free(json);
    free(txt);
    run_cleanup(d);
}
