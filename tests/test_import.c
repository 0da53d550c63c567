/*
 * strata_import, the bulk importer as a library call: what a good import
 * builds (labels from the group and a :LABEL column, id spaces, typed
 * scalars and arrays, types from :TYPE and from the group, another
 * delimiter and quote, a group of two files), and for every kind of fault
 * the status, the file, line and column the report names, and a graph
 * exactly as before — into an empty graph, into one that already holds
 * data, and inside an open transaction.  Skipped bad rows reach the
 * callback; a progress callback or strata_interrupt stops an import; and
 * an allocation-failure sweep over a small import ends, at every k, in
 * either the whole import or a clean STRATA_ENOMEM with the graph and the
 * scratch memory as before.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/mem.h"
#include "strata.h"
#include "support/api_dump.h"

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

static char dir[64];

/* dir/name, written with text. */
static const char *file(const char *name, const char *text)
{
    static char paths[64][128];
    static int next;
    char *p = paths[next++ % 64];
    snprintf(p, 128, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
    return p;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/strata_import_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- reading the graph back -------------------------------------------- */

/* The one value of a one-row, one-column query, as text. */
static char *ask(strata_graph *g, const char *query)
{
    strata_result *r = NULL;
    OK(g, strata_query(g, query, NULL, &r));
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    sbuf b = {0};
    dump_value(&b, row[0]);
    assert_false(strata_result_next(r, &row));
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    return b.p;
}

static void assert_answer(strata_graph *g, const char *query, const char *want)
{
    char *got = ask(g, query);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n  got  %s\n  want %s", query, got, want);
    free(got);
}

/* Every node (labels, properties, neighbours) and the slot counts: a
   failed import must leave all of it as it was, the next ids included. */
static char *dump_graph(strata_graph *g)
{
    strata_memstats ms;
    OK(g, strata_memory_stats(g, &ms));
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    sbuf b = {0};
    sb_printf(&b, "slots n=%" PRIu64 " r=%" PRIu64 " nodes=%" PRIu64 " rels=%" PRIu64 "\n",
              ms.node_slots, ms.rel_slots, strata_node_count(v), strata_rel_count(v));
    strata_node_iter *it = NULL;
    OK(g, strata_nodes(v, &it));
    strata_id n;
    while (strata_node_iter_next(it, &n)) {
        strata_token labels[16];
        size_t nl = 0;
        assert_int_equal(strata_node_labels(v, n, labels, 16, &nl), STRATA_OK);
        sb_printf(&b, "n%" PRIu64 " :", n);
        for (size_t i = 0; i < nl && i < 16; i++)
            sb_printf(&b, "%u,", labels[i]);
        dump_props(&b, v, false, n);
        strata_id limit = dump_hops(&b, v, n, STRATA_OUT, "out");
        for (strata_id r = 0; r < limit; r++)
            if (strata_rel_exists(v, r)) {
                sb_printf(&b, " r%" PRIu64, r);
                dump_props(&b, v, true, r);
            }
        sb_printf(&b, "\n");
    }
    strata_node_iter_free(&it);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    strata_view_release(&v);
    return b.p;
}

static void assert_unchanged(strata_graph *g, const char *before)
{
    char *now = dump_graph(g);
    assert_string_equal(now, before);
    free(now);
}

/* A graph that already holds two nodes and a relationship. */
static strata_graph *populated(void)
{
    strata_graph *g = NULL;
    OK(g, strata_graph_new(&g));
    strata_result *r = NULL;
    OK(g, strata_query(g, "CREATE (:Old {name: 'a'})-[:WAS {w: 1}]->(:Old {name: 'b'})", NULL,
                       &r));
    strata_result_free(&r);
    return g;
}

/* ---- sources ----------------------------------------------------------- */

static strata_import_source nodes(const char *const *files, size_t n, const char *const *labels,
                                  size_t nlabels)
{
    return (strata_import_source){.files = files, .nfiles = n, .labels = labels,
                                  .nlabels = nlabels};
}

static strata_import_source rels(const char *const *files, size_t n, const char *type)
{
    return (strata_import_source){.relationships = true, .files = files, .nfiles = n,
                                  .type = type};
}

/* ---- a good import ------------------------------------------------------ */

static void test_good_import(void **state)
{
    (void)state;
    const char *people[] = {
        file("people.csv", "id:ID(Person),name,age:int,score:float,ok:boolean,tags:string[],"
                           "nums:int[],:LABEL\n"
                           "1,\"Smith, J\",42,1.5,true,a;b,1;2;3,Admin\n"
                           "2,\"two\nlines \"\"quoted\"\"\",,2,FALSE,,,\n"),
        file("people2.csv", "3,\"\",7,-0.5,,\"x;y;z\",-4,Admin;Staff\n"),
    };
    const char *movies[] = {file("movies.csv", "id:ID(Movie),title,year:long\n"
                                               "1,\"Up, again\",2009\n"
                                               "movie-with-a-long-id,Long,2010\n")};
    const char *acted[] = {file("acted.csv", ":START_ID(Person),:END_ID(Movie),role,"
                                             "weight:double,:TYPE\n"
                                             "1,1,Carl,0.5,ACTED_IN\n"
                                             "3,1,,,\n"
                                             "3,movie-with-a-long-id,,,\n")};
    const char *person[] = {"Person"}, *movie[] = {"Movie", "Film"};
    strata_import_source src[] = {
        rels(acted, 1, "WATCHED"),   /* given first: relationships still load last */
        nodes(people, 2, person, 1),
        nodes(movies, 1, movie, 2),
    };
    strata_import_options o = {.sources = src, .nsources = 3};
    strata_graph *g = populated();
    strata_import_report rep;
    OK(g, strata_import(g, &o, &rep));
    assert_int_equal(rep.nodes, 5);
    assert_int_equal(rep.relationships, 3);
    assert_int_equal(rep.rows, 8);
    assert_int_equal(rep.bad_rows, 0);
    assert_int_equal(rep.properties, 7 + 4 + 6 + 2 * 3 + 2);   /* empty fields set none */
    assert_true(rep.id_table_bytes > 0);
    assert_null(rep.fault.file);
    assert_string_equal(rep.fault.message, "");
    assert_answer(g, "MATCH (p:Person) WITH p ORDER BY p.id RETURN collect([p.id, p.name, "
                     "p.age, p.score, p.ok, p.tags, p.nums])",
                  "[[s1\"1\",s8\"Smith, J\",42,1.5f,true,[s1\"a\",s1\"b\"],[1,2,3]],"
                  "[s1\"2\",s18\"two\\x0alines \\x22quoted\\x22\",null,2f,false,null,null],"
                  "[s1\"3\",s0\"\",7,-0.5f,null,[s1\"x\",s1\"y\",s1\"z\"],[-4]]]");
    assert_answer(g, "MATCH (n:Admin:Staff:Person) RETURN n.id", "s1\"3\"");
    assert_answer(g, "MATCH (m:Movie:Film) RETURN count(m)", "2");
    assert_answer(g, "MATCH (p:Person)-[r]->(m) WITH p, r, m ORDER BY p.id, m.title "
                     "RETURN collect([p.id, type(r), r.role, r.weight, m.title])",
                  "[[s1\"1\",s8\"ACTED_IN\",s4\"Carl\",0.5f,s9\"Up, again\"],"
                  "[s1\"3\",s7\"WATCHED\",null,null,s4\"Long\"],"
                  "[s1\"3\",s7\"WATCHED\",null,null,s9\"Up, again\"]]");
    /* what was there stays */
    assert_answer(g, "MATCH (:Old)-[r:WAS]->(b:Old) RETURN b.name", "s1\"b\"");
    strata_graph_free(&g);
}

/* A delimiter, an array delimiter and a quote of one's own. */
static void test_separators(void **state)
{
    (void)state;
    const char *f[] = {file("pipes.csv", "id:ID|title|tags:string[]|:LABEL\n"
                                         "1|'a|b'|x,y|A,B\n"
                                         "2|'it''s'|'z'|A\n")};
    strata_import_source src[] = {nodes(f, 1, NULL, 0)};
    strata_import_options o = {.sources = src, .nsources = 1, .delimiter = '|',
                               .array_delimiter = ',', .quote = '\''};
    strata_graph *g = NULL;
    OK(g, strata_graph_new(&g));
    OK(g, strata_import(g, &o, NULL));
    assert_answer(g, "MATCH (n:A) WITH n ORDER BY n.id RETURN collect([n.title, n.tags])",
                  "[[s3\"a|b\",[s1\"x\",s1\"y\"]],[s4\"it's\",[s1\"z\"]]]");
    assert_answer(g, "MATCH (n:B) RETURN n.id", "s1\"1\"");
    strata_graph_free(&g);
}

/* Runs of rows with one :LABEL field and rows that change it, in groups
   with labels of their own: every node gets its group's labels and its
   row's, whatever the row before had. */
static void test_label_runs(void **state)
{
    (void)state;
    const char *a[] = {file("la.csv", "id:ID,:LABEL\n1,X\n2,X\n3,Y;X\n4,Y;X\n5,\n6,X\n")};
    const char *b[] = {file("lb.csv", "id:ID(B),:LABEL\n1,X\n2,X\n3,\n")};
    const char *ga[] = {"GA"}, *gb[] = {"GB", "X"};
    strata_import_source src[] = {nodes(a, 1, ga, 1), nodes(b, 1, gb, 2)};
    strata_import_options o = {.sources = src, .nsources = 2};
    strata_graph *g = NULL;
    OK(g, strata_graph_new(&g));
    OK(g, strata_import(g, &o, NULL));
    assert_answer(g, "MATCH (n) WITH n ORDER BY id(n) "
                     "RETURN collect(reduce(s = n.id + ':', l IN labels(n) | s + l + ','))",
                  "[s7\"1:GA,X,\",s7\"2:GA,X,\",s9\"3:GA,X,Y,\",s9\"4:GA,X,Y,\",s5\"5:GA,\","
                  "s7\"6:GA,X,\",s7\"1:GB,X,\",s7\"2:GB,X,\",s7\"3:GB,X,\"]");
    strata_graph_free(&g);
}

/* More relationship types than the importer remembers, in turn, and rows
   taking the group's type between them: each relationship has its own. */
static void test_many_types(void **state)
{
    (void)state;
    char rel_text[2048] = ":START_ID,:END_ID,:TYPE\n";
    for (int i = 0; i < 40; i++) {
        char row[32];
        if (i % 4 == 3)
            snprintf(row, sizeof row, "%d,%d,\n", i % 5, (i + 1) % 5);   /* the group's */
        else
            snprintf(row, sizeof row, "%d,%d,T%d\n", i % 5, (i + 1) % 5, i % 10);
        strcat(rel_text, row);
    }
    const char *n[] = {file("mt_n.csv", "id:ID\n0\n1\n2\n3\n4\n")};
    const char *r[] = {file("mt_r.csv", rel_text)};
    strata_import_source src[] = {nodes(n, 1, NULL, 0), rels(r, 1, "G")};
    strata_import_options o = {.sources = src, .nsources = 2};
    strata_graph *g = NULL;
    OK(g, strata_graph_new(&g));
    OK(g, strata_import(g, &o, NULL));
    /* relationship i (ids follow the rows in a new graph): row i's type */
    sbuf want = {0};
    sb_printf(&want, "[");
    for (int i = 0; i < 40; i++) {
        char t[8];
        snprintf(t, sizeof t, i % 4 == 3 ? "G" : "T%d", i % 10);
        sb_printf(&want, "%ss%zu\"%s\"", i ? "," : "", strlen(t), t);
    }
    sb_printf(&want, "]");
    assert_answer(g, "MATCH ()-[r]->() WITH r ORDER BY id(r) RETURN collect(type(r))", want.p);
    free(want.p);
    strata_graph_free(&g);
}

/* ---- faults ----------------------------------------------------------- */

typedef struct bad_case {
    const char *what;
    const char *nodes_csv;      /* a node file, or NULL */
    const char *rels_csv;       /* a relationship file, or NULL */
    strata_status status;
    const char *file;           /* "nodes" or "rels", or NULL */
    uint64_t line;
    uint32_t column;
    const char *message;        /* a substring of the report's message */
} bad_case;

static const bad_case bad_cases[] = {
    {"bad int", "id:ID,age:int\n1,40\n2,4x\n", NULL, STRATA_ETYPE, "nodes", 3, 2,
     "column 'age' (int): '4x' is not an integer"},
    {"int overflow", "id:ID,age:int\n1,99999999999999999999\n", NULL, STRATA_ETYPE, "nodes", 2,
     2, "is out of range"},
    {"bad float", "id:ID,s:float\n1,1.5.1\n", NULL, STRATA_ETYPE, "nodes", 2, 2,
     "'1.5.1' is not a number"},
    {"bad boolean", "a,b:boolean\nx,yes\n", NULL, STRATA_ETYPE, "nodes", 2, 2,
     "'yes' is not true or false"},
    {"bad array element", "id:ID,xs:int[]\n1,1;;2\n", NULL, STRATA_ETYPE, "nodes", 2, 2,
     "'' is not an integer"},
    {"duplicate id", "x,id:ID(P)\na,1\nb,2\nc,1\n", NULL, STRATA_ECONSTRAINT, "nodes", 4, 2,
     "duplicate node id '1' in id space P"},
    {"empty id", "id:ID\n\n\"\"\n", NULL, STRATA_EINVAL, "nodes", 3, 1, "empty node id"},
    {"unknown END_ID", "id:ID\n1\n", ":START_ID,:END_ID,:TYPE\n1,1,K\n1,9,K\n",
     STRATA_ENOTFOUND, "rels", 3, 2, "unknown END_ID '9'"},
    {"unknown id space", "id:ID\n1\n", ":START_ID(P),:END_ID(P),:TYPE\n1,1,K\n",
     STRATA_ENOTFOUND, "rels", 2, 1, "no node has that id in id space P"},
    {"no type", "id:ID\n1\n", ":START_ID,:END_ID\n1,1\n", STRATA_EINVAL, "rels", 2, 0,
     "no relationship type"},
    {"field count", "id:ID,name\n1,a\n2,b,c\n", NULL, STRATA_EINVAL, "nodes", 3, 0,
     "3 fields, but the header has 2"},
    {"not UTF-8", "id:ID,name\n1,a\xff\n", NULL, STRATA_EINVAL, "nodes", 2, 2,
     "field 2 is not valid UTF-8 (byte 2 of the field)"},
    {"unterminated quote", "id:ID,name\n1,a\n2,\"open\n3,c\n", NULL, STRATA_EINVAL, "nodes", 3,
     0, "unterminated quoted field"},
    {"stray quote", "id:ID,name\n1,a\"b\n", NULL, STRATA_EINVAL, "nodes", 2, 0, "stray quote"},
    {"unknown column type", "id:ID,when:date\n1,2020-01-01\n", NULL, STRATA_EINVAL, "nodes", 1,
     2, "column 'when:date': unknown type 'date'"},
    {"two ID columns", "a:ID,b:ID\n1,2\n", NULL, STRATA_EINVAL, "nodes", 1, 2,
     "that kind of column twice"},
    {"relationship header without ends", "id:ID\n1\n", ":START_ID,x\n1,2\n", STRATA_EINVAL,
     "rels", 1, 0, "needs a :START_ID and an :END_ID column"},
    {"empty first file", "", NULL, STRATA_EINVAL, "nodes", 0, 0, "needs a header line"},
};

static void run_bad_case(const bad_case *c, strata_graph *g)
{
    const char *nf[] = {c->nodes_csv ? file("bad_nodes.csv", c->nodes_csv) : NULL};
    const char *rf[] = {c->rels_csv ? file("bad_rels.csv", c->rels_csv) : NULL};
    strata_import_source src[2];
    size_t n = 0;
    if (c->nodes_csv)
        src[n++] = nodes(nf, 1, NULL, 0);
    if (c->rels_csv)
        src[n++] = rels(rf, 1, NULL);
    strata_import_options o = {.sources = src, .nsources = n};
    char *before = dump_graph(g);
    strata_import_report rep;
    strata_status s = strata_import(g, &o, &rep);
    if (s != c->status)
        fail_msg("%s: status %s (%s), want %s", c->what, strata_errstr(s), rep.message,
                 strata_errstr(c->status));
    assert_unchanged(g, before);
    free(before);
    const char *want_file = !c->file ? NULL : strcmp(c->file, "nodes") == 0 ? nf[0] : rf[0];
    if (want_file)
        assert_string_equal(rep.fault.file, want_file);
    else
        assert_null(rep.fault.file);
    if (rep.fault.line != c->line || rep.fault.column != c->column)
        fail_msg("%s: at line %" PRIu64 " column %u, want %" PRIu64 " %u (%s)", c->what,
                 rep.fault.line, rep.fault.column, c->line, c->column, rep.message);
    if (!strstr(rep.fault.message, c->message))
        fail_msg("%s: message '%s' lacks '%s'", c->what, rep.fault.message, c->message);
    /* the graph's message: FILE:LINE: what */
    char where[256];
    if (c->line)
        snprintf(where, sizeof where, "%s:%" PRIu64 ": ", want_file, c->line);
    else
        where[0] = '\0';
    assert_true(strncmp(strata_errmsg(g), where, strlen(where)) == 0);
    assert_non_null(strstr(strata_errmsg(g), c->message));
}

static void test_faults_leave_the_graph_as_it_was(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        strata_graph *g = populated();
        run_bad_case(&bad_cases[i], g);
        strata_graph_free(&g);
    }
}

static void test_missing_file_and_options(void **state)
{
    (void)state;
    strata_graph *g = populated();
    char *before = dump_graph(g);
    char missing[128];
    snprintf(missing, sizeof missing, "%s/nope.csv", dir);
    const char *f[] = {missing};
    strata_import_source src[] = {nodes(f, 1, NULL, 0)};
    strata_import_options o = {.sources = src, .nsources = 1};
    strata_import_report rep;
    assert_int_equal(strata_import(g, &o, &rep), STRATA_EIO);
    assert_string_equal(rep.fault.file, missing);
    assert_int_equal(rep.fault.line, 0);
    assert_non_null(strstr(rep.message, "cannot read"));
    assert_non_null(strstr(strata_errmsg(g), "nope.csv"));
    assert_unchanged(g, before);

    /* options that cannot work: nothing is read */
    o.delimiter = ';';   /* the array delimiter's default */
    assert_int_equal(strata_import(g, &o, &rep), STRATA_EINVAL);
    assert_non_null(strstr(rep.message, "three different bytes"));
    o.delimiter = '\n';
    assert_int_equal(strata_import(g, &o, &rep), STRATA_EINVAL);
    o.delimiter = 0;
    src[0].nfiles = 0;
    assert_int_equal(strata_import(g, &o, &rep), STRATA_EINVAL);
    src[0].nfiles = 1;
    const char *empty_label[] = {""};
    src[0].labels = empty_label;
    src[0].nlabels = 1;
    assert_int_equal(strata_import(g, &o, &rep), STRATA_EINVAL);
    assert_int_equal(strata_import(g, NULL, &rep), STRATA_EINVAL);
    assert_int_equal(strata_import(NULL, &o, &rep), STRATA_EINVAL);
    assert_unchanged(g, before);
    free(before);
    strata_graph_free(&g);
}

/* ---- skipping bad rows -------------------------------------------------- */

typedef struct seen_faults {
    int n;
    uint64_t lines[8];
    uint32_t columns[8];
    strata_status last;
} seen_faults;

static void count_bad_row(void *ctx, const strata_import_fault *f)
{
    seen_faults *s = ctx;
    assert_non_null(f->file);
    assert_non_null(strstr(f->file, ".csv"));
    if (s->n < 8) {
        s->lines[s->n] = f->line;
        s->columns[s->n] = f->column;
    }
    s->n++;
}

static void test_skip_bad_rows(void **state)
{
    (void)state;
    const char *nf[] = {file("skip.csv", "id:ID,age:int\n1,1\n2,x\n3,3\n3,4\n")};
    const char *rf[] = {file("skipr.csv", ":START_ID,:END_ID,:TYPE\n1,3,K\n1,2,K\n3,3,\n")};
    strata_import_source src[] = {nodes(nf, 1, NULL, 0), rels(rf, 1, NULL)};
    seen_faults seen = {0};
    strata_import_options o = {.sources = src, .nsources = 2, .skip_bad_rows = true,
                               .on_bad_row = count_bad_row, .ctx = &seen};
    strata_graph *g = NULL;
    OK(g, strata_graph_new(&g));
    strata_import_report rep;
    OK(g, strata_import(g, &o, &rep));
    assert_int_equal(rep.bad_rows, 4);
    assert_int_equal(seen.n, 4);
    /* 2,x (age); 3,4 (duplicate id); 1,2 (unknown END_ID); 3,3, (no type) */
    const uint64_t lines[] = {3, 5, 3, 4};
    const uint32_t columns[] = {2, 1, 2, 0};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(seen.lines[i], lines[i]);
        assert_int_equal(seen.columns[i], columns[i]);
    }
    assert_int_equal(rep.nodes, 2);
    assert_int_equal(rep.relationships, 1);
    assert_answer(g, "MATCH (n) WITH n ORDER BY n.id RETURN collect([n.id, n.age])",
                  "[[s1\"1\",1],[s1\"3\",3]]");
    strata_graph_free(&g);
}

