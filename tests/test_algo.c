/* Graph algorithms through the C API: the cursor and the arrays agree,
   every thread count gives the same answer as one thread, bad
   configurations are EINVAL naming the key, and every allocation failure
   of every algorithm is ENOMEM with nothing leaked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/mem.h"
#include "strata.h"

static strata_graph *random_graph(size_t n, size_t m, uint64_t seed)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label, type, w;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "A", &label), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &type), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "w", &w), STRATA_OK);
    for (size_t i = 0; i < n; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, &label, i % 2, &id), STRATA_OK);
    }
    for (size_t i = 0; i < m; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        strata_id s = (seed >> 33) % n, e = (seed >> 13) % n, rel;
        /* a few hubs, so rows differ in length */
        if (i % 5 == 0)
            e = e % 7;
        assert_int_equal(strata_rel_create(g, s, e, type, &rel), STRATA_OK);
        strata_value *v = strata_value_int((int64_t)(1 + (seed >> 50) % 9));
        assert_int_equal(strata_rel_set(g, rel, w, v), STRATA_OK);
        strata_value_free(&v);
    }
    return g;
}

/* A config map: keys[i] => vals[i] (vals consumed). */
static strata_value *config(const char *const *keys, strata_value **vals, size_t n)
{
    strata_value *m = strata_value_map(keys, (const strata_value *const *)vals, n);
    assert_non_null(m);
    for (size_t i = 0; i < n; i++)
        strata_value_free(&vals[i]);
    return m;
}

static strata_value *with_threads(const char *algo, int threads)
{
    const char *keys[4] = {"threads"};
    strata_value *vals[4] = {strata_value_int(threads)};
    size_t n = 1;
    if (strcmp(algo, "bfs") == 0 || strcmp(algo, "dijkstra") == 0) {
        keys[n] = "source";
        vals[n++] = strata_value_int(0);
    }
    if (strcmp(algo, "dijkstra") == 0 || strcmp(algo, "louvain") == 0 ||
        strcmp(algo, "pagerank") == 0 || strcmp(algo, "degree") == 0) {
        keys[n] = "weight";
        vals[n++] = strata_value_string("w", 1);
    }
    return config(keys, vals, n);
}

static void assert_same(strata_algo_result *a, strata_algo_result *b, bool exact)
{
    size_t rows = strata_algo_result_rows(a), cols = strata_algo_result_columns(a);
    assert_int_equal(rows, strata_algo_result_rows(b));
    assert_memory_equal(strata_algo_result_nodes(a), strata_algo_result_nodes(b),
                        rows * sizeof(strata_id));
    const double *x = strata_algo_result_values(a), *y = strata_algo_result_values(b);
    for (size_t i = 0; i < rows * cols; i++) {
        if (exact)
            assert_memory_equal(&x[i], &y[i], sizeof(double));
        else
            assert_true(fabs(x[i] - y[i]) <= 1e-9 * fmax(1, fabs(x[i])));
    }
}

/* Every algorithm: 1, 2 and 4 threads give the same rows; bit for bit
   except betweenness, whose per-thread sums are added in another order. */
