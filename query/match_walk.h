/*
 * match_walk — the state of one pattern part's walk, shared by the
 * matcher (op_match.c), the breadth-first shortest-path search
 * (op_shortest.c) and the reachability searches (op_reach.c).
 *
 * Invariants:
 *   1. No walk recurses per relationship: a variable-length expansion
 *      keeps one frame per depth in `frames` and its neighbours in
 *      `pool` (walk_stack.h), so its depth is bounded by memory, not by
 *      the thread's stack.  The C stack grows only per pattern element
 *      (at most CYPHER_AST_MAX_DEPTH) and per pattern part.
 *   2. exec.used_rels[used_base..nused) are the relationships bound by
 *      the pattern so far (openCypher's relationship uniqueness); every
 *      push and pop goes through walk_rel_push / walk_rel_pop, so once
 *      `used_set` is built it holds exactly those (a check is O(1) however
 *      long the path).
 *   3. stk holds the (relationship, node) steps of the variable-length
 *      expansions in progress, in walk order; element i's segment starts at
 *      seg_off[i].
 */
#ifndef STRATA_QUERY_MATCH_WALK_H
#define STRATA_QUERY_MATCH_WALK_H

#include "query/exec.h"
#include "query/plan_start.h"
#include "query/walk_stack.h"

typedef struct var_frame {
    size_t off, n, k;                   /* pool pairs [off, off + n), next k */
} var_frame;

typedef struct walk {
    exec *x;
    const scope *sc;
    size_t in_width;
    const cypher_ast_node *part;
    const cypher_ast_node *const *el;   /* NODE, REL, NODE, ... */
    size_t nel;
    bool reversed;
    const cypher_ast_node *where;
    const start_plan *plan;             /* how the walk starts when no end is bound */
    uint32_t start_skip;                /* entries of the start's property map
                                           its seek already holds (bit per entry) */
    bool start_label_held;              /* every start node carries plan->label
                                           (a label scan's or a seek's) */
    value *row;
    match_emit emit;
    void *ectx;
    /* Variable-length steps in progress: (rel, node) pairs in walk order;
       element i's expansion starts at seg_off[i] and has seg_len[i] steps. */
    uint64_t *stk;
    size_t nstk, capstk;                /* in pairs */
    u64_stack pool;                     /* (rel, node) pairs of the frames */
    var_frame *frames;
    size_t nframes, capframes;
    id_set used_set;                    /* mirrors used_rels once built */
    bool used_set_on;
    /* shortest paths */
    cypher_ast_path_kind kind;
    bool bfs;                           /* searched breadth first (op_shortest.c) */
    bool reach;                         /* only the distinct ends count (reach_emit) */
    bool where_in_search;               /* WHERE decides which paths count */
    int64_t exact;                      /* the length searched, or -1 */
    bool reached;                       /* some expansion reached exact */
    uint64_t *ends;                     /* (end node, length) pairs found */
    size_t nends, capends;              /* in pairs */
    /* The slots of the end nodes' variables (el[0], el[nel - 1]) once
       known — looked up by walk_start, or given by the walk's owner —
       read by walk_var_slot instead of looking the names up. */
    bool ends_known;
    long end_slot[2];
    /* Last, and not cleared when a walk starts: room for an entry per
       element of the pattern, set by the walk's owner (walk_paths on the
       stack, or a MATCH's block sized for its longest part); every entry
       is written before it is read. */
    uint64_t *ids;                      /* entity ids along the path, by element */
    size_t *seg_off, *seg_len;
} walk;

/* Room for the longest pattern a walk may take (12 KB): for a walk on
   the stack. */
typedef struct walk_paths {
    uint64_t ids[CYPHER_AST_MAX_DEPTH];
    size_t seg_off[CYPHER_AST_MAX_DEPTH], seg_len[CYPHER_AST_MAX_DEPTH];
} walk_paths;

static inline void walk_use_paths(struct walk *w, walk_paths *room)
{
    w->ids = room->ids;
    w->seg_off = room->seg_off;
    w->seg_len = room->seg_len;
}

/* Pattern element i in walk order. */
const cypher_ast_node *walk_elem(const walk *w, size_t i);
/* The slot of element el's variable, or -1; whether it holds a value
   bound before this walk reached it. */
long walk_var_slot(const walk *w, const cypher_ast_node *el, bool is_node);
bool walk_slot_bound(const walk *w, long slot);
/* The direction to expand relationship pattern r in walk order. */
strata_direction walk_rel_dir(const walk *w, const cypher_ast_node *r);
/* Appends the (relationship, other node) pairs of `from` that match r's
   direction dir and type alternatives to w->pool (*n of them). */
int walk_drain(walk *w, const cypher_ast_node *r, strata_direction dir, uint64_t from,
               size_t *n);
/* Relationship uniqueness: whether rid is bound by the pattern already;
   bind and unbind one (LIFO). */
int walk_rel_used(walk *w, uint64_t rid, bool *used);
int walk_rel_push(walk *w, uint64_t rid);
void walk_rel_pop(walk *w);
/* Pushes one (relationship, node) step on w->stk. */
int walk_stk_push(walk *w, uint64_t rid, uint64_t node);
/* w->stk[seg_off[i] ..] is the whole expansion of variable-length element
   i, ending at cur: binds its variable and goes on with the rest. */
int walk_var_done(walk *w, size_t i, uint64_t cur);

/* ---- op_shortest.c ---- */

/* Whether the shortest-path part of w may be searched breadth first for
   this row (see op_shortest.c for the conditions). */
bool shortest_bfs_applies(const walk *w);
/* Breadth-first shortestPath / allShortestPaths: element i is the
   variable-length relationship, from the start node (already bound). */
int shortest_bfs(walk *w, size_t i, uint64_t from);
/* ---- op_reach.c ---- */

/* A pattern predicate's question — does any path match from the bound
   start `from`? — answered by one breadth-first search where that gives
   the same answer as the walk (*handled; op_reach.c says when). */
int reach_exists(walk *w, uint64_t from, bool *handled, bool *found);
/* Whether the MATCH clause's rows only matter as a set of distinct rows
   (next: the clause that consumes them directly, or NULL), so that its one
   variable-length relationship may be expanded breadth first, each end
   reached once (op_reach.c says when). */
bool reach_distinct_ok(const cypher_ast_node *match, const cypher_ast_node *next);
/* That expansion: element i from node from, each end node once. */
int reach_emit(walk *w, size_t i, uint64_t from);
/* The EXPLAIN name of how a part's paths are expanded, or NULL for a
   plain walk. */
const char *shortest_plan_name(const cypher_ast_node *part, const cypher_ast_node *where,
                               bool both_ends_bound, bool rel_bound);

#endif
