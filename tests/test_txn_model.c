/*
 * Model-based randomised test of statements, transactions and views.
 *
 * A plain reference model (support/model.h: nodes with labels and
 * int/string properties, relationships, LIFO free lists; here a unique and
 * a range index) is driven in lockstep with the graph by a seeded xorshift
 * generator.  The writes are grouped into random statements, each ended by
 * a random commit or rollback, and now and then into transactions holding
 * statements and direct writes, ended by a random commit or rollback.  The
 * model keeps three states:
 *
 *   work        what the writer sees (every write so far that still counts);
 *   committed   what strata_snapshot must show: the last committed state;
 *   stmt_start  work when the open statement began (a rollback restores it).
 *
 * Views are taken and released at random times — mid-statement and
 * mid-transaction included — each paired with a copy of the model it must
 * show for as long as it lives: a snapshot shows `committed` as it was when
 * taken, an own view (strata_snapshot_own, outside statements) shows
 * `work`.  Half of the statements run with readers (fresh snapshots after
 * every step, random views taken mid-statement: the pre-statement state is
 * materialised) and half without (no snapshot while they are open, so
 * their rollback replays the journal in place).
 *
 * After every step:
 *   (a) a fresh snapshot equals `committed` (when readers are allowed);
 *   (b) outside a statement, an own view equals `work`;
 *   (c) every held view equals its model;
 *   (d) strata_integrity_check() passes on each of them;
 *   (e) every create returned the id the model's free lists predict;
 *   (f) strata_in_transaction() matches the model;
 *   (g) outside statements and transactions, strata_memory_stats counts
 *       the model's live nodes, relationships and slots.
 * "Equals" is compare_view's (support/model.h); it includes every node's
 * neighbours in iteration order, which a rollback must restore exactly.
 *
 * Environment: STRATA_MODEL_SEEDS=n runs seeds 1..n (default 20);
 * STRATA_MODEL_SEED=s runs seed s alone; STRATA_MODEL_STEPS=n sets the
 * steps per seed (default 300).  Every failure names its seed and step.
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

#define MAX_IDS 48        /* ids probed by every comparison */
#define NODE_LIMIT 20
#define REL_LIMIT 36
#define NLABELS 3
#define NTYPES 3
#define NKEYS 3
#define MAX_INDEXES 2
#define MAX_VIEWS 6
#define DEFAULT_SEEDS 20
#define DEFAULT_STEPS 300
#define INT_RANGE 6       /* small: equal values and unique clashes are common */
#define INT_PERCENT 70
#define REMOVE_AS_NULL_PERCENT 0
/* The indices, in the model's index list: unique on (label 0, key 0),
   range on (label 1, key 1). */
#define UNIQ 0
#define UNIQ_LABEL 0
#define UNIQ_KEY 0
#define RANGE_LABEL 1
#define RANGE_KEY 1

typedef struct counts {
    uint64_t steps, views_compared, views_taken_mid_stmt, own_views;
    uint64_t stmt_commit, stmt_rollback, stmt_rollback_replayed, txn_commit, txn_rollback;
    uint64_t misuse, constraint, writes_ok;
} counts;

/* This test's part of a run. */
typedef struct run_state {
    struct model *committed, *stmt_start;
    bool in_stmt, in_txn;
    bool stmt_readers;        /* the open statement may be read mid-way */
    bool stmt_read;           /* ... and a snapshot was taken during it */
    counts c;
} run_state;

#include "support/model.h"

static const char *run_context(const run *r, char *buf, size_t n)
{
    snprintf(buf, n, " (%s%s)", r->test.in_txn ? "in a transaction" : "no transaction",
             r->test.in_stmt ? ", in a statement" : "");
    return buf;
}

/* ---- expectations ------------------------------------------------------------------- */

/* After a write that changed work: outside statements and transactions it
   is committed at once. */
static void settle(run *r)
{
    if (!r->test.in_stmt && !r->test.in_txn)
        *r->test.committed = *r->work;
}

static void expect_outcome(run *r, strata_status got, strata_status want)
{
    expect_status(r, got, want);
    if (want == STRATA_OK) {
        *r->work = *r->next;
        r->test.c.writes_ok++;
        settle(r);
    } else if (want == STRATA_ECONSTRAINT) {
        r->test.c.constraint++;
    }
}

