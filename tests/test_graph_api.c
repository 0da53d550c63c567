/*
 * Tests for the direct C API (include/strata.h): every call's success and
 * failure paths, values, properties, labels, slot reuse, adjacency, views
 * and forks, the copy counter, allocation failure and memory statistics.
 *
 * Conventions:
 *   - Every failure is checked three ways: the status, a non-empty message
 *     on the handle it was called on, and an unchanged graph (a canonical
 *     dump of a fresh snapshot plus the slot counts, and a clean
 *     strata_integrity_check()).
 *   - dump_view() renders a view as text in id order (labels, properties,
 *     adjacency, relationships), so "exactly as before" is one string
 *     comparison and a mismatch shows what moved.
 *   - The test build uses PVEC_FANOUT 4, so a few dozen nodes already give
 *     multi-level slot vectors and every path-copy branch runs.
 *
 * Each test gets a fresh graph in *state; the teardown clears any injected
 * allocation failure and frees the graph (AddressSanitizer reports leaks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"
#include "storage/mem.h"
#include "storage/pvec.h"
#include "support/api_dump.h"
#include "support/model_value.h"

#define ERRBUF 512

static int setup(void **state)
{
    strata_graph *g = NULL;
    if (strata_graph_new(&g) != STRATA_OK)
        return -1;
    *state = g;
    return 0;
}

static int teardown(void **state)
{
    strata_graph *g = *state;
    mem_fail_clear();
    strata_graph_free(&g);
    return 0;
}

/* ---- small helpers (each aborts the test on an unexpected status) ------ */

static void assert_msg(const char *m)
{
    assert_non_null(m);
    assert_true(m[0] != '\0');
}

/* The message names what was wrong: it mentions needle. */
static void assert_msg_has(const char *m, const char *needle)
{
    assert_msg(m);
    if (!strstr(m, needle))
        fail_msg("message \"%s\" does not mention \"%s\"", m, needle);
}

static strata_token tok(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    assert_int_equal(strata_token_intern(g, kind, name, &t), STRATA_OK);
    return t;
}

static strata_id node_new(strata_graph *g, size_t n, const strata_token *labels)
{
    strata_id id = UINT64_MAX;
    assert_int_equal(strata_node_create(g, labels, n, &id), STRATA_OK);
    return id;
}

static strata_id node0(strata_graph *g) { return node_new(g, 0, NULL); }

static strata_id node1(strata_graph *g, strata_token label) { return node_new(g, 1, &label); }

static strata_id rel_new(strata_graph *g, strata_id a, strata_id b, strata_token type)
{
    strata_id id = UINT64_MAX;
    strata_status s = strata_rel_create(g, a, b, type, &id);
    if (s != STRATA_OK)
        fail_msg("rel_create %" PRIu64 "->%" PRIu64 ": %s", a, b, strata_errmsg(g));
    return id;
}

static strata_view *snap(strata_graph *g)
{
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_non_null(v);
    return v;
}

/* Sets a property from a freshly built value (consumed here). */
static void set_node_value(strata_graph *g, strata_id n, strata_token k, strata_value *val)
{
    assert_non_null(val);
    strata_status s = strata_node_set(g, n, k, val);
    if (s != STRATA_OK)
        fail_msg("node_set %" PRIu64 ": %s", n, strata_errmsg(g));
    strata_value_free(&val);
}

static void set_int(strata_graph *g, strata_id n, strata_token k, int64_t i)
{
    set_node_value(g, n, k, strata_value_int(i));
}

static void set_str(strata_graph *g, strata_id n, strata_token k, const char *s)
{
    set_node_value(g, n, k, strata_value_string(s, strlen(s)));
}

static void set_rel_int(strata_graph *g, strata_id r, strata_token k, int64_t i)
{
    strata_value *val = strata_value_int(i);
    assert_non_null(val);
    assert_int_equal(strata_rel_set(g, r, k, val), STRATA_OK);
    strata_value_free(&val);
}

/* A node property as a new value (caller frees). */
static strata_value *get_node(strata_view *v, strata_id n, strata_token k)
{
    strata_value *out = NULL;
    assert_int_equal(strata_node_get(v, n, k, &out), STRATA_OK);
    assert_non_null(out);
    return out;
}

static strata_value *get_rel(strata_view *v, strata_id r, strata_token k)
{
    strata_value *out = NULL;
    assert_int_equal(strata_rel_get(v, r, k, &out), STRATA_OK);
    assert_non_null(out);
    return out;
}

static int64_t node_int(strata_view *v, strata_id n, strata_token k)
{
    strata_value *val = get_node(v, n, k);
    int64_t i = 0;
    assert_int_equal(strata_value_get_int(val, &i), STRATA_OK);
    strata_value_free(&val);
    return i;
}

static bool node_prop_is_null(strata_view *v, strata_id n, strata_token k)
{
    strata_value *val = get_node(v, n, k);
    bool is_null = strata_value_type(val) == STRATA_NULL;
    strata_value_free(&val);
    return is_null;
}

static bool has_label(strata_view *v, strata_id n, strata_token label)
{
    bool on = false;
    assert_int_equal(strata_node_has_label(v, n, label, &on), STRATA_OK);
    return on;
}

static uint64_t degree(strata_view *v, strata_id n, strata_direction dir, strata_token type)
{
    uint64_t d = UINT64_MAX;
    assert_int_equal(strata_node_degree(v, n, dir, type, &d), STRATA_OK);
    return d;
}

static void check_view_integrity(strata_view *v)
{
    strata_status s = strata_integrity_check(v);
    if (s != STRATA_OK)
        fail_msg("integrity check: %s (%s)", strata_errstr(s), strata_view_errmsg(v));
}

/* strata_integrity_check() on a fresh snapshot of the graph. */
static void check_integrity(strata_graph *g)
{
    strata_view *v = snap(g);
    check_view_integrity(v);
    strata_view_release(&v);
}

static strata_memstats stats(strata_graph *g)
{
    strata_memstats ms;
    memset(&ms, 0xAB, sizeof ms);
    assert_int_equal(strata_memory_stats(g, &ms), STRATA_OK);
    return ms;
}

static void counts_are(strata_graph *g, uint64_t nodes, uint64_t rels)
{
    strata_view *v = snap(g);
    assert_int_equal(strata_node_count(v), nodes);
    assert_int_equal(strata_rel_count(v), rels);
    strata_view_release(&v);
}

/* ---- iteration helpers ------------------------------------------------ */

typedef struct hop {
    strata_id rel, other;
} hop;

/* The steps of one neighbour iteration, in the order it yields them. */
static size_t hops(strata_view *v, strata_id n, strata_direction dir, strata_token type,
                   hop *out, size_t cap)
{
    strata_edge_iter *it = NULL;
    assert_int_equal(strata_neighbours(v, n, dir, type, &it), STRATA_OK);
    size_t k = 0;
    strata_id r, o;
    while (strata_edge_iter_next(it, &r, &o)) {
        assert_true(k < cap);
        out[k].rel = r;
        out[k].other = o;
        k++;
    }
    /* An exhausted iterator stays exhausted. */
    assert_false(strata_edge_iter_next(it, &r, &o));
    strata_edge_iter_free(&it);
    assert_null(it);
    return k;
}

static int cmp_hop(const void *a, const void *b)
{
    const hop *x = a, *y = b;
    if (x->rel != y->rel)
        return x->rel < y->rel ? -1 : 1;
    return (x->other > y->other) - (x->other < y->other);
}

/* hops() sorted by relationship id, for comparing as sets. */
static size_t sorted_hops(strata_view *v, strata_id n, strata_direction dir, strata_token type,
                          hop *out, size_t cap)
{
    size_t k = hops(v, n, dir, type, out, cap);
    qsort(out, k, sizeof *out, cmp_hop);
    return k;
}

/* The neighbour iteration yields exactly these (rel, other) pairs, in any
   order, and the degree agrees with it. */
static void assert_hops(strata_view *v, strata_id n, strata_direction dir, strata_token type,
                        const hop *want, size_t nwant)
{
    hop got[64], exp[64];
    assert_true(nwant <= 64);
    size_t k = sorted_hops(v, n, dir, type, got, 64);
    if (nwant)
        memcpy(exp, want, nwant * sizeof *want);
    qsort(exp, nwant, sizeof *exp, cmp_hop);
    assert_int_equal(k, nwant);
    for (size_t i = 0; i < k; i++) {
        assert_int_equal(got[i].rel, exp[i].rel);
        assert_int_equal(got[i].other, exp[i].other);
    }
    assert_int_equal(degree(v, n, dir, type), nwant);
}

/* The node iteration's ids, in order. */
static size_t iter_ids(strata_node_iter *it, strata_id *out, size_t cap)
{
    size_t k = 0;
    strata_id id;
    while (strata_node_iter_next(it, &id)) {
        assert_true(k < cap);
        out[k++] = id;
    }
    assert_false(strata_node_iter_next(it, &id));
    return k;
}

static size_t label_ids(strata_view *v, strata_token label, strata_id *out, size_t cap)
{
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes_by_label(v, label, &it), STRATA_OK);
    size_t k = iter_ids(it, out, cap);
    strata_node_iter_free(&it);
    assert_null(it);
    return k;
}

static void assert_ids(const strata_id *got, size_t ngot, const strata_id *want, size_t nwant)
{
    assert_int_equal(ngot, nwant);
    for (size_t i = 0; i < ngot; i++)
        assert_int_equal(got[i], want[i]);
}

/* ---- canonical dump ----------------------------------------------------- */

#define DUMP_MAX_LABELS 2048
#define DUMP_MAX_HOPS 256

/* The whole of a view as text, in id order.  Relationships are found by
   probing ids up to past the largest one any adjacency lists, so a live
   relationship missing from the adjacency still shows up. */
static char *dump_view(strata_view *v)
{
    sbuf b = { 0 };
    sb_printf(&b, "nodes=%" PRIu64 " rels=%" PRIu64 "\n", strata_node_count(v),
              strata_rel_count(v));
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes(v, &it), STRATA_OK);
    strata_id n, rel_limit = 0;
    uint64_t seen = 0;
    bool first = true;
    strata_id prev = 0;
    while (strata_node_iter_next(it, &n)) {
        assert_true(first || n > prev);   /* id order */
        assert_true(strata_node_exists(v, n));
        first = false;
        prev = n;
        seen++;
        strata_token labels[DUMP_MAX_LABELS];
        size_t nl = 0;
        assert_int_equal(strata_node_labels(v, n, labels, DUMP_MAX_LABELS, &nl), STRATA_OK);
        assert_true(nl <= DUMP_MAX_LABELS);
        sb_printf(&b, "n%" PRIu64 " :", n);
        for (size_t i = 0; i < nl; i++) {
            if (i)
                assert_true(labels[i - 1] < labels[i]);
            assert_true(has_label(v, n, labels[i]));
            sb_printf(&b, "%s%u", i ? "," : "", labels[i]);
        }
        dump_props(&b, v, false, n);
        strata_id lim = dump_hops(&b, v, n, STRATA_OUT, "out");
        if (lim > rel_limit)
            rel_limit = lim;
        dump_hops(&b, v, n, STRATA_IN, "in");
        sb_printf(&b, "\n");
    }
    strata_node_iter_free(&it);
    assert_int_equal(seen, strata_node_count(v));

    uint64_t rels = 0;
    for (strata_id r = 0; r < rel_limit + 64; r++) {
        if (!strata_rel_exists(v, r))
            continue;
        rels++;
        strata_id s = 0, e = 0;
        strata_token t = 0;
        assert_int_equal(strata_rel_info(v, r, &s, &e, &t), STRATA_OK);
        sb_printf(&b, "r%" PRIu64 " n%" PRIu64 "-%u->n%" PRIu64, r, s, t, e);
        dump_props(&b, v, true, r);
        sb_printf(&b, "\n");
    }
    assert_int_equal(rels, strata_rel_count(v));
    return b.p;
}

/* A fresh snapshot's dump plus what only the graph can say: its slot
   counts (a failed create must not leave a slot behind). */
static char *dump_graph(strata_graph *g)
{
    strata_memstats ms = stats(g);
    strata_view *v = snap(g);
    char *d = dump_view(v);
    strata_view_release(&v);
    sbuf b = { 0 };
    sb_printf(&b, "slots n=%" PRIu64 " r=%" PRIu64 " live n=%" PRIu64 " r=%" PRIu64 "\n%s",
              ms.node_slots, ms.rel_slots, ms.nodes, ms.relationships, d);
    free(d);
    return b.p;
}

/* A failed call changed nothing. */
static void assert_unchanged(strata_graph *g, const char *before)
{
    char *now = dump_graph(g);
    assert_string_equal(now, before);
    free(now);
    check_integrity(g);
}

static void assert_view_is(strata_view *v, const char *before)
{
    char *now = dump_view(v);
    assert_string_equal(now, before);
    free(now);
    check_view_integrity(v);
}

/* ---- a sample graph ------------------------------------------------------ */

#define SAMPLE_NODES 24

typedef struct sample {
    strata_token person, city, admin;          /* labels */
    strata_token knows, lives_in;              /* relationship types */
    strata_token name, age, tags, since;       /* property keys */
    strata_id hub;        /* parallel, self-loop, in and out relationships */
    strata_id hub_loop;   /* the hub's self-loop */
    strata_id isolated;   /* no relationships; labelled Admin */
    strata_id free_node;  /* head of the node free list */
    strata_id free_rels[2];   /* the rel free list's first two, head first */
    strata_id next_node;  /* first id past the slots */
} sample;

/*
 * 24 nodes, labels by id (Person when i % 3 == 0, City when i % 4 == 0),
 * every node named with a heap string and aged i, some tagged with a list;
 * a KNOWS chain i -> i+1 (so relationship i is i -> i+1), LIVES_IN
 * relationships, a hub with parallel relationships and a self-loop, an
 * isolated node, and free slots on both free lists (node 17 detach-deleted,
 * relationships 4 and 9 deleted) so creates exercise reuse.
 */
static void build_sample(strata_graph *g, sample *s)
{
    memset(s, 0, sizeof *s);
    s->person = tok(g, STRATA_LABEL, "Person");
    s->city = tok(g, STRATA_LABEL, "City");
    s->admin = tok(g, STRATA_LABEL, "Admin");
    s->knows = tok(g, STRATA_RELTYPE, "KNOWS");
    s->lives_in = tok(g, STRATA_RELTYPE, "LIVES_IN");
    s->name = tok(g, STRATA_KEY, "name");
    s->age = tok(g, STRATA_KEY, "age");
    s->tags = tok(g, STRATA_KEY, "tags");
    s->since = tok(g, STRATA_KEY, "since");
    for (strata_id i = 0; i < SAMPLE_NODES; i++) {
        strata_token l[2];
        size_t nl = 0;
        if (i % 3 == 0)
            l[nl++] = s->person;
        if (i % 4 == 0)
            l[nl++] = s->city;
        assert_int_equal(node_new(g, nl, l), i);
        char name[40];
        snprintf(name, sizeof name, "node number %02" PRIu64 " of the sample", i);
        set_str(g, i, s->name, name);
        set_int(g, i, s->age, (int64_t)i);
        if (i % 5 == 0) {
            strata_value *a = strata_value_string("red", 3);
            strata_value *b = strata_value_string("a rather longer green", 21);
            const strata_value *items[] = { a, b };
            set_node_value(g, i, s->tags, strata_value_list(items, 2));
            strata_value_free(&a);
            strata_value_free(&b);
        }
    }
    for (strata_id i = 0; i + 1 < SAMPLE_NODES; i++)
        assert_int_equal(rel_new(g, i, i + 1, s->knows), i);
    for (strata_id i = 0; i < SAMPLE_NODES; i += 2) {
        strata_id to = (i * 5 + 3) % SAMPLE_NODES;
        strata_id r = rel_new(g, i, to, s->lives_in);
        if (r % 3 == 0)
            set_rel_int(g, r, s->since, (int64_t)(1990 + r));
    }
    s->hub = 2;
    rel_new(g, 2, 3, s->knows);
    rel_new(g, 2, 3, s->knows);
    rel_new(g, 7, 2, s->lives_in);
    s->hub_loop = rel_new(g, 2, 2, s->knows);
    set_rel_int(g, s->hub_loop, s->since, 2001);
    s->isolated = node1(g, s->admin);
    set_str(g, s->isolated, s->name, "alone");
    s->next_node = s->isolated + 1;

    /* Node 17 has the chain relationships 16 and 17 and a LIVES_IN one; its
       relationships go on the free list first, then 4 and 9 on top. */
    assert_int_equal(strata_node_detach_delete(g, 17), STRATA_OK);
    assert_int_equal(strata_rel_delete(g, 4), STRATA_OK);
    assert_int_equal(strata_rel_delete(g, 9), STRATA_OK);
    s->free_node = 17;
    s->free_rels[0] = 9;
    s->free_rels[1] = 4;
    check_integrity(g);
}

/* ---- 1. failure paths --------------------------------------------------- */

static void test_errstr(void **state)
{
    (void)state;
    const char *seen[STRATA_ECORRUPT + 1];
    for (int s = STRATA_OK; s <= STRATA_ECORRUPT; s++) {
        seen[s] = strata_errstr((strata_status)s);
        assert_msg(seen[s]);
        for (int t = 0; t < s; t++)
            assert_string_not_equal(seen[s], seen[t]);
    }
    assert_msg(strata_errstr((strata_status)1000));
    assert_msg(strata_errstr((strata_status)-1));
}

static void test_fresh_handles_have_empty_messages(void **state)
{
    strata_graph *g = *state;
    assert_string_equal(strata_errmsg(g), "");
    strata_view *v = snap(g);
    assert_string_equal(strata_view_errmsg(v), "");
    assert_int_equal(strata_node_count(v), 0);
    assert_int_equal(strata_rel_count(v), 0);
    assert_false(strata_node_exists(v, 0));
    assert_false(strata_rel_exists(v, 0));
    check_view_integrity(v);
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes(v, &it), STRATA_OK);
    strata_id id;
    assert_false(strata_node_iter_next(it, &id));
    strata_node_iter_free(&it);
    strata_view_release(&v);
    assert_null(v);
}

/* A NULL handle is EINVAL (or the documented neutral answer), never a
   crash; the free functions accept NULL and a pointer to NULL. */
