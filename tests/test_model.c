/*
 * Model-based randomised test of the direct API, views, forks and indices.
 *
 * Why a model: fork, fold-back and flatten only go wrong for particular
 * interleavings of writes and view lifetimes, which hand-written cases
 * miss.  A seeded xorshift generator explores the interleavings; a plain
 * reference model (support/model.h), driven in lockstep with the graph,
 * says what every view must show, so a divergence — in the current state
 * or in a view held across later writes — is caught at the step that
 * caused it.  Each held view is paired with an exact copy of the model at
 * the moment it was taken.  Beside the writes support/model.h makes, this
 * test creates and drops indices (hash, range, unique; on labels or
 * types; one key or two) and steers writes into unique-key collisions.
 *
 * After every step:
 *   (a) a fresh snapshot equals the current model;
 *   (b) every held view (up to MAX_VIEWS) equals its copy of the model;
 *   (c) strata_integrity_check() passes on each of them;
 *   (d) every create returned the id the model predicted;
 * and strata_is_forked() is false after a write with no view held and true
 * after a write that changed the graph under a held view, no index is
 * deeper than LSTACK_CAP, and a flatten only happens when some index of
 * the state written to was at the cap.
 * "Equals" is compare_view's (support/model.h).
 *
 * Environment: STRATA_MODEL_SEEDS=n runs seeds 1..n (default 30);
 * STRATA_MODEL_SEED=s runs seed s alone — every failure message names its
 * seed, step and operation; STRATA_MODEL_STEPS=n sets steps per seed.
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
#include "index/level_stack.h"

#define MAX_IDS 64        /* ids probed by every comparison */
#define NODE_LIMIT 24     /* live nodes at most, so ids stay small */
#define REL_LIMIT 48
#define NLABELS 4
#define NTYPES 3
#define NKEYS 3
#define MAX_INDEXES 8
#define MAX_VIEWS 6
#define DEFAULT_SEEDS 30
#define DEFAULT_STEPS 400
/* Integer property values are drawn from [0, INT_RANGE): a small range, so
   equal values (and unique-index collisions) are common. */
#define INT_RANGE 5
#define INT_PERCENT 75
#define REMOVE_AS_NULL_PERCENT 30

/* This test's part of a run. */
typedef struct run_state {
    bool forked_known;       /* the last write settled strata_is_forked() ... */
    bool expect_forked;      /* ... to this */
    bool cap_reached;        /* an index of the current state is at the cap */
    uint64_t outcomes[STRATA_EFULL + 1];   /* writes by expected status */
} run_state;

#include "support/model.h"

/* What a set of runs exercised, for the summary line. */
typedef struct totals {
    uint64_t views_compared;
    uint64_t outcomes[STRATA_EFULL + 1];
} totals;

static const char *run_context(const run *r, char *buf, size_t n)
{
    (void)r;
    if (n)
        buf[0] = '\0';
    return buf;
}

/* ---- expectations on writes ------------------------------------------------------ */

static bool props_same(const mval *a, const mval *b)
{
    for (uint32_t k = 0; k < NKEYS; k++)
        if (!mval_eq(&a[k], &b[k]))
            return false;
    return true;
}

/* Whether two models describe the same graph (free lists aside). */
static bool model_same(const model *a, const model *b)
{
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mnode *x = &a->node[id], *y = &b->node[id];
        const mrel *p = &a->rel[id], *q = &b->rel[id];
        if (x->alive != y->alive || x->labels != y->labels || !props_same(x->props, y->props))
            return false;
        if (p->alive != q->alive || p->start != q->start || p->end != q->end ||
            p->type != q->type || !props_same(p->props, q->props))
            return false;
    }
    if (a->nidx != b->nidx)
        return false;
    for (uint32_t i = 0; i < a->nidx; i++)
        if (a->idx[i].id != b->idx[i].id)
            return false;
    return true;
}

/* A write whose status the model knows without constraints: on success the
   graph must now be r->next.  Also settles what strata_is_forked() must
   say where the header pins it down: false after a write with no view
   held (fold-back at write entry), true after a write that changed the
   graph under a held view.  Whether a refused or no-op write forks is the
   library's choice, so after one the state is left unknown. */
