/*
 * analytics — the aggregating operators over large inputs, end to end
 * through strata_query (parse, plan, run, read every row, free):
 *
 *   count(DISTINCT x)   UNWIND range(1, N) AS x RETURN count(DISTINCT x)
 *                       at N = 10k, 100k, 1M
 *   grouping            MATCH (n:P) RETURN n.k % G AS g, count(*), sum(n.k)
 *                       over the graph's N nodes, G = 100 and G = N/10
 *   DISTINCT            MATCH (n:P) RETURN DISTINCT n.k % G
 *   ORDER BY LIMIT      MATCH (n:P) RETURN n.k ORDER BY n.k % 1000 DESC, n.k
 *                       LIMIT 10 (Top) and without LIMIT (Sort)
 *   UNION               two MATCH parts of N rows each, 2G distinct rows
 *   parallel reads      MATCH (n:P)-[:T]->(m) RETURN m.k % 100 AS g, count(*),
 *                       sum(n.k), sum(n.k * 0.5), collect(n.k)[..3], and a
 *                       DISTINCT and a Top over the same expansion, at 1
 *                       and 2 query threads (query/parallel.h); the graph
 *                       gets one :T relationship per node first; each also
 *                       kept off the parallel path (WITH 1 AS one in front)
 *   hash join           a second graph of N/50 people in 20 cities, two
 *                       KNOWS each: the people of a person's friend's city
 *                       over 70 (the city's people, a block hanging off
 *                       the city, hash-joined: built once per city, not
 *                       once per row), and the same as two MATCH clauses
 *
 *   analytics [--nodes N] [--runs R] [--quick] [--parallel-only]
 *
 * Prints the median of R runs per query, wall clock and CPU time (the
 * process's CPU clock: on a shared machine the wall clock also counts the
 * time spent waiting for a core), and the process's peak resident size
 * after each (a high-water mark of the whole process: the graph's storage
 * plus the most any query held).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <strata.h>

#define BENCH_NAME "analytics"
#include "bench_util.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* The median wall time of runs executions of q, in ms (*cpu: the median
   CPU time); *rows gets its rows. */
static double time_query(strata_graph *g, const char *q, int runs, long *rows, double *cpu)
{
    double t[runs], c[runs];
    for (int i = 0; i < runs; i++) {
        double t0 = now_ms(), c0 = cpu_ms();
        strata_result *r;
        STRATA_OK_G(g, strata_query(g, q, NULL, &r));
        const strata_value *const *row;
        *rows = 0;
        while (strata_result_next(r, &row))
            (*rows)++;
        if (strata_result_error(r))
            fail("%s: %s", q, strata_result_error(r)->message);
        strata_result_free(&r);
        t[i] = now_ms() - t0;
        c[i] = cpu_ms() - c0;
    }
    *cpu = summarise(c, runs).median;
    return summarise(t, runs).median;
}

static void report(strata_graph *g, const char *label, const char *q, int runs)
{
    long rows = 0;
    double cpu, ms = time_query(g, q, runs, &rows, &cpu);
    printf("%-30s %9.1f ms wall %9.1f ms cpu %8ld rows  peak rss %7ld KiB\n", label, ms, cpu,
           rows, peak_rss_kib());
    fflush(stdout);
}

/* The parallel reads at 1 and 2 query threads (the results must agree). */
static void parallel_reads(strata_graph *g, long n, int runs)
{
    char q[256];
    strata_result *r;
    STRATA_OK_G(g, strata_query(g, "CREATE INDEX FOR (n:P) ON (n.k)", NULL, &r));
    strata_result_free(&r);
    snprintf(q, sizeof q,
             "MATCH (a:P) MATCH (b:P {k: (a.k * 7919) %% %ld + 1}) CREATE (a)-[:T]->(b)", n);
    STRATA_OK_G(g, strata_query(g, q, NULL, &r));
    strata_result_free(&r);
    printf("graph: %ld :T relationships added, rss %ld KiB\n", n, rss_kib());
    static const struct {
        const char *label, *q;
    } qs[] = {
        {"group by m.k % 100",
         "MATCH (n:P)-[:T]->(m) RETURN m.k % 100 AS g, count(*), sum(n.k), "
         "sum(n.k * 0.5), collect(n.k)[..3]"},
        {"DISTINCT m.k % 1000",
         "MATCH (n:P)-[:T]->(m) RETURN DISTINCT m.k % 1000 AS d"},
        {"ORDER BY ... LIMIT 10",
         "MATCH (n:P)-[:T]->(m) RETURN n.k, m.k ORDER BY m.k % 977 DESC, n.k LIMIT 10"},
    };
    /* the same statements kept off the parallel path (a pipeline that
       starts with WITH), as every read ran before */
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        char label[64], serial[320];
        snprintf(label, sizeof label, "%s, serial", qs[i].label);
        snprintf(serial, sizeof serial, "WITH 1 AS one %s", qs[i].q);
        report(g, label, serial, runs);
    }
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        for (unsigned t = 1; t <= 2; t++) {
            char label[64];
            strata_set_query_threads(g, t);
            snprintf(label, sizeof label, "%s, %u thread%s", qs[i].label, t, t > 1 ? "s" : "");
            report(g, label, qs[i].q, runs);
        }
    strata_set_query_threads(g, 0);
}

