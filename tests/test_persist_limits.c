/*
 * The size limits of one entity, each at its boundary, in memory and
 * through a save and a load: a node's degree in one direction and type
 * (no limit: 65,535, 65,536, 65,537 and a larger hub, several types and
 * both directions on one hub), its (direction, type) pairs (at most
 * ADJ_MAX_SEGMENTS, a new pair beyond refused, a relationship in a pair it
 * has still taken, and a rollback that gives back a relationship at a full
 * node), its labels (MAX_LABELS_PER_NODE, and labels() listing them all),
 * its property keys (PROPS_MAX), long strings and lists (no limit) and
 * token names (1..65,535 bytes), and indices (no limit: every one listed
 * and planned with).  Every loaded graph must equal the saved
 * one (the canonical dump of persist_support.h) and pass the integrity
 * check.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "persist_support.h"
#include "support/tmp_dir.h"
#include "storage/adjacency.h"
#include "storage/props.h"

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

static strata_graph *graph_new(void)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    return g;
}

static strata_token tok(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    OK(g, strata_token_intern(g, kind, name, &t));
    return t;
}

/* The token "<prefix><i>". */
static strata_token tok_n(strata_graph *g, strata_token_kind kind, const char *prefix,
                          unsigned i)
{
    char name[64];
    snprintf(name, sizeof name, "%s%u", prefix, i);
    return tok(g, kind, name);
}

static strata_id node_new(strata_graph *g)
{
    strata_id id = 0;
    OK(g, strata_node_create(g, NULL, 0, &id));
    return id;
}

static strata_id rel_new(strata_graph *g, strata_id a, strata_id b, strata_token type)
{
    strata_id id = 0;
    OK(g, strata_rel_create(g, a, b, type, &id));
    return id;
}

/* Saves g, loads the file back and checks the copy equals g; returns the
   loaded graph (the caller frees it). */
static strata_graph *round_trip(strata_graph *g, const char *name)
{
    check_integrity(g);
    const char *path = tmp_path(name);
    OK(g, strata_save(g, path));
    strata_graph *h = NULL;
    char err[512] = "";
    strata_status s = strata_load_ex(path, &h, err, sizeof err);
    if (s != STRATA_OK)
        fail_msg("load %s: %s (%s)", name, strata_errstr(s), err);
    unlink(path);
    char *want = dump_graph(g), *got = dump_graph(h);
    if (strcmp(want, got) != 0)
        fail_msg("%s: the loaded graph differs from the saved one", name);
    free(want);
    free(got);
    check_integrity(h);
    return h;
}

static uint64_t degree(strata_graph *g, strata_id node, strata_direction dir, strata_token type)
{
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    uint64_t n = 0;
    OK(g, strata_node_degree(v, node, dir, type, &n));
    strata_view_release(&v);
    return n;
}

/* ---- degree --------------------------------------------------------------- */

/* A hub with deg relationships of one type going out, to nodes that each
   get several (so the far ends are hubs of a smaller kind too). */
static void hub_of_degree(uint64_t deg)
{
    strata_graph *g = graph_new();
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id hub = node_new(g);
    enum { TARGETS = 1000 };
    for (int i = 0; i < TARGETS; i++)
        node_new(g);
    for (uint64_t i = 0; i < deg; i++)
        rel_new(g, hub, 1 + i % TARGETS, t);
    assert_int_equal(degree(g, hub, STRATA_OUT, t), deg);
    char name[64];
    snprintf(name, sizeof name, "hub-%llu.db", (unsigned long long)deg);
    strata_graph *h = round_trip(g, name);
    assert_int_equal(degree(h, hub, STRATA_OUT, t), deg);
    /* The loaded hub takes more relationships and gives them back. */
    strata_id extra = rel_new(h, hub, 1, t);
    assert_int_equal(degree(h, hub, STRATA_OUT, t), deg + 1);
    OK(h, strata_rel_delete(h, extra));
    assert_int_equal(degree(h, hub, STRATA_OUT, t), deg);
    check_integrity(h);
    strata_graph_free(&h);
    strata_graph_free(&g);
}

