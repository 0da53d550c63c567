/*
 * functions — the scalar function library, one table.
 *
 * Each entry names a function (matched case-insensitively), its arity
 * range and its implementation.  Implementations borrow their arguments
 * and return a new value; a null argument gives null unless the function
 * says otherwise (coalesce, exists, toString...).  The aggregates (count,
 * sum, ...) have a table of their own at the end, which says which calls
 * aggregate; their accumulators are in aggregate.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "query/aggregate.h"
#include "query/exec.h"
#include "query/functions_string.h"
#include "query/functions_temporal.h"
#include "storage/utf8.h"

typedef int (*fn_impl)(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                       value *out);

typedef struct fn_entry {
    const char *name;
    size_t min_args, max_args;
    bool null_in_null_out;  /* a null first argument gives null */
    fn_impl impl;
} fn_entry;

static int bad_arg(const evalctx *c, const cypher_ast_node *at, const char *fn)
{
    return exec_fail(c->x, at, "TypeError", "InvalidArgumentType",
                     "invalid argument type for %s()", fn);
}

/* The conversion functions (toInteger, toFloat, toBoolean, toString) report
   a value they cannot convert as InvalidArgumentValue, as the TCK says. */
static int bad_conversion(const evalctx *c, const cypher_ast_node *at, const char *fn)
{
    return exec_fail(c->x, at, "TypeError", "InvalidArgumentValue",
                     "%s() cannot convert this value", fn);
}

/* labels() and type() given a value that is no node / relationship at run
   time: InvalidArgumentValue, as the TCK says (a wrong kind the semantic
   pass can see is a compile-time InvalidArgumentType). */
static int not_an_entity(const evalctx *c, const cypher_ast_node *at, const char *fn)
{
    return exec_fail(c->x, at, "TypeError", "InvalidArgumentValue",
                     "%s() expects a %s", fn, strcmp(fn, "type") == 0 ? "relationship" : "node");
}

static int fn_id(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) != VAL_NODE && value_kind(&a[0]) != VAL_REL)
        return bad_arg(c, at, "id");
    *out = value_int((int64_t)a[0].u.id);
    return 0;
}

static int fn_labels(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) != VAL_NODE)
        return not_an_entity(c, at, "labels");
    return node_labels_list(c->x, a[0].u.id, out);
}

static int fn_type(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) != VAL_REL)
        return not_an_entity(c, at, "type");
    strata_view *v = exec_view(c->x);
    strata_token t;
    const char *name;
    if (strata_rel_info(v, a[0].u.id, NULL, NULL, &t) != STRATA_OK ||
        strata_token_name(v, STRATA_RELTYPE, t, &name) != STRATA_OK)
        return 0;
    return make_string(c->x, name, strlen(name), out);
}

static int fn_endpoint(const evalctx *c, const cypher_ast_node *at, value *a, bool start,
                       value *out)
{
    if (value_kind(&a[0]) != VAL_REL)
        return bad_arg(c, at, start ? "startNode" : "endNode");
    strata_id s, e;
    if (strata_rel_info(exec_view(c->x), a[0].u.id, &s, &e, NULL) != STRATA_OK)
        return 0;
    *out = value_node(start ? s : e);
    return 0;
}

static int fn_start(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return fn_endpoint(c, at, a, true, out);
}

static int fn_end(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return fn_endpoint(c, at, a, false, out);
}

static int fn_properties(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                         value *out)
{
    (void)n;
    if (value_kind(&a[0]) == VAL_MAP) {
        *out = value_retain(a[0]);
        return 0;
    }
    if (value_kind(&a[0]) != VAL_NODE && value_kind(&a[0]) != VAL_REL)
        return bad_arg(c, at, "properties");
    return entity_properties_map(c->x, &a[0], out);
}

