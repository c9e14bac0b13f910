/* The kernel cache can do no harm (issue 14 item 4, issue 19): a truncated or altered host
 * object or cubin is compiled again, never loaded; leftovers of interrupted compiles are
 * removed; concurrent runs share one cache; an unusable cache folder means compiling in
 * memory with one warning; XDG_CACHE_HOME; a missing C compiler says what to do; a damaged
 * grammar image is written again. Trees are compared with those of an intact cache. */
#include "test_cli_run.h"

#define PARSE "'" RUN_CKY "' parse -g '" RUN_GRAMMAR "' --engine cpu -i in.txt --quiet "

/* Run cky with the cache `cache`, its trees into `out`, stderr into err; returns status. */
static int parse_with(const char *d, const char *env, const char *out)
{
    return run_sh(d, "%s " PARSE "> %s 2> err", env, out);
}

static void assert_same(const char *d, const char *a, const char *b)
{
    char *x = run_read(d, a), *y = run_read(d, b), *err = run_read(d, "err");
    cr_assert_str_eq(x, y, "%s and %s differ (stderr: %s)", a, b, err);
    cr_assert(strlen(x) > 100, "no trees in %s", a);
    free(x);
    free(y);
    free(err);
}

Test(cli_cache, damaged_host_objects_are_rebuilt)
{
    char d[64];
    run_setup(d);
    /* only the host objects this build uses (the shared base cache keeps older ones) */
    cr_assert_eq(run_sh(d, "rm -f cache/*.hso cache/*.so"), 0);
    cr_assert_eq(parse_with(d, "CKY_CACHE=cache", "good"), 0);
    /* two ways of damaging a host object, on the two smallest (each costs a compilation, in
     * parallel): cut to a third; one byte changed in the middle (a constant of the code).
     * (.so: the unverified entries of earlier versions, so that the test shows what they did.) */
    cr_assert_eq(run_sh(d, "cp -r cache pristine"), 0);
    cr_assert_eq(run_sh(d, "set -- $(ls -S cache/*.hso cache/*.so 2>/dev/null | tail -2) && "
                        "truncate -s $(( $(stat -c %%s $1) / 3 )) $1 && printf '\\125' | "
                        "dd of=$2 bs=1 conv=notrunc seek=$(( $(stat -c %%s $2) / 2 )) 2>/dev/null"),
                 0);
    cr_assert_eq(parse_with(d, "CKY_CACHE=cache", "out"), 0);
    assert_same(d, "out", "good");
    /* repaired: every entry rebuilt as it was */
    cr_assert_eq(run_sh(d, "diff -r cache pristine > /dev/null"), 0, "not repaired");
    cr_assert_eq(run_sh(d, "ls cache/*.hso > /dev/null"), 0, "no .hso in the cache");
    run_cleanup(d);
}

Test(cli_cache, leftovers_of_interrupted_compiles_are_removed)
{
    char d[64];
    run_setup(d);
    /* a dead process's temporaries (this host), a day-old one, and old-style build files */
    cr_assert_eq(run_sh(d, "h=$(uname -n) && touch cache/tmp-999999999-$h~abcdef.so && "
                        "mkdir cache/tmp-999999998-$h~ghijkl && touch cache/tmp-999999998-$h~ghijkl/k.c && "
                        "touch -d '2 days ago' cache/tmp-1-otherhost~mnopqr && "
                        "touch -d '2 hours ago' cache/build-AbCdEf.c cache/build-AbCdEf.so && "
                        "touch cache/tmp-$$-$h~alive1"), 0);
    cr_assert_eq(parse_with(d, "CKY_CACHE=cache", "out"), 0);
    cr_assert_eq(run_sh(d, "test -z \"$(ls cache | grep -v alive1 | grep -e tmp- -e build-)\""), 0,
                 "leftovers remain");
    run_cleanup(d);
}

Test(cli_cache, unusable_cache_folder_compiles_in_memory)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(parse_with(d, "CKY_CACHE=cache", "good"), 0);
    cr_assert_eq(parse_with(d, "touch file && CKY_CACHE=file/sub", "out"), 0);
    assert_same(d, "out", "good");
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "file/sub") && strstr(err, "CKY_CACHE=off"), "%s", err);
    cr_assert(!strchr(strchr(err, '\n') + 1, '\n'), "more than one message: %s", err);
    free(err);
    run_cleanup(d);
}

/* (CKY_CACHE=off in any case: test_codegen_cache.c, without the cost of a compilation.) */
Test(cli_cache, xdg_cache_home)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(run_sh(d, "mkdir -p xdg/cky && cp cache/* xdg/cky/"), 0);
    cr_assert_eq(parse_with(d, "unset CKY_CACHE; HOME=$PWD/home XDG_CACHE_HOME=$PWD/xdg", "out"),
                 0);
    char *err = run_read(d, "err");
    cr_assert_str_eq(err, "", "the XDG cache was not used: %s", err);
    free(err);
    cr_assert_eq(run_sh(d, "test ! -e home"), 0, "$HOME/.cache was used");
    run_cleanup(d);
}

