/* LOAD CSV's bulk shapes (query/load_csv_fast.h) against the general
   path: every statement runs twice on fresh graphs built alike — once as
   planned, once with the fast path turned off — and the two must agree
   on the status, the error (code, message, position), the counters and
   the whole graph (every node's id, labels and properties, every
   relationship's id, ends, type and properties).  The inputs hold what a
   file can: nulls, quoted and empty quoted fields, missing and extra
   columns, ids toInteger reads and does not, duplicate ids, keys matching
   no node or several, bad UTF-8 and bad records in a late batch.  Each
   case also says whether the fast path must have run, so that a shape it
   should take is not silently left to the general path. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/graph_impl.h"   /* the graph's catalog, for the plan cache */
#include "query/load_csv_fast.h"
#include "query/plan_cache.h"
#include "storage/mem.h"
#include "strata.h"
#include "support/api_dump.h"
#include "support/tmp_dir.h"

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(tmp_path(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The query with $D replaced by the test's directory. */
static const char *expand(const char *q)
{
    static char buf[4096];
    const char *d = strstr(q, "$D");
    if (!d)
        snprintf(buf, sizeof buf, "%s", q);
    else
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(d - q), q, tmp_dir, d + 2);
    return buf;
}

static void run_ok(strata_graph *g, const char *q)
{
    strata_result *r = NULL;
    if (strata_query(g, expand(q), NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* Every row of a read-only query, dumped. */
static void dump_query(sbuf *b, strata_graph *g, const char *q)
{
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    size_t ncols = strata_result_columns(r, NULL);
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        for (size_t c = 0; c < ncols; c++) {
            sb_printf(b, c ? " " : "");
            dump_value(b, row[c]);
        }
        sb_printf(b, "\n");
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
}

static void dump_graph(sbuf *b, strata_graph *g)
{
    sb_printf(b, "graph\n");
    dump_query(b, g, "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey");
    dump_query(b, g, "CALL db.labels() YIELD label RETURN label");
    dump_query(b, g, "MATCH (n) RETURN id(n), labels(n), [k IN keys(n) | [k, n[k]]] "
                     "ORDER BY id(n)");
    dump_query(b, g, "MATCH (a)-[r]->(b) RETURN id(r), id(a), id(b), type(r), "
                     "[k IN keys(r) | [k, r[k]]] ORDER BY id(r)");
}

typedef struct outcome {
    strata_status st;
    sbuf text;   /* error, counters, graph */
    uint64_t fast_runs;
} outcome;

/* setup (statements separated by ';' , may be NULL) then q, on a fresh
   graph; fast or general as asked. */
static void run_case(const char *setup, const char *q, bool fast, outcome *o)
{
    memset(o, 0, sizeof *o);
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char stmts[2048];
    snprintf(stmts, sizeof stmts, "%s", setup ? setup : "");
    for (char *s = strtok(stmts, ";"); s; s = strtok(NULL, ";"))
        run_ok(g, s);
    load_csv_fast_disabled = !fast;
    uint64_t runs = load_csv_fast_runs;
    strata_result *r = NULL;
    o->st = strata_query(g, expand(q), NULL, &r);
    o->fast_runs = load_csv_fast_runs - runs;
    load_csv_fast_disabled = false;
    const strata_query_error *e = strata_result_error(r);
    if (e)
        sb_printf(&o->text, "error %s %s: %s at %u:%u\n", e->code, e->detail ? e->detail : "-",
                  e->message, e->line, e->column);
    strata_query_stats qs;
    strata_result_stats(r, &qs);
    sb_printf(&o->text,
              "stats %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
              " %" PRIu64 "\n",
              qs.nodes_created, qs.nodes_deleted, qs.relationships_created,
              qs.relationships_deleted, qs.properties_set, qs.labels_added, qs.labels_removed);
    strata_result_free(&r);
    dump_graph(&o->text, g);
    strata_graph_free(&g);
}

/* The statement both ways: the same outcome, the fast path taken as
   expected; returns the fast run's status. */
static strata_status differ(const char *setup, const char *q, bool takes_fast)
{
    outcome o[2];
    run_case(setup, q, true, &o[0]);
    run_case(setup, q, false, &o[1]);
    if (o[0].st != o[1].st || strcmp(o[0].text.p, o[1].text.p) != 0)
        fail_msg("%s\nfast (%d):\n%s\ngeneral (%d):\n%s", q, o[0].st, o[0].text.p, o[1].st,
                 o[1].text.p);
    if ((o[0].fast_runs > 0) != takes_fast)
        fail_msg("%s: the fast path %s", q, takes_fast ? "did not run" : "ran");
    assert_int_equal(o[1].fast_runs, 0);
    strata_status st = o[0].st;
    free(o[0].text.p);
    free(o[1].text.p);
    return st;
}

/* Ids as a file holds them: plain, signed, quoted, null, empty quoted,
   text, spaces, fractions, exponents, out of range, a NUL-free 19-digit
   edge, a repeat, a short record (no name) and names with delimiters,
   quotes and line ends. */
static const char nodes_csv[] =
    "id,name\n"
    "1,one\n"
    "2,two\n"
    "-3,minus three\n"
    "+4,plus four\n"
    "\"5\",quoted five\n"
    ",null id\n"
    "\"\",empty quoted id\n"
    "abc,text\n"
    " 6,leading space\n"
    "7 ,trailing space\n"
    "8.9,fraction\n"
    "1e1,exponent\n"
    "99999999999999999999,too large\n"
    "9223372036854775807,largest\n"
    "-9223372036854775808,smallest\n"
    "123456789012345678,eighteen digits\n"
    "1234567890123456789,nineteen digits\n"
    "2,two again\n"
    "11\n"
    "12,\"a, b \"\"c\"\"\nd\"\n"
    "13,\"\"\n";

/* Keys matching one node, none, several (2 is in the file twice), null,
   a float-stored id (20), text, and a short record. */
static const char rels_csv[] =
    "a,b,w\n"
    "1,2,x\n"
    "2,1,y\n"
    "1,404,z\n"
    "404,1,z\n"
    ",1,n\n"
    "1,,n\n"
    "2,2,several\n"
    "20,1,float\n"
    "abc,1,text\n"
    "\"3\",-3,quoted\n"
    "13\n"
    "5,5,self\n";

static const char *const node_setup =
    "CREATE INDEX FOR (n:P) ON (n.id);"
    "CREATE INDEX FOR (n:P) ON (n.name);"
    "CREATE (:P {id: 20.0, name: 'float'});"
    "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
    "CREATE (:P {id: toInteger(row.id), name: row.name})";

static void test_node_shapes(void **state)
{
    (void)state;
    write_file("nodes.csv", nodes_csv);
    const char *setup = "CREATE INDEX FOR (n:P) ON (n.id)";
    differ(setup, "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                  "CREATE (:P {id: toInteger(row.id), name: row.name})", true);
    /* repeated labels, keys out of order, a missing column, row['...'] */
    differ(NULL, "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                 "CREATE (n:P:Q:P {name: row['name'], id: toInteger(row['id']), "
                 "missing: row.nope, raw: row.id})", true);
    differ(NULL, "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row CREATE (:P)", true);
    differ(NULL, "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                 "FIELDTERMINATOR ',' CREATE ({id: TOINTEGER(row.id)})", true);
    /* shapes it leaves alone */
    differ(NULL, "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                 "CREATE (:P {id: toInteger(row.id) + 1})", false);
    differ(NULL, "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                 "CREATE (:P {id: row.id, id: row.name})", false);
    differ(NULL, "LOAD CSV FROM 'file://$D/nodes.csv' AS row CREATE (:P {id: row[0]})",
           false);
    differ(NULL, "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                 "CREATE (:P {id: toInteger(row.id)}), (:Q)", false);
    differ("CREATE (:Old)", "MATCH (n:Old) LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' "
                            "AS row CREATE (n:P {id: toInteger(row.id)})", false);
    /* two constraints broken by one record: the error names the key set
       first (the map's keys in order) */
    write_file("pairs.csv", "b,a\n1,2\n1,2\n");
    assert_int_equal(differ("CREATE CONSTRAINT FOR (n:P) REQUIRE n.a IS UNIQUE;"
                            "CREATE CONSTRAINT FOR (n:P) REQUIRE n.b IS UNIQUE",
                            "LOAD CSV WITH HEADERS FROM 'file://$D/pairs.csv' AS row "
                            "CREATE (:P {b: row.b, a: row.a})", true),
                     STRATA_ECONSTRAINT);
    /* a unique constraint broken by the repeated 2 */
    assert_int_equal(differ("CREATE CONSTRAINT FOR (n:P) REQUIRE n.id IS UNIQUE",
                            "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                            "CREATE (:P {id: toInteger(row.id)})", true),
                     STRATA_ECONSTRAINT);
}

static void test_relationship_shapes(void **state)
{
    (void)state;
    write_file("nodes.csv", nodes_csv);
    write_file("rels.csv", rels_csv);
    const char *m = "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                    "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) ";
    char q[1024];
    const char *creates[] = {
        "CREATE (a)-[:R]->(b)", "CREATE (a)<-[:R]-(b)", "CREATE (b)-[:R]->(a)",
        "CREATE (b)<-[:R]-(a)", "CREATE (a)-[:R]->(a)",
    };
    for (size_t i = 0; i < sizeof creates / sizeof *creates; i++) {
        snprintf(q, sizeof q, "%s%s", m, creates[i]);
        differ(node_setup, q, true);
    }
    /* string keys, row.x and row['x'] mixed, two labels */
    differ(node_setup,
           "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
           "MATCH (a:P {name: row.w}), (b:P {id: toInteger(row['b'])}) CREATE (a)-[:S]->(b)",
           true);
    char setup[1024];
    snprintf(setup, sizeof setup, "%s;CREATE INDEX FOR (n:Q) ON (n.k);"
             "CREATE (:Q {k: 1}), (:Q {k: 1}), (:Q {k: '2'}), (:Q {k: 2.0})", node_setup);
    differ(setup, "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                  "MATCH (a:P {id: toInteger(row.a)}), (b:Q {k: toInteger(row.b)}) "
                  "CREATE (a)-[:T]->(b)",
           true);
    /* a column the header lacks: every key null, nothing matches */
    snprintf(q, sizeof q, "%s", "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                                "MATCH (a:P {id: toInteger(row.nope)}), (b:P {id: 1}) "
                                "CREATE (a)-[:R]->(b)");
    differ(node_setup, q, false);   /* {id: 1} is no column */
    differ(node_setup, "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                       "MATCH (a:P {id: toInteger(row.nope)}), (b:P {id: toInteger(row.b)}) "
                       "CREATE (a)-[:R]->(b)",
           true);
    /* no index on the key, a label nobody has, a WHERE, a property on the
       relationship: the general path */
    differ(node_setup, "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                       "MATCH (a:P {id: toInteger(row.a)}), (b:P {w: row.w}) "
                       "CREATE (a)-[:R]->(b)",
           false);
    differ(node_setup, "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                       "MATCH (a:Nobody {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
                       "CREATE (a)-[:R]->(b)",
           false);
    differ(node_setup, "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                       "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
                       "WHERE a <> b CREATE (a)-[:R]->(b)",
           false);
    differ(node_setup, "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                       "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
                       "CREATE (a)-[:R {w: row.w}]->(b)",
           false);
    /* a bound before the LOAD CSV: the MATCH checks it, not seeks it */
    differ(node_setup, "MATCH (a:P {id: 1}) WITH a "
                       "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                       "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
                       "CREATE (a)-[:R]->(b)",
           false);
}

/* Bad records: too many fields, bad UTF-8 (in a column read and in one
   not read), a malformed quote — first, in the first batch after records
   that break a constraint (the general path reads a batch before writing
   it, so the record's error is the one reported), and last in a file of
   three batches.  Everything is undone. */
static void test_bad_records(void **state)
{
    (void)state;
    const char *bad[] = {"1,2,3,4\n", "1,2,\xff\n", "\xc3(,2,x\n", "1,\"2\"x,x\n"};
    const char *q = "LOAD CSV WITH HEADERS FROM 'file://$D/big.csv' AS row "
                    "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
                    "CREATE (a)-[:R]->(b)";
    const char *qn = "LOAD CSV WITH HEADERS FROM 'file://$D/big.csv' AS row "
                     "CREATE (:P {id: toInteger(row.a)})";
    /* first; in the first batch after the repeated ids; last */
    const int at[] = {0, 100, 20000};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        for (size_t p = 0; p < sizeof at / sizeof *at; p++) {
            sbuf text = {0};
            sb_printf(&text, "a,b,w\n");
            for (int r = 0; r <= 20000; r++) {
                if (r == at[p])
                    sb_printf(&text, "%s", bad[i]);
                if (r < 20000)
                    sb_printf(&text, "%d,%d,w\n", r % 50, (r * 7) % 50);
            }
            write_file("big.csv", text.p);
            free(text.p);
            write_file("nodes.csv", nodes_csv);
            assert_int_not_equal(differ(node_setup, q, true), STRATA_OK);
            assert_int_not_equal(
                differ("CREATE CONSTRAINT FOR (n:P) REQUIRE n.id IS UNIQUE", qn, true),
                STRATA_OK);
        }
}

/* Many records over several batches, ids from a permutation: the same
   graph; and the file ending in a bad record undoes every batch. */
static void test_batches(void **state)
{
    (void)state;
    sbuf nodes = {0}, rels = {0};
    sb_printf(&nodes, "id\n");
    sb_printf(&rels, "a,b\n");
    for (int i = 0; i < 20000; i++) {
        sb_printf(&nodes, "%d\n", (i * 7919) % 20000);
        sb_printf(&rels, "%d,%d\n", (i * 104729) % 20011, (i * 31) % 20000);
    }
    write_file("nodes.csv", nodes.p);
    write_file("rels.csv", rels.p);
    const char *setup = "CREATE INDEX FOR (n:P) ON (n.id);"
                        "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
                        "CREATE (:P {id: toInteger(row.id)})";
    const char *q = "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                    "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
                    "CREATE (a)-[:R]->(b)";
    assert_int_equal(differ(setup, q, true), STRATA_OK);
    sb_printf(&rels, "1,2,3\n");
    write_file("rels.csv", rels.p);
    assert_int_equal(differ(setup, q, true), STRATA_EINVAL);
    free(nodes.p);
    free(rels.p);
}

/* Fails the 1st, 2nd, ... allocation of each fast statement until it
   succeeds: every failure is OutOfMemory and leaves the graph as it was
   (or, failing after the commit, as the success leaves it), with nothing
   leaked. */
static void sweep(const char *setup, const char *q)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char stmts[2048];
    snprintf(stmts, sizeof stmts, "%s", setup);
    for (char *s = strtok(stmts, ";"); s; s = strtok(NULL, ";"))
        run_ok(g, s);
    sbuf before = {0};
    dump_graph(&before, g);
    plan_cache_clear(plan_cache_for(g->current->cat));
    size_t base = mem_ctx_bytes(mem_scratch());
    long undone = 0;
    for (long k = 1;; k++) {
        uint64_t runs = load_csv_fast_runs;
        strata_result *r = NULL;
        mem_fail_at(k);
        strata_status st = strata_query(g, expand(q), NULL, &r);
        bool failed = mem_fail_count() >= k;
        mem_fail_clear();
        strata_result_free(&r);
        sbuf after = {0};
        dump_graph(&after, g);
        plan_cache_clear(plan_cache_for(g->current->cat));
        if (!failed) {
            assert_int_equal(st, STRATA_OK);
            assert_true(load_csv_fast_runs > runs);
            assert_string_not_equal(before.p, after.p);
            free(after.p);
            break;
        }
        assert_int_equal(st, STRATA_ENOMEM);
        if (strcmp(before.p, after.p) == 0) {
            undone++;
            assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
        } else {
            /* the result's own allocations come after the commit */
            run_ok(g, "MATCH ()-[r]->() DELETE r");
            run_ok(g, "MATCH (n:Fresh) DELETE n");
        }
        free(after.p);
    }
    assert_true(undone > 5);
    free(before.p);
    strata_graph_free(&g);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    write_file("nodes.csv", nodes_csv);
    write_file("rels.csv", rels_csv);
    sweep("CREATE INDEX FOR (n:P) ON (n.id)",
          "LOAD CSV WITH HEADERS FROM 'file://$D/nodes.csv' AS row "
          "CREATE (:Fresh {id: toInteger(row.id), name: row.name})");
    sweep(node_setup, "LOAD CSV WITH HEADERS FROM 'file://$D/rels.csv' AS row "
                      "MATCH (a:P {id: toInteger(row.a)}), (b:P {id: toInteger(row.b)}) "
                      "CREATE (a)-[:R]->(b)");
}

static int setup(void **state)
{
    (void)state;
    return tmp_dir_make("strata-load-csv-fast");
}

static int teardown(void **state)
{
    (void)state;
    return tmp_dir_remove(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_shapes),
        cmocka_unit_test(test_relationship_shapes),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
