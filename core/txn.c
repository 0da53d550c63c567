/*
 * Statements and transactions: the one owner of a graph's statement and
 * transaction state (in_txn, tx, published, in_stmt, stmt_*, the journal
 * and write_mark in graph_impl.h), of which version the writer and a
 * reader get, of what a write journals, and of the journal's replay.
 *
 * Layering: this file calls core/graph.c (the write bracket, the fork,
 * bases, versions); graph.c calls nothing here.  The write path (write.c,
 * index_maint.c) reaches this state only through core/txn.h, whose
 * predicates name it.
 *
 * States:
 *
 *   idle         writes are single atomic calls on current.
 *   statement    (stmt_open) writes go in place into the writer's version,
 *                each appending its undo entries to the journal.  Outside
 *                a transaction that version is current (stmt_writes_current)
 *                and a reader arriving once the statement has written
 *                (stmt_hides_current) must not see its writes: if the
 *                statement's first write forked (a view held current), the
 *                state before the statement is that view's version and
 *                becomes `published`; otherwise stmt_materialize() builds
 *                it once, by replaying the journal onto a fork (O(the
 *                statement's writes), the one bounded critical section a
 *                reader may wait out).
 *   transaction  (txn_open) writes go to tx, a version readers never see.
 *                A statement inside a transaction journals as above, so it
 *                can be rolled back alone.
 *
 * Transitions, and the function that makes each:
 *
 *   idle -> statement, transaction -> statement in it
 *                strata_statement_begin: stmt_mark, stmt_serial, the counts
 *                strata_memory_stats reports meanwhile.
 *   statement -> idle (or back to its transaction)
 *                strata_statement_end: commit hands `published` to bases;
 *                rollback swaps back to `published`, or else replays the
 *                journal in place.  The journal is emptied either way.
 *   idle -> transaction
 *                strata_begin: tx shares current (O(1)).
 *   transaction -> idle
 *                strata_commit: tx becomes current (O(1));
 *                strata_rollback: tx is dropped, with any open statement.
 *   within a statement, a write call (txn_write_begin .. txn_writable ..
 *   txn_write_finish): the statement's first write, if it forks, puts
 *   the version it replaced in `published`; a call that fails after its
 *   fork drops the journal entries it pushed with the fork.
 *   within a statement, a reader (strata_snapshot): builds `published`
 *   once if the statement has written and it is not there yet.
 *
 * Invariants:
 *   1. in_txn == (tx != NULL): tx is the writer's version exactly while a
 *      transaction is open.
 *   2. published is set only inside a statement outside a transaction,
 *      and is then the state before the statement, what strata_snapshot
 *      returns.
 *   3. Inside a statement the journal holds, from stmt_mark on, what
 *      undoes each of its writes, in write order; outside one it is empty.
 *   4. Nothing can take a view of the writer's version mid-statement (a
 *      reader gets published, strata_snapshot_own refuses), so every path
 *      and record an entry touches is private to the writer.
 *   5. A write call reserves its journal room once, in its prepare phase
 *      (txn_journal_reserve, from what it will append by kind), and its
 *      commit phase appends within it (journal_push checks).
 *
 * Replay in place never allocates, so rollback cannot fail: every path and
 * record an entry touches was made private by the write that logged it
 * (invariant 4), deletes moved what they removed into their entries,
 * removes keep their record's room, and an index is restored by putting
 * back the stack the statement saved before its first write to it.
 */
#include <string.h>

#include "core/stats_maint.h"
#include "core/txn.h"
#include "core/wal.h"

/* ---- replaying the journal ---------------------------------------------- */

/* Sets (on) or clears the bits of every label of labelset ls for node. */
static int label_bits(strata_graph *g, version *t, uint32_t ls, uint64_t node, bool on)
{
    for (size_t i = 0; i < labelset_len(g->cat, ls); i++) {
        uint32_t l = labelset_at(g->cat, ls, i);
        if (labelidx_prepare(g->m, &t->labels, l, node) != 0)
            return -1;
        labelidx_set(g->m, t->labels, l, node, on);
    }
    return 0;
}

static bool labelset_has(const catalog *c, uint32_t ls, uint32_t label)
{
    for (size_t i = 0; i < labelset_len(c, ls); i++)
        if (labelset_at(c, ls, i) == label)
            return true;
    return false;
}

/* The statistics of a relationship between start and end, both live in
   t, counted in (sign +1) or out (-1): the elements it touches are the ones
   its create or delete made private, so in place this cannot fail. */
