/*
 * Model-based randomised test of statements, transactions and views.
 *
 * A plain reference model (nodes with labels and int/string properties,
 * relationships, LIFO free lists, a unique and a range index) is driven in
 * lockstep with the graph by a seeded xorshift generator.  The writes are
 * grouped into random statements, each ended by a random commit or
 * rollback, and now and then into transactions holding statements and
 * direct writes, ended by a random commit or rollback.  The model keeps
 * three states:
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
 *   (f) strata_in_transaction() matches the model.
 * "Equals" covers counts, existence, labels, properties, relationship
 * endpoints, types and properties, every node's neighbours in both
 * directions in iteration order (by type, then creation order — a rollback
 * must restore positions exactly), label and type scans, and both indices
 * (entry counts, a lookup of every key present plus an absent one, the
 * range index's integer scan in order).
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
#include "support/model_value.h"

#define MAX_IDS 48        /* ids probed by every comparison */
#define NODE_LIMIT 20
#define REL_LIMIT 36
#define NLABELS 3
#define NTYPES 3
#define NKEYS 3
#define MAX_VIEWS 6
#define MSG_MAX 2048
#define DEFAULT_SEEDS 20
#define DEFAULT_STEPS 300
#define INT_RANGE 6       /* small: equal values and unique clashes are common */
#define ABSENT_INT 999
/* The indices: unique on (label 0, key 0), range on (label 1, key 1). */
#define UNIQ_LABEL 0
#define UNIQ_KEY 0
#define RANGE_LABEL 1
#define RANGE_KEY 1

static const char *const string_pool[] = { "s", "t", "a heap string, one",
                                           "a heap string, two" };

/* ---- the model ------------------------------------------------------------------ */

typedef struct mnode {
    bool alive;
    uint8_t labels;
    mval props[NKEYS];
} mnode;

typedef struct mrel {
    bool alive;
    uint32_t start, end, type;
    uint64_t seq;             /* creation order: the order within a segment */
    mval props[NKEYS];
} mrel;

typedef struct model {
    mnode node[MAX_IDS];
    uint32_t node_slots, nodes_live;
    uint32_t node_free[MAX_IDS], nnode_free;   /* the top is the next id */
    mrel rel[MAX_IDS];
    uint32_t rel_slots, rels_live;
    uint32_t rel_free[MAX_IDS], nrel_free;
    uint64_t seq;
} model;

typedef struct held_view {
    strata_view *v;
    model *m;                 /* what it must show */
    bool own;                 /* strata_snapshot_own */
    uint32_t taken_at;
    char when[48];            /* "mid-statement", "mid-transaction", ... */
} held_view;

typedef struct counts {
    uint64_t steps, views_compared, views_taken_mid_stmt, own_views;
    uint64_t stmt_commit, stmt_rollback, stmt_rollback_replayed, txn_commit, txn_rollback;
    uint64_t misuse, constraint, writes_ok;
} counts;

typedef struct run {
    uint64_t seed;
    uint32_t step;
    uint64_t rng;
    char op[256];
    char where[96];
    strata_graph *g;
    strata_token label[NLABELS], type[NTYPES], key[NKEYS];
    strata_index uniq, range;
    model *work, *committed, *stmt_start, *next;
    bool in_stmt, in_txn;
    bool stmt_readers;        /* the open statement may be read mid-way */
    bool stmt_read;           /* ... and a snapshot was taken during it */
    held_view held[MAX_VIEWS];
    uint32_t nheld;
    counts c;
} run;

static void mismatch(const run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mismatch(const run *r, const char *fmt, ...)
{
    char detail[MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    fail_msg("seed %" PRIu64 ", step %u, after %s (%s%s)\n  in %s: %s\n"
             "  reproduce with STRATA_MODEL_SEED=%" PRIu64,
             r->seed, r->step, r->op, r->in_txn ? "in a transaction" : "no transaction",
             r->in_stmt ? ", in a statement" : "", r->where, detail, r->seed);
}

static mval random_value(run *r)
{
    if (chance(&r->rng, 70))
        return mv_int(below(&r->rng, INT_RANGE));
    return mv_str(string_pool[below(&r->rng, sizeof string_pool / sizeof *string_pool)]);
}

/* ---- model state ------------------------------------------------------------------ */

static uint32_t next_node_id(const model *m)
{
    return m->nnode_free ? m->node_free[m->nnode_free - 1] : m->node_slots;
}

static uint32_t next_rel_id(const model *m)
{
    return m->nrel_free ? m->rel_free[m->nrel_free - 1] : m->rel_slots;
}

static uint32_t model_node_alloc(model *m, uint8_t labels)
{
    uint32_t id = next_node_id(m);
    if (m->nnode_free)
        m->nnode_free--;
    else
        m->node_slots++;
    memset(&m->node[id], 0, sizeof m->node[id]);
    m->node[id].alive = true;
    m->node[id].labels = labels;
    m->nodes_live++;
    return id;
}

static void model_node_free(model *m, uint32_t id)
{
    memset(&m->node[id], 0, sizeof m->node[id]);
    m->node_free[m->nnode_free++] = id;
    m->nodes_live--;
}

static uint32_t model_rel_alloc(model *m, uint32_t start, uint32_t end, uint32_t type)
{
    uint32_t id = next_rel_id(m);
    if (m->nrel_free)
        m->nrel_free--;
    else
        m->rel_slots++;
    m->rel[id] = (mrel){ .alive = true, .start = start, .end = end, .type = type,
                         .seq = ++m->seq };
    m->rels_live++;
    return id;
}

static void model_rel_free(model *m, uint32_t id)
{
    memset(&m->rel[id], 0, sizeof m->rel[id]);
    m->rel_free[m->nrel_free++] = id;
    m->rels_live--;
}

static bool node_alive(const model *m, uint32_t id) { return id < MAX_IDS && m->node[id].alive; }
static bool rel_alive(const model *m, uint32_t id) { return id < MAX_IDS && m->rel[id].alive; }

static bool node_connected(const model *m, uint32_t n)
{
    for (uint32_t r = 0; r < MAX_IDS; r++)
        if (m->rel[r].alive && (m->rel[r].start == n || m->rel[r].end == n))
            return true;
    return false;
}

/* The relationships of one segment of n (type t, out or in) in adjacency
   order (creation order).  skip_loops leaves incoming self-loops out. */
static uint32_t segment_rels(const model *m, uint32_t n, uint32_t t, bool out, bool skip_loops,
                             uint32_t *ids)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < MAX_IDS; r++) {
        const mrel *e = &m->rel[r];
        if (!e->alive || e->type != t)
            continue;
        if (out ? e->start == n : (e->end == n && !(skip_loops && e->start == n)))
            ids[k++] = r;
    }
    for (uint32_t i = 1; i < k; i++)
        for (uint32_t j = i; j > 0 && m->rel[ids[j - 1]].seq > m->rel[ids[j]].seq; j--) {
            uint32_t x = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = x;
        }
    return k;
}

