/*
 * temporal — openCypher's temporal types: date, localtime, time,
 * localdatetime, datetime and duration.
 *
 * Representation in a value cell (value.h, 16 bytes):
 *
 *   VAL_DATE           u.i = days since 1970-01-01 (proleptic Gregorian)
 *   VAL_LOCALTIME      u.i = nanoseconds of the day
 *   VAL_TIME           u.i = local nanoseconds of the day; bytes 4..7 of
 *                      the cell (inl_head[2..5]) hold the offset, seconds
 *                      east of UTC, as an int32
 *   VAL_LOCALDATETIME  u.i = local seconds since 1970-01-01T00:00; bytes
 *                      4..7 hold the nanoseconds of the second (uint32)
 *   VAL_DATETIME       heap object (value_blob): struct tm_datetime_blob —
 *                      UTC epoch seconds, nanos, the offset in force and
 *                      the zone name ("" for a fixed offset)
 *   VAL_DURATION       heap object (value_blob): struct duration — months,
 *                      days, seconds and nanos (0..999999999), each
 *                      component keeping its own sign as Cypher's do
 *
 * Work is done on the decoded forms below (temporal, duration);
 * temporal_to_value / temporal_from_value convert.
 *
 * Named zones (Europe/Stockholm) are read from the system's TZif files
 * (/usr/share/zoneinfo, or $TZDIR) including the POSIX rule in the file's
 * footer for instants past its last transition; a zone that cannot be
 * found is an error.
 *
 * Errors: every function that can fail returns 0 or -1 and fills a
 * temporal_err: a static TCK detail code (or NULL) and a message.
 */
#ifndef STRATA_STORAGE_TEMPORAL_H
#define STRATA_STORAGE_TEMPORAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/mem.h"
#include "storage/value.h"

#define TM_ZONE_MAX 64
#define TM_NANOS_PER_SEC 1000000000LL
#define TM_NANOS_PER_DAY 86400000000000LL

typedef struct temporal {
    value_type kind;   /* VAL_DATE .. VAL_DATETIME */
    int64_t days;      /* local date (DATE, LOCALDATETIME, DATETIME) */
    int64_t nanos;     /* local nanoseconds of day (all but DATE) */
    int32_t offset;    /* seconds east of UTC (TIME, DATETIME) */
    char zone[TM_ZONE_MAX];   /* DATETIME: IANA zone name, or "" */
} temporal;

typedef struct duration {
    int64_t months, days, seconds;
    int32_t nanos;     /* 0 .. 999999999, added to seconds */
} duration;

typedef struct temporal_err {
    const char *detail;   /* static TCK detail code or NULL */
    char msg[160];
} temporal_err;

/* Units for truncate() and for duration.between's modes. */
typedef enum tm_between { TM_BETWEEN, TM_IN_MONTHS, TM_IN_DAYS, TM_IN_SECONDS } tm_between;

static inline bool temporal_kind(value_type t)
{
    return t == VAL_DATE || t == VAL_LOCALTIME || t == VAL_TIME || t == VAL_LOCALDATETIME ||
           t == VAL_DATETIME;
}

/* ---- calendar helpers ---- */
int64_t tm_days_from_civil(int64_t y, int m, int d);
void tm_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
bool tm_leap(int64_t y);
int tm_month_days(int64_t y, int m);
/* ISO weekday 1 (Monday) .. 7 (Sunday). */
int tm_weekday(int64_t days);

/* ---- values ---- */
/* Whether t is a value of its kind: the one definition of a valid
   temporal, which every constructor, the arithmetic and the loader apply,
   so that whatever Cypher can make can be saved and loaded:
     dates (DATE, LOCALDATETIME, DATETIME: the local date) in years
       -999999999 .. 999999999;
     times of day in [00:00, 24:00);
     offsets (TIME, DATETIME) within -18:00 .. +18:00;
     zone names shorter than TM_ZONE_MAX.
   Durations have no range of their own beyond their components' 64 bits
   (months, days, seconds; nanoseconds 0..999999999); an operation whose
   result leaves it is an error, never a wrap.
   0, or -1 with e filled (ArgumentError / InvalidArgumentValue). */
int temporal_check(const temporal *t, temporal_err *e);
/* Cell or heap form.  -1 when out of memory, or when t is not valid
   (temporal_check: call it first for the message). */