static int fn_keys(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    value map;
    if (value_kind(&a[0]) == VAL_MAP)
        map = value_retain(a[0]);
    else if (value_kind(&a[0]) == VAL_NODE || value_kind(&a[0]) == VAL_REL) {
        if (entity_properties_map(c->x, &a[0], &map) != 0)
            return -1;
    } else
        return bad_arg(c, at, "keys");
    size_t m = value_map_len(&map);
    value *items = exec_tick_n(c->x, m) == 0 ? mem_alloc(c->x->m, m * sizeof(value))
                                              : NULL;
    if (!items) {
        value_release(&map);
        return c->x->err.category ? -1 : exec_oom(c->x);
    }
    for (size_t i = 0; i < m; i++)
        items[i] = value_retain(value_map_keys(&map)[i]);
    int rc = value_list_from(c->x->m, items, m, out) == 0 ? 0 : exec_oom(c->x);
    mem_free(c->x->m, items);
    value_release(&map);
    return rc;
}

static int fn_size(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) == VAL_LIST) {
        *out = value_int((int64_t)value_list_len(&a[0]));
        return 0;
    }
    if (value_kind(&a[0]) == VAL_STRING) {
        size_t len;
        const char *s = value_str(&a[0], &len);
        *out = value_int((int64_t)utf8_count(s, len));
        return 0;
    }
    return bad_arg(c, at, "size");
}

static int fn_length(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) == VAL_PATH) {
        *out = value_int((int64_t)(value_list_len(&a[0]) / 2));
        return 0;
    }
    return bad_arg(c, at, "length");
}

static int fn_head_last(const evalctx *c, const cypher_ast_node *at, value *a, bool head,
                        value *out)
{
    if (value_kind(&a[0]) != VAL_LIST)
        return bad_arg(c, at, head ? "head" : "last");
    size_t m = value_list_len(&a[0]);
    if (m)
        *out = value_retain(value_list_items(&a[0])[head ? 0 : m - 1]);
    return 0;
}

static int fn_head(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return fn_head_last(c, at, a, true, out);
}

static int fn_last(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return fn_head_last(c, at, a, false, out);
}

static int list_of(const evalctx *c, const value *src, size_t from, size_t to, bool reverse,
                   value *out)
{
    size_t m = to - from;
    if (exec_tick_n(c->x, m) != 0)
        return -1;
    value *items = mem_alloc(c->x->m, m * sizeof(value));
    if (!items)
        return exec_oom(c->x);
    for (size_t i = 0; i < m; i++)
        items[i] = value_retain(value_list_items(src)[reverse ? to - 1 - i : from + i]);
    int rc = value_list_from(c->x->m, items, m, out) == 0 ? 0 : exec_oom(c->x);
    mem_free(c->x->m, items);
    return rc;
}

static int fn_tail(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) != VAL_LIST)
        return bad_arg(c, at, "tail");
    size_t m = value_list_len(&a[0]);
    return list_of(c, &a[0], m ? 1 : 0, m, false, out);
}

static int fn_reverse(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                      value *out)
{
    if (value_kind(&a[0]) == VAL_LIST)
        return list_of(c, &a[0], 0, value_list_len(&a[0]), true, out);
    return strfn_reverse(c, at, a, n, out);
}

