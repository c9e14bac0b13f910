/* cky serve: the parsing service (serve/serve.h, docs/serve.md). Thin: reads the options,
 * loads the grammar and the engine once, starts the service and waits for SIGINT or SIGTERM,
 * then drains it (every request already received is answered) and exits 0. */
#include <arpa/inet.h>
#include <getopt.h>
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
    "at / that draws the trees. SIGINT or SIGTERM: stop listening, answer the requests\n"
    "already received, exit 0.\n"
    "\n"
    "options:\n"
    "  -g, --grammar GRAMMAR     a Berkeley .gr file, or the prefix of a text export\n"
    "      --host HOST           address to listen on (default 127.0.0.1, the loopback);\n"
    "                            any other needs --token-file\n"
    "      --port N              port (default 9000; 0: a free one, named on stderr)\n"
    "      --token-file FILE     requests (but the page, /live and /ready) must carry\n"
    "                            \"Authorization: Bearer TOKEN\", TOKEN the file's first line\n"
    "      --engine, --decoder, --device, --devices, --engines, --threads, --workspace,\n"
    "      --max-length          as cky parse (cky parse --help)\n"
    "      --batch N             most sentences per engine batch (default: gpu 8192, cpu\n"
    "                            256, ref 64, times the engines)\n"
    "      --batch-wait MS       longest wait for a batch to fill (default 5)\n"
    "      --queue N             most sentences queued; a request beyond gets 503 with\n"
    "                            Retry-After (default 32 batches)\n"
    "      --max-sentences N     most sentences per request (default 1000; 413 beyond)\n"
    "      --max-request-bytes N largest request body (default 4194304; 413 beyond)\n"
    "      --max-sentence-bytes N largest sentence (default 65536; 413 beyond)\n"
    "      --timeout S           a request not answered within S seconds gets 503 (60)\n"
    "      --max-connections N   connections at once (default 256)\n"
    "      --idle-timeout S      an idle connection is closed after S seconds (default 30)\n"
    "      --http-threads N      HTTP threads (default 4)\n"
    "      --grace S             on SIGTERM, how long to wait for requests in flight (60)\n"
    "  -h, --help                this help\n";

typedef struct serve_cli {
    const char *grammar, *token_file;
    int engine_set, decoder_set, devices_set, grace_s;
    parser_options popt;
    serve_options so;
} serve_cli;

/* A number option (its name for the message). Returns 0 or 2 after a usage error. */
static int number(const char *name, const char *arg, int lo, int hi, int *out)
{
    if (cli_int(arg, lo, hi, out))
        return 0;
    return cli_usage_error("serve", "--%s takes a number from %d to %d", name, lo, hi);
}

