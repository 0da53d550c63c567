/*
 * A clause's plan text has a fixed room (query/profile.h,
 * PROFILE_PLAN_MAX): a longer plan — a join over many long variable
 * names — ends in "..." so EXPLAIN shows that it was cut, and a short
 * one is whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "strata.h"

/* The plan column of EXPLAIN's first row, copied into out. */
static void first_plan(strata_graph *g, const char *q, char *out, size_t size)
{
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_errmsg(g));
    const char *const *names;
    size_t ncols = strata_result_columns(r, &names), plan = ncols;
    for (size_t c = 0; c < ncols; c++)
        if (strcmp(names[c], "plan") == 0)
            plan = c;
    assert_true(plan < ncols);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    const char *s;
    size_t len;
    assert_int_equal(strata_value_get_string(row[plan], &s, &len), STRATA_OK);
    assert_true(len < size);
    memcpy(out, s, len);
    out[len] = '\0';
    strata_result_free(&r);
}

static void test_long_plan_ends_marked(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char name[64], q[2048], plan[1024];
    memset(name, 'b', 60);
    name[60] = '\0';
    int n = snprintf(q, sizeof q, "EXPLAIN MATCH ");
    for (int i = 1; i <= 9; i++)
        n += snprintf(q + n, sizeof q - n, "(%s%d)-->", name, i);
    snprintf(q + n, sizeof q - n, "(%s1) RETURN count(*)", name);
    first_plan(g, q, plan, sizeof plan);
    size_t len = strlen(plan);
    assert_true(len > 3);
    assert_string_equal(plan + len - 3, "...");

    first_plan(g, "EXPLAIN MATCH (a)-->(b)-->(c)-->(a) RETURN count(*)", plan, sizeof plan);
    assert_null(strstr(plan, "..."));
    assert_non_null(strstr(plan, "Join"));
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_plan_ends_marked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
