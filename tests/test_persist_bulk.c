/*
 * The loader's bulk paths on a graph large enough to use them all: chunk
 * vectors several levels deep (test builds use 4-entry chunks and B+tree
 * nodes), a hub with thousands of relationships of every type in both
 * directions and self-loops, nodes with no, one and several labels, with
 * and without properties, deleted slots on both free lists with ids
 * already reused, and indices of every kind (a constraint among them) on
 * nodes and relationships, built from keys that arrive in id order and
 * from keys that do not.
 *
 * The loaded graph must equal the saved one completely: the canonical dump
 * (persist_support.h), every node's adjacency entry by entry (each segment
 * as a set, and in relationship id order after the load), the label and
 * type counts, every index's entries in order, the integrity check, and
 * the bytes a second save writes.  Then: a unique index whose data hold
 * duplicates names the pair an insertion in id order meets first, and
 * every allocation of a load of this shape may fail cleanly.
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
#include "core/persist_codec.h"
#include "index/level_stack.h"
#include "storage/adjacency.h"
#include "support/adj_runs.h"
#include "storage/mem.h"

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

static strata_token tok(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    OK(g, strata_token_intern(g, kind, name, &t));
    return t;
}

static void set_int(strata_graph *g, bool is_rel, strata_id id, strata_token key, int64_t x)
{
    strata_value *v = strata_value_int(x);
    if (is_rel)
        OK(g, strata_rel_set(g, id, key, v));
    else
        OK(g, strata_node_set(g, id, key, v));
    strata_value_free(&v);
}

static void set_str(strata_graph *g, strata_id id, strata_token key, const char *s)
{
    strata_value *v = strata_value_string(s, strlen(s));
    OK(g, strata_node_set(g, id, key, v));
    strata_value_free(&v);
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static strata_index index_on(strata_graph *g, strata_index_kind kind, bool rels,
                             strata_token token, size_t n, const strata_token *keys)
{
    strata_index idx = 0;
    OK(g, strata_index_create(g, kind, rels, token, keys, n, &idx));
    return idx;
}

/* The shape described at the top, with nodes ordinary nodes and rels
   random relationships besides the hub's. */
