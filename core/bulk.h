/*
 * bulk — creating many nodes and relationships in one transaction, for
 * strata_import (query/import.c).
 *
 * The direct write calls (core/write.c) pay, per call, a write entry, a
 * walk down the slot vectors per part they touch, and, per property, a
 * record grown by one; a relationship is inserted into its two endpoints'
 * sorted segments, shifting the later ones.  A bulk writer instead writes
 * a node or relationship with its whole property record at once, and
 * leaves the relationships out of their endpoints' adjacency until
 * bulk_flush: then the pending half edges are grouped by node and sorted
 * into (direction, type, relationship) order, and each node's block is
 * rebuilt once, appending (storage/adjacency.h adj_append, as a load
 * does), with the relationship statistics counted per segment.
 *
 * When: only inside a transaction with no statement open, on a graph with
 * no write-ahead log and no property index (bulk_open says).  There a
 * failure rolls the transaction back, which drops its working version
 * whole, so the writes need no undo journal — and a half-done flush
 * needs none either.  Everywhere else the importer writes through the
 * direct calls.
 *
 * Invariants:
 *   1. Between bulk calls the graph is the one the direct calls would
 *      have made, except that the relationships created since the last
 *      flush are in no adjacency block and no statistics count: nothing
 *      may read or write the graph but the bulk writer until bulk_flush
 *      (the importer flushes before any direct write call and before it
 *      commits).
 *   2. A call that returns BULK_DECLINED changed nothing: the row is one
 *      the direct calls must take, so that its error (or its rare shape)
 *      is exactly theirs.
 */
#ifndef STRATA_CORE_BULK_H
#define STRATA_CORE_BULK_H

#include "core/version.h"

typedef struct bulk_writer bulk_writer;

/* One property of a row: key token and value (borrowed; never null). */
typedef struct bulk_prop {
    strata_token key;
    const strata_value *val;
} bulk_prop;

/* What a create returns beside a strata_status: the row needs the direct
   write calls (invariant 2). */
#define BULK_DECLINED (-1)

/* A bulk writer for g in its open transaction, or *out NULL when g's
   writes must go through the direct calls (see "When").  STRATA_ENOMEM
   (message on g) or OK. */
strata_status bulk_open(strata_graph *g, bulk_writer **out);

/* Creates a node with these labels (any order, repeats allowed) and
   properties (keys in any order; of a repeated key the last is kept), as
   strata_node_create and a strata_node_set per property would.  Returns
   a strata_status (message on g) or BULK_DECLINED. */
int bulk_node_create(bulk_writer *b, const strata_token *labels, size_t nlabels,
                     const bulk_prop *props, size_t nprops, strata_id *out);

/* Creates a relationship between two live nodes with these properties,
   as strata_rel_create and a strata_rel_set per property would; it
   joins its endpoints' adjacency at the next bulk_flush.  Returns a
   strata_status (message on g) or BULK_DECLINED. */
int bulk_rel_create(bulk_writer *b, strata_id start, strata_id end, strata_token type,
                    const bulk_prop *props, size_t nprops, strata_id *out);

/* Whether relationships wait for bulk_flush. */
bool bulk_pending(const bulk_writer *b);

/* Links the relationships created since the last flush into their
   endpoints' adjacency and counts them in the statistics.  STRATA_ENOMEM
   (message on g; the transaction must then be rolled back) or OK. */
strata_status bulk_flush(bulk_writer *b);

/* Frees the writer (NULL is fine); *b becomes NULL. */
void bulk_close(bulk_writer **b);

#ifdef STRATA_TESTING
/* Test builds: when set, bulk_open declines every graph, so an import
   takes the direct write calls — the reference tests compare against. */
extern bool bulk_disabled_for_tests;
/* Rows the bulk writer has created (nodes and relationships). */
extern uint64_t bulk_rows_for_tests;
#endif

#endif
