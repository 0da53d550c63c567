/*
 * A growable text buffer for the tests' dumps.  Include after <cmocka.h>.
 */
#ifndef STRATA_TESTS_SBUF_H
#define STRATA_TESTS_SBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static inline void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void sb_printf(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        /* Plain realloc: the dump stays out of the library's allocation
           wrapper and its failure injection. */
        size_t cap = (b->cap ? b->cap * 2 : 512) + (size_t)n;
        char *p = realloc(b->p, cap);
        assert_non_null(p);
        b->p = p;
        b->cap = cap;
    }
}

#endif
