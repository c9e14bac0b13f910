/* Tests of the engine pool (parser/pool.h): fake engines that record who parsed what, an
 * engine that fails mid-run (the test hook and a real error), every engine failing; and the
 * parser's pool of cpu engines against one engine. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/gpu.h"
#include "../parser/parser.h"
#include "../parser/pool.h"
#include "../util/io.h"

#define NSENT 100

/* A fake engine: writes each sentence's index (its position in `base`) as the score, counts
 * the parses of each sentence, and fails with a real error on its chunk number `fail_on`
 * (-1: never) after writing its results (as a device error after a partial parse would). */
typedef struct fake {
    int id, fail_on, chunks;
} fake;

static const sentence *base;
static atomic_int entered, nfakes; /* engines that began a chunk; engines of the pool */
static atomic_int parsed[NSENT];
static atomic_int chunk_at[NSENT]; /* sentences of the chunk that began at each sentence */

static cky_status fake_parse(void *engine, const sentence *s, int n, parse_result *out)
{
    fake *f = engine;
    int chunk = f->chunks++;
    chunk_at[s - base] = n;
    /* every engine begins before any goes on, and chunks take a while: each engine gets a
     * share of the queue however the threads are scheduled */
    if (chunk == 0)
        atomic_fetch_add(&entered, 1);
    for (int wait = 0; entered < nfakes && wait < 2000; wait++)
        usleep(1000);
    usleep(1000);
    for (int k = 0; k < n; k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].outcome = PARSE_OK;
        out[k].score = (double)(s + k - base);
        out[k].loglik = f->id; /* who parsed it */
        out[k].error = strdup("scratch"); /* freed by the pool when the chunk fails */
    }
    if (chunk == f->fail_on)
        return cky_fail(CKY_ERR_CUDA, "fake engine %d: device lost", f->id);
    for (int k = 0; k < n; k++)
        atomic_fetch_add(&parsed[s + k - base], 1);
    return CKY_OK;
}

/* Run a pool of n fake engines over NSENT sentences in chunks of `chunk`. */
static pool *run_fakes(fake *f, int n, int chunk, int inject, int after, parse_result *out)
{
    static sentence s[NSENT];
    for (int k = 0; k < NSENT; k++)
        s[k].n = k < 10 ? 10 : 1; /* ten long sentences first: the work is there */
    base = s;
    for (int k = 0; k < NSENT; k++)
        parsed[k] = chunk_at[k] = 0;
    entered = 0;
    nfakes = n;
    void *engines[8];
    for (int k = 0; k < n; k++)
        engines[k] = &f[k];
    pool *pl;
    cr_assert_eq(pool_new(engines, n, fake_parse, &pl), CKY_OK);
    if (inject >= 0)
        pool_inject_failure(pl, inject, after);
    cr_assert_eq(pool_parse(pl, s, NSENT, out, chunk, 1), CKY_OK);
    return pl;
}

/* Every sentence in its own slot, parsed once by the engines' count (an engine that fails
 * on its own does not count its chunk); `twice` sentences were parsed by an engine that the
 * test hook then failed, engine `failed`: their results come from another. */
static void check_all_once(const parse_result *out, int twice, int failed)
{
    int seen_twice = 0;
    for (int k = 0; k < NSENT; k++) {
        cr_assert_eq(out[k].outcome, PARSE_OK, "sentence %d", k);
        cr_assert_eq(out[k].score, (double)k, "sentence %d in slot %g", k, out[k].score);
        cr_assert(parsed[k] == 1 || (twice && parsed[k] == 2), "sentence %d parsed %d times",
                  k, (int)parsed[k]);
        if (parsed[k] == 2) {
            seen_twice++;
            cr_assert_neq(out[k].loglik, (double)failed, "sentence %d kept from the failure", k);
        }
    }
    cr_assert_eq(seen_twice, twice);
}

