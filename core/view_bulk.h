/*
 * view_bulk — read access for whole-graph passes (algo/csr.c).
 *
 * The public API reads one relationship per call (strata_neighbours, one
 * allocated iterator per node, a refcount on the version; strata_rel_read,
 * a value retained and released per property).  A pass over every node and
 * relationship of a view pays that ten million times; these calls hand out
 * the view's own immutable records instead: a node's adjacency block
 * (storage/adjacency.h reads its segments) and a relationship's property
 * record (storage/props.h).  Nothing is allocated or counted, so they are
 * safe from any thread while the view is held, and what they return lives
 * as long as the view.
 */
#ifndef STRATA_CORE_VIEW_BULK_H
#define STRATA_CORE_VIEW_BULK_H

#include "core/version.h"
#include "storage/adjacency.h"
#include "storage/props.h"

/* Node ids are below this bound. */
static inline uint64_t view_node_bound(const strata_view *v) { return store_node_slots(&v->ver->st); }
/* Relationship ids are below this bound. */
static inline uint64_t view_rel_bound(const strata_view *v) { return store_rel_slots(&v->ver->st); }

/* The slots of nodes node .. node + *n - 1, contiguous, live or not
   (node_meta_live): a pass over every node reads the slot vector a leaf
   at a time instead of descending it per node. */
static inline const node_meta *view_node_meta_run(const strata_view *v, strata_id node,
                                                  uint64_t *n)
{
    return store_node_meta_run(&v->ver->st, node, n);
}

static inline bool node_meta_live(const node_meta *m) { return m->link == SLOT_LIVE; }

/* The relationships at a live node, or NULL when it has none (or is not
   live). */
static inline const adj_block *view_node_adj(const strata_view *v, strata_id node)
{
    return store_node_adj(&v->ver->st, node);
}

/* The adjacency slots of nodes node .. node + *n - 1, contiguous, each
   with its block and its entry counts per direction (its out and in
   degrees): a pass in id order reads the slot vector a leaf at a time and
   the degrees without touching a block. */
static inline const node_adj *view_node_adj_run(const strata_view *v, strata_id node, uint64_t *n)
{
    return store_node_adj_run(&v->ver->st, node, n);
}

/* The properties of a live relationship, or NULL when it has none (or is
   not live). */
static inline const prop_rec *view_rel_props(const strata_view *v, strata_id rel)
{
    return store_rel_props(&v->ver->st, rel);
}

#endif
