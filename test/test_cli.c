/* The `cky` command's numeric options: a value that is not a whole number in range is a
 * usage error (exit status 2) naming the option, never a silent 0 or a truncated number;
 * the same for the GPU settings in the environment (an error, exit status 1). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli/cli.h" /* CKY_VERSION */

/* Run `ENV cky ARGS` in the shell (ENV: variable assignments, or ""), its stderr into
 * `err`; returns the exit status. */
static int run_cky_env(const char *env, const char *args, char *err, size_t size)
{
    const char *cky = CKY_BUILD "/cky";
    if (access(cky, X_OK) != 0)
        cr_skip_test("%s is not built", cky);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s '%s' %s 2>&1 >/dev/null", env, cky, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(err, 1, size - 1, p);
    err[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_cky(const char *args, char *err, size_t size)
{
    return run_cky_env("", args, err, size);
}

Test(cli, bad_numbers_are_usage_errors)
{
    const char *cases[][2] = {
        {"bench -g G -i F --max-length 12x", "--max-length"},
        {"bench -g G -i F --repeat 0", "--repeat"},
        {"bench -g G -i F --workspace abc", "--workspace"},
        {"bench -g G -i F --device -1", "--device"},
        {"bench -g G -i F --decoder fastest", "decoder"},
        {"bench -g G -i F --engine ref", "engine"},
        {"bench -g G -i F --engine cpu --device 1", "--device"},
        {"bench -g G -i F --threads 2", "--threads"},
        {"bench -g G -i F --engine cpu --threads 0", "--threads"},
        {"parse -g G --workspace 0", "--workspace"},
        {"compile -g G --live-limit 4q", "--live-limit"},
        {"compile -g G --threads 0", "--threads"},
        {"compile -g G --semiring tropical", "--semiring"},
        {"compile -g G --role middle", "--role"},
        {"eval -c 9999999999 A B", "-c"},
        {"parse -g G --decoder fastest", "decoder"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char err[1024];
        cr_assert_eq(run_cky(cases[k][0], err, sizeof err), 2, "cky %s: %s", cases[k][0], err);
        cr_assert(strstr(err, cases[k][1]), "cky %s: %s", cases[k][0], err);
    }
}

/* The GPU tuning knobs come from the developers' channel (CKY_TUNE) through the command
 * line into the parser's options: a bad key or value is an error naming it (before any
 * grammar or device is needed), a variable of the old channel is refused with the new
 * spelling, and the CPU engine ignores them. */
Test(cli, bad_gpu_environment_is_an_error)
{
    const char *cases[][2] = {
        {"CKY_TUNE=block_tiles=9", "block_tiles='9'"},
        {"CKY_TUNE=chunk=66,block_tiles=0", "block_tiles='0'"},
        {"CKY_TUNE=chunk=-1", "chunk='-1'"},
        {"CKY_TUNE=chunk=12x", "chunk='12x'"},
        {"CKY_TUNE=tiles=2", "unknown key 'tiles'"},
        {"CKY_TUNE=chunk", "'chunk' is not KEY=VALUE"},
        {"CKY_TUNE=prune_host=2", "prune_host='2'"},
        {"CKY_TUNE=prune_lanes=5", "prune_lanes='5'"},
        {"CKY_TUNE=prune_chunk=0", "prune_chunk='0'"},
        {"CKY_TUNE=prune_team=65", "prune_team='65'"},
        {"CKY_GPU_CHUNK=12", "CKY_GPU_CHUNK is gone"},
    };
    const char *cmds[] = {"parse -g G --engine gpu", "bench -g G -i F"};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int c = 0; c < 2; c++) {
            char args[256], err[1024];
            snprintf(args, sizeof args, "%s", cmds[c]);
            cr_assert_eq(run_cky_env(cases[k][0], args, err, sizeof err), 1, "%s cky %s: %s",
                         cases[k][0], args, err);
            cr_assert(strstr(err, cases[k][1]), "%s cky %s: %s", cases[k][0], args, err);
        }
    char err[1024];
    cr_assert_eq(run_cky_env("CKY_TUNE=chunk=12x", "parse -g /nonexistent/g --engine cpu", err,
                             sizeof err), 1, "%s", err);
    cr_assert_null(strstr(err, "chunk"), "%s", err);
}

/* cky --version: version and commit, the CUDA runtime and driver, NVRTC, the GPUs or "no
 * GPU" (issue 41 item 8). */
Test(cli, version_names_the_build_and_what_it_finds)
{
    const char *cky = CKY_BUILD "/cky";
    if (access(cky, X_OK) != 0)
        cr_skip_test("%s is not built", cky);
    FILE *p = popen("'" CKY_BUILD "/cky' --version", "r");
    cr_assert_not_null(p);
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
    const char *head = "cky " CKY_VERSION " (commit ";
    cr_assert(!strncmp(out, head, strlen(head)), "%s", out);
    cr_assert(strstr(out, "\nCUDA runtime ") && strstr(out, ", driver ") &&
              strstr(out, "\nNVRTC "), "%s", out);
    cr_assert(strstr(out, "\nGPU 0: ") || strstr(out, "\nGPU: no GPU"), "%s", out);
}