/* ---- operations (false: does not apply now, pick another) ----------------------------- */

/* A set that copies another node's unique key: refused when both are in
   the index. */
static bool op_unique_clash(run *r)
{
    const mindex *d = &r->work->idx[UNIQ];
    uint32_t holders[MAX_IDS], n = 0;
    mval key[MAX_PARTS];
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (model_key(r->work, d, id, key))
            holders[n++] = id;
    if (n == 0)
        return false;
    uint32_t a = holders[below(&r->rng, n)], b = pick_node(r, 0);
    if (a == b || !node_alive(r->work, b))
        return false;
    model_key(r->work, d, a, key);
    char text[64];
    snprintf(r->op, sizeof r->op, "set node %u's unique key to node %u's (%s)", b, a,
             mval_text(&key[0], text, sizeof text));
    *r->next = *r->work;
    r->next->node[b].props[UNIQ_KEY] = key[0];
    expect_write(r, prop_write(r, false, b, UNIQ_KEY, &key[0]));
    return true;
}

/* ---- statements, transactions, views ------------------------------------------------- */

static bool op_stmt_begin(run *r)
{
    if (r->test.in_stmt)
        return false;
    r->test.stmt_readers = chance(&r->rng, 50);
    r->test.stmt_read = false;
    snprintf(r->op, sizeof r->op, "begin a statement (%s readers)",
             r->test.stmt_readers ? "with" : "without");
    expect_status(r, strata_statement_begin(r->g), STRATA_OK);
    model_unit_begin(r->work);
    *r->test.stmt_start = *r->work;
    r->test.in_stmt = true;
    return true;
}

static bool op_stmt_end(run *r)
{
    if (!r->test.in_stmt)
        return false;
    bool commit = chance(&r->rng, 55);
    snprintf(r->op, sizeof r->op, "%s the statement", commit ? "commit" : "roll back");
    expect_status(r, strata_statement_end(r->g, commit), STRATA_OK);
    if (commit) {
        r->test.c.stmt_commit++;
    } else {
        *r->work = *r->test.stmt_start;
        r->test.c.stmt_rollback++;
        r->test.c.stmt_rollback_replayed += !r->test.stmt_read && !r->test.in_txn;
    }
    r->test.in_stmt = false;
    if (!r->test.in_txn)
        model_unit_end(r->work);
    settle(r);
    return true;
}

static bool op_txn_begin(run *r)
{
    if (r->test.in_txn || r->test.in_stmt)
        return false;
    snprintf(r->op, sizeof r->op, "begin a transaction");
    expect_status(r, strata_begin(r->g), STRATA_OK);
    model_unit_begin(r->work);
    r->test.in_txn = true;
    return true;
}

static bool op_txn_end(run *r)
{
    /* With a statement open only a rollback is allowed (it drops both);
       half the time wait for the statement to end instead, so commits are
       about as common as rollbacks. */
    if (!r->test.in_txn || (r->test.in_stmt && chance(&r->rng, 50)))
        return false;
    bool commit = !r->test.in_stmt && chance(&r->rng, 55);
    snprintf(r->op, sizeof r->op, "%s the transaction", commit ? "commit" : "roll back");
    if (commit) {
        expect_status(r, strata_commit(r->g), STRATA_OK);
        model_unit_end(r->work);
        *r->test.committed = *r->work;
        r->test.c.txn_commit++;
    } else {
        expect_status(r, strata_rollback(r->g), STRATA_OK);
        *r->work = *r->test.committed;
        r->test.in_stmt = false;
        r->test.c.txn_rollback++;
    }
    r->test.in_txn = false;
    return true;
}

