/*
 * Value ranges: what Cypher can make, the file format can hold, and no
 * computation wraps.
 *
 * 1. Every value kind at the ends of its range (integers, floats with NaN,
 *    infinities and -0.0, strings, lists, every temporal kind at the first
 *    and last instant of years -999999999 .. 999999999, durations with
 *    64-bit components) is saved and loaded back unchanged: built through
 *    the C API and through Cypher, saved with strata_save, read with
 *    strata_load; maps (which are not properties) through the value codec.
 * 2. A table of computations at the int64 and calendar limits (temporal
 *    constructors from maps and strings, temporal and duration arithmetic,
 *    duration.between and its in* forms, truncation, epochMillis and other
 *    components, range(), integer arithmetic and aggregates): each either
 *    gives the exact answer or an error, never a wrapped value.  The
 *    sanitizer build runs the same table under UBSan, where a signed
 *    overflow aborts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"
#include "core/graph_impl.h"
#include "core/persist_codec.h"
#include "query/functions_temporal.h"
#include "storage/temporal.h"

/* ---- helpers --------------------------------------------------------------- */

static void query_ok(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    strata_query(g, text, NULL, &r);
    assert_non_null(r);
    const strata_value *const *row;
    while (strata_result_next(r, &row))
        ;
    const strata_query_error *e = strata_result_error(r);
    if (e)
        fail_msg("%s: %s", text, e->message);
    strata_result_free(&r);
}

/* Same value, exactly: equivalence, plus the bits of floats and the text
   of temporals (equal instants in different zones are equivalent, and
   -0.0 is equivalent to 0.0, but neither may change in a round trip). */
static void assert_same(const value *a, const value *b, const char *what)
{
    if (!value_equivalent(a, b))
        fail_msg("%s: not equivalent", what);
    if (value_kind(a) == VAL_FLOAT && memcmp(&a->u.f, &b->u.f, sizeof(double)) != 0)
        fail_msg("%s: float bits differ", what);
    if (value_is_temporal(a)) {
        char ta[200], tb[200];
        temporal_format(a, ta, sizeof ta);
        temporal_format(b, tb, sizeof tb);
        if (strcmp(ta, tb) != 0)
            fail_msg("%s: %s became %s", what, ta, tb);
    }
    if (value_kind(a) == VAL_LIST)
        for (size_t i = 0; i < value_list_len(a); i++)
            assert_same(&value_list_items(a)[i], &value_list_items(b)[i], what);
}

/* Saves g, loads it, and checks every node's k/v pair came back. */
static void assert_round_trip(strata_graph *g, size_t expect_rows)
{
    char path[] = "/tmp/strata_value_ranges_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(strata_save(g, path), STRATA_OK);
    strata_graph *h = NULL;
    char err[256] = "";
    if (strata_load_ex(path, &h, err, sizeof err) != STRATA_OK)
        fail_msg("load: %s", err);
    unlink(path);
    const char *q = "MATCH (n) RETURN n.k, n.v ORDER BY n.k";
    strata_result *ra = NULL, *rb = NULL;
    assert_int_equal(strata_query(g, q, NULL, &ra), STRATA_OK);
    assert_int_equal(strata_query(h, q, NULL, &rb), STRATA_OK);
    const strata_value *const *a, *const *b;
    size_t rows = 0;
    while (strata_result_next(ra, &a)) {
        assert_true(strata_result_next(rb, &b));
        const char *ka, *kb;
        assert_int_equal(strata_value_get_string(a[0], &ka, NULL), STRATA_OK);
        assert_int_equal(strata_value_get_string(b[0], &kb, NULL), STRATA_OK);
        assert_string_equal(ka, kb);
        assert_false(value_is_null(&a[1]->v));
        assert_same(&a[1]->v, &b[1]->v, ka);
        rows++;
    }
    assert_false(strata_result_next(rb, &b));
    assert_null(strata_result_error(ra));
    assert_null(strata_result_error(rb));
    assert_int_equal(rows, expect_rows);
    strata_result_free(&ra);
    strata_result_free(&rb);
    strata_graph_free(&h);
}

/* ---- 1. extremes through the C API ------------------------------------------- */

static void api_node(strata_graph *g, const char *k, strata_value *v)
{
    strata_token kk, kv;
    strata_id n;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "k", &kk), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "v", &kv), STRATA_OK);
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    strata_value *key = strata_value_string(k, strlen(k));
    assert_non_null(key);
    assert_non_null(v);
    assert_int_equal(strata_node_set(g, n, kk, key), STRATA_OK);
    assert_int_equal(strata_node_set(g, n, kv, v), STRATA_OK);
    strata_value_free(&key);
    strata_value_free(&v);
}