Test(cli_cache, missing_compiler_says_what_to_do)
{
    char d[64];
    run_setup(d);
    cr_assert_eq(parse_with(d, "CC=/nonexistent/cc CKY_CACHE=off", "out"), 1);
    char *err = run_read(d, "err");
    cr_assert(strstr(err, "/nonexistent/cc") && strstr(err, "--engine ref") &&
              !strstr(err, "build-"), "%s", err);
    free(err);
    run_cleanup(d);
}

/* Two runs compiling the same missing kernel into one cache at once (a cache of what the
 * run uses, less its smallest host object, so that the test compiles one kernel, not all):
 * both right, the cache whole after. */
Test(cli_cache, concurrent_compiles_share_a_cache)
{
    char d[64];
    run_setup(d);
    /* a cache of its own: the shared one that run_setup copies may hold kernels the run
       does not use (another arithmetic's) */
    cr_assert_eq(run_sh(d, "rm -r cache"), 0);
    cr_assert_eq(parse_with(d, "CKY_CACHE=cache", "good"), 0);
    cr_assert_eq(run_sh(d, "cp -r cache new && rm $(ls -S new/*.hso | tail -1)"), 0);
    cr_assert_eq(run_sh(d, "(CKY_CACHE=new " PARSE "> a 2>/dev/null & CKY_CACHE=new " PARSE
                        "> b 2>/dev/null; wait $!) && CKY_CACHE=new " PARSE "> c 2>/dev/null"), 0);
    cr_assert_eq(run_sh(d, "diff -r cache new"), 0, "the cache is not whole");
    assert_same(d, "a", "good");
    assert_same(d, "b", "good");
    assert_same(d, "c", "good");
    cr_assert_eq(run_sh(d, "test -z \"$(ls new | grep -e tmp- -e build-)\""), 0);
    run_cleanup(d);
}

/* The grammar image (grammar/image_cache.c): written by the first run, used by the next, and
 * written again, whole, after damage; the trees never change. (--engine ref: no kernels.) */
Test(cli_cache, damaged_grammar_image_is_rebuilt)
{
    char d[64];
    run_setup(d);
    const char *ref = "CKY_CACHE=img '" RUN_CKY "' parse -g '" RUN_GRAMMAR "' --engine ref "
                      "-i in.txt";
    cr_assert_eq(run_sh(d, "%s > good 2> err", ref), 0);
    cr_assert_eq(run_sh(d, "test $(ls img/*.gimg | wc -l) = 1 && cp img/*.gimg pristine"), 0,
                 "no grammar image");
    cr_assert_eq(run_sh(d, "%s > again 2> err", ref), 0);
    assert_same(d, "again", "good");
    cr_assert_eq(run_sh(d, "f=$(ls img/*.gimg) && printf 'XXXX' | dd of=$f bs=1 conv=notrunc "
                        "seek=$(( $(stat -c %%s $f) / 2 )) 2>/dev/null && ! cmp -s $f pristine"),
                 0);
    cr_assert_eq(run_sh(d, "%s > out 2> err", ref), 0);
    assert_same(d, "out", "good");
    cr_assert_eq(run_sh(d, "cmp img/*.gimg pristine"), 0, "the damaged image was not rewritten");
    run_cleanup(d);
}

/* cky compile fills the cache with everything a later run of the grammar uses (issue 41
 * item 4): with --engine cpu the host objects of both decoders, exhaustive (Viterbi's in
 * fixed point, --arith auto's choice there) and pruned, so that cky parse with either
 * compiles nothing (the cache's files stay the same); by default the cubins of every
 * program the gpu engine loads (max-plus, sum-product for each role, fixed max-plus for a
 * GPU of sm_90), so that compiling any of them alone finds it all in the cache. */
Test(cli_cache, compile_fills_what_a_run_uses)
{
    char d[64];
    run_setup(d);
    const char *gr = CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr", *cky = RUN_CKY;
    cr_assert_eq(run_sh(d, "CKY_CACHE=c '%s' compile -g '%s' --engine cpu > /dev/null 2> err "
                        "&& ls c > before", cky, gr), 0);
    const char *decoders[] = {"maxrule", "viterbi", "maxrule --prune none",
                              "viterbi --prune none"};
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(run_sh(d, "CKY_CACHE=c '%s' parse -g '%s' --engine cpu --decoder %s "
                            "-i in.txt > out 2> err", cky, gr, decoders[k]), 0);
        cr_assert_eq(run_sh(d, "ls c | cmp -s before -"), 0, "%s: cky parse compiled kernels "
                     "after cky compile --engine cpu: %s", decoders[k], run_read(d, "err"));
    }
    cr_assert_eq(run_sh(d, "'%s' compile -g '%s' --cache c2 > /dev/null 2>&1", cky, gr), 0);
    const char *programs[] = {"max-plus --role parent", "sum-product --role parent",
                              "sum-product --role left", "sum-product --role right",
                              "fixed --role parent"};
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(run_sh(d, "'%s' compile -g '%s' --cache c2 --semiring %s --json > json "
                            "2> /dev/null", cky, gr, programs[k]), 0);
        char *json = run_read(d, "json");
        cr_assert(strstr(json, "\"kernels_compiled\": 0,"), "--semiring %s: not all in the "
                  "cache after cky compile: %s", programs[k], json);
        free(json);
    }
    run_cleanup(d);
}