static void test_hub_degree_boundaries(void **state)
{
    (void)state;
    static const uint64_t degrees[] = { 65535, 65536, 65537, 300000 };
    for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++)
        hub_of_degree(degrees[i]);
}

/* One hub of more than 65,536 relationships in large segments of several
   types, both directions and self-loops, directions interleaved within a
   type and a tail interleaving the types: every segment comes back whole
   and in relationship id order.  (Type by type first: adding to a segment
   before the last moves the later segments' entries, O(degree) per
   relationship at an in-memory hub.) */
static void test_hub_of_several_types(void **state)
{
    (void)state;
    strata_graph *g = graph_new();
    enum { TYPES = 3, PER_TYPE = 25000, TAIL = 3000 };
    strata_token t[TYPES];
    for (unsigned i = 0; i < TYPES; i++)
        t[i] = tok_n(g, STRATA_RELTYPE, "T", i);
    strata_id hub = node_new(g), other = node_new(g);
    for (unsigned i = 0; i < TYPES * PER_TYPE + TAIL; i++) {
        strata_token ty = i < TYPES * PER_TYPE ? t[i / PER_TYPE] : t[i % TYPES];
        if (i % 7 == 0)
            rel_new(g, hub, hub, ty);
        else if (i % 2)
            rel_new(g, hub, other, ty);
        else
            rel_new(g, other, hub, ty);
    }
    strata_graph *h = round_trip(g, "several.db");
    for (unsigned i = 0; i < TYPES; i++)
        for (strata_direction d = STRATA_OUT; d <= STRATA_IN; d++)
            assert_int_equal(degree(h, hub, d, t[i]), degree(g, hub, d, t[i]));
    /* A loaded segment lists its relationships in id order. */
    strata_view *v = NULL;
    OK(h, strata_snapshot(h, &v));
    strata_edge_iter *it = NULL;
    OK(h, strata_neighbours(v, hub, STRATA_OUT, t[1], &it));
    strata_id rel, prev = 0, far;
    uint64_t n = 0;
    while (strata_edge_iter_next(it, &rel, &far)) {
        assert_true(n == 0 || rel > prev);
        prev = rel;
        n++;
    }
    assert_int_equal(n, degree(h, hub, STRATA_OUT, t[1]));
    strata_edge_iter_free(&it);
    strata_view_release(&v);
    strata_graph_free(&h);
    strata_graph_free(&g);
}

/* ---- (direction, type) pairs at one node ------------------------------------ */

static void test_direction_type_pairs(void **state)
{
    (void)state;
    strata_graph *g = graph_new();
    strata_id hub = node_new(g), other = node_new(g);
    /* Each self-loop of a new type opens two pairs at the hub. */
    unsigned loops = (ADJ_MAX_SEGMENTS - 1) / 2, next = 0;
    for (; next < loops; next++)
        rel_new(g, hub, hub, tok_n(g, STRATA_RELTYPE, "T", next));
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    assert_int_equal(adj_nsegments(store_node_adj(&v->ver->st, hub)), 2 * loops);
    strata_view_release(&v);
    /* A self-loop of a new type needs two: refused, the graph unchanged. */
    strata_token full = tok_n(g, STRATA_RELTYPE, "T", next++);
    char *before = dump_graph(g);
    strata_id id;
    assert_int_equal(strata_rel_create(g, hub, hub, full, &id), STRATA_EFULL);
    assert_non_null(strstr(strata_errmsg(g), "too many types"));
    char *after = dump_graph(g);
    assert_string_equal(before, after);
    free(after);
    /* One more pair fits: the last one. */
    strata_id last = rel_new(g, hub, other, full);
    /* Beyond it, a new pair is refused at either end. */
    strata_token beyond = tok_n(g, STRATA_RELTYPE, "T", next++);
    assert_int_equal(strata_rel_create(g, hub, other, beyond, &id), STRATA_EFULL);
    assert_int_equal(strata_rel_create(g, other, hub, beyond, &id), STRATA_EFULL);
    assert_non_null(strstr(strata_errmsg(g), "node 0"));
    /* ... but a full node still takes relationships in the pairs it has. */
    strata_token t0 = tok_n(g, STRATA_RELTYPE, "T", 0);
    rel_new(g, hub, hub, t0);
    rel_new(g, other, hub, t0);
    rel_new(g, hub, other, full);
    /* Deleting the only relationship of a pair and rolling back gives the
       pair back to the full node. */
    OK(g, strata_begin(g));
    OK(g, strata_rel_delete(g, last));
    OK(g, strata_rel_delete(g, 0));
    OK(g, strata_rollback(g));
    free(before);
    before = dump_graph(g);
    check_integrity(g);
    strata_graph *h = round_trip(g, "pairs.db");
    /* The loaded node is as full: the same refusal. */
    assert_int_equal(strata_rel_create(h, hub, other, beyond, &id), STRATA_EFULL);
    rel_new(h, hub, other, full);
    strata_graph_free(&h);
    free(before);
    strata_graph_free(&g);
}

