/* op_join — running a join plan (join.h) as a pipeline stage.
 *
 * Vertices are bound in the plan's order, depth first: a step binds its
 * vertex from a scan, the input row, or the adjacency of the vertex its
 * driver edge comes from, then checks each edge the vertex closes by
 * reading one end's adjacency for the other end, then the WHERE
 * conjuncts placed at the step.  Relationships bound so far are kept with
 * their clause, so uniqueness holds per clause.  Past the enumerated
 * core, the counted steps are never walked row by row: a row of the core
 * leaves once, weighted by the product over its counted children of the
 * number of ways to complete them, each memoised per (step, node) for
 * the life of the stage (the version read does not change inside a
 * pipeline).  A hash join's block (op_hash_join.c) is entered through
 * run_step like any other step. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/adj_cursor.h"
#include "index/label_index.h"
#include "query/join_exec.h"
#include "query/parallel.h"
#include "query/profile.h"
#include "query/regex.h"

static int run_step(exec *x, join_state *js, size_t k);
static int close_edges(exec *x, join_state *js, size_t k, size_t c);
static int try_vertex(exec *x, join_state *js, size_t k, uint64_t id);
static int try_parallel(exec *x, join_state *js, bool *done);

/* ---- checks ---- */

static int vertex_ok(exec *x, join_state *js, const jvertex *jv, uint64_t id, bool *ok)
{
    /* the label index alone answers: a node deleted in this statement
       has left it, so no lookup of the node itself is needed */
    const label_index *labels = exec_view(x)->ver->labels;
    *ok = false;
    for (size_t i = 0; i < jv->nlabels; i++)
        if (!labelidx_has(labels, jv->labels[i], id))
            return 0;
    for (size_t i = 0; i < jv->nprops; i++) {
        if (pattern_entity_ok(x, jv->props[i], &js->sc, js->row, true, id, ok) != 0)
            return -1;
        if (!*ok)
            return 0;
    }
    *ok = true;
    return 0;
}

static bool rel_used(const join_state *js, uint64_t rid, uint32_t group)
{
    for (size_t i = js->used_base; i < js->nused; i++)
        if (js->used[i] == rid && js->used_group[i] == group)
            return true;
    return false;
}

/* e's relationships at node `from` (the end vertex from_vertex), read in
   place: nothing writes while a pipeline runs, so the version read stays
   as it is while the walk goes on.  With types, each (type, direction)
   run is found by its key in the node's block, read once; without, a
   cursor reads every segment of the directions. */
typedef struct edge_scan {
    const jedge *e;
    const adj_block *adj;
    uint64_t from;
    int dirs;                   /* strata_direction mask */
    size_t next;                /* the next segment: type index * 2 + (1: in) */
    uint32_t seg;               /* the segment being read */
    uint32_t run_next;          /* where its next run starts (adj_run) */
    const adj_entry *at, *end;  /* what is left of the run */
    bool skip_loops;            /* it is incoming, after outgoing: a
                                   self-loop was reported already */
    adj_cursor c;               /* no types */
} edge_scan;

static void scan_open(exec *x, const jedge *e, uint32_t from_vertex, uint64_t from,
                      edge_scan *sc)
{
    const version *ver = exec_view(x)->ver;
    sc->e = e;
    sc->from = from;
    sc->dirs = (int)join_edge_dir(e, from_vertex);
    sc->next = 0;
    sc->run_next = ADJ_RUNS_DONE;
    sc->at = sc->end = NULL;
    sc->skip_loops = false;
    if (e->ntypes)
        sc->adj = store_node_adj(&ver->st, from);
    else
        adj_cursor_open(ver, from, (strata_direction)sc->dirs, STRATA_ANY_TYPE, &sc->c);
}

