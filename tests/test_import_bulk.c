/*
 * strata_import's bulk writer (core/bulk.h) against the direct write
 * calls: random node and relationship files imported both ways — the
 * bulk path, and the same import with the bulk writer turned off (the
 * importer's row-by-row path, kept as the reference) or run inside the
 * caller's transaction (where the bulk writer never runs) — must build
 * the same graph: slots, labels, properties, every node's neighbours in
 * order, its degree per type and direction, db.stats() and the report's
 * counts, with the integrity check passing.  Into an empty graph, into
 * one whose free lists hand out old ids and whose hub's block is already
 * trees, and with a view held across the import (which must see none of
 * it).  A bad row anywhere fails both the same way — status, message,
 * line and column — and leaves the graph as it was; and an allocation
 * failure at every step of a small import ends in the whole import or a
 * clean STRATA_ENOMEM with graph and scratch memory as before.
 *
 * The reference import also reads its files without the reader's
 * in-place path (query/csv.h) and its floats without the plain-decimal
 * fast path (query/import_header.h), so the files hold what those paths
 * must read alike: floats in every notation strtod takes, ints at their
 * limits, quoted fields with delimiters, doubled quotes, line ends and
 * UTF-8, empty and quoted-empty fields, and float arrays.
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

#include "core/bulk.h"
#include "query/csv.h"
#include "query/import_header.h"
#include "storage/mem.h"
#include "strata.h"
#include "support/api_dump.h"
#include "support/tmp_dir.h"

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

static uint64_t rng;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t below(uint64_t n) { return next() % n; }

/* ---- the files ----------------------------------------------------------- */

enum bad_kind { BAD_NONE, BAD_INT, BAD_END, BAD_DUPLICATE, BAD_FIELDS, BAD_KINDS };

typedef struct shape {
    size_t nodes, rels;
    enum bad_kind bad;
    bool bad_in_rels;   /* else in the node file */
    size_t bad_at;      /* the row */
} shape;

static void put_text(FILE *f, bool quoted)
{
    static const char *const words[] = { "ann", "bob", "a much longer name than thirteen bytes",
                                         "zoë", "x" };
    fprintf(f, quoted ? "\"%s %llu\"" : "%s%llu", words[below(5)],
            (unsigned long long)below(1000));
}

/* A float field in one of the notations strtod reads (none out of range). */
static const char *float_text(void)
{
    static const char *const floats[] = {
        "1.5", "-0.0", "+2.25", ".5", "5.", " 3.75 ", "\"2.5\"", "1e3", "1E-3", "-2.5e+10",
        "0x1p3", "inf", "-Infinity", "nan", "3.14159265358979323846", "123456789012345.6",
        "12345678901234.5", "0.000000000000001", "1e-320", "007.25", "999999999999999",
        "9007199254740993", "-.75", "0", "42", "0.1", "0.30000000000000004", "1.7976931348623157e308",
    };
    return floats[below(sizeof floats / sizeof *floats)];
}

/* The extra columns of a node row: x:float, big:int, q, fs:float[]. */
static void put_extras(FILE *o)
{
    static const char *const ints[] = { "9223372036854775807", "-9223372036854775808", "+5",
                                        " 7 ", "0", "-0", "\"12\"" };
    static const char *const texts[] = {
        "\"line1\nline2\"", "\"say \"\"hi\"\", twice\"",
        "\"zo\xc3\xab, \xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9 \xe2\x82\xac\"", "\"\"", "", "plain",
        "\"a\r\nb\"", "\"\"\"\"", "caf\xc3\xa9",
    };
    static const char *const arrays[] = { "1.5;2e3;-0.25", "", "\"3;.5\"", "7", "-0.0;inf" };
    fprintf(o, ",%s,%s,%s,%s", below(5) ? float_text() : "",
            below(4) ? ints[below(sizeof ints / sizeof *ints)] : "",
            texts[below(sizeof texts / sizeof *texts)], arrays[below(5)]);
}

