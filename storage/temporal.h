/*
 * temporal — openCypher's temporal types: date, localtime, time,
 * localdatetime, datetime and duration, as storage keeps them.
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
 * What lives here is what the layers below the query engine need of a
 * temporal: its encoding in a cell or blob (property values, index keys,
 * the save file's codec), its validity (the loader and the C API apply the
 * same rule as Cypher), comparison and equality (value.c orders, compares
 * and hashes with them), the ISO text (the C API's
 * strata_value_temporal_text), and the calendar all of these stand on.
 * Making temporals from text, maps, clocks and zones, and computing with
 * them, is Cypher's business and lives in query/: temporal_parse (ISO
 * text), temporal_build (fields, maps, conversion, the clock),
 * temporal_zone (a temporal in a named zone), zoneinfo (the system's time
 * zone database), temporal_arith (addition, duration.between, truncation)
 * and temporal_components (date.year, dur.minutesOfHour, ...).  Nothing
 * here reads a zone: a datetime keeps the offset it was made with.
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
/* Cypher's years: -999999999 .. 999999999. */
#define TM_MAX_YEAR 999999999LL
/* Offsets east or west of UTC: at most 18 hours (seconds). */
#define TM_MAX_OFFSET (18 * 3600)
/* The TCK detail code of a value out of its range or not a valid spelling. */
#define TM_BAD_VALUE "InvalidArgumentValue"

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

static inline bool temporal_kind(value_type t)
{
    return t == VAL_DATE || t == VAL_LOCALTIME || t == VAL_TIME || t == VAL_LOCALDATETIME ||
           t == VAL_DATETIME;
}
/* Which of the decoded fields a kind uses. */
static inline bool temporal_has_date(value_type k)
{
    return k == VAL_DATE || k == VAL_LOCALDATETIME || k == VAL_DATETIME;
}
static inline bool temporal_has_time(value_type k) { return k != VAL_DATE; }
static inline bool temporal_has_zone(value_type k) { return k == VAL_TIME || k == VAL_DATETIME; }

/* The instant of t in UTC seconds (its local fields less its offset). */
static inline int64_t temporal_utc_secs(const temporal *t)
{
    return t->days * 86400 + t->nanos / TM_NANOS_PER_SEC - t->offset;
}

/* Division and remainder rounding toward negative infinity.  The
   remainder is taken from a % b, not a - floordiv(a, b) * b, whose product
   overflows for a near INT64_MIN (tm_floormod(INT64_MIN, 1000)). */
static inline int64_t tm_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t tm_floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

/* Checked 64-bit arithmetic: true when the result does not fit. */
static inline bool tm_add_ovf(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r);
}
static inline bool tm_mul_ovf(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}

/* Fills e (when not NULL) with detail and the formatted message; -1. */
int temporal_fail(temporal_err *e, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- calendar (proleptic Gregorian) ---- */
int64_t tm_days_from_civil(int64_t y, int m, int d);
void tm_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
bool tm_leap(int64_t y);
int tm_month_days(int64_t y, int m);
/* ISO weekday 1 (Monday) .. 7 (Sunday). */
int tm_weekday(int64_t days);
/* Monday of ISO week 1 of week-year y. */
int64_t tm_week1_monday(int64_t y);
/* The ISO week-year and week (1..53) of a day. */
void tm_iso_week(int64_t days, int64_t *wyear, int *week);
int tm_weeks_in_year(int64_t y);
/* The first month (1, 4, 7, 10) of quarter q (1..4). */
static inline int tm_quarter_start_month(int64_t q) { return (int)(q - 1) * 3 + 1; }

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
/* The date part of temporal_check: days (since 1970) within the years;
   0, or -1 with e filled. */
int temporal_check_days(int64_t days, temporal_err *e);
/* Instants (UTC seconds) whose local date in some offset could be in
   range: checked before an offset is added, so that the sum cannot
   overflow; temporal_check_days decides exactly afterwards. */
int temporal_check_instant(int64_t utc_secs, temporal_err *e);
/* Cell or heap form.  -1 when out of memory, or when t is not valid
   (temporal_check: call it first for the message). */
int temporal_to_value(mem_ctx *m, const temporal *t, value *out);
/* Decodes a temporal value; -1 when v is not one. */
int temporal_from_value(const value *v, temporal *t);
int duration_to_value(mem_ctx *m, const duration *d, value *out);
int duration_from_value(const value *v, duration *d);

/* ---- output ---- */
/* ISO string Cypher prints; returns the length (snprintf-like). */
int temporal_format_iso(const temporal *t, char *buf, size_t cap);
int duration_format_iso(const duration *d, char *buf, size_t cap);
/* The ISO string Cypher prints for a temporal or duration value
   (snprintf-like: the length it needs), or -1 for other kinds. */
int temporal_format(const value *v, char *buf, size_t cap);
/* An offset as the ISO text prints it: "Z", "+01:00", "-00:30:15". */
int temporal_format_offset(int32_t off, char *buf, size_t cap);

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

#endif
