/* utf8: decoding one UTF-8 sequence, shared by the readers of input text. */
#ifndef CKY_UTIL_UTF8_H
#define CKY_UTIL_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 sequence at s (n >= 1 bytes left), and its code
 * point in *cp; 0 if the bytes there are not valid UTF-8 (a stray continuation byte, an
 * overlong form, a surrogate, a truncated sequence) or s[0] is NUL. */
int utf8_decode(const unsigned char *s, size_t n, unsigned *cp);

#endif
