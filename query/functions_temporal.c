/*
 * functions_temporal — the Cypher-facing temporal library (see the
 * header).  Every function borrows its arguments and returns a new value;
 * errors are recorded with exec_fail: ArgumentError/InvalidArgumentValue
 * for bad text, components or units, TypeError/InvalidArgumentType for
 * arguments of the wrong type.
 */
#include "query/functions_temporal.h"

#include <string.h>
#include <strings.h>
#include <time.h>

#include "query/temporal_arith.h"
#include "query/temporal_build.h"
#include "query/temporal_components.h"
#include "query/temporal_parse.h"

static int tfail(exec *x, const cypher_ast_node *at, const temporal_err *e)
{
    bool type = e->detail && strcmp(e->detail, "InvalidArgumentType") == 0;
    return exec_fail(x, at, type ? "TypeError" : "ArgumentError", e->detail, "%s", e->msg);
}

static int bad_type(exec *x, const cypher_ast_node *at, const char *fn)
{
    return exec_fail(x, at, "TypeError", "InvalidArgumentType", "invalid argument type for %s()",
                     fn);
}

/* Every temporal Cypher makes passes here: one that could not be saved
   (temporal_check) is an error where it is made. */
static int put(exec *x, const cypher_ast_node *at, const temporal *t, value *out)
{
    temporal_err e = {0};
    if (temporal_check(t, &e) != 0)
        return tfail(x, at, &e);
    return temporal_to_value(x->m, t, out) == 0 ? 0 : exec_oom(x);
}

static int put_dur(exec *x, const duration *d, value *out)
{
    return duration_to_value(x->m, d, out) == 0 ? 0 : exec_oom(x);
}

static const char *kind_fn(value_type k)
{
    switch (k) {
    case VAL_DATE: return "date";
    case VAL_LOCALTIME: return "localtime";
    case VAL_TIME: return "time";
    case VAL_LOCALDATETIME: return "localdatetime";
    case VAL_DATETIME: return "datetime";
    default: return "duration";
    }
}

/* The statement's instant as kind in zone (the clock is read once per
   statement, so that date() = date() and a duration between two of them
   is zero). */
static int statement_now(exec *x, value_type kind, const char *zone, size_t zlen, temporal *out,
                         temporal_err *e)
{
    exec_read_clock(x);
    return temporal_at(kind, x->clock_sec, x->clock_nsec, zone, zlen, out, e);
}

/* date(), date('...'), date({...}), date(temporal), date(null). */
static int construct(exec *x, const cypher_ast_node *at, value_type kind, const value *a,
                     size_t n, value *out)
{
    temporal t;
    temporal_err e = {0};
    *out = value_null();
    if (n == 0) {
        if (statement_now(x, kind, NULL, 0, &t, &e) != 0)
            return tfail(x, at, &e);
        return put(x, at, &t, out);
    }
    if (value_is_null(&a[0]))
        return 0;
    size_t len;
    const char *s = value_str(&a[0], &len);
    int rc;
    if (s)
        rc = temporal_parse(kind, s, len, &t, &e);
    else if (value_kind(&a[0]) == VAL_MAP) {
        /* {timezone: 'X'} alone is "now in zone X". */
        const value *tz = value_map_get(&a[0], "timezone", 8);
        if (value_map_len(&a[0]) == 1 && tz && value_str(tz, NULL)) {
            size_t zl;
            const char *z = value_str(tz, &zl);
            rc = statement_now(x, kind, z, zl, &t, &e);
        } else
            rc = temporal_from_map(kind, &a[0], &t, &e);
    } else {
        temporal in;
        if (temporal_from_value(&a[0], &in) != 0)
            return bad_type(x, at, kind_fn(kind));
        rc = temporal_convert(kind, &in, &t, &e);
    }
    if (rc != 0)
        return tfail(x, at, &e);
    return put(x, at, &t, out);
}

#define CTOR(fname, kind)                                                                 \
    static int fname(exec *x, const cypher_ast_node *at, const value *a, size_t n,       \
                     value *out)                                                          \
    {                                                                                     \
        return construct(x, at, kind, a, n, out);                                         \
    }
CTOR(fn_date, VAL_DATE)
CTOR(fn_localtime, VAL_LOCALTIME)
CTOR(fn_time, VAL_TIME)
CTOR(fn_localdatetime, VAL_LOCALDATETIME)
CTOR(fn_datetime, VAL_DATETIME)

