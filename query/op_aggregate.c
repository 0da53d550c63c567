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
#include <stdlib.h>
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
    acc_mode mode;          /* how the accumulators take rows: ACC_WHOLE, or
                               a worker's (parallel.h) per morsel
                               (ACC_ORDERED) or across its morsels
                               (ACC_UNORDERED) */
    uint64_t morsel, row_no;    /* the position of the next row */
    rowpos *first;          /* ACC_UNORDERED, capreps: where each group
                               was met first */
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
        if (gs->mode == ACC_UNORDERED) {
            rowpos *f = mem_realloc(x->m, gs->first, cap * sizeof *f);
            if (!f)
                return exec_oom(x);
            gs->first = f;
        }
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

/* The group of the row at pos (new when its key is new); *gi gets its
   index. */
static int find_group(exec *x, group_state *gs, const value *row, rowpos pos, size_t *gi)
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
    if (added) {
        for (size_t i = 0; row && i < gs->width; i++)
            gs->reps[*gi * gs->width + i] = value_retain(row[i]);
        for (size_t a = 0; a < p->ncalls; a++)
            gs->accs[*gi * p->ncalls + a].mode = (uint8_t)gs->mode;
        if (gs->mode == ACC_UNORDERED)
            gs->first[*gi] = pos;
    }
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
    rowpos pos = gs->mode == ACC_UNORDERED ? ROWPOS(gs->morsel, gs->row_no++) : 0;
    size_t gi;
    if (find_group(x, gs, row, pos, &gi) != 0)
        return -1;
    evalctx c = {x, &p->in, row, NULL, NULL};
    for (size_t a = 0; a < p->ncalls; a++) {
        acc *ac = &gs->accs[gi * p->ncalls + a];
        int64_t before = ac->count;
        if (acc_add(x, p->calls[a], gs->kinds[a], ac, &c, pos) != 0)
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
        if (gs->groups.n == 0 && gs->nkeys == 0 && find_group(x, gs, NULL, 0, &gi) != 0)
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
    if (gs->first)
        mem_free(x->m, gs->first);
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
    gs->mode = ACC_ORDERED;
}

void aggregate_partial_unordered(stage *st)
{
    group_state *gs = st->state;
    gs->mode = ACC_UNORDERED;
}

void aggregate_partial_morsel(stage *st, uint64_t morsel)
{
    group_state *gs = st->state;
    gs->morsel = morsel;
    gs->row_no = 0;
}