/* ---- transactions ------------------------------------------------------- */

static void test_inside_a_transaction(void **state)
{
    (void)state;
    const char *good[] = {file("txgood.csv", "id:ID,:LABEL\n1,T\n2,T\n")};
    const char *bad[] = {file("txbad.csv", "id:ID,n:int\n1,1\n2,two\n")};
    strata_graph *g = populated();
    strata_result *r = NULL;
    OK(g, strata_begin(g));
    OK(g, strata_query(g, "CREATE (:InTx)", NULL, &r));
    strata_result_free(&r);
    /* a failing import undoes itself alone */
    strata_import_source src[] = {nodes(bad, 1, NULL, 0)};
    strata_import_options o = {.sources = src, .nsources = 1};
    assert_int_equal(strata_import(g, &o, NULL), STRATA_ETYPE);
    assert_true(strata_in_transaction(g));
    assert_answer(g, "MATCH (n) RETURN count(n)", "3");
    /* a good one joins the transaction: invisible to readers until commit */
    src[0] = nodes(good, 1, NULL, 0);
    OK(g, strata_import(g, &o, NULL));
    assert_true(strata_in_transaction(g));
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    assert_int_equal(strata_node_count(v), 2);
    strata_view_release(&v);
    OK(g, strata_commit(g));
    assert_answer(g, "MATCH (n:T) RETURN count(n)", "2");
    assert_answer(g, "MATCH (n:InTx) RETURN count(n)", "1");
    strata_graph_free(&g);
}

