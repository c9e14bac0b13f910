/* multi: --devices, --engines, --shard and retired engines on the command line (multi.h). */
#include "multi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/gpu.h"
#include "../util/output.h"
#include "cli.h"

int multi_read_devices(const char *cmd, const char *arg, parser_options *o)
{
    int n = 0;
    if (!strcmp(arg, "all")) {
        n = gpu_count();
        if (n == 0)
            return cli_error(cmd, "--devices all: no usable CUDA device here");
        n = n < PARSER_MAX_ENGINES ? n : PARSER_MAX_ENGINES;
        for (int k = 0; k < n; k++)
            o->devices[k] = k;
    } else {
        for (const char *p = arg;; p++) {
            char num[16];
            size_t len = strcspn(p, ",");
            if (n == PARSER_MAX_ENGINES || len == 0 || len >= sizeof num)
                return cli_usage_error(cmd, "--devices takes 'all' or device numbers separated "
                                       "by commas (0,1), at most %d", PARSER_MAX_ENGINES);
            memcpy(num, p, len);
            num[len] = '\0';
            if (!cli_int(num, 0, 1024, &o->devices[n]))
                return cli_usage_error(cmd, "--devices: '%s' is not a device number", num);
            n++;
            p += len;
            if (!*p)
                break;
        }
    }
    o->device = o->devices[0];
    o->engines = n > 1 ? n : 0;
    return 0;
}

int multi_read_fail(const char *cmd, const char *arg, parser_options *o)
{
    char engine[16];
    const char *colon = strchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
    o->test.fail_after = 1;
    if (len >= sizeof engine)
        return cli_usage_error(cmd, "--fail-engine takes K or K:AFTER");
    memcpy(engine, arg, len);
    engine[len] = '\0';
    if (!cli_int(engine, 1, PARSER_MAX_ENGINES, &o->test.fail_engine) ||
        (colon && !cli_int(colon + 1, 0, 1 << 30, &o->test.fail_after)))
        return cli_usage_error(cmd, "--fail-engine takes K or K:AFTER (K from 1, AFTER from 0)");
    return 0;
}

int multi_read_shard(const char *cmd, const char *arg, int *k, int *n)
{
    char buf[32];
    const char *slash = strchr(arg, '/');
    size_t len = slash ? (size_t)(slash - arg) : 0;
    if (!slash || len >= sizeof buf)
        return cli_usage_error(cmd, "--shard takes K/N (shard K of N, 1 <= K <= N)");
    memcpy(buf, arg, len);
    buf[len] = '\0';
    if (!cli_int(slash + 1, 1, 1 << 30, n) || !cli_int(buf, 1, *n, k))
        return cli_usage_error(cmd, "--shard takes K/N (shard K of N, 1 <= K <= N), not '%s'",
                               arg);
    return 0;
}

int multi_in_shard(long number, int k, int n)
{
    return n == 0 || (number - 1) % n == k - 1;
}

uint64_t multi_hash_item(uint64_t h, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return (h ^ '\n') * 0x100000001b3ULL;
}

#define MANIFEST_MAGIC "cky shard manifest 1"

/* OUTPUT.shard, malloc'ed. */
static char *manifest_path(const char *target)
{
    char *p = malloc(strlen(target) + 8);
    if (p)
        sprintf(p, "%s.shard", target);
    return p;
}

cky_status multi_manifest_write(const char *target, const multi_manifest *m)
{
    char *path = manifest_path(target);
    output *o = NULL;
    cky_status st = path ? output_open(path, &o) : cky_fail(CKY_ERR_NOMEM, "out of memory");
    if (!st) {
        fprintf(output_file(o), MANIFEST_MAGIC "\nshard %d/%d\nlines %ld\ninput-lines %ld\n"
                "input-hash %016llx\ninput %s\n", m->k, m->n, m->lines, m->input_lines,
                (unsigned long long)m->input_hash, m->input);
        st = output_commit(o);
    }
    free(path);
    return st;
}

int multi_manifest_read(const char *cmd, const char *target, multi_manifest *m)
{
    char *path = manifest_path(target);
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) {
        free(path);
        return 0;
    }
    char magic[64] = "";
    unsigned long long hash = 0;
    memset(m, 0, sizeof *m);
    int ok = fgets(magic, sizeof magic, f) && !strcmp(magic, MANIFEST_MAGIC "\n") &&
             fscanf(f, "shard %d/%d\nlines %ld\ninput-lines %ld\ninput-hash %16llx\ninput ",
                    &m->k, &m->n, &m->lines, &m->input_lines, &hash) == 5 &&
             fgets(m->input, sizeof m->input, f) && m->n >= 1 && m->k >= 1 && m->k <= m->n &&
             m->input_lines >= 0 && m->lines == (m->input_lines - m->k + m->n) / m->n;
    m->input[strcspn(m->input, "\n")] = '\0';
    m->input_hash = hash;
    fclose(f);
    if (!ok)
        cli_error(cmd, "%s: not a shard manifest of cky parse --shard (damaged?)", path);
    free(path);
    return ok ? 1 : -1;
}

void multi_manifest_remove(const char *target)
{
    char *path = manifest_path(target);
    if (path)
        unlink(path);
    free(path);
}

void multi_report_failures(const char *cmd, const parser *p, const parser_options *o,
                           int *reported)
{
    const parser_failure *f;
    int n = parser_failures(p, &f);
    for (; *reported < n; (*reported)++) {
        const parser_failure *x = &f[*reported];
        char name[64];
        if (o->engine == PARSER_ENGINE_GPU)
            snprintf(name, sizeof name, "device %d (engine %d of %d)", o->devices[x->engine],
                     x->engine + 1, o->engines);
        else
            snprintf(name, sizeof name, "%s engine %d", o->engine == PARSER_ENGINE_CPU ? "cpu"
                     : "ref", x->engine + 1);
        fprintf(stderr, "cky %s: %s failed and is out of the run (%s): %s\n", cmd, name,
                x->error ? x->error : "no message",
                *reported + 1 < o->engines ? "the other engines parse its sentences"
                                           : "no engine is left; the sentences still to parse "
                                             "fail");
    }
}