static strata_graph *big_graph(int nodes, int rels)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token a = tok(g, STRATA_LABEL, "A"), b = tok(g, STRATA_LABEL, "B");
    strata_token c = tok(g, STRATA_LABEL, "C");
    strata_token types[5];
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof name, "T%d", i);
        types[i] = tok(g, STRATA_RELTYPE, name);
    }
    strata_token kn = tok(g, STRATA_KEY, "n"), ks = tok(g, STRATA_KEY, "s");
    strata_token ku = tok(g, STRATA_KEY, "u"), kw = tok(g, STRATA_KEY, "w");
    strata_token kcode = tok(g, STRATA_KEY, "code"), kid = tok(g, STRATA_KEY, "id");
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < nodes; i++) {
        strata_token labels[3];
        size_t nl = 0;
        if (i % 3 != 2)
            labels[nl++] = a;
        if (i % 3 == 1)
            labels[nl++] = b;
        if (i % 4 == 0)
            labels[nl++] = c;
        strata_id id;
        OK(g, strata_node_create(g, labels, nl, &id));
        if (i % 11 == 0)
            continue;   /* no properties */
        set_int(g, false, id, kid, i);                            /* ascends with ids */
        set_int(g, false, id, kn, (int64_t)(((uint64_t)i * 7919) % 997));  /* does not */
        if (i % 2 == 0) {
            char s[24];
            snprintf(s, sizeof s, "s%d", i % 50);
            set_str(g, id, ks, s);
        }
        if (i % 4 == 0)
            set_int(g, false, id, ku, nodes - i);   /* unique among C nodes */
    }
    /* The hub: node 1, thousands of relationships of every type, out, in
       and to itself. */
    const strata_id hub = 1;
    for (int i = 0; i < 3000; i++) {
        strata_id other = next_rand(&seed) % (uint64_t)nodes, r;
        strata_token t = types[i % 5];
        if (i % 3 == 0)
            OK(g, strata_rel_create(g, hub, other, t, &r));
        else if (i % 3 == 1)
            OK(g, strata_rel_create(g, other, hub, t, &r));
        else
            OK(g, strata_rel_create(g, hub, hub, t, &r));
        if (i % 2)
            set_int(g, true, r, kw, i % 100);
    }
    for (int i = 0; i < rels; i++) {
        uint64_t x = next_rand(&seed);
        strata_id r;
        strata_token t = types[x % 5];
        OK(g, strata_rel_create(g, (x >> 8) % (uint64_t)nodes, (x >> 32) % (uint64_t)nodes, t,
                                &r));
        if (x % 3 == 0)
            set_int(g, true, r, kw, (int64_t)(x % 1000));
        if (t == types[2])
            set_int(g, true, r, kcode, i);   /* unique among T2 */
    }
    /* Deletions, reuse of their ids, and more deletions: both free lists
       end up non-empty, in an order that is neither ascending nor
       descending. */
    bool *gone_rel = calloc((size_t)rels + 3000, 1), *gone_node = calloc((size_t)nodes, 1);
    for (int i = 0; i < 60; i++) {
        strata_id r = 3000 + next_rand(&seed) % (uint64_t)rels;
        if (!gone_rel[r])
            OK(g, strata_rel_delete(g, r));
        gone_rel[r] = true;
    }
    /* Detach-deleting a node deletes its relationships too: after this,
       rels are only deleted by what the graph says exists. */
    for (int i = 0; i < 40; i++) {
        strata_id n = 2 + next_rand(&seed) % (uint64_t)(nodes - 2);
        if (!gone_node[n])
            OK(g, strata_node_detach_delete(g, n));
        gone_node[n] = true;
    }
    for (int i = 0; i < 15; i++) {
        strata_id n, r;
        OK(g, strata_node_create(g, &a, 1, &n));
        set_int(g, false, n, kn, 5000 + i);
        OK(g, strata_rel_create(g, n, hub, types[i % 5], &r));
    }
    for (int deleted = 0; deleted < 20;) {
        strata_id r = 3000 + next_rand(&seed) % (uint64_t)rels, s, e;
        strata_token t;
        strata_view *v = NULL;
        OK(g, strata_snapshot(g, &v));
        bool live = strata_rel_info(v, r, &s, &e, &t) == STRATA_OK;
        strata_view_release(&v);
        if (live) {
            OK(g, strata_rel_delete(g, r));
            deleted++;
        }
    }
    /* A node picked before is skipped: deleted already, or its id reused
       by the creates above. */
    for (int i = 0; i < 10; i++) {
        strata_id n = 2 + next_rand(&seed) % (uint64_t)(nodes - 2);
        if (!gone_node[n])
            OK(g, strata_node_detach_delete(g, n));
        gone_node[n] = true;
    }
    free(gone_rel);
    free(gone_node);
    index_on(g, STRATA_INDEX_RANGE, false, a, 1, &kn);
    index_on(g, STRATA_INDEX_RANGE, false, a, 1, &kid);
    index_on(g, STRATA_INDEX_HASH, false, b, 1, &ks);
    index_on(g, STRATA_INDEX_UNIQUE, false, c, 1, &ku);
    strata_token pair[2] = { kn, ks };
    index_on(g, STRATA_INDEX_HASH, false, a, 2, pair);
    index_on(g, STRATA_INDEX_RANGE, true, types[0], 1, &kw);
    index_on(g, STRATA_INDEX_UNIQUE, true, types[2], 1, &kcode);
    return g;
}

