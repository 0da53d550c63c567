/* output — rendering results for the strata program: jsonl (SPEC §8's
   machine contract, exactly), json, csv and aligned tables. */
#ifndef STRATA_CLI_OUTPUT_H
#define STRATA_CLI_OUTPUT_H

#include <stdio.h>

#include "strata.h"

typedef enum out_format { FMT_JSONL, FMT_JSON, FMT_CSV, FMT_TABLE } out_format;

/* Parses "jsonl" / "json" / "csv" / "table"; -1 when unknown. */
int out_format_parse(const char *name, out_format *out);
void out_result(FILE *f, out_format fmt, strata_result *r, double ms);
void out_error(FILE *f, out_format fmt, const strata_query_error *e);
/* The same, for an error in the statement text: for a person (table, csv)
   the offending line of text comes first with a '^' under the column. */
void out_error_in(FILE *f, out_format fmt, const strata_query_error *e, const char *text);

#endif
