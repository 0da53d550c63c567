/*
 * temporal_build — temporals and durations from their fields.  See
 * temporal_build.h.
 *
 * Invariants:
 *   1. Every field is range-checked where it enters (a year within
 *      Cypher's, a month 1..12, a day within its month, an hour 0..23,
 *      ...); the whole is checked once more where it becomes a value
 *      (temporal_check, by the caller).
 *   2. Whole duration components are added exactly in 64 bits, with every
 *      sum and product checked; only fractions pass through doubles
 *      (duration_acc), so {seconds: 2^62} is exact and {seconds: 2^64} an
 *      error, never a wrap.
 *   3. A component map's keys are checked against its kind before any
 *      field is read (check_keys): a key the kind does not have is an
 *      error, never ignored.
 *   4. A datetime in a named zone leaves here with the offset the zone
 *      has at its local time (temporal_resolve_zone); a time given a named
 *      zone takes the zone's offset now and keeps no name.
 */
#include "query/temporal_build.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "query/temporal_zone.h"

#define NS_SEC TM_NANOS_PER_SEC
#define AVG_SECS_PER_MONTH 2629746.0   /* 30.436875 days */

/* ---- dates ----------------------------------------------------------------- */

int tm_date_from_ymd(int64_t y, int64_t m, int64_t d, int64_t *days, temporal_err *e)
{
    if (y < -TM_MAX_YEAR || y > TM_MAX_YEAR)
        return temporal_fail(e, TM_BAD_VALUE, "year %lld out of range", (long long)y);
    if (m < 1 || m > 12)
        return temporal_fail(e, TM_BAD_VALUE, "invalid month %lld", (long long)m);
    if (d < 1 || d > tm_month_days(y, (int)m))
        return temporal_fail(e, TM_BAD_VALUE, "invalid day %lld of month %lld", (long long)d,
                             (long long)m);
    *days = tm_days_from_civil(y, (int)m, (int)d);
    return 0;
}

int tm_date_from_week(int64_t y, int64_t w, int64_t dow, int64_t *days, temporal_err *e)
{
    if (y < -TM_MAX_YEAR || y > TM_MAX_YEAR)
        return temporal_fail(e, TM_BAD_VALUE, "year %lld out of range", (long long)y);
    if (w < 1 || w > tm_weeks_in_year(y))
        return temporal_fail(e, TM_BAD_VALUE, "invalid week %lld of year %lld", (long long)w,
                             (long long)y);
    if (dow < 1 || dow > 7)
        return temporal_fail(e, TM_BAD_VALUE, "invalid day of week %lld", (long long)dow);
    *days = tm_week1_monday(y) + (w - 1) * 7 + dow - 1;
    return 0;
}

int tm_date_from_ordinal(int64_t y, int64_t od, int64_t *days, temporal_err *e)
{
    if (y < -TM_MAX_YEAR || y > TM_MAX_YEAR)
        return temporal_fail(e, TM_BAD_VALUE, "year %lld out of range", (long long)y);
    if (od < 1 || od > (tm_leap(y) ? 366 : 365))
        return temporal_fail(e, TM_BAD_VALUE, "invalid ordinal day %lld", (long long)od);
    *days = tm_days_from_civil(y, 1, 1) + od - 1;
    return 0;
}

int tm_date_from_quarter(int64_t y, int64_t q, int64_t dq, int64_t *days, temporal_err *e)
{
    if (y < -TM_MAX_YEAR || y > TM_MAX_YEAR)
        return temporal_fail(e, TM_BAD_VALUE, "year %lld out of range", (long long)y);
    if (q < 1 || q > 4)
        return temporal_fail(e, TM_BAD_VALUE, "invalid quarter %lld", (long long)q);
    int64_t start = tm_days_from_civil(y, tm_quarter_start_month(q), 1);
    int64_t end = q == 4 ? tm_days_from_civil(y + 1, 1, 1)
                         : tm_days_from_civil(y, tm_quarter_start_month(q + 1), 1);
    if (dq < 1 || dq > end - start)
        return temporal_fail(e, TM_BAD_VALUE, "invalid day of quarter %lld", (long long)dq);
    *days = start + dq - 1;
    return 0;
}