static void test_null_handles(void **state)
{
    (void)state;
    strata_id id = 0;
    strata_token t = 0;
    strata_value *val = strata_value_int(1);
    strata_value *out = NULL;
    strata_memstats ms;
    strata_view *view = NULL;
    strata_node_iter *nit = NULL;
    strata_edge_iter *eit = NULL;
    const char *name = NULL;
    size_t n = 0;
    bool b = false;
    uint64_t u = 0;

    assert_int_equal(strata_graph_new(NULL), STRATA_EINVAL);
    assert_int_equal(strata_token_intern(NULL, STRATA_LABEL, "A", &t), STRATA_EINVAL);
    assert_int_equal(strata_node_create(NULL, NULL, 0, &id), STRATA_EINVAL);
    assert_int_equal(strata_node_delete(NULL, 0), STRATA_EINVAL);
    assert_int_equal(strata_node_detach_delete(NULL, 0), STRATA_EINVAL);
    assert_int_equal(strata_node_add_label(NULL, 0, 0), STRATA_EINVAL);
    assert_int_equal(strata_node_remove_label(NULL, 0, 0), STRATA_EINVAL);
    assert_int_equal(strata_rel_create(NULL, 0, 0, 0, &id), STRATA_EINVAL);
    assert_int_equal(strata_rel_delete(NULL, 0), STRATA_EINVAL);
    assert_int_equal(strata_node_set(NULL, 0, 0, val), STRATA_EINVAL);
    assert_int_equal(strata_node_remove(NULL, 0, 0), STRATA_EINVAL);
    assert_int_equal(strata_rel_set(NULL, 0, 0, val), STRATA_EINVAL);
    assert_int_equal(strata_rel_remove(NULL, 0, 0), STRATA_EINVAL);
    assert_int_equal(strata_snapshot(NULL, &view), STRATA_EINVAL);
    assert_null(view);
    assert_int_equal(strata_memory_stats(NULL, &ms), STRATA_EINVAL);
    assert_false(strata_is_forked(NULL));
    assert_msg(strata_errmsg(NULL));

    assert_int_equal(strata_token_lookup(NULL, STRATA_LABEL, "A", &t), STRATA_EINVAL);
    assert_int_equal(strata_token_name(NULL, STRATA_LABEL, 0, &name), STRATA_EINVAL);
    assert_int_equal(strata_node_count(NULL), 0);
    assert_int_equal(strata_rel_count(NULL), 0);
    assert_false(strata_node_exists(NULL, 0));
    assert_false(strata_rel_exists(NULL, 0));
    assert_int_equal(strata_node_labels(NULL, 0, &t, 1, &n), STRATA_EINVAL);
    assert_int_equal(strata_node_has_label(NULL, 0, 0, &b), STRATA_EINVAL);
    assert_int_equal(strata_node_keys(NULL, 0, &t, 1, &n), STRATA_EINVAL);
    assert_int_equal(strata_rel_keys(NULL, 0, &t, 1, &n), STRATA_EINVAL);
    assert_int_equal(strata_node_get(NULL, 0, 0, &out), STRATA_EINVAL);
    assert_int_equal(strata_rel_get(NULL, 0, 0, &out), STRATA_EINVAL);
    assert_null(out);
    assert_int_equal(strata_rel_info(NULL, 0, &id, &id, &t), STRATA_EINVAL);
    assert_int_equal(strata_node_degree(NULL, 0, STRATA_BOTH, STRATA_ANY_TYPE, &u),
                     STRATA_EINVAL);
    assert_int_equal(strata_nodes(NULL, &nit), STRATA_EINVAL);
    assert_int_equal(strata_nodes_by_label(NULL, 0, &nit), STRATA_EINVAL);
    assert_null(nit);
    assert_int_equal(strata_neighbours(NULL, 0, STRATA_BOTH, STRATA_ANY_TYPE, &eit),
                     STRATA_EINVAL);
    assert_null(eit);
    assert_int_equal(strata_integrity_check(NULL), STRATA_EINVAL);
    assert_msg(strata_view_errmsg(NULL));
    assert_false(strata_node_iter_next(NULL, &id));
    assert_false(strata_edge_iter_next(NULL, &id, &id));

    assert_int_equal(strata_value_type(NULL), STRATA_NULL);
    assert_int_equal(strata_value_get_bool(NULL, &b), STRATA_EINVAL);
    int64_t i64;
    double f;
    const char *s;
    assert_int_equal(strata_value_get_int(NULL, &i64), STRATA_EINVAL);
    assert_int_equal(strata_value_get_float(NULL, &f), STRATA_EINVAL);
    assert_int_equal(strata_value_get_string(NULL, &s, &n), STRATA_EINVAL);
    assert_int_equal(strata_value_list_len(NULL), 0);
    assert_int_equal(strata_value_list_get(NULL, 0, &out), STRATA_EINVAL);
    assert_int_equal(strata_value_equals(NULL, val), -1);
    assert_int_equal(strata_value_equals(val, NULL), -1);
    assert_int_equal(strata_value_equals(NULL, NULL), -1);

    strata_graph *ng = NULL;
    strata_graph_free(NULL);
    strata_graph_free(&ng);
    strata_view_release(NULL);
    strata_view_release(&view);
    strata_node_iter_free(NULL);
    strata_node_iter_free(&nit);
    strata_edge_iter_free(NULL);
    strata_edge_iter_free(&eit);
    strata_value *nv = NULL;
    strata_value_free(NULL);
    strata_value_free(&nv);
    strata_value_free(&val);
    assert_null(val);
}

/* Every failure must leave its own message.  A message survives later
   calls, so each check first leaves a known one (an unknown token kind)
   and then requires a different, non-empty one after the call. */
static char primed[ERRBUF];

static void prime_graph(strata_graph *g)
{
    strata_token t;
    assert_int_equal(strata_token_intern(g, (strata_token_kind)77, "x", &t), STRATA_EINVAL);
    snprintf(primed, sizeof primed, "%s", strata_errmsg(g));
    assert_msg(primed);
}

static void prime_view(strata_view *v)
{
    strata_token t;
    assert_int_equal(strata_token_lookup(v, (strata_token_kind)77, "x", &t), STRATA_EINVAL);
    snprintf(primed, sizeof primed, "%s", strata_view_errmsg(v));
    assert_msg(primed);
}

static void assert_new_msg(const char *m)
{
    assert_msg(m);
    assert_string_not_equal(m, primed);
}

#define EXPECT_GRAPH_FAIL(g, status, call)                                                 \
    do {                                                                                   \
        prime_graph(g);                                                                    \
        assert_int_equal((call), (status));                                                \
        assert_new_msg(strata_errmsg(g));                                                  \
    } while (0)

#define EXPECT_VIEW_FAIL(v, status, call)                                                  \
    do {                                                                                   \
        prime_view(v);                                                                     \
        assert_int_equal((call), (status));                                                \
        assert_new_msg(strata_view_errmsg(v));                                             \
    } while (0)

/* A NULL out pointer (or buffer) on a good handle: EINVAL, a message on
   that handle, nothing changed. */
static void test_null_out_pointers(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    char *before = dump_graph(g);
    strata_value *val = strata_value_int(7);
    strata_token labels[] = { s.person };
    strata_id id = 0;

    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_token_intern(g, STRATA_LABEL, NULL, &labels[0]));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_token_intern(g, STRATA_LABEL, "Fresh", NULL));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_node_create(g, labels, 1, NULL));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_node_create(g, NULL, 2, &id));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_rel_create(g, 0, 1, s.knows, NULL));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_node_set(g, 0, s.age, NULL));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_rel_set(g, 0, s.since, NULL));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_snapshot(g, NULL));
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_memory_stats(g, NULL));
    assert_unchanged(g, before);

    strata_view *v = snap(g);
    strata_token buf[4];
    size_t n;
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_token_lookup(v, STRATA_LABEL, NULL, buf));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_token_lookup(v, STRATA_LABEL, "Person", NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_token_name(v, STRATA_LABEL, s.person, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_node_labels(v, 0, buf, 4, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_node_labels(v, 0, NULL, 4, &n));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_node_has_label(v, 0, s.person, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_node_keys(v, 0, buf, 4, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_node_keys(v, 0, NULL, 4, &n));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_rel_keys(v, 0, buf, 4, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_rel_keys(v, 0, NULL, 4, &n));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_node_get(v, 0, s.age, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_rel_get(v, 0, s.since, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL,
                     strata_node_degree(v, 0, STRATA_OUT, STRATA_ANY_TYPE, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_nodes(v, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_nodes_by_label(v, s.person, NULL));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL,
                     strata_neighbours(v, 0, STRATA_OUT, STRATA_ANY_TYPE, NULL));
    /* Buffers are optional when cap is 0: the count alone is an answer. */
    assert_int_equal(strata_node_labels(v, 0, NULL, 0, &n), STRATA_OK);
    assert_int_equal(n, 2);
    assert_int_equal(strata_node_keys(v, 0, NULL, 0, &n), STRATA_OK);
    assert_int_equal(n, 3);
    /* rel_info's outs are each optional. */
    assert_int_equal(strata_rel_info(v, 0, NULL, NULL, NULL), STRATA_OK);
    strata_id e = 0;
    assert_int_equal(strata_rel_info(v, 0, NULL, &e, NULL), STRATA_OK);
    assert_int_equal(e, 1);
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes(v, &it), STRATA_OK);
    assert_false(strata_node_iter_next(it, NULL));
    strata_node_iter_free(&it);
    check_view_integrity(v);
    strata_view_release(&v);

    assert_int_equal(strata_value_get_bool(val, NULL), STRATA_EINVAL);
    assert_int_equal(strata_value_get_int(val, NULL), STRATA_EINVAL);
    assert_int_equal(strata_value_get_float(val, NULL), STRATA_EINVAL);
    assert_int_equal(strata_value_get_string(val, NULL, NULL), STRATA_EINVAL);
    assert_int_equal(strata_value_list_get(val, 0, NULL), STRATA_EINVAL);
    strata_value_free(&val);
    assert_unchanged(g, before);
    free(before);
}

static void test_token_names(void **state)
{
    strata_graph *g = *state;
    strata_token t = 12345;
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_token_intern(g, STRATA_LABEL, "", &t));
    assert_int_equal(t, 12345);   /* untouched on failure */

    /* 65535 bytes is the longest name; one more is refused. */
    char *longest = malloc(65537);
    assert_non_null(longest);
    memset(longest, 'k', 65536);
    longest[65536] = '\0';
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_token_intern(g, STRATA_KEY, longest, &t));
    longest[65535] = '\0';
    strata_token lk = tok(g, STRATA_KEY, longest);

    /* (The primed message is this one, so these check it plainly.) */
    assert_int_equal(strata_token_intern(g, (strata_token_kind)3, "Person", &t), STRATA_EINVAL);
    assert_msg(strata_errmsg(g));
    assert_int_equal(strata_token_intern(g, (strata_token_kind)-1, "Person", &t), STRATA_EINVAL);
    assert_msg(strata_errmsg(g));

    /* Interning is idempotent and each kind numbers its own tokens. */
    strata_token person = tok(g, STRATA_LABEL, "Person");
    strata_token city = tok(g, STRATA_LABEL, "City");
    assert_int_not_equal(person, city);
    assert_int_equal(tok(g, STRATA_LABEL, "Person"), person);
    strata_token knows = tok(g, STRATA_RELTYPE, "Person");
    assert_int_equal(knows, 0);
    assert_int_equal(person, 0);
    assert_int_equal(tok(g, STRATA_KEY, "Person"), lk + 1);
    /* Case and UTF-8 bytes matter. */
    strata_token lower = tok(g, STRATA_LABEL, "person");
    strata_token utf8 = tok(g, STRATA_LABEL, "Pers\xc3\xb6n");
    assert_int_not_equal(lower, person);
    assert_int_not_equal(utf8, person);

    strata_view *v = snap(g);
    strata_token found = 999;
    assert_int_equal(strata_token_lookup(v, STRATA_LABEL, "City", &found), STRATA_OK);
    assert_int_equal(found, city);
    assert_int_equal(strata_token_lookup(v, STRATA_KEY, longest, &found), STRATA_OK);
    assert_int_equal(found, lk);
    const char *name = NULL;
    assert_int_equal(strata_token_name(v, STRATA_LABEL, utf8, &name), STRATA_OK);
    assert_string_equal(name, "Pers\xc3\xb6n");
    assert_int_equal(strata_token_name(v, STRATA_KEY, lk, &name), STRATA_OK);
    assert_int_equal(strlen(name), 65535);

    EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_token_lookup(v, STRATA_LABEL, "Nobody", &found));
    /* "City" is a label, not a relationship type. */
    EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_token_lookup(v, STRATA_RELTYPE, "City", &found));
    EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_token_name(v, STRATA_RELTYPE, 1, &name));
    EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_token_name(v, STRATA_LABEL, 999, &name));
    EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND,
                     strata_token_name(v, STRATA_LABEL, STRATA_ANY_TYPE, &name));
    assert_int_equal(strata_token_lookup(v, (strata_token_kind)5, "City", &found), STRATA_EINVAL);
    assert_msg(strata_view_errmsg(v));
    EXPECT_VIEW_FAIL(v, STRATA_EINVAL, strata_token_name(v, (strata_token_kind)5, 0, &name));
    strata_view_release(&v);
    free(longest);
    counts_are(g, 0, 0);
}

/* Tokens are dense per kind: a count and strata_token_name by index
   enumerate a catalog (the REPL's completion and :schema rely on it). */
static void test_token_count(void **state)
{
    strata_graph *g = *state;
    strata_view *v = snap(g);
    assert_int_equal(strata_token_count(v, STRATA_LABEL), 0);
    assert_int_equal(strata_token_count(v, STRATA_RELTYPE), 0);
    strata_view_release(&v);
    const char *labels[] = {"Person", "City", "Film"};
    for (size_t i = 0; i < 3; i++)
        tok(g, STRATA_LABEL, labels[i]);
    tok(g, STRATA_LABEL, "City");      /* a repeat adds nothing */
    tok(g, STRATA_KEY, "name");
    v = snap(g);
    assert_int_equal(strata_token_count(v, STRATA_LABEL), 3);
    assert_int_equal(strata_token_count(v, STRATA_RELTYPE), 0);
    assert_int_equal(strata_token_count(v, STRATA_KEY), 1);
    for (strata_token t = 0; t < strata_token_count(v, STRATA_LABEL); t++) {
        const char *name = NULL;
        assert_int_equal(strata_token_name(v, STRATA_LABEL, t, &name), STRATA_OK);
        assert_string_equal(name, labels[t]);
    }
    /* the catalog is shared: a token interned after the view counts too */
    tok(g, STRATA_RELTYPE, "KNOWS");
    assert_int_equal(strata_token_count(v, STRATA_RELTYPE), 1);
    assert_int_equal(strata_token_count(v, (strata_token_kind)5), 0);
    assert_int_equal(strata_token_count(NULL, STRATA_LABEL), 0);
    strata_view_release(&v);
}

/* The header promises names of UTF-8: malformed UTF-8 is bad input and
   comes back as EINVAL, like an empty or over-long name. */
static void test_token_names_must_be_utf8(void **state)
{
    strata_graph *g = *state;
    static const char *const bad[] = {
        "\xff",               /* never valid in UTF-8 */
        "Caf\xc3",            /* truncated two-byte sequence */
        "\xc0\xaf",           /* overlong encoding of '/' */
        "\xed\xa0\x80",       /* a UTF-16 surrogate */
        "a\x80z",             /* a lone continuation byte */
    };
    /* Well-formed multi-byte names are fine. */
    tok(g, STRATA_LABEL, "Caf\xc3\xa9");
    tok(g, STRATA_LABEL, "\xe6\x97\xa5\xe6\x9c\xac");
    tok(g, STRATA_LABEL, "\xf0\x9f\x98\x80");
    char accepted[ERRBUF] = "";
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strata_token t = 777;
        prime_graph(g);
        strata_status s = strata_token_intern(g, STRATA_LABEL, bad[i], &t);
        if (s == STRATA_EINVAL) {
            assert_new_msg(strata_errmsg(g));
            assert_int_equal(t, 777);
        } else {
            size_t len = strlen(accepted);
            snprintf(accepted + len, sizeof accepted - len, "%s#%zu (%s)", len ? ", " : "", i,
                     strata_errstr(s));
        }
    }
    if (accepted[0])
        fail_msg("malformed UTF-8 names not refused: %s", accepted);
}

/* Tokens that were never interned (of the kind the call wants) are
   ENOTFOUND on every write, and the graph stays as it was. */
static void test_unknown_tokens_on_writes(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    /* Tokens of other kinds exist with these numbers: 3 labels, 2 types,
       4 keys.  A label token used as a type is still unknown. */
    strata_token no_label = 3, no_type = 2, no_key = 4;
    strata_value *val = strata_value_int(1);
    char *before = dump_graph(g);
    strata_id id = 4242;
    strata_token labels[] = { s.person, no_label };

    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_create(g, labels, 2, &id));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_create(g, &no_label, 1, &id));
    assert_msg_has(strata_errmsg(g), "3");
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_add_label(g, 0, no_label));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_add_label(g, 0, STRATA_ANY_TYPE));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_remove_label(g, 0, no_label));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_create(g, 0, 1, no_type, &id));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_create(g, 0, 1, s.admin, &id));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_create(g, 0, 1, STRATA_ANY_TYPE, &id));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_set(g, 0, no_key, val));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_remove(g, 0, no_key));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_set(g, 0, no_key, val));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_remove(g, 0, no_key));
    assert_int_equal(id, 4242);
    assert_unchanged(g, before);

    /* The same under a held view: neither the view nor the graph moves. */
    strata_view *held = snap(g);
    char *held_before = dump_view(held);
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_create(g, &no_label, 1, &id));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_set(g, 1, no_key, val));
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_create(g, 1, 2, no_type, &id));
    assert_unchanged(g, before);
    assert_view_is(held, held_before);
    strata_view_release(&held);
    free(held_before);
    strata_value_free(&val);
    free(before);
}

/* Ids that never existed, and ids that did but were deleted, are
   ENOTFOUND on every write, with the id in the message. */
static void test_unknown_ids_on_writes(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_value *val = strata_value_int(5);
    char *before = dump_graph(g);
    const strata_id bad_nodes[] = { s.free_node, 1000, SAMPLE_NODES + 1, UINT32_MAX,
                                    (strata_id)UINT32_MAX + 17, UINT64_MAX };
    const strata_id bad_rels[] = { s.free_rels[0], s.free_rels[1], 16, 5000, UINT32_MAX,
                                   UINT64_MAX };
    char idtext[32];
    strata_id out = 31337;

    for (size_t i = 0; i < sizeof bad_nodes / sizeof bad_nodes[0]; i++) {
        strata_id n = bad_nodes[i];
        snprintf(idtext, sizeof idtext, "%" PRIu64, n);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_delete(g, n));
        assert_msg_has(strata_errmsg(g), idtext);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_detach_delete(g, n));
        assert_msg_has(strata_errmsg(g), idtext);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_add_label(g, n, s.person));
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_remove_label(g, n, s.person));
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_set(g, n, s.age, val));
        assert_msg_has(strata_errmsg(g), idtext);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_node_remove(g, n, s.age));
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_create(g, n, 0, s.knows, &out));
        assert_msg_has(strata_errmsg(g), idtext);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_create(g, 0, n, s.knows, &out));
        assert_msg_has(strata_errmsg(g), idtext);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_create(g, n, n, s.knows, &out));
    }
    for (size_t i = 0; i < sizeof bad_rels / sizeof bad_rels[0]; i++) {
        strata_id r = bad_rels[i];
        snprintf(idtext, sizeof idtext, "%" PRIu64, r);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_delete(g, r));
        assert_msg_has(strata_errmsg(g), idtext);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_set(g, r, s.since, val));
        assert_msg_has(strata_errmsg(g), idtext);
        EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_remove(g, r, s.since));
    }
    assert_int_equal(out, 31337);
    assert_unchanged(g, before);
    strata_value_free(&val);
    free(before);
}