/* A node file (two files of one group) and a relationship file. */
static void write_files(const shape *sh)
{
    FILE *f = fopen(tmp_path("n1.csv"), "wb"), *f2 = fopen(tmp_path("n2.csv"), "wb");
    assert_non_null(f);
    assert_non_null(f2);
    fprintf(f, "id:ID(P),name,age:int,score:float,tags:string[],flag:boolean,name:int,:LABEL,"
               "x:float,big:int,q,fs:float[]\n");
    for (size_t i = 0; i < sh->nodes; i++) {
        FILE *o = i < sh->nodes / 2 ? f : f2;
        bool bad = !sh->bad_in_rels && sh->bad == BAD_NONE ? false
                   : !sh->bad_in_rels && i == sh->bad_at;
        fprintf(o, "%zu,", bad && sh->bad == BAD_DUPLICATE ? (size_t)0 : i);
        if (below(5))
            put_text(o, below(2));
        fprintf(o, ",");
        if (bad && sh->bad == BAD_INT)
            fprintf(o, "forty");
        else if (below(4))
            fprintf(o, "%lld", (long long)below(200) - 50);
        fprintf(o, ",");
        if (below(3))
            fprintf(o, "%.3f", (double)below(100000) / 7.0);
        fprintf(o, ",");
        for (uint64_t k = 0, n = below(4); k < n; k++) {
            fprintf(o, "%s", k ? ";" : "");
            put_text(o, false);
        }
        fprintf(o, ",%s,", below(2) ? "true" : "false");
        if (below(3) == 0)   /* a second column under the key "name" */
            fprintf(o, "%llu", (unsigned long long)below(50));
        static const char *const labels[] = { "", "A", "B", "A;B", "C;A", "B;B" };
        fprintf(o, ",%s", labels[below(6)]);
        put_extras(o);
        if (bad && sh->bad == BAD_FIELDS)
            fprintf(o, ",extra");
        fprintf(o, "\n");
    }
    fclose(f);
    fclose(f2);
    f = fopen(tmp_path("r.csv"), "wb");
    assert_non_null(f);
    fprintf(f, ":START_ID(P),:END_ID(P),:TYPE,since:int,w:float,note\n");
    for (size_t i = 0; i < sh->rels; i++) {
        bool bad = sh->bad_in_rels && sh->bad != BAD_NONE && i == sh->bad_at;
        /* node 0 a hub, some self-loops, the rest at random */
        uint64_t s = below(4) == 0 ? 0 : below(sh->nodes);
        uint64_t e = below(10) == 0 ? s : below(sh->nodes);
        if (bad && sh->bad == BAD_END)
            e = sh->nodes + 7;
        static const char *const types[] = { "T0", "T1", "T2", "", "T3" };
        fprintf(f, "%llu,%llu,%s,", (unsigned long long)s, (unsigned long long)e,
                types[below(5)]);
        if (bad && sh->bad == BAD_INT)
            fprintf(f, "1.5");
        else if (below(3))
            fprintf(f, "%llu", (unsigned long long)below(30));
        fprintf(f, ",");
        if (below(2))
            fprintf(f, "%.2f", (double)below(1000) / 3.0);
        else if (below(2))
            fprintf(f, "%s", float_text());
        fprintf(f, ",");
        if (below(4) == 0)
            put_text(f, true);
        if (bad && sh->bad == BAD_FIELDS)
            fprintf(f, ",1");
        fprintf(f, "\n");
    }
    fclose(f);
}

/* The bad rows an import skipped, one line each. */
static sbuf skipped;

static void note_bad_row(void *ctx, const strata_import_fault *f)
{
    (void)ctx;
    sb_printf(&skipped, "%" PRIu64 ":%u: %s\n", f->line, f->column, f->message);
}

static bool skip_bad;

static strata_status run_import(strata_graph *g, strata_import_report *rep)
{
    static char paths[3][512];
    snprintf(paths[0], sizeof paths[0], "%s", tmp_path("n1.csv"));
    snprintf(paths[1], sizeof paths[1], "%s", tmp_path("n2.csv"));
    snprintf(paths[2], sizeof paths[2], "%s", tmp_path("r.csv"));
    const char *node_files[] = { paths[0], paths[1] };
    const char *rel_files[] = { paths[2] };
    const char *group_labels[] = { "P" };
    strata_import_source src[] = {
        { .files = node_files, .nfiles = 2, .labels = group_labels, .nlabels = 1 },
        { .relationships = true, .files = rel_files, .nfiles = 1, .type = "DEF" },
    };
    strata_import_options o = { .sources = src, .nsources = 2, .skip_bad_rows = skip_bad,
                                .on_bad_row = note_bad_row };
    return strata_import(g, &o, rep);
}