static int count_rel(strata_graph *g, version *t, uint32_t start, uint32_t end, uint32_t type,
                     int sign)
{
    uint32_t start_ls = store_node(&t->st, start)->labelset;
    uint32_t end_ls = store_node(&t->st, end)->labelset;
    if (stats_rel_prepare(g->cat, &t->stats, start_ls, end_ls, type) != 0)
        return -1;
    stats_rel_count(g->cat, &t->stats, start_ls, end_ls, type, sign);
    return 0;
}

/* What an entry hands back: the object itself (in place: the entry gives
   it up) or a new reference (materialising: the entry keeps its own). */
static prop_rec *take_props(prop_rec **p, bool in_place)
{
    prop_rec *r = *p;
    if (in_place)
        *p = NULL;
    else
        props_retain(r);
    return r;
}

static value take_value(value *v, bool in_place)
{
    value r = *v;
    if (in_place)
        *v = value_null();
    else
        r = value_retain(r);
    return r;
}

/* Puts back the stack an index had before the statement wrote to it. */
static int undo_index_stack(strata_graph *g, version *t, undo_entry *e, bool in_place)
{
    int pos = idxset_find(t->indexes, e->key);
    if (pos < 0 || (!in_place && idxset_own(g->m, &t->indexes) != 0))
        return -1;
    level_stack **sp = idxset_stack_mut(t->indexes, (uint32_t)pos);
    lstack_release(g->m, sp);
    *sp = e->u.stack;
    if (in_place)
        e->u.stack = NULL;
    else
        lstack_retain(*sp);
    /* A later statement saves it again. */
    *idxset_stmt_mut(t->indexes, (uint32_t)pos) = 0;
    return 0;
}

static int undo_rel_created(strata_graph *g, version *t, const undo_entry *e)
{
    const rel_meta *r = store_rel(&t->st, e->id);
    if (!r)
        return -1;
    rel_meta m = *r;
    uint32_t ends[2] = { m.start, m.end };
    if (count_rel(g, t, m.start, m.end, m.type, -1) != 0)
        return -1;
    for (int d = 0; d < 2; d++) {
        adj_edit del = { d == 0 ? ADJ_OUT : ADJ_IN, m.type, (uint32_t)e->id };
        node_adj *a = store_node_adj_mut(&t->st, g->m, ends[d]);
        if (!a || adj_prepare_erase(g->m, &a->block, &del) != 0)
            return -1;
        store_adj_erase(g->m, a, del.dir, del.type, del.rel);
    }
    if (labelidx_prepare(g->m, &t->rel_types, m.type, e->id) != 0)
        return -1;
    labelidx_set(g->m, t->rel_types, m.type, e->id, false);
    return store_rel_unalloc(&t->st, g->m, e->id, e->flag);
}

static int undo_rel_deleted(strata_graph *g, version *t, undo_entry *e, bool in_place)
{
    uint32_t ends[2] = { e->u.rel.start, e->u.rel.end };
    bool edited[2] = { e->u.rel.out_edited, e->u.rel.in_edited };
    for (int d = 0; d < 2; d++) {
        if (!edited[d])
            continue;   /* that block went with its node and comes back whole */
        node_adj *a = store_node_adj_mut(&t->st, g->m, ends[d]);
        /* A new segment only when the delete emptied it: a node at
           ADJ_MAX_SEGMENTS takes back its relationship. */
        adj_edit ins = { d == 0 ? ADJ_OUT : ADJ_IN, e->u.rel.type, (uint32_t)e->id };
        if (!a || adj_prepare_insert(g->m, &a->block, &ins, 1) != 0)
            return -1;
        store_adj_insert(a, ins.dir, ins.type, ins.rel, ends[1 - d]);
    }
    if (labelidx_prepare(g->m, &t->rel_types, e->u.rel.type, e->id) != 0)
        return -1;
    labelidx_set(g->m, t->rel_types, e->u.rel.type, e->id, true);
    /* Its ends are live: a node deleted with it came back first. */
    if (count_rel(g, t, e->u.rel.start, e->u.rel.end, e->u.rel.type, +1) != 0)
        return -1;
    rel_meta m = { e->u.rel.start, e->u.rel.end, e->u.rel.type, SLOT_LIVE };
    prop_rec *props = take_props(&e->u.rel.props, in_place);
    if (store_rel_restore(&t->st, g->m, e->id, &m, props) != 0) {
        if (!in_place)
            props_release(g->m, &props);
        return -1;
    }
    return 0;
}

