/*
 * commit — durable commits per second, strata's log against SQLite in WAL
 * mode, in the same run and on the same disk (the write-ahead log's targets, docs/BENCHMARKS.md), and
 * recovery speed.
 *
 *   single   one SET of an integer property per commit (strata: an idle
 *            strata_node_set; SQLite: an autocommitted UPDATE, prepared)
 *   txn100   100 SETs per transaction
 *
 * in each sync mode: strata sync full/normal/off against SQLite
 * synchronous=FULL/NORMAL/OFF (journal_mode=WAL).  Each case runs for
 * --seconds (default 2) or --max commits, --rounds times (default 3,
 * alternating strata and SQLite; medians reported).  Then recovery: --records
 * single-SET records written with sync off, the graph closed, and
 * strata_open timed replaying them.
 *
 *   commit [--dir DIR] [--seconds S] [--max N] [--rounds R] [--records N]
 */
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strata.h"

#define NODES 10000

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "commit: %s\n", what);
    exit(1);
}

static void rmrf(const char *path)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        die("rm -rf failed");
}

typedef struct run {
    double seconds;
    long max;
    int rounds;
} run;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- strata ------------------------------------------------------------------- */

static strata_graph *strata_setup(const char *db, strata_sync sync, strata_token *key)
{
    rmrf(db);
    strata_graph *g = NULL;
    char err[512];
    strata_open_options o = { .sync = STRATA_SYNC_OFF, .err = err, .errlen = sizeof err };
    if (strata_open(db, &o, &g) != STRATA_OK)
        die(err);
    strata_token l;
    strata_token_intern(g, STRATA_LABEL, "N", &l);
    strata_token_intern(g, STRATA_KEY, "v", key);
    strata_begin(g);
    for (int i = 0; i < NODES; i++) {
        strata_id n;
        strata_node_create(g, &l, 1, &n);
    }
    if (strata_commit(g) != STRATA_OK)
        die("strata setup commit");
    strata_close(&g);
    o.sync = sync;
    if (strata_open(db, &o, &g) != STRATA_OK)
        die(err);
    return g;
}

/* Commits per second, per = writes per commit. */
static double strata_case(const char *db, strata_sync sync, int per, const run *r)
{
    strata_token key;
    strata_graph *g = strata_setup(db, sync, &key);
    long commits = 0, w = 0;
    double t0 = now_s(), t;
    do {
        if (per > 1 && strata_begin(g) != STRATA_OK)
            die("begin");
        for (int i = 0; i < per; i++, w++) {
            strata_value *v = strata_value_int(w);
            if (strata_node_set(g, (strata_id)(w % NODES), key, v) != STRATA_OK)
                die(strata_errmsg(g));
            strata_value_free(&v);
        }
        if (per > 1 && strata_commit(g) != STRATA_OK)
            die(strata_errmsg(g));
        commits++;
        t = now_s() - t0;
    } while (t < r->seconds && commits < r->max);
    strata_close(&g);
    rmrf(db);
    return (double)commits / t;
}

/* ---- SQLite -------------------------------------------------------------------- */

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        die(err ? err : sql);
}

