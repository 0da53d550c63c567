/*
 * temporal_zone — temporals in time zones.  See temporal_zone.h.
 *
 * Invariants:
 *   1. A zone name that enters from Cypher text or a map is checked
 *      against the database there (temporal_set_zone), one from the C API
 *      when it is resolved (query/api_temporal_value.c).  A name read
 *      from a save file written where the database had it is looked up
 *      only when a computation needs it, and an unknown one is then an
 *      error naming it, never a guess.
 *   2. A named zone's offset comes from the zone itself: from the local
 *      fields (temporal_resolve_zone, temporal_prefer_offset) or from the
 *      instant (temporal_rezone).
 *   3. An instant given from outside is range-checked
 *      (temporal_check_instant) before an offset is added to it, so the
 *      sum cannot overflow; local fields are within the years already.
 */
#include "query/temporal_zone.h"

#include <ctype.h>
#include <string.h>

#include "query/zoneinfo.h"

#define NS_SEC TM_NANOS_PER_SEC

bool temporal_parse_offset(const char *s, size_t n, int32_t *off)
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

int temporal_set_zone(temporal *t, const char *s, size_t n, temporal_err *e)
{
    int32_t off;
    if (temporal_parse_offset(s, n, &off)) {
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
        return temporal_fail(e, TM_BAD_VALUE, "invalid time zone '%.*s'", (int)(n > 60 ? 60 : n),
                             s);
    memcpy(name, s, n);
    name[n] = '\0';
    if (!tz_find(name))
        return temporal_fail(e, TM_BAD_VALUE, "unknown time zone '%s'", name);
    memcpy(t->zone, name, n + 1);
    return 0;
}

int temporal_resolve_zone(temporal *t, temporal_err *e)
{
    if (!t->zone[0])
        return 0;
    const tz_zone *z = tz_find(t->zone);
    if (!z)
        return temporal_fail(e, TM_BAD_VALUE, "unknown time zone '%s'", t->zone);
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
    t->days = tm_floordiv(l, 86400);
    t->nanos = tm_floormod(l, 86400) * NS_SEC + sub;
    t->offset = off;
    return 0;
}

int temporal_rezone(temporal *t, int64_t utc_secs, int64_t sub, temporal_err *e)
{
    if (temporal_check_instant(utc_secs, e) != 0)
        return -1;
    if (t->zone[0]) {
        const tz_zone *z = tz_find(t->zone);
        if (!z)
            return temporal_fail(e, TM_BAD_VALUE, "unknown time zone '%s'", t->zone);
        t->offset = tz_offset_at(z, utc_secs);
    }
    int64_t l = utc_secs + t->offset;
    t->days = tm_floordiv(l, 86400);
    t->nanos = tm_floormod(l, 86400) * NS_SEC + sub;
    return 0;
}

void temporal_prefer_offset(temporal *t, int32_t off)
{
    if (!t->zone[0] || t->offset == off)
        return;
    const tz_zone *z = tz_find(t->zone);
    if (z && tz_offset_at(z, temporal_utc_secs(t) + t->offset - off) == off)
        t->offset = off;
}

