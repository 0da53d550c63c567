/*
 * algo — the graph algorithms on a generated graph, each run timed in a
 * forked child so its peak resident size is its own.
 *
 *   algo [--nodes N] [--rels M] [--threads T,...] [--edges FILE] [--only NAME,...]
 *        [--repeat K] [--sample S]
 *
 * The graph: N nodes, M relationships of one type with an integer weight
 * `w` in 1..9; starts uniform, ends skewed (end = N * u^2), so a few nodes
 * are hubs, as in power-law graphs.  --edges writes the same relationships
 * (binary: uint32 start, uint32 end, float weight) for bench/algo_igraph.py,
 * which runs igraph on them in the same session (bench/algo.sh).
 *
 * --repeat runs each algorithm K times (each in its own child), for
 * comparing changes on one generated graph.
 *
 * Betweenness is sampled from S sources (--sample, 16) and printed as
 * betweenness-sampled-S; --sample 0 runs it exact (O(n m): small graphs
 * only), printed as betweenness, as igraph's is.  Closeness, O(n m) too,
 * runs only when --only names it.
 *
 * Output, one line per algorithm, thread count and repetition:
 *   strata ALGO THREADS MS PEAK_MIB CPU_MS
 * PEAK_MIB: the child's peak resident size above its size at the start of
 * the run (the graph itself excluded).  CPU_MS: the processor time of all
 * the child's threads during the run, which other work on the machine
 * does not inflate as it does MS.
 */
#define BENCH_NAME "algo"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

static void die_status(const char *what, strata_status s)
{
    fprintf(stderr, "algo: %s: %s\n", what, strata_errstr(s));
    exit(1);
}

static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0) {
            kib = atol(line + len);
            break;
        }
    if (f)
        fclose(f);
    return kib;
}

/* Resets the peak resident size to the current one (Linux >= 4.0). */
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static strata_graph *generate(uint64_t n, uint64_t m, const char *edges_path)
{
    strata_graph *g;
    strata_status s = strata_graph_new(&g);
    if (s != STRATA_OK)
        die_status("graph", s);
    strata_token type, w;
    strata_token_intern(g, STRATA_RELTYPE, "R", &type);
    strata_token_intern(g, STRATA_KEY, "w", &w);
    for (uint64_t i = 0; i < n; i++) {
        strata_id id;
        if ((s = strata_node_create(g, NULL, 0, &id)) != STRATA_OK)
            die_status("node", s);
    }
    FILE *out = edges_path ? fopen(edges_path, "wb") : NULL;
    if (edges_path && !out) {
        perror(edges_path);
        exit(1);
    }
    uint64_t seed = 0x2545f4914f6cdd1dull;
    strata_value *wv = strata_value_int(1);
    for (uint64_t i = 0; i < m; i++) {
        uint32_t a = (uint32_t)(xorshift(&seed) % n);
        double u = (double)(xorshift(&seed) % 1000000) / 1e6;
        uint32_t b = (uint32_t)((double)n * u * u);
        int weight = 1 + (int)(xorshift(&seed) % 9);
        strata_id rel;
        if ((s = strata_rel_create(g, a, b, type, &rel)) != STRATA_OK)
            die_status("relationship", s);
        strata_value_free(&wv);
        wv = strata_value_int(weight);
        if ((s = strata_rel_set(g, rel, w, wv)) != STRATA_OK)
            die_status("weight", s);
        if (out) {
            float fw = (float)weight;
            fwrite(&a, 4, 1, out);
            fwrite(&b, 4, 1, out);
            fwrite(&fw, 4, 1, out);
        }
    }
    strata_value_free(&wv);
    if (out && fclose(out) != 0) {
        perror(edges_path);
        exit(1);
    }
    return g;
}

static int64_t betweenness_sample = 16;   /* 0: exact */

