/* Streaming LOAD CSV: where the clauses after it allow (query.c,
   load_csv_streams), the file is read a batch of rows at a time and each
   batch runs through them; the graph must be exactly what reading it
   whole gives, an error in any batch undoes the writes of the batches
   before it, and a query that could see an earlier batch's writes is not
   streamed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "storage/mem.h"
#include "strata.h"

static char dir[64];

static void write_files(int nodes, int rels)
{
    char path[128];
    snprintf(path, sizeof path, "%s/nodes.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "id,name\n");
    for (int i = 0; i < nodes; i++)
        fprintf(f, "%d,n%d\n", i, i);
    fclose(f);
    snprintf(path, sizeof path, "%s/rels.csv", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "a,b\n");
    for (int i = 0; i < rels; i++)
        fprintf(f, "%lld,%lld\n", (long long)i * 7919 % nodes, ((long long)i * 104729 + 1) % nodes);
    fclose(f);
}

static int64_t scalar(strata_graph *g, const char *q)
{
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    const strata_value *const *row;
    int64_t v = -1;
    if (strata_result_next(r, &row))
        assert_int_equal(strata_value_get_int(row[0], &v), STRATA_OK);
    strata_result_free(&r);
    return v;
}

static void run(strata_graph *g, const char *fmt, const char *suffix)
{
    char q[512];
    snprintf(q, sizeof q, fmt, dir, suffix);
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    strata_result_free(&r);
}

static const char *const load_nodes =
    "LOAD CSV WITH HEADERS FROM 'file://%s/nodes.csv' AS row "
    "CREATE (:P {id: toInteger(row.id), name: row.name}) %s";
static const char *const load_rels =
    "LOAD CSV WITH HEADERS FROM 'file://%s/rels.csv' AS row "
    "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
    "CREATE (a)-[:R {line: linenumber()}]->(b) %s";

/* A fingerprint of the graph: counts and sums over ids and lines. */
static void fingerprint(strata_graph *g, int64_t out[4])
{
    out[0] = scalar(g, "MATCH (n:P) RETURN count(n)");
    out[1] = scalar(g, "MATCH (n:P) RETURN sum(n.id * 3 + size(n.name))");
    out[2] = scalar(g, "MATCH (a)-[r:R]->(b) RETURN count(r)");
    out[3] = scalar(g, "MATCH (a)-[r:R]->(b) RETURN sum(a.id * 7 + b.id * 3 + r.line)");
}

/* The same loads streamed and read whole (a trailing clause that needs
   every row stops the streaming) give the same graph. */
static void test_streamed_equals_whole(void **state)
{
    (void)state;
    write_files(20000, 50000);
    strata_graph *g[2];
    int64_t fp[2][4];
    size_t peak[2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(strata_graph_new(&g[k]), STRATA_OK);
        run(g[k], "CREATE INDEX FOR (n:P) ON (n.id)", "");
        /* k = 1: an aggregation after the writes makes every row needed
           first */
        const char *suffix = k ? "WITH count(*) AS c RETURN c" : "";
        run(g[k], load_nodes, suffix);
        mem_ctx_peak_reset(mem_scratch());
        size_t before = mem_ctx_bytes(mem_scratch());
        run(g[k], load_rels, suffix);
        peak[k] = mem_ctx_peak(mem_scratch()) - before;
        fingerprint(g[k], fp[k]);
    }
    /* streamed, the scratch memory holds a batch of rows, not 50,000 */
    assert_true(peak[0] * 3 < peak[1]);
    assert_int_equal(fp[0][0], 20000);
    assert_int_equal(fp[0][2], 50000);
    assert_memory_equal(fp[0], fp[1], sizeof fp[0]);
    strata_graph_free(&g[0]);
    strata_graph_free(&g[1]);
}

/* A bad row in a late batch fails the statement and undoes every batch. */
static void test_error_undoes_every_batch(void **state)
{
    (void)state;
    write_files(30000, 10);
    char path[128];
    snprintf(path, sizeof path, "%s/nodes.csv", dir);
    FILE *f = fopen(path, "a");
    fprintf(f, "oops,bad\n");
    fclose(f);
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char q[512];
    snprintf(q, sizeof q, "LOAD CSV WITH HEADERS FROM 'file://%s/nodes.csv' AS row "
             "CREATE (:P {id: 100 / CASE WHEN row.id = 'oops' THEN 0 ELSE 1 END})", dir);
    strata_result *r = NULL;
    assert_int_not_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    assert_non_null(strata_result_error(r));
    strata_result_free(&r);
    assert_int_equal(scalar(g, "MATCH (n) RETURN count(n)"), 0);
    strata_graph_free(&g);
}

/* MATCH after a CREATE of nodes could see an earlier batch's nodes: such
   a query reads every row first, as the clause semantics say. */
static void test_visible_writes_are_not_streamed(void **state)
{
    (void)state;
    write_files(20000, 10);
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE INDEX FOR (n:P) ON (n.id)", "");
    char q[512];
    /* each row creates a node, then matches the five with the highest ids:
       read whole, every row sees them (streamed, only the last batch would) */
    snprintf(q, sizeof q, "LOAD CSV WITH HEADERS FROM 'file://%s/nodes.csv' AS row "
             "CREATE (:P {id: toInteger(row.id)}) WITH row "
             "MATCH (m:P) WHERE m.id >= 19995 CREATE (:Seen)", dir);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(scalar(g, "MATCH (n:Seen) RETURN count(n)"), 20000 * 5);
    strata_graph_free(&g);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/strata_csv_stream_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/nodes.csv", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/rels.csv", dir);
    unlink(path);
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streamed_equals_whole),
        cmocka_unit_test(test_error_undoes_every_batch),
        cmocka_unit_test(test_visible_writes_are_not_streamed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
