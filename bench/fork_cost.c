/*
 * fork_cost — W1 of docs/BENCHMARKS.md: what a write costs while a reader holds
 * a view, on the graph shapes of the seed project's table.
 *
 *   fork_cost [--nodes N] [--rounds R] [--quick] [--json] [--shape S] [--only C]
 *
 * For each shape (plain: one property per node; columns: 12 properties per
 * node; indexed: 2 property indices + 1 composite + 1 range + 1 unique),
 * each round takes a view (untimed), times one single-property SET through
 * the C API, and releases the view (untimed).  Also measured:
 *   - the same SET with nothing held;
 *   - relationship create and node detach-delete under a held view;
 *   - a continuously held reader: the view re-taken before every write,
 *     the previous one released after it (mean, median, worst);
 *   - fold-back: the first write after the view drops;
 *   - resident growth over 20 writes under one held view;
 *   - a deep-copy baseline: rebuilding the same graph through the API,
 *     the cost a fork would have if it copied (the seed's "before").
 * Timings are per operation in microseconds, from CLOCK_MONOTONIC around the
 * one call.  The machine is shared: compare ratios within one run.
 *
 * --shape (plain, columns, indexed) runs one shape, --only one case
 * (nothing, statement, held, rel, detach, continuous, foldback, rss).  Every
 * timed call goes through a function of its own that is never inlined
 * (timed_set, timed_rel_create, timed_detach), so an instruction count
 * collects exactly the timed writes:
 *
 *   valgrind --tool=callgrind --toggle-collect=timed_set \
 *       fork_cost --nodes 100000 --rounds 200 --shape plain --only held
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <strata.h>

#define BENCH_NAME "fork_cost"
#include "bench_util.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static void die(strata_graph *g, const char *what)
{
    fprintf(stderr, "fork_cost: %s: %s\n", what, strata_errmsg(g));
    exit(1);
}

#define OK(g, call)                                                                  \
    do {                                                                             \
        if ((call) != STRATA_OK)                                                     \
            die(g, #call);                                                           \
    } while (0)

#include "fixture.h"

/* The timed write: SET p1 (indexed by the range index in the indexed
   shape) on a random node to a fresh value. */
static __attribute__((noinline)) double timed_set(graph_fixture *f, strata_value *v)
{
    strata_id node = xorshift(&rng) % f->n;
    double t0 = now_us();
    if (strata_node_set(f->g, node, f->keys[1], v) != STRATA_OK)
        die(f->g, "set");
    return now_us() - t0;
}

static __attribute__((noinline)) double timed_rel_create(graph_fixture *f, strata_id a,
                                                          strata_id b)
{
    strata_id rel;
    double t0 = now_us();
    OK(f->g, strata_rel_create(f->g, a, b, f->type, &rel));
    return now_us() - t0;
}

static __attribute__((noinline)) double timed_detach(graph_fixture *f, strata_id victim)
{
    double t0 = now_us();
    OK(f->g, strata_node_detach_delete(f->g, victim));
    return now_us() - t0;
}

static const char *only = NULL;

/* Whether the case named c runs (--only). */
static bool want(const char *c) { return !only || !strcmp(only, c); }

