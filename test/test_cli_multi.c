/* cky parse on several engines and machines (issue 15): --engines with an engine that fails
 * mid-run, --shard K/N with real line numbers, cky merge and its refusals, GNU parallel
 * with two workers and the Slurm script's body, each against one process. */
#include "test_cli_run.h"

#define PARSE "'" RUN_CKY "' parse -g '" RUN_GRAMMAR "' "
#define CPU "CKY_CACHE=cache " PARSE "--engine cpu --threads 1 "
#define MERGE "'" RUN_CKY "' merge "

/* in.txt becomes `lines` dev sentences with an empty line 4; one.txt its one-process parse. */
static void setup_file(char *d, int lines)
{
    run_setup(d);
    cr_assert_eq(run_sh(d, "head -%d '%s/data/ptb-sample/dev.txt' | sed '4s/.*//' > in.txt",
                        lines, CKY_SHARED), 0);
    cr_assert_eq(run_sh(d, CPU "-i in.txt > one.txt 2>one.err"), 0);
}

Test(cli_multi, failing_engine_is_named_and_its_sentences_parsed)
{
    char d[64];
    setup_file(d, 23);
    cr_assert_eq(run_sh(d, CPU "--engines 3 --fail-engine 2:1 -i in.txt -o three.txt "
                           "2>three.err"), 0);
    cr_assert_eq(run_sh(d, "cmp one.txt three.txt"), 0, "three engines, one failing: output "
                 "differs from one engine");
    char *err = run_read(d, "three.err");
    cr_assert(strstr(err, "cpu engine 2 failed") && strstr(err, "injected failure") &&
              strstr(err, "the other engines parse its sentences"), "%s", err);
    cr_assert(strstr(err, "in.txt:4: empty sentence"), "%s", err);
    free(err);
    /* no engine left: the sentences still to parse are internal errors (exit status 3),
     * the first chunk's trees are kept, every line is there */
    cr_assert_eq(run_sh(d, CPU "--engines 1 --fail-engine 1:1 -i in.txt > none.txt 2>none.err"),
                 3);
    cr_assert_eq(run_sh(d, "test $(cat none.txt | wc -l) = 23 && test $(grep -c '^(())$' "
                           "none.txt) -ge 17 && head -1 one.txt > h && head -1 none.txt | "
                           "cmp - h"), 0, "the first of four chunks kept, the rest (())");
    err = run_read(d, "none.err");
    cr_assert(strstr(err, "no engine is left") && strstr(err, "no engine left to parse it"),
              "%s", err);
    free(err);
    /* through a pipe, answered batch by batch, the same */
    cr_assert_eq(run_sh(d, "cat in.txt | " CPU "--engines 2 --fail-engine 1:0 > pipe.txt "
                           "2>/dev/null && cmp one.txt pipe.txt"), 0);
    run_cleanup(d);
}

Test(cli_multi, options_of_engines_and_shards_are_checked)
{
    char d[64];
    run_setup(d);
    const char *bad[] = {"--devices 0,1", "--shard 0/2", "--shard 3/2", "--shard 2",
                         "--engines 0", "--fail-engine 3 --engines 2", "--fail-engine 1"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        cr_assert_eq(run_sh(d, CPU "%s -i in.txt >/dev/null 2>&1", bad[k]), 2, "%s", bad[k]);
    cr_assert_eq(run_sh(d, PARSE "--engine gpu --devices 0,,1 -i in.txt 2>err"), 2);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "--devices takes 'all' or device numbers"), "%s", err);
    free(err);
    run_cleanup(d);
}

Test(cli_multi, shards_merge_back_to_one_run)
{
    char d[64];
    setup_file(d, 11);
    for (int k = 1; k <= 3; k++)
        cr_assert_eq(run_sh(d, CPU "--shard %d/3 -i in.txt -o s%d.txt 2>s%d.err", k, k, k), 0);
    /* 11 lines in 3 shards: 4, 4 and 3 lines; line 4 (empty) is shard 1's second */
    cr_assert_eq(run_sh(d, "test $(cat s1.txt | wc -l) = 4 && test $(cat s3.txt | wc -l) = 3"),
                 0);
    char *err = run_read(d, "s1.err");
    cr_assert(strstr(err, "in.txt:4: empty sentence"), "shard 1 names the input's line: %s",
              err);
    free(err);
    cr_assert_eq(run_sh(d, MERGE "s1.txt s2.txt s3.txt > merged.txt && cmp one.txt merged.txt"),
                 0);
    cr_assert_eq(run_sh(d, MERGE "-o m.txt.gz s1.txt s2.txt s3.txt && gzip -dc m.txt.gz | "
                           "cmp one.txt -"), 0);
    /* each shard's manifest (FILE.shard) says which it is: any order will do */
    cr_assert_eq(run_sh(d, "grep -qx 'shard 2/3' s2.txt.shard && grep -qx 'lines 4' "
                           "s2.txt.shard && grep -qx 'input-lines 11' s2.txt.shard"), 0);
    cr_assert_eq(run_sh(d, MERGE "s3.txt s1.txt s2.txt | cmp one.txt -"), 0);
    cr_assert_eq(run_sh(d, MERGE "s1.txt - < s2.txt >/dev/null 2>&1"), 2);
    run_cleanup(d);
}