static void test_threads_agree(void **state)
{
    (void)state;
    strata_graph *g = random_graph(5000, 20000, 1);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    for (size_t i = 0; strata_algo_name(i); i++) {
        const char *name = strata_algo_name(i);
        if (strcmp(name, "betweenness") == 0 || strcmp(name, "closeness") == 0)
            continue;   /* O(n m): the small graph below */
        strata_algo_result *one = NULL;
        strata_value *c1 = with_threads(name, 1);
        assert_int_equal(strata_algo_run(v, name, c1, &one), STRATA_OK);
        assert_true(strata_algo_result_rows(one) > 0);
        for (int t = 2; t <= 4; t += 2) {
            strata_algo_result *many = NULL;
            strata_value *cn = with_threads(name, t);
            assert_int_equal(strata_algo_run(v, name, cn, &many), STRATA_OK);
            assert_same(one, many, true);
            strata_algo_result_free(&many);
            strata_value_free(&cn);
        }
        strata_algo_result_free(&one);
        strata_value_free(&c1);
    }
    strata_view_release(&v);
    strata_graph_free(&g);

    g = random_graph(3000, 9000, 2);
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    const char *sweeps[] = {"betweenness", "closeness"};
    for (size_t i = 0; i < 2; i++) {
        strata_algo_result *one = NULL, *two = NULL;
        strata_value *c1 = with_threads(sweeps[i], 1), *c2 = with_threads(sweeps[i], 2);
        assert_int_equal(strata_algo_run(v, sweeps[i], c1, &one), STRATA_OK);
        assert_int_equal(strata_algo_run(v, sweeps[i], c2, &two), STRATA_OK);
        assert_same(one, two, i == 1);
        strata_algo_result_free(&one);
        strata_algo_result_free(&two);
        strata_value_free(&c1);
        strata_value_free(&c2);
    }
    strata_view_release(&v);
    strata_graph_free(&g);
}

static void test_cursor_and_arrays(void **state)
{
    (void)state;
    strata_graph *g = random_graph(100, 300, 3);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_algo_result *r;
    assert_int_equal(strata_algo_run(v, "triangles", NULL, &r), STRATA_OK);
    assert_int_equal(strata_algo_result_columns(r), 2);
    assert_string_equal(strata_algo_result_column(r, 0), "triangles");
    assert_true(strata_algo_result_column_integer(r, 0));
    assert_false(strata_algo_result_column_integer(r, 1));
    assert_null(strata_algo_result_column(r, 2));
    size_t i = 0;
    strata_id node;
    double vals[2];
    while (strata_algo_result_next(r, &node, vals)) {
        assert_int_equal(node, strata_algo_result_nodes(r)[i]);
        assert_memory_equal(vals, strata_algo_result_values(r) + 2 * i, sizeof vals);
        i++;
    }
    assert_int_equal(i, 100);
    strata_algo_result_free(&r);
    assert_null(r);

    /* labels select nodes: every row carries label A (odd ids) */
    const char *keys[] = {"labels"};
    strata_value *a = strata_value_string("A", 1);
    strata_value *list = strata_value_list((const strata_value *const *)&a, 1);
    strata_value_free(&a);
    strata_value *cfg = config(keys, &list, 1);
    assert_int_equal(strata_algo_run(v, "wcc", cfg, &r), STRATA_OK);
    assert_int_equal(strata_algo_result_rows(r), 50);
    for (size_t k = 0; k < 50; k++)
        assert_int_equal(strata_algo_result_nodes(r)[k] % 2, 1);
    strata_algo_result_free(&r);
    strata_value_free(&cfg);
    strata_view_release(&v);
    strata_graph_free(&g);
}

static void expect_einval(strata_view *v, const char *algo, const char *key, strata_value *val,
                          const char *needle)
{
    strata_value *cfg = config(&key, &val, 1);
    strata_algo_result *r = (strata_algo_result *)1;
    assert_int_equal(strata_algo_run(v, algo, cfg, &r), STRATA_EINVAL);
    assert_null(r);
    if (!strstr(strata_view_errmsg(v), needle))
        fail_msg("'%s' does not name '%s'", strata_view_errmsg(v), needle);
    strata_value_free(&cfg);
}

