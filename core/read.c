/* The read calls: everything here reads one immutable version through a
   view, so nothing locks. */
#include <string.h>

#include "core/adj_cursor.h"
#include "core/graph_impl.h"

struct strata_edge_iter {
    version *ver;     /* held: the iterator outlives any view */
    adj_cursor c;
};

#define VIEW_CHECK(v)                                                                   \
    do {                                                                                \
        if (!(v))                                                                       \
            return STRATA_EINVAL;                                                       \
    } while (0)

static strata_status no_node(strata_view *v, strata_id id)
{
    return view_fail(v, STRATA_ENOTFOUND, "node %llu does not exist", (unsigned long long)id);
}

static strata_status no_rel(strata_view *v, strata_id id)
{
    return view_fail(v, STRATA_ENOTFOUND, "relationship %llu does not exist",
                     (unsigned long long)id);
}

uint64_t strata_node_count(const strata_view *v) { return v ? v->ver->st.node_live : 0; }
uint64_t strata_rel_count(const strata_view *v) { return v ? v->ver->st.rel_live : 0; }

bool strata_node_exists(const strata_view *v, strata_id node)
{
    return v && store_node(&v->ver->st, node);
}

bool strata_rel_exists(const strata_view *v, strata_id rel)
{
    return v && store_rel(&v->ver->st, rel);
}

strata_status strata_node_labels(strata_view *v, strata_id node, strata_token *buf, size_t cap,
                                 size_t *n)
{
    VIEW_CHECK(v);
    if (!n || (cap && !buf))
        return view_fail(v, STRATA_EINVAL, "strata_node_labels: %s is NULL", n ? "buf" : "n");
    const node_meta *nm = store_node(&v->ver->st, node);
    if (!nm)
        return no_node(v, node);
    *n = labelset_len(v->ver->cat, nm->labelset);
    for (size_t i = 0; i < *n && i < cap; i++)
        buf[i] = labelset_at(v->ver->cat, nm->labelset, i);
    return STRATA_OK;
}

strata_status strata_node_has_label(strata_view *v, strata_id node, strata_token label,
                                    bool *out)
{
    VIEW_CHECK(v);
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_node_has_label: out is NULL");
    if (!store_node(&v->ver->st, node))
        return no_node(v, node);
    *out = labelidx_has(v->ver->labels, label, node);
    return STRATA_OK;
}

static strata_status keys_of(strata_view *v, const prop_rec *r, strata_token *buf, size_t cap,
                             size_t *n)
{
    *n = props_len(r);
    for (size_t i = 0; i < *n && i < cap; i++)
        buf[i] = props_key_at(r, (uint32_t)i);
    (void)v;
    return STRATA_OK;
}

strata_status strata_node_keys(strata_view *v, strata_id node, strata_token *buf, size_t cap,
                               size_t *n)
{
    VIEW_CHECK(v);
    if (!n || (cap && !buf))
        return view_fail(v, STRATA_EINVAL, "strata_node_keys: %s is NULL", n ? "buf" : "n");
    if (!store_node(&v->ver->st, node))
        return no_node(v, node);
    return keys_of(v, store_node_props(&v->ver->st, node), buf, cap, n);
}

strata_status strata_rel_keys(strata_view *v, strata_id rel, strata_token *buf, size_t cap,
                              size_t *n)
{
    VIEW_CHECK(v);
    if (!n || (cap && !buf))
        return view_fail(v, STRATA_EINVAL, "strata_rel_keys: %s is NULL", n ? "buf" : "n");
    if (!store_rel(&v->ver->st, rel))
        return no_rel(v, rel);
    return keys_of(v, store_rel_props(&v->ver->st, rel), buf, cap, n);
}

/* A new API value sharing the stored one (no copy of string bytes). */
static strata_status hand_out(strata_view *v, const value *stored, strata_value **out)
{
    strata_value *r = mem_alloc(mem_scratch(), sizeof *r);
    if (!r)
        return view_fail(v, STRATA_ENOMEM, "out of memory returning a property value");
    r->v = stored ? value_retain(*stored) : value_null();
    *out = r;
    return STRATA_OK;
}

strata_status strata_node_get(strata_view *v, strata_id node, strata_token key,
                              strata_value **out)
{
    VIEW_CHECK(v);
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_node_get: out is NULL");
    const node_meta *nm = store_node(&v->ver->st, node);
    if (!nm)
        return no_node(v, node);
    return hand_out(v, props_get(nm->props, key), out);
}

strata_status strata_rel_get(strata_view *v, strata_id rel, strata_token key,
                             strata_value **out)
{
    VIEW_CHECK(v);
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_rel_get: out is NULL");
    const rel_meta *rm = store_rel(&v->ver->st, rel);
    if (!rm)
        return no_rel(v, rel);
    return hand_out(v, props_get(rm->props, key), out);
}

