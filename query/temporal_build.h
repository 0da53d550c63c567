/*
 * temporal_build — temporals and durations made from their fields: a date
 * from year/month/day (or week, ordinal day, quarter), a duration from
 * whole and fractional components, Cypher's component maps
 * (date({year: 2020, week: 3}), duration({days: 1.5})), another temporal
 * (date(datetime)) and the clock.
 *
 * Errors as storage/temporal.h's: 0, or -1 with e filled
 * (InvalidArgumentValue for a value out of range, InvalidArgumentType for
 * a component of the wrong type).
 */
#ifndef STRATA_QUERY_TEMPORAL_BUILD_H
#define STRATA_QUERY_TEMPORAL_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/temporal.h"

/* ---- dates from fields ---- */
/* Days since 1970 of a date given as year-month-day, ISO week-year, week
   and day of week, year and ordinal day, or year, quarter and day of
   quarter; each field is checked against the calendar. */
int tm_date_from_ymd(int64_t y, int64_t m, int64_t d, int64_t *days, temporal_err *e);
int tm_date_from_week(int64_t y, int64_t w, int64_t dow, int64_t *days, temporal_err *e);
int tm_date_from_ordinal(int64_t y, int64_t od, int64_t *days, temporal_err *e);
int tm_date_from_quarter(int64_t y, int64_t q, int64_t dq, int64_t *days, temporal_err *e);

/* ---- durations from components ---- */
/* The error of a duration component leaving the 64-bit range; -1. */
int duration_range_error(temporal_err *e);
/* The normal form: nanos folded into seconds, leaving 0..999999999. */
int duration_normalize(int64_t months, int64_t days, int64_t secs, int64_t nanos, duration *out,
                       temporal_err *e);
/* Fractional components cascade down (Neo4j's approximation: a month is
   30.436875 days). */
int duration_from_parts(double months, double days, double seconds, double nanos, duration *out,
                        temporal_err *e);

/* Accumulates a duration's components, integer parts exactly and
   fractional ones as doubles (duration text and maps both add theirs
   here).  Start from {0}. */
typedef struct duration_acc {
    int64_t mi, di, si, ni;
    double mf, df, sf, nf;
    bool frac;
} duration_acc;

/* Component which: 0 months, 1 days, 2 seconds, 3 nanoseconds; scale is
   the number of which-units in one of the units added ({weeks: 2}: which
   1, scale 7). */
int duration_acc_int(duration_acc *a, int which, int64_t v, int64_t scale, temporal_err *e);
int duration_acc_add(duration_acc *a, int which, double v, int64_t scale, temporal_err *e);
/* Seconds, whose fraction is kept exact as nanoseconds. */
int duration_acc_seconds(duration_acc *a, double v, temporal_err *e);
int duration_acc_finish(const duration_acc *a, duration *out, temporal_err *e);

/* ---- maps, conversion, the clock ---- */
/* From a component map ({year: .., month: .., ...}); map values may be
   temporals (date:, time:, datetime: bases).  A zone not given is UTC. */
int temporal_from_map(value_type kind, const value *map, temporal *out, temporal_err *e);
int duration_from_map(const value *map, duration *out, temporal_err *e);
/* The date, time and timezone fields of map (keys as temporal_from_map
   takes them for kind) applied over t, whose fields are the base: what
   truncate()'s third argument does. */
int temporal_set_fields(value_type kind, const value *map, temporal *t, temporal_err *e);
/* Converting one temporal to another kind (date(datetime), ...). */
int temporal_convert(value_type kind, const temporal *in, temporal *out, temporal_err *e);
/* The current instant as kind in zone (NULL or "" is UTC; may be an
   offset "+01:00" or a name). */
int temporal_now(value_type kind, const char *zone, size_t zlen, temporal *out, temporal_err *e);
/* The instant sec.nsec (since the Unix epoch, UTC) as kind in zone. */
int temporal_at(value_type kind, int64_t sec, int64_t nsec, const char *zone, size_t zlen,
                temporal *out, temporal_err *e);

#endif
