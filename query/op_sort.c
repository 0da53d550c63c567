/*
 * op_sort — ORDER BY, the sort step of a projection (project.h): Sort,
 * or Top when a LIMIT bounds what is wanted.
 *
 * The order is value_order on each key (DESC reverses it), ties in input
 * order: every row's arrival number is a last key, so the order is total
 * and a bounded selection gives exactly the rows a full sort would put
 * first.  With LIMIT only the SKIP + LIMIT first rows can
 * ever be produced, so Top keeps them in a max-heap (the worst kept row on
 * top, replaced by any better newcomer): memory O(SKIP + LIMIT), time
 * O(n log k).  Without LIMIT, Sort keeps every row and sorts once its
 * input ends.  Either produces its rows a batch per finish call.
 *
 * Sort keys see the projection's names, then the input's (WITH's
 * variables shadow), and a part of a key written like a projected item
 * reads that item's value: after aggregation or DISTINCT the input
 * variables are gone from the rows, and this is how `ORDER BY a.name`
 * still works after `WITH a.name AS name, count(*) AS c` (the semantic
 * pass allowed only such parts).
 *
 * A single row is produced without evaluating its keys, as it always
 * was: the keys of the first row are evaluated when a second arrives.
 */
#include <stdlib.h>
#include <string.h>

#include "query/project.h"

/* Parts of the sort keys that read a projected item's value: outermost
   parts first, one stand-in per part. */
typedef struct stand_ins {
    exec *x;
    const projection *p;
    const cypher_ast_node **parts;
    size_t *item_of;            /* the item each part reads */
    size_t n, cap;
    int err;
} stand_ins;

static int find_stand_ins(const cypher_ast_node *e, void *ctx)
{
    stand_ins *si = ctx;
    for (size_t i = 0; i < si->p->nitems; i++) {
        if (!si->p->items[i].expr || !expr_same(si->x, si->p->items[i].expr, e))
            continue;
        if (si->n == si->cap) {
            /* both arrays or neither, so that cap stays the size of each */
            size_t cap = si->cap ? si->cap * 2 : 8;
            const cypher_ast_node **p = mem_alloc(si->x->m, cap * sizeof *p);
            size_t *it = p ? mem_alloc(si->x->m, cap * sizeof *it) : NULL;
            if (!it) {
                if (p)
                    mem_free(si->x->m, p);
                si->err = exec_oom(si->x);
                return 1;
            }
            if (si->cap) {
                memcpy(p, si->parts, si->n * sizeof *p);
                memcpy(it, si->item_of, si->n * sizeof *it);
                mem_free(si->x->m, si->parts);
                mem_free(si->x->m, si->item_of);
            }
            si->parts = p;
            si->item_of = it;
            si->cap = cap;
        }
        si->parts[si->n] = e;
        si->item_of[si->n++] = i;
        return 0;
    }
    return cypher_ast_each_child(e, find_stand_ins, ctx);
}

/* A kept row: its width cells, then nkeys keys, then (Top only) its
   arrival number as an int, in one stride of cells.  Sort fills its
   strides in arrival order and never replaces one, so there the stride's
   index is the arrival number. */
typedef struct sort_state {
    const projection *p;
    const cypher_ast_list *order;
    stand_ins si;
    value *vals;                /* si.n stand-in values (borrowed) */
    size_t nkeys;
    size_t bound;               /* rows kept at most (SIZE_MAX: all) */
    bool bounded;               /* bound < SIZE_MAX: Top */
    size_t width, stride;       /* read at the first row */
    value *cells;               /* capcells strides */
    size_t capcells;
    size_t *heap;               /* caprows: kept rows (a max-heap while Top
                                   fills, then the output order) */
    size_t caprows;
    size_t n;                   /* rows kept */
    uint64_t arrived;           /* rows seen */
    bool first_keys_pending;    /* row 0's keys are not evaluated yet */
    bool sorted;                /* the input has ended, heap is in order */
    size_t next;                /* then: the next row to produce */
} sort_state;

static value *kept(const sort_state *ss, size_t i) { return &ss->cells[i * ss->stride]; }

static int keys_of(exec *x, sort_state *ss, value *r)
{
    for (size_t k = 0; k < ss->si.n; k++)
        ss->vals[k] = r[ss->p->items[ss->si.item_of[k]].slot];   /* borrowed */
    agg_values av = {ss->si.parts, ss->vals, ss->si.n};
    evalctx c = {x, &ss->p->both, r, NULL, &av};
    value *keys = r + ss->width;
    for (size_t k = 0; k < ss->nkeys; k++)
        if (eval(&c, ss->order->items[k]->u.sort.expr, &keys[k]) != 0)
            return -1;
    return 0;
}

