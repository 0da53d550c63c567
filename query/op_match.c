/*
 * op_match — MATCH and OPTIONAL MATCH: scan, label scan, index seek,
 * expand, filter.
 *
 * For each input row the pattern parts are matched one after the other
 * (a nested loop); within a part the path is walked from a bound end
 * node (the first when both are), else from the end and by the access
 * (index seek, range seek, label scan, scan) that plan_start chose once
 * for the clause (plan_start.h).
 * Each relationship is expanded with strata_neighbours by direction and
 * type.  Relationships bound in one MATCH are distinct (openCypher's
 * relationship uniqueness).  WHERE is evaluated once the whole pattern is
 * bound.
 *
 * A variable-length relationship is expanded depth first, one
 * relationship at a time, each checked like a fixed one (direction, type
 * alternatives, property map, uniqueness); every depth within the bounds
 * continues the walk with the variable bound to the list of the
 * relationships in the order written.  The walk does not recurse per
 * relationship: var_walk keeps one frame per depth on heap stacks
 * (match_walk.h), and the steps of the expansions in progress sit on
 * walk.stk for the named path.  Where only reachability matters (a
 * pattern predicate, or rows that go straight into DISTINCT) the
 * expansion is breadth first instead (op_reach.c).
 *
 * shortestPath / allShortestPaths (one relationship) search breadth first
 * (op_shortest.c).  The fallback, for a WHERE that names the path other
 * than by universal predicates: iterative deepening over the exact length,
 * nodes not repeated, stopping at the first length that reaches no
 * further; per start node, an end node is emitted only at the first
 * length a path to it passes WHERE (checked here when the part runs last,
 * else after the whole pattern).
 *
 * Fresh variables are told apart from bound ones by slot: every slot at or
 * above the input's width was added by this clause.
 */
#include <stddef.h>
#include <string.h>

#include "core/adj_cursor.h"
#include "query/exec.h"
#include "query/match_walk.h"
#include "query/pipeline.h"
#include "query/plan_start.h"
#include "query/profile.h"


const cypher_ast_node *walk_elem(const walk *w, size_t i)
{
    return w->el[w->reversed ? w->nel - 1 - i : i];
}

long walk_var_slot(const walk *w, const cypher_ast_node *el, bool is_node)
{
    if (w->ends_known && is_node) {
        if (el == w->el[0])
            return w->end_slot[0];
        if (el == w->el[w->nel - 1])
            return w->end_slot[1];
    }
    const cypher_ast_node *v = is_node ? el->u.node.variable : el->u.rel.variable;
    return v ? scope_find(w->sc, v->u.name.ptr, v->u.name.len) : -1;
}

bool walk_slot_bound(const walk *w, long slot)
{
    return slot >= 0 && ((size_t)slot < w->in_width || !value_is_null(&w->row[slot]));
}

#define elem walk_elem
#define var_slot walk_var_slot

/* What a walk's start already holds for its first node: entries of a
   written-out map (bit i for entry i; an index seek found the node by
   them) and a label (the one its scan or seek read; held when given). */
typedef struct start_holds {
    uint32_t entries;
    const strata_token *label;
} start_holds;

static int entity_check(exec *x, const cypher_ast_node *el, const scope *sc, const value *row,
                        bool is_node, uint64_t id, start_holds held, bool *ok);

int pattern_entity_ok(exec *x, const cypher_ast_node *el, const scope *sc, const value *row,
                      bool is_node, uint64_t id, bool *ok)
{
    return entity_check(x, el, sc, row, is_node, id, (start_holds){ 0, NULL }, ok);
}

/* pattern_entity_ok, but what held says the start holds is not checked
   again. */
static int entity_check(exec *x, const cypher_ast_node *el, const scope *sc, const value *row,
                        bool is_node, uint64_t id, start_holds held, bool *ok)
{
    *ok = false;
    strata_view *v = exec_view(x);
    if (is_node) {
        /* every label, or for (n:A|B) any of them */
        bool any = el->u.node.labels_any, found = false;
        for (size_t i = 0; i < el->u.node.labels.count; i++) {
            cypher_ast_node *l = el->u.node.labels.items[i];
            strata_token tok;
            bool has = false;
            if (exec_cached_token(x, &l->u.label.token_plus1, STRATA_LABEL, &l->u.label.name,
                                  &tok)) {
                if (held.label && *held.label == tok)
                    has = true;
                else if (strata_node_has_label(v, id, tok, &has) != STRATA_OK)
                    return 0;
            }
            if (!any && !has)
                return 0;
            found |= has;
        }
        if (any && !found)
            return 0;
    }
    const cypher_ast_node *props = is_node ? el->u.node.properties : el->u.rel.properties;
    if (props && props->kind == CYPHER_AST_MAP) {
        /* a map written out: each entry evaluated and compared in turn, no
           map built */
        evalctx c = {x, sc, row, NULL, NULL};
        value ent = is_node ? value_node(id) : value_rel(id);
        for (size_t i = 0; i < props->u.list.count; i++) {
            const cypher_ast_node *e = props->u.list.items[i];
            value want, have;
            if (i < 32 && held.entries >> i & 1)
                continue;
            if (eval(&c, e->u.entry.value, &want) != 0)
                return -1;
            strata_token key;
            have = value_null();
            if (exec_cached_token(x, (_Atomic uint32_t *)&e->u.entry.token_plus1, STRATA_KEY,
                                  &e->u.entry.key, &key) &&
                entity_property_token(x, e, &ent, key, &have) != 0) {
                value_release(&want);
                return -1;
            }
            tri t = value_equals(&have, &want);
            value_release(&have);
            value_release(&want);
            if (t != TRI_TRUE)
                return 0;
        }
    } else if (props) {
        evalctx c = {x, sc, row, NULL, NULL};
        value map;
        if (eval(&c, props, &map) != 0)
            return -1;
        if (value_kind(&map) != VAL_MAP) {
            value_release(&map);
            return exec_fail(x, props, "TypeError", "InvalidArgumentType",
                             "a pattern's properties must be a map");
        }
        value ent = is_node ? value_node(id) : value_rel(id);
        for (size_t i = 0; i < value_map_len(&map); i++) {
            size_t kl;
            const char *k = value_str(&value_map_keys(&map)[i], &kl);
            value have;
            if (entity_property(x, props, &ent, k, kl, &have) != 0) {
                value_release(&map);
                return -1;
            }
            tri t = value_equals(&have, &value_map_vals(&map)[i]);
            value_release(&have);
            if (t != TRI_TRUE) {
                value_release(&map);
                return 0;
            }
        }
        value_release(&map);
    }
    *ok = true;
    return 0;
}