/* ---- the graphs ---------------------------------------------------------- */

/* A graph holding data before the import: nodes and relationships, some
   deleted (so the free lists hand their ids out again, out of order), and
   a hub whose block is trees (test builds make a block trees past a few
   entries). */
static strata_graph *prior(bool with_data)
{
    strata_graph *g = NULL;
    OK(g, strata_graph_new(&g));
    if (!with_data)
        return g;
    strata_result *r = NULL;
    OK(g, strata_query(g,
                       "CREATE (h:Old:A {name: 'hub'}) WITH h UNWIND range(1, 40) AS i "
                       "CREATE (h)-[:T1 {i: i}]->(:Old {i: i})",
                       NULL, &r));
    strata_result_free(&r);
    OK(g, strata_query(g,
                       "MATCH (n:Old) WHERE n.i % 7 = 3 DETACH DELETE n", NULL, &r));
    strata_result_free(&r);
    OK(g, strata_query(g, "MATCH ()-[r:T1]->() WHERE r.i % 5 = 1 DELETE r", NULL, &r));
    strata_result_free(&r);
    return g;
}

/* Everything a reader can ask: slot counts, each node's labels,
   properties, neighbours in order and degrees per type and direction,
   each relationship's ends, type and properties, and db.stats(). */
static char *dump_view(strata_view *v)
{
    sbuf b = { 0 };
    sb_printf(&b, "nodes=%" PRIu64 " rels=%" PRIu64 "\n", strata_node_count(v),
              strata_rel_count(v));
    uint32_t ntypes = strata_token_count(v, STRATA_RELTYPE);
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes(v, &it), STRATA_OK);
    strata_id n, rel_limit = 0;
    while (strata_node_iter_next(it, &n)) {
        strata_token labels[16];
        size_t nl = 0;
        assert_int_equal(strata_node_labels(v, n, labels, 16, &nl), STRATA_OK);
        sb_printf(&b, "n%" PRIu64 " :", n);
        for (size_t i = 0; i < nl && i < 16; i++)
            sb_printf(&b, "%u,", labels[i]);
        dump_props(&b, v, false, n);
        strata_id l = dump_hops(&b, v, n, STRATA_OUT, "out");
        rel_limit = l > rel_limit ? l : rel_limit;
        dump_hops(&b, v, n, STRATA_IN, "in");
        for (strata_token t = 0; t < ntypes; t++)
            for (int d = STRATA_OUT; d <= STRATA_IN; d++) {
                uint64_t deg = 0;
                assert_int_equal(strata_node_degree(v, n, (strata_direction)d, t, &deg),
                                 STRATA_OK);
                if (deg)
                    sb_printf(&b, " t%u/%d=%" PRIu64, t, d, deg);
            }
        sb_printf(&b, "\n");
    }
    strata_node_iter_free(&it);
    for (strata_id r = 0; r < rel_limit; r++) {
        if (!strata_rel_exists(v, r))
            continue;
        strata_id s, e;
        strata_token t;
        assert_int_equal(strata_rel_info(v, r, &s, &e, &t), STRATA_OK);
        sb_printf(&b, "r%" PRIu64 " %" PRIu64 "-%u->%" PRIu64, r, s, t, e);
        dump_props(&b, v, true, r);
        sb_printf(&b, "\n");
    }
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    return b.p;
}

static char *dump_graph(strata_graph *g)
{
    strata_memstats ms;
    OK(g, strata_memory_stats(g, &ms));
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    char *body = dump_view(v);
    strata_view_release(&v);
    sbuf b = { 0 };
    sb_printf(&b, "slots n=%" PRIu64 " r=%" PRIu64 "\n%s", ms.node_slots, ms.rel_slots, body);
    free(body);
    /* db.stats() of a graph without relationships has no rows (and is
       not asked: its empty sort passes qsort a null array) */
    if (strstr(b.p, "\nr") == NULL)
        return b.p;
    strata_result *r = NULL;
    OK(g, strata_query(g, "CALL db.stats()", NULL, &r));
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        for (size_t i = 0; i < 4; i++) {
            sb_printf(&b, i ? " " : "stats ");
            dump_value(&b, row[i]);
        }
        sb_printf(&b, "\n");
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    return b.p;
}

