/*
 * The direct write calls.  Each one is atomic by construction: it checks
 * its arguments, then performs every fallible step (owning the chunks,
 * records and blocks it will touch, interning), none of which changes what
 * the graph means, and only then changes the graph with steps that cannot
 * fail.  A failure therefore leaves the graph exactly as it was.
 *
 * In a statement each write also journals what undoes it (core/txn.h):
 * its prepare phase reserves, once, the entries it will append, stated by
 * kind (a journal_need), and its commit phase appends them.
 */
#include <stdlib.h>
#include <string.h>

#include "core/index_maint.h"
#include "core/stats_maint.h"
#include "core/txn.h"
#include "core/wal.h"
#include "storage/sort_u32.h"

/* Validation has passed: from here the write may fork (txn_writable). */
#define MAKE_WRITABLE()                                                                  \
    do {                                                                                 \
        if (!(v = txn_writable(g))) {                                                    \
            s = STRATA_ENOMEM;                                                           \
            goto cleanup;                                                                \
        }                                                                                \
    } while (0)

/* Checks a token handed in by the caller. */
static strata_status check_token(strata_graph *g, strata_token_kind kind, strata_token t)
{
    static const char *const what[] = { "label", "relationship type", "property key" };
    if (t >= intern_count(g->cat->tokens[kind]))
        return graph_fail(g, STRATA_ENOTFOUND, "%s token %u was never interned", what[kind], t);
    /* Labels and types index the relationship statistics (rel_stats.h). */
    if (kind != STRATA_KEY && t >= RELSTATS_TOKEN_MAX)
        return graph_fail(g, STRATA_EFULL, "%s token %u is beyond the %u a graph's "
                          "relationship statistics count", what[kind], t, RELSTATS_TOKEN_MAX);
    return STRATA_OK;
}

static strata_status no_node(strata_graph *g, strata_id id)
{
    return graph_fail(g, STRATA_ENOTFOUND, "node %llu does not exist", (unsigned long long)id);
}

static strata_status no_rel(strata_graph *g, strata_id id)
{
    return graph_fail(g, STRATA_ENOTFOUND, "relationship %llu does not exist",
                      (unsigned long long)id);
}

static strata_status nomem(strata_graph *g, const char *what)
{
    return graph_fail(g, STRATA_ENOMEM, "out of memory: %s", what);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

size_t normalise_labels(uint32_t *l, size_t n)
{
    if (n > 16)
        qsort(l, n, sizeof *l, cmp_u32);
    else
        sort_u32_short(l, n);   /* a node has a few labels mostly */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || l[k - 1] != l[i])
            l[k++] = l[i];
    return k;
}

static int intern_labelset(catalog *c, const uint32_t *labels, size_t n, uint32_t *ls)
{
    return intern_add(c->labelsets, labels, n * sizeof *labels, ls);
}

/* The label set ls with label added (on) or removed (off). */
static int labelset_with(catalog *c, uint32_t ls, uint32_t label, bool on, uint32_t *out)
{
    size_t n = labelset_len(c, ls);
    uint32_t buf[MAX_LABELS_PER_NODE + 1];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = labelset_at(c, ls, i);
        if (t != label)
            buf[k++] = t;
    }
    if (on)
        buf[k++] = label;
    k = normalise_labels(buf, k);
    return intern_labelset(c, buf, k, out);
}

