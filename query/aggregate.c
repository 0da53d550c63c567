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

/* ACC_UNORDERED: the item just kept belongs to morsel m's run. */
static int acc_run(exec *x, acc *a, uint64_t m)
{
    if (a->nruns && a->runs[a->nruns - 1].morsel == m) {
        a->runs[a->nruns - 1].end = a->nitems;
        return 0;
    }
    if (a->nruns == a->capruns) {
        size_t cap = a->capruns ? a->capruns * 2 : 4;
        item_run *r = mem_realloc(x->m, a->runs, cap * sizeof *r);
        if (!r) {
            value_release(&a->items[--a->nitems]);
            return exec_oom(x);
        }
        a->runs = r;
        a->capruns = cap;
    }
    a->runs[a->nruns++] = (item_run){m, a->nitems};
    return 0;
}

void acc_free(exec *x, acc *a)
{
    value_release(&a->best);
    for (size_t i = 0; i < a->nitems; i++)
        value_release(&a->items[i]);
    if (a->items)
        mem_free(x->m, a->items);
    if (a->runs)
        mem_free(x->m, a->runs);
    xsum_free(&a->sum, x->m);
    if (a->squares) {
        xsum_free(a->squares, x->m);
        mem_free(x->m, a->squares);
    }
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

/* stDev: d and its square (as two doubles whose sum is exact). */
static int add_deviation(exec *x, acc *a, double d)
{
    double sq = d * d, err = fma(d, d, -sq);
    if (!a->squares && !(a->squares = mem_calloc(x->m, sizeof *a->squares)))
        return exec_oom(x);
    if (xsum_add_double(&a->sum, x->m, d) != 0 || xsum_add_double(a->squares, x->m, sq) != 0 ||
        xsum_add_double(a->squares, x->m, err) != 0)
        return exec_oom(x);
    return 0;
}

/* stDev: into's squares += a's. */
static int merge_squares(exec *x, acc *into, acc *a)
{
    if (!a->squares)
        return 0;
    if (!into->squares && !(into->squares = mem_calloc(x->m, sizeof *into->squares)))
        return exec_oom(x);
    return xsum_merge(into->squares, x->m, a->squares) != 0 ? exec_oom(x) : 0;
}

/* sum(): an integer v after the first float, or any in ACC_UNORDERED. */
static int add_integer(exec *x, const cypher_ast_node *call, acc *a, int64_t v)
{
    if (a->is_float && a->mode != ACC_UNORDERED)
        return xsum_add_int(&a->sum, x->m, v) != 0 ? exec_oom(x) : 0;
    if (a->mode == ACC_WHOLE) {
        if (__builtin_add_overflow(a->isum, v, &a->isum))
            return exec_fail(x, call, "ArgumentError", "IntegerOverflow",
                             "integer overflow in sum()");
        return 0;
    }
    a->wide += v;
    if (a->mode == ACC_ORDERED) {
        a->wide_lo = a->wide < a->wide_lo ? a->wide : a->wide_lo;
        a->wide_hi = a->wide > a->wide_hi ? a->wide : a->wide_hi;
    } else if (v < 0) {
        a->wide_lo += v;        /* the negatives' total */
    } else {
        a->wide_hi += v;        /* the positives' */
    }
    return 0;
}

/* sum(): a float f; the first one turns a whole sum's integers so far
   into the exact sum. */
static int add_float(exec *x, acc *a, double f)
{
    if (!a->is_float && a->mode == ACC_WHOLE && xsum_add_int(&a->sum, x->m, a->isum) != 0)
        return exec_oom(x);
    a->is_float = true;
    return xsum_add_double(&a->sum, x->m, f) != 0 ? exec_oom(x) : 0;
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
    bool is_int = value_kind(v) != VAL_FLOAT;
    int rc;
    if (k == AGG_STDEV || k == AGG_STDEVP)
        rc = add_deviation(x, a, is_int ? (double)v->u.i : v->u.f);
    else if (k == AGG_AVG)
        rc = (is_int ? xsum_add_int(&a->sum, x->m, v->u.i) : xsum_add_double(&a->sum, x->m, v->u.f))
                 ? exec_oom(x) : 0;
    else
        rc = is_int ? add_integer(x, call, a, v->u.i) : add_float(x, a, v->u.f);
    if (rc == 0)
        a->count++;
    value_release(v);
    return rc;
}

/* min / max: whether v goes before the best so far (ties: the earlier
   row, which in ACC_UNORDERED may come later). */
static bool better(agg_kind k, const value *v, rowpos vpos, const acc *a)
{
    if (value_is_null(&a->best))
        return true;
    int c = value_order(v, &a->best);
    if (k == AGG_MAX)
        c = -c;
    return c < 0 || (c == 0 && a->mode == ACC_UNORDERED && vpos < a->pos);
}

/* Adds one non-null value v (consumed) of call, met at pos, to a. */
static int acc_value(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value v,
                     rowpos pos)
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
        if (better(k, &v, pos, a)) {
            value_release(&a->best);
            a->best = v;
            a->pos = pos;
            return 0;
        }
        break;
    case AGG_PERCENTILE_CONT:
    case AGG_PERCENTILE_DISC:
        if (!value_is_number(&v))
            return acc_number(x, call, k, a, &v);   /* the type error */
        /* fall through */
    case AGG_COLLECT:
        if (acc_keep(x, a, v) != 0)
            return -1;
        return a->mode == ACC_UNORDERED ? acc_run(x, a, ROWPOS_MORSEL(pos)) : 0;
    }
    value_release(&v);
    return 0;
}