/* ---- durations ------------------------------------------------------------ */

int duration_range_error(temporal_err *e)
{
    return temporal_fail(e, TM_BAD_VALUE, "duration out of range (each of its months, days and "
                                          "seconds must fit a 64-bit integer)");
}

int duration_normalize(int64_t months, int64_t days, int64_t secs, int64_t nanos, duration *out,
                       temporal_err *e)
{
    if (tm_add_ovf(secs, tm_floordiv(nanos, NS_SEC), &secs))
        return duration_range_error(e);
    nanos = tm_floormod(nanos, NS_SEC);
    out->months = months;
    out->days = days;
    out->seconds = secs;
    out->nanos = (int32_t)nanos;
    return 0;
}

static bool too_big(double x) { return !(x > -9.2e18 && x < 9.2e18); }

int duration_from_parts(double months, double days, double seconds, double nanos, duration *out,
                        temporal_err *e)
{
    if (too_big(months) || too_big(days) || too_big(seconds) || too_big(nanos))
        return duration_range_error(e);
    int64_t mi = (int64_t)months;
    days += (months - (double)mi) * (AVG_SECS_PER_MONTH / 86400.0);
    int64_t di = (int64_t)days;
    seconds += (days - (double)di) * 86400.0;
    int64_t si = (int64_t)seconds;
    nanos += (seconds - (double)si) * 1e9;
    /* Truncated as Neo4j does, but binary noise (x.9999999) rounds. */
    double rn = nearbyint(nanos);
    nanos = fabs(nanos - rn) < 1e-3 ? rn : trunc(nanos);
    /* The cascades above may carry a component just past the range. */
    if (too_big(days) || too_big(seconds) || too_big(nanos))
        return duration_range_error(e);
    return duration_normalize(mi, di, si, (int64_t)nanos, out, e);
}

/* Adds v units of scale to component which (0 months, 1 days, 2 seconds,
   3 nanos), exactly. */
int duration_acc_int(duration_acc *a, int which, int64_t v, int64_t scale, temporal_err *e)
{
    int64_t *ip[] = {&a->mi, &a->di, &a->si, &a->ni};
    int64_t w;
    if (which == 3) {
        /* Sub-second units carry their whole seconds over first, so that
           {milliseconds: 2^63 - 1} (some 292 million years) is a duration,
           not a nanosecond count past 64 bits. */
        int64_t per_sec = NS_SEC / scale;
        if (tm_add_ovf(a->si, v / per_sec, &a->si))
            return duration_range_error(e);
        v %= per_sec;
    }
    if (tm_mul_ovf(v, scale, &w) || tm_add_ovf(*ip[which], w, ip[which]))
        return duration_range_error(e);
    return 0;
}

/* Adds a number of units: its whole part exactly, its fraction to the
   component's fractional sum. */
int duration_acc_add(duration_acc *a, int which, double v, int64_t scale, temporal_err *e)
{
    if (too_big(v))
        return duration_range_error(e);
    double whole = trunc(v);
    if (duration_acc_int(a, which, (int64_t)whole, scale, e) != 0)
        return -1;
    double f = (v - whole) * (double)scale;
    double *fp[] = {&a->mf, &a->df, &a->sf, &a->nf};
    if (f != 0) {
        *fp[which] += f;
        a->frac = true;
    }
    return 0;
}

/* Seconds: the fraction is kept exact as nanoseconds. */
int duration_acc_seconds(duration_acc *a, double v, temporal_err *e)
{
    if (too_big(v))
        return duration_range_error(e);
    double whole = trunc(v);
    if (duration_acc_int(a, 2, (int64_t)whole, 1, e) != 0)
        return -1;
    return duration_acc_int(a, 3, (int64_t)llround((v - whole) * 1e9), 1, e);
}