static void test_unknown_ids_on_reads(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_view *v = snap(g);
    const strata_id bad_nodes[] = { s.free_node, 1000, UINT32_MAX, UINT64_MAX };
    const strata_id bad_rels[] = { s.free_rels[0], 16, 5000, UINT64_MAX };
    strata_token buf[8];
    size_t n;
    bool b;
    uint64_t d;
    strata_value *out = NULL;
    strata_edge_iter *eit = NULL;
    strata_id a;
    strata_token t;
    char idtext[32];

    for (size_t i = 0; i < sizeof bad_nodes / sizeof bad_nodes[0]; i++) {
        strata_id id = bad_nodes[i];
        snprintf(idtext, sizeof idtext, "%" PRIu64, id);
        assert_false(strata_node_exists(v, id));
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_node_labels(v, id, buf, 8, &n));
        assert_msg_has(strata_view_errmsg(v), idtext);
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_node_has_label(v, id, s.person, &b));
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_node_keys(v, id, buf, 8, &n));
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_node_get(v, id, s.age, &out));
        assert_msg_has(strata_view_errmsg(v), idtext);
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND,
                         strata_node_degree(v, id, STRATA_BOTH, STRATA_ANY_TYPE, &d));
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND,
                         strata_neighbours(v, id, STRATA_BOTH, STRATA_ANY_TYPE, &eit));
    }
    for (size_t i = 0; i < sizeof bad_rels / sizeof bad_rels[0]; i++) {
        strata_id id = bad_rels[i];
        snprintf(idtext, sizeof idtext, "%" PRIu64, id);
        assert_false(strata_rel_exists(v, id));
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_rel_keys(v, id, buf, 8, &n));
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_rel_get(v, id, s.since, &out));
        assert_msg_has(strata_view_errmsg(v), idtext);
        EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_rel_info(v, id, &a, &a, &t));
        assert_msg_has(strata_view_errmsg(v), idtext);
    }
    assert_null(out);
    assert_null(eit);
    check_view_integrity(v);
    strata_view_release(&v);
}

/* Reads take tokens as filters: a token nobody carries gives an empty
   answer, except strata_nodes_by_label, which names a label that must
   exist. */
static void test_unknown_tokens_on_reads(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_view *v = snap(g);
    assert_true(node_prop_is_null(v, 0, 4));          /* key 4 was never interned */
    assert_true(node_prop_is_null(v, 0, STRATA_ANY_TYPE));
    assert_false(has_label(v, 0, 3));
    assert_false(has_label(v, 0, STRATA_ANY_TYPE));
    assert_int_equal(degree(v, s.hub, STRATA_BOTH, 2), 0);
    hop h[4];
    assert_int_equal(hops(v, s.hub, STRATA_BOTH, 2, h, 4), 0);
    strata_node_iter *it = NULL;
    EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_nodes_by_label(v, 3, &it));
    EXPECT_VIEW_FAIL(v, STRATA_ENOTFOUND, strata_nodes_by_label(v, STRATA_ANY_TYPE, &it));
    assert_null(it);
    strata_view_release(&v);
}

/* Storable values are scalars and flat lists of non-null scalars; a list
   holding a list or a null is ETYPE on nodes and relationships, and the
   property it would have replaced is kept. */
static void test_wrong_typed_values(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_value *one = strata_value_int(1);
    strata_value *null = strata_value_null();
    strata_value *str = strata_value_string("x", 1);
    const strata_value *flat_items[] = { one, str };
    strata_value *flat = strata_value_list(flat_items, 2);
    const strata_value *nested_items[] = { one, flat };
    strata_value *nested = strata_value_list(nested_items, 2);
    const strata_value *with_null_items[] = { one, null };
    strata_value *with_null = strata_value_list(with_null_items, 2);
    /* A NULL item pointer becomes a null element. */
    const strata_value *with_hole_items[] = { str, NULL };
    strata_value *with_hole = strata_value_list(with_hole_items, 2);
    const strata_value *only_null_items[] = { null };
    strata_value *only_null = strata_value_list(only_null_items, 1);
    assert_non_null(nested);
    assert_non_null(with_null);
    assert_non_null(with_hole);
    assert_non_null(only_null);
    assert_int_equal(strata_value_type(with_hole), STRATA_LIST);
    assert_int_equal(strata_value_list_len(with_hole), 2);
    strata_value *hole = NULL;
    assert_int_equal(strata_value_list_get(with_hole, 1, &hole), STRATA_OK);
    assert_int_equal(strata_value_type(hole), STRATA_NULL);
    strata_value_free(&hole);

    char *before = dump_graph(g);
    const strata_value *bad[] = { nested, with_null, with_hole, only_null };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT_GRAPH_FAIL(g, STRATA_ETYPE, strata_node_set(g, 0, s.age, bad[i]));
        EXPECT_GRAPH_FAIL(g, STRATA_ETYPE, strata_node_set(g, 1, s.since, bad[i]));
        EXPECT_GRAPH_FAIL(g, STRATA_ETYPE, strata_rel_set(g, 0, s.since, bad[i]));
        EXPECT_GRAPH_FAIL(g, STRATA_ETYPE, strata_rel_set(g, 2, s.since, bad[i]));
    }
    assert_unchanged(g, before);
    strata_view *held = snap(g);
    EXPECT_GRAPH_FAIL(g, STRATA_ETYPE, strata_node_set(g, 5, s.tags, nested));
    assert_unchanged(g, before);
    strata_view_release(&held);

    /* The flat one is fine. */
    assert_int_equal(strata_node_set(g, 0, s.tags, flat), STRATA_OK);
    strata_value *items[] = { one, null, str, flat, nested, with_null, with_hole, only_null };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
        strata_value_free(&items[i]);
    free(before);
}

static void test_delete_connected_node(void **state)
{
    strata_graph *g = *state;
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node0(g), b = node0(g), c = node0(g), d = node0(g);
    rel_new(g, a, b, t);   /* a: outgoing only, b: incoming only */
    rel_new(g, c, c, t);   /* c: a self-loop only */
    char *before = dump_graph(g);
    const strata_id connected[] = { a, b, c };
    for (size_t i = 0; i < 3; i++) {
        char idtext[32];
        snprintf(idtext, sizeof idtext, "%" PRIu64, connected[i]);
        EXPECT_GRAPH_FAIL(g, STRATA_ECONNECTED, strata_node_delete(g, connected[i]));
        assert_msg_has(strata_errmsg(g), idtext);
    }
    assert_unchanged(g, before);
    strata_view *held = snap(g);
    EXPECT_GRAPH_FAIL(g, STRATA_ECONNECTED, strata_node_delete(g, b));
    assert_unchanged(g, before);
    strata_view_release(&held);
    /* The unconnected one goes. */
    assert_int_equal(strata_node_delete(g, d), STRATA_OK);
    counts_are(g, 3, 2);
    check_integrity(g);
    free(before);
}

static void test_bad_direction(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_view *v = snap(g);
    const int bad[] = { 0, 4, 7, -1, 1000 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t d = 77;
        strata_edge_iter *it = NULL;
        EXPECT_VIEW_FAIL(v, STRATA_EINVAL,
                         strata_node_degree(v, s.hub, (strata_direction)bad[i],
                                            STRATA_ANY_TYPE, &d));
        EXPECT_VIEW_FAIL(v, STRATA_EINVAL,
                         strata_neighbours(v, s.hub, (strata_direction)bad[i], s.knows, &it));
        assert_int_equal(d, 77);
        assert_null(it);
    }
    strata_view_release(&v);
}

/* ---- 2. values ----------------------------------------------------------- */

static void test_value_scalars(void **state)
{
    (void)state;
    strata_value *n = strata_value_null();
    strata_value *t = strata_value_bool(true);
    strata_value *f = strata_value_bool(false);
    strata_value *i = strata_value_int(INT64_MIN);
    strata_value *x = strata_value_float(-2.5);
    assert_int_equal(strata_value_type(n), STRATA_NULL);
    assert_int_equal(strata_value_type(t), STRATA_BOOL);
    assert_int_equal(strata_value_type(i), STRATA_INT);
    assert_int_equal(strata_value_type(x), STRATA_FLOAT);

    bool b = false;
    int64_t iv = 0;
    double fv = 0;
    const char *sv = NULL;
    size_t len = 99;
    strata_value *item = NULL;
    assert_int_equal(strata_value_get_bool(t, &b), STRATA_OK);
    assert_true(b);
    assert_int_equal(strata_value_get_bool(f, &b), STRATA_OK);
    assert_false(b);
    assert_int_equal(strata_value_get_int(i, &iv), STRATA_OK);
    assert_true(iv == INT64_MIN);
    assert_int_equal(strata_value_get_float(x, &fv), STRATA_OK);
    assert_true(fv == -2.5);

    /* Wrong-type accessors: no conversions, not even int <-> float. */
    assert_int_equal(strata_value_get_int(x, &iv), STRATA_ETYPE);
    assert_int_equal(strata_value_get_float(i, &fv), STRATA_ETYPE);
    assert_int_equal(strata_value_get_bool(i, &b), STRATA_ETYPE);
    assert_int_equal(strata_value_get_bool(n, &b), STRATA_ETYPE);
    assert_int_equal(strata_value_get_int(n, &iv), STRATA_ETYPE);
    assert_int_equal(strata_value_get_float(t, &fv), STRATA_ETYPE);
    assert_int_equal(strata_value_get_string(i, &sv, &len), STRATA_ETYPE);
    assert_int_equal(strata_value_get_string(n, &sv, &len), STRATA_ETYPE);
    assert_int_equal(strata_value_list_get(i, 0, &item), STRATA_ETYPE);
    assert_int_equal(strata_value_list_get(n, 0, &item), STRATA_ETYPE);
    assert_null(item);
    assert_int_equal(strata_value_list_len(i), 0);
    assert_int_equal(strata_value_list_len(n), 0);
    /* Outs are untouched by a failed accessor. */
    assert_true(iv == INT64_MIN);
    assert_true(fv == -2.5);
    assert_null(sv);
    assert_int_equal(len, 99);

    strata_value *vals[] = { n, t, f, i, x };
    for (size_t k = 0; k < 5; k++) {
        strata_value_free(&vals[k]);
        assert_null(vals[k]);
    }
}

static void test_value_strings(void **state)
{
    (void)state;
    /* Embedded NULs in a short (inline) and a long (heap) string. */
    static const char short_bytes[] = { 'a', '\0', 'b', '\0' };
    char long_bytes[300];
    for (size_t k = 0; k < sizeof long_bytes; k++)
        long_bytes[k] = (char)(k % 7 == 0 ? 0 : 'A' + k % 26);
    strata_value *sh = strata_value_string(short_bytes, sizeof short_bytes);
    strata_value *lo = strata_value_string(long_bytes, sizeof long_bytes);
    strata_value *empty = strata_value_string("", 0);
    strata_value *empty_null = strata_value_string(NULL, 0);
    assert_non_null(sh);
    assert_non_null(lo);
    assert_non_null(empty);
    assert_non_null(empty_null);
    /* NULL with a length has no bytes to copy. */
    assert_null(strata_value_string(NULL, 3));

    const char *p;
    size_t len;
    assert_int_equal(strata_value_type(sh), STRATA_STRING);
    assert_int_equal(strata_value_get_string(sh, &p, &len), STRATA_OK);
    assert_int_equal(len, 4);
    assert_memory_equal(p, short_bytes, 4);
    assert_int_equal(p[len], '\0');
    assert_int_equal(strata_value_get_string(lo, &p, &len), STRATA_OK);
    assert_int_equal(len, sizeof long_bytes);
    assert_memory_equal(p, long_bytes, sizeof long_bytes);
    assert_int_equal(p[len], '\0');
    /* len is optional. */
    assert_int_equal(strata_value_get_string(lo, &p, NULL), STRATA_OK);
    assert_int_equal(strata_value_get_string(empty, &p, &len), STRATA_OK);
    assert_int_equal(len, 0);
    assert_string_equal(p, "");
    assert_int_equal(strata_value_equals(empty, empty_null), 1);

    /* The bytes are copied: changing the source changes nothing. */
    char src[] = "mutable source string, long enough for the heap";
    strata_value *copy = strata_value_string(src, strlen(src));
    src[0] = 'X';
    assert_int_equal(strata_value_get_string(copy, &p, &len), STRATA_OK);
    assert_int_equal(p[0], 'm');

    /* A trailing NUL is part of the value, so these differ. */
    strata_value *ab = strata_value_string("a\0b", 3);
    strata_value *a = strata_value_string("a", 1);
    assert_int_equal(strata_value_equals(ab, a), 0);
    strata_value *vals[] = { sh, lo, empty, empty_null, copy, ab, a };
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++)
        strata_value_free(&vals[k]);
}

static void test_value_lists(void **state)
{
    (void)state;
    strata_value *items[5];
    items[0] = strata_value_int(1);
    items[1] = strata_value_string("two", 3);
    items[2] = strata_value_float(3.5);
    items[3] = strata_value_bool(true);
    items[4] = strata_value_string("a string that lives on the heap", 31);
    strata_value *l = strata_value_list((const strata_value *const *)items, 5);
    /* The list holds copies: the items may go first. */
    for (size_t k = 0; k < 5; k++)
        strata_value_free(&items[k]);
    assert_int_equal(strata_value_type(l), STRATA_LIST);
    assert_int_equal(strata_value_list_len(l), 5);
    strata_value *e = NULL;
    int64_t iv;
    const char *p;
    size_t len;
    assert_int_equal(strata_value_list_get(l, 0, &e), STRATA_OK);
    assert_int_equal(strata_value_get_int(e, &iv), STRATA_OK);
    assert_int_equal(iv, 1);
    strata_value_free(&e);
    assert_int_equal(strata_value_list_get(l, 4, &e), STRATA_OK);
    assert_int_equal(strata_value_get_string(e, &p, &len), STRATA_OK);
    assert_int_equal(len, 31);
    assert_memory_equal(p, "a string that lives on the heap", 31);
    /* An element outlives its list. */
    strata_value *copy = l;
    strata_value_free(&copy);
    assert_int_equal(strata_value_get_string(e, &p, &len), STRATA_OK);
    assert_memory_equal(p, "a string that lives on the heap", 31);
    strata_value_free(&e);

    strata_value *one = strata_value_int(1);
    const strata_value *single[] = { one };
    l = strata_value_list(single, 1);
    assert_int_equal(strata_value_list_get(l, 1, &e), STRATA_ENOTFOUND);
    assert_int_equal(strata_value_list_get(l, SIZE_MAX, &e), STRATA_ENOTFOUND);
    assert_null(e);
    strata_value_free(&l);

    strata_value *empty = strata_value_list(NULL, 0);
    assert_non_null(empty);
    assert_int_equal(strata_value_type(empty), STRATA_LIST);
    assert_int_equal(strata_value_list_len(empty), 0);
    assert_int_equal(strata_value_list_get(empty, 0, &e), STRATA_ENOTFOUND);
    /* NULL items with a count have nothing to copy. */
    assert_null(strata_value_list(NULL, 2));
    strata_value_free(&empty);
    strata_value_free(&one);
}

/* openCypher's =: 1 for true, 0 for false, -1 for null. */
static void test_value_equals(void **state)
{
    (void)state;
    strata_value *i1 = strata_value_int(1), *i2 = strata_value_int(2);
    strata_value *f1 = strata_value_float(1.0), *f15 = strata_value_float(1.5);
    strata_value *pz = strata_value_float(0.0), *nz = strata_value_float(-0.0);
    strata_value *nan = strata_value_float(NAN);
    strata_value *s1 = strata_value_string("1", 1), *s1b = strata_value_string("1", 1);
    strata_value *t = strata_value_bool(true), *t2 = strata_value_bool(true);
    strata_value *fa = strata_value_bool(false);
    strata_value *nul = strata_value_null(), *nul2 = strata_value_null();
    const strata_value *a_items[] = { i1, s1 };
    const strata_value *b_items[] = { f1, s1b };
    const strata_value *c_items[] = { i2, s1 };
    const strata_value *n1_items[] = { i1, nul };
    const strata_value *n2_items[] = { i2, nul };
    strata_value *la = strata_value_list(a_items, 2), *lb = strata_value_list(b_items, 2);
    strata_value *lc = strata_value_list(c_items, 2), *lshort = strata_value_list(a_items, 1);
    strata_value *ln1 = strata_value_list(n1_items, 2), *ln2 = strata_value_list(n2_items, 2);

    assert_int_equal(strata_value_equals(i1, i1), 1);
    assert_int_equal(strata_value_equals(i1, f1), 1);
    assert_int_equal(strata_value_equals(f1, i1), 1);
    assert_int_equal(strata_value_equals(i1, i2), 0);
    assert_int_equal(strata_value_equals(i1, f15), 0);
    assert_int_equal(strata_value_equals(pz, nz), 1);
    assert_int_equal(strata_value_equals(nan, nan), 0);
    assert_int_equal(strata_value_equals(s1, s1b), 1);
    assert_int_equal(strata_value_equals(i1, s1), 0);   /* kinds differ */
    assert_int_equal(strata_value_equals(t, t2), 1);
    assert_int_equal(strata_value_equals(t, fa), 0);
    assert_int_equal(strata_value_equals(t, i1), 0);
    assert_int_equal(strata_value_equals(nul, nul2), -1);
    assert_int_equal(strata_value_equals(nul, i1), -1);
    assert_int_equal(strata_value_equals(s1, nul), -1);
    assert_int_equal(strata_value_equals(la, lb), 1);   /* [1, "1"] = [1.0, "1"] */
    assert_int_equal(strata_value_equals(la, lc), 0);
    assert_int_equal(strata_value_equals(la, lshort), 0);
    assert_int_equal(strata_value_equals(ln1, ln1), -1);   /* [1, null] = [1, null] */
    assert_int_equal(strata_value_equals(ln1, ln2), 0);    /* false beats null */
    assert_int_equal(strata_value_equals(la, s1), 0);

    strata_value *all[] = { i1, i2, f1, f15, pz, nz, nan, s1, s1b, t, t2, fa, nul, nul2,
                            la, lb, lc, lshort, ln1, ln2 };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        strata_value_free(&all[k]);
}

/* Sets val under key on node n, reads it back through a new snapshot and
   checks it is equal and renders the same. */
static void assert_round_trip(strata_graph *g, strata_id n, strata_token key,
                              const strata_value *val)
{
    assert_int_equal(strata_node_set(g, n, key, val), STRATA_OK);
    strata_view *v = snap(g);
    strata_value *back = get_node(v, n, key);
    assert_int_equal(strata_value_type(back), strata_value_type(val));
    sbuf want = { 0 }, got = { 0 };
    dump_value(&want, val);
    dump_value(&got, back);
    assert_string_equal(got.p, want.p);
    assert_int_equal(strata_value_equals(back, val), 1);
    free(want.p);
    free(got.p);
    strata_value_free(&back);
    strata_view_release(&v);
}

