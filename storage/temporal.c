/*
 * temporal — parsing, building, printing, comparing and computing with
 * openCypher's temporal values.  See temporal.h for the representation.
 *
 * Calendar arithmetic uses Howard Hinnant's days_from_civil algorithms
 * (proleptic Gregorian, any int64 year that fits).  Supported years are
 * -999999999 .. 999999999, as Cypher's.
 */
#include "storage/temporal.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_YEAR 999999999LL
#define NS_SEC TM_NANOS_PER_SEC
#define NS_DAY TM_NANOS_PER_DAY
#define AVG_SECS_PER_MONTH 2629746.0   /* 30.436875 days */

static int fail(temporal_err *e, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(temporal_err *e, const char *detail, const char *fmt, ...)
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

#define BAD_VALUE "InvalidArgumentValue"
#define MAX_OFFSET (18 * 3600)

static bool add_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static bool mul_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }

/* A duration component left the 64-bit range. */
static int duration_range(temporal_err *e)
{
    return fail(e, BAD_VALUE, "duration out of range (each of its months, days and seconds "
                              "must fit a 64-bit integer)");
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* From the remainder, not a - floordiv(a, b) * b, whose product
   overflows for a near INT64_MIN (floormod(INT64_MIN, 1000)). */
static int64_t floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

/* ---- calendar ---------------------------------------------------------- */

int64_t tm_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floordiv(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void tm_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = floordiv(z, 146097);
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

int tm_weekday(int64_t days) { return (int)floormod(days + 3, 7) + 1; }   /* 1970-01-01: Thu */

/* Monday of ISO week 1 of week-year y. */
static int64_t week1_monday(int64_t y)
{
    int64_t jan4 = tm_days_from_civil(y, 1, 4);
    return jan4 - (tm_weekday(jan4) - 1);
}

static void iso_week(int64_t days, int64_t *wyear, int *week)
{
    int64_t y;
    int m, d;
    tm_civil_from_days(days, &y, &m, &d);
    int64_t wy = y + 1;
    if (days < week1_monday(wy))
        wy = y;
    if (days < week1_monday(wy))
        wy = y - 1;
    *wyear = wy;
    *week = (int)((days - week1_monday(wy)) / 7 + 1);
}

static int weeks_in_year(int64_t y) { return (int)((week1_monday(y + 1) - week1_monday(y)) / 7); }

static bool kind_has_date(value_type k)
{
    return k == VAL_DATE || k == VAL_LOCALDATETIME || k == VAL_DATETIME;
}
static bool kind_has_time(value_type k) { return k != VAL_DATE; }
static bool kind_has_zone(value_type k) { return k == VAL_TIME || k == VAL_DATETIME; }

/* The first and last day of the supported years, as days since 1970. */
static int64_t min_days(void) { return tm_days_from_civil(-MAX_YEAR, 1, 1); }
static int64_t max_days(void) { return tm_days_from_civil(MAX_YEAR, 12, 31); }

static int check_days(int64_t days, temporal_err *e)
{
    if (days < min_days() || days > max_days())
        return fail(e, BAD_VALUE, "date out of range (years %lld to %lld)", -MAX_YEAR, MAX_YEAR);
    return 0;
}

/* Instants (UTC seconds) whose local date in any offset could be in
   range; checked before adding an offset so that the sum cannot overflow.
   check_days decides exactly afterwards. */
static int check_instant(int64_t utc_secs, temporal_err *e)
{
    if (utc_secs < min_days() * 86400 - 86400 || utc_secs > max_days() * 86400 + 2 * 86400)
        return fail(e, BAD_VALUE, "instant out of range (years %lld to %lld)", -MAX_YEAR,
                    MAX_YEAR);
    return 0;
}

/* ---- zones --------------------------------------------------------------- */

/* A POSIX TZ rule date: Mm.w.d, Jn or n, and the time of day in seconds. */
typedef struct tz_ruledate {
    char kind;   /* 'M', 'J', 'n' */
    int m, w, d, n;
    int32_t time;
} tz_ruledate;

typedef struct tz_zone {
    char name[TM_ZONE_MAX];
    size_t ntrans;
    int64_t *trans;       /* UTC seconds */
    int32_t *trans_off;   /* offset in force from trans[i] */
    int32_t first_off;    /* before the first transition */
    bool has_rule, has_dst;
    int32_t std_off, dst_off;   /* seconds east */
    tz_ruledate start, end;
    struct tz_zone *next;
} tz_zone;

static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;
static tz_zone *tz_cache;

static int64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

static int32_t be32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* POSIX offsets are west-positive: "CET-1" is +01:00. */
static const char *posix_num(const char *s, int32_t *secs, bool sign_ok)
{
    int sign = 1;
    if (sign_ok && (*s == '+' || *s == '-'))
        sign = *s++ == '-' ? -1 : 1;
    if (!isdigit((unsigned char)*s))
        return NULL;
    int32_t h = 0, mi = 0, se = 0;
    while (isdigit((unsigned char)*s))
        h = h * 10 + (*s++ - '0');
    if (*s == ':') {
        s++;
        while (isdigit((unsigned char)*s))
            mi = mi * 10 + (*s++ - '0');
        if (*s == ':') {
            s++;
            while (isdigit((unsigned char)*s))
                se = se * 10 + (*s++ - '0');
        }
    }
    *secs = sign * (h * 3600 + mi * 60 + se);
    return s;
}

static const char *posix_name(const char *s)
{
    if (*s == '<') {
        while (*s && *s != '>')
            s++;
        return *s ? s + 1 : NULL;
    }
    const char *b = s;
    while (isalpha((unsigned char)*s))
        s++;
    return s - b >= 3 ? s : NULL;
}

static const char *posix_date(const char *s, tz_ruledate *r)
{
    r->time = 7200;
    if (*s == 'M') {
        r->kind = 'M';
        if (sscanf(s + 1, "%d.%d.%d", &r->m, &r->w, &r->d) != 3)
            return NULL;
        s++;
        while (*s && *s != '/' && *s != ',')
            s++;
    } else if (*s == 'J') {
        r->kind = 'J';
        r->n = atoi(s + 1);
        s++;
        while (isdigit((unsigned char)*s))
            s++;
    } else if (isdigit((unsigned char)*s)) {
        r->kind = 'n';
        r->n = atoi(s);
        while (isdigit((unsigned char)*s))
            s++;
    } else
        return NULL;
    if (*s == '/')
        s = posix_num(s + 1, &r->time, true);
    return s;
}

static bool parse_posix(tz_zone *z, const char *s)
{
    int32_t off;
    if (!(s = posix_name(s)) || !(s = posix_num(s, &off, true)))
        return false;
    z->std_off = -off;
    z->has_rule = true;
    if (!*s)
        return true;
    if (!(s = posix_name(s)))
        return false;
    z->dst_off = z->std_off + 3600;
    if (*s && *s != ',') {
        if (!(s = posix_num(s, &off, true)))
            return false;
        z->dst_off = -off;
    }
    if (*s != ',' || !(s = posix_date(s + 1, &z->start)) || *s != ',' ||
        !(s = posix_date(s + 1, &z->end)))
        return false;
    z->has_dst = true;
    return true;
}

/* Local-standard day of a rule date in year y. */
static int64_t rule_day(const tz_ruledate *r, int64_t y)
{
    if (r->kind == 'J') {
        int64_t d = tm_days_from_civil(y, 1, 1) + r->n - 1;
        if (tm_leap(y) && r->n >= 60)
            d++;
        return d;
    }
    if (r->kind == 'n')
        return tm_days_from_civil(y, 1, 1) + r->n;
    int64_t first = tm_days_from_civil(y, r->m, 1);
    int wd = tm_weekday(first) % 7;   /* 0 = Sunday */
    int64_t d = first + floormod(r->d - wd, 7) + (r->w - 1) * 7;
    while (d >= first + tm_month_days(y, r->m))
        d -= 7;
    return d;
}

static int32_t rule_offset(const tz_zone *z, int64_t utc)
{
    if (!z->has_dst)
        return z->std_off;
    int64_t y;
    int m, d;
    tm_civil_from_days(floordiv(utc + z->std_off, 86400), &y, &m, &d);
    /* Transition instants in UTC: start is given in standard local time,
       end in daylight local time. */
    int64_t s = rule_day(&z->start, y) * 86400 + z->start.time - z->std_off;
    int64_t e = rule_day(&z->end, y) * 86400 + z->end.time - z->dst_off;
    bool dst = s < e ? (utc >= s && utc < e) : !(utc >= e && utc < s);
    return dst ? z->dst_off : z->std_off;
}

static tz_zone *tz_load(const char *name)
{
    if (!*name || name[0] == '/' || strstr(name, "..") || strlen(name) >= TM_ZONE_MAX)
        return NULL;
    const char *dir = getenv("TZDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            unsigned char *nb = realloc(buf, cap);
            if (!nb || cap > (1u << 22)) {
                free(nb ? nb : buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (!r)
            break;
        n += r;
    }
    fclose(f);
    tz_zone *z = calloc(1, sizeof *z);
    if (!z || n < 44 || memcmp(buf, "TZif", 4) != 0)
        goto bad;
    snprintf(z->name, sizeof z->name, "%s", name);
    /* Skip the v1 block, read the v2 (64-bit) one. */
    size_t p = 0;
    int32_t c[6];
    for (int i = 0; i < 6; i++)
        c[i] = be32(buf + 20 + 4 * i);   /* isut, isstd, leap, time, type, char */
    if (buf[4] < '2')
        goto bad;
    p = 44 + (size_t)c[3] * 5 + (size_t)c[4] * 6 + (size_t)c[5] + (size_t)c[2] * 8 +
        (size_t)c[1] + (size_t)c[0];
    if (p + 44 > n || memcmp(buf + p, "TZif", 4) != 0)
        goto bad;
    for (int i = 0; i < 6; i++)
        c[i] = be32(buf + p + 20 + 4 * i);
    p += 44;
    size_t timecnt = (size_t)c[3], typecnt = (size_t)c[4];
    size_t need = timecnt * 9 + typecnt * 6 + (size_t)c[5] + (size_t)c[2] * 12 + (size_t)c[1] +
                  (size_t)c[0];
    if (typecnt == 0 || p + need > n)
        goto bad;
    const unsigned char *tt = buf + p, *ti = tt + timecnt * 8, *types = ti + timecnt;
    z->ntrans = timecnt;
    z->trans = calloc(timecnt ? timecnt : 1, sizeof *z->trans);
    z->trans_off = calloc(timecnt ? timecnt : 1, sizeof *z->trans_off);
    if (!z->trans || !z->trans_off)
        goto bad;
    for (size_t i = 0; i < timecnt; i++) {
        z->trans[i] = be64(tt + 8 * i);
        size_t k = ti[i] < typecnt ? ti[i] : 0;
        z->trans_off[i] = be32(types + 6 * k);
    }
    /* Before the first transition: the first non-DST type (RFC 8536). */
    z->first_off = be32(types);
    for (size_t k = 0; k < typecnt; k++)
        if (!types[6 * k + 4]) {
            z->first_off = be32(types + 6 * k);
            break;
        }
    p += need;
    if (p < n && buf[p] == '\n') {
        char footer[128];
        size_t j = 0;
        for (p++; p < n && buf[p] != '\n' && j + 1 < sizeof footer; p++)
            footer[j++] = (char)buf[p];
        footer[j] = '\0';
        if (j && !parse_posix(z, footer))
            z->has_rule = false;
    }
    free(buf);
    return z;
bad:
    free(buf);
    if (z) {
        free(z->trans);
        free(z->trans_off);
        free(z);
    }
    return NULL;
}

static const tz_zone *tz_find(const char *name)
{
    pthread_mutex_lock(&tz_lock);
    tz_zone *z;
    for (z = tz_cache; z; z = z->next)
        if (strcmp(z->name, name) == 0)
            break;
    if (!z && (z = tz_load(name)) != NULL) {
        z->next = tz_cache;
        tz_cache = z;
    }
    pthread_mutex_unlock(&tz_lock);
    return z;
}

static int32_t tz_offset_at(const tz_zone *z, int64_t utc)
{
    if (z->ntrans == 0 || utc < z->trans[0])
        return z->ntrans == 0 && z->has_rule ? rule_offset(z, utc) : z->first_off;
    if (utc >= z->trans[z->ntrans - 1] && z->has_rule)
        return rule_offset(z, utc);
    size_t lo = 0, hi = z->ntrans;   /* last i with trans[i] <= utc */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (z->trans[mid] <= utc)
            lo = mid;
        else
            hi = mid;
    }
    return z->trans_off[lo];
}

/* Parses "Z", "+01", "+0100", "+01:00", "+01:00:30"; n is the length. */
static bool parse_offset_str(const char *s, size_t n, int32_t *off)
{
    if (n == 1 && (s[0] == 'Z' || s[0] == 'z')) {
        *off = 0;
        return true;
    }
    if (n < 3 || (s[0] != '+' && s[0] != '-'))
        return false;
    int sign = s[0] == '-' ? -1 : 1;
    int parts[3] = {0, 0, 0}, np = 0;
    size_t i = 1;
    while (i < n && np < 3) {
        if (i + 2 > n || !isdigit((unsigned char)s[i]) || !isdigit((unsigned char)s[i + 1]))
            return false;
        parts[np++] = (s[i] - '0') * 10 + (s[i + 1] - '0');
        i += 2;
        if (i < n && s[i] == ':')
            i++;
    }
    if (i != n || parts[0] > 18 || parts[1] > 59 || parts[2] > 59)
        return false;
    int32_t v = parts[0] * 3600 + parts[1] * 60 + parts[2];
    if (v > 18 * 3600)
        return false;
    *off = sign * v;
    return true;
}

/* Sets t->zone and t->offset from a zone string: an offset or a name.
   Named zones are resolved later (temporal_resolve_zone) or by instant. */
static int set_zone(temporal *t, const char *s, size_t n, temporal_err *e)
{
    int32_t off;
    if (parse_offset_str(s, n, &off)) {
        t->offset = off;
        t->zone[0] = '\0';
        return 0;
    }
    if (n == 3 && (strncmp(s, "UTC", 3) == 0 || strncmp(s, "GMT", 3) == 0)) {
        t->offset = 0;
        t->zone[0] = '\0';
        return 0;
    }
    char name[TM_ZONE_MAX];
    if (n == 0 || n >= sizeof name)
        return fail(e, BAD_VALUE, "invalid time zone '%.*s'", (int)(n > 60 ? 60 : n), s);
    memcpy(name, s, n);
    name[n] = '\0';
    if (!tz_find(name))
        return fail(e, BAD_VALUE, "unknown time zone '%s'", name);
    memcpy(t->zone, name, n + 1);
    return 0;
}

int temporal_resolve_zone(temporal *t, temporal_err *e)
{
    if (!t->zone[0])
        return 0;
    const tz_zone *z = tz_find(t->zone);
    if (!z)
        return fail(e, BAD_VALUE, "unknown time zone '%s'", t->zone);
    int64_t local = t->days * 86400 + t->nanos / NS_SEC;
    int32_t before = tz_offset_at(z, local - 86400), after = tz_offset_at(z, local + 86400);
    int32_t cands[2] = {before, after};
    for (int i = 0; i < 2; i++)
        if (tz_offset_at(z, local - cands[i]) == cands[i]) {
            t->offset = cands[i];
            return 0;
        }
    /* A gap: shift forward by its length. */
    int64_t utc = local - before;
    int32_t off = tz_offset_at(z, utc);
    int64_t sub = t->nanos % NS_SEC;
    int64_t l = utc + off;
    t->days = floordiv(l, 86400);
    t->nanos = floormod(l, 86400) * NS_SEC + sub;
    t->offset = off;
    return 0;
}

/* Re-expresses a DATETIME/TIME at the same instant in its (new) zone. */
static int rezone_instant(temporal *t, int64_t utc_secs, int64_t sub, temporal_err *e)
{
    if (check_instant(utc_secs, e) != 0)
        return -1;
    if (t->zone[0]) {
        const tz_zone *z = tz_find(t->zone);
        if (!z)
            return fail(e, BAD_VALUE, "unknown time zone '%s'", t->zone);
        t->offset = tz_offset_at(z, utc_secs);
    }
    int64_t l = utc_secs + t->offset;
    t->days = floordiv(l, 86400);
    t->nanos = floormod(l, 86400) * NS_SEC + sub;
    return 0;
}

static int64_t utc_secs_of(const temporal *t)
{
    return t->days * 86400 + t->nanos / NS_SEC - t->offset;
}

/* In a named zone an offset still valid at t's local time is kept: an
   overlap has two, and an explicit offset or java.time's ZonedDateTime.plus
   picks one. */
static void prefer_offset(temporal *t, int32_t off)
{
    if (!t->zone[0] || t->offset == off)
        return;
    const tz_zone *z = tz_find(t->zone);
    if (z && tz_offset_at(z, utc_secs_of(t) + t->offset - off) == off)
        t->offset = off;
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
        return fail(e, "InvalidArgumentType", "not a temporal value");
    if (kind_has_date(t->kind) && check_days(t->days, e) != 0)
        return -1;
    if (kind_has_time(t->kind) && (t->nanos < 0 || t->nanos >= NS_DAY))
        return fail(e, BAD_VALUE, "time of day out of range");
    if (kind_has_zone(t->kind) && (t->offset < -MAX_OFFSET || t->offset > MAX_OFFSET))
        return fail(e, BAD_VALUE, "zone offset out of range (-18:00 to +18:00)");
    if (t->kind == VAL_DATETIME && !memchr(t->zone, '\0', sizeof t->zone))
        return fail(e, BAD_VALUE, "time zone name too long");
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
        b->secs = utc_secs_of(t);
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
        t->days = floordiv(v->u.i, 86400);
        t->nanos = floormod(v->u.i, 86400) * NS_SEC + cell_aux(v);
        return 0;
    case VAL_DATETIME: {
        size_t len;
        const struct tm_datetime_blob *b = value_blob_bytes(v, &len);
        if (!b || len < sizeof *b + 1)
            return -1;
        t->offset = b->offset;
        snprintf(t->zone, sizeof t->zone, "%s", b->zone);
        int64_t l = b->secs + b->offset;
        t->days = floordiv(l, 86400);
        t->nanos = floormod(l, 86400) * NS_SEC + b->nanos;
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

/* ---- parsing ------------------------------------------------------------ */

typedef struct cur {
    const char *s;
    size_t n, i;
} cur;

static bool at_end(const cur *c) { return c->i >= c->n; }
static char peek(const cur *c) { return c->i < c->n ? c->s[c->i] : '\0'; }
static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

static size_t digits_ahead(const cur *c)
{
    size_t k = 0;
    while (c->i + k < c->n && is_digit(c->s[c->i + k]))
        k++;
    return k;
}

static bool take_digits(cur *c, size_t k, int64_t *v)
{
    if (digits_ahead(c) < k)
        return false;
    int64_t x = 0;
    for (size_t j = 0; j < k; j++)
        x = x * 10 + (c->s[c->i + j] - '0');
    c->i += k;
    *v = x;
    return true;
}

static int make_date(int64_t y, int64_t m, int64_t d, int64_t *days, temporal_err *e)
{
    if (y < -MAX_YEAR || y > MAX_YEAR)
        return fail(e, BAD_VALUE, "year %lld out of range", (long long)y);
    if (m < 1 || m > 12)
        return fail(e, BAD_VALUE, "invalid month %lld", (long long)m);
    if (d < 1 || d > tm_month_days(y, (int)m))
        return fail(e, BAD_VALUE, "invalid day %lld of month %lld", (long long)d, (long long)m);
    *days = tm_days_from_civil(y, (int)m, (int)d);
    return 0;
}

static int make_week_date(int64_t y, int64_t w, int64_t dow, int64_t *days, temporal_err *e)
{
    if (y < -MAX_YEAR || y > MAX_YEAR)
        return fail(e, BAD_VALUE, "year %lld out of range", (long long)y);
    if (w < 1 || w > weeks_in_year(y))
        return fail(e, BAD_VALUE, "invalid week %lld of year %lld", (long long)w, (long long)y);
    if (dow < 1 || dow > 7)
        return fail(e, BAD_VALUE, "invalid day of week %lld", (long long)dow);
    *days = week1_monday(y) + (w - 1) * 7 + dow - 1;
    return 0;
}

static int make_ordinal_date(int64_t y, int64_t od, int64_t *days, temporal_err *e)
{
    if (y < -MAX_YEAR || y > MAX_YEAR)
        return fail(e, BAD_VALUE, "year %lld out of range", (long long)y);
    if (od < 1 || od > (tm_leap(y) ? 366 : 365))
        return fail(e, BAD_VALUE, "invalid ordinal day %lld", (long long)od);
    *days = tm_days_from_civil(y, 1, 1) + od - 1;
    return 0;
}

static int quarter_start_month(int64_t q) { return (int)(q - 1) * 3 + 1; }

static int make_quarter_date(int64_t y, int64_t q, int64_t dq, int64_t *days, temporal_err *e)
{
    if (y < -MAX_YEAR || y > MAX_YEAR)
        return fail(e, BAD_VALUE, "year %lld out of range", (long long)y);
    if (q < 1 || q > 4)
        return fail(e, BAD_VALUE, "invalid quarter %lld", (long long)q);
    int64_t start = tm_days_from_civil(y, quarter_start_month(q), 1);
    int64_t end = q == 4 ? tm_days_from_civil(y + 1, 1, 1)
                         : tm_days_from_civil(y, quarter_start_month(q + 1), 1);
    if (dq < 1 || dq > end - start)
        return fail(e, BAD_VALUE, "invalid day of quarter %lld", (long long)dq);
    *days = start + dq - 1;
    return 0;
}

static int parse_date_part(cur *c, int64_t *days, temporal_err *e)
{
    int64_t y = 0, a = 0, b = 0;
    int sign = 1;
    if (peek(c) == '+' || peek(c) == '-') {
        sign = peek(c) == '-' ? -1 : 1;
        c->i++;
        size_t k = digits_ahead(c);
        if (k < 4 || k > 9 || !take_digits(c, k, &y))
            goto bad;
    } else if (!take_digits(c, 4, &y))
        goto bad;
    y *= sign;
    bool ext = peek(c) == '-';
    if (ext)
        c->i++;
    if (peek(c) == 'W') {
        c->i++;
        int64_t dow = 1;
        if (!take_digits(c, 2, &a))
            goto bad;
        if (ext && peek(c) == '-') {
            c->i++;
            if (!take_digits(c, 1, &dow))
                goto bad;
        } else if (!ext && digits_ahead(c) == 1)
            take_digits(c, 1, &dow);
        return make_week_date(y, a, dow, days, e);
    }
    size_t k = digits_ahead(c);
    if (!ext && k == 0)
        return make_date(y, 1, 1, days, e);
    if (k == 3) {
        take_digits(c, 3, &a);
        return make_ordinal_date(y, a, days, e);
    }
    if (ext) {
        if (k != 2 || !take_digits(c, 2, &a))
            goto bad;
        b = 1;
        if (peek(c) == '-') {
            c->i++;
            if (digits_ahead(c) != 2 || !take_digits(c, 2, &b))
                goto bad;
        }
        return make_date(y, a, b, days, e);
    }
    if (k == 4) {
        take_digits(c, 2, &a);
        take_digits(c, 2, &b);
        return make_date(y, a, b, days, e);
    }
    if (k == 2) {
        take_digits(c, 2, &a);
        return make_date(y, a, 1, days, e);
    }
bad:
    return fail(e, BAD_VALUE, "invalid date '%.*s'", (int)(c->n > 80 ? 80 : c->n), c->s);
}

static int parse_time_part(cur *c, int64_t *nanos, temporal_err *e)
{
    int64_t h, m = 0, s = 0, frac = 0;
    if (!take_digits(c, 2, &h))
        goto bad;
    bool ext = peek(c) == ':';
    if (ext)
        c->i++;
    if (digits_ahead(c) >= 2) {
        take_digits(c, 2, &m);
        bool more = ext ? peek(c) == ':' : digits_ahead(c) >= 2;
        if (more) {
            if (ext)
                c->i++;
            if (!take_digits(c, 2, &s))
                goto bad;
            if (peek(c) == '.' || peek(c) == ',') {
                c->i++;
                size_t k = digits_ahead(c);
                if (k < 1 || k > 9)
                    goto bad;
                take_digits(c, k, &frac);
                for (size_t j = k; j < 9; j++)
                    frac *= 10;
            }
        }
    } else if (ext)
        goto bad;
    if (h > 23 || m > 59 || s > 59)
        return fail(e, BAD_VALUE, "invalid time '%.*s'", (int)(c->n > 80 ? 80 : c->n), c->s);
    *nanos = ((h * 60 + m) * 60 + s) * NS_SEC + frac;
    return 0;
bad:
    return fail(e, BAD_VALUE, "invalid time '%.*s'", (int)(c->n > 80 ? 80 : c->n), c->s);
}

/* Optional offset and [zone] after a time. */
static int parse_zone_part(cur *c, temporal *t, bool *has, temporal_err *e)
{
    *has = false;
    size_t start = c->i;
    char ch = peek(c);
    bool have_off = false;
    int32_t off = 0;
    if (ch == 'Z' || ch == 'z') {
        c->i++;
        have_off = true;
    } else if (ch == '+' || ch == '-') {
        size_t j = c->i + 1;
        while (j < c->n && (is_digit(c->s[j]) || c->s[j] == ':'))
            j++;
        if (!parse_offset_str(c->s + c->i, j - c->i, &off))
            return fail(e, BAD_VALUE, "invalid offset '%.*s'", (int)(j - c->i), c->s + c->i);
        c->i = j;
        have_off = true;
    }
    if (have_off) {
        t->offset = off;
        *has = true;
    }
    if (peek(c) == '[') {
        size_t j = c->i + 1;
        while (j < c->n && c->s[j] != ']')
            j++;
        if (j >= c->n)
            return fail(e, BAD_VALUE, "invalid time zone in '%.*s'", (int)c->n, c->s);
        temporal z = *t;
        if (set_zone(&z, c->s + c->i + 1, j - c->i - 1, e) != 0)
            return -1;
        c->i = j + 1;
        if (z.zone[0]) {
            memcpy(t->zone, z.zone, sizeof t->zone);
            if (!have_off) {
                *has = true;
                t->offset = INT32_MIN;   /* resolve from local time */
            }
        } else if (!have_off)
            t->offset = z.offset;
        *has = true;
    }
    (void)start;
    return 0;
}

int temporal_parse(value_type kind, const char *s, size_t len, temporal *out, temporal_err *e)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    cur c = {s, len, 0};
    bool has_zone = false;
    if (kind == VAL_DATE || kind == VAL_LOCALDATETIME || kind == VAL_DATETIME) {
        if (parse_date_part(&c, &out->days, e) != 0)
            return -1;
        if (kind != VAL_DATE && (peek(&c) == 'T' || peek(&c) == 't')) {
            c.i++;
            if (parse_time_part(&c, &out->nanos, e) != 0)
                return -1;
        } else if (kind == VAL_LOCALDATETIME && !at_end(&c))
            goto bad;
        if (kind == VAL_DATETIME && parse_zone_part(&c, out, &has_zone, e) != 0)
            return -1;
    } else {
        if (parse_time_part(&c, &out->nanos, e) != 0)
            return -1;
        if (kind == VAL_TIME && parse_zone_part(&c, out, &has_zone, e) != 0)
            return -1;
        if (kind == VAL_TIME && out->zone[0]) {
            /* A time has an offset only: today's offset of the zone. */
            temporal now;
            if (temporal_now(VAL_DATETIME, out->zone, strlen(out->zone), &now, e) != 0)
                return -1;
            out->offset = now.offset;
            out->zone[0] = '\0';
        }
    }
    if (!at_end(&c))
        goto bad;
    if (kind == VAL_DATETIME && out->zone[0]) {
        int32_t given = out->offset;
        if (temporal_resolve_zone(out, e) != 0)
            return -1;
        if (given != INT32_MIN)
            prefer_offset(out, given);
    }
    return 0;
bad:
    return fail(e, BAD_VALUE, "invalid %s '%.*s'",
                kind == VAL_DATE            ? "date"
                : kind == VAL_LOCALTIME     ? "local time"
                : kind == VAL_TIME          ? "time"
                : kind == VAL_LOCALDATETIME ? "local date time"
                                            : "date time",
                (int)(len > 80 ? 80 : len), s);
}

/* ---- durations ------------------------------------------------------------ */

static int normalize_duration(int64_t months, int64_t days, int64_t secs, int64_t nanos,
                              duration *out, temporal_err *e)
{
    if (add_ovf(secs, floordiv(nanos, NS_SEC), &secs))
        return duration_range(e);
    nanos = floormod(nanos, NS_SEC);
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
        return duration_range(e);
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
        return duration_range(e);
    return normalize_duration(mi, di, si, (int64_t)nanos, out, e);
}

/* Accumulates integer parts exactly and fractional ones as doubles. */
typedef struct dacc {
    int64_t mi, di, si, ni;
    double mf, df, sf, nf;
    bool frac;
} dacc;

/* Adds v units of scale to component which (0 months, 1 days, 2 seconds,
   3 nanos), exactly. */
static int dacc_int(dacc *a, int which, int64_t v, int64_t scale, temporal_err *e)
{
    int64_t *ip[] = {&a->mi, &a->di, &a->si, &a->ni};
    int64_t w;
    if (which == 3) {
        /* Sub-second units carry their whole seconds over first, so that
           {milliseconds: 2^63 - 1} (some 292 million years) is a duration,
           not a nanosecond count past 64 bits. */
        int64_t per_sec = NS_SEC / scale;
        if (add_ovf(a->si, v / per_sec, &a->si))
            return duration_range(e);
        v %= per_sec;
    }
    if (mul_ovf(v, scale, &w) || add_ovf(*ip[which], w, ip[which]))
        return duration_range(e);
    return 0;
}

/* Adds a number of units: its whole part exactly, its fraction to the
   component's fractional sum. */
static int dacc_add(dacc *a, int which, double v, int64_t scale, temporal_err *e)
{
    if (too_big(v))
        return duration_range(e);
    double whole = trunc(v);
    if (dacc_int(a, which, (int64_t)whole, scale, e) != 0)
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
static int dacc_seconds(dacc *a, double v, temporal_err *e)
{
    if (too_big(v))
        return duration_range(e);
    double whole = trunc(v);
    if (dacc_int(a, 2, (int64_t)whole, 1, e) != 0)
        return -1;
    return dacc_int(a, 3, (int64_t)llround((v - whole) * 1e9), 1, e);
}

static int dacc_finish(const dacc *a, duration *out, temporal_err *e)
{
    if (!a->frac)
        return normalize_duration(a->mi, a->di, a->si, a->ni, out, e);
    duration f = { 0 };
    if (duration_from_parts(a->mf, a->df, a->sf, a->nf, &f, e) != 0)
        return -1;
    int64_t mo, d, s, ns;
    if (add_ovf(a->mi, f.months, &mo) || add_ovf(a->di, f.days, &d) ||
        add_ovf(a->si, f.seconds, &s) || add_ovf(a->ni, f.nanos, &ns))
        return duration_range(e);
    return normalize_duration(mo, d, s, ns, out, e);
}

/* A number in a duration's text: *v, and when it has no fraction also
   *whole, exact (*exact false when it has a fraction or does not fit 64
   bits). */
static bool parse_number(cur *c, double *v, int64_t *whole, bool *exact)
{
    size_t st = c->i;
    int sign = 1;
    if (peek(c) == '-' || peek(c) == '+')
        sign = c->s[c->i++] == '-' ? -1 : 1;
    size_t k = digits_ahead(c);
    *exact = true;
    *whole = 0;
    for (size_t j = 0; j < k; j++)
        if (mul_ovf(*whole, 10, whole) || add_ovf(*whole, sign * (c->s[c->i + j] - '0'), whole))
            *exact = false;
    c->i += k;
    if (peek(c) == '.' || peek(c) == ',') {
        c->i++;
        size_t f = digits_ahead(c);
        if (!f)
            return false;
        c->i += f;
        *exact = false;
    }
    if (!k)
        return false;
    char buf[64];
    size_t n = c->i - st;
    if (n >= sizeof buf)
        return false;
    memcpy(buf, c->s + st, n);
    buf[n] = '\0';
    for (size_t j = 0; j < n; j++)
        if (buf[j] == ',')
            buf[j] = '.';
    *v = strtod(buf, NULL);
    return true;
}

int duration_parse(const char *s, size_t len, duration *out, temporal_err *e)
{
    cur c = {s, len, 0};
    int sign = 1;
    if (peek(&c) == '-' || peek(&c) == '+') {
        sign = peek(&c) == '-' ? -1 : 1;
        c.i++;
    }
    if (peek(&c) != 'P' && peek(&c) != 'p')
        goto bad;
    c.i++;
    dacc a = {0};
    /* Alternative form: PYYYY-MM-DDThh:mm:ss */
    if (digits_ahead(&c) == 4 && c.i + 4 < c.n && c.s[c.i + 4] == '-') {
        int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0, fr = 0;
        take_digits(&c, 4, &y);
        c.i++;
        if (!take_digits(&c, 2, &mo) || peek(&c) != '-')
            goto bad;
        c.i++;
        if (!take_digits(&c, 2, &d))
            goto bad;
        if (peek(&c) == 'T') {
            c.i++;
            if (!take_digits(&c, 2, &h) || peek(&c) != ':')
                goto bad;
            c.i++;
            if (!take_digits(&c, 2, &mi))
                goto bad;
            if (peek(&c) == ':') {
                c.i++;
                if (!take_digits(&c, 2, &se))
                    goto bad;
                if (peek(&c) == '.') {
                    c.i++;
                    size_t k = digits_ahead(&c);
                    if (!k || k > 9)
                        goto bad;
                    take_digits(&c, k, &fr);
                    for (size_t j = k; j < 9; j++)
                        fr *= 10;
                }
            }
        }
        if (!at_end(&c))
            goto bad;
        return normalize_duration(sign * (y * 12 + mo), sign * d, sign * (h * 3600 + mi * 60 + se),
                                  sign * fr, out, e);
    }
    bool time = false, any = false;
    int last = -1;   /* order of designators */
    static const char date_des[] = "YMWD", time_des[] = "HMS";
    while (!at_end(&c)) {
        if (peek(&c) == 'T' || peek(&c) == 't') {
            if (time)
                goto bad;
            time = true;
            last = -1;
            c.i++;
            if (at_end(&c))
                goto bad;
            continue;
        }
        double v;
        int64_t whole;
        bool exact;
        if (!parse_number(&c, &v, &whole, &exact))
            goto bad;
        char d = (char)toupper((unsigned char)peek(&c));
        c.i++;
        const char *des = time ? time_des : date_des;
        const char *p = d ? strchr(des, d) : NULL;
        if (!p || (int)(p - des) <= last)
            goto bad;
        last = (int)(p - des);
        v *= sign;
        if (sign < 0 && whole == INT64_MIN)
            exact = false;   /* -(-2^63) does not fit: the double path refuses it */
        else if (sign < 0)
            whole = -whole;
        any = true;
        static const struct { char des; bool time; int which; int64_t scale; } units[] = {
            {'Y', false, 0, 12}, {'M', false, 0, 1}, {'W', false, 1, 7}, {'D', false, 1, 1},
            {'H', true, 2, 3600}, {'M', true, 2, 60}, {'S', true, 2, 1},
        };
        for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
            if (units[u].des != d || units[u].time != time)
                continue;
            /* Whole numbers exactly (a double would round past 2^53). */
            int rc = exact ? dacc_int(&a, units[u].which, whole, units[u].scale, e)
                     : d == 'S' && time ? dacc_seconds(&a, v, e)
                                        : dacc_add(&a, units[u].which, v, units[u].scale, e);
            if (rc != 0)
                return -1;
        }
    }
    if (!any)
        goto bad;
    return dacc_finish(&a, out, e);
bad:
    return fail(e, BAD_VALUE, "invalid duration '%.*s'", (int)(len > 80 ? 80 : len), s);
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
    return fail(e, BAD_VALUE, "component %s must be an integer", k);
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
            return fail(e, BAD_VALUE, "unknown component '%.*s'", (int)kl, k);
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
        return fail(e, "InvalidArgumentType", "component %s must be a temporal value", k);
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
        return fail(e, BAD_VALUE, "year must be specified");
    int64_t by = 0, bwy = 0;
    int bm = 1, bd = 1, bw = 1;
    if (has_base) {
        tm_civil_from_days(base->days, &by, &bm, &bd);
        iso_week(base->days, &bwy, &bw);
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
        return make_week_date(y, w, dow, days, e);
    }
    if (rod) {
        if (has_base && !ry)
            y = by;
        return make_ordinal_date(y, od, days, e);
    }
    if (rq || rdq) {
        if (has_base) {
            if (!ry)
                y = by;
            int64_t bq = (bm - 1) / 3 + 1;
            if (!rq)
                q = bq;
            if (!rdq)
                dq = base->days - tm_days_from_civil(by, quarter_start_month(bq), 1) + 1;
        }
        return make_quarter_date(y, q, dq, days, e);
    }
    if (has_base) {
        if (!ry)
            y = by;
        if (!rm)
            mo = bm;
        if (!rd)
            d = bd;
    } else if (rd && !rm)
        return fail(e, BAD_VALUE, "day requires month");
    return make_date(y, mo, d, days, e);
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
        return fail(e, BAD_VALUE, "a smaller time unit needs the larger ones");
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59)
        return fail(e, BAD_VALUE, "invalid time component");
    if (rms || rus || rns) {
        if (rms && (ms < 0 || ms > 999))
            return fail(e, BAD_VALUE, "invalid millisecond %lld", (long long)ms);
        if (rus && (us < 0 || us > (rms ? 999 : 999999)))
            return fail(e, BAD_VALUE, "invalid microsecond %lld", (long long)us);
        if (rns && (ns < 0 || ns > (rus ? 999 : rms ? 999999 : 999999999)))
            return fail(e, BAD_VALUE, "invalid nanosecond %lld", (long long)ns);
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
        return fail(e, "InvalidArgumentType", "timezone must be a string");
    *has = true;
    return set_zone(t, s, n, e);
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
    int64_t utc = utc_secs_of(out), sub = out->nanos % NS_SEC;
    out->offset = z->offset;
    memcpy(out->zone, z->zone, sizeof out->zone);
    return rezone_instant(out, utc, sub, e);
}

int temporal_from_map(value_type kind, const value *map, temporal *out, temporal_err *e)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (value_kind(map) != VAL_MAP)
        return fail(e, "InvalidArgumentType", "expected a map");
    if (check_keys(kind, map, e) != 0)
        return -1;

    if (kind == VAL_DATETIME && (mget(map, "epochSeconds") || mget(map, "epochMillis"))) {
        int64_t secs = 0, ms = 0, ns = 0;
        int r1 = mint(map, "epochSeconds", &secs, e), r2 = mint(map, "epochMillis", &ms, e);
        if (r1 < 0 || r2 < 0 || mint(map, "nanosecond", &ns, e) < 0)
            return -1;
        int64_t sub = 0;
        if (r2 && add_ovf(secs, floordiv(ms, 1000), &secs))
            return check_instant(INT64_MAX, e);
        if (r2)
            sub = floormod(ms, 1000) * 1000000;
        if (add_ovf(sub, ns, &sub) || add_ovf(secs, floordiv(sub, NS_SEC), &secs))
            return check_instant(INT64_MAX, e);
        sub = floormod(sub, NS_SEC);
        bool hz;
        if (zone_value(map, out, &hz, e) != 0)
            return -1;
        return rezone_instant(out, secs, sub, e);
    }

    temporal dt, d, t;
    int has_dt = 0, has_d = 0, has_t = 0;
    if (kind_has_date(kind) && kind != VAL_DATE && (has_dt = mbase(map, "datetime", &dt, e)) < 0)
        return -1;
    if (kind_has_date(kind) && (has_d = mbase(map, "date", &d, e)) < 0)
        return -1;
    if (kind_has_time(kind) && (has_t = mbase(map, "time", &t, e)) < 0)
        return -1;
    if (has_dt) {
        if (!kind_has_date(dt.kind))
            return fail(e, BAD_VALUE, "datetime: needs a value with a date");
        if (!has_d)
            d = dt, has_d = 1;
        if (!has_t)
            t = dt, has_t = 1;
    }
    if (has_d && !kind_has_date(d.kind))
        return fail(e, BAD_VALUE, "date: needs a value with a date");
    if (has_t && !kind_has_time(t.kind))
        return fail(e, BAD_VALUE, "time: needs a value with a time");
    /* Without a time base, a temporal given as date: can supply a time
       (datetime({date: dt}) keeps dt's date only: Neo4j's rule). */

    bool base_zone = has_t && kind_has_zone(t.kind);
    bool has_tz = false;
    temporal zt = *out;
    if (kind_has_zone(kind) && zone_value(map, &zt, &has_tz, e) != 0)
        return -1;

    if (kind_has_date(kind) && date_from_map(map, &d, has_d, &out->days, e) != 0)
        return -1;
    if (kind_has_time(kind)) {
        temporal tb = has_t ? t : (temporal){0};
        if (kind == VAL_TIME && has_t && has_tz && base_zone) {
            /* Same instant, new zone: convert the base time first. */
            temporal conv = zt;
            int64_t base_days = kind_has_date(t.kind) ? t.days : out->days;
            int64_t utc = base_days * 86400 + t.nanos / NS_SEC - t.offset;
            if (!conv.zone[0])
                conv.nanos = floormod(t.nanos / NS_SEC - t.offset + conv.offset, 86400) * NS_SEC +
                             t.nanos % NS_SEC;
            else if (rezone_instant(&conv, utc, t.nanos % NS_SEC, e) != 0)
                return -1;
            tb.nanos = conv.nanos;
        }
        if (time_from_map(map, &tb, has_t, &out->nanos, e) != 0)
            return -1;
    }
    if (kind == VAL_DATETIME && has_tz && base_zone)
        return move_to_zone(out, &t, &zt, e);
    if (kind_has_zone(kind)) {
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
        return fail(e, "InvalidArgumentType", "duration component %s must be a number", k);
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
        return fail(e, "InvalidArgumentType", "expected a map");
    size_t n = value_map_len(map);
    for (size_t i = 0; i < n; i++) {
        size_t kl;
        const char *k = value_str(&value_map_keys(map)[i], &kl);
        bool ok = false;
        for (size_t j = 0; j < sizeof comps / sizeof *comps; j++)
            if (strlen(comps[j].k) == kl && memcmp(comps[j].k, k, kl) == 0)
                ok = true;
        if (!ok)
            return fail(e, BAD_VALUE, "unknown duration component '%.*s'", (int)kl, k);
    }
    dacc a = {0};
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
            rc = dacc_int(&a, comps[j].which, v->u.i, comps[j].scale, e);
        else if (comps[j].which == 2 && comps[j].scale == 1)
            rc = dacc_seconds(&a, f, e);
        else
            rc = dacc_add(&a, comps[j].which, f, comps[j].scale, e);
        if (rc != 0)
            return -1;
    }
    return dacc_finish(&a, out, e);
}

/* ---- conversion, now ----------------------------------------------------------- */

int temporal_convert(value_type kind, const temporal *in, temporal *out, temporal_err *e)
{
    *out = *in;
    out->kind = kind;
    if (kind_has_date(kind) && !kind_has_date(in->kind))
        return fail(e, BAD_VALUE, "cannot convert a time to a value with a date");
    if (kind_has_time(kind) && !kind_has_time(in->kind)) {
        if (kind == VAL_LOCALDATETIME || kind == VAL_DATETIME)
            out->nanos = 0;
        else
            return fail(e, BAD_VALUE, "cannot convert a date to a time");
    }
    if (!kind_has_date(kind))
        out->days = 0;
    if (!kind_has_time(kind))
        out->nanos = 0;
    if (kind_has_zone(kind) && !kind_has_zone(in->kind)) {
        out->offset = 0;
        out->zone[0] = '\0';
    }
    if (!kind_has_zone(kind)) {
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
    if (zone && zlen && set_zone(&t, zone, zlen, e) != 0)
        return -1;
    if (rezone_instant(&t, sec, nsec, e) != 0)
        return -1;
    return temporal_convert(kind, &t, out, e);
}

int temporal_now(value_type kind, const char *zone, size_t zlen, temporal *out, temporal_err *e)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return temporal_at(kind, (int64_t)ts.tv_sec, (int64_t)ts.tv_nsec, zone, zlen, out, e);
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

static int fmt_offset(int32_t off, char *b, size_t cap)
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
    if (kind_has_date(t->kind))
        n += fmt_date(t->days, tmp + n, sizeof tmp - (size_t)n);
    if (t->kind == VAL_LOCALDATETIME || t->kind == VAL_DATETIME)
        tmp[n++] = 'T';
    if (kind_has_time(t->kind))
        n += fmt_time(t->nanos, tmp + n, sizeof tmp - (size_t)n);
    if (kind_has_zone(t->kind))
        n += fmt_offset(t->offset, tmp + n, sizeof tmp - (size_t)n);
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

/* ---- accessors ------------------------------------------------------------------ */

static bool keq(const char *k, size_t n, const char *s) { return strlen(s) == n && memcmp(k, s, n) == 0; }

int temporal_component(mem_ctx *m, const temporal *t, const char *k, size_t n, value *out)
{
    *out = value_null();
    if (kind_has_date(t->kind)) {
        int64_t y, wy;
        int mo, d, w;
        tm_civil_from_days(t->days, &y, &mo, &d);
        iso_week(t->days, &wy, &w);
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
        if (keq(k, n, "dayOfQuarter"))
            return *out = value_int(t->days - tm_days_from_civil(y, quarter_start_month(q), 1) + 1),
                   0;
    }
    if (kind_has_time(t->kind)) {
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
    if (kind_has_zone(t->kind)) {
        char b[TM_ZONE_MAX + 8];
        if (keq(k, n, "timezone") || keq(k, n, "offset")) {
            if (keq(k, n, "timezone") && t->zone[0])
                snprintf(b, sizeof b, "%s", t->zone);
            else {
                fmt_offset(t->offset, b, sizeof b);
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
        int64_t secs = utc_secs_of(t);
        if (keq(k, n, "epochSeconds"))
            return *out = value_int(secs), 0;
        int64_t ms;
        if (keq(k, n, "epochMillis"))
            return mul_ovf(secs, 1000, &ms) ? -2
                                              : (*out = value_int(ms + t->nanos % NS_SEC / 1000000), 0);
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
        if (mul_ovf(s, totals[i].unit, &scaled) ||
            add_ovf(scaled, ns / (NS_SEC / totals[i].unit), &total))
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
        int c = cmp64(utc_secs_of(a), utc_secs_of(b));
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

/* ---- arithmetic ------------------------------------------------------------------ */

static int plus_months(int64_t days, int64_t months, int64_t *out, temporal_err *e)
{
    int64_t y;
    int m, d;
    tm_civil_from_days(days, &y, &m, &d);
    int64_t total;
    if (add_ovf(y * 12 + (m - 1), months, &total))
        return check_days(INT64_MAX, e);
    int64_t ny = floordiv(total, 12);
    int nm = (int)floormod(total, 12) + 1;
    /* Far enough for duration.between's steps past the last year, near
       enough that the calendar arithmetic below cannot overflow; the
       caller checks the exact range. */
    if (ny < -2 * MAX_YEAR || ny > 2 * MAX_YEAR)
        return check_days(INT64_MAX, e);
    int md = tm_month_days(ny, nm);
    *out = tm_days_from_civil(ny, nm, d > md ? md : d);
    return 0;
}

static int negate(const duration *d, duration *out, temporal_err *e)
{
    if (d->months == INT64_MIN || d->days == INT64_MIN || d->seconds == INT64_MIN)
        return duration_range(e);
    return normalize_duration(-d->months, -d->days, -d->seconds, -(int64_t)d->nanos, out, e);
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
    if (kind_has_date(t->kind)) {
        if (d.months && plus_months(out->days, d.months, &out->days, e) != 0)
            return -1;
        if (add_ovf(out->days, d.days, &out->days))
            return check_days(INT64_MAX, e);
    }
    if (t->kind == VAL_DATE) {
        /* whole days of the seconds (Neo4j) */
        if (add_ovf(out->days, d.seconds / 86400, &out->days))
            return check_days(INT64_MAX, e);
        return checked ? check_days(out->days, e) : 0;
    }
    /* Time of day: seconds and nanos, overflowing into days when there is
       a date and wrapping otherwise. */
    int64_t secs = d.seconds;
    int64_t ns = out->nanos + (secs % 86400) * NS_SEC + d.nanos;
    int64_t carry = secs / 86400 + floordiv(ns, NS_DAY);
    out->nanos = floormod(ns, NS_DAY);
    if (kind_has_date(t->kind) && add_ovf(out->days, carry, &out->days))
        return check_days(INT64_MAX, e);
    if (kind_has_date(t->kind) && checked && check_days(out->days, e) != 0)
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
    if (add_ovf(a->months, nb.months, &mo) || add_ovf(a->days, nb.days, &d) ||
        add_ovf(a->seconds, nb.seconds, &s))
        return duration_range(e);
    return normalize_duration(mo, d, s, (int64_t)a->nanos + nb.nanos, out, e);
}

int duration_scale(const duration *a, double f, bool divide, duration *out, temporal_err *e)
{
    if (divide) {
        if (f == 0)
            return fail(e, BAD_VALUE, "division of a duration by zero");
        f = 1.0 / f;
    }
    if (f == trunc(f) && fabs(f) < 9e15) {
        int64_t k = (int64_t)f, mo, d, s, ns;
        if (!mul_ovf(a->months, k, &mo) && !mul_ovf(a->days, k, &d) &&
            !mul_ovf(a->seconds, k, &s) && !mul_ovf((int64_t)a->nanos, k, &ns))
            return normalize_duration(mo, d, s, ns, out, e);
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
    t->kind = kind_has_date(t->kind) ? VAL_DATETIME : VAL_TIME;
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
    if (kind_has_date(a->kind) && !kind_has_date(b->kind))
        attach_date(b, a->days);
    else if (kind_has_date(b->kind) && !kind_has_date(a->kind))
        attach_date(a, b->days);
    if (kind_has_zone(a->kind) && !kind_has_zone(b->kind))
        return attach_zone(b, a, e);
    if (kind_has_zone(b->kind) && !kind_has_zone(a->kind))
        return attach_zone(a, b, e);
    return 0;
}

/* b - a of two aligned values: instants when zoned, local fields when not. */
static void exact_diff(const temporal *a, const temporal *b, int64_t *secs, int64_t *nanos)
{
    *secs = utc_secs_of(b) - utc_secs_of(a);
    *nanos = b->nanos % NS_SEC - a->nanos % NS_SEC;
}

/* Whole months and days from a to b, both aligned and with a date. */
static int calendar_until(const temporal *a, const temporal *b0, int64_t *months, int64_t *days,
                          temporal_err *e)
{
    temporal b = *b0;
    if (b.kind == VAL_DATETIME) {   /* b as seen in a's zone */
        int64_t utc = utc_secs_of(&b), sub = b.nanos % NS_SEC;
        b.offset = a->offset;
        memcpy(b.zone, a->zone, sizeof b.zone);
        if (rezone_instant(&b, utc, sub, e) != 0)
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
    if (kind_has_date(a.kind) && calendar_until(&a, &b, months, days, e) != 0)
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
        prefer_offset(&r, a->offset);
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
    case TM_IN_MONTHS: return normalize_duration(months, 0, 0, 0, out, e);
    case TM_IN_DAYS: return normalize_duration(0, days, 0, 0, out, e);
    case TM_IN_SECONDS: return normalize_duration(0, 0, secs, nanos, out, e);
    case TM_BETWEEN: break;
    }
    if (!kind_has_date(a0->kind) || !kind_has_date(b0->kind))
        return normalize_duration(0, 0, secs, nanos, out, e);
    temporal a = *a0;
    if (calendar_step(&a, months, 0, e) != 0 ||
        until(&a, b0, &unused, &days, &secs, &nanos, e) != 0 ||
        calendar_step(&a, 0, days, e) != 0 ||
        until(&a, b0, &unused, &unused, &secs, &nanos, e) != 0)
        return -1;
    return normalize_duration(months, days, secs, nanos, out, e);
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
        return fail(e, BAD_VALUE, "unknown truncation unit '%.*s'", (int)(ulen > 40 ? 40 : ulen),
                    unit);
    if (kind_has_date(kind) && !kind_has_date(t->kind))
        return fail(e, BAD_VALUE, "cannot truncate a time to a value with a date");
    if (!kind_has_time(kind) && u >= 9)
        return fail(e, BAD_VALUE, "cannot truncate a date to unit %s", units[u]);
    if (!kind_has_date(kind) && u < 8)
        return fail(e, BAD_VALUE, "cannot truncate a time to unit %s", units[u]);
    temporal r = *t;
    r.kind = kind;
    if (!kind_has_time(t->kind))
        r.nanos = 0;
    if (!kind_has_zone(t->kind)) {
        r.offset = 0;
        r.zone[0] = '\0';
    }
    if (kind_has_date(kind)) {
        int64_t y, wy;
        int m, d, w;
        tm_civil_from_days(r.days, &y, &m, &d);
        iso_week(r.days, &wy, &w);
        (void)w;
        switch (u) {
        case 0: r.days = tm_days_from_civil(floordiv(y, 1000) * 1000, 1, 1); break;
        case 1: r.days = tm_days_from_civil(floordiv(y, 100) * 100, 1, 1); break;
        case 2: r.days = tm_days_from_civil(floordiv(y, 10) * 10, 1, 1); break;
        case 3: r.days = tm_days_from_civil(y, 1, 1); break;
        case 4: r.days = week1_monday(wy); break;
        case 5: r.days = tm_days_from_civil(y, quarter_start_month((m - 1) / 3 + 1), 1); break;
        case 6: r.days = tm_days_from_civil(y, m, 1); break;
        case 7: r.days -= tm_weekday(r.days) - 1; break;
        default: break;
        }
    } else
        r.days = 0;
    if (kind_has_time(kind)) {
        static const int64_t q[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 3600 * NS_SEC, 60 * NS_SEC,
                                    NS_SEC, 1000000, 1000};
        r.nanos = u < 9 ? 0 : r.nanos - r.nanos % q[u];
    } else
        r.nanos = 0;
    if (ov && value_kind(ov) == VAL_MAP && value_map_len(ov) > 0) {
        if (check_keys(kind, ov, e) != 0)
            return -1;
        if (kind_has_date(kind) && date_from_map(ov, &r, true, &r.days, e) != 0)
            return -1;
        /* The fraction the truncation kept (digits above the unit) stays
           under smaller sub-second fields from the map: truncating
           12:31:14.645876 to the millisecond with {nanosecond: 2} gives
           12:31:14.645000002. */
        int64_t kept = r.nanos % NS_SEC;
        bool finer_only = (u == 12 && !mget(ov, "millisecond")) ||
                          (u == 13 && !mget(ov, "millisecond") && !mget(ov, "microsecond"));
        if (kind_has_time(kind) && time_from_map(ov, &r, true, &r.nanos, e) != 0)
            return -1;
        if (kind_has_time(kind) && finer_only &&
            (mget(ov, "microsecond") || mget(ov, "nanosecond")) &&
            r.nanos % NS_SEC + kept < NS_SEC)
            r.nanos += kept;
        bool hz = false;
        if (kind_has_zone(kind) && zone_value(ov, &r, &hz, e) != 0)
            return -1;
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
    if (!kind_has_zone(kind)) {
        r.offset = 0;
        r.zone[0] = '\0';
    }
    *out = r;
    return 0;
}
