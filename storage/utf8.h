/*
 * utf8 — the one reader of UTF-8 bytes.
 *
 * Every string strata holds is well-formed UTF-8: each entry point that
 * takes bytes from outside (the C API's string values and names, the
 * loader, the CSV reader, Cypher's string literals) checks them with
 * utf8_check and names the first bad byte; code that cuts or counts
 * strings (the string functions) walks code points with utf8_next, so a
 * cut never falls inside a character.
 *
 * Well-formed means RFC 3629: shortest form only (no overlongs), no UTF-16
 * surrogates (U+D800..U+DFFF), nothing above U+10FFFF.  U+0000 is a
 * character like any other (strings carry their length).
 */
#ifndef STRATA_STORAGE_UTF8_H
#define STRATA_STORAGE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest encoding of one code point. */
#define UTF8_MAX_BYTES 4

/* Decodes the code point at s[0..n): returns its byte length and sets *cp,
   or returns 0 when the bytes there are not well-formed (or n is 0). */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);
/* Encodes cp (a Unicode scalar value) into out; returns the byte count. */
size_t utf8_encode(uint32_t cp, char out[UTF8_MAX_BYTES]);

/* Whether s[0..len) is well-formed; when it is not and bad is not NULL,
   *bad is the offset of the first byte that does not begin a well-formed
   character. */
bool utf8_check(const char *s, size_t len, size_t *bad);

/* On well-formed input: the byte length of the character at s[0..n)
   (1 for a stray byte, so a walk always advances), its code point count,
   and the byte offset after the first k characters (n when there are
   fewer). */
size_t utf8_next(const char *s, size_t n);
size_t utf8_count(const char *s, size_t n);
size_t utf8_skip(const char *s, size_t n, size_t k);

#endif