/* Detach-delete frees the relationships in adjacency order (segments by
   type, outgoing first; a self-loop once, going out), then the node. */
static void model_detach_delete(model *m, uint32_t n)
{
    uint32_t ids[MAX_IDS];
    for (uint32_t t = 0; t < NTYPES; t++)
        for (int out = 1; out >= 0; out--) {
            uint32_t k = segment_rels(m, n, t, out, true, ids);
            for (uint32_t i = 0; i < k; i++)
                model_rel_free(m, ids[i]);
        }
    model_node_free(m, n);
}

/* Whether node id is in an index over (label, key), with its key. */
static bool index_key(const model *m, uint32_t label, uint32_t key, uint32_t id, mval *out)
{
    if (!node_alive(m, id) || !(m->node[id].labels >> label & 1) ||
        m->node[id].props[key].kind == MV_NONE)
        return false;
    *out = m->node[id].props[key];
    return true;
}

static bool unique_violated(const model *m)
{
    mval seen[MAX_IDS];
    uint32_t n = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!index_key(m, UNIQ_LABEL, UNIQ_KEY, id, &seen[n]))
            continue;
        for (uint32_t j = 0; j < n; j++)
            if (mval_eq(&seen[j], &seen[n]))
                return true;
        n++;
    }
    return false;
}

/* ---- expectations ------------------------------------------------------------------- */

static void expect_status(run *r, strata_status got, strata_status want)
{
    snprintf(r->where, sizeof r->where, "the call's status");
    if (got != want)
        mismatch(r, "status %s (\"%s\"), the model expects %s", strata_errstr(got),
                 strata_errmsg(r->g), strata_errstr(want));
}

/* After a write that changed work: outside statements and transactions it
   is committed at once. */
static void settle(run *r)
{
    if (!r->in_stmt && !r->in_txn)
        *r->committed = *r->work;
}

static void expect_outcome(run *r, strata_status got, strata_status want)
{
    expect_status(r, got, want);
    if (want == STRATA_OK) {
        *r->work = *r->next;
        r->c.writes_ok++;
        settle(r);
    } else if (want == STRATA_ECONSTRAINT) {
        r->c.constraint++;
    }
}

/* A write leaving the graph as r->next, unless that breaks the unique
   index: then STRATA_ECONSTRAINT and nothing changes. */
static void expect_write(run *r, strata_status got)
{
    expect_outcome(r, got, unique_violated(r->next) ? STRATA_ECONSTRAINT : STRATA_OK);
}

static void expect_id(run *r, const char *what, strata_id got, uint32_t want)
{
    snprintf(r->where, sizeof r->where, "the id handed out");
    if (got != want)
        mismatch(r, "%s %" PRIu64 ", the model's free list predicts %u", what, got, want);
}

/* ---- operations (false: does not apply now, pick another) ----------------------------- */

static uint32_t pick_id(run *r, bool rels, uint32_t dead_percent)
{
    const model *m = r->work;
    uint32_t live[MAX_IDS], n = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (rels ? rel_alive(m, id) : node_alive(m, id))
            live[n++] = id;
    if (n == 0 || chance(&r->rng, dead_percent)) {
        uint32_t id;
        do
            id = below(&r->rng, MAX_IDS);
        while (rels ? rel_alive(m, id) : node_alive(m, id));
        return id;
    }
    return live[below(&r->rng, n)];
}

