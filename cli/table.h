/* table — results as aligned tables for people: the REPL and
   `--format table`. */
#ifndef STRATA_CLI_TABLE_H
#define STRATA_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "strata.h"

typedef struct table_opts {
    size_t width;      /* the terminal's columns; 0: no limit (no truncation) */
    size_t max_rows;   /* rows shown; the rest are counted; 0: every row */
    bool timing;       /* the footer shows the time */
} table_opts;

/* Prints r's rows (consuming them) as a table, then a footer: the row
   count, the time, rows not shown, and the update counters that are not
   zero.  Cells wider than the terminal allows end in an ellipsis. */
/* Reads r whole and prints it as a table, timed from t0 (out_now_ms);
   false when reading it failed (strata_result_error): nothing printed. */
bool table_print(FILE *f, strata_result *r, double t0, const table_opts *o);

/* The terminal width of fd (ioctl TIOCGWINSZ), or 0 when it is not a
   terminal. */
size_t table_terminal_width(int fd);

#endif
