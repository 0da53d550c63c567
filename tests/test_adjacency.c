/*
 * Tests for storage/adjacency's flat blocks: prepare/insert/erase across
 * several (direction, type) segments in random order against a reference
 * model of plain arrays, segment lookup and iteration order, erase of
 * missing relationships, removal of empty segments, erase positions and
 * their undo by adj_insert without a prepare, copy-on-write of a shared
 * block, every allocation failure of adj_prepare_insert, and bulk builds
 * (a hub's becomes trees: tests/test_adj_tree.c tests those).  adj_check
 * runs after every step.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "storage/adjacency.h"

/* Segment (dir, type)'s entries gathered from its runs into buf (at most
   max); returns buf, or NULL when the segment does not exist. */
static const adj_entry *segment(const adj_block *b, int dir, uint32_t type, uint32_t *n,
                                adj_entry *buf, uint32_t max)
{
    *n = 0;
    int i = adj_find_segment(b, dir, type);
    if (i < 0)
        return NULL;
    for (adj_run r = adj_run_first(b, (uint32_t)i); r.n; r = adj_run_next(b, (uint32_t)i, r)) {
        assert_true(*n + r.n <= max);
        memcpy(buf + *n, r.e, r.n * sizeof *buf);
        *n += r.n;
    }
    return buf;
}

static int prepare_insert(mem_ctx *m, adj_block **bp, int dir, uint32_t type, uint32_t rel)
{
    return adj_prepare_insert(m, bp, &(adj_edit){ dir, type, rel }, 1);
}

static int prepare_erase(mem_ctx *m, adj_block **bp, int dir, uint32_t type, uint32_t rel)
{
    return adj_prepare_erase(m, bp, &(adj_edit){ dir, type, rel });
}

#include "support/mem_fixture.h"

static int setup(void **state)
{
    adj_tree_min_for_tests = UINT32_MAX / 2;   /* flat blocks, but where a test says */
    return mem_ctx_setup(state);
}

/* ---- the reference model ----------------------------------------------- */

/* Types 0..NTYPES-1 in both directions: segment key type << 1 | dir. */
#define NTYPES 6
#define NKEYS (2 * NTYPES)
#define SEGMAX 512

typedef struct model {
    uint32_t n[NKEYS];
    adj_entry e[NKEYS][SEGMAX];   /* insertion order within a segment */
} model;

static uint32_t key_of(int dir, uint32_t type) { return type << 1 | (uint32_t)dir; }

static void model_insert(model *md, int dir, uint32_t type, uint32_t rel, uint32_t other)
{
    assert_true(type < NTYPES);
    uint32_t k = key_of(dir, type);
    assert_true(md->n[k] < SEGMAX);
    md->e[k][md->n[k]].rel = rel;
    md->e[k][md->n[k]].other = other;
    md->n[k]++;
}

static void model_insert_at(model *md, int dir, uint32_t type, uint32_t pos, uint32_t rel,
                            uint32_t other)
{
    assert_true(type < NTYPES);
    uint32_t k = key_of(dir, type);
    assert_true(md->n[k] < SEGMAX);
    if (pos > md->n[k])
        pos = md->n[k];
    memmove(&md->e[k][pos + 1], &md->e[k][pos], (md->n[k] - pos) * sizeof(adj_entry));
    md->e[k][pos].rel = rel;
    md->e[k][pos].other = other;
    md->n[k]++;
}

/* The position rel had in its segment, or -1. */
static int model_erase(model *md, int dir, uint32_t type, uint32_t rel)
{
    uint32_t k = key_of(dir, type);
    for (uint32_t i = 0; i < md->n[k]; i++) {
        if (md->e[k][i].rel == rel) {
            memmove(&md->e[k][i], &md->e[k][i + 1], (md->n[k] - i - 1) * sizeof(adj_entry));
            md->n[k]--;
            return (int)i;
        }
    }
    return -1;
}

static void assert_entries(const adj_entry *got, const adj_entry *want, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(got[i].rel, want[i].rel);
        assert_int_equal(got[i].other, want[i].other);
    }
}

/* b holds exactly the model: adj_check passes, segments come in key order,
   no segment is empty, and both lookups agree with the model. */