static void test_api_extremes_save_and_load(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    api_node(g, "int max", strata_value_int(INT64_MAX));
    api_node(g, "int min", strata_value_int(INT64_MIN));
    api_node(g, "int zero", strata_value_int(0));
    api_node(g, "float nan", strata_value_float(NAN));
    api_node(g, "float -nan", strata_value_float(-NAN));
    api_node(g, "float +inf", strata_value_float(INFINITY));
    api_node(g, "float -inf", strata_value_float(-INFINITY));
    api_node(g, "float -0.0", strata_value_float(-0.0));
    api_node(g, "float max", strata_value_float(DBL_MAX));
    api_node(g, "float -max", strata_value_float(-DBL_MAX));
    api_node(g, "float denormal", strata_value_float(4.9406564584124654e-324));
    api_node(g, "float min normal", strata_value_float(DBL_MIN));
    api_node(g, "string empty", strata_value_string("", 0));
    api_node(g, "string inline max", strata_value_string("0123456789abc", 13));
    api_node(g, "string heap min", strata_value_string("0123456789abcd", 14));
    api_node(g, "string nul", strata_value_string("a\0b", 3));
    size_t big = 1u << 20;
    char *s = malloc(big);
    assert_non_null(s);
    for (size_t i = 0; i < big; i++)
        s[i] = (char)('a' + i % 26);
    api_node(g, "string 1 MiB", strata_value_string(s, big));
    free(s);
    strata_value *items[4] = { strata_value_int(INT64_MIN), strata_value_int(INT64_MAX),
                               strata_value_int(0), strata_value_int(-1) };
    api_node(g, "list ints", strata_value_list((const strata_value *const *)items, 4));
    for (int i = 0; i < 4; i++)
        strata_value_free(&items[i]);
    items[0] = strata_value_float(NAN);
    items[1] = strata_value_float(-0.0);
    items[2] = strata_value_float(INFINITY);
    items[3] = strata_value_float(-INFINITY);
    api_node(g, "list floats", strata_value_list((const strata_value *const *)items, 4));
    for (int i = 0; i < 4; i++)
        strata_value_free(&items[i]);
    api_node(g, "list empty", strata_value_list(NULL, 0));
    assert_round_trip(g, 20);
    strata_graph_free(&g);
}

/* ---- 1. extremes through Cypher ---------------------------------------------- */

static const char *const cypher_extremes[][2] = {
    { "date min", "date('-999999999-01-01')" },
    { "date max", "date('+999999999-12-31')" },
    { "date max by map", "date({year: 999999999, month: 12, day: 31})" },
    { "localtime min", "localtime('00:00')" },
    { "localtime max", "localtime('23:59:59.999999999')" },
    { "time min", "time('00:00+18:00')" },
    { "time max", "time('23:59:59.999999999-18:00')" },
    { "localdatetime min", "localdatetime('-999999999-01-01T00:00')" },
    { "localdatetime max", "localdatetime('+999999999-12-31T23:59:59.999999999')" },
    { "datetime min", "datetime('-999999999-01-01T00:00+18:00')" },
    { "datetime max", "datetime('+999999999-12-31T23:59:59.999999999-18:00')" },
    { "datetime max zoned", "datetime('+999999999-12-31T23:59:59.999999999[Europe/Stockholm]')" },
    { "datetime min zoned", "datetime('-999999999-01-01T00:00[America/New_York]')" },
    { "datetime epochMillis max", "datetime({epochMillis: 9223372036854775807})" },
    { "datetime epochMillis min", "datetime.fromepochmillis(-9223372036854775807 - 1)" },
    { "duration months max", "duration({months: 9223372036854775807})" },
    { "duration months min", "duration({months: -9223372036854775807 - 1})" },
    { "duration days max", "duration({days: 9223372036854775807})" },
    { "duration days min", "duration({days: -9223372036854775807 - 1})" },
    { "duration seconds max",
      "duration({seconds: 9223372036854775807, nanoseconds: 999999999})" },
    { "duration seconds min", "duration({seconds: -9223372036854775807 - 1})" },
    { "duration ms max", "duration({milliseconds: 9223372036854775807})" },
    { "duration all max",
      "duration('P9223372036854775807M9223372036854775807DT9223372036854775807S')" },
    { "duration between ends",
      "duration.between(datetime('-999999999-01-01T00:00+18:00'), "
      "datetime('+999999999-12-31T23:59:59.999999999-18:00'))" },
    { "list of temporals",
      "[date('-999999999-01-01'), date('+999999999-12-31'), localtime('23:59:59.999999999')]" },
    { "int max", "9223372036854775807" },
    { "int min", "-9223372036854775807 - 1" },
    { "float nan", "0.0 / 0.0" },
    { "float inf", "1.0 / 0.0" },
    { "float -inf", "-1.0 / 0.0" },
    { "float -0.0", "-0.0" },
};

