/* Tests of the service's request side (serve/request.c, serve/align.c): the spans of the
 * tokens in their text, raw and tokenized, with multi-byte characters; the refusals with
 * their statuses; and the batcher's order across jobs. The HTTP side is tested end to end by
 * python/tests/test_serve.py. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../serve/serve_internal.h"

static const serve_limits lim = {100, 1000};

/* The request of a raw text (copied: the request takes it over). */
static cky_status from_text(const char *text, const char *props, serve_request *rq)
{
    return serve_request_from_text(strdup(text), strlen(text), props, &lim, rq);
}

static cky_status from_json(const char *json, serve_request *rq)
{
    return serve_request_from_json(strdup(json), strlen(json), &lim, rq);
}

/* "word=original@begin-end ..." of sentence k, offsets in characters. */
static void spans(const serve_request *rq, int k, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < rq->s[k].n; i++) {
        const serve_span *sp = &rq->span[rq->first[k] + i];
        size_t n = strlen(out);
        snprintf(out + n, size - n, "%s%s=%.*s@%ld-%ld", i ? " " : "", rq->s[k].words[i],
                 (int)(sp->byte_end - sp->byte_begin), rq->text[k] + sp->byte_begin,
                 sp->char_begin, sp->char_end);
    }
}

Test(serve, raw_text_spans_map_rewritten_tokens_back)
{
    serve_request rq;
    cr_assert_eq(from_text("\"I can't\u2014cannot,\" he said (again) in the U.S.\n", NULL, &rq),
                 CKY_OK, "%s", cky_last_error());
    cr_assert_eq(rq.n, 1);
    char buf[1024];
    spans(&rq, 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "``=\"@0-1 I=I@1-2 ca=ca@3-5 n't=n't@5-8 --=\u2014@8-9 can=can@9-12 "
                          "not=not@12-15 ,=,@15-16 ''=\"@16-17 he=he@18-20 said=said@21-25 "
                          "-LRB-=(@26-27 again=again@27-32 -RRB-=)@32-33 in=in@34-36 "
                          "the=the@37-40 U.S.=U.S.@41-45 .=@45-45");
    serve_request_clear(&rq);
}

Test(serve, offsets_count_characters_across_lines)
{
    serve_request rq;
    /* é and ’ are two and three bytes, one character each; blank lines are skipped */
    cr_assert_eq(from_text("Caf\u00e9s open.\r\n\n  \nIt\u2019s 3/4 done *now*.", NULL, &rq),
                 CKY_OK);
    cr_assert_eq(rq.n, 2);
    char buf[1024];
    spans(&rq, 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "Caf\u00e9s=Caf\u00e9s@0-5 open=open@6-10 .=.@10-11");
    spans(&rq, 1, buf, sizeof buf);
    cr_assert_str_eq(buf, "It=It@17-19 's=\u2019s@19-21 3\\/4=3/4@22-25 done=done@26-30 "
                          "\\*now\\*=*now*@31-36 .=.@36-37");
    cr_assert_eq(rq.format, SERVE_FORMAT_JSON);
    cr_assert(rq.scores);
    serve_request_clear(&rq);
}

Test(serve, tokenized_text_and_token_arrays)
{
    serve_request rq;
    cr_assert_eq(from_json("{\"sentences\": [\"a (b) \u00e9 .\", [\"x(\", \"y\"]], "
                           "\"tokenized\": true}", &rq), CKY_OK, "%s", cky_last_error());
    cr_assert_eq(rq.n, 2);
    char buf[1024];
    spans(&rq, 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "a=a@0-1 -LRB-b-RRB-=(b)@2-5 \u00e9=\u00e9@6-7 .=.@8-9");
    cr_assert_null(rq.text[1]); /* token arrays have no text */
    cr_assert_eq(rq.s[1].n, 2);
    cr_assert_str_eq(rq.s[1].words[0], "x-LRB-");
    cr_assert(!rq.scores);
    serve_request_clear(&rq);
    cr_assert_eq(from_text("a b\n", "{\"tokenize.whitespace\": true, \"outputFormat\": "
                           "\"text\", \"annotators\": \"parse\"}", &rq), CKY_OK);
    cr_assert_eq(rq.format, SERVE_FORMAT_TEXT);
    serve_request_clear(&rq);
}

