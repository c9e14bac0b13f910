/* cky serve: the parsing service (serve/serve.h, docs/serve.md). Thin: reads the options,
 * loads the grammar and the engine once, starts the service and waits for SIGINT or SIGTERM,
 * then drains it (every request already received is answered) and exits 0. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../serve/serve.h"
#include "cli.h"
#include "guard.h"
#include "multi.h"

static const char help[] =
    "usage: cky serve -g GRAMMAR [--port 9000] [--host 127.0.0.1] [OPTIONS]\n"
    "\n"
    "Answer parsing requests over HTTP with one grammar and engine, loaded once. The\n"
    "sentences of concurrent requests are parsed together, in engine batches. API\n"
    "(docs/serve.md): POST / raw text, one sentence per line (CoreNLP's request;\n"
    "?properties={\"outputFormat\":\"json\"|\"text\"}); POST /parse JSON {\"sentences\": [...],\n"
    "\"tokenized\": false, \"kbest\": 1, \"scores\": false}; GET /ready, /live, /stats; a page\n"
    "at / that draws the trees. \"kbest\": K (2 to 50) gives each sentence's k-best list, the\n"
    "Berkeley parser's -kbest (max-rule; the pruned decoder on any engine, or --prune\n"
    "none on ref). SIGINT or SIGTERM: stop listening, answer the requests\n"
    "already received, exit 0.\n"
    "\n"
    "\n";

static const cli_use uses[] = {
    {CLI_GRAMMAR, NULL}, {CLI_LISTEN, NULL}, {CLI_PORT, NULL}, {CLI_TOKEN_FILE, NULL},
    {CLI_ENGINE, NULL}, {CLI_DECODER, NULL}, {CLI_PRUNE, NULL}, {CLI_PRUNE_FALLBACK, NULL},
    {CLI_DEVICE, NULL}, {CLI_DEVICES, NULL},
    {CLI_ENGINES, NULL}, {CLI_THREADS, NULL}, {CLI_WORKSPACE, NULL}, {CLI_ARITH, NULL}, {CLI_MAX_LENGTH, NULL},
    {CLI_BATCH, NULL}, {CLI_BATCH_WAIT, NULL}, {CLI_QUEUE, NULL}, {CLI_MAX_SENTENCES, NULL},
    {CLI_MAX_REQUEST_BYTES, NULL}, {CLI_MAX_SENTENCE_BYTES, NULL}, {CLI_TIMEOUT, NULL},
    {CLI_MAX_CONNECTIONS, NULL}, {CLI_IDLE_TIMEOUT, NULL}, {CLI_HTTP_THREADS, NULL},
    {CLI_GRACE, NULL}, {CLI_HELP, NULL}, {CLI_END, NULL}};

typedef struct serve_cli {
    const char *grammar, *token_file;
    int engine_set, decoder_set, prune_set, devices_set, grace_s;
    parser_options popt;
    serve_options so;
} serve_cli;

static int read_options(int argc, char **argv, serve_cli *c)
{
    memset(c, 0, sizeof *c);
    c->popt = parser_default_options();
    c->so = serve_default_options();
    c->so.batch = c->so.queue = c->so.max_sentences = 0; /* from the engine, below */
    cli_args a;
    int rc = cli_options_read("serve", uses, 0, argc, argv, &a);
    if (!rc && a.given[CLI_HELP]) {
        fputs(help, stdout);
        fputs("options:\n", stdout);
        cli_options_help(stdout, uses);
        exit(0);
    }
    if (!rc)
        rc = cli_args_parser("serve", &a, &c->popt);
    if (!rc && !a.given[CLI_GRAMMAR])
        rc = cli_usage_error("serve", "no grammar given (-g GRAMMAR)");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    c->grammar = a.text[CLI_GRAMMAR];
    c->token_file = a.text[CLI_TOKEN_FILE];
    c->engine_set = a.given[CLI_ENGINE];
    c->decoder_set = a.given[CLI_DECODER];
    c->prune_set = a.given[CLI_PRUNE];
    c->devices_set = a.given[CLI_DEVICES];
    c->grace_s = a.given[CLI_GRACE] ? a.num[CLI_GRACE] : 60;
    if (a.given[CLI_LISTEN])
        c->so.host = a.text[CLI_LISTEN];
    /* the numbers serve_options takes as they are */
    const struct { cli_opt id; int *out; } ints[] = {
        {CLI_PORT, &c->so.port}, {CLI_BATCH, &c->so.batch},
        {CLI_BATCH_WAIT, &c->so.batch_wait_ms}, {CLI_QUEUE, &c->so.queue},
        {CLI_MAX_SENTENCES, &c->so.max_sentences},
        {CLI_MAX_CONNECTIONS, &c->so.max_connections},
        {CLI_IDLE_TIMEOUT, &c->so.idle_timeout_s}, {CLI_HTTP_THREADS, &c->so.http_threads}};
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++)
        if (a.given[ints[k].id])
            *ints[k].out = a.num[ints[k].id];
    if (a.given[CLI_MAX_REQUEST_BYTES])
        c->so.max_request_bytes = (size_t)a.num[CLI_MAX_REQUEST_BYTES];
    if (a.given[CLI_MAX_SENTENCE_BYTES])
        c->so.max_sentence_bytes = (size_t)a.num[CLI_MAX_SENTENCE_BYTES];
    if (a.given[CLI_TIMEOUT])
        c->so.timeout_ms = a.num[CLI_TIMEOUT] * 1000;
    cli_args_free(&a); /* the texts stay: they point into argv */
    return 0;
}

