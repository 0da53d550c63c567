/*
 * Tests for adjacency blocks past ADJ_TREE_MIN entries, whose segments are
 * persistent B+trees (storage/adj_tree.h): random inserts (ids out of
 * order, self-loops' two entries at once), erases and erase-undos against
 * a model of sorted arrays while views of earlier states are held and
 * checked; what a write under a held view copies, the same at degree
 * 10,000 and 1,000,000; every allocation failure of the prepares, with the
 * block and the held view unchanged; and erases shrinking the trees.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "storage/adjacency.h"

#include "support/mem_fixture.h"

static int setup(void **state)
{
    adj_tree_min_for_tests = 64;   /* test builds' trees have tiny nodes */
    return mem_ctx_setup(state);
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(*s >> 33);
}

/* ---- the model: per segment key, entries sorted by id -------------------- */

#define NKEYS 4   /* types 0 and 1, both directions */

typedef struct model {
    uint32_t n[NKEYS], cap[NKEYS];
    adj_entry *e[NKEYS];
} model;

static uint32_t key_of(int dir, uint32_t type) { return type << 1 | (uint32_t)dir; }

static uint32_t model_find(const model *md, uint32_t k, uint32_t rel)
{
    uint32_t lo = 0, hi = md->n[k];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (md->e[k][mid].rel < rel)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool model_has(const model *md, uint32_t k, uint32_t rel)
{
    uint32_t at = model_find(md, k, rel);
    return at < md->n[k] && md->e[k][at].rel == rel;
}

static void model_insert(model *md, uint32_t k, uint32_t rel, uint32_t other)
{
    if (md->n[k] == md->cap[k]) {
        md->cap[k] = md->cap[k] ? md->cap[k] * 2 : 64;
        md->e[k] = realloc(md->e[k], md->cap[k] * sizeof(adj_entry));
        assert_non_null(md->e[k]);
    }
    uint32_t at = model_find(md, k, rel);
    memmove(&md->e[k][at + 1], &md->e[k][at], (md->n[k] - at) * sizeof(adj_entry));
    md->e[k][at] = (adj_entry){ rel, other };
    md->n[k]++;
}

static void model_erase(model *md, uint32_t k, uint32_t rel)
{
    uint32_t at = model_find(md, k, rel);
    assert_true(at < md->n[k] && md->e[k][at].rel == rel);
    memmove(&md->e[k][at], &md->e[k][at + 1], (md->n[k] - at - 1) * sizeof(adj_entry));
    md->n[k]--;
}

static void model_copy(model *to, const model *from)
{
    for (uint32_t k = 0; k < NKEYS; k++) {
        to->n[k] = to->cap[k] = from->n[k];
        to->e[k] = malloc((from->n[k] + 1) * sizeof(adj_entry));
        assert_non_null(to->e[k]);
        memcpy(to->e[k], from->e[k], from->n[k] * sizeof(adj_entry));
    }
}

static void model_free(model *md)
{
    for (uint32_t k = 0; k < NKEYS; k++)
        free(md->e[k]);
    memset(md, 0, sizeof *md);
}

static uint32_t model_len(const model *md)
{
    uint32_t len = 0;
    for (uint32_t k = 0; k < NKEYS; k++)
        len += md->n[k];
    return len;
}

/* b holds exactly the model, read through its runs. */
static void assert_block(const adj_block *b, const model *md)
{
    assert_int_equal(adj_check(b), 0);
    assert_int_equal(adj_len(b), model_len(md));
    uint32_t i = 0;
    for (uint32_t k = 0; k < NKEYS; k++) {
        int s = adj_find_segment(b, (int)(k & 1), k >> 1);
        if (!md->n[k]) {
            assert_int_equal(s, -1);
            continue;
        }
        assert_int_equal(s, (int)i++);
        int dir;
        uint32_t type;
        assert_int_equal(adj_segment_info(b, (uint32_t)s, &dir, &type), md->n[k]);
        uint32_t at = 0;
        for (adj_run r = adj_run_first(b, (uint32_t)s); r.n; r = adj_run_next(b, (uint32_t)s, r))
            for (uint32_t j = 0; j < r.n; j++, at++) {
                assert_true(at < md->n[k]);
                assert_int_equal(r.e[j].rel, md->e[k][at].rel);
                assert_int_equal(r.e[j].other, md->e[k][at].other);
            }
        assert_int_equal(at, md->n[k]);
    }
    assert_int_equal(adj_nsegments(b), i);
}

static void insert(mem_ctx *m, adj_block **bp, model *md, int dir, uint32_t type, uint32_t rel,
                   uint32_t other)
{
    assert_int_equal(adj_prepare_insert(m, bp, &(adj_edit){ dir, type, rel }, 1), 0);
    adj_insert(*bp, dir, type, rel, other);
    model_insert(md, key_of(dir, type), rel, other);
}

static void erase(mem_ctx *m, adj_block **bp, model *md, int dir, uint32_t type, uint32_t rel)
{
    assert_int_equal(adj_prepare_erase(m, bp, &(adj_edit){ dir, type, rel }), 0);
    assert_true(adj_erase(m, *bp, dir, type, rel) >= 0);
    model_erase(md, key_of(dir, type), rel);
}

/* A tree block of n entries in segment (OUT, 0), ids 0, 2, 4, ... (odd
   ids are free for inserts between them), built in bulk. */
static adj_block *hub(mem_ctx *m, model *md, uint32_t n)
{
    adj_block *b = NULL;
    assert_int_equal(adj_reserve_segments(m, &b, n, 1), 0);
    for (uint32_t i = 0; i < n; i++) {
        adj_append(b, ADJ_OUT, 0, 2 * i, i);
        if (md)
            model_insert(md, key_of(ADJ_OUT, 0), 2 * i, i);
    }
    assert_int_equal(adj_bulk_done(m, &b), 0);
    assert_true(adj_is_tree(b));
    return b;
}

/* ---- tests -------------------------------------------------------------- */

#define VIEWS 4

/* Random edits with views of earlier states held: every held block keeps
   its state, and the current one follows the model. */
static void test_random_with_views(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    adj_block *b = NULL;
    adj_block *held[VIEWS] = { 0 };
    model held_md[VIEWS] = { 0 };
    uint64_t seed = 7;
    /* Grow past ADJ_TREE_MIN by single inserts, ids in random order. */
    for (uint32_t i = 0; i < 3 * ADJ_TREE_MIN; i++) {
        uint32_t rel = rnd(&seed) % 1000000, k = rnd(&seed) % NKEYS;
        if (!model_has(&md, k, rel))
            insert(m, &b, &md, (int)(k & 1), k >> 1, rel, i);
    }
    assert_true(adj_is_tree(b));
    assert_block(b, &md);

    for (int step = 0; step < 6000; step++) {
        uint32_t op = rnd(&seed) % 16, k = rnd(&seed) % NKEYS;
        int dir = (int)(k & 1);
        uint32_t type = k >> 1;
        if (op < 6) {
            uint32_t rel = rnd(&seed) % 1000000;
            if (model_has(&md, k, rel) || model_has(&md, k ^ 1, rel))
                continue;
            if (op == 0) {   /* a self-loop: both directions at once */
                adj_edit ins[2] = { { ADJ_OUT, type, rel }, { ADJ_IN, type, rel } };
                assert_int_equal(adj_prepare_insert(m, &b, ins, 2), 0);
                adj_insert(b, ADJ_OUT, type, rel, 5);
                adj_insert(b, ADJ_IN, type, rel, 5);
                model_insert(&md, key_of(ADJ_OUT, type), rel, 5);
                model_insert(&md, key_of(ADJ_IN, type), rel, 5);
            } else {
                insert(m, &b, &md, dir, type, rel, step);
            }
        } else if (op < 11 && md.n[k]) {
            erase(m, &b, &md, dir, type, md.e[k][rnd(&seed) % md.n[k]].rel);
        } else if (op < 12 && md.n[k]) {
            /* Erase, then undo it as a rollback does. */
            adj_entry gone = md.e[k][rnd(&seed) % md.n[k]];
            erase(m, &b, &md, dir, type, gone.rel);
            assert_int_equal(adj_prepare_insert(m, &b, &(adj_edit){ dir, type, gone.rel }, 1), 0);
            adj_insert(b, dir, type, gone.rel, gone.other);
            model_insert(&md, k, gone.rel, gone.other);
        } else if (op < 13) {
            assert_int_equal(adj_prepare_erase(m, &b, &(adj_edit){ dir, type, 1000001 }), 0);
            assert_int_equal(adj_erase(m, b, dir, type, 1000001), -1);
        } else if (op < 15) {
            /* Take a view: the block is shared from here on. */
            uint32_t v = rnd(&seed) % VIEWS;
            adj_release(m, &held[v]);
            model_free(&held_md[v]);
            held[v] = b;
            adj_retain(b);
            model_copy(&held_md[v], &md);
        } else {
            uint32_t v = rnd(&seed) % VIEWS;
            if (held[v])
                assert_block(held[v], &held_md[v]);
            adj_release(m, &held[v]);
            model_free(&held_md[v]);
        }
        if (step % 97 == 0) {
            assert_block(b, &md);
            for (uint32_t v = 0; v < VIEWS; v++)
                if (held[v])
                    assert_block(held[v], &held_md[v]);
        }
    }
    assert_block(b, &md);
    for (uint32_t v = 0; v < VIEWS; v++) {
        if (held[v])
            assert_block(held[v], &held_md[v]);
        adj_release(m, &held[v]);
        model_free(&held_md[v]);
    }
    /* Drain: segments go as they empty. */
    for (uint32_t k = 0; k < NKEYS; k++)
        while (md.n[k])
            erase(m, &b, &md, (int)(k & 1), k >> 1, md.e[k][md.n[k] / 2].rel);
    assert_block(b, &md);
    assert_int_equal(adj_nsegments(b), 0);
    adj_release(m, &b);
    model_free(&md);
}

/* What one write under a held view copies, and allocates: entries copied
   and bytes taken for an insert, an erase and an insert opening a
   segment, at degree d. */
typedef struct write_cost {
    uint64_t copied[3];
    size_t bytes[3];
} write_cost;

static write_cost hub_write_cost(mem_ctx *m, uint32_t d)
{
    write_cost c = { { 0 }, { 0 } };
    adj_block *b = hub(m, NULL, d);
    adj_edit edits[3] = { { ADJ_OUT, 0, d | 1 }, { ADJ_OUT, 0, d / 2 * 2 }, { ADJ_IN, 3, 7 } };
    for (int w = 0; w < 3; w++) {
        adj_block *view = b;
        adj_retain(view);
        uint64_t copied = mem_copied_entries();
        size_t bytes = mem_ctx_bytes(m);
        if (w == 1) {
            assert_int_equal(adj_prepare_erase(m, &b, &edits[w]), 0);
            assert_int_equal(adj_erase(m, b, edits[w].dir, edits[w].type, edits[w].rel), 0);
        } else {
            assert_int_equal(adj_prepare_insert(m, &b, &edits[w], 1), 0);
            adj_insert(b, edits[w].dir, edits[w].type, edits[w].rel, 1);
        }
        c.copied[w] = mem_copied_entries() - copied;
        c.bytes[w] = mem_ctx_bytes(m) - bytes;
        assert_ptr_not_equal(b, view);
        assert_int_equal(adj_len(view), d + (w == 1));   /* the view is as it was */
        adj_release(m, &view);
    }
    assert_int_equal(adj_check(b), 0);
    adj_release(m, &b);
    return c;
}

static void test_write_under_view_is_bounded(void **state)
{
    mem_ctx *m = *state;
    write_cost small = hub_write_cost(m, 10000), big = hub_write_cost(m, 1000000);
    for (int w = 0; w < 3; w++) {
        /* One leaf and the directory, whatever the degree. */
        assert_true(big.copied[w] <= 2 * 510 + 8);
        assert_true(big.copied[w] <= small.copied[w] + 510);
        assert_true(big.bytes[w] <= 16 * 1024);
        assert_true(big.bytes[w] <= small.bytes[w] + 8 * 1024);
    }
}

/* A flat block crossing ADJ_TREE_MIN under a held view becomes trees once;
   the view keeps the flat block. */
static void test_conversion_under_view(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 }, held_md = { 0 };
    adj_block *b = NULL;
    for (uint32_t i = 0; i < ADJ_TREE_MIN; i++)
        insert(m, &b, &md, (int)(i % 2), i / 2 % 2, ADJ_TREE_MIN - i, i);   /* ids falling */
    assert_false(adj_is_tree(b));
    adj_block *view = b;
    adj_retain(view);
    model_copy(&held_md, &md);
    insert(m, &b, &md, ADJ_OUT, 1, 5000, 1);
    assert_true(adj_is_tree(b));
    assert_false(adj_is_tree(view));
    assert_block(b, &md);
    assert_block(view, &held_md);
    adj_release(m, &view);
    adj_release(m, &b);
    model_free(&md);
    model_free(&held_md);
}