static void assert_block(const adj_block *b, const model *md)
{
    assert_int_equal(adj_check(b), 0);
    uint32_t total = 0, nseg = 0;
    for (uint32_t k = 0; k < NKEYS; k++) {
        total += md->n[k];
        nseg += md->n[k] != 0;
    }
    assert_int_equal(adj_len(b), total);
    assert_int_equal(adj_nsegments(b), nseg);

    uint32_t i = 0;
    for (uint32_t k = 0; k < NKEYS; k++) {
        int dir = (int)(k & 1);
        uint32_t type = k >> 1, n = 99;
        static adj_entry buf[SEGMAX];
        const adj_entry *seg = segment(b, dir, type, &n, buf, SEGMAX);
        if (md->n[k] == 0) {
            assert_null(seg);
            assert_int_equal(n, 0);
            continue;
        }
        assert_non_null(seg);
        assert_int_equal(n, md->n[k]);
        assert_entries(seg, md->e[k], n);

        /* The i-th segment is the i-th non-empty key. */
        int d;
        uint32_t t, m = adj_segment_info(b, i, &d, &t);
        assert_int_equal(d, dir);
        assert_int_equal(t, type);
        assert_int_equal(m, md->n[k]);
        assert_int_equal(adj_find_segment(b, dir, type), (int)i);
        i++;
    }
    /* Keys outside the model's range are absent. */
    assert_int_equal(adj_find_segment(b, ADJ_OUT, NTYPES + 3), -1);
}

static void insert_ok(mem_ctx *m, adj_block **bp, model *md, int dir, uint32_t type,
                      uint32_t rel, uint32_t other)
{
    assert_int_equal(prepare_insert(m, bp, dir, type, rel), 0);
    adj_insert(*bp, dir, type, rel, other);
    model_insert(md, dir, type, rel, other);
    assert_block(*bp, md);
}

/* Erases rel and returns the position it had in its segment (the model's). */
static int erase_ok(mem_ctx *m, adj_block **bp, model *md, int dir, uint32_t type,
                    uint32_t rel)
{
    assert_int_equal(prepare_erase(m, bp, dir, type, rel), 0);
    assert_int_equal(adj_erase(m, *bp, dir, type, rel), 0);
    int want = model_erase(md, dir, type, rel);
    assert_true(want >= 0);
    assert_block(*bp, md);
    return want;
}

/* A deterministic generator, so a failure reproduces. */
static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(*s >> 33);
}

/* A block with a few entries in several segments, mirrored in md. */
static adj_block *build(mem_ctx *m, model *md, uint32_t n)
{
    adj_block *b = NULL;
    memset(md, 0, sizeof *md);
    for (uint32_t i = 0; i < n; i++)
        insert_ok(m, &b, md, (int)(i % 2), (i * 5) % NTYPES, 100 + i, 1000 + i);
    return b;
}

/* ---- tests -------------------------------------------------------------- */

static void test_empty(void **state)
{
    mem_ctx *m = *state;
    static model md;
    memset(&md, 0, sizeof md);
    assert_block(NULL, &md);
    assert_int_equal(adj_size(NULL), 0);

    adj_block *b = NULL;
    assert_int_equal(adj_reserve_segments(m, &b, 0, 0), 0);   /* an empty block */
    assert_non_null(b);
    assert_block(b, &md);
    assert_int_equal(adj_erase(m, b, ADJ_OUT, 0, 1), -1);
    adj_release(m, &b);
    assert_null(b);
    adj_release(m, &b);   /* releasing NULL is fine */
}

static void test_segments_in_key_order(void **state)
{
    mem_ctx *m = *state;
    static model md;
    memset(&md, 0, sizeof md);
    adj_block *b = NULL;
    /* Keys arrive out of order; segment i must still be the i-th key. */
    insert_ok(m, &b, &md, ADJ_IN, 3, 1, 10);
    insert_ok(m, &b, &md, ADJ_OUT, 0, 2, 11);
    insert_ok(m, &b, &md, ADJ_OUT, 3, 3, 12);
    insert_ok(m, &b, &md, ADJ_IN, 0, 4, 13);
    insert_ok(m, &b, &md, ADJ_OUT, 5, 5, 14);
    insert_ok(m, &b, &md, ADJ_IN, 3, 6, 15);
    insert_ok(m, &b, &md, ADJ_OUT, 0, 7, 16);
    insert_ok(m, &b, &md, ADJ_IN, 1, 8, 17);

    static const uint32_t want[] = { 0, 1, 3, 6, 7, 10 };   /* type << 1 | dir */
    assert_int_equal(adj_nsegments(b), sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < adj_nsegments(b); i++) {
        int dir;
        uint32_t type, n = adj_segment_info(b, i, &dir, &type);
        assert_int_equal(key_of(dir, type), want[i]);
        assert_true(n > 0);
    }
    adj_release(m, &b);
}

