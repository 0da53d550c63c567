/* complete — Tab completion in the REPL: Cypher keywords and functions,
   client commands after a ':' that starts a line, labels after ':' in a
   node pattern or after `n:`, relationship types after ':' inside
   [...], property keys after '.', parameter names after '$' — the names
   taken from the live graph's catalogs each time Tab is pressed. */
#ifndef STRATA_CLI_COMPLETE_H
#define STRATA_CLI_COMPLETE_H

#include <histedit.h>
#include <stdbool.h>

#include "cli/session.h"

typedef struct completer {
    session *s;
    bool in_statement;   /* earlier lines began a statement: no commands */
} completer;

/* Binds Tab on el to completion over c (borrowed for el's lifetime). */
void complete_install(EditLine *el, completer *c);

#endif
