/*
 * txn — statements and transactions, as the write path sees them
 * (core/txn.c has the design; core/graph_impl.h the fields).
 *
 * core/txn.c sits on core/graph.c: it calls the graph's write bracket,
 * fork and base bookkeeping, and graph.c calls nothing declared here.
 * The write path (write.c, index_maint.c) asks this header, never the
 * graph's fields, whether a statement is open, what to journal and how to
 * make the writer's version writable.
 */
#ifndef STRATA_CORE_TXN_H
#define STRATA_CORE_TXN_H

#include "core/graph_impl.h"

/* ---- the state, named ---------------------------------------------------- */

/* strata_begin .. strata_commit / strata_rollback: writes go to tx.  (The
   writer's version, tx or current, is graph_writer_version in
   graph_impl.h.) */
static inline bool txn_open(const strata_graph *g) { return g->in_txn; }

/* strata_statement_begin .. strata_statement_end: every write journals
   what undoes it.  (Outside a statement a transaction's writes need no
   journal: rolling the transaction back drops its version.) */
static inline bool stmt_open(const strata_graph *g) { return g->in_stmt; }

/* Whether a create may take a freed id.  Not once the open unit — the
   transaction, else the statement — has deleted one of its kind: a
   query's variable still names the entity it deleted (its labels empty,
   its properties null), and a create that took the freed id would make
   that variable show the new entity instead.  The unit's creates take new
   ids at the end then; the ids it freed are reused once it has ended.  A
   write outside both is a unit of its own, and deletes or creates, never
   both.  The rule depends on nothing but the unit's own writes, so a log
   replaying a committed unit's writes, from its first delete on, as one
   statement hands out the same ids (core/wal.c); a statement rolled back
   inside a transaction puts the flags back as they were (its writes are
   not in the log). */
static inline bool txn_reuse_node_ids(const strata_graph *g) { return !g->freed.node; }
static inline bool txn_reuse_rel_ids(const strata_graph *g) { return !g->freed.rel; }

static inline void txn_note_node_freed(strata_graph *g)
{
    if (stmt_open(g) || txn_open(g))
        g->freed.node = true;
}
static inline void txn_note_rel_freed(strata_graph *g)
{
    if (stmt_open(g) || txn_open(g))
        g->freed.rel = true;
}

/* The unit ended: freed ids may be reused again. */
static inline void txn_unit_ended(strata_graph *g) { g->freed = (struct unit_freed){ 0 }; }

/* The open statement has changed something: its entries are in the
   journal. */
static inline bool stmt_wrote(const strata_graph *g)
{
    return g->in_stmt && g->j.n > g->stmt_mark;
}

/* A statement outside a transaction writes in place into current, the
   version readers get when nothing else is said. */
static inline bool stmt_writes_current(const strata_graph *g)
{
    return g->in_stmt && !g->in_txn;
}

/* A reader needs the state before the statement: current holds some of
   the statement's writes. */
static inline bool stmt_hides_current(const strata_graph *g)
{
    return stmt_writes_current(g) && stmt_wrote(g);
}

/* ---- a write call ------------------------------------------------------- */

/* The graph's write bracket (graph_write_begin, graph_writable,
   graph_write_finish) with what an open statement adds: where a fork puts
   the state before the statement, and, for a call that fails after its
   fork, the journal entries it pushed.  Inline, as is the journal's part:
   every direct write goes through them, and outside a statement they must
   cost what the graph's bracket alone costs (bench/fork_cost). */

/* Locks the graph and returns the writer's version to validate against
   (graph_write_begin), noting where the call's journal entries start. */
static inline version *txn_write_begin(strata_graph *g)
{
    version *v = graph_write_begin(g);
    g->write_mark = g->j.n;
    return v;
}

/* The statement's first write: if it forks, a view holds the state before
   the statement, which is then what readers get until the statement ends
   (the graph's reference goes to published, and from there to bases or
   back to current at strata_statement_end). */
static inline bool stmt_fork_keeps_pre_state(const strata_graph *g)
{
    return stmt_writes_current(g) && !stmt_wrote(g) && !g->published;
}

/* The writer's version made writable (NULL: out of memory, message set,
   graph unchanged). */
static inline version *txn_writable(strata_graph *g)
{
    return graph_fork_writer(g, stmt_fork_keeps_pre_state(g));
}

/* Undoes a failed call's fork and unlocks.  The entries a call pushed
   before failing after its fork (saved index stacks of the fork) go with
   the fork; a call that failed unforked keeps them: they record stacks
   saved (and marked saved) in the writer's version itself. */
static inline void txn_write_finish(strata_graph *g, strata_status s)
{
    if (s != STRATA_OK && g->fork_old)
        journal_truncate(&g->j, g->m, g->write_mark);
    graph_write_finish(g, s);
}

/* The one reservation of a write call, in its prepare phase: room for
   everything need lists, when a statement is open (else nothing to do).
   -1 when out of memory (nothing changed). */
static inline int txn_journal_reserve(strata_graph *g, const journal_need *need)
{
    return stmt_open(g) ? journal_reserve(&g->j, g->m, need) : 0;
}

/* Commit phase: appends an entry for id within the call's reservation;
   NULL when no statement is open (nothing to journal). */
static inline undo_entry *txn_journal_add(strata_graph *g, undo_kind kind, uint64_t id)
{
    if (!stmt_open(g))
        return NULL;
    undo_entry *e = journal_push(&g->j, kind);
    e->id = id;
    return e;
}

/* Prepare phase, before the first change to index pos of v: in a
   statement, its first write to the index saves the index's stack in the
   journal (one UNDO_INDEX_STACK, within the call's reservation).  A no-op
   outside a statement or when the statement saved it already. */
void txn_save_index_stack(strata_graph *g, version *v, uint32_t pos);

#endif