strata_status strata_node_create(strata_graph *g, const strata_token *labels, size_t n,
                                 strata_id *out)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_NODE_CREATE, .list = labels, .n = n, .out = out });
    if (!g)
        return STRATA_EINVAL;
    if (!out || (n && !labels))
        return graph_fail(g, STRATA_EINVAL, "strata_node_create: %s is NULL",
                          out ? "labels" : "out");
    if (n > MAX_LABELS_PER_NODE)
        return graph_fail(g, STRATA_EINVAL, "a node may carry at most %d labels, not %zu",
                          MAX_LABELS_PER_NODE, n);
    uint32_t sorted[MAX_LABELS_PER_NODE];
    for (size_t i = 0; i < n; i++) {
        strata_status s = check_token(g, STRATA_LABEL, labels[i]);
        if (s)
            return s;
        sorted[i] = labels[i];
    }
    n = normalise_labels(sorted, n);

    version *v = txn_write_begin(g);
    strata_status s = STRATA_OK;
    uint32_t ls;
    bool reuse = txn_reuse_node_ids(g);
    uint64_t id = store_next_node_id(&v->st, reuse);
    if (id >= SLOT_MAX_ID) {
        s = graph_fail(g, STRATA_EFULL, "no node ids left (%llu in use)",
                       (unsigned long long)id);
        goto cleanup;
    }
    MAKE_WRITABLE();
    if (intern_labelset(g->cat, sorted, n, &ls) != 0) {
        s = nomem(g, "interning a label set");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        if (labelidx_prepare(g->m, &v->labels, sorted[i], id) != 0) {
            s = nomem(g, "growing the label index");
            goto cleanup;
        }
    bool pushed = id == store_node_slots(&v->st);   /* a new slot at the end */
    if (txn_journal_reserve(g, &(journal_need){ .of[UNDO_NODE_CREATED] = 1 }) != 0 ||
        store_node_alloc(&v->st, g->m, ls, reuse, &id) != 0) {
        s = nomem(g, "allocating a node slot");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        labelidx_set(g->m, v->labels, sorted[i], id, true);
    undo_entry *e = txn_journal_add(g, UNDO_NODE_CREATED, id);
    if (e) {
        e->flag = pushed;
        e->key = ls;
    }
    *out = id;
cleanup:
    txn_write_finish(g, s);
    return s;
}

/* Owns the label index words of every label of a node about to change. */
static int prepare_labels(strata_graph *g, version *v, uint32_t ls, uint64_t node)
{
    size_t n = labelset_len(g->cat, ls);
    for (size_t i = 0; i < n; i++)
        if (labelidx_prepare(g->m, &v->labels, labelset_at(g->cat, ls, i), node) != 0)
            return -1;
    return 0;
}

static void clear_labels(strata_graph *g, version *v, uint32_t ls, uint64_t node)
{
    size_t n = labelset_len(g->cat, ls);
    for (size_t i = 0; i < n; i++)
        labelidx_set(g->m, v->labels, labelset_at(g->cat, ls, i), node, false);
}

static entity_state rel_state(const version *v, uint64_t rel, const uint32_t *type)
{
    entity_state e = { true, type, 1, { store_rel_props(&v->st, rel), false, 0, NULL } };
    return e;
}

/* Owns everything deleting rel touches — its slot, its type index bit, the
   blocks of its endpoints except skip's (a node deleted with it, whose
   block goes whole) — and plans its index removals. */
static strata_status prepare_rel_delete(strata_graph *g, version *v, uint64_t rel, uint64_t skip,
                                        idx_plan *plan)
{
    const rel_meta *r = store_rel(&v->st, rel);
    uint32_t ends[2] = { r->start, r->end }, type = r->type;
    entity_state before = rel_state(v, rel, &type);
    strata_status s = idxplan_build(g, v, rel, &before, NULL, UINT32_MAX, plan);
    if (s)
        return s;
    if (store_rel_own(&v->st, g->m, rel) != 0 ||
        labelidx_prepare(g->m, &v->rel_types, type, rel) != 0 ||
        stats_rel_prepare(g->cat, &v->stats, store_node(&v->st, ends[0])->labelset,
                          store_node(&v->st, ends[1])->labelset, type) != 0)
        return nomem(g, "deleting a relationship");
    for (int i = 0; i < 2; i++) {
        if (ends[i] == skip)
            continue;
        node_adj *a = store_node_adj_mut(&v->st, g->m, ends[i]);
        adj_edit del = { i == 0 ? ADJ_OUT : ADJ_IN, type, (uint32_t)rel };
        if (!a || adj_prepare_erase(g->m, &a->block, &del) != 0)
            return nomem(g, "deleting a relationship");
    }
    return STRATA_OK;
}

static void commit_rel_delete(strata_graph *g, version *v, uint64_t rel, uint64_t skip)
{
    rel_meta r = *store_rel(&v->st, rel);
    /* An endpoint's block not edited goes whole with its node. */
    bool out_edited = r.start != skip, in_edited = r.end != skip;
    if (out_edited)
        store_adj_erase(g->m, store_node_adj_mut(&v->st, g->m, r.start), ADJ_OUT, r.type,
                        (uint32_t)rel);
    if (in_edited)
        store_adj_erase(g->m, store_node_adj_mut(&v->st, g->m, r.end), ADJ_IN, r.type,
                        (uint32_t)rel);
    labelidx_set(g->m, v->rel_types, r.type, rel, false);
    stats_rel_count(g->cat, &v->stats, store_node(&v->st, r.start)->labelset,
                    store_node(&v->st, r.end)->labelset, r.type, -1);
    undo_entry *e = txn_journal_add(g, UNDO_REL_DELETED, rel);
    store_rel_free(&v->st, g->m, rel, e ? &e->u.rel.props : NULL);
    txn_note_rel_freed(g);
    if (e) {
        e->u.rel.start = r.start;
        e->u.rel.end = r.end;
        e->u.rel.type = r.type;
        e->u.rel.out_edited = out_edited;
        e->u.rel.in_edited = in_edited;
    }
}

/* Visits each relationship at a node once (a self-loop is in both
   directions), preparing (plan != NULL) or committing its deletion. */
static strata_status detach_pass(strata_graph *g, version *v, const adj_block *adj,
                                 uint64_t node, idx_plan *plan)
{
    for (uint32_t i = 0; i < adj_nsegments(adj); i++) {
        int dir;
        uint32_t type;
        adj_segment_info(adj, i, &dir, &type);
        for (adj_run r = adj_run_first(adj, i); r.n; r = adj_run_next(adj, i, r)) {
            for (const adj_entry *e = r.e; e < r.e + r.n; e++) {
                if (dir == ADJ_IN && e->other == node)
                    continue;
                if (!plan) {
                    commit_rel_delete(g, v, e->rel, node);
                    continue;
                }
                strata_status s = prepare_rel_delete(g, v, e->rel, node, plan);
                if (s)
                    return s;
            }
        }
    }
    return STRATA_OK;
}

static strata_status node_delete(strata_graph *g, strata_id node, bool detach)
{
    if (!g)
        return STRATA_EINVAL;
    version *v = txn_write_begin(g);
    strata_status s = STRATA_OK;
    idx_plan plan;
    idxplan_init(&plan);
    const node_meta *nm = store_node(&v->st, node);
    if (!nm) {
        s = no_node(g, node);
        goto cleanup;
    }
    uint32_t ls = nm->labelset;
    /* The node's own block is only read here (never written: it is
       released whole with the node), so it stays put while we walk it. */
    const adj_block *adj = store_node_adj(&v->st, node);
    if (adj_len(adj) && !detach) {
        s = graph_fail(g, STRATA_ECONNECTED,
                       "node %llu still has %u relationships; delete them first "
                       "or detach-delete the node",
                       (unsigned long long)node, adj_len(adj));
        goto cleanup;
    }
    MAKE_WRITABLE();
    uint32_t labels[MAX_LABELS_PER_NODE];
    entity_state before;
    node_state(g->cat, ls, store_node_props(&v->st, node), labels, &before);
    if ((s = idxplan_build(g, v, node, &before, NULL, UINT32_MAX, &plan)) ||
        (s = detach_pass(g, v, adj, node, &plan)))
        goto cleanup;
    /* A relationship per adjacency entry: a self-loop, in both directions,
       is counted twice, which only reserves one more than it appends. */
    journal_need need = { .of[UNDO_NODE_DELETED] = 1, .of[UNDO_REL_DELETED] = adj_len(adj),
                          .of[UNDO_INDEX_STACK] = plan.n };
    if (txn_journal_reserve(g, &need) != 0) {
        s = nomem(g, "deleting a node");
        goto cleanup;
    }
    if ((s = idxplan_prepare(g, v, &plan)))
        goto cleanup;
    if (store_node_own(&v->st, g->m, node) != 0 || prepare_labels(g, v, ls, node) != 0) {
        s = nomem(g, "deleting a node");
        goto cleanup;
    }
    idxplan_commit(g, v, &plan);
    detach_pass(g, v, adj, node, NULL);
    clear_labels(g, v, ls, node);
    undo_entry *e = txn_journal_add(g, UNDO_NODE_DELETED, node);
    if (e)
        e->key = ls;
    store_node_free(&v->st, g->m, node, e ? &e->u.node.props : NULL, e ? &e->u.node.adj : NULL);
    txn_note_node_freed(g);
cleanup:
    idxplan_free(&plan);
    txn_write_finish(g, s);
    return s;
}

strata_status strata_node_delete(strata_graph *g, strata_id node)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_NODE_DELETE, .id = node });
    return node_delete(g, node, false);
}

