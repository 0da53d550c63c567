/*
 * op_distinct — the DISTINCT step of a projection (project.h).
 *
 * A row whose projected values are equivalent (value_equivalent, through
 * a keyset) to an earlier row's is dropped; the first of each is passed
 * on at once, whole (WITH DISTINCT's WHERE and ORDER BY may read the
 * input's variables of that first row).  Memory grows with the distinct
 * rows; the rows stream.
 */
#include <string.h>

#include "query/keyset.h"
#include "query/project.h"

typedef struct distinct_state {
    const projection *p;
    keyset seen;            /* the projected values of the rows passed on */
    value *tuple;           /* nitems, borrowed cells of the current row */
    bool collect;           /* a worker's partial (parallel.h): the first
                               rows are kept in order, not passed on */
    rowset kept;
    /* A worker's state kept across its morsels (distinct_partial_unordered):
       the morsel the rows come from, and each kept row's morsel. */
    bool unordered;
    uint64_t morsel;
    uint64_t *morsels;
    size_t capmorsels;
} distinct_state;

/* Room to note the morsel of one more kept row; 0 or -1. */
static int reserve_morsel(exec *x, distinct_state *ds)
{
    if (ds->kept.nrows < ds->capmorsels)
        return 0;
    size_t cap = ds->capmorsels ? ds->capmorsels * 2 : 64;
    uint64_t *m = mem_realloc(x->m, ds->morsels, cap * sizeof *m);
    if (!m)
        return exec_oom(x);
    ds->morsels = m;
    ds->capmorsels = cap;
    return 0;
}

static int distinct_row(exec *x, stage *st, const value *row)
{
    distinct_state *ds = st->state;
    for (size_t i = 0; i < ds->p->nitems; i++)
        ds->tuple[i] = row[ds->p->items[i].slot];
    int added = keyset_insert(&ds->seen, ds->tuple, NULL);
    if (added < 0)
        return exec_oom(x);
    if (!added)
        return 0;
    if (!ds->collect)
        return stage_emit(x, st, row);
    if (!ds->kept.width)
        rowset_init(&ds->kept, x->width);
    if (ds->unordered) {
        if (reserve_morsel(x, ds) != 0)
            return -1;
        ds->morsels[ds->kept.nrows] = ds->morsel;
    }
    value copy[ds->kept.width ? ds->kept.width : 1];
    for (size_t i = 0; i < ds->kept.width; i++)
        copy[i] = value_retain(row[i]);
    return rowset_push(x, &ds->kept, copy);
}

static void distinct_close(exec *x, stage *st)
{
    distinct_state *ds = st->state;
    if (!ds)
        return;
    keyset_free(&ds->seen);
    rowset_free(&ds->kept);
    if (ds->morsels)
        mem_free(x->m, ds->morsels);
    mem_free(x->m, ds->tuple);
    mem_free(x->m, ds);
    st->state = NULL;
}

int distinct_step_open(exec *x, const projection *p, stage *st)
{
    distinct_state *ds = mem_calloc(x->m, sizeof *ds);
    value *tuple = ds ? mem_calloc(x->m, (p->nitems ? p->nitems : 1) * sizeof *tuple) : NULL;
    if (!tuple) {
        if (ds)
            mem_free(x->m, ds);
        return exec_oom(x);
    }
    ds->p = p;
    ds->tuple = tuple;
    keyset_init(&ds->seen, x->m, p->nitems);
    st->state = ds;
    st->row = distinct_row;
    st->close = distinct_close;
    return 0;
}

/* ---- partial states (project.h) ---- */

void distinct_partial_collect(stage *st)
{
    distinct_state *ds = st->state;
    ds->collect = true;
}

void *distinct_partial_take(exec *x, stage *st)
{
    distinct_state *ds = st->state;
    st->state = NULL;
    if (distinct_step_open(x, ds->p, st) != 0) {
        st->state = ds;
        return NULL;
    }
    distinct_partial_collect(st);
    return ds;
}

/* Kept row r of a partial into row, widened to x->width (borrowed cells). */
static void widen(exec *x, const distinct_state *part, size_t r, value *row)
{
    size_t w = x->width, pw = part->kept.width < w ? part->kept.width : w;
    for (size_t i = pw; i < w; i++)
        row[i] = value_null();
    memcpy(row, rowset_row(&part->kept, r), pw * sizeof *row);
}

/* Kept row r of a partial through the statement's DISTINCT; 0, EXEC_STOP
   or -1. */
static int merge_row(exec *x, stage *st, const distinct_state *part, size_t r, value *row)
{
    widen(x, part, r, row);
    int rc = exec_tick(x);
    return rc != 0 ? rc : distinct_row(x, st, row);
}

/* The morsel's first rows, in order, through the statement's DISTINCT:
   the first of each set over all morsels passes on, as on one thread. */
int distinct_partial_merge(exec *x, stage *st, void *partial)
{
    distinct_state *part = partial;
    value row[x->width ? x->width : 1];
    for (size_t r = 0; r < part->kept.nrows; r++) {
        int rc = merge_row(x, st, part, r, row);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void distinct_partial_unordered(stage *st)
{
    distinct_state *ds = st->state;
    ds->unordered = true;
}

void distinct_partial_morsel(stage *st, uint64_t morsel)
{
    distinct_state *ds = st->state;
    ds->morsel = morsel;
}

/* One worker met every row (one thread, or all but one idle): its sets
   are the statement's, and its rows pass on as they are. */
static int adopt(exec *x, stage *st, distinct_state *only)
{
    distinct_state *ds = st->state;
    keyset seen = ds->seen;
    ds->seen = only->seen;
    only->seen = seen;
    value row[x->width ? x->width : 1];
    for (size_t r = 0; r < only->kept.nrows; r++) {
        widen(x, only, r, row);
        int rc = exec_tick(x);
        if (rc == 0)
            rc = stage_emit(x, st, row);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Each worker kept the first row of each set among its own rows, in
   the order of its morsels.  The first row of a set over all morsels is
   the first of its worker's, so the workers' rows merged by morsel (a
   morsel is one worker's) and passed through the statement's DISTINCT
   give exactly the one-thread rows, in the one-thread order. */
int distinct_partial_gather(exec *x, stage *st, stage *const *parts, size_t nparts)
{
    distinct_state *ds = st->state, *only = NULL;
    size_t used = 0;
    for (size_t i = 0; i < nparts; i++)
        if (((distinct_state *)parts[i]->state)->kept.nrows && used++ == 0)
            only = parts[i]->state;
    if (used == 1 && ds->seen.n == 0)
        return adopt(x, st, only);
    size_t next[nparts ? nparts : 1];
    memset(next, 0, sizeof next);
    value row[x->width ? x->width : 1];
    for (;;) {
        const distinct_state *from = NULL;
        size_t w = 0;
        for (size_t i = 0; i < nparts; i++) {
            const distinct_state *part = parts[i]->state;
            if (next[i] < part->kept.nrows &&
                (!from || part->morsels[next[i]] < from->morsels[next[w]])) {
                from = part;
                w = i;
            }
        }
        if (!from)
            return 0;
        uint64_t m = from->morsels[next[w]];
        do {
            int rc = merge_row(x, st, from, next[w]++, row);
            if (rc != 0)
                return rc;
        } while (next[w] < from->kept.nrows && from->morsels[next[w]] == m);
    }
}

void distinct_partial_free(exec *x, void *partial)
{
    stage st = {.state = partial};
    distinct_close(x, &st);
}
