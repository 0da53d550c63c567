/*
 * A refused write leaves the graph unforked and unchanged (strata.h: "a
 * failed write changes nothing; it does not even fork the graph").
 *
 * Each case holds a view of the graph, so that any write reaching the
 * write phase would fork it, then makes one write that a constraint or a
 * validation refuses — through the direct calls and through Cypher — and
 * asserts: the refusal's status, strata_is_forked() still false, and a
 * dump of the graph (slots, nodes with labels, properties and neighbours,
 * relationships, every index's entry count) equal to the one taken
 * before.  Allocation failures are refusals too: the writes are repeated
 * with the k-th allocation failing for k = 1, 2, ... until they succeed.
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

#include "strata.h"
#include "storage/mem.h"
#include "support/api_dump.h"

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

typedef struct fixture {
    strata_graph *g;
    strata_token person, city, knows, email, a, b, since;
    strata_id n[6], r[2];
    strata_value *fresh;   /* made before allocations are made to fail */
} fixture;

static strata_token tok(strata_graph *g, strata_token_kind k, const char *name)
{
    strata_token t;
    OK(g, strata_token_intern(g, k, name, &t));
    return t;
}

static void set_str(fixture *f, strata_id n, strata_token key, const char *s)
{
    strata_value *v = strata_value_string(s, strlen(s));
    OK(f->g, strata_node_set(f->g, n, key, v));
    strata_value_free(&v);
}

static void set_int(fixture *f, bool rel, strata_id id, strata_token key, int64_t i)
{
    strata_value *v = strata_value_int(i);
    OK(f->g, rel ? strata_rel_set(f->g, id, key, v) : strata_node_set(f->g, id, key, v));
    strata_value_free(&v);
}

/* Persons n0 (a@x) and n1 (b@x), unlabelled n2 holding a@x, cities n3
   (1,2) and n4 (1,3), n5 bare; KNOWS r0 (since 1) and r1 (since 2).
   Indices: unique Person(email), unique composite City(a, b), unique
   KNOWS(since), and a range index on City(a). */
static void build(fixture *f)
{
    OK(f->g, strata_graph_new(&f->g));
    strata_graph *g = f->g;
    f->person = tok(g, STRATA_LABEL, "Person");
    f->city = tok(g, STRATA_LABEL, "City");
    f->knows = tok(g, STRATA_RELTYPE, "KNOWS");
    f->email = tok(g, STRATA_KEY, "email");
    f->a = tok(g, STRATA_KEY, "a");
    f->b = tok(g, STRATA_KEY, "b");
    f->since = tok(g, STRATA_KEY, "since");
    OK(g, strata_node_create(g, &f->person, 1, &f->n[0]));
    OK(g, strata_node_create(g, &f->person, 1, &f->n[1]));
    OK(g, strata_node_create(g, NULL, 0, &f->n[2]));
    OK(g, strata_node_create(g, &f->city, 1, &f->n[3]));
    OK(g, strata_node_create(g, &f->city, 1, &f->n[4]));
    OK(g, strata_node_create(g, NULL, 0, &f->n[5]));
    set_str(f, f->n[0], f->email, "a@x");
    set_str(f, f->n[1], f->email, "b@x");
    set_str(f, f->n[2], f->email, "a@x");
    set_int(f, false, f->n[3], f->a, 1);
    set_int(f, false, f->n[3], f->b, 2);
    set_int(f, false, f->n[4], f->a, 1);
    set_int(f, false, f->n[4], f->b, 3);
    OK(g, strata_rel_create(g, f->n[0], f->n[1], f->knows, &f->r[0]));
    OK(g, strata_rel_create(g, f->n[1], f->n[0], f->knows, &f->r[1]));
    set_int(f, true, f->r[0], f->since, 1);
    set_int(f, true, f->r[1], f->since, 2);
    strata_index idx;
    strata_token ab[2] = { f->a, f->b };
    OK(g, strata_index_create(g, STRATA_INDEX_UNIQUE, false, f->person, &f->email, 1, &idx));
    OK(g, strata_index_create(g, STRATA_INDEX_UNIQUE, false, f->city, ab, 2, &idx));
    OK(g, strata_index_create(g, STRATA_INDEX_UNIQUE, true, f->knows, &f->since, 1, &idx));
    OK(g, strata_index_create(g, STRATA_INDEX_RANGE, false, f->city, &f->a, 1, &idx));
    f->fresh = strata_value_string("c@x", 3);
    assert_non_null(f->fresh);
    assert_false(strata_is_forked(g));
}