int temporal_to_value(mem_ctx *m, const temporal *t, value *out);
/* Decodes a temporal value; -1 when v is not one. */
int temporal_from_value(const value *v, temporal *t);
int duration_to_value(mem_ctx *m, const duration *d, value *out);
int duration_from_value(const value *v, duration *d);

/* ---- parsing and building ---- */
/* ISO 8601 text for the given kind (VAL_DATE .. VAL_DATETIME). */
int temporal_parse(value_type kind, const char *s, size_t len, temporal *out, temporal_err *e);
int duration_parse(const char *s, size_t len, duration *out, temporal_err *e);
/* From a component map ({year: .., month: .., ...}); map values may be
   temporals (date:, time:, datetime: bases).  now is the current instant
   used for defaults where Cypher takes them (only the timezone default:
   UTC). */
int temporal_from_map(value_type kind, const value *map, temporal *out, temporal_err *e);
int duration_from_map(const value *map, duration *out, temporal_err *e);
/* Converting one temporal to another kind (date(datetime), ...). */
int temporal_convert(value_type kind, const temporal *in, temporal *out, temporal_err *e);
/* The current instant as kind in zone (NULL or "" is UTC; may be an
   offset "+01:00" or a name). */
int temporal_now(value_type kind, const char *zone, size_t zlen, temporal *out, temporal_err *e);
/* The instant sec.nsec (since the Unix epoch, UTC) as kind in zone. */
int temporal_at(value_type kind, int64_t sec, int64_t nsec, const char *zone, size_t zlen,
                temporal *out, temporal_err *e);
/* Fixed offset of a datetime built from local fields: resolves t->zone
   (named) for t->days/t->nanos and sets t->offset.  Gaps move forward,
   overlaps take the earlier offset (java.time's rule). */
int temporal_resolve_zone(temporal *t, temporal_err *e);

/* ---- output ---- */
/* ISO string Cypher prints; returns the length (snprintf-like). */
int temporal_format_iso(const temporal *t, char *buf, size_t cap);
int duration_format_iso(const duration *d, char *buf, size_t cap);
/* The ISO string Cypher prints for a temporal or duration value
   (snprintf-like: the length it needs), or -1 for other kinds. */
int temporal_format(const value *v, char *buf, size_t cap);

/* ---- accessors ---- */
/* Component by name (date.year, dt.timezone, dur.minutesOfHour, ...):
   1 when key is not a component of this kind, -1 out of memory, -2 when
   the component does not fit a 64-bit integer (a datetime's epochMillis
   at the ends of the year range, a huge duration's nanoseconds), 0 ok. */
int temporal_component(mem_ctx *m, const temporal *t, const char *key, size_t len, value *out);
int duration_component(const duration *d, const char *key, size_t len, value *out);

/* ---- comparison ---- */
/* Same kind only; TIME and DATETIME compare by instant, then (for total
   order and equality) by offset/zone.  -1/0/1. */
int temporal_cmp(const temporal *a, const temporal *b);
/* Whether a = b in Cypher's sense (same instant; for DATETIME also the
   same zone is not required: equal instants are equal). */
bool temporal_eq(const temporal *a, const temporal *b);
bool duration_eq(const duration *a, const duration *b);
/* Total order for ORDER BY among durations (by months, days, seconds,
   nanos); Cypher's < is not defined on durations. */
int duration_order(const duration *a, const duration *b);

/* ---- arithmetic ---- */
/* t + sign * d (sign is 1 or -1).  Month arithmetic clamps the day to the
   month's end (2020-01-31 + P1M = 2020-02-29). */
int temporal_add(const temporal *t, const duration *d, int sign, temporal *out, temporal_err *e);
int duration_add(const duration *a, const duration *b, int sign, duration *out, temporal_err *e);
int duration_scale(const duration *a, double factor, bool divide, duration *out, temporal_err *e);
/* duration.between / inMonths / inDays / inSeconds, with Neo4j's rules:
   a side without a date takes the other's date, a side without a zone the
   other's zone (see temporal.c). */
int duration_between(const temporal *a, const temporal *b, tm_between mode, duration *out,
                     temporal_err *e);
/* Fractional components cascade down (Neo4j's approximation: a month is
   30.436875 days). */
int duration_from_parts(double months, double days, double seconds, double nanos, duration *out,
                        temporal_err *e);
/* truncate(unit, t) into kind, then applies the overrides map (or NULL). */
int temporal_truncate(value_type kind, const char *unit, size_t ulen, const temporal *t,
                      const value *overrides, temporal *out, temporal_err *e);

#endif