static int undo_node_deleted(strata_graph *g, version *t, undo_entry *e, bool in_place)
{
    prop_rec *props = take_props(&e->u.node.props, in_place);
    adj_block *adj = e->u.node.adj;
    if (in_place)
        e->u.node.adj = NULL;
    else
        adj_retain(adj);
    if (store_node_restore(&t->st, g->m, e->id, e->key, props, adj) != 0) {
        if (!in_place) {
            props_release(g->m, &props);
            adj_release(g->m, &adj);
        }
        return -1;
    }
    return label_bits(g, t, e->key, e->id, true);
}

static int undo_prop(strata_graph *g, version *t, undo_entry *e, bool in_place)
{
    prop_rec **rp = e->flag ? store_rel_props_mut(&t->st, g->m, e->id)
                            : store_node_props_mut(&t->st, g->m, e->id);
    if (!rp)
        return -1;
    if (value_is_null(&e->u.old))
        return props_remove(g->m, rp, e->key, NULL);
    return props_set(g->m, rp, e->key, take_value(&e->u.old, in_place), NULL);
}

static int undo_labels(strata_graph *g, version *t, const undo_entry *e)
{
    const node_meta *nm = store_node(&t->st, e->id);
    if (!nm)
        return -1;
    uint32_t now = nm->labelset, then = e->key;
    const adj_block *adj = store_node_adj(&t->st, e->id);
    for (size_t i = 0; i < labelset_len(g->cat, now); i++) {
        uint32_t l = labelset_at(g->cat, now, i);
        if (!labelset_has(g->cat, then, l)) {
            if (labelidx_prepare(g->m, &t->labels, l, e->id) != 0 ||
                stats_label_prepare(&t->stats, g->m, l, adj) != 0)
                return -1;
            labelidx_set(g->m, t->labels, l, e->id, false);
            stats_label_move(&t->stats, g->m, l, adj, -1);
        }
    }
    for (size_t i = 0; i < labelset_len(g->cat, then); i++) {
        uint32_t l = labelset_at(g->cat, then, i);
        if (!labelset_has(g->cat, now, l)) {
            if (labelidx_prepare(g->m, &t->labels, l, e->id) != 0 ||
                stats_label_prepare(&t->stats, g->m, l, adj) != 0)
                return -1;
            labelidx_set(g->m, t->labels, l, e->id, true);
            stats_label_move(&t->stats, g->m, l, adj, +1);
        }
    }
    node_meta *m = store_node_meta_mut(&t->st, g->m, e->id);
    if (!m)
        return -1;
    m->labelset = then;
    return 0;
}

/* Replays entries [from, n) newest first onto t.  In place (t is the
   writer's version) nothing allocates and entries give up what they own;
   otherwise (materialising) entries keep theirs and -1 reports a failed
   allocation, after which t is to be discarded. */
static int replay(strata_graph *g, version *t, uint32_t from, bool in_place)
{
    for (uint32_t i = g->j.n; i-- > from;) {
        undo_entry *e = &g->j.e[i];
        int rc = 0;
        switch ((undo_kind)e->kind) {
        case UNDO_NODE_CREATED:
            rc = label_bits(g, t, e->key, e->id, false) ||
                 store_node_unalloc(&t->st, g->m, e->id, e->flag);
            break;
        case UNDO_NODE_DELETED:
            rc = undo_node_deleted(g, t, e, in_place);
            break;
        case UNDO_REL_CREATED:
            rc = undo_rel_created(g, t, e);
            break;
        case UNDO_REL_DELETED:
            rc = undo_rel_deleted(g, t, e, in_place);
            break;
        case UNDO_PROP:
            rc = undo_prop(g, t, e, in_place);
            break;
        case UNDO_LABELS:
            rc = undo_labels(g, t, e);
            break;
        case UNDO_INDEX_STACK:
            rc = undo_index_stack(g, t, e, in_place);
            break;
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* A new version holding the state before the open statement (outside a
   transaction), built by replaying the journal onto a fork of the
   writer's version: O(the statement's writes).  NULL when out of memory.
   Called under the lock. */
static version *stmt_materialize(strata_graph *g)
{
    version *x = version_fork(g->current);
    if (x && replay(g, x, g->stmt_mark, false) != 0)
        version_release(&x);
    return x;
}

/* The journal is done with: drop what it still owns and what it kept. */
static void journal_done(strata_graph *g)
{
    journal_truncate(&g->j, g->m, 0);
}

/* ---- a write call (txn.h has its inline part) ---------------------------- */

void txn_save_index_stack(strata_graph *g, version *v, uint32_t pos)
{
    /* The saved stack is then shared, so the write's lstack_prepare copies
       its header and pushes a private level that takes all of the
       statement's writes to the index: rolling back puts the saved stack
       back, no replay, no memory. */
    if (!stmt_open(g))
        return;
    uint64_t *saved_by = idxset_stmt_mut(v->indexes, pos);
    if (*saved_by == g->stmt_serial)
        return;
    *saved_by = g->stmt_serial;
    undo_entry *e = txn_journal_add(g, UNDO_INDEX_STACK, 0);
    e->key = idxset_def(v->indexes, pos)->id;
    e->u.stack = *idxset_stack_mut(v->indexes, pos);
    lstack_retain(e->u.stack);
}

/* ---- statements and transactions ---------------------------------------- */

/* The open transaction's version is dropped: its writes are gone. */
static void txn_drop(strata_graph *g)
{
    version_release(&g->tx);
    g->in_txn = false;
}

static strata_status misuse(strata_graph *g, const char *what)
{
    graph_write_end(g);
    return graph_fail(g, STRATA_EINVAL, "%s", what);
}

strata_status strata_statement_begin(strata_graph *g)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_STMT_BEGIN });
    if (!g)
        return STRATA_EINVAL;
    graph_write_begin(g);
    if (stmt_open(g))
        return misuse(g, "a statement is already open");
    g->in_stmt = true;
    g->stmt_freed = g->freed;
    g->stmt_mark = g->j.n;
    g->stmt_serial = atomic_fetch_add(&g->cat->lin->stmt_serial, 1) + 1;
    const store *st = &graph_writer_version(g)->st;
    g->stmt_counts[0] = st->node_live;
    g->stmt_counts[1] = st->rel_live;
    g->stmt_counts[2] = store_node_slots(st);
    g->stmt_counts[3] = store_rel_slots(st);
    if (g->wal)
        wal_stmt_mark(g);
    graph_write_end(g);
    return STRATA_OK;
}