static strata_value *config_for(const char *name, int threads)
{
    const char *keys[4] = {"threads"};
    strata_value *vals[4] = {strata_value_int(threads)};
    size_t k = 1;
    if (strcmp(name, "bfs") == 0 || strcmp(name, "dijkstra") == 0) {
        keys[k] = "source";
        vals[k++] = strata_value_int(0);
    }
    if (strcmp(name, "dijkstra") == 0) {
        keys[k] = "weight";
        vals[k++] = strata_value_string("w", 1);
    }
    if (strcmp(name, "labelPropagation") == 0 || strcmp(name, "louvain") == 0 ||
        strcmp(name, "triangles") == 0 || strcmp(name, "kcore") == 0) {
        keys[k] = "direction";
        vals[k++] = strata_value_string("BOTH", 4);
    }
    if (strcmp(name, "betweenness") == 0 && betweenness_sample > 0) {
        keys[k] = "sample";
        vals[k++] = strata_value_int(betweenness_sample);
    }
    strata_value *cfg = strata_value_map(keys, (const strata_value *const *)vals, k);
    for (size_t i = 0; i < k; i++)
        strata_value_free(&vals[i]);
    return cfg;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void run_child(strata_view *v, const char *name, int threads)
{
    strata_value *cfg = config_for(name, threads);
    long base = status_kib("VmRSS:");
    reset_peak();
    double t0 = now_ms(), c0 = cpu_ms();
    strata_algo_result *r;
    strata_status s = strata_algo_run(v, name, cfg, &r);
    double ms = now_ms() - t0, cpu = cpu_ms() - c0;
    long peak = status_kib("VmHWM:");
    if (s != STRATA_OK) {
        fprintf(stderr, "algo: %s: %s\n", name, strata_view_errmsg(v));
        _exit(1);
    }
    char label[64];
    if (strcmp(name, "betweenness") == 0 && betweenness_sample > 0)
        snprintf(label, sizeof label, "betweenness-sampled-%lld", (long long)betweenness_sample);
    else
        snprintf(label, sizeof label, "%s", name);
    printf("strata %s %d %.1f %.1f %.1f\n", label, threads, ms, (double)(peak - base) / 1024.0,
           cpu);
    fflush(stdout);
    _exit(0);
}

static bool listed(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    uint64_t n = 100000, m = 1000000;
    const char *threads_list = "1,2", *edges = NULL, *only = NULL;
    int repeat = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--nodes") == 0)
            n = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--rels") == 0)
            m = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0)
            threads_list = argv[i + 1];
        else if (strcmp(argv[i], "--edges") == 0)
            edges = argv[i + 1];
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
        else if (strcmp(argv[i], "--repeat") == 0)
            repeat = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sample") == 0)
            betweenness_sample = strtoll(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: algo [--nodes N] [--rels M] [--threads T,...] "
                            "[--edges FILE] [--only NAME,...] [--repeat K] [--sample S]\n");
            return 2;
        }
    }
    double t0 = now_ms();
    strata_graph *g = generate(n, m, edges);
    fprintf(stderr, "algo: %llu nodes, %llu relationships generated in %.0f ms\n",
            (unsigned long long)n, (unsigned long long)m, now_ms() - t0);
    strata_view *v;
    strata_status s = strata_snapshot(g, &v);
    if (s != STRATA_OK)
        die_status("snapshot", s);
    for (size_t i = 0; strata_algo_name(i); i++) {
        const char *name = strata_algo_name(i);
        if (!listed(only, name) || (!only && strcmp(name, "closeness") == 0))
            continue;   /* closeness is O(n m): only when asked */
        for (const char *t = threads_list; *t;) {
            int threads = atoi(t);
            for (int r = 0; r < repeat; r++) {
                pid_t pid = fork();
                if (pid == 0)
                    run_child(v, name, threads);
                int status;
                waitpid(pid, &status, 0);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    fprintf(stderr, "algo: %s on %d threads failed\n", name, threads);
            }
            const char *comma = strchr(t, ',');
            t = comma ? comma + 1 : t + strlen(t);
        }
    }
    strata_view_release(&v);
    strata_graph_free(&g);
    return 0;
}
