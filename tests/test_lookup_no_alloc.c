/* A cached Cypher point lookup allocates one block per execution: the
   strata_result the call hands back (the caller frees it with
   strata_result_free), which holds everything else the statement needs —
   its executor, its stages and rows in the result's own arena, the view
   it reads. The count comes from the allocator wrapper itself (every
   allocation attempt, storage/mem.h mem_fail_count), so a scope, a row
   buffer, an iterator or a view allocated per execution shows as a
   number above one.  The statement also copies nothing shared
   (mem_copied_entries), on the graph and on a view, with a row found and
   with none.  Then: a statement that outgrows the result's arena fails
   cleanly at each of its allocations, and the unique seek the lookup
   uses answers as a scan would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "storage/mem.h"
#include "strata.h"

#define NODES 200
#define RUNS 100
/* The result block: the API returns it, so it cannot come from anywhere
   but the allocator; nothing else may. */
#define ALLOCS_PER_LOOKUP 1

static const char lookup[] = "MATCH (n:Item {key: $k}) RETURN n.v";

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static strata_graph *items(void)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char q[128];
    snprintf(q, sizeof q,
             "UNWIND range(0, %d) AS i CREATE (:Item {key: i, v: 'value ' + toString(i)})",
             NODES - 1);
    run(g, q);
    run(g, "CREATE CONSTRAINT FOR (n:Item) REQUIRE n.key IS UNIQUE");
    return g;
}

/* One lookup of key, on the graph or (v set) on the view, read to its end:
   whether it found the row "value <key>". */