static void assert_same_report(const strata_import_report *a, const strata_import_report *b)
{
    assert_int_equal(a->nodes, b->nodes);
    assert_int_equal(a->relationships, b->relationships);
    assert_int_equal(a->properties, b->properties);
    assert_int_equal(a->rows, b->rows);
    assert_int_equal(a->bad_rows, b->bad_rows);
    assert_int_equal(a->fault.line, b->fault.line);
    assert_int_equal(a->fault.column, b->fault.column);
    assert_string_equal(a->message, b->message);
    assert_true((a->fault.file == NULL) == (b->fault.file == NULL));
    if (a->fault.file)
        assert_string_equal(a->fault.file, b->fault.file);
}

/* How the reference import runs. */
enum reference { ROWS_OWN_TXN, ROWS_CALLER_TXN };

/* One import through the bulk writer, and the same through the direct
   calls; returns the bulk side's status. */
static strata_status import_both(const shape *sh, bool with_data, enum reference ref,
                                 bool hold_view)
{
    write_files(sh);
    strata_graph *bulk = prior(with_data), *rows = prior(with_data);
    char *before = dump_graph(bulk);
    strata_view *held = NULL, *held_rows = NULL;
    char *held_before = NULL;
    if (hold_view) {
        OK(bulk, strata_snapshot(bulk, &held));
        OK(rows, strata_snapshot(rows, &held_rows));
        held_before = dump_view(held);
    }
    strata_import_report rb, rr;
    uint64_t bulk_rows = bulk_rows_for_tests;
    free(skipped.p);
    skipped = (sbuf){ 0 };
    /* a buffer that holds most records whole, so they are read in place;
       the reference reads through a few bytes at a time */
    csv_buffer_for_tests = 256;
    strata_status sb = run_import(bulk, &rb);
    csv_buffer_for_tests = 7;
    char *skipped_bulk = skipped.p;
    skipped = (sbuf){ 0 };
    char msg_bulk[512];
    snprintf(msg_bulk, sizeof msg_bulk, "%s", strata_errmsg(bulk));
    if (sb == STRATA_OK)
        assert_true(bulk_rows_for_tests > bulk_rows);   /* the bulk writer ran */

    bulk_rows = bulk_rows_for_tests;
    strata_status sr;
    csv_in_place_for_tests = import_fast_float_for_tests = false;
    if (ref == ROWS_OWN_TXN) {
        bulk_disabled_for_tests = true;
        sr = run_import(rows, &rr);
        bulk_disabled_for_tests = false;
    } else {
        OK(rows, strata_begin(rows));
        sr = run_import(rows, &rr);
        OK(rows, strata_commit(rows));
    }
    csv_in_place_for_tests = import_fast_float_for_tests = true;
    assert_int_equal(bulk_rows_for_tests, bulk_rows);   /* ... and not here */
    assert_int_equal(sb, sr);
    assert_same_report(&rb, &rr);
    assert_string_equal(skipped_bulk ? skipped_bulk : "", skipped.p ? skipped.p : "");
    free(skipped_bulk);
    if (sb != STRATA_OK)
        assert_string_equal(msg_bulk, strata_errmsg(rows));

    char *got = dump_graph(bulk), *want = dump_graph(rows);
    assert_string_equal(got, want);
    if (sb != STRATA_OK)
        assert_string_equal(got, before);
    if (held) {
        char *held_now = dump_view(held);
        assert_string_equal(held_now, held_before);
        free(held_now);
        free(held_before);
        strata_view_release(&held);
        strata_view_release(&held_rows);
    }
    free(got);
    free(want);
    free(before);
    strata_graph_free(&bulk);
    strata_graph_free(&rows);
    return sb;
}

/* ---- the tests ----------------------------------------------------------- */

static void test_random_imports_match(void **state)
{
    (void)state;
    rng = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 24; round++) {
        shape sh = { .nodes = 1 + below(60), .rels = below(300) };
        enum reference ref = round % 3 == 2 ? ROWS_CALLER_TXN : ROWS_OWN_TXN;
        assert_int_equal(import_both(&sh, round % 2 == 1, ref, round % 4 == 3), STRATA_OK);
    }
}

