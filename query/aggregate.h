/*
 * aggregate — the aggregate functions' accumulators: what one group keeps
 * for one aggregate call, and the call's result at the end.
 *
 * Each accumulator keeps O(1) state (count, sums, Welford's running mean,
 * the best value so far) except collect() and the percentiles, which keep
 * their values.  A DISTINCT call also keeps the set of values it has
 * seen (keyset.h, the same equivalence as grouping), so that set grows
 * with the distinct values, never with the rows.
 *
 * The function table (name, arguments) is in functions.c; AGGREGATES
 * below is the list both read.
 */
#ifndef STRATA_QUERY_AGGREGATE_H
#define STRATA_QUERY_AGGREGATE_H

#include "query/exec.h"
#include "query/keyset.h"

/* X(kind, name, arguments) */
#define AGGREGATES(X)                                                    \
    X(COUNT, "count", 1) X(SUM, "sum", 1) X(AVG, "avg", 1)               \
    X(MIN, "min", 1) X(MAX, "max", 1) X(COLLECT, "collect", 1)           \
    X(STDEV, "stDev", 1) X(STDEVP, "stDevP", 1)                          \
    X(PERCENTILE_CONT, "percentileCont", 2)                              \
    X(PERCENTILE_DISC, "percentileDisc", 2)

typedef enum agg_kind {
#define X(kind, name, nargs) AGG_##kind,
    AGGREGATES(X)
#undef X
} agg_kind;

/* The aggregate function call e makes (count(*) is COUNT), or -1
   (functions.c). */
int aggregate_kind(const cypher_ast_node *e);
/* How many arguments aggregate k takes (functions.c). */
size_t aggregate_nargs(agg_kind k);

typedef struct acc {
    int64_t count;
    bool is_float;
    int64_t isum;
    double fsum;
    double mean, m2;        /* stDev: Welford's running mean and squared deviations */
    double percentile;      /* percentileCont / Disc: the second argument */
    value best;             /* min / max */
    value *items;           /* collect and the percentiles: the values */
    size_t nitems, capitems;
    keyset *seen;           /* DISTINCT: the values seen (width 1), or NULL */
    /* A morsel's partial (parallel.h): sum() adds the integers before the
       first float exactly, without failing, keeping the lowest and
       highest running sums, and starts its float sum from 0 at the first
       float; acc_merge then fails exactly where one running sum would. */
    bool partial;
    __int128 wide, wide_lo, wide_hi;
} acc;

/* A zeroed acc is empty.  Adds the argument(s) of call, an aggregate of
   kind k, evaluated in c. */
int acc_add(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, const evalctx *c);
/* The result of an aggregate of kind k over what a holds; *out is new. */
int acc_result(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value *out);
/* Adds a's partial (acc.partial, of the same call) to into, as if into
   had gone on to the partial's rows: counts and integer sums exactly
   (overflow fails as one running sum would), float sums and averages by
   adding the partial's sum, stDev by combining the two means and squared
   deviations, min and max keeping the earlier of equals, collect and the
   percentiles appending the partial's values (taken from a), DISTINCT by
   adding the partial's distinct values, in the order they were seen,
   that into has not seen. */
int acc_merge(exec *x, const cypher_ast_node *call, agg_kind k, acc *into, acc *a);
/* Releases what a holds (allocated from x->m); a is zeroed. */
void acc_free(exec *x, acc *a);

#endif