static void test_erase_missing(void **state)
{
    mem_ctx *m = *state;
    static model md;
    adj_block *b = build(m, &md, 12);
    assert_int_equal(prepare_erase(m, &b, ADJ_OUT, 0, 9999), 0);
    /* A rel that is nowhere, one in another segment, one in the other
       direction of its own type, and a segment that does not exist. */
    assert_int_equal(adj_erase(m, b, ADJ_OUT, 0, 9999), -1);
    assert_int_equal(adj_erase(m, b, ADJ_OUT, 0, 101), -1);   /* 101 is (IN, 5) */
    assert_int_equal(adj_erase(m, b, ADJ_OUT, 5, 101), -1);
    assert_int_equal(adj_erase(m, b, ADJ_OUT, NTYPES + 1, 100), -1);
    assert_block(b, &md);

    /* Erasing twice: the second time it is missing. */
    erase_ok(m, &b, &md, ADJ_IN, 5, 101);
    assert_int_equal(adj_erase(m, b, ADJ_IN, 5, 101), -1);
    assert_block(b, &md);
    adj_release(m, &b);
}

static void test_empty_segments_removed(void **state)
{
    mem_ctx *m = *state;
    static model md;
    memset(&md, 0, sizeof md);
    adj_block *b = NULL;
    insert_ok(m, &b, &md, ADJ_OUT, 1, 1, 0);
    insert_ok(m, &b, &md, ADJ_OUT, 2, 2, 0);
    insert_ok(m, &b, &md, ADJ_OUT, 2, 3, 0);
    insert_ok(m, &b, &md, ADJ_IN, 4, 4, 0);
    assert_int_equal(adj_nsegments(b), 3);

    erase_ok(m, &b, &md, ADJ_OUT, 2, 2);
    assert_int_equal(adj_nsegments(b), 3);
    erase_ok(m, &b, &md, ADJ_OUT, 2, 3);   /* middle segment empties */
    assert_int_equal(adj_nsegments(b), 2);
    erase_ok(m, &b, &md, ADJ_OUT, 1, 1);   /* first */
    assert_int_equal(adj_nsegments(b), 1);
    erase_ok(m, &b, &md, ADJ_IN, 4, 4);    /* last */
    assert_int_equal(adj_nsegments(b), 0);
    assert_int_equal(adj_len(b), 0);

    /* The emptied block takes new segments again. */
    insert_ok(m, &b, &md, ADJ_IN, 2, 5, 0);
    adj_release(m, &b);
}

/* Entries keep id order whatever order they come in, and erases undone
   in reverse order need no prepare: the erases kept the room (entries and
   directory). */
static void test_id_order_and_undo(void **state)
{
    mem_ctx *m = *state;
    static model md, orig;
    memset(&md, 0, sizeof md);
    adj_block *b = NULL;
    static const uint32_t ids[] = { 13, 10, 14, 12, 11 };
    for (uint32_t i = 0; i < 5; i++) {
        assert_int_equal(prepare_insert(m, &b, ADJ_OUT, 2, ids[i]), 0);
        adj_insert(b, ADJ_OUT, 2, ids[i], ids[i] - 10);
    }
    for (uint32_t i = 0; i < 5; i++)
        model_insert(&md, ADJ_OUT, 2, 10 + i, i);   /* the model in id order */
    assert_block(b, &md);
    insert_ok(m, &b, &md, ADJ_IN, 0, 20, 0);    /* a one-entry segment */
    insert_ok(m, &b, &md, ADJ_IN, 5, 30, 0);
    orig = md;
    size_t size = adj_size(b);

    assert_int_equal(erase_ok(m, &b, &md, ADJ_OUT, 2, 12), 2);
    assert_int_equal(erase_ok(m, &b, &md, ADJ_OUT, 2, 10), 0);
    assert_int_equal(erase_ok(m, &b, &md, ADJ_OUT, 2, 14), 2);
    assert_int_equal(erase_ok(m, &b, &md, ADJ_IN, 0, 20), 0);   /* empties it */
    assert_int_equal(adj_nsegments(b), 2);

    mem_fail_at(1);
    adj_insert(b, ADJ_IN, 0, 20, 0);
    adj_insert(b, ADJ_OUT, 2, 14, 4);
    adj_insert(b, ADJ_OUT, 2, 10, 0);
    adj_insert(b, ADJ_OUT, 2, 12, 2);
    mem_fail_clear();
    assert_int_equal(adj_size(b), size);
    assert_block(b, &orig);
    adj_release(m, &b);
}

