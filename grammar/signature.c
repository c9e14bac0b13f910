/* signature: the Berkeley Parser's unknown-word signatures (SophisticatedLexicon.getSignature,
 * unknownLevel 5 and 4; spec §3.6) with Java's character semantics.
 *
 * Java sees a word as UTF-16 code units, so the word is decoded from UTF-8 (each maximal
 * invalid subsequence becomes U+FFFD, as Java's decoder does) and turned into UTF-16; characters
 * outside the BMP become surrogate pairs, which are neither letters nor digits.
 *
 * Character classes come from glibc's tables in the "C.UTF-8" locale (a locale_t of our own;
 * the global locale is never touched), corrected where glibc and Java disagree:
 *   - isDigit is Unicode Nd (glibc's iswdigit is ASCII only): a table of the BMP Nd blocks;
 *   - isTitleCase is Unicode Lt (glibc calls U+01C5 both upper and lower): a table;
 *   - isLetter excludes the letter numbers (Nl) and circled letters (So) that glibc counts as
 *     alphabetic; combining marks with the Alphabetic property (e.g. U+093F) are still seen
 *     as letters, a known approximation;
 *   - String.toLowerCase maps U+0130 to "i" U+0307 and a final capital sigma to U+03C2.
 * Without the C.UTF-8 locale only ASCII letters are letters. */
#include "signature.h"

#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

/* ---- Unicode code points <-> UTF-8 / UTF-16 ------------------------------------------- */

/* Decode one code point from s[0..n), n > 0; *used = bytes consumed. A maximal invalid
 * subsequence (Unicode's "maximal subpart", as java.nio's decoder) gives U+FFFD. */
static uint32_t utf8_decode(const unsigned char *s, size_t n, size_t *used)
{
    unsigned char b = s[0];
    int len;
    uint32_t cp;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (b < 0x80) {
        *used = 1;
        return b;
    } else if (b >= 0xC2 && b <= 0xDF) {
        len = 2, cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        len = 3, cp = b & 0x0F;
        lo = b == 0xE0 ? 0xA0 : 0x80;
        hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4, cp = b & 0x07;
        lo = b == 0xF0 ? 0x90 : 0x80;
        hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
        *used = 1;
        return 0xFFFD;
    }
    for (int i = 1; i < len; i++) {
        unsigned char c = i < (int)n ? s[i] : 0;
        if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xBF)) {
            *used = (size_t)i;
            return 0xFFFD;
        }
        cp = (cp << 6) | (c & 0x3F);
    }
    *used = (size_t)len;
    return cp;
}

/* Append code point cp as UTF-16 to u (room assumed); returns units written. */
static size_t utf16_put(uint16_t *u, uint32_t cp)
{
    if (cp < 0x10000) {
        u[0] = (uint16_t)cp;
        return 1;
    }
    cp -= 0x10000;
    u[0] = (uint16_t)(0xD800 + (cp >> 10));
    u[1] = (uint16_t)(0xDC00 + (cp & 0x3FF));
    return 2;
}

/* UTF-16 units -> UTF-8 (room for 3 bytes per unit + NUL assumed). Lone surrogates cannot
 * occur in our strings (they come from decoded code points), but are written as U+FFFD. */
static void utf16_to_utf8(const uint16_t *u, size_t n, char *out)
{
    unsigned char *o = (unsigned char *)out;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = u[i];
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < n && u[i + 1] >= 0xDC00 &&
            u[i + 1] <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (u[i + 1] - 0xDC00);
            i++;
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;
        }
        if (cp < 0x80) {
            *o++ = (unsigned char)cp;
        } else if (cp < 0x800) {
            *o++ = (unsigned char)(0xC0 | (cp >> 6));
            *o++ = (unsigned char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *o++ = (unsigned char)(0xE0 | (cp >> 12));
            *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            *o++ = (unsigned char)(0x80 | (cp & 0x3F));
        } else {
            *o++ = (unsigned char)(0xF0 | (cp >> 18));
            *o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
            *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            *o++ = (unsigned char)(0x80 | (cp & 0x3F));
        }
    }
    *o = '\0';
}

/* ---- Java's character classes ---------------------------------------------------------- */

/* The glibc C.UTF-8 LC_CTYPE locale, created once (NULL if unavailable). */
static locale_t sig_loc;
static pthread_once_t sig_loc_once = PTHREAD_ONCE_INIT;

static void sig_locale_init(void) { sig_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0); }

static locale_t sig_locale(void)
{
    pthread_once(&sig_loc_once, sig_locale_init);
    return sig_loc;
}

/* Unicode Nd in the BMP: each block is ten digits starting at these zeros (Unicode 13). */
static const uint16_t nd_zero[] = {
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6,
    0x0C66, 0x0CE6, 0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0,
    0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
    0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10};

/* Inclusive ranges of UTF-16 units. */
typedef struct unit_range {
    uint16_t lo, hi;
} unit_range;