int duration_acc_finish(const duration_acc *a, duration *out, temporal_err *e)
{
    if (!a->frac)
        return duration_normalize(a->mi, a->di, a->si, a->ni, out, e);
    duration f = { 0 };
    if (duration_from_parts(a->mf, a->df, a->sf, a->nf, &f, e) != 0)
        return -1;
    int64_t mo, d, s, ns;
    if (tm_add_ovf(a->mi, f.months, &mo) || tm_add_ovf(a->di, f.days, &d) ||
        tm_add_ovf(a->si, f.seconds, &s) || tm_add_ovf(a->ni, f.nanos, &ns))
        return duration_range_error(e);
    return duration_normalize(mo, d, s, ns, out, e);
}

/* ---- maps ------------------------------------------------------------------ */

static const value *mget(const value *map, const char *k) { return value_map_get(map, k, strlen(k)); }

/* Reads an integer component; 0 absent, 1 present, -1 error. */
static int mint(const value *map, const char *k, int64_t *out, temporal_err *e)
{
    const value *v = mget(map, k);
    if (!v || value_is_null(v))
        return 0;
    if (value_kind(v) == VAL_INT) {
        *out = v->u.i;
        return 1;
    }
    if (value_kind(v) == VAL_FLOAT && v->u.f == trunc(v->u.f) && !too_big(v->u.f)) {
        *out = (int64_t)v->u.f;
        return 1;
    }
    return temporal_fail(e, TM_BAD_VALUE, "component %s must be an integer", k);
}

static const char *const date_keys[] = {"year", "month", "day", "week", "dayOfWeek",
                                        "ordinalDay", "quarter", "dayOfQuarter", NULL};
static const char *const time_keys[] = {"hour", "minute", "second", "millisecond",
                                        "microsecond", "nanosecond", NULL};

static bool key_in(const char *k, size_t n, const char *const *set)
{
    for (size_t i = 0; set[i]; i++)
        if (strlen(set[i]) == n && memcmp(set[i], k, n) == 0)
            return true;
    return false;
}

static int check_keys(value_type kind, const value *map, temporal_err *e)
{
    size_t n = value_map_len(map);
    const value *keys = value_map_keys(map);
    static const char *const extra_dt[] = {"timezone", "date", "time", "datetime", "epochSeconds",
                                           "epochMillis", NULL};
    for (size_t i = 0; i < n; i++) {
        size_t kl;
        const char *k = value_str(&keys[i], &kl);
        bool ok = false;
        bool has_date = kind == VAL_DATE || kind == VAL_LOCALDATETIME || kind == VAL_DATETIME;
        bool has_time = kind != VAL_DATE;
        if (has_date && key_in(k, kl, date_keys))
            ok = true;
        if (has_time && key_in(k, kl, time_keys))
            ok = true;
        if (key_in(k, kl, extra_dt)) {
            ok = (kl == 8 && memcmp(k, "timezone", 8) == 0)
                     ? (kind == VAL_TIME || kind == VAL_DATETIME)
                 : (kl == 4 && memcmp(k, "date", 4) == 0) ? has_date
                 : (kl == 4 && memcmp(k, "time", 4) == 0) ? has_time
                 : (kl == 8 && memcmp(k, "datetime", 8) == 0)
                     ? (kind == VAL_LOCALDATETIME || kind == VAL_DATETIME)
                     : kind == VAL_DATETIME;
        }
        if (!ok)
            return temporal_fail(e, TM_BAD_VALUE, "unknown component '%.*s'", (int)kl, k);
    }
    return 0;
}

/* A base temporal under key (date:, time:, datetime:); 0 absent. */
static int mbase(const value *map, const char *k, temporal *t, temporal_err *e)
{
    const value *v = mget(map, k);
    if (!v || value_is_null(v))
        return 0;
    if (temporal_from_value(v, t) != 0)
        return temporal_fail(e, "InvalidArgumentType", "component %s must be a temporal value", k);
    return 1;
}