static int fn_range(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    for (size_t i = 0; i < n; i++)
        if (value_kind(&a[i]) != VAL_INT)
            return exec_fail(c->x, at, "ArgumentError", "InvalidArgumentType",
                             "range() takes integers");
    int64_t from = a[0].u.i, to = a[1].u.i, step = n > 2 ? a[2].u.i : 1;
    if (step == 0)
        return exec_fail(c->x, at, "ArgumentError", "NumberOutOfRange",
                         "range() step must not be zero");
    size_t m = 0;
    if ((step > 0 && from <= to) || (step < 0 && from >= to)) {
        uint64_t span = step > 0 ? (uint64_t)to - (uint64_t)from : (uint64_t)from - (uint64_t)to;
        uint64_t st = step > 0 ? (uint64_t)step : (uint64_t)0 - (uint64_t)step;
        if (span / st >= QUERY_LIST_MAX)
            return exec_too_large(c->x, at, "range() list", span / st + 1, QUERY_LIST_MAX);
        m = (size_t)(span / st) + 1;
    }
    value *items = mem_alloc(c->x->m, m * sizeof(value));
    if (!items)
        return exec_oom(c->x);
    /* In unsigned arithmetic, which wraps by definition: every item lies
       between from and to, so the wrapped sum is the item itself, where
       from + i * step in int64 could overflow on the way (range(-2^63,
       2^63 - 1, 2^62)). */
    for (size_t i = 0; i < m; i++) {
        if (exec_tick(c->x) != 0) {
            mem_free(c->x->m, items);
            return -1;
        }
        items[i] = value_int((int64_t)((uint64_t)from + (uint64_t)i * (uint64_t)step));
    }
    int rc = value_list_from(c->x->m, items, m, out) == 0 ? 0 : exec_oom(c->x);
    mem_free(c->x->m, items);
    return rc;
}

static int fn_coalesce(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                       value *out)
{
    (void)c;
    (void)at;
    for (size_t i = 0; i < n; i++)
        if (!value_is_null(&a[i])) {
            *out = value_retain(a[i]);
            return 0;
        }
    return 0;
}

static int fn_exists(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)c;
    (void)at;
    (void)n;
    *out = value_bool(!value_is_null(&a[0]));
    return 0;
}

bool string_to_integer(const char *s, int64_t *out)
{
    /* A sign and at most 18 digits, the whole string (what LOAD CSV's ids
       are), cannot overflow and reads as strtoll reads it: no call. */
    const char *p = s + (*s == '-' || *s == '+');
    uint64_t u = 0;
    size_t n = 0;
    while (n < 19 && p[n] >= '0' && p[n] <= '9')
        u = u * 10 + (uint64_t)(p[n++] - '0');
    if (n > 0 && n < 19 && !p[n]) {
        *out = *s == '-' ? -(int64_t)u : (int64_t)u;
        return true;
    }
    char *end;
    errno = 0;
    long long i = strtoll(s, &end, 10);
    if (*s && !*end && errno == 0) {
        *out = i;
        return true;
    }
    double f = strtod(s, &end);
    if (*s && !*end && !isnan(f) && f < 9223372036854775808.0 && f >= -9223372036854775808.0) {
        *out = (int64_t)f;
        return true;
    }
    return false;
}

