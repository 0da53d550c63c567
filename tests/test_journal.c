/*
 * Statements, transactions and the undo journal (docs/ARCHITECTURE.md).
 *
 * What "exactly as before" means here: a canonical dump of the graph —
 * nodes with labels and properties, relationships with endpoints, type and
 * properties, every node's neighbours in iteration order (so adjacency
 * order per node, direction and type must come back exactly), every label
 * and type scan, and for every index its definition, its entry count, a
 * lookup of every key value its entities hold (with the count, that pins
 * the whole index down) and, for range indices, full ordered scans — plus
 * the slot counts of strata_memory_stats, a clean strata_integrity_check,
 * and the ids the next creates hand out, compared with a twin graph built
 * the same way that never ran the statement.
 *
 * The fixture is a graph of 18 nodes over four labels and three types with
 * a hub (parallel relationships, a self-loop), an isolated node, a node
 * whose one property is not indexed, holes on both free lists, and five
 * indices: hash, range and unique on Person, a composite hash on City and
 * a hash on KNOWS relationships.  The statement "mix" touches all of it:
 * creates reusing freed slots, a detach-delete of the hub, a plain delete,
 * sets and removes (the last property of a node included), label changes
 * that add and drop index entries, relationship creates and deletes (one
 * from the middle of a segment) and a unique key freed and taken again.
 *
 * Allocation failures are injected SQLite-style: the k-th allocation
 * fails (and every one after it), for k = 1, 2, ... until the statement
 * runs through.  Values handed to writes are made before injection starts.
 * Rollback itself is also run with every allocation failing ("rolling back
 * cannot fail"), and failures are injected into a snapshot taken
 * mid-statement (materialising the pre-statement state).
 *
 * Besides: views before, at the start of and during a statement; unique
 * violations inside a statement; exact slot identity; transactions (their
 * own writes, readers, commit, rollback, statements rolled back alone,
 * misuse); strata_is_forked, fold-back of the version a committed
 * statement replaced, and strata_memory_stats counts while one is open.
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

/* ---- small helpers --------------------------------------------------------- */

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

#define EXPECT(g, want, call)                                                             \
    do {                                                                                  \
        strata_status ex_s_ = (call);                                                     \
        if (ex_s_ != (want))                                                              \
            fail_msg("%s:%d: %s: %s, expected %s (%s)", __FILE__, __LINE__, #call,        \
                     strata_errstr(ex_s_), strata_errstr(want), strata_errmsg(g));        \
    } while (0)

static strata_token tok(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    OK(g, strata_token_intern(g, kind, name, &t));
    return t;
}

static strata_view *snap(strata_graph *g)
{
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    return v;
}

static strata_view *snap_own(strata_graph *g)
{
    strata_view *v = NULL;
    OK(g, strata_snapshot_own(g, &v));
    return v;
}

static strata_id node_new(strata_graph *g, size_t n, const strata_token *labels)
{
    strata_id id = UINT64_MAX;
    OK(g, strata_node_create(g, labels, n, &id));
    return id;
}

static strata_id rel_new(strata_graph *g, strata_id a, strata_id b, strata_token type)
{
    strata_id id = UINT64_MAX;
    OK(g, strata_rel_create(g, a, b, type, &id));
    return id;
}

static void check_view(strata_view *v)
{
    strata_status s = strata_integrity_check(v);
    if (s != STRATA_OK)
        fail_msg("integrity: %s (%s)", strata_errstr(s), strata_view_errmsg(v));
}

static void check_graph(strata_graph *g)
{
    strata_view *v = snap(g);
    check_view(v);
    strata_view_release(&v);
}

/* ---- canonical dump ------------------------------------------------------------ */

/* Every label and type scan, for each token the catalog knows. */
static void dump_scans(sbuf *b, strata_view *v)
{
    const char *name;
    for (strata_token t = 0; strata_token_name(v, STRATA_LABEL, t, &name) == STRATA_OK; t++) {
        strata_node_iter *it = NULL;
        assert_int_equal(strata_nodes_by_label(v, t, &it), STRATA_OK);
        sb_printf(b, "label %u(%s) ", t, name);
        dump_iter(b, it);
        sb_printf(b, "\n");
    }
    for (strata_token t = 0; strata_token_name(v, STRATA_RELTYPE, t, &name) == STRATA_OK; t++) {
        strata_node_iter *it = NULL;
        assert_int_equal(strata_rels_by_type(v, t, &it), STRATA_OK);
        sb_printf(b, "type %u(%s) ", t, name);
        dump_iter(b, it);
        sb_printf(b, "\n");
    }
}

#define MAX_TUPLES 128

/* One index: its definition and entry count, a lookup of every key its
   entities hold (together with the count this fixes the whole index) and,
   for a single-key range index, ordered scans of integers and strings. */
static void dump_index(sbuf *b, strata_view *v, strata_index idx)
{
    strata_index_info info;
    assert_int_equal(strata_index_info_get(v, idx, &info), STRATA_OK);
    sb_printf(b, "index %u kind=%d rels=%d token=%u keys=", idx, (int)info.kind,
              (int)info.relationships, info.token);
    for (size_t i = 0; i < info.nkeys; i++)
        sb_printf(b, "%s%u", i ? "," : "", info.keys[i]);
    sb_printf(b, " entries=%" PRIu64 "\n", info.entries);

    strata_value *tuples[MAX_TUPLES][8];
    size_t ntuples = 0;
    strata_node_iter *it = NULL;
    assert_int_equal(info.relationships ? strata_rels_by_type(v, info.token, &it)
                                        : strata_nodes_by_label(v, info.token, &it),
                     STRATA_OK);
    strata_id id;
    while (strata_node_iter_next(it, &id)) {
        strata_value *t[8] = { 0 };
        bool complete = true;
        for (size_t k = 0; k < info.nkeys; k++) {
            assert_int_equal(info.relationships ? strata_rel_get(v, id, info.keys[k], &t[k])
                                                : strata_node_get(v, id, info.keys[k], &t[k]),
                             STRATA_OK);
            complete &= strata_value_type(t[k]) != STRATA_NULL;
        }
        bool seen = !complete;
        for (size_t j = 0; j < ntuples && !seen; j++) {
            bool same = true;
            for (size_t k = 0; k < info.nkeys && same; k++)
                same = strata_value_equals(tuples[j][k], t[k]) == 1;
            seen = same;
        }
        if (seen) {
            for (size_t k = 0; k < info.nkeys; k++)
                strata_value_free(&t[k]);
            continue;
        }
        assert_true(ntuples < MAX_TUPLES);
        memcpy(tuples[ntuples++], t, sizeof t);
    }
    strata_node_iter_free(&it);
    for (size_t j = 0; j < ntuples; j++) {
        sb_printf(b, "  (");
        for (size_t k = 0; k < info.nkeys; k++) {
            sb_printf(b, "%s", k ? "," : "");
            dump_value(b, tuples[j][k]);
        }
        sb_printf(b, ") -> ");
        assert_int_equal(strata_index_lookup(v, idx, (const strata_value *const *)tuples[j],
                                             info.nkeys, &it),
                         STRATA_OK);
        dump_iter(b, it);
        sb_printf(b, "\n");
        for (size_t k = 0; k < info.nkeys; k++)
            strata_value_free(&tuples[j][k]);
    }
    if (info.kind == STRATA_INDEX_RANGE && info.nkeys == 1) {
        strata_value *lo = strata_value_int(INT64_MIN);
        assert_int_equal(strata_index_range(v, idx, lo, true, NULL, false, &it), STRATA_OK);
        strata_value_free(&lo);
        sb_printf(b, "  ints ");
        dump_iter(b, it);
        lo = strata_value_string("", 0);
        assert_int_equal(strata_index_range(v, idx, lo, true, NULL, false, &it), STRATA_OK);
        strata_value_free(&lo);
        sb_printf(b, " strings ");
        dump_iter(b, it);
        sb_printf(b, "\n");
    }
}

static int cmp_index(const void *a, const void *b)
{
    strata_index x = *(const strata_index *)a, y = *(const strata_index *)b;
    return (x > y) - (x < y);
}

