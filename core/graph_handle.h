/*
 * graph_handle — what the query layer asks of a graph handle beyond
 * strata.h.
 *
 * Outside core/ a strata_graph is opaque: its lock, versions, journal and
 * statement state are core/graph_impl.h, private to core/.  A query on a
 * graph reads the writer's own state and reports its errors on the handle;
 * these calls give it exactly that, on the writer's thread.  Only
 * graph_snapshot_own_into takes the graph's lock (once per query); the
 * others touch what the writer's thread alone changes, so they lock
 * nothing and cost a call.
 */
#ifndef STRATA_CORE_GRAPH_HANDLE_H
#define STRATA_CORE_GRAPH_HANDLE_H

#include "core/version.h"

/* The catalog g's versions share (core/version.h): the plan cache, the
   interrupt flag, the query thread count, the CSV options.  The same for
   g's whole life. */
catalog *graph_catalog(const strata_graph *g);

/* The version a query on g reads, borrowed without a reference: an open
   transaction's working version, else the current one.  Re-read it after
   any write call, which may fork and replace it (core/version.h,
   invariant 2).  Writer's thread only. */
version *graph_query_version(strata_graph *g);

/* strata_snapshot_own into a view the caller allocated (from
   mem_scratch()): allocates nothing, so a statement that committed can
   always hand out the view of its writes.  Fails only inside an open
   statement. */
strata_status graph_snapshot_own_into(strata_graph *g, strata_view *v);

/* Records a message on the handle and returns s. */
strata_status graph_fail(strata_graph *g, strata_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
