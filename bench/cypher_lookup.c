/*
 * cypher_lookup — a point lookup through Cypher, end to end:
 *   MATCH (n:Item {key: $k}) RETURN n.v
 * over N nodes with a unique index on key, through strata_query with a
 * parameter map, timed per query (parse, plan, run, read the row, free).
 *
 *   cypher_lookup [--nodes N] [--queries Q] [--quick] [--compare]
 *
 * For scale it also times the same lookup through the direct API
 * (strata_index_get + strata_node_read).  With --compare, in the same run
 * and over the same keys: the statement on a view (strata_view_query, as
 * a reader thread runs it) and SQLite's prepared SELECT on the same rows
 * (an in-memory database, item(key INTEGER PRIMARY KEY, v TEXT) WITHOUT
 * ROWID: one B-tree probe by key, as the unique index is one; bind, step,
 * read the column, reset), each lookup timed alone like the Cypher one.
 * Also with --compare: the statement prepared once (strata_prepare),
 * its parameter bound and run per lookup, on the graph
 * (strata_stmt_execute) and on the view (strata_stmt_execute_view).
 * Without it the program runs only what it always ran, so instruction
 * counts stay comparable across versions.  With --prepared the first
 * loop runs the prepared statement on the graph instead of strata_query
 * (for callgrind: the same keys, the same set-up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <strata.h>

#define BENCH_NAME "cypher_lookup"
#include "bench_util.h"

/* The statement through strata_view_query on a view, per lookup. */
static void view_lookups(strata_view *view, const char *q, long n, double *t, long queries,
                         uint64_t *seed)
{
    const char *names[] = { "k" };
    for (long i = 0; i < queries; i++) {
        strata_value *k = strata_value_int((int64_t)(xorshift(seed) % (uint64_t)n));
        const strata_value *vals[] = { k };
        strata_value *params = strata_value_map(names, vals, 1);
        strata_result *r;
        double t0 = now_us();
        STRATA_OK_V(view, strata_view_query(view, q, params, &r));
        const strata_value *const *row;
        if (!strata_result_next(r, &row) || strata_value_type(row[0]) != STRATA_STRING)
            fail("view lookup %ld found nothing", i);
        strata_result_free(&r);
        t[i] = now_us() - t0;
        strata_value_free(&params);
        strata_value_free(&k);
    }
    stats s = summarise(t, (int)queries);
    printf("Cypher on a view (strata_view_query, plan cached): mean %.2f us, median %.2f us, "
           "worst %.1f us\n", s.mean, s.median, s.worst);
}

/* The statement prepared once, bound and run per lookup: on the graph
   (view NULL) or on the view. */
static void prepared_lookups(strata_graph *g, strata_view *view, const char *q, long n,
                             double *t, long queries, uint64_t *seed, bool quiet)
{
    strata_stmt *stmt;
    strata_status st = view ? strata_view_prepare(view, q, &stmt) : strata_prepare(g, q, &stmt);
    if (st != STRATA_OK)
        fail("prepare: %s", view ? strata_view_errmsg(view) : strata_errmsg(g));
    for (long i = 0; i < queries; i++) {
        int64_t k = (int64_t)(xorshift(seed) % (uint64_t)n);
        strata_result *r;
        double t0 = now_us();
        if (strata_stmt_bind_int(stmt, "k", k) != STRATA_OK)
            fail("bind: %s", strata_stmt_errmsg(stmt));
        st = view ? strata_stmt_execute_view(stmt, view, &r) : strata_stmt_execute(stmt, &r);
        if (st != STRATA_OK)
            fail("prepared lookup %ld: %s", i,
                 r ? strata_result_error(r)->message : strata_stmt_errmsg(stmt));
        const strata_value *const *row;
        if (!strata_result_next(r, &row) || strata_value_type(row[0]) != STRATA_STRING)
            fail("prepared lookup %ld found nothing", i);
        strata_result_free(&r);
        t[i] = now_us() - t0;
    }
    strata_stmt_free(&stmt);
    if (quiet)
        return;
    stats s = summarise(t, (int)queries);
    printf("Cypher prepared on %s (strata_stmt_execute%s, bind per lookup): mean %.2f us, "
           "median %.2f us, worst %.1f us\n", view ? "a view" : "the graph", view ? "_view" : "",
           s.mean, s.median, s.worst);
}

static void sql_ok(sqlite3 *db, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
        fail("sqlite: %s: %s", what, sqlite3_errmsg(db));
}

