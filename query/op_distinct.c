/*
 * op_distinct — the DISTINCT step of a projection (project.h).
 *
 * A row whose projected values are equivalent (value_equivalent, through
 * a keyset) to an earlier row's is dropped; the first of each is passed
 * on at once, whole (WITH DISTINCT's WHERE and ORDER BY may read the
 * input's variables of that first row).  Memory grows with the distinct
 * rows; the rows stream.
 */
#include "query/keyset.h"
#include "query/project.h"

typedef struct distinct_state {
    const projection *p;
    keyset seen;            /* the projected values of the rows passed on */
    value *tuple;           /* nitems, borrowed cells of the current row */
} distinct_state;

static int distinct_row(exec *x, stage *st, const value *row)
{
    distinct_state *ds = st->state;
    for (size_t i = 0; i < ds->p->nitems; i++)
        ds->tuple[i] = row[ds->p->items[i].slot];
    int added = keyset_insert(&ds->seen, ds->tuple, NULL);
    if (added < 0)
        return exec_oom(x);
    return added ? stage_emit(x, st, row) : 0;
}

static void distinct_close(exec *x, stage *st)
{
    distinct_state *ds = st->state;
    if (!ds)
        return;
    keyset_free(&ds->seen);
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