static void test_cypher_extremes_save_and_load(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    size_t n = sizeof cypher_extremes / sizeof cypher_extremes[0];
    for (size_t i = 0; i < n; i++) {
        char q[512];
        snprintf(q, sizeof q, "CREATE ({k: '%s', v: %s})", cypher_extremes[i][0],
                 cypher_extremes[i][1]);
        query_ok(g, q);
    }
    assert_round_trip(g, n);
    strata_graph_free(&g);
}

/* Maps are not properties: every extreme inside one map, through the
   codec the saved file uses. */
static void test_map_of_extremes_through_codec(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char q[8192];
    size_t at = (size_t)snprintf(q, sizeof q, "RETURN {");
    size_t n = sizeof cypher_extremes / sizeof cypher_extremes[0];
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(q + at, sizeof q - at, "%s`%s`: %s", i ? ", " : "",
                               cypher_extremes[i][0], cypher_extremes[i][1]);
    snprintf(q + at, sizeof q - at, "} AS m");
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    const value *m = &row[0]->v;
    assert_int_equal(value_map_len(m), n);

    FILE *f = tmpfile();
    assert_non_null(f);
    unsigned char buf[256];
    pwriter w;
    pw_init(&w, fileno(f), buf, sizeof buf);
    pw_value(&w, m);
    pw_flush(&w);
    assert_int_equal(w.err, 0);
    off_t size = lseek(fileno(f), 0, SEEK_END);
    unsigned char *bytes = malloc((size_t)size);
    assert_non_null(bytes);
    assert_int_equal(pread(fileno(f), bytes, (size_t)size, 0), size);
    preader rd;
    value got;
    pr_init(&rd, bytes, 0, (size_t)size, mem_scratch(), "test");
    if (pr_value(&rd, &got) != 0)
        fail_msg("load: %s", rd.err);
    assert_int_equal(value_map_len(&got), n);
    for (size_t i = 0; i < n; i++)
        assert_same(&value_map_vals(m)[i], &value_map_vals(&got)[i],
                    value_str(&value_map_keys(m)[i], NULL));
    value_release(&got);
    free(bytes);
    fclose(f);
    strata_result_free(&r);
    strata_graph_free(&g);
}

/* A file may hold only what the engine accepts: a date one day past the
   last year is refused with the engine's own message. */
static void test_loader_refuses_what_cypher_refuses(void **state)
{
    (void)state;
    static const unsigned char tags[] = { 11 };   /* FT_DATE (FORMAT.md) */
    int64_t days[] = { tm_days_from_civil(999999999, 12, 31) + 1,
                       tm_days_from_civil(-999999999, 1, 1) - 1 };
    for (size_t i = 0; i < 2; i++) {
        unsigned char bytes[16];
        size_t n = 0;
        bytes[n++] = tags[0];
        uint64_t zz = ((uint64_t)days[i] << 1) ^ (uint64_t)(days[i] >> 63);   /* zigzag */
        do {
            bytes[n++] = (unsigned char)((zz & 0x7f) | (zz > 0x7f ? 0x80 : 0));
            zz >>= 7;
        } while (zz);
        preader r;
        value got;
        pr_init(&r, bytes, 0, n, mem_scratch(), "test");
        assert_int_equal(pr_value(&r, &got), -1);
        assert_int_equal(r.status, STRATA_ECORRUPT);
        assert_non_null(strstr(r.err, "date out of range"));
    }
}

/* ---- 2. the overflow table ------------------------------------------------------- */

/* expect: the single cell's text (toString is applied in the query), or
   "!Detail" for an error with that detail (a null detail: "!"). */
