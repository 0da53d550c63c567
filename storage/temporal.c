/*
 * temporal — the representation of openCypher's temporal values: their
 * cells and blobs, their validity, their ISO text, their order and
 * equality, and the calendar these stand on.  See temporal.h for the
 * encoding, and for where the rest of the temporal library lives (query/).
 *
 * Invariants:
 *   1. Every temporal in a value passed temporal_check when it was
 *      encoded (temporal_to_value refuses any other), so a decoded one
 *      has its date within the years, its time within the day and its
 *      offset within 18 hours; the save file's reader checks the same.
 *   2. A DATETIME's blob holds the UTC instant and the offset that was in
 *      force when it was made: decoding, comparing and printing never
 *      consult a time zone database, so storage reads no file and the
 *      order of stored values cannot change when the system's zoneinfo
 *      does.
 *   3. Durations are stored in their normal form (nanos 0..999999999,
 *      the seconds carrying the sign): query/'s arithmetic produces it,
 *      the C API and the save file's reader check it.
 *
 * Calendar arithmetic uses Howard Hinnant's days_from_civil algorithms
 * (proleptic Gregorian, any int64 year that fits).  Supported years are
 * -999999999 .. 999999999, as Cypher's.
 */
#include "storage/temporal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_YEAR TM_MAX_YEAR
#define NS_SEC TM_NANOS_PER_SEC
#define NS_DAY TM_NANOS_PER_DAY