static void expect_outcome(run *r, strata_status got, strata_status want)
{
    r->test.outcomes[want]++;
    expect_status(r, got, want);
    bool changed = want == STRATA_OK && !model_same(r->work, r->next);
    if (want == STRATA_OK)
        *r->work = *r->next;
    r->test.forked_known = want == STRATA_OK && (r->nheld == 0 || changed);
    r->test.expect_forked = r->nheld > 0;
}

/* ---- operations on indices and views: false when they do not apply now ----------- */

static int find_same_index(const model *m, const mindex *d)
{
    for (uint32_t i = 0; i < m->nidx; i++) {
        const mindex *e = &m->idx[i];
        if (e->kind == d->kind && e->on_rels == d->on_rels && e->token == d->token &&
            e->nkeys == d->nkeys && !memcmp(e->keys, d->keys, d->nkeys * sizeof *d->keys))
            return (int)i;
    }
    return -1;
}

static const char *const kind_names[] = { "hash", "range", "unique" };

static void index_text(const mindex *d, char *buf, size_t n)
{
    if (d->nkeys == 1)
        snprintf(buf, n, "%s index on %s %u (key %u)", kind_names[d->kind],
                 d->on_rels ? "type" : "label", d->token, d->keys[0]);
    else
        snprintf(buf, n, "%s index on %s %u (keys %u, %u)", kind_names[d->kind],
                 d->on_rels ? "type" : "label", d->token, d->keys[0], d->keys[1]);
}

static bool op_index_create(run *r)
{
    mindex d = { 0 };
    d.kind = (strata_index_kind)below(&r->rng, 3);
    d.on_rels = chance(&r->rng, 25);
    d.token = below(&r->rng, d.on_rels ? NTYPES : NLABELS);
    d.nkeys = chance(&r->rng, 30) ? 2 : 1;
    d.keys[0] = below(&r->rng, NKEYS);
    d.keys[1] = (d.keys[0] + 1 + below(&r->rng, NKEYS - 1)) % NKEYS;
    int same = find_same_index(r->work, &d);
    if (same < 0 && r->work->nidx >= MAX_INDEXES)
        return false;
    char text[128];
    index_text(&d, text, sizeof text);
    snprintf(r->op, sizeof r->op, "create a %s", text);
    strata_token keys[MAX_PARTS] = { r->tok.key[d.keys[0]], r->tok.key[d.keys[1]] };
    strata_index got = UINT32_MAX;
    strata_status s =
        strata_index_create(r->g, d.kind, d.on_rels, index_token(r, &d), keys, d.nkeys, &got);
    if (same >= 0) {
        /* An index of the same kind on the same keys: refused, naming it. */
        expect_outcome(r, s, STRATA_EINVAL);
        if (got != r->work->idx[same].id)
            mismatch(r, "a refused duplicate index names index %u, not the existing %u", got,
                     r->work->idx[same].id);
        return true;
    }
    *r->next = *r->work;
    d.id = r->next->next_index_id++;
    r->next->idx[r->next->nidx++] = d;
    expect_write(r, s);
    if (s == STRATA_OK && got != d.id)
        mismatch(r, "the new index has id %u, the model expects %u", got, d.id);
    return true;
}

static bool op_index_drop(run *r)
{
    const model *m = r->work;
    /* Mostly a live index; otherwise any id up to two past the last one
       handed out: dropped, refused or never assigned, all not found. */
    strata_index id = m->nidx && chance(&r->rng, 80) ? m->idx[below(&r->rng, m->nidx)].id
                                                    : below(&r->rng, m->next_index_id + 2);
    snprintf(r->op, sizeof r->op, "drop index %u", id);
    *r->next = *m;
    strata_status want = STRATA_ENOTFOUND;
    for (uint32_t i = 0; i < r->next->nidx; i++)
        if (r->next->idx[i].id == id) {
            r->next->idx[i] = r->next->idx[--r->next->nidx];
            want = STRATA_OK;
            break;
        }
    expect_outcome(r, strata_index_drop(r->g, id), want);
    return true;
}

/* Moves an entity one write closer to sharing a unique index key with
   another: sets the first key part that differs, or — when every part
   already matches, on a node without the label — adds the label.  When
   that write completes the collision the model expects STRATA_ECONSTRAINT
   and no change; the candidate needing fewest writes is chosen, so
   collisions are frequent. */
