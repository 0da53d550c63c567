/* strata_diff: what turns one view's state into another's, for two views
   of one lineage (include/strata.h).

   Two versions of a lineage share every chunk neither side has written
   since they parted, so store_diff_nodes / store_diff_rels find the slots
   that differ by walking the two trees side by side and skipping every
   pointer they have in common: the cost is the differing leaves, not the
   graph.  Tokens and label sets are the lineage's, so ids compare
   directly. */
#include "core/graph_impl.h"

typedef struct differ {
    const version *a, *b;
    const catalog *cat;
    strata_change_fn fn;
    void *arg;
} differ;

static int emit(const differ *d, strata_change_kind kind, uint64_t id, uint32_t token,
                strata_token_kind tk, const value *old_value, const value *new_value)
{
    strata_change c = {
        .kind = kind,
        .id = id,
        .token = token,
        .name = intern_name(d->cat->tokens[tk], token, NULL),
        /* strata_value is a struct of one value: the pointers convert */
        .old_value = (const strata_value *)(const void *)old_value,
        .new_value = (const strata_value *)(const void *)new_value,
    };
    return d->fn(&c, d->arg);
}

/* Labels in one sorted set and not the other, as kind. */
static int label_changes(const differ *d, uint64_t id, uint32_t from, uint32_t to,
                         strata_change_kind added, strata_change_kind removed)
{
    size_t na = labelset_len(d->cat, from), nb = labelset_len(d->cat, to);
    size_t i = 0, j = 0;
    int rc = 0;
    while (rc == 0 && (i < na || j < nb)) {
        uint32_t x = i < na ? labelset_at(d->cat, from, i) : UINT32_MAX;
        uint32_t y = j < nb ? labelset_at(d->cat, to, j) : UINT32_MAX;
        if (i < na && (j == nb || x < y)) {
            rc = emit(d, removed, id, x, STRATA_LABEL, NULL, NULL);
            i++;
        } else if (j < nb && (i == na || y < x)) {
            rc = emit(d, added, id, y, STRATA_LABEL, NULL, NULL);
            j++;
        } else {
            i++, j++;
        }
    }
    return rc;
}

/* Properties set (new or changed) and removed between two records sorted
   by key; a NULL record has none. */
static int property_changes(const differ *d, uint64_t id, const prop_rec *from,
                            const prop_rec *to, strata_change_kind set,
                            strata_change_kind removed)
{
    if (from == to)
        return 0;
    uint32_t na = props_len(from), nb = props_len(to);
    uint32_t i = 0, j = 0;
    int rc = 0;
    while (rc == 0 && (i < na || j < nb)) {
        uint32_t x = i < na ? props_key_at(from, i) : UINT32_MAX;
        uint32_t y = j < nb ? props_key_at(to, j) : UINT32_MAX;
        if (i < na && (j == nb || x < y)) {
            rc = emit(d, removed, id, x, STRATA_KEY, props_val_at(from, i), NULL);
            i++;
        } else if (j < nb && (i == na || y < x)) {
            rc = emit(d, set, id, y, STRATA_KEY, NULL, props_val_at(to, j));
            j++;
        } else {
            const value *u = props_val_at(from, i), *v = props_val_at(to, j);
            if (!value_equivalent(u, v) || value_kind(u) != value_kind(v))
                rc = emit(d, set, id, y, STRATA_KEY, u, v);
            i++, j++;
        }
    }
    return rc;
}

/* A node created or deleted names no token (its labels follow as changes
   of their own): name NULL, not the name of whatever token 0 is. */
static int node_event(const differ *d, strata_change_kind kind, uint64_t id)
{
    strata_change c = { .kind = kind, .id = id };
    return d->fn(&c, d->arg);
}

