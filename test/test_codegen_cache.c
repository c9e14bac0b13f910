/* The cache entries themselves (issue 14 item 4): a cubin entry with one byte changed or cut
 * short is a miss, never a hit; the cache folder helpers: CKY_CACHE=off in any case,
 * XDG_CACHE_HOME, an unusable folder refused with its name and reason, leftovers removed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codegen/codegen.h"
#include "../codegen/internal.h"

/* Change byte `at` of dir/name (-1: cut the file to a third; -2: its last byte). */
static void damage(const char *dir, const char *name, long at)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (at == -2)
        at = size - 1;
    if (at == -1) {
        cr_assert_eq(ftruncate(fileno(f), size / 3), 0);
    } else {
        fseek(f, at, SEEK_SET);
        int c = fgetc(f);
        fseek(f, at, SEEK_SET);
        fputc(c ^ 0x40, f);
    }
    fclose(f);
}

Test(codegen_cache, damaged_cubin_is_a_miss)
{
    char dir[] = "/tmp/cky-test-cubin-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    unsigned char cubin[3000];
    for (size_t k = 0; k < sizeof cubin; k++)
        cubin[k] = (unsigned char)(k * 7 + 3);
    const uint64_t key = 0x1234abcdULL;
    char name[64];
    snprintf(name, sizeof name, "%016llx.cubin", (unsigned long long)key);
    long where[] = {-1, (long)sizeof cubin / 2, -2}; /* a third; the middle; the end */
    for (size_t k = 0; k < sizeof where / sizeof *where; k++) {
        cr_assert_eq(codegen_cache_put_cubin(dir, key, cubin, sizeof cubin, 40, 0), CKY_OK);
        unsigned char *got = NULL;
        size_t size = 0;
        int regs = 0, spill = 0;
        cr_assert_eq(codegen_cache_get_cubin(dir, key, &got, &size, &regs, &spill), 1);
        cr_assert(size == sizeof cubin && !memcmp(got, cubin, size) && regs == 40);
        free(got);
        damage(dir, name, where[k]);
        got = NULL;
        cr_assert_eq(codegen_cache_get_cubin(dir, key, &got, &size, &regs, &spill), 0,
                     "damage %zu: a damaged cubin was a hit", k);
        cr_assert_null(got);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(codegen_cache, folder_choice_and_checks)
{
    char *dir = NULL;
    codegen_options o;
    codegen_options_default(&o);
    const char *off[] = {"off", "OFF", "Off"};
    for (int k = 0; k < 3; k++) {
        o.cache_dir = off[k];
        cr_assert_eq(codegen_cache_dir(&o, &dir), CKY_OK);
        cr_assert_null(dir, "%s: a cache folder %s", off[k], dir);
    }
    o.cache_dir = NULL;
    unsetenv("CKY_CACHE");
    setenv("XDG_CACHE_HOME", "/some/xdg", 1);
    cr_assert_eq(codegen_cache_dir(&o, &dir), CKY_OK);
    cr_assert_str_eq(dir, "/some/xdg/cky");
    free(dir);
    /* a folder under a regular file cannot be made: the message names it and says why */
    cr_assert_neq(cachedir_prepare("/dev/null/cky"), CKY_OK);
    cr_assert(strstr(cky_last_error(), "/dev/null") && strstr(cky_last_error(), "Not a directory"),
              "%s", cky_last_error());
}

Test(codegen_cache, prepare_removes_leftovers_only)
{
    char dir[] = "/tmp/cky-test-prep-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *mine = cachedir_temp_template(dir, ".so"); /* this live process's: kept */
    cr_assert_not_null(mine);
    memcpy(strrchr(mine, '~') + 1, "keepme", 6);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && touch '%s' entry.hso tmp-999999999-$(uname -n)~dead00 "
             "&& touch -d '3 days ago' tmp-1-elsewhere~old000", dir, mine);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(cachedir_prepare(dir), CKY_OK, "%s", cky_last_error());
    snprintf(cmd, sizeof cmd, "cd '%s' && test $(ls | wc -l) -eq 2 && test -e entry.hso && "
             "test -e '%s'", dir, mine);
    cr_assert_eq(system(cmd), 0, "prepare removed the wrong files");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(mine);
}
