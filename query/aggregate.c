/* aggregate — the accumulators of the aggregate functions (aggregate.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/aggregate.h"

static int acc_keep(exec *x, acc *a, value v)
{
    if (a->nitems == a->capitems) {
        size_t cap = a->capitems ? a->capitems * 2 : 8;
        value *it = mem_realloc(x->m, a->items, cap * sizeof *it);
        if (!it) {
            value_release(&v);
            return exec_oom(x);
        }
        a->items = it;
        a->capitems = cap;
    }
    a->items[a->nitems++] = v;
    return 0;
}

void acc_free(exec *x, acc *a)
{
    value_release(&a->best);
    for (size_t i = 0; i < a->nitems; i++)
        value_release(&a->items[i]);
    if (a->items)
        mem_free(x->m, a->items);
    if (a->seen) {
        keyset_free(a->seen);
        mem_free(x->m, a->seen);
    }
    memset(a, 0, sizeof *a);
}

/* The percentile argument: a number in [0, 1]. */
static int read_percentile(exec *x, const cypher_ast_node *call, const evalctx *c, double *out)
{
    value p;
    if (eval(c, call->u.function.args.items[1], &p) != 0)
        return -1;
    if (!value_is_number(&p)) {
        int rc = exec_fail(x, call, "TypeError", "InvalidArgumentType",
                           "%s() expects a number as the percentile, not %s",
                           call->u.function.name.ptr, value_type_name(&p));
        value_release(&p);
        return rc;
    }
    *out = value_kind(&p) == VAL_FLOAT ? p.u.f : (double)p.u.i;
    if (!(*out >= 0.0 && *out <= 1.0))
        return exec_fail(x, call, "ArgumentError", "NumberOutOfRange",
                         "%s(): the percentile must be between 0.0 and 1.0, not %g",
                         call->u.function.name.ptr, *out);
    return 0;
}

static int acc_number(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value *v)
{
    if (!value_is_number(v)) {
        int rc = exec_fail(x, call, "TypeError", "InvalidArgumentType",
                           "%s() expects numbers, not %s", call->u.function.name.ptr,
                           value_type_name(v));
        value_release(v);
        return rc;
    }
    a->count++;
    double d = value_kind(v) == VAL_FLOAT ? v->u.f : (double)v->u.i;
    if (k == AGG_STDEV || k == AGG_STDEVP) {
        double delta = d - a->mean;
        a->mean += delta / (double)a->count;
        a->m2 += delta * (d - a->mean);
    } else if (value_kind(v) == VAL_FLOAT || k == AGG_AVG) {
        if (!a->is_float) {
            a->fsum = a->partial ? 0.0 : (double)a->isum;
            a->is_float = true;
        }
        a->fsum += d;
    } else if (a->is_float) {
        a->fsum += d;
    } else if (a->partial) {
        a->wide += v->u.i;
        a->wide_lo = a->wide < a->wide_lo ? a->wide : a->wide_lo;
        a->wide_hi = a->wide > a->wide_hi ? a->wide : a->wide_hi;
    } else if (__builtin_add_overflow(a->isum, v->u.i, &a->isum)) {
        return exec_fail(x, call, "ArgumentError", "IntegerOverflow",
                         "integer overflow in sum()");
    }
    value_release(v);
    return 0;
}

/* Adds one non-null value v (consumed) of call to a. */
static int acc_value(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value v)
{
    switch (k) {
    case AGG_COUNT:
        a->count++;
        break;
    case AGG_SUM:
    case AGG_AVG:
    case AGG_STDEV:
    case AGG_STDEVP:
        return acc_number(x, call, k, a, &v);
    case AGG_MIN:
    case AGG_MAX:
        if (value_is_null(&a->best) ||
            (k == AGG_MIN ? value_order(&v, &a->best) < 0 : value_order(&v, &a->best) > 0)) {
            value_release(&a->best);
            a->best = v;
            return 0;
        }
        break;
    case AGG_PERCENTILE_CONT:
    case AGG_PERCENTILE_DISC:
        if (!value_is_number(&v))
            return acc_number(x, call, k, a, &v);   /* the type error */
        return acc_keep(x, a, v);
    case AGG_COLLECT:
        return acc_keep(x, a, v);
    }
    value_release(&v);
    return 0;
}