static void clear_all(parse_result *out)
{
    for (int k = 0; k < NSENT; k++)
        parse_result_clear(&out[k]);
}

Test(pool, engines_share_the_queue_in_order)
{
    fake f[3] = {{0, -1, 0}, {1, -1, 0}, {2, -1, 0}};
    parse_result out[NSENT];
    pool *pl = run_fakes(f, 3, 7, -1, 0, out);
    check_all_once(out, 0, -1);
    cr_assert_eq(f[0].chunks + f[1].chunks + f[2].chunks, (NSENT + 6) / 7);
    const pool_failure *fl;
    cr_assert_eq(pool_failures(pl, &fl), 0);
    clear_all(out);
    pool_free(pl);
}

Test(pool, chunks_of_equal_work)
{
    fake f[2] = {{0, -1, 0}, {1, -1, 0}};
    parse_result out[NSENT];
    pool *pl = run_fakes(f, 2, 0, -1, 0, out); /* one chunk per engine, by words cubed */
    check_all_once(out, 0, -1);
    /* ten of 1001 and ninety of 2: half the work is in the first six sentences */
    cr_assert_eq(chunk_at[0], 6);
    cr_assert_eq(chunk_at[6], NSENT - 6);
    cr_assert_eq(f[0].chunks + f[1].chunks, 2);
    clear_all(out);
    pool_free(pl);
}

Test(pool, injected_failure_goes_to_the_others)
{
    fake f[3] = {{0, -1, 0}, {1, -1, 0}, {2, -1, 0}};
    parse_result out[NSENT];
    pool *pl = run_fakes(f, 3, 5, 1, 1, out); /* engine 1 fails on its second chunk */
    check_all_once(out, 5, 1);
    const pool_failure *fl;
    cr_assert_eq(pool_failures(pl, &fl), 1);
    cr_assert_eq(fl[0].engine, 1);
    cr_assert(strstr(fl[0].error, "injected failure"), "%s", fl[0].error);
    cr_assert_eq(f[1].chunks, 2, "the failed engine took no chunk after its failure");
    int by1 = 0;
    for (int k = 0; k < NSENT; k++)
        by1 += out[k].loglik == 1;
    cr_assert_eq(by1, 5, "only the failed engine's first chunk stays its own");
    /* the next batch runs on the engines left */
    clear_all(out);
    cr_assert_eq(pool_parse(pl, base, NSENT, out, 0, 2), CKY_OK);
    cr_assert_eq(f[1].chunks, 2);
    for (int k = 0; k < NSENT; k++)
        cr_assert_eq(out[k].score, (double)k);
    clear_all(out);
    pool_free(pl);
}

Test(pool, real_error_mid_run_is_retried_elsewhere)
{
    fake f[2] = {{0, 2, 0}, {1, -1, 0}};
    parse_result out[NSENT];
    pool *pl = run_fakes(f, 2, 3, -1, 0, out);
    check_all_once(out, 0, -1);
    const pool_failure *fl;
    cr_assert_eq(pool_failures(pl, &fl), 1);
    cr_assert_eq(fl[0].engine, 0);
    cr_assert_str_eq(fl[0].error, "fake engine 0: device lost");
    clear_all(out);
    pool_free(pl);
}

Test(pool, no_engine_left_fails_the_rest_only)
{
    fake f[2] = {{0, 1, 0}, {1, 1, 0}};
    parse_result out[NSENT];
    pool *pl = run_fakes(f, 2, 10, -1, 0, out);
    int ok = 0;
    for (int k = 0; k < NSENT; k++) {
        cr_assert_leq(parsed[k], 1);
        if (out[k].outcome == PARSE_OK) {
            ok++;
            cr_assert_eq(out[k].score, (double)k);
            cr_assert_eq(parsed[k], 1);
        } else {
            cr_assert_eq(out[k].outcome, PARSE_FAILED);
            cr_assert(strstr(out[k].error, "no engine left"), "%s", out[k].error);
            cr_assert(isinf(out[k].score));
        }
    }
    cr_assert_eq(ok, 20, "each engine's first chunk of 10 is kept");
    const pool_failure *fl;
    cr_assert_eq(pool_failures(pl, &fl), 2);
    clear_all(out);
    pool_free(pl);
}