static bool op_node_create(run *r)
{
    if (r->work->nodes_live >= NODE_LIMIT)
        return false;
    strata_token labels[NLABELS];
    uint8_t mask = 0;
    size_t n = below(&r->rng, NLABELS + 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t l = below(&r->rng, NLABELS);
        labels[i] = r->label[l];
        mask |= (uint8_t)(1u << l);
    }
    snprintf(r->op, sizeof r->op, "create a node (labels %#x)", mask);
    *r->next = *r->work;
    uint32_t want = model_node_alloc(r->next, mask);
    strata_id got = UINT64_MAX;
    expect_outcome(r, strata_node_create(r->g, labels, n, &got), STRATA_OK);
    expect_id(r, "node id", got, want);
    return true;
}

static bool op_node_delete(run *r)
{
    uint32_t id = pick_id(r, false, 10);
    snprintf(r->op, sizeof r->op, "delete node %u", id);
    *r->next = *r->work;
    strata_status want = STRATA_OK;
    if (!node_alive(r->work, id))
        want = STRATA_ENOTFOUND;
    else if (node_connected(r->work, id))
        want = STRATA_ECONNECTED;
    else
        model_node_free(r->next, id);
    expect_outcome(r, strata_node_delete(r->g, id), want);
    return true;
}

static bool op_node_detach_delete(run *r)
{
    uint32_t id = pick_id(r, false, 5);
    snprintf(r->op, sizeof r->op, "detach-delete node %u", id);
    *r->next = *r->work;
    strata_status want = STRATA_ENOTFOUND;
    if (node_alive(r->work, id)) {
        model_detach_delete(r->next, id);
        want = STRATA_OK;
    }
    expect_outcome(r, strata_node_detach_delete(r->g, id), want);
    return true;
}

static bool label_op(run *r, bool add)
{
    uint32_t id = pick_id(r, false, 5), l = below(&r->rng, NLABELS);
    snprintf(r->op, sizeof r->op, "%s label %u %s node %u", add ? "add" : "remove", l,
             add ? "to" : "from", id);
    *r->next = *r->work;
    strata_status s = add ? strata_node_add_label(r->g, id, r->label[l])
                          : strata_node_remove_label(r->g, id, r->label[l]);
    if (!node_alive(r->work, id)) {
        expect_outcome(r, s, STRATA_ENOTFOUND);
        return true;
    }
    if (add)
        r->next->node[id].labels |= (uint8_t)(1u << l);
    else
        r->next->node[id].labels &= (uint8_t)~(1u << l);
    expect_write(r, s);
    return true;
}

static bool op_label_add(run *r) { return label_op(r, true); }
static bool op_label_remove(run *r) { return label_op(r, false); }

static bool prop_op(run *r, bool rel, bool set)
{
    uint32_t id = pick_id(r, rel, 5), k = below(&r->rng, NKEYS);
    mval val = set ? random_value(r) : (mval){ .kind = MV_NONE };
    char text[64];
    snprintf(r->op, sizeof r->op, "%s property %u of %s %u%s%s", set ? "set" : "remove", k,
             rel ? "relationship" : "node", id, set ? " to " : "",
             set ? mval_text(&val, text, sizeof text) : "");
    *r->next = *r->work;
    strata_status s;
    if (set) {
        strata_value *api = mval_to_api(&val);
        s = rel ? strata_rel_set(r->g, id, r->key[k], api)
                : strata_node_set(r->g, id, r->key[k], api);
        strata_value_free(&api);
    } else {
        s = rel ? strata_rel_remove(r->g, id, r->key[k])
                : strata_node_remove(r->g, id, r->key[k]);
    }
    if (!(rel ? rel_alive(r->work, id) : node_alive(r->work, id))) {
        expect_outcome(r, s, STRATA_ENOTFOUND);
        return true;
    }
    (rel ? r->next->rel[id].props : r->next->node[id].props)[k] = val;
    expect_write(r, s);
    return true;
}

static bool op_node_set(run *r) { return prop_op(r, false, true); }
static bool op_node_remove(run *r) { return prop_op(r, false, false); }
static bool op_rel_set(run *r) { return prop_op(r, true, true); }
static bool op_rel_remove(run *r) { return prop_op(r, true, false); }

/* A set that copies another node's unique key: refused when both are in
   the index. */
static bool op_unique_clash(run *r)
{
    uint32_t holders[MAX_IDS], n = 0;
    mval key;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (index_key(r->work, UNIQ_LABEL, UNIQ_KEY, id, &key))
            holders[n++] = id;
    if (n == 0)
        return false;
    uint32_t a = holders[below(&r->rng, n)], b = pick_id(r, false, 0);
    if (a == b || !node_alive(r->work, b))
        return false;
    index_key(r->work, UNIQ_LABEL, UNIQ_KEY, a, &key);
    char text[64];
    snprintf(r->op, sizeof r->op, "set node %u's unique key to node %u's (%s)", b, a,
             mval_text(&key, text, sizeof text));
    *r->next = *r->work;
    r->next->node[b].props[UNIQ_KEY] = key;
    strata_value *api = mval_to_api(&key);
    strata_status s = strata_node_set(r->g, b, r->key[UNIQ_KEY], api);
    strata_value_free(&api);
    expect_write(r, s);
    return true;
}