/* A larger import: nodes past a hub's tree threshold on every side, many
   flushes (test builds flush every few relationships). */
static void test_large_import_matches(void **state)
{
    (void)state;
    rng = 0x51ed270b2f1ca3e5ull;
    shape sh = { .nodes = 400, .rels = 3000 };
    assert_int_equal(import_both(&sh, true, ROWS_OWN_TXN, false), STRATA_OK);
}

static void test_bad_rows_match(void **state)
{
    (void)state;
    rng = 0x2545f4914f6cdd1dull;
    for (int round = 0; round < 32; round++) {
        shape sh = { .nodes = 2 + below(40), .rels = 1 + below(200) };
        sh.bad = (enum bad_kind)(1 + below(BAD_KINDS - 1));
        sh.bad_in_rels = sh.bad == BAD_END || (sh.bad != BAD_DUPLICATE && below(2));
        sh.bad_at = below(sh.bad_in_rels ? sh.rels : sh.nodes);
        if (sh.bad == BAD_DUPLICATE && sh.bad_at == 0)
            sh.bad_at = 1;
        strata_status s = import_both(&sh, round % 2 == 0,
                                      round % 4 == 1 ? ROWS_CALLER_TXN : ROWS_OWN_TXN, round % 3 == 0);
        assert_int_not_equal(s, STRATA_OK);
    }
}

/* The same bad rows skipped: reported in the same order with the same
   lines and messages, and the rest imported alike. */
static void test_skipped_rows_match(void **state)
{
    (void)state;
    rng = 0x7a3c9e21d4b5f609ull;
    skip_bad = true;
    for (int round = 0; round < 24; round++) {
        shape sh = { .nodes = 2 + below(40), .rels = 1 + below(300) };
        sh.bad = (enum bad_kind)(1 + below(BAD_KINDS - 1));
        sh.bad_in_rels = sh.bad == BAD_END || (sh.bad != BAD_DUPLICATE && below(2));
        sh.bad_at = below(sh.bad_in_rels ? sh.rels : sh.nodes);
        if (sh.bad == BAD_DUPLICATE && sh.bad_at == 0)
            sh.bad_at = 1;
        assert_int_equal(import_both(&sh, round % 2 == 0, ROWS_OWN_TXN, false), STRATA_OK);
        assert_non_null(skipped.p);   /* the bad row was reported */
    }
    skip_bad = false;
    free(skipped.p);
    skipped = (sbuf){ 0 };
}

/* One import of node text and relationship text (group labels none,
   group type "G") into g; the report in *rep. */
static strata_status import_text(strata_graph *g, const char *nodes_csv, const char *rels_csv,
                                 strata_import_report *rep)
{
    char np[512], rp[512];
    snprintf(np, sizeof np, "%s", tmp_path("dn.csv"));
    snprintf(rp, sizeof rp, "%s", tmp_path("dr.csv"));
    FILE *f = fopen(np, "wb");
    assert_non_null(f);
    fputs(nodes_csv, f);
    fclose(f);
    f = fopen(rp, "wb");
    assert_non_null(f);
    fputs(rels_csv, f);
    fclose(f);
    const char *nf[] = { np }, *rf[] = { rp };
    strata_import_source src[] = {
        { .files = nf, .nfiles = 1 },
        { .relationships = true, .files = rf, .nfiles = 1, .type = "G" },
    };
    strata_import_options o = { .sources = src, .nsources = 2 };
    return strata_import(g, &o, rep);
}

/* Past ADJ_MAX_SEGMENTS / 2 relationship types the bulk writer declines
   relationships (a node could then pass ADJ_MAX_SEGMENTS pairs): the
   rows before go in bulk, those after through the direct calls, after
   the pending ones are linked — the same graph as the direct calls
   alone. */