static int date_from_map(const value *map, const temporal *base, bool has_base, int64_t *days,
                         temporal_err *e)
{
    int64_t y = 0, mo = 1, d = 1, w = 1, dow = 1, od = 1, q = 1, dq = 1;
    int ry, rm, rd, rw, rdow, rod, rq, rdq;
    if ((ry = mint(map, "year", &y, e)) < 0 || (rm = mint(map, "month", &mo, e)) < 0 ||
        (rd = mint(map, "day", &d, e)) < 0 || (rw = mint(map, "week", &w, e)) < 0 ||
        (rdow = mint(map, "dayOfWeek", &dow, e)) < 0 ||
        (rod = mint(map, "ordinalDay", &od, e)) < 0 || (rq = mint(map, "quarter", &q, e)) < 0 ||
        (rdq = mint(map, "dayOfQuarter", &dq, e)) < 0)
        return -1;
    if (!has_base && !ry)
        return temporal_fail(e, TM_BAD_VALUE, "year must be specified");
    int64_t by = 0, bwy = 0;
    int bm = 1, bd = 1, bw = 1;
    if (has_base) {
        tm_civil_from_days(base->days, &by, &bm, &bd);
        tm_iso_week(base->days, &bwy, &bw);
    }
    if (rw || rdow) {
        if (has_base) {
            if (!ry)
                y = bwy;
            if (!rw)
                w = bw;
            if (!rdow)
                dow = tm_weekday(base->days);
        }
        return tm_date_from_week(y, w, dow, days, e);
    }
    if (rod) {
        if (has_base && !ry)
            y = by;
        return tm_date_from_ordinal(y, od, days, e);
    }
    if (rq || rdq) {
        if (has_base) {
            if (!ry)
                y = by;
            int64_t bq = (bm - 1) / 3 + 1;
            if (!rq)
                q = bq;
            if (!rdq)
                dq = base->days - tm_days_from_civil(by, tm_quarter_start_month(bq), 1) + 1;
        }
        return tm_date_from_quarter(y, q, dq, days, e);
    }
    if (has_base) {
        if (!ry)
            y = by;
        if (!rm)
            mo = bm;
        if (!rd)
            d = bd;
    } else if (rd && !rm)
        return temporal_fail(e, TM_BAD_VALUE, "day requires month");
    return tm_date_from_ymd(y, mo, d, days, e);
}

static int time_from_map(const value *map, const temporal *base, bool has_base, int64_t *nanos,
                         temporal_err *e)
{
    int64_t h = 0, mi = 0, s = 0, ms = 0, us = 0, ns = 0;
    int rh, rmi, rs, rms, rus, rns;
    if ((rh = mint(map, "hour", &h, e)) < 0 || (rmi = mint(map, "minute", &mi, e)) < 0 ||
        (rs = mint(map, "second", &s, e)) < 0 || (rms = mint(map, "millisecond", &ms, e)) < 0 ||
        (rus = mint(map, "microsecond", &us, e)) < 0 || (rns = mint(map, "nanosecond", &ns, e)) < 0)
        return -1;
    int64_t sub;
    if (has_base) {
        int64_t bs = base->nanos / NS_SEC;
        if (!rh)
            h = bs / 3600;
        if (!rmi)
            mi = bs / 60 % 60;
        if (!rs)
            s = bs % 60;
    } else if ((rmi && !rh) || (rs && !rmi) || ((rms || rus || rns) && !rs))
        return temporal_fail(e, TM_BAD_VALUE, "a smaller time unit needs the larger ones");
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59)
        return temporal_fail(e, TM_BAD_VALUE, "invalid time component");
    if (rms || rus || rns) {
        if (rms && (ms < 0 || ms > 999))
            return temporal_fail(e, TM_BAD_VALUE, "invalid millisecond %lld", (long long)ms);
        if (rus && (us < 0 || us > (rms ? 999 : 999999)))
            return temporal_fail(e, TM_BAD_VALUE, "invalid microsecond %lld", (long long)us);
        if (rns && (ns < 0 || ns > (rus ? 999 : rms ? 999999 : 999999999)))
            return temporal_fail(e, TM_BAD_VALUE, "invalid nanosecond %lld", (long long)ns);
        sub = ms * 1000000 + us * 1000 + ns;
    } else
        sub = has_base ? base->nanos % NS_SEC : 0;
    *nanos = ((h * 60 + mi) * 60 + s) * NS_SEC + sub;
    return 0;
}