bool aggregate_partial_unordered_ok(const stage *st)
{
    const group_state *gs = st->state;
    for (size_t a = 0; a < gs->p->ncalls; a++)
        if (gs->p->calls[a]->kind == CYPHER_AST_FUNCTION && gs->p->calls[a]->u.function.distinct)
            return false;
    return true;
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

/* ---- gathering the workers' states (ACC_UNORDERED) ---- */

/* A worker's group, ordered by where it was met first. */
typedef struct group_at {
    rowpos first;
    group_state *from;
    size_t group;
} group_at;

static int by_first(const void *a, const void *b)
{
    rowpos x = ((const group_at *)a)->first, y = ((const group_at *)b)->first;
    return x < y ? -1 : x > y;
}

/* Settles every accumulator of gs (acc_settle): 0, 1 or -1. */
static int settle_all(exec *x, group_state *gs)
{
    size_t ncalls = gs->p->ncalls;
    for (size_t g = 0; g < gs->groups.n; g++)
        for (size_t a = 0; a < ncalls; a++) {
            int rc = acc_settle(x, gs->kinds[a], &gs->accs[g * ncalls + a]);
            if (rc != 0)
                return rc;
        }
    return 0;
}

/* Moves the groups of `from` (settled) into gs (empty), their rows
   widened to `width` cells; `from` is left empty. */
static int adopt(exec *x, group_state *gs, group_state *from, size_t width)
{
    size_t n = from->groups.n, fw = from->width, keep = fw < width ? fw : width;
    value *reps = NULL;
    if (fw != width) {
        reps = mem_calloc(x->m, mem_array_size(n ? n : 1, (width ? width : 1) * sizeof *reps));
        if (!reps)
            return exec_oom(x);
        for (size_t g = 0; g < n; g++)
            for (size_t i = 0; i < fw; i++) {
                value *v = &from->reps[g * fw + i];
                if (i < keep)
                    reps[g * width + i] = *v;
                else
                    value_release(v);
                *v = value_null();
            }
    }
    keyset groups = gs->groups;
    gs->groups = from->groups;
    from->groups = groups;
    acc *accs = gs->accs;
    size_t capaccs = gs->capaccs;
    gs->accs = from->accs;
    gs->capaccs = from->capaccs;
    from->accs = accs;
    from->capaccs = capaccs;
    value *old = gs->reps;
    size_t capreps = gs->capreps;
    gs->reps = reps ? reps : from->reps;
    gs->capreps = reps ? (n ? n : 1) : from->capreps;
    if (reps) {
        mem_free(x->m, from->reps);
        from->reps = NULL;
        from->capreps = 0;
        if (old)
            mem_free(x->m, old);
    } else {
        from->reps = old;
        from->capreps = capreps;
    }
    gs->width = width;
    return 0;
}

/* Builds in `all` (empty, ACC_UNORDERED, width cells a row) the groups
   of every worker in order of where they were met first, accumulators
   merged (acc_merge_unordered): 0, 1 or -1. */
static int gather_into(exec *x, group_state *all, group_state *const *parts, size_t nparts)
{
    size_t total = 0;
    for (size_t w = 0; w < nparts; w++)
        total += parts[w]->groups.n;
    group_at *order = mem_alloc(x->m, (total ? total : 1) * sizeof *order);
    if (!order)
        return exec_oom(x);
    size_t k = 0;
    for (size_t w = 0; w < nparts; w++)
        for (size_t g = 0; g < parts[w]->groups.n; g++)
            order[k++] = (group_at){parts[w]->first[g], parts[w], g};
    qsort(order, total, sizeof *order, by_first);
    size_t ncalls = all->p->ncalls;
    int rc = 0;
    for (size_t i = 0; i < total && rc == 0; i++) {
        group_state *from = order[i].from;
        size_t fg = order[i].group, gi;
        rc = exec_tick(x);
        if (rc == 0)
            rc = reserve_group(x, all);
        int added = rc == 0 ? keyset_insert(&all->groups, keyset_tuple(&from->groups, fg), &gi) : 0;
        if (added < 0)
            rc = exec_oom(x);
        if (rc != 0)
            break;
        acc *into = &all->accs[gi * ncalls], *src = &from->accs[fg * ncalls];
        if (added) {
            size_t keep = from->width < all->width ? from->width : all->width;
            for (size_t c = 0; c < keep; c++) {
                all->reps[gi * all->width + c] = from->reps[fg * from->width + c];
                from->reps[fg * from->width + c] = value_null();
            }
            memcpy(into, src, ncalls * sizeof *into);     /* moved */
            memset(src, 0, ncalls * sizeof *src);
            all->first[gi] = order[i].first;
            continue;
        }
        for (size_t a = 0; a < ncalls && rc == 0; a++)
            rc = acc_merge_unordered(x, all->kinds[a], &into[a], &src[a]);
    }
    mem_free(x->m, order);
    return rc;
}

int aggregate_partial_gather(exec *x, stage *st, stage *const *parts, size_t nparts)
{
    group_state *gs = st->state;
    if (gs->groups.n != 0)
        return 1;       /* not a fresh step: take the rows in order */
    group_state *only = NULL, *states[nparts ? nparts : 1];
    size_t used = 0;
    for (size_t w = 0; w < nparts; w++) {
        group_state *ps = parts[w]->state;
        if (ps->groups.n)
            states[used++] = only = ps;
    }
    if (used == 0)
        return 0;
    if (used == 1) {
        /* one worker met every group, in order: its state is the answer */
        int rc = settle_all(x, only);
        return rc != 0 ? rc : adopt(x, gs, only, x->width);
    }
    stage all_st = {0};
    if (aggregate_step_open(x, gs->p, &all_st) != 0)
        return -1;
    group_state *all = all_st.state;
    all->mode = ACC_UNORDERED;
    all->width = x->width;
    int rc = gather_into(x, all, states, used);
    if (rc == 0)
        rc = settle_all(x, all);
    if (rc == 0)
        rc = adopt(x, gs, all, x->width);
    aggregate_close(x, &all_st);
    return rc;
}