static const struct {
    const char *expr, *expect;
} overflow_cases[] = {
    /* temporal constructors from maps */
    { "datetime({epochSeconds: 9223372036854775807})", "!InvalidArgumentValue" },
    { "datetime({epochSeconds: -9223372036854775807 - 1})", "!InvalidArgumentValue" },
    { "datetime({epochSeconds: 9223372036854775807, nanosecond: 999999999})",
      "!InvalidArgumentValue" },
    { "datetime({epochSeconds: 9223372036854775807, epochMillis: 9223372036854775807})",
      "!InvalidArgumentValue" },
    { "datetime({epochMillis: 9223372036854775807})", "+292278994-08-17T07:12:55.807Z" },
    { "datetime({epochSeconds: 0, nanosecond: 9223372036854775807})",
      "2262-04-11T23:47:16.854775807Z" },
    { "datetime.fromepoch(9223372036854775807, 0)", "!InvalidArgumentValue" },
    { "datetime.fromepoch(0, -9223372036854775807 - 1)", "1677-09-21T00:12:43.145224192Z" },
    { "date({year: 1000000000})", "!InvalidArgumentValue" },
    { "date({year: -9223372036854775807 - 1})", "!InvalidArgumentValue" },
    { "localtime({hour: 9223372036854775807})", "!InvalidArgumentValue" },
    { "time({hour: 1, minute: 1, second: 1, nanosecond: 9223372036854775807})",
      "!InvalidArgumentValue" },
    { "duration({years: 9223372036854775807})", "!InvalidArgumentValue" },
    { "duration({years: 768614336404564650})", "P768614336404564650Y" },
    { "duration({quarters: 9223372036854775807})", "!InvalidArgumentValue" },
    { "duration({weeks: 9223372036854775807})", "!InvalidArgumentValue" },
    { "duration({hours: 9223372036854775807})", "!InvalidArgumentValue" },
    { "duration({minutes: -9223372036854775807})", "!InvalidArgumentValue" },
    { "duration({days: 9223372036854775807, weeks: 1})", "!InvalidArgumentValue" },
    { "duration({seconds: 9223372036854775807, nanoseconds: 1000000000})",
      "!InvalidArgumentValue" },
    { "duration({nanoseconds: -9223372036854775807 - 1})", "PT-2562047H-47M-16.854775808S" },
    { "duration({microseconds: 9223372036854775807})", "PT2562047788H54.775807S" },
    { "duration({years: 1.0e18})", "!InvalidArgumentValue" },
    { "duration({days: 1.0e300})", "!InvalidArgumentValue" },
    { "duration({seconds: 9.3e18})", "!InvalidArgumentValue" },
    /* temporal constructors from strings */
    { "duration('P9223372036854775807Y')", "!InvalidArgumentValue" },
    { "duration('P9223372036854775808D')", "!InvalidArgumentValue" },
    { "duration('P99999999999999999999D')", "!InvalidArgumentValue" },
    { "duration('-P-9223372036854775808D')", "!InvalidArgumentValue" },
    { "duration('P9223372036854775807D')", "P9223372036854775807D" },
    { "duration('P9007199254740993D')", "P9007199254740993D" },   /* 2^53 + 1: exact */
    { "duration('PT9223372036854775807H')", "!InvalidArgumentValue" },
    { "duration('PT9223372036854775807S')", "PT2562047788015215H30M7S" },
    { "duration('P1Y9223372036854775807M')", "!InvalidArgumentValue" },
    { "duration('P0.5Y9223372036854775807M')", "!InvalidArgumentValue" },
    { "date('+1000000000-01-01')", "!InvalidArgumentValue" },
    { "localdatetime('+999999999-12-31T23:59:59.999999999')",
      "+999999999-12-31T23:59:59.999999999" },
    /* arithmetic between temporals and durations */
    { "date('2020-01-01') + duration({days: 9223372036854775807})", "!InvalidArgumentValue" },
    { "date('2020-01-01') - duration({days: -9223372036854775807 - 1})",
      "!InvalidArgumentValue" },
    { "date('2020-01-01') + duration({months: 9223372036854775807})", "!InvalidArgumentValue" },
    { "date('2020-01-01') + duration({seconds: 9223372036854775807})", "!InvalidArgumentValue" },
    { "date('+999999999-12-31') + duration('P1D')", "!InvalidArgumentValue" },
    { "date('-999999999-01-01') - duration('P1D')", "!InvalidArgumentValue" },
    { "localdatetime('2020-01-01T00:00') + duration({seconds: 9223372036854775807})",
      "!InvalidArgumentValue" },
    { "localdatetime('2020-01-01T00:00') + duration({days: 9223372036854775807, "
      "seconds: 9223372036854775807})", "!InvalidArgumentValue" },
    { "datetime('+999999999-12-31T23:59:59.999999999Z') + duration('PT0.000000001S')",
      "!InvalidArgumentValue" },
    { "datetime('2020-01-01T00:00[Europe/Stockholm]') + duration({days: 9223372036854775807})",
      "!InvalidArgumentValue" },
    { "time('12:00Z') + duration({seconds: 9223372036854775807})", "03:30:07Z" },
    { "localtime('00:00') - duration({seconds: -9223372036854775807 - 1})",
      "!InvalidArgumentValue" },
    { "localtime('00:00') + duration({seconds: -9223372036854775807 - 1})", "08:29:52" },
    /* arithmetic between durations */
    { "duration({months: 9223372036854775807}) + duration({months: 1})",
      "!InvalidArgumentValue" },
    { "duration({days: -9223372036854775807 - 1}) - duration({days: 1})",
      "!InvalidArgumentValue" },
    { "duration({seconds: 9223372036854775807, nanoseconds: 500000000}) + "
      "duration({nanoseconds: 500000000})", "!InvalidArgumentValue" },
    { "duration({days: 1}) - duration({days: -9223372036854775807 - 1})",
      "!InvalidArgumentValue" },
    { "duration({days: 9223372036854775807}) * 2", "!InvalidArgumentValue" },
    { "duration({days: 4611686018427387904}) * 2", "!InvalidArgumentValue" },
    { "duration({days: 3}) * 9223372036854775807", "!InvalidArgumentValue" },
    { "duration({days: -9223372036854775807 - 1}) * -1", "!InvalidArgumentValue" },
    { "duration({days: 1}) / 1.0e-19", "!InvalidArgumentValue" },
    { "duration({days: 1}) * (0.0 / 0.0)", "!InvalidArgumentValue" },
    { "duration({days: 1}) * (1.0 / 0.0)", "!InvalidArgumentValue" },
    /* a fractional factor goes through doubles (as Neo4j's): rounded, not wrapped */
    { "duration({days: 9223372036854775807}) / 2", "P4611686018427387904D" },
    { "duration({days: 1}) * 0.5", "PT12H" },
    /* duration.between and its forms, over the whole range */
    { "duration.between(date('-999999999-01-01'), date('+999999999-12-31'))",
      "P1999999998Y11M30D" },
    { "duration.inMonths(date('-999999999-01-01'), date('+999999999-12-31'))",
      "P1999999998Y11M" },
    { "duration.inDays(date('-999999999-01-01'), date('+999999999-12-31'))",
      "P730484999633D" },
    { "duration.inSeconds(datetime('-999999999-01-01T00:00+18:00'), "
      "datetime('+999999999-12-31T23:59:59.999999999-18:00'))",
      "PT17531639991251H59M59.999999999S" },
    { "duration.between(localtime('00:00'), localtime('23:59:59.999999999'))",
      "PT23H59M59.999999999S" },
    /* truncation at the ends */
    { "date.truncate('millennium', date('-999999999-01-01'))", "!InvalidArgumentValue" },
    { "date.truncate('millennium', date('+999999999-12-31'))", "+999999000-01-01" },
    { "date.truncate('weekYear', date('+999999999-12-31'))", "+999999999-01-04" },
    { "datetime.truncate('day', datetime('+999999999-12-31T23:59:59.999999999-18:00'))",
      "+999999999-12-31T00:00-18:00" },
    /* components */
    { "datetime('+999999999-12-31T23:59:59Z').epochMillis", "!IntegerOverflow" },
    { "datetime('-999999999-01-01T00:00Z').epochMillis", "!IntegerOverflow" },
    { "datetime('+999999999-12-31T23:59:59Z').epochSeconds", "31556889832780799" },
    { "duration({seconds: 9223372036854775807}).milliseconds", "!IntegerOverflow" },
    { "duration({seconds: 9223372036854775807}).microseconds", "!IntegerOverflow" },
    { "duration({seconds: -9223372036854775807 - 1}).nanoseconds", "!IntegerOverflow" },
    { "duration({seconds: 9223372036854775}).milliseconds", "9223372036854775000" },
    { "duration({seconds: 9223372036854775807}).seconds", "9223372036854775807" },
    { "duration({months: -9223372036854775807 - 1}).years", "-768614336404564650" },
    /* range() at the int64 extremes */
    { "range(9223372036854775800, 9223372036854775807, 5)",
      "[9223372036854775800, 9223372036854775805]" },
    { "range(-9223372036854775807 - 1, 9223372036854775807, 4611686018427387904)",
      "[-9223372036854775808, -4611686018427387904, 0, 4611686018427387904]" },
    { "range(9223372036854775807, -9223372036854775807 - 1, -9223372036854775807 - 1)",
      "[9223372036854775807, -1]" },
    { "range(-9223372036854775807 - 1, -9223372036854775807 - 1, -1)",
      "[-9223372036854775808]" },
    { "range(9223372036854775806, 9223372036854775807)",
      "[9223372036854775806, 9223372036854775807]" },
    { "range(0, 1, 9223372036854775807)", "[0]" },
    { "range(0, 9223372036854775807)", "!" },
    { "range(9223372036854775807, -9223372036854775807 - 1, -1)", "!" },
    /* integer arithmetic and aggregates */
    { "9223372036854775807 + 1", "!IntegerOverflow" },
    { "-9223372036854775807 - 2", "!IntegerOverflow" },
    { "4611686018427387904 * 2", "!IntegerOverflow" },
    { "(-9223372036854775807 - 1) / -1", "!IntegerOverflow" },
    { "(-9223372036854775807 - 1) % -1", "0" },
    { "-(-9223372036854775807 - 1)", "!IntegerOverflow" },
    { "abs(-9223372036854775807 - 1)", "!IntegerOverflow" },
    { "reduce(s = 0, x IN [9223372036854775807, 1] | s + x)", "!IntegerOverflow" },
};