/* A call the state forbids: STRATA_EINVAL, and nothing changes. */
static bool op_misuse(run *r)
{
    strata_view *v = NULL;
    strata_status s;
    switch (below(&r->rng, 5)) {
    case 0:
        snprintf(r->op, sizeof r->op, "misuse: %s", r->test.in_stmt ? "begin a nested statement"
                                                               : "end a statement never begun");
        s = r->test.in_stmt ? strata_statement_begin(r->g) : strata_statement_end(r->g, true);
        break;
    case 1:
        if (r->test.in_txn && !r->test.in_stmt)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: commit %s",
                 r->test.in_txn ? "with a statement open" : "without a transaction");
        s = strata_commit(r->g);
        break;
    case 2:
        if (r->test.in_txn)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: roll back without a transaction");
        s = strata_rollback(r->g);
        break;
    case 3:
        if (!r->test.in_txn && !r->test.in_stmt)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: begin a transaction %s",
                 r->test.in_txn ? "inside one" : "inside a statement");
        s = strata_begin(r->g);
        break;
    default:
        if (!r->test.in_stmt)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: an own view during a statement");
        s = strata_snapshot_own(r->g, &v);
        if (v)
            mismatch(r, "a refused strata_snapshot_own set its out parameter");
        break;
    }
    expect_status(r, s, STRATA_EINVAL);
    r->test.c.misuse++;
    return true;
}

static bool op_view_take(run *r)
{
    if (r->nheld == MAX_VIEWS || (r->test.in_stmt && !r->test.stmt_readers))
        return false;
    held_view *h = &r->held[r->nheld];
    h->own = !r->test.in_stmt && chance(&r->rng, 40);
    h->v = NULL;
    h->taken_at = r->step;
    snprintf(h->when, sizeof h->when, "%s%s%s", h->own ? "own, " : "",
             r->test.in_txn ? "mid-transaction" : "outside transactions",
             r->test.in_stmt ? ", mid-statement" : "");
    snprintf(r->op, sizeof r->op, "take a view (%s)", h->when);
    if (h->own) {
        expect_status(r, strata_snapshot_own(r->g, &h->v), STRATA_OK);
        *h->m = *r->work;
        r->test.c.own_views++;
    } else {
        expect_status(r, strata_snapshot(r->g, &h->v), STRATA_OK);
        *h->m = *r->test.committed;
        if (r->test.in_stmt) {
            r->test.stmt_read = true;
            r->test.c.views_taken_mid_stmt++;
        }
    }
    r->nheld++;
    return true;
}

static const op_entry ops[] = {
    { op_node_create, 12 },    { op_node_delete, 4 },   { op_node_detach_delete, 3 },
    { op_label_add, 6 },       { op_label_remove, 4 },  { op_node_set, 12 },
    { op_node_remove, 4 },     { op_rel_create, 12 },   { op_rel_delete, 5 },
    { op_rel_set, 5 },         { op_rel_remove, 2 },    { op_unique_clash, 3 },
    { op_stmt_begin, 10 },     { op_stmt_end, 6 },      { op_txn_begin, 2 },
    { op_txn_end, 2 },         { op_misuse, 1 },        { op_view_take, 6 },
    { op_view_release, 5 },
};

/* ---- checks --------------------------------------------------------------------------- */

static void check_step(run *r)
{
    snprintf(r->where, sizeof r->where, "strata_in_transaction");
    if (strata_in_transaction(r->g) != r->test.in_txn)
        mismatch(r, "strata_in_transaction says %d", !r->test.in_txn);
    if (!r->test.in_stmt || r->test.stmt_readers) {
        strata_view *fresh = NULL;
        expect_status(r, strata_snapshot(r->g, &fresh), STRATA_OK);
        snprintf(r->where, sizeof r->where, "a fresh snapshot (the committed state)");
        if (r->test.in_stmt && !r->test.in_txn)
            r->test.stmt_read = true;
        compare_view(r, fresh, r->test.committed);
        strata_view_release(&fresh);
    }
    if (!r->test.in_stmt) {
        strata_view *own = NULL;
        expect_status(r, strata_snapshot_own(r->g, &own), STRATA_OK);
        snprintf(r->where, sizeof r->where, "an own view (the writer's state)");
        compare_view(r, own, r->work);
        strata_view_release(&own);
    }
    if (!r->test.in_stmt && !r->test.in_txn) {
        strata_memstats ms;
        expect_status(r, strata_memory_stats(r->g, &ms), STRATA_OK);
        snprintf(r->where, sizeof r->where, "strata_memory_stats");
        if (ms.nodes != r->work->nodes.live || ms.relationships != r->work->rels.live ||
            ms.node_slots != r->work->nodes.slots || ms.rel_slots != r->work->rels.slots)
            mismatch(r, "memory stats: %" PRIu64 "/%" PRIu64 " nodes live/slots, %" PRIu64
                     "/%" PRIu64 " relationships; the model %u/%u and %u/%u", ms.nodes,
                     ms.node_slots, ms.relationships, ms.rel_slots, r->work->nodes.live,
                     r->work->nodes.slots, r->work->rels.live, r->work->rels.slots);
    }
    compare_held_views(r);
}