static void test_random_against_model(void **state)
{
    mem_ctx *m = *state;
    static model md;
    memset(&md, 0, sizeof md);
    adj_block *b = NULL;
    uint64_t seed = 42;
    uint32_t next_rel = 1;

    for (int step = 0; step < 3000; step++) {
        uint32_t op = rnd(&seed) % 10;
        int dir = (int)(rnd(&seed) % 2);
        uint32_t type = rnd(&seed) % NTYPES;
        uint32_t k = key_of(dir, type);
        if (op < 6 && md.n[k] < SEGMAX) {
            /* Insert, and sometimes the other direction with it (a
               self-loop's two entries are prepared at once). */
            uint32_t other = rnd(&seed) % 100;
            int both = rnd(&seed) % 3 == 0 && md.n[key_of(1 - dir, type)] < SEGMAX;
            adj_edit ins[2] = { { dir, type, next_rel }, { 1 - dir, type, next_rel } };
            assert_int_equal(adj_prepare_insert(m, &b, ins, both ? 2 : 1), 0);
            assert_block(b, &md);
            adj_insert(b, dir, type, next_rel, other);
            model_insert(&md, dir, type, next_rel, other);
            if (both) {
                adj_insert(b, 1 - dir, type, next_rel, other);
                model_insert(&md, 1 - dir, type, next_rel, other);
            }
            next_rel++;
            assert_block(b, &md);
        } else if (op < 8 && md.n[k] > 0) {
            uint32_t at = rnd(&seed) % md.n[k];
            assert_int_equal(erase_ok(m, &b, &md, dir, type, md.e[k][at].rel), at);
        } else if (op < 9 && md.n[k] > 0) {
            /* Erase, then undo it in place: no reserve in between. */
            uint32_t at = rnd(&seed) % md.n[k];
            adj_entry gone = md.e[k][at];
            assert_int_equal(erase_ok(m, &b, &md, dir, type, gone.rel), at);
            adj_insert(b, dir, type, gone.rel, gone.other);
            model_insert_at(&md, dir, type, at, gone.rel, gone.other);
            assert_block(b, &md);
        } else {
            assert_int_equal(prepare_erase(m, &b, dir, type, next_rel + 7), 0);
            assert_int_equal(adj_erase(m, b, dir, type, next_rel + 7), -1);
            assert_block(b, &md);
        }
    }
    /* Drain everything, segment by segment. */
    for (uint32_t k = 0; k < NKEYS; k++)
        while (md.n[k])
            erase_ok(m, &b, &md, (int)(k & 1), k >> 1, md.e[k][md.n[k] - 1].rel);
    assert_int_equal(adj_nsegments(b), 0);
    adj_release(m, &b);
}

static void test_cow_shared_block(void **state)
{
    mem_ctx *m = *state;
    static model md, held_md;
    adj_block *b = build(m, &md, 10);
    held_md = md;
    adj_block *held = b;
    adj_retain(held);

    /* A prepare on a shared block copies it (len entries) and leaves the
       original alone. */
    uint64_t before = mem_copied_entries();
    assert_int_equal(prepare_insert(m, &b, ADJ_IN, 4, 500), 0);
    assert_ptr_not_equal(b, held);
    assert_int_equal(mem_copied_entries() - before, adj_len(held));
    assert_block(b, &md);
    assert_block(held, &held_md);

    adj_insert(b, ADJ_IN, 4, 500, 7);
    model_insert(&md, ADJ_IN, 4, 500, 7);
    assert_block(b, &md);
    erase_ok(m, &b, &md, ADJ_OUT, 0, 100);   /* private now: in place */
    insert_ok(m, &b, &md, ADJ_OUT, 2, 501, 8);
    assert_block(held, &held_md);

    /* An erase's prepare on a shared block makes a private copy. */
    adj_block *held2 = b;
    adj_retain(held2);
    static model held2_md;
    held2_md = md;
    assert_int_equal(prepare_erase(m, &b, ADJ_IN, 4, 500), 0);
    assert_ptr_not_equal(b, held2);
    assert_int_equal(adj_erase(m, b, ADJ_IN, 4, 500), model_erase(&md, ADJ_IN, 4, 500));
    assert_block(b, &md);
    assert_block(held2, &held2_md);

    adj_release(m, &b);
    adj_release(m, &held2);
    assert_block(held, &held_md);
    adj_release(m, &held);
}

