/* strbuf — a growable, always NUL-terminated byte string for the strata
   program (statement text being read, output being rendered). */
#ifndef STRATA_CLI_STRBUF_H
#define STRATA_CLI_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
    char *p;        /* NULL until something is added */
    size_t n, cap;
    bool failed;    /* an append ran out of memory (the text is short) */
} strbuf;

/* Appends len bytes; -1 (and failed set) when out of memory. */
int strbuf_put(strbuf *b, const char *s, size_t len);
int strbuf_str(strbuf *b, const char *s);
/* Frees the text and empties b. */
void strbuf_free(strbuf *b);

#endif
