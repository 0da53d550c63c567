/* Prepared statements (strata_prepare, strata_stmt_bind, strata_stmt_execute):
   errors and misuse, parameters, runs after graph writes and schema
   changes, runs on views, statements that are opened afresh each run
   (aggregation, LIMIT $n, UNWIND, writes), a result left half read, and
   the allocations a run makes — none once warmed up.  Each run's rows are
   checked against strata_query's for the same text and parameters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "storage/mem.h"
#include "strata.h"

#define NODES 100

static const char lookup[] = "MATCH (n:Item {key: $k}) RETURN n.v";

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static strata_graph *items(bool unique)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char q[128];
    snprintf(q, sizeof q,
             "UNWIND range(0, %d) AS i CREATE (:Item {key: i, v: 'value ' + toString(i)})",
             NODES - 1);
    run(g, q);
    if (unique)
        run(g, "CREATE CONSTRAINT item_key FOR (n:Item) REQUIRE n.key IS UNIQUE");
    return g;
}

/* The rows of a result as one text: each value's type and, for ints and
   strings, the value; rows separated by ';'.  The result is freed. */
static void rows_text(strata_result **rp, char *out, size_t size)
{
    strata_result *r = *rp;
    size_t used = 0;
    out[0] = '\0';
    const strata_value *const *row;
    size_t ncols = strata_result_columns(r, NULL);
    while (strata_result_next(r, &row)) {
        for (size_t c = 0; c < ncols; c++) {
            int64_t i;
            const char *s;
            size_t len;
            if (strata_value_get_int(row[c], &i) == STRATA_OK)
                used += (size_t)snprintf(out + used, size - used, "%lld,", (long long)i);
            else if (strata_value_get_string(row[c], &s, &len) == STRATA_OK)
                used += (size_t)snprintf(out + used, size - used, "'%.*s',", (int)len, s);
            else
                used += (size_t)snprintf(out + used, size - used, "t%d,",
                                         (int)strata_value_type(row[c]));
            assert_true(used < size);
        }
        used += (size_t)snprintf(out + used, size - used, ";");
        assert_true(used < size);
    }
    const strata_query_error *e = strata_result_error(r);
    if (e)
        snprintf(out + used, size - used, "error %s", e->code);
    strata_result_free(rp);
}

/* What strata_query (on g) or strata_view_query (on v) gives for text
   with $k bound to key (or no parameters when key is NULL). */
static void expected(strata_graph *g, strata_view *v, const char *text, strata_value *key,
                     char *out, size_t size)
{
    const char *names[] = { "k" };
    const strata_value *vals[] = { key };
    strata_value *params = key ? strata_value_map(names, vals, 1) : NULL;
    strata_result *r = NULL;
    if (v)
        strata_view_query(v, text, params, &r);
    else
        strata_query(g, text, params, &r);
    assert_non_null(r);
    rows_text(&r, out, size);
    strata_value_free(&params);
}

/* One run of s ($k bound to key unless NULL) on g or v, against strata_query. */
static void check_run(strata_stmt *s, strata_graph *g, strata_view *v, const char *text,
                      strata_value *key)
{
    if (key)
        assert_int_equal(strata_stmt_bind(s, "k", key), STRATA_OK);
    strata_result *r = NULL;
    strata_status st = v ? strata_stmt_execute_view(s, v, &r) : strata_stmt_execute(s, &r);
    assert_non_null(r);
    assert_true(st == STRATA_OK || strata_result_error(r));
    char got[4096], want[4096];
    rows_text(&r, got, sizeof got);
    assert_null(r);
    expected(g, v, text, key, want, sizeof want);
    if (strcmp(got, want) != 0)
        fail_msg("%s: prepared gave [%s], strata_query [%s]", text, got, want);
}

static void check_key(strata_stmt *s, strata_graph *g, strata_view *v, const char *text,
                      int64_t k)
{
    strata_value *key = strata_value_int(k);
    check_run(s, g, v, text, key);
    strata_value_free(&key);
}