static int row_cmp(const sort_state *ss, size_t a, size_t b)
{
    const value *ka = kept(ss, a) + ss->width, *kb = kept(ss, b) + ss->width;
    for (size_t k = 0; k < ss->nkeys; k++) {
        int c = value_order(&ka[k], &kb[k]);
        if (c)
            return ss->order->items[k]->u.sort.descending ? -c : c;
    }
    int64_t sa = ss->bounded ? ka[ss->nkeys].u.i : (int64_t)a;
    int64_t sb = ss->bounded ? kb[ss->nkeys].u.i : (int64_t)b;
    return (sa > sb) - (sa < sb);
}

static int qsort_cmp(const void *a, const void *b, void *arg)
{
    return row_cmp(arg, *(const size_t *)a, *(const size_t *)b);
}

static void release_kept(sort_state *ss, size_t i)
{
    value *r = kept(ss, i);
    for (size_t c = 0; c < ss->stride; c++)
        value_release(&r[c]);
}

static void sift_down(sort_state *ss, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, big = i;
        if (l < ss->n && row_cmp(ss, ss->heap[l], ss->heap[big]) > 0)
            big = l;
        if (l + 1 < ss->n && row_cmp(ss, ss->heap[l + 1], ss->heap[big]) > 0)
            big = l + 1;
        if (big == i)
            return;
        size_t t = ss->heap[i];
        ss->heap[i] = ss->heap[big];
        ss->heap[big] = t;
        i = big;
    }
}

static void sift_up(sort_state *ss, size_t i)
{
    while (i > 0 && row_cmp(ss, ss->heap[(i - 1) / 2], ss->heap[i]) < 0) {
        size_t up = (i - 1) / 2, t = ss->heap[i];
        ss->heap[i] = ss->heap[up];
        ss->heap[up] = t;
        i = up;
    }
}

/* Room for one more kept row (the cells and the heap grow apart, each
   with its own capacity, so a failure leaves both consistent). */
static int reserve_row(exec *x, sort_state *ss)
{
    if (ss->n == ss->capcells) {
        size_t cap = ss->capcells ? ss->capcells * 2 : 4;
        value *c = mem_realloc(x->m, ss->cells, mem_array_size(cap, ss->stride * sizeof(value)));
        if (!c)
            return exec_oom(x);
        ss->cells = c;
        ss->capcells = cap;
    }
    if (ss->n == ss->caprows) {
        size_t cap = ss->caprows ? ss->caprows * 2 : 4;
        size_t *h = mem_realloc(x->m, ss->heap, mem_array_size(cap, sizeof *h));
        if (!h)
            return exec_oom(x);
        ss->heap = h;
        ss->caprows = cap;
    }
    return 0;
}

static int sort_row(exec *x, stage *st, const value *row)
{
    sort_state *ss = st->state;
    if (!ss->stride) {
        ss->width = x->width;
        ss->stride = ss->width + ss->nkeys + ss->bounded;
    }
    /* the newcomer goes into a free stride first: at n while filling,
       else into the spare one past the bound's */
    bool full = ss->n == ss->bound;
    if (!full && reserve_row(x, ss) != 0)
        return -1;
    if (full && ss->capcells == ss->n && reserve_row(x, ss) != 0)
        return -1;
    size_t slot = ss->n;
    value *r = kept(ss, slot);
    for (size_t i = 0; i < ss->width; i++)
        r[i] = value_retain(row[i]);
    for (size_t k = 0; k < ss->nkeys; k++)
        r[ss->width + k] = value_null();
    if (ss->bounded)
        r[ss->width + ss->nkeys] = value_int((int64_t)ss->arrived);
    ss->arrived++;
    int rc = 0;
    if (ss->arrived == 1) {
        ss->first_keys_pending = true;
    } else {
        if (ss->first_keys_pending) {
            ss->first_keys_pending = false;
            rc = keys_of(x, ss, kept(ss, 0));
        }
        if (rc == 0)
            rc = keys_of(x, ss, r);
    }
    if (rc != 0) {
        release_kept(ss, slot);
        return -1;
    }
    if (!full) {
        ss->heap[ss->n++] = slot;
        if (ss->bounded)
            sift_up(ss, ss->n - 1);
        return 0;
    }
    /* Top, full: the newcomer replaces the worst kept row if better */
    size_t worst = ss->heap[0];
    if (row_cmp(ss, slot, worst) >= 0) {
        release_kept(ss, slot);
        return 0;
    }
    release_kept(ss, worst);
    memcpy(kept(ss, worst), r, ss->stride * sizeof(value));
    for (size_t c = 0; c < ss->stride; c++)
        r[c] = value_null();
    sift_down(ss, 0);
    return 0;
}

