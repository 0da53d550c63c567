/*
 * save_load: builds an N-node / M-relationship graph, saves it, loads it
 * back and reports seconds and MB/s for each (docs/FORMAT.md).
 *
 *   save_load [--nodes N] [--rels M] [--rounds K] [--quick] [--json] [--file PATH] [--keep]
 *   save_load --load PATH [--rounds K]
 *
 * Each node has a label and two properties (an integer and a short
 * string), each relationship one of four types and an integer property;
 * endpoints are random (xorshift64, fixed seed).  Save time includes the
 * fsyncs and the rename; load time includes reading the file, checking
 * every checksum and reference, and rebuilding the one index (a range
 * index on the nodes' integer).  MB/s is file bytes over wall time.
 * --quick: 100k nodes / 1M relationships.  The file goes to PATH (default
 * save_load.db in the working directory) and is removed afterwards.
 * --rounds K: K saves and K loads, alternating, reported as median and best
 * (on a shared machine a single run moves with the other tenants' load).
 * --keep leaves the file in place; --load PATH only loads a file K times
 * (each load's seconds and CPU seconds, then the median), so two builds
 * can be compared on one file, alternately, without building the graph.
 * --each prints every save's and load's wall, user and system seconds and
 * minor page faults; --saves-first runs the K saves before the K loads
 * (so no save follows a load).
 */
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <strata.h>

#define BENCH_NAME "save_load"
#include "bench_util.h"

/* CPU time of the process so far (user and system), in seconds. */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* What one save or load cost the process: wall, user and system CPU
   seconds, minor page faults (--each). */
typedef struct cost {
    double wall, user, sys;
    long faults;
} cost;