int temporal_fail(temporal_err *e, const char *detail, const char *fmt, ...)
{
    if (e) {
        e->detail = detail;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- calendar ---------------------------------------------------------- */

int64_t tm_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = tm_floordiv(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void tm_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = tm_floordiv(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int dd = (int)(doy - (153 * mp + 2) / 5 + 1);
    int mm = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (mm <= 2);
    *m = mm;
    *d = dd;
}

bool tm_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int tm_month_days(int64_t y, int m)
{
    static const int md[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && tm_leap(y) ? 29 : md[m - 1];
}

int tm_weekday(int64_t days) { return (int)tm_floormod(days + 3, 7) + 1; }   /* 1970-01-01: Thu */

int64_t tm_week1_monday(int64_t y)
{
    int64_t jan4 = tm_days_from_civil(y, 1, 4);
    return jan4 - (tm_weekday(jan4) - 1);
}

void tm_iso_week(int64_t days, int64_t *wyear, int *week)
{
    int64_t y;
    int m, d;
    tm_civil_from_days(days, &y, &m, &d);
    int64_t wy = y + 1;
    if (days < tm_week1_monday(wy))
        wy = y;
    if (days < tm_week1_monday(wy))
        wy = y - 1;
    *wyear = wy;
    *week = (int)((days - tm_week1_monday(wy)) / 7 + 1);
}

int tm_weeks_in_year(int64_t y)
{
    return (int)((tm_week1_monday(y + 1) - tm_week1_monday(y)) / 7);
}

/* ---- range ------------------------------------------------------------- */

/* The first and last day of the supported years, as days since 1970. */
static int64_t min_days(void) { return tm_days_from_civil(-MAX_YEAR, 1, 1); }
static int64_t max_days(void) { return tm_days_from_civil(MAX_YEAR, 12, 31); }

int temporal_check_days(int64_t days, temporal_err *e)
{
    if (days < min_days() || days > max_days())
        return temporal_fail(e, TM_BAD_VALUE, "date out of range (years %lld to %lld)", -MAX_YEAR,
                             MAX_YEAR);
    return 0;
}

int temporal_check_instant(int64_t utc_secs, temporal_err *e)
{
    if (utc_secs < min_days() * 86400 - 86400 || utc_secs > max_days() * 86400 + 2 * 86400)
        return temporal_fail(e, TM_BAD_VALUE, "instant out of range (years %lld to %lld)",
                             -MAX_YEAR, MAX_YEAR);
    return 0;
}

/* ---- values ---------------------------------------------------------------- */

struct tm_datetime_blob {
    int64_t secs;     /* UTC */
    int32_t nanos;
    int32_t offset;
    char zone[];      /* NUL-terminated, "" for a fixed offset */
};

#define CELL_AUX 4   /* byte offset of the 32-bit auxiliary field */

static void cell_set_aux(value *v, uint32_t x) { memcpy((char *)v + CELL_AUX, &x, 4); }
static uint32_t cell_aux(const value *v)
{
    uint32_t x;
    memcpy(&x, (const char *)v + CELL_AUX, 4);
    return x;
}

int temporal_check(const temporal *t, temporal_err *e)
{
    if (!temporal_kind(t->kind))
        return temporal_fail(e, "InvalidArgumentType", "not a temporal value");
    if (temporal_has_date(t->kind) && temporal_check_days(t->days, e) != 0)
        return -1;
    if (temporal_has_time(t->kind) && (t->nanos < 0 || t->nanos >= NS_DAY))
        return temporal_fail(e, TM_BAD_VALUE, "time of day out of range");
    if (temporal_has_zone(t->kind) && (t->offset < -TM_MAX_OFFSET || t->offset > TM_MAX_OFFSET))
        return temporal_fail(e, TM_BAD_VALUE, "zone offset out of range (-18:00 to +18:00)");
    if (t->kind == VAL_DATETIME && !memchr(t->zone, '\0', sizeof t->zone))
        return temporal_fail(e, TM_BAD_VALUE, "time zone name too long");
    return 0;
}

int temporal_to_value(mem_ctx *m, const temporal *t, value *out)
{
    if (temporal_check(t, NULL) != 0) {
        *out = value_null();
        return -1;
    }
    value v = {0};
    v.type = (uint8_t)t->kind;
    switch (t->kind) {
    case VAL_DATE:
        v.u.i = t->days;
        break;
    case VAL_LOCALTIME:
        v.u.i = t->nanos;
        break;
    case VAL_TIME:
        v.u.i = t->nanos;
        cell_set_aux(&v, (uint32_t)t->offset);
        break;
    case VAL_LOCALDATETIME:
        v.u.i = t->days * 86400 + t->nanos / NS_SEC;
        cell_set_aux(&v, (uint32_t)(t->nanos % NS_SEC));
        break;
    case VAL_DATETIME: {
        size_t zl = strlen(t->zone);
        size_t size = sizeof(struct tm_datetime_blob) + zl + 1;
        char buf[sizeof(struct tm_datetime_blob) + TM_ZONE_MAX];
        struct tm_datetime_blob *b = (struct tm_datetime_blob *)buf;
        b->secs = temporal_utc_secs(t);
        b->nanos = (int32_t)(t->nanos % NS_SEC);
        b->offset = t->offset;
        memcpy(b->zone, t->zone, zl + 1);
        return value_blob(m, VAL_DATETIME, buf, size, out);
    }
    default:
        *out = value_null();
        return -1;
    }
    *out = v;
    return 0;
}

int temporal_from_value(const value *v, temporal *t)
{
    memset(t, 0, sizeof *t);
    t->kind = value_kind(v);
    switch (t->kind) {
    case VAL_DATE:
        t->days = v->u.i;
        return 0;
    case VAL_LOCALTIME:
        t->nanos = v->u.i;
        return 0;
    case VAL_TIME:
        t->nanos = v->u.i;
        t->offset = (int32_t)cell_aux(v);
        return 0;
    case VAL_LOCALDATETIME:
        t->days = tm_floordiv(v->u.i, 86400);
        t->nanos = tm_floormod(v->u.i, 86400) * NS_SEC + cell_aux(v);
        return 0;
    case VAL_DATETIME: {
        size_t len;
        const struct tm_datetime_blob *b = value_blob_bytes(v, &len);
        if (!b || len < sizeof *b + 1)
            return -1;
        t->offset = b->offset;
        snprintf(t->zone, sizeof t->zone, "%s", b->zone);
        int64_t l = b->secs + b->offset;
        t->days = tm_floordiv(l, 86400);
        t->nanos = tm_floormod(l, 86400) * NS_SEC + b->nanos;
        return 0;
    }
    default:
        return -1;
    }
}

int duration_to_value(mem_ctx *m, const duration *d, value *out)
{
    return value_blob(m, VAL_DURATION, d, sizeof *d, out);
}

int duration_from_value(const value *v, duration *d)
{
    size_t len;
    const void *b = value_blob_bytes(v, &len);
    if (value_kind(v) != VAL_DURATION || !b || len != sizeof *d)
        return -1;
    memcpy(d, b, sizeof *d);
    return 0;
}

/* ---- output ------------------------------------------------------------------- */

static int fmt_date(int64_t days, char *b, size_t cap)
{
    int64_t y;
    int m, d;
    tm_civil_from_days(days, &y, &m, &d);
    if (y > 9999)
        return snprintf(b, cap, "+%lld-%02d-%02d", (long long)y, m, d);
    if (y < 0)
        return snprintf(b, cap, "-%04lld-%02d-%02d", (long long)-y, m, d);
    return snprintf(b, cap, "%04lld-%02d-%02d", (long long)y, m, d);
}

static int fmt_time(int64_t nanos, char *b, size_t cap)
{
    int64_t s = nanos / NS_SEC, ns = nanos % NS_SEC;
    int n = snprintf(b, cap, "%02d:%02d", (int)(s / 3600), (int)(s / 60 % 60));
    if (s % 60 || ns) {
        size_t at = (size_t)n < cap ? (size_t)n : cap;
        n += snprintf(b + at, cap - at, ":%02d", (int)(s % 60));
        at = (size_t)n < cap ? (size_t)n : cap;
        if (ns % 1000000 == 0 && ns)
            n += snprintf(b + at, cap - at, ".%03d", (int)(ns / 1000000));
        else if (ns % 1000 == 0 && ns)
            n += snprintf(b + at, cap - at, ".%06d", (int)(ns / 1000));
        else if (ns)
            n += snprintf(b + at, cap - at, ".%09d", (int)ns);
    }
    return n;
}

int temporal_format_offset(int32_t off, char *b, size_t cap)
{
    if (off == 0)
        return snprintf(b, cap, "Z");
    int32_t a = off < 0 ? -off : off;
    if (a % 60)
        return snprintf(b, cap, "%c%02d:%02d:%02d", off < 0 ? '-' : '+', a / 3600, a / 60 % 60,
                        a % 60);
    return snprintf(b, cap, "%c%02d:%02d", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
}

int temporal_format_iso(const temporal *t, char *buf, size_t cap)
{
    char tmp[160];
    int n = 0;
    if (temporal_has_date(t->kind))
        n += fmt_date(t->days, tmp + n, sizeof tmp - (size_t)n);
    if (t->kind == VAL_LOCALDATETIME || t->kind == VAL_DATETIME)
        tmp[n++] = 'T';
    if (temporal_has_time(t->kind))
        n += fmt_time(t->nanos, tmp + n, sizeof tmp - (size_t)n);
    if (temporal_has_zone(t->kind))
        n += temporal_format_offset(t->offset, tmp + n, sizeof tmp - (size_t)n);
    if (t->kind == VAL_DATETIME && t->zone[0])
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "[%s]", t->zone);
    return snprintf(buf, cap, "%s", tmp);
}

int temporal_format(const value *v, char *buf, size_t cap)
{
    if (value_kind(v) == VAL_DURATION) {
        duration d;
        return duration_from_value(v, &d) == 0 ? duration_format_iso(&d, buf, cap) : -1;
    }
    temporal t;
    if (temporal_from_value(v, &t) != 0)
        return -1;
    return temporal_format_iso(&t, buf, cap);
}

int duration_format_iso(const duration *d, char *buf, size_t cap)
{
    char tmp[200];
    int n = snprintf(tmp, sizeof tmp, "P");
    int64_t y = d->months / 12, mo = d->months % 12;
    if (y)
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%lldY", (long long)y);
    if (mo)
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%lldM", (long long)mo);
    if (d->days)
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%lldD", (long long)d->days);
    int64_t s = d->seconds, ns = d->nanos;
    bool neg = false;
    if (s < 0 && ns > 0) {
        s += 1;
        ns = NS_SEC - ns;
        neg = true;
    }
    if (s || ns) {
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "T");
        int64_t h = s / 3600, mi = s % 3600 / 60, se = s % 60;
        if (h)
            n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%lldH", (long long)h);
        if (mi)
            n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%lldM", (long long)mi);
        if (se || ns) {
            if (se == 0 && neg)
                n += snprintf(tmp + n, sizeof tmp - (size_t)n, "-");
            n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%lld", (long long)se);
            if (ns) {
                char f[16];
                snprintf(f, sizeof f, "%09lld", (long long)ns);
                int k = 9;
                while (k > 0 && f[k - 1] == '0')
                    k--;
                f[k] = '\0';
                n += snprintf(tmp + n, sizeof tmp - (size_t)n, ".%s", f);
            }
            n += snprintf(tmp + n, sizeof tmp - (size_t)n, "S");
        }
    }
    if (n == 1)
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "T0S");
    return snprintf(buf, cap, "%s", tmp);
}

/* ---- comparison ---------------------------------------------------------------- */

static int cmp64(int64_t a, int64_t b) { return (a > b) - (a < b); }

int temporal_cmp(const temporal *a, const temporal *b)
{
    switch (a->kind) {
    case VAL_DATE:
        return cmp64(a->days, b->days);
    case VAL_LOCALTIME:
        return cmp64(a->nanos, b->nanos);
    case VAL_TIME: {
        int64_t x = a->nanos - (int64_t)a->offset * NS_SEC, y = b->nanos - (int64_t)b->offset * NS_SEC;
        int c = cmp64(x, y);
        return c ? c : cmp64(b->offset, a->offset);
    }
    case VAL_LOCALDATETIME: {
        int c = cmp64(a->days, b->days);
        return c ? c : cmp64(a->nanos, b->nanos);
    }
    case VAL_DATETIME: {
        int c = cmp64(temporal_utc_secs(a), temporal_utc_secs(b));
        if (!c)
            c = cmp64(a->nanos % NS_SEC, b->nanos % NS_SEC);
        return c;
    }
    default:
        return 0;
    }
}

bool temporal_eq(const temporal *a, const temporal *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == VAL_TIME)
        return a->nanos == b->nanos && a->offset == b->offset;
    return temporal_cmp(a, b) == 0;
}

bool duration_eq(const duration *a, const duration *b)
{
    return a->months == b->months && a->days == b->days && a->seconds == b->seconds &&
           a->nanos == b->nanos;
}

int duration_order(const duration *a, const duration *b)
{
    int c = cmp64(a->months, b->months);
    if (!c)
        c = cmp64(a->days, b->days);
    if (!c)
        c = cmp64(a->seconds, b->seconds);
    return c ? c : cmp64(a->nanos, b->nanos);
}