static void unbuild(fixture *f)
{
    strata_value_free(&f->fresh);
    strata_graph_free(&f->g);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    build(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unbuild(f);
    free(f);
    return 0;
}

/* The graph as text, through a fresh snapshot (integrity-checked). */
static char *dump_graph(strata_graph *g)
{
    strata_memstats ms;
    OK(g, strata_memory_stats(g, &ms));
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    sbuf b = { 0 };
    sb_printf(&b, "slots n=%" PRIu64 " r=%" PRIu64 " live n=%" PRIu64 " r=%" PRIu64 "\n",
              ms.node_slots, ms.rel_slots, ms.nodes, ms.relationships);
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes(v, &it), STRATA_OK);
    strata_id n, rel_limit = 0;
    while (strata_node_iter_next(it, &n)) {
        strata_token labels[16];
        size_t nl = 0;
        assert_int_equal(strata_node_labels(v, n, labels, 16, &nl), STRATA_OK);
        sb_printf(&b, "n%" PRIu64 " :", n);
        for (size_t i = 0; i < nl; i++)
            sb_printf(&b, "%s%u", i ? "," : "", labels[i]);
        dump_props(&b, v, false, n);
        strata_id lim = dump_hops(&b, v, n, STRATA_OUT, "out");
        rel_limit = lim > rel_limit ? lim : rel_limit;
        dump_hops(&b, v, n, STRATA_IN, "in");
        sb_printf(&b, "\n");
    }
    strata_node_iter_free(&it);
    for (strata_id r = 0; r < rel_limit; r++)
        if (strata_rel_exists(v, r)) {
            sb_printf(&b, "r%" PRIu64, r);
            dump_props(&b, v, true, r);
            sb_printf(&b, "\n");
        }
    strata_index ids[16];
    size_t ni = 0;
    assert_int_equal(strata_indexes(v, ids, 16, &ni), STRATA_OK);
    for (size_t i = 0; i < ni; i++) {
        strata_index_info info;
        assert_int_equal(strata_index_info_get(v, ids[i], &info), STRATA_OK);
        sb_printf(&b, "index %u %s kind=%d entries=%" PRIu64 "\n", ids[i], info.name,
                  (int)info.kind, info.entries);
    }
    strata_view_release(&v);
    return b.p;
}

/* One refused write, with a view held across it. */
typedef strata_status (*write_fn)(fixture *f);

static void expect_refused(fixture *f, write_fn w, strata_status want, const char *what)
{
    char *before = dump_graph(f->g);
    strata_view *held = NULL;
    OK(f->g, strata_snapshot(f->g, &held));
    strata_status s = w(f);
    if (s != want)
        fail_msg("%s: status %s, wanted %s (%s)", what, strata_errstr(s), strata_errstr(want),
                 strata_errmsg(f->g));
    if (strata_is_forked(f->g))
        fail_msg("%s: the refused write forked the graph", what);
    char *after = dump_graph(f->g);
    if (strcmp(before, after) != 0)
        fail_msg("%s changed the graph:\n--- before\n%s--- after\n%s", what, before, after);
    free(after);
    /* The held view still reads the same graph. */
    strata_view_release(&held);
    free(before);
}

/* ---- the direct calls -------------------------------------------------------- */

static strata_status set_taken_email(fixture *f)
{
    strata_value *v = strata_value_string("a@x", 3);
    strata_status s = strata_node_set(f->g, f->n[1], f->email, v);
    strata_value_free(&v);
    return s;
}

static strata_status label_onto_taken_email(fixture *f)
{
    return strata_node_add_label(f->g, f->n[2], f->person);
}

static strata_status set_taken_composite(fixture *f)
{
    strata_value *v = strata_value_int(2);
    strata_status s = strata_node_set(f->g, f->n[4], f->b, v);
    strata_value_free(&v);
    return s;
}

static strata_status set_taken_rel_key(fixture *f)
{
    strata_value *v = strata_value_int(1);
    strata_status s = strata_rel_set(f->g, f->r[1], f->since, v);
    strata_value_free(&v);
    return s;
}

static strata_status unique_index_over_duplicates(fixture *f)
{
    strata_index idx;
    /* City(a): n3 and n4 both hold 1. */
    return strata_index_create(f->g, STRATA_INDEX_UNIQUE, false, f->city, &f->a, 1, &idx);
}

static strata_status set_unstorable(fixture *f)
{
    strata_value *items[1] = { strata_value_null() };
    strata_value *list = strata_value_list((const strata_value *const *)items, 1);
    strata_value_free(&items[0]);
    strata_status s = strata_node_set(f->g, f->n[5], f->a, list);
    strata_value_free(&list);
    return s;
}

