/*
 * temporal_parse — ISO 8601 text read into temporals and durations, as
 * Cypher's constructors take it: date('2015-W30-2'), time('12:31:14.645+01:00'),
 * datetime('2015-07-21T21:40:32.142[Europe/London]'), duration('P1Y2M10DT2H').
 *
 * Errors as storage/temporal.h's: 0, or -1 with e filled
 * (InvalidArgumentValue, the text quoted in the message).
 */
#ifndef STRATA_QUERY_TEMPORAL_PARSE_H
#define STRATA_QUERY_TEMPORAL_PARSE_H

#include <stddef.h>

#include "storage/temporal.h"

/* ISO 8601 text for the given kind (VAL_DATE .. VAL_DATETIME). */
int temporal_parse(value_type kind, const char *s, size_t len, temporal *out, temporal_err *e);
int duration_parse(const char *s, size_t len, duration *out, temporal_err *e);

#endif
