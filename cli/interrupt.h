/* interrupt — Ctrl-C for the strata program.  While a person types, SIGINT
   cancels the statement being typed (the REPL reads the flag); while a
   statement runs, it is meant to stop that statement.  The handler only
   records the signal: everything else happens outside it. */
#ifndef STRATA_CLI_INTERRUPT_H
#define STRATA_CLI_INTERRUPT_H

#include <stdbool.h>

#include "strata.h"

/* Installs the SIGINT handler, without SA_RESTART so that a blocked read
   returns EINTR and the line editor gives the line up. */
void interrupt_install(void);
/* Whether SIGINT arrived since the last interrupt_clear(). */
bool interrupt_pending(void);
void interrupt_clear(void);
/* g runs a statement from now until interrupt_unwatch(). */
void interrupt_watch(strata_graph *g);
void interrupt_unwatch(void);

#endif