int acc_add(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, const evalctx *c,
            rowpos pos)
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
    if (want == 2) {
        if (read_percentile(x, call, c, &a->percentile) != 0)
            return -1;
        a->pos = pos;
    }
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
    return acc_value(x, call, k, a, v, pos);
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

/* stDev: the squared deviations from the mean, Σx² - 2m·Σx + n·m² with
   m the rounded mean, computed on the exact sums: every product split
   into two doubles whose sum is exact, but for m times the part of Σx
   below its rounding, whose own rounding is far below the result's.  A
   function of the values alone, whatever their order. */
static int squared_deviations(exec *x, acc *a, double *out)
{
    double n = (double)a->count, hi = xsum_round(&a->sum);
    if (!isfinite(hi) || !a->squares || a->squares->special) {
        *out = NAN;
        return 0;
    }
    xsum t = {0}, rest = {0};
    int rc = xsum_merge(&rest, x->m, &a->sum);
    rc = rc ? rc : xsum_add_double(&rest, x->m, -hi);
    double lo = xsum_round(&rest), mean = hi / n;
    double p = mean * hi, pe = fma(mean, hi, -p);
    double q = mean * mean, qe = fma(mean, mean, -q);
    double nq = n * q, nqe = fma(n, q, -nq);
    const double terms[] = {-2 * p, -2 * pe, -2 * mean * lo, nq, nqe, n * qe};
    rc = rc ? rc : xsum_merge(&t, x->m, a->squares);
    for (size_t i = 0; i < sizeof terms / sizeof *terms && rc == 0; i++)
        rc = xsum_add_double(&t, x->m, terms[i]);
    *out = rc == 0 ? xsum_round(&t) : 0.0;
    if (*out < 0)
        *out = 0.0;
    xsum_free(&t, x->m);
    xsum_free(&rest, x->m);
    return rc == 0 ? 0 : exec_oom(x);
}

