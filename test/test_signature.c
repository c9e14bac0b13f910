/* Tests of the unknown-word signatures: every row of the table in
 * docs/berkeley-grammar-spec.md §3.6 (level 5, the jar's own output), level 4, truncation and
 * invalid UTF-8. */
#include <criterion/criterion.h>
#include <string.h>

#include "../grammar/signature.h"

/* The known-word test of the table: "apple" is known, nothing else is. */
static int known_apple(const char *word, void *ctx)
{
    (void)ctx;
    return strcmp(word, "apple") == 0;
}

static void expect_sig(const char *word, int loc, int level, const char *want)
{
    char out[64];
    size_t n = signature_of(word, loc, level, known_apple, NULL, out, sizeof out);
    cr_expect_str_eq(out, want, "signature(\"%s\", %d, level %d) = %s, want %s", word, loc,
                     level, out, want);
    cr_expect_eq(n, strlen(want), "returned length for \"%s\"", word);
}

typedef struct sig_case {
    const char *word;
    int loc;
    const char *sig;
} sig_case;

/* spec §3.6, in the order of the table (left column, then right column, row by row) */
static const sig_case spec_table[] = {
    {"Hello", 0, "UNK-INITC"},
    {"Hello", 1, "UNK-CAPS"},
    {"Apple", 0, "UNK-INITC-KNOWNLC"},
    {"Walks", 0, "UNK-INITC-s"},
    {"Walks", 1, "UNK-CAPS-s"},
    {"USA", 0, "UNK-CAPS"},
    {"McDonald", 0, "UNK-CAPS"},
    {"iPhone", 3, "UNK-LC"},
    {"3D", 3, "UNK-CAPS-NUM"},
    {"1990s", 3, "UNK-LC-NUM-s"},
    {"123", 3, "UNK-NUM"},
    {"3.14", 3, "UNK-NUM"},
    {"12-13", 3, "UNK-NUM-DASH"},
    {"---", 3, "UNK-DASH"},
    {"!!", 3, "UNK"},
    {"%", 3, "UNK"},
    {"\xC2\xBD", 3, "UNK"}, /* ½ */
    {"$5", 3, "UNK-NUM"},
    {"walked", 3, "UNK-LC-ed"},
    {"walking", 3, "UNK-LC-ing"},
    {"nation", 3, "UNK-LC-ion"},
    {"bigger", 3, "UNK-LC-er"},
    {"biggest", 3, "UNK-LC-est"},
    {"quickly", 3, "UNK-LC-ly"},
    {"quality", 3, "UNK-LC-ity"},
    {"happy", 3, "UNK-LC-y"},
    {"tonal", 3, "UNK-LC-al"},
    {"sing", 3, "UNK-LC"},
    {"fling", 3, "UNK-LC-ing"},
    {"cats", 3, "UNK-LC-s"},
    {"abcs", 3, "UNK-LC-s"},
    {"yes", 3, "UNK-LC-s"},
    {"ness", 3, "UNK-LC"},
    {"virus", 3, "UNK-LC"},
    {"axis", 3, "UNK-LC"},
    {"as", 3, "UNK-LC"},
    {"re-elected", 3, "UNK-LC-DASH"},
    {"over-the-counter", 3, "UNK-LC-DASH"},
    {"-x-", 3, "UNK-LC-DASH"},
    {"Aa-b", 0, "UNK-INITC-DASH"},
    {"Walked", 1, "UNK-CAPS-ed"},
    {"WALKED", 1, "UNK-CAPS-ed"},
    {"Smoothed", 0, "UNK-INITC-ed"},
    {"A4-size", 1, "UNK-CAPS-NUM-DASH"},
    {"MP3s", 1, "UNK-CAPS-NUM-s"},
    {"MP3", 1, "UNK-CAPS-NUM"},
    {"Ab1cd", 3, "UNK-CAPS-NUM"},
    {"ab1cde", 3, "UNK-LC-NUM"},
    {"ab1Ced", 3, "UNK-LC-NUM"},
    {"x1y2", 3, "UNK-LC-NUM"},
    {"1st", 3, "UNK-LC-NUM"},
    {"x", 3, "UNK-LC"},
    {"X", 3, "UNK-CAPS"},
    {"X", 0, "UNK-INITC"},
    {"I", 0, "UNK-INITC"},
    {"A", 3, "UNK-CAPS"},
    {"U.S.", 0, "UNK-CAPS"},
    {"U.S.", 3, "UNK-CAPS"},
    {"a.m.", 3, "UNK-LC"},
    {"'s", 3, "UNK-LC"},
    {"sixties", 3, "UNK-LC-s"},
    {"ALLies", 3, "UNK-CAPS-s"},
    {"\xC3\x89" "COLE", 1, "UNK-CAPS"},               /* ÉCOLE */
    {"\xC3\x89" "cole", 0, "UNK-INITC"},              /* École */
    {"\xC7\x85" "ab", 0, "UNK-INITC"},                /* ǅab, U+01C5 title case */
    {"\xC7\x85" "ab", 1, "UNK-CAPS"},
    {"\xC3\x9F", 3, "UNK-LC"},                        /* ß */
    {"stra\xC3\x9F" "e", 3, "UNK-LC"},                /* straße */
    {"\xC3\xA9" "lan", 3, "UNK-LC"},                  /* élan */
    {"na\xC3\xAF" "ve", 3, "UNK-LC"},                 /* naïve */
    {"\xC3\xA9" "tats", 3, "UNK-LC-s"},               /* états */
    {"\xC4\xB0" "stanbul", 3, "UNK-CAPS"},            /* İstanbul */
    {"\xC4\xB0" "stanbul", 0, "UNK-INITC"},
    {"\xD9\xA3\xD9\xA4", 3, "UNK-NUM"},               /* ٣٤ Arabic-Indic digits */
    {"UNK", 3, "UNK-CAPS"},
    {"UNK-LC-ed", 3, "UNK-CAPS-DASH"},
    {"", 0, "UNK"},
    {"", 3, "UNK"},
};