int acc_add(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, const evalctx *c)
{
    if (call->kind == CYPHER_AST_COUNT_STAR) {
        a->count++;
        return 0;
    }
    size_t want = aggregate_nargs(k);
    if (call->u.function.args.count != want)
        return exec_fail(x, call, "SyntaxError", "InvalidNumberOfArguments",
                         "%s() takes %zu argument%s", call->u.function.name.ptr, want,
                         want == 1 ? "" : "s");
    if (want == 2 && read_percentile(x, call, c, &a->percentile) != 0)
        return -1;
    value v;
    if (eval(c, call->u.function.args.items[0], &v) != 0)
        return -1;
    if (value_is_null(&v))
        return 0;
    if (call->u.function.distinct) {
        /* the first of equivalent values counts, the others are skipped
           before any check of their type */
        if (!a->seen && (a->seen = mem_alloc(x->m, sizeof *a->seen)) != NULL)
            keyset_init(a->seen, x->m, 1);
        int added = a->seen ? keyset_insert(a->seen, &v, NULL) : -1;
        if (added <= 0) {
            value_release(&v);
            return added < 0 ? exec_oom(x) : 0;
        }
    }
    return acc_value(x, call, k, a, v);
}

static int order_values(const void *a, const void *b) { return value_order(a, b); }

static double number_of(const value *v)
{
    return value_kind(v) == VAL_FLOAT ? v->u.f : (double)v->u.i;
}

/* Neo4j's percentiles over the sorted values: percentileDisc picks the
   value at rank ceil(p * n) (the first for p = 0); percentileCont
   interpolates linearly at position p * (n - 1). */
static value percentile_of(acc *a, agg_kind k)
{
    size_t n = a->nitems;
    if (n == 0)
        return value_null();
    qsort(a->items, n, sizeof *a->items, order_values);
    double p = a->percentile;
    if (k == AGG_PERCENTILE_DISC) {
        double rank = ceil(p * (double)n);
        size_t i = rank < 1.0 ? 0 : (size_t)rank - 1;
        return value_retain(a->items[i < n ? i : n - 1]);
    }
    double pos = p * (double)(n - 1);
    size_t lo = (size_t)floor(pos), hi = (size_t)ceil(pos);
    double vlo = number_of(&a->items[lo]), vhi = number_of(&a->items[hi]);
    return value_float(vlo + (vhi - vlo) * (pos - (double)lo));
}

int acc_result(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value *out)
{
    *out = value_null();
    switch (k) {
    case AGG_COUNT:
        *out = value_int(a->count);
        return 0;
    case AGG_SUM:
        *out = a->is_float ? value_float(a->fsum) : value_int(a->isum);
        return 0;
    case AGG_AVG:
        if (a->count)
            *out = value_float(a->fsum / (double)a->count);
        return 0;
    case AGG_STDEV:
        /* the sample deviation; 0.0 below two values, as Neo4j */
        *out = value_float(a->count < 2 ? 0.0 : sqrt(a->m2 / (double)(a->count - 1)));
        return 0;
    case AGG_STDEVP:
        *out = value_float(a->count < 1 ? 0.0 : sqrt(a->m2 / (double)a->count));
        return 0;
    case AGG_MIN:
    case AGG_MAX:
        *out = value_retain(a->best);
        return 0;
    case AGG_PERCENTILE_CONT:
    case AGG_PERCENTILE_DISC:
        *out = percentile_of(a, k);
        return 0;
    case AGG_COLLECT: {
        value *copy = mem_alloc(x->m, a->nitems * sizeof(value));
        if (!copy)
            return exec_oom(x);
        for (size_t i = 0; i < a->nitems; i++)
            copy[i] = value_retain(a->items[i]);
        int rc = value_list_from(x->m, copy, a->nitems, out);
        mem_free(x->m, copy);
        return rc == 0 ? 0 : exec_value_fail(x, call, rc);
    }
    }
    return 0;
}