static bool scan_next(edge_scan *sc, uint64_t *rid, uint64_t *other)
{
    if (!sc->e->ntypes)
        return adj_cursor_next(&sc->c, rid, other);
    for (;;) {
        while (sc->at < sc->end) {
            const adj_entry *a = sc->at++;
            if (sc->skip_loops && a->other == sc->from)
                continue;
            *rid = a->rel;
            *other = a->other;
            return true;
        }
        if (sc->run_next != ADJ_RUNS_DONE) {   /* a hub's next leaf */
            adj_run r = adj_run_next(sc->adj, sc->seg, (adj_run){ NULL, 0, sc->run_next });
            sc->run_next = r.next;
            sc->at = r.e;
            sc->end = r.e + r.n;
            continue;
        }
        if (!sc->adj || sc->next >= 2 * sc->e->ntypes)
            return false;
        size_t k = sc->next++;
        bool in = k & 1;
        if (!(sc->dirs & (in ? STRATA_IN : STRATA_OUT)))
            continue;
        int seg;
        adj_run r = adj_run_of(sc->adj, in ? ADJ_IN : ADJ_OUT, sc->e->types[k >> 1], &seg);
        if (seg < 0)
            continue;
        sc->seg = (uint32_t)seg;
        sc->run_next = r.next;
        sc->at = r.e;
        sc->end = r.e + r.n;
        sc->skip_loops = in && sc->dirs == STRATA_BOTH;
    }
}

static int push_rel(exec *x, join_state *js, const jedge *e, uint64_t rid, bool *ok)
{
    *ok = false;
    if (rel_used(js, rid, e->group))
        return 0;
    if (e->rel->u.rel.properties) {
        if (pattern_entity_ok(x, e->rel, &js->sc, js->row, false, rid, ok) != 0)
            return -1;
        if (!*ok)
            return 0;
    }
    js->used[js->nused] = rid;
    js->used_group[js->nused++] = e->group;
    join_bind_slot(js, e->slot, value_rel(rid));
    *ok = true;
    return 0;
}

static void pop_rel(join_state *js, const jedge *e)
{
    js->nused--;
    join_bind_slot(js, e->slot, value_null());
}

/* ---- counting ---- */

/* A count past 2^64 - 1: the error integer arithmetic gives. */
static int count_overflow(exec *x, const cypher_ast_node *at)
{
    return exec_fail(x, at, "ArgumentError", "IntegerOverflow",
                     "integer overflow: the number of matches does not fit in an integer");
}

static int count_from(exec *x, join_state *js, size_t j, uint64_t node, uint64_t *out);

/* The ways to complete the counted steps hanging off vertex w, bound to
   node: the product over them. */
static int children_product(exec *x, join_state *js, uint32_t w, uint64_t node, uint64_t *out)
{
    const join_plan *p = js->p;
    *out = 1;
    for (size_t j = p->ncore; j < p->nsteps && *out; j++) {
        if (p->steps[j].from != w || p->steps[j].paired)
            continue;
        uint64_t c = 0;
        if (count_from(x, js, j, node, &c) != 0)
            return -1;
        if (__builtin_mul_overflow(*out, c, out))
            return count_overflow(x, NULL);
    }
    return 0;
}

/* Counted step j from node (its driver's bound end): memoised. */
static int count_from(exec *x, join_state *js, size_t j, uint64_t node, uint64_t *out)
{
    memo *m = &js->memos[j];
    uint32_t at;
    if (id_index_get(&m->at, node, &at)) {
        *out = m->vals[at];
        return 0;
    }
    const jstep *st = &js->p->steps[j];
    const jedge *e = &js->p->e[st->driver];
    const jvertex *jv = &js->p->v[st->vertex];
    edge_scan sc;
    scan_open(x, e, st->from, node, &sc);
    uint64_t total = 0, rid, other;
    int rc = 0;
    while (rc == 0 && scan_next(&sc, &rid, &other)) {
        uint64_t c = 0;
        bool ok;
        if ((rc = exec_tick(x)) != 0 || (rc = vertex_ok(x, js, jv, other, &ok)) != 0 || !ok)
            continue;
        if ((rc = children_product(x, js, st->vertex, other, &c)) == 0 &&
            __builtin_add_overflow(total, c, &total))
            rc = count_overflow(x, e->rel);
    }
    if (rc != 0)
        return -1;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *v = mem_realloc(x->m, m->vals, cap * sizeof *v);
        if (!v)
            return exec_oom(x);
        m->vals = v;
        m->cap = cap;
    }
    if (id_index_put(x->m, &m->at, node, (uint32_t)m->n) != 0)
        return exec_oom(x);
    m->vals[m->n++] = total;
    *out = total;
    return 0;
}

/* ---- pairs: a counted leaf that must differ from another node ---- */

