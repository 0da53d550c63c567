/*
 * op_aggregate — HashAggregate, the grouping step of a projection
 * (project.h).
 *
 * Rows are grouped by the values of the items that hold no aggregate
 * (value_equivalent, through a keyset: null groups with null, 1 with 1.0,
 * lists and maps element by element).  Each group keeps its key, the
 * first input row (a non-aggregate part of an aggregating item, such as
 * `n.name` in `n.name + count(*)`, reads it) and one accumulator per
 * aggregate call (aggregate.h), so memory grows with the groups and never
 * with the rows.  When the input ends, each aggregating item is evaluated
 * once per group, in the order the groups appeared, with the accumulators'
 * results standing in for the calls.  Without grouping keys an empty
 * input still gives one group (`RETURN count(*)` is 0, not nothing).
 */
#include <string.h>

#include "query/aggregate.h"
#include "query/project.h"

typedef struct group_state {
    const projection *p;
    keyset groups;          /* the keys: one value per non-aggregating item */
    size_t nkeys;
    value *reps;            /* capreps rows of width: each group's first row */
    size_t capreps;
    acc *accs;              /* capaccs groups of ncalls accumulators */
    size_t capaccs;
    size_t width;           /* x->width, read at the first row */
    value *keys;            /* nkeys: the row being grouped */
    agg_kind *kinds;        /* ncalls: the function each call makes */
    bool finishing;         /* the input has ended */
    size_t next;            /* then: the next group to produce */
    value *out;             /* then: width cells, a group's row */
    bool collect;           /* a worker's partial (parallel.h): sums keep
                               what merging needs (acc.partial) */
} group_state;

static size_t rep_bytes(const group_state *gs, size_t n)
{
    return mem_array_size(n, (gs->width ? gs->width : 1) * sizeof(value));
}

static size_t acc_bytes(const group_state *gs, size_t n)
{
    return mem_array_size(n, (gs->p->ncalls ? gs->p->ncalls : 1) * sizeof(acc));
}

/* Room for one more group's row and accumulators (zeroed: null cells,
   empty accumulators). */
static int reserve_group(exec *x, group_state *gs)
{
    size_t n = gs->groups.n;
    if (n == gs->capreps) {
        size_t cap = gs->capreps ? gs->capreps * 2 : 4;
        value *r = mem_realloc(x->m, gs->reps, rep_bytes(gs, cap));
        if (!r)
            return exec_oom(x);
        memset((char *)r + rep_bytes(gs, gs->capreps), 0,
               rep_bytes(gs, cap) - rep_bytes(gs, gs->capreps));
        gs->reps = r;
        gs->capreps = cap;
    }
    if (n == gs->capaccs) {
        size_t cap = gs->capaccs ? gs->capaccs * 2 : 4;
        acc *a = mem_realloc(x->m, gs->accs, acc_bytes(gs, cap));
        if (!a)
            return exec_oom(x);
        memset((char *)a + acc_bytes(gs, gs->capaccs), 0,
               acc_bytes(gs, cap) - acc_bytes(gs, gs->capaccs));
        gs->accs = a;
        gs->capaccs = cap;
    }
    return 0;
}

/* The group of the row (new when its key is new); *gi gets its index. */
static int find_group(exec *x, group_state *gs, const value *row, size_t *gi)
{
    const projection *p = gs->p;
    evalctx c = {x, &p->in, row, NULL, NULL};
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; i < p->nitems && rc == 0; i++) {
        const proj_item *it = &p->items[i];
        if (it->aggregating)
            continue;
        if (it->expr)
            rc = eval(&c, it->expr, &gs->keys[k]);
        else
            gs->keys[k] = value_retain(row[it->src_slot]);
        k += rc == 0;
    }
    if (rc == 0)
        rc = reserve_group(x, gs);
    int added = rc == 0 ? keyset_insert(&gs->groups, gs->keys, gi) : 0;
    for (size_t i = 0; i < k; i++)
        value_release(&gs->keys[i]);
    if (rc != 0)
        return -1;
    if (added < 0)
        return exec_oom(x);
    if (added && row)
        for (size_t i = 0; i < gs->width; i++)
            gs->reps[*gi * gs->width + i] = value_retain(row[i]);
    return 0;
}