static void test_property_round_trips(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_id n = node0(g);

    static const char nul_short[] = "a\0b\0";
    strata_value *v1 = strata_value_string(nul_short, 5);
    assert_round_trip(g, n, k, v1);
    char nul_long[200];
    for (size_t i = 0; i < sizeof nul_long; i++)
        nul_long[i] = (char)(i % 3 ? 'a' + i % 26 : 0);
    strata_value *v2 = strata_value_string(nul_long, sizeof nul_long);
    assert_round_trip(g, n, k, v2);

    /* A long string, 1 MiB with a NUL in the middle. */
    size_t big = 1u << 20;
    char *bytes = malloc(big);
    assert_non_null(bytes);
    for (size_t i = 0; i < big; i++)
        bytes[i] = (char)('a' + i % 23);
    bytes[big / 2] = '\0';
    strata_value *v3 = strata_value_string(bytes, big);
    assert_int_equal(strata_node_set(g, n, k, v3), STRATA_OK);
    strata_view *v = snap(g);
    strata_value *back = get_node(v, n, k);
    const char *p;
    size_t len;
    assert_int_equal(strata_value_get_string(back, &p, &len), STRATA_OK);
    assert_int_equal(len, big);
    assert_memory_equal(p, bytes, big);
    assert_int_equal(p[len], '\0');
    strata_value_free(&back);
    strata_view_release(&v);
    free(bytes);

    /* Lists of ints, of strings (inline and heap), mixed, and empty. */
    strata_value *ints[4];
    for (int i = 0; i < 4; i++)
        ints[i] = strata_value_int(i == 3 ? INT64_MAX : -i);
    strata_value *li = strata_value_list((const strata_value *const *)ints, 4);
    assert_round_trip(g, n, k, li);
    strata_value *strs[3] = { strata_value_string("x", 1),
                              strata_value_string("a longer string for the heap", 28),
                              strata_value_string("z\0z", 3) };
    strata_value *ls = strata_value_list((const strata_value *const *)strs, 3);
    assert_round_trip(g, n, k, ls);
    const strata_value *mixed_items[] = { ints[1], strs[1], v1 };
    strata_value *lm = strata_value_list(mixed_items, 3);
    assert_round_trip(g, n, k, lm);
    strata_value *le = strata_value_list(NULL, 0);
    assert_round_trip(g, n, k, le);

    strata_value *scalars[] = { strata_value_bool(false), strata_value_int(0),
                                strata_value_float(1e300), strata_value_float(-0.0),
                                strata_value_string("", 0) };
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        assert_round_trip(g, n, k, scalars[i]);
        strata_value_free(&scalars[i]);
    }

    /* The graph keeps its own copy: the caller's values may go first. */
    assert_int_equal(strata_node_set(g, n, k, ls), STRATA_OK);
    strata_value_free(&ls);
    strata_value_free(&strs[1]);
    v = snap(g);
    back = get_node(v, n, k);
    assert_int_equal(strata_value_list_len(back), 3);
    strata_value *second = NULL;
    assert_int_equal(strata_value_list_get(back, 1, &second), STRATA_OK);
    assert_int_equal(strata_value_get_string(second, &p, &len), STRATA_OK);
    assert_int_equal(len, 28);
    assert_memory_equal(p, "a longer string for the heap", 28);
    strata_value_free(&second);
    strata_value_free(&back);
    strata_view_release(&v);

    for (int i = 0; i < 4; i++)
        strata_value_free(&ints[i]);
    strata_value_free(&strs[0]);
    strata_value_free(&strs[2]);
    strata_value *rest[] = { v1, v2, v3, li, lm, le };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        strata_value_free(&rest[i]);
    check_integrity(g);
}

/* ---- 3. properties -------------------------------------------------------- */

/* Keys of node n (or relationship), all of them; returns the count. */
static size_t keys_of(strata_view *v, bool is_rel, strata_id id, strata_token *buf, size_t cap)
{
    size_t n = 0;
    assert_int_equal(is_rel ? strata_rel_keys(v, id, buf, cap, &n)
                            : strata_node_keys(v, id, buf, cap, &n),
                     STRATA_OK);
    return n;
}

/* Set, overwrite, remove (by remove and by null) and absent keys, on a
   node or on a relationship: the same contract on both. */
static void exercise_properties(strata_graph *g, bool is_rel)
{
    strata_token ka = tok(g, STRATA_KEY, "a"), kb = tok(g, STRATA_KEY, "b");
    strata_token kc = tok(g, STRATA_KEY, "c"), kd = tok(g, STRATA_KEY, "d");
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id n0 = node0(g), n1 = node0(g);
    strata_id id = is_rel ? rel_new(g, n0, n1, t) : n0;
    strata_status (*set)(strata_graph *, strata_id, strata_token, const strata_value *) =
        is_rel ? strata_rel_set : strata_node_set;
    strata_status (*rm)(strata_graph *, strata_id, strata_token) =
        is_rel ? strata_rel_remove : strata_node_remove;
    strata_status (*get)(strata_view *, strata_id, strata_token, strata_value **) =
        is_rel ? strata_rel_get : strata_node_get;

    strata_value *i7 = strata_value_int(7), *s = strata_value_string("seven", 5);
    strata_value *f = strata_value_float(7.5), *nul = strata_value_null();
    /* Set in descending key order: keys come back sorted by token. */
    assert_int_equal(set(g, id, kd, i7), STRATA_OK);
    assert_int_equal(set(g, id, kb, s), STRATA_OK);
    assert_int_equal(set(g, id, ka, f), STRATA_OK);
    strata_view *v1 = snap(g);
    strata_token keys[8];
    assert_int_equal(keys_of(v1, is_rel, id, keys, 8), 3);
    assert_int_equal(keys[0], ka);
    assert_int_equal(keys[1], kb);
    assert_int_equal(keys[2], kd);
    /* A small buffer still reports the full count and the first keys. */
    strata_token one[1] = { 999 };
    assert_int_equal(keys_of(v1, is_rel, id, one, 1), 3);
    assert_int_equal(one[0], ka);

    /* An absent key reads as null with STRATA_OK. */
    strata_value *out = NULL;
    assert_int_equal(get(v1, id, kc, &out), STRATA_OK);
    assert_int_equal(strata_value_type(out), STRATA_NULL);
    strata_value_free(&out);
    assert_int_equal(get(v1, id, kb, &out), STRATA_OK);
    assert_int_equal(strata_value_equals(out, s), 1);
    strata_value_free(&out);

    /* Overwrite with another type, remove one key, null another, remove an
       absent key (fine, no change). */
    assert_int_equal(set(g, id, kb, i7), STRATA_OK);
    assert_int_equal(rm(g, id, kd), STRATA_OK);
    assert_int_equal(set(g, id, ka, nul), STRATA_OK);
    assert_int_equal(rm(g, id, kc), STRATA_OK);
    assert_int_equal(set(g, id, kc, nul), STRATA_OK);
    strata_view *v2 = snap(g);
    assert_int_equal(keys_of(v2, is_rel, id, keys, 8), 1);
    assert_int_equal(keys[0], kb);
    assert_int_equal(get(v2, id, kb, &out), STRATA_OK);
    int64_t iv = 0;
    assert_int_equal(strata_value_get_int(out, &iv), STRATA_OK);
    assert_int_equal(iv, 7);
    strata_value_free(&out);
    assert_int_equal(get(v2, id, ka, &out), STRATA_OK);
    assert_int_equal(strata_value_type(out), STRATA_NULL);
    strata_value_free(&out);
    /* Removing the last property leaves an empty map. */
    assert_int_equal(rm(g, id, kb), STRATA_OK);
    strata_view *v3 = snap(g);
    assert_int_equal(keys_of(v3, is_rel, id, NULL, 0), 0);

    /* v1 still sees the first state. */
    assert_int_equal(keys_of(v1, is_rel, id, keys, 8), 3);
    assert_int_equal(get(v1, id, kd, &out), STRATA_OK);
    assert_int_equal(strata_value_equals(out, i7), 1);
    strata_value_free(&out);
    /* Properties of one entity never leak to the other kind or id. */
    assert_int_equal(keys_of(v1, false, n1, keys, 8), 0);
    if (is_rel)
        assert_int_equal(keys_of(v1, false, n0, keys, 8), 0);
    check_view_integrity(v1);
    check_view_integrity(v3);
    strata_view_release(&v1);
    strata_view_release(&v2);
    strata_view_release(&v3);
    strata_value *all[] = { i7, s, f, nul };
    for (size_t k = 0; k < 4; k++)
        strata_value_free(&all[k]);
}

static void test_node_properties(void **state) { exercise_properties(*state, false); }

static void test_rel_properties(void **state) { exercise_properties(*state, true); }

static void test_many_keys(void **state)
{
    strata_graph *g = *state;
    enum { NKEYS = 200 };
    strata_token keys[NKEYS];
    for (int i = 0; i < NKEYS; i++) {
        char name[16];
        snprintf(name, sizeof name, "key%03d", i);
        keys[i] = tok(g, STRATA_KEY, name);
    }
    node0(g);
    strata_id n = node0(g);
    node0(g);
    /* Set in a scattered order so every insert position is used. */
    for (int i = 0; i < NKEYS; i++) {
        int k = (i * 7) % NKEYS;
        set_int(g, n, keys[k], k * 10);
    }
    strata_view *v = snap(g);
    strata_token got[NKEYS + 1];
    assert_int_equal(keys_of(v, false, n, got, NKEYS + 1), NKEYS);
    for (int i = 0; i < NKEYS; i++) {
        assert_int_equal(got[i], keys[i]);
        assert_int_equal(node_int(v, n, keys[i]), i * 10);
    }
    assert_int_equal(keys_of(v, false, n - 1, got, NKEYS), 0);
    assert_int_equal(keys_of(v, false, n + 1, got, NKEYS), 0);

    /* Remove every other key; the rest stay, in order. */
    for (int i = 0; i < NKEYS; i += 2)
        assert_int_equal(strata_node_remove(g, n, keys[i]), STRATA_OK);
    strata_view *w = snap(g);
    assert_int_equal(keys_of(w, false, n, got, NKEYS), NKEYS / 2);
    for (int i = 0; i < NKEYS / 2; i++) {
        assert_int_equal(got[i], keys[2 * i + 1]);
        assert_int_equal(node_int(w, n, keys[2 * i + 1]), (2 * i + 1) * 10);
        assert_true(node_prop_is_null(w, n, keys[2 * i]));
    }
    /* The earlier view kept all 200. */
    assert_int_equal(keys_of(v, false, n, got, NKEYS), NKEYS);
    check_view_integrity(v);
    check_view_integrity(w);
    strata_view_release(&v);
    strata_view_release(&w);
}

/* A value read from a graph shares the graph's bytes: it must outlive the
   graph and every view.  A value from one graph set on another is copied
   into the other. */
static void test_values_outlive_graph(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_id n = node0(g);
    const char *text = "a heap string that a reader keeps after the graph is gone";
    set_str(g, n, k, text);
    strata_view *v = snap(g);
    strata_value *kept = get_node(v, n, k);

    strata_graph *other = NULL;
    assert_int_equal(strata_graph_new(&other), STRATA_OK);
    strata_token ok = tok(other, STRATA_KEY, "copied");
    strata_id on = node0(other);
    assert_int_equal(strata_node_set(other, on, ok, kept), STRATA_OK);

    /* Drop the source graph and its view; both values stay readable. */
    strata_view_release(&v);
    strata_graph_free(&g);
    *state = NULL;
    assert_null(g);
    const char *p;
    size_t len;
    assert_int_equal(strata_value_get_string(kept, &p, &len), STRATA_OK);
    assert_int_equal(len, strlen(text));
    assert_memory_equal(p, text, len);
    strata_view *ov = snap(other);
    strata_value *copied = get_node(ov, on, ok);
    assert_int_equal(strata_value_equals(copied, kept), 1);
    strata_value_free(&kept);
    strata_view_release(&ov);
    strata_graph_free(&other);
    assert_int_equal(strata_value_get_string(copied, &p, &len), STRATA_OK);
    assert_memory_equal(p, text, len);
    strata_value_free(&copied);
}

/* A value read from the graph can be set on another entity of the same
   graph; the two properties are then independent. */
static void test_copy_property_within_graph(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node0(g), b = node0(g);
    strata_id r = rel_new(g, a, b, t);
    const char *text = "a heap string copied from one node to another";
    set_str(g, a, k, text);
    strata_view *v = snap(g);
    strata_value *val = get_node(v, a, k);
    assert_int_equal(strata_node_set(g, b, k, val), STRATA_OK);
    assert_int_equal(strata_rel_set(g, r, k, val), STRATA_OK);
    set_int(g, a, k, 1);
    strata_view *w = snap(g);
    strata_value *got = get_node(w, b, k);
    assert_int_equal(strata_value_equals(got, val), 1);
    strata_value_free(&got);
    got = get_rel(w, r, k);
    assert_int_equal(strata_value_equals(got, val), 1);
    strata_value_free(&got);
    assert_int_equal(node_int(w, a, k), 1);
    strata_value_free(&val);
    strata_view_release(&v);
    strata_view_release(&w);
    check_integrity(g);
}

/* A node holds at most 65535 properties (the record counts them in 16
   bits).  Reaching that limit is not running out of memory: a caller
   that retries on STRATA_ENOMEM would retry forever.  The call must fail
   with another status and a message that says so, changing nothing. */
static void test_property_limit_is_not_enomem(void **state)
{
    strata_graph *g = *state;
    enum { LIMIT = 65535 };
    strata_id n = node0(g);
    strata_value *one = strata_value_int(1);
    strata_token k = 0;
    for (int i = 0; i <= LIMIT; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%05d", i);
        k = tok(g, STRATA_KEY, name);
        if (i < LIMIT)
            assert_int_equal(strata_node_set(g, n, k, one), STRATA_OK);
    }
    prime_graph(g);
    strata_status s = strata_node_set(g, n, k, one);
    strata_value_free(&one);
    assert_int_not_equal(s, STRATA_OK);
    assert_new_msg(strata_errmsg(g));
    if (s == STRATA_ENOMEM || strstr(strata_errmsg(g), "out of memory"))
        fail_msg("the %dth property reports \"%s\" (%s), not a limit", LIMIT + 1,
                 strata_errstr(s), strata_errmsg(g));
    strata_view *v = snap(g);
    assert_int_equal(keys_of(v, false, n, NULL, 0), LIMIT);
    assert_true(node_prop_is_null(v, n, k));
    check_view_integrity(v);
    strata_view_release(&v);
}

/* Views stay valid when the graph handle is freed first. */
static void test_graph_free_with_view_held(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_view *v = snap(g);
    char *before = dump_view(v);
    /* Diverge the graph from the view, then free it. */
    assert_int_equal(strata_node_detach_delete(g, s.hub), STRATA_OK);
    strata_view *v2 = snap(g);
    strata_edge_iter *it = NULL;
    assert_int_equal(strata_neighbours(v, s.hub, STRATA_BOTH, STRATA_ANY_TYPE, &it),
                     STRATA_OK);
    strata_graph_free(&g);
    *state = NULL;
    assert_view_is(v, before);
    assert_false(strata_node_exists(v2, s.hub));
    check_view_integrity(v2);
    strata_view_release(&v);
    strata_view_release(&v2);
    /* The iterator still holds its state. */
    size_t k = 0;
    while (strata_edge_iter_next(it, NULL, NULL))
        k++;
    assert_true(k > 0);
    strata_edge_iter_free(&it);
    free(before);
}

/* ---- 4. labels ------------------------------------------------------------ */

static size_t labels_of(strata_view *v, strata_id n, strata_token *buf, size_t cap)
{
    size_t k = 0;
    assert_int_equal(strata_node_labels(v, n, buf, cap, &k), STRATA_OK);
    return k;
}

static void test_labels_on_create(void **state)
{
    strata_graph *g = *state;
    strata_token a = tok(g, STRATA_LABEL, "A"), b = tok(g, STRATA_LABEL, "B");
    strata_token c = tok(g, STRATA_LABEL, "C");
    const strata_token dup[] = { c, a, c, a, a };
    strata_id n = node_new(g, 5, dup);
    strata_id plain = node0(g);
    strata_view *v = snap(g);
    strata_token got[8];
    assert_int_equal(labels_of(v, n, got, 8), 2);
    assert_int_equal(got[0], a);
    assert_int_equal(got[1], c);
    assert_true(has_label(v, n, a));
    assert_false(has_label(v, n, b));
    assert_true(has_label(v, n, c));
    assert_int_equal(labels_of(v, plain, got, 8), 0);
    strata_id ids[4];
    assert_int_equal(label_ids(v, a, ids, 4), 1);
    assert_int_equal(ids[0], n);
    assert_int_equal(label_ids(v, b, ids, 4), 0);
    check_view_integrity(v);
    strata_view_release(&v);
}

static void test_labels_add_remove(void **state)
{
    strata_graph *g = *state;
    strata_token a = tok(g, STRATA_LABEL, "A"), b = tok(g, STRATA_LABEL, "B");
    strata_token c = tok(g, STRATA_LABEL, "C");
    strata_id n = node0(g);
    assert_int_equal(strata_node_add_label(g, n, c), STRATA_OK);
    assert_int_equal(strata_node_add_label(g, n, a), STRATA_OK);
    char *once = dump_graph(g);
    /* Adding again changes nothing. */
    assert_int_equal(strata_node_add_label(g, n, a), STRATA_OK);
    assert_unchanged(g, once);
    assert_int_equal(strata_node_add_label(g, n, b), STRATA_OK);
    strata_view *v = snap(g);
    strata_token got[3];
    /* A small buffer gets the smallest labels and the full count. */
    strata_token small[1] = { 999 };
    assert_int_equal(labels_of(v, n, small, 1), 3);
    assert_int_equal(small[0], a);
    assert_int_equal(labels_of(v, n, NULL, 0), 3);
    assert_int_equal(labels_of(v, n, got, 3), 3);
    assert_int_equal(got[0], a);
    assert_int_equal(got[1], b);
    assert_int_equal(got[2], c);

    assert_int_equal(strata_node_remove_label(g, n, b), STRATA_OK);
    char *removed = dump_graph(g);
    /* Removing again, or removing one never carried, changes nothing. */
    assert_int_equal(strata_node_remove_label(g, n, b), STRATA_OK);
    assert_unchanged(g, removed);
    strata_view *w = snap(g);
    assert_int_equal(labels_of(w, n, got, 3), 2);
    assert_int_equal(got[0], a);
    assert_int_equal(got[1], c);
    assert_false(has_label(w, n, b));
    strata_id ids[2];
    assert_int_equal(label_ids(w, b, ids, 2), 0);
    assert_int_equal(strata_node_remove_label(g, n, a), STRATA_OK);
    assert_int_equal(strata_node_remove_label(g, n, c), STRATA_OK);
    strata_view *x = snap(g);
    assert_int_equal(labels_of(x, n, got, 3), 0);
    assert_int_equal(label_ids(x, a, ids, 2), 0);
    /* The earlier views are unchanged. */
    assert_true(has_label(v, n, b));
    assert_int_equal(label_ids(v, b, ids, 2), 1);
    assert_int_equal(labels_of(w, n, got, 3), 2);
    check_view_integrity(v);
    check_view_integrity(x);
    strata_view_release(&v);
    strata_view_release(&w);
    strata_view_release(&x);
    free(once);
    free(removed);
}

/* Label iteration is in id order, including ids reused after deletes and
   labels spread over several bitmap words. */