/* The whole of a view as text. */
static char *dump_view(strata_view *v)
{
    sbuf b = { 0 };
    sb_printf(&b, "nodes=%" PRIu64 " rels=%" PRIu64 "\n", strata_node_count(v),
              strata_rel_count(v));
    strata_node_iter *it = NULL;
    assert_int_equal(strata_nodes(v, &it), STRATA_OK);
    strata_id n, rel_limit = 0;
    uint64_t seen = 0;
    while (strata_node_iter_next(it, &n)) {
        seen++;
        strata_token labels[DUMP_MAX_KEYS];
        size_t nl = 0;
        assert_int_equal(strata_node_labels(v, n, labels, DUMP_MAX_KEYS, &nl), STRATA_OK);
        sb_printf(&b, "n%" PRIu64 " :", n);
        for (size_t i = 0; i < nl; i++)
            sb_printf(&b, "%s%u", i ? "," : "", labels[i]);
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
    dump_scans(&b, v);
    strata_index ids[32];
    size_t ni = 0;
    assert_int_equal(strata_indexes(v, ids, 32, &ni), STRATA_OK);
    assert_true(ni <= 32);
    qsort(ids, ni, sizeof *ids, cmp_index);
    for (size_t i = 0; i < ni; i++)
        dump_index(&b, v, ids[i]);
    return b.p;
}

/* A fresh snapshot's dump plus the slot counts only the graph knows. */
static char *dump_graph(strata_graph *g)
{
    strata_memstats ms;
    OK(g, strata_memory_stats(g, &ms));
    strata_view *v = snap(g);
    check_view(v);
    char *d = dump_view(v);
    strata_view_release(&v);
    sbuf b = { 0 };
    sb_printf(&b, "slots n=%" PRIu64 " r=%" PRIu64 " live n=%" PRIu64 " r=%" PRIu64 "\n%s",
              ms.node_slots, ms.rel_slots, ms.nodes, ms.relationships, d);
    free(d);
    return b.p;
}

/* Prints the first differing line of two dumps (the whole dumps are long). */
static void assert_dump_equal(const char *got, const char *want, const char *what)
{
    if (strcmp(got, want) == 0)
        return;
    size_t line = 1, i = 0, start = 0;
    while (got[i] && got[i] == want[i]) {
        if (got[i] == '\n') {
            line++;
            start = i + 1;
        }
        i++;
    }
    const char *ge = strchr(got + start, '\n'), *we = strchr(want + start, '\n');
    int gl = ge ? (int)(ge - got - (long)start) : (int)strlen(got + start);
    int wl = we ? (int)(we - want - (long)start) : (int)strlen(want + start);
    fail_msg("%s: dumps differ at line %zu\n  got:  %.*s\n  want: %.*s", what, line, gl,
             got + start, wl, want + start);
}

static void assert_graph_is(strata_graph *g, const char *want, const char *what)
{
    char *now = dump_graph(g);
    assert_dump_equal(now, want, what);
    free(now);
}

static void assert_view_is(strata_view *v, const char *want, const char *what)
{
    check_view(v);
    char *now = dump_view(v);
    assert_dump_equal(now, want, what);
    free(now);
}

static char *view_dump_of(strata_graph *g)
{
    strata_view *v = snap(g);
    char *d = dump_view(v);
    strata_view_release(&v);
    return d;
}

/* ---- the fixture ------------------------------------------------------------------ */

#define FIX_NODES 18
#define NINTS 256

static const char *const str_pool[] = { "x", "y", "a heap string, the first one",
                                        "a heap string, the second one" };

typedef struct fixture {
    strata_token person, city, tag, extra;          /* labels */
    strata_token knows, lives, likes;               /* relationship types */
    strata_token name, age, uid, tags, a, b, w, solo;   /* property keys */
    strata_index by_name, by_age, by_uid, by_ab, by_w;
    strata_id rel_mid;   /* the middle of three parallel KNOWS 14 -> 15 */
    /* Values for every write, made before any failure is injected. */
    strata_value *ints[NINTS];
    strata_value *strs[4];
    strata_value *lists[3];
} fixture;

static void fixture_values(fixture *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < NINTS; i++)
        assert_non_null(f->ints[i] = strata_value_int(i));
    for (int i = 0; i < 4; i++)
        assert_non_null(f->strs[i] = strata_value_string(str_pool[i], strlen(str_pool[i])));
    const strata_value *l0[] = { f->strs[0], f->strs[2] };
    const strata_value *l1[] = { f->ints[1], f->ints[2], f->ints[3] };
    const strata_value *l2[] = { f->strs[3] };
    assert_non_null(f->lists[0] = strata_value_list(l0, 2));
    assert_non_null(f->lists[1] = strata_value_list(l1, 3));
    assert_non_null(f->lists[2] = strata_value_list(l2, 1));
}

static void fixture_free(fixture *f)
{
    for (int i = 0; i < NINTS; i++)
        strata_value_free(&f->ints[i]);
    for (int i = 0; i < 4; i++)
        strata_value_free(&f->strs[i]);
    for (int i = 0; i < 3; i++)
        strata_value_free(&f->lists[i]);
}

static void set_n(strata_graph *g, strata_id n, strata_token k, const strata_value *v)
{
    OK(g, strata_node_set(g, n, k, v));
}

static void set_r(strata_graph *g, strata_id r, strata_token k, const strata_value *v)
{
    OK(g, strata_rel_set(g, r, k, v));
}

static strata_index index_new(strata_graph *g, strata_index_kind kind, bool rels,
                              strata_token token, const strata_token *keys, size_t n)
{
    strata_index idx = UINT32_MAX;
    OK(g, strata_index_create(g, kind, rels, token, keys, n, &idx));
    return idx;
}

/*
 * The same graph every time (tokens, ids and index handles included):
 *   nodes 0..17: Person when even (and 7), City when i % 3 == 0, Tag when
 *     i % 5 == 0; each has name, age, uid (100 + i) and some tags, City
 *     nodes a and b — except node 6, whose one property is solo;
 *   KNOWS chain i -> i+1 (rel i, w = i % 3) for i < 16; LIVES from even i;
 *   hub 2: KNOWS 2->3 twice more, a KNOWS self-loop, LIKES 4->2 and 2->5;
 *   KNOWS 14->15 twice more (rel_mid is the middle one of the three);
 *   a LIKES self-loop at 9; node 17 isolated;
 *   holes: node 11 and node 16 detach-deleted, relationships 4 and 20
 *   deleted.  Free lists, head first — nodes: 16, 11; relationships: 20,
 *   19, 15, 4, 10, 11 (a detach-delete frees in adjacency order: by type,
 *   outgoing first, then the node).
 */
static strata_graph *build_fixture(fixture *f)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    f->person = tok(g, STRATA_LABEL, "Person");
    f->city = tok(g, STRATA_LABEL, "City");
    f->tag = tok(g, STRATA_LABEL, "Tag");
    f->extra = tok(g, STRATA_LABEL, "Extra");
    f->knows = tok(g, STRATA_RELTYPE, "KNOWS");
    f->lives = tok(g, STRATA_RELTYPE, "LIVES");
    f->likes = tok(g, STRATA_RELTYPE, "LIKES");
    f->name = tok(g, STRATA_KEY, "name");
    f->age = tok(g, STRATA_KEY, "age");
    f->uid = tok(g, STRATA_KEY, "uid");
    f->tags = tok(g, STRATA_KEY, "tags");
    f->a = tok(g, STRATA_KEY, "a");
    f->b = tok(g, STRATA_KEY, "b");
    f->w = tok(g, STRATA_KEY, "w");
    f->solo = tok(g, STRATA_KEY, "solo");
    /* Two indices before the data (maintained on write), three after
       (built from it). */
    f->by_uid = index_new(g, STRATA_INDEX_UNIQUE, false, f->person, &f->uid, 1);
    f->by_w = index_new(g, STRATA_INDEX_HASH, true, f->knows, &f->w, 1);
    for (strata_id i = 0; i < FIX_NODES; i++) {
        strata_token l[3];
        size_t nl = 0;
        if (i % 2 == 0 || i == 7)
            l[nl++] = f->person;
        if (i % 3 == 0)
            l[nl++] = f->city;
        if (i % 5 == 0)
            l[nl++] = f->tag;
        assert_int_equal(node_new(g, nl, l), i);
        if (i == 6) {
            set_n(g, i, f->solo, f->ints[6]);
            continue;
        }
        set_n(g, i, f->name, f->strs[i % 4]);
        set_n(g, i, f->age, f->ints[i % 7]);
        set_n(g, i, f->uid, f->ints[100 + i]);
        if (i % 4 == 1)
            set_n(g, i, f->tags, f->lists[0]);
        if (i % 4 == 3)
            set_n(g, i, f->tags, f->lists[1]);
        if (i % 3 == 0) {
            set_n(g, i, f->a, f->ints[i % 2]);
            set_n(g, i, f->b, f->strs[(i / 3) % 2]);
        }
    }
    for (strata_id i = 0; i < 16; i++) {
        assert_int_equal(rel_new(g, i, i + 1, f->knows), i);
        set_r(g, i, f->w, f->ints[i % 3]);
    }
    for (strata_id i = 0; i < 16; i += 2)
        assert_int_equal(rel_new(g, i, (i * 5 + 3) % 17, f->lives), 16 + i / 2);
    rel_new(g, 2, 3, f->knows);
    set_r(g, rel_new(g, 2, 3, f->knows), f->w, f->ints[4]);
    set_r(g, rel_new(g, 2, 2, f->knows), f->w, f->ints[9]);
    rel_new(g, 4, 2, f->likes);
    rel_new(g, 2, 5, f->likes);
    f->rel_mid = rel_new(g, 14, 15, f->knows);
    set_r(g, f->rel_mid, f->w, f->ints[1]);
    set_r(g, rel_new(g, 14, 15, f->knows), f->w, f->ints[5]);
    rel_new(g, 9, 9, f->likes);
    strata_token name_key = f->name, age_key = f->age, ab[2] = { f->a, f->b };
    f->by_name = index_new(g, STRATA_INDEX_HASH, false, f->person, &name_key, 1);
    f->by_age = index_new(g, STRATA_INDEX_RANGE, false, f->person, &age_key, 1);
    f->by_ab = index_new(g, STRATA_INDEX_HASH, false, f->city, ab, 2);
    OK(g, strata_node_detach_delete(g, 11));
    OK(g, strata_rel_delete(g, 4));
    OK(g, strata_node_detach_delete(g, 16));
    OK(g, strata_rel_delete(g, 20));
    check_graph(g);
    return g;
}