static int fn_to_integer(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                         value *out)
{
    (void)n;
    switch (value_kind(&a[0])) {
    case VAL_INT:
        *out = a[0];
        return 0;
    case VAL_FLOAT: {
        double f = a[0].u.f;
        if (isnan(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0)
            return 0;
        *out = value_int((int64_t)f);
        return 0;
    }
    case VAL_BOOL:
        *out = value_int(a[0].u.b ? 1 : 0);
        return 0;
    case VAL_STRING: {
        int64_t i;
        if (string_to_integer(value_str(&a[0], NULL), &i))
            *out = value_int(i);
        return 0;
    }
    default:
        return bad_conversion(c, at, "toInteger");
    }
}

static int fn_to_float(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                       value *out)
{
    (void)n;
    switch (value_kind(&a[0])) {
    case VAL_INT:
        *out = value_float((double)a[0].u.i);
        return 0;
    case VAL_FLOAT:
        *out = a[0];
        return 0;
    case VAL_STRING: {
        const char *s = value_str(&a[0], NULL);
        char *end;
        double f = strtod(s, &end);
        if (*s && !*end)
            *out = value_float(f);
        return 0;
    }
    default:
        return bad_conversion(c, at, "toFloat");
    }
}

static int fn_to_boolean(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                         value *out)
{
    (void)n;
    switch (value_kind(&a[0])) {
    case VAL_BOOL:
        *out = a[0];
        return 0;
    case VAL_STRING: {
        const char *s = value_str(&a[0], NULL);
        if (strcasecmp(s, "true") == 0)
            *out = value_bool(true);
        else if (strcasecmp(s, "false") == 0)
            *out = value_bool(false);
        return 0;
    }
    case VAL_INT:
        *out = value_bool(a[0].u.i != 0);
        return 0;
    default:
        return bad_conversion(c, at, "toBoolean");
    }
}

static int fn_to_string(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                        value *out)
{
    (void)n;
    char buf[64];
    char tbuf[160];
    int tlen = temporal_format(&a[0], tbuf, sizeof tbuf);
    if (tlen >= 0) {
        if (value_string(c->x->m, tbuf, (size_t)tlen, out) != 0)
            return exec_fail(c->x, at, "OutOfMemory", NULL, "out of memory");
        return 0;
    }
    switch (value_kind(&a[0])) {
    case VAL_STRING:
        *out = value_retain(a[0]);
        return 0;
    case VAL_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)a[0].u.i);
        break;
    case VAL_FLOAT: {
        double f = a[0].u.f;
        if (isnan(f))
            snprintf(buf, sizeof buf, "NaN");
        else if (isinf(f))
            snprintf(buf, sizeof buf, f > 0 ? "Infinity" : "-Infinity");
        else {
            snprintf(buf, sizeof buf, "%.15g", f);
            if (strtod(buf, NULL) != f)
                snprintf(buf, sizeof buf, "%.17g", f);
            if (!strpbrk(buf, ".e"))
                strcat(buf, ".0");
        }
        break;
    }
    case VAL_BOOL:
        snprintf(buf, sizeof buf, "%s", a[0].u.b ? "true" : "false");
        break;
    default:
        return bad_conversion(c, at, "toString");
    }
    return make_string(c->x, buf, strlen(buf), out);
}

static int fn_abs(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) == VAL_INT) {
        if (a[0].u.i == INT64_MIN)
            return exec_fail(c->x, at, "ArgumentError", "IntegerOverflow", "integer overflow");
        *out = value_int(a[0].u.i < 0 ? -a[0].u.i : a[0].u.i);
    } else if (value_kind(&a[0]) == VAL_FLOAT)
        *out = value_float(fabs(a[0].u.f));
    else
        return bad_arg(c, at, "abs");
    return 0;
}

static int math1(const evalctx *c, const cypher_ast_node *at, value *a, const char *fn,
                 double (*f)(double), value *out)
{
    if (!value_is_number(&a[0]))
        return bad_arg(c, at, fn);
    double d = value_kind(&a[0]) == VAL_INT ? (double)a[0].u.i : a[0].u.f;
    *out = value_float(f(d));
    return 0;
}

#define MATH1(cname, fname, impl)                                                        \
    static int cname(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,    \
                     value *out)                                                         \
    {                                                                                    \
        (void)n;                                                                         \
        return math1(c, at, a, fname, impl, out);                                        \
    }
MATH1(fn_ceil, "ceil", ceil)
MATH1(fn_floor, "floor", floor)
MATH1(fn_sqrt, "sqrt", sqrt)
MATH1(fn_exp, "exp", exp)
MATH1(fn_log, "log", log)
MATH1(fn_log10, "log10", log10)
MATH1(fn_sin, "sin", sin)
MATH1(fn_cos, "cos", cos)
MATH1(fn_tan, "tan", tan)

static double round_half_up(double d) { return floor(d + 0.5); }
MATH1(fn_round, "round", round_half_up)

/* rand(): a float in [0, 1).  xorshift64* on a per-thread state seeded
   from the clock and the state's address; not for cryptography. */
static int fn_rand(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)c, (void)at, (void)a, (void)n;
    static _Thread_local uint64_t state;
    if (!state) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        state = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^
                (uint64_t)(uintptr_t)&state;
        if (!state)
            state = 0x9e3779b97f4a7c15ull;
    }
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    uint64_t r = state * 0x2545f4914f6cdd1dull;
    *out = value_float((double)(r >> 11) * (1.0 / 9007199254740992.0));
    return 0;
}

