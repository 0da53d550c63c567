/*
 * op_reach — variable-length patterns that only ask for reachability,
 * searched breadth first with a visited set (path_search.h): pattern
 * predicates (reach_exists) and MATCH rows that go straight into DISTINCT
 * (reach_distinct_ok, reach_emit).  The cases below say why each gives the
 * same answer as the enumerating walk of op_match.c.
 */
#include <string.h>

#include "query/path_search.h"

/* ---- reachability: pattern predicates ---- */

/*
 * `WHERE (a)-[:T*min..max]->(b)` only asks whether some path exists.  With
 * one variable-length relationship, no relationship or path variable and
 * a minimum of 0 or 1, a path of length d in [min, max] from a to b exists
 * exactly when b is at distance d' <= max with d' >= min (a shortest walk
 * is a simple path, so it repeats no relationship), except for b = a with
 * minimum 1: then a directed pattern needs a cycle through a, which the
 * search sees as an edge back into a from a node at distance < max, and an
 * undirected one is left to the depth-first walk (going out and back over
 * one relationship is no path).  So the check is one breadth-first search
 * with a visited set, never an enumeration of paths.
 */
int reach_exists(walk *w, uint64_t from, bool *handled, bool *found)
{
    *handled = *found = false;
    const cypher_ast_node *r = walk_elem(w, 1), *end = walk_elem(w, 2);
    if (w->kind != CYPHER_PATH_PLAIN || w->nel != 3 || w->part->u.part.variable ||
        !r->u.rel.var_length || r->u.rel.variable || (r->u.rel.has_min && r->u.rel.min > 1))
        return 0;
    bool directed = walk_rel_dir(w, r) != STRATA_BOTH;
    int64_t min = r->u.rel.has_min ? r->u.rel.min : 1;
    long slot = walk_var_slot(w, end, true);
    bool end_bound = walk_slot_bound(w, slot);
    uint64_t target = 0;
    if (end_bound) {
        if (value_kind(&w->row[slot]) != VAL_NODE) {
            *handled = true;
            return 0;
        }
        target = w->row[slot].u.id;
    }
    bool ok, end_ok = true;
    if (pattern_entity_ok(w->x, walk_elem(w, 0), w->sc, w->row, true, from, &ok) != 0 ||
        (end_bound &&
         pattern_entity_ok(w->x, end, w->sc, w->row, true, target, &end_ok) != 0))
        return -1;
    if (!ok || !end_ok) {   /* a bound end must still carry its labels and properties */
        *handled = true;
        return 0;
    }
    /* the start as its own end */
    bool self = false;
    if (!end_bound || target == from) {
        if (pattern_entity_ok(w->x, end, w->sc, w->row, true, from, &self) != 0)
            return -1;
        if (self && min == 0) {
            *handled = *found = true;
            return 0;
        }
        if (self && !directed)
            return 0;   /* needs a path that does not go back its own way */
    }
    if (end_bound && target == from && !self) {
        *handled = true;
        return 0;
    }
    search s;
    memset(&s, 0, sizeof s);
    s.w = w;
    s.i = 1;
    s.r = r;
    s.has_max = r->u.rel.has_max;
    s.max = r->u.rel.max;
    int rc = 0;
    uint32_t idx;
    s.fw.dir = walk_rel_dir(w, r);
    if ((rc = bfs_side_add(&s, &s.fw, from, 0, &idx)) != 0)
        goto done;
    while (!*found && s.fw.layer < s.fw.n && (!s.has_max || s.fw.depth < s.max)) {
        size_t lo = s.fw.n;
        /* an edge back into the start closes a cycle of length depth + 1 */
        if ((rc = bfs_side_expand_watch(&s, &s.fw, self ? from : UINT64_MAX, found)) != 0)
            break;
        for (size_t e = lo; e < s.fw.n && !*found && rc == 0; e++) {
            uint64_t v = s.fw.nodes[e].id;
            if (end_bound)
                *found = v == target;
            else if ((rc = pattern_entity_ok(w->x, end, w->sc, w->row, true, v, &ok)) == 0)
                *found = ok;
        }
    }
    *handled = rc == 0;
done:
    bfs_side_free(w->x->m, &s.fw);
    return rc;
}

/* ---- reachability: distinct ends ---- */

/*
 * `MATCH (a)-[:T*min..max]->(b) RETURN DISTINCT a, b.name` (or WITH
 * DISTINCT, or aggregates that are all DISTINCT) only needs the set of
 * (a, b) rows, not one row per path: with a single pattern part, one
 * variable-length relationship, no relationship or path variable, and a
 * minimum of 0 or 1, that set is {b : dist(a, b) <= max} (plus a itself
 * for a minimum of 0), a shortest walk being a path that repeats no
 * relationship.  The start node a reached again needs a cycle through a of
 * length <= max: directed, an edge back into a; undirected, the shortest
 * cycle through a from the same search, as the least dist(x) + dist(y) + 1
 * over the relationships between nodes first reached through different
 * relationships of a (a relationship of a taken out and back is no
 * cycle).  Emitting each end once gives the same rows after DISTINCT.
 */

static bool aggregates_distinct(const cypher_ast_node *n, void *ctx);

static int all_distinct_child(const cypher_ast_node *c, void *ctx)
{
    return aggregates_distinct(c, ctx) ? 0 : 1;
}

