/*
 * graph_impl — the graph handle and its write entry; private to core/.
 *
 * Versions, the catalog and views are core/version.h, the read side that
 * algo/ and query/ include; what query/ asks of a handle is
 * core/graph_handle.h.  This header is the rest, which only core/ (and
 * tests of its internals) may include (tests/check_includes.sh).
 *
 * A version is a small header of pointers to the graph-sized structures
 * (store.h, label_index.h).  The graph publishes its current version; a
 * view is a counted reference to a version.  Versions are immutable while
 * shared:
 *
 *   write entry (graph_write_begin and graph_writable, under the graph's
 *   mutex):
 *     1. fold back: every base version that only the graph still holds is
 *        released; this frees the chunks the fork copied (O(delta)) and
 *        leaves the current version's chunks unshared again, so writes go
 *        back to being in place.
 *     2. fork: if a view holds the current version (refcount > 1), a new
 *        version shares every structure of it (O(1): a few refcount
 *        increments) and becomes current; the old one is kept as a base
 *        until its views are gone.
 *     3. the write runs in place on the current version, copying only the
 *        shared chunks on the paths it touches.
 *
 *   snapshot (strata_snapshot, under the same mutex): one refcount
 *   increment on the current version.  A reader therefore waits at most for
 *   one direct write call to finish, never for a statement.
 *
 * Invariants:
 *   1. The current version's refcount counts the graph plus every view of
 *      it; a version with refcount above one is never written.
 *   2. Every version in bases was current once and is still held by a view
 *      (or will be released at the next write entry).
 *   3. is_forked == (nbases > 0 || published): the current version shares
 *      chunks with a version a view may still read.
 */
#ifndef STRATA_CORE_GRAPH_IMPL_H
#define STRATA_CORE_GRAPH_IMPL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "core/graph_handle.h"
#include "core/version.h"
#include "journal/journal.h"

#define MAX_LABELS_PER_NODE 1024

/* What a graph shares with every branch made from it, and they with
   theirs (strata_branch): one memory context, so a chunk allocated on one
   side may be freed on the other, and one set of token catalogs, so a
   token id means the same name in every branch and a diff compares ids.
   A name interned in one branch is known, unused, in the others. */
struct lineage {
    atomic_uint refs;
    mem_ctx *m;
    interner *tokens[3];   /* by strata_token_kind */
    interner *labelsets;   /* sorted uint32 label arrays; id 0 is empty */
    /* While the lineage has more than one graph, their writers share one
       reserve of index tree nodes: a write call takes it (graph_write_begin)
       and gives back what is left (graph_write_end), so a thousand idle
       branches hold one reserve, not a thousand.  A lone graph keeps its
       own and pays nothing for this. */
    atomic_uint graphs;
    pthread_mutex_t pool_lock;
    pbtree_pool spare;
    /* Numbers the statements of every graph of the lineage.  An index set
       entry records the statement that saved its stack (index_maint.c),
       and a branch inherits those records: numbered per graph, a branch's
       statement could match its source's and skip the save. */
    atomic_uint_fast64_t stmt_serial;
};

struct strata_graph {
    pthread_mutex_t lock;   /* serialises write calls; guards what follows */
    catalog *cat;
    mem_ctx *m;
    version *current;       /* committed state; outside a transaction also
                               the writer's */
    version *tx;            /* an open transaction's working version */
    version *published;     /* during a statement outside a transaction:
                               the state before it, once a reader needed it */
    version **bases;
    size_t nbases, capbases;
    pbtree_pool pool;       /* index tree nodes reserved for the next write */
    /* Blocks this writer freed, for its next allocations (storage/mem.h):
       bound to the thread for each write call, drained when the graph is
       freed. */
    mem_cache cache;
    mem_cache *cache_outer; /* what the call's thread had bound before */
    bool in_txn;
    bool in_stmt;
    uint32_t stmt_mark;     /* journal length when the statement began */
    uint64_t stmt_serial;   /* the open statement's number in the lineage */
    uint64_t stmt_counts[4];/* live nodes, relationships, node and
                               relationship slots when it began */
    /* The open unit deleted a node / a relationship: it takes no freed
       id of that kind (txn.h); and the same when the statement began,
       for its rollback inside a transaction. */
    struct unit_freed { bool node, rel; } freed, stmt_freed;
    journal j;              /* undo entries of the open statement/transaction */
    /* The write call in progress (graph_write_begin to graph_write_finish):
       the version its fork replaced, if it forked, and the journal length
       when it began, so that a call failing after its fork undoes it. */
    version *fork_old;
    bool fork_published;    /* fork_old went to published, not to bases */
    uint32_t write_mark;
    struct wal *wal;        /* the write-ahead log of a graph on a path
                               (core/wal.h); NULL in memory */
    char err[ERRMSG_MAX];
};