static void errors_and_misuse(void **state)
{
    (void)state;
    strata_graph *g = items(true), *other = items(false);
    strata_stmt *s = (strata_stmt *)&s;
    /* syntax and semantic errors come from preparing */
    assert_int_equal(strata_prepare(g, "MATCH (n RETURN n", &s), STRATA_EINVAL);
    assert_null(s);
    assert_non_null(strstr(strata_errmsg(g), "SyntaxError"));
    assert_int_equal(strata_prepare(g, "RETURN nosuch", &s), STRATA_EINVAL);
    assert_null(s);
    assert_non_null(strstr(strata_errmsg(g), "nosuch"));
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_view_prepare(v, "RETURN 1 +", &s), STRATA_EINVAL);
    assert_non_null(strstr(strata_view_errmsg(v), "SyntaxError"));
    assert_int_equal(strata_prepare(NULL, lookup, &s), STRATA_EINVAL);
    assert_int_equal(strata_prepare(g, NULL, &s), STRATA_EINVAL);
    assert_int_equal(strata_prepare(g, lookup, NULL), STRATA_EINVAL);

    assert_int_equal(strata_prepare(g, lookup, &s), STRATA_OK);
    /* a parameter the text does not name */
    assert_int_equal(strata_stmt_bind_int(s, "key", 1), STRATA_EINVAL);
    assert_non_null(strstr(strata_stmt_errmsg(s), "$key"));
    assert_int_equal(strata_stmt_bind(s, "k", NULL), STRATA_EINVAL);
    /* unbound: missing, as from strata_query's map */
    strata_result *r = NULL;
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_EINVAL);
    assert_string_equal(strata_result_error(r)->code, "ArgumentError");
    assert_string_equal(strata_result_error(r)->detail, "MissingParameter");
    strata_result_free(&r);
    /* one run at a time: no run or bind while its result is out */
    assert_int_equal(strata_stmt_bind_int(s, "k", 5), STRATA_OK);
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_OK);
    strata_result *again = (strata_result *)&again;
    assert_int_equal(strata_stmt_execute(s, &again), STRATA_EINVAL);
    assert_null(again);
    assert_non_null(strstr(strata_stmt_errmsg(s), "still open"));
    assert_int_equal(strata_stmt_bind_int(s, "k", 6), STRATA_EINVAL);
    assert_int_equal(strata_stmt_clear_bindings(s), STRATA_EINVAL);
    char got[256];
    rows_text(&r, got, sizeof got);
    assert_string_equal(got, "'value 5',;");
    /* a view of another graph */
    strata_view *ov;
    assert_int_equal(strata_snapshot(other, &ov), STRATA_OK);
    assert_int_equal(strata_stmt_execute_view(s, ov, &r), STRATA_EINVAL);
    assert_null(r);
    assert_non_null(strstr(strata_stmt_errmsg(s), "another graph"));
    strata_view_release(&ov);
    strata_stmt_free(&s);
    assert_null(s);

    /* prepared on a view: runs on views only */
    assert_int_equal(strata_view_prepare(v, lookup, &s), STRATA_OK);
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_EINVAL);
    assert_null(r);
    strata_stmt_free(&s);
    /* a write on a view is refused, as strata_view_query refuses it */
    assert_int_equal(strata_prepare(g, "CREATE (:Item {key: $k})", &s), STRATA_OK);
    assert_int_equal(strata_stmt_bind_int(s, "k", 1000), STRATA_OK);
    assert_int_equal(strata_stmt_execute_view(s, v, &r), STRATA_EINVAL);
    assert_string_equal(strata_result_error(r)->code, "SemanticError");
    strata_result_free(&r);
    strata_stmt_free(&s);
    /* an error while running leaves the statement usable */
    assert_int_equal(strata_prepare(g, "MATCH (n:Item {key: $k}) RETURN 10 / (n.key - 3)", &s),
                     STRATA_OK);
    for (int64_t k = 2; k <= 4; k++) {
        check_key(s, g, NULL, "MATCH (n:Item {key: $k}) RETURN 10 / (n.key - 3)", k);
        check_key(s, g, v, "MATCH (n:Item {key: $k}) RETURN 10 / (n.key - 3)", k);
    }
    strata_stmt_free(&s);
    strata_stmt_free(&s);   /* NULL: nothing */
    strata_view_release(&v);
    strata_graph_free(&other);
    strata_graph_free(&g);
}