static bool lookup_once(strata_graph *g, strata_view *v, strata_value *params, int64_t key)
{
    strata_result *r = NULL;
    strata_status s = v ? strata_view_query(v, lookup, params, &r)
                        : strata_query(g, lookup, params, &r);
    if (s != STRATA_OK)
        fail_msg("lookup of %lld: %s", (long long)key, strata_result_error(r)->message);
    const strata_value *const *row;
    bool found = strata_result_next(r, &row);
    if (found) {
        char want[32];
        snprintf(want, sizeof want, "value %lld", (long long)key);
        const char *got = NULL;
        assert_int_equal(strata_value_get_string(row[0], &got, NULL), STRATA_OK);
        assert_string_equal(got, want);
        assert_false(strata_result_next(r, &row));
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    return found;
}

/* runs lookups of keys (key * 7 + 3) mod span: the allocations they
   attempt, every one of them, from the first. */
static long allocations_of(strata_graph *g, strata_view *v, int runs, int64_t span,
                           bool expect_found, bool warm_up)
{
    const char *names[] = { "k" };
    strata_value *keys[RUNS], *params[RUNS];
    for (int i = 0; i < runs; i++) {
        keys[i] = strata_value_int((i * 7 + 3) % span + (expect_found ? 0 : NODES));
        const strata_value *vals[] = { keys[i] };
        params[i] = strata_value_map(names, vals, 1);
        assert_non_null(params[i]);
    }
    size_t scratch = mem_ctx_bytes(mem_scratch());
    uint64_t copied = mem_copied_entries();
    mem_fail_clear();   /* counts every allocation attempt from here */
    for (int i = 0; i < runs; i++)
        assert_int_equal(lookup_once(g, v, params[i], (i * 7 + 3) % span), expect_found);
    long n = mem_fail_count();
    if (!warm_up) {
        assert_int_equal(mem_copied_entries(), copied);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
    }
    for (int i = 0; i < runs; i++) {
        strata_value_free(&params[i]);
        strata_value_free(&keys[i]);
    }
    return n;
}

/* Warm-up (the plan parsed and cached, its tokens resolved), then the
   count per execution: the same for 10 runs as for 100. */
static void expect_per_run(strata_graph *g, strata_view *v, bool found)
{
    allocations_of(g, v, 3, NODES, found, true);
    long ten = allocations_of(g, v, 10, NODES, found, false);
    long hundred = allocations_of(g, v, RUNS, NODES, found, false);
    if (ten != 10 * ALLOCS_PER_LOOKUP || hundred != RUNS * ALLOCS_PER_LOOKUP)
        fail_msg("%s lookup %s: %ld allocations in 10 runs, %ld in %d; want %d per run",
                 v ? "view" : "graph", found ? "found" : "missing", ten, hundred, RUNS,
                 ALLOCS_PER_LOOKUP);
}

static void graph_lookup_allocates_its_result_only(void **state)
{
    (void)state;
    strata_graph *g = items();
    expect_per_run(g, NULL, true);
    expect_per_run(g, NULL, false);
    strata_graph_free(&g);
}

static void view_lookup_allocates_its_result_only(void **state)
{
    (void)state;
    strata_graph *g = items();
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    expect_per_run(g, v, true);
    expect_per_run(g, v, false);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* A statement whose stages outgrow the result's arena takes chunks from
   the allocator: each allocation, the result's and the chunks', fails in
   turn, and every failure is an OutOfMemory error that leaks nothing. */
static void arena_chunks_fail_cleanly(void **state)
{
    (void)state;
    strata_graph *g = items();
    char q[2048] = "MATCH (n:Item {key: $k}) RETURN n.v AS c0";
    for (int i = 1; i < 60; i++)
        snprintf(q + strlen(q), sizeof q - strlen(q), ", n.key + %d AS c%d", i, i);
    const char *names[] = { "k" };
    strata_value *key = strata_value_int(7);
    const strata_value *vals[] = { key };
    strata_value *params = strata_value_map(names, vals, 1);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, q, params, &r), STRATA_OK);   /* cached */
    strata_result_free(&r);
    size_t scratch = mem_ctx_bytes(mem_scratch());
    mem_fail_clear();
    assert_int_equal(strata_query(g, q, params, &r), STRATA_OK);
    long needed = mem_fail_count();
    strata_result_free(&r);
    assert_true(needed > ALLOCS_PER_LOOKUP);   /* the arena took chunks */
    for (long k = 1; k <= needed; k++) {
        mem_fail_at(k);
        strata_status s = strata_query(g, q, params, &r);
        mem_fail_clear();
        assert_int_equal(s, STRATA_ENOMEM);
        if (r)
            assert_string_equal(strata_result_error(r)->code, "OutOfMemory");
        strata_result_free(&r);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
    }
    assert_int_equal(strata_query(g, q, params, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t c59 = 0;
    assert_int_equal(strata_value_get_int(row[59], &c59), STRATA_OK);
    assert_int_equal(c59, 7 + 59);
    strata_result_free(&r);
    strata_value_free(&params);
    strata_value_free(&key);
    strata_graph_free(&g);
}

/* The unique seek without an iterator finds what a scan finds, for every
   kind of key a parameter can hold — an int found exactly, a float equal
   to an int, a string, a boolean, null, a missing key, a list (which the
   index cannot seek: the label is scanned) — in a map, in WHERE, with more
   entries, inside EXISTS: the same query on a graph with the constraint
   and on one without it returns as many rows. */
static long rows_for(strata_graph *g, const char *q, strata_value *key)
{
    const char *names[] = { "k" };
    const strata_value *vals[] = { key };
    strata_value *params = strata_value_map(names, vals, 1);
    strata_result *r = NULL;
    if (strata_query(g, q, params, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    long n = 0;
    while (strata_result_next(r, NULL))
        n++;
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    strata_value_free(&params);
    return n;
}

static void unique_seek_matches_a_scan(void **state)
{
    (void)state;
    strata_graph *indexed = items(), *plain;
    assert_int_equal(strata_graph_new(&plain), STRATA_OK);
    const char *setup[] = {
        "UNWIND range(0, 199) AS i CREATE (:Item {key: i, v: 'value ' + toString(i)})",
        "CREATE (:Item {key: 2.5, v: 'half'}), (:Item {key: 'seven', v: 's'}), "
        "(:Item {key: true, v: 'b'}), (:Item {key: [1, 2], v: 'l'}), (:Other {key: 7})",
    };
    run(plain, setup[0]);
    run(plain, setup[1]);
    run(indexed, setup[1]);
    strata_value *one = strata_value_int(1), *two = strata_value_int(2);
    const strata_value *pair[] = { one, two };
    strata_value *keys[] = {
        strata_value_int(7), strata_value_float(7.0), strata_value_float(2.5),
        strata_value_string("seven", 5), strata_value_bool(true), strata_value_null(),
        strata_value_int(1000), strata_value_list(pair, 2), strata_value_float(7.5),
    };
    const char *queries[] = {
        "MATCH (n:Item {key: $k}) RETURN n.v",
        "MATCH (n:Item) WHERE n.key = $k RETURN n.v",
        "MATCH (n:Item {key: $k}) WHERE n.v STARTS WITH 'v' RETURN n.key",
        "MATCH (n:Item {key: $k, v: 'value 7'}) RETURN n",
        "MATCH (a:Item {key: $k}) RETURN exists { MATCH (b:Item {key: $k}) WHERE b = a } AS same",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++)
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            if (rows_for(indexed, queries[q], keys[k]) != rows_for(plain, queries[q], keys[k]))
                fail_msg("%s with key %zu: the seek and the scan disagree", queries[q], k);
        }
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        strata_value_free(&keys[k]);
    strata_value_free(&one);
    strata_value_free(&two);
    strata_graph_free(&indexed);
    strata_graph_free(&plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(graph_lookup_allocates_its_result_only),
        cmocka_unit_test(view_lookup_allocates_its_result_only),
        cmocka_unit_test(arena_chunks_fail_cleanly),
        cmocka_unit_test(unique_seek_matches_a_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