static bool op_rel_create(run *r)
{
    if (r->work->rels_live >= REL_LIMIT)
        return false;
    uint32_t start = pick_id(r, false, 3);
    uint32_t end = chance(&r->rng, 15) ? start : pick_id(r, false, 3);
    uint32_t t = below(&r->rng, NTYPES);
    snprintf(r->op, sizeof r->op, "create a relationship %u -[type %u]-> %u", start, t, end);
    *r->next = *r->work;
    strata_status want = STRATA_ENOTFOUND;
    uint32_t want_id = 0;
    if (node_alive(r->work, start) && node_alive(r->work, end)) {
        want_id = model_rel_alloc(r->next, start, end, t);
        want = STRATA_OK;
    }
    strata_id got = UINT64_MAX;
    expect_outcome(r, strata_rel_create(r->g, start, end, r->type[t], &got), want);
    if (want == STRATA_OK)
        expect_id(r, "relationship id", got, want_id);
    return true;
}

static bool op_rel_delete(run *r)
{
    uint32_t id = pick_id(r, true, 10);
    snprintf(r->op, sizeof r->op, "delete relationship %u", id);
    *r->next = *r->work;
    strata_status want = STRATA_ENOTFOUND;
    if (rel_alive(r->work, id)) {
        model_rel_free(r->next, id);
        want = STRATA_OK;
    }
    expect_outcome(r, strata_rel_delete(r->g, id), want);
    return true;
}

/* ---- statements, transactions, views ------------------------------------------------- */

static bool op_stmt_begin(run *r)
{
    if (r->in_stmt)
        return false;
    r->stmt_readers = chance(&r->rng, 50);
    r->stmt_read = false;
    snprintf(r->op, sizeof r->op, "begin a statement (%s readers)",
             r->stmt_readers ? "with" : "without");
    expect_status(r, strata_statement_begin(r->g), STRATA_OK);
    *r->stmt_start = *r->work;
    r->in_stmt = true;
    return true;
}

static bool op_stmt_end(run *r)
{
    if (!r->in_stmt)
        return false;
    bool commit = chance(&r->rng, 55);
    snprintf(r->op, sizeof r->op, "%s the statement", commit ? "commit" : "roll back");
    expect_status(r, strata_statement_end(r->g, commit), STRATA_OK);
    if (commit) {
        r->c.stmt_commit++;
    } else {
        *r->work = *r->stmt_start;
        r->c.stmt_rollback++;
        r->c.stmt_rollback_replayed += !r->stmt_read && !r->in_txn;
    }
    r->in_stmt = false;
    settle(r);
    return true;
}

static bool op_txn_begin(run *r)
{
    if (r->in_txn || r->in_stmt)
        return false;
    snprintf(r->op, sizeof r->op, "begin a transaction");
    expect_status(r, strata_begin(r->g), STRATA_OK);
    r->in_txn = true;
    return true;
}

static bool op_txn_end(run *r)
{
    /* With a statement open only a rollback is allowed (it drops both);
       half the time wait for the statement to end instead, so commits are
       about as common as rollbacks. */
    if (!r->in_txn || (r->in_stmt && chance(&r->rng, 50)))
        return false;
    bool commit = !r->in_stmt && chance(&r->rng, 55);
    snprintf(r->op, sizeof r->op, "%s the transaction", commit ? "commit" : "roll back");
    if (commit) {
        expect_status(r, strata_commit(r->g), STRATA_OK);
        *r->committed = *r->work;
        r->c.txn_commit++;
    } else {
        expect_status(r, strata_rollback(r->g), STRATA_OK);
        *r->work = *r->committed;
        r->in_stmt = false;
        r->c.txn_rollback++;
    }
    r->in_txn = false;
    return true;
}

/* A call the state forbids: STRATA_EINVAL, and nothing changes. */
static bool op_misuse(run *r)
{
    strata_view *v = NULL;
    strata_status s;
    switch (below(&r->rng, 5)) {
    case 0:
        snprintf(r->op, sizeof r->op, "misuse: %s", r->in_stmt ? "begin a nested statement"
                                                               : "end a statement never begun");
        s = r->in_stmt ? strata_statement_begin(r->g) : strata_statement_end(r->g, true);
        break;
    case 1:
        if (r->in_txn && !r->in_stmt)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: commit %s",
                 r->in_txn ? "with a statement open" : "without a transaction");
        s = strata_commit(r->g);
        break;
    case 2:
        if (r->in_txn)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: roll back without a transaction");
        s = strata_rollback(r->g);
        break;
    case 3:
        if (!r->in_txn && !r->in_stmt)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: begin a transaction %s",
                 r->in_txn ? "inside one" : "inside a statement");
        s = strata_begin(r->g);
        break;
    default:
        if (!r->in_stmt)
            return false;
        snprintf(r->op, sizeof r->op, "misuse: an own view during a statement");
        s = strata_snapshot_own(r->g, &v);
        if (v)
            mismatch(r, "a refused strata_snapshot_own set its out parameter");
        break;
    }
    expect_status(r, s, STRATA_EINVAL);
    r->c.misuse++;
    return true;
}

static bool op_view_take(run *r)
{
    if (r->nheld == MAX_VIEWS || (r->in_stmt && !r->stmt_readers))
        return false;
    held_view *h = &r->held[r->nheld];
    h->own = !r->in_stmt && chance(&r->rng, 40);
    h->v = NULL;
    h->taken_at = r->step;
    snprintf(h->when, sizeof h->when, "%s%s%s", h->own ? "own, " : "",
             r->in_txn ? "mid-transaction" : "outside transactions",
             r->in_stmt ? ", mid-statement" : "");
    snprintf(r->op, sizeof r->op, "take a view (%s)", h->when);
    if (h->own) {
        expect_status(r, strata_snapshot_own(r->g, &h->v), STRATA_OK);
        *h->m = *r->work;
        r->c.own_views++;
    } else {
        expect_status(r, strata_snapshot(r->g, &h->v), STRATA_OK);
        *h->m = *r->committed;
        if (r->in_stmt) {
            r->stmt_read = true;
            r->c.views_taken_mid_stmt++;
        }
    }
    r->nheld++;
    return true;
}