/* Unicode Lt (title case letters); all are in the BMP. */
static const unit_range lt_ranges[] = {{0x01C5, 0x01C5}, {0x01C8, 0x01C8}, {0x01CB, 0x01CB},
                                       {0x01F2, 0x01F2}, {0x1F88, 0x1F8F}, {0x1F98, 0x1F9F},
                                       {0x1FA8, 0x1FAF}, {0x1FBC, 0x1FBC}, {0x1FCC, 0x1FCC},
                                       {0x1FFC, 0x1FFC}};

/* Alphabetic for glibc but not letters for Java: letter numbers (Nl), circled letters (So),
 * the combining iota subscript (Mn). */
static const unit_range not_letter_ranges[] = {
    {0x0345, 0x0345}, {0x16EE, 0x16F0}, {0x2160, 0x2188}, {0x24B6, 0x24E9},
    {0x3007, 0x3007}, {0x3021, 0x3029}, {0x3038, 0x303A}, {0xA6E6, 0xA6EF}};

static int in_ranges(uint16_t c, const unit_range *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c >= r[i].lo && c <= r[i].hi)
            return 1;
    return 0;
}

static int is_surrogate(uint32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

static int java_is_digit(uint16_t c)
{
    if (c < 0x80)
        return c >= '0' && c <= '9';
    for (size_t i = 0; i < sizeof nd_zero / sizeof *nd_zero; i++)
        if (c >= nd_zero[i] && c < nd_zero[i] + 10)
            return 1;
    return 0;
}

static int java_is_title(uint16_t c)
{
    return c >= 0x01C5 && in_ranges(c, lt_ranges, sizeof lt_ranges / sizeof *lt_ranges);
}

static int java_is_letter(uint16_t c)
{
    if (c < 0x80)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    locale_t l = sig_locale();
    if (!l || is_surrogate(c) || java_is_digit(c))
        return 0;
    if (in_ranges(c, not_letter_ranges, sizeof not_letter_ranges / sizeof *not_letter_ranges))
        return 0;
    return iswalpha_l(c, l) != 0;
}

static int java_is_lower(uint16_t c)
{
    if (c < 0x80)
        return c >= 'a' && c <= 'z';
    locale_t l = sig_locale();
    return l && !is_surrogate(c) && !java_is_title(c) && iswlower_l(c, l);
}

static int java_is_upper(uint16_t c)
{
    if (c < 0x80)
        return c >= 'A' && c <= 'Z';
    locale_t l = sig_locale();
    return l && !is_surrogate(c) && !java_is_title(c) && iswupper_l(c, l);
}

/* Character.toLowerCase(int): the simple one-to-one mapping. */
static uint32_t java_to_lower(uint32_t cp)
{
    if (cp < 0x80)
        return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    locale_t l = sig_locale();
    return l ? (uint32_t)towlower_l((wint_t)cp, l) : cp;
}

static int java_is_cased(uint32_t cp)
{
    if (cp >= 0x10000)
        return 0; /* approximation: supplementary letters are not looked at */
    return java_is_lower((uint16_t)cp) || java_is_upper((uint16_t)cp) ||
           java_is_title((uint16_t)cp);
}

/* ---- the signature ---------------------------------------------------------------------- */

/* A word as Java sees it: UTF-16 units of the word and of word.toLowerCase(). */
typedef struct jword {
    uint16_t *w, *lw;
    size_t n, nl;
    char *lw_utf8; /* the lowered word in UTF-8 (for the -KNOWNLC test) */
    void *mem;
} jword;

/* Decode `word` into a jword; 0 on allocation failure. */
static int jword_init(jword *j, const char *word)
{
    size_t len = strlen(word);
    /* each code point of k bytes gives at most k UTF-16 units, lowered or not (U+0130 has 2
     * bytes and lowers to 2 units); UTF-8 of the lowered units takes at most 3 bytes each */
    j->mem = calloc(1, len * 2 * sizeof(uint16_t) + len * 3 + 1);
    if (!j->mem)
        return 0;
    j->w = j->mem;
    j->lw = j->w + len;
    j->lw_utf8 = (char *)(j->lw + len);
    j->n = j->nl = 0;
    const unsigned char *s = (const unsigned char *)word;
    size_t pos = 0;
    uint32_t prev = 0;
    while (pos < len) {
        size_t used;
        uint32_t cp = utf8_decode(s + pos, len - pos, &used);
        pos += used;
        j->n += utf16_put(j->w + j->n, cp);
        if (cp == 0x0130) { /* SpecialCasing: İ -> i + combining dot above */
            j->lw[j->nl++] = 'i';
            j->lw[j->nl++] = 0x0307;
        } else if (cp == 0x03A3) { /* final sigma: after a cased letter, before none */
            size_t next_used;
            uint32_t next = pos < len ? utf8_decode(s + pos, len - pos, &next_used) : 0;
            int final = java_is_cased(prev) && !(pos < len && java_is_cased(next));
            j->lw[j->nl++] = final ? 0x03C2 : 0x03C3;
        } else {
            j->nl += utf16_put(j->lw + j->nl, java_to_lower(cp));
        }
        prev = cp;
    }
    utf16_to_utf8(j->lw, j->nl, j->lw_utf8);
    return 1;
}

/* A bounded string builder: counts what it needs, writes what fits. */
typedef struct sbuf {
    char *out;
    size_t size, len;
} sbuf;

static void sbuf_add(sbuf *b, const char *s)
{
    for (; *s; s++, b->len++)
        if (b->len + 1 < b->size)
            b->out[b->len] = *s;
}

static void sbuf_end(sbuf *b)
{
    if (b->size)
        b->out[b->len < b->size ? b->len : b->size - 1] = '\0';
}

/* Does the lowered word end with the ASCII string `suffix`? */
static int jword_lower_ends_with(const jword *j, const char *suffix)
{
    size_t m = strlen(suffix);
    if (m > j->nl)
        return 0;
    for (size_t i = 0; i < m; i++)
        if (j->lw[j->nl - m + i] != (unsigned char)suffix[i])
            return 0;
    return 1;
}

/* unknownLevel 5 (English). */
static void signature_level5(const jword *j, int loc, signature_known_fn known, void *ctx,
                             sbuf *b)
{
    int num_caps = 0, has_digit = 0, has_dash = 0, has_lower = 0;
    for (size_t i = 0; i < j->n; i++) {
        uint16_t ch = j->w[i];
        if (java_is_digit(ch)) {
            has_digit = 1;
        } else if (ch == '-') {
            has_dash = 1;
        } else if (java_is_letter(ch)) {
            if (java_is_lower(ch)) {
                has_lower = 1;
            } else if (java_is_title(ch)) {
                has_lower = 1;
                num_caps++;
            } else {
                num_caps++;
            }
        }
    }
    uint16_t ch0 = j->w[0];
    if (java_is_upper(ch0) || java_is_title(ch0)) {
        if (loc == 0 && num_caps == 1) {
            sbuf_add(b, "-INITC");
            if (known && known(j->lw_utf8, ctx))
                sbuf_add(b, "-KNOWNLC");
        } else {
            sbuf_add(b, "-CAPS");
        }
    } else if (!java_is_letter(ch0) && num_caps > 0) {
        sbuf_add(b, "-CAPS");
    } else if (has_lower) {
        sbuf_add(b, "-LC");
    }
    if (has_digit)
        sbuf_add(b, "-NUM");
    if (has_dash)
        sbuf_add(b, "-DASH");
    if (jword_lower_ends_with(j, "s") && j->n >= 3) {
        /* Java indexes the lowered string with the original length */
        uint16_t ch2 = j->n - 2 < j->nl ? j->lw[j->n - 2] : 0;
        if (ch2 != 's' && ch2 != 'i' && ch2 != 'u')
            sbuf_add(b, "-s");
    } else if (j->n >= 5 && !has_dash && !(has_digit && num_caps > 0)) {
        static const char *const suffixes[] = {"ed", "ing", "ion", "er", "est",
                                               "ly", "ity", "y",   "al"};
        for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
            if (jword_lower_ends_with(j, suffixes[i])) {
                sbuf_add(b, "-");
                sbuf_add(b, suffixes[i]);
                break;
            }
        }
    }
}