static int rel_push(exec *x, uint64_t id)
{
    if (x->nused == x->capused) {
        size_t cap = x->capused ? x->capused * 2 : 16;
        uint64_t *r = mem_realloc(x->m, x->used_rels, cap * sizeof *r);
        if (!r)
            return exec_oom(x);
        x->used_rels = r;
        x->capused = cap;
    }
    x->used_rels[x->nused++] = id;
    return 0;
}

/* Below this many bound relationships a scan beats a hash set. */
#define USED_SCAN_MAX 32

int walk_rel_used(walk *w, uint64_t rid, bool *used)
{
    exec *x = w->x;
    if (!w->used_set_on && x->nused - x->used_base > USED_SCAN_MAX) {
        for (size_t i = x->used_base; i < x->nused; i++)
            if (id_set_add(x->m, &w->used_set, x->used_rels[i]) != 0)
                return exec_oom(x);
        w->used_set_on = true;
    }
    if (w->used_set_on) {
        *used = id_set_has(&w->used_set, rid);
        return 0;
    }
    *used = false;
    for (size_t i = x->used_base; i < x->nused && !*used; i++)
        *used = x->used_rels[i] == rid;
    return 0;
}

int walk_rel_push(walk *w, uint64_t rid)
{
    if (w->used_set_on && id_set_add(w->x->m, &w->used_set, rid) != 0)
        return exec_oom(w->x);
    if (rel_push(w->x, rid) != 0) {
        if (w->used_set_on)
            id_set_remove(&w->used_set, rid);
        return -1;
    }
    return 0;
}

void walk_rel_pop(walk *w)
{
    exec *x = w->x;
    x->nused--;
    if (w->used_set_on)
        id_set_remove(&w->used_set, x->used_rels[x->nused]);
}

/* shortestPath: whether the path now complete is one to emit. */
static int shortest_ok(walk *w, bool *ok)
{
    uint64_t end = w->ids[w->nel - 1];
    int64_t len = w->exact;
    *ok = false;
    for (size_t k = 0; k < w->nends; k++)
        if (w->ends[2 * k] == end) {
            *ok = w->kind == CYPHER_PATH_ALL_SHORTEST && (int64_t)w->ends[2 * k + 1] == len;
            return 0;
        }
    if (w->nends == w->capends) {
        size_t cap = w->capends ? w->capends * 2 : 8;
        uint64_t *e = mem_realloc(w->x->m, w->ends, cap * 2 * sizeof *e);
        if (!e)
            return exec_oom(w->x);
        w->ends = e;
        w->capends = cap;
    }
    w->ends[2 * w->nends] = end;
    w->ends[2 * w->nends + 1] = (uint64_t)len;
    w->nends++;
    *ok = true;
    return 0;
}

/* The path now complete, as a value (the part's path variable). */
static int path_value(walk *w, value *out)
{
    /* node, rel, node, ... in the order written */
    size_t cnt = 1;
    for (size_t j = 1; j < w->nel; j += 2)
        cnt += elem(w, j)->u.rel.var_length ? 2 * w->seg_len[j] : 2;
    value *items = mem_alloc(w->x->m, cnt * sizeof(value));
    if (!items)
        return exec_oom(w->x);
    size_t k = 0;
    items[k++] = value_node(w->ids[0]);
    for (size_t j = 1; j < w->nel; j += 2) {
        if (elem(w, j)->u.rel.var_length) {
            for (size_t s = 0; s < w->seg_len[j]; s++) {
                items[k++] = value_rel(w->stk[2 * (w->seg_off[j] + s)]);
                items[k++] = value_node(w->stk[2 * (w->seg_off[j] + s) + 1]);
            }
        } else {
            items[k++] = value_rel(w->ids[j]);
            items[k++] = value_node(w->ids[j + 1]);
        }
    }
    if (w->reversed)
        for (size_t a = 0, b = cnt - 1; a < b; a++, b--) {
            value t = items[a];
            items[a] = items[b];
            items[b] = t;
        }
    int rc = value_path_from(w->x->m, items, cnt, out);
    mem_free(w->x->m, items);
    return rc != 0 ? exec_oom(w->x) : 0;
}

/* The depth-first shortest-path search (the fallback of op_shortest.c):
   whether the path now complete counts — it passes WHERE when WHERE
   steers the search, and its end was not reached at a shorter length. */
static int shortest_dfs_ok(walk *w, bool *ok)
{
    *ok = true;
    if (w->where_in_search) {
        evalctx c = {w->x, w->sc, w->row, NULL, NULL};
        tri t;
        if (eval_predicate(&c, w->where, &t) != 0)
            return -1;
        *ok = t == TRI_TRUE;
    }
    return *ok ? shortest_ok(w, ok) : 0;
}

static int finish(walk *w)
{
    const cypher_ast_node *pv = w->part->u.part.variable;
    long slot = pv ? scope_find(w->sc, pv->u.name.ptr, pv->u.name.len) : -1;
    if (slot >= 0) {
        value path;
        if (path_value(w, &path) != 0)
            return -1;
        value_release(&w->row[slot]);
        w->row[slot] = path;
    }
    bool ok = true;
    int rc = 0;
    if (w->kind != CYPHER_PATH_PLAIN && !w->bfs)
        rc = shortest_dfs_ok(w, &ok);
    if (rc == 0 && ok)
        rc = w->emit(w->x, w->row, w->ectx);
    if (slot >= 0)
        value_release(&w->row[slot]);
    return rc;
}

/* Binds node element i to id (checking it), then continues the walk. */
static int step_node(walk *w, size_t i, uint64_t id);

strata_direction walk_rel_dir(const walk *w, const cypher_ast_node *r)
{
    switch (r->u.rel.dir) {
    case CYPHER_DIR_RIGHT: return w->reversed ? STRATA_IN : STRATA_OUT;
    case CYPHER_DIR_LEFT: return w->reversed ? STRATA_OUT : STRATA_IN;
    default: return STRATA_BOTH;
    }
}

/* Appends the pairs of type alternative t; nothing when the type is
   unknown or written twice (`:T|T`: each type once). */