Test(serve, refusals_have_their_status)
{
    static const struct {
        const char *json;
        cky_status st;
        const char *message;
    } cases[] = {
        {"{\"sentences\": [", CKY_ERR_FORMAT, "malformed JSON: line 1, column 15"},
        {"[1]", CKY_ERR_FORMAT, "the request must be a JSON object"},
        {"{\"sentences\": [true]}", CKY_ERR_FORMAT, "sentences[0]: must be a string"},
        {"{\"sentences\": [[\"\"]]}", CKY_ERR_FORMAT, "sentences[0][0]: empty token"},
        {"{\"sentences\": [], \"kbest\": 0}", CKY_ERR_FORMAT, "\"kbest\" must be"},
        {"{\"sentences\": [], \"kbest\": 2.5}", CKY_ERR_FORMAT, "\"kbest\" must be"},
        {"{\"sentences\": [], \"scores\": \"yes\"}", CKY_ERR_FORMAT, "\"scores\" must be"},
        {"{\"sentences\": [], \"x\": 1}", CKY_ERR_FORMAT, "unknown field \"x\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        serve_request rq;
        cr_expect_eq(from_json(cases[k].json, &rq), cases[k].st, "%s", cases[k].json);
        cr_expect(strstr(cky_last_error(), cases[k].message), "%s: %s", cases[k].json,
                  cky_last_error());
        serve_request_clear(&rq);
    }
    serve_request rq;
    cr_expect_eq(from_json("{\"sentences\": [], \"kbest\": 7}", &rq), CKY_OK);
    cr_expect_eq(rq.kbest, 7); /* the lists: http.c's k-best batcher (python/tests) */
    serve_request_clear(&rq);
    cr_expect_eq(from_json("{\"sentences\": []}", &rq), CKY_OK);
    cr_expect_eq(rq.kbest, 1);
    serve_request_clear(&rq);
    char *many = malloc(400);
    for (int k = 0; k < 101; k++)
        memcpy(many + 2 * k, "a\n", 2);
    cr_expect_eq(serve_request_from_text(many, 202, NULL, &lim, &rq), CKY_ERR_LIMIT);
    serve_request_clear(&rq);
    char *wide = malloc(1002);
    memset(wide, 'a', 1001);
    cr_expect_eq(serve_request_from_text(wide, 1001, NULL, &lim, &rq), CKY_ERR_LIMIT);
    cr_expect(strstr(cky_last_error(), "line 1: 1001 bytes"), "%s", cky_last_error());
    serve_request_clear(&rq);
    cr_expect_eq(from_text("ok \xe2\x82", NULL, &rq), CKY_ERR_FORMAT);
    cr_expect_str_eq(cky_last_error(), "the text is not valid UTF-8: byte 0xe2 at offset 3");
    serve_request_clear(&rq);
    cr_expect_eq(from_text("a", "{\"outputFormat\": \"xml\"}", &rq), CKY_ERR_UNSUPPORTED);
    serve_request_clear(&rq);
    cr_expect_eq(from_text("a", "{oops", &rq), CKY_ERR_FORMAT);
    serve_request_clear(&rq);
}

/* ---- the batcher ---- */

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
} waiter;

static void job_over(serve_job *job)
{
    waiter *w = job->ctx;
    pthread_mutex_lock(&w->lock);
    w->done++;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static char *tree_line(const parse_result *r)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    tree_write_line(r->tree, f);
    fclose(f);
    return buf;
}

/* Jobs of 1 to 7 sentences, queued at once, come back in their own order with the trees a
 * parser gives them in one call; a job past its deadline times out; one beyond the queue is
 * refused. */