static void test_nodes_by_label_order(void **state)
{
    strata_graph *g = *state;
    strata_token a = tok(g, STRATA_LABEL, "A"), b = tok(g, STRATA_LABEL, "B");
    enum { N = 200 };
    for (strata_id i = 0; i < N; i++)
        assert_int_equal(i % 3 ? node1(g, b) : node1(g, a), i);
    /* Delete some A's (multiples of 3) and some B's. */
    const strata_id gone[] = { 150, 3, 99, 64, 65, 0 };
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        assert_int_equal(strata_node_delete(g, gone[i]), STRATA_OK);
    strata_view *v = snap(g);
    strata_id ids[N];
    size_t k = label_ids(v, a, ids, N);
    assert_int_equal(k, N / 3 + 1 - 4);   /* 67 multiples of 3 below 200, 4 deleted */
    for (size_t i = 1; i < k; i++)
        assert_true(ids[i - 1] < ids[i]);
    for (size_t i = 0; i < k; i++) {
        assert_int_equal(ids[i] % 3, 0);
        assert_true(ids[i] != 0 && ids[i] != 3 && ids[i] != 99 && ids[i] != 150);
    }
    /* Re-create: LIFO reuse gives 0, 65, 64, 99, 3, 150; label them all B
       and 0 also A. */
    const strata_token both[] = { b, a };
    assert_int_equal(node_new(g, 2, both), 0);
    const strata_id reuse[] = { 65, 64, 99, 3, 150 };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(node1(g, b), reuse[i]);
    strata_view *w = snap(g);
    k = label_ids(w, a, ids, N);
    assert_int_equal(k, N / 3 + 1 - 3);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 6);
    for (size_t i = 1; i < k; i++)
        assert_true(ids[i - 1] < ids[i]);
    k = label_ids(w, b, ids, N);
    /* The original B's (64 and 65 came back as B) plus 0, 3, 99 and 150. */
    assert_int_equal(k, N - (N / 3 + 1) + 4);
    for (size_t i = 1; i < k; i++)
        assert_true(ids[i - 1] < ids[i]);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 1);
    assert_int_equal(ids[2], 2);
    assert_int_equal(ids[3], 3);
    /* The view before the re-creates still lists none of them under B. */
    k = label_ids(v, b, ids, N);
    for (size_t i = 0; i < k; i++)
        assert_true(ids[i] % 3 != 0);
    check_view_integrity(v);
    check_view_integrity(w);
    strata_view_release(&v);
    strata_view_release(&w);
}

static void test_nodes_iteration_order(void **state)
{
    strata_graph *g = *state;
    for (int i = 0; i < 40; i++)
        node0(g);
    const strata_id gone[] = { 0, 39, 17, 18, 4 };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(strata_node_delete(g, gone[i]), STRATA_OK);
    strata_view *v = snap(g);
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes(v, &it), STRATA_OK);
    strata_id ids[40];
    size_t k = iter_ids(it, ids, 40);
    strata_node_iter_free(&it);
    assert_int_equal(k, 35);
    size_t j = 0;
    for (strata_id i = 0; i < 40; i++) {
        if (i == 0 || i == 39 || i == 17 || i == 18 || i == 4)
            continue;
        assert_int_equal(ids[j++], i);
    }
    strata_view_release(&v);
}

/* A node carries at most 1024 labels: one more is EINVAL on create and on
   add, with nothing changed. */
static void test_label_limit(void **state)
{
    strata_graph *g = *state;
    enum { LIMIT = 1024 };
    strata_token labels[LIMIT + 1];
    for (int i = 0; i <= LIMIT; i++) {
        char name[16];
        snprintf(name, sizeof name, "L%04d", i);
        labels[i] = tok(g, STRATA_LABEL, name);
    }
    strata_id n = node_new(g, LIMIT, labels);
    char *before = dump_graph(g);
    strata_id out = 99;
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_node_create(g, labels, LIMIT + 1, &out));
    assert_int_equal(out, 99);
    EXPECT_GRAPH_FAIL(g, STRATA_EINVAL, strata_node_add_label(g, n, labels[LIMIT]));
    assert_unchanged(g, before);
    strata_view *v = snap(g);
    assert_int_equal(labels_of(v, n, NULL, 0), LIMIT);
    assert_true(has_label(v, n, labels[LIMIT - 1]));
    assert_false(has_label(v, n, labels[LIMIT]));
    check_view_integrity(v);
    strata_view_release(&v);
    free(before);
}

/* ---- 5. slot reuse ------------------------------------------------------- */

static void test_node_ids_reused_lifo(void **state)
{
    strata_graph *g = *state;
    for (strata_id i = 0; i < 10; i++)
        assert_int_equal(node0(g), i);
    assert_int_equal(strata_node_delete(g, 3), STRATA_OK);
    assert_int_equal(strata_node_delete(g, 7), STRATA_OK);
    assert_int_equal(strata_node_delete(g, 5), STRATA_OK);
    check_integrity(g);
    strata_memstats ms = stats(g);
    assert_int_equal(ms.nodes, 7);
    assert_int_equal(ms.node_slots, 10);
    const strata_id want[] = { 5, 7, 3, 10, 11 };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(node0(g), want[i]);
    ms = stats(g);
    assert_int_equal(ms.nodes, 12);
    assert_int_equal(ms.node_slots, 12);
    /* A reused slot starts clean: no labels, no properties, no edges. */
    strata_view *v = snap(g);
    assert_int_equal(labels_of(v, 7, NULL, 0), 0);
    assert_int_equal(keys_of(v, false, 7, NULL, 0), 0);
    assert_int_equal(degree(v, 7, STRATA_BOTH, STRATA_ANY_TYPE), 0);
    check_view_integrity(v);
    strata_view_release(&v);
}

static void test_reused_slot_is_clean(void **state)
{
    strata_graph *g = *state;
    strata_token l = tok(g, STRATA_LABEL, "L"), k = tok(g, STRATA_KEY, "k");
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node1(g, l), b = node1(g, l);
    set_int(g, a, k, 1);
    strata_id r = rel_new(g, a, b, t);
    set_rel_int(g, r, k, 2);
    assert_int_equal(strata_node_detach_delete(g, a), STRATA_OK);
    assert_int_equal(node0(g), a);
    assert_int_equal(rel_new(g, b, b, t), r);
    strata_view *v = snap(g);
    assert_int_equal(labels_of(v, a, NULL, 0), 0);
    assert_false(has_label(v, a, l));
    assert_int_equal(keys_of(v, false, a, NULL, 0), 0);
    assert_int_equal(keys_of(v, true, r, NULL, 0), 0);
    assert_int_equal(degree(v, a, STRATA_BOTH, STRATA_ANY_TYPE), 0);
    strata_id ids[4];
    assert_int_equal(label_ids(v, l, ids, 4), 1);
    assert_int_equal(ids[0], b);
    strata_id s = 9, e = 9;
    assert_int_equal(strata_rel_info(v, r, &s, &e, NULL), STRATA_OK);
    assert_int_equal(s, b);
    assert_int_equal(e, b);
    check_view_integrity(v);
    strata_view_release(&v);
}

static void test_rel_ids_reused_lifo(void **state)
{
    strata_graph *g = *state;
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node0(g), b = node0(g), c = node0(g);
    for (strata_id i = 0; i < 10; i++)
        assert_int_equal(rel_new(g, i % 2 ? a : b, i % 3 ? c : a, t), i);
    assert_int_equal(strata_rel_delete(g, 3), STRATA_OK);
    assert_int_equal(strata_rel_delete(g, 7), STRATA_OK);
    assert_int_equal(strata_rel_delete(g, 5), STRATA_OK);
    /* Deleting a deleted relationship is ENOTFOUND and changes nothing. */
    char *before = dump_graph(g);
    EXPECT_GRAPH_FAIL(g, STRATA_ENOTFOUND, strata_rel_delete(g, 7));
    assert_unchanged(g, before);
    free(before);
    strata_memstats ms = stats(g);
    assert_int_equal(ms.relationships, 7);
    assert_int_equal(ms.rel_slots, 10);
    const strata_id want[] = { 5, 7, 3, 10, 11 };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(rel_new(g, c, b, t), want[i]);
    strata_view *v = snap(g);
    strata_id s, e;
    assert_int_equal(strata_rel_info(v, 7, &s, &e, NULL), STRATA_OK);
    assert_int_equal(s, c);
    assert_int_equal(e, b);
    assert_int_equal(strata_rel_count(v), 12);
    check_view_integrity(v);
    strata_view_release(&v);
}

/* Detach delete frees the node's relationships; their ids come back on
   the next creates (in some order), then creates continue at the end. */
static void test_detach_delete_frees_rel_ids(void **state)
{
    strata_graph *g = *state;
    strata_token t = tok(g, STRATA_RELTYPE, "T"), u = tok(g, STRATA_RELTYPE, "U");
    for (int i = 0; i < 6; i++)
        node0(g);
    const strata_id x = 4;
    rel_new(g, 0, 1, t);   /* 0 */
    rel_new(g, x, 0, t);   /* 1: out of x */
    rel_new(g, 1, 2, t);   /* 2 */
    rel_new(g, 2, x, u);   /* 3: into x */
    rel_new(g, 2, 3, t);   /* 4 */
    rel_new(g, 3, 0, t);   /* 5 */
    rel_new(g, x, x, t);   /* 6: x's self-loop */
    rel_new(g, 5, 1, u);   /* 7 */
    assert_int_equal(strata_node_detach_delete(g, x), STRATA_OK);
    check_integrity(g);
    strata_view *v = snap(g);
    assert_int_equal(strata_node_count(v), 5);
    assert_int_equal(strata_rel_count(v), 5);
    assert_false(strata_rel_exists(v, 1));
    assert_false(strata_rel_exists(v, 3));
    assert_false(strata_rel_exists(v, 6));
    /* The other endpoints no longer list them. */
    const hop zero_in[] = { { 5, 3 } };
    const hop zero_out[] = { { 0, 1 } };
    assert_hops(v, 0, STRATA_IN, STRATA_ANY_TYPE, zero_in, 1);
    assert_hops(v, 0, STRATA_OUT, STRATA_ANY_TYPE, zero_out, 1);
    const hop two_out[] = { { 4, 3 } };
    assert_hops(v, 2, STRATA_OUT, STRATA_ANY_TYPE, two_out, 1);
    assert_int_equal(degree(v, 2, STRATA_OUT, u), 0);
    strata_view_release(&v);

    assert_int_equal(node0(g), x);
    bool reused[8] = { false };
    for (int i = 0; i < 3; i++) {
        strata_id r = rel_new(g, 0, 5, t);
        assert_true(r == 1 || r == 3 || r == 6);
        assert_false(reused[r]);
        reused[r] = true;
    }
    assert_int_equal(rel_new(g, 0, 5, t), 8);
    check_integrity(g);
}

/* ---- 6. adjacency -------------------------------------------------------- */

/* Every direction and type filter agrees between degree and iteration. */
static void check_degrees(strata_view *v, strata_id n, const strata_token *types, size_t ntypes)
{
    const strata_direction dirs[] = { STRATA_OUT, STRATA_IN, STRATA_BOTH };
    hop h[DUMP_MAX_HOPS];
    for (size_t d = 0; d < 3; d++) {
        uint64_t sum = 0;
        for (size_t t = 0; t < ntypes; t++) {
            size_t k = hops(v, n, dirs[d], types[t], h, DUMP_MAX_HOPS);
            assert_int_equal(degree(v, n, dirs[d], types[t]), k);
            sum += k;
        }
        size_t all = hops(v, n, dirs[d], STRATA_ANY_TYPE, h, DUMP_MAX_HOPS);
        assert_int_equal(degree(v, n, dirs[d], STRATA_ANY_TYPE), all);
        assert_int_equal(sum, all);
    }
}

static void test_neighbours_by_direction_and_type(void **state)
{
    strata_graph *g = *state;
    strata_token knows = tok(g, STRATA_RELTYPE, "KNOWS");
    strata_token likes = tok(g, STRATA_RELTYPE, "LIKES");
    strata_token hates = tok(g, STRATA_RELTYPE, "HATES");   /* no relationship has it */
    strata_id a = node0(g), b = node0(g), c = node0(g), d = node0(g);
    strata_id r0 = rel_new(g, a, b, knows);
    strata_id r1 = rel_new(g, a, c, likes);
    strata_id r2 = rel_new(g, c, a, knows);
    strata_id r3 = rel_new(g, d, a, likes);
    strata_id r4 = rel_new(g, b, c, knows);
    strata_view *v = snap(g);

    const hop a_out[] = { { r0, b }, { r1, c } };
    const hop a_in[] = { { r2, c }, { r3, d } };
    const hop a_both[] = { { r0, b }, { r1, c }, { r2, c }, { r3, d } };
    const hop a_out_knows[] = { { r0, b } };
    const hop a_in_likes[] = { { r3, d } };
    const hop a_both_knows[] = { { r0, b }, { r2, c } };
    assert_hops(v, a, STRATA_OUT, STRATA_ANY_TYPE, a_out, 2);
    assert_hops(v, a, STRATA_IN, STRATA_ANY_TYPE, a_in, 2);
    assert_hops(v, a, STRATA_BOTH, STRATA_ANY_TYPE, a_both, 4);
    assert_hops(v, a, STRATA_OUT, knows, a_out_knows, 1);
    assert_hops(v, a, STRATA_IN, likes, a_in_likes, 1);
    assert_hops(v, a, STRATA_BOTH, knows, a_both_knows, 2);
    assert_hops(v, a, STRATA_BOTH, hates, NULL, 0);
    const hop c_both[] = { { r1, a }, { r2, a }, { r4, b } };
    assert_hops(v, c, STRATA_BOTH, STRATA_ANY_TYPE, c_both, 3);
    const hop d_in[] = { { 0, 0 } };
    assert_hops(v, d, STRATA_IN, STRATA_ANY_TYPE, d_in, 0);
    const strata_token types[] = { knows, likes, hates };
    for (strata_id n = a; n <= d; n++)
        check_degrees(v, n, types, 3);

    /* Each relationship's info agrees with the adjacency. */
    strata_id s, e;
    strata_token t;
    assert_int_equal(strata_rel_info(v, r3, &s, &e, &t), STRATA_OK);
    assert_int_equal(s, d);
    assert_int_equal(e, a);
    assert_int_equal(t, likes);
    check_view_integrity(v);
    strata_view_release(&v);
}

/* A self-loop is one relationship: once going out, once coming in, once
   for BOTH, and degree counts it the same way. */
static void test_self_loop(void **state)
{
    strata_graph *g = *state;
    strata_token t = tok(g, STRATA_RELTYPE, "T"), u = tok(g, STRATA_RELTYPE, "U");
    strata_id a = node0(g), b = node0(g);
    strata_id loop = rel_new(g, a, a, t);
    strata_id out = rel_new(g, a, b, t);
    strata_id in = rel_new(g, b, a, u);
    strata_id loop2 = rel_new(g, a, a, u);
    strata_view *v = snap(g);
    const hop want_out[] = { { loop, a }, { out, b }, { loop2, a } };
    const hop want_in[] = { { loop, a }, { in, b }, { loop2, a } };
    const hop want_both[] = { { loop, a }, { out, b }, { in, b }, { loop2, a } };
    assert_hops(v, a, STRATA_OUT, STRATA_ANY_TYPE, want_out, 3);
    assert_hops(v, a, STRATA_IN, STRATA_ANY_TYPE, want_in, 3);
    assert_hops(v, a, STRATA_BOTH, STRATA_ANY_TYPE, want_both, 4);
    const hop loop_only[] = { { loop, a } };
    assert_hops(v, a, STRATA_OUT, t, (const hop[]){ { loop, a }, { out, b } }, 2);
    assert_hops(v, a, STRATA_IN, t, loop_only, 1);
    assert_hops(v, a, STRATA_BOTH, t, (const hop[]){ { loop, a }, { out, b } }, 2);
    assert_int_equal(degree(v, a, STRATA_BOTH, u), 2);
    const strata_token types[] = { t, u };
    check_degrees(v, a, types, 2);
    check_degrees(v, b, types, 2);

    /* Deleting the loop removes both of its entries. */
    assert_int_equal(strata_rel_delete(g, loop), STRATA_OK);
    strata_view *w = snap(g);
    const hop after_both[] = { { out, b }, { in, b }, { loop2, a } };
    assert_hops(w, a, STRATA_BOTH, STRATA_ANY_TYPE, after_both, 3);
    assert_int_equal(degree(w, a, STRATA_IN, t), 0);
    check_view_integrity(w);
    /* A node whose only relationship is a self-loop detach-deletes. */
    strata_id c = node0(g);
    rel_new(g, c, c, t);
    assert_int_equal(strata_node_detach_delete(g, c), STRATA_OK);
    counts_are(g, 2, 3);
    check_integrity(g);
    check_view_integrity(v);
    strata_view_release(&v);
    strata_view_release(&w);
}

/* Parallel relationships are distinct: each listed, each deletable. */
static void test_parallel_rels(void **state)
{
    strata_graph *g = *state;
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node0(g), b = node0(g);
    strata_id r[5];
    for (int i = 0; i < 5; i++)
        r[i] = rel_new(g, a, b, t);
    strata_view *v = snap(g);
    assert_int_equal(degree(v, a, STRATA_OUT, t), 5);
    assert_int_equal(degree(v, b, STRATA_IN, t), 5);
    assert_int_equal(degree(v, b, STRATA_OUT, t), 0);
    assert_int_equal(strata_rel_delete(g, r[2]), STRATA_OK);
    assert_int_equal(strata_rel_delete(g, r[0]), STRATA_OK);
    strata_view *w = snap(g);
    const hop left_out[] = { { r[1], b }, { r[3], b }, { r[4], b } };
    const hop left_in[] = { { r[1], a }, { r[3], a }, { r[4], a } };
    assert_hops(w, a, STRATA_OUT, t, left_out, 3);
    assert_hops(w, b, STRATA_IN, t, left_in, 3);
    assert_hops(w, b, STRATA_BOTH, STRATA_ANY_TYPE, left_in, 3);
    assert_int_equal(degree(v, a, STRATA_OUT, t), 5);
    check_view_integrity(w);
    strata_view_release(&v);
    strata_view_release(&w);
}

/* After relationship deletes and detach deletes the remaining endpoints
   list exactly the relationships that are left, in a graph big enough for
   multi-level slot vectors. */
static void test_adjacency_after_deletes(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_view *v = snap(g);
    /* In the sample the hub (2) has: 2->3 chain (2), 1->2 chain (1),
       2->13 LIVES_IN (24), 2->3 twice (35, 36), 7->2 LIVES_IN (37) and its
       self-loop (38). */
    const hop hub_both[] = { { 1, 1 }, { 2, 3 }, { 24, 13 }, { 35, 3 },
                             { 36, 3 }, { 37, 7 }, { 38, 2 } };
    assert_hops(v, s.hub, STRATA_BOTH, STRATA_ANY_TYPE, hub_both, 7);
    const strata_token types[] = { s.knows, s.lives_in };
    for (strata_id n = 0; n < SAMPLE_NODES; n++)
        if (n != s.free_node)
            check_degrees(v, n, types, 2);

    assert_int_equal(strata_rel_delete(g, 36), STRATA_OK);
    assert_int_equal(strata_node_detach_delete(g, 7), STRATA_OK);
    strata_view *w = snap(g);
    const hop hub_after[] = { { 1, 1 }, { 2, 3 }, { 24, 13 }, { 35, 3 }, { 38, 2 } };
    assert_hops(w, s.hub, STRATA_BOTH, STRATA_ANY_TYPE, hub_after, 5);
    /* 7's other neighbours lose their side: 6 (chain 6->7), 8 (chain
       7->8) and 20 (20->7 LIVES_IN, relationship 33). */
    assert_int_equal(degree(w, 6, STRATA_OUT, s.knows), 0);
    assert_int_equal(degree(w, 8, STRATA_IN, s.knows), 0);
    assert_int_equal(degree(w, 20, STRATA_OUT, s.lives_in), 0);
    const hop three_in[] = { { 2, 2 }, { 35, 2 }, { 23, 0 } };
    assert_hops(w, 3, STRATA_IN, STRATA_ANY_TYPE, three_in, 3);
    for (strata_id n = 0; n < SAMPLE_NODES; n++)
        if (strata_node_exists(w, n))
            check_degrees(w, n, types, 2);
    check_view_integrity(w);
    /* The earlier view still has all of it. */
    assert_hops(v, s.hub, STRATA_BOTH, STRATA_ANY_TYPE, hub_both, 7);
    assert_int_equal(degree(v, 20, STRATA_OUT, s.lives_in), 1);
    check_view_integrity(v);
    strata_view_release(&v);
    strata_view_release(&w);
}

