/* batch — statements from a file, a pipe or -c, run in order (docs/QUERY.md). */
#ifndef STRATA_CLI_BATCH_H
#define STRATA_CLI_BATCH_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/session.h"

/* Runs every statement and client command read from in; each statement
   runs as soon as its ';' is read and its output is flushed before the
   next line is read.  source names in for error reports (NULL: standard
   input).  A NUL byte, a read error or a string or comment open at the end
   is an error naming source and line, and ends the input. */
void batch_run_stream(session *s, FILE *in, const char *source);
/* Runs the statements of text (-c QUERY); source names it in errors. */
void batch_run_string(session *s, const char *text, const char *source);
/* -f FILE and --init FILE (quiet: errors reported, results not printed).
   -1, with an IOError reported, when path cannot be opened or is a
   directory or another thing that is neither a file nor a pipe. */
int batch_run_file(session *s, const char *path, bool quiet);

#endif
