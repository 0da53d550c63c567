/*
 * path_search — the layered breadth-first search behind shortest paths
 * (op_shortest.c) and reachability (op_reach.c).
 *
 * A side is one search from one root: per node seen, its distance and the
 * list of (relationship, predecessor) pairs one layer nearer the root —
 * the layered predecessor graph.  Invariants:
 *   1. nodes are appended in breadth-first order, so nodes[layer..n) is
 *      the frontier and all of it is at distance `depth`;
 *   2. `seen` maps every node id met to its index, or to REJECTED when it
 *      failed a node filter (it can lie on no path);
 *   3. a node's predecessors all sit at distance dist - 1 (allShortestPaths
 *      keeps every one, shortestPath the first).
 * Everything is allocated through the query's allocator (walk_stack.h);
 * expansion checks strata_interrupt every 1024 nodes.
 */
#ifndef STRATA_QUERY_PATH_SEARCH_H
#define STRATA_QUERY_PATH_SEARCH_H

#include "query/match_walk.h"

#define MAX_FILTERS 16

/* A universal path predicate, `all(x IN nodes(p) WHERE q)` or `none(...)`
   over nodes or relationships: applied to each element reached. */
typedef struct path_filter {
    const cypher_ast_node *q;           /* the QUANTIFIER */
    bool on_nodes;
} path_filter;

#define NO_PRED UINT32_MAX
#define REJECTED UINT32_MAX             /* seen, failed a node filter */

typedef struct bfs_node {
    uint64_t id;
    uint32_t dist;
    uint32_t pred;                      /* first predecessor, or NO_PRED */
} bfs_node;

typedef struct bfs_pred {
    uint64_t rel;
    uint32_t from;                      /* node index, one layer nearer */
    uint32_t next;                      /* next predecessor, or NO_PRED */
} bfs_pred;

typedef struct bfs_side {
    strata_direction dir;
    id_index seen;                      /* node id -> index, or REJECTED */
    bfs_node *nodes;
    size_t n, cap;
    bfs_pred *preds;
    size_t npreds, cappreds;
    size_t layer;                       /* nodes[layer..n) are the frontier */
    uint32_t depth;                     /* their distance */
} bfs_side;

/* One search: its walk, the relationship pattern, the filters, and one
   side (single source, reachability) or two (between two bound ends). */
typedef struct search {
    walk *w;
    size_t i;                           /* the relationship element */
    const cypher_ast_node *r;
    bool all;
    int64_t min, max;
    bool has_max;
    path_filter f[MAX_FILTERS];
    size_t nf;
    const cypher_ast_node *endq[MAX_FILTERS];   /* op_shortest.c, end_conjuncts */
    size_t nendq;
    long end_slot;                      /* the end node's free slot, or -1 */
    size_t expanded;                    /* nodes expanded, for interrupts */
    bfs_side fw, bw;
    uint32_t *choice;                   /* odometer: fw then bw positions */
    size_t capchoice;
} search;

void bfs_side_free(mem_ctx *m, bfs_side *s);
/* Adds node id at distance dist (it passed the filters); *idx its index. */
int bfs_side_add(search *s, bfs_side *sd, uint64_t id, uint32_t dist, uint32_t *idx);
/* Seeds side sd with its root; *ok false when the root fails a filter. */
int bfs_side_seed(search *s, bfs_side *sd, strata_direction dir, uint64_t root, bool *ok);
/* Expands the frontier by one layer; *hit is set when a relationship that
   passes leads to node watch (UINT64_MAX: none). */
int bfs_side_expand_watch(search *s, bfs_side *sd, uint64_t watch, bool *hit);
int bfs_side_expand(search *s, bfs_side *sd);

#endif