static double sqlite_case(const char *path, const char *sync, int per, const run *r)
{
    unlink(path);
    char side[1100];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die("sqlite open");
    exec(db, "PRAGMA journal_mode=WAL");
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA synchronous=%s", sync);
    exec(db, pragma);
    exec(db, "CREATE TABLE nodes(id INTEGER PRIMARY KEY, v INTEGER)");
    exec(db, "BEGIN");
    sqlite3_stmt *ins;
    sqlite3_prepare_v2(db, "INSERT INTO nodes(id) VALUES (?)", -1, &ins, NULL);
    for (int i = 0; i < NODES; i++) {
        sqlite3_bind_int(ins, 1, i);
        sqlite3_step(ins);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    exec(db, "COMMIT");
    sqlite3_stmt *up, *begin, *commit;
    sqlite3_prepare_v2(db, "UPDATE nodes SET v = ? WHERE id = ?", -1, &up, NULL);
    sqlite3_prepare_v2(db, "BEGIN", -1, &begin, NULL);
    sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL);
    long commits = 0, w = 0;
    double t0 = now_s(), t;
    do {
        if (per > 1) {
            sqlite3_step(begin);
            sqlite3_reset(begin);
        }
        for (int i = 0; i < per; i++, w++) {
            sqlite3_bind_int64(up, 1, w);
            sqlite3_bind_int64(up, 2, w % NODES);
            if (sqlite3_step(up) != SQLITE_DONE)
                die(sqlite3_errmsg(db));
            sqlite3_reset(up);
        }
        if (per > 1) {
            if (sqlite3_step(commit) != SQLITE_DONE)
                die(sqlite3_errmsg(db));
            sqlite3_reset(commit);
        }
        commits++;
        t = now_s() - t0;
    } while (t < r->seconds && commits < r->max);
    sqlite3_finalize(up);
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    sqlite3_close(db);
    unlink(path);
    return (double)commits / t;
}

/* ---- recovery ------------------------------------------------------------------- */

static void recovery(const char *db, long records)
{
    strata_token key;
    strata_graph *g = strata_setup(db, STRATA_SYNC_OFF, &key);
    for (long w = 0; w < records; w++) {
        strata_value *v = strata_value_int(w);
        if (strata_node_set(g, (strata_id)(w % NODES), key, v) != STRATA_OK)
            die(strata_errmsg(g));
        strata_value_free(&v);
    }
    strata_close(&g);
    strata_open_report rep;
    strata_open_options o = { .sync = STRATA_SYNC_OFF, .report = &rep };
    double t0 = now_s();
    if (strata_open(db, &o, &g) != STRATA_OK)
        die("reopen");
    double t = now_s() - t0;
    printf("recovery: %llu records replayed in %.3f s: %.2f M records/s\n",
           (unsigned long long)rep.records_replayed, t, (double)rep.records_replayed / t / 1e6);
    strata_close(&g);
    rmrf(db);
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    run r = { 2.0, 1000000, 3 };
    long records = 1000000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            r.seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--max"))
            r.max = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            r.rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--records"))
            records = atol(argv[i + 1]);
        else
            die("usage: commit [--dir DIR] [--seconds S] [--max N] [--rounds R] [--records N]");
    }
    char db[1024], lite[1024];
    snprintf(db, sizeof db, "%s/commit-bench-strata", dir);
    snprintf(lite, sizeof lite, "%s/commit-bench.sqlite", dir);
    static const struct {
        strata_sync s;
        const char *name, *sqlite;
    } modes[] = { { STRATA_SYNC_FULL, "full", "FULL" },
                  { STRATA_SYNC_NORMAL, "normal", "NORMAL" },
                  { STRATA_SYNC_OFF, "off", "OFF" } };
    printf("%-8s %-7s %14s %14s %7s\n", "case", "sync", "strata c/s", "sqlite c/s", "ratio");
    for (int per = 1; per <= 100; per += 99)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            /* Rounds alternate between the two so that a busy disk
               weighs on both alike; the medians are compared. */
            double a_all[16], b_all[16];
            int n = r.rounds < 1 ? 1 : r.rounds > 16 ? 16 : r.rounds;
            for (int k = 0; k < n; k++) {
                a_all[k] = strata_case(db, modes[m].s, per, &r);
                b_all[k] = sqlite_case(lite, modes[m].sqlite, per, &r);
            }
            qsort(a_all, (size_t)n, sizeof *a_all, cmp_double);
            qsort(b_all, (size_t)n, sizeof *b_all, cmp_double);
            double a = a_all[n / 2], b = b_all[n / 2];
            printf("%-8s %-7s %14.0f %14.0f %7.2f\n", per == 1 ? "single" : "txn100",
                   modes[m].name, a, b, a / b);
            fflush(stdout);
        }
    recovery(db, records);
    return 0;
}