static bool op_view_release(run *r)
{
    if (r->nheld == 0)
        return false;
    uint32_t i = below(&r->rng, r->nheld);
    snprintf(r->op, sizeof r->op, "release the view taken at step %u (%s)", r->held[i].taken_at,
             r->held[i].when);
    strata_view_release(&r->held[i].v);
    held_view released = r->held[i];
    r->held[i] = r->held[--r->nheld];
    r->held[r->nheld] = released;
    return true;
}

typedef struct op_entry {
    bool (*run)(run *r);
    uint32_t weight;
} op_entry;

static const op_entry ops[] = {
    { op_node_create, 12 },    { op_node_delete, 4 },   { op_node_detach_delete, 3 },
    { op_label_add, 6 },       { op_label_remove, 4 },  { op_node_set, 12 },
    { op_node_remove, 4 },     { op_rel_create, 12 },   { op_rel_delete, 5 },
    { op_rel_set, 5 },         { op_rel_remove, 2 },    { op_unique_clash, 3 },
    { op_stmt_begin, 10 },     { op_stmt_end, 6 },      { op_txn_begin, 2 },
    { op_txn_end, 2 },         { op_misuse, 1 },        { op_view_take, 6 },
    { op_view_release, 5 },
};

static void run_random_op(run *r)
{
    uint32_t total = 0;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        total += ops[i].weight;
    for (;;) {
        uint32_t x = below(&r->rng, total);
        size_t i = 0;
        while (x >= ops[i].weight)
            x -= ops[i++].weight;
        if (ops[i].run(r))
            return;
    }
}

/* ---- comparing a view with a model ----------------------------------------------------- */

static size_t drain(strata_node_iter *it, strata_id *ids, size_t cap)
{
    size_t n = 0;
    strata_id id;
    while (n < 4 * cap && strata_node_iter_next(it, &id)) {
        if (n < cap)
            ids[n] = id;
        n++;
    }
    strata_node_iter_free(&it);
    return n;
}

static void ids_text(const strata_id *ids, size_t n, size_t cap, char *buf, size_t len)
{
    size_t w = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < n && i < cap && w < len; i++)
        w += (size_t)snprintf(buf + w, len - w, "%s%" PRIu64, i ? " " : "", ids[i]);
    if (w < len)
        snprintf(buf + w, len - w, "%s]", n > cap ? " ..." : "");
}

static void expect_ids(run *r, const char *what, const strata_id *got, size_t ngot,
                       const strata_id *want, size_t nwant)
{
    if (ngot == nwant && memcmp(got, want, nwant * sizeof *want) == 0)
        return;
    char g[512], w[512];
    ids_text(got, ngot, MAX_IDS, g, sizeof g);
    ids_text(want, nwant, nwant, w, sizeof w);
    mismatch(r, "%s: got %zu %s, the model has %zu %s", what, ngot, g, nwant, w);
}

static void compare_props(run *r, strata_view *v, bool rel, uint32_t id, const mval *props)
{
    const char *what = rel ? "relationship" : "node";
    strata_token keys[NKEYS + 4], want_keys[NKEYS];
    size_t n = 0, nwant = 0;
    for (uint32_t k = 0; k < NKEYS; k++)
        if (props[k].kind != MV_NONE)
            want_keys[nwant++] = r->key[k];
    strata_status s = rel ? strata_rel_keys(v, id, keys, NKEYS + 4, &n)
                          : strata_node_keys(v, id, keys, NKEYS + 4, &n);
    if (s != STRATA_OK || n != nwant || memcmp(keys, want_keys, n * sizeof *keys) != 0)
        mismatch(r, "%s %u has %zu property keys (%s), the model %zu", what, id, n,
                 strata_errstr(s), nwant);
    for (uint32_t k = 0; k < NKEYS; k++) {
        strata_value *got = NULL;
        s = rel ? strata_rel_get(v, id, r->key[k], &got) : strata_node_get(v, id, r->key[k], &got);
        if (s != STRATA_OK)
            mismatch(r, "%s %u property %u: %s", what, id, k, strata_errstr(s));
        if (!api_matches(got, &props[k])) {
            char a[64], b[64];
            api_text(got, a, sizeof a);
            strata_value_free(&got);
            mismatch(r, "%s %u property %u is %s, the model has %s", what, id, k, a,
                     mval_text(&props[k], b, sizeof b));
        }
        strata_value_free(&got);
    }
}

