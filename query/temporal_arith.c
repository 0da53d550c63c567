/*
 * temporal_arith — arithmetic on temporals and durations.  See
 * temporal_arith.h.
 *
 * Invariants:
 *   1. Every sum and product of 64-bit fields is checked (tm_add_ovf,
 *      tm_mul_ovf); an overflow is the range error of what overflowed.
 *   2. A result leaves here in its normal form (durations through
 *      duration_normalize; datetimes in a named zone with the offset the
 *      zone has at the result's local time, temporal_resolve_zone), and
 *      within Cypher's years when it is a value (temporal_add checks;
 *      duration.between's intermediate steps may pass the last year).
 *   3. Durations scale exactly by whole factors (below 9e15, where a
 *      double still holds every integer) and through duration_from_parts
 *      (doubles, fractions cascading down) otherwise.
 */
#include "query/temporal_arith.h"

#include <math.h>
#include <string.h>

#include "query/temporal_build.h"
#include "query/temporal_zone.h"

#define NS_SEC TM_NANOS_PER_SEC
#define NS_DAY TM_NANOS_PER_DAY

static bool keq(const char *k, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(k, s, n) == 0;
}

static const value *mget(const value *map, const char *k)
{
    return value_map_get(map, k, strlen(k));
}

/* ---- addition and scaling ---------------------------------------------------------- */

static int plus_months(int64_t days, int64_t months, int64_t *out, temporal_err *e)
{
    int64_t y;
    int m, d;
    tm_civil_from_days(days, &y, &m, &d);
    int64_t total;
    if (tm_add_ovf(y * 12 + (m - 1), months, &total))
        return temporal_check_days(INT64_MAX, e);
    int64_t ny = tm_floordiv(total, 12);
    int nm = (int)tm_floormod(total, 12) + 1;
    /* Far enough for duration.between's steps past the last year, near
       enough that the calendar arithmetic below cannot overflow; the
       caller checks the exact range. */
    if (ny < -2 * TM_MAX_YEAR || ny > 2 * TM_MAX_YEAR)
        return temporal_check_days(INT64_MAX, e);
    int md = tm_month_days(ny, nm);
    *out = tm_days_from_civil(ny, nm, d > md ? md : d);
    return 0;
}

static int negate(const duration *d, duration *out, temporal_err *e)
{
    if (d->months == INT64_MIN || d->days == INT64_MIN || d->seconds == INT64_MIN)
        return duration_range_error(e);
    return duration_normalize(-d->months, -d->days, -d->seconds, -(int64_t)d->nanos, out, e);
}

/* t + sign * dur.  Every step is checked for overflow; checked also
   requires the result to be a valid value (check_days), which
   duration.between's internal steps do not: they may pass the last year by
   the two values' offsets on their way to an answer that is in range. */
static int add_duration(const temporal *t, const duration *dur, int sign, bool checked,
                        temporal *out, temporal_err *e)
{
    duration d = *dur;
    if (sign < 0 && negate(dur, &d, e) != 0)
        return -1;
    *out = *t;
    if (temporal_has_date(t->kind)) {
        if (d.months && plus_months(out->days, d.months, &out->days, e) != 0)
            return -1;
        if (tm_add_ovf(out->days, d.days, &out->days))
            return temporal_check_days(INT64_MAX, e);
    }
    if (t->kind == VAL_DATE) {
        /* whole days of the seconds (Neo4j) */
        if (tm_add_ovf(out->days, d.seconds / 86400, &out->days))
            return temporal_check_days(INT64_MAX, e);
        return checked ? temporal_check_days(out->days, e) : 0;
    }
    /* Time of day: seconds and nanos, overflowing into days when there is
       a date and wrapping otherwise. */
    int64_t secs = d.seconds;
    int64_t ns = out->nanos + (secs % 86400) * NS_SEC + d.nanos;
    int64_t carry = secs / 86400 + tm_floordiv(ns, NS_DAY);
    out->nanos = tm_floormod(ns, NS_DAY);
    if (temporal_has_date(t->kind) && tm_add_ovf(out->days, carry, &out->days))
        return temporal_check_days(INT64_MAX, e);
    if (temporal_has_date(t->kind) && checked && temporal_check_days(out->days, e) != 0)
        return -1;
    if (t->kind == VAL_DATETIME && t->zone[0])
        return temporal_resolve_zone(out, e);
    return 0;
}