strata_status strata_node_detach_delete(strata_graph *g, strata_id node)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_NODE_DETACH, .id = node });
    return node_delete(g, node, true);
}

static strata_status node_label(strata_graph *g, strata_id node, strata_token label, bool on)
{
    if (!g)
        return STRATA_EINVAL;
    strata_status s = check_token(g, STRATA_LABEL, label);
    if (s)
        return s;
    version *v = txn_write_begin(g);
    idx_plan plan;
    idxplan_init(&plan);
    const node_meta *nm = store_node(&v->st, node);
    uint32_t ls, old_ls;
    if (!nm) {
        s = no_node(g, node);
        goto cleanup;
    }
    old_ls = nm->labelset;
    if (labelidx_has(v->labels, label, node) == on)
        goto cleanup;   /* already so: nothing to do */
    if (on && labelset_len(g->cat, old_ls) >= MAX_LABELS_PER_NODE) {
        s = graph_fail(g, STRATA_EINVAL, "node %llu already carries %d labels",
                       (unsigned long long)node, MAX_LABELS_PER_NODE);
        goto cleanup;
    }
    if (labelset_with(g->cat, old_ls, label, on, &ls) != 0) {
        s = nomem(g, "changing a label");
        goto cleanup;
    }
    uint32_t before_buf[MAX_LABELS_PER_NODE], after_buf[MAX_LABELS_PER_NODE];
    entity_state before, after;
    const prop_rec *props = store_node_props(&v->st, node);
    node_state(g->cat, old_ls, props, before_buf, &before);
    node_state(g->cat, ls, props, after_buf, &after);
    /* The plan is checked on the version as it is (shared or not) and
       stays valid across the fork, which shares the same indices. */
    if ((s = idxplan_build(g, v, node, &before, &after, UINT32_MAX, &plan)) ||
        (s = idxplan_check(g, v, &plan)))
        goto cleanup;
    MAKE_WRITABLE();
    if (txn_journal_reserve(g, &(journal_need){ .of[UNDO_LABELS] = 1,
                                                .of[UNDO_INDEX_STACK] = plan.n }) != 0) {
        s = nomem(g, "changing a label");
        goto cleanup;
    }
    if ((s = idxplan_prepare(g, v, &plan)))
        goto cleanup;
    node_meta *m;
    const adj_block *adj = store_node_adj(&v->st, node);
    if (labelidx_prepare(g->m, &v->labels, label, node) != 0 ||
        stats_label_prepare(&v->stats, g->m, label, adj) != 0 ||
        !(m = store_node_meta_mut(&v->st, g->m, node))) {
        s = nomem(g, "changing a label");
        goto cleanup;
    }
    m->labelset = ls;
    labelidx_set(g->m, v->labels, label, node, on);
    stats_label_move(&v->stats, g->m, label, adj, on ? +1 : -1);
    undo_entry *e = txn_journal_add(g, UNDO_LABELS, node);
    if (e)
        e->key = old_ls;
    idxplan_commit(g, v, &plan);
cleanup:
    idxplan_free(&plan);
    txn_write_finish(g, s);
    return s;
}