static void compare_node(run *r, strata_view *v, const model *m, uint32_t id)
{
    bool alive = m->node[id].alive;
    if (strata_node_exists(v, id) != alive)
        mismatch(r, "node %u %s, the model says it %s", id, alive ? "does not exist" : "exists",
                 alive ? "does" : "does not");
    if (!alive)
        return;
    strata_token labels[NLABELS + 4], want[NLABELS];
    size_t n = 0, nwant = 0;
    for (uint32_t l = 0; l < NLABELS; l++)
        if (m->node[id].labels >> l & 1)
            want[nwant++] = r->label[l];
    strata_status s = strata_node_labels(v, id, labels, NLABELS + 4, &n);
    if (s != STRATA_OK || n != nwant || memcmp(labels, want, n * sizeof *labels) != 0)
        mismatch(r, "node %u has %zu labels (%s), the model %zu (mask %#x)", id, n,
                 strata_errstr(s), nwant, m->node[id].labels);
    compare_props(r, v, false, id, m->node[id].props);
}

static void compare_rel(run *r, strata_view *v, const model *m, uint32_t id)
{
    const mrel *e = &m->rel[id];
    if (strata_rel_exists(v, id) != e->alive)
        mismatch(r, "relationship %u %s, the model says it %s", id,
                 e->alive ? "does not exist" : "exists", e->alive ? "does" : "does not");
    if (!e->alive)
        return;
    strata_id start = UINT64_MAX, end = UINT64_MAX;
    strata_token type = UINT32_MAX;
    strata_status s = strata_rel_info(v, id, &start, &end, &type);
    if (s != STRATA_OK || start != e->start || end != e->end || type != r->type[e->type])
        mismatch(r, "relationship %u is %" PRIu64 " -[%u]-> %" PRIu64 " (%s), the model has "
                 "%u -[%u]-> %u", id, start, type, end, strata_errstr(s), e->start,
                 r->type[e->type], e->end);
    compare_props(r, v, true, id, e->props);
}

/* Neighbours of n in one direction, in iteration order: segments by type,
   each in creation order. */
static void compare_neighbours(run *r, strata_view *v, const model *m, uint32_t n, bool out)
{
    strata_id want_rel[2 * MAX_IDS], want_other[2 * MAX_IDS];
    size_t nwant = 0;
    for (uint32_t t = 0; t < NTYPES; t++) {
        uint32_t ids[MAX_IDS];
        uint32_t k = segment_rels(m, n, t, out, false, ids);
        for (uint32_t i = 0; i < k; i++) {
            want_rel[nwant] = ids[i];
            want_other[nwant++] = out ? m->rel[ids[i]].end : m->rel[ids[i]].start;
        }
    }
    strata_edge_iter *it = NULL;
    if (strata_neighbours(v, n, out ? STRATA_OUT : STRATA_IN, STRATA_ANY_TYPE, &it) !=
        STRATA_OK)
        mismatch(r, "strata_neighbours of node %u: %s", n, strata_view_errmsg(v));
    strata_id rel, other;
    size_t k = 0;
    bool same = true;
    char got[512] = "";
    size_t o = 0;
    while (k < 4 * MAX_IDS && strata_edge_iter_next(it, &rel, &other)) {
        if (k >= nwant || rel != want_rel[k] || other != want_other[k])
            same = false;
        if (o < sizeof got)
            o += (size_t)snprintf(got + o, sizeof got - o, " r%" PRIu64 ">n%" PRIu64, rel, other);
        k++;
    }
    strata_edge_iter_free(&it);
    if (!same || k != nwant) {
        char want[512] = "";
        o = 0;
        for (size_t i = 0; i < nwant && o < sizeof want; i++)
            o += (size_t)snprintf(want + o, sizeof want - o, " r%" PRIu64 ">n%" PRIu64,
                                  want_rel[i], want_other[i]);
        mismatch(r, "%s neighbours of node %u in iteration order:%s; the model has%s",
                 out ? "outgoing" : "incoming", n, got, want);
    }
    uint64_t deg = UINT64_MAX;
    if (strata_node_degree(v, n, out ? STRATA_OUT : STRATA_IN, STRATA_ANY_TYPE, &deg) !=
            STRATA_OK ||
        deg != nwant)
        mismatch(r, "%s degree of node %u is %" PRIu64 ", the model %zu",
                 out ? "outgoing" : "incoming", n, deg, nwant);
}

static void compare_scans(run *r, strata_view *v, const model *m)
{
    strata_id got[MAX_IDS], want[MAX_IDS];
    strata_node_iter *it = NULL;
    char what[64];
    size_t nwant = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (m->node[id].alive)
            want[nwant++] = id;
    if (strata_nodes(v, &it) != STRATA_OK)
        mismatch(r, "strata_nodes: %s", strata_view_errmsg(v));
    expect_ids(r, "strata_nodes", got, drain(it, got, MAX_IDS), want, nwant);
    for (uint32_t l = 0; l < NLABELS; l++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->node[id].alive && (m->node[id].labels >> l & 1))
                want[nwant++] = id;
        if (strata_nodes_by_label(v, r->label[l], &it) != STRATA_OK)
            mismatch(r, "strata_nodes_by_label: %s", strata_view_errmsg(v));
        snprintf(what, sizeof what, "nodes with label %u", l);
        expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
    }
    for (uint32_t t = 0; t < NTYPES; t++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->rel[id].alive && m->rel[id].type == t)
                want[nwant++] = id;
        if (strata_rels_by_type(v, r->type[t], &it) != STRATA_OK)
            mismatch(r, "strata_rels_by_type: %s", strata_view_errmsg(v));
        snprintf(what, sizeof what, "relationships of type %u", t);
        expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
    }
}