static cost cost_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (cost){ now_ms() / 1e3, (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6,
                   (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6, u.ru_minflt };
}

static void cost_print(const char *what, int round, cost from)
{
    cost to = cost_now();
    printf("  %s %d: %.3f s  user %.3f s  sys %.3f s  %ld minor faults\n", what, round,
           to.wall - from.wall, to.user - from.user, to.sys - from.sys, to.faults - from.faults);
}

/* One save of g to path (round k): its wall and CPU seconds; the file's
   MB. */
static double timed_save(strata_graph *g, const char *path, int k, bool each, double *t,
                         double *cpu)
{
    cost c0 = cost_now();
    *cpu = cpu_s();
    double t0 = now_ms();
    STRATA_OK_G(g, strata_save(g, path));
    *t = (now_ms() - t0) / 1e3;
    *cpu = cpu_s() - *cpu;
    if (each)
        cost_print("save", k, c0);
    struct stat st;
    if (stat(path, &st) != 0)
        fail("cannot stat %s", path);
    return (double)st.st_size / 1e6;
}

/* One load of path (round k), checked for its counts and freed. */
static void timed_load(const char *path, uint64_t nodes, uint64_t rels, int k, bool each,
                       double *t, double *cpu)
{
    strata_graph *h = NULL;
    char err[512];
    cost c0 = cost_now();
    *cpu = cpu_s();
    double t0 = now_ms();
    if (strata_load_ex(path, &h, err, sizeof err) != STRATA_OK)
        fail("load: %s", err);
    *t = (now_ms() - t0) / 1e3;
    *cpu = cpu_s() - *cpu;
    if (each)
        cost_print("load", k, c0);
    strata_memstats ms;
    STRATA_OK_G(h, strata_memory_stats(h, &ms));
    if (ms.nodes != nodes || ms.relationships != rels)
        fail("loaded %llu nodes, %llu relationships", (unsigned long long)ms.nodes,
             (unsigned long long)ms.relationships);
    strata_graph_free(&h);
}

/* --load: path loaded rounds times. */
static int load_only(const char *path, int rounds)
{
    double t[100], cpu[100];
    for (int k = 0; k < rounds; k++) {
        strata_graph *h = NULL;
        char err[512];
        cpu[k] = cpu_s();
        double t0 = now_ms();
        if (strata_load_ex(path, &h, err, sizeof err) != STRATA_OK)
            fail("load: %s", err);
        t[k] = (now_ms() - t0) / 1e3;
        cpu[k] = cpu_s() - cpu[k];
        printf("load %.3f s  cpu %.3f s\n", t[k], cpu[k]);
        strata_graph_free(&h);
    }
    double load_s = summarise(t, rounds).median, load_cpu_s = summarise(cpu, rounds).median;
    printf("%s: load %.3f s (median of %d; cpu %.3f s)\n", path, load_s, rounds, load_cpu_s);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t nodes = 1000000, rels = 10000000;
    int rounds = 1;
    bool json = false, keep = false, each = false, saves_first = false;
    const char *path = "save_load.db", *load_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            nodes = 100000;
            rels = 1000000;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            nodes = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--rels") && i + 1 < argc) {
            rels = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--file") && i + 1 < argc) {
            path = argv[++i];
        } else if (!strcmp(argv[i], "--keep")) {
            keep = true;
        } else if (!strcmp(argv[i], "--each")) {
            each = true;
        } else if (!strcmp(argv[i], "--saves-first")) {
            saves_first = true;
        } else if (!strcmp(argv[i], "--load") && i + 1 < argc) {
            load_path = argv[++i];
        } else {
            fprintf(stderr, "usage: save_load [--nodes N] [--rels M] [--rounds K] [--quick] "
                            "[--json] [--file PATH] [--keep] [--each] [--saves-first]\n"
                            "       save_load --load PATH [--rounds K]\n");
            return 2;
        }
    }
    if (nodes == 0)
        fail("--nodes must be at least 1");
    if (rounds < 1 || rounds > 100)
        fail("--rounds takes 1 to 100");
    if (load_path)
        return load_only(load_path, rounds);
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK)
        fail("out of memory");
    strata_token label, types[4], kn, ks, kw;
    STRATA_OK_G(g, strata_token_intern(g, STRATA_LABEL, "Node", &label));
    const char *tn[4] = { "A", "B", "C", "D" };
    for (int i = 0; i < 4; i++)
        STRATA_OK_G(g, strata_token_intern(g, STRATA_RELTYPE, tn[i], &types[i]));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "n", &kn));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "s", &ks));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "w", &kw));
    double t0 = now_ms();
    for (uint64_t i = 0; i < nodes; i++) {
        strata_id id;
        char s[16];
        int len = snprintf(s, sizeof s, "n%llu", (unsigned long long)i);
        strata_value *n = strata_value_int((int64_t)i), *str = strata_value_string(s, (size_t)len);
        STRATA_OK_G(g, strata_node_create(g, &label, 1, &id));
        STRATA_OK_G(g, strata_node_set(g, id, kn, n));
        STRATA_OK_G(g, strata_node_set(g, id, ks, str));
        strata_value_free(&n);
        strata_value_free(&str);
    }
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    strata_value *w = strata_value_int(7);
    for (uint64_t i = 0; i < rels; i++) {
        strata_id id;
        uint64_t r = xorshift(&seed);
        STRATA_OK_G(g, strata_rel_create(g, r % nodes, (r >> 32) % nodes, types[r & 3], &id));
        STRATA_OK_G(g, strata_rel_set(g, id, kw, w));
    }
    strata_value_free(&w);
    strata_index idx;
    STRATA_OK_G(g, strata_index_create(g, STRATA_INDEX_RANGE, false, label, &kn, 1, &idx));
    double build_s = (now_ms() - t0) / 1e3;

    double save_t[100], save_cpu[100], load_t[100], load_cpu[100];
    double mb = 0;
    for (int k = 0; saves_first && k < rounds; k++)
        mb = timed_save(g, path, k, each, &save_t[k], &save_cpu[k]);
    for (int k = 0; k < rounds; k++) {
        if (!saves_first)
            mb = timed_save(g, path, k, each, &save_t[k], &save_cpu[k]);
        timed_load(path, nodes, rels, k, each, &load_t[k], &load_cpu[k]);
    }
    double save_best = save_t[0], load_best = load_t[0];
    for (int k = 1; k < rounds; k++) {
        save_best = save_t[k] < save_best ? save_t[k] : save_best;
        load_best = load_t[k] < load_best ? load_t[k] : load_best;
    }
    double save_s = summarise(save_t, rounds).median, load_s = summarise(load_t, rounds).median;
    double load_cpu_s = summarise(load_cpu, rounds).median;
    double save_cpu_s = summarise(save_cpu, rounds).median;
    if (!keep)
        unlink(path);
    if (json)
        printf("{\"nodes\": %llu, \"rels\": %llu, \"file_mb\": %.1f, \"build_s\": %.2f, "
               "\"rounds\": %d, \"save_s\": %.3f, \"save_best_s\": %.3f, \"save_cpu_s\": %.3f, "
               "\"save_mb_s\": %.1f, \"load_s\": %.3f, \"load_best_s\": %.3f, "
               "\"load_cpu_s\": %.3f, \"load_mb_s\": %.1f}\n",
               (unsigned long long)nodes, (unsigned long long)rels, mb, build_s, rounds, save_s,
               save_best, save_cpu_s, mb / save_s, load_s, load_best, load_cpu_s, mb / load_s);
    else
        printf("%llu nodes, %llu relationships: file %.1f MB (built in %.2f s)\n"
               "  save %.3f s  %.1f MB/s (median of %d; best %.3f s; cpu %.3f s)\n"
               "  load %.3f s  %.1f MB/s (median of %d; best %.3f s; cpu %.3f s)\n",
               (unsigned long long)nodes, (unsigned long long)rels, mb, build_s, save_s,
               mb / save_s, rounds, save_best, save_cpu_s, load_s, mb / load_s, rounds, load_best,
               load_cpu_s);
    strata_graph_free(&g);
    return 0;
}