/* Overwrites a caller's handle with a stored value (shared, not copied). */
static void read_into(const value *stored, strata_value *into)
{
    value_release(&into->v);
    into->v = stored ? value_retain(*stored) : value_null();
}

strata_status strata_node_read(strata_view *v, strata_id node, strata_token key,
                               strata_value *into)
{
    VIEW_CHECK(v);
    if (!into)
        return view_fail(v, STRATA_EINVAL, "strata_node_read: into is NULL");
    /* the slot found once: it holds the property record too */
    const node_meta *nm = store_node(&v->ver->st, node);
    if (!nm)
        return no_node(v, node);
    read_into(props_get(nm->props, key), into);
    return STRATA_OK;
}

strata_status strata_rel_read(strata_view *v, strata_id rel, strata_token key,
                              strata_value *into)
{
    VIEW_CHECK(v);
    if (!into)
        return view_fail(v, STRATA_EINVAL, "strata_rel_read: into is NULL");
    const rel_meta *rm = store_rel(&v->ver->st, rel);
    if (!rm)
        return no_rel(v, rel);
    read_into(props_get(rm->props, key), into);
    return STRATA_OK;
}

/* The null a borrowed read of an absent property points to: immutable,
   shared by every view and thread. */
static const value absent = { .type = VAL_NULL };

static const strata_value *peeked(const value *stored)
{
    return value_borrow_handle(stored ? stored : &absent);
}

strata_status strata_node_peek(strata_view *v, strata_id node, strata_token key,
                               const strata_value **out)
{
    VIEW_CHECK(v);
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_node_peek: out is NULL");
    const node_meta *nm = store_node(&v->ver->st, node);
    if (!nm)
        return no_node(v, node);
    *out = peeked(props_get(nm->props, key));
    return STRATA_OK;
}

/* How many reads of a batch are in flight at once: enough to overlap
   their cache misses, few enough that what the first stage fetched is
   still in the first-level cache when the last reads it. */
#define PEEK_WAY 16

/* Fetches ahead what reading a value will touch: a heap string's body. */
static void prefetch_value(const value *val)
{
    if (val && value_kind(val) == VAL_STRING && val->inl_len > VALUE_INLINE_MAX)
        __builtin_prefetch(val->u.h);
}

/* One batch of up to PEEK_WAY reads in three stages, each fetching ahead
   what the next one reads, so that their misses overlap instead of
   following one another: the slots, then the live slots' property
   records, then the values (and a string's bytes, for the caller). */
static void peek_batch(const store *st, const strata_id *nodes, size_t m, strata_token key,
                       const strata_value **out)
{
    const node_meta *slot[PEEK_WAY];
    for (size_t i = 0; i < m; i++) {
        uint64_t run;
        slot[i] = nodes[i] < store_node_slots(st) ? store_node_meta_run(st, nodes[i], &run)
                                                  : NULL;
        if (slot[i])
            __builtin_prefetch(slot[i]);
    }
    for (size_t i = 0; i < m; i++) {
        if (slot[i] && slot[i]->link != SLOT_LIVE)
            slot[i] = NULL;
        if (slot[i] && slot[i]->props)
            __builtin_prefetch(slot[i]->props);
    }
    for (size_t i = 0; i < m; i++) {
        const value *val = slot[i] ? props_get(slot[i]->props, key) : NULL;
        prefetch_value(val);
        out[i] = slot[i] ? peeked(val) : NULL;
    }
}

strata_status strata_nodes_peek(strata_view *v, const strata_id *nodes, size_t n,
                                strata_token key, const strata_value **out)
{
    VIEW_CHECK(v);
    if (n && (!nodes || !out))
        return view_fail(v, STRATA_EINVAL, "strata_nodes_peek: %s is NULL",
                         nodes ? "out" : "nodes");
    for (size_t b = 0; b < n; b += PEEK_WAY)
        peek_batch(&v->ver->st, nodes + b, n - b < PEEK_WAY ? n - b : PEEK_WAY, key, out + b);
    return STRATA_OK;
}

strata_status strata_rel_peek(strata_view *v, strata_id rel, strata_token key,
                              const strata_value **out)
{
    VIEW_CHECK(v);
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_rel_peek: out is NULL");
    const rel_meta *rm = store_rel(&v->ver->st, rel);
    if (!rm)
        return no_rel(v, rel);
    *out = peeked(props_get(rm->props, key));
    return STRATA_OK;
}