/* ---- labels ------------------------------------------------------------------- */

/* The number of labels labels(n) lists for node 0, and whether they are
   sorted by name. */
static size_t cypher_label_count(strata_graph *g, bool *sorted)
{
    strata_result *r = NULL;
    OK(g, strata_query(g, "MATCH (n) WHERE id(n) = 0 RETURN labels(n)", NULL, &r));
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    size_t n = strata_value_list_len(row[0]);
    *sorted = true;
    char prev[64] = "";
    for (size_t i = 0; i < n; i++) {
        strata_value *item = NULL;
        const char *s;
        size_t len;
        assert_int_equal(strata_value_list_get(row[0], i, &item), STRATA_OK);
        assert_int_equal(strata_value_get_string(item, &s, &len), STRATA_OK);
        if (i && strcmp(prev, s) >= 0)
            *sorted = false;
        snprintf(prev, sizeof prev, "%s", s);
        strata_value_free(&item);
    }
    strata_result_free(&r);
    return n;
}

static void test_labels_per_node(void **state)
{
    (void)state;
    strata_graph *g = graph_new();
    strata_id n = node_new(g);
    /* Created in an order that is not their names' order. */
    for (unsigned i = 0; i < MAX_LABELS_PER_NODE; i++)
        OK(g, strata_node_add_label(g, n, tok_n(g, STRATA_LABEL, "L", MAX_LABELS_PER_NODE - i)));
    bool sorted;
    assert_int_equal(cypher_label_count(g, &sorted), MAX_LABELS_PER_NODE);
    assert_true(sorted);
    /* One more is refused, naming the limit; the node keeps its labels. */
    strata_status s = strata_node_add_label(g, n, tok(g, STRATA_LABEL, "one-too-many"));
    assert_int_equal(s, STRATA_EINVAL);
    char limit[32];
    snprintf(limit, sizeof limit, "%d", MAX_LABELS_PER_NODE);
    assert_non_null(strstr(strata_errmsg(g), limit));
    strata_token many[MAX_LABELS_PER_NODE + 1];
    for (unsigned i = 0; i <= MAX_LABELS_PER_NODE; i++)
        many[i] = tok_n(g, STRATA_LABEL, "M", i);
    strata_id id;
    assert_int_equal(strata_node_create(g, many, MAX_LABELS_PER_NODE + 1, &id), STRATA_EINVAL);
    OK(g, strata_node_create(g, many, MAX_LABELS_PER_NODE, &id));
    strata_graph *h = round_trip(g, "labels.db");
    assert_int_equal(cypher_label_count(h, &sorted), MAX_LABELS_PER_NODE);
    strata_view *v = NULL;
    OK(h, strata_snapshot(h, &v));
    size_t count = 0;
    OK(h, strata_node_labels(v, n, NULL, 0, &count));
    assert_int_equal(count, MAX_LABELS_PER_NODE);
    strata_view_release(&v);
    strata_graph_free(&h);
    strata_graph_free(&g);
}