strata_status strata_node_add_label(strata_graph *g, strata_id node, strata_token label)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_LABEL_ADD, .id = node, .a = label });
    return node_label(g, node, label, true);
}

strata_status strata_node_remove_label(strata_graph *g, strata_id node, strata_token label)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_LABEL_REMOVE, .id = node, .a = label });
    return node_label(g, node, label, false);
}

strata_status strata_rel_create(strata_graph *g, strata_id start, strata_id end,
                                strata_token type, strata_id *out)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_REL_CREATE, .id = start, .b = end, .a = type,
                                      .out = out });
    if (!g)
        return STRATA_EINVAL;
    if (!out)
        return graph_fail(g, STRATA_EINVAL, "strata_rel_create: out is NULL");
    strata_status s = check_token(g, STRATA_RELTYPE, type);
    if (s)
        return s;
    version *v = txn_write_begin(g);
    bool reuse = txn_reuse_rel_ids(g);
    uint64_t id = store_next_rel_id(&v->st, reuse);
    node_adj *sb, *eb;
    if (!store_node(&v->st, start) || !store_node(&v->st, end)) {
        s = graph_fail(g, STRATA_ENOTFOUND, "cannot create a relationship: %s node %llu "
                       "does not exist", store_node(&v->st, start) ? "end" : "start",
                       (unsigned long long)(store_node(&v->st, start) ? end : start));
        goto cleanup;
    }
    if (id >= SLOT_MAX_ID) {
        s = graph_fail(g, STRATA_EFULL, "no relationship ids left");
        goto cleanup;
    }
    /* The segments each end would open; only a new (direction, type) pair
       counts against ADJ_MAX_SEGMENTS, never one more relationship in a
       pair the node has. */
    const adj_block *sa = store_node_adj(&v->st, start), *ea = store_node_adj(&v->st, end);
    uint32_t new_out = !adj_has_segment(sa, ADJ_OUT, type);
    uint32_t new_in = !adj_has_segment(ea, ADJ_IN, type);
    uint32_t start_segs = new_out + (start == end ? new_in : 0);
    if (adj_nsegments(sa) + start_segs > ADJ_MAX_SEGMENTS ||
        adj_nsegments(ea) + new_in > ADJ_MAX_SEGMENTS) {
        strata_id full = adj_nsegments(sa) + start_segs > ADJ_MAX_SEGMENTS ? start : end;
        s = graph_fail(g, STRATA_EFULL, "node %llu has relationships of too many types "
                       "(at most %d direction-type pairs per node)",
                       (unsigned long long)full, ADJ_MAX_SEGMENTS);
        goto cleanup;
    }
    MAKE_WRITABLE();
    adj_edit ins[2] = { { ADJ_OUT, type, (uint32_t)id }, { ADJ_IN, type, (uint32_t)id } };
    sb = store_node_adj_mut(&v->st, g->m, start);
    if (!sb || adj_prepare_insert(g->m, &sb->block, ins, start == end ? 2 : 1) != 0)
        goto oom;
    eb = store_node_adj_mut(&v->st, g->m, end);
    if (!eb || (start != end && adj_prepare_insert(g->m, &eb->block, &ins[1], 1) != 0))
        goto oom;
    uint32_t start_ls = store_node(&v->st, start)->labelset;
    uint32_t end_ls = store_node(&v->st, end)->labelset;
    if (labelidx_prepare(g->m, &v->rel_types, type, id) != 0 ||
        stats_rel_prepare(g->cat, &v->stats, start_ls, end_ls, type) != 0 ||
        txn_journal_reserve(g, &(journal_need){ .of[UNDO_REL_CREATED] = 1 }) != 0)
        goto oom;
    bool pushed = id == store_rel_slots(&v->st);
    if (store_rel_alloc(&v->st, g->m, (uint32_t)start, (uint32_t)end, type, reuse, &id) != 0)
        goto oom;
    /* sb stays valid across the second adj_mut: its chunks are already
       private, so nothing on its path is copied again. */
    store_adj_insert(sb, ADJ_OUT, type, (uint32_t)id, (uint32_t)end);
    store_adj_insert(eb, ADJ_IN, type, (uint32_t)id, (uint32_t)start);
    labelidx_set(g->m, v->rel_types, type, id, true);
    stats_rel_count(g->cat, &v->stats, start_ls, end_ls, type, +1);
    undo_entry *e = txn_journal_add(g, UNDO_REL_CREATED, id);
    if (e)
        e->flag = pushed;
    *out = id;
    goto cleanup;