/* x.transaction([tz]), x.statement([tz]): the statement's instant (a
   statement is its own transaction here); x.realtime([tz]): the clock now. */
static int now(exec *x, const cypher_ast_node *at, value_type kind, bool realtime,
               const value *a, size_t n, value *out)
{
    *out = value_null();
    if (n == 1 && value_is_null(&a[0]))
        return 0;
    const char *z = NULL;
    size_t zl = 0;
    if (n == 1) {
        if (value_kind(&a[0]) == VAL_MAP) {
            const value *tz = value_map_get(&a[0], "timezone", 8);
            z = tz ? value_str(tz, &zl) : NULL;
        } else
            z = value_str(&a[0], &zl);
        if (!z)
            return bad_type(x, at, kind_fn(kind));
    }
    temporal t;
    temporal_err e = {0};
    int rc = realtime ? temporal_now(kind, z, zl, &t, &e) : statement_now(x, kind, z, zl, &t, &e);
    if (rc != 0)
        return tfail(x, at, &e);
    return put(x, at, &t, out);
}

#define NOW(fname, kind, realtime)                                                        \
    static int fname(exec *x, const cypher_ast_node *at, const value *a, size_t n,       \
                     value *out)                                                          \
    {                                                                                     \
        return now(x, at, kind, realtime, a, n, out);                                     \
    }
NOW(now_date, VAL_DATE, false)
NOW(now_localtime, VAL_LOCALTIME, false)
NOW(now_time, VAL_TIME, false)
NOW(now_localdatetime, VAL_LOCALDATETIME, false)
NOW(now_datetime, VAL_DATETIME, false)
NOW(real_date, VAL_DATE, true)
NOW(real_localtime, VAL_LOCALTIME, true)
NOW(real_time, VAL_TIME, true)
NOW(real_localdatetime, VAL_LOCALDATETIME, true)
NOW(real_datetime, VAL_DATETIME, true)

static int truncate_impl(exec *x, const cypher_ast_node *at, value_type kind, const value *a,
                         size_t n, value *out)
{
    *out = value_null();
    if (value_is_null(&a[1]))
        return 0;
    size_t ul;
    const char *u = value_str(&a[0], &ul);
    temporal in, t;
    if (!u || temporal_from_value(&a[1], &in) != 0 ||
        (n == 3 && !value_is_null(&a[2]) && value_kind(&a[2]) != VAL_MAP))
        return bad_type(x, at, kind_fn(kind));
    temporal_err e = {0};
    if (temporal_truncate(kind, u, ul, &in, n == 3 ? &a[2] : NULL, &t, &e) != 0)
        return tfail(x, at, &e);
    return put(x, at, &t, out);
}

#define TRUNC(fname, kind)                                                                \
    static int fname(exec *x, const cypher_ast_node *at, const value *a, size_t n,       \
                     value *out)                                                          \
    {                                                                                     \
        return truncate_impl(x, at, kind, a, n, out);                                     \
    }
TRUNC(trunc_date, VAL_DATE)
TRUNC(trunc_localtime, VAL_LOCALTIME)
TRUNC(trunc_time, VAL_TIME)
TRUNC(trunc_localdatetime, VAL_LOCALDATETIME)
TRUNC(trunc_datetime, VAL_DATETIME)

static int fn_fromepoch(exec *x, const cypher_ast_node *at, const value *a, size_t n, value *out)
{
    (void)n;
    *out = value_null();
    if (value_is_null(&a[0]) || value_is_null(&a[1]))
        return 0;
    if (value_kind(&a[0]) != VAL_INT || value_kind(&a[1]) != VAL_INT)
        return bad_type(x, at, "datetime.fromepoch");
    value keys[2], vals[2], map;
    if (value_string(x->m, "epochSeconds", 12, &keys[0]) != 0 ||
        value_string(x->m, "nanosecond", 10, &keys[1]) != 0)
        return exec_oom(x);
    vals[0] = a[0];
    vals[1] = a[1];
    if (value_map_from(x->m, keys, vals, 2, &map) != 0)
        return exec_oom(x);
    temporal t;
    temporal_err e = {0};
    int rc = temporal_from_map(VAL_DATETIME, &map, &t, &e);
    value_release(&map);
    return rc != 0 ? tfail(x, at, &e) : put(x, at, &t, out);
}