/* The parser of the k-best lists of /parse (c->so.kbest_max trees), where the engine and
 * decoder give them; else *kp NULL and why (the parser's refusal, without its "--kbest N: ")
 * in c->so.kbest_why. */
static void kbest_parser(serve_cli *c, const grammar *g, parser **kp, char *why, size_t size)
{
    parser_options o = c->popt;
    o.kbest = c->so.kbest_max;
    if (parser_new(g, &o, kp)) {
        *kp = NULL;
        const char *msg = cky_last_error(), *colon = strstr(msg, ": ");
        snprintf(why, size, "%s", !strncmp(msg, "--kbest", 7) && colon ? colon + 2 : msg);
        c->so.kbest_why = why;
    }
    c->so.kbest = *kp;
}

/* 1 if every address `host` stands for is a loopback address (127.0.0.0/8, ::1). */
static int is_loopback(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, NULL, &hints, &res))
        return 0; /* serve_start names the problem */
    int loop = 1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET)
            loop &= (ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr) >> 24) == 127;
        else if (ai->ai_family == AF_INET6)
            loop &= IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr);
        else
            loop = 0;
    }
    freeaddrinfo(res);
    return loop;
}

/* The token: the first line of the file, without its line end; *out malloc'ed. */
static int read_token(const char *path, char **out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cli_error("serve", "--token-file %s: cannot open it", path);
    char buf[4096];
    char *line = fgets(buf, sizeof buf, f);
    fclose(f);
    size_t n = line ? strcspn(buf, "\r\n") : 0;
    buf[n] = '\0';
    if (n == 0)
        return cli_error("serve", "--token-file %s: the first line (the token) is empty", path);
    struct stat sb;
    if (stat(path, &sb) == 0 && (sb.st_mode & 077))
        fprintf(stderr, "cky serve: warning: --token-file %s can be read by others "
                "(chmod 600 it)\n", path);
    return (*out = strdup(buf)) ? 0 : cli_error("serve", "out of memory");
}

/* The engine's batch size (parser p's) and the defaults that follow from it. */
static void engine_defaults(serve_cli *c, const parser *p)
{
    if (!c->so.batch)
        c->so.batch = parser_batch_size(p);
    if (!c->so.queue)
        c->so.queue = 32 * c->so.batch;
    if (!c->so.max_sentences)
        c->so.max_sentences = c->so.queue < 1000 ? c->so.queue : 1000;
}

