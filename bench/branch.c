/*
 * branch — the targets of branches and diff (docs/BRANCHES.md), on the
 * indexed shape of fork_cost (five indices):
 *
 *   branch [--nodes N] [--rounds R] [--branches B] [--quick] [--sizes]
 *   branch --grid          (N k median_us rows for bench/plots/branch_diff.sh)
 *
 *   1. strata_branch of a view of an N-node graph (target: <= 1 us at 1M);
 *   2. the first SET in a fresh branch, side by side with the first SET
 *      under a held view (W1), interleaved round by round;
 *   3. B live branches (default 1000) with 100 property writes each: the
 *      lineage's added bytes and resident growth (target: <= 100 MB);
 *   4. strata_diff of k changes for k = 1 .. 10,000 (target: <= 100 us at
 *      k = 100), and with --sizes, the diff of 100 changes on graphs of
 *      10^4 .. 10^6 nodes: the cost follows the changes, not the graph.
 * Times from CLOCK_MONOTONIC around the one call, in microseconds.  The
 * machine is shared: compare within one run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata.h>

#define BENCH_NAME "branch"
#include "bench_util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static void die(strata_graph *g, const char *what)
{
    fprintf(stderr, "branch: %s: %s\n", what, g ? strata_errmsg(g) : "");
    exit(1);
}

#define OK(g, call)                                                                  \
    do {                                                                             \
        if ((call) != STRATA_OK)                                                     \
            die(g, #call);                                                           \
    } while (0)

#include "fixture.h"

static void report(const char *what, stats s, const char *target)
{
    printf("  %-46s mean %8.2f  median %8.2f  worst %9.2f   %s\n", what, s.mean, s.median,
           s.worst, target);
}

static void set_random(graph_fixture *f, strata_graph *g, strata_value *v)
{
    OK(g, strata_node_set(g, xorshift(&rng) % f->n, f->keys[1], v));
}

static void time_branch(graph_fixture *f, double *t, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        strata_view *v;
        strata_graph *b;
        OK(f->g, strata_snapshot(f->g, &v));
        double t0 = now_us();
        OK(f->g, strata_branch(v, &b));
        t[r] = now_us() - t0;
        strata_view_release(&v);
        strata_graph_free(&b);
    }
    report("strata_branch of a view", summarise(t, rounds), "target: <= 1 us at 1M nodes");
}

static void time_first_writes(graph_fixture *f, double *held, double *branched, int rounds)
{
    strata_value *val = strata_value_int(7);
    for (int r = 0; r < rounds; r++) {
        strata_view *v;
        OK(f->g, strata_snapshot(f->g, &v));
        strata_id node = xorshift(&rng) % f->n;
        double t0 = now_us();
        OK(f->g, strata_node_set(f->g, node, f->keys[1], val));
        held[r] = now_us() - t0;
        strata_view_release(&v);

        strata_graph *b;
        OK(f->g, strata_snapshot(f->g, &v));
        OK(f->g, strata_branch(v, &b));
        strata_view_release(&v);
        node = xorshift(&rng) % f->n;
        t0 = now_us();
        OK(b, strata_node_set(b, node, f->keys[1], val));
        branched[r] = now_us() - t0;
        strata_graph_free(&b);
    }
    strata_value_free(&val);
    report("SET, first write under a held view (W1)", summarise(held, rounds), "");
    report("SET, first write in a fresh branch", summarise(branched, rounds),
           "target: as the held-view write");
}

static void many_branches(graph_fixture *f, int nbranches)
{
    strata_memstats before;
    OK(f->g, strata_memory_stats(f->g, &before));
    long rss0 = rss_kib();
    strata_graph **b = calloc((size_t)nbranches, sizeof *b);
    strata_value *val = strata_value_int(-1);
    double t0 = now_us();
    for (int i = 0; i < nbranches; i++) {
        strata_view *v;
        OK(f->g, strata_snapshot(f->g, &v));
        OK(f->g, strata_branch(v, &b[i]));
        strata_view_release(&v);
        for (int w = 0; w < 100; w++)
            set_random(f, b[i], val);
    }
    double took = now_us() - t0;
    strata_memstats after;
    OK(f->g, strata_memory_stats(f->g, &after));
    uint64_t priv = 0;
    for (int i = 0; i < nbranches; i++) {
        strata_memstats ms;
        OK(b[i], strata_memory_stats(b[i], &ms));
        priv += ms.private_bytes;
    }
    long rss1 = rss_kib();
    printf("  %d live branches x 100 SETs: lineage +%.1f MB, private %.1f MB in all "
           "(%.1f KB a branch), resident +%.1f MB, %.0f ms   target: <= 100 MB\n",
           nbranches, (after.graph_bytes - before.graph_bytes) / 1e6, priv / 1e6,
           priv / 1e3 / nbranches, (rss1 - rss0) * 1024 / 1e6, took / 1000);
    for (int i = 0; i < nbranches; i++)
        strata_graph_free(&b[i]);
    free(b);
    strata_value_free(&val);
}

static int count_change(const strata_change *c, void *arg)
{
    (void)c;
    ++*(size_t *)arg;
    return 0;
}

/* The median time of strata_diff between a view of f's graph and a branch
   of it with k SETs on distinct random nodes. */
