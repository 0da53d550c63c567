/*
 * shortest_path: shortestPath / allShortestPaths between random pairs of a
 * random graph (docs/BENCHMARKS.md, paths).
 *
 *   shortest_path [--nodes N] [--rels M] [--pairs P] [--seed S]
 *
 * Builds N nodes (:N {i}) and M relationships :R between random node pairs
 * (xorshift64) through the C API, a unique constraint on :N(i), then times
 * each query below for P random pairs (the same pairs for every query),
 * the whole strata_query call plus reading every row.  Defaults: 1,000,000
 * nodes, 10,000,000 relationships (about 1 GB and a few minutes to build),
 * 100 pairs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "shortest_path"
#include "bench_util.h"

static const struct {
    const char *name, *text;
} queries[] = {
    {"shortestPath ->", "MATCH (a:N {i: $a}), (b:N {i: $b}) "
                        "MATCH p = shortestPath((a)-[:R*]->(b)) RETURN length(p)"},
    {"shortestPath -", "MATCH (a:N {i: $a}), (b:N {i: $b}) "
                       "MATCH p = shortestPath((a)-[*]-(b)) RETURN length(p)"},
    {"allShortestPaths ->", "MATCH (a:N {i: $a}), (b:N {i: $b}) "
                            "MATCH p = allShortestPaths((a)-[:R*]->(b)) RETURN length(p)"},
    {"shortestPath -> *..4", "MATCH (a:N {i: $a}), (b:N {i: $b}) "
                             "MATCH p = shortestPath((a)-[:R*..4]->(b)) RETURN length(p)"},
};

static void usage(void)
{
    fprintf(stderr, "usage: shortest_path [--nodes N] [--rels M] [--pairs P] [--seed S]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t nodes = 1000000, rels = 10000000, seed = 0x9e3779b97f4a7c15ull;
    int pairs = 100;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--nodes"))
            nodes = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--rels"))
            rels = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--pairs"))
            pairs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10) | 1;
        else
            usage();
    }
    if (nodes == 0 || pairs <= 0)
        usage();
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK)
        fail("out of memory");
    strata_token label, type, key;
    STRATA_OK_G(g, strata_token_intern(g, STRATA_LABEL, "N", &label));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_RELTYPE, "R", &type));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "i", &key));

    double t0 = now_ms();
    strata_id *ids = malloc(nodes * sizeof *ids);
    if (!ids)
        fail("out of memory");
    STRATA_OK_G(g, strata_begin(g));
    for (uint64_t i = 0; i < nodes; i++) {
        strata_value *v = strata_value_int((int64_t)i);
        STRATA_OK_G(g, strata_node_create(g, &label, 1, &ids[i]));
        STRATA_OK_G(g, strata_node_set(g, ids[i], key, v));
        strata_value_free(&v);
    }
    for (uint64_t i = 0; i < rels; i++) {
        strata_id r;
        uint64_t a = xorshift(&seed) % nodes, b = xorshift(&seed) % nodes;
        STRATA_OK_G(g, strata_rel_create(g, ids[a], ids[b], type, &r));
    }
    STRATA_OK_G(g, strata_commit(g));
    strata_result *res = NULL;
    STRATA_OK_G(g, strata_query(g, "CREATE CONSTRAINT n_i FOR (n:N) REQUIRE n.i IS UNIQUE",
                                NULL, &res));
    strata_result_free(&res);
    double t1 = now_ms();
    printf("graph: %llu nodes, %llu relationships, built in %.1f s, %.0f MiB resident\n",
           (unsigned long long)nodes, (unsigned long long)rels, (t1 - t0) / 1e3,
           rss_kib() / 1024.0);

    int64_t *from = malloc((size_t)pairs * sizeof *from), *to = malloc((size_t)pairs * sizeof *to);
    double *t = malloc((size_t)pairs * sizeof *t);
    if (!from || !to || !t)
        fail("out of memory");
    for (int k = 0; k < pairs; k++) {
        from[k] = (int64_t)(xorshift(&seed) % nodes);
        to[k] = (int64_t)(xorshift(&seed) % nodes);
    }
    const char *names[2] = {"a", "b"};
    printf("%-22s %8s %8s %8s %8s %10s\n", "query", "found", "mean_ms", "median", "worst",
           "rows");
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        int found = 0;
        uint64_t nrows = 0;
        double lensum = 0;
        for (int k = 0; k < pairs; k++) {
            strata_value *vals[2] = {strata_value_int(from[k]), strata_value_int(to[k])};
            strata_value *params = strata_value_map(names, (const strata_value *const *)vals, 2);
            double s = now_ms();
            STRATA_OK_G(g, strata_query(g, queries[q].text, params, &res));
            const strata_value *const *row;
            int64_t len = -1;
            while (strata_result_next(res, &row)) {
                strata_value_get_int(row[0], &len);
                nrows++;
            }
            if (strata_result_error(res))
                fail("%s: %s", queries[q].text, strata_result_error(res)->message);
            t[k] = now_ms() - s;
            strata_result_free(&res);
            if (len >= 0) {
                found++;
                lensum += (double)len;
            }
            strata_value_free(&params);
            strata_value_free(&vals[0]);
            strata_value_free(&vals[1]);
        }
        stats st = summarise(t, pairs);
        printf("%-22s %4d/%-3d %8.3f %8.3f %8.3f %10llu   mean length %.2f\n", queries[q].name,
               found, pairs, st.mean, st.median, st.worst, (unsigned long long)nrows,
               found ? lensum / found : 0.0);
    }
    free(from);
    free(to);
    free(t);
    free(ids);
    strata_graph_free(&g);
    return 0;
}
