/*
 * Tests for index/label_index: prepare/set/has/count/next on several
 * labels against a model of plain bit arrays, iteration in id order, the
 * copy-on-write of a shared table, and every allocation failure of
 * labelidx_prepare on private and shared tables.
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

#include "index/label_index.h"

#include "support/mem_fixture.h"

/* ---- the model ------------------------------------------------------------ */

#define NLABELS 8
#define NNODES 1200

typedef struct model {
    unsigned char bit[NLABELS][NNODES];
} model;

static uint64_t model_count(const model *md, uint32_t label)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < NNODES; i++)
        n += md->bit[label][i];
    return n;
}

/* l agrees with the model on every label and node: has, count, and the
   whole labelidx_next walk in id order. */
static void assert_index(const label_index *l, const model *md)
{
    for (uint32_t label = 0; label < NLABELS; label++) {
        assert_int_equal(labelidx_count(l, label), model_count(md, label));
        uint64_t next = labelidx_next(l, label, 0);
        for (uint64_t node = 0; node < NNODES; node++) {
            bool want = md->bit[label][node];
            assert_int_equal(labelidx_has(l, label, node), want);
            if (want) {
                assert_int_equal(next, node);
                next = labelidx_next(l, label, node + 1);
            }
        }
        assert_int_equal(next, UINT64_MAX);
        assert_false(labelidx_has(l, label, NNODES + 100000));
    }
    assert_int_equal(labelidx_count(l, NLABELS + 5), 0);
    assert_false(labelidx_has(l, NLABELS + 5, 0));
    assert_int_equal(labelidx_next(l, NLABELS + 5, 0), UINT64_MAX);
}

static void set_ok(mem_ctx *m, label_index **lp, model *md, uint32_t label, uint64_t node,
                   bool on)
{
    assert_int_equal(labelidx_prepare(m, lp, label, node), 0);
    labelidx_set(m, *lp, label, node, on);
    md->bit[label][node] = on;
}

/* A deterministic generator, so a failure reproduces. */
static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(*s >> 33);
}

/* An index with a spread of nodes on labels 0, 2, 3 and 5. */
static label_index *build(mem_ctx *m, model *md)
{
    static const uint32_t labels[] = { 0, 2, 3, 5 };
    label_index *l = NULL;
    memset(md, 0, sizeof *md);
    uint64_t seed = 7;
    for (int i = 0; i < 300; i++) {
        uint32_t label = labels[rnd(&seed) % 4];
        uint64_t node = rnd(&seed) % NNODES;
        set_ok(m, &l, md, label, node, true);
    }
    assert_index(l, md);
    return l;
}

/* ---- tests -------------------------------------------------------------- */

static void test_empty(void **state)
{
    static model md;
    memset(&md, 0, sizeof md);
    assert_index(NULL, &md);
    assert_int_equal(labelidx_labels(NULL), 0);
    label_index *l = NULL;
    labelidx_retain(l);
    labelidx_release(*state, &l);   /* NULL is the empty index */
}

static void test_set_has_count(void **state)
{
    mem_ctx *m = *state;
    static model md;
    memset(&md, 0, sizeof md);
    label_index *l = NULL;
    /* Word boundaries and a far node on three labels. */
    static const uint64_t nodes[] = { 0, 1, 63, 64, 65, 127, 128, 200, 1000, 1199 };
    static const uint32_t labels[] = { 3, 0, 7 };
    for (size_t a = 0; a < 3; a++) {
        for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
            if ((i + a) % 3 == 0)
                continue;
            set_ok(m, &l, &md, labels[a], nodes[i], true);
            assert_index(l, &md);
        }
    }
    assert_int_equal(labelidx_labels(l), 8);   /* covers label 7 */

    /* Setting a set bit or clearing a clear one does not move the count. */
    set_ok(m, &l, &md, 3, 63, true);
    set_ok(m, &l, &md, 3, 0, false);
    assert_index(l, &md);
    uint64_t before = labelidx_count(l, 3);
    set_ok(m, &l, &md, 3, 63, true);
    set_ok(m, &l, &md, 3, 0, false);
    assert_int_equal(labelidx_count(l, 3), before);

    /* Clear everything. */
    for (uint32_t label = 0; label < NLABELS; label++)
        for (uint64_t node = 0; node < NNODES; node++)
            if (md.bit[label][node]) {
                set_ok(m, &l, &md, label, node, false);
                assert_false(labelidx_has(l, label, node));
            }
    assert_index(l, &md);
    labelidx_release(m, &l);
    assert_null(l);
}