static bool op_unique_clash(run *r)
{
    const model *m = r->work;
    uint32_t uniq[MAX_INDEXES], nu = 0;
    for (uint32_t i = 0; i < m->nidx; i++)
        if (m->idx[i].kind == STRATA_INDEX_UNIQUE)
            uniq[nu++] = i;
    if (!nu)
        return false;
    const mindex *d = &m->idx[uniq[below(&r->rng, nu)]];
    uint32_t holders[MAX_IDS], nh = 0;
    mval key[MAX_PARTS];
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (model_key(m, d, id, key))
            holders[nh++] = id;
    if (!nh)
        return false;
    uint32_t a = holders[below(&r->rng, nh)];
    model_key(m, d, a, key);
    uint32_t best = UINT32_MAX, best_cost = UINT32_MAX, first = below(&r->rng, MAX_IDS);
    for (uint32_t off = 0; off < MAX_IDS; off++) {
        uint32_t b = (first + off) % MAX_IDS;
        const mval *p = entity_props(m, d->on_rels, b);
        bool covered = entity_has_token(m, d->on_rels, b, d->token);
        if (b == a || !p || (d->on_rels && !covered))   /* a type cannot change */
            continue;
        uint32_t cost = covered ? 0 : 1;
        for (uint32_t k = 0; k < d->nkeys; k++)
            cost += !mval_eq(&p[d->keys[k]], &key[k]);
        if (cost < best_cost) {
            best = b;
            best_cost = cost;
        }
    }
    if (best == UINT32_MAX)
        return false;
    const mval *p = entity_props(m, d->on_rels, best);
    *r->next = *m;
    for (uint32_t k = 0; k < d->nkeys; k++) {
        if (mval_eq(&p[d->keys[k]], &key[k]))
            continue;
        char text[64];
        snprintf(r->op, sizeof r->op,
                 "unique clash with %s %u on index %u: set property %u of %u to %s",
                 d->on_rels ? "relationship" : "node", a, d->id, d->keys[k], best,
                 mval_text(&key[k], text, sizeof text));
        (d->on_rels ? r->next->rel[best].props : r->next->node[best].props)[d->keys[k]] = key[k];
        expect_write(r, prop_write(r, d->on_rels, best, d->keys[k], &key[k]));
        return true;
    }
    snprintf(r->op, sizeof r->op, "unique clash with node %u on index %u: add label %u to %u", a,
             d->id, d->token, best);
    r->next->node[best].labels |= (uint8_t)(1u << d->token);
    expect_write(r, strata_node_add_label(r->g, best, r->tok.label[d->token]));
    return true;
}

static bool op_view_take(run *r)
{
    if (r->nheld == MAX_VIEWS)
        return false;
    snprintf(r->op, sizeof r->op, "take view #%u", r->nheld);
    held_view *h = &r->held[r->nheld];
    h->v = NULL;
    expect_status(r, strata_snapshot(r->g, &h->v), STRATA_OK);
    *h->m = *r->work;
    h->taken_at = r->step;
    r->nheld++;
    return true;
}

static const op_entry ops[] = {
    { op_node_create, 12 },  { op_node_delete, 4 },   { op_node_detach_delete, 3 },
    { op_label_add, 8 },     { op_label_remove, 5 },  { op_node_set, 14 },
    { op_node_remove, 4 },   { op_rel_create, 12 },   { op_rel_delete, 5 },
    { op_rel_set, 6 },       { op_rel_remove, 2 },    { op_index_create, 3 },
    { op_index_drop, 1 },    { op_unique_clash, 4 },  { op_view_take, 6 },
    { op_view_release, 5 },
};

/* ---- checks ----------------------------------------------------------------------- */

/* Everything checked after a step; flattens_before and cap_before are read
   before the step ran. */
static void check_step(run *r, uint64_t flattens_before, bool cap_before)
{
    snprintf(r->where, sizeof r->where, "the graph");
    /* Only writes change the fork state: taking or releasing a view does
       not, so a state the last write settled still holds. */
    if (r->test.forked_known && strata_is_forked(r->g) != r->test.expect_forked)
        mismatch(r, "strata_is_forked is %d with %u views held", !r->test.expect_forked,
                 r->nheld);
    if (lstack_flattens() != flattens_before && !cap_before)
        mismatch(r, "a level stack flattened although no index of the state written to was "
                 "at depth %d", LSTACK_CAP);

    strata_view *fresh = NULL;
    expect_status(r, strata_snapshot(r->g, &fresh), STRATA_OK);
    snprintf(r->where, sizeof r->where, "a fresh snapshot");
    /* Whether the next write may flatten: read from the current state. */
    r->test.cap_reached = compare_view(r, fresh, r->work) == LSTACK_CAP;
    strata_view_release(&fresh);
    compare_held_views(r);
}

