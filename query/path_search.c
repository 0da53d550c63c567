/* path_search — the layered breadth-first search (see path_search.h). */
#include <string.h>

#include "query/path_search.h"

void bfs_side_free(mem_ctx *m, bfs_side *s)
{
    id_index_free(m, &s->seen);
    if (s->nodes)
        mem_free(m, s->nodes);
    if (s->preds)
        mem_free(m, s->preds);
    *s = (bfs_side){0};
}

static int grow(exec *x, void **p, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    if (c > UINT32_MAX)
        return exec_fail(x, NULL, "ArgumentError", NULL,
                         "a shortest-path search over more than %u nodes", UINT32_MAX);
    void *q = mem_realloc(x->m, *p, c * elem_size);
    if (!q)
        return exec_oom(x);
    *p = q;
    *cap = c;
    return 0;
}

/* Whether the filters over one kind of path element pass id. */
static int filters_pass(search *s, bool nodes, uint64_t id, bool *ok)
{
    walk *w = s->w;
    *ok = true;
    for (size_t k = 0; k < s->nf && *ok; k++) {
        if (s->f[k].on_nodes != nodes)
            continue;
        const cypher_ast_node *q = s->f[k].q;
        local_var lv = {q->u.comprehension.variable->u.name.ptr,
                        q->u.comprehension.variable->u.name.len,
                        nodes ? value_node(id) : value_rel(id), NULL};
        evalctx c = {w->x, w->sc, w->row, &lv, NULL};
        tri t;
        if (eval_predicate(&c, q->u.comprehension.where, &t) != 0)
            return -1;
        *ok = t == (q->u.comprehension.quantifier == CYPHER_QUANT_ALL ? TRI_TRUE : TRI_FALSE);
    }
    return 0;
}

/* Adds node id to side s at distance dist (it passed the filters). */
int bfs_side_add(search *s, bfs_side *sd, uint64_t id, uint32_t dist, uint32_t *idx)
{
    exec *x = s->w->x;
    if (grow(x, (void **)&sd->nodes, &sd->cap, sd->n + 1, sizeof *sd->nodes) != 0)
        return -1;
    if (id_index_put(x->m, &sd->seen, id, (uint32_t)sd->n) != 0)
        return exec_oom(x);
    sd->nodes[sd->n] = (bfs_node){id, dist, NO_PRED};
    *idx = (uint32_t)sd->n++;
    return 0;
}

static int pred_add(search *s, bfs_side *sd, uint32_t to, uint64_t rel, uint32_t from)
{
    exec *x = s->w->x;
    if (grow(x, (void **)&sd->preds, &sd->cappreds, sd->npreds + 1, sizeof *sd->preds) != 0)
        return -1;
    sd->preds[sd->npreds] = (bfs_pred){rel, from, sd->nodes[to].pred};
    sd->nodes[to].pred = (uint32_t)sd->npreds++;
    return 0;
}

/* Seeds side sd with its root; *ok false when the root fails a filter. */
int bfs_side_seed(search *s, bfs_side *sd, strata_direction dir, uint64_t root, bool *ok)
{
    sd->dir = dir;
    if (filters_pass(s, true, root, ok) != 0)
        return -1;
    if (!*ok)
        return 0;
    uint32_t idx;
    return bfs_side_add(s, sd, root, 0, &idx);
}

/* Expands the frontier of sd by one layer; *hit is set when a relationship
   that passes leads to node watch (UINT64_MAX: none). */
int bfs_side_expand_watch(search *s, bfs_side *sd, uint64_t watch, bool *hit)
{
    walk *w = s->w;
    size_t lo = sd->layer, hi = sd->n;
    uint32_t next = sd->depth + 1;
    for (size_t u = lo; u < hi; u++) {
        if ((++s->expanded & 1023) == 0 && exec_check_interrupt(w->x) != 0)
            return -1;
        size_t off = w->pool.n, n;
        if (walk_drain(w, s->r, sd->dir, sd->nodes[u].id, &n) != 0)
            return -1;
        int rc = 0;
        for (size_t k = 0; k < n && rc == 0; k++) {
            uint64_t rid = w->pool.v[off + 2 * k], v = w->pool.v[off + 2 * k + 1];
            uint32_t idx;
            bool seen = id_index_get(&sd->seen, v, &idx), ok, used;
            bool no_use = seen && (idx == REJECTED || sd->nodes[idx].dist != next ||
                                   (!s->all && sd->nodes[idx].pred != NO_PRED));
            if (no_use && v != watch)
                continue;
            if ((rc = walk_rel_used(w, rid, &used)) != 0 || used)
                continue;
            if ((rc = pattern_entity_ok(w->x, s->r, w->sc, w->row, false, rid, &ok)) != 0 || !ok)
                continue;
            if ((rc = filters_pass(s, false, rid, &ok)) != 0 || !ok)
                continue;
            if (v == watch)
                *hit = true;
            if (no_use)
                continue;
            if (!seen) {
                if ((rc = filters_pass(s, true, v, &ok)) != 0)
                    break;
                if (!ok) {
                    if (id_index_put(w->x->m, &sd->seen, v, REJECTED) != 0)
                        rc = exec_oom(w->x);
                    continue;
                }
                if ((rc = bfs_side_add(s, sd, v, next, &idx)) != 0)
                    break;
            }
            rc = pred_add(s, sd, idx, rid, (uint32_t)u);
        }
        w->pool.n = off;
        if (rc != 0)
            return rc;
    }
    sd->layer = hi;
    sd->depth = next;
    return 0;
}

int bfs_side_expand(search *s, bfs_side *sd)
{
    bool hit;
    return bfs_side_expand_watch(s, sd, UINT64_MAX, &hit);
}