static int zone_value(const value *map, temporal *t, bool *has, temporal_err *e)
{
    *has = false;
    const value *z = mget(map, "timezone");
    if (!z || value_is_null(z))
        return 0;
    size_t n;
    const char *s = value_str(z, &n);
    if (!s)
        return temporal_fail(e, "InvalidArgumentType", "timezone must be a string");
    *has = true;
    return temporal_set_zone(t, s, n, e);
}

/* datetime({time: t, timezone: z, ...}) with a zoned t: the fields are
   read in t's zone on the date being built, then the instant moves to z
   (Neo4j: ZonedDateTime.of(date, time, t's zone), fields assigned, then
   withZoneSameInstant(z)).  A named t zone thus takes its offset on that
   date, which may be on the other side of a daylight-saving change from
   t's own date. */
static int move_to_zone(temporal *out, const temporal *t, const temporal *z, temporal_err *e)
{
    out->offset = t->offset;
    memcpy(out->zone, t->zone, sizeof out->zone);
    if (out->zone[0] && temporal_resolve_zone(out, e) != 0)
        return -1;
    int64_t utc = temporal_utc_secs(out), sub = out->nanos % NS_SEC;
    out->offset = z->offset;
    memcpy(out->zone, z->zone, sizeof out->zone);
    return temporal_rezone(out, utc, sub, e);
}

