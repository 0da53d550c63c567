/* The adjacency an algorithm run reads from a view (algo/csr.c), seen
   through degree, whose answer is each row's length: a relationship type
   listed twice selects it once; an end outside the selected labels is
   dropped even when the selected nodes are every id up to the largest;
   each direction counts what the graph holds, self-loops included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "strata.h"

/* node id -> degree, from a run of degree with config cfg (consumed). */
static void degrees(strata_view *v, strata_value *cfg, double *out, size_t n)
{
    strata_algo_result *r = NULL;
    assert_int_equal(strata_algo_run(v, "degree", cfg, &r), STRATA_OK);
    for (size_t i = 0; i < n; i++)
        out[i] = -1;
    const strata_id *nodes = strata_algo_result_nodes(r);
    const double *vals = strata_algo_result_values(r);
    for (size_t i = 0; i < strata_algo_result_rows(r); i++) {
        assert_true(nodes[i] < n);
        out[nodes[i]] = vals[i];
    }
    strata_algo_result_free(&r);
    strata_value_free(&cfg);
}

static strata_value *config1(const char *key, strata_value *val)
{
    const char *keys[1] = {key};
    strata_value *m = strata_value_map(keys, (const strata_value *const *)&val, 1);
    strata_value_free(&val);
    assert_non_null(m);
    return m;
}

static strata_value *string_list(const char *a, const char *b)
{
    strata_value *items[2] = {strata_value_string(a, strlen(a)), strata_value_string(b, strlen(b))};
    strata_value *l = strata_value_list((const strata_value *const *)items, 2);
    strata_value_free(&items[0]);
    strata_value_free(&items[1]);
    assert_non_null(l);
    return l;
}

/* 0 -R-> 1, 0 -R-> 1, 1 -S-> 2, 2 -R-> 2 (a self-loop), 2 -R-> 0 */
static strata_graph *small_graph(void)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token r, s;
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &r), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "S", &s), STRATA_OK);
    for (int i = 0; i < 3; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, NULL, 0, &id), STRATA_OK);
    }
    const strata_id ends[][2] = {{0, 1}, {0, 1}, {1, 2}, {2, 2}, {2, 0}};
    for (size_t i = 0; i < 5; i++) {
        strata_id rel;
        assert_int_equal(strata_rel_create(g, ends[i][0], ends[i][1], i == 2 ? s : r, &rel),
                         STRATA_OK);
    }
    return g;
}

static void test_type_listed_twice_counts_once(void **state)
{
    (void)state;
    strata_graph *g = small_graph();
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    double once[3], twice[3];
    degrees(v, config1("types", strata_value_string("R", 1)), once, 3);
    degrees(v, config1("types", string_list("R", "R")), twice, 3);
    assert_memory_equal(once, twice, sizeof once);
    assert_true(once[0] == 2 && once[1] == 0 && once[2] == 2);
    /* two types: every relationship once */
    degrees(v, config1("types", string_list("S", "R")), twice, 3);
    assert_true(twice[0] == 2 && twice[1] == 1 && twice[2] == 2);
    strata_view_release(&v);
    strata_graph_free(&g);
}

static void test_directions(void **state)
{
    (void)state;
    strata_graph *g = small_graph();
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    double d[3];
    degrees(v, config1("direction", strata_value_string("OUT", 3)), d, 3);
    assert_true(d[0] == 2 && d[1] == 1 && d[2] == 2);
    degrees(v, config1("direction", strata_value_string("IN", 2)), d, 3);
    assert_true(d[0] == 1 && d[1] == 2 && d[2] == 2);
    /* BOTH: a self-loop twice at its node */
    degrees(v, config1("direction", strata_value_string("BOTH", 4)), d, 3);
    assert_true(d[0] == 3 && d[1] == 3 && d[2] == 4);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* Nodes 0..2 labelled A, node 3 not: the selected ids are every id up to
   the largest selected one, and relationships to node 3 still do not
   count. */
static void test_end_past_the_selection(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token a, r;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "A", &a), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &r), STRATA_OK);
    for (int i = 0; i < 4; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, &a, i < 3, &id), STRATA_OK);
    }
    strata_id rel;
    assert_int_equal(strata_rel_create(g, 0, 3, r, &rel), STRATA_OK);
    assert_int_equal(strata_rel_create(g, 0, 1, r, &rel), STRATA_OK);
    assert_int_equal(strata_rel_create(g, 3, 2, r, &rel), STRATA_OK);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    double d[4];
    const char *keys[2] = {"labels", "direction"};
    strata_value *vals[2] = {strata_value_string("A", 1), strata_value_string("BOTH", 4)};
    strata_value *cfg = strata_value_map(keys, (const strata_value *const *)vals, 2);
    strata_value_free(&vals[0]);
    strata_value_free(&vals[1]);
    degrees(v, cfg, d, 4);
    assert_true(d[0] == 1 && d[1] == 1 && d[2] == 0 && d[3] == -1);
    strata_view_release(&v);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_listed_twice_counts_once),
        cmocka_unit_test(test_directions),
        cmocka_unit_test(test_end_past_the_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