static void test_growth(void **state)
{
    mem_ctx *m = *state;
    static model md;
    memset(&md, 0, sizeof md);
    adj_block *b = NULL;
    size_t size = 0;
    int grew = 0;
    for (uint32_t i = 0; i < 300; i++) {
        /* Mostly one busy segment, with new segments opening in between so
           the directory grows while entries must move past it. */
        uint32_t type = i % 25 == 0 ? (i / 25) % NTYPES : 2;
        insert_ok(m, &b, &md, (int)((i / 25) % 2), type, i, i * 3);
        if (adj_size(b) != size) {
            assert_true(adj_size(b) > size);
            size = adj_size(b);
            grew++;
        }
    }
    assert_true(grew >= 5);
    adj_release(m, &b);
}

/* ---- allocation failure ------------------------------------------------ */

/* adj_prepare_insert of rel into a new (dir, type) segment with the 1st,
   2nd, ... allocation failing until it succeeds; after each failure *bp and
   held (when not NULL) hold their models.  Then the insert.  Returns the
   failures seen. */
static long insert_until_success(mem_ctx *m, adj_block **bp, model *md, const adj_block *held,
                                 const model *held_md, uint32_t rel)
{
    int dir = (int)(rel % 2);
    uint32_t type = rel / 2 % NTYPES;
    for (long k = 1;; k++) {
        assert_true(k < 32);
        adj_block *before = *bp;
        mem_fail_at(k);
        int rc = prepare_insert(m, bp, dir, type, rel);
        mem_fail_clear();
        if (rc == 0) {
            adj_insert(*bp, dir, type, rel, rel);
            model_insert(md, dir, type, rel, rel);
            assert_block(*bp, md);
            return k - 1;
        }
        assert_int_equal(rc, -1);
        assert_ptr_equal(*bp, before);
        assert_block(*bp, md);
        if (held)
            assert_block(held, held_md);
    }
}

static void test_prepare_failure(void **state)
{
    mem_ctx *m = *state;
    static model md, held_md;

    /* From NULL. */
    memset(&md, 0, sizeof md);
    adj_block *b = NULL;
    assert_int_equal(insert_until_success(m, &b, &md, NULL, NULL, 1), 1);
    /* Private growth (realloc) through several sizes. */
    long failures = 0;
    for (uint32_t rel = 2; rel < 60; rel++)
        failures += insert_until_success(m, &b, &md, NULL, NULL, rel);
    assert_true(failures > 0);
    adj_release(m, &b);
    assert_int_equal(mem_ctx_bytes(m), 0);

    /* Shared: the copy fails and the block stays shared, or succeeds. */
    b = build(m, &md, 9);
    held_md = md;
    adj_block *held = b;
    adj_retain(held);
    assert_int_equal(insert_until_success(m, &b, &md, held, &held_md, 900), 1);
    assert_ptr_not_equal(b, held);
    assert_block(held, &held_md);
    adj_release(m, &b);
    assert_block(held, &held_md);
    adj_release(m, &held);
    assert_int_equal(mem_ctx_bytes(m), 0);

    /* An erase's prepare on a shared block. */
    b = build(m, &md, 9);
    held = b;
    adj_retain(held);
    mem_fail_at(1);
    assert_int_equal(prepare_erase(m, &b, ADJ_OUT, 0, 100), -1);
    mem_fail_clear();
    assert_ptr_equal(b, held);
    assert_block(b, &md);
    adj_release(m, &held);
    adj_release(m, &b);
}

/* ---- bulk building and the segment limit --------------------------------- */