/* cky merge refuses, before writing anything, a set of shards that is not every shard of one
 * input once (issue 41 item 5): one missing, one given twice, one of another input, one
 * that is not what its manifest says. */
Test(cli_multi, merge_refuses_an_incomplete_or_repeated_set)
{
    char d[64];
    setup_file(d, 11);
    for (int k = 1; k <= 3; k++)
        cr_assert_eq(run_sh(d, CPU "--shard %d/3 -i in.txt -o s%d.txt 2>/dev/null", k, k), 0);
    cr_assert_eq(run_sh(d, "head -10 in.txt > other.txt && " CPU "--shard 3/3 -i other.txt "
                           "-o o3.txt 2>/dev/null && head -2 s3.txt > short3.txt && "
                           "{ cp s3.txt.shard short3.txt.shard 2>/dev/null || true; }"), 0);
    const char *cases[][2] = {
        {"s1.txt s2.txt", "2 of the 3 shards of in.txt given: shard 3/3 missing"},
        {"s3.txt s1.txt", "2 of the 3 shards of in.txt given: shard 2/3 missing"},
        {"s1.txt s1.txt s1.txt", "s1.txt is given twice (shard 1/3 of in.txt)"},
        {"s1.txt s2.txt s3.txt s3.txt", "s3.txt is given twice"},
        {"s1.txt s2.txt o3.txt", "not the shards of one input"},
        {"s1.txt s2.txt short3.txt", "short3.txt has 2 lines, but its manifest"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        cr_assert_eq(run_sh(d, "echo keep > m && " MERGE "-o m %s 2>err", cases[k][0]), 1,
                     "%s: accepted", cases[k][0]);
        cr_assert_eq(run_sh(d, "echo keep | cmp -s - m"), 0, "%s: m written", cases[k][0]);
        char *err = run_read(d, "err");
        cr_assert(strstr(err, cases[k][1]), "%s: want '%s' in: %s", cases[k][0], cases[k][1],
                  err);
        free(err);
    }
    /* without manifests (shards written to stdout) only the line counts can be checked: in
     * the order given, with a warning; a file given twice is still refused */
    cr_assert_eq(run_sh(d, "for k in 1 2 3; do cp s$k.txt n$k; done"), 0);
    cr_assert_eq(run_sh(d, MERGE "n1 n2 n3 2>err | cmp one.txt -"), 0);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "warning: no shard manifests"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, MERGE "-o m n3 n1 n2 2>err"), 1);
    err = run_read(d, "err");
    cr_assert(strstr(err, "n1 has 4 lines after n3 with 3"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, MERGE "n1 n1 n3 > /dev/null 2>err"), 1);
    err = run_read(d, "err");
    cr_assert(strstr(err, "n1 is given twice"), "%s", err);
    free(err);
    cr_assert_eq(run_sh(d, "head -2 n1 > short && " MERGE "n2 short n3 >/dev/null 2>&1"), 1);
    /* the manifest of an older --shard run goes when the same -o is written without it */
    cr_assert_eq(run_sh(d, CPU "-i in.txt -o s1.txt 2>/dev/null && test ! -e s1.txt.shard"), 0);
    run_cleanup(d);
}

Test(cli_multi, gnu_parallel_with_two_workers)
{
    char d[64];
    if (system("command -v parallel >/dev/null 2>&1") != 0)
        cr_skip_test("GNU parallel is not installed (apt-get install parallel)");
    setup_file(d, 9);
    /* one shard per job, two jobs at a time, then the merge */
    cr_assert_eq(run_sh(d, "parallel --will-cite -j2 \"" CPU "--shard {}/2 -i in.txt "
                           "-o s{}.txt\" ::: 1 2 2>/dev/null && " MERGE "s1.txt s2.txt > "
                           "shards.txt"), 0);
    cr_assert_eq(run_sh(d, "cmp one.txt shards.txt"), 0);
    /* a stream cut into blocks of lines, kept in order by parallel itself */
    cr_assert_eq(run_sh(d, "parallel --will-cite -j2 --pipe -k -L 3 \"" CPU "\" < in.txt "
                           "> pipe.txt 2>/dev/null"), 0);
    cr_assert_eq(run_sh(d, "cmp one.txt pipe.txt"), 0);
    run_cleanup(d);
}

/* The Slurm array script, run as its tasks would be (no Slurm here), then merged. */
Test(cli_multi, slurm_script_tasks_by_hand)
{
    char d[64];
    setup_file(d, 7);
    const char *script = CKY_BUILD "/../docs/slurm-parse.sh";
    cr_assert_eq(run_sh(d, "bash -n '%s'", script), 0);
    for (int k = 0; k < 3; k++) /* an array given from 0: --array=0-2 */
        cr_assert_eq(run_sh(d, "CKY='%s' CKY_CACHE=cache SLURM_ARRAY_TASK_ID=%d "
                               "SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=3 bash '%s' '%s' "
                               "in.txt out --engine cpu --threads 1 2>/dev/null",
                               RUN_CKY, k, script, RUN_GRAMMAR), 0);
    cr_assert_eq(run_sh(d, MERGE "out/shard-1.txt out/shard-2.txt out/shard-3.txt | "
                           "cmp one.txt -"), 0);
    cr_assert_eq(run_sh(d, "bash '%s' g i o 2>/dev/null", script), 1, "not an array task");
    run_cleanup(d);
}