/* Aggregates need their own query shape. */
static const struct {
    const char *query, *expect;
} aggregate_cases[] = {
    { "UNWIND [9223372036854775807, 1] AS x RETURN toString(sum(x))", "!IntegerOverflow" },
    { "UNWIND [-9223372036854775807 - 1, -1] AS x RETURN toString(sum(x))", "!IntegerOverflow" },
    { "UNWIND [9223372036854775807, -1, 1] AS x RETURN toString(sum(x))",
      "9223372036854775807" },
    { "UNWIND [9223372036854775807, -9223372036854775807 - 1] AS x RETURN toString(sum(x))",
      "-1" },
    { "UNWIND [9223372036854775807, 9223372036854775807] AS x RETURN toString(avg(x))",
      "9.2233720368547758e+18" },
};

/* The cell's text, or "!detail" for an error. */
static void run_text(strata_graph *g, const char *query, char *out, size_t cap)
{
    strata_result *r = NULL;
    strata_query(g, query, NULL, &r);
    assert_non_null(r);
    const strata_value *const *row;
    out[0] = '\0';
    while (strata_result_next(r, &row)) {
        const char *s;
        size_t n;
        if (strata_value_get_string(row[0], &s, &n) == STRATA_OK)
            snprintf(out, cap, "%.*s", (int)n, s);
        else
            snprintf(out, cap, "?not a string");
    }
    const strata_query_error *e = strata_result_error(r);
    if (e)
        snprintf(out, cap, "!%s", e->detail ? e->detail : "");
    strata_result_free(&r);
}