static void parameters(void **state)
{
    (void)state;
    strata_graph *g = items(true);
    const char *text = "MATCH (n:Item) WHERE n.key IN $ks AND n.v STARTS WITH $p "
                       "RETURN n.key, $p AS p ORDER BY n.key";
    strata_stmt *s;
    assert_int_equal(strata_prepare(g, text, &s), STRATA_OK);
    strata_value *one = strata_value_int(1), *two = strata_value_int(22), *bad = strata_value_null();
    const strata_value *items2[] = { one, two };
    strata_value *list = strata_value_list(items2, 2), *prefix = strata_value_string("value", 5);
    assert_int_equal(strata_stmt_bind(s, "ks", list), STRATA_OK);
    assert_int_equal(strata_stmt_bind(s, "p", prefix), STRATA_OK);
    strata_value_free(&list);   /* the statement holds its own copy */
    strata_value_free(&prefix);
    strata_result *r;
    char got[512];
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_OK);
    rows_text(&r, got, sizeof got);
    assert_string_equal(got, "1,'value',;22,'value',;");
    /* rebinding one keeps the other */
    assert_int_equal(strata_stmt_bind(s, "p", bad), STRATA_OK);
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_OK);
    rows_text(&r, got, sizeof got);
    assert_string_equal(got, "");
    /* cleared: both missing */
    assert_int_equal(strata_stmt_clear_bindings(s), STRATA_OK);
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_EINVAL);
    assert_string_equal(strata_result_error(r)->detail, "MissingParameter");
    strata_result_free(&r);
    strata_stmt_free(&s);
    /* a parameter named twice, and one in a nested expression */
    text = "MATCH (n:Item {key: $k}) RETURN $k + 1, [x IN [$k] | x * $k], "
           "exists { MATCH (m:Item {key: $k}) }";
    assert_int_equal(strata_prepare(g, text, &s), STRATA_OK);
    for (int64_t k = 0; k < 5; k++)
        check_key(s, g, NULL, text, k);
    strata_stmt_free(&s);
    strata_value_free(&one);
    strata_value_free(&two);
    strata_value_free(&bad);
    strata_graph_free(&g);
}

/* Writes between runs are seen; so are indexes made and dropped: each run
   gives what strata_query gives on the state it reads. */
static void runs_after_writes_and_schema_changes(void **state)
{
    (void)state;
    strata_graph *g = items(true);
    strata_stmt *s;
    assert_int_equal(strata_prepare(g, lookup, &s), STRATA_OK);
    check_key(s, g, NULL, lookup, 7);
    check_key(s, g, NULL, lookup, NODES + 1);
    run(g, "CREATE (:Item {key: 101, v: 'new'})");
    check_key(s, g, NULL, lookup, NODES + 1);
    run(g, "MATCH (n:Item {key: 7}) SET n.v = 'changed'");
    check_key(s, g, NULL, lookup, 7);
    run(g, "MATCH (n:Item {key: 8}) DELETE n");
    check_key(s, g, NULL, lookup, 8);
    /* the constraint's index dropped: the label is scanned */
    run(g, "DROP CONSTRAINT item_key");
    for (int64_t k = 5; k < 12; k++)
        check_key(s, g, NULL, lookup, k);
    run(g, "CREATE (:Item {key: 9, v: 'twin'})");   /* no longer unique */
    check_key(s, g, NULL, lookup, 9);
    run(g, "CREATE INDEX item_plain FOR (n:Item) ON (n.key)");
    check_key(s, g, NULL, lookup, 9);
    check_key(s, g, NULL, lookup, 10);
    run(g, "DROP INDEX item_plain");
    check_key(s, g, NULL, lookup, 9);
    /* a unique index the statement seeks, dropped and replaced by another
       on another key or label: the run plans again */
    run(g, "MATCH (n:Item {key: 9, v: 'twin'}) DELETE n");
    for (int other = 0; other < 2; other++) {
        run(g, "CREATE CONSTRAINT item_key FOR (n:Item) REQUIRE n.key IS UNIQUE");
        check_key(s, g, NULL, lookup, 12);
        check_key(s, g, NULL, lookup, 13);
        run(g, "DROP CONSTRAINT item_key");
        run(g, other ? "CREATE CONSTRAINT item_v FOR (n:Item) REQUIRE n.v IS UNIQUE"
                     : "CREATE CONSTRAINT item_v FOR (n:Other) REQUIRE n.key IS UNIQUE");
        check_key(s, g, NULL, lookup, 12);
        check_key(s, g, NULL, lookup, 13);
        run(g, "DROP CONSTRAINT item_v");
        check_key(s, g, NULL, lookup, 14);
    }
    /* inside a transaction: the run reads its writes */
    assert_int_equal(strata_begin(g), STRATA_OK);
    run(g, "CREATE (:Item {key: 500, v: 'in txn'})");
    check_key(s, g, NULL, lookup, 500);
    assert_int_equal(strata_rollback(g), STRATA_OK);
    check_key(s, g, NULL, lookup, 500);
    strata_stmt_free(&s);
    strata_graph_free(&g);
}