static void compare_lookup(run *r, strata_view *v, const model *m, strata_index idx,
                           uint32_t label, uint32_t key, const mval *k)
{
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        mval x;
        if (index_key(m, label, key, id, &x) && mval_eq(&x, k))
            want[nwant++] = id;
    }
    strata_value *api = mval_to_api(k);
    const strata_value *parts[1] = { api };
    strata_node_iter *it = NULL;
    strata_status s = strata_index_lookup(v, idx, parts, 1, &it);
    strata_value_free(&api);
    char kt[64], what[128];
    snprintf(what, sizeof what, "lookup of %s in index %u", mval_text(k, kt, sizeof kt), idx);
    if (s != STRATA_OK)
        mismatch(r, "%s: %s (%s)", what, strata_errstr(s), strata_view_errmsg(v));
    expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
}

static void compare_index(run *r, strata_view *v, const model *m, strata_index idx,
                          uint32_t label, uint32_t key, bool ranged)
{
    strata_index_info info;
    if (strata_index_info_get(v, idx, &info) != STRATA_OK)
        mismatch(r, "index %u info: %s", idx, strata_view_errmsg(v));
    mval keys[MAX_IDS];
    uint32_t nkeys = 0, entries = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!index_key(m, label, key, id, &keys[nkeys]))
            continue;
        entries++;
        bool seen = false;
        for (uint32_t j = 0; j < nkeys && !seen; j++)
            seen = mval_eq(&keys[j], &keys[nkeys]);
        nkeys += !seen;
    }
    if (info.entries != entries)
        mismatch(r, "index %u holds %" PRIu64 " entries, the model %u", idx, info.entries,
                 entries);
    for (uint32_t j = 0; j < nkeys; j++)
        compare_lookup(r, v, m, idx, label, key, &keys[j]);
    mval absent = mv_int(ABSENT_INT);
    compare_lookup(r, v, m, idx, label, key, &absent);
    if (!ranged)
        return;
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0;
    for (int64_t val = 0; val < INT_RANGE; val++)
        for (uint32_t id = 0; id < MAX_IDS; id++) {
            mval x;
            if (index_key(m, label, key, id, &x) && x.kind == MV_INT && x.i == val)
                want[nwant++] = id;
        }
    strata_value *lo = strata_value_int(-1);
    strata_node_iter *it = NULL;
    strata_status s = strata_index_range(v, idx, lo, true, NULL, false, &it);
    strata_value_free(&lo);
    if (s != STRATA_OK)
        mismatch(r, "range scan of index %u: %s", idx, strata_view_errmsg(v));
    expect_ids(r, "the range index's integer scan", got, drain(it, got, MAX_IDS), want, nwant);
}

static void compare_view(run *r, strata_view *v, const model *m)
{
    strata_status s = strata_integrity_check(v);
    if (s != STRATA_OK)
        mismatch(r, "strata_integrity_check: %s (%s)", strata_errstr(s), strata_view_errmsg(v));
    if (strata_node_count(v) != m->nodes_live || strata_rel_count(v) != m->rels_live)
        mismatch(r, "%" PRIu64 " nodes and %" PRIu64 " relationships, the model has %u and %u",
                 strata_node_count(v), strata_rel_count(v), m->nodes_live, m->rels_live);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_node(r, v, m, id);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_rel(r, v, m, id);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (m->node[id].alive) {
            compare_neighbours(r, v, m, id, true);
            compare_neighbours(r, v, m, id, false);
        }
    compare_scans(r, v, m);
    compare_index(r, v, m, r->uniq, UNIQ_LABEL, UNIQ_KEY, false);
    compare_index(r, v, m, r->range, RANGE_LABEL, RANGE_KEY, true);
    r->c.views_compared++;
}

static void check_step(run *r)
{
    snprintf(r->where, sizeof r->where, "strata_in_transaction");
    if (strata_in_transaction(r->g) != r->in_txn)
        mismatch(r, "strata_in_transaction says %d", !r->in_txn);
    if (!r->in_stmt || r->stmt_readers) {
        strata_view *fresh = NULL;
        snprintf(r->where, sizeof r->where, "a fresh snapshot (the committed state)");
        expect_status(r, strata_snapshot(r->g, &fresh), STRATA_OK);
        snprintf(r->where, sizeof r->where, "a fresh snapshot (the committed state)");
        if (r->in_stmt && !r->in_txn)
            r->stmt_read = true;
        compare_view(r, fresh, r->committed);
        strata_view_release(&fresh);
    }
    if (!r->in_stmt) {
        strata_view *own = NULL;
        snprintf(r->where, sizeof r->where, "an own view (the writer's state)");
        expect_status(r, strata_snapshot_own(r->g, &own), STRATA_OK);
        snprintf(r->where, sizeof r->where, "an own view (the writer's state)");
        compare_view(r, own, r->work);
        strata_view_release(&own);
    }
    if (!r->in_stmt && !r->in_txn) {
        strata_memstats ms;
        snprintf(r->where, sizeof r->where, "strata_memory_stats");
        expect_status(r, strata_memory_stats(r->g, &ms), STRATA_OK);
        if (ms.nodes != r->work->nodes_live || ms.relationships != r->work->rels_live ||
            ms.node_slots != r->work->node_slots || ms.rel_slots != r->work->rel_slots)
            mismatch(r, "memory stats: %" PRIu64 "/%" PRIu64 " nodes live/slots, %" PRIu64
                     "/%" PRIu64 " relationships; the model %u/%u and %u/%u", ms.nodes,
                     ms.node_slots, ms.relationships, ms.rel_slots, r->work->nodes_live,
                     r->work->node_slots, r->work->rels_live, r->work->rel_slots);
    }
    for (uint32_t i = 0; i < r->nheld; i++) {
        snprintf(r->where, sizeof r->where, "the view taken at step %u (%s)",
                 r->held[i].taken_at, r->held[i].when);
        compare_view(r, r->held[i].v, r->held[i].m);
    }
}