static void test_overflow_table(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    int bad = 0;
    char q[1024], got[512];
    for (size_t i = 0; i < sizeof overflow_cases / sizeof overflow_cases[0]; i++) {
        bool list = strncmp(overflow_cases[i].expr, "range(", 6) == 0;
        /* Lists print through a reduce over their items' text. */
        if (list)
            snprintf(q, sizeof q,
                     "WITH %s AS l RETURN '[' + reduce(s = '', x IN l | s + "
                     "CASE s WHEN '' THEN '' ELSE ', ' END + toString(x)) + ']'",
                     overflow_cases[i].expr);
        else
            snprintf(q, sizeof q, "RETURN toString(%s)", overflow_cases[i].expr);
        run_text(g, q, got, sizeof got);
        if (strcmp(got, overflow_cases[i].expect) != 0) {
            print_error("%s\n  expected %s\n  got      %s\n", overflow_cases[i].expr,
                        overflow_cases[i].expect, got);
            bad++;
        }
    }
    for (size_t i = 0; i < sizeof aggregate_cases / sizeof aggregate_cases[0]; i++) {
        run_text(g, aggregate_cases[i].query, got, sizeof got);
        if (strcmp(got, aggregate_cases[i].expect) != 0) {
            print_error("%s\n  expected %s\n  got      %s\n", aggregate_cases[i].query,
                        aggregate_cases[i].expect, got);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
    strata_graph_free(&g);
}

/* ---- 3. a sweep: every combination either answers or errors, and every
   answer can be saved and loaded ---------------------------------------- */

static const char *const sweep_ints[] = {
    "9223372036854775807", "(-9223372036854775807 - 1)", "-9223372036854775807",
    "4611686018427387904", "3037000500", "-1", "0", "1", "999999999", "1000000000", "86400",
};
static const char *const sweep_floats[] = {
    "1.0e18", "-9.3e18", "0.5", "1.0e-19", "(0.0 / 0.0)", "(1.0 / 0.0)",
};
static const char *const sweep_temporals[] = {
    "date('-999999999-01-01')", "date('+999999999-12-31')", "date('2020-02-29')",
    "localtime('23:59:59.999999999')", "time('00:00+18:00')", "time('23:59:59.999999999-18:00')",
    "localdatetime('+999999999-12-31T23:59:59.999999999')",
    "localdatetime('-999999999-01-01T00:00')", "datetime('-999999999-01-01T00:00+18:00')",
    "datetime('+999999999-12-31T23:59:59.999999999-18:00')",
    "datetime('+999999999-12-31T23:59:59.999999999[Europe/Stockholm]')",
    "datetime('-999999999-01-01T00:00[America/New_York]')",
};
static const char *const sweep_duration_keys[] = {
    "years", "quarters", "months", "weeks", "days", "hours", "minutes", "seconds",
    "milliseconds", "microseconds", "nanoseconds",
};
static const char *const sweep_components[] = {
    "years", "months", "days", "hours", "minutes", "seconds", "milliseconds", "microseconds",
    "nanoseconds", "quartersOfYear", "monthsOfQuarter", "daysOfWeek", "minutesOfHour",
    "secondsOfMinute", "millisecondsOfSecond", "nanosecondsOfSecond", "weeks", "quarters",
    "year", "quarter", "month", "week", "weekYear", "day", "ordinalDay", "dayOfWeek",
    "dayOfQuarter", "hour", "epochSeconds", "epochMillis", "offsetSeconds",
};
static const char *const sweep_units[] = {
    "millennium", "century", "decade", "year", "weekYear", "quarter", "month", "week", "day",
    "hour", "minute", "second", "millisecond", "microsecond",
};
static const char *const sweep_kinds[] = { "date", "localtime", "time", "localdatetime",
                                           "datetime" };
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* snprintf that fails the test rather than cut an expression short. */
static void expr_of(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void expr_of(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < cap);
}

typedef struct sweep {
    strata_graph *g;
    pwriter w;
    FILE *f;
    value *kept;   /* every answer, in the order written */
    size_t n, cap, errors;
} sweep;

/* Runs RETURN expr: an answer is kept and written with the codec; an
   error must be an argument or type error (never out of memory, never a
   crash; under UBSan never an overflow). */
static void sweep_one(sweep *s, const char *expr)
{
    char q[1024];
    snprintf(q, sizeof q, "RETURN %s", expr);
    strata_result *r = NULL;
    strata_query(s->g, q, NULL, &r);
    assert_non_null(r);
    const strata_value *const *row;
    if (strata_result_next(r, &row)) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 1024;
            s->kept = realloc(s->kept, s->cap * sizeof *s->kept);
            assert_non_null(s->kept);
        }
        s->kept[s->n++] = value_retain(row[0]->v);
        pw_value(&s->w, &row[0]->v);
    }
    const strata_query_error *e = strata_result_error(r);
    if (e) {
        if (strcmp(e->code, "ArgumentError") != 0 && strcmp(e->code, "TypeError") != 0)
            fail_msg("%s: %s %s", expr, e->code, e->message);
        s->errors++;
    }
    strata_result_free(&r);
}

