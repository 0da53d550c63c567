/*
 * project — WITH and RETURN as a chain of steps inside one pipeline stage
 * (pipeline.h), each step a stage of its own whose rows go on to the next
 * step and, from the last, out through the clause's stage:
 *
 *   map | HashAggregate  ->  Distinct  ->  Sort / Top  ->  window
 *
 *   map (op_project.c)        evaluates the items of a projection without
 *                             aggregates, row by row; the row keeps the
 *                             input's variables beside the items, so a sort
 *                             key or WITH's WHERE may still name them.
 *   HashAggregate             groups by the items without aggregates, one
 *     (op_aggregate.c)        accumulator per aggregate call and group;
 *                             produces one row per group when its input
 *                             ends.  Memory grows with the groups.
 *   Distinct (op_distinct.c)  passes the first row of each set of
 *                             equivalent projections on at once.
 *   Sort / Top (op_sort.c)    ORDER BY: holds the rows (with LIMIT, only the
 *                             SKIP + LIMIT first in order, in a heap) and
 *                             produces them in order when its input ends.
 *   window (op_project.c)     SKIP, LIMIT, then WITH's WHERE; keeps only the
 *                             projection's slots.
 *
 * Grouping and DISTINCT use value_equivalent through keyset.h; sorting
 * value_order, ties in input order.  A step borrows the row pushed into
 * it, as every stage does.
 */
#ifndef STRATA_QUERY_PROJECT_H
#define STRATA_QUERY_PROJECT_H

#include "query/pipeline.h"

typedef struct proj_item {
    const cypher_ast_node *expr;    /* NULL: a `*` item */
    const char *name;
    size_t len;
    size_t slot;
    bool aggregating;
    size_t src_slot;                /* `*` items: the variable's input slot */
} proj_item;

/* What the steps of one projection share; set up when it opens, read-only
   while rows flow. */
typedef struct projection {
    const cypher_ast_node *clause;
    scope in;                       /* the input's scope: both's first bindings */
    scope out;                      /* the projection's names */
    scope both;                     /* the input's, shadowed by the projection's */
    proj_item *items;
    size_t nitems, capitems;
    const cypher_ast_node **calls;  /* the aggregate calls, in item order */
    size_t ncalls, capcalls;
    int64_t skip, limit;            /* limit INT64_MAX without LIMIT */
} projection;

/* Whether every aggregate call of p is a plain count (count(*) or
   count(e), no DISTINCT): then a row may stand for n equal rows. */
bool aggregate_counts_only(const projection *p);

/* Each opens its step into st (zeroed); 0 or -1 with the error in x. */
int aggregate_step_open(exec *x, const projection *p, stage *st);
int distinct_step_open(exec *x, const projection *p, stage *st);
int sort_step_open(exec *x, const projection *p, stage *st);

/* ---- partial states, for reading on several threads (parallel.h) ----
   A worker's copy of a projection collects a morsel's rows in its first
   step that holds rows until its input ends; that step's state is the
   morsel's partial, merged into the statement's own step in morsel
   order. */
typedef enum partial_kind {
    PARTIAL_NONE,           /* the projection holds nothing (map, WHERE) */
    PARTIAL_AGGREGATE,      /* the groups and their accumulators */
    PARTIAL_DISTINCT,       /* the morsel's first rows of each projection */
    PARTIAL_TOP,            /* the morsel's SKIP + LIMIT best rows */
} partial_kind;

/* Whether projection stage s can take part in a parallel read: *kind is
   the kind of its first step that holds rows and *step that step, or
   PARTIAL_NONE and NULL when every row passes through (items and WHERE
   only).  False for ORDER BY without LIMIT, and SKIP or LIMIT with
   nothing holding rows before them. */
bool project_partial_step(stage *s, partial_kind *kind, stage **step);
/* Switches a worker's step to collecting (DISTINCT keeps its first rows
   instead of passing them on; sums keep what merging needs). */
void step_partial_collect(stage *st, partial_kind k);
/* The step's state as a partial, a fresh one left in its place (NULL
   when out of memory: the state stays). */
void *step_partial_take(exec *x, stage *st, partial_kind k);
/* Merges a partial into the statement's step (x->width wide rows; the
   partial's rows may be narrower); 0, EXEC_STOP or -1. */
int step_partial_merge(exec *x, stage *st, partial_kind k, void *partial);
void step_partial_free(exec *x, partial_kind k, void *partial);
/* A worker's step kept across all its morsels instead of one partial per
   morsel (an aggregation or a DISTINCT; parallel.h): switching to it, the
   morsel the next rows come from, and gathering the workers' steps into
   the statement's — 0, EXEC_STOP or -1, with *again set (and nothing
   changed) when only the rows in order can give the answer. */
void step_partial_unordered(stage *st, partial_kind k);
void step_partial_morsel(stage *st, partial_kind k, uint64_t morsel);
int step_partial_gather(exec *x, stage *st, partial_kind k, stage *const *parts, size_t nparts,
                        bool *again);

/* Per kind (op_aggregate.c, op_distinct.c, op_sort.c). */
void *aggregate_partial_take(exec *x, stage *st);
void aggregate_partial_collect(stage *st);
int aggregate_partial_merge(exec *x, stage *st, void *partial);
void aggregate_partial_free(exec *x, void *partial);
/* A worker's aggregation kept across all its morsels instead of one
   partial per morsel (parallel.h): whether the step allows it (no
   DISTINCT call: which of equivalent values counts depends on the
   order), switching to it, the morsel the next rows come from, and
   gathering the workers' states into the statement's step — 0, 1 when
   only the rows in order can give the answer (an integer sum or a count
   may have overflowed, or the step is not fresh; nothing was changed),
   or -1. */
bool aggregate_partial_unordered_ok(const stage *st);
void aggregate_partial_unordered(stage *st);
void aggregate_partial_morsel(stage *st, uint64_t morsel);
int aggregate_partial_gather(exec *x, stage *st, stage *const *parts, size_t nparts);
void *distinct_partial_take(exec *x, stage *st);
void distinct_partial_collect(stage *st);
int distinct_partial_merge(exec *x, stage *st, void *partial);
void distinct_partial_free(exec *x, void *partial);
/* DISTINCT kept per worker across its morsels, as the aggregation above
   (parallel.h: only where nothing after the step can end the input
   early); gathering gives 0, EXEC_STOP or -1. */
void distinct_partial_unordered(stage *st);
void distinct_partial_morsel(stage *st, uint64_t morsel);
int distinct_partial_gather(exec *x, stage *st, stage *const *parts, size_t nparts);
bool sort_is_top(const stage *st);
void *sort_partial_take(exec *x, stage *st);
int sort_partial_merge(exec *x, stage *st, void *partial);
void sort_partial_free(exec *x, void *partial);

#endif
