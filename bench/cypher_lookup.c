/*
 * cypher_lookup — a point lookup through Cypher, end to end:
 *   MATCH (n:Item {key: $k}) RETURN n.v
 * over N nodes with a unique index on key, through strata_query with a
 * parameter map, timed per query (parse, plan, run, read the row, free).
 *
 *   cypher_lookup [--nodes N] [--queries Q] [--quick]
 *
 * For scale it also times the same lookup through the direct API
 * (strata_index_get + strata_node_read).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata.h>

#define BENCH_NAME "cypher_lookup"
#include "bench_util.h"

int main(int argc, char **argv)
{
    long n = 100000, queries = 200000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            queries = atol(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            n = 10000, queries = 20000;
        else
            fail("usage: cypher_lookup [--nodes N] [--queries Q] [--quick]");
    }
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK || n < 1 || queries < 1)
        fail("bad arguments or out of memory");
    strata_result *r;
    char text[160];
    snprintf(text, sizeof text,
             "UNWIND range(0, %ld) AS i CREATE (:Item {key: i, v: 'value ' + toString(i)})",
             n - 1);
    STRATA_OK_G(g, strata_query(g, text, NULL, &r));
    strata_result_free(&r);
    STRATA_OK_G(g, strata_query(g, "CREATE CONSTRAINT FOR (n:Item) REQUIRE n.key IS UNIQUE",
                                NULL, &r));
    strata_result_free(&r);

    const char *q = "MATCH (n:Item {key: $k}) RETURN n.v";
    const char *names[] = { "k" };
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    double *t = malloc(sizeof(double) * (size_t)queries);
    for (long i = 0; i < queries; i++) {
        strata_value *k = strata_value_int((int64_t)(xorshift(&seed) % (uint64_t)n));
        const strata_value *vals[] = { k };
        strata_value *params = strata_value_map(names, vals, 1);
        double t0 = now_us();
        STRATA_OK_G(g, strata_query(g, q, params, &r));
        const strata_value *const *row;
        if (!strata_result_next(r, &row) || strata_value_type(row[0]) != STRATA_STRING)
            fail("lookup %ld found nothing", i);
        strata_result_free(&r);
        t[i] = now_us() - t0;
        strata_value_free(&params);
        strata_value_free(&k);
    }
    stats s = summarise(t, (int)queries);
    printf("Cypher point lookup (%ld nodes, unique index, parameter): mean %.2f us, median "
           "%.2f us, worst %.1f us\n", n, s.mean, s.median, s.worst);

    /* The same lookup through the direct API, for scale. */
    strata_view *view;
    strata_index idx = 0;
    strata_token vkey;
    STRATA_OK_G(g, strata_snapshot(g, &view));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "v", &vkey));
    strata_value *into = strata_value_null();
    double t0 = now_us();
    for (long i = 0; i < queries; i++) {
        strata_value *k = strata_value_int((int64_t)(xorshift(&seed) % (uint64_t)n));
        const strata_value *key[] = { k };
        strata_id id;
        STRATA_OK_V(view, strata_index_get(view, idx, key, 1, &id));
        STRATA_OK_V(view, strata_node_read(view, id, vkey, into));
        strata_value_free(&k);
    }
    printf("direct API (strata_index_get + strata_node_read): %.2f us per lookup\n",
           (now_us() - t0) / queries);
    strata_value_free(&into);
    strata_view_release(&view);
    free(t);
    strata_graph_free(&g);
    return 0;
}
