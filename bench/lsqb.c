/*
 * lsqb: runs the LSQB queries (bench/lsqb/queries.cypher) on a saved graph
 * and checks each count against LSQB's reference answer (docs/BENCHMARKS.md W5).
 *
 *   lsqb DB QUERIES [--only qN] [--repeat R] [--timeout S] [--json]
 *
 * DB is a graph saved by `strata import` (bench/lsqb/run.sh builds it).
 * Each query runs in a child process forked after the load, so the child
 * starts with the loaded graph resident and its peak resident size
 * (getrusage of the child) is the graph plus what the query needed: the
 * table reports it and its ratio to the loaded graph's resident size.
 * The child runs the query R times and reports the fastest; a child still
 * running after S seconds is killed and its row says "timeout".  A wrong
 * count makes the exit status 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <strata.h>

#define BENCH_NAME "lsqb"
#include "bench_util.h"

enum { MAX_QUERIES = 64 };

typedef struct query {
    char name[16];
    int64_t expected;
    char *text;
} query;

/* What a child reports back through its pipe. */
typedef struct outcome {
    int64_t count;
    double ms;
    char error[200];
} outcome;

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail("%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf)
        fail("out of memory reading %s", path);
    buf[len] = '\0';
    return buf;
}

/* Splits the file into queries: each starts at a line "// qN EXPECTED"
   and runs to the next ';'.  Other comment lines are skipped. */
static int parse_queries(char *src, query *q, int max)
{
    int n = 0;
    char *p = src;
    while ((p = strstr(p, "// q")) != NULL && n < max) {
        char name[16];
        long long expected;
        if (sscanf(p + 3, "%15s %lld", name, &expected) != 2) {
            p += 4;
            continue;
        }
        char *start = strchr(p, '\n');
        char *end = start ? strchr(start, ';') : NULL;
        if (!end)
            fail("query %s has no ';'", name);
        *end = '\0';
        snprintf(q[n].name, sizeof q[n].name, "%s", name);
        q[n].expected = expected;
        q[n].text = start + 1;
        n++;
        p = end + 1;
    }
    return n;
}

static void run_in_child(strata_graph *g, const query *q, int repeat, int fd)
{
    outcome o = { .count = -1, .ms = 1e300 };
    for (int r = 0; r < repeat; r++) {
        strata_result *res = NULL;
        double t0 = now_ms();
        strata_status st = strata_query(g, q->text, NULL, &res);
        const strata_value *const *row;
        int64_t count = -1;
        if (st == STRATA_OK && strata_result_next(res, &row))
            strata_value_get_int(row[0], &count);
        while (st == STRATA_OK && strata_result_next(res, &row))
            ;
        double ms = now_ms() - t0;
        const strata_query_error *e = res ? strata_result_error(res) : NULL;
        if (st != STRATA_OK || e) {
            snprintf(o.error, sizeof o.error, "%s", e ? e->message : strata_errmsg(g));
            strata_result_free(&res);
            break;
        }
        strata_result_free(&res);
        o.count = count;
        if (ms < o.ms)
            o.ms = ms;
    }
    ssize_t w = write(fd, &o, sizeof o);
    _exit(w == (ssize_t)sizeof o ? 0 : 1);
}

/* Runs q in a child; returns its outcome and peak resident KiB. */
static outcome run_query(strata_graph *g, const query *q, int repeat, int timeout_s,
                         long *peak_kib)
{
    int fds[2];
    if (pipe(fds) != 0)
        fail("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        alarm((unsigned)timeout_s);
        run_in_child(g, q, repeat, fds[1]);
    }
    close(fds[1]);
    outcome o = { .count = -1 };
    ssize_t got = read(fds[0], &o, sizeof o);
    close(fds[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        fail("wait4: %s", strerror(errno));
    *peak_kib = ru.ru_maxrss;
    if (got != (ssize_t)sizeof o)
        snprintf(o.error, sizeof o.error, "%s",
                 WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "timeout"
                                                                    : "child failed");
    return o;
}

int main(int argc, char **argv)
{
    const char *db = NULL, *queries = NULL, *only = NULL;
    int repeat = 1, timeout_s = 600, threads = 1;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout_s = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!db)
            db = argv[i];
        else if (!queries)
            queries = argv[i];
        else
            fail("unexpected argument %s", argv[i]);
    }
    if (!db || !queries || repeat < 1 || timeout_s < 1 || threads < 1)
        fail("usage: lsqb DB QUERIES [--only qN] [--repeat R] [--timeout S] [--threads T] "
             "[--json]");

    query q[MAX_QUERIES];
    int nq = parse_queries(read_file(queries), q, MAX_QUERIES);
    if (nq == 0)
        fail("%s: no queries", queries);

    long rss0 = rss_kib();
    strata_graph *g;
    char err[512];
    double t0 = now_ms();
    if (strata_load_ex(db, &g, err, sizeof err) != STRATA_OK)
        fail("%s", err);
    double load_ms = now_ms() - t0;
    strata_set_query_threads(g, (unsigned)threads);
    long graph_kib = rss_kib() - rss0;
    strata_memstats ms;
    STRATA_OK_G(g, strata_memory_stats(g, &ms));
    if (!json)
        printf("loaded %s: %llu nodes, %llu relationships in %.0f ms, %.1f MB resident\n\n"
               "%-5s %12s %12s %-5s %10s %10s %7s\n",
               db, (unsigned long long)ms.nodes, (unsigned long long)ms.relationships,
               load_ms, graph_kib / 1024.0, "query", "expected", "count", "ok", "ms",
               "peak MB", "×graph");

    int wrong = 0;
    for (int i = 0; i < nq; i++) {
        if (only && strcmp(only, q[i].name))
            continue;
        long peak;
        outcome o = run_query(g, &q[i], repeat, timeout_s, &peak);
        bool ok = !o.error[0] && o.count == q[i].expected;
        wrong += !ok;
        double ratio = graph_kib > 0 ? (double)(peak - rss0) / graph_kib : 0;
        if (json)
            printf("{\"query\":\"%s\",\"expected\":%lld,\"count\":%lld,\"ok\":%s,"
                   "\"ms\":%.1f,\"peak_mb\":%.1f,\"graph_mb\":%.1f,\"error\":\"%s\"}\n",
                   q[i].name, (long long)q[i].expected, (long long)o.count,
                   ok ? "true" : "false", o.error[0] ? -1.0 : o.ms, peak / 1024.0,
                   graph_kib / 1024.0, o.error);
        else if (o.error[0])
            printf("%-5s %12lld %12s %-5s %s\n", q[i].name, (long long)q[i].expected, "-",
                   "no", o.error);
        else
            printf("%-5s %12lld %12lld %-5s %10.1f %10.1f %7.2f\n", q[i].name,
                   (long long)q[i].expected, (long long)o.count, ok ? "yes" : "NO", o.ms,
                   peak / 1024.0, ratio);
        fflush(stdout);
    }
    strata_graph_free(&g);
    return wrong ? 1 : 0;
}
