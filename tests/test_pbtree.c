/*
 * Tests for storage/pbtree: every write checked against a sorted-array
 * model (pbtree_check and a full cursor walk after each one), seek
 * semantics, share-then-write (the held copy keeps every entry, a write
 * copies at most its path and nothing on a path it already owns), snapshots
 * taken and dropped while writing, reserve under failure injection, and
 * writes that never allocate (every write runs with allocation failing).
 *
 * The test build has PBTREE_ORDER 4, so splits, new roots, emptied leaves
 * and collapsed roots happen all the time.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/pbtree.h"

#include "support/mem_fixture.h"

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* ---- keys -------------------------------------------------------------- */

static value str_key(mem_ctx *m, const char *fmt, int k)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, fmt, k);
    value v;
    assert_int_equal(value_string(m, buf, (size_t)n, &v), 0);
    return v;
}

/* A key of a random kind, from a small space so that entries repeat.
   value_int(k) and value_float(k) order equal: the same key, on purpose.
   No nulls: indices never store a null key. */
static value random_key(mem_ctx *m, uint64_t *rng)
{
    int k = (int)(next_rand(rng) % 24);
    switch (next_rand(rng) % 9) {
    case 0:
        return value_int(k);
    case 1:
        return value_float(k);
    case 2:
        return value_float(k + 0.5);
    case 3:
        return str_key(m, "s%02d", k);
    case 4:
        return str_key(m, "a string long enough for the heap %02d", k);
    case 5:
        return value_bool(k & 1);
    case 6: {
        value items[2] = { value_int(k % 4), str_key(m, "x%d", k) };
        value list;
        assert_int_equal(value_list_from(m, items, 2, &list), 0);
        return list;
    }
    case 7:
        return value_float(k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY);
    default:
        return value_int(-(int64_t)k * 1000003);
    }
}

/* ---- the model: a sorted array of owned entries ------------------------ */

typedef struct model {
    pbtree_entry *e;
    size_t n, cap;
} model;