static int fn_fromepochmillis(exec *x, const cypher_ast_node *at, const value *a, size_t n,
                              value *out)
{
    (void)n;
    *out = value_null();
    if (value_is_null(&a[0]))
        return 0;
    if (value_kind(&a[0]) != VAL_INT)
        return bad_type(x, at, "datetime.fromepochmillis");
    value key, val = a[0], map;
    if (value_string(x->m, "epochMillis", 11, &key) != 0 ||
        value_map_from(x->m, &key, &val, 1, &map) != 0)
        return exec_oom(x);
    temporal t;
    temporal_err e = {0};
    int rc = temporal_from_map(VAL_DATETIME, &map, &t, &e);
    value_release(&map);
    return rc != 0 ? tfail(x, at, &e) : put(x, at, &t, out);
}

static int fn_duration(exec *x, const cypher_ast_node *at, const value *a, size_t n, value *out)
{
    (void)n;
    *out = value_null();
    if (value_is_null(&a[0]))
        return 0;
    duration d;
    temporal_err e = {0};
    size_t len;
    const char *s = value_str(&a[0], &len);
    int rc;
    if (s)
        rc = duration_parse(s, len, &d, &e);
    else if (value_kind(&a[0]) == VAL_MAP)
        rc = duration_from_map(&a[0], &d, &e);
    else if (value_kind(&a[0]) == VAL_DURATION)
        return *out = value_retain(a[0]), 0;
    else
        return bad_type(x, at, "duration");
    return rc != 0 ? tfail(x, at, &e) : put_dur(x, &d, out);
}

static int between(exec *x, const cypher_ast_node *at, tm_between mode, const value *a,
                   value *out)
{
    *out = value_null();
    if (value_is_null(&a[0]) || value_is_null(&a[1]))
        return 0;
    temporal l, r;
    if (temporal_from_value(&a[0], &l) != 0 || temporal_from_value(&a[1], &r) != 0)
        return bad_type(x, at, "duration.between");
    duration d;
    temporal_err e = {0};
    if (duration_between(&l, &r, mode, &d, &e) != 0)
        return tfail(x, at, &e);
    return put_dur(x, &d, out);
}

static int fn_between(exec *x, const cypher_ast_node *at, const value *a, size_t n, value *out)
{
    (void)n;
    return between(x, at, TM_BETWEEN, a, out);
}
static int fn_in_months(exec *x, const cypher_ast_node *at, const value *a, size_t n, value *out)
{
    (void)n;
    return between(x, at, TM_IN_MONTHS, a, out);
}
static int fn_in_days(exec *x, const cypher_ast_node *at, const value *a, size_t n, value *out)
{
    (void)n;
    return between(x, at, TM_IN_DAYS, a, out);
}
static int fn_in_seconds(exec *x, const cypher_ast_node *at, const value *a, size_t n, value *out)
{
    (void)n;
    return between(x, at, TM_IN_SECONDS, a, out);
}

static const temporal_fn table[] = {
    {"date", 0, 1, fn_date},
    {"date.transaction", 0, 1, now_date},
    {"date.statement", 0, 1, now_date},
    {"date.realtime", 0, 1, real_date},
    {"date.truncate", 2, 3, trunc_date},
    {"localtime", 0, 1, fn_localtime},
    {"localtime.transaction", 0, 1, now_localtime},
    {"localtime.statement", 0, 1, now_localtime},
    {"localtime.realtime", 0, 1, real_localtime},
    {"localtime.truncate", 2, 3, trunc_localtime},
    {"time", 0, 1, fn_time},
    {"time.transaction", 0, 1, now_time},
    {"time.statement", 0, 1, now_time},
    {"time.realtime", 0, 1, real_time},
    {"time.truncate", 2, 3, trunc_time},
    {"localdatetime", 0, 1, fn_localdatetime},
    {"localdatetime.transaction", 0, 1, now_localdatetime},
    {"localdatetime.statement", 0, 1, now_localdatetime},
    {"localdatetime.realtime", 0, 1, real_localdatetime},
    {"localdatetime.truncate", 2, 3, trunc_localdatetime},
    {"datetime", 0, 1, fn_datetime},
    {"datetime.transaction", 0, 1, now_datetime},
    {"datetime.statement", 0, 1, now_datetime},
    {"datetime.realtime", 0, 1, real_datetime},
    {"datetime.truncate", 2, 3, trunc_datetime},
    {"datetime.fromepoch", 2, 2, fn_fromepoch},
    {"datetime.fromepochmillis", 1, 1, fn_fromepochmillis},
    {"duration", 1, 1, fn_duration},
    {"duration.between", 2, 2, fn_between},
    {"duration.inMonths", 2, 2, fn_in_months},
    {"duration.inDays", 2, 2, fn_in_days},
    {"duration.inSeconds", 2, 2, fn_in_seconds},
};