/* ---- the runs ----------------------------------------------------------------- */

static void run_seed(uint64_t seed, uint32_t steps, totals *t)
{
    run *r = run_new(seed);
    for (r->step = 1; r->step <= steps; r->step++) {
        uint64_t flattens = lstack_flattens();
        bool cap = r->test.cap_reached;
        run_random_op(r, ops, sizeof ops / sizeof *ops);
        check_step(r, flattens, cap);
    }
    t->views_compared += r->views_compared;
    for (size_t i = 0; i < sizeof t->outcomes / sizeof *t->outcomes; i++)
        t->outcomes[i] += r->test.outcomes[i];
    run_free(&r);
}

static void test_model_random(void **state)
{
    (void)state;
    seed_plan p = seed_plan_from_env(DEFAULT_SEEDS, DEFAULT_STEPS);
    uint64_t flattens = lstack_flattens();
    totals t = { 0 };
    for (uint64_t seed = p.first; seed < p.first + p.count; seed++)
        run_seed(seed, p.steps, &t);
    flattens = lstack_flattens() - flattens;
    print_message("model: %" PRIu64 " seeds x %u steps, %" PRIu64 " views compared, %" PRIu64
                  " flattens; writes: %" PRIu64 " ok, %" PRIu64 " unique violations, %" PRIu64
                  " still connected, %" PRIu64 " not found, %" PRIu64 " duplicate indices\n",
                  p.count, p.steps, t.views_compared, flattens, t.outcomes[STRATA_OK],
                  t.outcomes[STRATA_ECONSTRAINT], t.outcomes[STRATA_ECONNECTED],
                  t.outcomes[STRATA_ENOTFOUND], t.outcomes[STRATA_EINVAL]);
    /* Views are held across many writes in a default run, so the indices
       reach the cap; no flatten means the layering stopped growing.  (At
       the production sizes a level takes LSTACK_LEVEL_MAX entries before
       the next is pushed: a model run never reaches the cap.) */
#ifndef STRATA_FULL_SIZES
    if (p.full)
        assert_true(flattens > 0);
#endif
}

/* ---- targeted tests ----------------------------------------------------------- */

static strata_token intern(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    assert_int_equal(strata_token_intern(g, kind, name, &t), STRATA_OK);
    return t;
}

static void set_int(strata_graph *g, strata_id node, strata_token key, int64_t i)
{
    strata_value *v = strata_value_int(i);
    assert_non_null(v);
    strata_status s = strata_node_set(g, node, key, v);
    if (s != STRATA_OK)
        fail_msg("setting node %" PRIu64 ": %s", node, strata_errmsg(g));
    strata_value_free(&v);
}

static strata_view *snap(strata_graph *g)
{
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    return v;
}

static uint32_t index_depth(strata_view *v, strata_index idx)
{
    strata_index_info info;
    assert_int_equal(strata_index_info_get(v, idx, &info), STRATA_OK);
    return info.depth;
}

/* The ids an index holds under the integer key (composite: [k, 0]). */
static size_t lookup_int(strata_view *v, strata_index idx, bool composite, int64_t k,
                         strata_id *ids, size_t cap)
{
    strata_value *parts[2] = { strata_value_int(k), strata_value_int(0) };
    strata_node_iter *it = NULL;
    assert_int_equal(strata_index_lookup(v, idx, (const strata_value *const *)parts,
                                         composite ? 2 : 1, &it),
                     STRATA_OK);
    strata_value_free(&parts[0]);
    strata_value_free(&parts[1]);
    return drain(it, ids, cap);
}

/* A reader that re-takes its view before every write, so one is always
   held: each write forks, the indexed property's stack grows one level per
   write, and at the cap the next write flattens it.  Checks the depth
   never exceeds the cap, that a flatten happens exactly on the writes that
   find the stack at the cap, and that the old view still reads its value. */