/* unknownLevel 4 (other languages). */
static void signature_level4(const jword *j, int loc, sbuf *b)
{
    int has_digit = 0, has_non_digit = 0, has_letter = 0, has_lower = 0;
    int has_dash = 0, has_period = 0, has_comma = 0;
    for (size_t i = 0; i < j->n; i++) {
        uint16_t ch = j->w[i];
        if (java_is_digit(ch)) {
            has_digit = 1;
            continue;
        }
        has_non_digit = 1;
        if (java_is_letter(ch)) {
            has_letter = 1;
            has_lower |= java_is_lower(ch) || java_is_title(ch);
        } else {
            has_dash |= ch == '-';
            has_period |= ch == '.';
            has_comma |= ch == ',';
        }
    }
    uint16_t ch0 = j->w[0];
    if (java_is_upper(ch0) || java_is_title(ch0))
        sbuf_add(b, !has_lower ? "-AC" : loc == 0 ? "-SC" : "-C");
    else
        sbuf_add(b, has_lower ? "-L" : has_letter ? "-U" : "-S");
    if (has_digit)
        sbuf_add(b, has_non_digit ? "-n" : "-N");
    if (has_dash)
        sbuf_add(b, "-H");
    if (has_period)
        sbuf_add(b, "-P");
    if (has_comma)
        sbuf_add(b, "-C");
    uint16_t last = j->w[j->n - 1];
    if (j->n > 3 && java_is_letter(last)) {
        uint16_t lower = (uint16_t)java_to_lower(last);
        char utf8[4];
        utf16_to_utf8(&lower, 1, utf8);
        sbuf_add(b, "-");
        sbuf_add(b, utf8);
    }
}

size_t signature_of(const char *word, int loc, int unknown_level, signature_known_fn known,
                    void *ctx, char *out, size_t outsize)
{
    sbuf b = {out, outsize, 0};
    sbuf_add(&b, "UNK");
    jword j;
    if (word[0] != '\0' && jword_init(&j, word)) {
        if (unknown_level == 4)
            signature_level4(&j, loc, &b);
        else
            signature_level5(&j, loc, known, ctx, &b);
        free(j.mem);
    }
    sbuf_end(&b);
    return b.len;
}
