/* UTF-8 decoding and checking; utf8.h states the rules. */
#include "storage/utf8.h"

size_t utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *b = (const unsigned char *)s;
    if (n == 0)
        return 0;
    uint32_t c, min;
    size_t len;
    if (b[0] < 0x80) {
        *cp = b[0];
        return 1;
    } else if (b[0] >= 0xC2 && b[0] <= 0xDF) {
        len = 2, c = b[0] & 0x1F, min = 0x80;
    } else if (b[0] >= 0xE0 && b[0] <= 0xEF) {
        len = 3, c = b[0] & 0x0F, min = 0x800;
    } else if (b[0] >= 0xF0 && b[0] <= 0xF4) {
        len = 4, c = b[0] & 0x07, min = 0x10000;
    } else {
        return 0;   /* a continuation byte, C0/C1 (always overlong), F5..FF */
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((b[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (b[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

size_t utf8_encode(uint32_t cp, char out[UTF8_MAX_BYTES])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bool utf8_check(const char *s, size_t len, size_t *bad)
{
    size_t i = 0;
    while (i < len) {
        /* ASCII runs are the common case: skip them a byte at a time
           without decoding */
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (n == 0) {
            if (bad)
                *bad = i;
            return false;
        }
        i += n;
    }
    return true;
}

size_t utf8_next(const char *s, size_t n)
{
    size_t len = 1;
    while (len < n && ((unsigned char)s[len] & 0xC0) == 0x80)
        len++;
    return n == 0 ? 0 : len;
}

size_t utf8_count(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

size_t utf8_skip(const char *s, size_t n, size_t k)
{
    size_t i = 0;
    while (i < n && k > 0) {
        i += utf8_next(s + i, n - i);
        k--;
    }
    return i;
}