Test(serve, batcher_keeps_each_jobs_order, .timeout = 300)
{
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK, "%s",
                 cky_last_error());
    parser_options o = parser_default_options(); /* the ref engine: no compiler needed */
    parser *p;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    static const char *const lines[] = {"Stocks fell .", "Prices rose .", "", "He said so .",
                                        "The company expects a loss .", "It is .", "Yes ."};
    enum { NL = sizeof lines / sizeof *lines, NJ = 6 };
    sentence s[NL];
    parse_result want[NL];
    for (int k = 0; k < NL; k++)
        cr_assert_eq(sentence_from_line(lines[k], strlen(lines[k]), &s[k]), CKY_OK);
    cr_assert_eq(parser_parse(p, s, NL, want), CKY_OK);
    serve_batcher *b;
    cr_assert_eq(serve_batcher_new(p, 4, 5, 40, NULL, &b), CKY_OK); /* jobs cut across batches */
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    serve_job jobs[NJ];
    parse_result r[NJ][NL];
    memset(r, 0, sizeof r);
    for (int j = 0; j < NJ; j++) {
        int first = j % NL, n = 1 + j;
        if (first + n > NL)
            first = NL - n;
        jobs[j] = (serve_job){.s = s + first, .r = r[j], .n = n, .deadline = 1e300,
                              .done = job_over, .ctx = &w};
        cr_assert(serve_batcher_submit(b, &jobs[j]));
    }
    serve_job late = {.s = s, .r = r[0], .n = 1, .deadline = 0, .done = job_over, .ctx = &w};
    parse_result late_r[NL];
    late.r = late_r;
    cr_assert(serve_batcher_submit(b, &late));
    serve_job big = {.s = s, .r = late_r, .n = 41, .deadline = 1e300, .done = job_over};
    cr_assert(!serve_batcher_submit(b, &big));
    cr_assert_eq(serve_batcher_state(b, &big), SERVE_JOB_REFUSED);
    pthread_mutex_lock(&w.lock);
    while (w.done < NJ + 1)
        pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    cr_assert_eq(serve_batcher_state(b, &late), SERVE_JOB_TIMEOUT);
    for (int j = 0; j < NJ; j++) {
        cr_assert_eq(serve_batcher_state(b, &jobs[j]), SERVE_JOB_DONE);
        int first = jobs[j].s - s;
        for (int k = 0; k < jobs[j].n; k++) {
            char *got = tree_line(&r[j][k]), *exp = tree_line(&want[first + k]);
            cr_expect_str_eq(got, exp, "job %d sentence %d", j, k);
            cr_expect_eq(r[j][k].outcome, want[first + k].outcome);
            free(got);
            free(exp);
            parse_result_clear(&r[j][k]);
        }
    }
    serve_batch_stats st;
    serve_batcher_stats(b, &st);
    cr_expect_eq(st.sentences, 21);
    cr_expect_leq(st.batch_max, 4);
    cr_expect_eq(st.jobs_timed_out, 1);
    cr_expect_eq(st.jobs_refused, 1);
    cr_expect_eq(st.queued, 0);
    serve_batcher_free(b);
    for (int k = 0; k < NL; k++) {
        sentence_free(&s[k]);
        parse_result_clear(&want[k]);
    }
    parser_free(p);
    grammar_free(g);
}

/* The batcher waits for a batch to fill only while a request is on its way (`arriving`):
 * with one arriving, a queued job waits (however long the wait, here longer than the
 * test's time limit) and the next joins its batch; with none, a job is parsed at once. */
Test(serve, batcher_waits_only_while_a_request_arrives, .timeout = 300)
{
    grammar *g;
    cr_assert_eq(grammar_load(CKY_SHARED "/grammars/sample-sm1/sample-sm1", &g), CKY_OK, "%s",
                 cky_last_error());
    parser_options o = parser_default_options();
    parser *p;
    cr_assert_eq(parser_new(g, &o, &p), CKY_OK, "%s", cky_last_error());
    sentence s[2];
    cr_assert_eq(sentence_from_line("Stocks fell .", 13, &s[0]), CKY_OK);
    cr_assert_eq(sentence_from_line("Prices rose .", 13, &s[1]), CKY_OK);
    atomic_int arriving;
    atomic_init(&arriving, 1);
    serve_batcher *b;
    cr_assert_eq(serve_batcher_new(p, 4, 1000000, 40, &arriving, &b), CKY_OK);
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    parse_result r[3][1];
    memset(r, 0, sizeof r);
    serve_job a = {.s = s, .r = r[0], .n = 1, .deadline = 1e300, .done = job_over, .ctx = &w};
    serve_job c = {.s = s + 1, .r = r[1], .n = 1, .deadline = 1e300, .done = job_over, .ctx = &w};
    serve_job e = {.s = s, .r = r[2], .n = 1, .deadline = 1e300, .done = job_over, .ctx = &w};
    cr_assert(serve_batcher_submit(b, &a));
    usleep(100000); /* a request still arriving: job a waits */
    cr_assert_eq(serve_batcher_state(b, &a), SERVE_JOB_QUEUED);
    cr_assert(serve_batcher_submit(b, &c)); /* that request, now submitted */
    atomic_store(&arriving, 0);
    serve_batcher_poke(b);
    pthread_mutex_lock(&w.lock);
    while (w.done < 2)
        pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    serve_batch_stats st;
    serve_batcher_stats(b, &st);
    cr_assert_eq(st.batches, 1, "jobs a and c in %ld batches", st.batches);
    cr_assert(serve_batcher_submit(b, &e)); /* nothing arriving: parsed at once */
    pthread_mutex_lock(&w.lock);
    while (w.done < 3)
        pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    serve_batcher_stats(b, &st);
    cr_assert_eq(st.batches, 2);
    cr_assert_eq(serve_batcher_state(b, &e), SERVE_JOB_DONE);
    serve_batcher_free(b);
    for (int k = 0; k < 3; k++)
        parse_result_clear(&r[k][0]);
    sentence_free(&s[0]);
    sentence_free(&s[1]);
    parser_free(p);
    grammar_free(g);
}
