/*
 * query_cost — one statement's instructions, for callgrind: builds the
 * graph of `analytics` (N `:P {k}` nodes, an index on k, one `:T` per
 * node), runs the statement once to warm the plan cache, then once more
 * with callgrind's instrumentation on (valgrind/callgrind.h; without it
 * the program only times the run).
 *
 *   valgrind --tool=callgrind --instr-atstart=no \
 *       build-bench/bench/query_cost --nodes 50000 --threads 1 'MATCH ...'
 *
 * "Collected" in callgrind's summary is the statement's instructions.
 * Prefix the statement with `WITH 1 AS one` to keep it off the parallel
 * path (parallel.h).
 */
#define BENCH_NAME "query_cost"
#include "bench_util.h"

#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

static void run(strata_graph *g, const char *q)
{
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail("%s: %s", q, strata_result_error(r)->message);
    const strata_value *const *row;
    while (strata_result_next(r, &row))
        ;
    strata_result_free(&r);
}

int main(int argc, char **argv)
{
    long n = 50000;
    unsigned threads = 1;
    const char *q = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = (unsigned)atoi(argv[++i]);
        else
            q = argv[i];
    }
    strata_graph *g;
    if (!q || n < 10 || strata_graph_new(&g) != STRATA_OK)
        fail("usage: query_cost [--nodes N] [--threads T] STATEMENT");
    char setup[256];
    snprintf(setup, sizeof setup, "UNWIND range(1, %ld) AS i CREATE (:P {k: i})", n);
    run(g, setup);
    run(g, "CREATE INDEX FOR (n:P) ON (n.k)");
    snprintf(setup, sizeof setup,
             "MATCH (a:P) MATCH (b:P {k: (a.k * 7919) %% %ld + 1}) CREATE (a)-[:T]->(b)", n);
    run(g, setup);
    strata_set_query_threads(g, threads);
    run(g, q);
    double t0 = now_ms();
    CALLGRIND_START_INSTRUMENTATION;
    run(g, q);
    CALLGRIND_STOP_INSTRUMENTATION;
    printf("%.1f ms\n", now_ms() - t0);
    strata_graph_free(&g);
    return 0;
}
