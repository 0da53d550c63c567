/* scanner — splitting input into statements at `;` (see scanner.h). */
#include <string.h>

#include "cli/scanner.h"

bool text_blank(const char *p)
{
    for (; p && *p; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            return false;
    return true;
}

bool scanner_pending(const scanner *sc) { return sc->has_code; }

bool scanner_in_text(const scanner *sc) { return sc->quote || sc->block_comment; }

static void clear_text(scanner *sc)
{
    sc->first_line = 0;
    sc->has_code = false;
    sc->text.n = 0;
    if (sc->text.p)
        sc->text.p[0] = '\0';
}

void scanner_reset(scanner *sc)
{
    sc->quote = 0;
    sc->escape = sc->line_comment = sc->block_comment = false;
    clear_text(sc);
}

void scanner_free(scanner *sc) { strbuf_free(&sc->text); }

/* Consumes line[*i] (and the next byte for two-byte tokens); true when it
   is a statement-ending ';'. */
static bool ends_statement(scanner *sc, const char *line, size_t len, size_t *i)
{
    char c = line[*i], next = *i + 1 < len ? line[*i + 1] : '\0';
    if (!sc->first_line && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ';')
        sc->first_line = sc->line + 1;
    if (c == '\n')
        sc->line++;
    if (sc->line_comment) {
        if (c == '\n')
            sc->line_comment = false;
    } else if (sc->block_comment) {
        if (c == '*' && next == '/') {
            sc->block_comment = false;
            ++*i;
        }
    } else if (sc->quote) {
        if (sc->escape)
            sc->escape = false;
        else if (c == '\\' && sc->quote != '`')
            sc->escape = true;
        else if (c == sc->quote)
            sc->quote = 0;
    } else if (c == '\'' || c == '"' || c == '`') {
        sc->quote = c;
        sc->open_line = sc->line + 1;
        sc->has_code = true;
    } else if (c == '/' && next == '/') {
        sc->line_comment = true;
        ++*i;
    } else if (c == '/' && next == '*') {
        sc->block_comment = true;
        sc->open_line = sc->line + 1;
        ++*i;
    } else if (c == ';') {
        return true;
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        sc->has_code = true;
    }
    return false;
}

bool scanner_feed(scanner *sc, const char *line, statement_fn run, void *ctx)
{
    size_t len = strlen(line), start = 0;
    for (size_t i = 0; i < len; i++) {
        if (!ends_statement(sc, line, len, &i))
            continue;
        strbuf_put(&sc->text, line + start, i - start);
        start = i + 1;
        bool go_on = true;
        if (scanner_pending(sc))
            go_on = run(ctx, sc->text.p);
        clear_text(sc);
        if (!go_on)
            return false;
    }
    if (start < len)
        strbuf_put(&sc->text, line + start, len - start);
    if (len && line[len - 1] != '\n') {
        /* a line handed over without its newline still ends a // comment */
        sc->line++;
        sc->line_comment = false;
    }
    return true;
}