/* ---- merging partials (parallel.h) ---- */

/* sum(): a's integers before its first float, checked against into's
   running sum at a's lowest and highest points, then a's float sum. */
static int merge_sum(exec *x, const cypher_ast_node *call, acc *into, const acc *a)
{
    if (!into->is_float) {
        __int128 lo = (__int128)into->isum + a->wide_lo, hi = (__int128)into->isum + a->wide_hi;
        if (lo < INT64_MIN || hi > INT64_MAX)
            return exec_fail(x, call, "ArgumentError", "IntegerOverflow",
                             "integer overflow in sum()");
        into->isum = (int64_t)(into->isum + a->wide);   /* within [lo, hi] */
        if (a->is_float) {
            into->is_float = true;
            into->fsum = (double)into->isum + a->fsum;
        }
        return 0;
    }
    into->fsum += (double)a->wide;
    if (a->is_float)
        into->fsum += a->fsum;
    return 0;
}

/* stDev: the two (count, mean, squared deviations) combined (Chan et al.). */
static void merge_deviation(acc *into, const acc *a)
{
    if (a->count == 0)
        return;
    if (into->count == 0) {
        into->count = a->count;
        into->mean = a->mean;
        into->m2 = a->m2;
        return;
    }
    double na = (double)into->count, nb = (double)a->count, n = na + nb;
    double delta = a->mean - into->mean;
    into->mean += delta * nb / n;
    into->m2 += a->m2 + delta * delta * na * nb / n;
    into->count += a->count;
}

static int merge_items(exec *x, acc *into, acc *a)
{
    for (size_t i = 0; i < a->nitems; i++) {
        value v = a->items[i];
        a->items[i] = value_null();
        if (acc_keep(x, into, v) != 0)
            return -1;
    }
    a->nitems = 0;
    return 0;
}

int acc_merge(exec *x, const cypher_ast_node *call, agg_kind k, acc *into, acc *a)
{
    if (k == AGG_PERCENTILE_CONT || k == AGG_PERCENTILE_DISC)
        into->percentile = a->percentile;   /* the last row's, as on one thread */
    if (call->kind == CYPHER_AST_FUNCTION && call->u.function.distinct) {
        for (size_t i = 0; a->seen && i < a->seen->n; i++) {
            const value *v = keyset_tuple(a->seen, i);
            if (!into->seen && (into->seen = mem_alloc(x->m, sizeof *into->seen)) != NULL)
                keyset_init(into->seen, x->m, 1);
            int added = into->seen ? keyset_insert(into->seen, v, NULL) : -1;
            if (added < 0)
                return exec_oom(x);
            if (added && acc_value(x, call, k, into, value_retain(*v)) != 0)
                return -1;
        }
        return 0;
    }
    switch (k) {
    case AGG_COUNT:
        if (__builtin_add_overflow(into->count, a->count, &into->count))
            return exec_fail(x, call, "ArgumentError", "IntegerOverflow",
                             "integer overflow: count() does not fit in an integer");
        return 0;
    case AGG_SUM:
        into->count += a->count;
        return merge_sum(x, call, into, a);
    case AGG_AVG:
        into->count += a->count;
        if (a->count) {
            into->fsum = into->is_float ? into->fsum + a->fsum : a->fsum;
            into->is_float = true;
        }
        return 0;
    case AGG_STDEV:
    case AGG_STDEVP:
        merge_deviation(into, a);
        return 0;
    case AGG_MIN:
    case AGG_MAX:
        if (!value_is_null(&a->best) &&
            (value_is_null(&into->best) ||
             (k == AGG_MIN ? value_order(&a->best, &into->best) < 0
                           : value_order(&a->best, &into->best) > 0))) {
            value_release(&into->best);
            into->best = value_retain(a->best);
        }
        return 0;
    case AGG_COLLECT:
    case AGG_PERCENTILE_CONT:
    case AGG_PERCENTILE_DISC:
        return merge_items(x, into, a);
    }
    return 0;
}