/* ---- 7. views ------------------------------------------------------------ */

/* A mix of every kind of write, applied to the sample. */
static void scramble(strata_graph *g, const sample *s)
{
    set_int(g, 0, s->age, 1000);
    set_str(g, 1, s->name, "renamed, and long enough to live on the heap");
    assert_int_equal(strata_node_remove(g, 5, s->tags), STRATA_OK);
    assert_int_equal(strata_node_add_label(g, 1, s->admin), STRATA_OK);
    assert_int_equal(strata_node_remove_label(g, 0, s->person), STRATA_OK);
    assert_int_equal(strata_rel_delete(g, 0), STRATA_OK);
    assert_int_equal(strata_rel_delete(g, s->hub_loop), STRATA_OK);
    set_rel_int(g, 1, s->since, 1);
    assert_int_equal(strata_rel_remove(g, 24, s->since), STRATA_OK);
    rel_new(g, 10, 20, s->lives_in);
    rel_new(g, 11, 11, s->knows);
    assert_int_equal(strata_node_detach_delete(g, 12), STRATA_OK);
    assert_int_equal(strata_node_delete(g, s->isolated), STRATA_OK);
    /* Reuse the freed ids with different content. */
    strata_id n = node1(g, s->city);
    assert_int_equal(n, s->isolated);
    set_int(g, n, s->age, -1);
    assert_int_equal(node0(g), 12);
    assert_int_equal(node0(g), s->free_node);
    rel_new(g, 12, s->isolated, s->knows);
}

static void test_snapshot_isolation(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_view *v0 = snap(g);
    char *d0 = dump_view(v0);
    /* Read one thing up front so the check below is not only the dump. */
    assert_int_equal(node_int(v0, 0, s.age), 0);

    scramble(g, &s);
    check_integrity(g);
    assert_view_is(v0, d0);
    assert_int_equal(node_int(v0, 0, s.age), 0);
    assert_true(has_label(v0, 0, s.person));
    assert_true(strata_rel_exists(v0, s.hub_loop));
    assert_true(strata_node_exists(v0, 12));
    assert_int_equal(labels_of(v0, s.isolated, NULL, 0), 1);
    assert_true(has_label(v0, s.isolated, s.admin));
    assert_false(strata_node_exists(v0, s.free_node));

    /* A new snapshot sees the writes. */
    strata_view *v1 = snap(g);
    char *d1 = dump_view(v1);
    assert_string_not_equal(d0, d1);
    assert_int_equal(node_int(v1, 0, s.age), 1000);
    assert_false(has_label(v1, 0, s.person));
    assert_true(has_label(v1, 1, s.admin));
    /* The self-loop's id went to the next relationship created. */
    strata_id st, en;
    assert_int_equal(strata_rel_info(v1, s.hub_loop, &st, &en, NULL), STRATA_OK);
    assert_int_equal(st, 10);
    assert_int_equal(en, 20);
    assert_int_equal(strata_rel_info(v0, s.hub_loop, &st, &en, NULL), STRATA_OK);
    assert_int_equal(st, s.hub);
    assert_int_equal(en, s.hub);
    assert_true(strata_node_exists(v1, s.free_node));
    assert_true(has_label(v1, s.isolated, s.city));
    assert_false(has_label(v1, s.isolated, s.admin));
    assert_int_equal(degree(v1, 12, STRATA_BOTH, STRATA_ANY_TYPE), 1);
    assert_int_equal(degree(v0, 12, STRATA_BOTH, STRATA_ANY_TYPE), 3);

    /* More writes under both views; then release the older first. */
    for (strata_id n = 0; n < 10; n++)
        set_int(g, n, s.age, (int64_t)n * 100);
    assert_int_equal(strata_node_detach_delete(g, s.hub), STRATA_OK);
    assert_view_is(v0, d0);
    assert_view_is(v1, d1);
    strata_view_release(&v0);
    assert_view_is(v1, d1);
    check_integrity(g);
    strata_view_release(&v1);
    free(d0);
    free(d1);
}

static void test_is_forked_lifecycle(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_id n = node0(g);
    assert_false(strata_is_forked(g));
    set_int(g, n, k, 1);
    assert_false(strata_is_forked(g));

    strata_view *v = snap(g);
    assert_false(strata_is_forked(g));   /* a view alone forks nothing */
    set_int(g, n, k, 2);
    assert_true(strata_is_forked(g));
    set_int(g, n, k, 3);
    assert_true(strata_is_forked(g));
    strata_view_release(&v);
    assert_true(strata_is_forked(g));    /* until the next write folds back */
    set_int(g, n, k, 4);
    assert_false(strata_is_forked(g));

    /* A view taken and released without a write in between never forks. */
    v = snap(g);
    strata_view_release(&v);
    set_int(g, n, k, 5);
    assert_false(strata_is_forked(g));

    /* Two views of two versions: still forked while either is held. */
    strata_view *a = snap(g);
    set_int(g, n, k, 6);
    strata_view *b = snap(g);
    set_int(g, n, k, 7);
    strata_view_release(&a);
    set_int(g, n, k, 8);
    assert_true(strata_is_forked(g));
    assert_int_equal(node_int(b, n, k), 6);
    strata_view_release(&b);
    set_int(g, n, k, 9);
    assert_false(strata_is_forked(g));

    /* A failed write under a held view changes nothing it can see. */
    v = snap(g);
    assert_int_equal(strata_node_delete(g, 77), STRATA_ENOTFOUND);
    assert_int_equal(node_int(v, n, k), 9);
    strata_view_release(&v);
    set_int(g, n, k, 10);
    assert_false(strata_is_forked(g));
    check_integrity(g);
}

/* Iterators hold their view's state: they keep working after the view is
   released and while the graph is written, and they count as a reader. */
static void test_iterators_outlive_view(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_view *v = snap(g);
    strata_node_iter *all = NULL, *persons = NULL;
    strata_edge_iter *edges = NULL;
    assert_int_equal(strata_nodes(v, &all), STRATA_OK);
    assert_int_equal(strata_nodes_by_label(v, s.person, &persons), STRATA_OK);
    assert_int_equal(strata_neighbours(v, s.hub, STRATA_BOTH, STRATA_ANY_TYPE, &edges),
                     STRATA_OK);
    /* Take one step of each before the view goes. */
    strata_id id, other;
    assert_true(strata_node_iter_next(all, &id));
    assert_int_equal(id, 0);
    assert_true(strata_node_iter_next(persons, &id));
    assert_int_equal(id, 0);
    assert_true(strata_edge_iter_next(edges, &id, &other));
    strata_view_release(&v);

    /* The iterators still hold the old version, so these writes fork. */
    scramble(g, &s);
    assert_int_equal(strata_node_detach_delete(g, s.hub), STRATA_OK);
    for (strata_id n = 1; n < 9; n++)
        if (n != s.hub)
            assert_int_equal(strata_node_detach_delete(g, n), STRATA_OK);
    assert_true(strata_is_forked(g));
    check_integrity(g);

    strata_id ids[64];
    ids[0] = 0;   /* the step taken before the view went */
    size_t k = iter_ids(all, ids + 1, 63) + 1;
    assert_int_equal(k, SAMPLE_NODES);   /* 24 nodes, 17 deleted, isolated added */
    for (size_t i = 1; i < k; i++)
        assert_true(ids[i] > (i > 1 ? ids[i - 1] : 0));
    k = iter_ids(persons, ids, 64);
    /* Persons after 0 in the old state: 3, 6, ..., 21 (not the new ones). */
    assert_int_equal(k, 7);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(ids[i], 3 * (i + 1));
    size_t e = 1;
    while (strata_edge_iter_next(edges, &id, &other))
        e++;
    assert_int_equal(e, 7);   /* the hub's seven relationships */

    strata_node_iter_free(&all);
    strata_node_iter_free(&persons);
    strata_edge_iter_free(&edges);
    assert_null(all);
    assert_null(edges);
    set_int(g, 0, s.age, 1);
    assert_false(strata_is_forked(g));
    check_integrity(g);
}

/* ---- 8. the copy counter ----------------------------------------------- */

/*
 * A write under a held view copies the chunks on the paths it touches and
 * nothing else.  In the test build a chunk holds PVEC_FANOUT (4) entries and
 * 10,000 slots need 7 levels (4^7 = 16384), so one path copy is at most
 * PATH_COPY entries; each bound below counts the paths the call touches
 * plus the small records (a property map, an endpoint's adjacency) it
 * copies whole.  All are far below BIG_N: a fork that copied a column or the
 * whole adjacency would copy at least 10,000 entries.
 */
#define BIG_N 10000
#define PATH_COPY (8 * PVEC_FANOUT)

static void build_big(strata_graph *g, strata_token key)
{
    for (strata_id i = 0; i < BIG_N; i++) {
        assert_int_equal(node0(g), i);
        set_int(g, i, key, (int64_t)i);
    }
}

static void test_copy_counter_node_set(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    build_big(g, k);
    strata_value *val = strata_value_int(-1);

    /* No view: every write is in place. */
    uint64_t before = mem_copied_entries();
    assert_int_equal(strata_node_set(g, 5000, k, val), STRATA_OK);
    assert_int_equal(mem_copied_entries() - before, 0);

    strata_view *v = snap(g);
    before = mem_copied_entries();
    assert_int_equal(strata_node_set(g, 1234, k, val), STRATA_OK);
    uint64_t copied = mem_copied_entries() - before;
    /* Something was copied (the write did not go into the view's chunks)
       and only a path's worth: O(1), not O(N). */
    assert_true(copied > 0);
    assert_true(copied <= 100);
    assert_int_equal(node_int(v, 1234, k), 1234);
    /* The path is private now: a second write to the same node copies
       nothing, and a neighbour in the same leaf nothing either. */
    before = mem_copied_entries();
    assert_int_equal(strata_node_set(g, 1234, k, val), STRATA_OK);
    assert_int_equal(strata_node_set(g, 1235, k, val), STRATA_OK);
    assert_int_equal(mem_copied_entries() - before, 1);   /* 1235's one-entry record */
    strata_view_release(&v);

    /* After the view goes, the next write folds back and copies nothing. */
    before = mem_copied_entries();
    assert_int_equal(strata_node_set(g, 7777, k, val), STRATA_OK);
    assert_int_equal(strata_node_set(g, 1234, k, val), STRATA_OK);
    assert_int_equal(mem_copied_entries() - before, 0);
    assert_false(strata_is_forked(g));
    strata_value_free(&val);
    check_integrity(g);
}

static void test_copy_counter_rel_create(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    build_big(g, k);
    /* A chain, so relationship slots are deep too. */
    for (strata_id i = 0; i + 1 < BIG_N; i++)
        rel_new(g, i, i + 1, t);
    /* No view: in place. */
    uint64_t before = mem_copied_entries();
    rel_new(g, 20, 30, t);
    assert_int_equal(strata_rel_delete(g, BIG_N - 1), STRATA_OK);
    assert_int_equal(mem_copied_entries() - before, 0);

    strata_view *v = snap(g);
    before = mem_copied_entries();
    strata_id r = rel_new(g, 10, 9000, t);
    uint64_t copied = mem_copied_entries() - before;
    /* Two endpoint adjacency paths and blocks (two entries each) and the
       two relationship vectors' paths for the new slot. */
    assert_true(copied > 0);
    assert_true(copied <= 4 * PATH_COPY + 2 * 2);
    assert_int_equal(r, BIG_N - 1);
    assert_false(strata_rel_exists(v, r));
    assert_int_equal(degree(v, 10, STRATA_OUT, t), 1);
    strata_view *w = snap(g);
    assert_int_equal(degree(w, 10, STRATA_OUT, t), 2);
    assert_int_equal(degree(w, 9000, STRATA_IN, t), 2);
    strata_view_release(&w);

    /* A relationship delete under the view is just as local. */
    before = mem_copied_entries();
    assert_int_equal(strata_rel_delete(g, 4321), STRATA_OK);
    copied = mem_copied_entries() - before;
    assert_true(copied <= 4 * PATH_COPY + 2 * 2);
    assert_true(strata_rel_exists(v, 4321));
    strata_view_release(&v);
    check_integrity(g);
}

static void test_copy_counter_detach_delete(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    build_big(g, k);
    for (strata_id i = 0; i < BIG_N; i += 7)
        rel_new(g, i, (i * 31 + 5) % BIG_N, t);
    const strata_id victim = 5000;
    rel_new(g, victim, 17, t);
    rel_new(g, 9999, victim, t);
    rel_new(g, victim, 3, t);
    /* No view: in place. */
    uint64_t before = mem_copied_entries();
    rel_new(g, 4000, 4001, t);
    rel_new(g, 4002, 4000, t);
    assert_int_equal(strata_node_detach_delete(g, 4000), STRATA_OK);
    assert_int_equal(mem_copied_entries() - before, 0);

    strata_view *v = snap(g);
    assert_int_equal(degree(v, victim, STRATA_BOTH, STRATA_ANY_TYPE), 3);
    before = mem_copied_entries();
    assert_int_equal(strata_node_detach_delete(g, victim), STRATA_OK);
    uint64_t copied = mem_copied_entries() - before;
    /* The node's three slot paths (meta, properties, adjacency), three
       endpoint adjacency paths and blocks, and the relationship paths of
       three relationships (meta and properties). */
    assert_true(copied > 0);
    assert_true(copied <= (3 + 3 + 2 * 3) * PATH_COPY + 3 * 4);
    assert_true(strata_node_exists(v, victim));
    strata_view *w = snap(g);
    assert_false(strata_node_exists(w, victim));
    assert_int_equal(degree(w, 17, STRATA_IN, t), degree(v, 17, STRATA_IN, t) - 1);
    assert_int_equal(degree(w, 3, STRATA_IN, t), degree(v, 3, STRATA_IN, t) - 1);
    assert_int_equal(degree(w, 9999, STRATA_OUT, t), degree(v, 9999, STRATA_OUT, t) - 1);
    check_view_integrity(v);
    check_view_integrity(w);
    strata_view_release(&w);
    strata_view_release(&v);
}

/* Creates and label changes under a held view are local too: the label
   index copies its small table of bitmaps and one path of one bitmap. */
static void test_copy_counter_create_and_label(void **state)
{
    strata_graph *g = *state;
    strata_token a = tok(g, STRATA_LABEL, "A"), b = tok(g, STRATA_LABEL, "B");
    for (strata_id i = 0; i < BIG_N; i++)
        assert_int_equal(node1(g, i % 2 ? a : b), i);
    strata_view *v = snap(g);
    uint64_t before = mem_copied_entries();
    const strata_token both[] = { a, b };
    strata_id n = node_new(g, 2, both);
    uint64_t copied = mem_copied_entries() - before;
    /* Three slot paths at the end and two bitmap paths, plus the table. */
    assert_int_equal(n, BIG_N);
    assert_true(copied <= 5 * PATH_COPY + 2);
    before = mem_copied_entries();
    assert_int_equal(strata_node_add_label(g, 4444, a), STRATA_OK);
    assert_int_equal(strata_node_remove_label(g, 4444, b), STRATA_OK);
    copied = mem_copied_entries() - before;
    /* One meta path and one path in each bitmap. */
    assert_true(copied > 0);
    assert_true(copied <= 3 * PATH_COPY + 2);
    assert_false(strata_node_exists(v, n));
    assert_false(has_label(v, 4444, a));
    assert_true(has_label(v, 4444, b));
    strata_view *w = snap(g);
    assert_true(has_label(w, 4444, a));
    assert_false(has_label(w, 4444, b));
    check_view_integrity(w);
    strata_view_release(&w);
    strata_view_release(&v);
}

/* ---- 9. allocation failure ---------------------------------------------- */

typedef struct op_args {
    strata_id id, other;
    strata_token token;
    strata_token labels[2];
    const strata_value *val;
    const char *name;
    strata_id out;
} op_args;

typedef strata_status (*write_op)(strata_graph *g, op_args *a);

static strata_status op_node_create(strata_graph *g, op_args *a)
{
    return strata_node_create(g, a->labels, 2, &a->out);
}

static strata_status op_node_set(strata_graph *g, op_args *a)
{
    return strata_node_set(g, a->id, a->token, a->val);
}

static strata_status op_node_remove(strata_graph *g, op_args *a)
{
    return strata_node_remove(g, a->id, a->token);
}

static strata_status op_rel_set(strata_graph *g, op_args *a)
{
    return strata_rel_set(g, a->id, a->token, a->val);
}

static strata_status op_rel_remove(strata_graph *g, op_args *a)
{
    return strata_rel_remove(g, a->id, a->token);
}

static strata_status op_rel_create(strata_graph *g, op_args *a)
{
    return strata_rel_create(g, a->id, a->other, a->token, &a->out);
}

static strata_status op_rel_delete(strata_graph *g, op_args *a)
{
    return strata_rel_delete(g, a->id);
}

static strata_status op_detach_delete(strata_graph *g, op_args *a)
{
    return strata_node_detach_delete(g, a->id);
}

static strata_status op_node_delete(strata_graph *g, op_args *a)
{
    return strata_node_delete(g, a->id);
}

static strata_status op_add_label(strata_graph *g, op_args *a)
{
    return strata_node_add_label(g, a->id, a->token);
}

static strata_status op_remove_label(strata_graph *g, op_args *a)
{
    return strata_node_remove_label(g, a->id, a->token);
}

static strata_status op_intern(strata_graph *g, op_args *a)
{
    return strata_token_intern(g, STRATA_LABEL, a->name, &a->token);
}

#define OUT_UNTOUCHED (UINT64_MAX - 1)

/*
 * Runs op with the 1st, 2nd, 3rd ... allocation from the call failing (and
 * every one after it) until it succeeds.  Each failed attempt must return
 * STRATA_ENOMEM with a fresh message, leave its out parameter alone, and
 * leave the graph exactly as before (dump, slot counts, integrity); with
 * hold_view, a view taken before the first attempt and held across all of
 * them must not move either.  Returns the number of failed attempts.
 */
static long fault_loop(strata_graph *g, write_op op, op_args *a, bool hold_view)
{
    char *before = dump_graph(g);
    strata_view *held = hold_view ? snap(g) : NULL;
    char *held_before = held ? dump_view(held) : NULL;
    long k;
    for (k = 1;; k++) {
        a->out = OUT_UNTOUCHED;
        prime_graph(g);
        mem_fail_at(k);
        strata_status s = op(g, a);
        mem_fail_clear();
        if (s == STRATA_OK)
            break;
        if (s != STRATA_ENOMEM)
            fail_msg("allocation %ld failing: %s (%s)", k, strata_errstr(s), strata_errmsg(g));
        assert_new_msg(strata_errmsg(g));
        assert_int_equal(a->out, OUT_UNTOUCHED);
        assert_unchanged(g, before);
        if (held)
            assert_view_is(held, held_before);
        assert_true(k < 10000);
    }
    /* The first write under a held view forks, which allocates. */
    if (hold_view)
        assert_true(k > 1);
    if (held) {
        assert_view_is(held, held_before);
        strata_view_release(&held);
    }
    check_integrity(g);
    free(before);
    free(held_before);
    return k - 1;
}

