/* utf8: decoding one UTF-8 sequence (see utf8.h). */
#include "utf8.h"

int utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned char c = s[0];
    int len;
    unsigned min;
    if (c == 0)
        return 0;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000;
    else
        return 0;
    if ((size_t)len > n)
        return 0;
    unsigned v = c & (0x7F >> len);
    for (int k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[k] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}