static int drain_type(walk *w, const cypher_ast_node *r, size_t t, strata_direction dir,
                      uint64_t from)
{
    strata_view *v = exec_view(w->x);
    for (size_t u = 0; u < t; u++)
        if (strcmp(r->u.rel.types.items[u]->u.name.ptr, r->u.rel.types.items[t]->u.name.ptr) ==
            0)
            return 0;
    strata_token type = STRATA_ANY_TYPE;
    if (r->u.rel.types.count &&
        strata_token_lookup(v, STRATA_RELTYPE, r->u.rel.types.items[t]->u.name.ptr, &type) !=
            STRATA_OK)
        return 0;
    /* read whole here, so no reference to the version is needed; a node
       deleted earlier in the statement has nothing to read */
    adj_cursor c;
    adj_cursor_open(v->ver, from, dir, type, &c);
    uint64_t rid, other;
    while (adj_cursor_next(&c, &rid, &other))
        if (u64_stack_push2(w->x->m, &w->pool, rid, other) != 0)
            return exec_oom(w->x);
    return 0;
}

/* Draining before walking on matters: the rest of the walk may run writes
   (MERGE) and an iterator would hold the version. */
int walk_drain(walk *w, const cypher_ast_node *r, strata_direction dir, uint64_t from, size_t *n)
{
    size_t before = w->pool.n;
    size_t ntypes = r->u.rel.types.count;
    for (size_t t = 0; t < (ntypes ? ntypes : 1); t++)
        if (drain_type(w, r, t, dir, from) != 0) {
            w->pool.n = before;
            return -1;
        }
    *n = (w->pool.n - before) / 2;
    return 0;
}

int walk_stk_push(walk *w, uint64_t rid, uint64_t node)
{
    if (w->nstk == w->capstk) {
        size_t cap = w->capstk ? w->capstk * 2 : 16;
        uint64_t *s = mem_realloc(w->x->m, w->stk, cap * 2 * sizeof *s);
        if (!s)
            return exec_oom(w->x);
        w->stk = s;
        w->capstk = cap;
    }
    w->stk[2 * w->nstk] = rid;
    w->stk[2 * w->nstk + 1] = node;
    w->nstk++;
    return 0;
}

int walk_var_done(walk *w, size_t i, uint64_t cur)
{
    const cypher_ast_node *r = elem(w, i);
    long slot = var_slot(w, r, false);
    bool bound = walk_slot_bound(w, slot);
    size_t off = w->seg_off[i], len = w->nstk - off;
    w->seg_len[i] = len;
    if (slot >= 0 && !bound) {
        value *items = mem_alloc(w->x->m, (len ? len : 1) * sizeof(value));
        if (!items)
            return exec_oom(w->x);
        for (size_t k = 0; k < len; k++)
            items[k] = value_rel(w->stk[2 * (off + (w->reversed ? len - 1 - k : k))]);
        int rc = value_list_from(w->x->m, items, len, &w->row[slot]);
        mem_free(w->x->m, items);
        if (rc != 0)
            return exec_oom(w->x);
    }
    int rc = step_node(w, i + 1, cur);
    if (slot >= 0 && !bound)
        value_release(&w->row[slot]);
    return rc;
}

/* Whether node is on the expansion of element i so far (its start is
   node i - 1). */
static bool on_path(const walk *w, size_t i, uint64_t node)
{
    if (w->ids[i - 1] == node)
        return true;
    for (size_t k = w->seg_off[i]; k < w->nstk; k++)
        if (w->stk[2 * k + 1] == node)
            return true;
    return false;
}

/* One variable-length element, as the walk sees it. */
typedef struct var_spec {
    const cypher_ast_node *r;
    size_t i;
    int64_t min, max;
    bool has_max;
    const value *blist;                 /* bound to a list: follow exactly it */
    size_t blen;
    bool bound;
} var_spec;

static void var_spec_init(walk *w, size_t i, var_spec *vs)
{
    const cypher_ast_node *r = elem(w, i);
    *vs = (var_spec){r, i, r->u.rel.has_min ? r->u.rel.min : 1, r->u.rel.max, r->u.rel.has_max,
                     NULL, 0, false};
    long slot = var_slot(w, r, false);
    if (walk_slot_bound(w, slot)) {
        vs->bound = true;
        if (value_kind(&w->row[slot]) == VAL_LIST) {
            vs->blist = value_list_items(&w->row[slot]);
            vs->blen = value_list_len(&w->row[slot]);
        }
    }
    if (w->exact >= 0) {   /* iterative deepening: this length only */
        vs->min = w->exact > vs->min ? w->exact : vs->min;
        if (!vs->has_max || vs->max > w->exact)
            vs->max = w->exact;
        vs->has_max = true;
    }
}

/* The walk has reached cur at depth: the expansion so far is a match when
   the depth is within the bounds; then, unless it may go no deeper, a
   frame of cur's relationships is pushed (*opened). */
static int var_enter(walk *w, const var_spec *vs, uint64_t cur, int64_t depth, bool *opened)
{
    *opened = false;
    if (exec_check_interrupt(w->x) != 0)
        return -1;
    if (vs->bound && !vs->blist)
        return 0;   /* bound to something other than a list: no match */
    if (w->exact >= 0 && depth == w->exact)
        w->reached = true;
    if (depth >= vs->min && (!vs->has_max || depth <= vs->max) &&
        (!vs->bound || (size_t)depth == vs->blen)) {
        int rc = walk_var_done(w, vs->i, cur);
        if (rc != 0)
            return rc;
    }
    if ((vs->has_max && depth >= vs->max) || (vs->bound && (size_t)depth >= vs->blen))
        return 0;
    if (vs->bound &&
        value_kind(&vs->blist[w->reversed ? vs->blen - 1 - (size_t)depth : (size_t)depth]) !=
            VAL_REL)
        return 0;
    if (w->nframes == w->capframes) {
        size_t cap = w->capframes ? w->capframes * 2 : 16;
        var_frame *f = mem_realloc(w->x->m, w->frames, cap * sizeof *f);
        if (!f)
            return exec_oom(w->x);
        w->frames = f;
        w->capframes = cap;
    }
    size_t off = w->pool.n / 2, n;
    if (walk_drain(w, vs->r, walk_rel_dir(w, vs->r), cur, &n) != 0)
        return -1;
    w->frames[w->nframes++] = (var_frame){off, n, 0};
    *opened = true;
    return 0;
}