const temporal_fn *temporal_function_find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strlen(table[i].name) == len && strncasecmp(table[i].name, name, len) == 0)
            return &table[i];
    return NULL;
}

bool temporal_value(const value *v) { return value_is_temporal(v); }

int temporal_property(exec *x, const cypher_ast_node *at, const value *v, const char *key,
                      size_t len, value *out)
{
    *out = value_null();
    int rc;
    if (value_kind(v) == VAL_DURATION) {
        duration d;
        if (duration_from_value(v, &d) != 0)
            return bad_type(x, at, "property access");
        rc = duration_component(&d, key, len, out);
    } else {
        temporal t;
        if (temporal_from_value(v, &t) != 0)
            return bad_type(x, at, "property access");
        rc = temporal_component(x->m, &t, key, len, out);
    }
    if (rc == -2)
        return exec_fail(x, at, "ArgumentError", "IntegerOverflow",
                         "%s.%.*s does not fit a 64-bit integer", temporal_type_name(v), (int)len,
                         key);
    if (rc < 0)
        return exec_oom(x);
    if (rc > 0)
        return exec_fail(x, at, "ArgumentError", "InvalidArgumentValue",
                         "%s has no component `%.*s`", temporal_type_name(v), (int)len, key);
    return 0;
}

static bool is_num(const value *v) { return value_is_number(v); }
static double num(const value *v) { return value_kind(v) == VAL_INT ? (double)v->u.i : v->u.f; }

int temporal_arith(exec *x, const cypher_ast_node *at, char op, const value *a, const value *b,
                   value *out)
{
    *out = value_null();
    if (!temporal_value(a) && !temporal_value(b))
        return 1;
    temporal_err e = {0};
    duration da, db, r;
    temporal t, tr;
    bool adur = value_kind(a) == VAL_DURATION, bdur = value_kind(b) == VAL_DURATION;
    if ((op == '+' || op == '-') && temporal_kind(value_kind(a)) && bdur) {
        temporal_from_value(a, &t);
        duration_from_value(b, &db);
        if (temporal_add(&t, &db, op == '+' ? 1 : -1, &tr, &e) != 0)
            return tfail(x, at, &e);
        return put(x, at, &tr, out);
    }
    if (op == '+' && adur && temporal_kind(value_kind(b))) {
        temporal_from_value(b, &t);
        duration_from_value(a, &da);
        if (temporal_add(&t, &da, 1, &tr, &e) != 0)
            return tfail(x, at, &e);
        return put(x, at, &tr, out);
    }
    if ((op == '+' || op == '-') && adur && bdur) {
        duration_from_value(a, &da);
        duration_from_value(b, &db);
        if (duration_add(&da, &db, op == '+' ? 1 : -1, &r, &e) != 0)
            return tfail(x, at, &e);
        return put_dur(x, &r, out);
    }
    if ((op == '*' || op == '/') && adur && is_num(b)) {
        duration_from_value(a, &da);
        if (duration_scale(&da, num(b), op == '/', &r, &e) != 0)
            return tfail(x, at, &e);
        return put_dur(x, &r, out);
    }
    if (op == '*' && bdur && is_num(a)) {
        duration_from_value(b, &db);
        if (duration_scale(&db, num(a), false, &r, &e) != 0)
            return tfail(x, at, &e);
        return put_dur(x, &r, out);
    }
    if (value_is_null(a) || value_is_null(b))
        return 0;
    return exec_fail(x, at, "TypeError", "InvalidArgumentType",
                     "cannot apply %c to these temporal operands", op);
}

const char *temporal_type_name(const value *v)
{
    return value_is_temporal(v) ? value_type_name(v) : NULL;
}
