/* interrupt — the SIGINT handler and its flag.
 *
 * The handler is async-signal-safe: it stores to volatile sig_atomic_t
 * objects, reads one pointer and calls strata_interrupt (one atomic
 * store).  The graph being queried is published in `running` around
 * strata_query, so a Ctrl-C during a statement stops it: the statement
 * fails with the code Interrupted and is rolled back whole.
 */
#include <signal.h>
#include <stddef.h>

#include "cli/interrupt.h"

static volatile sig_atomic_t pending;
static strata_graph *volatile running;

static void on_sigint(int sig)
{
    (void)sig;
    pending = 1;
    strata_graph *g = running;
    if (g)
        strata_interrupt(g);
}

void interrupt_install(void)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;   /* no SA_RESTART: see the header */
    sigaction(SIGINT, &sa, NULL);
}

bool interrupt_pending(void) { return pending != 0; }

void interrupt_clear(void) { pending = 0; }

void interrupt_watch(strata_graph *g) { running = g; }

void interrupt_unwatch(void) { running = NULL; }