#ifdef STRATA_TESTING
/* txn_test_fail_next_rollback: see graph_impl.h. */
static atomic_bool fail_next_rollback;

void txn_test_fail_next_rollback(void) { atomic_store(&fail_next_rollback, true); }

static bool rollback_fails(void) { return atomic_exchange(&fail_next_rollback, false); }
#else
static bool rollback_fails(void) { return false; }
#endif

strata_status strata_statement_end(strata_graph *g, bool commit)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_STMT_END, .flag = commit });
    if (!g)
        return STRATA_EINVAL;
    graph_write_begin(g);
    if (!stmt_open(g))
        return misuse(g, "no statement is open");
    strata_status s = STRATA_OK;
    /* Logged before readers see it; a failed append rolls back instead. */
    if (commit && !txn_open(g) && g->wal && (s = wal_commit(g)) != STRATA_OK)
        commit = false;
    if (!commit && g->wal)
        wal_discard(g, true);
    if (commit) {
        /* The statement's writes are the committed state now: the version
           readers had meanwhile is just another base. */
        if (g->published)
            graph_keep_base(g, &g->published);
    } else if (g->published) {
        version_release(&g->current);
        g->current = g->published;
        g->published = NULL;
    } else {
        version *w = graph_writer_version(g);
        int rc = rollback_fails() ? -1 : replay(g, w, g->stmt_mark, true);
        if (rc != 0) {
            /* Cannot happen by construction (see the top of this file);
               if it ever did, the transaction is the unit left to drop. */
            if (txn_open(g))
                txn_drop(g);
            s = graph_fail(g, STRATA_ENOMEM,
                           "rolling back the statement needed memory; the transaction was "
                           "rolled back");
        }
    }
    journal_done(g);
    g->in_stmt = false;
    if (!txn_open(g)) {
        txn_unit_ended(g);
    } else if (!commit) {
        g->freed = g->stmt_freed;
    }
    graph_write_end(g);
    return s;
}

strata_status strata_begin(strata_graph *g)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_BEGIN });
    if (!g)
        return STRATA_EINVAL;
    graph_write_begin(g);
    if (txn_open(g))
        return misuse(g, "a transaction is already open");
    if (stmt_open(g))
        return misuse(g, "a statement is open; end it before beginning a transaction");
    version_retain(g->current);
    g->tx = g->current;
    g->in_txn = true;
    graph_write_end(g);
    return STRATA_OK;
}

