/*
 * plan_start — where a pattern's walk starts, and how its first node is
 * found: the planner's one decision.
 *
 * A pattern part is a path; the walk runs from one of its two end nodes.
 * When an end is bound (by an earlier clause, or earlier in the same
 * MATCH) the walk starts there.  Otherwise each end's cheapest access is
 * estimated from the state being read:
 *   - a seek by id: a WHERE conjunct `id(v) = e` (either side), 1 row;
 *   - an index seek: a label of the node and an index on it whose keys all
 *     have an equality — from the node's property map or a WHERE conjunct
 *     `v.k = e` — estimated 1 row for a unique index, else entries / 100;
 *   - a range seek: a single-key index and `v.k < e`, `<=`, `>`, `>=`
 *     (both ends combine) or `v.k STARTS WITH e`, estimated a third of the
 *     index;
 *   - a label scan of the node's least populated label;
 *   - for a label disjunction, (v:A|B) or a WHERE conjunct v:A OR v:B
 *     (one label each), the union of those labels' nodes, each once;
 *   - a scan of every node;
 * where e is a literal, a parameter, or built from variables bound before
 * the MATCH.  The cheaper end wins (the first on a tie).  The seek only
 * narrows: the property map and WHERE are still checked on every row, so
 * a seek can never change what a query returns.
 */
#ifndef STRATA_QUERY_PLAN_START_H
#define STRATA_QUERY_PLAN_START_H

#include "query/exec.h"

typedef enum start_kind {
    START_BOUND,        /* an end node bound before the part runs */
    START_ALL_NODES,
    START_LABEL_SCAN,
    START_INDEX_SEEK,
    START_RANGE_SEEK,
    START_ID_SEEK,      /* WHERE id(v) = e */
    START_LABEL_UNION,  /* (v:A|B) or WHERE v:A OR v:B: each label's nodes, once */
    START_NOTHING,      /* a label nobody carries: no row can match */
} start_kind;

#define START_MAX_KEYS 8

typedef struct start_plan {
    start_kind kind;
    bool reversed;                  /* the walk starts at the last node */
    const cypher_ast_node *node;    /* the node pattern it starts from */
    strata_token label;             /* label scans and seeks */
    strata_index index;             /* seeks */
    char index_name[STRATA_INDEX_NAME_MAX];
    bool unique;
    size_t nkeys;
    const char *keys[START_MAX_KEYS];
    const cypher_ast_node *eq[START_MAX_KEYS];   /* index seek: one per key */
    const cypher_ast_node *lo, *hi; /* range seek bounds (either may be NULL) */
    bool lo_inclusive, hi_inclusive;
    bool prefix;                    /* lo is a STARTS WITH operand */
    const cypher_ast_node *id;      /* id seek: e of id(v) = e */
    strata_token any[STRATA_ANY_LABEL_MAX];   /* label union */
    size_t nany;
    uint64_t estimate;              /* rows expected from the start */
} start_plan;

/* Plans the start of part in a MATCH whose WHERE is where (may be NULL).
   bound(name) tells which variables are bound before the part runs. */
typedef bool (*is_bound_fn)(const cypher_ast_str *name, void *ctx);
void plan_start(exec *x, const cypher_ast_node *part, const cypher_ast_node *where,
                is_bound_fn bound, void *ctx, start_plan *out);

/* The cheapest access to one node pattern's candidates (the same choice
   as for a part's end), for the join's scans (op_join.c). */
void plan_node_start(exec *x, const cypher_ast_node *node, const cypher_ast_node *where,
                     is_bound_fn bound, void *ctx, start_plan *out);
/* How many nodes carry label in the version read. */
uint64_t plan_label_count(exec *x, strata_token label);

/* An iterator over the start's node ids for one row (the seek's values
   are evaluated in it), or *it NULL when no node can match.  It holds a
   reference to the version read: free it before the statement writes. */
int start_iter(exec *x, const start_plan *p, const scope *sc, const value *row,
               strata_node_iter **it);
/* The same, and *exact: a bit per key (START_INDEX_SEEK) whose seek found
   exactly the nodes whose property equals the key's expression (an integer
   or a string value), so a check of the pattern's map may skip it. */
int start_iter_exact(exec *x, const start_plan *p, const scope *sc, const value *row,
                     strata_node_iter **it, uint32_t *exact);

/* A seek of an index on one key, for this row, without an iterator when
   the key has at most one node (a unique index always; any other from its
   hash level, lstack_point): *taken when it was answered so — *none when
   no node holds the key (or it is null), else *id, the one node that
   does — and *exact as start_iter_exact's.  When the key has several
   nodes, *it iterates them (not taken); neither when the key is of a kind
   the index cannot seek (start_iter_exact then reads the label instead).
   The key is evaluated once either way. */
int start_point(exec *x, const start_plan *p, const scope *sc, const value *row, bool *taken,
                bool *none, uint64_t *id, uint32_t *exact, strata_node_iter **it);

/* An id seek's one candidate for this row: *none when e is null, not a
   whole number, or no live node's id (id(v) = e then holds for none). */
int start_id(exec *x, const start_plan *p, const scope *sc, const value *row, bool *none,
             uint64_t *id);

/* "NodeIndexSeek (n:Item {key})"-style text for EXPLAIN / PROFILE. */
void start_describe(exec *x, const start_plan *p, char *buf, size_t size);

#endif