static int fn_sign(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) == VAL_INT)
        *out = value_int(a[0].u.i > 0 ? 1 : a[0].u.i < 0 ? -1 : 0);
    else if (value_kind(&a[0]) == VAL_FLOAT)
        *out = value_int(a[0].u.f > 0 ? 1 : a[0].u.f < 0 ? -1 : 0);
    else
        return bad_arg(c, at, "sign");
    return 0;
}

/* nodes(p) / relationships(p): the even / odd items of a path. */
static int path_items(const evalctx *c, const cypher_ast_node *at, const value *p, size_t from,
                      const char *fn, value *out)
{
    if (value_kind(p) != VAL_PATH)
        return bad_arg(c, at, fn);
    size_t len = value_list_len(p), cnt = len / 2 + (from == 0);
    value *items = mem_alloc(c->x->m, cnt * sizeof(value));
    if (!items)
        return exec_oom(c->x);
    for (size_t i = 0; i < cnt; i++)
        items[i] = value_retain(value_list_items(p)[from + 2 * i]);
    int rc = value_list_from(c->x->m, items, cnt, out);
    mem_free(c->x->m, items);
    return rc != 0 ? exec_oom(c->x) : 0;
}

static int fn_nodes(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return path_items(c, at, &a[0], 0, "nodes", out);
}

static int fn_relationships(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                            value *out)
{
    (void)n;
    return path_items(c, at, &a[0], 1, "relationships", out);
}

static const fn_entry functions[] = {
    {"id", 1, 1, true, fn_id},
    {"labels", 1, 1, true, fn_labels},
    {"type", 1, 1, true, fn_type},
    {"startNode", 1, 1, true, fn_start},
    {"endNode", 1, 1, true, fn_end},
    {"keys", 1, 1, true, fn_keys},
    {"properties", 1, 1, true, fn_properties},
    {"size", 1, 1, true, fn_size},
    {"length", 1, 1, true, fn_length},
    {"head", 1, 1, true, fn_head},
    {"last", 1, 1, true, fn_last},
    {"tail", 1, 1, true, fn_tail},
    {"reverse", 1, 1, true, fn_reverse},
    {"range", 2, 3, false, fn_range},
    {"coalesce", 1, 8, false, fn_coalesce},
    {"exists", 1, 1, false, fn_exists},
    {"toInteger", 1, 1, true, fn_to_integer},
    {"toFloat", 1, 1, true, fn_to_float},
    {"toBoolean", 1, 1, true, fn_to_boolean},
    {"toString", 1, 1, true, fn_to_string},
    {"toUpper", 1, 1, true, strfn_upper},
    {"toLower", 1, 1, true, strfn_lower},
    {"trim", 1, 1, true, strfn_trim},
    {"ltrim", 1, 1, true, strfn_ltrim},
    {"rtrim", 1, 1, true, strfn_rtrim},
    {"substring", 2, 3, true, strfn_substring},
    {"left", 2, 2, true, strfn_left},
    {"right", 2, 2, true, strfn_right},
    {"replace", 3, 3, false, strfn_replace},
    {"split", 2, 2, true, strfn_split},
    {"abs", 1, 1, true, fn_abs},
    {"sign", 1, 1, true, fn_sign},
    {"rand", 0, 0, false, fn_rand},
    {"ceil", 1, 1, true, fn_ceil},
    {"floor", 1, 1, true, fn_floor},
    {"round", 1, 1, true, fn_round},
    {"sqrt", 1, 1, true, fn_sqrt},
    {"exp", 1, 1, true, fn_exp},
    {"log", 1, 1, true, fn_log},
    {"log10", 1, 1, true, fn_log10},
    {"sin", 1, 1, true, fn_sin},
    {"cos", 1, 1, true, fn_cos},
    {"tan", 1, 1, true, fn_tan},
    {"nodes", 1, 1, true, fn_nodes},
    {"relationships", 1, 1, true, fn_relationships},
    {"linenumber", 0, 0, false, load_csv_linenumber},
    {"file", 0, 0, false, load_csv_file},
};