static strata_status rel_to_missing_node(fixture *f)
{
    strata_id r;
    return strata_rel_create(f->g, f->n[0], 999, f->knows, &r);
}

static strata_status delete_connected(fixture *f)
{
    return strata_node_delete(f->g, f->n[0]);
}

static strata_status equal_index(fixture *f)
{
    strata_index idx;
    return strata_index_create(f->g, STRATA_INDEX_UNIQUE, false, f->person, &f->email, 1, &idx);
}

static void test_api_refusals(void **state)
{
    fixture *f = *state;
    expect_refused(f, set_taken_email, STRATA_ECONSTRAINT, "SET of a taken unique key");
    expect_refused(f, label_onto_taken_email, STRATA_ECONSTRAINT,
                   "a label bringing a taken unique key");
    expect_refused(f, set_taken_composite, STRATA_ECONSTRAINT, "SET of a taken composite key");
    expect_refused(f, set_taken_rel_key, STRATA_ECONSTRAINT,
                   "SET of a taken relationship key");
    expect_refused(f, unique_index_over_duplicates, STRATA_ECONSTRAINT,
                   "a unique index over duplicates");
    expect_refused(f, set_unstorable, STRATA_ETYPE, "SET of an unstorable value");
    expect_refused(f, rel_to_missing_node, STRATA_ENOTFOUND,
                   "a relationship to a missing node");
    expect_refused(f, delete_connected, STRATA_ECONNECTED, "deleting a connected node");
    expect_refused(f, equal_index, STRATA_EINVAL, "an index equal to one that exists");
}

/* The same refusals inside a transaction: its version is shared with the
   committed state, so reaching the write phase would fork it too. */
static void test_refusals_in_transaction(void **state)
{
    fixture *f = *state;
    OK(f->g, strata_begin(f->g));
    expect_refused(f, set_taken_email, STRATA_ECONSTRAINT, "SET of a taken key (transaction)");
    expect_refused(f, label_onto_taken_email, STRATA_ECONSTRAINT,
                   "a label bringing a taken key (transaction)");
    expect_refused(f, set_taken_rel_key, STRATA_ECONSTRAINT,
                   "SET of a taken relationship key (transaction)");
    OK(f->g, strata_rollback(f->g));
    assert_false(strata_is_forked(f->g));
}

/* ---- Cypher -------------------------------------------------------------------- */

static const char *cypher_text;

static strata_status run_cypher(fixture *f)
{
    strata_result *r = NULL;
    strata_status s = strata_query(f->g, cypher_text, NULL, &r);
    strata_result_free(&r);
    return s;
}

static void test_cypher_refusals(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *text;
        strata_status want;
    } cases[] = {
        { "CREATE (:Person {email: 'a@x'})", STRATA_ECONSTRAINT },
        { "MATCH (n:Person {email: 'b@x'}) SET n.email = 'a@x'", STRATA_ECONSTRAINT },
        { "MATCH (n) WHERE n.email = 'a@x' AND NOT n:Person SET n:Person", STRATA_ECONSTRAINT },
        { "MATCH (n:City {b: 3}) SET n.b = 2", STRATA_ECONSTRAINT },
        { "MATCH ()-[r:KNOWS {since: 2}]->() SET r.since = 1", STRATA_ECONSTRAINT },
        { "MATCH (a:Person {email: 'a@x'}), (b:Person {email: 'b@x'}) "
          "CREATE (a)-[:KNOWS {since: 2}]->(b)", STRATA_ECONSTRAINT },
        /* writes that succeed, then one refused: the statement rolls back */
        { "CREATE (:Fresh) WITH 1 AS one MATCH (n:Person {email: 'b@x'}) "
          "SET n.email = 'a@x'", STRATA_ECONSTRAINT },
        { "MATCH (n:Person) SET n.seen = true WITH n MATCH (m:City {b: 3}) SET m.b = 2",
          STRATA_ECONSTRAINT },
        { "CREATE CONSTRAINT FOR (n:City) REQUIRE n.a IS UNIQUE", STRATA_ECONSTRAINT },
        { "MATCH (n:Person) SET n.bad = [1, null]", STRATA_EINVAL },
        { "MATCH (n:Person {email: 'a@x'}) DELETE n", STRATA_EINVAL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cypher_text = cases[i].text;
        strata_status want = cases[i].want;
        /* a refused statement reports a category; its status is what the
           category maps to */
        strata_result *r = NULL;
        char *before = dump_graph(f->g);
        strata_view *held = NULL;
        OK(f->g, strata_snapshot(f->g, &held));
        strata_status s = strata_query(f->g, cypher_text, NULL, &r);
        const strata_query_error *e = strata_result_error(r);
        if (s == STRATA_OK || !e)
            fail_msg("%s: not refused", cypher_text);
        if (want != STRATA_EINVAL && s != want)
            fail_msg("%s: status %s (%s)", cypher_text, strata_errstr(s), e->message);
        strata_result_free(&r);
        if (strata_is_forked(f->g))
            fail_msg("%s: the refused statement forked the graph", cypher_text);
        char *after = dump_graph(f->g);
        if (strcmp(before, after) != 0)
            fail_msg("%s changed the graph:\n--- before\n%s--- after\n%s", cypher_text, before,
                     after);
        free(after);
        free(before);
        strata_view_release(&held);
    }
}

