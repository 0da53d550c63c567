/* The public forms of temporal values, durations and paths: every value a
   query returns decodes, rebuilds equal, and bad fields are refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "strata.h"

static strata_graph *g;

static int setup(void **state)
{
    (void)state;
    return strata_graph_new(&g) == STRATA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    strata_graph_free(&g);
    return 0;
}

/* The single value of `RETURN expr`, as a new handle. */
static strata_value *eval(const char *expr)
{
    char text[512];
    snprintf(text, sizeof text, "RETURN %s", expr);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    /* A list of one copies the cell: the result's row is borrowed. */
    strata_value *list = strata_value_list(row, 1);
    strata_value *v = NULL;
    assert_int_equal(strata_value_list_get(list, 0, &v), STRATA_OK);
    strata_value_free(&list);
    strata_result_free(&r);
    return v;
}

static void test_temporals_round_trip(void **state)
{
    (void)state;
    static const char *const exprs[] = {
        "date('2020-02-29')",
        "date('-0044-03-15')",
        "localtime('23:59:59.999999999')",
        "time('12:34:56.789+05:45')",
        "localdatetime('1969-12-31T23:59:59.5')",
        "datetime('2021-03-28T03:30:00[Europe/Stockholm]')",
        "datetime('2021-10-31T02:30:00+02:00[Europe/Stockholm]')",
        "datetime('1999-01-01T00:00:00-08:00')",
    };
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
        strata_value *v = eval(exprs[i]);
        strata_temporal t;
        assert_int_equal(strata_value_get_temporal(v, &t), STRATA_OK);
        assert_int_equal(t.type, strata_value_type(v));
        strata_value *back = NULL;
        assert_int_equal(strata_value_temporal(&t, &back), STRATA_OK);
        if (strata_value_equals(v, back) != 1)
            fail_msg("%s did not rebuild equal", exprs[i]);
        strata_value_free(&back);
        strata_value_free(&v);
    }
}

static void test_temporal_fields(void **state)
{
    (void)state;
    strata_value *v = eval("datetime('2020-06-01T12:00:00[Europe/Stockholm]')");
    strata_temporal t;
    assert_int_equal(strata_value_get_temporal(v, &t), STRATA_OK);
    assert_int_equal(t.type, STRATA_DATETIME);
    assert_int_equal(t.days, 18414);   /* 2020-06-01 */
    assert_int_equal(t.nanos, 12LL * 3600 * 1000000000LL);
    assert_int_equal(t.offset, 7200);
    assert_string_equal(t.zone, "Europe/Stockholm");
    strata_value_free(&v);

    /* A zone name decides the offset: winter time in Stockholm is +01:00. */
    memset(&t, 0, sizeof t);
    t.type = STRATA_DATETIME;
    t.days = 18262;   /* 2020-01-01 */
    t.offset = 7200;  /* ignored */
    strcpy(t.zone, "Europe/Stockholm");
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_OK);
    strata_value *want = eval("datetime('2020-01-01T00:00:00[Europe/Stockholm]')");
    assert_int_equal(strata_value_equals(v, want), 1);
    strata_value_free(&want);
    strata_value_free(&v);
}

static void test_temporal_refusals(void **state)
{
    (void)state;
    strata_value *v = NULL;
    strata_temporal t;
    memset(&t, 0, sizeof t);
    t.type = STRATA_LOCALTIME;
    t.nanos = 86400LL * 1000000000LL;
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_EINVAL);
    t.nanos = -1;
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_EINVAL);
    t.type = STRATA_TIME;
    t.nanos = 0;
    t.offset = 19 * 3600;
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_EINVAL);
    t.type = STRATA_DATETIME;
    t.offset = 0;
    strcpy(t.zone, "Nowhere/Atlantis");
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_EINVAL);
    t.type = STRATA_DATE;
    t.days = INT64_MAX;
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_EINVAL);
    t.type = STRATA_STRING;
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_EINVAL);
    assert_null(v);

    strata_value *s = strata_value_string("x", 1);
    assert_int_equal(strata_value_get_temporal(s, &t), STRATA_ETYPE);
    strata_duration d;
    assert_int_equal(strata_value_get_duration(s, &d), STRATA_ETYPE);
    strata_value_free(&s);
}

static void test_durations(void **state)
{
    (void)state;
    strata_value *v = eval("duration('P1Y2M3DT4H5M6.5S')");
    strata_duration d;
    assert_int_equal(strata_value_get_duration(v, &d), STRATA_OK);
    assert_int_equal(d.months, 14);
    assert_int_equal(d.days, 3);
    assert_int_equal(d.seconds, 4 * 3600 + 5 * 60 + 6);
    assert_int_equal(d.nanos, 500000000);
    strata_value *back = NULL;
    assert_int_equal(strata_value_duration(&d, &back), STRATA_OK);
    assert_int_equal(strata_value_equals(v, back), 1);
    strata_value_free(&back);
    strata_value_free(&v);

    d.nanos = 1000000000;
    assert_int_equal(strata_value_duration(&d, &back), STRATA_EINVAL);
    d.nanos = -1;
    assert_int_equal(strata_value_duration(&d, &back), STRATA_EINVAL);
    assert_null(back);
}

static void test_paths(void **state)
{
    (void)state;
    strata_result *r = NULL;
    assert_int_equal(strata_query(g,
                                  "CREATE p = (a:A)-[:R]->(b:B)<-[:S]-(c:C) "
                                  "RETURN p, id(a), id(b), id(c)",
                                  NULL, &r),
                     STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    const strata_value *p = row[0];
    assert_int_equal(strata_value_type(p), STRATA_PATH);
    assert_int_equal(strata_value_path_len(p), 2);
    for (size_t i = 0; i < 3; i++) {
        strata_id id;
        int64_t want;
        assert_int_equal(strata_value_path_node(p, i, &id), STRATA_OK);
        assert_int_equal(strata_value_get_int(row[1 + i], &want), STRATA_OK);
        assert_int_equal(id, (strata_id)want);
    }
    strata_id rel, start, end;
    assert_int_equal(strata_value_path_rel(p, 1, &rel), STRATA_OK);
    assert_int_equal(strata_rel_info(strata_result_view(r), rel, &start, &end, NULL),
                     STRATA_OK);
    strata_id b, c;
    strata_value_path_node(p, 1, &b);
    strata_value_path_node(p, 2, &c);
    assert_int_equal(start, c);   /* (b)<-[:S]-(c) */
    assert_int_equal(end, b);
    assert_int_equal(strata_value_path_node(p, 3, &rel), STRATA_ENOTFOUND);
    assert_int_equal(strata_value_path_rel(p, 2, &rel), STRATA_ENOTFOUND);
    assert_int_equal(strata_value_path_rel(row[1], 0, &rel), STRATA_ETYPE);
    assert_int_equal(strata_value_path_len(row[1]), 0);
    strata_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_temporals_round_trip),
        cmocka_unit_test(test_temporal_fields),
        cmocka_unit_test(test_temporal_refusals),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