static double time_diff(graph_fixture *f, int k, int rounds, double *t)
{
    strata_view *base;
    strata_graph *b;
    OK(f->g, strata_snapshot(f->g, &base));
    OK(f->g, strata_branch(base, &b));
    strata_value *val = strata_value_int(-7);
    for (int i = 0; i < k; i++)
        set_random(f, b, val);
    strata_value_free(&val);
    strata_view *now;
    OK(b, strata_snapshot(b, &now));
    size_t changes = 0;
    for (int r = 0; r < rounds; r++) {
        changes = 0;
        double t0 = now_us();
        if (strata_diff(base, now, count_change, &changes) != STRATA_OK)
            die(NULL, strata_view_errmsg(base));
        t[r] = now_us() - t0;
    }
    if (changes > (size_t)k)
        die(NULL, "more changes than writes");
    strata_view_release(&now);
    strata_view_release(&base);
    strata_graph_free(&b);
    return summarise(t, rounds).median;
}

static void diff_growth(graph_fixture *f, double *t)
{
    printf("  strata_diff against changes (median us, %llu nodes):",
           (unsigned long long)f->n);
    static const int ks[] = { 1, 10, 100, 1000, 10000 };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        printf("  k=%d %.1f", ks[i], time_diff(f, ks[i], ks[i] >= 1000 ? 20 : 200, t));
    printf("   target: <= 100 us at k=100\n");
}

/* The diff's median time for every graph size 10^4 .. n and change count
   1 .. 10^4, one "N k median_us" line each. */
static void grid(uint64_t n, double *t)
{
    static const int ks[] = { 1, 10, 100, 1000, 10000 };
    printf("# N k median_us\n");
    for (uint64_t size = 10000; size <= n; size *= 10) {
        graph_fixture g;
        build(&g, INDEXED, size);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            printf("%llu %d %.2f\n", (unsigned long long)size, ks[i],
                   time_diff(&g, ks[i], ks[i] >= 1000 ? 20 : 200, t));
        fflush(stdout);
        strata_graph_free(&g.g);
    }
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000;
    int rounds = 1000, nbranches = 1000;
    bool sizes = false, want_grid = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--branches") && i + 1 < argc)
            nbranches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            n = 20000, rounds = 100, nbranches = 50;
        else if (!strcmp(argv[i], "--sizes"))
            sizes = true;
        else if (!strcmp(argv[i], "--grid"))
            want_grid = true;
        else {
            fprintf(stderr, "usage: branch [--nodes N] [--rounds R] [--branches B] [--quick] "
                            "[--sizes] [--grid]\n");
            return 2;
        }
    }
    if (n < 20000 || rounds < 2 || nbranches < 1) {
        fprintf(stderr, "branch: need at least 20000 nodes, 2 rounds and 1 branch\n");
        return 2;
    }
    double *t = malloc(sizeof(double) * (size_t)(rounds > 200 ? rounds : 200) * 2);
    if (want_grid) {
        grid(n, t);
        free(t);
        return 0;
    }
    graph_fixture f;
    double b0 = now_us();
    build(&f, INDEXED, n);
    printf("branches, indexed shape (5 indices), %llu nodes (built in %.0f ms), %d rounds; "
           "times in microseconds\n", (unsigned long long)n, (now_us() - b0) / 1000, rounds);
    time_branch(&f, t, rounds);
    time_first_writes(&f, t, t + rounds, rounds);
    many_branches(&f, nbranches);
    diff_growth(&f, t);
    strata_graph_free(&f.g);
    if (sizes) {
        printf("  strata_diff of 100 changes against graph size (median us):");
        for (uint64_t size = 10000; size <= n; size *= 10) {
            graph_fixture g;
            build(&g, INDEXED, size);
            printf("  N=%llu %.1f", (unsigned long long)size, time_diff(&g, 100, 200, t));
            fflush(stdout);
            strata_graph_free(&g.g);
        }
        printf("\n");
    }
    free(t);
    return 0;
}
