/* scanner — where a statement ends.  Lines are fed in as they are read; a
   `;` ends a statement unless it is inside a string, a quoted name or a
   comment.  The state (open quote, open comment, the text so far)
   survives across lines, so a statement may span many. */
#ifndef STRATA_CLI_SCANNER_H
#define STRATA_CLI_SCANNER_H

#include <stdbool.h>

#include "cli/strbuf.h"

typedef struct scanner {
    char quote;            /* ', " or ` while inside one, else 0 */
    bool escape;
    bool line_comment, block_comment;
    bool has_code;         /* the pending text holds more than comments */
    strbuf text;           /* the statement read so far */
    unsigned line;         /* lines fed so far */
    unsigned first_line;   /* the line the pending statement starts on; 0: none */
    unsigned open_line;    /* the line the open quote or block comment began on */
} scanner;

/* Called for each complete statement (text without its ';'); returns false
   to stop feeding. */
typedef bool (*statement_fn)(void *ctx, const char *text);

/* Feeds one line (or several, for -c); runs every statement it completes
   and keeps the rest.  Returns false when run asked to stop. */
bool scanner_feed(scanner *sc, const char *line, statement_fn run, void *ctx);
/* Whether a statement has begun: text other than blanks and comments is
   pending.  A statement of comments alone is skipped. */
bool scanner_pending(const scanner *sc);
/* Whether the scanner is inside a string, quoted name or block comment
   (so a line starting with ':' is text, not a command). */
bool scanner_in_text(const scanner *sc);
/* Drops the statement being read (Ctrl-C in the REPL). */
void scanner_reset(scanner *sc);
void scanner_free(scanner *sc);
bool text_blank(const char *p);

#endif
