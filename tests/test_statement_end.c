/*
 * strata_query hears strata_statement_end's status.  Ending a statement
 * fails only when rolling it back in place could not finish (which cannot
 * happen by construction; a test hook, txn_test_fail_next_rollback, makes
 * it happen): the transaction around the statement is then dropped, and
 * the query must say so — both when the statement failed for its own
 * reason (the note is added to that error) and when it was rolled back by
 * design (EXPLAIN, which must then fail rather than report success).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/graph_impl.h"
#include "strata.h"

static strata_status query(strata_graph *g, const char *text, char *msg, size_t cap)
{
    strata_result *r = NULL;
    strata_status s = strata_query(g, text, NULL, &r);
    const strata_query_error *e = strata_result_error(r);
    snprintf(msg, cap, "%s", e ? e->message : "");
    strata_result_free(&r);
    return s;
}

static uint64_t nodes(strata_graph *g)
{
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    uint64_t n = strata_node_count(v);
    strata_view_release(&v);
    return n;
}

static void test_failed_statement_reports_dropped_transaction(void **state)
{
    (void)state;
    strata_graph *g;
    char msg[512];
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(strata_begin(g), STRATA_OK);
    assert_int_equal(query(g, "CREATE (:Kept)", msg, sizeof msg), STRATA_OK);
    txn_test_fail_next_rollback();
    assert_int_not_equal(query(g, "CREATE (:Gone) WITH 1 AS one RETURN 1 / 0", msg, sizeof msg),
                         STRATA_OK);
    /* the statement's own error first, then what its rollback did */
    assert_non_null(strstr(msg, "division by zero"));
    assert_non_null(strstr(msg, "the transaction was rolled back"));
    assert_false(strata_in_transaction(g));
    assert_int_equal(nodes(g), 0);
    strata_graph_free(&g);
}

static void test_explain_reports_dropped_transaction(void **state)
{
    (void)state;
    strata_graph *g;
    char msg[512];
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(strata_begin(g), STRATA_OK);
    assert_int_equal(query(g, "CREATE (:Kept)", msg, sizeof msg), STRATA_OK);
    txn_test_fail_next_rollback();
    strata_status s = query(g, "EXPLAIN CREATE (:X)", msg, sizeof msg);
    assert_int_equal(s, STRATA_ENOMEM);
    assert_non_null(strstr(msg, "the transaction was rolled back"));
    assert_false(strata_in_transaction(g));
    assert_int_equal(nodes(g), 0);
    /* the graph goes on */
    assert_int_equal(query(g, "CREATE (:After)", msg, sizeof msg), STRATA_OK);
    assert_int_equal(nodes(g), 1);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_statement_reports_dropped_transaction),
        cmocka_unit_test(test_explain_reports_dropped_transaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