/* The free lists the fixture leaves, head first (see build_fixture). */
static const strata_id fix_next_nodes[] = { 16, 11, 18, 19, 20 };
static const strata_id fix_next_rels[] = { 20, 19, 15, 4, 10 };

#define PROBES 5

typedef struct next_ids {
    strata_id nodes[PROBES], rels[PROBES];
} next_ids;

/* Observes (and consumes) the ids the next creates hand out: five nodes,
   then five relationships between nodes 0 and 1 (live in every state the
   tests compare). */
static next_ids probe_ids(strata_graph *g)
{
    next_ids ids;
    for (int i = 0; i < PROBES; i++)
        ids.nodes[i] = node_new(g, 0, NULL);
    strata_token t = tok(g, STRATA_RELTYPE, "PROBE");
    for (int i = 0; i < PROBES; i++)
        ids.rels[i] = rel_new(g, 0, 1, t);
    return ids;
}

static void assert_ids_equal(const next_ids *got, const next_ids *want, const char *what)
{
    for (int i = 0; i < PROBES; i++) {
        if (got->nodes[i] != want->nodes[i])
            fail_msg("%s: create #%d returned node %" PRIu64 ", expected %" PRIu64, what, i + 1,
                     got->nodes[i], want->nodes[i]);
        if (got->rels[i] != want->rels[i])
            fail_msg("%s: create #%d returned relationship %" PRIu64 ", expected %" PRIu64,
                     what, i + 1, got->rels[i], want->rels[i]);
    }
}

/* Probes both graphs' next ids, compares them, then compares the dumps
   (the probes are the same writes on both). */
static void assert_same_future(strata_graph *g, strata_graph *twin, const char *what)
{
    next_ids a = probe_ids(g), b = probe_ids(twin);
    assert_ids_equal(&a, &b, what);
    char *da = dump_graph(g), *db = dump_graph(twin);
    assert_dump_equal(da, db, what);
    free(da);
    free(db);
}

/* ---- the statement mix ---------------------------------------------------------- */

#define STEP(call)                                                                        \
    do {                                                                                  \
        strata_status st_s_ = (call);                                                     \
        if (st_s_ != STRATA_OK)                                                           \
            return st_s_;                                                                 \
    } while (0)

typedef struct mix_ids {
    strata_id x, y, z, w, r1, r2, r3;
} mix_ids;

/* The first half: creates reusing freed slots, the hub's detach-delete, a
   plain delete, sets and removes (node 6 loses its last property and gets
   it back), a label add that completes a composite key. */
static strata_status mix_first(strata_graph *g, const fixture *f, mix_ids *m)
{
    strata_token pt[2] = { f->person, f->tag };
    STEP(strata_node_create(g, pt, 2, &m->x));
    STEP(strata_node_set(g, m->x, f->name, f->strs[1]));
    STEP(strata_node_set(g, m->x, f->uid, f->ints[150]));
    STEP(strata_node_set(g, m->x, f->age, f->ints[3]));
    STEP(strata_rel_create(g, m->x, 0, f->knows, &m->r1));
    STEP(strata_rel_set(g, m->r1, f->w, f->ints[2]));
    STEP(strata_node_detach_delete(g, 2));
    STEP(strata_node_delete(g, 17));
    STEP(strata_node_set(g, 8, f->age, f->ints[6]));
    STEP(strata_node_set(g, 8, f->name, f->strs[3]));
    STEP(strata_node_remove(g, 4, f->name));
    STEP(strata_node_remove(g, 6, f->solo));
    STEP(strata_node_set(g, 6, f->solo, f->ints[60]));
    STEP(strata_node_set(g, 6, f->name, f->strs[0]));
    STEP(strata_node_remove(g, 6, f->solo));
    STEP(strata_node_add_label(g, 7, f->city));
    STEP(strata_node_set(g, 7, f->a, f->ints[1]));
    STEP(strata_node_set(g, 7, f->b, f->strs[0]));
    return STRATA_OK;
}

/* The second half: label removals that drop index entries, a self-loop, a
   delete from the middle of a segment, relationship property changes, a
   node created, connected and detach-deleted within the statement, and
   node 2's unique key (freed by its delete) taken by a new node. */
static strata_status mix_second(strata_graph *g, const fixture *f, mix_ids *m)
{
    STEP(strata_node_add_label(g, 9, f->extra));
    STEP(strata_node_remove_label(g, 10, f->person));
    STEP(strata_node_remove_label(g, 12, f->city));
    STEP(strata_rel_create(g, 5, 5, f->likes, &m->r2));
    STEP(strata_rel_delete(g, f->rel_mid));
    STEP(strata_rel_set(g, 5, f->w, f->ints[7]));
    STEP(strata_rel_remove(g, 6, f->w));
    STEP(strata_node_create(g, NULL, 0, &m->y));
    STEP(strata_node_create(g, &f->city, 1, &m->z));
    STEP(strata_node_set(g, m->z, f->a, f->ints[0]));
    STEP(strata_node_set(g, m->z, f->b, f->strs[1]));
    STEP(strata_rel_create(g, m->y, m->z, f->lives, &m->r3));
    STEP(strata_rel_create(g, m->z, 3, f->knows, &m->r3));
    STEP(strata_node_detach_delete(g, m->y));
    STEP(strata_node_set(g, 0, f->tags, f->lists[2]));
    STEP(strata_node_remove_label(g, 14, f->person));
    STEP(strata_node_add_label(g, 14, f->person));
    STEP(strata_node_set(g, m->x, f->uid, f->ints[151]));
    STEP(strata_node_create(g, &f->person, 1, &m->w));
    STEP(strata_node_set(g, m->w, f->uid, f->ints[102]));
    STEP(strata_node_set(g, 3, f->name, f->strs[2]));
    return STRATA_OK;
}

static strata_status mix_all(strata_graph *g, const fixture *f, mix_ids *m)
{
    STEP(mix_first(g, f, m));
    return mix_second(g, f, m);
}

/* The state a committed mix must leave: the mix as one statement,
   committed, on a graph no view or failure has touched.  (Not the mix as
   direct writes: a statement's creates after its deletes take new ids,
   where direct writes reuse the freed ones; core/txn.h.) */
static strata_graph *build_after(fixture *f)
{
    strata_graph *g = build_fixture(f);
    mix_ids m;
    OK(g, strata_statement_begin(g));
    OK(g, mix_all(g, f, &m));
    OK(g, strata_statement_end(g, true));
    return g;
}

/* ---- 1. rollback restores everything ------------------------------------------------ */

static void test_rollback_restores_everything(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *twin = build_fixture(&f);
    char *before = dump_graph(g);
    assert_graph_is(twin, before, "the twin is built identically");

    OK(g, strata_statement_begin(g));
    mix_ids m;
    OK(g, mix_all(g, &f, &m));
    assert_int_equal(m.x, fix_next_nodes[0]);   /* the mix did reuse a freed slot */
    OK(g, strata_statement_end(g, false));
    assert_graph_is(g, before, "after rolling back the mix");

    /* The exact ids, from the free lists the fixture left. */
    next_ids got = probe_ids(g), want;
    memcpy(want.nodes, fix_next_nodes, sizeof want.nodes);
    memcpy(want.rels, fix_next_rels, sizeof want.rels);
    assert_ids_equal(&got, &want, "next ids after the rollback");
    next_ids tw = probe_ids(twin);
    assert_ids_equal(&tw, &want, "next ids of the twin");
    char *a = dump_graph(g), *b = dump_graph(twin);
    assert_dump_equal(a, b, "after the probes, against the twin");
    free(a);
    free(b);

    /* Rolled back twice in a row, over the probes' state this time. */
    char *again = dump_graph(g);
    for (int round = 0; round < 2; round++) {
        OK(g, strata_statement_begin(g));
        OK(g, mix_all(g, &f, &m));
        OK(g, strata_statement_end(g, false));
        assert_graph_is(g, again, "after another rollback");
    }
    assert_same_future(g, twin, "after two more rollbacks");
    free(again);
    free(before);
    strata_graph_free(&g);
    strata_graph_free(&twin);
    fixture_free(&f);
}

/* An empty statement, and a statement of refused writes, change nothing. */
static void test_empty_and_refused_statements(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *twin = build_fixture(&f);
    char *before = dump_graph(g);
    for (int commit = 0; commit < 2; commit++) {
        OK(g, strata_statement_begin(g));
        OK(g, strata_statement_end(g, commit));
        assert_graph_is(g, before, "an empty statement");
        OK(g, strata_statement_begin(g));
        strata_id out = 77;
        EXPECT(g, STRATA_ENOTFOUND, strata_node_set(g, 11, f.name, f.strs[0]));
        EXPECT(g, STRATA_ECONNECTED, strata_node_delete(g, 0));
        EXPECT(g, STRATA_ENOTFOUND, strata_rel_create(g, 0, 16, f.knows, &out));
        EXPECT(g, STRATA_ECONSTRAINT, strata_node_set(g, 0, f.uid, f.ints[102]));
        EXPECT(g, STRATA_ENOTFOUND, strata_rel_delete(g, 4));
        assert_int_equal(out, 77);
        OK(g, strata_statement_end(g, commit));
        assert_graph_is(g, before, "a statement of refused writes");
    }
    assert_same_future(g, twin, "after empty statements");
    free(before);
    strata_graph_free(&g);
    strata_graph_free(&twin);
    fixture_free(&f);
}

