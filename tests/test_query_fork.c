/* The seed project's founding case, through Cypher: a query result holds
   a view, so a write while the result is open must fork — and cost what it
   changes, never a copy of the graph (docs/ARCHITECTURE.md).  Asserted on the
   copy counter (storage/mem.h), not on timings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "storage/mem.h"
#include "strata.h"

#define NODES 10000

static void run(strata_graph *g, const char *q)
{
    strata_result *r;
    assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    strata_result_free(&r);
}

static void test_write_under_open_result(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 10000) AS i CREATE (:Item {k: i, v: 0})");
    run(g, "CREATE INDEX FOR (n:Item) ON (n.k)");

    /* rows = query(...): the result keeps a view of the graph. */
    strata_result *rows;
    assert_int_equal(strata_query(g, "MATCH (n:Item) WHERE n.k <= 3 RETURN n.k, n.v", NULL,
                                  &rows),
                     STRATA_OK);
    uint64_t before = mem_copied_entries();
    strata_result *w;
    assert_int_equal(strata_query(g, "MATCH (n:Item {k: 2}) SET n.v = 1", NULL, &w),
                     STRATA_OK);
    strata_result_free(&w);
    uint64_t copied = mem_copied_entries() - before;
    print_message("entries copied by one SET under an open result over %d nodes: %llu\n",
                  NODES, (unsigned long long)copied);
    assert_true(copied > 0);      /* it forked: the result's view is shared */
    assert_true(copied < 400);    /* a few paths, never the graph (~10^4) */
    assert_true(strata_is_forked(g));

    /* The open result still reads the state it was taken at. */
    const strata_value *const *row;
    int seen = 0;
    while (strata_result_next(rows, &row)) {
        int64_t v;
        assert_int_equal(strata_value_get_int(row[1], &v), STRATA_OK);
        assert_int_equal(v, 0);
        seen++;
    }
    assert_int_equal(seen, 3);
    strata_result_free(&rows);

    /* With nothing held any more, the next write folds back and copies
       nothing. */
    run(g, "MATCH (n:Item {k: 3}) SET n.v = 1");
    before = mem_copied_entries();
    run(g, "MATCH (n:Item {k: 4}) SET n.v = 1");
    assert_int_equal(mem_copied_entries() - before, 0);
    assert_false(strata_is_forked(g));
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_under_open_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
