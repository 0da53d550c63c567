/* A MATCH that starts from an equality index seek by an integer or a
   string does not check the map entries the seek used again
   (query/op_match.c seek_held_entries): the rows must be those of the
   same graph without the index, whatever mix of values the property
   holds (integers, floats equal to them, strings of their digits,
   booleans, lists, nulls) and however the key is written (literal,
   parameter, expression, several keys, a key repeated in WHERE). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* The ids of the first column's nodes, sorted, as text. */
static void ids(strata_graph *g, const char *text, const strata_value *params, char *out,
                size_t size)
{
    strata_result *r = NULL;
    if (strata_query(g, text, params, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    out[0] = 0;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        int64_t i = -1;
        assert_int_equal(strata_value_get_int(row[0], &i), STRATA_OK);
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%lld,", (long long)i);
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
}

static void build(strata_graph **g, bool indexed)
{
    assert_int_equal(strata_graph_new(g), STRATA_OK);
    if (indexed) {
        run(*g, "CREATE INDEX FOR (n:N) ON (n.k)");
        run(*g, "CREATE INDEX FOR (n:M) ON (n.a, n.b)");
    }
    run(*g, "UNWIND range(0, 29) AS i CREATE (:N {i: i, k: CASE i % 6 WHEN 0 THEN i % 4 "
            "WHEN 1 THEN toFloat(i % 4) WHEN 2 THEN toString(i % 4) WHEN 3 THEN i % 2 = 0 "
            "WHEN 4 THEN [i % 4] ELSE null END})");
    run(*g, "UNWIND range(0, 29) AS i CREATE (:M {i: i, a: i % 3, b: toString(i % 2)})");
    run(*g, "UNWIND range(0, 5) AS i CREATE (:M {i: 100 + i, a: toFloat(i % 3), b: i % 2})");
}

static void test_seek_gives_the_scan_rows(void **state)
{
    (void)state;
    strata_graph *with, *without;
    build(&with, true);
    build(&without, false);
    const char *queries[] = {
        "MATCH (n:N {k: 1}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: 2}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: '3'}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: $p}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: toInteger('2')}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: 1.0}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: true}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: 1, i: 7}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {i: 12, k: 0}) RETURN n.i ORDER BY n.i",
        "MATCH (n:N {k: 1}) WHERE n.k = 1.0 RETURN n.i ORDER BY n.i",
        "MATCH (m:M {a: 1, b: '1'}) RETURN m.i ORDER BY m.i",
        "MATCH (m:M {a: 2, b: 0}) RETURN m.i ORDER BY m.i",
        "MATCH (m:M {b: '0', a: 0}) RETURN m.i ORDER BY m.i",
        "UNWIND [0, 1, '2', 3.0] AS v MATCH (n:N {k: v}) RETURN n.i ORDER BY n.i",
        "MATCH (x:N {i: 1}) MATCH (n:N {k: x.i}) RETURN n.i ORDER BY n.i",
    };
    const char *pk[] = {"p"};
    strata_value *pv = strata_value_int(3);
    const strata_value *pvals[] = {pv};
    strata_value *params = strata_value_map(pk, pvals, 1);
    size_t nonempty = 0;
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        char a[1024], b[1024];
        ids(with, queries[q], params, a, sizeof a);
        ids(without, queries[q], params, b, sizeof b);
        if (strcmp(a, b) != 0)
            fail_msg("%s: %s with the index, %s without", queries[q], a, b);
        nonempty += a[0] != 0;
    }
    assert_true(nonempty >= 10);
    strata_value_free(&params);
    strata_value_free(&pv);
    strata_graph_free(&with);
    strata_graph_free(&without);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seek_gives_the_scan_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