/* Whether every aggregate call under n is DISTINCT (count(*) is not). */
static bool aggregates_distinct(const cypher_ast_node *n, void *ctx)
{
    if (n->kind == CYPHER_AST_COUNT_STAR)
        return false;
    if (is_aggregate_call(n))
        return n->u.function.distinct;
    return cypher_ast_each_child(n, all_distinct_child, ctx) == 0;
}

bool reach_distinct_ok(const cypher_ast_node *match, const cypher_ast_node *next)
{
    if (!match || !next || match->kind != CYPHER_AST_MATCH || match->u.match.optional ||
        match->u.match.parts.count != 1)
        return false;
    const cypher_ast_node *part = match->u.match.parts.items[0];
    const cypher_ast_list *el = &part->u.part.path->u.list;
    if (part->u.part.kind != CYPHER_PATH_PLAIN || part->u.part.variable || el->count != 3)
        return false;
    const cypher_ast_node *r = el->items[1];
    if (!r->u.rel.var_length || r->u.rel.variable || (r->u.rel.has_min && r->u.rel.min > 1))
        return false;
    if (next->kind != CYPHER_AST_WITH && next->kind != CYPHER_AST_RETURN)
        return false;
    bool agg = false;
    for (size_t k = 0; k < next->u.projection.items.count; k++) {
        const cypher_ast_node *item = next->u.projection.items.items[k];
        if (expr_has_aggregate(item)) {
            agg = true;
            if (!aggregates_distinct(item, NULL))
                return false;
        }
    }
    for (size_t k = 0; k < next->u.projection.order.count; k++)
        if (expr_has_aggregate(next->u.projection.order.items[k]) &&
            !aggregates_distinct(next->u.projection.order.items[k], NULL))
            return false;
    return agg || next->u.projection.distinct;
}

int reach_emit(walk *w, size_t i, uint64_t from)
{
    search s;
    memset(&s, 0, sizeof s);
    s.w = w;
    s.i = i;
    s.r = walk_elem(w, i);
    int64_t min = s.r->u.rel.has_min ? s.r->u.rel.min : 1;
    bool has_max = s.r->u.rel.has_max;
    int64_t max = s.r->u.rel.max;
    strata_direction dir = walk_rel_dir(w, s.r);
    bool directed = dir != STRATA_BOTH;
    bfs_side *sd = &s.fw;
    sd->dir = dir;
    w->seg_off[i] = w->nstk;
    /* branch[k]: the relationship of `from` through which node k was
       first reached (undirected cycles) */
    u64_stack branch = {0};
    uint32_t idx;
    int rc = bfs_side_add(&s, sd, from, 0, &idx);
    if (rc == 0 && u64_stack_push2(w->x->m, &branch, 0, 0) != 0)
        rc = exec_oom(w->x);
    bool self_done = false;
    uint64_t cycle = UINT64_MAX;        /* shortest closed path through from */
    if (rc == 0 && min == 0) {
        self_done = true;
        rc = walk_var_done(w, i, from);
    }
    while (rc == 0 && sd->layer < sd->n && (!has_max || (int64_t)sd->depth < max)) {
        size_t lo = sd->layer, hi = sd->n;
        uint32_t next = sd->depth + 1;
        for (size_t u = lo; u < hi && rc == 0; u++) {
            if ((++s.expanded & 1023) == 0 && exec_check_interrupt(w->x) != 0) {
                rc = -1;
                break;
            }
            size_t off = w->pool.n, n;
            if ((rc = walk_drain(w, s.r, dir, sd->nodes[u].id, &n)) != 0)
                break;
            for (size_t k = 0; k < n && rc == 0; k++) {
                uint64_t rid = w->pool.v[off + 2 * k], v = w->pool.v[off + 2 * k + 1];
                uint64_t bu = u ? branch.v[2 * u] : rid;
                bool ok, used;
                if ((rc = walk_rel_used(w, rid, &used)) != 0 || used)
                    continue;
                if ((rc = pattern_entity_ok(w->x, s.r, w->sc, w->row, false, rid, &ok)) != 0 ||
                    !ok)
                    continue;
                if (v == from) {
                    if (directed || u == 0 || rid != bu)   /* not out and back */
                        cycle = next < cycle ? next : cycle;
                } else if (id_index_get(&sd->seen, v, &idx)) {
                    uint64_t len = (uint64_t)sd->nodes[u].dist + sd->nodes[idx].dist + 1;
                    if (!directed && branch.v[2 * idx] != bu && len < cycle)
                        cycle = len;
                } else {
                    if ((rc = bfs_side_add(&s, sd, v, next, &idx)) != 0)
                        break;
                    if (u64_stack_push2(w->x->m, &branch, bu, 0) != 0)
                        rc = exec_oom(w->x);
                }
            }
            w->pool.n = off;
        }
        if (rc != 0)
            break;
        sd->layer = hi;
        sd->depth = next;
        for (size_t e = hi; e < sd->n && rc == 0; e++)
            rc = walk_var_done(w, i, sd->nodes[e].id);
        if (rc == 0 && !self_done && (!has_max || cycle <= (uint64_t)max) &&
            cycle != UINT64_MAX) {
            self_done = true;
            rc = walk_var_done(w, i, from);
        }
    }
    u64_stack_free(w->x->m, &branch);
    bfs_side_free(w->x->m, &s.fw);
    return rc;
}