static int read_options(int argc, char **argv, serve_cli *c)
{
    enum { O_HOST = 256, O_PORT, O_TOKEN, O_ENGINE, O_DECODER, O_DEVICE, O_DEVICES, O_ENGINES,
           O_THREADS, O_WORKSPACE, O_MAXLEN, O_BATCH, O_WAIT, O_QUEUE, O_MAXSENT, O_MAXREQ,
           O_MAXSENTB, O_TIMEOUT, O_MAXCONN, O_IDLE, O_HTTP, O_GRACE };
    static const struct option longs[] = {
        {"grammar", required_argument, 0, 'g'}, {"help", no_argument, 0, 'h'},
        {"host", required_argument, 0, O_HOST}, {"port", required_argument, 0, O_PORT},
        {"token-file", required_argument, 0, O_TOKEN},
        {"engine", required_argument, 0, O_ENGINE}, {"decoder", required_argument, 0, O_DECODER},
        {"device", required_argument, 0, O_DEVICE}, {"devices", required_argument, 0, O_DEVICES},
        {"engines", required_argument, 0, O_ENGINES}, {"threads", required_argument, 0, O_THREADS},
        {"workspace", required_argument, 0, O_WORKSPACE},
        {"max-length", required_argument, 0, O_MAXLEN}, {"batch", required_argument, 0, O_BATCH},
        {"batch-wait", required_argument, 0, O_WAIT}, {"queue", required_argument, 0, O_QUEUE},
        {"max-sentences", required_argument, 0, O_MAXSENT},
        {"max-request-bytes", required_argument, 0, O_MAXREQ},
        {"max-sentence-bytes", required_argument, 0, O_MAXSENTB},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"max-connections", required_argument, 0, O_MAXCONN},
        {"idle-timeout", required_argument, 0, O_IDLE},
        {"http-threads", required_argument, 0, O_HTTP}, {"grace", required_argument, 0, O_GRACE},
        {0, 0, 0, 0}};
    memset(c, 0, sizeof *c);
    c->popt = parser_default_options();
    c->so = serve_default_options();
    c->so.batch = c->so.queue = c->so.max_sentences = 0; /* from the engine, below */
    c->grace_s = 60;
    int opt, rc = 0, max_req = 0, max_sent = 0, timeout_s = 0;
    optind = 1;
    opterr = 0;
    while (!rc && (opt = getopt_long(argc, argv, ":g:h", longs, NULL)) != -1) {
        switch (opt) {
        case 'g': c->grammar = optarg; break;
        case 'h': fputs(help, stdout); exit(0);
        case O_HOST: c->so.host = optarg; break;
        case O_PORT: rc = number("port", optarg, 0, 65535, &c->so.port); break;
        case O_TOKEN: c->token_file = optarg; break;
        case O_ENGINE:
            c->engine_set = 1;
            if (!parser_engine_find(optarg, &c->popt.engine))
                rc = cli_usage_error("serve", "unknown engine '%s' (known: %s)", optarg,
                                     parser_engine_names());
            break;
        case O_DECODER:
            c->decoder_set = 1;
            if (!parser_decoder_find(optarg, &c->popt.decoder))
                rc = cli_usage_error("serve", "unknown decoder '%s' (known: %s)", optarg,
                                     parser_decoder_names());
            break;
        case O_DEVICE: rc = number("device", optarg, 0, 1024, &c->popt.device); break;
        case O_DEVICES:
            c->devices_set = 1;
            rc = multi_read_devices("serve", optarg, &c->popt);
            break;
        case O_ENGINES: rc = number("engines", optarg, 1, PARSER_MAX_ENGINES, &c->popt.engines);
            break;
        case O_THREADS: rc = number("threads", optarg, 1, 1024, &c->popt.threads); break;
        case O_WORKSPACE: rc = number("workspace", optarg, 1, 1 << 26, &c->popt.workspace);
            break;
        case O_MAXLEN: rc = number("max-length", optarg, 1, 100000, &c->popt.max_length); break;
        case O_BATCH: rc = number("batch", optarg, 1, 1 << 20, &c->so.batch); break;
        case O_WAIT: rc = number("batch-wait", optarg, 0, 10000, &c->so.batch_wait_ms); break;
        case O_QUEUE: rc = number("queue", optarg, 1, 1 << 24, &c->so.queue); break;
        case O_MAXSENT: rc = number("max-sentences", optarg, 1, 1 << 24, &c->so.max_sentences);
            break;
        case O_MAXREQ: rc = number("max-request-bytes", optarg, 1, 1 << 30, &max_req); break;
        case O_MAXSENTB: rc = number("max-sentence-bytes", optarg, 1, 1 << 30, &max_sent);
            break;
        case O_TIMEOUT: rc = number("timeout", optarg, 1, 86400, &timeout_s); break;
        case O_MAXCONN: rc = number("max-connections", optarg, 1, 1 << 20,
                                    &c->so.max_connections);
            break;
        case O_IDLE: rc = number("idle-timeout", optarg, 1, 86400, &c->so.idle_timeout_s); break;
        case O_HTTP: rc = number("http-threads", optarg, 1, 256, &c->so.http_threads); break;
        case O_GRACE: rc = number("grace", optarg, 0, 86400, &c->grace_s); break;
        case ':': return cli_usage_error("serve", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("serve", "unknown option %s", argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
    if (!c->grammar)
        return cli_usage_error("serve", "no grammar given (-g GRAMMAR)");
    if (max_req)
        c->so.max_request_bytes = (size_t)max_req;
    if (max_sent)
        c->so.max_sentence_bytes = (size_t)max_sent;
    if (timeout_s)
        c->so.timeout_ms = timeout_s * 1000;
    return 0;
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
    parser *p = NULL;
    serve *s = NULL;
    if (grammar_load(c.grammar, &g)) {
        rc = cli_error("serve", "%s", cky_last_error());
        goto done;
    }
    if (!c.decoder_set)
        c.popt.decoder = parser_default_decoder(g);
    if (parser_new(g, &c.popt, &p)) {
        rc = cli_error("serve", "%s", cky_last_error());
        goto done;
    }
    engine_defaults(&c, p);
    const char *base = strrchr(c.grammar, '/');
    serve_info info = {base ? base + 1 : c.grammar, parser_engine_name(c.popt.engine),
                       parser_decoder_def(c.popt.decoder)->name,
                       "exhaustive", c.popt.max_length};
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
    parser_free(p);
    grammar_free(g);
    free(token);
    return rc;
}