static void report(FILE *out, bool json, const char *shape, const char *what, stats s,
                   const char *seed)
{
    if (json)
        fprintf(out, "{\"shape\":\"%s\",\"case\":\"%s\",\"mean_us\":%.3f,\"median_us\":%.3f,"
                     "\"worst_us\":%.3f}\n", shape, what, s.mean, s.median, s.worst);
    else
        fprintf(out, "  %-44s mean %9.2f  median %9.2f  worst %10.2f   %s\n", what, s.mean,
                s.median, s.worst, seed);
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000;
    int rounds = 200;
    bool json = false;
    const char *shape = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            n = 20000, rounds = 50;
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            shape = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: fork_cost [--nodes N] [--rounds R] [--quick] [--json] "
                            "[--shape plain|columns|indexed] [--only CASE]\n");
            return 2;
        }
    }
    if (n < 100 || rounds < 2) {
        fprintf(stderr, "fork_cost: need at least 100 nodes and 2 rounds\n");
        return 2;
    }
    double *t = malloc(sizeof(double) * (size_t)rounds);
    if (!json)
        printf("W1 fork cost, %llu nodes, %d rounds (times in microseconds; seed figures "
               "from its 1M-node table)\n", (unsigned long long)n, rounds);
    static const char *const seed_held[] = { "seed: 4.6 mean", "seed: 587.6 mean (100k)",
                                             "seed: ~97 mean" };
    static const char *const shape_flags[] = { "plain", "columns", "indexed" };
    for (int sh = 0; sh < NSHAPES; sh++) {
        if (shape && strcmp(shape, shape_flags[sh]))
            continue;
        graph_fixture f;
        double b0 = now_us();
        build(&f, (enum shape)sh, n);
        double build_us = now_us() - b0;
        if (!json)
            printf("%s (built in %.0f ms):\n", shape_names[sh], build_us / 1000);
        strata_value *v = strata_value_int(7);

        if (want("nothing")) {
            for (int r = 0; r < rounds; r++)
                t[r] = timed_set(&f, v);
            report(stdout, json, shape_names[sh], "SET, nothing held", summarise(t, rounds),
                   "seed: 3 (Python API)");
        }

        /* The journal's cost: the same SET inside an open statement (undo
           entry captured), and a whole one-SET statement. */
        if (want("statement")) {
            OK(f.g, strata_statement_begin(f.g));
            for (int r = 0; r < rounds; r++)
                t[r] = timed_set(&f, v);
            OK(f.g, strata_statement_end(f.g, true));
            report(stdout, json, shape_names[sh], "SET inside an open statement",
                   summarise(t, rounds), "target: <= 1.2x nothing held");
            for (int r = 0; r < rounds; r++) {
                strata_id node = xorshift(&rng) % f.n;
                double t0 = now_us();
                OK(f.g, strata_statement_begin(f.g));
                OK(f.g, strata_node_set(f.g, node, f.keys[1], v));
                OK(f.g, strata_statement_end(f.g, true));
                t[r] = now_us() - t0;
            }
            report(stdout, json, shape_names[sh], "statement of one SET (begin, set, commit)",
                   summarise(t, rounds), "");
        }

        stats held_stats = { 0, 1, 0 };
        if (want("held")) {
            for (int r = 0; r < rounds; r++) {
                strata_view *view;
                OK(f.g, strata_snapshot(f.g, &view));
                t[r] = timed_set(&f, v);
                strata_view_release(&view);
            }
            held_stats = summarise(t, rounds);
            report(stdout, json, shape_names[sh], "SET, first write under a held view",
                   held_stats, seed_held[sh]);
        }

        if (want("rel")) {
            for (int r = 0; r < rounds; r++) {
                strata_view *view;
                OK(f.g, strata_snapshot(f.g, &view));
                strata_id a = xorshift(&rng) % n, b = xorshift(&rng) % n;
                t[r] = timed_rel_create(&f, a, b);
                strata_view_release(&view);
            }
            report(stdout, json, shape_names[sh], "relationship create under a held view",
                   summarise(t, rounds), "seed: whole-graph flatten");
        }

        if (want("detach")) {
            for (int r = 0; r < rounds; r++) {
                strata_view *view;
                OK(f.g, strata_snapshot(f.g, &view));
                strata_id victim;
                do
                    victim = xorshift(&rng) % n;
                while (!strata_node_exists(view, victim));
                t[r] = timed_detach(&f, victim);
                strata_view_release(&view);
                /* Keep the graph's size: the next create reuses the slot. */
                strata_id again;
                OK(f.g, strata_node_create(f.g, &f.label, 1, &again));
                OK(f.g, strata_node_set(f.g, again, f.keys[1], v));
            }
            report(stdout, json, shape_names[sh], "node detach-delete under a held view",
                   summarise(t, rounds), "seed: whole-graph flatten");
        }

        if (want("continuous")) {
            strata_view *held = NULL;
            for (int r = 0; r < rounds; r++) {
                strata_view *next;
                OK(f.g, strata_snapshot(f.g, &next));
                t[r] = timed_set(&f, v);
                strata_view_release(&held);
                held = next;
            }
            strata_view_release(&held);
            report(stdout, json, shape_names[sh], "continuously held reader",
                   summarise(t, rounds), "seed: mean ~44x median");
        }

        if (want("foldback")) {
            for (int r = 0; r < rounds; r++) {
                strata_view *view;
                OK(f.g, strata_snapshot(f.g, &view));
                timed_set(&f, v);
                strata_view_release(&view);
                t[r] = timed_set(&f, v);   /* folds back */
            }
            report(stdout, json, shape_names[sh], "fold-back: first write after the view drops",
                   summarise(t, rounds), "seed: 137.7 (100k x 12)");
        }

        if (want("rss")) {
            strata_view *one;
            OK(f.g, strata_snapshot(f.g, &one));
            long before = rss_kib();
            for (int r = 0; r < 20; r++)
                timed_set(&f, v);
            long growth = rss_kib() - before;
            strata_view_release(&one);
            if (json)
                printf("{\"shape\":\"%s\",\"case\":\"rss growth 20 writes\",\"kib\":%ld}\n",
                       shape_names[sh], growth);
            else
                printf("  %-44s %ld KiB   seed: +0.0 MB\n",
                       "resident growth, 20 writes, one view", growth);
        }

        strata_memstats ms;
        strata_memory_stats(f.g, &ms);
        if (!json)
            printf("  graph bytes: %.1f MiB; deep copy (rebuild through the API): %.0f us, "
                   "%.0fx the held-view median\n",
                   ms.graph_bytes / 1048576.0, build_us, build_us / held_stats.median);
        strata_value_free(&v);
        strata_graph_free(&f.g);
    }
    free(t);
    return 0;
}