/* Runs on views read each view's state: one taken before a write does not
   see it, one after does; a statement prepared on a view runs on others. */
static void runs_on_views(void **state)
{
    (void)state;
    strata_graph *g = items(true);
    strata_view *before, *after;
    assert_int_equal(strata_snapshot(g, &before), STRATA_OK);
    run(g, "CREATE (:Item {key: 200, v: 'late'})");
    run(g, "MATCH (n:Item {key: 3}) DELETE n");
    assert_int_equal(strata_snapshot(g, &after), STRATA_OK);
    strata_stmt *s, *vs;
    assert_int_equal(strata_prepare(g, lookup, &s), STRATA_OK);
    assert_int_equal(strata_view_prepare(before, lookup, &vs), STRATA_OK);
    for (int round = 0; round < 3; round++)
        for (int64_t k = 2; k < 5; k++) {
            check_key(s, g, before, lookup, k);
            check_key(s, g, after, lookup, k);
            check_key(s, g, NULL, lookup, k);
            check_key(vs, g, after, lookup, 200);
            check_key(vs, g, before, lookup, 200);
        }
    /* the result holds its view: the graph may change while it is read */
    assert_int_equal(strata_stmt_bind_int(s, "k", 200), STRATA_OK);
    strata_result *r;
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_OK);
    run(g, "MATCH (n:Item {key: 200}) DELETE n");
    char got[128];
    rows_text(&r, got, sizeof got);
    assert_string_equal(got, "'late',;");
    check_key(s, g, NULL, lookup, 200);
    strata_stmt_free(&s);
    strata_stmt_free(&vs);
    strata_view_release(&before);
    strata_view_release(&after);
    strata_graph_free(&g);
}

/* Statements whose pipeline is opened afresh each run (aggregation,
   ORDER BY, LIMIT $n, UNWIND, OPTIONAL MATCH, several clauses, writes)
   and ones kept open (a scan, WITH ... WHERE), read whole or half. */
