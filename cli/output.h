/* output — rendering results for the strata program: jsonl (the
   machine contract of docs/QUERY.md, exactly), json, csv and aligned tables. */
#ifndef STRATA_CLI_OUTPUT_H
#define STRATA_CLI_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/strbuf.h"
#include "strata.h"

typedef enum out_format { FMT_JSONL, FMT_JSON, FMT_CSV, FMT_TABLE } out_format;

/* Parses "jsonl" / "json" / "csv" / "table"; -1 when unknown. */
int out_format_parse(const char *name, out_format *out);
/* How printing a result went. */
typedef enum out_status {
    OUT_PRINTED,    /* every row, and the result's summary */
    OUT_FAILED,     /* reading it failed (strata_result_error): the caller
                       prints the error — nothing was printed for the
                       result, or (csv, tables) only whole rows before it */
    OUT_REPORTED,   /* it failed and the output already says so (a jsonl
                       line closed with its error; out of memory) */
} out_status;

/* Prints r as strata_result_next yields its rows (a bounded buffer, never
   the whole result), with the time since t0 (out_now_ms) — a result is
   computed as it is read, so the time includes the reading. */
out_status out_result(FILE *f, out_format fmt, strata_result *r, double t0);
double out_now_ms(void);
/* jsonl and json: the machine formats. */
bool out_is_json(out_format fmt);
/* JSON text appended to b: a string (escaped), a value as the jsonl
   contract writes it (nodes and relationships read through v). */
void out_json_string(strbuf *b, const char *s, size_t len);
void out_json_value(strbuf *b, strata_view *v, const strata_value *val);
/* Prints b as one line and frees it; an OutOfMemory error line instead
   when b ran out of memory (never a cut line). */
void out_json_line(FILE *f, out_format fmt, strbuf *b);
void out_error(FILE *f, out_format fmt, const strata_query_error *e);
/* The same, for an error in the statement text: for a person (table, csv)
   the offending line of text comes first with a '^' under the column. */
void out_error_in(FILE *f, out_format fmt, const strata_query_error *e, const char *text);

#endif