int temporal_add(const temporal *t, const duration *d, int sign, temporal *out, temporal_err *e)
{
    return add_duration(t, d, sign, true, out, e);
}

int duration_add(const duration *a, const duration *b, int sign, duration *out, temporal_err *e)
{
    duration nb = *b;
    if (sign < 0 && negate(b, &nb, e) != 0)
        return -1;
    int64_t mo, d, s;
    if (tm_add_ovf(a->months, nb.months, &mo) || tm_add_ovf(a->days, nb.days, &d) ||
        tm_add_ovf(a->seconds, nb.seconds, &s))
        return duration_range_error(e);
    return duration_normalize(mo, d, s, (int64_t)a->nanos + nb.nanos, out, e);
}

int duration_scale(const duration *a, double f, bool divide, duration *out, temporal_err *e)
{
    if (divide) {
        if (f == 0)
            return temporal_fail(e, TM_BAD_VALUE, "division of a duration by zero");
        f = 1.0 / f;
    }
    if (f == trunc(f) && fabs(f) < 9e15) {
        int64_t k = (int64_t)f, mo, d, s, ns;
        if (!tm_mul_ovf(a->months, k, &mo) && !tm_mul_ovf(a->days, k, &d) &&
            !tm_mul_ovf(a->seconds, k, &s) && !tm_mul_ovf((int64_t)a->nanos, k, &ns))
            return duration_normalize(mo, d, s, ns, out, e);
    }
    return duration_from_parts((double)a->months * f, (double)a->days * f,
                               (double)a->seconds * f, (double)a->nanos * f, out, e);
}

/* ---- duration.between ------------------------------------------------------------ */

/*
 * duration.between and its in* forms follow Neo4j (TemporalValue.until and
 * DurationValue.durationBetween), which are java.time's rules:
 *   1. align: a date gets midnight; a value without a date takes the
 *      other's date (a time keeps its offset); a value without a zone takes
 *      the other's, a named zone resolved at the local date-time, so that a
 *      local value on a daylight-saving day lands on the right side of the
 *      change (align);
 *   2. whole months and days are counted on the calendar in a's zone, the
 *      end's date moving one day toward a when its time of day would
 *      overshoot (calendar_until);
 *   3. between steps a forward by the months, counts the days again, steps
 *      by the days, and what is left is the exact difference (exact_diff).
 * Two values without a date have no calendar: inMonths and inDays give
 * zero for them (Neo4j raises an error).
 */

static void attach_date(temporal *t, int64_t days)
{
    t->kind = t->kind == VAL_TIME ? VAL_DATETIME : VAL_LOCALDATETIME;
    t->days = days;   /* a time's offset stays, as a fixed offset */
}

/* A value without a zone takes z's zone; its local fields stay. */
static int attach_zone(temporal *t, const temporal *z, temporal_err *e)
{
    t->kind = temporal_has_date(t->kind) ? VAL_DATETIME : VAL_TIME;
    t->offset = z->offset;
    memcpy(t->zone, z->zone, sizeof t->zone);
    if (t->kind == VAL_TIME) {
        t->zone[0] = '\0';   /* only a value with a date carries a named zone */
        return 0;
    }
    return temporal_resolve_zone(t, e);
}

static int align(temporal *a, temporal *b, temporal_err *e)
{
    if (a->kind == VAL_DATE)
        a->kind = VAL_LOCALDATETIME;
    if (b->kind == VAL_DATE)
        b->kind = VAL_LOCALDATETIME;
    if (temporal_has_date(a->kind) && !temporal_has_date(b->kind))
        attach_date(b, a->days);
    else if (temporal_has_date(b->kind) && !temporal_has_date(a->kind))
        attach_date(a, b->days);
    if (temporal_has_zone(a->kind) && !temporal_has_zone(b->kind))
        return attach_zone(b, a, e);
    if (temporal_has_zone(b->kind) && !temporal_has_zone(a->kind))
        return attach_zone(a, b, e);
    return 0;
}