/* ---- property keys ------------------------------------------------------------- */

static void test_properties_per_entity(void **state)
{
    (void)state;
    strata_graph *g = graph_new();
    strata_id n = node_new(g), r = rel_new(g, n, n, tok(g, STRATA_RELTYPE, "T"));
    strata_value *one = strata_value_int(1);
    for (unsigned i = 0; i < PROPS_MAX; i++) {
        strata_token k = tok_n(g, STRATA_KEY, "k", i);
        OK(g, strata_node_set(g, n, k, one));
        OK(g, strata_rel_set(g, r, k, one));
    }
    strata_token extra = tok(g, STRATA_KEY, "one-too-many");
    assert_int_equal(strata_node_set(g, n, extra, one), STRATA_EFULL);
    assert_non_null(strstr(strata_errmsg(g), "65535"));
    assert_int_equal(strata_rel_set(g, r, extra, one), STRATA_EFULL);
    /* Overwriting a key it has is no new key. */
    OK(g, strata_node_set(g, n, tok_n(g, STRATA_KEY, "k", 7), one));
    strata_graph *h = round_trip(g, "props.db");
    strata_view *v = NULL;
    OK(h, strata_snapshot(h, &v));
    size_t count = 0;
    OK(h, strata_node_keys(v, n, NULL, 0, &count));
    assert_int_equal(count, PROPS_MAX);
    OK(h, strata_rel_keys(v, r, NULL, 0, &count));
    assert_int_equal(count, PROPS_MAX);
    strata_view_release(&v);
    assert_int_equal(strata_node_set(h, n, extra, one), STRATA_EFULL);
    strata_value_free(&one);
    strata_graph_free(&h);
    strata_graph_free(&g);
}

/* ---- strings, lists, token names ------------------------------------------------- */

static void test_long_strings_and_lists(void **state)
{
    (void)state;
    strata_graph *g = graph_new();
    strata_id n = node_new(g);
    static const size_t lengths[] = { 255, 256, 65535, 65536, 65537, (1u << 20) + 1 };
    char *bytes = malloc(lengths[5]);
    assert_non_null(bytes);
    for (size_t i = 0; i < lengths[5]; i++)
        bytes[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        strata_value *s = strata_value_string(bytes, lengths[i]);
        OK(g, strata_node_set(g, n, tok_n(g, STRATA_KEY, "s", (unsigned)i), s));
        strata_value_free(&s);
    }
    free(bytes);
    static const size_t items[] = { 65535, 65536, 65537, 200000 };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        strata_value **vals = malloc(items[i] * sizeof *vals);
        assert_non_null(vals);
        for (size_t j = 0; j < items[i]; j++)
            vals[j] = strata_value_int((int64_t)j);
        strata_value *list = strata_value_list((const strata_value *const *)vals, items[i]);
        assert_non_null(list);
        OK(g, strata_node_set(g, n, tok_n(g, STRATA_KEY, "l", (unsigned)i), list));
        strata_value_free(&list);
        for (size_t j = 0; j < items[i]; j++)
            strata_value_free(&vals[j]);
        free(vals);
    }
    strata_graph *h = round_trip(g, "long-values.db");
    strata_view *v = NULL;
    OK(h, strata_snapshot(h, &v));
    strata_value *got = NULL;
    OK(h, strata_node_get(v, n, tok_n(h, STRATA_KEY, "s", 5), &got));
    const char *s;
    size_t len;
    OK(h, strata_value_get_string(got, &s, &len));
    assert_int_equal(len, lengths[5]);
    strata_value_free(&got);
    OK(h, strata_node_get(v, n, tok_n(h, STRATA_KEY, "l", 3), &got));
    assert_int_equal(strata_value_list_len(got), items[3]);
    strata_value_free(&got);
    strata_view_release(&v);
    strata_graph_free(&h);
    strata_graph_free(&g);
}