oom:
    s = nomem(g, "creating a relationship");
cleanup:
    txn_write_finish(g, s);
    return s;
}

strata_status strata_rel_delete(strata_graph *g, strata_id rel)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_REL_DELETE, .id = rel });
    if (!g)
        return STRATA_EINVAL;
    version *v = txn_write_begin(g);
    strata_status s = STRATA_OK;
    idx_plan plan;
    idxplan_init(&plan);
    if (!store_rel(&v->st, rel))
        s = no_rel(g, rel);
    else if (!(v = txn_writable(g)))
        s = STRATA_ENOMEM;
    else if (!(s = prepare_rel_delete(g, v, rel, UINT64_MAX, &plan)) &&
             !(s = txn_journal_reserve(g, &(journal_need){ .of[UNDO_REL_DELETED] = 1,
                                                           .of[UNDO_INDEX_STACK] = plan.n })
                       ? nomem(g, "deleting a relationship")
                       : STRATA_OK) &&
             !(s = idxplan_prepare(g, v, &plan))) {
        idxplan_commit(g, v, &plan);
        commit_rel_delete(g, v, rel, UINT64_MAX);
    }
    idxplan_free(&plan);
    txn_write_finish(g, s);
    return s;
}

/* Whether v may be stored as a property: scalars and flat lists of
   non-null scalars. */
