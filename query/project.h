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

#endif
