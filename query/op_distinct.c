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
} distinct_state;

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

/* The morsel's first rows, in order, through the statement's DISTINCT:
   the first of each set over all morsels passes on, as on one thread. */
int distinct_partial_merge(exec *x, stage *st, void *partial)
{
    distinct_state *part = partial;
    size_t w = x->width, pw = part->kept.width < w ? part->kept.width : w;
    value row[w ? w : 1];
    for (size_t i = 0; i < w; i++)
        row[i] = value_null();
    for (size_t r = 0; r < part->kept.nrows; r++) {
        memcpy(row, rowset_row(&part->kept, r), pw * sizeof *row);   /* borrowed */
        int rc = exec_tick(x);
        if (rc == 0)
            rc = distinct_row(x, st, row);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void distinct_partial_free(exec *x, void *partial)
{
    stage st = {.state = partial};
    distinct_close(x, &st);
}