strata_status strata_commit(strata_graph *g)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_COMMIT });
    if (!g)
        return STRATA_EINVAL;
    graph_write_begin(g);
    if (!txn_open(g))
        return misuse(g, "no transaction is open");
    if (stmt_open(g))
        return misuse(g, "a statement is open; end it before committing");
    strata_status s = g->wal ? wal_commit(g) : STRATA_OK;
    if (s != STRATA_OK) {
        /* Not in the log: the transaction is rolled back. */
        txn_drop(g);
        txn_unit_ended(g);
        journal_done(g);
        wal_discard(g, false);
        graph_write_end(g);
        return s;
    }
    /* O(1): the transaction's version becomes what readers get. */
    version *old = g->current;
    g->current = g->tx;
    g->tx = NULL;
    g->in_txn = false;
    txn_unit_ended(g);
    graph_keep_base(g, &old);
    graph_write_end(g);
    return STRATA_OK;
}

strata_status strata_rollback(strata_graph *g)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_ROLLBACK });
    if (!g)
        return STRATA_EINVAL;
    graph_write_begin(g);
    if (!txn_open(g))
        return misuse(g, "no transaction is open");
    txn_drop(g);
    g->in_stmt = false;
    txn_unit_ended(g);
    journal_done(g);
    if (g->wal)
        wal_discard(g, false);
    graph_write_end(g);
    return STRATA_OK;
}

/* ---- what readers get ---------------------------------------------------- */

strata_status strata_snapshot(strata_graph *g, strata_view **out)
{
    if (!g || !out)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_snapshot: out is NULL")
                 : STRATA_EINVAL;
    strata_view *v = mem_alloc(mem_scratch(), sizeof *v);
    if (!v)
        return graph_fail(g, STRATA_ENOMEM, "out of memory taking a snapshot");
    v->err[0] = '\0';
    /* The lock only, not the write bracket: a reader folds nothing back. */
    pthread_mutex_lock(&g->lock);
    /* The state before the statement, built the first time a reader needs
       it (NULL when building it ran out of memory). */
    bool hidden = stmt_hides_current(g);
    if (hidden && !g->published)
        g->published = stmt_materialize(g);
    v->ver = g->published ? g->published : hidden ? NULL : g->current;
    if (v->ver)
        version_retain(v->ver);
    pthread_mutex_unlock(&g->lock);
    if (!v->ver) {
        mem_free_sized(mem_scratch(), v, sizeof *v);
        return graph_fail(g, STRATA_ENOMEM, "out of memory taking a snapshot during a statement");
    }
    *out = v;
    return STRATA_OK;
}

strata_status strata_memory_stats(strata_graph *g, strata_memstats *out)
{
    if (!g || !out)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_memory_stats: out is NULL")
                 : STRATA_EINVAL;
    pthread_mutex_lock(&g->lock);
    /* Counts describe the last committed state, as a snapshot would: the
       state before a statement writing into current is published, or else
       was counted when the statement began (building it just to count
       would cost the statement's writes). */
    const version *committed = g->published ? g->published : g->current;
    const store *s = &committed->st;
    *out = (strata_memstats){
        .graph_bytes = mem_ctx_bytes(g->m),
        .private_bytes = version_private_bytes(committed),
        .nodes = s->node_live,
        .relationships = s->rel_live,
        .node_slots = store_node_slots(s),
        .rel_slots = store_rel_slots(s),
    };
    if (!g->published && stmt_writes_current(g)) {
        out->nodes = g->stmt_counts[0];
        out->relationships = g->stmt_counts[1];
        out->node_slots = g->stmt_counts[2];
        out->rel_slots = g->stmt_counts[3];
    }
    pthread_mutex_unlock(&g->lock);
    return STRATA_OK;
}

strata_status graph_snapshot_own_into(strata_graph *g, strata_view *v)
{
    v->err[0] = '\0';
    v->ver = NULL;
    graph_write_begin(g);
    if (stmt_open(g))
        return misuse(g, "a statement is open: its writes can be viewed once it ends");
    v->ver = graph_writer_version(g);
    version_retain(v->ver);
    graph_write_end(g);
    return STRATA_OK;
}

strata_status strata_snapshot_own(strata_graph *g, strata_view **out)
{
    if (!g)
        return STRATA_EINVAL;
    if (!out)
        return graph_fail(g, STRATA_EINVAL, "strata_snapshot_own: out is NULL");
    strata_view *v = mem_alloc(mem_scratch(), sizeof *v);
    if (!v)
        return graph_fail(g, STRATA_ENOMEM, "out of memory taking a snapshot");
    strata_status s = graph_snapshot_own_into(g, v);
    if (s != STRATA_OK) {
        mem_free_sized(mem_scratch(), v, sizeof *v);
        return s;
    }
    *out = v;
    return STRATA_OK;
}

bool strata_in_transaction(strata_graph *g)
{
    if (!g)
        return false;
    graph_write_begin(g);
    bool in = txn_open(g);
    graph_write_end(g);
    return in;
}