/* SQLite's prepared SELECT over the same rows, per lookup. */
static void sqlite_lookups(long n, double *t, long queries, uint64_t *seed)
{
    sqlite3 *db;
    sqlite3_stmt *ins, *sel;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        fail("sqlite: cannot open a database");
    sql_ok(db, sqlite3_exec(db, "CREATE TABLE item(key INTEGER PRIMARY KEY, v TEXT) "
                                "WITHOUT ROWID; BEGIN", NULL, NULL, NULL), "create");
    sql_ok(db, sqlite3_prepare_v2(db, "INSERT INTO item VALUES(?1, ?2)", -1, &ins, NULL),
           "prepare insert");
    for (long i = 0; i < n; i++) {
        char v[32];
        int len = snprintf(v, sizeof v, "value %ld", i);
        sqlite3_bind_int64(ins, 1, i);
        sqlite3_bind_text(ins, 2, v, len, SQLITE_TRANSIENT);
        sql_ok(db, sqlite3_step(ins), "insert");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sql_ok(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
    sql_ok(db, sqlite3_prepare_v2(db, "SELECT v FROM item WHERE key = ?1", -1, &sel, NULL),
           "prepare select");
    for (long i = 0; i < queries; i++) {
        int64_t k = (int64_t)(xorshift(seed) % (uint64_t)n);
        double t0 = now_us();
        sqlite3_bind_int64(sel, 1, k);
        if (sqlite3_step(sel) != SQLITE_ROW || !sqlite3_column_text(sel, 0))
            fail("sqlite lookup %ld found nothing", i);
        sqlite3_reset(sel);
        t[i] = now_us() - t0;
    }
    stats s = summarise(t, (int)queries);
    printf("SQLite prepared SELECT (in memory, same keys): mean %.2f us, median %.2f us, "
           "worst %.1f us\n", s.mean, s.median, s.worst);
    sqlite3_finalize(sel);
    sqlite3_close(db);
}

int main(int argc, char **argv)
{
    long n = 100000, queries = 200000;
    bool compare = false, prepared = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            queries = atol(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            n = 10000, queries = 20000;
        else if (!strcmp(argv[i], "--compare"))
            compare = true;
        else if (!strcmp(argv[i], "--prepared"))
            prepared = true;
        else
            fail("usage: cypher_lookup [--nodes N] [--queries Q] [--quick] [--compare] "
                 "[--prepared]");
    }
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK || n < 1 || queries < 1)
        fail("bad arguments or out of memory");
    strata_result *r;
    char text[160];
    snprintf(text, sizeof text,
             "UNWIND range(0, %ld) AS i CREATE (:Item {key: i, v: 'value ' + toString(i)})",
             n - 1);
    STRATA_OK_G(g, strata_query(g, text, NULL, &r));
    strata_result_free(&r);
    STRATA_OK_G(g, strata_query(g, "CREATE CONSTRAINT FOR (n:Item) REQUIRE n.key IS UNIQUE",
                                NULL, &r));
    strata_result_free(&r);

    const char *q = "MATCH (n:Item {key: $k}) RETURN n.v";
    const char *names[] = { "k" };
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    double *t = malloc(sizeof(double) * (size_t)queries);
    if (prepared)
        prepared_lookups(g, NULL, q, n, t, queries, &seed, false);
    for (long i = 0; i < queries && !prepared; i++) {
        strata_value *k = strata_value_int((int64_t)(xorshift(&seed) % (uint64_t)n));
        const strata_value *vals[] = { k };
        strata_value *params = strata_value_map(names, vals, 1);
        double t0 = now_us();
        STRATA_OK_G(g, strata_query(g, q, params, &r));
        const strata_value *const *row;
        if (!strata_result_next(r, &row) || strata_value_type(row[0]) != STRATA_STRING)
            fail("lookup %ld found nothing", i);
        strata_result_free(&r);
        t[i] = now_us() - t0;
        strata_value_free(&params);
        strata_value_free(&k);
    }
    stats s = summarise(t, (int)queries);
    if (!prepared)
        printf("Cypher point lookup (%ld nodes, unique index, parameter): mean %.2f us, median "
               "%.2f us, worst %.1f us\n", n, s.mean, s.median, s.worst);

    /* The same lookup through the direct API, for scale. */
    strata_view *view;
    strata_index idx = 0;
    strata_token vkey;
    STRATA_OK_G(g, strata_snapshot(g, &view));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "v", &vkey));
    strata_value *into = strata_value_null();
    double t0 = now_us();
    for (long i = 0; i < queries; i++) {
        strata_value *k = strata_value_int((int64_t)(xorshift(&seed) % (uint64_t)n));
        const strata_value *key[] = { k };
        strata_id id;
        STRATA_OK_V(view, strata_index_get(view, idx, key, 1, &id));
        STRATA_OK_V(view, strata_node_read(view, id, vkey, into));
        strata_value_free(&k);
    }
    printf("direct API (strata_index_get + strata_node_read): %.2f us per lookup\n",
           (now_us() - t0) / queries);
    strata_value_free(&into);
    if (compare) {
        view_lookups(view, q, n, t, queries, &seed);
        prepared_lookups(g, NULL, q, n, t, queries, &seed, false);
        prepared_lookups(g, view, q, n, t, queries, &seed, false);
        sqlite_lookups(n, t, queries, &seed);
    }
    strata_view_release(&view);
    free(t);
    strata_graph_free(&g);
    return 0;
}