strata_status strata_rel_info(strata_view *v, strata_id rel, strata_id *start, strata_id *end,
                              strata_token *type)
{
    VIEW_CHECK(v);
    const rel_meta *r = store_rel(&v->ver->st, rel);
    if (!r)
        return no_rel(v, rel);
    if (start)
        *start = r->start;
    if (end)
        *end = r->end;
    if (type)
        *type = r->type;
    return STRATA_OK;
}

static bool valid_direction(strata_direction d)
{
    return d == STRATA_OUT || d == STRATA_IN || d == STRATA_BOTH;
}

strata_status strata_node_degree(strata_view *v, strata_id node, strata_direction dir,
                                 strata_token type, uint64_t *out)
{
    VIEW_CHECK(v);
    if (!out || !valid_direction(dir))
        return view_fail(v, STRATA_EINVAL, "strata_node_degree: %s",
                         out ? "bad direction" : "out is NULL");
    if (!store_node(&v->ver->st, node))
        return no_node(v, node);
    const adj_block *b = store_node_adj(&v->ver->st, node);
    uint64_t n = 0;
    for (uint32_t i = 0; i < adj_nsegments(b); i++) {
        int d;
        uint32_t t;
        uint32_t cnt = adj_segment_info(b, i, &d, &t);
        if (!adj_segment_wanted(d, t, (int)dir, type))
            continue;
        n += cnt;
        if (dir == STRATA_BOTH && d == ADJ_IN)
            for (adj_run r = adj_run_first(b, i); r.n; r = adj_run_next(b, i, r))
                for (uint32_t k = 0; k < r.n; k++)
                    n -= r.e[k].other == node;   /* self-loops count once */
    }
    *out = n;
    return STRATA_OK;
}

/* ---- iterators ------------------------------------------------------------ */

strata_status iter_new(strata_view *v, iter_mode mode, strata_node_iter **out)
{
    strata_node_iter *it = mem_calloc(mem_scratch(), sizeof *it);
    if (!it)
        return view_fail(v, STRATA_ENOMEM, "out of memory starting an iteration");
    it->ver = v->ver;
    version_retain(it->ver);
    it->mode = mode;
    it->lo = value_null();
    it->hi = value_null();
    *out = it;
    return STRATA_OK;
}

strata_status strata_nodes(strata_view *v, strata_node_iter **out)
{
    VIEW_CHECK(v);
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_nodes: out is NULL");
    return iter_new(v, ITER_ALL_NODES, out);
}

static strata_status bitmap_iter(strata_view *v, strata_token_kind kind, strata_token tok,
                                 strata_node_iter **out)
{
    static const char *const what[] = { "label", "relationship type" };
    VIEW_CHECK(v);
    if (!out)
        return view_fail(v, STRATA_EINVAL, "iterating by %s: out is NULL", what[kind]);
    if (!intern_name(v->ver->cat->tokens[kind], tok, NULL))
        return view_fail(v, STRATA_ENOTFOUND, "no %s with token %u", what[kind], tok);
    strata_status s = iter_new(v, ITER_BITMAP, out);
    if (s == STRATA_OK) {
        (*out)->bitmap = kind == STRATA_LABEL ? v->ver->labels : v->ver->rel_types;
        (*out)->token = tok;
    }
    return s;
}

strata_status strata_nodes_by_label(strata_view *v, strata_token label, strata_node_iter **out)
{
    return bitmap_iter(v, STRATA_LABEL, label, out);
}

strata_status strata_nodes_by_any_label(strata_view *v, const strata_token *labels, size_t n,
                                        strata_node_iter **out)
{
    VIEW_CHECK(v);
    if (!out || !labels || n == 0 || n > STRATA_ANY_LABEL_MAX)
        return view_fail(v, STRATA_EINVAL, "strata_nodes_by_any_label: %s",
                         !out ? "out is NULL" : !labels ? "labels is NULL"
                                                        : "between 1 and 16 labels");
    for (size_t i = 0; i < n; i++)
        if (!intern_name(v->ver->cat->tokens[STRATA_LABEL], labels[i], NULL))
            return view_fail(v, STRATA_ENOTFOUND, "no label with token %u", labels[i]);
    strata_status s = iter_new(v, ITER_ANY_LABEL, out);
    if (s != STRATA_OK)
        return s;
    (*out)->bitmap = v->ver->labels;
    for (size_t i = 0; i < n; i++) {
        (*out)->tokens[i] = labels[i];
        (*out)->ahead[i] = labelidx_next(v->ver->labels, labels[i], 0);
    }
    (*out)->ntokens = n;
    return STRATA_OK;
}

/* ITER_ANY_LABEL: the least of the labels' next members, each label moved
   past it (a node with several of the labels comes once). */