/* b - a of two aligned values: instants when zoned, local fields when not. */
static void exact_diff(const temporal *a, const temporal *b, int64_t *secs, int64_t *nanos)
{
    *secs = temporal_utc_secs(b) - temporal_utc_secs(a);
    *nanos = b->nanos % NS_SEC - a->nanos % NS_SEC;
}

/* Whole months and days from a to b, both aligned and with a date. */
static int calendar_until(const temporal *a, const temporal *b0, int64_t *months, int64_t *days,
                          temporal_err *e)
{
    temporal b = *b0;
    if (b.kind == VAL_DATETIME) {   /* b as seen in a's zone */
        int64_t utc = temporal_utc_secs(&b), sub = b.nanos % NS_SEC;
        b.offset = a->offset;
        memcpy(b.zone, a->zone, sizeof b.zone);
        if (temporal_rezone(&b, utc, sub, e) != 0)
            return -1;
    }
    int64_t end = b.days;
    if (end > a->days && b.nanos < a->nanos)
        end--;
    else if (end < a->days && b.nanos > a->nanos)
        end++;
    /* Months as java.time counts them: (year, month, day) packed with 32
       days a month, so a day of month not yet reached takes one off. */
    int64_t ay, by;
    int am, ad, bm, bd;
    tm_civil_from_days(a->days, &ay, &am, &ad);
    tm_civil_from_days(end, &by, &bm, &bd);
    int64_t pa = (ay * 12 + am - 1) * 32 + ad, pb = (by * 12 + bm - 1) * 32 + bd;
    *months = (pb - pa) / 32;
    *days = end - a->days;
    return 0;
}

/* The calendar count (zero without dates) and the exact difference. */
static int until(const temporal *a0, const temporal *b0, int64_t *months, int64_t *days,
                 int64_t *secs, int64_t *nanos, temporal_err *e)
{
    temporal a = *a0, b = *b0;
    if (align(&a, &b, e) != 0)
        return -1;
    *months = *days = 0;
    if (temporal_has_date(a.kind) && calendar_until(&a, &b, months, days, e) != 0)
        return -1;
    exact_diff(&a, &b, secs, nanos);
    return 0;
}

static int calendar_step(temporal *a, int64_t months, int64_t days, temporal_err *e)
{
    duration d = {months, days, 0, 0};
    temporal r;
    if (add_duration(a, &d, 1, false, &r, e) != 0)
        return -1;
    if (r.kind == VAL_DATETIME)
        temporal_prefer_offset(&r, a->offset);
    *a = r;
    return 0;
}

int duration_between(const temporal *a0, const temporal *b0, tm_between mode, duration *out,
                     temporal_err *e)
{
    int64_t months, days, secs, nanos, unused;
    if (until(a0, b0, &months, &days, &secs, &nanos, e) != 0)
        return -1;
    switch (mode) {
    case TM_IN_MONTHS: return duration_normalize(months, 0, 0, 0, out, e);
    case TM_IN_DAYS: return duration_normalize(0, days, 0, 0, out, e);
    case TM_IN_SECONDS: return duration_normalize(0, 0, secs, nanos, out, e);
    case TM_BETWEEN: break;
    }
    if (!temporal_has_date(a0->kind) || !temporal_has_date(b0->kind))
        return duration_normalize(0, 0, secs, nanos, out, e);
    temporal a = *a0;
    if (calendar_step(&a, months, 0, e) != 0 ||
        until(&a, b0, &unused, &days, &secs, &nanos, e) != 0 ||
        calendar_step(&a, 0, days, e) != 0 ||
        until(&a, b0, &unused, &unused, &secs, &nanos, e) != 0)
        return -1;
    return duration_normalize(months, days, secs, nanos, out, e);
}

/* ---- truncate ------------------------------------------------------------------------ */

