/* codegen nvrtc: compile a generated kernel to a cubin with NVRTC (no GPU or driver needed),
 * read ptxas' register and spill report from its verbose log, and find a kernel's machine
 * code in a cubin. */
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Registers and spill bytes (stores + loads) of entry `name` in a `ptxas -v` log. */
static void nvrtc_parse_log(const char *log, const char *name, int *registers, int *spill)
{
    *registers = *spill = -1;
    char key[96];
    snprintf(key, sizeof key, "Function properties for %s\n", name);
    const char *p = strstr(log, key);
    if (!p)
        return;
    const char *s = strstr(p, "bytes spill stores");
    const char *u = strstr(p, "Used ");
    if (s) { /* "... N bytes stack frame, S bytes spill stores, L bytes spill loads" */
        const char *c = s;
        while (c > p && c[-1] != ',')
            c--;
        int st = 0, ld = 0;
        if (sscanf(c, " %d bytes spill stores, %d bytes spill loads", &st, &ld) == 2)
            *spill = st + ld;
    }
    if (u)
        sscanf(u, "Used %d registers", registers);
}

cky_status codegen_nvrtc_compile(const char *src, const char *name, const char *arch,
                                 const char *ptxas, unsigned char **cubin, size_t *size,
                                 int *registers, int *spill_bytes)
{
    char arch_opt[64], ptxas_opt[256];
    snprintf(arch_opt, sizeof arch_opt, "-arch=%s", arch ? arch : "sm_90");
    if (ptxas && snprintf(ptxas_opt, sizeof ptxas_opt, "--ptxas-options=%s", ptxas) >=
                     (int)sizeof ptxas_opt)
        return cky_fail(CKY_ERR_ARG, "ptxas options too long: %s", ptxas);
    const char *opts[] = {arch_opt, "--ptxas-options=-v", ptxas_opt};
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return cky_fail(CKY_ERR_COMPILE, "NVRTC: cannot create program %s: %s", name,
                        nvrtcGetErrorString(r));
    r = nvrtcCompileProgram(prog, ptxas ? 3 : 2, opts);
    size_t loglen = 0;
    char *log = NULL;
    if (nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && (log = malloc(loglen + 1))) {
        if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
            log[0] = '\0';
        log[loglen] = '\0';
    }
    cky_status st = CKY_OK;
    if (r != NVRTC_SUCCESS) {
        st = cky_fail(CKY_ERR_COMPILE, "NVRTC failed to compile %s for %s (%s):\n%s", name,
                      arch_opt + 6, nvrtcGetErrorString(r), log ? log : "(no log)");
        goto done;
    }
    size_t n = 0;
    if ((r = nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS || n == 0) {
        st = cky_fail(CKY_ERR_COMPILE, "NVRTC produced no cubin for %s (%s); is '%s' a real "
                      "architecture (sm_XX, not compute_XX)?", name, nvrtcGetErrorString(r),
                      arch_opt + 6);
        goto done;
    }
    unsigned char *buf = malloc(n);
    if (!buf) {
        st = cky_fail(CKY_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((r = nvrtcGetCUBIN(prog, (char *)buf)) != NVRTC_SUCCESS) {
        free(buf);
        st = cky_fail(CKY_ERR_COMPILE, "NVRTC: %s", nvrtcGetErrorString(r));
        goto done;
    }
    nvrtc_parse_log(log ? log : "", name, registers, spill_bytes);
    *cubin = buf;
    *size = n;
done:
    free(log);
    nvrtcDestroyProgram(&prog);
    return st;
}

void codegen_nvrtc_version(char *buf, size_t size)
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    snprintf(buf, size, "nvrtc %d.%d", major, minor);
}

cky_status codegen_cubin_code(const unsigned char *cubin, size_t size, const char *name,
                              const unsigned char **code, size_t *bytes)
{
    uint64_t shoff, stroff, strsize;
    uint16_t shentsize, shnum, shstrndx;
    if (size < 64 || memcmp(cubin, "\177ELF", 4) || cubin[4] != 2 /* ELFCLASS64 */)
        return cky_fail(CKY_ERR_FORMAT, "cubin of %s: not an ELF64 file", name);
    memcpy(&shoff, cubin + 0x28, 8);
    memcpy(&shentsize, cubin + 0x3a, 2);
    memcpy(&shnum, cubin + 0x3c, 2);
    memcpy(&shstrndx, cubin + 0x3e, 2);
    if (shentsize < 0x28 || shstrndx >= shnum || shoff > size ||
        (uint64_t)shnum * shentsize > size - shoff)
        return cky_fail(CKY_ERR_FORMAT, "cubin of %s: section table outside the file", name);
    const unsigned char *strsh = cubin + shoff + (uint64_t)shstrndx * shentsize;
    memcpy(&stroff, strsh + 0x18, 8);
    memcpy(&strsize, strsh + 0x20, 8);
    if (stroff > size || strsize > size - stroff)
        return cky_fail(CKY_ERR_FORMAT, "cubin of %s: section names outside the file", name);
    char want[64];
    size_t len = (size_t)snprintf(want, sizeof want, ".text.%s", name) + 1; /* with the NUL */
    for (int i = 0; i < shnum && len <= sizeof want; i++) {
        const unsigned char *sh = cubin + shoff + (uint64_t)i * shentsize;
        uint32_t sname;
        uint64_t off, n;
        memcpy(&sname, sh, 4);
        memcpy(&off, sh + 0x18, 8);
        memcpy(&n, sh + 0x20, 8);
        if (sname >= strsize || strsize - sname < len ||
            memcmp(cubin + stroff + sname, want, len))
            continue;
        if (off > size || n > size - off)
            return cky_fail(CKY_ERR_FORMAT, "cubin of %s: its code outside the file", name);
        *code = cubin + off;
        *bytes = (size_t)n;
        return CKY_OK;
    }
    return cky_fail(CKY_ERR_FORMAT, "cubin of %s: no section .text.%s", name, name);
}
