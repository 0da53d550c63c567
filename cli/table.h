/* table — results as aligned tables for people: the REPL and
   `--format table`. */
#ifndef STRATA_CLI_TABLE_H
#define STRATA_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/output.h"
#include "strata.h"

typedef struct table_opts {
    size_t width;      /* the terminal's columns; 0: no limit (no truncation) */
    size_t max_rows;   /* rows shown; the rest are counted; 0: every row */
    bool timing;       /* the footer shows the time */
} table_opts;

/* Prints r's rows (consuming them) as a table, then a footer: the row
   count, the time, rows not shown, and the update counters that are not
   zero.  Cells wider than the terminal allows end in an ellipsis.  The
   widths come from the first rows; later rows are drawn as they are read
   (table.c says how).  Timed from t0 (out_now_ms); OUT_FAILED when reading
   failed (the rows drawn before it stay, the caller prints the error). */
out_status table_print(FILE *f, strata_result *r, double t0, const table_opts *o);

/* The terminal width of fd (ioctl TIOCGWINSZ), or 0 when it is not a
   terminal. */
size_t table_terminal_width(int fd);

#endif