static void run_or_fail(strata_graph *g, const char *q)
{
    strata_result *r;
    STRATA_OK_G(g, strata_query(g, q, NULL, &r));
    strata_result_free(&r);
}

/* People in 20 cities, each knowing two others; the rows reaching a city
   repeat it about persons / 20 times. */
static void hash_join(long persons, int runs)
{
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK)
        fail("out of memory");
    char q[512];
    run_or_fail(g, "UNWIND range(0, 19) AS i CREATE (:City {i: i})");
    snprintf(q, sizeof q, "UNWIND range(0, %ld) AS i CREATE (:Person {i: i, age: i %% 80})",
             persons - 1);
    run_or_fail(g, q);
    run_or_fail(g, "MATCH (c:City) WITH collect(c) AS cs MATCH (p:Person) "
                   "WITH p, cs[p.i % 20] AS c CREATE (p)-[:LIVES_IN]->(c)");
    run_or_fail(g, "MATCH (p:Person) WITH collect(p) AS ps UNWIND range(0, size(ps) - 1) AS i "
                   "WITH ps[i] AS p, ps[(i * 7 + 3) % size(ps)] AS q, "
                   "ps[(i * 13 + 5) % size(ps)] AS r CREATE (p)-[:KNOWS]->(q), (p)-[:KNOWS]->(r)");
    printf("graph: %ld people in 20 cities, rss %ld KiB\n", persons, rss_kib());
    fflush(stdout);
    report(g, "hash join, one MATCH",
           "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:LIVES_IN]->(c:City)<-[:LIVES_IN]-(d:Person) "
           "WHERE d.age > 70 RETURN a.age % 10 AS g, count(*)", runs);
    report(g, "hash join, two MATCH clauses",
           "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:LIVES_IN]->(c:City) "
           "MATCH (c)<-[:LIVES_IN]-(d:Person)-[:KNOWS]->(e:Person) WHERE e.age < 2 "
           "RETURN a.age % 10 AS g, count(*)", runs);
    strata_graph_free(&g);
}

int main(int argc, char **argv)
{
    long n = 1000000;
    int runs = 3;
    bool parallel_only = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            n = 100000, runs = 1;
        else if (!strcmp(argv[i], "--parallel-only"))
            parallel_only = true;
        else
            fail("usage: analytics [--nodes N] [--runs R] [--quick] [--parallel-only]");
    }
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK || n < 10 || runs < 1)
        fail("bad arguments or out of memory");
    char q[256], label[64];

    for (long size = 10000; size <= 1000000 && !parallel_only; size *= 10) {
        snprintf(q, sizeof q, "UNWIND range(1, %ld) AS x RETURN count(DISTINCT x)", size);
        snprintf(label, sizeof label, "count(DISTINCT x) %ld", size);
        report(g, label, q, runs);
    }

    snprintf(q, sizeof q, "UNWIND range(1, %ld) AS i CREATE (:P {k: i})", n);
    strata_result *r;
    STRATA_OK_G(g, strata_query(g, q, NULL, &r));
    strata_result_free(&r);
    printf("graph: %ld nodes, rss %ld KiB\n", n, rss_kib());
    fflush(stdout);

    long groups[] = {100, n / 10};
    for (size_t i = 0; i < 2 && !parallel_only; i++) {
        snprintf(q, sizeof q, "MATCH (n:P) RETURN n.k %% %ld AS g, count(*), sum(n.k)",
                 groups[i]);
        snprintf(label, sizeof label, "grouping, %ld groups", groups[i]);
        report(g, label, q, runs);
        snprintf(q, sizeof q, "MATCH (n:P) RETURN DISTINCT n.k %% %ld AS g", groups[i]);
        snprintf(label, sizeof label, "DISTINCT, %ld rows", groups[i]);
        report(g, label, q, runs);
        snprintf(q, sizeof q,
                 "MATCH (n:P) RETURN n.k %% %ld AS g UNION MATCH (n:P) RETURN -(n.k %% %ld) - 1 AS g",
                 groups[i], groups[i]);
        snprintf(label, sizeof label, "UNION, %ld rows", 2 * groups[i]);
        report(g, label, q, runs);
    }
    if (!parallel_only) {
        report(g, "ORDER BY ... LIMIT 10 (Top)",
               "MATCH (n:P) RETURN n.k AS k ORDER BY n.k % 1000 DESC, k LIMIT 10", runs);
        report(g, "ORDER BY, every row (Sort)",
               "MATCH (n:P) RETURN n.k AS k ORDER BY n.k % 1000 DESC, k", runs);
    }
    parallel_reads(g, n, runs);
    strata_graph_free(&g);
    if (!parallel_only)
        hash_join(n / 50 < 1000 ? 1000 : n / 50, runs);
    return 0;
}