static void statements_of_every_shape(void **state)
{
    (void)state;
    strata_graph *g = items(false);
    run(g, "MATCH (a:Item), (b:Item) WHERE b.key = a.key + 1 AND a.key < 20 "
           "CREATE (a)-[:NEXT]->(b)");
    const char *texts[] = {
        "MATCH (n:Item) WHERE n.key < $k RETURN count(n)",
        "MATCH (n:Item) WHERE n.key < $k RETURN n.key ORDER BY n.key DESC",
        "MATCH (n:Item) RETURN n.key ORDER BY n.key LIMIT $k",
        "MATCH (n:Item) WHERE n.key < 50 RETURN n.key SKIP $k",
        "UNWIND range(1, $k) AS i MATCH (n:Item {key: i}) RETURN n.v",
        "MATCH (n:Item {key: $k}) OPTIONAL MATCH (n)-[:NEXT]->(m) RETURN n.key, m.key",
        "MATCH (n:Item {key: $k})-[:NEXT]->(m)-[:NEXT]->(o) RETURN o.key",
        "MATCH (n:Item) WHERE n.key < $k WITH n.key AS key WHERE key % 2 = 0 RETURN key",
        "MATCH (n:Item {key: $k}) WITH n MATCH (n)-[:NEXT]->(m) RETURN m.v",
        "MATCH (n:Item) WHERE n.key < $k RETURN DISTINCT n.key % 3",
        "MATCH (n:Item) WHERE n.key >= $k RETURN n.key",
        "RETURN $k * 2 AS twice",
    };
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        strata_stmt *s;
        if (strata_prepare(g, texts[t], &s) != STRATA_OK)
            fail_msg("%s: %s", texts[t], strata_errmsg(g));
        for (int64_t k = 0; k < 12; k += 3)
            check_key(s, g, NULL, texts[t], k);
        /* half read, then run again */
        assert_int_equal(strata_stmt_bind_int(s, "k", 5), STRATA_OK);
        strata_result *r;
        assert_int_equal(strata_stmt_execute(s, &r), STRATA_OK);
        strata_result_next(r, NULL);
        strata_result_free(&r);
        check_key(s, g, NULL, texts[t], 15);
        check_key(s, g, NULL, texts[t], 4);
        strata_stmt_free(&s);
    }
    /* a write, run again and again */
    strata_stmt *w;
    assert_int_equal(strata_prepare(g, "CREATE (:New {key: $k}) RETURN $k", &w), STRATA_OK);
    for (int64_t k = 0; k < 5; k++) {
        assert_int_equal(strata_stmt_bind_int(w, "k", k), STRATA_OK);
        strata_result *r;
        assert_int_equal(strata_stmt_execute(w, &r), STRATA_OK);
        strata_query_stats stats;
        strata_result_stats(r, &stats);
        assert_int_equal(stats.nodes_created, 1);
        strata_result_free(&r);
    }
    strata_stmt_free(&w);
    char got[128];
    expected(g, NULL, "MATCH (n:New) RETURN count(n)", NULL, got, sizeof got);
    assert_string_equal(got, "5,;");
    strata_graph_free(&g);
}

/* strata_stmt_free while a result is out: the statement goes with it. */
static void free_with_result_out(void **state)
{
    (void)state;
    strata_graph *g = items(true);
    strata_stmt *s;
    assert_int_equal(strata_prepare(g, "MATCH (n:Item) RETURN n.key", &s), STRATA_OK);
    strata_result *r;
    assert_int_equal(strata_stmt_execute(s, &r), STRATA_OK);
    strata_stmt_free(&s);
    assert_null(s);
    long n = 0;
    while (strata_result_next(r, NULL))
        n++;
    assert_int_equal(n, NODES);
    strata_result_free(&r);
    strata_graph_free(&g);
}

/* Once warmed up, a prepared point lookup allocates nothing per run, on
   the graph and on a view, found or not; strata_query's one block (its
   result) is what the statement saves. */
static long allocations_of(strata_stmt *s, strata_view *v, int runs, bool found)
{
    mem_fail_clear();
    for (int i = 0; i < runs; i++) {
        int64_t k = (i * 7 + 3) % NODES + (found ? 0 : NODES);
        assert_int_equal(strata_stmt_bind_int(s, "k", k), STRATA_OK);
        strata_result *r;
        assert_int_equal(v ? strata_stmt_execute_view(s, v, &r) : strata_stmt_execute(s, &r),
                         STRATA_OK);
        assert_int_equal(strata_result_next(r, NULL), found);
        assert_false(strata_result_next(r, NULL));
        strata_result_free(&r);
    }
    return mem_fail_count();
}