static void test_token_name_lengths(void **state)
{
    (void)state;
    strata_graph *g = graph_new();
    char *name = malloc(65537);
    assert_non_null(name);
    memset(name, 'x', 65536);
    name[65536] = '\0';
    strata_token t;
    for (strata_token_kind k = STRATA_LABEL; k <= STRATA_KEY; k++)
        assert_int_equal(strata_token_intern(g, k, name, &t), STRATA_EINVAL);
    assert_non_null(strstr(strata_errmsg(g), "65535"));
    name[65535] = '\0';
    strata_id n = node_new(g);
    OK(g, strata_node_add_label(g, n, tok(g, STRATA_LABEL, name)));
    rel_new(g, n, n, tok(g, STRATA_RELTYPE, name));
    strata_value *one = strata_value_int(1);
    OK(g, strata_node_set(g, n, tok(g, STRATA_KEY, name), one));
    strata_value_free(&one);
    strata_graph *h = round_trip(g, "names.db");
    strata_view *v = NULL;
    OK(h, strata_snapshot(h, &v));
    const char *got;
    OK(h, strata_token_name(v, STRATA_KEY, 0, &got));
    assert_int_equal(strlen(got), 65535);
    strata_view_release(&v);
    strata_graph_free(&h);
    free(name);
    strata_graph_free(&g);
}

/* ---- indices ------------------------------------------------------------------------ */

/* The first cell of the last row of text's result, as a string (a copy). */
static char *last_cell(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    OK(g, strata_query(g, text, NULL, &r));
    const strata_value *const *row;
    char *got = NULL;
    while (strata_result_next(r, &row)) {
        free(got);
        const char *s;
        size_t len;
        int64_t i;
        char buf[32];
        if (strata_value_get_string(row[0], &s, &len) != STRATA_OK) {
            assert_int_equal(strata_value_get_int(row[0], &i), STRATA_OK);
            snprintf(buf, sizeof buf, "%lld", (long long)i);
            s = buf;
        }
        got = strdup(s);
    }
    strata_result_free(&r);
    assert_non_null(got);
    return got;
}

/* There is no limit on indices: db.indexes() lists every one and the
   planner considers every one (each listed 256 and 64 at most). */
static void test_many_indexes(void **state)
{
    (void)state;
    enum { INDEXES = 300 };
    strata_graph *g = graph_new();
    strata_token k = tok(g, STRATA_KEY, "k");
    for (unsigned i = 0; i < INDEXES; i++) {
        strata_index idx;
        OK(g, strata_index_create(g, STRATA_INDEX_HASH, false, tok_n(g, STRATA_LABEL, "L", i),
                                  &k, 1, &idx));
    }
    for (int i = 0; i < 500; i++) {
        strata_token last = tok_n(g, STRATA_LABEL, "L", INDEXES - 1);
        strata_id id;
        OK(g, strata_node_create(g, &last, 1, &id));
        strata_value *val = strata_value_int(i);
        OK(g, strata_node_set(g, id, k, val));
        strata_value_free(&val);
    }
    char *count = last_cell(g, "CALL db.indexes() YIELD name RETURN count(name)");
    assert_string_equal(count, "300");
    free(count);
    strata_graph *h = round_trip(g, "indexes.db");
    strata_result *r = NULL;
    OK(h, strata_query(h, "EXPLAIN MATCH (n:L299 {k: 1}) RETURN n", NULL, &r));
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    const char *plan;
    size_t len;
    OK(h, strata_value_get_string(row[3], &plan, &len));
    if (!strstr(plan, "NodeIndexSeek"))
        fail_msg("the 300th index is not used: %s", plan);
    strata_result_free(&r);
    strata_graph_free(&h);
    strata_graph_free(&g);
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-limits");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hub_degree_boundaries),
        cmocka_unit_test(test_hub_of_several_types),
        cmocka_unit_test(test_direction_type_pairs),
        cmocka_unit_test(test_labels_per_node),
        cmocka_unit_test(test_properties_per_entity),
        cmocka_unit_test(test_long_strings_and_lists),
        cmocka_unit_test(test_token_name_lengths),
        cmocka_unit_test(test_many_indexes),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
