/* Tests of corpus_tools/tokenize.h: the Penn Treebank conventions one by one, text that is
 * already tokenized, junk input (random bytes: no crash, valid UTF-8, no empty token) and
 * cky parse --tokenize end to end. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../corpus_tools/tokenize.h"
#include "../util/io.h"
#include "../util/utf8.h"

static void check(const char *raw, const char *want)
{
    char *got;
    int n;
    cr_assert_eq(tokenize_line(raw, strlen(raw), &got, &n), CKY_OK, "%s", cky_last_error());
    cr_expect_str_eq(got, want, "tokenizing '%s'", raw);
    int spaces = 0;
    for (const char *p = want; *p; p++)
        spaces += *p == ' ';
    cr_expect_eq(n, *want ? spaces + 1 : 0, "token count of '%s'", raw);
    free(got);
}

Test(tokenize, quotes)
{
    check("He said, \"I know.\"", "He said , `` I know . ''");
    check("\"Yes,\" he said.", "`` Yes , '' he said .");
    check("a \"b\" c", "a `` b '' c");
    check("three words --\"for examination only\"-- eliminated",
          "three words -- `` for examination only '' -- eliminated");
    check("say, 'Buy,' he", "say , ` Buy , ' he");
    check("the ``best'' one", "the `` best '' one");
    check("\xE2\x80\x9C" "Curly" "\xE2\x80\x9D" " isn" "\xE2\x80\x99" "t it",
          "`` Curly '' is n't it");
    check("\" alone \"", "`` alone ''");
}

Test(tokenize, clitics)
{
    check("I don't think it's John's or they're", "I do n't think it 's John 's or they 're");
    check("We'll see, I'm sure he'd say you've", "We 'll see , I 'm sure he 'd say you 've");
    check("can't won't DON'T", "ca n't wo n't DO N'T");
    check("I cannot, gonna, gotta, wanna", "I can not , gon na , got ta , wan na");
    check("the companies' shares", "the companies ' shares");
    check("O'Brien in the '80s", "O'Brien in the '80s");
    check("It's done, isn't it?", "It 's done , is n't it ?");
    check("investors don't.", "investors do n't .");
}

Test(tokenize, brackets_and_escapes)
{
    check("a (b) [c] {d}", "a -LRB- b -RRB- -LSB- c -RSB- -LCB- d -RCB-");
    check("up 3/4 to 1*2", "up 3\\/4 to 1\\*2");
    check("already 3\\/4", "already 3\\/4");
}

Test(tokenize, final_period)
{
    check("It grew.", "It grew .");
    check("It is Drexel Burnham Lambert Inc.", "It is Drexel Burnham Lambert Inc .");
    check("sold in the U.S.", "sold in the U.S. .");
    check("made in the \"U.S.\"", "made in the `` U.S. . ''");
    check("ends in U.S.)", "ends in U.S. . -RRB-");
    check("Mr. Smith of Acme Inc. said so.", "Mr. Smith of Acme Inc. said so .");
    check("a \"game.\"", "a `` game . ''");
    check("(Fewer said so.)", "-LRB- Fewer said so . -RRB-");
    check("rose to $2.75.", "rose to $ 2.75 .");
    check("Wait...", "Wait ...");
    check("Inc..", "Inc. .");
}

Test(tokenize, punctuation_and_numbers)
{
    check("$1,000 at 10:30 a.m.; 5% rose", "$ 1,000 at 10:30 a.m. ; 5 % rose");
    check("is it? no! yes: #1", "is it ? no ! yes : # 1");
    check("a,b AT&T C$100 US$ 62%-owned", "a , b AT&T C$ 100 US$ 62%-owned");
    check("wait... then--now", "wait ... then -- now");
    check("an em\xE2\x80\x94" "dash, 1990\xE2\x80\x93" "91 and\xE2\x80\xA6",
          "an em -- dash , 1990-91 and ...");
}

Test(tokenize, white_space_and_junk)
{
    check("", "");
    check(" \t \r ", "");
    check("  a\tb\xC2\xA0" "c  ", "a b c");
    check("bad \xFF\xFE byte", "bad \xEF\xBF\xBD\xEF\xBF\xBD byte");
    char nul[] = {'a', '\0', 'b'};
    char *got;
    int n;
    cr_assert_eq(tokenize_line(nul, 3, &got, &n), CKY_OK);
    cr_expect_str_eq(got, "a\xEF\xBF\xBD" "b");
    free(got);
}

/* Random bytes (weighted towards the characters with rules): never a crash, always valid
 * UTF-8 tokens separated by single spaces. */
