/*
 * functions_temporal — Cypher's temporal functions, accessors and
 * operators, as a self-contained table.  They bind Cypher's arguments and
 * errors to the temporal library: the representation in
 * storage/temporal.h, and in query/ the text parser (temporal_parse.h),
 * component maps and the clock (temporal_build.h), the arithmetic
 * (temporal_arith.h) and the components (temporal_components.h).
 *
 * Wiring:
 *   functions.c  function_call/function_known: before "unknown function",
 *                look the name up with temporal_function_find and call
 *                f->impl(c->x, call, args, nargs, out) after checking
 *                f->min_args <= nargs <= f->max_args.
 *   eval.c       access_key: temporal and duration subjects go to
 *                temporal_property; arith: temporal_arith first.
 *   cli/output.c prints through the public strata_value_temporal_text,
 *                which is temporal_format.
 */
#ifndef STRATA_QUERY_FUNCTIONS_TEMPORAL_H
#define STRATA_QUERY_FUNCTIONS_TEMPORAL_H

#include <stdbool.h>
#include <stddef.h>

#include "query/exec.h"
#include "storage/temporal.h"

typedef int (*temporal_fn_impl)(exec *x, const cypher_ast_node *at, const value *args,
                                size_t n, value *out);

typedef struct temporal_fn {
    const char *name;          /* "date", "date.truncate", "duration.between", ... */
    size_t min_args, max_args;
    temporal_fn_impl impl;     /* handles null arguments itself */
} temporal_fn;

/* Case-insensitive lookup; NULL when name is not a temporal function. */
const temporal_fn *temporal_function_find(const char *name, size_t len);

/* Whether v is a temporal instant or a duration. */
bool temporal_value(const value *v);

/* v.key for a temporal or duration v: 0 and a new value in *out; -1 with
   the error recorded in x (an unknown key is an InvalidArgumentValue). */
int temporal_property(exec *x, const cypher_ast_node *at, const value *v, const char *key,
                      size_t len, value *out);

/* a op b for op '+', '-', '*', '/' when a temporal or duration is
   involved: instant ± duration, duration ± duration, duration * number,
   number * duration, duration / number.  Returns 1 (nothing done) when
   the operands are not temporal, 0 with *out set, -1 on error (recorded).
   Nulls are the caller's business (null op x is null). */
int temporal_arith(exec *x, const cypher_ast_node *at, char op, const value *a, const value *b,
                   value *out);

/* Cypher's type name: "Date", "LocalTime", "Time", "LocalDateTime",
   "DateTime", "Duration"; NULL for other kinds. */
const char *temporal_type_name(const value *v);

#endif
