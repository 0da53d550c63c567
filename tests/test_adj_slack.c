/*
 * Tests for the bytes a flat adjacency block carries beyond its entries
 * (storage/adjacency.c): the directory and the entries share one room,
 * which grows to the allocator's next size class, so a block grown one
 * relationship at a time ends close to the size a bulk build gives the
 * same entries; growth stays geometric (few reallocations, each copy
 * amortised); a self-loop's two new segments and a copy-on-write of a
 * shared block keep the content; allocation failure leaves the block as
 * it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "storage/adjacency.h"

#include "support/mem_fixture.h"

static int setup(void **state)
{
    adj_tree_min_for_tests = UINT32_MAX / 2;   /* flat blocks only */
    return mem_ctx_setup(state);
}

#define NODES 400
#define TYPES 4

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The entries of b as (key, rel, other) triples in block order, into out
   (room for max); returns how many. */
static uint32_t flatten(const adj_block *b, uint32_t (*out)[3], uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < adj_nsegments(b); i++) {
        int dir;
        uint32_t type;
        adj_segment_info(b, i, &dir, &type);
        for (adj_run r = adj_run_first(b, i); r.n; r = adj_run_next(b, i, r))
            for (uint32_t k = 0; k < r.n; k++) {
                assert_true(n < max);
                out[n][0] = type << 1 | (uint32_t)dir;
                out[n][1] = r.e[k].rel;
                out[n][2] = r.e[k].other;
                n++;
            }
    }
    return n;
}

/* A graph-like build: relationships between random nodes of four types,
   each linked at both ends one at a time.  Then every block is rebuilt
   in bulk (reserved once at its final size, then appended) and the two
   compared: the same entries, and the grown blocks at most an eighth
   larger in all.  Growing the directory and the entries by half again
   each, as blocks did, left the grown blocks a quarter larger or more
   (at 20 relationships a node, 8 segments: 320 bytes against 240). */
static void test_grown_close_to_bulk(void **state)
{
    mem_ctx *m = *state;
    static adj_block *grown[NODES];
    memset(grown, 0, sizeof grown);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint32_t rel = 1; rel <= NODES * 10; rel++) {
        uint32_t a = (uint32_t)(next_rand(&seed) % NODES), z = (uint32_t)(next_rand(&seed) % NODES);
        uint32_t type = rel % TYPES;
        if (a == z) {
            adj_edit both[2] = { { ADJ_OUT, type, rel }, { ADJ_IN, type, rel } };
            assert_int_equal(adj_prepare_insert(m, &grown[a], both, 2), 0);
            adj_insert(grown[a], ADJ_OUT, type, rel, z);
            adj_insert(grown[a], ADJ_IN, type, rel, a);
        } else {
            assert_int_equal(adj_prepare_insert(m, &grown[a], &(adj_edit){ ADJ_OUT, type, rel }, 1), 0);
            adj_insert(grown[a], ADJ_OUT, type, rel, z);
            assert_int_equal(adj_prepare_insert(m, &grown[z], &(adj_edit){ ADJ_IN, type, rel }, 1), 0);
            adj_insert(grown[z], ADJ_IN, type, rel, a);
        }
        assert_int_equal(adj_check(grown[a]), 0);
        assert_int_equal(adj_check(grown[z]), 0);
    }
    static uint32_t want[256][3], got[256][3];
    size_t grown_bytes = 0, bulk_bytes = 0;
    for (uint32_t k = 0; k < NODES; k++) {
        uint32_t n = flatten(grown[k], want, 256);
        adj_block *bulk = NULL;
        if (n) {
            assert_int_equal(adj_reserve_segments(m, &bulk, n, adj_nsegments(grown[k])), 0);
            for (uint32_t i = 0; i < n; i++)
                adj_append(bulk, (int)(want[i][0] & 1), want[i][0] >> 1, want[i][1], want[i][2]);
        }
        assert_int_equal(adj_check(bulk), 0);
        assert_int_equal(flatten(bulk, got, 256), n);
        assert_memory_equal(got, want, sizeof got[0] * n);
        grown_bytes += adj_size(grown[k]);
        bulk_bytes += adj_size(bulk);
        adj_release(m, &bulk);
        adj_release(m, &grown[k]);
    }
    print_message("grown %zu bytes, bulk %zu\n", grown_bytes, bulk_bytes);
    assert_true(grown_bytes * 8 <= bulk_bytes * 9);
}

