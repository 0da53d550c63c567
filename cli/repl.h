/* repl — the interactive loop on a terminal (docs/QUERY.md): line editing and
   persistent history (libedit), multi-line statements ended by ';' with a
   continuation prompt, Ctrl-C to drop the statement being typed, Ctrl-D on
   an empty line to leave. */
#ifndef STRATA_CLI_REPL_H
#define STRATA_CLI_REPL_H

#include "cli/session.h"

/* The history file: $STRATA_HISTORY, else ~/.strata_history. */
#define REPL_HISTORY_ENV "STRATA_HISTORY"
/* Rows shown per table before the rest are only counted (:rows N). */
#define REPL_DEFAULT_ROWS 1000

/* Runs until :quit or Ctrl-D. */
void repl_run(session *s);

#endif
