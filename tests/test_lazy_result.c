/* A statement that only reads is computed as its result is read: the
   cursor holds a view, memory stays bounded by a batch, an error met late
   ends the reading with the error, the caller's parameters may go at
   once, and writes made while the cursor is open do not show in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "storage/mem.h"
#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    strata_result_free(&r);
}

static int64_t int_of(const strata_value *v)
{
    int64_t i;
    assert_int_equal(strata_value_get_int(v, &i), STRATA_OK);
    return i;
}

static void test_memory_stays_bounded(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 100000) AS i CREATE (:N {i: i})");
    run(g, "MATCH (n:N) RETURN n.i, n.i * 2");   /* its plan cached beforehand */
    size_t base = mem_ctx_bytes(mem_scratch());
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "MATCH (n:N) RETURN n.i, n.i * 2", NULL, &r), STRATA_OK);
    /* 100,000 rows of two values would be 3.2 MB; a batch is far less */
    assert_true(mem_ctx_bytes(mem_scratch()) - base < 256 * 1024);
    const strata_value *const *row;
    int64_t n = 0, sum = 0;
    size_t peak = 0;
    while (strata_result_next(r, &row)) {
        n++;
        sum += int_of(row[0]);
        assert_int_equal(int_of(row[1]), 2 * int_of(row[0]));
        size_t now = mem_ctx_bytes(mem_scratch()) - base;
        peak = now > peak ? now : peak;
    }
    assert_null(strata_result_error(r));
    assert_int_equal(n, 100000);
    assert_int_equal(sum, (int64_t)100000 * 100001 / 2);
    assert_true(peak < 256 * 1024);
    strata_result_free(&r);
    assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
    strata_graph_free(&g);
}

static void test_late_error_ends_the_reading(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "UNWIND range(1, 5000) AS i RETURN 10 / (i - 3000) AS x",
                                  NULL, &r), STRATA_OK);
    int64_t n = 0;
    while (strata_result_next(r, NULL))
        n++;
    assert_int_equal(n, 2999);
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    assert_string_equal(e->code, "ArgumentError");
    assert_string_equal(e->detail, "DivisionByZero");
    assert_false(strata_result_next(r, NULL));   /* stays ended */
    strata_result_free(&r);
    /* an error in the first rows still comes from strata_query */
    assert_int_not_equal(strata_query(g, "UNWIND [1, 0] AS i RETURN 1 / i", NULL, &r), STRATA_OK);
    assert_non_null(strata_result_error(r));
    strata_result_free(&r);
    strata_graph_free(&g);
}

static void test_cursor_reads_its_view(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 2000) AS i CREATE (:N {i: i})");
    const char *names[] = {"min"};
    strata_value *min = strata_value_int(1000);
    const strata_value *vals[] = {min};
    strata_value *params = strata_value_map(names, vals, 1);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "MATCH (n:N) WHERE n.i > $min RETURN n.i", params, &r),
                     STRATA_OK);
    /* the caller's parameters may go at once */
    strata_value_free(&params);
    strata_value_free(&min);
    const strata_value *const *row;
    int64_t n = 0, sum = 0;
    for (; n < 10 && strata_result_next(r, &row); n++)
        sum += int_of(row[0]);
    /* writes while the cursor is open: it keeps reading its own state */
    run(g, "MATCH (n:N) WHERE n.i > 1500 DETACH DELETE n");
    run(g, "MATCH (n:N) SET n.i = -n.i");
    assert_true(strata_is_forked(g));
    while (strata_result_next(r, &row)) {
        sum += int_of(row[0]);
        n++;
    }
    assert_null(strata_result_error(r));
    assert_int_equal(n, 1000);
    assert_int_equal(sum, (int64_t)(1001 + 2000) * 1000 / 2);
    strata_result_free(&r);
    run(g, "CREATE (:After)");      /* the next write folds the copies back */
    assert_false(strata_is_forked(g));
    strata_graph_free(&g);
}

/* Inside a transaction the cursor reads the transaction's state as it was
   when the statement ran, whatever the transaction writes next. */
static void test_cursor_inside_transaction(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(strata_begin(g), STRATA_OK);
    run(g, "UNWIND range(1, 1000) AS i CREATE (:N {i: i})");
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "MATCH (n:N) RETURN n.i", NULL, &r), STRATA_OK);
    const strata_value *const *row;
    int64_t n = 0, sum = 0;
    for (; n < 10 && strata_result_next(r, &row); n++)
        sum += int_of(row[0]);
    run(g, "MATCH (n:N) SET n.i = -n.i");
    run(g, "CREATE (:N {i: 5000})");
    while (strata_result_next(r, &row)) {
        n++;
        sum += int_of(row[0]);
    }
    assert_int_equal(n, 1000);
    assert_int_equal(sum, (int64_t)1000 * 1001 / 2);
    strata_result_free(&r);
    assert_int_equal(strata_rollback(g), STRATA_OK);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_node_count(v), 0);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* A result holds its view, and the view outlives the graph: the rest of
   the result is still read after strata_graph_free. */
static void test_result_outlives_graph(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 3000) AS i CREATE (:N {i: i})");
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "MATCH (n:N) RETURN n.i", NULL, &r), STRATA_OK);
    strata_graph_free(&g);
    int64_t n = 0, sum = 0;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        n++;
        sum += int_of(row[0]);
    }
    assert_null(strata_result_error(r));
    assert_int_equal(n, 3000);
    assert_int_equal(sum, (int64_t)3000 * 3001 / 2);
    strata_result_free(&r);
}

/* A write returns with everything done: its statement cannot wait on a
   reader. */
static void test_writes_run_at_once(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "UNWIND range(1, 1000) AS i CREATE (n:W {i: i}) RETURN n.i",
                                  NULL, &r), STRATA_OK);
    strata_query_stats st;
    strata_result_stats(r, &st);
    assert_int_equal(st.nodes_created, 1000);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_node_count(v), 1000);
    strata_view_release(&v);
    int64_t n = 0;
    while (strata_result_next(r, NULL))
        n++;
    assert_int_equal(n, 1000);
    strata_result_free(&r);
    strata_graph_free(&g);
}

/* Every allocation made while reading fails in turn: the reading ends
   with OutOfMemory and freeing the result gives everything back. */
static void test_allocation_failures_while_reading(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 1500) AS i CREATE (:N {i: i})-[:R]->(:M {i: i})");
    const char *q = "MATCH (n:N)-[:R]->(m) WITH n, m WHERE n.i % 2 = 0 "
                    "UNWIND [1, 2] AS k RETURN n.i, m.i, k";
    run(g, q);   /* its plan cached beforehand */
    size_t base = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        strata_result *r = NULL;
        assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
        mem_fail_at(k);
        int64_t n = 0;
        while (strata_result_next(r, NULL))
            n++;
        bool failed = mem_fail_count() >= k;
        mem_fail_clear();
        const strata_query_error *e = strata_result_error(r);
        if (!failed) {
            assert_null(e);
            assert_int_equal(n, 1500);
            strata_result_free(&r);
            break;
        }
        assert_non_null(e);
        assert_string_equal(e->code, "OutOfMemory");
        strata_result_free(&r);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
    }
    assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_stays_bounded),
        cmocka_unit_test(test_late_error_ends_the_reading),
        cmocka_unit_test(test_cursor_reads_its_view),
        cmocka_unit_test(test_writes_run_at_once),
        cmocka_unit_test(test_result_outlives_graph),
        cmocka_unit_test(test_cursor_inside_transaction),
        cmocka_unit_test(test_allocation_failures_while_reading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