int temporal_from_map(value_type kind, const value *map, temporal *out, temporal_err *e)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (value_kind(map) != VAL_MAP)
        return temporal_fail(e, "InvalidArgumentType", "expected a map");
    if (check_keys(kind, map, e) != 0)
        return -1;

    if (kind == VAL_DATETIME && (mget(map, "epochSeconds") || mget(map, "epochMillis"))) {
        int64_t secs = 0, ms = 0, ns = 0;
        int r1 = mint(map, "epochSeconds", &secs, e), r2 = mint(map, "epochMillis", &ms, e);
        if (r1 < 0 || r2 < 0 || mint(map, "nanosecond", &ns, e) < 0)
            return -1;
        int64_t sub = 0;
        if (r2 && tm_add_ovf(secs, tm_floordiv(ms, 1000), &secs))
            return temporal_check_instant(INT64_MAX, e);
        if (r2)
            sub = tm_floormod(ms, 1000) * 1000000;
        if (tm_add_ovf(sub, ns, &sub) || tm_add_ovf(secs, tm_floordiv(sub, NS_SEC), &secs))
            return temporal_check_instant(INT64_MAX, e);
        sub = tm_floormod(sub, NS_SEC);
        bool hz;
        if (zone_value(map, out, &hz, e) != 0)
            return -1;
        return temporal_rezone(out, secs, sub, e);
    }

    temporal dt, d, t;
    int has_dt = 0, has_d = 0, has_t = 0;
    if (temporal_has_date(kind) && kind != VAL_DATE &&
        (has_dt = mbase(map, "datetime", &dt, e)) < 0)
        return -1;
    if (temporal_has_date(kind) && (has_d = mbase(map, "date", &d, e)) < 0)
        return -1;
    if (temporal_has_time(kind) && (has_t = mbase(map, "time", &t, e)) < 0)
        return -1;
    if (has_dt) {
        if (!temporal_has_date(dt.kind))
            return temporal_fail(e, TM_BAD_VALUE, "datetime: needs a value with a date");
        if (!has_d)
            d = dt, has_d = 1;
        if (!has_t)
            t = dt, has_t = 1;
    }
    if (has_d && !temporal_has_date(d.kind))
        return temporal_fail(e, TM_BAD_VALUE, "date: needs a value with a date");
    if (has_t && !temporal_has_time(t.kind))
        return temporal_fail(e, TM_BAD_VALUE, "time: needs a value with a time");
    /* Without a time base, a temporal given as date: can supply a time
       (datetime({date: dt}) keeps dt's date only: Neo4j's rule). */

    bool base_zone = has_t && temporal_has_zone(t.kind);
    bool has_tz = false;
    temporal zt = *out;
    if (temporal_has_zone(kind) && zone_value(map, &zt, &has_tz, e) != 0)
        return -1;

    if (temporal_has_date(kind) && date_from_map(map, &d, has_d, &out->days, e) != 0)
        return -1;
    if (temporal_has_time(kind)) {
        temporal tb = has_t ? t : (temporal){0};
        if (kind == VAL_TIME && has_t && has_tz && base_zone) {
            /* Same instant, new zone: convert the base time first. */
            temporal conv = zt;
            int64_t base_days = temporal_has_date(t.kind) ? t.days : out->days;
            int64_t utc = base_days * 86400 + t.nanos / NS_SEC - t.offset;
            if (!conv.zone[0])
                conv.nanos =
                    tm_floormod(t.nanos / NS_SEC - t.offset + conv.offset, 86400) * NS_SEC +
                    t.nanos % NS_SEC;
            else if (temporal_rezone(&conv, utc, t.nanos % NS_SEC, e) != 0)
                return -1;
            tb.nanos = conv.nanos;
        }
        if (time_from_map(map, &tb, has_t, &out->nanos, e) != 0)
            return -1;
    }
    if (kind == VAL_DATETIME && has_tz && base_zone)
        return move_to_zone(out, &t, &zt, e);
    if (temporal_has_zone(kind)) {
        if (has_tz) {
            out->offset = zt.offset;
            memcpy(out->zone, zt.zone, sizeof out->zone);
        } else if (base_zone) {
            out->offset = t.offset;
            memcpy(out->zone, t.zone, sizeof out->zone);
        } else {
            out->offset = 0;
            out->zone[0] = '\0';
        }
        if (kind == VAL_TIME && out->zone[0]) {
            temporal now;
            if (temporal_now(VAL_DATETIME, out->zone, strlen(out->zone), &now, e) != 0)
                return -1;
            out->offset = now.offset;
            out->zone[0] = '\0';
        }
        if (kind == VAL_DATETIME && out->zone[0] && temporal_resolve_zone(out, e) != 0)
            return -1;
    }
    return 0;
}

static int mnum(const value *map, const char *k, double *f, bool *present, temporal_err *e)
{
    const value *v = mget(map, k);
    *present = false;
    if (!v || value_is_null(v))
        return 0;
    if (value_kind(v) == VAL_INT)
        *f = (double)v->u.i;
    else if (value_kind(v) == VAL_FLOAT)
        *f = v->u.f;
    else
        return temporal_fail(e, "InvalidArgumentType", "duration component %s must be a number", k);
    *present = true;
    return 0;
}