static void runs_allocate_nothing(void **state)
{
    (void)state;
    strata_graph *g = items(true);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_stmt *s;
    assert_int_equal(strata_prepare(g, lookup, &s), STRATA_OK);
    for (int on_view = 0; on_view < 2; on_view++)
        for (int found = 0; found < 2; found++) {
            allocations_of(s, on_view ? v : NULL, 3, found);   /* warm-up */
            uint64_t copied = mem_copied_entries();
            long n = allocations_of(s, on_view ? v : NULL, 50, found);
            if (n != 0)
                fail_msg("%s, %s: %ld allocations in 50 runs", on_view ? "view" : "graph",
                         found ? "found" : "missing", n);
            assert_int_equal(mem_copied_entries(), copied);
        }
    strata_stmt_free(&s);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* Every allocation of preparing fails in turn: an error, nothing leaked
   (the ASan build checks), and the next attempt works. */
static void prepare_fails_cleanly(void **state)
{
    (void)state;
    strata_graph *g = items(true);
    const char *text = "MATCH (n:Item {key: $k}) WHERE n.v <> $other RETURN n.v, $k";
    for (long k = 1;; k++) {
        strata_stmt *s = NULL;
        mem_fail_at(k);
        strata_status st = strata_prepare(g, text, &s);
        mem_fail_clear();
        if (st == STRATA_OK) {
            strata_value *other = strata_value_string("x", 1);
            assert_int_equal(strata_stmt_bind_int(s, "k", 3), STRATA_OK);
            assert_int_equal(strata_stmt_bind(s, "other", other), STRATA_OK);
            strata_value_free(&other);
            strata_result *r;
            assert_int_equal(strata_stmt_execute(s, &r), STRATA_OK);
            char got[64];
            rows_text(&r, got, sizeof got);
            assert_string_equal(got, "'value 3',3,;");
            strata_stmt_free(&s);
            break;
        }
        assert_int_equal(st, STRATA_ENOMEM);
        assert_null(s);
        assert_true(k < 1000);
    }
    strata_graph_free(&g);
}

/* A statement whose stages outgrow the result block's arena takes chunks
   from the allocator on its first run: each allocation of that run fails
   in turn, an OutOfMemory result each time, and the next run works (and
   then, parked, allocates nothing). */
static void run_fails_cleanly(void **state)
{
    (void)state;
    strata_graph *g = items(true);
    char q[2048] = "MATCH (n:Item {key: $k}) RETURN n.v AS c0";
    for (int i = 1; i < 60; i++)
        snprintf(q + strlen(q), sizeof q - strlen(q), ", n.key + %d AS c%d", i, i);
    strata_stmt *s;
    assert_int_equal(strata_prepare(g, q, &s), STRATA_OK);
    assert_int_equal(strata_stmt_bind_int(s, "k", 7), STRATA_OK);
    long failures = 0;
    for (long k = 1;; k++) {
        strata_result *r = NULL;
        mem_fail_at(k);
        strata_status st = strata_stmt_execute(s, &r);
        mem_fail_clear();
        assert_non_null(r);
        if (st == STRATA_OK) {
            const strata_value *const *row;
            assert_true(strata_result_next(r, &row));
            int64_t c59 = 0;
            assert_int_equal(strata_value_get_int(row[59], &c59), STRATA_OK);
            assert_int_equal(c59, 7 + 59);
            strata_result_free(&r);
            break;
        }
        assert_int_equal(st, STRATA_ENOMEM);
        assert_string_equal(strata_result_error(r)->code, "OutOfMemory");
        strata_result_free(&r);
        failures++;
        assert_true(k < 1000);
    }
    assert_true(failures > 0);   /* the arena took chunks */
    mem_fail_clear();
    for (int i = 0; i < 3; i++)
        check_key(s, g, NULL, q, i);
    strata_stmt_free(&s);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_and_misuse),
        cmocka_unit_test(parameters),
        cmocka_unit_test(runs_after_writes_and_schema_changes),
        cmocka_unit_test(runs_on_views),
        cmocka_unit_test(statements_of_every_shape),
        cmocka_unit_test(free_with_result_out),
        cmocka_unit_test(runs_allocate_nothing),
        cmocka_unit_test(prepare_fails_cleanly),
        cmocka_unit_test(run_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