/* ---- 2. commit, and what views see --------------------------------------------------- */

/* Runs mix as one committed statement on a fresh fixture and compares the
   graph, and its next ids, with ref (which it frees). */
static void assert_committed_mix_is(fixture *f,
                                    strata_status (*mix)(strata_graph *, const fixture *,
                                                         mix_ids *),
                                    strata_graph *ref, const char *what)
{
    strata_graph *g = build_fixture(f);
    char *want = dump_graph(ref);
    mix_ids m;
    OK(g, strata_statement_begin(g));
    OK(g, mix(g, f, &m));
    OK(g, strata_statement_end(g, true));
    assert_graph_is(g, want, what);
    assert_same_future(g, ref, "after the commit");
    free(want);
    strata_graph_free(&g);
    strata_graph_free(&ref);
}

/* A committed statement leaves what the same writes leave outside one —
   exactly, ids and future ids included, for the first half of the mix
   (its creates come before its deletes) — and the whole mix leaves the
   reference state. */
static void test_commit_keeps_writes(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *direct = build_fixture(&f);
    mix_ids m;
    OK(direct, mix_first(direct, &f, &m));
    assert_committed_mix_is(&f, mix_first, direct,
                            "a committed first half against the same writes made directly");
    assert_committed_mix_is(&f, mix_all, build_after(&f), "a committed mix against the reference");
    fixture_free(&f);
}

/*
 * Views and a statement, for each way a view can meet it:
 *   held      a view taken before the statement's first write (the first
 *             write forks; readers get that version);
 *   early     a view taken after strata_statement_begin but before the
 *             first write (no write to hide yet);
 *   mid       no view held when the statement writes, one taken part way
 *             (the pre-statement state is materialised from the journal);
 * and, in each case, a second snapshot later in the statement.  Every one
 * of them shows the state before the statement, then and after it ends;
 * after commit a fresh view shows the statement's writes, after rollback
 * the graph is the state before it.
 */
enum view_case { VIEW_HELD, VIEW_EARLY, VIEW_MID };

static void views_around_statement(enum view_case vc, bool commit)
{
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *twin = build_fixture(&f), *after = build_after(&f);
    char *before = dump_graph(g), *before_v = view_dump_of(g);
    char *after_g = dump_graph(after), *after_v = view_dump_of(after);
    strata_view *first = NULL, *second = NULL;
    if (vc == VIEW_HELD)
        first = snap(g);
    OK(g, strata_statement_begin(g));
    if (vc == VIEW_EARLY)
        first = snap(g);
    mix_ids m;
    OK(g, mix_first(g, &f, &m));
    if (vc == VIEW_MID)
        first = snap(g);
    assert_view_is(first, before_v, "a view during the statement");
    OK(g, mix_second(g, &f, &m));
    second = snap(g);
    assert_view_is(second, before_v, "a second view later in the statement");
    assert_view_is(first, before_v, "the first view, after more writes");
    OK(g, strata_statement_end(g, commit));
    assert_view_is(first, before_v, "the first view, after the statement ended");
    assert_view_is(second, before_v, "the second view, after the statement ended");
    if (commit) {
        strata_view *now = snap(g);
        assert_view_is(now, after_v, "a view after the commit");
        strata_view_release(&now);
        assert_graph_is(g, after_g, "the graph after the commit");
        strata_view_release(&first);
        strata_view_release(&second);
        assert_same_future(g, after, "after the commit");
    } else {
        assert_graph_is(g, before, "the graph after the rollback");
        strata_view_release(&first);
        assert_graph_is(g, before, "after releasing one view");
        strata_view_release(&second);
        assert_same_future(g, twin, "after the rollback");
    }
    free(before);
    free(before_v);
    free(after_g);
    free(after_v);
    strata_graph_free(&g);
    strata_graph_free(&twin);
    strata_graph_free(&after);
    fixture_free(&f);
}

static void test_views_held_across_statement(void **state)
{
    (void)state;
    views_around_statement(VIEW_HELD, true);
    views_around_statement(VIEW_HELD, false);
}

static void test_views_taken_before_first_write(void **state)
{
    (void)state;
    views_around_statement(VIEW_EARLY, true);
    views_around_statement(VIEW_EARLY, false);
}

static void test_views_materialised_mid_statement(void **state)
{
    (void)state;
    views_around_statement(VIEW_MID, true);
    views_around_statement(VIEW_MID, false);
}

/* A view taken mid-statement and released before the statement ends, then
   further writes: the state readers get stays the pre-statement one. */
static void test_mid_statement_view_released_early(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *twin = build_fixture(&f);
    char *before = dump_graph(g), *before_v = view_dump_of(g);
    for (int commit = 0; commit < 2; commit++) {
        OK(g, strata_statement_begin(g));
        mix_ids m;
        OK(g, mix_first(g, &f, &m));
        strata_view *v = snap(g);
        assert_view_is(v, before_v, "a view mid-statement");
        strata_view_release(&v);
        OK(g, mix_second(g, &f, &m));
        v = snap(g);
        assert_view_is(v, before_v, "a second view, after the first was released");
        strata_view_release(&v);
        if (commit) {
            OK(g, strata_statement_end(g, true));
            break;
        }
        OK(g, strata_statement_end(g, false));
        assert_graph_is(g, before, "after the rollback");
    }
    strata_graph *after = build_after(&f);
    char *want = dump_graph(after);
    assert_graph_is(g, want, "after the commit");
    assert_same_future(g, after, "after the commit");
    free(want);
    free(before);
    free(before_v);
    strata_graph_free(&g);
    strata_graph_free(&twin);
    strata_graph_free(&after);
    fixture_free(&f);
}

/* ---- 3. allocation failures ------------------------------------------------------------ */

/* A fault-injection run's settings. */
typedef struct fault_case {
    bool hold_view;          /* a view held across the statement */
    bool commit_on_success;  /* commit when every op succeeded, else roll back */
    bool in_txn;             /* the statement inside a transaction */
    bool fail_rollback;      /* every allocation fails during the rollback too */
} fault_case;

/* The expectations of a fault run, computed once. */
typedef struct fault_ref {
    char *before, *after;            /* graph dumps */
    char *before_v, *txn_v;          /* views: the committed state, the txn's state */
    next_ids ids_before, ids_after;
} fault_ref;

/* In a transaction the statement follows one direct write: node P. */
static void txn_prelude(strata_graph *g, const fixture *f)
{
    strata_id p = node_new(g, 1, &f->tag);
    set_n(g, p, f->name, f->strs[3]);
}

static strata_graph *fault_graph(fixture *f, bool in_txn, bool mix)
{
    strata_graph *g = build_fixture(f);
    if (in_txn)
        txn_prelude(g, f);
    if (mix) {   /* as one statement, as build_after runs it */
        mix_ids m;
        OK(g, strata_statement_begin(g));
        OK(g, mix_all(g, f, &m));
        OK(g, strata_statement_end(g, true));
    }
    return g;
}

static void fault_ref_init(fault_ref *r, fixture *f, bool in_txn)
{
    strata_graph *g = build_fixture(f);
    r->before_v = view_dump_of(g);
    strata_graph_free(&g);
    g = fault_graph(f, in_txn, false);
    r->before = dump_graph(g);
    r->txn_v = view_dump_of(g);
    r->ids_before = probe_ids(g);
    strata_graph_free(&g);
    g = fault_graph(f, in_txn, true);
    r->after = dump_graph(g);
    r->ids_after = probe_ids(g);
    strata_graph_free(&g);
}

static void fault_ref_free(fault_ref *r)
{
    free(r->before);
    free(r->after);
    free(r->before_v);
    free(r->txn_v);
}

/* One attempt with the k-th allocation failing; true when the mix ran
   through (no failure reached it). */