int duration_from_map(const value *map, duration *out, temporal_err *e)
{
    static const struct {
        const char *k;
        int which;
        int64_t scale;
    } comps[] = {
        {"years", 0, 12},      {"quarters", 0, 3},     {"months", 0, 1},
        {"weeks", 1, 7},       {"days", 1, 1},         {"hours", 2, 3600},
        {"minutes", 2, 60},    {"seconds", 2, 1},      {"milliseconds", 3, 1000000},
        {"microseconds", 3, 1000}, {"nanoseconds", 3, 1},
    };
    if (value_kind(map) != VAL_MAP)
        return temporal_fail(e, "InvalidArgumentType", "expected a map");
    size_t n = value_map_len(map);
    for (size_t i = 0; i < n; i++) {
        size_t kl;
        const char *k = value_str(&value_map_keys(map)[i], &kl);
        bool ok = false;
        for (size_t j = 0; j < sizeof comps / sizeof *comps; j++)
            if (strlen(comps[j].k) == kl && memcmp(comps[j].k, k, kl) == 0)
                ok = true;
        if (!ok)
            return temporal_fail(e, TM_BAD_VALUE, "unknown duration component '%.*s'", (int)kl, k);
    }
    duration_acc a = {0};
    for (size_t j = 0; j < sizeof comps / sizeof *comps; j++) {
        double f;
        bool present;
        if (mnum(map, comps[j].k, &f, &present, e) != 0)
            return -1;
        const value *v = mget(map, comps[j].k);
        if (!present)
            continue;
        int rc;
        if (value_kind(v) == VAL_INT)
            rc = duration_acc_int(&a, comps[j].which, v->u.i, comps[j].scale, e);
        else if (comps[j].which == 2 && comps[j].scale == 1)
            rc = duration_acc_seconds(&a, f, e);
        else
            rc = duration_acc_add(&a, comps[j].which, f, comps[j].scale, e);
        if (rc != 0)
            return -1;
    }
    return duration_acc_finish(&a, out, e);
}

/* truncate()'s overrides: the same fields over a complete base. */
int temporal_set_fields(value_type kind, const value *map, temporal *t, temporal_err *e)
{
    if (check_keys(kind, map, e) != 0)
        return -1;
    if (temporal_has_date(kind) && date_from_map(map, t, true, &t->days, e) != 0)
        return -1;
    if (temporal_has_time(kind) && time_from_map(map, t, true, &t->nanos, e) != 0)
        return -1;
    bool has_zone = false;
    return temporal_has_zone(kind) ? zone_value(map, t, &has_zone, e) : 0;
}

/* ---- conversion, now ----------------------------------------------------------- */

int temporal_convert(value_type kind, const temporal *in, temporal *out, temporal_err *e)
{
    *out = *in;
    out->kind = kind;
    if (temporal_has_date(kind) && !temporal_has_date(in->kind))
        return temporal_fail(e, TM_BAD_VALUE, "cannot convert a time to a value with a date");
    if (temporal_has_time(kind) && !temporal_has_time(in->kind)) {
        if (kind == VAL_LOCALDATETIME || kind == VAL_DATETIME)
            out->nanos = 0;
        else
            return temporal_fail(e, TM_BAD_VALUE, "cannot convert a date to a time");
    }
    if (!temporal_has_date(kind))
        out->days = 0;
    if (!temporal_has_time(kind))
        out->nanos = 0;
    if (temporal_has_zone(kind) && !temporal_has_zone(in->kind)) {
        out->offset = 0;
        out->zone[0] = '\0';
    }
    if (!temporal_has_zone(kind)) {
        out->offset = 0;
        out->zone[0] = '\0';
    }
    if (kind == VAL_TIME)
        out->zone[0] = '\0';
    return 0;
}

int temporal_at(value_type kind, int64_t sec, int64_t nsec, const char *zone, size_t zlen,
                temporal *out, temporal_err *e)
{
    temporal t = {0};
    t.kind = VAL_DATETIME;
    if (zone && zlen && temporal_set_zone(&t, zone, zlen, e) != 0)
        return -1;
    if (temporal_rezone(&t, sec, nsec, e) != 0)
        return -1;
    return temporal_convert(kind, &t, out, e);
}

int temporal_now(value_type kind, const char *zone, size_t zlen, temporal *out, temporal_err *e)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return temporal_at(kind, (int64_t)ts.tv_sec, (int64_t)ts.tv_nsec, zone, zlen, out, e);
}