static int node_changes(const differ *d, uint64_t id)
{
    const node_meta *x = store_node(&d->a->st, id), *y = store_node(&d->b->st, id);
    const prop_rec *px = x ? store_node_props(&d->a->st, id) : NULL;
    const prop_rec *py = y ? store_node_props(&d->b->st, id) : NULL;
    int rc = 0;
    if (!x && !y)
        return 0;   /* a free slot's list link moved */
    if (!x)
        rc = node_event(d, STRATA_NODE_CREATED, id);
    else if (!y)
        rc = node_event(d, STRATA_NODE_DELETED, id);
    if (rc == 0)
        rc = label_changes(d, id, x ? x->labelset : 0, y ? y->labelset : 0,
                           STRATA_LABEL_ADDED, STRATA_LABEL_REMOVED);
    if (rc == 0)
        rc = property_changes(d, id, px, py, STRATA_NODE_PROPERTY_SET,
                              STRATA_NODE_PROPERTY_REMOVED);
    return rc;
}

/* A relationship keeps its identity across the two states when its slot
   is live in both with the same endpoints and type. */
static bool same_rel(const rel_meta *x, const rel_meta *y)
{
    return x && y && x->start == y->start && x->end == y->end && x->type == y->type;
}

static int rel_event(const differ *d, strata_change_kind kind, uint64_t id, const rel_meta *r)
{
    strata_change c = {
        .kind = kind,
        .id = id,
        .token = r->type,
        .name = intern_name(d->cat->tokens[STRATA_RELTYPE], r->type, NULL),
        .start = r->start,
        .end = r->end,
    };
    return d->fn(&c, d->arg);
}

static int rel_deletion(const differ *d, uint64_t id)
{
    const rel_meta *x = store_rel(&d->a->st, id), *y = store_rel(&d->b->st, id);
    if (!x || same_rel(x, y))
        return 0;
    int rc = rel_event(d, STRATA_REL_DELETED, id, x);
    return rc ? rc : property_changes(d, id, store_rel_props(&d->a->st, id), NULL,
                                      STRATA_REL_PROPERTY_SET, STRATA_REL_PROPERTY_REMOVED);
}

static int rel_creation_or_change(const differ *d, uint64_t id)
{
    const rel_meta *x = store_rel(&d->a->st, id), *y = store_rel(&d->b->st, id);
    if (!y)
        return 0;
    const prop_rec *from = NULL;
    if (same_rel(x, y)) {
        from = store_rel_props(&d->a->st, id);
    } else {
        int rc = rel_event(d, STRATA_REL_CREATED, id, y);
        if (rc)
            return rc;
    }
    return property_changes(d, id, from, store_rel_props(&d->b->st, id),
                            STRATA_REL_PROPERTY_SET, STRATA_REL_PROPERTY_REMOVED);
}

static int each_id(const differ *d, const id_list *l, int (*step)(const differ *, uint64_t))
{
    for (size_t i = 0; i < l->n; i++) {
        int rc = step(d, l->ids[i]);
        if (rc)
            return rc;
    }
    return 0;
}

strata_status strata_diff(strata_view *from, strata_view *to, strata_change_fn fn, void *arg)
{
    if (!from || !to || !fn)
        return from ? view_fail(from, STRATA_EINVAL, "strata_diff: %s is NULL",
                                to ? "the callback" : "the second view")
                    : STRATA_EINVAL;
    if (from->ver->cat->lin != to->ver->cat->lin)
        return view_fail(from, STRATA_EINVAL,
                         "strata_diff: the two views are of unrelated graphs (a diff "
                         "compares a graph with its own states and branches)");
    mem_ctx *m = mem_scratch();
    differ d = { from->ver, to->ver, from->ver->cat, fn, arg };
    id_list nodes, rels;
    if (store_diff_nodes(&d.a->st, &d.b->st, m, &nodes) != 0)
        return view_fail(from, STRATA_ENOMEM, "out of memory comparing two views");
    if (store_diff_rels(&d.a->st, &d.b->st, m, &rels) != 0) {
        id_list_free(&nodes, m);
        return view_fail(from, STRATA_ENOMEM, "out of memory comparing two views");
    }
    int rc = each_id(&d, &rels, rel_deletion);
    if (rc == 0)
        rc = each_id(&d, &nodes, node_changes);
    if (rc == 0)
        rc = each_id(&d, &rels, rel_creation_or_change);
    id_list_free(&nodes, m);
    id_list_free(&rels, m);
    if (rc)
        return view_fail(from, STRATA_EINTERRUPTED, "strata_diff: stopped by the callback");
    return STRATA_OK;
}
