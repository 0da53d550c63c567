/*
 * temporal_parse — ISO 8601 text into temporals and durations.  See
 * temporal_parse.h.  Each parser reads its whole text or refuses it: text
 * left over after a complete value is an error, never ignored.
 *
 * Fields read here are checked by temporal_build's constructors (a month
 * 1..12, a day within its month, ...); a zone in brackets must be one the
 * zone database knows (temporal_set_zone).
 */
#include "query/temporal_parse.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "query/temporal_build.h"
#include "query/temporal_zone.h"

#define NS_SEC TM_NANOS_PER_SEC

/* A cursor over the text: s[i..n). */
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

/* ---- temporals ------------------------------------------------------------ */

/* date := year ( '-'? week | '-'? ordinal | '-' month ( '-' day )?
 *               | month day? )?
 * year := [+-] digit{4,9} | digit{4}     week := 'W' ww ( '-'? d )?
 * ordinal := ddd                          month, day := dd
 * (week's day of week takes '-' only in the extended form, after '-'.) */
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
        return tm_date_from_week(y, a, dow, days, e);
    }
    size_t k = digits_ahead(c);
    if (!ext && k == 0)
        return tm_date_from_ymd(y, 1, 1, days, e);
    if (k == 3) {
        take_digits(c, 3, &a);
        return tm_date_from_ordinal(y, a, days, e);
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
        return tm_date_from_ymd(y, a, b, days, e);
    }
    if (k == 4) {
        take_digits(c, 2, &a);
        take_digits(c, 2, &b);
        return tm_date_from_ymd(y, a, b, days, e);
    }
    if (k == 2) {
        take_digits(c, 2, &a);
        return tm_date_from_ymd(y, a, 1, days, e);
    }
bad:
    return temporal_fail(e, TM_BAD_VALUE, "invalid date '%.*s'", (int)(c->n > 80 ? 80 : c->n),
                         c->s);
}

/* time := hh ( ':'? mm ( ':'? ss ( [.,] digit{1,9} )? )? )?
 * (':' either everywhere or nowhere.) */
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
        return temporal_fail(e, TM_BAD_VALUE, "invalid time '%.*s'", (int)(c->n > 80 ? 80 : c->n),
                             c->s);
    *nanos = ((h * 60 + m) * 60 + s) * NS_SEC + frac;
    return 0;
bad:
    return temporal_fail(e, TM_BAD_VALUE, "invalid time '%.*s'", (int)(c->n > 80 ? 80 : c->n),
                         c->s);
}

/* zone := ( 'Z' | [+-] hh ( ':'? mm ( ':'? ss )? )? )? ( '[' name-or-offset ']' )?
 * Optional offset and [zone] after a time. */
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
        if (!temporal_parse_offset(c->s + c->i, j - c->i, &off))
            return temporal_fail(e, TM_BAD_VALUE, "invalid offset '%.*s'", (int)(j - c->i),
                                 c->s + c->i);
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
            return temporal_fail(e, TM_BAD_VALUE, "invalid time zone in '%.*s'", (int)c->n, c->s);
        temporal z = *t;
        if (temporal_set_zone(&z, c->s + c->i + 1, j - c->i - 1, e) != 0)
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

/* The text of each kind: DATE date; LOCALTIME time; TIME time zone?;
 * LOCALDATETIME date ( 'T' time )?; DATETIME date ( 'T' time )? zone? */
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
            temporal_prefer_offset(out, given);
    }
    return 0;
bad:
    return temporal_fail(e, TM_BAD_VALUE, "invalid %s '%.*s'",
                         kind == VAL_DATE            ? "date"
                         : kind == VAL_LOCALTIME     ? "local time"
                         : kind == VAL_TIME          ? "time"
                         : kind == VAL_LOCALDATETIME ? "local date time"
                                                     : "date time",
                         (int)(len > 80 ? 80 : len), s);
}

/* ---- durations ------------------------------------------------------------ */

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
        if (tm_mul_ovf(*whole, 10, whole) ||
            tm_add_ovf(*whole, sign * (c->s[c->i + j] - '0'), whole))
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

/* duration := [+-]? 'P' ( yyyy '-' mm '-' dd ( 'T' hh ':' mm ( ':' ss ( '.' f )? )? )?
 *                      | ( number [YMWD] )* ( 'T' ( number [HMS] )+ )? )
 * number := [+-]? digits ( [.,] digits )?; designators in order, at least one. */
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
    duration_acc a = {0};
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
        return duration_normalize(sign * (y * 12 + mo), sign * d, sign * (h * 3600 + mi * 60 + se),
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
            int which = units[u].which, rc;
            int64_t scale = units[u].scale;
            if (exact)
                rc = duration_acc_int(&a, which, whole, scale, e);
            else if (d == 'S' && time)
                rc = duration_acc_seconds(&a, v, e);
            else
                rc = duration_acc_add(&a, which, v, scale, e);
            if (rc != 0)
                return -1;
        }
    }
    if (!any)
        goto bad;
    return duration_acc_finish(&a, out, e);
bad:
    return temporal_fail(e, TM_BAD_VALUE, "invalid duration '%.*s'", (int)(len > 80 ? 80 : len), s);
}