static void test_next_iteration(void **state)
{
    mem_ctx *m = *state;
    static model md;
    label_index *l = build(m, &md);
    /* next(from) from every start, against a scan of the model. */
    for (uint32_t label = 0; label < NLABELS; label++) {
        for (uint64_t from = 0; from < NNODES + 70; from++) {
            uint64_t want = UINT64_MAX;
            for (uint64_t n = from; n < NNODES; n++)
                if (md.bit[label][n]) {
                    want = n;
                    break;
                }
            assert_int_equal(labelidx_next(l, label, from), want);
        }
    }
    assert_int_equal(labelidx_next(l, 0, UINT64_MAX - 1), UINT64_MAX);
    labelidx_release(m, &l);
}

static void test_shared_table(void **state)
{
    mem_ctx *m = *state;
    static model md, held_md;
    label_index *l = build(m, &md);
    held_md = md;
    label_index *held = l;
    labelidx_retain(held);

    /* Set a new bit, clear an old one, touch a new label: the held table
       never changes. */
    uint64_t before = mem_copied_entries();
    set_ok(m, &l, &md, 2, 5, !md.bit[2][5]);
    assert_ptr_not_equal(l, held);
    assert_true(mem_copied_entries() > before);
    assert_index(l, &md);
    assert_index(held, &held_md);

    uint64_t old = labelidx_next(l, 0, 0);
    assert_true(old != UINT64_MAX);
    set_ok(m, &l, &md, 0, old, false);
    set_ok(m, &l, &md, 6, 1100, true);
    set_ok(m, &l, &md, 3, NNODES - 1, true);
    assert_index(l, &md);
    assert_index(held, &held_md);

    /* Writes to the same word again are in place. */
    before = mem_copied_entries();
    set_ok(m, &l, &md, 6, 1101, true);
    assert_int_equal(mem_copied_entries(), before);

    /* Dropping the new table leaves the held one whole. */
    labelidx_release(m, &l);
    assert_index(held, &held_md);
    labelidx_release(m, &held);
}

/* ---- allocation failure ------------------------------------------------ */

/* labelidx_prepare with the 1st, 2nd, ... allocation failing until it
   succeeds, then sets the bit; after each failure *lp and held (when not
   NULL) answer as before.  Returns the failures seen. */
static long prepare_until_success(mem_ctx *m, label_index **lp, model *md,
                                  const label_index *held, const model *held_md,
                                  uint32_t label, uint64_t node, bool on)
{
    for (long k = 1;; k++) {
        assert_true(k < 64);
        mem_fail_at(k);
        int rc = labelidx_prepare(m, lp, label, node);
        mem_fail_clear();
        if (rc == 0) {
            labelidx_set(m, *lp, label, node, on);
            md->bit[label][node] = on;
            assert_index(*lp, md);
            return k - 1;
        }
        assert_int_equal(rc, -1);
        assert_index(*lp, md);
        if (held)
            assert_index(held, held_md);
    }
}

static void test_prepare_failure(void **state)
{
    mem_ctx *m = *state;
    static model md, held_md;
    /* Targets: a new label, a far node (many words to push), an existing
       word, a clear. */
    static const struct {
        uint32_t label;
        uint64_t node;
        bool on;
    } steps[] = {
        { 1, 3, true }, { 1, 1150, true }, { 4, 700, true },
        { 1, 4, true }, { 7, 0, true },    { 1, 3, false },
    };
    enum { NSTEPS = sizeof steps / sizeof steps[0] };

    /* Private. */
    memset(&md, 0, sizeof md);
    label_index *l = NULL;
    long failures = 0;
    for (int s = 0; s < NSTEPS; s++)
        failures += prepare_until_success(m, &l, &md, NULL, NULL, steps[s].label,
                                          steps[s].node, steps[s].on);
    assert_true(failures > 0);
    labelidx_release(m, &l);
    assert_int_equal(mem_ctx_bytes(m), 0);

    /* Shared: each step starts from a fresh share of the same index. */
    label_index *base = build(m, &md);
    static model base_md;
    base_md = md;
    for (int s = 0; s < NSTEPS; s++) {
        l = base;
        labelidx_retain(l);
        md = base_md;
        held_md = base_md;
        assert_true(prepare_until_success(m, &l, &md, base, &held_md, steps[s].label,
                                          steps[s].node, steps[s].on) >= 1);
        assert_ptr_not_equal(l, base);
        assert_index(base, &base_md);
        labelidx_release(m, &l);
        assert_index(base, &base_md);
    }
    labelidx_release(m, &base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_set_has_count, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_next_iteration, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_shared_table, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_prepare_failure, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
