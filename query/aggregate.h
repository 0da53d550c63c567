/*
 * aggregate — the aggregate functions' accumulators: what one group keeps
 * for one aggregate call, and the call's result at the end.
 *
 * Each accumulator keeps O(1) state (count, exact sums, the best value so
 * far) except collect() and the percentiles, which keep their values.
 * Sums of floats, averages and standard deviations are computed from
 * exact sums (xsum.h), rounded once: their results depend on the values
 * alone, never on the order of the rows, which is what lets a parallel
 * read add rows on any thread and still give one thread's result.  A DISTINCT call also keeps the set of values it has
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
#include "query/xsum.h"

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

/* A row's place in the input of a parallel read (parallel.h): its
   morsel in the high 64 bits, its number within the morsel below. */
typedef unsigned __int128 rowpos;
#define ROWPOS(morsel, row) (((rowpos)(morsel) << 64) | (rowpos)(row))
#define ROWPOS_MORSEL(pos) ((uint64_t)((pos) >> 64))

/* How an accumulator takes its rows. */
typedef enum acc_mode {
    ACC_WHOLE,          /* every row, in order: the result */
    ACC_ORDERED,        /* one morsel's rows, merged in morsel order
                           (acc_merge): sum() keeps its integers before the
                           first float exactly, with the lowest and highest
                           running sums, so the merge fails exactly where
                           one running sum would */
    ACC_UNORDERED,      /* one worker's rows, from any morsels, merged in
                           any order (acc_merge_unordered): sum() keeps
                           its integers' exact total and the totals of the
                           negative and the positive ones; collect() its
                           values in runs by morsel; min, max and the
                           percentile argument where they were met */
} acc_mode;

typedef struct item_run {
    uint64_t morsel;
    size_t end;             /* the run's values end before items[end] */
} item_run;

typedef struct acc {
    int64_t count;
    bool is_float;          /* sum: a float was met */
    uint8_t mode;           /* acc_mode */
    int64_t isum;           /* sum: the integers before the first float */
    xsum sum;               /* the rest of sum() (from the first float),
                               avg's and stDev's values (xsum.h) */
    xsum *squares;          /* stDev: the squares, each as two exact
                               halves (on the heap: only stDev has them) */
    __int128 wide, wide_lo, wide_hi;    /* sum(), ACC_ORDERED and ACC_UNORDERED */
    double percentile;      /* percentileCont / Disc: the second argument */
    rowpos pos;             /* ACC_UNORDERED: min / max's best value's, the
                               percentile argument's */
    value best;             /* min / max */
    value *items;           /* collect and the percentiles: the values */
    size_t nitems, capitems;
    item_run *runs;         /* ACC_UNORDERED: the items by morsel */
    size_t nruns, capruns;
    keyset *seen;           /* DISTINCT: the values seen (width 1), or NULL */
} acc;

/* A zeroed acc is empty (ACC_WHOLE; set mode before the first row).
   Adds the argument(s) of call, an aggregate of kind k, evaluated in c,
   for the row at pos (read in ACC_UNORDERED only). */
int acc_add(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, const evalctx *c,
            rowpos pos);
/* The result of an aggregate of kind k over what a (ACC_WHOLE) holds;
   *out is new. */
int acc_result(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value *out);
/* Adds a's partial (ACC_ORDERED, of the same call) to into, as if into
   had gone on to the partial's rows: counts and integer sums exactly
   (overflow fails as one running sum would), float sums, averages and
   stDev exactly (xsum.h), min and max keeping the earlier of equals,
   collect and the percentiles appending the partial's values (taken
   from a), DISTINCT by adding the partial's distinct values, in the
   order they were seen, that into has not seen. */
int acc_merge(exec *x, const cypher_ast_node *call, agg_kind k, acc *into, acc *a);
/* Adds a (ACC_UNORDERED, of the same call, no DISTINCT) to into (the
   same), whichever rows came first: values moved from a; 0 or -1. */
int acc_merge_unordered(exec *x, agg_kind k, acc *into, acc *a);
/* Makes an ACC_UNORDERED acc holding every row an ACC_WHOLE one: 0, 1
   when its integers might have overflowed a running sum somewhere (only
   the rows in order can tell: a is unchanged), -1 out of memory. */
int acc_settle(exec *x, agg_kind k, acc *a);
/* Releases what a holds (allocated from x->m); a is zeroed. */
void acc_free(exec *x, acc *a);

#endif