/* A row standing for n equal ones: each aggregate adds it once, then a
   count that took it counts it n times (so n > 1 only where every
   aggregate is a plain count, aggregate_counts_only). */
static int aggregate_row_times(exec *x, stage *st, const value *row, uint64_t n)
{
    group_state *gs = st->state;
    const projection *p = gs->p;
    gs->width = x->width;
    size_t gi;
    if (find_group(x, gs, row, &gi) != 0)
        return -1;
    evalctx c = {x, &p->in, row, NULL, NULL};
    for (size_t a = 0; a < p->ncalls; a++) {
        acc *ac = &gs->accs[gi * p->ncalls + a];
        ac->partial = gs->collect;
        int64_t before = ac->count;
        if (acc_add(x, p->calls[a], gs->kinds[a], ac, &c) != 0)
            return -1;
        if (ac->count != before &&
            (n > INT64_MAX || __builtin_add_overflow(before, (int64_t)n, &ac->count)))
            return exec_fail(x, p->calls[a], "ArgumentError", "IntegerOverflow",
                             "integer overflow: count() does not fit in an integer");
    }
    return 0;
}

static int aggregate_row(exec *x, stage *st, const value *row)
{
    return aggregate_row_times(x, st, row, 1);
}

bool aggregate_counts_only(const projection *p)
{
    for (size_t a = 0; a < p->ncalls; a++) {
        const cypher_ast_node *call = p->calls[a];
        if (aggregate_kind(call) != AGG_COUNT ||
            (call->kind == CYPHER_AST_FUNCTION && call->u.function.distinct))
            return false;
    }
    return p->ncalls > 0;
}

/* The projected row of group gi, pushed on; its cells are released
   after. */
static int emit_group(exec *x, stage *st, group_state *gs, size_t gi, value *out)
{
    const projection *p = gs->p;
    value vals[p->ncalls + 1];
    size_t got = 0;
    int rc = 0;
    for (; got < p->ncalls && rc == 0; got += rc == 0)
        rc = acc_result(x, p->calls[got], gs->kinds[got], &gs->accs[gi * p->ncalls + got], &vals[got]);
    agg_values av = {p->calls, vals, p->ncalls};
    evalctx c = {x, &p->in, &gs->reps[gi * gs->width], NULL, &av};
    const value *key = keyset_tuple(&gs->groups, gi);
    for (size_t i = 0; i < gs->width; i++)
        out[i] = value_null();
    for (size_t i = 0, k = 0; i < p->nitems && rc == 0; i++) {
        const proj_item *it = &p->items[i];
        if (!it->aggregating)
            out[it->slot] = value_retain(key[k++]);
        else
            rc = eval(&c, it->expr, &out[it->slot]);
    }
    for (size_t a = 0; a < got; a++)
        value_release(&vals[a]);
    if (rc == 0)
        rc = stage_emit(x, st, out);
    for (size_t i = 0; i < gs->width; i++)
        value_release(&out[i]);
    return rc;
}

static int aggregate_finish(exec *x, stage *st)
{
    group_state *gs = st->state;
    if (!gs->finishing) {
        gs->width = x->width;
        size_t gi;
        if (gs->groups.n == 0 && gs->nkeys == 0 && find_group(x, gs, NULL, &gi) != 0)
            return -1;
        gs->out = mem_alloc(x->m, (gs->width ? gs->width : 1) * sizeof *gs->out);
        if (!gs->out)
            return exec_oom(x);
        gs->finishing = true;
    }
    for (size_t made = 0; gs->next < gs->groups.n; made++) {
        if (made == STAGE_FINISH_BATCH)
            return EXEC_MORE;
        int rc = emit_group(x, st, gs, gs->next++, gs->out);
        if (rc < 0)
            return -1;
        if (rc == EXEC_STOP)
            return 0;       /* the rest are not wanted */
    }
    return 0;
}