/* Whether the relationship rid to other may extend the expansion at
   depth. */
static int var_may_take(walk *w, const var_spec *vs, int64_t depth, uint64_t rid,
                        uint64_t other, bool *ok)
{
    *ok = false;
    bool used;
    if (walk_rel_used(w, rid, &used) != 0)
        return -1;
    if (used)
        return 0;
    if (vs->bound &&
        vs->blist[w->reversed ? vs->blen - 1 - (size_t)depth : (size_t)depth].u.id != rid)
        return 0;
    if (w->exact >= 0 && on_path(w, vs->i, other))
        return 0;
    return pattern_entity_ok(w->x, vs->r, w->sc, w->row, false, rid, ok);
}

static void var_unstep(walk *w)
{
    w->nstk--;
    walk_rel_pop(w);
}

/* Variable-length element i from node from, depth first without
   recursion: frames[base + d] holds the relationships of the node at
   depth d and the next one to try; taking one binds it (uniqueness, the
   step stack) and enters its node one level deeper; a frame used up is
   dropped along with the step that led to it. */
static int var_walk(walk *w, size_t i, uint64_t from)
{
    var_spec vs;
    var_spec_init(w, i, &vs);
    size_t base = w->nframes, pool_base = w->pool.n;
    w->seg_off[i] = w->nstk;
    bool opened;
    int rc = var_enter(w, &vs, from, 0, &opened);
    while (rc == 0 && w->nframes > base) {
        var_frame *f = &w->frames[w->nframes - 1];
        int64_t depth = (int64_t)(w->nframes - 1 - base);
        if (f->k == f->n) {
            w->pool.n = 2 * f->off;
            w->nframes--;
            if (w->nframes > base)
                var_unstep(w);
            continue;
        }
        uint64_t rid = w->pool.v[2 * (f->off + f->k)], other = w->pool.v[2 * (f->off + f->k) + 1];
        f->k++;
        bool ok;
        if ((rc = var_may_take(w, &vs, depth, rid, other, &ok)) != 0 || !ok)
            continue;
        if ((rc = walk_rel_push(w, rid)) != 0)
            break;
        if ((rc = walk_stk_push(w, rid, other)) != 0) {
            walk_rel_pop(w);
            break;
        }
        rc = var_enter(w, &vs, other, depth + 1, &opened);
        if (!opened)
            var_unstep(w);
    }
    for (; w->nframes > base; w->nframes--)   /* stopped early: unwind */
        if (w->nframes - 1 > base)
            var_unstep(w);
    w->pool.n = pool_base;
    return rc;
}

static int step_rel(walk *w, size_t i, uint64_t from)
{
    const cypher_ast_node *r = elem(w, i);
    if (r->u.rel.var_length)
        return w->bfs     ? shortest_bfs(w, i, from)
               : w->reach ? reach_emit(w, i, from)
                          : var_walk(w, i, from);
    long slot = var_slot(w, r, false);
    bool bound = walk_slot_bound(w, slot);
    size_t off = w->pool.n, n;
    if (walk_drain(w, r, walk_rel_dir(w, r), from, &n) != 0)
        return -1;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        uint64_t rid = w->pool.v[off + 2 * k], other = w->pool.v[off + 2 * k + 1];
        bool used, ok;
        if ((rc = walk_rel_used(w, rid, &used)) != 0 || used)
            continue;
        if (bound && (value_kind(&w->row[slot]) != VAL_REL || w->row[slot].u.id != rid))
            continue;
        if ((rc = pattern_entity_ok(w->x, r, w->sc, w->row, false, rid, &ok)) != 0 || !ok)
            continue;
        if ((rc = walk_rel_push(w, rid)) != 0)
            break;
        w->ids[i] = rid;
        if (slot >= 0 && !bound)
            w->row[slot] = value_rel(rid);
        rc = step_node(w, i + 1, other);
        if (slot >= 0 && !bound)
            w->row[slot] = value_null();
        walk_rel_pop(w);
    }
    w->pool.n = off;
    return rc;
}

static int step_node(walk *w, size_t i, uint64_t id)
{
    const cypher_ast_node *n = elem(w, i);
    long slot = var_slot(w, n, true);
    bool bound = slot >= 0 && ((size_t)slot < w->in_width || !value_is_null(&w->row[slot]));
    if (bound && (value_kind(&w->row[slot]) != VAL_NODE || w->row[slot].u.id != id))
        return 0;
    bool ok;
    start_holds held = { 0, NULL };
    if (i == 0)
        held = (start_holds){ w->start_skip, w->start_label_held ? &w->plan->label : NULL };
    if (entity_check(w->x, n, w->sc, w->row, true, id, held, &ok) != 0)
        return -1;
    if (!ok)
        return 0;
    w->ids[i] = id;
    if (slot >= 0 && !bound)
        w->row[slot] = value_node(id);
    int rc = i + 1 == w->nel ? finish(w) : step_rel(w, i + 1, id);
    if (slot >= 0 && !bound)
        w->row[slot] = value_null();
    return rc;
}

static int match_walk(walk *w);

/* Bound before the part runs: an input column, or a slot an earlier part
   of the same MATCH has filled in this row. */
typedef struct row_bound {
    const scope *sc;
    size_t in_width;
    const value *row;
} row_bound;

static bool bound_in_row(const cypher_ast_str *name, void *ctx)
{
    const row_bound *rb = ctx;
    long slot = scope_find(rb->sc, name->ptr, name->len);
    return slot >= 0 && ((size_t)slot < rb->in_width || !value_is_null(&rb->row[slot]));
}

static int walk_init(walk *w, exec *x, const cypher_ast_node *part, const start_plan *plan,
                     const scope *sc, size_t in_width, const cypher_ast_node *where, value *row,
                     match_emit emit, void *ctx)
{
    const cypher_ast_node *path = part->u.part.path;
    memset(w, 0, offsetof(walk, ids));
    w->x = x;
    w->sc = sc;
    w->in_width = in_width;
    w->part = part;
    w->el = (const cypher_ast_node *const *)path->u.list.items;
    w->nel = path->u.list.count;
    w->where = where;
    w->plan = plan;
    w->row = row;
    w->emit = emit;
    w->ectx = ctx;
    w->kind = part->u.part.kind;
    w->exact = -1;
    if (w->nel > CYPHER_AST_MAX_DEPTH)
        return exec_fail(x, part, "SyntaxError", NULL, "pattern too long");
    if (w->kind != CYPHER_PATH_PLAIN && w->nel != 3)
        return exec_fail(x, part, "SyntaxError", NULL,
                         "shortestPath needs a pattern of one relationship");
    return 0;
}