int acc_result(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value *out)
{
    *out = value_null();
    switch (k) {
    case AGG_COUNT:
        *out = value_int(a->count);
        return 0;
    case AGG_SUM:
        *out = a->is_float ? value_float(xsum_round(&a->sum)) : value_int(a->isum);
        return 0;
    case AGG_AVG:
        if (a->count)
            *out = value_float(xsum_round(&a->sum) / (double)a->count);
        return 0;
    case AGG_STDEV:
    case AGG_STDEVP: {
        /* the sample deviation; 0.0 below two values, as Neo4j */
        int64_t div = k == AGG_STDEV ? a->count - 1 : a->count;
        double m2 = 0.0;
        if (div < 1) {
            *out = value_float(0.0);
            return 0;
        }
        if (squared_deviations(x, a, &m2) != 0)
            return -1;
        *out = value_float(sqrt(m2 / (double)div));
        return 0;
    }
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
   running sum at a's lowest and highest points, then the rest. */
static int merge_sum(exec *x, const cypher_ast_node *call, acc *into, acc *a)
{
    if (!into->is_float) {
        __int128 lo = (__int128)into->isum + a->wide_lo, hi = (__int128)into->isum + a->wide_hi;
        if (lo < INT64_MIN || hi > INT64_MAX)
            return exec_fail(x, call, "ArgumentError", "IntegerOverflow",
                             "integer overflow in sum()");
        into->isum = (int64_t)(into->isum + a->wide);   /* within [lo, hi] */
        if (a->is_float) {
            if (xsum_add_int(&into->sum, x->m, into->isum) != 0)
                return exec_oom(x);
            into->is_float = true;
        } else {
            return 0;
        }
    } else if (xsum_add_wide(&into->sum, x->m, a->wide) != 0) {
        return exec_oom(x);
    }
    return xsum_merge(&into->sum, x->m, &a->sum) != 0 ? exec_oom(x) : 0;
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
            if (added && acc_value(x, call, k, into, value_retain(*v), 0) != 0)
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
    case AGG_STDEV:
    case AGG_STDEVP:
        into->count += a->count;
        if (xsum_merge(&into->sum, x->m, &a->sum) != 0)
            return exec_oom(x);
        return merge_squares(x, into, a);
    case AGG_MIN:
    case AGG_MAX:
        /* into is ACC_WHOLE: strictly better, the earlier of equals stays */
        if (!value_is_null(&a->best) && better(k, &a->best, 0, into)) {
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

/* ACC_UNORDERED: a's values and into's, their runs in morsel order (a
   morsel is one worker's, so two runs never share one). */
static int merge_runs(exec *x, acc *into, acc *a)
{
    if (a->nitems == 0)
        return 0;
    size_t n = into->nitems + a->nitems, nruns = into->nruns + a->nruns;
    value *items = mem_alloc(x->m, n * sizeof *items);
    item_run *runs = items ? mem_alloc(x->m, nruns * sizeof *runs) : NULL;
    if (!runs) {
        if (items)
            mem_free(x->m, items);
        return exec_oom(x);
    }
    size_t i = 0, j = 0, ifrom = 0, jfrom = 0, out = 0;
    for (size_t r = 0; r < nruns; r++) {
        bool mine = j == a->nruns || (i < into->nruns && into->runs[i].morsel < a->runs[j].morsel);
        acc *src = mine ? into : a;
        size_t *from = mine ? &ifrom : &jfrom;
        const item_run *run = mine ? &into->runs[i++] : &a->runs[j++];
        memcpy(items + out, src->items + *from, (run->end - *from) * sizeof *items);
        out += run->end - *from;
        *from = run->end;
        runs[r] = (item_run){run->morsel, out};
    }
    if (into->items)
        mem_free(x->m, into->items);
    if (into->runs)
        mem_free(x->m, into->runs);
    into->items = items;
    into->nitems = into->capitems = n;
    into->runs = runs;
    into->nruns = into->capruns = nruns;
    a->nitems = 0;      /* moved */
    a->nruns = 0;
    return 0;
}

int acc_merge_unordered(exec *x, agg_kind k, acc *into, acc *a)
{
    if (__builtin_add_overflow(into->count, a->count, &into->count))
        return 1;       /* only the rows in order tell which error comes first */
    switch (k) {
    case AGG_COUNT:
        return 0;
    case AGG_SUM:
        into->wide += a->wide;
        into->wide_lo += a->wide_lo;
        into->wide_hi += a->wide_hi;
        into->is_float |= a->is_float;
        /* fall through */
    case AGG_AVG:
    case AGG_STDEV:
    case AGG_STDEVP:
        if (xsum_merge(&into->sum, x->m, &a->sum) != 0)
            return exec_oom(x);
        return merge_squares(x, into, a);
    case AGG_MIN:
    case AGG_MAX:
        if (!value_is_null(&a->best) && better(k, &a->best, a->pos, into)) {
            value_release(&into->best);
            into->best = a->best;
            into->pos = a->pos;
            a->best = value_null();
        }
        return 0;
    case AGG_PERCENTILE_CONT:
    case AGG_PERCENTILE_DISC:
        if (a->pos > into->pos) {
            into->percentile = a->percentile;   /* the last row's */
            into->pos = a->pos;
        }
        /* fall through */
    case AGG_COLLECT:
        return merge_runs(x, into, a);
    }
    return 0;
}

int acc_settle(exec *x, agg_kind k, acc *a)
{
    if (k == AGG_SUM) {
        /* every running sum of the integers lies between the negatives'
           total and the positives': within an int64, none overflowed */
        if (a->wide_lo < INT64_MIN || a->wide_hi > INT64_MAX)
            return 1;
        if (!a->is_float)
            a->isum = (int64_t)a->wide;
        else if (xsum_add_int(&a->sum, x->m, (int64_t)a->wide) != 0)
            return exec_oom(x);
    }
    if (a->runs)
        mem_free(x->m, a->runs);
    a->runs = NULL;
    a->nruns = a->capruns = 0;
    a->mode = ACC_WHOLE;
    return 0;
}