static void test_declined_relationships_match(void **state)
{
    (void)state;
    sbuf nodes = { 0 }, rels = { 0 };
    sb_printf(&nodes, "id:ID,:LABEL\n");
    for (int i = 0; i < 12; i++)
        sb_printf(&nodes, "%d,%s\n", i, i % 2 ? "A" : "B");
    sb_printf(&rels, ":START_ID,:END_ID,:TYPE,w:int\n");
    for (int i = 0; i < 90; i++)
        sb_printf(&rels, "%d,%d,%s,%d\n", (i * 7) % 12, (i * 5 + 1) % 12,
                  i < 30 ? "P" : i % 3 ? "Q" : "P", i);
    char *dumps[2];
    for (int side = 0; side < 2; side++) {
        strata_graph *g = NULL;
        OK(g, strata_graph_new(&g));
        /* so many types that P stays under the bulk writer's bound and Q
           passes it */
        for (int t = 0; t < 32766; t++) {
            char name[16];
            snprintf(name, sizeof name, "X%d", t);
            strata_token tok;
            OK(g, strata_token_intern(g, STRATA_RELTYPE, name, &tok));
        }
        bulk_disabled_for_tests = side == 1;
        uint64_t before = bulk_rows_for_tests;
        strata_import_report rep;
        OK(g, import_text(g, nodes.p, rels.p, &rep));
        bulk_disabled_for_tests = false;
        if (side == 0)   /* the nodes and the relationships before Q's first */
            assert_int_equal(bulk_rows_for_tests - before, 12 + 31);
        dumps[side] = dump_graph(g);
        strata_graph_free(&g);
    }
    assert_string_equal(dumps[0], dumps[1]);
    free(dumps[0]);
    free(dumps[1]);
    free(nodes.p);
    free(rels.p);
}

/* A node with more labels than a node may carry is declined and fails as
   the direct call fails it, with the graph as before. */
static void test_declined_node_fails_alike(void **state)
{
    (void)state;
    sbuf nodes = { 0 };
    sb_printf(&nodes, "id:ID,:LABEL\n0,A\n1,");
    for (int i = 0; i < 1025; i++)
        sb_printf(&nodes, "%sL%d", i ? ";" : "", i);
    sb_printf(&nodes, "\n2,B\n");
    char msg[2][512];
    strata_import_report rep[2];
    for (int side = 0; side < 2; side++) {
        strata_graph *g = prior(true);
        char *before = dump_graph(g);
        bulk_disabled_for_tests = side == 1;
        assert_int_equal(import_text(g, nodes.p, ":START_ID,:END_ID\n0,2\n", &rep[side]),
                         STRATA_EINVAL);
        bulk_disabled_for_tests = false;
        snprintf(msg[side], sizeof msg[side], "%s", strata_errmsg(g));
        char *now = dump_graph(g);
        assert_string_equal(now, before);
        free(now);
        free(before);
        strata_graph_free(&g);
    }
    assert_same_report(&rep[0], &rep[1]);
    assert_string_equal(msg[0], msg[1]);
    assert_non_null(strstr(msg[0], "labels"));
    free(nodes.p);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    rng = 0x0ddc0ffee0ddf00dull;
    shape sh = { .nodes = 12, .rels = 40 };
    write_files(&sh);
    strata_graph *ref = prior(true);
    strata_import_report rep;
    OK(ref, run_import(ref, &rep));
    char *want = dump_graph(ref);
    strata_graph_free(&ref);
    size_t scratch = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        strata_graph *g = prior(true);
        char *before = dump_graph(g);
        mem_fail_at(k);
        strata_status s = run_import(g, &rep);
        bool failed = mem_fail_count() >= k;
        mem_fail_clear();
        char *now = dump_graph(g);
        if (failed && s != STRATA_OK) {
            if (s != STRATA_ENOMEM)
                fail_msg("k=%ld: %s: %s", k, strata_errstr(s), rep.message);
            assert_string_equal(now, before);
        } else {
            assert_int_equal(s, STRATA_OK);
            assert_string_equal(now, want);
        }
        free(now);
        free(before);
        strata_graph_free(&g);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
        if (!failed)
            break;
    }
    free(want);
}

static int setup(void **state)
{
    (void)state;
    return tmp_dir_make("strata-import-bulk");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_imports_match),
        cmocka_unit_test(test_large_import_matches),
        cmocka_unit_test(test_bad_rows_match),
        cmocka_unit_test(test_skipped_rows_match),
        cmocka_unit_test(test_declined_relationships_match),
        cmocka_unit_test(test_declined_node_fails_alike),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, tmp_dir_remove);
}