static void test_bad_configuration(void **state)
{
    (void)state;
    strata_graph *g = random_graph(10, 20, 4);
    strata_token w;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "w", &w), STRATA_OK);
    strata_value *neg = strata_value_float(-1.5);
    assert_int_equal(strata_rel_set(g, 3, w, neg), STRATA_OK);
    strata_value_free(&neg);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    expect_einval(v, "pagerank", "dampening", strata_value_float(0.5), "dampening");
    expect_einval(v, "pagerank", "damping", strata_value_float(1.5), "damping");
    expect_einval(v, "pagerank", "iterations", strata_value_string("x", 1), "iterations");
    expect_einval(v, "wcc", "seed", strata_value_int(1), "seed");
    expect_einval(v, "wcc", "direction", strata_value_string("UP", 2), "direction");
    expect_einval(v, "degree", "threads", strata_value_int(0), "threads");
    expect_einval(v, "bfs", "threads", strata_value_int(1), "source");

    const char *keys[] = {"source", "weight"};
    strata_value *vals[] = {strata_value_int(0), strata_value_string("w", 1)};
    strata_value *cfg = config(keys, vals, 2);
    strata_algo_result *r;
    assert_int_equal(strata_algo_run(v, "dijkstra", cfg, &r), STRATA_EINVAL);
    assert_non_null(strstr(strata_view_errmsg(v), "negative"));
    strata_value_free(&cfg);

    strata_value *missing = strata_value_int(12345);
    const char *src = "source";
    cfg = config(&src, &missing, 1);
    assert_int_equal(strata_algo_run(v, "bfs", cfg, &r), STRATA_ENOTFOUND);
    strata_value_free(&cfg);
    assert_int_equal(strata_algo_run(v, "nosuch", NULL, &r), STRATA_EINVAL);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* Fail the 1st, 2nd, ... allocation of each algorithm's run until it
   succeeds: every failure is ENOMEM with no result and no byte leaked. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g = random_graph(300, 900, 5);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    for (size_t i = 0; strata_algo_name(i); i++) {
        const char *name = strata_algo_name(i);
        strata_value *cfg = with_threads(name, 2);
        size_t base = mem_ctx_bytes(mem_scratch());
        for (long k = 1;; k++) {
            strata_algo_result *r = NULL;
            mem_fail_at(k);
            strata_status s = strata_algo_run(v, name, cfg, &r);
            bool failed = mem_fail_count() >= k;
            mem_fail_clear();
            if (failed) {
                if (s != STRATA_ENOMEM)
                    fail_msg("%s, allocation %ld: status %d (%s)", name, k, s,
                             strata_view_errmsg(v));
                assert_null(r);
                assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
                continue;
            }
            assert_int_equal(s, STRATA_OK);
            assert_true(strata_algo_result_rows(r) > 0);
            strata_algo_result_free(&r);
            assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
            break;
        }
        strata_value_free(&cfg);
    }
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* An empty graph, and a selection of no node or no relationship: every
   algorithm answers (no rows, or every node alone), none fails. */
static void test_empty_selections(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    for (size_t i = 0; strata_algo_name(i); i++) {
        const char *name = strata_algo_name(i);
        if (strcmp(name, "bfs") == 0 || strcmp(name, "dijkstra") == 0)
            continue;   /* they need a source node */
        strata_algo_result *r;
        assert_int_equal(strata_algo_run(v, name, NULL, &r), STRATA_OK);
        assert_int_equal(strata_algo_result_rows(r), 0);
        strata_algo_result_free(&r);
    }
    strata_view_release(&v);
    strata_graph_free(&g);

    g = random_graph(50, 100, 6);
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    const char *key = "types";
    for (size_t i = 0; strata_algo_name(i); i++) {
        const char *name = strata_algo_name(i);
        strata_value *none = strata_value_string("NOPE", 4);
        strata_value *cfg = strata_value_map(&key, (const strata_value *const *)&none, 1);
        strata_value_free(&none);
        strata_algo_result *r;
        strata_status s = strata_algo_run(v, name, cfg, &r);
        if (strcmp(name, "bfs") == 0 || strcmp(name, "dijkstra") == 0) {
            assert_int_equal(s, STRATA_EINVAL);   /* no source */
        } else {
            assert_int_equal(s, STRATA_OK);
            assert_int_equal(strata_algo_result_rows(r), 50);
            strata_algo_result_free(&r);
        }
        strata_value_free(&cfg);
    }
    strata_view_release(&v);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_cursor_and_arrays),
        cmocka_unit_test(test_bad_configuration),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_empty_selections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