/* The first index whose entry is >= (key, id). */
static size_t model_bound(const model *md, const value *key, uint64_t id)
{
    size_t lo = 0, hi = md->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pbtree_entry_cmp(&md->e[mid].key, md->e[mid].id, key, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool model_has(const model *md, const value *key, uint64_t id)
{
    size_t i = model_bound(md, key, id);
    return i < md->n && pbtree_entry_cmp(&md->e[i].key, md->e[i].id, key, id) == 0;
}

static void model_insert(model *md, const value *key, uint64_t id)
{
    if (model_has(md, key, id))
        return;
    if (md->n == md->cap) {
        md->cap = md->cap ? md->cap * 2 : 64;
        md->e = realloc(md->e, md->cap * sizeof *md->e);
        assert_non_null(md->e);
    }
    size_t i = model_bound(md, key, id);
    memmove(md->e + i + 1, md->e + i, (md->n - i) * sizeof *md->e);
    md->e[i].key = value_retain(*key);
    md->e[i].id = id;
    md->n++;
}

static void model_delete(model *md, const value *key, uint64_t id)
{
    if (!model_has(md, key, id))
        return;
    size_t i = model_bound(md, key, id);
    value_release(&md->e[i].key);
    memmove(md->e + i, md->e + i + 1, (md->n - i - 1) * sizeof *md->e);
    md->n--;
}

static void model_copy(const model *src, model *dst)
{
    dst->n = dst->cap = src->n;
    dst->e = malloc((src->n ? src->n : 1) * sizeof *dst->e);
    assert_non_null(dst->e);
    for (size_t i = 0; i < src->n; i++) {
        dst->e[i].key = value_retain(src->e[i].key);
        dst->e[i].id = src->e[i].id;
    }
}

static void model_free(model *md)
{
    for (size_t i = 0; i < md->n; i++)
        value_release(&md->e[i].key);
    free(md->e);
    memset(md, 0, sizeof *md);
}

/* ---- checks ------------------------------------------------------------ */

/* Equal in order and in kind: of 1 and 1.0 the tree keeps whichever came
   first, and so does the model. */
static void assert_entry(const pbtree_entry *got, const pbtree_entry *want)
{
    assert_int_equal(got->key.type, want->key.type);
    assert_int_equal(value_order(&got->key, &want->key), 0);
    assert_int_equal(got->id, want->id);
}

/* t holds exactly md's entries, in order, and passes its own check. */
static void assert_same(const pbtree *t, const model *md)
{
    assert_int_equal(pbtree_check(t), 0);
    assert_int_equal(t->count, md->n);
    pbtree_cursor c;
    pbtree_first(t, &c);
    for (size_t i = 0; i < md->n; i++) {
        assert_true(c.valid);
        assert_entry(pbtree_cursor_entry(&c), &md->e[i]);
        pbtree_cursor_next(&c);
    }
    assert_false(c.valid);
}

/* A seek lands where the model's lower bound does, and walks on from it. */
static void assert_seek(const pbtree *t, const model *md, const value *key, uint64_t id)
{
    pbtree_cursor c;
    pbtree_seek(t, key, id, &c);
    size_t i = model_bound(md, key, id);
    for (int k = 0; k < 4 && i < md->n; k++, i++) {
        assert_true(c.valid);
        assert_entry(pbtree_cursor_entry(&c), &md->e[i]);
        pbtree_cursor_next(&c);
    }
    if (i == md->n)
        assert_false(c.valid);
}

/* The most entries one write may copy: every node on its path. */
static uint64_t copy_bound(const pbtree *t)
{
    return ((uint64_t)t->height + 1) * PBTREE_ORDER;
}

/* One insert or delete on both t and md, after a reserve for one write,
   with every allocation failing during the write: writes never allocate.
   Returns the entries the write copied. */
static uint64_t write_op(pbtree *t, pbtree_pool *pool, mem_ctx *m, model *md, bool insert,
                         const value *key, uint64_t id)
{
    assert_int_equal(pbtree_reserve(pool, m, t, 1), 0);
    bool had = model_has(md, key, id);
    assert_int_equal(pbtree_contains(t, key, id), had);
    uint64_t copied = mem_copied_entries();
    mem_fail_at(1);
    int rc = insert ? pbtree_insert(t, pool, m, key, id) : pbtree_delete(t, pool, m, key, id);
    long allocs = mem_fail_count();
    mem_fail_clear();
    copied = mem_copied_entries() - copied;
    assert_int_equal(allocs, 0);
    assert_int_equal(rc, insert ? !had : had);
    assert_int_equal(pbtree_contains(t, key, id), insert);
    if (insert)
        model_insert(md, key, id);
    else
        model_delete(md, key, id);
    return copied;
}

static uint64_t write_int(pbtree *t, pbtree_pool *pool, mem_ctx *m, model *md, bool insert,
                          int64_t k, uint64_t id)
{
    value key = value_int(k);
    return write_op(t, pool, m, md, insert, &key, id);
}

/* Inserts more than deletes early on, fewer later, so that the tree grows,
   churns and shrinks. */
static bool random_is_insert(uint64_t *rng, int op, int ops)
{
    unsigned percent = op < ops * 2 / 5 ? 70 : op < ops * 7 / 10 ? 50 : 30;
    return next_rand(rng) % 100 < percent;
}

/* ---- tests ------------------------------------------------------------- */

static void test_random_against_model(void **state)
{
    mem_ctx *m = *state;
    pbtree t;
    pbtree_pool pool = { 0 };
    model md = { 0 };
    uint64_t rng = 0x9e3779b97f4a7c15u;
    uint64_t copied = mem_copied_entries();
    uint32_t tallest = 0;
    pbtree_init(&t);
    assert_same(&t, &md);

    enum { OPS = 20000 };
    for (int op = 0; op < OPS; op++) {
        value key = random_key(m, &rng);
        uint64_t id = next_rand(&rng) % 6;
        write_op(&t, &pool, m, &md, random_is_insert(&rng, op, OPS), &key, id);
        value_release(&key);
        assert_same(&t, &md);

        value probe = random_key(m, &rng);
        assert_seek(&t, &md, &probe, next_rand(&rng) % 7);
        value_release(&probe);
        if (t.height > tallest)
            tallest = t.height;
    }
    /* Drain in random order: leaves empty out, roots collapse, and the
       tree ends with no root. */
    while (md.n) {
        pbtree_entry e = md.e[next_rand(&rng) % md.n];
        e.key = value_retain(e.key);
        write_op(&t, &pool, m, &md, false, &e.key, e.id);
        value_release(&e.key);
        assert_same(&t, &md);
    }
    assert_null(t.root);
    assert_int_equal(t.height, 0);
    assert_true(tallest >= 3);
    /* Nothing was shared, so nothing was copied. */
    assert_int_equal(mem_copied_entries(), copied);

    pbtree_release(&t, m);
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

/* 1 and 1.0 order equal, so (1, 5) and (1.0, 5) are one entry. */
static void test_int_and_float_are_one_key(void **state)
{
    mem_ctx *m = *state;
    pbtree t;
    pbtree_pool pool = { 0 };
    pbtree_init(&t);
    value one = value_int(1), one_f = value_float(1.0);

    assert_int_equal(pbtree_reserve(&pool, m, &t, 4), 0);
    assert_int_equal(pbtree_insert(&t, &pool, m, &one, 5), 1);
    assert_int_equal(pbtree_insert(&t, &pool, m, &one_f, 5), 0);
    assert_int_equal(pbtree_insert(&t, &pool, m, &one_f, 6), 1);
    assert_true(pbtree_contains(&t, &one_f, 5));
    assert_int_equal(t.count, 2);

    pbtree_cursor c;
    pbtree_seek(&t, &one_f, 0, &c);
    assert_true(c.valid);
    assert_int_equal(pbtree_cursor_entry(&c)->key.type, VAL_INT);   /* the first one stays */
    assert_int_equal(pbtree_cursor_entry(&c)->id, 5);

    assert_int_equal(pbtree_delete(&t, &pool, m, &one_f, 5), 1);
    assert_int_equal(pbtree_delete(&t, &pool, m, &one, 5), 0);
    assert_int_equal(pbtree_delete(&t, &pool, m, &one, 6), 1);
    assert_null(t.root);
    assert_int_equal(pbtree_check(&t), 0);

    pbtree_release(&t, m);
    pbtree_pool_free(&pool, m);
}

static void expect_at(const pbtree_cursor *c, const value *key, uint64_t id)
{
    assert_true(c->valid);
    const pbtree_entry *e = pbtree_cursor_entry(c);
    assert_int_equal(value_order(&e->key, key), 0);
    assert_int_equal(e->id, id);
}

static void test_seek(void **state)
{
    mem_ctx *m = *state;
    pbtree t;
    pbtree_pool pool = { 0 };
    model md = { 0 };
    pbtree_init(&t);
    pbtree_cursor c;

    value five = value_int(5), five_f = value_float(5.0), four = value_int(4);
    value six = value_int(6), null = value_null(), yes = value_bool(true);
    value apple = str_key(m, "apple", 0), zebra = str_key(m, "zebra", 0);
    value empty = str_key(m, "", 0), b = str_key(m, "b", 0);

    pbtree_seek(&t, &five, 0, &c);
    assert_false(c.valid);
    pbtree_first(&t, &c);
    assert_false(c.valid);

    /* Key 5 under ids 2, 4, ..., 20 as an int and 7 as a float: one run of
       eleven entries, among neighbours on both sides. */
    for (uint64_t id = 20; id >= 2; id -= 2)
        write_op(&t, &pool, m, &md, true, &five, id);
    write_op(&t, &pool, m, &md, true, &five_f, 7);
    write_op(&t, &pool, m, &md, true, &four, 100);
    write_op(&t, &pool, m, &md, true, &six, 0);
    for (uint64_t id = 1; id <= 3; id++)
        write_op(&t, &pool, m, &md, true, &apple, id);
    write_op(&t, &pool, m, &md, true, &zebra, 9);
    assert_same(&t, &md);
    assert_true(t.height >= 2);

    /* A key's entries in id order, then the next key. */
    pbtree_seek(&t, &five, 0, &c);
    uint64_t run[] = { 2, 4, 6, 7, 8, 10, 12, 14, 16, 18, 20 };
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++) {
        expect_at(&c, &five, run[i]);
        pbtree_cursor_next(&c);
    }
    expect_at(&c, &six, 0);
    pbtree_cursor_next(&c);
    assert_false(c.valid);

    /* Into the middle of the run: at an id, between ids, past them all. */
    pbtree_seek(&t, &five_f, 7, &c);
    expect_at(&c, &five, 7);
    assert_int_equal(pbtree_cursor_entry(&c)->key.type, VAL_FLOAT);
    pbtree_seek(&t, &five, 9, &c);
    expect_at(&c, &five, 10);
    pbtree_seek(&t, &five, UINT64_MAX, &c);
    expect_at(&c, &six, 0);

    /* Past the end, and between kinds (strings < booleans < numbers < null). */
    pbtree_seek(&t, &six, 1, &c);
    assert_false(c.valid);
    pbtree_seek(&t, &null, 0, &c);
    assert_false(c.valid);
    pbtree_seek(&t, &yes, 0, &c);
    expect_at(&c, &four, 100);
    pbtree_seek(&t, &empty, 0, &c);
    expect_at(&c, &apple, 1);
    pbtree_seek(&t, &b, 0, &c);
    expect_at(&c, &zebra, 9);
    pbtree_first(&t, &c);
    expect_at(&c, &apple, 1);

    /* And at every entry and just after it. */
    for (size_t i = 0; i < md.n; i++) {
        assert_seek(&t, &md, &md.e[i].key, md.e[i].id);
        assert_seek(&t, &md, &md.e[i].key, md.e[i].id + 1);
    }

    value_release(&apple);
    value_release(&zebra);
    value_release(&empty);
    value_release(&b);
    pbtree_release(&t, m);
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

/* Ascending and descending runs: the right edge splits all the time, and
   every descending insert is a new minimum that lowers separator 0 all the
   way down.  Each batch of 50 writes runs on exactly a 50-write reserve
   with a snapshot held, so every write copies its path as well. */
static void test_sequences(void **state)
{
    mem_ctx *m = *state;
    pbtree t;
    pbtree_pool pool = { 0 };
    model md = { 0 };
    pbtree_init(&t);

    enum { N = 1000, BATCH = 50 };
    for (int pass = 0; pass < 4; pass++) {
        bool insert = pass % 2 == 0, up = pass < 2;
        for (int done = 0; done < N; done += BATCH) {
            pbtree snap;
            pbtree_share(&t, &snap);
            pbtree_pool_free(&pool, m);
            assert_int_equal(pbtree_reserve(&pool, m, &t, BATCH), 0);
            mem_fail_at(1);
            for (int i = done; i < done + BATCH; i++) {
                value key = value_int(up ? i : N - 1 - i);
                assert_int_equal(insert ? pbtree_insert(&t, &pool, m, &key, 0)
                                        : pbtree_delete(&t, &pool, m, &key, 0), 1);
                if (insert)
                    model_insert(&md, &key, 0);
                else
                    model_delete(&md, &key, 0);
            }
            assert_int_equal(mem_fail_count(), 0);
            mem_fail_clear();
            assert_same(&t, &md);
            pbtree_release(&snap, m);
        }
        if (!insert) {
            assert_null(t.root);
            assert_int_equal(t.height, 0);
        }
    }

    pbtree_release(&t, m);
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

static void share_then_write(mem_ctx *m, bool release_copy_first)
{
    pbtree t, snap;
    pbtree_pool pool = { 0 };
    model md = { 0 }, snapmd;
    uint64_t rng = 0x2545f4914f6cdd1du;
    pbtree_init(&t);
    for (int k = 0; k < 600; k++)
        write_int(&t, &pool, m, &md, true, k * 2, 0);

    pbtree_share(&t, &snap);
    model_copy(&md, &snapmd);

    /* The first write copies its path, the next ones on that path nothing. */
    uint64_t bound = copy_bound(&t);
    uint64_t copied = write_int(&t, &pool, m, &md, true, 601, 0);
    assert_true(copied > 0);
    assert_true(copied <= bound);
    assert_int_equal(write_int(&t, &pool, m, &md, true, 601, 1), 0);
    assert_int_equal(write_int(&t, &pool, m, &md, false, 601, 0), 0);
    /* Writes that change nothing touch nothing. */
    assert_int_equal(write_int(&t, &pool, m, &md, true, 600, 0), 0);
    assert_int_equal(write_int(&t, &pool, m, &md, false, 603, 0), 0);

    /* Writes all over the tree: each copies at most its path. */
    for (int i = 0; i < 400; i++) {
        bound = copy_bound(&t);
        int64_t k = (int64_t)(next_rand(&rng) % 1300);
        assert_true(write_int(&t, &pool, m, &md, next_rand(&rng) % 2, k, 0) <= bound);
    }
    assert_same(&snap, &snapmd);
    assert_same(&t, &md);

    if (release_copy_first) {
        pbtree_release(&snap, m);
        assert_same(&t, &md);
        /* Every node is private again: writes copy nothing. */
        for (int i = 0; i < 400; i++) {
            int64_t k = (int64_t)(next_rand(&rng) % 1300);
            assert_int_equal(write_int(&t, &pool, m, &md, next_rand(&rng) % 2, k, 1), 0);
        }
        assert_same(&t, &md);
        pbtree_release(&t, m);
    } else {
        pbtree_release(&t, m);
        assert_same(&snap, &snapmd);
        pbtree_release(&snap, m);
    }
    pbtree_pool_free(&pool, m);
    model_free(&md);
    model_free(&snapmd);
}

static void test_share_release_copy_first(void **state) { share_then_write(*state, true); }
static void test_share_release_original_first(void **state) { share_then_write(*state, false); }

/* pbtree_cancel_or_insert against the model, on pairs (key, 2b) and (key,
   2b + 1) of which the tree holds at most one: it cancels the one held, or
   adds the one asked for, with no allocation and at most one path copied.
   Plain deletes between leave separators equal to entries no longer there
   (the cases where the pair straddles two leaves), and a snapshot taken
   now and then must not see any of it.  A hashed tree takes the plain
   writes, its trie kept (pbtree_check), and its path copies are the
   trie's as well as the tree's. */
static void cancel_or_insert(mem_ctx *m, bool hashed)
{
    pbtree t, snap;
    pbtree_pool pool = { 0 };
    model md = { 0 }, snapmd = { 0 };
    uint64_t rng = 0x853c49e6748fea9bu;
    bool held = false;
    int cancelled = 0, added = 0;
    if (hashed)
        pbtree_init_hashed(&t);
    else
        pbtree_init(&t);

    enum { OPS = 12000 };
    for (int op = 0; op < OPS; op++) {
        value key = random_key(m, &rng);
        uint64_t even = (next_rand(&rng) % 6) * 2;
        bool has_even = model_has(&md, &key, even), has_odd = model_has(&md, &key, even + 1);
        assert_false(has_even && has_odd);
        unsigned pick = (unsigned)(next_rand(&rng) % 10);
        if (pick < 3 && (has_even || has_odd)) {
            /* a plain delete: stale separators */
            write_op(&t, &pool, m, &md, false, &key, has_even ? even : even + 1);
        } else if (pick < 3 + (op < OPS / 2 ? 3 : 0) || has_even || has_odd) {
            uint64_t add = has_even ? even + 1 : has_odd ? even : even + next_rand(&rng) % 2;
            uint64_t cancel = add ^ 1;
            bool had = has_even || has_odd;
            assert_int_equal(pbtree_reserve(&pool, m, &t, 1), 0);
            uint64_t copied = mem_copied_entries(), bound = copy_bound(&t);
            mem_fail_at(1);
            int rc = pbtree_cancel_or_insert(&t, &pool, m, &key, cancel, add);
            long allocs = mem_fail_count();
            mem_fail_clear();
            assert_int_equal(allocs, 0);
            if (!hashed)   /* a hashed tree also copies its trie's path */
                assert_true(mem_copied_entries() - copied <= bound);
            assert_int_equal(rc, !had);
            if (had) {
                model_delete(&md, &key, cancel);
                cancelled++;
            } else {
                model_insert(&md, &key, add);
                added++;
            }
        }
        value_release(&key);
        assert_same(&t, &md);
        if (op % 500 == 250) {
            if (held) {
                assert_same(&snap, &snapmd);
                pbtree_release(&snap, m);
                model_free(&snapmd);
            }
            pbtree_share(&t, &snap);
            model_copy(&md, &snapmd);
            held = true;
        }
    }
    assert_true(cancelled > 1000 && added > 1000);
    assert_same(&snap, &snapmd);
    pbtree_release(&snap, m);
    model_free(&snapmd);
    pbtree_release(&t, m);
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

static void test_cancel_or_insert(void **state) { cancel_or_insert(*state, false); }
static void test_cancel_or_insert_hashed(void **state) { cancel_or_insert(*state, true); }

/* Up to five snapshots, taken and dropped at random while writing; each
   stays equal to the model of the moment it was taken.  Half the writes
   run on a pool holding exactly one write's reserve, which tests the
   reserve's worst case against copies and splits on shared paths. */
static void test_snapshots_while_writing(void **state)
{
    mem_ctx *m = *state;
    struct held {
        pbtree t;
        model md;
    } held[5];
    int nheld = 0;
    pbtree t;
    pbtree_pool pool = { 0 };
    model md = { 0 };
    uint64_t rng = 0xd1b54a32d192ed03u;
    pbtree_init(&t);

    enum { OPS = 8000 };
    for (int op = 0; op < OPS; op++) {
        unsigned r = (unsigned)(next_rand(&rng) % 100);
        if (r < 4 && nheld < 5) {
            pbtree_share(&t, &held[nheld].t);
            model_copy(&md, &held[nheld].md);
            nheld++;
        } else if (r < 8 && nheld > 0) {
            int i = (int)(next_rand(&rng) % (uint64_t)nheld);
            pbtree_release(&held[i].t, m);
            model_free(&held[i].md);
            held[i] = held[--nheld];
        } else {
            if (r % 2)
                pbtree_pool_free(&pool, m);
            value key = random_key(m, &rng);
            uint64_t bound = copy_bound(&t);
            bool insert = random_is_insert(&rng, op, OPS);
            assert_true(write_op(&t, &pool, m, &md, insert, &key, next_rand(&rng) % 6) <= bound);
            value_release(&key);
        }
        assert_same(&t, &md);
        for (int i = 0; i < nheld; i++)
            assert_same(&held[i].t, &held[i].md);
    }

    /* The writer's tree goes first; the snapshots then free what they alone
       still hold. */
    pbtree_release(&t, m);
    while (nheld) {
        int i = (int)(next_rand(&rng) % (uint64_t)nheld);
        assert_same(&held[i].t, &held[i].md);
        pbtree_release(&held[i].t, m);
        model_free(&held[i].md);
        held[i] = held[--nheld];
    }
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

/* Failing the k-th allocation of a reserve, for k = 1, 2, ... until it
   succeeds: -1, the tree unchanged, the pool short but sound; then the
   writes it reserved for run without allocating. */
static void test_reserve_failure(void **state)
{
    mem_ctx *m = *state;
    pbtree t, snap;
    pbtree_pool pool = { 0 };
    model md = { 0 };
    pbtree_init(&t);
    for (int k = 0; k < 200; k++)
        write_int(&t, &pool, m, &md, true, k, 0);
    pbtree_pool_free(&pool, m);
    pbtree_share(&t, &snap);   /* so that the writes copy too */

    enum { OPS = 3 };
    uint32_t need = OPS * (2 * (t.height + 2) + 1);
    for (long k = 1;; k++) {
        mem_fail_at(k);
        int rc = pbtree_reserve(&pool, m, &t, OPS);
        mem_fail_clear();
        assert_same(&t, &md);
        if (rc == 0)
            break;
        assert_int_equal(rc, -1);
        assert_true(pool.n < need);
        assert_true(k < 1000);
    }
    assert_true(pool.n >= need);

    /* Two inserts and a delete, the path copied under the snapshot. */
    struct { int64_t k; bool insert; } writes[OPS] = { { 1000, true }, { 0, false }, { -1, true } };
    model snapmd;
    model_copy(&md, &snapmd);
    mem_fail_at(1);
    for (int i = 0; i < OPS; i++) {
        value key = value_int(writes[i].k);
        assert_int_equal(writes[i].insert ? pbtree_insert(&t, &pool, m, &key, 0)
                                          : pbtree_delete(&t, &pool, m, &key, 0), 1);
    }
    assert_int_equal(mem_fail_count(), 0);
    mem_fail_clear();
    for (int i = 0; i < OPS; i++) {
        value key = value_int(writes[i].k);
        if (writes[i].insert)
            model_insert(&md, &key, 0);
        else
            model_delete(&md, &key, 0);
    }
    assert_same(&t, &md);
    assert_same(&snap, &snapmd);

    pbtree_release(&snap, m);
    pbtree_release(&t, m);
    pbtree_pool_free(&pool, m);
    model_free(&md);
    model_free(&snapmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_against_model, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_int_and_float_are_one_key, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_seek, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_sequences, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_share_release_copy_first, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_share_release_original_first, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_snapshots_while_writing, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_or_insert, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_or_insert_hashed, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_reserve_failure, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