/* ---- stopping ---------------------------------------------------------- */

static bool stop_at_second_file(void *ctx, const strata_import_progress *p)
{
    int *calls = ctx;
    assert_non_null(p->file);
    return ++*calls < 2;
}

static void test_stop(void **state)
{
    (void)state;
    const char *f[] = {file("stop1.csv", "id:ID\n1\n2\n"), file("stop2.csv", "3\n")};
    strata_import_source src[] = {nodes(f, 2, NULL, 0)};
    int calls = 0;
    strata_import_options o = {.sources = src, .nsources = 1, .on_progress = stop_at_second_file,
                               .ctx = &calls};
    strata_graph *g = populated();
    char *before = dump_graph(g);
    strata_import_report rep;
    assert_int_equal(strata_import(g, &o, &rep), STRATA_EINTERRUPTED);
    assert_int_equal(calls, 2);
    assert_string_equal(rep.fault.file, f[1]);
    assert_unchanged(g, before);
    /* a strata_interrupt made before the call is not this import's */
    strata_interrupt(g);
    o.on_progress = NULL;
    OK(g, strata_import(g, &o, &rep));
    assert_int_equal(rep.nodes, 3);
    free(before);
    strata_graph_free(&g);
}

/* ---- allocation failures ------------------------------------------------ */