/* ---- the runs ------------------------------------------------------------------------- */

/* Creates one single-key index on nodes and enters it in the model. */
static void add_index(run *r, strata_index_kind kind, uint32_t label, uint32_t key)
{
    mindex d = { .kind = kind, .token = label, .nkeys = 1, .keys = { key } };
    assert_int_equal(strata_index_create(r->g, kind, false, r->tok.label[label], &r->tok.key[key],
                                         1, &d.id),
                     STRATA_OK);
    r->work->idx[r->work->nidx++] = d;
}

static run *txn_run_new(uint64_t seed)
{
    run *r = run_new(seed);
    assert_non_null(r->test.committed = calloc(1, sizeof(model)));
    assert_non_null(r->test.stmt_start = calloc(1, sizeof(model)));
    add_index(r, STRATA_INDEX_UNIQUE, UNIQ_LABEL, UNIQ_KEY);
    add_index(r, STRATA_INDEX_RANGE, RANGE_LABEL, RANGE_KEY);
    *r->test.committed = *r->work;
    return r;
}

static void txn_run_free(run **rp)
{
    free((*rp)->test.committed);
    free((*rp)->test.stmt_start);
    run_free(rp);
}

static void add_counts(counts *t, const counts *c)
{
    const uint64_t *src = (const uint64_t *)c;
    uint64_t *dst = (uint64_t *)t;
    for (size_t i = 0; i < sizeof *c / sizeof(uint64_t); i++)
        dst[i] += src[i];
}

static void run_seed(uint64_t seed, uint32_t steps, counts *t)
{
    run *r = txn_run_new(seed);
    for (r->step = 1; r->step <= steps; r->step++) {
        run_random_op(r, ops, sizeof ops / sizeof *ops);
        check_step(r);
        r->test.c.steps++;
    }
    /* Whatever is still open ends; the final state is checked once more. */
    if (r->test.in_txn) {
        op_txn_end(r);
        check_step(r);
    } else if (r->test.in_stmt) {
        op_stmt_end(r);
        check_step(r);
    }
    r->test.c.views_compared = r->views_compared;   /* counted by compare_view */
    add_counts(t, &r->test.c);
    txn_run_free(&r);
}

static void test_txn_model_random(void **state)
{
    (void)state;
    seed_plan p = seed_plan_from_env(DEFAULT_SEEDS, DEFAULT_STEPS);
    counts t = { 0 };
    for (uint64_t seed = p.first; seed < p.first + p.count; seed++)
        run_seed(seed, p.steps, &t);
    print_message("txn model: %" PRIu64 " seeds x %u steps, %" PRIu64 " views compared; "
                  "statements %" PRIu64 " committed, %" PRIu64 " rolled back (%" PRIu64
                  " replayed in place); transactions %" PRIu64 " committed, %" PRIu64
                  " rolled back; %" PRIu64 " views taken mid-statement, %" PRIu64
                  " own views; %" PRIu64 " writes, %" PRIu64 " unique refusals, %" PRIu64
                  " misuses\n",
                  p.count, p.steps, t.views_compared, t.stmt_commit, t.stmt_rollback,
                  t.stmt_rollback_replayed, t.txn_commit, t.txn_rollback,
                  t.views_taken_mid_stmt, t.own_views, t.writes_ok, t.constraint, t.misuse);
    /* A default run must have exercised every path. */
    if (p.full) {
        assert_true(t.stmt_commit > 50 && t.stmt_rollback > 50);
        assert_true(t.stmt_rollback_replayed > 10);
        assert_true(t.txn_commit > 5 && t.txn_rollback > 5);
        assert_true(t.views_taken_mid_stmt > 20 && t.own_views > 20);
        assert_true(t.constraint > 10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_txn_model_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