/* Growth is geometric: 4,000 appends to one segment reallocate the block
   a few dozen times, not once per append, and the block ends within a
   quarter (one size class and the eighth) of its entries. */
static void test_growth_geometric(void **state)
{
    mem_ctx *m = *state;
    adj_block *b = NULL;
    size_t size = 0;
    int grew = 0;
    for (uint32_t rel = 1; rel <= 4000; rel++) {
        /* A new segment every 500 entries: the directory takes a slot
           from the entries' room. */
        uint32_t type = rel / 500;
        assert_int_equal(adj_prepare_insert(m, &b, &(adj_edit){ ADJ_OUT, type, rel }, 1), 0);
        adj_insert(b, ADJ_OUT, type, rel, rel * 2);
        if (adj_size(b) != size) {
            assert_true(adj_size(b) >= size + size / 8);
            size = adj_size(b);
            grew++;
        }
    }
    assert_int_equal(adj_check(b), 0);
    assert_int_equal(adj_len(b), 4000);
    assert_int_equal(adj_nsegments(b), 9);
    print_message("%d reallocations, %zu bytes for %u entries\n", grew, size, adj_len(b));
    assert_true(grew <= 80);
    assert_true(size * 4 <= (size_t)(adj_len(b) + adj_nsegments(b)) * sizeof(adj_entry) * 5 + 64);
    adj_release(m, &b);
}

/* A shared block's copy gets what it needs, and the copy's first insert
   into a new segment grows it; the shared original never changes. */
static void test_shared_copy_then_grow(void **state)
{
    mem_ctx *m = *state;
    adj_block *b = NULL;
    for (uint32_t rel = 1; rel <= 40; rel++) {
        assert_int_equal(adj_prepare_insert(m, &b, &(adj_edit){ ADJ_IN, rel % 3, rel }, 1), 0);
        adj_insert(b, ADJ_IN, rel % 3, rel, rel);
    }
    static uint32_t before[64][3], after[64][3];
    uint32_t n = flatten(b, before, 64);
    adj_block *held = b;
    adj_retain(held);
    assert_int_equal(adj_prepare_insert(m, &b, &(adj_edit){ ADJ_OUT, 7, 41 }, 1), 0);
    assert_ptr_not_equal(b, held);
    adj_insert(b, ADJ_OUT, 7, 41, 41);
    assert_int_equal(adj_check(b), 0);
    assert_int_equal(adj_len(b), 41);
    assert_int_equal(flatten(held, after, 64), n);
    assert_memory_equal(after, before, sizeof before[0] * n);
    /* Erase under a share copies too, and keeps the room for its undo. */
    adj_block *held2 = b;
    adj_retain(held2);
    assert_int_equal(adj_prepare_erase(m, &b, &(adj_edit){ ADJ_OUT, 7, 41 }), 0);
    assert_int_equal(adj_erase(m, b, ADJ_OUT, 7, 41), 0);
    adj_insert(b, ADJ_OUT, 7, 41, 41);
    assert_int_equal(adj_check(b), 0);
    assert_int_equal(adj_len(b), 41);
    adj_release(m, &held2);
    adj_release(m, &held);
    adj_release(m, &b);
}

/* Every allocation failure while a block grows, and while a shared one is
   copied, leaves the block as it was. */
static void test_growth_failure(void **state)
{
    mem_ctx *m = *state;
    adj_block *b = NULL;
    static uint32_t before[512][3], after[512][3];
    for (uint32_t rel = 1; rel <= 300; rel++) {
        adj_block *held = rel % 7 == 0 ? b : NULL;
        adj_retain(held);
        uint32_t n = flatten(b, before, 512);
        adj_edit e = { (int)(rel % 2), rel % 5, rel };
        mem_fail_at(1);
        int rc = adj_prepare_insert(m, &b, &e, 1);
        mem_fail_clear();
        if (rc != 0) {
            assert_int_equal(flatten(b, after, 512), n);
            assert_memory_equal(after, before, sizeof before[0] * n);
            assert_int_equal(adj_check(b), 0);
            assert_int_equal(adj_prepare_insert(m, &b, &e, 1), 0);
        }
        adj_insert(b, e.dir, e.type, rel, rel);
        assert_int_equal(adj_check(b), 0);
        adj_release(m, &held);
    }
    adj_release(m, &b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grown_close_to_bulk, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_growth_geometric, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_shared_copy_then_grow, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_growth_failure, setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