static bool fault_attempt(fixture *f, const fault_case *c, const fault_ref *ref, long k)
{
    char what[160];
    snprintf(what, sizeof what, "allocation %ld failing (view %d, commit %d, txn %d, "
             "failing rollback %d)", k, c->hold_view, c->commit_on_success, c->in_txn,
             c->fail_rollback);
    strata_graph *g = build_fixture(f);
    strata_view *held = NULL;
    if (c->in_txn) {
        OK(g, strata_begin(g));
        txn_prelude(g, f);
        if (c->hold_view)
            held = snap_own(g);   /* makes the statement's first write fork tx */
    } else if (c->hold_view) {
        held = snap(g);
    }
    OK(g, strata_statement_begin(g));
    mix_ids m;
    mem_fail_at(k);
    strata_status s = mix_all(g, f, &m);
    mem_fail_clear();
    bool through = s == STRATA_OK;
    if (!through) {
        if (s != STRATA_ENOMEM)
            fail_msg("%s: the mix failed with %s (%s)", what, strata_errstr(s),
                     strata_errmsg(g));
        if (strata_errmsg(g)[0] == '\0')
            fail_msg("%s: ENOMEM without a message", what);
    }
    bool commit = through && c->commit_on_success;
    if (c->fail_rollback && !commit)
        mem_fail_at(1);
    s = strata_statement_end(g, commit);
    mem_fail_clear();
    if (s != STRATA_OK)
        fail_msg("%s: ending the statement (commit %d): %s (%s)", what, commit,
                 strata_errstr(s), strata_errmsg(g));
    if (held)
        assert_view_is(held, c->in_txn ? ref->txn_v : ref->before_v, what);
    if (c->in_txn) {
        assert_true(strata_in_transaction(g));
        strata_view *committed = snap(g);
        assert_view_is(committed, ref->before_v, what);
        strata_view_release(&committed);
        strata_view *own = snap_own(g);
        if (commit)
            check_view(own);
        else
            assert_view_is(own, ref->txn_v, what);
        strata_view_release(&own);
        OK(g, strata_commit(g));
    }
    assert_graph_is(g, commit ? ref->after : ref->before, what);
    if (held) {
        assert_view_is(held, c->in_txn ? ref->txn_v : ref->before_v, what);
        strata_view_release(&held);
    }
    next_ids ids = probe_ids(g);
    assert_ids_equal(&ids, commit ? &ref->ids_after : &ref->ids_before, what);
    strata_graph_free(&g);
    return through;
}

static long fault_loop(const fault_case *c)
{
    fixture f;
    fixture_values(&f);
    fault_ref ref;
    fault_ref_init(&ref, &f, c->in_txn);
    long k;
    for (k = 1; !fault_attempt(&f, c, &ref, k); k++)
        assert_true(k < 100000);
    fault_ref_free(&ref);
    fixture_free(&f);
    return k - 1;
}

static void test_fault_injection_rollback(void **state)
{
    (void)state;
    long plain = fault_loop(&(fault_case){ false, false, false, false });
    long held = fault_loop(&(fault_case){ true, false, false, false });
    print_message("fault injection, rollback: %ld failing allocations with no view, %ld with "
                  "a view held\n", plain, held);
    /* Both runs must have failed many distinct allocations (how many
       depends on reservation sizes, so only a floor is asserted; index
       levels without hashes reserve far fewer trie nodes). */
    assert_true(plain > 30);
    assert_true(held > 50);
}

static void test_fault_injection_commit(void **state)
{
    (void)state;
    long plain = fault_loop(&(fault_case){ false, true, false, false });
    long held = fault_loop(&(fault_case){ true, true, false, false });
    print_message("fault injection, commit on success: %ld / %ld failing allocations\n",
                  plain, held);
    assert_true(plain > 30);
}

static void test_fault_injection_in_transaction(void **state)
{
    (void)state;
    long plain = fault_loop(&(fault_case){ false, false, true, false });
    long held = fault_loop(&(fault_case){ true, true, true, false });
    print_message("fault injection in a transaction: %ld / %ld failing allocations\n", plain,
                  held);
    assert_true(plain > 50);
}

/* "Rolling back cannot fail": the rollback runs with every allocation
   failing, after partial statements of every length. */
static void test_rollback_allocates_nothing(void **state)
{
    (void)state;
    /* In place on the graph's version, and on a transaction's version
       forked under an own view (a held view outside a transaction makes the
       rollback a swap, which allocates nothing by construction). */
    long a = fault_loop(&(fault_case){ false, false, false, true });
    long b = fault_loop(&(fault_case){ true, false, true, true });
    print_message("rollback under failing allocations after %ld / %ld partial statements\n",
                  a, b);
}

/*
 * Failures injected into a snapshot taken mid-statement: with no view held
 * the snapshot materialises the pre-statement state (allocating), and may
 * fail with STRATA_ENOMEM; the writer's statement must not notice — it
 * goes on and ends (committed on even k, rolled back on odd k) exactly as
 * without the failure, and later snapshots still get the pre-statement
 * state.
 */
static long snapshot_fault_loop(bool hold_view)
{
    fixture f;
    fixture_values(&f);
    strata_graph *ref = build_fixture(&f), *after = build_after(&f);
    char *before = dump_graph(ref), *before_v = view_dump_of(ref);
    char *after_g = dump_graph(after);
    next_ids ids_before = probe_ids(ref), ids_after = probe_ids(after);
    strata_graph_free(&ref);
    strata_graph_free(&after);
    long k, failures = 0;
    for (k = 1;; k++) {
        char what[96];
        snprintf(what, sizeof what, "snapshot with allocation %ld failing (view %d)", k,
                 hold_view);
        strata_graph *g = build_fixture(&f);
        strata_view *held = hold_view ? snap(g) : NULL;
        OK(g, strata_statement_begin(g));
        mix_ids m;
        OK(g, mix_first(g, &f, &m));
        strata_view *v = NULL;
        mem_fail_at(k);
        strata_status s = strata_snapshot(g, &v);
        mem_fail_clear();
        bool done = s == STRATA_OK;
        if (!done) {
            if (s != STRATA_ENOMEM)
                fail_msg("%s: %s (%s)", what, strata_errstr(s), strata_errmsg(g));
            if (v != NULL)
                fail_msg("%s: a failed snapshot set its out parameter", what);
            failures++;
        } else {
            assert_view_is(v, before_v, what);
        }
        strata_view *v2 = snap(g);
        assert_view_is(v2, before_v, what);
        OK(g, mix_second(g, &f, &m));
        strata_view *v3 = snap(g);
        assert_view_is(v3, before_v, what);
        bool commit = k % 2 == 0;
        OK(g, strata_statement_end(g, commit));
        assert_graph_is(g, commit ? after_g : before, what);
        strata_view *all[] = { held, v, v2, v3 };
        for (size_t i = 0; i < 4; i++)
            if (all[i])
                assert_view_is(all[i], before_v, what);
        for (size_t i = 0; i < 4; i++)
            strata_view_release(&all[i]);
        next_ids ids = probe_ids(g);
        assert_ids_equal(&ids, commit ? &ids_after : &ids_before, what);
        strata_graph_free(&g);
        if (done)
            break;
        assert_true(k < 100000);
    }
    free(before);
    free(before_v);
    free(after_g);
    fixture_free(&f);
    return failures;
}

static void test_fault_injection_mid_statement_snapshot(void **state)
{
    (void)state;
    long plain = snapshot_fault_loop(false);
    long held = snapshot_fault_loop(true);
    print_message("mid-statement snapshot: %ld failing allocations materialising, %ld with a "
                  "view held\n", plain, held);
    /* Materialising replays the journal onto a fork: it allocates. */
    assert_true(plain > held);
    assert_true(plain > 5);
}

/* ---- 4. unique constraints inside a statement ------------------------------------------ */

/* The writes around the violations, the same in the statement and in the
   twin that never tries the violating calls. */
static void unique_prefix(strata_graph *g, const fixture *f, strata_id *c)
{
    *c = node_new(g, 1, &f->person);
    set_n(g, *c, f->uid, f->ints[150]);
    set_n(g, 3, f->name, f->strs[0]);
    set_n(g, 5, f->uid, f->ints[150]);   /* 5 is no Person: not in the index */
    OK(g, strata_node_detach_delete(g, 2));
}

static void unique_suffix(strata_graph *g, const fixture *f, strata_id c)
{
    set_n(g, 4, f->age, f->ints[5]);
    set_n(g, c, f->uid, f->ints[102]);   /* freed by node 2's delete */
    OK(g, strata_node_add_label(g, 5, f->extra));
}

static void unique_violations(strata_graph *g, const fixture *f, strata_id c)
{
    /* A set onto a taken key. */
    EXPECT(g, STRATA_ECONSTRAINT, strata_node_set(g, 4, f->uid, f->ints[150]));
    assert_true(strata_errmsg(g)[0] != '\0');
    /* A label that brings a taken key into the index. */
    EXPECT(g, STRATA_ECONSTRAINT, strata_node_add_label(g, 5, f->person));
    /* A key taken by a node created in this statement. */
    EXPECT(g, STRATA_ECONSTRAINT, strata_node_set(g, 0, f->uid, f->ints[150]));
    /* A key of a node that still holds it. */
    EXPECT(g, STRATA_ECONSTRAINT, strata_node_set(g, c, f->uid, f->ints[100]));
}

static void test_unique_violation_in_statement(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *twin = build_fixture(&f);
    char *before = dump_graph(twin);
    strata_id c;
    unique_prefix(twin, &f, &c);
    unique_suffix(twin, &f, c);
    char *want = dump_graph(twin);

    for (int commit = 0; commit < 2; commit++) {
        strata_graph *g = build_fixture(&f);
        strata_view *held = commit ? snap(g) : NULL;
        OK(g, strata_statement_begin(g));
        strata_id c2;
        unique_prefix(g, &f, &c2);
        assert_int_equal(c2, c);
        unique_violations(g, &f, c2);
        unique_suffix(g, &f, c2);   /* the statement goes on after a refusal */
        OK(g, strata_statement_end(g, commit));
        assert_graph_is(g, commit ? want : before,
                        commit ? "committed around refused writes"
                               : "rolled back around refused writes");
        if (held) {
            char *v = dump_view(held);
            strata_view_release(&held);
            strata_graph *fresh = build_fixture(&f);
            char *fv = view_dump_of(fresh);
            assert_dump_equal(v, fv, "the view held across the statement");
            free(v);
            free(fv);
            strata_graph_free(&fresh);
        }
        if (commit) {
            assert_same_future(g, twin, "after the commit");
        } else {
            strata_graph *fresh = build_fixture(&f);
            assert_same_future(g, fresh, "after the rollback");
            strata_graph_free(&fresh);
        }
        strata_graph_free(&g);
    }
    free(before);
    free(want);
    strata_graph_free(&twin);
    fixture_free(&f);
}