static void walk_fini(walk *w)
{
    if (!w->x)
        return;   /* never started */
    u64_stack_free(w->x->m, &w->pool);
    id_set_free(w->x->m, &w->used_set);
    w->used_set_on = false;
    if (w->frames)
        mem_free(w->x->m, w->frames);
    w->frames = NULL;
    w->nframes = w->capframes = 0;
    if (w->stk)
        mem_free(w->x->m, w->stk);
    if (w->ends)
        mem_free(w->x->m, w->ends);
    w->stk = NULL;
    w->ends = NULL;
}

/* last: the part runs after every other part of its MATCH, so WHERE can
   be checked on each shortest path as it is found (op_shortest.c says when
   that matters). */
static int walk_part(exec *x, const cypher_ast_node *part, const start_plan *plan,
                     const scope *sc, size_t in_width, const cypher_ast_node *where, bool last,
                     value *row, match_emit emit, void *ctx)
{
    walk w;
    walk_paths room;
    walk_use_paths(&w, &room);
    int rc = walk_init(&w, x, part, plan, sc, in_width, where, row, emit, ctx);
    w.where_in_search = last && where;
    if (rc == 0)
        rc = match_walk(&w);
    walk_fini(&w);
    return rc;
}

int match_part_row(exec *x, const cypher_ast_node *part, const scope *sc, size_t in_width,
                   const cypher_ast_node *where, value *row, match_emit emit, void *ctx)
{
    row_bound rb = {sc, in_width, row};
    start_plan plan;
    plan_start(x, part, where, bound_in_row, &rb, &plan);
    /* a pattern of its own: relationship uniqueness starts afresh */
    size_t base = x->used_base, used = x->nused;
    x->used_base = x->nused;
    int rc = walk_part(x, part, &plan, sc, in_width, where, false, row, emit, ctx);
    x->nused = used;
    x->used_base = base;
    return rc;
}

static int walk_start(walk *w, bool *single, bool *none, uint64_t *id, strata_node_iter **it);

/* The first match answers the question: stop the walk there. */
static int stop_at_first(exec *x, value *row, void *ctx)
{
    (void)x;
    (void)row;
    *(bool *)ctx = true;
    return 1;
}

int match_part_exists(exec *x, const cypher_ast_node *part, const scope *sc, size_t in_width,
                      value *row, bool *found)
{
    row_bound rb = {sc, in_width, row};
    start_plan plan;
    plan_start(x, part, NULL, bound_in_row, &rb, &plan);
    size_t base = x->used_base, used = x->nused;
    x->used_base = x->nused;
    walk w;
    walk_paths room;
    walk_use_paths(&w, &room);
    bool single, none, handled = false;
    uint64_t id;
    strata_node_iter *it = NULL;
    *found = false;
    int rc = walk_init(&w, x, part, &plan, sc, in_width, NULL, row, stop_at_first, found);
    if (rc == 0)
        rc = walk_start(&w, &single, &none, &id, &it);
    strata_node_iter_free(&it);
    if (rc == 0 && single && none)
        handled = true;   /* a null or deleted start: nothing matches */
    else if (rc == 0 && single)
        rc = reach_exists(&w, id, &handled, found);
    if (rc == 0 && !handled)
        rc = match_walk(&w);
    walk_fini(&w);
    x->nused = used;
    x->used_base = base;
    return rc < 0 ? -1 : 0;
}

/* The walk from start node id: once, or for shortest paths by increasing
   length until one is found (a bound end) or no expansion reaches that
   length. */
static int walk_from(walk *w, uint64_t id)
{
    if (w->kind == CYPHER_PATH_PLAIN)
        return step_node(w, 0, id);
    w->nends = 0;
    const cypher_ast_node *r = w->el[1];
    if (!r->u.rel.var_length)
        return step_node(w, 0, id);
    if (shortest_bfs_applies(w)) {
        w->bfs = true;
        int rc = step_node(w, 0, id);
        w->bfs = false;
        return rc;
    }
    long last = var_slot(w, elem(w, 2), true);
    bool end_bound = last >= 0 && ((size_t)last < w->in_width || !value_is_null(&w->row[last]));
    int64_t min = r->u.rel.has_min ? r->u.rel.min : 1;
    for (int64_t len = min < 0 ? 0 : min; !r->u.rel.has_max || len <= r->u.rel.max; len++) {
        w->exact = len;
        w->reached = false;
        int rc = step_node(w, 0, id);
        w->exact = -1;
        if (rc != 0)
            return rc;
        if (!w->reached || (end_bound && w->nends > 0))
            break;
    }
    return 0;
}

/* Where the walk starts for this row: a bound end (the first node when
   both are) — *single with its id, or no id at all when it is null or
   gone — else the plan's candidates through *it.  Candidates are read as
   the walk goes, so a LIMIT downstream stops the scan; nothing writes
   while the iterator lives (updating clauses run after the whole
   pipeline, and MERGE writes after its match). */
/* The entries of the start's property map that the seek's exact keys
   (start_iter_exact) hold for every node it yields. */
static uint32_t seek_held_entries(const walk *w, uint32_t exact)
{
    const start_plan *p = w->plan;
    const cypher_ast_node *props = p->node->u.node.properties;
    if (!exact || elem(w, 0) != p->node || !props || props->kind != CYPHER_AST_MAP)
        return 0;
    uint32_t held = 0;
    for (size_t i = 0; i < props->u.list.count && i < 32; i++)
        for (size_t k = 0; k < p->nkeys; k++)
            if (exact >> k & 1 && p->eq[k] == props->u.list.items[i]->u.entry.value)
                held |= 1u << i;
    return held;
}