int temporal_truncate(value_type kind, const char *unit, size_t ulen, const temporal *t,
                      const value *ov, temporal *out, temporal_err *e)
{
    static const char *const units[] = {"millennium", "century", "decade", "year", "weekYear",
                                        "quarter", "month", "week", "day", "hour", "minute",
                                        "second", "millisecond", "microsecond", NULL};
    int u = -1;
    for (int i = 0; units[i]; i++)
        if (keq(unit, ulen, units[i]))
            u = i;
    if (u < 0)
        return temporal_fail(e, TM_BAD_VALUE, "unknown truncation unit '%.*s'",
                             (int)(ulen > 40 ? 40 : ulen), unit);
    if (temporal_has_date(kind) && !temporal_has_date(t->kind))
        return temporal_fail(e, TM_BAD_VALUE, "cannot truncate a time to a value with a date");
    if (!temporal_has_time(kind) && u >= 9)
        return temporal_fail(e, TM_BAD_VALUE, "cannot truncate a date to unit %s", units[u]);
    if (!temporal_has_date(kind) && u < 8)
        return temporal_fail(e, TM_BAD_VALUE, "cannot truncate a time to unit %s", units[u]);
    temporal r = *t;
    r.kind = kind;
    if (!temporal_has_time(t->kind))
        r.nanos = 0;
    if (!temporal_has_zone(t->kind)) {
        r.offset = 0;
        r.zone[0] = '\0';
    }
    if (temporal_has_date(kind)) {
        int64_t y, wy;
        int m, d, w;
        tm_civil_from_days(r.days, &y, &m, &d);
        tm_iso_week(r.days, &wy, &w);
        (void)w;
        switch (u) {
        case 0: r.days = tm_days_from_civil(tm_floordiv(y, 1000) * 1000, 1, 1); break;
        case 1: r.days = tm_days_from_civil(tm_floordiv(y, 100) * 100, 1, 1); break;
        case 2: r.days = tm_days_from_civil(tm_floordiv(y, 10) * 10, 1, 1); break;
        case 3: r.days = tm_days_from_civil(y, 1, 1); break;
        case 4: r.days = tm_week1_monday(wy); break;
        case 5: r.days = tm_days_from_civil(y, tm_quarter_start_month((m - 1) / 3 + 1), 1); break;
        case 6: r.days = tm_days_from_civil(y, m, 1); break;
        case 7: r.days -= tm_weekday(r.days) - 1; break;
        default: break;
        }
    } else
        r.days = 0;
    if (temporal_has_time(kind)) {
        static const int64_t q[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 3600 * NS_SEC, 60 * NS_SEC,
                                    NS_SEC, 1000000, 1000};
        r.nanos = u < 9 ? 0 : r.nanos - r.nanos % q[u];
    } else
        r.nanos = 0;
    if (ov && value_kind(ov) == VAL_MAP && value_map_len(ov) > 0) {
        /* The fraction the truncation kept (digits above the unit) stays
           under smaller sub-second fields from the map: truncating
           12:31:14.645876 to the millisecond with {nanosecond: 2} gives
           12:31:14.645000002. */
        int64_t kept = r.nanos % NS_SEC;
        bool finer_only = (u == 12 && !mget(ov, "millisecond")) ||
                          (u == 13 && !mget(ov, "millisecond") && !mget(ov, "microsecond"));
        if (temporal_set_fields(kind, ov, &r, e) != 0)
            return -1;
        if (temporal_has_time(kind) && finer_only &&
            (mget(ov, "microsecond") || mget(ov, "nanosecond")) &&
            r.nanos % NS_SEC + kept < NS_SEC)
            r.nanos += kept;
    }
    if (kind == VAL_TIME && r.zone[0]) {
        temporal now;
        if (temporal_now(VAL_DATETIME, r.zone, strlen(r.zone), &now, e) != 0)
            return -1;
        r.offset = now.offset;
        r.zone[0] = '\0';
    }
    if (kind == VAL_DATETIME && r.zone[0] && temporal_resolve_zone(&r, e) != 0)
        return -1;
    if (!temporal_has_zone(kind)) {
        r.offset = 0;
        r.zone[0] = '\0';
    }
    *out = r;
    return 0;
}
