/* strata_view_eval: exactly one expression, evaluated read-only on a view.
   Anything more than one expression is a SyntaxError positioned in the
   text and leaves the graph untouched; errors at run time are positioned
   in the text too; the view's state is what is read; out of memory at
   any allocation is an error, never a leak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "storage/mem.h"
#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    strata_result_free(&r);
}

static int64_t node_count(strata_graph *g)
{
    strata_result *r = NULL;
    const strata_value *const *row;
    int64_t n = -1;
    assert_int_equal(strata_query(g, "MATCH (n) RETURN count(n)", NULL, &r), STRATA_OK);
    assert_true(strata_result_next(r, &row));
    assert_int_equal(strata_value_get_int(row[0], &n), STRATA_OK);
    strata_result_free(&r);
    return n;
}

/* The one integer text evaluates to on v. */
static int64_t eval_int(strata_view *v, const char *text, const strata_value *params)
{
    strata_result *r = NULL;
    const strata_value *const *row;
    const char *const *cols;
    int64_t i = 0;
    assert_int_equal(strata_view_eval(v, text, params, &r), STRATA_OK);
    assert_int_equal(strata_result_columns(r, &cols), 1);
    assert_string_equal(cols[0], "value");
    assert_true(strata_result_next(r, &row));
    assert_int_equal(strata_value_get_int(row[0], &i), STRATA_OK);
    assert_false(strata_result_next(r, &row));
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    return i;
}

/* The error text gives on v: code, line and column checked. */
static void eval_fails(strata_view *v, const char *text, const char *code, uint32_t line,
                       uint32_t column)
{
    strata_result *r = NULL;
    assert_int_not_equal(strata_view_eval(v, text, NULL, &r), STRATA_OK);
    assert_non_null(r);
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    assert_string_equal(e->code, code);
    assert_int_equal(e->line, line);
    assert_int_equal(e->column, column);
    strata_result_free(&r);
}

static void test_one_expression(void **state)
{
    (void)state;
    strata_graph *g;
    strata_view *v = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE (:N)-[:R]->(:M), (:N)-[:R]->(:M)");
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_value *two = strata_value_int(2);
    const char *name = "a";
    strata_value *params = strata_value_map(&name, (const strata_value *const *)&two, 1);
    assert_int_equal(eval_int(v, "1 + $a", params), 3);
    assert_int_equal(eval_int(v, "size([(n:N)-->() | n]) // a comment after it", NULL), 2);
    /* more than one expression: a SyntaxError at what follows it */
    eval_fails(v, "1 AS c UNION ALL MATCH (n) DETACH DELETE n RETURN 1 AS c", "SyntaxError",
               1, 3);
    eval_fails(v, "1, 2", "SyntaxError", 1, 2);
    eval_fails(v, "1; MATCH (n) DELETE n", "SyntaxError", 1, 2);
    eval_fails(v, "", "SyntaxError", 1, 1);
    eval_fails(v, "1 /* never closed", "SyntaxError", 1, 3);
    /* a run-time error where the text has it */
    eval_fails(v, "1 +\n  1 / 0", "ArgumentError", 2, 3);
    assert_int_equal(node_count(g), 4);
    strata_value_free(&params);
    strata_value_free(&two);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* The view's state, not the writer's: a later write does not show. */
static void test_reads_the_view(void **state)
{
    (void)state;
    strata_graph *g;
    strata_view *v = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE (:N)-[:R]->(:M)");
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    run(g, "CREATE (:N)-[:R]->(:M)");
    assert_int_equal(eval_int(v, "size([(n:N)-->() | n])", NULL), 1);
    strata_result *r = NULL;
    assert_int_equal(strata_view_eval(NULL, "1", NULL, &r), STRATA_EINVAL);
    assert_int_equal(strata_view_eval(v, NULL, NULL, &r), STRATA_EINVAL);
    assert_int_equal(strata_view_eval(v, "1", NULL, NULL), STRATA_EINVAL);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* Each allocation in turn fails: an error (or a failed result), nothing
   left allocated, until the evaluation goes through. */
static void test_out_of_memory(void **state)
{
    (void)state;
    strata_graph *g;
    strata_view *v = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE (:N {k: 'x'})-[:R]->(:M)");
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    /* warm the plan cache and the catalogs the way the sweep finds them */
    assert_int_equal(eval_int(v, "size([(n:N)-->() | n.k]) + 1", NULL), 2);
    size_t base = mem_ctx_bytes(mem_scratch());
    bool done = false;
    for (long k = 1; !done && k < 10000; k++) {
        strata_result *r = NULL;
        mem_fail_at(k);
        strata_status st = strata_view_eval(v, "size([(n:N)-->() | n.k]) + 1", NULL, &r);
        const strata_value *const *row;
        bool got = st == STRATA_OK && strata_result_next(r, &row);
        mem_fail_clear();
        if (got && !strata_result_error(r)) {
            int64_t i = 0;
            assert_int_equal(strata_value_get_int(row[0], &i), STRATA_OK);
            assert_int_equal(i, 2);
            done = true;
        } else if (r) {
            assert_non_null(strata_result_error(r));
        } else {
            assert_int_equal(st, STRATA_ENOMEM);
        }
        strata_result_free(&r);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
    }
    assert_true(done);
    strata_view_release(&v);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_expression),
        cmocka_unit_test(test_reads_the_view),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
