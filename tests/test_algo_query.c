/* algo.* from Cypher: rows stream into the rest of the query, .write is
   one atomic statement (every allocation failure leaves no property
   written), a view refuses .write, configuration errors are ArgumentError. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "storage/mem.h"
#include "strata.h"

static strata_graph *graph(void)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r;
    assert_int_equal(strata_query(g,
                                  "UNWIND range(0, 59) AS i CREATE (:N {i: i}) WITH count(*) AS c "
                                  "MATCH (a:N), (b:N) WHERE b.i = (a.i * 7 + 3) % 60 AND a.i % 10 <> 9 "
                                  "CREATE (a)-[:R {w: a.i % 5}]->(b)",
                                  NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    return g;
}

/* The single integer a query returns. */
static int64_t count(strata_graph *g, const char *q)
{
    strata_result *r;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t n;
    assert_int_equal(strata_value_get_int(row[0], &n), STRATA_OK);
    strata_result_free(&r);
    return n;
}

static void test_rows_stream_into_the_query(void **state)
{
    (void)state;
    strata_graph *g = graph();
    /* every node reported once; components group like MATCH's */
    assert_int_equal(count(g, "CALL algo.wcc() YIELD node RETURN count(DISTINCT node)"), 60);
    assert_int_equal(count(g, "CALL algo.wcc() YIELD component WITH DISTINCT component "
                              "RETURN count(*)"),
                     count(g, "CALL algo.wcc() YIELD node, component WHERE id(node) = component "
                              "RETURN count(*)"));
    /* the configuration is evaluated per input row */
    assert_int_equal(count(g, "MATCH (s:N) WHERE s.i < 3 CALL algo.bfs({source: s}) "
                              "YIELD node WITH s, count(node) AS reached RETURN count(s)"),
                     3);
    assert_int_equal(count(g, "CALL algo.degree({direction: 'BOTH'}) YIELD score "
                              "RETURN toInteger(sum(score))"),
                     2 * count(g, "MATCH ()-[r]->() RETURN count(r)"));
    strata_graph_free(&g);
}

static void expect_error(strata_graph *g, strata_view *v, const char *q, const char *code,
                         const char *needle)
{
    strata_result *r = NULL;
    strata_status s = g ? strata_query(g, q, NULL, &r) : strata_view_query(v, q, NULL, &r);
    assert_int_not_equal(s, STRATA_OK);
    const strata_query_error *e = strata_result_error(r);
    if (strcmp(e->code, code) != 0 || !strstr(e->message, needle))
        fail_msg("%s: %s %s, expected %s naming '%s'", q, e->code, e->message, code, needle);
    strata_result_free(&r);
}

static void test_errors(void **state)
{
    (void)state;
    strata_graph *g = graph();
    expect_error(g, NULL, "CALL algo.pagerank({damping: 2})", "ArgumentError", "damping");
    expect_error(g, NULL, "CALL algo.pagerank({weight: 3})", "ArgumentError", "weight");
    expect_error(g, NULL, "CALL algo.pagerank(1)", "ArgumentError", "map");
    expect_error(g, NULL, "CALL algo.pagerank({}, {})", "SyntaxError", "one argument");
    expect_error(g, NULL, "CALL algo.wcc() YIELD score RETURN score", "SyntaxError", "score");
    expect_error(g, NULL, "CALL algo.bfs({source: 1000})", "EntityNotFound", "1000");
    strata_result *r;
    assert_int_equal(strata_query(g, "MATCH (:N {i: 20})-[r]->() SET r.w = -0.5", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    expect_error(g, NULL,
                 "MATCH (s:N {i: 0}) CALL algo.dijkstra({source: s, weight: 'w'}) "
                 "YIELD node RETURN node",
                 "ArgumentError", "negative");
    strata_graph_free(&g);
}

static void test_write_is_atomic(void **state)
{
    (void)state;
    /* the plan cache keeps each statement's text: scratch bytes are
       compared once the graph (and its cache) is freed */
    size_t base = mem_ctx_bytes(mem_scratch());
    strata_graph *g = graph();
    long k;
    for (k = 1;; k++) {
        strata_result *r = NULL;
        mem_fail_at(k);
        strata_status s = strata_query(g, "CALL algo.pagerank.write({property: 'pr'})", NULL, &r);
        bool failed = mem_fail_count() >= k;
        mem_fail_clear();
        if (!failed) {
            assert_int_equal(s, STRATA_OK);
            strata_result_free(&r);
            break;
        }
        assert_int_not_equal(s, STRATA_OK);
        if (r)
            assert_string_equal(strata_result_error(r)->code, "OutOfMemory");
        strata_result_free(&r);
        assert_int_equal(count(g, "MATCH (n) WHERE n.pr IS NOT NULL RETURN count(n)"), 0);
        assert_true(k < 100000);
    }
    assert_true(k > 1);
    assert_int_equal(count(g, "MATCH (n) WHERE n.pr > 0 RETURN count(n)"), 60);
    assert_int_equal(count(g, "MATCH (n) RETURN toInteger(round(sum(n.pr) * 1000))"), 1000);

    /* a view reads only */
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    expect_error(NULL, v, "CALL algo.wcc.write({property: 'c'})", "SemanticError", "only reads");
    strata_view_release(&v);
    expect_error(g, NULL, "CALL algo.wcc.write({})", "ArgumentError", "property");
    strata_graph_free(&g);
    assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_stream_into_the_query),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_write_is_atomic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