static void test_allocation_failures(void **state)
{
    (void)state;
    const char *nf[] = {file("oom_n.csv", "id:ID(P),name,xs:int[],:LABEL\n"
                                          "1,a,1;2,A\n"
                                          "a-long-identifier,\"b, c\",3,A;B\n")};
    const char *rf[] = {file("oom_r.csv", ":START_ID(P),:END_ID(P),w:float,:TYPE\n"
                                          "1,a-long-identifier,0.5,K\n"
                                          "a-long-identifier,1,,L\n")};
    const char *group_labels[] = {"G"};
    strata_import_source src[] = {nodes(nf, 1, group_labels, 1), rels(rf, 1, "R")};
    strata_import_options o = {.sources = src, .nsources = 2};
    size_t scratch = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        strata_graph *g = populated();
        char *before = dump_graph(g);
        strata_import_report rep;
        mem_fail_at(k);
        strata_status s = strata_import(g, &o, &rep);
        bool failed = mem_fail_count() >= k;
        mem_fail_clear();
        if (failed && s != STRATA_OK) {
            if (s != STRATA_ENOMEM)
                fail_msg("k=%ld: %s: %s", k, strata_errstr(s), rep.message);
            assert_unchanged(g, before);
        }
        free(before);
        strata_graph_free(&g);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
        if (!failed) {
            assert_int_equal(s, STRATA_OK);
            assert_int_equal(rep.nodes, 2);
            assert_int_equal(rep.relationships, 2);
            break;
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_import),
        cmocka_unit_test(test_separators),
        cmocka_unit_test(test_label_runs),
        cmocka_unit_test(test_many_types),
        cmocka_unit_test(test_faults_leave_the_graph_as_it_was),
        cmocka_unit_test(test_missing_file_and_options),
        cmocka_unit_test(test_skip_bad_rows),
        cmocka_unit_test(test_inside_a_transaction),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