static const fn_entry *find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof functions / sizeof *functions; i++)
        if (strlen(functions[i].name) == len && strncasecmp(functions[i].name, name, len) == 0)
            return &functions[i];
    return NULL;
}

bool function_known(const char *name, size_t len)
{
    return find(name, len) != NULL || temporal_function_find(name, len) != NULL;
}

/* call's entry: a fn_entry, or a temporal_fn with the low bit set; 0 for
   an unknown name.  Cached in the call's node (ast.h). */
static uintptr_t resolve(const cypher_ast_node *call)
{
    _Atomic uintptr_t *cache = (_Atomic uintptr_t *)&call->u.function.resolved;
    uintptr_t r = atomic_load_explicit(cache, memory_order_relaxed);
    if (r)
        return r;
    const fn_entry *f = find(call->u.function.name.ptr, call->u.function.name.len);
    if (f) {
        r = (uintptr_t)f;
    } else {
        /* The temporal functions live in their own table
           (functions_temporal.c); they handle null arguments themselves. */
        const temporal_fn *tf =
            temporal_function_find(call->u.function.name.ptr, call->u.function.name.len);
        r = tf ? (uintptr_t)tf | 1 : 0;
    }
    atomic_store_explicit(cache, r, memory_order_relaxed);
    return r;
}

int function_call(const evalctx *c, const cypher_ast_node *call, value *args, size_t nargs,
                  value *out)
{
    *out = value_null();
    uintptr_t r = resolve(call);
    const fn_entry *f = r & 1 ? NULL : (const fn_entry *)r;
    if (!f) {
        const temporal_fn *tf = (const temporal_fn *)(r & ~(uintptr_t)1);
        if (!tf)
            return exec_fail(c->x, call, "SyntaxError", "UnknownFunction",
                             "function %s() is not supported yet", call->u.function.name.ptr);
        if (nargs < tf->min_args || nargs > tf->max_args)
            return exec_fail(c->x, call, "SyntaxError", "InvalidNumberOfArguments",
                             "wrong number of arguments for %s()", tf->name);
        return tf->impl(c->x, call, args, nargs, out);
    }
    if (nargs < f->min_args || nargs > f->max_args)
        return exec_fail(c->x, call, "SyntaxError", "InvalidNumberOfArguments",
                         "wrong number of arguments for %s()", f->name);
    if (f->null_in_null_out)
        for (size_t i = 0; i < nargs; i++)
            if (value_is_null(&args[i]))
                return 0;
    return f->impl(c, call, args, nargs, out);
}

/* ---- aggregate functions ---- */

static const struct aggregate_fn {
    const char *name;
    size_t nargs;
} aggregates[] = {
#define X(kind, name, nargs) {name, nargs},
    AGGREGATES(X)
#undef X
};

int aggregate_kind(const cypher_ast_node *e)
{
    if (e->kind == CYPHER_AST_COUNT_STAR)
        return AGG_COUNT;
    if (e->kind != CYPHER_AST_FUNCTION)
        return -1;
    /* a call resolved before is a scalar function (aggregates never are):
       no name comparisons on every row */
    if (atomic_load_explicit((_Atomic uintptr_t *)&e->u.function.resolved, memory_order_relaxed))
        return -1;
    for (size_t i = 0; i < sizeof aggregates / sizeof *aggregates; i++)
        if (strcasecmp(e->u.function.name.ptr, aggregates[i].name) == 0)
            return (int)i;
    return -1;
}

size_t aggregate_nargs(agg_kind k) { return aggregates[k].nargs; }

bool is_aggregate_call(const cypher_ast_node *e) { return aggregate_kind(e) >= 0; }