/* Each prepare with its 1st, 2nd, ... allocation failing: the block and
   the held view keep their entries, until one succeeds. */
static void sweep(mem_ctx *m, uint32_t d, const adj_edit *e, bool is_insert)
{
    model md = { 0 };
    adj_block *b = hub(m, &md, d);
    /* Fill the leaves around e->rel so an insert splits them. */
    for (uint32_t i = 0; is_insert && e->dir == ADJ_OUT && i < 600; i += 2)
        if (e->rel - 300 + i != e->rel)
            insert(m, &b, &md, ADJ_OUT, 0, e->rel - 300 + i, i);
    adj_block *view = b;
    adj_retain(view);
    long failures = 0;
    for (long k = 1;; k++) {
        assert_true(k < 64);
        mem_fail_at(k);
        int rc = is_insert ? adj_prepare_insert(m, &b, e, 1) : adj_prepare_erase(m, &b, e);
        mem_fail_clear();
        assert_block(b, &md);
        assert_block(view, &md);
        if (rc == 0)
            break;
        failures++;
    }
    assert_true(failures > 0);
    if (is_insert) {
        adj_insert(b, e->dir, e->type, e->rel, 3);
        model_insert(&md, key_of(e->dir, e->type), e->rel, 3);
    } else {
        assert_int_equal(adj_erase(m, b, e->dir, e->type, e->rel), 0);
        model_erase(&md, key_of(e->dir, e->type), e->rel);
    }
    assert_block(b, &md);
    adj_release(m, &view);
    adj_release(m, &b);
    model_free(&md);
}