static int walk_start(walk *w, bool *single, bool *none, uint64_t *id, strata_node_iter **it)
{
    value *row = w->row;
    w->start_skip = 0;
    w->start_label_held = false;
    size_t in_width = w->in_width;
    long first = var_slot(w, w->el[0], true);
    long last = w->nel == 1 ? first : var_slot(w, w->el[w->nel - 1], true);
    w->end_slot[0] = first;     /* the rest of the walk reads them here */
    w->end_slot[1] = last;
    w->ends_known = true;
    bool first_bound = first >= 0 && ((size_t)first < in_width || !value_is_null(&row[first]));
    bool last_bound = last >= 0 && ((size_t)last < in_width || !value_is_null(&row[last]));
    if (first_bound || last_bound)
        w->reversed = w->nel > 1 && !first_bound;
    else
        w->reversed = w->plan->reversed;
    *it = NULL;
    *single = *none = false;
    long slot = elem(w, 0) == w->el[0] ? first : last;   /* walk order's first node */
    if (slot >= 0 && ((size_t)slot < in_width || !value_is_null(&row[slot]))) {
        *single = true;
        /* null (from OPTIONAL MATCH) or deleted: nothing matches */
        *none = value_kind(&row[slot]) != VAL_NODE ||
                !strata_node_exists(exec_view(w->x), row[slot].u.id);
        *id = *none ? 0 : row[slot].u.id;
        return 0;
    }
    if (w->plan->kind == START_ID_SEEK) {
        *single = true;
        return start_id(w->x, w->plan, w->sc, row, none, id);
    }
    /* A label scan's and a seek's nodes carry the plan's label, in the
       view the walk reads (nothing writes while it runs). */
    start_kind k = w->plan->kind;
    w->start_label_held = elem(w, 0) == w->plan->node &&
                          (k == START_LABEL_SCAN || k == START_INDEX_SEEK || k == START_RANGE_SEEK);
    uint32_t exact;
    if (k == START_INDEX_SEEK && w->plan->nkeys == 1) {
        if (start_point(w->x, w->plan, w->sc, row, single, none, id, &exact, it) != 0)
            return -1;
        if (*single || *it) {
            w->start_skip = *none ? 0 : seek_held_entries(w, exact);
            return 0;
        }
    }
    if (start_iter_exact(w->x, w->plan, w->sc, row, it, &exact) != 0)
        return -1;
    w->start_skip = seek_held_entries(w, exact);
    return 0;
}

static int match_walk(walk *w)
{
    bool single, none;
    uint64_t id;
    strata_node_iter *it;
    if (walk_start(w, &single, &none, &id, &it) != 0)
        return -1;
    if (single)
        return none ? 0 : walk_from(w, id);
    int rc = 0;
    strata_id cand;
    for (size_t i = 0; rc == 0 && it && strata_node_iter_next(it, &cand); i++) {
        if ((i & 1023) == 1023 && exec_check_interrupt(w->x) != 0)
            rc = -1;
        else
            rc = walk_from(w, cand);
    }
    strata_node_iter_free(&it);
    return rc;
}

/* ---- the clause ---- */

typedef struct match_state match_state;

typedef struct mclause {
    match_state *ms;
    stage *stage;
    size_t part;
    size_t emitted;
} mclause;

struct match_state {
    const cypher_ast_node *clause;
    scope sc;                   /* the clause's own (later stages may
                                   replace the query's) */
    size_t in_width;
    start_plan *plans;          /* one per part, in the order they run */
    size_t *order;              /* the parts' positions, in that order
                                   (in the plans' block) */
    size_t nparts;
    value *row;                 /* x->width values, taken at the first row */
    size_t width;
    /* The input row in progress (match_begin .. match_end): the walk of
       the first part, where it starts, and the rest of the parts. */
    bool row_open;
    mclause m;
    strata_node_iter *it;       /* candidates, or NULL */
    bool single;                /* one start node (bound), not yet walked */
    uint64_t single_id;
    size_t steps;
    size_t saved_base, saved_used;   /* relationship uniqueness outside */
    bool reach;                 /* each end once (reach_distinct_ok) */
    /* The one part starts with a seek of a unique index: its keys as
       planned, so match_resume can tell the index is still the same. */
    bool seek_kept;
    uint32_t seek_keys[IDX_MAX_KEYS];
    /* The first part's end nodes' slots (walk.end_slot), for the part
       ends_of - 1 (0: not yet looked up): the parts' order may change
       when they are planned again. */
    size_t ends_of;
    long end_slot[2];
    walk w;                     /* its paths in the block after plans */
};

static int next_part(exec *x, value *row, void *ctx)
{
    mclause *m = ctx;
    const cypher_ast_node *clause = m->ms->clause;
    const cypher_ast_list *parts = &clause->u.match.parts;
    if (m->part == parts->count) {
        if (clause->u.match.where) {
            evalctx c = {x, &m->ms->sc, row, NULL, NULL};
            tri t;
            if (eval_predicate(&c, clause->u.match.where, &t) != 0)
                return -1;
            if (t != TRI_TRUE)
                return 0;
        }
        m->emitted++;
        return stage_emit(x, m->stage, row);
    }
    const cypher_ast_node *part = parts->items[m->ms->order[m->part]];
    const start_plan *plan = &m->ms->plans[m->part++];
    int rc = walk_part(x, part, plan, &m->ms->sc, m->ms->in_width, clause->u.match.where,
                       m->part == parts->count, row, next_part, m);
    m->part--;
    return rc;
}

static int declare_part(exec *x, scope *sc, const cypher_ast_node *part)
{
    if (part->u.part.variable &&
        scope_add(x, sc, part->u.part.variable->u.name.ptr, part->u.part.variable->u.name.len,
                  NULL) != 0)
        return -1;
    const cypher_ast_list *el = &part->u.part.path->u.list;
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        const cypher_ast_node *v = e->kind == CYPHER_AST_NODE ? e->u.node.variable
                                                              : e->u.rel.variable;
        if (v && scope_add(x, sc, v->u.name.ptr, v->u.name.len, NULL) != 0)
            return -1;
    }
    return 0;
}

/* Bound before a part of a MATCH runs, whatever the row: an input column
   or a variable of a part placed before it. */
typedef struct clause_bound {
    const scope *sc;
    size_t in_width;
    const cypher_ast_node *clause;
    const bool *placed;
} clause_bound;

static bool same_name(const cypher_ast_node *var, const cypher_ast_str *name)
{
    return var && var->u.name.len == name->len && memcmp(var->u.name.ptr, name->ptr, name->len) == 0;
}