static bool storable_in(const value *v, bool in_list)
{
    if (value_is_temporal(v))
        return true;
    switch (value_kind(v)) {
    case VAL_BOOL:
    case VAL_INT:
    case VAL_FLOAT:
    case VAL_STRING:
        return true;
    case VAL_LIST:
        if (in_list)
            return false;
        for (size_t i = 0; i < value_list_len(v); i++)
            if (!storable_in(&value_list_items(v)[i], true))
                return false;
        return true;
    default:
        return false;
    }
}

bool prop_storable(const value *v) { return storable_in(v, false); }


static strata_status set_prop(strata_graph *g, bool is_rel, strata_id id, strata_token key,
                              const strata_value *val)
{
    if (!g)
        return STRATA_EINVAL;
    if (!val)
        return graph_fail(g, STRATA_EINVAL, "property value is NULL");
    strata_status s = check_token(g, STRATA_KEY, key);
    if (s)
        return s;
    bool remove = value_is_null(&val->v);
    if (!remove && !prop_storable(&val->v))
        return graph_fail(g, STRATA_ETYPE,
                          "a %s cannot be stored as a property (storable: boolean, integer, "
                          "float, string, temporal, and lists of those without nulls)",
                          value_type_name(&val->v));
    version *v = txn_write_begin(g);
    value copy = value_null();
    idx_plan plan;
    idxplan_init(&plan);
    const node_meta *nm = is_rel ? NULL : store_node(&v->st, id);
    const rel_meta *rm = is_rel ? store_rel(&v->st, id) : NULL;
    if (!nm && !rm) {
        s = is_rel ? no_rel(g, id) : no_node(g, id);
        goto cleanup;
    }
    /* The record is in the slot just read (storage/store.h): no second
       descent. */
    const prop_rec *rec = is_rel ? rm->props : nm->props;
    if (!remove && !props_get(rec, key) && props_len(rec) >= PROPS_MAX) {
        s = graph_fail(g, STRATA_EFULL, "%s %llu already has %d properties, the most one "
                       "entity can hold", is_rel ? "relationship" : "node",
                       (unsigned long long)id, PROPS_MAX);
        goto cleanup;
    }
    /* The slot and record read above stay valid across a fork: the old
       version lives on as a base, and they are shared, not moved. */
    uint32_t labelset = nm ? nm->labelset : 0, type = rm ? rm->type : 0;
    if (!remove && value_clone(g->m, &val->v, &copy) != 0) {
        s = nomem(g, "copying a property value");
        goto cleanup;
    }
    if (idxset_len(v->indexes)) {
        uint32_t tokens[MAX_LABELS_PER_NODE];
        entity_state before, after;
        if (is_rel) {
            tokens[0] = type;
            before = rel_state(v, id, tokens);
        } else {
            node_state(g->cat, labelset, rec, tokens, &before);
        }
        after = before;
        after.props = (props_view){ rec, true, key, remove ? NULL : &copy };
        /* Checked before the fork (a refused write must not fork); the
           plan stays valid across it, which shares the same indices. */
        if ((s = idxplan_build(g, v, id, &before, &after, key, &plan)) ||
            (s = idxplan_check(g, v, &plan)))
            goto cleanup;
    }
    MAKE_WRITABLE();
    if (txn_journal_reserve(g, &(journal_need){ .of[UNDO_PROP] = 1,
                                                .of[UNDO_INDEX_STACK] = plan.n }) != 0) {
        s = nomem(g, "setting a property");
        goto cleanup;
    }
    if ((s = idxplan_prepare(g, v, &plan)))
        goto cleanup;
    prop_rec **rp = is_rel ? store_rel_props_mut(&v->st, g->m, id)
                           : store_node_props_mut(&v->st, g->m, id);
    value old = value_null();
    value *keep_old = stmt_open(g) ? &old : NULL;
    int rc = !rp ? -1
             : remove ? props_remove(g->m, rp, key, keep_old)
                      : props_set(g->m, rp, key, value_retain(copy), keep_old);
    if (rc != 0) {
        s = nomem(g, "setting a property");
        goto cleanup;
    }
    undo_entry *e = txn_journal_add(g, UNDO_PROP, id);
    if (e) {
        e->flag = is_rel;
        e->key = key;
        e->u.old = old;
    }
    if (plan.n)
        idxplan_commit(g, v, &plan);
cleanup:
    value_release(&copy);
    if (plan.c)
        idxplan_free(&plan);
    txn_write_finish(g, s);
    return s;
}

strata_status strata_node_set(strata_graph *g, strata_id node, strata_token key,
                              const strata_value *val)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_NODE_SET, .id = node, .a = key,
                                      .val = val ? &val->v : NULL });
    return set_prop(g, false, node, key, val);
}

strata_status strata_rel_set(strata_graph *g, strata_id rel, strata_token key,
                             const strata_value *val)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_REL_SET, .id = rel, .a = key,
                                      .val = val ? &val->v : NULL });
    return set_prop(g, true, rel, key, val);
}

static strata_status remove_prop(strata_graph *g, bool is_rel, strata_id id, strata_token key)
{
    static const strata_value null_value = { { 0 } };
    return set_prop(g, is_rel, id, key, &null_value);
}

strata_status strata_node_remove(strata_graph *g, strata_id node, strata_token key)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_NODE_SET, .id = node, .a = key });
    return remove_prop(g, false, node, key);
}

strata_status strata_rel_remove(strata_graph *g, strata_id rel, strata_token key)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_REL_SET, .id = rel, .a = key });
    return remove_prop(g, true, rel, key);
}