/* The ways counted step j has from its bound end to node `to`. */
static int ways_to(exec *x, join_state *js, size_t j, uint64_t to, uint64_t *out)
{
    const jstep *st = &js->p->steps[j];
    bool ok;
    *out = 0;
    if (vertex_ok(x, js, &js->p->v[st->vertex], to, &ok) != 0)
        return -1;
    if (!ok)
        return 0;
    edge_scan sc;
    scan_open(x, &js->p->e[st->driver], st->from, js->vid[st->from], &sc);
    uint64_t rid, other;
    while (scan_next(&sc, &rid, &other)) {
        if (exec_tick(x) != 0)
            return -1;
        *out += other == to;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts n records of `words` (1 or 2) words by their first word: by insertion
   when few (a node's relationships of one kind mostly are), else qsort. */
static void sort_by_first(uint64_t *v, size_t n, size_t words)
{
    if (n > 16) {
        qsort(v, n, words * sizeof *v, cmp_u64);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t tmp[2];
        memcpy(tmp, v + i * words, words * sizeof *v);
        size_t j = i;
        for (; j > 0 && v[(j - 1) * words] > tmp[0]; j--)
            memcpy(v + j * words, v + (j - 1) * words, words * sizeof *v);
        memcpy(v + j * words, tmp, words * sizeof *v);
    }
}

/* The first of n records of `words` words, sorted by their first word,
   whose first word is at least key (n when none is). */
static size_t lower_bound(const uint64_t *v, size_t n, size_t words, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid * words] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The nodes counted step j reaches from its bound end that pass its
   vertex's checks, one at a time. */
typedef struct leaf_scan {
    edge_scan sc;
    const jvertex *jv;
} leaf_scan;

static void leaf_open(exec *x, join_state *js, size_t j, leaf_scan *ls)
{
    const jstep *st = &js->p->steps[j];
    ls->jv = &js->p->v[st->vertex];
    scan_open(x, &js->p->e[st->driver], st->from, js->vid[st->from], &ls->sc);
}

/* 1 with the next node in *node, 0 at the end, -1 on an error. */
static int leaf_next(exec *x, join_state *js, leaf_scan *ls, uint64_t *node)
{
    uint64_t rid;
    while (scan_next(&ls->sc, &rid, node)) {
        bool ok;
        if (exec_tick(x) != 0 || vertex_ok(x, js, ls->jv, *node, &ok) != 0)
            return -1;
        if (ok)
            return 1;
    }
    return 0;
}

/* Counted step j's nodes, sorted, into js->ends (no memo: a pair's leaves
   are read with every row). */
static int collect_ends(exec *x, join_state *js, size_t j, size_t *n)
{
    leaf_scan ls;
    leaf_open(x, js, j, &ls);
    uint64_t other;
    int rc;
    *n = 0;
    while ((rc = leaf_next(x, js, &ls, &other)) > 0) {
        if (*n == js->cap_ends) {
            size_t cap = js->cap_ends ? js->cap_ends * 2 : 64;
            uint64_t *v = mem_realloc(x->m, js->ends, cap * sizeof *v);
            if (!v)
                return exec_oom(x);
            js->ends = v;
            js->cap_ends = cap;
        }
        js->ends[(*n)++] = other;
    }
    if (rc < 0)
        return -1;
    sort_by_first(js->ends, *n, 1);
    return 0;
}

/* A pair of leaves: a's nodes read and sorted, then b's read once, each
   counted and looked up; *na, *nb their ways, *same the pairs (one way of
   each) that end at one node.  The plan makes a the leaf with fewer ways
   by the sampled fan-outs. */
static int pair_ways(exec *x, join_state *js, size_t a, size_t b, uint64_t *na, uint64_t *nb,
                     uint64_t *same)
{
    size_t n;
    *nb = *same = 0;
    if (collect_ends(x, js, a, &n) != 0)
        return -1;
    *na = n;
    if (!n)
        return 0;
    leaf_scan ls;
    leaf_open(x, js, b, &ls);
    uint64_t other;
    int rc;
    while ((rc = leaf_next(x, js, &ls, &other)) > 0) {
        (*nb)++;
        for (size_t i = lower_bound(js->ends, n, 1, other); i < n && js->ends[i] == other; i++)
            (*same)++;
    }
    return rc < 0 ? -1 : 0;
}

/* A pair's factor in a row's weight: the ways of its leaf x other than to
   y, times y's ways if y is a leaf, less the pairs ending at one node. */
static int pair_factor(exec *x, join_state *js, const jpair *jp, uint64_t *out)
{
    const join_plan *p = js->p;
    uint64_t cx, cy, same;
    *out = 0;
    if (jp->partner == SIZE_MAX) {
        const jstep *sx = &p->steps[jp->step];
        if (count_from(x, js, jp->step, js->vid[sx->from], &cx) != 0)
            return -1;
        if (cx && ways_to(x, js, jp->step, js->vid[jp->vertex], &same) != 0)
            return -1;
        *out = cx ? cx - same : 0;
        return 0;
    }
    if (pair_ways(x, js, jp->step, jp->partner, &cx, &cy, &same) != 0)
        return -1;
    unsigned __int128 all = (unsigned __int128)cx * cy - same;
    if (all > UINT64_MAX)
        return count_overflow(x, NULL);
    *out = (uint64_t)all;
    return 0;
}

/* ---- the walk over the core ---- */

static int emit(exec *x, join_state *js)
{
    const join_plan *p = js->p;
    if (p->ncore == p->nsteps && !p->sum_only)
        return stage_emit(x, js->s, js->row);
    uint64_t weight = 1;
    for (size_t k = 0; k < p->ncore && weight; k++) {
        uint32_t w = p->steps[k].vertex;
        uint64_t c = 0;
        if (children_product(x, js, w, js->vid[w], &c) != 0)
            return -1;
        if (__builtin_mul_overflow(weight, c, &weight))
            return count_overflow(x, NULL);
    }
    for (size_t i = 0; i < p->npairs && weight; i++) {
        uint64_t c = 0;
        if (pair_factor(x, js, &p->pairs[i], &c) != 0)
            return -1;
        if (__builtin_mul_overflow(weight, c, &weight))
            return count_overflow(x, NULL);
    }
    if (!p->sum_only)
        return weight ? stage_emit_times(x, js->s, js->row, weight) : 0;
    if (__builtin_add_overflow(js->pending, weight, &js->pending))
        return count_overflow(x, NULL);
    return 0;
}

/* sum_only: the input row's matches, passed on as one row (the join's own
   slots null: nothing after names them). */
static int flush(exec *x, join_state *js)
{
    uint64_t n = js->pending;
    js->pending = 0;
    return n ? stage_emit_times(x, js->s, js->row, n) : 0;
}

static int conjuncts_hold(exec *x, join_state *js, const jstep *st, bool *ok)
{
    *ok = true;
    for (size_t i = 0; i < st->nconj && *ok; i++) {
        const jconj *cj = &st->conj[i];
        if (cj->kind != JCONJ_EXPR) {
            *ok = (js->vid[cj->a] == js->vid[cj->b]) == (cj->kind == JCONJ_SAME);
            continue;
        }
        evalctx c = {x, &js->sc, js->row, NULL, NULL};
        tri t;
        if (eval_predicate(&c, cj->expr, &t) != 0)
            return -1;
        *ok = t == TRI_TRUE;
    }
    return 0;
}

/* The end of edge e to read adjacency from when both are bound: the one
   with fewer of e's relationships, as sampled when planning (reading
   both degrees here would cost as much as the probe). */
static uint32_t probe_side(const jedge *e)
{
    return e->fan[1] < e->fan[0] ? e->b : e->a;
}

/* Goes on from check c of step k with relationship rid closing edge e. */
static int close_with(exec *x, join_state *js, size_t k, size_t c, const jedge *e, uint64_t rid)
{
    bool ok;
    if (push_rel(x, js, e, rid, &ok) != 0)
        return -1;
    if (!ok)
        return 0;
    int rc = close_edges(x, js, k, c + 1);
    pop_rel(js, e);
    return rc;
}

/* ps for edge e at its end z, bound to node: read once and sorted. */
static int probe_set_build(exec *x, join_state *js, const jedge *e, uint32_t z, probe_set *ps)
{
    edge_scan sc;
    scan_open(x, e, z, js->vid[z], &sc);
    uint64_t rid, other;
    ps->n = 0;
    while (scan_next(&sc, &rid, &other)) {
        if (ps->n == ps->cap) {
            size_t cap = ps->cap ? ps->cap * 2 : 16;
            uint64_t(*v)[2] = mem_realloc(x->m, ps->v, cap * sizeof *v);
            if (!v)
                return exec_oom(x);
            ps->v = v;
            ps->cap = cap;
        }
        ps->v[ps->n][0] = other;
        ps->v[ps->n++][1] = rid;
    }
    if (exec_tick(x) != 0)
        return -1;
    sort_by_first((uint64_t *)ps->v, ps->n, 2);
    ps->built = true;
    return 0;
}

/* Whether to probe edge e through z's sorted set: always once read; when
   z is the side a probe reads anyway, from the second probe while z
   holds this node (a node probed once, as when z changes every row, is
   read once and not sorted); from the other side, once the probes while
   z holds this node have read about twice what z's set holds, and only
   where that side reads more than a few entries per probe. */
static bool probe_by_set(join_state *js, const jedge *e, uint32_t z, uint32_t side,
                         probe_set *ps)
{
    if (!ps->held || ps->node != js->vid[z]) {
        ps->held = true;
        ps->node = js->vid[z];
        ps->spent = 0;
        ps->built = false;
    }
    if (ps->built)
        return true;
    if (side == z)
        return ps->spent > 0;
    double fan_w = e->fan[e->a == side ? 0 : 1], fan_z = e->fan[e->a == z ? 0 : 1];
    return fan_w >= 4 && (double)ps->spent >= 2 * fan_z;
}

/* Check c of step k onwards: each relationship closing edge checks[c]
   between two bound vertices, found by reading one end's adjacency for
   the other or, where the earlier-bound end is probed again and again,
   by a binary search in its sorted set. */
static int close_edges(exec *x, join_state *js, size_t k, size_t c)
{
    const jstep *st = &js->p->steps[k];
    if (c == st->nchecks) {
        bool ok;
        if (conjuncts_hold(x, js, st, &ok) != 0)
            return -1;
        return ok ? run_step(x, js, k + 1) : 0;
    }
    const jedge *e = &js->p->e[st->checks[c]];
    probe_set *ps = &js->probes[st->checks[c]];
    uint32_t side = probe_side(e);
    uint32_t z = e->a == st->vertex ? e->b : e->a;    /* bound before this step */
    int rc = 0;
    if (e->a != e->b && probe_by_set(js, e, z, side, ps)) {
        if (!ps->built && probe_set_build(x, js, e, z, ps) != 0)
            return -1;
        uint64_t want = js->vid[st->vertex];
        for (size_t i = lower_bound((const uint64_t *)ps->v, ps->n, 2, want);
             rc == 0 && i < ps->n && ps->v[i][0] == want; i++)
            rc = close_with(x, js, k, c, e, ps->v[i][1]);
        return rc;
    }
    uint64_t want = js->vid[side == e->a ? e->b : e->a];
    edge_scan sc;
    scan_open(x, e, side, js->vid[side], &sc);
    uint64_t rid, other;
    while (rc == 0 && scan_next(&sc, &rid, &other)) {
        ps->spent++;
        if (other == want)
            rc = close_with(x, js, k, c, e, rid);
    }
    return rc;
}

/* Binds step k's vertex to id (checked) and goes on. */
static int try_vertex(exec *x, join_state *js, size_t k, uint64_t id)
{
    const jstep *st = &js->p->steps[k];
    const jvertex *jv = &js->p->v[st->vertex];
    bool ok;
    if (vertex_ok(x, js, jv, id, &ok) != 0)
        return -1;
    if (!ok)
        return 0;
    js->vid[st->vertex] = id;
    if (!jv->in_bound)
        join_bind_slot(js, jv->slot, value_node(id));
    int rc = close_edges(x, js, k, 0);
    if (!jv->in_bound)
        join_bind_slot(js, jv->slot, value_null());
    return rc;
}

static int expand(exec *x, join_state *js, size_t k)
{
    const jstep *st = &js->p->steps[k];
    const jedge *e = &js->p->e[st->driver];
    edge_scan sc;
    scan_open(x, e, st->from, js->vid[st->from], &sc);
    uint64_t rid, other;
    int rc = 0;
    while (rc == 0 && scan_next(&sc, &rid, &other)) {
        bool ok;
        if ((rc = exec_tick(x)) != 0)
            break;
        if ((rc = push_rel(x, js, e, rid, &ok)) != 0 || !ok)
            continue;
        rc = try_vertex(x, js, k, other);
        pop_rel(js, e);
    }
    return rc;
}

/* The single node a bound vertex holds in the row, or none. */
static bool bound_node(exec *x, const join_state *js, const jvertex *jv, uint64_t *id)
{
    const value *v = &js->row[jv->slot];
    if (value_kind(v) != VAL_NODE || !strata_node_exists(exec_view(x), v->u.id))
        return false;
    *id = v->u.id;
    return true;
}

static int scan(exec *x, join_state *js, size_t k)
{
    const jstep *st = &js->p->steps[k];
    if (st->plan.kind == START_NOTHING)
        return 0;
    if (st->plan.kind == START_ID_SEEK) {
        bool none;
        uint64_t id;
        if (start_id(x, &st->plan, &js->sc, js->row, &none, &id) != 0)
            return -1;
        return none ? 0 : try_vertex(x, js, k, id);
    }
    strata_node_iter *it;
    if (start_iter(x, &st->plan, &js->sc, js->row, &it) != 0)
        return -1;
    strata_id id;
    int rc = 0;
    while (rc == 0 && it && strata_node_iter_next(it, &id))
        rc = exec_tick(x) != 0 ? -1 : try_vertex(x, js, k, id);
    strata_node_iter_free(&it);
    return rc;
}

int join_run_kind(exec *x, join_state *js, size_t k, jstep_kind kind)
{
    const join_plan *p = js->p;
    const jstep *st = &p->steps[k];
    switch (kind) {
    case JSTEP_BOUND: {
        uint64_t id;
        return bound_node(x, js, &p->v[st->vertex], &id) ? try_vertex(x, js, k, id) : 0;
    }
    case JSTEP_SCAN: return scan(x, js, k);
    default: return expand(x, js, k);
    }
}

/* Steps run by the kind join_state.op gives them: a hash join's first
   and end steps are JOP_HASH, so the walk pays nothing for it per step
   (the check sits in the switch it goes through anyway). */
static int run_step(exec *x, join_state *js, size_t k)
{
    const join_plan *p = js->p;
    if (k == p->ncore)
        return js->hash.building ? hash_join_record(x, js) : emit(x, js);
    switch (js->op[k]) {
    case JOP_BOUND: {
        uint64_t id;
        const jstep *st = &p->steps[k];
        return bound_node(x, js, &p->v[st->vertex], &id) ? try_vertex(x, js, k, id) : 0;
    }
    case JOP_SCAN: return scan(x, js, k);
    case JOP_EXPAND: return expand(x, js, k);
    default: return hash_join_step(x, js, k);
    }
}

int join_run_step(exec *x, join_state *js, size_t k) { return run_step(x, js, k); }

/* Each core step's operation: its kind, or JOP_HASH where a hash join
   begins or ends. */
static void set_ops(join_state *js)
{
    const join_plan *p = js->p;
    for (size_t k = 0; k < p->ncore; k++)
        js->op[k] = (uint8_t)p->steps[k].kind;
    if (p->hashed) {
        js->op[p->hash.first] = JOP_HASH;
        if (p->hash.end < p->ncore)
            js->op[p->hash.end] = JOP_HASH;
    }
}

/* ---- the stage ---- */

static void row_end(exec *x, join_state *js)
{
    strata_node_iter_free(&js->it);
    js->row_open = false;
    js->single = false;
    js->nused = 0;
    for (size_t i = js->in_width; i < js->width; i++)
        js->row[i] = value_null();
    (void)x;
}

/* Takes an input row; the first step's candidates are read one per
   join_step. */
static int join_begin(exec *x, stage *s, const value *in)
{
    join_state *js = s->state;
    if (!js->row) {
        js->width = x->width;
        js->row = mem_calloc(x->m, (js->width ? js->width : 1) * sizeof(value));
        if (!js->row)
            return exec_oom(x);
    }
    for (size_t i = 0; i < js->width; i++)
        js->row[i] = i < js->in_width ? in[i] : value_null();   /* borrowed */
    js->row_open = true;
    js->pending = 0;
    const join_plan *p = js->p;
    if (p->hashed && p->hash.per_input)
        hash_join_reset(js);
    if (p->impossible)
        return 0;
    const jstep *st = &p->steps[0];
    if (st->kind == JSTEP_BOUND) {
        js->single = bound_node(x, js, &p->v[st->vertex], &js->single_id);
        return 0;
    }
    if (st->plan.kind == START_NOTHING)
        return 0;
    if (st->plan.kind == START_ID_SEEK) {
        bool none;
        if (start_id(x, &st->plan, &js->sc, js->row, &none, &js->single_id) != 0)
            return -1;
        js->single = !none;
        return 0;
    }
    int rc = start_iter(x, &st->plan, &js->sc, js->row, &js->it);
    bool counted = false;
    if (rc == 0)
        rc = try_parallel(x, js, &counted);
    if (rc != 0)
        row_end(x, js);
    return rc;
}

static int join_step(exec *x, stage *s, bool *done)
{
    join_state *js = s->state;
    strata_id id;
    int rc = 0;
    *done = false;
    if (js->single) {
        js->single = false;
        rc = try_vertex(x, js, 0, js->single_id);
    } else if (js->it && strata_node_iter_next(js->it, &id)) {
        rc = exec_tick(x) != 0 ? -1 : try_vertex(x, js, 0, id);
    } else {
        *done = true;
        row_end(x, js);
        return flush(x, js);
    }
    if (rc != 0)
        row_end(x, js);
    return rc;
}

static int join_row(exec *x, stage *s, const value *in)
{
    bool done = false;
    int rc = join_begin(x, s, in);
    while (rc == 0 && !done)
        rc = join_step(x, s, &done);
    return rc;
}

static void probe_sets_free(exec *x, join_state *js)
{
    for (size_t i = 0; i < JOIN_MAX_EDGES; i++)
        if (js->probes[i].v)
            mem_free(x->m, js->probes[i].v);
}

static void join_close(exec *x, stage *s)
{
    join_state *js = s->state;
    if (!js)
        return;
    if (js->row_open)
        row_end(x, js);
    if (js->row)
        mem_free(x->m, js->row);
    for (size_t j = 0; j < JOIN_MAX_VERTICES; j++) {
        id_index_free(x->m, &js->memos[j].at);
        if (js->memos[j].vals)
            mem_free(x->m, js->memos[j].vals);
    }
    if (js->ends)
        mem_free(x->m, js->ends);
    probe_sets_free(x, js);
    if (x->prof && js->p->hashed)
        hash_join_profile(x, js);
    hash_join_free(x, js);
    join_plan_free(x, &js->p);
    scope_free(&js->sc);
    mem_free(x->m, js);
    s->state = NULL;
}

/* ---- counting on several threads ---- */

/* Candidates a worker takes at a time (parallel.h). */
#define MORSEL PARALLEL_MORSEL

typedef struct parallel_count {
    join_state *js;             /* the stage's: plan, scope, widths */
    exec *x;                    /* the stage's executor */
    const uint64_t *cands;
    size_t ncands;
    atomic_size_t next;         /* the next morsel's first candidate */
    atomic_bool stop;           /* a worker failed: the others stop */
} parallel_count;

typedef struct worker {
    parallel_count *pc;
    exec x;
    join_state js;
    int rc;
    pthread_t thread;
} worker;

/* A worker's executor: the stage's settings and the version it reads,
   its own errors, scratch lists and caches. */
static void worker_init(worker *w, parallel_count *pc)
{
    join_state *js = pc->js;
    w->pc = pc;
    parallel_exec_init(&w->x, pc->x);
    memset(&w->js, 0, sizeof w->js);
    w->js.p = js->p;
    w->js.sc = js->sc;
    w->js.in_width = js->in_width;
    memcpy(w->js.op, js->op, sizeof js->op);
    w->js.width = js->width;
}

static void worker_fini(worker *w)
{
    exec *x = &w->x;
    for (size_t j = 0; j < JOIN_MAX_VERTICES; j++) {
        id_index_free(x->m, &w->js.memos[j].at);
        if (w->js.memos[j].vals)
            mem_free(x->m, w->js.memos[j].vals);
    }
    if (w->js.ends)
        mem_free(x->m, w->js.ends);
    probe_sets_free(x, &w->js);
    hash_join_add_counts(w->pc->js, &w->js);
    hash_join_free(x, &w->js);
    if (w->js.row)
        mem_free(x->m, w->js.row);
    parallel_exec_fini(x);
}

static void *worker_run(void *arg)
{
    worker *w = arg;
    parallel_count *pc = w->pc;
    w->js.row = mem_calloc(w->x.m, (w->js.width ? w->js.width : 1) * sizeof(value));
    w->rc = w->js.row ? 0 : exec_oom(&w->x);
    while (w->rc == 0 && !atomic_load_explicit(&pc->stop, memory_order_relaxed)) {
        size_t at = atomic_fetch_add(&pc->next, MORSEL);
        if (at >= pc->ncands)
            break;
        size_t end = at + MORSEL < pc->ncands ? at + MORSEL : pc->ncands;
        for (size_t i = at; i < end && w->rc == 0; i++)
            w->rc = try_vertex(&w->x, &w->js, 0, pc->cands[i]);
    }
    if (w->rc != 0)
        atomic_store(&pc->stop, true);
    return NULL;
}

/* Counts the matches from cands[0..n) on `threads` threads (this one
   among them) into js->pending.  Every match is counted by one worker,
   so the sum is exactly the one-thread count. */
static int count_parallel(exec *x, join_state *js, const uint64_t *cands, size_t n,
                          unsigned threads)
{
    exec_read_clock(x);   /* once for every worker */
    parallel_count pc = {.js = js, .x = x, .cands = cands, .ncands = n};
    atomic_init(&pc.next, 0);
    atomic_init(&pc.stop, false);
    worker *ws = mem_calloc(x->m, threads * sizeof *ws);
    if (!ws)
        return exec_oom(x);
    unsigned started = 1;
    for (unsigned t = 0; t < threads; t++)
        worker_init(&ws[t], &pc);
    for (; started < threads; started++)
        if (pthread_create(&ws[started].thread, NULL, worker_run, &ws[started]) != 0)
            break;   /* fewer threads: the rest is shared by those running */
    worker_run(&ws[0]);
    for (unsigned t = 1; t < started; t++)
        pthread_join(ws[t].thread, NULL);
    int rc = 0;
    for (unsigned t = 0; t < started; t++) {
        if (ws[t].rc != 0 && rc == 0) {
            rc = -1;
            if (!x->err.category)
                x->err = ws[t].x.err;
        }
        if (rc == 0 && __builtin_add_overflow(js->pending, ws[t].js.pending, &js->pending))
            rc = count_overflow(x, NULL);
        worker_fini(&ws[t]);
    }
    mem_free(x->m, ws);
    return rc;
}

/* A count whose first step scans: when the candidates are many and the
   graph allows threads, they are read into a list and counted in
   parallel; *done then (the iterator is used up either way, so with few
   candidates they are counted here on this thread). */
static int try_parallel(exec *x, join_state *js, bool *done)
{
    *done = false;
    unsigned threads = parallel_threads(x);
    if (!js->p->sum_only || js->in_width != 0 || threads < 2 || !js->it ||
        js->p->steps[0].plan.estimate < PARALLEL_MIN)
        return 0;
    *done = true;
    u64_stack cands = {0};
    strata_id id;
    int rc = 0;
    while (rc == 0 && strata_node_iter_next(js->it, &id))
        if (u64_stack_push(x->m, &cands, id) != 0)
            rc = exec_oom(x);
    strata_node_iter_free(&js->it);
    if (rc == 0)
        rc = count_parallel(x, js, cands.v, cands.n, threads);
    u64_stack_free(x->m, &cands);
    return rc;
}

/* ---- parallel reading (pipeline.h, parallel.h) ---- */

/* The first step's scan, unless the join sums its counts per input row
   (it then counts on several threads itself, try_parallel). */
static const start_plan *join_scan(const stage *s)
{
    const join_state *js = s->state;
    const join_plan *p = js->p;
    if (p->sum_only || p->impossible || p->steps[0].kind == JSTEP_BOUND)
        return NULL;
    switch (p->steps[0].plan.kind) {
    case START_NOTHING: case START_ID_SEEK: case START_BOUND: return NULL;
    default: return &p->steps[0].plan;
    }
}

static int join_begin_scan(exec *x, stage *s, const value *in, strata_node_iter **it)
{
    join_state *js = s->state;
    *it = NULL;
    if (join_begin(x, s, in) != 0)
        return -1;
    *it = js->it;
    js->it = NULL;
    js->single = false;
    return 0;
}

static int join_from(exec *x, stage *s, uint64_t id)
{
    return try_vertex(x, s->state, 0, id);
}

int join_open(exec *x, join_plan *p, const scope *sc, stage *s)
{
    join_state *js = mem_calloc(x->m, sizeof *js);
    if (!js) {
        join_plan_free(x, &p);
        return exec_oom(x);
    }
    js->p = p;
    js->s = s;
    js->in_width = p->in_width;
    js->prof_step = x->prof ? x->prof->n : SIZE_MAX;
    set_ops(js);
    s->state = js;
    s->row = join_row;
    s->begin = join_begin;
    s->step = join_step;
    s->close = join_close;
    s->scan = join_scan;
    s->begin_scan = join_begin_scan;
    s->from = join_from;
    return scope_copy(x, sc, &js->sc);
}