int cli_serve(int argc, char **argv)
{
    serve_cli c;
    int rc = read_options(argc, argv, &c);
    if (rc)
        return rc;
    char *token = NULL;
    if (!c.token_file && !is_loopback(c.so.host))
        return cli_usage_error("serve", "--host %s is not a loopback address: give "
                               "--token-file FILE too", c.so.host);
    if (c.token_file && (rc = read_token(c.token_file, &token)))
        return rc;
    c.so.token = token;
    if (!c.engine_set) {
        c.popt.engine = parser_default_engine();
        if (c.popt.engine == PARSER_ENGINE_CPU)
            fprintf(stderr, "cky serve: no usable GPU: parsing with the CPU engine%s\n",
                    c.devices_set ? " (--devices ignored)" : "");
        if (c.popt.engine == PARSER_ENGINE_CPU && c.devices_set)
            c.popt.engines = 0;
    }
    if (c.popt.engine == PARSER_ENGINE_GPU && cli_tune("serve", &c.popt.tune)) {
        free(token);
        return 1;
    }
    /* a SIGINT or SIGTERM during the load ends the run at once; from guard_signals_catch on
     * it sets guard_interrupted (a second one kills), held back from the threads started
     * here; a client gone away is a failed write, not a signal */
    guard_signals_block("serve", NULL);
    signal(SIGPIPE, SIG_IGN);
    if (c.popt.engine != PARSER_ENGINE_REF)
        guard_cache("serve");
    grammar *g = NULL;
    parser *p = NULL, *kp = NULL;
    char kbest_why[512] = "";
    serve *s = NULL;
    if (grammar_load(c.grammar, &g)) {
        rc = cli_error("serve", "%s", cky_last_error());
        goto done;
    }
    if (!c.decoder_set)
        c.popt.decoder = parser_default_decoder(g);
    if (!c.prune_set)
        c.popt.prune = parser_default_prune(g);
    if (parser_new(g, &c.popt, &p)) {
        rc = cli_error("serve", "%s", cky_last_error());
        goto done;
    }
    engine_defaults(&c, p);
    kbest_parser(&c, g, &kp, kbest_why, sizeof kbest_why);
    const char *base = strrchr(c.grammar, '/');
    serve_info info = {base ? base + 1 : c.grammar, parser_engine_name(c.popt.engine),
                       parser_decoder_def(c.popt.decoder)->name,
                       c.popt.prune == PARSER_PRUNE_NONE ? "exhaustive"
                                                          : parser_prune_name(c.popt.prune),
                       c.popt.max_length};
    if (serve_start(p, &info, &c.so, &s)) {
        rc = cli_error("serve", "%s", cky_last_error());
        goto done;
    }
    fprintf(stderr, "cky serve: listening on http://%s%s%s:%d/ (grammar %s, engine %s, "
            "decoder %s, batch %d)\n", strchr(c.so.host, ':') ? "[" : "", c.so.host,
            strchr(c.so.host, ':') ? "]" : "", serve_port(s), info.grammar, info.engine,
            info.decoder, c.so.batch);
    guard_signals_catch();
    while (!guard_interrupted()) /* the signal may land on any thread (a library's own) */
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    fprintf(stderr, "cky serve: %s: answering the requests in flight (at most %d s)\n",
            guard_interrupted() == SIGINT ? "SIGINT" : "SIGTERM", c.grace_s);
    int cut = serve_drain(s, c.grace_s * 1000);
    if (cut)
        fprintf(stderr, "cky serve: %d request%s still waiting after %d s: answered 503\n",
                cut, cut > 1 ? "s" : "", c.grace_s);
    fprintf(stderr, "cky serve: stopped\n");
done:
    serve_free(s);
    parser_free(kp);
    parser_free(p);
    grammar_free(g);
    free(token);
    return rc;
}
