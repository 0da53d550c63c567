/*
 * The server's log: one line per connection event and per failed query,
 * to stderr or a file, each stamped with the UTC time.  Lines are written
 * whole under a lock so that threads do not interleave them.
 */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

#include <stdbool.h>
#include <stdio.h>

/* out: where lines go (stderr when NULL); quiet: drop every line. */
void log_setup(FILE *out, bool quiet);
void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