Test(tokenize, random_bytes)
{
    static const char special[] = "\"'`().,;:?!%$#-*/ \t&[]{}U.S.n't";
    unsigned seed = 12345;
    for (int round = 0; round < 20000; round++) {
        char line[64];
        size_t len = (size_t)(round % 64);
        for (size_t k = 0; k < len; k++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = seed >> 16;
            line[k] = r % 3 ? special[r % (sizeof special - 1)] : (char)(r >> 3);
        }
        char *got;
        int n;
        cr_assert_eq(tokenize_line(line, len, &got, &n), CKY_OK);
        size_t m = strlen(got);
        int tokens = m > 0;
        for (size_t k = 0; k < m;) {
            unsigned cp;
            int l = utf8_decode((const unsigned char *)got + k, m - k, &cp);
            cr_assert(l > 0, "round %d: invalid UTF-8 at byte %zu of '%s'", round, k, got);
            if (got[k] == ' ') {
                cr_assert(k > 0 && k + 1 < m && got[k + 1] != ' ',
                          "round %d: empty token in '%s'", round, got);
                tokens++;
            }
            k += (size_t)l;
        }
        cr_assert_eq(n, tokens, "round %d: count %d for '%s'", round, n, got);
        free(got);
    }
}

/* The treebank's own tokens come back unchanged (all dev sentences but the four with
 * Dunkin', a name ending in an apostrophe). */
Test(tokenize, treebank_tokens_unchanged)
{
    io_lines *in;
    cr_assert_eq(io_lines_open(CKY_SHARED "/data/ptb-sample/dev.txt", &in), CKY_OK);
    char *line;
    size_t len;
    int lines = 0, same = 0;
    while (!io_lines_next(in, &line, &len) && line) {
        char *got;
        int n;
        cr_assert_eq(tokenize_line(line, len, &got, &n), CKY_OK);
        lines++;
        if (!strcmp(got, line))
            same++;
        else
            cr_expect(strstr(line, "Dunkin'"), "changed:\n  %s\n  %s", line, got);
        free(got);
    }
    io_lines_close(in);
    cr_expect_eq(lines, 433);
    cr_expect_eq(same, 429);
}

/* stdout of a shell command (at most size - 1 bytes). */
static void run_shell(const char *cmd, char *out, size_t size)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0, "%s failed: %s", cmd, out);
}

/* cky parse --tokenize on raw text gives the trees of cky parse on the treebank's tokens. */
Test(tokenize, cky_parse_tokenize)
{
    const char *cky = CKY_BUILD "/cky";
    if (access(cky, X_OK) != 0)
        cr_skip_test("%s is not built", cky);
    const char *g = CKY_SHARED "/grammars/sample-sm1/sample-sm1.gr";
    char cmd[2048], raw[8192], tok[8192];
    snprintf(cmd, sizeof cmd,
             "printf '%%s\\n' '\"I don'\\''t know,\" he said (again).' 'It is Acme Inc.' | "
             "'%s' parse --tokenize --engine ref -g '%s'", cky, g);
    run_shell(cmd, raw, sizeof raw);
    snprintf(cmd, sizeof cmd,
             "printf '%%s\\n' '`` I do n'\\''t know , '\\'''\\'' he said -LRB- again -RRB- .' "
             "'It is Acme Inc .' | '%s' parse --engine ref -g '%s'", cky, g);
    run_shell(cmd, tok, sizeof tok);
    cr_expect_str_eq(raw, tok);
    cr_expect(strstr(raw, "(RB n't)") && strstr(raw, "-LRB-"), "%s", raw);
    snprintf(cmd, sizeof cmd, "'%s' parse --tokenize --treebank x.mrg -g '%s' 2>&1", cky, g);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(raw, 1, sizeof raw - 1, p);
    raw[n] = '\0';
    int st = pclose(p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--tokenize with --treebank: %s", raw);
    cr_expect(strstr(raw, "--tokenize is for raw text"), "%s", raw);
}
