#include "cli/strbuf.h"

#include <stdlib.h>
#include <string.h>

int strbuf_put(strbuf *b, const char *s, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        size_t cap = (b->n + len + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
    return 0;
}

int strbuf_str(strbuf *b, const char *s) { return strbuf_put(b, s, strlen(s)); }

void strbuf_free(strbuf *b)
{
    free(b->p);
    *b = (strbuf){ 0 };
}