/* The first `want` dev sentences. */
static int dev_sentences(int want, sentence *out)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(CKY_SHARED "/data/ptb-sample/dev.txt", &in), CKY_OK);
    char *line;
    size_t len;
    int n = 0;
    while (n < want && !io_lines_next(in, &line, &len) && line)
        cr_assert_eq(sentence_from_line(line, len, &out[n++]), CKY_OK);
    io_lines_close(in);
    return n;
}

/* The trees of results, one line each, into a malloc'ed string. */
static char *trees_text(const parse_result *r, int n)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    for (int k = 0; k < n; k++) {
        fprintf(f, "%d %.17g ", (int)r[k].outcome, r[k].score);
        tree_write_line(r[k].tree, f);
    }
    fclose(f);
    return buf;
}

/* A parser of `engines` engines (gpu: all on device 0), engine 2 failing after its first
 * chunk, gives what one engine gives, and names the failure. */
static void pool_same_as_one(parser_engine engine, int engines)
{
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK, "%s",
                 cky_last_error());
    sentence s[40];
    int n = dev_sentences(40, s);
    parse_result one[40], many[40];
    parser_options o = parser_default_options();
    o.engine = engine;
    o.threads = 2;
    o.max_length = 30; /* some too long: handled by each engine as by one */
    o.cache_dir = CKY_BUILD "/test-cache";
    parser *p1, *pn;
    cr_assert_eq(parser_new(g, &o, &p1), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(parser_parse(p1, s, n, one), CKY_OK);
    o.engines = engines;
    o.test.pool_chunk = 4;
    o.test.fail_engine = 2;
    o.test.fail_after = 1;
    cr_assert_eq(parser_new(g, &o, &pn), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(parser_engine_count(pn), engines);
    cr_assert_eq(parser_parse(pn, s, n, many), CKY_OK);
    char *a = trees_text(one, n), *b = trees_text(many, n);
    cr_assert_str_eq(b, a);
    const pool_failure *fl;
    cr_assert_eq(parser_failures(pn, &fl), 1);
    cr_assert_eq(fl[0].engine, 1);
    cr_assert_eq(parser_failures(p1, &fl), 0);
    free(a);
    free(b);
    for (int k = 0; k < n; k++) {
        parse_result_clear(&one[k]);
        parse_result_clear(&many[k]);
        sentence_free(&s[k]);
    }
    parser_free(p1);
    parser_free(pn);
    grammar_free(g);
}

Test(pool, parser_pool_of_cpu_engines_with_a_failure) { pool_same_as_one(PARSER_ENGINE_CPU, 3); }

/* Two gpu engines on device 0 (each on its own host thread, making the device current), one
 * failing: the trees and scores of one engine. On a machine with a GPU (make test-gpu). */
Test(gpu_pool, two_engines_on_one_device_with_a_failure)
{
    if (gpu_count() == 0)
        cr_skip_test("no CUDA device: the gpu engine pool is not tested here");
    pool_same_as_one(PARSER_ENGINE_GPU, 2);
}

Test(pool, parser_refuses_a_failing_engine_out_of_range)
{
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK);
    parser_options o = parser_default_options();
    o.engines = 2;
    o.test.fail_engine = 3;
    parser *p = NULL;
    cr_assert_eq(parser_new(g, &o, &p), CKY_ERR_ARG);
    cr_assert(strstr(cky_last_error(), "no engine 3 of 2"), "%s", cky_last_error());
    o.engines = PARSER_MAX_ENGINES + 1;
    o.test.fail_engine = 0;
    cr_assert_eq(parser_new(g, &o, &p), CKY_ERR_ARG);
    grammar_free(g);
}
