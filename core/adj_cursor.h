/*
 * adj_cursor — reading one node's relationships by direction and type
 * straight from a view's adjacency block, on the stack.
 *
 * strata_neighbours (core/read.c) wraps one in an allocated iterator that
 * holds a reference to the version, so it outlives anything; a cursor
 * holds nothing, costs nothing to open, and is valid while the view it
 * was opened on is held and not written — inside a query pipeline, or a
 * pass over a view (query/op_join.c).  Both read the same rule: segments
 * of the wanted directions and type, a self-loop reported once when both
 * directions are read.
 */
#ifndef STRATA_CORE_ADJ_CURSOR_H
#define STRATA_CORE_ADJ_CURSOR_H

#include "core/version.h"
#include "storage/adjacency.h"

typedef struct adj_cursor {
    const adj_block *adj;   /* NULL: nothing to read */
    uint64_t node;
    uint32_t seg;           /* the next segment to open */
    int seg_dir;            /* the open segment's direction */
    uint32_t open;          /* the open segment + 1; 0: none */
    adj_run run;            /* the open segment's run being read */
    uint32_t pos;           /* next entry within the run */
    int dirs;               /* strata_direction mask */
    uint32_t type;          /* or STRATA_ANY_TYPE */
} adj_cursor;

/* Whether segment (dir, type) is wanted by a filter. */
static inline bool adj_segment_wanted(int dir, uint32_t type, int dirs, uint32_t want)
{
    int bit = dir == ADJ_OUT ? STRATA_OUT : STRATA_IN;
    return (dirs & bit) && (want == STRATA_ANY_TYPE || want == type);
}

/* A cursor over node's relationships in dir of type (the node need not
   be live: a cursor over a missing node reads nothing). */
static inline void adj_cursor_open(const version *ver, uint64_t node, strata_direction dir,
                                   uint32_t type, adj_cursor *c)
{
    *c = (adj_cursor){.adj = store_node_adj(&ver->st, node), .node = node,
                      .dirs = (int)dir, .type = type};
}

/* Opens the next wanted segment's first run; false when none is left.
   Out of line: it runs once per segment, and keeps the per-entry loop of
   adj_cursor_next small where that is inlined. */
static __attribute__((noinline)) bool adj_cursor_open_next(adj_cursor *c)
{
    for (; c->seg < adj_nsegments(c->adj); c->seg++) {
        int d;
        uint32_t t;
        adj_segment_info(c->adj, c->seg, &d, &t);
        if (!adj_segment_wanted(d, t, c->dirs, c->type))
            continue;
        c->seg_dir = d;
        c->open = ++c->seg;
        c->run = adj_run_first(c->adj, c->open - 1);
        c->pos = 0;
        return true;
    }
    return false;
}

static inline bool adj_cursor_next(adj_cursor *c, uint64_t *rel, uint64_t *other)
{
    if (!c->adj)
        return false;
    for (;;) {
        while (c->pos < c->run.n) {
            const adj_entry *x = &c->run.e[c->pos++];
            if (c->dirs == STRATA_BOTH && c->seg_dir == ADJ_IN && x->other == c->node)
                continue;   /* a self-loop, already reported going out */
            if (rel)
                *rel = x->rel;
            if (other)
                *other = x->other;
            return true;
        }
        if (c->open && adj_run_more(c->run)) {
            c->run = adj_run_next(c->adj, c->open - 1, c->run);
            c->pos = 0;
            if (c->run.n)
                continue;
        }
        if (!adj_cursor_open_next(c))
            return false;
    }
}

#endif
