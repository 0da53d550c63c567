/* printable — control characters replaced for a terminal (see printable.h). */
#include "cli/printable.h"

/* The replacement for control byte c as UTF-8 into out (4 bytes); its
   length. */
static size_t picture(unsigned char c, char *out)
{
    unsigned code = c == 0x7f ? 0x2421 : 0x2400 + c;
    out[0] = (char)(0xE0 | (code >> 12));
    out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[2] = (char)(0x80 | (code & 0x3F));
    return 3;
}

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

void printable_put(strbuf *b, const char *s, size_t len, bool keep_tabs)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!is_control(c) || (keep_tabs && c == '\t'))
            continue;
        strbuf_put(b, s + start, i - start);
        start = i + 1;
        if (c == '\n' || c == '\r' || c == '\t') {
            strbuf_put(b, " ", 1);
        } else {
            char pic[4];
            strbuf_put(b, pic, picture(c, pic));
        }
    }
    strbuf_put(b, s + start, len - start);
}

void printable_write(FILE *f, const char *s, size_t len, bool keep_tabs)
{
    strbuf b = { 0 };
    printable_put(&b, s, len, keep_tabs);
    if (b.failed)   /* out of memory: the text without its controls */
        for (size_t i = 0; i < len; i++) {
            if (!is_control((unsigned char)s[i]) || (keep_tabs && s[i] == '\t'))
                fputc(s[i], f);
        }
    else if (b.n)
        fwrite(b.p, 1, b.n, f);
    strbuf_free(&b);
}
