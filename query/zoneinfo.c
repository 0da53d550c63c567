/*
 * zoneinfo — reading TZif files (RFC 8536) and their POSIX TZ rules into
 * an in-memory table of transitions per zone.  See zoneinfo.h.
 *
 * Invariants:
 *   1. A zone in the cache is complete and never changes: tz_load builds
 *      it in full before tz_find links it in under tz_lock, so readers use
 *      it without the lock.
 *   2. The cache only grows (zones are few, small and named by the
 *      queries' authors); it is freed with the process.
 *   3. Only the 64-bit (version 2+) block of a file is read; a version 1
 *      file, or one whose counts overrun its length, is no zone at all.
 *      A file is read up to 4 MiB.
 *   4. A footer rule that cannot be parsed is ignored: the last
 *      transition's offset then holds for every later instant.
 */
#include "query/zoneinfo.h"

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/temporal.h"

/* A POSIX TZ rule date: Mm.w.d, Jn or n, and the time of day in seconds. */
typedef struct tz_ruledate {
    char kind;   /* 'M', 'J', 'n' */
    int m, w, d, n;
    int32_t time;
} tz_ruledate;

struct tz_zone {
    char name[TM_ZONE_MAX];
    size_t ntrans;
    int64_t *trans;       /* UTC seconds */
    int32_t *trans_off;   /* offset in force from trans[i] */
    int32_t first_off;    /* before the first transition */
    bool has_rule, has_dst;
    int32_t std_off, dst_off;   /* seconds east */
    tz_ruledate start, end;
    struct tz_zone *next;
};

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
    int64_t d = first + tm_floormod(r->d - wd, 7) + (r->w - 1) * 7;
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
    tm_civil_from_days(tm_floordiv(utc + z->std_off, 86400), &y, &m, &d);
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

const tz_zone *tz_find(const char *name)
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

int32_t tz_offset_at(const tz_zone *z, int64_t utc)
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