static void aggregate_close(exec *x, stage *st)
{
    group_state *gs = st->state;
    if (!gs)
        return;
    for (size_t g = 0; g < gs->groups.n; g++) {
        for (size_t i = 0; i < gs->width; i++)
            value_release(&gs->reps[g * gs->width + i]);
        for (size_t a = 0; a < gs->p->ncalls; a++)
            acc_free(x, &gs->accs[g * gs->p->ncalls + a]);
    }
    if (gs->reps)
        mem_free(x->m, gs->reps);
    if (gs->accs)
        mem_free(x->m, gs->accs);
    keyset_free(&gs->groups);
    if (gs->out)
        mem_free(x->m, gs->out);
    mem_free(x->m, gs->keys);
    mem_free(x->m, gs->kinds);
    mem_free(x->m, gs);
    st->state = NULL;
}

int aggregate_step_open(exec *x, const projection *p, stage *st)
{
    group_state *gs = mem_calloc(x->m, sizeof *gs);
    if (!gs)
        return exec_oom(x);
    gs->p = p;
    for (size_t i = 0; i < p->nitems; i++)
        gs->nkeys += !p->items[i].aggregating;
    keyset_init(&gs->groups, x->m, gs->nkeys);
    st->state = gs;
    gs->keys = mem_calloc(x->m, (gs->nkeys ? gs->nkeys : 1) * sizeof *gs->keys);
    gs->kinds = mem_alloc(x->m, (p->ncalls ? p->ncalls : 1) * sizeof *gs->kinds);
    if (!gs->keys || !gs->kinds) {
        if (gs->keys)
            mem_free(x->m, gs->keys);
        if (gs->kinds)
            mem_free(x->m, gs->kinds);
        mem_free(x->m, gs);
        st->state = NULL;
        return exec_oom(x);
    }
    for (size_t a = 0; a < p->ncalls; a++)
        gs->kinds[a] = (agg_kind)aggregate_kind(p->calls[a]);
    st->row = aggregate_row;
    if (aggregate_counts_only(p))
        st->row_times = aggregate_row_times;
    st->finish = aggregate_finish;
    st->close = aggregate_close;
    return 0;
}

/* ---- partial states (project.h) ---- */

void aggregate_partial_collect(stage *st)
{
    group_state *gs = st->state;
    gs->collect = true;
}

void *aggregate_partial_take(exec *x, stage *st)
{
    group_state *gs = st->state;
    st->state = NULL;
    if (aggregate_step_open(x, gs->p, st) != 0) {
        st->state = gs;
        return NULL;
    }
    aggregate_partial_collect(st);
    return gs;
}

/* The morsel's groups, in the order they appeared there, into the
   statement's: a new key keeps the morsel's first row, and each
   accumulator takes the morsel's (acc_merge).  Merged in morsel order,
   the groups keep their order of first appearance. */
int aggregate_partial_merge(exec *x, stage *st, void *partial)
{
    group_state *gs = st->state, *part = partial;
    const projection *p = gs->p;
    gs->width = x->width;
    size_t pw = part->width < gs->width ? part->width : gs->width;
    for (size_t pg = 0; pg < part->groups.n; pg++) {
        size_t gi;
        int rc = exec_tick(x);
        if (rc == 0)
            rc = reserve_group(x, gs);
        if (rc != 0)
            return -1;
        int added = keyset_insert(&gs->groups, keyset_tuple(&part->groups, pg), &gi);
        if (added < 0)
            return exec_oom(x);
        if (added)
            for (size_t i = 0; i < pw; i++)
                gs->reps[gi * gs->width + i] = value_retain(part->reps[pg * part->width + i]);
        for (size_t a = 0; a < p->ncalls; a++)
            if (acc_merge(x, p->calls[a], gs->kinds[a], &gs->accs[gi * p->ncalls + a],
                          &part->accs[pg * p->ncalls + a]) != 0)
                return -1;
    }
    return 0;
}

void aggregate_partial_free(exec *x, void *partial)
{
    stage st = {.state = partial};
    aggregate_close(x, &st);
}