static void test_prepare_failures(void **state)
{
    mem_ctx *m = *state;
    sweep(m, 100000, &(adj_edit){ ADJ_OUT, 0, 50001 }, true);   /* splits */
    sweep(m, 100000, &(adj_edit){ ADJ_IN, 1, 50001 }, true);    /* a new segment */
    sweep(m, 100000, &(adj_edit){ ADJ_OUT, 0, 50000 }, false);
    sweep(m, 2000, &(adj_edit){ ADJ_OUT, 0, 2002 }, false);
}

/* Erasing most entries merges leaves: the trees shrink with their
   entries. */
static void test_erases_shrink(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    adj_block *b = hub(m, &md, 50000);
    size_t full = adj_private_bytes(b);
    uint64_t seed = 3;
    while (md.n[0] > 5000)
        erase(m, &b, &md, ADJ_OUT, 0, md.e[0][rnd(&seed) % md.n[0]].rel);
    assert_block(b, &md);
    /* A tenth of the entries in under half the bytes (inner nodes do not
       merge: with the test builds' four children they weigh most). */
    assert_true(adj_private_bytes(b) < full / 2);
    while (md.n[0])
        erase(m, &b, &md, ADJ_OUT, 0, md.e[0][rnd(&seed) % md.n[0]].rel);
    assert_int_equal(adj_nsegments(b), 0);
    adj_release(m, &b);
    model_free(&md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_with_views, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_write_under_view_is_bounded, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_under_view, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_prepare_failures, setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_erases_shrink, setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