static strata_graph *load_ok(const char *path)
{
    strata_graph *g = NULL;
    char err[512];
    strata_status s = strata_load_ex(path, &g, err, sizeof err);
    if (s != STRATA_OK)
        fail_msg("load %s: %s (%s)", path, strata_errstr(s), err);
    return g;
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*n ? *n : 1);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void write_all(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static int cmp_entry(const void *x, const void *y)
{
    const adj_entry *a = x, *b = y;
    if (a->rel != b->rel)
        return a->rel < b->rel ? -1 : 1;
    return (a->other > b->other) - (a->other < b->other);
}

/* Node id's adjacency in the two stores: the same segments, each holding
   the same entries; the loaded one lists each segment in relationship id
   order.  Returns the node's degree. */
static uint64_t same_adjacency(const store *want, const store *got, uint64_t id)
{
    const adj_block *x = store_node_adj(want, id), *y = store_node_adj(got, id);
    assert_int_equal(adj_nsegments(x), adj_nsegments(y));
    assert_int_equal(adj_len(x), adj_len(y));
    for (uint32_t s = 0; s < adj_nsegments(x); s++) {
        int dx, dy;
        uint32_t tx, ty, nx, ny;
        adj_segment_info(x, s, &dx, &tx);
        adj_segment_info(y, s, &dy, &ty);
        adj_entry *ex = adj_runs_gather(x, s, &nx), *ey = adj_runs_gather(y, s, &ny);
        assert_int_equal(dx, dy);
        assert_int_equal(tx, ty);
        assert_int_equal(nx, ny);
        adj_entry *sorted = malloc(nx * sizeof *sorted + 1);
        memcpy(sorted, ex, nx * sizeof *sorted);
        qsort(sorted, nx, sizeof *sorted, cmp_entry);
        for (uint32_t i = 0; i < nx; i++) {
            assert_int_equal(sorted[i].rel, ey[i].rel);
            assert_int_equal(sorted[i].other, ey[i].other);
        }
        free(sorted);
        free(ex);
        free(ey);
    }
    return adj_len(y);
}

/* Every index's entries, walked in order in both versions. */
static void same_indexes(const version *want, const version *got)
{
    assert_int_equal(idxset_len(want->indexes), idxset_len(got->indexes));
    assert_int_equal(idxset_next_id(want->indexes), idxset_next_id(got->indexes));
    for (uint32_t i = 0; i < idxset_len(want->indexes); i++) {
        const index_def *dw = idxset_def(want->indexes, i), *dg = idxset_def(got->indexes, i);
        assert_memory_equal(dw, dg, sizeof *dw);
        const level_stack *sw = idxset_stack(want->indexes, i);
        const level_stack *sg = idxset_stack(got->indexes, i);
        assert_int_equal(lstack_count(sw), lstack_count(sg));
        assert_int_equal(lstack_depth(sg), 0);
        assert_int_equal(lstack_check(sg), 0);
        lstack_cursor *cw = lstack_seek(sw, mem_scratch(), NULL);
        lstack_cursor *cg = lstack_seek(sg, mem_scratch(), NULL);
        uint64_t n = 0;
        const value *kw, *kg;
        uint64_t iw, ig;
        for (;;) {
            bool hw = cw && lstack_cursor_get(cw, &kw, &iw);
            bool hg = cg && lstack_cursor_get(cg, &kg, &ig);
            assert_int_equal(hw, hg);
            if (!hw)
                break;
            assert_int_equal(value_order(kw, kg), 0);
            assert_int_equal(iw, ig);
            lstack_cursor_next(cw);
            lstack_cursor_next(cg);
            n++;
        }
        assert_int_equal(n, lstack_count(sg));
        lstack_cursor_free(&cw, mem_scratch());
        lstack_cursor_free(&cg, mem_scratch());
    }
}

static void test_big_round_trip(void **state)
{
    (void)state;
    const int nodes = 3000, rels = 12000;
    strata_graph *g = big_graph(nodes, rels);
    strata_view *vw = NULL;
    OK(g, strata_snapshot(g, &vw));
    const store *sw = &vw->ver->st;
    /* The shape the test is about. */
    assert_true(sw->node_meta.height >= 4);
    assert_true(sw->rel_meta.height >= 5);
    assert_true(sw->node_free != SLOT_END && sw->rel_free != SLOT_END);
    assert_true(adj_len(store_node_adj(sw, 1)) > 3000);
    char *want = dump_view(vw);
    OK(g, strata_save(g, tmp_path("big.db")));
    strata_graph *h = load_ok(tmp_path("big.db"));
    strata_view *vg = NULL;
    OK(h, strata_snapshot(h, &vg));
    const store *sg = &vg->ver->st;
    char *got = dump_view(vg);
    if (strcmp(want, got) != 0)
        fail_msg("the loaded graph differs from the saved view");
    free(got);
    /* Slots, counts and free lists. */
    assert_int_equal(store_node_slots(sw), store_node_slots(sg));
    assert_int_equal(store_rel_slots(sw), store_rel_slots(sg));
    assert_int_equal(sw->node_live, sg->node_live);
    assert_int_equal(sw->rel_live, sg->rel_live);
    assert_int_equal(sw->node_free, sg->node_free);
    assert_int_equal(sw->rel_free, sg->rel_free);
    for (uint64_t id = 0; id < store_node_slots(sw); id++)
        assert_int_equal(store_node_link(sw, id), store_node_link(sg, id));
    for (uint64_t id = 0; id < store_rel_slots(sw); id++) {
        assert_int_equal(store_rel_link(sw, id), store_rel_link(sg, id));
        const rel_meta *rw = store_rel(sw, id), *rg = store_rel(sg, id);
        assert_int_equal(rw != NULL, rg != NULL);
        if (rw) {   /* the slot's fields; its props pointer is the load's own record */
            assert_int_equal(rw->start, rg->start);
            assert_int_equal(rw->end, rg->end);
            assert_int_equal(rw->type, rg->type);
            assert_int_equal(rw->link, rg->link);
        }
    }
    /* Adjacency, entry by entry; degrees add up to twice the relationships. */
    uint64_t degrees = 0;
    for (uint64_t id = 0; id < store_node_slots(sw); id++)
        degrees += same_adjacency(sw, sg, id);
    assert_int_equal(degrees, 2 * sg->rel_live);
    /* Label and type bitmaps. */
    for (uint32_t t = 0; t < 5; t++) {
        assert_int_equal(labelidx_count(vw->ver->labels, t), labelidx_count(vg->ver->labels, t));
        assert_int_equal(labelidx_count(vw->ver->rel_types, t),
                         labelidx_count(vg->ver->rel_types, t));
    }
    same_indexes(vw->ver, vg->ver);
    strata_view_release(&vg);
    strata_view_release(&vw);
    check_integrity(h);
    /* A second save writes the same bytes. */
    OK(h, strata_save(h, tmp_path("again.db")));
    size_t n1, n2;
    unsigned char *f1 = read_all(tmp_path("big.db"), &n1), *f2 = read_all(tmp_path("again.db"), &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(f1, f2, n1);
    free(f1);
    free(f2);
    /* Both graphs go on alike: the next creates reuse the same ids. */
    strata_graph *pair[2] = { g, h };
    strata_id made[2][4];
    for (int i = 0; i < 2; i++) {
        strata_token a = tok(pair[i], STRATA_LABEL, "A");
        OK(pair[i], strata_node_create(pair[i], &a, 1, &made[i][0]));
        OK(pair[i], strata_node_create(pair[i], &a, 1, &made[i][1]));
        OK(pair[i], strata_rel_create(pair[i], made[i][0], 1, tok(pair[i], STRATA_RELTYPE, "T3"),
                                      &made[i][2]));
        OK(pair[i], strata_rel_create(pair[i], 1, made[i][1], tok(pair[i], STRATA_RELTYPE, "T0"),
                                      &made[i][3]));
    }
    assert_memory_equal(made[0], made[1], sizeof made[0]);
    char *after = dump_graph(g);
    char *after_h = dump_graph(h);
    assert_string_equal(after, after_h);
    check_integrity(h);
    free(after);
    free(after_h);
    free(want);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

/* Patches the INDX section's first index kind to kind and re-seals the
   section's checksums. */
static void patch_index_kind(unsigned char *f, size_t n, uint8_t from, uint8_t kind)
{
    unsigned char *sec = memmem(f, n, "INDX", 4);
    assert_non_null(sec);
    unsigned char *payload = sec + PCODEC_SECTION_HEADER;
    /* next id, count, the first index's id: one byte each here. */
    assert_int_equal(payload[3], from);
    payload[3] = kind;
    uint64_t len = 0;
    for (int i = 0; i < 8; i++)
        len |= (uint64_t)sec[8 + i] << (8 * i);
    uint32_t crc = crc32c(0, payload, (size_t)len);
    for (int i = 0; i < 4; i++)
        sec[16 + i] = (unsigned char)(crc >> (8 * i));
    crc = crc32c(0, sec, 20);
    for (int i = 0; i < 4; i++)
        sec[20 + i] = (unsigned char)(crc >> (8 * i));
}

/* A unique index over duplicates: the file is refused, naming the pair an
   insertion in id order meets first (node 2 repeats node 0's key), not the
   first pair in key order (nodes 1 and 3 hold the smaller key). */
static void test_unique_index_over_duplicates(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token l = tok(g, STRATA_LABEL, "L"), k = tok(g, STRATA_KEY, "k");
    static const int keys[] = { 9, 3, 9, 3, 7 };
    for (int i = 0; i < 5; i++) {
        strata_id id;
        OK(g, strata_node_create(g, &l, 1, &id));
        set_int(g, false, id, k, keys[i]);
    }
    index_on(g, STRATA_INDEX_RANGE, false, l, 1, &k);
    OK(g, strata_save(g, tmp_path("dup.db")));
    strata_graph_free(&g);
    size_t n;
    unsigned char *f = read_all(tmp_path("dup.db"), &n);
    patch_index_kind(f, n, IDX_RANGE, IDX_UNIQUE);
    write_all(tmp_path("dup-unique.db"), f, n);
    free(f);
    size_t scratch = mem_ctx_bytes(mem_scratch());
    strata_graph *h = NULL;
    char err[512];
    assert_int_equal(strata_load_ex(tmp_path("dup-unique.db"), &h, err, sizeof err),
                     STRATA_ECORRUPT);
    assert_null(h);
    if (!strstr(err, "section INDX") || !strstr(err, "index 0: cannot create the unique index: "
                                                     "nodes 0 and 2 have the same value"))
        fail_msg("message: %s", err);
    assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
}

/* Every allocation of a load of this shape (smaller) may fail: each
   failure is an out-of-memory error that leaves nothing behind, and the
   first load that gets all its memory equals the saved graph. */
static void test_bulk_load_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g = big_graph(200, 600);
    OK(g, strata_save(g, tmp_path("oom-big.db")));
    char *want = dump_graph(g);
    strata_graph_free(&g);
    size_t scratch = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        strata_graph *h = NULL;
        char err[512];
        mem_fail_at(k);
        strata_status s = strata_load_ex(tmp_path("oom-big.db"), &h, err, sizeof err);
        mem_fail_clear();
        if (s == STRATA_OK) {
            assert_true(k > 100);
            char *got = dump_graph(h);
            assert_string_equal(want, got);
            free(got);
            check_integrity(h);
            strata_graph_free(&h);
            break;
        }
        if (s != STRATA_ENOMEM)
            fail_msg("allocation %ld failed: %s (%s)", k, strata_errstr(s), err);
        assert_null(h);
        assert_non_null(strstr(err, "out of memory"));
        assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
    }
    free(want);
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-persist-bulk");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_round_trip),
        cmocka_unit_test(test_unique_index_over_duplicates),
        cmocka_unit_test(test_bulk_load_allocation_failures),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
