/* Louvain and Leiden do work in proportion to the graph: on generated
   graphs of one shape, ten times larger, they read about ten times as
   many adjacency entries (counted by the library's test build,
   algo_test_community_reads), not a hundred.  The shape is
   bench/algo.c's: uniform starts, ends skewed towards low ids, so a few
   nodes are hubs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "algo/algo.h"
#include "strata.h"

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static strata_graph *skewed_graph(uint64_t n, uint64_t m)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token type;
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &type), STRATA_OK);
    for (uint64_t i = 0; i < n; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, NULL, 0, &id), STRATA_OK);
    }
    uint64_t seed = 0x2545f4914f6cdd1dull;
    for (uint64_t i = 0; i < m; i++) {
        uint64_t a = next(&seed) % n;
        double u = (double)(next(&seed) % 1000000) / 1e6;
        strata_id rel;
        assert_int_equal(strata_rel_create(g, a, (uint64_t)((double)n * u * u), type, &rel),
                         STRATA_OK);
    }
    return g;
}

/* Entries read by one run of name on n nodes and 10 n relationships. */
static uint64_t reads(const char *name, uint64_t n)
{
    strata_graph *g = skewed_graph(n, 10 * n);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    const char *keys[1] = {"seed"};
    strata_value *seed = strata_value_int(7);
    strata_value *cfg = strata_value_map(keys, (const strata_value *const *)&seed, 1);
    uint64_t before = algo_test_community_reads;
    strata_algo_result *r = NULL;
    assert_int_equal(strata_algo_run(v, name, cfg, &r), STRATA_OK);
    uint64_t used = algo_test_community_reads - before;
    assert_int_equal(strata_algo_result_rows(r), n);
    strata_algo_result_free(&r);
    strata_value_free(&cfg);
    strata_value_free(&seed);
    strata_view_release(&v);
    strata_graph_free(&g);
    return used;
}

static void check_growth(const char *name)
{
    uint64_t small = reads(name, 3000), large = reads(name, 30000);
    double ratio = (double)large / (double)small;
    printf("%s: %llu entries read on 3,000 nodes, %llu on 30,000: %.1fx\n", name,
           (unsigned long long)small, (unsigned long long)large, ratio);
    /* 10x is linear; a few more levels and a longer tail of moves allow
       some more; a pass over every node for each move would be 100x */
    assert_true(ratio < 20);
}

static void test_louvain_grows_with_the_graph(void **state)
{
    (void)state;
    check_growth("louvain");
}

static void test_leiden_grows_with_the_graph(void **state)
{
    (void)state;
    check_growth("leiden");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_louvain_grows_with_the_graph),
        cmocka_unit_test(test_leiden_grows_with_the_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