static int sort_finish(exec *x, stage *st)
{
    sort_state *ss = st->state;
    if (!ss->sorted && ss->n > 1)
        qsort_r(ss->heap, ss->n, sizeof *ss->heap, qsort_cmp, ss);
    ss->sorted = true;
    for (size_t made = 0; ss->next < ss->n; made++) {
        if (made == STAGE_FINISH_BATCH)
            return EXEC_MORE;
        int rc = stage_emit(x, st, kept(ss, ss->heap[ss->next++]));
        if (rc < 0)
            return -1;
        if (rc == EXEC_STOP)
            return 0;       /* the rest are not wanted */
    }
    return 0;
}

static void sort_close(exec *x, stage *st)
{
    sort_state *ss = st->state;
    if (!ss)
        return;
    for (size_t i = 0; i < ss->n; i++)
        release_kept(ss, ss->heap[i]);
    if (ss->cells)
        mem_free(x->m, ss->cells);
    if (ss->heap)
        mem_free(x->m, ss->heap);
    if (ss->vals)
        mem_free(x->m, ss->vals);
    if (ss->si.parts)
        mem_free(x->m, ss->si.parts);
    if (ss->si.item_of)
        mem_free(x->m, ss->si.item_of);
    mem_free(x->m, ss);
    st->state = NULL;
}

int sort_step_open(exec *x, const projection *p, stage *st)
{
    sort_state *ss = mem_calloc(x->m, sizeof *ss);
    if (!ss)
        return exec_oom(x);
    st->state = ss;
    st->row = sort_row;
    st->finish = sort_finish;
    st->close = sort_close;
    ss->p = p;
    ss->order = &p->clause->u.projection.order;
    ss->nkeys = ss->order->count;
    ss->si = (stand_ins){.x = x, .p = p};
    /* Top keeps SKIP + LIMIT rows (at least one, so that a lone row's
       keys are never needed); the window step after it skips and cuts */
    ss->bound = SIZE_MAX;
    if (p->limit != INT64_MAX && p->skip <= INT64_MAX - p->limit &&
        (uint64_t)(p->skip + p->limit) < SIZE_MAX / 2)
        ss->bound = p->skip + p->limit ? (size_t)(p->skip + p->limit) : 1;
    ss->bounded = ss->bound != SIZE_MAX;
    for (size_t k = 0; k < ss->nkeys && !ss->si.err; k++)
        find_stand_ins(ss->order->items[k]->u.sort.expr, &ss->si);
    if (ss->si.err)
        return -1;
    ss->vals = mem_alloc(x->m, (ss->si.n ? ss->si.n : 1) * sizeof *ss->vals);
    return ss->vals ? 0 : exec_oom(x);
}

/* ---- partial states (project.h) ---- */

bool sort_is_top(const stage *st)
{
    const sort_state *ss = st->state;
    return ss->bounded;
}

void *sort_partial_take(exec *x, stage *st)
{
    sort_state *ss = st->state;
    st->state = NULL;
    if (sort_step_open(x, ss->p, st) != 0) {
        sort_close(x, st);   /* what the failed open left */
        st->state = ss;
        return NULL;
    }
    return ss;
}

static int arrival_cmp(const void *a, const void *b, void *arg)
{
    const sort_state *ss = arg;
    int64_t sa = kept(ss, *(const size_t *)a)[ss->width + ss->nkeys].u.i;
    int64_t sb = kept(ss, *(const size_t *)b)[ss->width + ss->nkeys].u.i;
    return (sa > sb) - (sa < sb);
}

/* The morsel's best rows, in the order they arrived, into the statement's
   Top: ties keep input order across morsels merged in order, and a row
   the morsel dropped had SKIP + LIMIT better ones before it there. */
int sort_partial_merge(exec *x, stage *st, void *partial)
{
    sort_state *part = partial;
    if (part->n > 1)
        qsort_r(part->heap, part->n, sizeof *part->heap, arrival_cmp, part);
    size_t w = x->width, pw = part->width < w ? part->width : w;
    value row[w ? w : 1];
    for (size_t i = 0; i < w; i++)
        row[i] = value_null();
    for (size_t r = 0; r < part->n; r++) {
        memcpy(row, kept(part, part->heap[r]), pw * sizeof *row);   /* borrowed */
        int rc = exec_tick(x);
        if (rc == 0)
            rc = sort_row(x, st, row);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void sort_partial_free(exec *x, void *partial)
{
    stage st = {.state = partial};
    sort_close(x, &st);
}