/* A bulk build reserves all of a hub's entries at once and counts only the
   segments it opens: 65,536 entries and more in one segment (past
   ADJ_MAX_SEGMENTS), filled by adj_append in key order; adj_bulk_done then
   turns a block past ADJ_TREE_MIN entries into trees of the same entries. */
static void test_bulk_hub(void **state)
{
    mem_ctx *m = *state;
    adj_tree_min_for_tests = 1024;
    const uint32_t sizes[] = { ADJ_TREE_MIN, ADJ_TREE_MIN + 1, 65536, 1u << 20 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t n = sizes[k];
        adj_block *b = NULL;
        assert_int_equal(adj_reserve_segments(m, &b, n, 3), 0);
        /* Three segments, keys increasing: (OUT, 1), (IN, 1), (OUT, 4). */
        for (uint32_t i = 0; i < n; i++) {
            int dir = i < n / 3 ? ADJ_OUT : i < 2 * (n / 3) ? ADJ_IN : ADJ_OUT;
            adj_append(b, dir, i < 2 * (n / 3) ? 1 : 4, i, i / 2);
        }
        assert_int_equal(adj_check(b), 0);
        /* The block is no larger than its entries need, give or take the
           allocator's size class. */
        assert_true(adj_size(b) < (size_t)n * sizeof(adj_entry) * 5 / 4 + 256);
        size_t flat = adj_size(b);
        assert_int_equal(adj_bulk_done(m, &b), 0);
        assert_int_equal(adj_is_tree(b), n > ADJ_TREE_MIN);
        /* Trees cost little more than the flat block (about a sixth more
           at the production node sizes; the test builds' tiny nodes carry
           a header per eight entries). */
        assert_true(adj_private_bytes(b) <= 2 * flat);
        assert_int_equal(adj_check(b), 0);
        assert_int_equal(adj_len(b), n);
        assert_int_equal(adj_nsegments(b), 3);
        int s = adj_find_segment(b, ADJ_OUT, 4);
        assert_int_equal(s, 2);
        uint32_t want = 2 * (n / 3), runs = 0;
        for (adj_run r = adj_run_first(b, 2); r.n; r = adj_run_next(b, 2, r), runs++)
            for (uint32_t i = 0; i < r.n; i++, want++) {
                assert_int_equal(r.e[i].rel, want);
                assert_int_equal(r.e[i].other, want / 2);
            }
        assert_int_equal(want, n);
        assert_true(n >= 65536 ? runs > 1 : runs >= 1);   /* a leaf holds hundreds */
        adj_release(m, &b);
    }
}

/* ADJ_MAX_SEGMENTS pairs fit; one more is refused, while an entry in a
   pair the block has still fits. */
static void test_segment_limit(void **state)
{
    mem_ctx *m = *state;
    adj_block *b = NULL;
    assert_int_equal(adj_reserve_segments(m, &b, ADJ_MAX_SEGMENTS, ADJ_MAX_SEGMENTS), 0);
    for (uint32_t i = 0; i < ADJ_MAX_SEGMENTS; i++)
        adj_append(b, (int)(i % 2), i / 2, i, 0);
    assert_int_equal(adj_nsegments(b), ADJ_MAX_SEGMENTS);
    assert_int_equal(adj_check(b), 0);
    assert_int_equal(adj_reserve_segments(m, &b, 1, 1), -1);
    assert_int_equal(prepare_insert(m, &b, ADJ_IN, ADJ_MAX_SEGMENTS, 99998), -1);
    assert_true(adj_has_segment(b, ADJ_IN, 7));
    assert_false(adj_has_segment(b, ADJ_IN, ADJ_MAX_SEGMENTS));
    assert_int_equal(adj_reserve_segments(m, &b, 1, 0), 0);
    adj_insert(b, ADJ_IN, 7, 99999, 1);
    assert_int_equal(adj_check(b), 0);
    int d;
    uint32_t t;
    assert_int_equal(adj_segment_info(b, (uint32_t)adj_find_segment(b, ADJ_IN, 7), &d, &t), 2);
    assert_int_equal(adj_erase(m, b, ADJ_IN, 7, 15), 0);
    assert_int_equal(adj_check(b), 0);
    adj_release(m, &b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_segments_in_key_order, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_erase_missing, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_empty_segments_removed, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_id_order_and_undo, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_cow_shared_block, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_growth, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_prepare_failure, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_bulk_hub, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_segment_limit, setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