static bool part_binds(const cypher_ast_node *part, const cypher_ast_str *name)
{
    const cypher_ast_list *el = &part->u.part.path->u.list;
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        if (same_name(e->kind == CYPHER_AST_NODE ? e->u.node.variable : e->u.rel.variable, name))
            return true;
    }
    return same_name(part->u.part.variable, name);
}

static bool bound_before(const cypher_ast_str *name, void *ctx)
{
    const clause_bound *cb = ctx;
    long slot = scope_find(cb->sc, name->ptr, name->len);
    if (slot >= 0 && (size_t)slot < cb->in_width)
        return true;
    for (size_t p = 0; p < cb->clause->u.match.parts.count; p++)
        if (cb->placed[p] && part_binds(cb->clause->u.match.parts.items[p], name))
            return true;
    return false;
}

/* EXPLAIN / PROFILE: where the part starts, and how a shortest path is
   searched. */
static void note_plan(exec *x, const cypher_ast_node *part, const cypher_ast_node *where,
                      clause_bound *cb, const start_plan *plan, bool reach)
{
    profile_note_start(x, plan);
    if (reach)
        profile_note(x, "VarLengthExpand (BFS, distinct ends)");
    const cypher_ast_list *el = &part->u.part.path->u.list;
    if (part->u.part.kind == CYPHER_PATH_PLAIN || el->count != 3)
        return;
    const cypher_ast_node *a = el->items[0]->u.node.variable;
    const cypher_ast_node *b = el->items[2]->u.node.variable;
    const cypher_ast_node *r = el->items[1]->u.rel.variable;
    bool both = a && b && bound_before(&a->u.name, cb) && bound_before(&b->u.name, cb);
    const char *name = shortest_plan_name(part, where, both, r && bound_before(&r->u.name, cb));
    if (name)
        profile_note(x, name);
}

/* The plans, the order, the parts placed so far, and the first part's
   walk's room for the longest part (three arrays of longest entries). */
static size_t plan_block_size(size_t n, size_t longest)
{
    return n * (sizeof(start_plan) + sizeof(size_t)) +
           longest * (sizeof(uint64_t) + 2 * sizeof(size_t)) + n * sizeof(bool);
}

/* The order the parts run in and the start of each, planned once for the
   clause: greedily, the part cheapest to start given what the parts
   placed before it bind (a part sharing a variable with them starts from
   it), the written order on ties.  Rows are the same in any order. */
static int plan_parts(exec *x, match_state *ms, const scope *sc)
{
    const cypher_ast_node *clause = ms->clause;
    size_t n = ms->nparts;
    size_t longest = 1;
    for (size_t i = 0; i < n; i++) {
        size_t nel = clause->u.match.parts.items[i]->u.part.path->u.list.count;
        longest = nel > longest ? nel : longest;
    }
    /* one block (plan_block_size), kept when the clause is planned again
       (match_resume) */
    if (!ms->plans && !(ms->plans = exec_alloc(x, plan_block_size(n, longest), NULL)))
        return exec_oom(x);
    ms->order = (size_t *)(ms->plans + n);
    ms->w.ids = (uint64_t *)(ms->order + n);
    ms->w.seg_off = (size_t *)(ms->w.ids + longest);
    ms->w.seg_len = ms->w.seg_off + longest;
    bool *placed = (bool *)(ms->w.seg_len + longest);
    memset(placed, 0, n * sizeof *placed);
    clause_bound cb = {sc, ms->in_width, clause, placed};
    for (size_t k = 0; k < n; k++) {
        size_t best = n;
        start_plan other;   /* the first candidate is planned in place */
        for (size_t i = 0; i < n; i++) {
            if (placed[i])
                continue;
            plan_start(x, clause->u.match.parts.items[i], clause->u.match.where, bound_before,
                       &cb, best == n ? &ms->plans[k] : &other);
            if (best == n) {
                best = i;
            } else if (other.estimate < ms->plans[k].estimate) {
                best = i;
                ms->plans[k] = other;
            }
        }
        ms->order[k] = best;
        if (x->prof)   /* before the part counts as placed: its own names are not bound */
            note_plan(x, clause->u.match.parts.items[best], clause->u.match.where, &cb,
                      &ms->plans[k], ms->reach);
        placed[best] = true;
    }
    return 0;
}

/* One input row: every match of the parts, pushed on; for OPTIONAL
   MATCH with none, the row itself with the new variables null. */
/* Ends the input row in progress: what it holds is released, and a
   finished OPTIONAL MATCH that matched nothing passes the row on with its
   new variables null. */
static int match_end(exec *x, stage *s, bool finished)
{
    match_state *ms = s->state;
    int rc = 0;
    strata_node_iter_free(&ms->it);
    walk_fini(&ms->w);
    x->nused = ms->saved_used;
    x->used_base = ms->saved_base;
    ms->row_open = false;
    for (size_t i = ms->in_width; i < ms->width; i++)
        value_release(&ms->row[i]);
    if (finished && ms->m.emitted == 0 && ms->clause->u.match.optional)
        rc = stage_emit(x, s, ms->row);
    return rc;
}

/* Takes an input row: the walk of the first part is set up, and stepped
   one start node at a time by match_step. */
static int match_begin(exec *x, stage *s, const value *in)
{
    match_state *ms = s->state;
    if (!ms->row) {
        ms->width = x->width;
        ms->row = exec_calloc(x, (ms->width ? ms->width : 1) * sizeof(value));
        if (!ms->row)
            return exec_oom(x);
    }
    for (size_t i = 0; i < ms->width; i++)
        ms->row[i] = i < ms->in_width ? in[i] : value_null();   /* borrowed */
    /* relationship uniqueness covers this clause's parts only */
    ms->saved_base = x->used_base;
    ms->saved_used = x->nused;
    x->used_base = x->nused;
    ms->row_open = true;
    ms->m = (mclause){ms, s, 1, 0};   /* the first part is walked here */
    ms->steps = 0;
    const cypher_ast_node *part = ms->clause->u.match.parts.items[ms->order[0]];
    bool none = false;
    int rc = walk_init(&ms->w, x, part, &ms->plans[0], &ms->sc, ms->in_width,
                       ms->clause->u.match.where, ms->row, next_part, &ms->m);
    ms->w.where_in_search = ms->nparts == 1 && ms->clause->u.match.where;
    ms->w.reach = ms->reach;
    /* the end nodes' slots, looked up by name at the part's first row
       (walk_start) and kept for the next rows and runs */
    if (rc == 0 && ms->ends_of == ms->order[0] + 1) {
        ms->w.end_slot[0] = ms->end_slot[0];
        ms->w.end_slot[1] = ms->end_slot[1];
        ms->w.ends_known = true;
    }
    if (rc == 0)
        rc = walk_start(&ms->w, &ms->single, &none, &ms->single_id, &ms->it);
    if (rc == 0 && ms->ends_of != ms->order[0] + 1) {
        ms->end_slot[0] = ms->w.end_slot[0];
        ms->end_slot[1] = ms->w.end_slot[1];
        ms->ends_of = ms->order[0] + 1;
    }
    if (rc == 0 && none)
        ms->single = false;   /* nothing to walk: the row ends at the first step */
    if (rc != 0)
        match_end(x, s, false);
    return rc;
}