/* A sample graph for one fault-injection pass. */
static strata_graph *sample_graph(sample *s)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build_sample(g, s);
    return g;
}

/* The ids the next creates hand out; observes (and consumes) them. */
static void assert_next_node_ids(strata_graph *g, const strata_id *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(node0(g), want[i]);
}

static void assert_next_rel_id(strata_graph *g, strata_id want)
{
    assert_int_equal(rel_new(g, 0, 0, 0), want);
}

static void test_fault_node_create(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        op_args a = { .labels = { s.admin, s.person } };
        /* From the free list first, then at the end of the slots. */
        fault_loop(g, op_node_create, &a, hold);
        assert_int_equal(a.out, s.free_node);
        fault_loop(g, op_node_create, &a, hold);
        assert_int_equal(a.out, s.next_node);
        strata_view *v = snap(g);
        strata_token got[4];
        assert_int_equal(labels_of(v, s.free_node, got, 4), 2);
        assert_int_equal(got[0], s.person);
        assert_int_equal(got[1], s.admin);
        assert_int_equal(keys_of(v, false, s.next_node, NULL, 0), 0);
        strata_id ids[SAMPLE_NODES + 2];
        size_t k = label_ids(v, s.admin, ids, SAMPLE_NODES + 2);
        const strata_id admins[] = { s.free_node, s.isolated, s.next_node };
        assert_ids(ids, k, admins, 3);
        assert_int_equal(strata_node_count(v), SAMPLE_NODES + 2);
        strata_view_release(&v);
        const strata_id next[] = { s.next_node + 1 };
        assert_next_node_ids(g, next, 1);
        strata_graph_free(&g);
    }
}

static void test_fault_node_set(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        const char *text = "a heap string set while allocations fail";
        strata_value *str = strata_value_string(text, strlen(text));
        strata_value *i1 = strata_value_int(1), *i2 = strata_value_int(2);
        const strata_value *items[] = { i1, str, i2 };
        strata_value *list = strata_value_list(items, 3);

        op_args a = { .id = 2, .token = s.tags, .val = str };   /* a new key */
        fault_loop(g, op_node_set, &a, hold);
        a = (op_args){ .id = 3, .token = s.age, .val = list };  /* overwrite */
        fault_loop(g, op_node_set, &a, hold);
        a = (op_args){ .id = s.isolated, .token = s.since, .val = i2 };
        fault_loop(g, op_node_set, &a, hold);
        /* Setting null removes: the same path as strata_node_remove. */
        strata_value *nul = strata_value_null();
        a = (op_args){ .id = 4, .token = s.name, .val = nul };
        fault_loop(g, op_node_set, &a, hold);

        strata_view *v = snap(g);
        strata_value *got = get_node(v, 2, s.tags);
        assert_int_equal(strata_value_equals(got, str), 1);
        strata_value_free(&got);
        got = get_node(v, 3, s.age);
        assert_int_equal(strata_value_equals(got, list), 1);
        strata_value_free(&got);
        assert_int_equal(node_int(v, s.isolated, s.since), 2);
        assert_true(node_prop_is_null(v, 4, s.name));
        assert_int_equal(node_int(v, 4, s.age), 4);
        strata_view_release(&v);
        strata_value *vals[] = { str, i1, i2, list, nul };
        for (size_t i = 0; i < 5; i++)
            strata_value_free(&vals[i]);
        strata_graph_free(&g);
    }
}

static void test_fault_property_removes_and_rel_sets(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        strata_value *val = strata_value_string("since forever, said at length", 29);
        /* node 10 has name, age and tags: the record survives the remove. */
        op_args a = { .id = 10, .token = s.tags };
        fault_loop(g, op_node_remove, &a, hold);
        a = (op_args){ .id = 2, .token = s.since, .val = val };
        fault_loop(g, op_rel_set, &a, hold);
        a = (op_args){ .id = 24, .token = s.since };
        fault_loop(g, op_rel_remove, &a, hold);
        a = (op_args){ .id = s.hub_loop, .token = s.since, .val = val };
        fault_loop(g, op_rel_set, &a, hold);

        strata_view *v = snap(g);
        assert_true(node_prop_is_null(v, 10, s.tags));
        assert_int_equal(node_int(v, 10, s.age), 10);
        strata_value *got = get_rel(v, 2, s.since);
        assert_int_equal(strata_value_equals(got, val), 1);
        strata_value_free(&got);
        got = get_rel(v, s.hub_loop, s.since);
        assert_int_equal(strata_value_equals(got, val), 1);
        strata_value_free(&got);
        assert_int_equal(keys_of(v, true, 24, NULL, 0), 0);
        strata_view_release(&v);
        strata_value_free(&val);
        strata_graph_free(&g);
    }
}

static void test_fault_rel_create(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        op_args a = { .id = 1, .other = 20, .token = s.knows };
        fault_loop(g, op_rel_create, &a, hold);
        assert_int_equal(a.out, s.free_rels[0]);
        strata_id first = a.out;
        /* A self-loop, and one from the isolated node (no block yet). */
        a = (op_args){ .id = 8, .other = 8, .token = s.lives_in };
        fault_loop(g, op_rel_create, &a, hold);
        assert_int_equal(a.out, s.free_rels[1]);
        strata_id loop = a.out;
        a = (op_args){ .id = s.isolated, .other = 0, .token = s.lives_in };
        fault_loop(g, op_rel_create, &a, hold);
        strata_id third = a.out;

        strata_view *v = snap(g);
        strata_id st, en;
        strata_token t;
        assert_int_equal(strata_rel_info(v, first, &st, &en, &t), STRATA_OK);
        assert_int_equal(st, 1);
        assert_int_equal(en, 20);
        assert_int_equal(t, s.knows);
        /* 8 already had 8->19; the loop counts once each way. */
        assert_int_equal(degree(v, 8, STRATA_BOTH, s.lives_in), 2);
        assert_int_equal(degree(v, 8, STRATA_OUT, s.lives_in), 2);
        assert_int_equal(degree(v, 8, STRATA_IN, s.lives_in), 1);
        const hop iso[] = { { third, 0 } };
        assert_hops(v, s.isolated, STRATA_BOTH, STRATA_ANY_TYPE, iso, 1);
        assert_int_equal(keys_of(v, true, loop, NULL, 0), 0);
        strata_view_release(&v);
        strata_graph_free(&g);
    }
}

static void test_fault_rel_delete(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        op_args a = { .id = 0 };
        fault_loop(g, op_rel_delete, &a, hold);
        a = (op_args){ .id = s.hub_loop };
        fault_loop(g, op_rel_delete, &a, hold);
        a = (op_args){ .id = 35 };   /* one of the parallel pair */
        fault_loop(g, op_rel_delete, &a, hold);
        strata_view *v = snap(g);
        assert_false(strata_rel_exists(v, 0));
        assert_false(strata_rel_exists(v, s.hub_loop));
        assert_int_equal(degree(v, 0, STRATA_OUT, s.knows), 0);
        assert_int_equal(degree(v, 1, STRATA_IN, s.knows), 0);
        assert_int_equal(degree(v, s.hub, STRATA_OUT, s.knows), 2);   /* 2->3 and 36 */
        strata_view_release(&v);
        /* The free list took them in delete order. */
        assert_next_rel_id(g, 35);
        assert_next_rel_id(g, s.hub_loop);
        assert_next_rel_id(g, 0);
        assert_next_rel_id(g, s.free_rels[0]);
        strata_graph_free(&g);
    }
}

static void test_fault_detach_delete(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        op_args a = { .id = s.hub };
        fault_loop(g, op_detach_delete, &a, hold);
        strata_view *v = snap(g);
        assert_false(strata_node_exists(v, s.hub));
        assert_int_equal(strata_node_count(v), SAMPLE_NODES - 1);
        /* The hub had seven relationships. */
        /* The chain, LIVES_IN and the hub's four, less node 17's three,
           4 and 9, and the hub's seven. */
        assert_int_equal(strata_rel_count(v),
                         (SAMPLE_NODES - 1) + SAMPLE_NODES / 2 + 4 - 3 - 2 - 7);
        assert_int_equal(degree(v, 1, STRATA_OUT, s.knows), 0);
        assert_int_equal(degree(v, 3, STRATA_IN, s.knows), 0);
        assert_int_equal(degree(v, 7, STRATA_OUT, s.lives_in), 0);
        assert_int_equal(degree(v, 13, STRATA_IN, s.lives_in), 0);
        strata_view_release(&v);
        const strata_id next[] = { s.hub, s.free_node, s.next_node };
        assert_next_node_ids(g, next, 3);
        strata_graph_free(&g);
    }
}

static void test_fault_labels(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        op_args a = { .id = 1, .token = s.admin };
        fault_loop(g, op_add_label, &a, hold);
        a = (op_args){ .id = 3, .token = s.city };   /* a second label */
        fault_loop(g, op_add_label, &a, hold);
        a = (op_args){ .id = 3, .token = s.person };
        fault_loop(g, op_remove_label, &a, hold);
        a = (op_args){ .id = 0, .token = s.city };
        fault_loop(g, op_remove_label, &a, hold);
        /* A label past every bitmap so far (a new token). */
        strata_token fresh = tok(g, STRATA_LABEL, "Fresh");
        a = (op_args){ .id = 23, .token = fresh };
        fault_loop(g, op_add_label, &a, hold);

        strata_view *v = snap(g);
        strata_token got[4];
        assert_int_equal(labels_of(v, 1, got, 4), 1);
        assert_int_equal(got[0], s.admin);
        assert_int_equal(labels_of(v, 3, got, 4), 1);
        assert_int_equal(got[0], s.city);
        assert_int_equal(labels_of(v, 0, got, 4), 1);
        assert_int_equal(got[0], s.person);
        assert_true(has_label(v, 23, fresh));
        strata_id ids[SAMPLE_NODES];
        size_t k = label_ids(v, s.admin, ids, SAMPLE_NODES);
        const strata_id admins[] = { 1, s.isolated };
        assert_ids(ids, k, admins, 2);
        k = label_ids(v, s.person, ids, SAMPLE_NODES);
        assert_int_equal(k, 7);   /* 0, 6, 9, 12, 15, 18, 21 */
        strata_view_release(&v);
        strata_graph_free(&g);
    }
}

static void test_fault_node_delete(void **state)
{
    (void)state;
    for (int hold = 0; hold < 2; hold++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        op_args a = { .id = s.isolated };
        fault_loop(g, op_node_delete, &a, hold);
        strata_view *v = snap(g);
        assert_false(strata_node_exists(v, s.isolated));
        strata_id ids[4];
        assert_int_equal(label_ids(v, s.admin, ids, 4), 0);
        strata_view_release(&v);
        const strata_id next[] = { s.isolated, s.free_node, s.next_node };
        assert_next_node_ids(g, next, 3);
        strata_graph_free(&g);
    }
}

/*
 * The sweep: the same calls, but every attempt starts from a freshly built
 * sample (and a freshly taken view), so the k-th allocation that fails is
 * the k-th of the whole call from one fixed state — fault_loop's retries
 * instead start where the previous failure left the private copies.  After
 * each failure the same call, retried without injection, must succeed
 * with the right effect.
 */
typedef struct fault_case {
    const char *what;
    write_op op;
    op_args args;
    /* Runs after build_sample, before the view is taken (may be NULL). */
    void (*prep)(strata_graph *g, const sample *s);
    void (*verify)(strata_graph *g, const sample *s, const op_args *a);
} fault_case;

static void fault_sweep(const fault_case *c, bool hold_view)
{
    for (long k = 1;; k++) {
        sample s;
        strata_graph *g = sample_graph(&s);
        if (c->prep)
            c->prep(g, &s);
        char *before = dump_graph(g);
        strata_view *held = hold_view ? snap(g) : NULL;
        char *held_before = held ? dump_view(held) : NULL;
        op_args a = c->args;
        a.out = OUT_UNTOUCHED;
        prime_graph(g);
        mem_fail_at(k);
        strata_status st = c->op(g, &a);
        mem_fail_clear();
        bool done = st == STRATA_OK;
        if (!done) {
            if (st != STRATA_ENOMEM)
                fail_msg("%s, allocation %ld failing: %s (%s)", c->what, k, strata_errstr(st),
                         strata_errmsg(g));
            assert_new_msg(strata_errmsg(g));
            assert_int_equal(a.out, OUT_UNTOUCHED);
            assert_unchanged(g, before);
            if (held)
                assert_view_is(held, held_before);
            /* The graph is usable after the failure: the call now works. */
            st = c->op(g, &a);
            if (st != STRATA_OK)
                fail_msg("%s, retry after allocation %ld failed: %s (%s)", c->what, k,
                         strata_errstr(st), strata_errmsg(g));
        }
        if (held)
            assert_view_is(held, held_before);
        check_integrity(g);
        if (c->verify)
            c->verify(g, &s, &a);
        strata_view_release(&held);
        free(before);
        free(held_before);
        strata_graph_free(&g);
        if (done)
            return;
        assert_true(k < 1000);
    }
}

static void prep_take_free_node(strata_graph *g, const sample *s)
{
    assert_int_equal(node0(g), s->free_node);
}

static void prep_intern_fresh(strata_graph *g, const sample *s)
{
    (void)s;
    assert_int_equal(tok(g, STRATA_LABEL, "Fresh"), 3);
}

static void verify_created_node(strata_graph *g, const sample *s, const op_args *a)
{
    strata_view *v = snap(g);
    strata_token got[4];
    assert_int_equal(labels_of(v, a->out, got, 4), 2);
    assert_int_equal(got[0], s->person);
    assert_int_equal(got[1], s->admin);
    assert_int_equal(keys_of(v, false, a->out, NULL, 0), 0);
    assert_int_equal(degree(v, a->out, STRATA_BOTH, STRATA_ANY_TYPE), 0);
    assert_true(has_label(v, a->out, s->admin));
    strata_view_release(&v);
}

static void verify_create_reused(strata_graph *g, const sample *s, const op_args *a)
{
    assert_int_equal(a->out, s->free_node);
    verify_created_node(g, s, a);
    const strata_id next[] = { s->next_node };
    assert_next_node_ids(g, next, 1);
}

static void verify_create_appended(strata_graph *g, const sample *s, const op_args *a)
{
    assert_int_equal(a->out, s->next_node);
    verify_created_node(g, s, a);
    const strata_id next[] = { s->next_node + 1 };
    assert_next_node_ids(g, next, 1);
}

static void verify_node_prop(strata_graph *g, const sample *s, const op_args *a)
{
    (void)s;
    strata_view *v = snap(g);
    strata_value *got = get_node(v, a->id, a->token);
    if (a->val)
        assert_int_equal(strata_value_equals(got, a->val), 1);
    else
        assert_int_equal(strata_value_type(got), STRATA_NULL);
    strata_value_free(&got);
    strata_view_release(&v);
}

static void verify_rel_prop(strata_graph *g, const sample *s, const op_args *a)
{
    (void)s;
    strata_view *v = snap(g);
    strata_value *got = get_rel(v, a->id, a->token);
    if (a->val)
        assert_int_equal(strata_value_equals(got, a->val), 1);
    else
        assert_int_equal(strata_value_type(got), STRATA_NULL);
    strata_value_free(&got);
    strata_view_release(&v);
}

static void verify_rel_created(strata_graph *g, const sample *s, const op_args *a)
{
    assert_int_equal(a->out, s->free_rels[0]);
    strata_view *v = snap(g);
    strata_id st = 0, en = 0;
    strata_token t = 0;
    assert_int_equal(strata_rel_info(v, a->out, &st, &en, &t), STRATA_OK);
    assert_int_equal(st, a->id);
    assert_int_equal(en, a->other);
    assert_int_equal(t, a->token);
    hop h[DUMP_MAX_HOPS];
    size_t k = hops(v, a->id, STRATA_OUT, a->token, h, DUMP_MAX_HOPS);
    size_t found = 0;
    for (size_t i = 0; i < k; i++)
        found += h[i].rel == a->out && h[i].other == a->other;
    assert_int_equal(found, 1);
    k = hops(v, a->other, STRATA_IN, a->token, h, DUMP_MAX_HOPS);
    found = 0;
    for (size_t i = 0; i < k; i++)
        found += h[i].rel == a->out && h[i].other == a->id;
    assert_int_equal(found, 1);
    strata_view_release(&v);
    assert_next_rel_id(g, s->free_rels[1]);
}

static void verify_rel_gone(strata_graph *g, const sample *s, const op_args *a)
{
    (void)s;
    strata_view *v = snap(g);
    assert_false(strata_rel_exists(v, a->id));
    strata_view_release(&v);
    assert_next_rel_id(g, a->id);
}

static void verify_node_gone(strata_graph *g, const sample *s, const op_args *a)
{
    strata_view *v = snap(g);
    assert_false(strata_node_exists(v, a->id));
    assert_int_equal(strata_node_count(v), SAMPLE_NODES - 1);
    strata_view_release(&v);
    const strata_id next[] = { a->id, s->free_node, s->next_node };
    assert_next_node_ids(g, next, 3);
}

static void verify_label(strata_graph *g, const sample *s, const op_args *a, bool on)
{
    (void)s;
    strata_view *v = snap(g);
    assert_true(has_label(v, a->id, a->token) == on);
    strata_id ids[SAMPLE_NODES + 1];
    size_t k = label_ids(v, a->token, ids, SAMPLE_NODES + 1);
    size_t found = 0;
    for (size_t i = 0; i < k; i++)
        found += ids[i] == a->id;
    assert_int_equal(found, on ? 1 : 0);
    strata_view_release(&v);
}

static void verify_label_on(strata_graph *g, const sample *s, const op_args *a)
{
    verify_label(g, s, a, true);
}

static void verify_label_off(strata_graph *g, const sample *s, const op_args *a)
{
    verify_label(g, s, a, false);
}