/* ---- allocation failures --------------------------------------------------------- */

static strata_status create_labelled(fixture *f)
{
    strata_id id;
    strata_token l[2] = { f->person, f->city };
    return strata_node_create(f->g, l, 2, &id);
}

static strata_status set_fresh_email(fixture *f)
{
    return strata_node_set(f->g, f->n[0], f->email, f->fresh);
}

static strata_status add_city_label(fixture *f)
{
    return strata_node_add_label(f->g, f->n[5], f->city);
}

static strata_status create_rel(fixture *f)
{
    strata_id r;
    return strata_rel_create(f->g, f->n[3], f->n[4], f->knows, &r);
}

static strata_status detach_delete(fixture *f)
{
    return strata_node_detach_delete(f->g, f->n[1]);
}

static strata_status delete_rel(fixture *f)
{
    return strata_rel_delete(f->g, f->r[0]);
}

static strata_status hash_index(fixture *f)
{
    strata_index idx;
    return strata_index_create(f->g, STRATA_INDEX_HASH, false, f->person, &f->email, 1, &idx);
}

static strata_status cypher_mix(fixture *f)
{
    cypher_text = "MATCH (n:Person {email: 'a@x'}) SET n.email = 'z@x', n:City "
                  "CREATE (n)-[:KNOWS {since: 9}]->(:Person {email: 'y@x'})";
    return run_cypher(f);
}

static strata_status cypher_profile(fixture *f)
{
    cypher_text = "PROFILE MATCH (n:Person {email: 'b@x'}) SET n.age = 3 CREATE (:City {a: 7})";
    return run_cypher(f);
}

/* The write fails at each of its allocations in turn under a held view:
   each failure leaves the graph unforked and unchanged; the write then
   runs through (and is undone by rebuilding the fixture). */
static void fail_each_allocation(fixture *f, write_fn w, const char *what)
{
    for (long k = 1;; k++) {
        char *before = dump_graph(f->g);
        strata_view *held = NULL;
        OK(f->g, strata_snapshot(f->g, &held));
        mem_fail_at(k);
        strata_status s = w(f);
        mem_fail_clear();
        if (s == STRATA_OK) {
            free(before);
            strata_view_release(&held);
            break;
        }
        if (s != STRATA_ENOMEM)
            fail_msg("%s, allocation %ld failing: %s (%s)", what, k, strata_errstr(s),
                     strata_errmsg(f->g));
        if (strata_is_forked(f->g))
            fail_msg("%s, allocation %ld failing: the failed write forked the graph (%s)", what, k, strata_errmsg(f->g));
        char *after = dump_graph(f->g);
        if (strcmp(before, after) != 0)
            fail_msg("%s, allocation %ld failing, changed the graph:\n--- before\n%s"
                     "--- after\n%s", what, k, before, after);
        free(after);
        free(before);
        strata_view_release(&held);
        assert_true(k < 100000);
    }
    unbuild(f);
    build(f);
}

static void test_allocation_failures(void **state)
{
    fixture *f = *state;
    static const struct {
        write_fn w;
        const char *what;
    } cases[] = {
        { create_labelled, "node create" },   { set_fresh_email, "SET of an indexed key" },
        { add_city_label, "adding a label" }, { create_rel, "relationship create" },
        { detach_delete, "detach delete" },   { delete_rel, "relationship delete" },
        { hash_index, "index create" },       { cypher_mix, "a Cypher statement" },
        { cypher_profile, "a profiled Cypher statement" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        fail_each_allocation(f, cases[i].w, cases[i].what);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_api_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_in_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cypher_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
