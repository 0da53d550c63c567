/*
 * version — what a reader of the graph sees: versions, the catalog they
 * share, views, values and stop requests.
 *
 * This is core's read side, the part of it the layers above (algo/,
 * query/) include.  The writer's side — the graph handle's fields, the
 * fork and fold-back at write entry, statements, transactions and the undo
 * journal — is core/graph_impl.h, private to core/ (tests/check_includes.sh
 * refuses it anywhere else).  What query/ needs of a graph handle beyond
 * strata.h is a few named calls in core/graph_handle.h.
 *
 * A version is a small header of pointers to the graph-sized structures
 * (storage/store.h, index/label_index.h, index/index_set.h); a view is a
 * counted reference to one.  Everything a version reaches is persistent:
 * shared chunks are copied before they are written, so a reader never
 * sees a write.
 *
 * Invariants:
 *   1. A version that a view holds is never written while the view holds
 *      it (its refcount is above one, and core writes only a version whose
 *      refcount is one).  So any thread holding a view reads every field
 *      of its version, and everything they point to, without a lock.
 *   2. The one exception is a view that *borrows* the writer's own version
 *      without a reference (query/exec.h): valid on the writer's thread
 *      only, and only until the next write call, which may fork and
 *      replace that version — so it is re-read (graph_query_version)
 *      before every use.
 *   3. Every version holds a reference on its catalog; the catalog is the
 *      same for every version of one graph and outlives them all.
 *   4. The catalog's token catalogs and label sets only grow: an id a view
 *      has seen keeps its name forever (storage/intern.h), so reading them
 *      needs no lock on any thread.
 *   5. The catalog's other fields are each written in one stated way:
 *      `plans` once, by compare-and-swap (query/plan_cache.c); `interrupt`
 *      and `query_threads` atomically, at any time; the CSV options only
 *      while no query runs (strata_set_csv_options).
 */
#ifndef STRATA_CORE_VERSION_H
#define STRATA_CORE_VERSION_H

#include <stdatomic.h>

#include "strata.h"
#include "index/index_set.h"
#include "index/label_index.h"
#include "storage/intern.h"
#include "storage/mem.h"
#include "storage/rel_stats.h"
#include "storage/store.h"
#include "storage/value.h"

#define ERRMSG_MAX 256

/* What a graph shares with its branches (core/graph_impl.h). */
typedef struct lineage lineage;

/* The state every version of one graph shares: its lineage's memory and
   catalogs (the pointers copied here, so reads need no second hop) and
   what belongs to this graph alone. */
struct plan_cache;

typedef struct catalog {
    atomic_uint refs;
    lineage *lin;          /* holds a reference */
    mem_ctx *m;            /* lin->m */
    interner *tokens[3];   /* lin->tokens */
    interner *labelsets;   /* lin->labelsets */
    /* The query layer's checked statements (query/plan_cache.h), made on
       first use and freed with the catalog: one cache per graph, shared by
       its views. */
    _Atomic(struct plan_cache *) plans;
    void (*plans_free)(struct plan_cache *);
    /* strata_interrupt: the running query stops.  Here rather than in the
       graph because a result read lazily may outlive the graph. */
    atomic_bool interrupt;
    /* strata_set_query_threads: 0 one per processor. */
    atomic_uint query_threads;
    /* strata_set_csv_options (core/csv_options.c): read by LOAD CSV on any
       view, set while no query runs.  import_dir is canonical, or NULL. */
    bool csv_disabled;
    char *import_dir;
    size_t import_dir_size;
    size_t csv_field_max;
} catalog;

/* The labels of a label set: count and the i-th token. */
size_t labelset_len(const catalog *c, uint32_t ls);
uint32_t labelset_at(const catalog *c, uint32_t ls, size_t i);

/* strata_cancel: one request flag that any number of queries may watch.
   Refcounted because a result read lazily keeps watching it after the
   caller has let go of its handle. */
struct strata_cancel {
    atomic_uint refs;
    atomic_bool requested;
};

/* A reference for a result that watches c (NULL-safe). */
strata_cancel *cancel_retain(strata_cancel *c);
void cancel_release(strata_cancel **c);

typedef struct version {
    atomic_uint refs;
    catalog *cat;
    store st;
    label_index *labels;      /* label -> nodes */
    label_index *rel_types;   /* relationship type -> relationships */
    rel_stats stats;          /* relationships per (label, type, direction) */
    index_set *indexes;       /* property, range, unique, composite */
} version;

void version_retain(version *v);
void version_release(version **vp);
/* version_release for a version that succ was written from (a base at
   fold-back): succ's copies take over what only they still hold. */
void version_release_into(version **vp, const version *succ);

struct strata_view {
    version *ver;
    char err[ERRMSG_MAX];
};

struct strata_value {
    value v;
};

/* strata_value is a struct of one value: a borrowed value (in a list, a
   map, a property record) converts to a borrowed handle, valid while what
   holds the value lives. */
static inline const strata_value *value_borrow_handle(const value *v)
{
    return (const strata_value *)(const void *)v;
}

/* A new API value handle taking v (core/api_value.c); NULL, with v
   released, when out of memory. */
strata_value *value_handle_new(value v);

/* Records a message on the view and returns s. */
strata_status view_fail(strata_view *v, strata_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
