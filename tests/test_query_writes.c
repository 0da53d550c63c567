/* strata_query_writes: which statements a view would refuse, parsed or
   from the plan cache, without running them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "strata.h"

static const struct {
    const char *text;
    bool writes;
} cases[] = {
    {"MATCH (n) RETURN n", false},
    {"UNWIND [1, 2] AS x RETURN x", false},
    {"CALL db.labels()", false},
    {"CALL algo.pagerank({}) YIELD node, score RETURN count(*)", false},
    {"CREATE (n)", true},
    {"MATCH (n) SET n.x = 1", true},
    {"MATCH (n) DETACH DELETE n", true},
    {"MERGE (n:A {k: 1})", true},
    {"MATCH (n) REMOVE n:A", true},
    {"RETURN 1 AS x UNION CREATE (n) RETURN 2 AS x", true},
    {"EXPLAIN CREATE (n)", true},
    {"CREATE INDEX FOR (n:A) ON (n.k)", true},
    {"CALL algo.pagerank.write({property: 'pr'})", true},
};

static void test_statements(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    /* twice: parsed the first time; then from the cache, for those a query ran */
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            bool writes = !cases[i].writes;
            assert_int_equal(strata_query_writes(g, cases[i].text, &writes), STRATA_OK);
            if (writes != cases[i].writes)
                fail_msg("%s: writes %d", cases[i].text, writes);
            if (round == 0 && !cases[i].writes) {
                strata_result *r = NULL;
                assert_int_equal(strata_query(g, cases[i].text, NULL, &r), STRATA_OK);
                strata_result_free(&r);
            }
        }
    bool writes;
    assert_int_equal(strata_query_writes(g, "MATCH (n RETURN n", &writes), STRATA_EINVAL);
    assert_int_equal(strata_query_writes(NULL, "RETURN 1", &writes), STRATA_EINVAL);
    assert_int_equal(strata_query_writes(g, NULL, &writes), STRATA_EINVAL);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_statements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