static void flatten_cycle(strata_index_kind kind, bool composite)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label = intern(g, STRATA_LABEL, "L");
    strata_token keys[2] = { intern(g, STRATA_KEY, "k"), intern(g, STRATA_KEY, "k2") };
    strata_id a = UINT64_MAX, b = UINT64_MAX;
    assert_int_equal(strata_node_create(g, &label, 1, &a), STRATA_OK);
    assert_int_equal(strata_node_create(g, &label, 1, &b), STRATA_OK);
    set_int(g, a, keys[0], 0);
    set_int(g, b, keys[0], 1000);
    set_int(g, a, keys[1], 0);
    set_int(g, b, keys[1], 0);
    strata_index idx = UINT32_MAX;
    assert_int_equal(strata_index_create(g, kind, false, label, keys, composite ? 2 : 1, &idx),
                     STRATA_OK);

    strata_view *held = snap(g);
    uint64_t start = lstack_flattens();
    uint32_t deepest = 0, at_cap = 0;
    for (int64_t i = 1; i <= 50; i++) {
        uint32_t before = index_depth(held, idx);   /* held shares the current state */
        uint64_t f0 = lstack_flattens();
        set_int(g, a, keys[0], i);
        uint64_t f1 = lstack_flattens();
        assert_true(strata_is_forked(g));
        strata_view *next = snap(g);
        uint32_t after = index_depth(next, idx);
        if (after > deepest)
            deepest = after;
        if (after > LSTACK_CAP)
            fail_msg("%s index: depth %u after write %" PRId64 ", above the cap %d",
                     kind_names[kind], after, i, LSTACK_CAP);
        if (f1 != f0 && (f1 != f0 + 1 || before != LSTACK_CAP))
            fail_msg("%s index: write %" PRId64 " flattened %" PRIu64 " times at depth %u "
                     "(a flatten belongs at depth %d)", kind_names[kind], i, f1 - f0, before,
                     LSTACK_CAP);
        if (f1 == f0 && before == LSTACK_CAP)
            fail_msg("%s index: write %" PRId64 " found the stack at the cap and did not "
                     "flatten (depth after: %u)", kind_names[kind], i, after);
        at_cap += before == LSTACK_CAP;
        strata_id ids[4];
        if (lookup_int(next, idx, composite, i, ids, 4) != 1 || ids[0] != a)
            fail_msg("%s index: the new view does not find node %" PRIu64 " under %" PRId64,
                     kind_names[kind], a, i);
        if (lookup_int(held, idx, composite, i - 1, ids, 4) != 1 || ids[0] != a ||
            lookup_int(held, idx, composite, i, ids, 4) != 0)
            fail_msg("%s index: the held view changed with write %" PRId64, kind_names[kind], i);
        assert_int_equal(strata_integrity_check(held), STRATA_OK);
        assert_int_equal(strata_integrity_check(next), STRATA_OK);
        strata_view_release(&held);
        held = next;
    }
    assert_int_equal(deepest, LSTACK_CAP);
    assert_true(at_cap > 0);
    assert_int_equal(lstack_flattens() - start, at_cap);
    strata_view_release(&held);
    /* Nothing held: the next write folds back and the graph is no longer
       forked. */
    set_int(g, a, keys[0], 0);
    assert_false(strata_is_forked(g));
    strata_graph_free(&g);
}

static __attribute__((unused)) void test_flatten_at_cap(void **state)
{
    (void)state;
    flatten_cycle(STRATA_INDEX_HASH, false);
    flatten_cycle(STRATA_INDEX_RANGE, false);
    flatten_cycle(STRATA_INDEX_UNIQUE, false);
    flatten_cycle(STRATA_INDEX_HASH, true);
}

/* strata_is_forked through a view's whole life: forked from the first write
   under it until the first write after its release. */
static void test_fork_state(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = intern(g, STRATA_KEY, "k");
    strata_id n = UINT64_MAX;
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    assert_false(strata_is_forked(g));
    strata_view *v = snap(g);
    assert_false(strata_is_forked(g));   /* a view alone shares nothing yet */
    set_int(g, n, k, 1);
    assert_true(strata_is_forked(g));
    set_int(g, n, k, 2);
    assert_true(strata_is_forked(g));
    strata_view_release(&v);
    assert_true(strata_is_forked(g));    /* fold-back waits for a write */
    set_int(g, n, k, 3);
    assert_false(strata_is_forked(g));
    v = snap(g);
    strata_view_release(&v);
    set_int(g, n, k, 4);                 /* a view released unwritten */
    assert_false(strata_is_forked(g));
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_state),
#ifndef STRATA_FULL_SIZES   /* 50 writes reach the cap only at the test sizes */
        cmocka_unit_test(test_flatten_at_cap),
#endif
        cmocka_unit_test(test_model_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
