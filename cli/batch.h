/* batch — statements from a file, a pipe or -c, run in order (SPEC §8). */
#ifndef STRATA_CLI_BATCH_H
#define STRATA_CLI_BATCH_H

#include <stdio.h>

#include "cli/session.h"

/* Runs every statement and client command read from in; each statement
   runs as soon as its ';' is read and its output is flushed before the
   next line is read.  source names in for error reports ("-" for standard
   input: no name printed). */
void batch_run_stream(session *s, FILE *in, const char *source);
/* Runs the statements of text (-c QUERY). */
void batch_run_string(session *s, const char *text);
/* --init FILE: runs a script quietly; errors are reported with the file
   and line.  -1 when the file cannot be read. */
int batch_run_init(session *s, const char *path);

#endif