Test(signature, spec_table)
{
    for (size_t i = 0; i < sizeof spec_table / sizeof *spec_table; i++)
        expect_sig(spec_table[i].word, spec_table[i].loc, 5, spec_table[i].sig);
}

Test(signature, known_lowercase_is_asked_with_the_lowered_word)
{
    expect_sig("APPLE", 0, 5, "UNK-CAPS");      /* 5 caps: not INITC, never asks */
    expect_sig("Apple", 1, 5, "UNK-CAPS");      /* not the first word */
    expect_sig("Apples", 0, 5, "UNK-INITC-s");  /* "apples" is not known */
    char out[64];
    signature_of("Apple", 0, 5, NULL, NULL, out, sizeof out); /* no known-word test */
    cr_expect_str_eq(out, "UNK-INITC");
}

Test(signature, java_char_semantics)
{
    /* a character outside the BMP is two surrogates: neither letter nor digit */
    expect_sig("\xF0\x9D\x90\x80", 3, 5, "UNK");            /* U+1D400 MATHEMATICAL BOLD A */
    expect_sig("ab\xF0\x9F\x98\x80" "cs", 3, 5, "UNK-LC-s"); /* 6 units, ends in s */
    /* invalid UTF-8 reads as U+FFFD, which is no letter */
    expect_sig("\xFF\xFE", 3, 5, "UNK");
    expect_sig("walk\xE2\x82" "ed", 3, 5, "UNK-LC-ed"); /* truncated sequence -> one U+FFFD */
    /* caseless letters count as capitals (U+4E00) */
    expect_sig("\xE4\xB8\x80", 3, 5, "UNK");
    expect_sig("$\xE4\xB8\x80", 3, 5, "UNK-CAPS");
    /* Roman numeral Ⅻ is Nl: upper case for Java but not a letter */
    expect_sig("\xE2\x85\xAB", 3, 5, "UNK-CAPS");
    expect_sig("$\xE2\x85\xAB", 3, 5, "UNK");
    /* İ lowers to two units ("i" U+0307) and Java indexes the lowered "i̇us" with the
     * original length: it tests U+0307, not 'u', so the word gets -s */
    expect_sig("\xC4\xB0us", 3, 5, "UNK-CAPS-s");
}

Test(signature, level4)
{
    expect_sig("Hello", 0, 4, "UNK-SC-o");
    expect_sig("Hello", 2, 4, "UNK-C-o");
    expect_sig("USA", 2, 4, "UNK-AC");
    expect_sig("walks", 2, 4, "UNK-L-s");
    expect_sig("1234", 2, 4, "UNK-S-N");
    expect_sig("3,5.1-2", 2, 4, "UNK-S-n-H-P-C");
    expect_sig("a1b", 2, 4, "UNK-L-n");
    expect_sig("\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80", 2, 4,
               "UNK-U-\xE4\xB8\x80");
    expect_sig("ABCD", 2, 4, "UNK-AC-d");
    expect_sig("\xC7\x85" "ab", 2, 4, "UNK-C");
    expect_sig("", 0, 4, "UNK");
}

Test(signature, truncates_and_reports_length)
{
    char out[8];
    size_t n = signature_of("Walked", 1, 5, NULL, NULL, out, sizeof out);
    cr_expect_eq(n, strlen("UNK-CAPS-ed"));
    cr_expect_str_eq(out, "UNK-CAP");
    cr_expect_eq(signature_of("walked", 1, 5, NULL, NULL, NULL, 0), strlen("UNK-LC-ed"));
}