/* ---- 5. slot identity ------------------------------------------------------------------ */

static void expect_node_ids(strata_graph *g, const strata_id *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        strata_id got = node_new(g, 0, NULL);
        if (got != want[i])
            fail_msg("create #%zu after the rollback returned node %" PRIu64 ", expected %"
                     PRIu64, i + 1, got, want[i]);
    }
}

static void expect_rel_ids(strata_graph *g, strata_id a, strata_id b, strata_token t,
                           const strata_id *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        strata_id got = rel_new(g, a, b, t);
        if (got != want[i])
            fail_msg("create #%zu after the rollback returned relationship %" PRIu64
                     ", expected %" PRIu64, i + 1, got, want[i]);
    }
}

/*
 * Nodes A..D = 0..3; delete B, then D: free list D(3), B(1).  Statement:
 * create -> 3; delete A (pushes 0); from then on creates take new slots
 * (core/txn.h): 4, 5, 6; delete C (pushes 2); create -> 7; rollback.  The
 * free list is D, B again and the slots end at 4: next creates give 3, 1,
 * 4, 5.
 */
static void test_slot_identity_nodes(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_value *one = strata_value_int(1);
    for (strata_id i = 0; i < 4; i++) {
        assert_int_equal(node_new(g, 0, NULL), i);
        set_n(g, i, k, one);
    }
    OK(g, strata_node_delete(g, 1));
    OK(g, strata_node_delete(g, 3));
    char *before = dump_graph(g);
    for (int held_view = 0; held_view < 2; held_view++) {
        strata_view *held = held_view ? snap(g) : NULL;
        OK(g, strata_statement_begin(g));
        assert_int_equal(node_new(g, 0, NULL), 3);
        OK(g, strata_node_delete(g, 0));
        assert_int_equal(node_new(g, 0, NULL), 4);
        assert_int_equal(node_new(g, 0, NULL), 5);
        assert_int_equal(node_new(g, 0, NULL), 6);
        OK(g, strata_node_delete(g, 2));
        assert_int_equal(node_new(g, 0, NULL), 7);
        OK(g, strata_statement_end(g, false));
        assert_graph_is(g, before, "slot identity: nodes");
        strata_view_release(&held);
    }
    strata_memstats ms;
    OK(g, strata_memory_stats(g, &ms));
    assert_int_equal(ms.node_slots, 4);
    static const strata_id want[] = { 3, 1, 4, 5 };
    expect_node_ids(g, want, 4);
    strata_value_free(&one);
    free(before);
    strata_graph_free(&g);
}

/* The same for relationships (nodes 0 and 1; relationships 0..3; delete 1,
   then 3), plus a detach-delete inside the statement, whose frees must all
   come back to the same ids and adjacency positions; then the same
   detach-delete as a write of its own, whose frees the next creates reuse
   in adjacency order. */
static void test_slot_identity_rels(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token t = tok(g, STRATA_RELTYPE, "T"), u = tok(g, STRATA_RELTYPE, "U");
    node_new(g, 0, NULL);
    node_new(g, 0, NULL);
    node_new(g, 0, NULL);
    for (strata_id i = 0; i < 4; i++)
        assert_int_equal(rel_new(g, 0, 1, t), i);
    assert_int_equal(rel_new(g, 1, 2, u), 4);
    assert_int_equal(rel_new(g, 2, 1, t), 5);
    OK(g, strata_rel_delete(g, 1));
    OK(g, strata_rel_delete(g, 3));
    char *before = dump_graph(g);
    for (int held_view = 0; held_view < 2; held_view++) {
        strata_view *held = held_view ? snap(g) : NULL;
        OK(g, strata_statement_begin(g));
        assert_int_equal(rel_new(g, 0, 1, t), 3);
        OK(g, strata_rel_delete(g, 0));
        assert_int_equal(rel_new(g, 1, 0, t), 6);
        assert_int_equal(rel_new(g, 0, 0, u), 7);
        assert_int_equal(rel_new(g, 0, 1, t), 8);
        OK(g, strata_rel_delete(g, 2));
        OK(g, strata_node_detach_delete(g, 2));
        assert_int_equal(rel_new(g, 0, 1, t), 9);
        assert_int_equal(rel_new(g, 0, 1, t), 10);
        assert_int_equal(node_new(g, 0, NULL), 3);
        OK(g, strata_statement_end(g, false));
        assert_graph_is(g, before, "slot identity: relationships");
        strata_view_release(&held);
    }
    strata_memstats ms;
    OK(g, strata_memory_stats(g, &ms));
    assert_int_equal(ms.rel_slots, 6);
    static const strata_id want[] = { 3, 1, 6, 7 };
    expect_rel_ids(g, 1, 0, t, want, 4);
    /* Node 2: T in (5 is out: 2 -> 1), U in (4).  Adjacency order: (T,
       out) 5, then (U, in) 4; then the node. */
    OK(g, strata_node_detach_delete(g, 2));
    static const strata_id freed[] = { 4, 5 };
    expect_rel_ids(g, 0, 1, t, freed, 2);
    assert_int_equal(node_new(g, 0, NULL), 2);
    free(before);
    strata_graph_free(&g);
}

/* ---- 6. transactions ------------------------------------------------------------------- */

/* The transaction's surviving writes, as direct writes: node P with a
   relationship, node 8's age, node Q. */
static void txn_kept_writes(strata_graph *g, const fixture *f)
{
    strata_id p = node_new(g, 1, &f->tag);
    assert_int_equal(p, fix_next_nodes[0]);
    set_n(g, p, f->name, f->strs[2]);
    rel_new(g, p, 0, f->likes);
    set_n(g, 8, f->age, f->ints[1]);
    node_new(g, 1, &f->extra);
}

/* Inside a transaction a write must see the transaction's own earlier
   writes: a node created in it exists, a node deleted in it does not, and
   the ids handed out follow the transaction's free lists. */
static void test_transaction_sees_its_own_writes(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f);
    OK(g, strata_begin(g));
    strata_id p = node_new(g, 1, &f.tag);
    assert_int_equal(p, fix_next_nodes[0]);
    strata_status s = strata_node_set(g, p, f.name, f.strs[0]);
    if (s != STRATA_OK)
        fail_msg("in a transaction, setting a property of node %" PRIu64 " created in it: %s "
                 "(%s) — the write was validated against the committed state, not the "
                 "transaction's", p, strata_errstr(s), strata_errmsg(g));
    strata_id q = node_new(g, 0, NULL);
    assert_int_equal(q, fix_next_nodes[1]);
    OK(g, strata_node_delete(g, 17));
    s = strata_node_set(g, 17, f.name, f.strs[0]);
    if (s != STRATA_ENOTFOUND)
        fail_msg("in a transaction, setting a property of node 17 deleted in it: %s, "
                 "expected not found", strata_errstr(s));
    s = strata_node_add_label(g, 17, f.extra);
    if (s != STRATA_ENOTFOUND)
        fail_msg("in a transaction, labelling node 17 deleted in it: %s, expected not found",
                 strata_errstr(s));
    strata_id r = UINT64_MAX;
    s = strata_rel_create(g, p, q, f.likes, &r);
    if (s != STRATA_OK)
        fail_msg("in a transaction, a relationship between nodes created in it: %s (%s)",
                 strata_errstr(s), strata_errmsg(g));
    assert_int_equal(r, fix_next_rels[0]);
    s = strata_rel_set(g, r, f.w, f.ints[1]);
    if (s != STRATA_OK)
        fail_msg("in a transaction, setting a property of relationship %" PRIu64
                 " created in it: %s (%s)", r, strata_errstr(s), strata_errmsg(g));
    strata_view *own = snap_own(g);
    check_view(own);
    strata_view_release(&own);
    OK(g, strata_commit(g));
    check_graph(g);
    strata_graph_free(&g);
    fixture_free(&f);
}

