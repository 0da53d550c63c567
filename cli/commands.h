/* commands — the client commands (docs/QUERY.md): lines starting with ':'
   outside a statement, the same in batch mode and in the REPL. */
#ifndef STRATA_CLI_COMMANDS_H
#define STRATA_CLI_COMMANDS_H

#include <stddef.h>

#include "cli/session.h"

/* Runs one command line (":name args..."); line is modified.  A failure is
   reported through session_error (and counts for the exit status). */
void command_run(session *s, char *line);

/* The command names, for completion: i in 0 .. command_count()-1. */
size_t command_count(void);
const char *command_name(size_t i);

#endif