static bool any_label_next(strata_node_iter *it, strata_id *node)
{
    uint64_t least = UINT64_MAX;
    for (size_t i = 0; i < it->ntokens; i++)
        least = it->ahead[i] < least ? it->ahead[i] : least;
    if (least == UINT64_MAX)
        return false;
    for (size_t i = 0; i < it->ntokens; i++)
        if (it->ahead[i] == least)
            it->ahead[i] = labelidx_next(it->bitmap, it->tokens[i], least + 1);
    *node = least;
    return true;
}

strata_status strata_rels_by_type(strata_view *v, strata_token type, strata_node_iter **out)
{
    return bitmap_iter(v, STRATA_RELTYPE, type, out);
}

/* Whether an index entry's key lies within the iterator's bounds; sets
   *past when it and everything after it lies beyond them. */
static bool in_bounds(const strata_node_iter *it, const value *key, bool *past)
{
    *past = false;
    if (it->exact) {
        *past = value_order(key, &it->lo) != 0;
        return !*past;
    }
    const value *bound = value_is_null(&it->lo) ? &it->hi : &it->lo;
    int cmp;
    /* Entries are ordered by type first: leaving the bound's type ends the
       range; NaN (comparable but unordered) is skipped. */
    int rc = value_compare(key, bound, &cmp);
    if (rc < 0) {
        *past = true;
        return false;
    }
    if (rc > 0)
        return false;
    if (!value_is_null(&it->lo) && (cmp < 0 || (cmp == 0 && !it->lo_incl)))
        return false;
    if (!value_is_null(&it->hi)) {
        rc = value_compare(key, &it->hi, &cmp);
        if (rc > 0)
            return false;
        if (rc < 0 || cmp > 0 || (cmp == 0 && !it->hi_incl)) {
            *past = true;
            return false;
        }
    }
    return true;
}

bool strata_node_iter_next(strata_node_iter *it, strata_id *node)
{
    if (!it || !node)
        return false;
    const store *s = &it->ver->st;
    switch (it->mode) {
    case ITER_ANY_LABEL:
        return any_label_next(it, node);
    case ITER_BITMAP: {
        uint64_t n = it->next == UINT64_MAX ? UINT64_MAX
                                            : labelidx_next(it->bitmap, it->token, it->next);
        it->next = n == UINT64_MAX ? UINT64_MAX : n + 1;
        *node = n;
        return n != UINT64_MAX;
    }
    case ITER_INDEX: {
        const value *key;
        uint64_t id;
        while (it->cur && lstack_cursor_get(it->cur, &key, &id)) {
            bool past;
            bool ok = in_bounds(it, key, &past);
            if (past) {
                lstack_cursor_free(&it->cur, mem_scratch());
                return false;
            }
            lstack_cursor_next(it->cur);
            if (ok) {
                *node = id;
                return true;
            }
        }
        return false;
    }
    case ITER_ALL_NODES:
        while (it->next < store_node_slots(s)) {
            uint64_t n = it->next++;
            if (store_node(s, n)) {
                *node = n;
                return true;
            }
        }
        return false;
    }
    return false;
}

void strata_node_iter_free(strata_node_iter **it)
{
    if (!it || !*it)
        return;
    lstack_cursor_free(&(*it)->cur, mem_scratch());
    value_release(&(*it)->lo);
    value_release(&(*it)->hi);
    version_release(&(*it)->ver);
    mem_free_sized(mem_scratch(), *it, sizeof **it);
    *it = NULL;
}

strata_status strata_neighbours(strata_view *v, strata_id node, strata_direction dir,
                                strata_token type, strata_edge_iter **out)
{
    VIEW_CHECK(v);
    if (!out || !valid_direction(dir))
        return view_fail(v, STRATA_EINVAL, "strata_neighbours: %s",
                         out ? "bad direction" : "out is NULL");
    if (!store_node(&v->ver->st, node))
        return no_node(v, node);
    strata_edge_iter *it = mem_alloc(mem_scratch(), sizeof *it);
    if (!it)
        return view_fail(v, STRATA_ENOMEM, "out of memory starting an iteration");
    it->ver = v->ver;
    version_retain(it->ver);
    adj_cursor_open(it->ver, node, dir, type, &it->c);
    *out = it;
    return STRATA_OK;
}

bool strata_edge_iter_next(strata_edge_iter *it, strata_id *rel, strata_id *other)
{
    return it && adj_cursor_next(&it->c, rel, other);
}

void strata_edge_iter_free(strata_edge_iter **it)
{
    if (!it || !*it)
        return;
    version_release(&(*it)->ver);
    mem_free_sized(mem_scratch(), *it, sizeof **it);
    *it = NULL;
}

/* ---- the graph handle, for a query on it (core/graph_handle.h) ----------- */

catalog *graph_catalog(const strata_graph *g) { return g->cat; }

version *graph_query_version(strata_graph *g) { return graph_writer_version(g); }
