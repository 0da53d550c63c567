/*
 * build_graph: builds an N-node / M-relationship graph through the C API
 * and reports build time and memory per element (docs/BENCHMARKS.md, W4's
 * first half).
 *
 *   build_graph [--nodes N] [--rels M] [--props K] [--allocator-stats]
 *
 * Relationships connect random node pairs (xorshift64, fixed seed) with
 * one of four types.  Memory is read two ways: the process's resident size
 * (VmRSS) before and after, and the graph's own byte count.
 * --allocator-stats prints jemalloc's statistics (per arena and size
 * class: the graph's arena shows where resident bytes go beyond what
 * strata counts) before the graph is freed; jemalloc builds only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <strata.h>
#ifdef STRATA_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define BENCH_NAME "build_graph"
#include "bench_util.h"

#define OK(call)                                                                     \
    do {                                                                             \
        if ((call) != STRATA_OK) {                                                   \
            fprintf(stderr, "%s failed: %s\n", #call, strata_errmsg(g));             \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    uint64_t nodes = 1000000, rels = 10000000, props = 0;
    int allocator_stats = 0;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--allocator-stats")) {
            allocator_stats = 1;
            i--;
        } else if (i + 1 >= argc) {
            fprintf(stderr, "%s needs a value\n", argv[i]);
            return 2;
        } else if (!strcmp(argv[i], "--nodes"))
            nodes = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--rels"))
            rels = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--props"))
            props = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: build_graph [--nodes N] [--rels M] [--props K] "
                            "[--allocator-stats]\n");
            return 2;
        }
    }
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK || nodes == 0)
        return 1;
    strata_token label, types[4], keys[16];
    OK(strata_token_intern(g, STRATA_LABEL, "Node", &label));
    const char *tn[4] = { "A", "B", "C", "D" };
    for (int i = 0; i < 4; i++)
        OK(strata_token_intern(g, STRATA_RELTYPE, tn[i], &types[i]));
    if (props > 16)
        props = 16;
    for (uint64_t k = 0; k < props; k++) {
        char name[16];
        snprintf(name, sizeof name, "p%llu", (unsigned long long)k);
        OK(strata_token_intern(g, STRATA_KEY, name, &keys[k]));
    }
    strata_value *val = strata_value_int(42);

    long rss0 = rss_kib();
    double t0 = (now_us() / 1e6);
    for (uint64_t i = 0; i < nodes; i++) {
        strata_id id;
        OK(strata_node_create(g, &label, 1, &id));
        for (uint64_t k = 0; k < props; k++)
            OK(strata_node_set(g, id, keys[k], val));
    }
    double t1 = (now_us() / 1e6);
    long rss1 = rss_kib();
    strata_memstats st1;
    strata_memory_stats(g, &st1);

    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < rels; i++) {
        strata_id r;
        strata_id a = xorshift(&seed) % nodes, b = xorshift(&seed) % nodes;
        OK(strata_rel_create(g, a, b, types[i & 3], &r));
    }
    double t2 = (now_us() / 1e6);
    long rss2 = rss_kib();
    strata_memstats st2;
    strata_memory_stats(g, &st2);

    printf("nodes: %llu in %.2f s (%.0f /s), %llu properties each\n",
           (unsigned long long)nodes, t1 - t0, nodes / (t1 - t0), (unsigned long long)props);
    printf("relationships: %llu in %.2f s (%.0f /s)\n", (unsigned long long)rels, t2 - t1,
           rels ? rels / (t2 - t1) : 0.0);
    printf("per node: %.1f B resident, %.1f B counted\n", (rss1 - rss0) * 1024.0 / nodes,
           (double)st1.graph_bytes / nodes);
    if (rels)
        printf("per relationship (both adjacency directions): %.1f B resident, %.1f B counted\n",
               (rss2 - rss1) * 1024.0 / rels,
               (double)(st2.graph_bytes - st1.graph_bytes) / rels);
    printf("total: %.1f MiB resident growth, %.1f MiB counted\n", (rss2 - rss0) / 1024.0,
           st2.graph_bytes / 1048576.0);
    if (allocator_stats) {
#ifdef STRATA_JEMALLOC
        malloc_stats_print(NULL, NULL, "gmdl");   /* arenas and size classes only */
#else
        fprintf(stderr, "--allocator-stats: not a jemalloc build\n");
#endif
    }
    strata_value_free(&val);
    strata_graph_free(&g);
    return 0;
}