static void test_overflow_sweep_saves_every_answer(void **state)
{
    (void)state;
    sweep s = { 0 };
    assert_int_equal(strata_graph_new(&s.g), STRATA_OK);
    s.f = tmpfile();
    assert_non_null(s.f);
    static unsigned char buf[1 << 16];
    pw_init(&s.w, fileno(s.f), buf, sizeof buf);
    char e[1024];
    /* durations from every component at the extremes */
    size_t nd = 0;
    static char durs[COUNT(sweep_duration_keys) * (COUNT(sweep_ints) + COUNT(sweep_floats))][96];
    for (size_t k = 0; k < COUNT(sweep_duration_keys); k++) {
        for (size_t i = 0; i < COUNT(sweep_ints); i++)
            expr_of(durs[nd++], sizeof durs[0], "duration({%s: %s})", sweep_duration_keys[k],
                     sweep_ints[i]);
        for (size_t i = 0; i < COUNT(sweep_floats); i++)
            expr_of(durs[nd++], sizeof durs[0], "duration({%s: %s})", sweep_duration_keys[k],
                     sweep_floats[i]);
    }
    for (size_t d = 0; d < nd; d++) {
        sweep_one(&s, durs[d]);
        for (size_t t = 0; t < COUNT(sweep_temporals); t++)
            for (int op = 0; op < 2; op++) {
                expr_of(e, sizeof e, "%s %c %s", sweep_temporals[t], "+-"[op], durs[d]);
                sweep_one(&s, e);
            }
        for (size_t i = 0; i < COUNT(sweep_ints) + COUNT(sweep_floats); i++)
            for (int op = 0; op < 2; op++) {
                expr_of(e, sizeof e, "%s %c %s", durs[d], "*/"[op],
                         i < COUNT(sweep_ints) ? sweep_ints[i]
                                               : sweep_floats[i - COUNT(sweep_ints)]);
                sweep_one(&s, e);
            }
        for (size_t d2 = d % 7; d2 < nd; d2 += 7)
            for (int op = 0; op < 2; op++) {
                expr_of(e, sizeof e, "%s %c %s", durs[d], "+-"[op], durs[d2]);
                sweep_one(&s, e);
            }
    }
    for (size_t a = 0; a < COUNT(sweep_temporals); a++) {
        for (size_t b = 0; b < COUNT(sweep_temporals); b++) {
            static const char *const modes[] = { "between", "inMonths", "inDays", "inSeconds" };
            for (size_t m = 0; m < COUNT(modes); m++) {
                expr_of(e, sizeof e, "duration.%s(%s, %s)", modes[m], sweep_temporals[a],
                         sweep_temporals[b]);
                sweep_one(&s, e);
            }
        }
        for (size_t c = 0; c < COUNT(sweep_components); c++) {
            expr_of(e, sizeof e, "%s.%s", sweep_temporals[a], sweep_components[c]);
            sweep_one(&s, e);
        }
        for (size_t u = 0; u < COUNT(sweep_units); u++)
            for (size_t k = 0; k < COUNT(sweep_kinds); k++) {
                expr_of(e, sizeof e, "%s.truncate('%s', %s)", sweep_kinds[k], sweep_units[u],
                         sweep_temporals[a]);
                sweep_one(&s, e);
            }
    }
    for (size_t a = 0; a < COUNT(sweep_ints); a++) {
        for (size_t b = 0; b < COUNT(sweep_ints); b++) {
            for (int op = 0; op < 5; op++) {
                expr_of(e, sizeof e, "%s %c %s", sweep_ints[a], "+-*/%"[op], sweep_ints[b]);
                sweep_one(&s, e);
            }
            expr_of(e, sizeof e, "size(range(%s, %s, 4611686018427387904))", sweep_ints[a],
                     sweep_ints[b]);
            sweep_one(&s, e);
            expr_of(e, sizeof e, "datetime({epochSeconds: %s, nanosecond: %s})", sweep_ints[a],
                     sweep_ints[b]);
            sweep_one(&s, e);
            expr_of(e, sizeof e, "datetime({epochMillis: %s, nanosecond: %s})", sweep_ints[a],
                     sweep_ints[b]);
            sweep_one(&s, e);
        }
        for (size_t k = 0; k < COUNT(sweep_duration_keys); k++) {
            expr_of(e, sizeof e, "duration({%s: %s}).%s", sweep_duration_keys[k],
                     sweep_ints[a], sweep_duration_keys[k]);
            sweep_one(&s, e);
        }
        static const char *const fields[] = { "year", "month", "day", "week", "ordinalDay",
                                              "quarter", "hour", "nanosecond" };
        for (size_t fl = 0; fl < COUNT(fields); fl++)
            for (size_t k = 0; k < COUNT(sweep_kinds); k++) {
                expr_of(e, sizeof e, "%s({year: 2000, hour: 1, minute: 1, second: 1, %s: %s})",
                         sweep_kinds[k], fields[fl], sweep_ints[a]);
                sweep_one(&s, e);
            }
    }
    /* Every answer comes back from the file as it went in. */
    pw_flush(&s.w);
    assert_int_equal(s.w.err, 0);
    off_t size = lseek(fileno(s.f), 0, SEEK_END);
    unsigned char *bytes = malloc((size_t)size);
    assert_non_null(bytes);
    assert_int_equal(pread(fileno(s.f), bytes, (size_t)size, 0), size);
    preader rd;
    pr_init(&rd, bytes, 0, (size_t)size, mem_scratch(), "test");
    for (size_t i = 0; i < s.n; i++) {
        value got;
        if (pr_value(&rd, &got) != 0)
            fail_msg("answer %zu: %s", i, rd.err);
        assert_same(&s.kept[i], &got, "sweep");
        value_release(&got);
        value_release(&s.kept[i]);
    }
    print_message("sweep: %zu answers saved and loaded, %zu errors\n", s.n, s.errors);
    /* Both outcomes occur: the sweep is not all errors nor all answers. */
    assert_true(s.n > 1000);
    assert_true(s.errors > 1000);
    free(bytes);
    free(s.kept);
    fclose(s.f);
    strata_graph_free(&s.g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_extremes_save_and_load),
        cmocka_unit_test(test_cypher_extremes_save_and_load),
        cmocka_unit_test(test_map_of_extremes_through_codec),
        cmocka_unit_test(test_loader_refuses_what_cypher_refuses),
        cmocka_unit_test(test_overflow_table),
        cmocka_unit_test(test_overflow_sweep_saves_every_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