static void test_transaction_commit(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *twin = build_fixture(&f);
    char *before_v = view_dump_of(g);
    txn_kept_writes(twin, &f);
    char *want = dump_graph(twin), *want_v = view_dump_of(twin);

    assert_false(strata_in_transaction(g));
    OK(g, strata_begin(g));
    assert_true(strata_in_transaction(g));
    strata_view *at_begin = snap(g);
    /* Direct writes. */
    strata_id p = node_new(g, 1, &f.tag);
    set_n(g, p, f.name, f.strs[2]);
    rel_new(g, p, 0, f.likes);
    strata_view *v = snap(g);
    assert_view_is(v, before_v, "a reader during the transaction");
    strata_view_release(&v);
    /* A committed statement. */
    OK(g, strata_statement_begin(g));
    set_n(g, 8, f.age, f.ints[1]);
    v = snap(g);
    assert_view_is(v, before_v, "a reader during a statement in the transaction");
    strata_view_release(&v);
    EXPECT(g, STRATA_EINVAL, strata_snapshot_own(g, &v));
    assert_null(v);
    node_new(g, 1, &f.extra);
    OK(g, strata_statement_end(g, true));
    strata_view *own_mid = snap_own(g);
    char *own_mid_d = dump_view(own_mid);
    /* A statement rolled back alone. */
    OK(g, strata_statement_begin(g));
    set_n(g, 9, f.name, f.strs[3]);
    OK(g, strata_node_detach_delete(g, 3));
    node_new(g, 0, NULL);
    rel_new(g, 0, 1, f.likes);
    OK(g, strata_statement_end(g, false));
    /* A statement that fails part way and is rolled back alone. */
    OK(g, strata_statement_begin(g));
    set_n(g, 10, f.age, f.ints[2]);
    node_new(g, 1, &f.person);
    EXPECT(g, STRATA_ECONSTRAINT, strata_node_set(g, 12, f.uid, f.ints[100]));
    OK(g, strata_statement_end(g, false));
    /* The writer sees its transaction; readers still the committed state. */
    strata_view *own = snap_own(g);
    assert_view_is(own, want_v, "the transaction's own view");
    assert_view_is(own_mid, own_mid_d, "an own view from earlier in the transaction");
    v = snap(g);
    assert_view_is(v, before_v, "a reader before the commit");
    strata_view_release(&v);
    OK(g, strata_commit(g));
    assert_false(strata_in_transaction(g));
    assert_graph_is(g, want, "after the commit");
    assert_view_is(at_begin, before_v, "a view from the start of the transaction");
    assert_view_is(own, want_v, "the own view, after the commit");
    strata_view_release(&at_begin);
    strata_view_release(&own);
    strata_view_release(&own_mid);
    assert_same_future(g, twin, "after the commit");
    free(own_mid_d);
    free(before_v);
    free(want);
    free(want_v);
    strata_graph_free(&g);
    strata_graph_free(&twin);
    fixture_free(&f);
}

static void test_transaction_rollback(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *twin = build_fixture(&f);
    char *before = dump_graph(g), *before_v = view_dump_of(g);
    for (int open_statement = 0; open_statement < 2; open_statement++) {
        OK(g, strata_begin(g));
        txn_kept_writes(g, &f);
        OK(g, strata_statement_begin(g));
        mix_ids m;
        OK(g, mix_all(g, &f, &m));
        OK(g, strata_statement_end(g, true));
        strata_view *own = snap_own(g);
        char *own_d = dump_view(own);
        OK(g, strata_node_detach_delete(g, 14));
        if (open_statement) {
            /* Rolling back with a statement open drops it too. */
            OK(g, strata_statement_begin(g));
            OK(g, strata_node_detach_delete(g, 0));
        }
        OK(g, strata_rollback(g));
        assert_false(strata_in_transaction(g));
        assert_graph_is(g, before, "after the transaction's rollback");
        assert_view_is(own, own_d, "an own view held across the rollback");
        strata_view_release(&own);
        free(own_d);
        EXPECT(g, STRATA_EINVAL, strata_statement_end(g, false));
        assert_graph_is(g, before, "after a refused statement end");
    }
    strata_view *v = snap(g);
    assert_view_is(v, before_v, "a fresh view");
    strata_view_release(&v);
    assert_same_future(g, twin, "after the rollbacks");
    free(before);
    free(before_v);
    strata_graph_free(&g);
    strata_graph_free(&twin);
    fixture_free(&f);
}

/* Misuse is STRATA_EINVAL with a message, and changes nothing: neither the
   graph nor the open statement or transaction. */
static void test_misuse(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *twin = build_fixture(&f);
    char *before = dump_graph(g);
    strata_token key = f.solo;
    strata_index idx = UINT32_MAX;

    EXPECT(g, STRATA_EINVAL, strata_commit(g));
    assert_true(strata_errmsg(g)[0] != '\0');
    EXPECT(g, STRATA_EINVAL, strata_rollback(g));
    EXPECT(g, STRATA_EINVAL, strata_statement_end(g, true));
    EXPECT(g, STRATA_EINVAL, strata_statement_end(g, false));
    assert_graph_is(g, before, "after misuse outside everything");

    /* Inside a statement. */
    OK(g, strata_statement_begin(g));
    set_n(g, 0, f.age, f.ints[42]);
    EXPECT(g, STRATA_EINVAL, strata_statement_begin(g));
    EXPECT(g, STRATA_EINVAL, strata_begin(g));
    EXPECT(g, STRATA_EINVAL, strata_commit(g));
    EXPECT(g, STRATA_EINVAL, strata_rollback(g));
    EXPECT(g, STRATA_EINVAL,
           strata_index_create(g, STRATA_INDEX_HASH, false, f.tag, &key, 1, &idx));
    EXPECT(g, STRATA_EINVAL, strata_index_drop(g, f.by_name));
    strata_view *v = NULL;
    EXPECT(g, STRATA_EINVAL, strata_snapshot_own(g, &v));
    assert_null(v);
    assert_false(strata_in_transaction(g));
    set_n(g, 1, f.age, f.ints[43]);   /* the statement is still open and works */
    OK(g, strata_statement_end(g, false));
    assert_graph_is(g, before, "the statement, rolled back after misuse inside it");

    /* Inside a transaction. */
    OK(g, strata_begin(g));
    set_n(g, 0, f.age, f.ints[44]);
    EXPECT(g, STRATA_EINVAL, strata_begin(g));
    assert_true(strata_in_transaction(g));
    EXPECT(g, STRATA_EINVAL, strata_statement_end(g, true));
    EXPECT(g, STRATA_EINVAL,
           strata_index_create(g, STRATA_INDEX_RANGE, false, f.tag, &key, 1, &idx));
    EXPECT(g, STRATA_EINVAL, strata_index_drop(g, f.by_age));
    OK(g, strata_statement_begin(g));
    set_n(g, 1, f.age, f.ints[45]);
    EXPECT(g, STRATA_EINVAL, strata_commit(g));
    EXPECT(g, STRATA_EINVAL, strata_begin(g));
    EXPECT(g, STRATA_EINVAL, strata_snapshot_own(g, &v));
    EXPECT(g, STRATA_EINVAL,
           strata_index_create(g, STRATA_INDEX_HASH, false, f.tag, &key, 1, &idx));
    OK(g, strata_statement_end(g, false));
    assert_true(strata_in_transaction(g));
    v = snap_own(g);
    strata_value *age = NULL;
    OK(g, strata_node_get(v, 0, f.age, &age));
    assert_int_equal(strata_value_equals(age, f.ints[44]), 1);
    strata_value_free(&age);
    OK(g, strata_node_get(v, 1, f.age, &age));
    assert_int_equal(strata_value_equals(age, f.ints[1]), 1);
    strata_value_free(&age);
    strata_view_release(&v);
    OK(g, strata_rollback(g));
    assert_graph_is(g, before, "after misuse inside a transaction");
    /* Indices cannot be touched in either; the index set is unchanged. */
    v = snap(g);
    size_t n = 0;
    OK(g, strata_indexes(v, NULL, 0, &n));
    assert_int_equal(n, 5);
    strata_view_release(&v);
    assert_same_future(g, twin, "after misuse");
    free(before);
    strata_graph_free(&g);
    strata_graph_free(&twin);
    fixture_free(&f);
}

/* ---- 7. strata_is_forked around statements ----------------------------------------------- */

static void expect_forked(strata_graph *g, bool want, const char *when)
{
    if (strata_is_forked(g) != want)
        fail_msg("strata_is_forked is %s %s", want ? "false" : "true", when);
}

static void test_is_forked_around_statements(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f);
    set_n(g, 0, f.age, f.ints[1]);
    expect_forked(g, false, "after a write with no view ever taken");

    /* No view at all: never forked. */
    for (int commit = 0; commit < 2; commit++) {
        OK(g, strata_statement_begin(g));
        set_n(g, 0, f.age, f.ints[2]);
        node_new(g, 0, NULL);
        expect_forked(g, false, "during a statement with no view");
        OK(g, strata_statement_end(g, commit));
        expect_forked(g, false, "after a statement with no view");
    }

    /* A view held before the statement: forked from its first write, and
       still after the commit while the view lives. */
    strata_view *v = snap(g);
    OK(g, strata_statement_begin(g));
    expect_forked(g, false, "with a view held but no write yet");
    set_n(g, 0, f.age, f.ints[3]);
    expect_forked(g, true, "after a statement's first write under a held view");
    OK(g, strata_statement_end(g, true));
    expect_forked(g, true, "after committing that statement, the view still held");
    strata_view_release(&v);
    set_n(g, 0, f.age, f.ints[4]);
    expect_forked(g, false, "after the view was released and the graph written: the version "
                            "the committed statement replaced is never folded back");

    /* The same, rolled back; a write under the view then forks again. */
    v = snap(g);
    OK(g, strata_statement_begin(g));
    set_n(g, 0, f.age, f.ints[5]);
    expect_forked(g, true, "after the first write under a held view of a statement to be "
                           "rolled back");
    /* Rolled back, the graph is the view's own version again: like a view
       taken and not yet written under, which the header leaves open. */
    OK(g, strata_statement_end(g, false));
    set_n(g, 0, f.age, f.ints[6]);   /* a write under the view forks again */
    expect_forked(g, true, "after a write under the view, following the rollback");
    strata_view_release(&v);
    set_n(g, 0, f.age, f.ints[7]);
    expect_forked(g, false, "after the view was released and the graph written");

    /* A view taken mid-statement (materialised): the statement's later
       writes go on under a held view that shares the graph's structure. */
    OK(g, strata_statement_begin(g));
    set_n(g, 0, f.age, f.ints[8]);
    v = snap(g);
    set_n(g, 1, f.age, f.ints[8]);
    expect_forked(g, true, "after a write made while a view taken mid-statement "
                           "(materialised) shares the graph's structure");
    OK(g, strata_statement_end(g, true));
    expect_forked(g, true, "after committing, the materialised view still held");
    strata_view_release(&v);
    set_n(g, 0, f.age, f.ints[9]);
    expect_forked(g, false, "after the materialised view was released and the graph written");
    strata_graph_free(&g);
    fixture_free(&f);
}