/* ---- the runs ------------------------------------------------------------------------- */

static void setup_graph(run *r)
{
    char name[16];
    for (uint32_t i = 0; i < NLABELS; i++) {
        snprintf(name, sizeof name, "L%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_LABEL, name, &r->label[i]), STRATA_OK);
    }
    for (uint32_t i = 0; i < NTYPES; i++) {
        snprintf(name, sizeof name, "T%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_RELTYPE, name, &r->type[i]),
                         STRATA_OK);
    }
    for (uint32_t i = 0; i < NKEYS; i++) {
        snprintf(name, sizeof name, "k%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_KEY, name, &r->key[i]), STRATA_OK);
    }
    /* Model order must be token order (labels, keys and segments sort by
       token). */
    for (uint32_t i = 1; i < NLABELS; i++)
        assert_true(r->label[i - 1] < r->label[i]);
    for (uint32_t i = 1; i < NTYPES; i++)
        assert_true(r->type[i - 1] < r->type[i]);
    for (uint32_t i = 1; i < NKEYS; i++)
        assert_true(r->key[i - 1] < r->key[i]);
    assert_int_equal(strata_index_create(r->g, STRATA_INDEX_UNIQUE, false, r->label[UNIQ_LABEL],
                                         &r->key[UNIQ_KEY], 1, &r->uniq),
                     STRATA_OK);
    assert_int_equal(strata_index_create(r->g, STRATA_INDEX_RANGE, false, r->label[RANGE_LABEL],
                                         &r->key[RANGE_KEY], 1, &r->range),
                     STRATA_OK);
}

static run *run_new(uint64_t seed)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->seed = seed;
    r->rng = (seed * 0x9E3779B97F4A7C15ull) | 1;
    model **ms[] = { &r->work, &r->committed, &r->stmt_start, &r->next };
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
        assert_non_null(*ms[i] = calloc(1, sizeof(model)));
    for (uint32_t i = 0; i < MAX_VIEWS; i++)
        assert_non_null(r->held[i].m = calloc(1, sizeof(model)));
    assert_int_equal(strata_graph_new(&r->g), STRATA_OK);
    setup_graph(r);
    snprintf(r->op, sizeof r->op, "setup");
    return r;
}

static void run_free(run **rp)
{
    run *r = *rp;
    for (uint32_t i = 0; i < r->nheld; i++)
        strata_view_release(&r->held[i].v);
    strata_graph_free(&r->g);
    for (uint32_t i = 0; i < MAX_VIEWS; i++)
        free(r->held[i].m);
    free(r->work);
    free(r->committed);
    free(r->stmt_start);
    free(r->next);
    free(r);
    *rp = NULL;
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
    run *r = run_new(seed);
    for (r->step = 1; r->step <= steps; r->step++) {
        run_random_op(r);
        check_step(r);
        r->c.steps++;
    }
    /* Whatever is still open ends; the final state is checked once more. */
    if (r->in_txn) {
        op_txn_end(r);
        check_step(r);
    } else if (r->in_stmt) {
        op_stmt_end(r);
        check_step(r);
    }
    add_counts(t, &r->c);
    run_free(&r);
}

static unsigned long env_or(const char *name, unsigned long fallback)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return fallback;
    unsigned long v = strtoul(s, &end, 10);
    return *end ? fallback : v;
}

static void test_txn_model_random(void **state)
{
    (void)state;
    uint32_t steps = (uint32_t)env_or("STRATA_MODEL_STEPS", DEFAULT_STEPS);
    uint64_t first = 1, count = env_or("STRATA_MODEL_SEEDS", DEFAULT_SEEDS);
    if (getenv("STRATA_MODEL_SEED")) {
        first = env_or("STRATA_MODEL_SEED", 1);
        count = 1;
    }
    counts t = { 0 };
    for (uint64_t seed = first; seed < first + count; seed++)
        run_seed(seed, steps, &t);
    print_message("txn model: %" PRIu64 " seeds x %u steps, %" PRIu64 " views compared; "
                  "statements %" PRIu64 " committed, %" PRIu64 " rolled back (%" PRIu64
                  " replayed in place); transactions %" PRIu64 " committed, %" PRIu64
                  " rolled back; %" PRIu64 " views taken mid-statement, %" PRIu64
                  " own views; %" PRIu64 " writes, %" PRIu64 " unique refusals, %" PRIu64
                  " misuses\n",
                  count, steps, t.views_compared, t.stmt_commit, t.stmt_rollback,
                  t.stmt_rollback_replayed, t.txn_commit, t.txn_rollback,
                  t.views_taken_mid_stmt, t.own_views, t.writes_ok, t.constraint, t.misuse);
    /* A default run must have exercised every path. */
    if (count * steps >= (uint64_t)DEFAULT_SEEDS * DEFAULT_STEPS) {
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