/* Walks the first part from one start node; *done once there is none. */
static int match_step(exec *x, stage *s, bool *done)
{
    match_state *ms = s->state;
    strata_id id;
    int rc;
    *done = false;
    if (ms->single) {
        ms->single = false;
        rc = walk_from(&ms->w, ms->single_id);
    } else if (ms->it && strata_node_iter_next(ms->it, &id)) {
        rc = ++ms->steps % 1024 == 0 && exec_check_interrupt(x) != 0 ? -1 : walk_from(&ms->w, id);
    } else {
        *done = true;
        return match_end(x, s, true);
    }
    if (rc != 0)
        match_end(x, s, false);
    return rc;
}

/* A whole input row at once (a MATCH after the first stage). */
static int match_row(exec *x, stage *s, const value *in)
{
    bool done = false;
    int rc = match_begin(x, s, in);
    while (rc == 0 && !done)
        rc = match_step(x, s, &done);
    return rc;
}

static void match_close(exec *x, stage *s)
{
    match_state *ms = s->state;
    if (!ms)
        return;
    if (ms->row_open)
        match_end(x, s, false);   /* stopped inside a row (LIMIT, error) */
    exec_free(x, ms->row);
    exec_free(x, ms->plans);
    scope_free(&ms->sc);
    exec_free(x, ms);
    s->state = NULL;
}

/* ---- parallel reading (pipeline.h, parallel.h) ---- */

/* The first part's start when it scans and the clause is not OPTIONAL
   (whose row with nulls depends on every candidate at once). */
static const start_plan *match_scan(const stage *s)
{
    const match_state *ms = s->state;
    if (ms->clause->u.match.optional)
        return NULL;
    switch (ms->plans[0].kind) {
    case START_ALL_NODES: case START_LABEL_SCAN: case START_INDEX_SEEK:
    case START_RANGE_SEEK: case START_LABEL_UNION:
        return &ms->plans[0];
    default:
        return NULL;
    }
}

static int match_begin_scan(exec *x, stage *s, const value *in, strata_node_iter **it)
{
    match_state *ms = s->state;
    *it = NULL;
    if (match_begin(x, s, in) != 0)
        return -1;
    *it = ms->it;
    ms->it = NULL;
    ms->single = false;
    return 0;
}

static int match_from(exec *x, stage *s, uint64_t id)
{
    match_state *ms = s->state;
    (void)x;
    return walk_from(&ms->w, id);
}


/* The index a unique seek's plan names, in the state now read, when it is
   the same index; else NULL.  A graph does not give a dropped index's id
   to another, but the kind, label and keys are compared all the same: a
   kept plan never seeks an index other than the one it chose. */
static const index_def *seek_index(exec *x, const start_plan *p)
{
    const index_set *set = exec_view(x)->ver->indexes;
    int pos = idxset_find(set, p->index);
    if (pos < 0)
        return NULL;
    const index_def *d = idxset_def(set, (uint32_t)pos);
    bool same = d->kind == IDX_UNIQUE && !d->on_rels && d->token == p->label &&
                d->nkeys == p->nkeys;
    return same ? d : NULL;
}

/* Remembers the keys of a one-part clause's unique seek (match_resume). */
static void keep_unique_seek(exec *x, match_state *ms)
{
    const start_plan *p = &ms->plans[0];
    const index_def *d = NULL;
    ms->seek_kept = ms->nparts == 1 && p->kind == START_INDEX_SEEK && p->unique &&
                    (d = seek_index(x, p)) != NULL;
    if (ms->seek_kept)
        memcpy(ms->seek_keys, d->keys, d->nkeys * sizeof *d->keys);
}

/* The run is over: an input row still in progress ends (its iterator
   and bindings let go), as match_close would, the stage staying open.
   The view the run read is still the executor's: a unique seek planned
   on it is noted. */
static void match_park(exec *x, stage *s)
{
    match_state *ms = s->state;
    if (ms->row_open)
        match_end(x, s, false);
    keep_unique_seek(x, ms);
}

/* Before the clause runs again: its parts planned on the state now read
   (indexes made or dropped, counts moved), as when it opened.  A seek of
   a unique index is kept while that index is there unchanged: on any
   state no start is estimated below its one row but a scan of a label no
   node carries, which finds nothing, as the seek does. */
static int match_resume(exec *x, stage *s)
{
    match_state *ms = s->state;
    if (ms->seek_kept) {
        const index_def *d = seek_index(x, &ms->plans[0]);
        if (d && memcmp(d->keys, ms->seek_keys, d->nkeys * sizeof *d->keys) == 0)
            return 0;
    }
    return plan_parts(x, ms, &ms->sc);
}

int match_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s)
{
    match_state *ms = exec_calloc(x, sizeof *ms);
    if (!ms)
        return exec_oom(x);
    s->state = ms;
    s->row = match_row;
    s->begin = match_begin;
    s->step = match_step;
    s->close = match_close;
    s->scan = match_scan;
    s->begin_scan = match_begin_scan;
    s->from = match_from;
    s->park = match_park;
    s->resume = match_resume;
    ms->clause = clause;
    ms->in_width = x->width;
    ms->nparts = clause->u.match.parts.count;
    for (size_t i = 0; i < ms->nparts; i++)
        if (declare_part(x, sc, clause->u.match.parts.items[i]) != 0)
            return -1;
    if (scope_copy(x, sc, &ms->sc) != 0)
        return -1;
    ms->reach = reach_distinct_ok(clause, x->run_last == clause ? x->run_next : NULL);
    return plan_parts(x, ms, sc);
}