/* A statement committed while a view holds the state before it: once the
   view is gone, the next write folds the old version back — the graph is
   no longer forked — and, round after round, nothing accumulates: the
   graph's bytes grow no more than those of a twin making the same writes
   directly under the same views (level stacks flatten every few rounds in
   both, so the comparison is over whole cycles). */
#define LEAK_ROUNDS 40

static void leak_round(strata_graph *g, const fixture *f, int round, bool statement)
{
    strata_view *v = snap(g);
    if (statement)
        OK(g, strata_statement_begin(g));
    for (strata_id n = 0; n < FIX_NODES; n++)
        if (n != 11 && n != 16)   /* the holes */
            set_n(g, n, f->age, f->ints[round]);
    if (statement)
        OK(g, strata_statement_end(g, true));
    strata_view_release(&v);
    set_n(g, 0, f->name, f->strs[0]);
}

static void test_commit_under_view_releases_old_version(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f), *direct = build_fixture(&f);
    uint64_t mid[2] = { 0, 0 };
    for (int round = 0; round < LEAK_ROUNDS; round++) {
        leak_round(g, &f, round, true);
        leak_round(direct, &f, round, false);
        strata_memstats ms, md;
        OK(g, strata_memory_stats(g, &ms));
        OK(direct, strata_memory_stats(direct, &md));
        if (strata_is_forked(g))
            fail_msg("round %d: still forked after the view was released and the graph "
                     "written: the version the committed statement replaced is never folded "
                     "back (graph bytes %" PRIu64 ", %" PRIu64 " for the same writes made "
                     "directly)", round, ms.graph_bytes, md.graph_bytes);
        assert_false(strata_is_forked(direct));
        if (round == LEAK_ROUNDS / 2) {
            mid[0] = ms.graph_bytes;
            mid[1] = md.graph_bytes;
        } else if (round == LEAK_ROUNDS - 1 &&
                   ms.graph_bytes - mid[0] > md.graph_bytes - mid[1] + 1024) {
            fail_msg("graph bytes grew by %" PRIu64 " over rounds %d..%d with no view held "
                     "after each round, against %" PRIu64 " for the same writes made "
                     "directly: replaced versions accumulate", ms.graph_bytes - mid[0],
                     LEAK_ROUNDS / 2, round, md.graph_bytes - mid[1]);
        }
    }
    char *want = dump_graph(direct);
    assert_graph_is(g, want, "the same writes, in statements and directly");
    free(want);
    strata_graph_free(&g);
    strata_graph_free(&direct);
    fixture_free(&f);
}

/* strata_memory_stats' node and relationship counts are those of the last
   committed state (the header says so): neither an open statement's writes
   nor an open transaction's show in them. */
static void test_memory_stats_count_committed_state(void **state)
{
    (void)state;
    fixture f;
    fixture_values(&f);
    strata_graph *g = build_fixture(&f);
    strata_memstats before, now;
    OK(g, strata_memory_stats(g, &before));
    for (int txn = 1; txn >= 0; txn--) {
        if (txn)
            OK(g, strata_begin(g));
        OK(g, strata_statement_begin(g));
        node_new(g, 0, NULL);
        node_new(g, 0, NULL);
        rel_new(g, 0, 1, f.likes);
        OK(g, strata_node_detach_delete(g, 2));
        OK(g, strata_memory_stats(g, &now));
        if (now.nodes != before.nodes || now.relationships != before.relationships)
            fail_msg("during a statement%s, strata_memory_stats counts %" PRIu64 " nodes and %"
                     PRIu64 " relationships; the last committed state has %" PRIu64 " and %"
                     PRIu64, txn ? " in a transaction" : "", now.nodes, now.relationships,
                     before.nodes, before.relationships);
        OK(g, strata_statement_end(g, true));
        if (txn)
            OK(g, strata_commit(g));
        OK(g, strata_memory_stats(g, &now));
        strata_view *v = snap(g);
        assert_int_equal(now.nodes, strata_node_count(v));
        assert_int_equal(now.relationships, strata_rel_count(v));
        assert_int_equal(now.nodes, before.nodes + 1);
        strata_view_release(&v);
        before = now;
    }
    strata_graph_free(&g);
    fixture_free(&f);
}

/* A statement never hands out an id it freed itself: after its first
   delete of a kind, its creates of that kind take new ids at the end
   (core/txn.h says why), whether it commits or rolls back; the next
   statement reuses the freed ids, most recent first, as ever.  Through
   Cypher, a deleted node's variable keeps showing a deleted node after a
   CREATE in the same statement, not the node the CREATE made. */
static void test_statement_takes_no_id_it_freed(void **state)
{
    (void)state;
    strata_graph *g;
    OK(g, strata_graph_new(&g));
    strata_token t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node_new(g, 0, NULL), b = node_new(g, 0, NULL), c = node_new(g, 0, NULL);
    strata_id r1 = rel_new(g, a, b, t), r2 = rel_new(g, b, c, t);
    assert_int_equal(b, 1);
    assert_int_equal(r2, 1);

    for (int commit = 0; commit <= 1; commit++) {
        OK(g, strata_statement_begin(g));
        OK(g, strata_node_detach_delete(g, b));   /* frees r1, r2 and b */
        strata_id x = node_new(g, 0, NULL), r = rel_new(g, a, c, t);
        assert_int_equal(x, 3);   /* not b */
        assert_int_equal(r, 2);   /* neither r1 nor r2 */
        OK(g, strata_statement_end(g, commit));
        check_graph(g);
    }
    /* Committed: b, r1 and r2 are free, and the next statement reuses them. */
    assert_int_equal(node_new(g, 0, NULL), b);
    strata_id again = rel_new(g, a, c, t);
    assert_true(again == r1 || again == r2);

    /* A statement that has deleted nothing still reuses freed ids. */
    strata_id d = node_new(g, 0, NULL);
    OK(g, strata_node_delete(g, d));
    OK(g, strata_statement_begin(g));
    assert_int_equal(node_new(g, 0, NULL), d);
    OK(g, strata_statement_end(g, true));
    strata_graph_free(&g);

    OK(g, strata_graph_new(&g));
    strata_result *res = NULL;
    OK(g, strata_query(g, "CREATE (:A {num: 1})", NULL, &res));
    strata_result_free(&res);
    OK(g, strata_query(g, "MATCH (a:A) DELETE a CREATE (b:B {x: 5}) "
                          "RETURN labels(a) AS l, a.x AS x, id(a) = id(b) AS same",
                       NULL, &res));
    const strata_value *const *row;
    assert_true(strata_result_next(res, &row));
    assert_int_equal(strata_value_type(row[0]), STRATA_LIST);
    assert_int_equal(strata_value_list_len(row[0]), 0);
    assert_int_equal(strata_value_type(row[1]), STRATA_NULL);
    bool same = true;
    OK(g, strata_value_get_bool(row[2], &same));
    assert_false(same);
    assert_false(strata_result_next(res, &row));
    strata_result_free(&res);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollback_restores_everything),
        cmocka_unit_test(test_statement_takes_no_id_it_freed),
        cmocka_unit_test(test_empty_and_refused_statements),
        cmocka_unit_test(test_commit_keeps_writes),
        cmocka_unit_test(test_views_held_across_statement),
        cmocka_unit_test(test_views_taken_before_first_write),
        cmocka_unit_test(test_views_materialised_mid_statement),
        cmocka_unit_test(test_mid_statement_view_released_early),
        cmocka_unit_test(test_unique_violation_in_statement),
        cmocka_unit_test(test_slot_identity_nodes),
        cmocka_unit_test(test_slot_identity_rels),
        cmocka_unit_test(test_transaction_sees_its_own_writes),
        cmocka_unit_test(test_transaction_commit),
        cmocka_unit_test(test_transaction_rollback),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_is_forked_around_statements),
        cmocka_unit_test(test_commit_under_view_releases_old_version),
        cmocka_unit_test(test_memory_stats_count_committed_state),
        cmocka_unit_test(test_fault_injection_rollback),
        cmocka_unit_test(test_fault_injection_commit),
        cmocka_unit_test(test_fault_injection_in_transaction),
        cmocka_unit_test(test_rollback_allocates_nothing),
        cmocka_unit_test(test_fault_injection_mid_statement_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