/* The version the writer reads and writes: an open transaction's working
   version, else the current one (and its slot, for a write that replaces
   it).  The one place that says which. */
static inline version **graph_writer_slot(strata_graph *g)
{
    return g->in_txn ? &g->tx : &g->current;
}
static inline version *graph_writer_version(strata_graph *g) { return *graph_writer_slot(g); }


/* One iterator type walks node ids or relationship ids from any source. */
typedef enum iter_mode {
    ITER_ALL_NODES,   /* every live node, by scanning slots */
    ITER_BITMAP,      /* members of one token of a label_index */
    ITER_ANY_LABEL,   /* nodes with any of up to STRATA_ANY_LABEL_MAX labels */
    ITER_INDEX,       /* entries of a property index, within bounds */
} iter_mode;

struct strata_node_iter {
    version *ver;
    iter_mode mode;
    uint64_t next;                /* ITER_ALL_NODES, ITER_BITMAP */
    const label_index *bitmap;    /* ITER_BITMAP */
    uint32_t token;
    uint32_t tokens[STRATA_ANY_LABEL_MAX];   /* ITER_ANY_LABEL */
    uint64_t ahead[STRATA_ANY_LABEL_MAX];    /* each label's next member >= next */
    size_t ntokens;
    struct lstack_cursor *cur;    /* ITER_INDEX */
    value lo, hi;                 /* bounds (owned); null when open */
    bool lo_incl, hi_incl;
    bool exact;                   /* a lookup: every key equal to lo */
};

/* A new iterator holding a reference on ver. */
strata_status iter_new(strata_view *v, iter_mode mode, strata_node_iter **out);

/* A new version sharing everything with src: O(1).  NULL when out of
   memory. */
version *version_fork(const version *src);
/* Bytes only v holds (docs/BRANCHES.md: what a branch costs). */
size_t version_private_bytes(const version *v);

/* Locks the graph, folds back, and returns the current version to read
   and validate against (it may still be shared with views: do not write
   it).  Never fails.  graph_write_end unlocks. */
version *graph_write_begin(strata_graph *g);
/* The writer's version made writable, forking it when a view shares it;
   NULL (message set, graph unchanged) when the fork ran out of memory.
   Called once validation has passed, so a rejected write never forks.
   The replaced version goes to bases, or with to_published to published
   (core/txn.c decides: txn_writable; graph_writable is for calls made
   outside statements). */
version *graph_fork_writer(strata_graph *g, bool to_published);
version *graph_writable(strata_graph *g);
/* Ends a call that wrote nothing (or cannot fail after graph_writable):
   unlocks. */
void graph_write_end(strata_graph *g);
/* Ends a write call with its status: a call that failed after forking
   (out of memory in its prepare phase) drops the fork it made, so a
   failed write leaves the graph unforked as well as unchanged (strata.h;
   txn_write_finish also drops the journal entries it pushed).  Unlocks. */
void graph_write_finish(strata_graph *g, strata_status s);
/* Hands the graph's reference on a version it no longer uses to bases
   while views may share it (for fold-back and is_forked), else drops it. */
void graph_keep_base(strata_graph *g, version **vp);


#ifdef STRATA_TESTING
/* Makes the next in-place rollback of a statement fail as if replaying
   had needed memory — which it cannot, by construction (txn.c) — so tests
   can check that callers handle strata_statement_end's status. */
void txn_test_fail_next_rollback(void);
#endif

/* Whether v may be a property value: booleans, integers, floats, strings,
   temporals and flat lists of those without nulls (core/write.c). */
bool prop_storable(const value *v);
/* Sorts label tokens and drops repeats in place, the form a label set is
   interned in; returns how many are left (core/write.c). */
size_t normalise_labels(uint32_t *l, size_t n);

#endif
