/*
 * temporal_arith — computing with temporals and durations: instant ±
 * duration, duration ± duration, duration * / number, duration.between
 * and its in* forms, and truncate().
 *
 * Errors as storage/temporal.h's: 0, or -1 with e filled.  Every step is
 * checked for 64-bit overflow; a result outside Cypher's years is an
 * error, never a wrap.
 */
#ifndef STRATA_QUERY_TEMPORAL_ARITH_H
#define STRATA_QUERY_TEMPORAL_ARITH_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/temporal.h"

/* duration.between's modes. */
typedef enum tm_between { TM_BETWEEN, TM_IN_MONTHS, TM_IN_DAYS, TM_IN_SECONDS } tm_between;

/* t + sign * d (sign is 1 or -1).  Month arithmetic clamps the day to the
   month's end (2020-01-31 + P1M = 2020-02-29). */
int temporal_add(const temporal *t, const duration *d, int sign, temporal *out, temporal_err *e);
int duration_add(const duration *a, const duration *b, int sign, duration *out, temporal_err *e);
/* a * factor, or a / factor when divide. */
int duration_scale(const duration *a, double factor, bool divide, duration *out, temporal_err *e);
/* duration.between / inMonths / inDays / inSeconds, with Neo4j's rules:
   a side without a date takes the other's date, a side without a zone the
   other's zone (see temporal_arith.c). */
int duration_between(const temporal *a, const temporal *b, tm_between mode, duration *out,
                     temporal_err *e);
/* truncate(unit, t) into kind, then applies the overrides map (or NULL). */
int temporal_truncate(value_type kind, const char *unit, size_t ulen, const temporal *t,
                      const value *overrides, temporal *out, temporal_err *e);

#endif