static void test_fault_sweep(void **state)
{
    (void)state;
    sample s;   /* build_sample is deterministic: these are every sample's */
    strata_graph *g = sample_graph(&s);
    strata_graph_free(&g);
    const char *text = "a heap string set while allocations fail";
    strata_value *str = strata_value_string(text, strlen(text));
    strata_value *i1 = strata_value_int(1);
    const strata_value *items[] = { i1, str };
    strata_value *list = strata_value_list(items, 2);

    const fault_case cases[] = {
        { "node_create from the free list", op_node_create,
          { .labels = { s.admin, s.person } }, NULL, verify_create_reused },
        { "node_create at the end", op_node_create,
          { .labels = { s.admin, s.person } }, prep_take_free_node, verify_create_appended },
        { "node_set of a new key", op_node_set,
          { .id = 2, .token = s.tags, .val = str }, NULL, verify_node_prop },
        { "node_set over a key", op_node_set,
          { .id = 3, .token = s.age, .val = list }, NULL, verify_node_prop },
        { "node_set on a node with no properties", op_node_set,
          { .id = 17, .token = s.since, .val = i1 }, prep_take_free_node, verify_node_prop },
        { "node_remove", op_node_remove, { .id = 10, .token = s.tags }, NULL, verify_node_prop },
        { "rel_set", op_rel_set, { .id = 2, .token = s.since, .val = str }, NULL,
          verify_rel_prop },
        { "rel_remove", op_rel_remove, { .id = 24, .token = s.since }, NULL, verify_rel_prop },
        { "rel_create", op_rel_create, { .id = 1, .other = 20, .token = s.knows }, NULL,
          verify_rel_created },
        { "rel_create of a self-loop", op_rel_create,
          { .id = 8, .other = 8, .token = s.lives_in }, NULL, verify_rel_created },
        { "rel_create from a node without relationships", op_rel_create,
          { .id = s.isolated, .other = 0, .token = s.lives_in }, NULL, verify_rel_created },
        { "rel_delete", op_rel_delete, { .id = 0 }, NULL, verify_rel_gone },
        { "rel_delete of a self-loop", op_rel_delete, { .id = s.hub_loop }, NULL,
          verify_rel_gone },
        { "node_detach_delete", op_detach_delete, { .id = s.hub }, NULL, verify_node_gone },
        { "node_delete", op_node_delete, { .id = s.isolated }, NULL, verify_node_gone },
        { "add_label", op_add_label, { .id = 1, .token = s.admin }, NULL, verify_label_on },
        { "add_label of a label without a bitmap", op_add_label, { .id = 22, .token = 3 },
          prep_intern_fresh, verify_label_on },
        { "remove_label", op_remove_label, { .id = 3, .token = s.person }, NULL,
          verify_label_off },
        { "remove_label of one of two", op_remove_label, { .id = 0, .token = s.city }, NULL,
          verify_label_off },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int hold = 0; hold < 2; hold++)
            fault_sweep(&cases[i], hold);
    strata_value_free(&str);
    strata_value_free(&i1);
    strata_value_free(&list);
}

static void test_fault_graph_new(void **state)
{
    (void)state;
    long k;
    strata_graph *g = NULL;
    for (k = 1; k < 1000; k++) {
        mem_fail_at(k);
        strata_status st = strata_graph_new(&g);
        mem_fail_clear();
        if (st == STRATA_OK)
            break;
        assert_int_equal(st, STRATA_ENOMEM);
        assert_null(g);
    }
    assert_true(k > 1);
    assert_non_null(g);
    /* The survivor works. */
    sample s;
    build_sample(g, &s);
    strata_graph_free(&g);
}

/* Many views of many versions: the fork's bookkeeping grows (and can fail)
   while older views are held; none of them may move. */
static void test_fault_with_many_views(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    enum { NVIEWS = 6 };
    strata_view *views[NVIEWS];
    char *dumps[NVIEWS];
    for (int i = 0; i < NVIEWS; i++) {
        views[i] = snap(g);
        dumps[i] = dump_view(views[i]);
        set_int(g, (strata_id)i, s.age, 100 + i);
    }
    strata_value *val = strata_value_string("written past six held views", 27);
    op_args a = { .id = 5, .token = s.name, .val = val };
    fault_loop(g, op_node_set, &a, true);
    a = (op_args){ .id = s.hub };
    fault_loop(g, op_detach_delete, &a, true);
    a = (op_args){ .labels = { s.city, s.admin } };
    fault_loop(g, op_node_create, &a, true);
    for (int i = 0; i < NVIEWS; i++)
        assert_view_is(views[i], dumps[i]);
    /* Release out of order; writes in between fold back what is free. */
    const int order[NVIEWS] = { 3, 0, 5, 1, 4, 2 };
    for (int i = 0; i < NVIEWS; i++) {
        strata_view_release(&views[order[i]]);
        set_int(g, 0, s.age, i);
        assert_true(strata_is_forked(g) == (i + 1 < NVIEWS));
        for (int j = i + 1; j < NVIEWS; j++)
            assert_view_is(views[order[j]], dumps[order[j]]);
    }
    for (int i = 0; i < NVIEWS; i++)
        free(dumps[i]);
    strata_value_free(&val);
    check_integrity(g);
}

/* "A failed write changes nothing": that includes the fork diagnostic.  A
   write refused for a missing id or a connected node under a held view
   must not leave the graph forked, just as one refused for a bad token or
   value does not. */
static void test_failed_write_does_not_fork(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    strata_value *val = strata_value_int(1);
    sbuf forking = { 0 };
    const struct {
        const char *what;
        strata_status want;
        write_op op;
        op_args args;
    } cases[] = {
        { "node_set of an unknown key", STRATA_ENOTFOUND, op_node_set,
          { .id = 0, .token = 99, .val = val } },
        { "node_set of a missing node", STRATA_ENOTFOUND, op_node_set,
          { .id = s.free_node, .token = s.age, .val = val } },
        { "node_delete of a missing node", STRATA_ENOTFOUND, op_node_delete, { .id = 5000 } },
        { "node_delete of a connected node", STRATA_ECONNECTED, op_node_delete,
          { .id = s.hub } },
        { "rel_create to a missing node", STRATA_ENOTFOUND, op_rel_create,
          { .id = 0, .other = 5000, .token = s.knows } },
        { "rel_delete of a missing relationship", STRATA_ENOTFOUND, op_rel_delete,
          { .id = s.free_rels[0] } },
        { "add_label on a missing node", STRATA_ENOTFOUND, op_add_label,
          { .id = s.free_node, .token = s.admin } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strata_view *v = snap(g);
        op_args a = cases[i].args;
        assert_int_equal(cases[i].op(g, &a), cases[i].want);
        bool forked = strata_is_forked(g);
        strata_view_release(&v);
        /* Fold back before the next case, whatever happened. */
        set_int(g, 0, s.age, 0);
        assert_false(strata_is_forked(g));
        if (forked)
            sb_printf(&forking, "%s%s", forking.len ? "; " : "", cases[i].what);
    }
    strata_value_free(&val);
    /* Copied out first so a failure leaks nothing under the sanitizers. */
    char report[ERRBUF];
    snprintf(report, sizeof report, "%s", forking.p ? forking.p : "");
    free(forking.p);
    if (report[0])
        fail_msg("failed writes that forked the graph: %s", report);
}

static void test_fault_token_intern(void **state)
{
    strata_graph *g = *state;
    op_args a = { .name = "AFreshLabelNameLongEnoughToMatter" };
    fault_loop(g, op_intern, &a, false);
    strata_view *v = snap(g);
    strata_token found;
    assert_int_equal(strata_token_lookup(v, STRATA_LABEL, a.name, &found), STRATA_OK);
    assert_int_equal(found, a.token);
    strata_view_release(&v);
    /* Many more, so the table grows while allocations fail. */
    for (int i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof name, "label-%d", i);
        a.name = name;
        fault_loop(g, op_intern, &a, i % 2);
        assert_int_equal(a.token, (strata_token)(i + 1));
    }
    v = snap(g);
    for (int i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof name, "label-%d", i);
        assert_int_equal(strata_token_lookup(v, STRATA_LABEL, name, &found), STRATA_OK);
        assert_int_equal(found, (strata_token)(i + 1));
    }
    strata_view_release(&v);
}

/* Snapshots, reads and value constructors under allocation failure: a
   status (or NULL), a message, no leak, no change. */
static void test_fault_reads(void **state)
{
    strata_graph *g = *state;
    sample s;
    build_sample(g, &s);
    char *before = dump_graph(g);
    strata_view *v = NULL;
    mem_fail_at(1);
    strata_status st = strata_snapshot(g, &v);
    mem_fail_clear();
    assert_int_equal(st, STRATA_ENOMEM);
    assert_null(v);
    assert_msg(strata_errmsg(g));

    v = snap(g);
    strata_value *out = NULL;
    strata_node_iter *nit = NULL;
    strata_edge_iter *eit = NULL;
    prime_view(v);
    mem_fail_at(1);
    st = strata_node_get(v, 0, s.name, &out);
    mem_fail_clear();
    assert_int_equal(st, STRATA_ENOMEM);
    assert_new_msg(strata_view_errmsg(v));
    assert_null(out);
    prime_view(v);
    mem_fail_at(1);
    st = strata_rel_get(v, 1, s.since, &out);
    mem_fail_clear();
    assert_int_equal(st, STRATA_ENOMEM);
    assert_new_msg(strata_view_errmsg(v));
    prime_view(v);
    mem_fail_at(1);
    st = strata_nodes(v, &nit);
    mem_fail_clear();
    assert_int_equal(st, STRATA_ENOMEM);
    assert_new_msg(strata_view_errmsg(v));
    prime_view(v);
    mem_fail_at(1);
    st = strata_nodes_by_label(v, s.person, &nit);
    mem_fail_clear();
    assert_int_equal(st, STRATA_ENOMEM);
    assert_new_msg(strata_view_errmsg(v));
    assert_null(nit);
    prime_view(v);
    mem_fail_at(1);
    st = strata_neighbours(v, s.hub, STRATA_BOTH, STRATA_ANY_TYPE, &eit);
    mem_fail_clear();
    assert_int_equal(st, STRATA_ENOMEM);
    assert_new_msg(strata_view_errmsg(v));
    assert_null(eit);

    /* Reading a list property: the element copy can fail too. */
    strata_value *tags = get_node(v, 0, s.tags);
    strata_value *item = NULL;
    mem_fail_at(1);
    st = strata_value_list_get(tags, 1, &item);
    mem_fail_clear();
    assert_int_equal(st, STRATA_ENOMEM);
    assert_null(item);
    strata_value_free(&tags);

    /* Constructors answer NULL. */
    mem_fail_at(1);
    strata_value *c1 = strata_value_int(1);
    strata_value *c2 = strata_value_string("long enough to need the heap", 28);
    strata_value *c3 = strata_value_list(NULL, 0);
    strata_value *c4 = strata_value_null();
    mem_fail_clear();
    assert_null(c1);
    assert_null(c2);
    assert_null(c3);
    assert_null(c4);
    /* A heap string fails on its second allocation as well. */
    mem_fail_at(2);
    c2 = strata_value_string("long enough to need the heap", 28);
    mem_fail_clear();
    assert_null(c2);
    strata_value *one = strata_value_int(1);
    const strata_value *items[] = { one };
    long k;
    for (k = 1; k < 100; k++) {
        mem_fail_at(k);
        c3 = strata_value_list(items, 1);
        mem_fail_clear();
        if (c3)
            break;
    }
    assert_non_null(c3);
    assert_true(k > 1);
    strata_value_free(&c3);
    strata_value_free(&one);

    check_view_integrity(v);
    strata_view_release(&v);
    assert_unchanged(g, before);
    free(before);
}

/* ---- 10. memory statistics -------------------------------------------- */

static void test_memory_stats(void **state)
{
    strata_graph *g = *state;
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_memstats empty = stats(g);
    assert_int_equal(empty.nodes, 0);
    assert_int_equal(empty.relationships, 0);
    assert_int_equal(empty.node_slots, 0);
    assert_int_equal(empty.rel_slots, 0);

    enum { N = 2000 };
    char text[64];
    for (strata_id i = 0; i < N; i++) {
        node0(g);
        snprintf(text, sizeof text, "a property string long enough for the heap %" PRIu64, i);
        set_str(g, i, k, text);
    }
    for (strata_id i = 0; i + 1 < N; i += 2)
        rel_new(g, i, i + 1, t);
    strata_memstats full = stats(g);
    assert_int_equal(full.nodes, N);
    assert_int_equal(full.relationships, N / 2);
    assert_int_equal(full.node_slots, N);
    assert_int_equal(full.rel_slots, N / 2);
    /* Each node holds at least its heap string. */
    assert_true(full.graph_bytes > empty.graph_bytes + (uint64_t)N * 40);

    /* Deletes without a view give memory back at once; slots stay. */
    for (strata_id i = 0; i < N / 2; i++)
        assert_int_equal(strata_node_detach_delete(g, i), STRATA_OK);
    strata_memstats half = stats(g);
    assert_int_equal(half.nodes, N / 2);
    assert_int_equal(half.relationships, N / 4);
    assert_int_equal(half.node_slots, N);
    assert_int_equal(half.rel_slots, N / 2);
    assert_true(half.graph_bytes < full.graph_bytes);

    /* Under a held view deletes cannot free what the view reads. */
    strata_view *v = snap(g);
    for (strata_id i = N / 2; i < N; i++)
        assert_int_equal(strata_node_detach_delete(g, i), STRATA_OK);
    strata_memstats held = stats(g);
    assert_int_equal(held.nodes, 0);
    assert_int_equal(held.relationships, 0);
    assert_true(held.graph_bytes >= half.graph_bytes);
    assert_int_equal(strata_node_count(v), N / 2);
    strata_view_release(&v);
    /* Released views are folded back at the next write. */
    node0(g);
    strata_memstats after = stats(g);
    assert_int_equal(after.nodes, 1);
    assert_false(strata_is_forked(g));
    assert_true(after.graph_bytes < half.graph_bytes);
    assert_true(after.graph_bytes < held.graph_bytes);
    check_integrity(g);
}

/* A held view's writes cost what they change, and so does their end: a
   hundred rounds of a view held across writes to scattered nodes, each
   released, leave the graph holding what the same writes without views
   leave (the copies take their originals over at fold-back, whichever
   side of a 16-slot chunk the writes land on). */
static void test_fold_back_gives_memory_back(void **state)
{
    strata_graph *g = *state, *ref = NULL;
    enum { N = 3000, ROUNDS = 100, WRITES = 25 };
    assert_int_equal(strata_graph_new(&ref), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "x"), kr = tok(ref, STRATA_KEY, "x");
    for (strata_id i = 0; i < N; i++) {
        node0(g);
        set_int(g, i, k, 0);
        node0(ref);
        set_int(ref, i, kr, 0);
    }
    uint64_t rng = 0x2545f4914f6cdd1du;
    for (int r = 0; r < ROUNDS; r++) {
        strata_view *v = snap(g);
        for (int w = 0; w < WRITES; w++) {
            strata_id n = xorshift(&rng) % N;
            set_int(g, n, k, r + 1);
            set_int(ref, n, kr, r + 1);
        }
        strata_view_release(&v);
    }
    node0(g);   /* the next write folds the last base back */
    node0(ref);
    assert_false(strata_is_forked(g));
    strata_memstats got = stats(g), want = stats(ref);
    /* The writer's cache of freed blocks may keep a few chunks' worth. */
    assert_true(got.graph_bytes <= want.graph_bytes + 16 * 1024);
    assert_true(got.private_bytes <= want.private_bytes + 16 * 1024);
    check_integrity(g);
    strata_graph_free(&ref);
}

/* ---- the suite ----------------------------------------------------------- */

/* Index names: given ones are kept and unique, missing ones generated,
   and an index is found and dropped by name. */
static void test_index_names(void **state)
{
    strata_graph *g = *state;
    strata_token label = tok(g, STRATA_LABEL, "L");
    strata_token k1 = tok(g, STRATA_KEY, "a"), k2 = tok(g, STRATA_KEY, "b");
    strata_index named, plain, unique, other;
    assert_int_equal(strata_index_create_named(g, STRATA_INDEX_RANGE, false, label, &k1, 1,
                                               "byA", &named), STRATA_OK);
    assert_int_equal(strata_index_create(g, STRATA_INDEX_HASH, false, label, &k2, 1, &plain),
                     STRATA_OK);
    assert_int_equal(strata_index_create(g, STRATA_INDEX_UNIQUE, false, label, &k2, 1, &unique),
                     STRATA_OK);
    /* a name taken, and one too long, are refused */
    assert_int_equal(strata_index_create_named(g, STRATA_INDEX_UNIQUE, false, label, &k1, 1,
                                               "byA", &other), STRATA_EINVAL);
    char longname[STRATA_INDEX_NAME_MAX + 1];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(strata_index_create_named(g, STRATA_INDEX_UNIQUE, false, label, &k1, 1,
                                               longname, &other), STRATA_EINVAL);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_index_info info;
    assert_int_equal(strata_index_info_get(v, named, &info), STRATA_OK);
    assert_string_equal(info.name, "byA");
    assert_int_equal(strata_index_info_get(v, plain, &info), STRATA_OK);
    char want[32];
    snprintf(want, sizeof want, "index_%u", plain);
    assert_string_equal(info.name, want);
    assert_int_equal(strata_index_info_get(v, unique, &info), STRATA_OK);
    snprintf(want, sizeof want, "constraint_%u", unique);
    assert_string_equal(info.name, want);
    strata_index found;
    assert_int_equal(strata_index_find(v, "byA", &found), STRATA_OK);
    assert_int_equal(found, named);
    assert_int_equal(strata_index_find(v, "nope", &found), STRATA_ENOTFOUND);
    strata_view_release(&v);
    assert_int_equal(strata_index_drop(g, named), STRATA_OK);
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_index_find(v, "byA", &found), STRATA_ENOTFOUND);
    strata_view_release(&v);
    /* the name is free again */
    assert_int_equal(strata_index_create_named(g, STRATA_INDEX_RANGE, false, label, &k1, 1,
                                               "byA", &other), STRATA_OK);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_errstr),
        T(test_fresh_handles_have_empty_messages),
        T(test_null_handles),
        T(test_null_out_pointers),
        T(test_token_names),
        T(test_token_count),
        T(test_token_names_must_be_utf8),
        T(test_unknown_tokens_on_writes),
        T(test_unknown_ids_on_writes),
        T(test_unknown_ids_on_reads),
        T(test_unknown_tokens_on_reads),
        T(test_wrong_typed_values),
        T(test_delete_connected_node),
        T(test_bad_direction),
        T(test_value_scalars),
        T(test_value_strings),
        T(test_value_lists),
        T(test_value_equals),
        T(test_property_round_trips),
        T(test_node_properties),
        T(test_rel_properties),
        T(test_many_keys),
        T(test_copy_property_within_graph),
        T(test_property_limit_is_not_enomem),
        T(test_values_outlive_graph),
        T(test_graph_free_with_view_held),
        T(test_labels_on_create),
        T(test_labels_add_remove),
        T(test_nodes_by_label_order),
        T(test_nodes_iteration_order),
        T(test_label_limit),
        T(test_node_ids_reused_lifo),
        T(test_reused_slot_is_clean),
        T(test_rel_ids_reused_lifo),
        T(test_detach_delete_frees_rel_ids),
        T(test_neighbours_by_direction_and_type),
        T(test_self_loop),
        T(test_parallel_rels),
        T(test_adjacency_after_deletes),
        T(test_snapshot_isolation),
        T(test_is_forked_lifecycle),
        T(test_failed_write_does_not_fork),
        T(test_iterators_outlive_view),
        T(test_copy_counter_node_set),
        T(test_copy_counter_rel_create),
        T(test_copy_counter_detach_delete),
        T(test_copy_counter_create_and_label),
        T(test_fault_node_create),
        T(test_fault_node_set),
        T(test_fault_property_removes_and_rel_sets),
        T(test_fault_rel_create),
        T(test_fault_rel_delete),
        T(test_fault_detach_delete),
        T(test_fault_labels),
        T(test_fault_node_delete),
        T(test_fault_sweep),
        T(test_fault_graph_new),
        T(test_fault_with_many_views),
        T(test_fault_token_intern),
        T(test_fault_reads),
        T(test_memory_stats),
        T(test_fold_back_gives_memory_back),
        T(test_index_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
