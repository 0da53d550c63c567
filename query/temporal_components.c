/*
 * temporal_components — reading a temporal's or a duration's components.
 * See temporal_components.h.
 *
 * Components are computed from the decoded form on each read, never
 * stored: a date's week, quarter and ordinal day come from the calendar
 * (storage/temporal.h), a datetime's epoch values from its instant.  A
 * component defined on a kind answers for every kind that has its part
 * (hour for a time, a local datetime and a datetime alike).
 */
#include "query/temporal_components.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NS_SEC TM_NANOS_PER_SEC

static bool keq(const char *k, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(k, s, n) == 0;
}

int temporal_component(mem_ctx *m, const temporal *t, const char *k, size_t n, value *out)
{
    *out = value_null();
    if (temporal_has_date(t->kind)) {
        int64_t y, wy;
        int mo, d, w;
        tm_civil_from_days(t->days, &y, &mo, &d);
        tm_iso_week(t->days, &wy, &w);
        int q = (mo - 1) / 3 + 1;
        if (keq(k, n, "year"))
            return *out = value_int(y), 0;
        if (keq(k, n, "quarter"))
            return *out = value_int(q), 0;
        if (keq(k, n, "month"))
            return *out = value_int(mo), 0;
        if (keq(k, n, "week"))
            return *out = value_int(w), 0;
        if (keq(k, n, "weekYear"))
            return *out = value_int(wy), 0;
        if (keq(k, n, "day"))
            return *out = value_int(d), 0;
        if (keq(k, n, "ordinalDay"))
            return *out = value_int(t->days - tm_days_from_civil(y, 1, 1) + 1), 0;
        if (keq(k, n, "weekDay") || keq(k, n, "dayOfWeek"))
            return *out = value_int(tm_weekday(t->days)), 0;
        if (keq(k, n, "dayOfQuarter")) {
            int64_t first = tm_days_from_civil(y, tm_quarter_start_month(q), 1);
            return *out = value_int(t->days - first + 1), 0;
        }
    }
    if (temporal_has_time(t->kind)) {
        int64_t s = t->nanos / NS_SEC, ns = t->nanos % NS_SEC;
        if (keq(k, n, "hour"))
            return *out = value_int(s / 3600), 0;
        if (keq(k, n, "minute"))
            return *out = value_int(s / 60 % 60), 0;
        if (keq(k, n, "second"))
            return *out = value_int(s % 60), 0;
        if (keq(k, n, "millisecond"))
            return *out = value_int(ns / 1000000), 0;
        if (keq(k, n, "microsecond"))
            return *out = value_int(ns / 1000), 0;
        if (keq(k, n, "nanosecond"))
            return *out = value_int(ns), 0;
    }
    if (temporal_has_zone(t->kind)) {
        char b[TM_ZONE_MAX + 8];
        if (keq(k, n, "timezone") || keq(k, n, "offset")) {
            if (keq(k, n, "timezone") && t->zone[0])
                snprintf(b, sizeof b, "%s", t->zone);
            else {
                temporal_format_offset(t->offset, b, sizeof b);
                if (keq(k, n, "offset") && t->offset == 0)
                    snprintf(b, sizeof b, "+00:00");
            }
            return value_string(m, b, strlen(b), out) == 0 ? 0 : -1;
        }
        if (keq(k, n, "offsetMinutes"))
            return *out = value_int(t->offset / 60), 0;
        if (keq(k, n, "offsetSeconds"))
            return *out = value_int(t->offset), 0;
    }
    if (t->kind == VAL_DATETIME) {
        int64_t secs = temporal_utc_secs(t);
        if (keq(k, n, "epochSeconds"))
            return *out = value_int(secs), 0;
        int64_t ms;
        if (keq(k, n, "epochMillis")) {
            if (tm_mul_ovf(secs, 1000, &ms))
                return -2;
            return *out = value_int(ms + t->nanos % NS_SEC / 1000000), 0;
        }
    }
    return 1;
}

int duration_component(const duration *d, const char *k, size_t n, value *out)
{
    /* Components read the stored form as Neo4j does: seconds rounded down
       and a non-negative fraction, so PT-0.1S has seconds -1 and
       nanosecondsOfSecond 900000000 (only the ISO text shows -0.1). */
    int64_t s = d->seconds, ns = d->nanos;
    *out = value_null();
    if (keq(k, n, "years"))
        return *out = value_int(d->months / 12), 0;
    if (keq(k, n, "quarters"))
        return *out = value_int(d->months / 3), 0;
    if (keq(k, n, "months"))
        return *out = value_int(d->months), 0;
    if (keq(k, n, "weeks"))
        return *out = value_int(d->days / 7), 0;
    if (keq(k, n, "days"))
        return *out = value_int(d->days), 0;
    if (keq(k, n, "hours"))
        return *out = value_int(s / 3600), 0;
    if (keq(k, n, "minutes"))
        return *out = value_int(s / 60), 0;
    if (keq(k, n, "seconds"))
        return *out = value_int(s), 0;
    /* The sub-second totals scale the seconds: checked, s * unit + part
       (part < unit) overflows exactly when the product does or the sum
       passes INT64_MAX. */
    static const struct { const char *name; int64_t unit; } totals[] = {
        {"milliseconds", 1000}, {"microseconds", 1000000}, {"nanoseconds", NS_SEC},
    };
    for (size_t i = 0; i < sizeof totals / sizeof *totals; i++) {
        if (!keq(k, n, totals[i].name))
            continue;
        int64_t scaled, total;
        if (tm_mul_ovf(s, totals[i].unit, &scaled) ||
            tm_add_ovf(scaled, ns / (NS_SEC / totals[i].unit), &total))
            return -2;
        return *out = value_int(total), 0;
    }
    if (keq(k, n, "quartersOfYear"))
        return *out = value_int(d->months / 3 % 4), 0;
    if (keq(k, n, "monthsOfQuarter"))
        return *out = value_int(d->months % 3), 0;
    if (keq(k, n, "monthsOfYear"))
        return *out = value_int(d->months % 12), 0;
    if (keq(k, n, "daysOfWeek"))
        return *out = value_int(d->days % 7), 0;
    if (keq(k, n, "minutesOfHour"))
        return *out = value_int(s / 60 % 60), 0;
    if (keq(k, n, "secondsOfMinute"))
        return *out = value_int(s % 60), 0;
    if (keq(k, n, "millisecondsOfSecond"))
        return *out = value_int(ns / 1000000), 0;
    if (keq(k, n, "microsecondsOfSecond"))
        return *out = value_int(ns / 1000), 0;
    if (keq(k, n, "nanosecondsOfSecond"))
        return *out = value_int(ns), 0;
    return 1;
}

