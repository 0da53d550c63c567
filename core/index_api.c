/* Index DDL and index reads.  Maintenance on write is index_maint.c. */
#include <math.h>
#include <string.h>

#include "core/index_maint.h"
#include "core/txn.h"
#include "core/wal.h"
#include "storage/utf8.h"

static const char *const kind_names[] = { "hash", "range", "unique" };

strata_status index_build(strata_graph *g, version *v, const index_def *d,
                                 level_stack **out)
{
    level_stack *ls = NULL;
    strata_status s = STRATA_OK;
    if (lstack_create(&ls, g->m, idx_hashed(d)) != 0)
        goto nomem;
    for (uint64_t id = idx_next_member(v, d, 0); id != UINT64_MAX;
         id = idx_next_member(v, d, id + 1)) {
        value key;
        int r = idx_entity_key(v, d, g->m, id, &key);
        if (r < 0)
            goto nomem;
        if (r == 0)
            continue;
        if (d->kind == IDX_UNIQUE) {
            lstack_cursor *c = lstack_seek(ls, mem_scratch(), &key);
            const value *k;
            uint64_t other;
            bool dup = c && lstack_cursor_get(c, &k, &other) && value_order(k, &key) == 0;
            lstack_cursor_free(&c, mem_scratch());
            if (dup) {
                value_release(&key);
                s = graph_fail(g, STRATA_ECONSTRAINT,
                               "cannot create the unique index: %s %llu and %llu have the "
                               "same value", d->on_rels ? "relationships" : "nodes",
                               (unsigned long long)other, (unsigned long long)id);
                goto fail;
            }
        }
        if (lstack_prepare(&ls, &g->pool, g->m, 1) != 0) {
            value_release(&key);
            goto nomem;
        }
        lstack_insert(ls, &g->pool, g->m, &key, id);
        value_release(&key);
    }
    *out = ls;
    return STRATA_OK;
nomem:
    s = graph_fail(g, STRATA_ENOMEM, "out of memory building an index");
fail:
    lstack_release(g->m, &ls);
    return s;
}

strata_status strata_index_create(strata_graph *g, strata_index_kind kind, bool relationships,
                                  strata_token token, const strata_token *keys, size_t nkeys,
                                  strata_index *out)
{
    return strata_index_create_named(g, kind, relationships, token, keys, nkeys, NULL, out);
}

strata_status strata_index_create_named(strata_graph *g, strata_index_kind kind,
                                        bool relationships, strata_token token,
                                        const strata_token *keys, size_t nkeys,
                                        const char *name, strata_index *out)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_INDEX_CREATE, .kind = (uint8_t)kind,
                                      .flag = relationships, .a = token, .list = keys,
                                      .n = nkeys, .name = name, .idx_out = out });
    if (!g)
        return STRATA_EINVAL;
    if (!out || !keys)
        return graph_fail(g, STRATA_EINVAL, "strata_index_create: %s is NULL",
                          out ? "keys" : "out");
    if (kind < STRATA_INDEX_HASH || kind > STRATA_INDEX_UNIQUE)
        return graph_fail(g, STRATA_EINVAL, "unknown index kind %d", (int)kind);
    if (nkeys < 1 || nkeys > IDX_MAX_KEYS)
        return graph_fail(g, STRATA_EINVAL, "an index has 1 to %d keys, not %zu", IDX_MAX_KEYS,
                          nkeys);
    strata_token_kind tk = relationships ? STRATA_RELTYPE : STRATA_LABEL;
    if (token >= intern_count(g->cat->tokens[tk]))
        return graph_fail(g, STRATA_ENOTFOUND, "%s token %u was never interned",
                          relationships ? "relationship type" : "label", token);
    if (name && strlen(name) >= IDX_NAME_MAX)
        return graph_fail(g, STRATA_EINVAL, "an index name has at most %d bytes",
                          IDX_NAME_MAX - 1);
    size_t bad;
    if (name && !utf8_check(name, strlen(name), &bad))
        return graph_fail(g, STRATA_EINVAL, "an index name must be valid UTF-8 (byte %zu is not)",
                          bad + 1);
    index_def d = { .kind = (uint8_t)kind, .on_rels = relationships, .nkeys = (uint8_t)nkeys,
                    .token = token };
    if (name)
        memcpy(d.name, name, strlen(name) + 1);
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i] >= intern_count(g->cat->tokens[STRATA_KEY]))
            return graph_fail(g, STRATA_ENOTFOUND, "property key token %u was never interned",
                              keys[i]);
        for (size_t j = 0; j < i; j++)
            if (keys[j] == keys[i])
                return graph_fail(g, STRATA_EINVAL, "an index names property key %u twice",
                                  keys[i]);
        d.keys[i] = keys[i];
    }
    version *v = graph_write_begin(g);
    strata_status s;
    level_stack *ls = NULL;
    int same = idxset_find_same(v->indexes, &d);
    if (stmt_open(g) || txn_open(g)) {
        s = graph_fail(g, STRATA_EINVAL, "schema changes run outside statements and "
                                         "transactions");
    } else if (same >= 0) {
        *out = idxset_def(v->indexes, (uint32_t)same)->id;
        s = graph_fail(g, STRATA_EINVAL, "an equal %s index exists already (%s)",
                       kind_names[kind], idxset_def(v->indexes, (uint32_t)same)->name);
    } else if (d.name[0] && idxset_find_name(v->indexes, d.name) >= 0) {
        s = graph_fail(g, STRATA_EINVAL, "an index or constraint named %s exists already",
                       d.name);
    } else if ((s = index_build(g, v, &d, &ls)) != STRATA_OK) {
        /* built (and a unique one checked) on the version as it is: a
           refused index forks nothing */
    } else if (!(v = graph_writable(g))) {
        s = STRATA_ENOMEM;
        lstack_release(g->m, &ls);
    } else if (idxset_add(g->m, &v->indexes, &d, ls) != 0) {   /* takes ls */
        s = graph_fail(g, STRATA_ENOMEM, "out of memory adding an index");
    } else {
        *out = d.id;
    }
    graph_write_finish(g, s);
    return s;
}

strata_status strata_index_drop(strata_graph *g, strata_index idx)
{
    if (wal_active(g))
        return wal_call(g, &(wal_op){ .code = WOP_INDEX_DROP, .id = idx });
    if (!g)
        return STRATA_EINVAL;
    version *v = graph_write_begin(g);
    strata_status s = STRATA_OK;
    int pos = idxset_find(v->indexes, idx);
    if (stmt_open(g) || txn_open(g))
        s = graph_fail(g, STRATA_EINVAL, "schema changes run outside statements and "
                                         "transactions");
    else if (pos < 0)
        s = graph_fail(g, STRATA_ENOTFOUND, "no index %u", idx);
    else if (!(v = graph_writable(g)))
        s = STRATA_ENOMEM;
    else if (idxset_remove(g->m, &v->indexes, (uint32_t)pos) != 0)
        s = graph_fail(g, STRATA_ENOMEM, "out of memory dropping an index");
    graph_write_finish(g, s);
    return s;
}

strata_status strata_index_find(strata_view *v, const char *name, strata_index *out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!name || !out)
        return view_fail(v, STRATA_EINVAL, "strata_index_find: %s is NULL", name ? "out" : "name");
    int pos = idxset_find_name(v->ver->indexes, name);
    if (pos < 0)
        return view_fail(v, STRATA_ENOTFOUND, "no index or constraint named %s", name);
    *out = idxset_def(v->ver->indexes, (uint32_t)pos)->id;
    return STRATA_OK;
}

strata_status strata_indexes(strata_view *v, strata_index *buf, size_t cap, size_t *n)
{
    if (!v)
        return STRATA_EINVAL;
    if (!n || (cap && !buf))
        return view_fail(v, STRATA_EINVAL, "strata_indexes: %s is NULL", n ? "buf" : "n");
    const index_set *set = v->ver->indexes;
    *n = idxset_len(set);
    for (size_t i = 0; i < *n && i < cap; i++)
        buf[i] = idxset_def(set, (uint32_t)i)->id;
    return STRATA_OK;
}

static strata_status find_index(strata_view *v, strata_index idx, uint32_t *pos)
{
    int p = idxset_find(v->ver->indexes, idx);
    if (p < 0)
        return view_fail(v, STRATA_ENOTFOUND, "no index %u in this view", idx);
    *pos = (uint32_t)p;
    return STRATA_OK;
}

strata_status strata_index_info_get(strata_view *v, strata_index idx, strata_index_info *out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_index_info_get: out is NULL");
    uint32_t pos = 0;
    strata_status s = find_index(v, idx, &pos);
    if (s)
        return s;
    const index_def *d = idxset_def(v->ver->indexes, pos);
    const level_stack *ls = idxset_stack(v->ver->indexes, pos);
    memset(out, 0, sizeof *out);
    memcpy(out->name, d->name, sizeof out->name);
    out->kind = (strata_index_kind)d->kind;
    out->relationships = d->on_rels;
    out->token = d->token;
    out->nkeys = d->nkeys;
    memcpy(out->keys, d->keys, d->nkeys * sizeof *d->keys);
    out->entries = lstack_count(ls);
    out->depth = lstack_depth(ls);
    return STRATA_OK;
}

/* An index iterator positioned at seek (NULL: the start). */
static strata_status index_iter(strata_view *v, uint32_t pos, const value *seek,
                                strata_node_iter **out)
{
    strata_status s = iter_new(v, ITER_INDEX, out);
    if (s)
        return s;
    (*out)->cur = lstack_seek(idxset_stack(v->ver->indexes, pos), mem_scratch(), seek);
    if (!(*out)->cur) {
        strata_node_iter_free(out);
        return view_fail(v, STRATA_ENOMEM, "out of memory starting an index scan");
    }
    return STRATA_OK;
}

strata_status strata_index_lookup(strata_view *v, strata_index idx,
                                  const strata_value *const *key, size_t nkey,
                                  strata_node_iter **out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!out || !key)
        return view_fail(v, STRATA_EINVAL, "strata_index_lookup: %s is NULL",
                         out ? "key" : "out");
    uint32_t pos = 0;
    strata_status s = find_index(v, idx, &pos);
    if (s)
        return s;
    const index_def *d = idxset_def(v->ver->indexes, pos);
    if (nkey != d->nkeys)
        return view_fail(v, STRATA_EINVAL, "index %u has %u keys; the lookup gave %zu", idx,
                         d->nkeys, nkey);
    value k = value_null();
    bool null_part = false;
    for (size_t i = 0; i < nkey; i++) {
        if (!key[i])
            return view_fail(v, STRATA_EINVAL, "lookup key part %zu is NULL", i);
        null_part |= value_is_null(&key[i]->v);
    }
    if (nkey == 1) {
        k = value_retain(key[0]->v);
    } else {
        value parts[IDX_MAX_KEYS];
        for (size_t i = 0; i < nkey; i++)
            parts[i] = value_retain(key[i]->v);
        if (value_list_from(mem_scratch(), parts, nkey, &k) != 0)
            return view_fail(v, STRATA_ENOMEM, "out of memory building a lookup key");
    }
    s = index_iter(v, pos, &k, out);
    if (s) {
        value_release(&k);
        return s;
    }
    (*out)->exact = true;
    (*out)->lo = k;
    if (null_part)   /* null equals nothing: an empty result */
        lstack_cursor_free(&(*out)->cur, mem_scratch());
    return STRATA_OK;
}

/* The index idx of the view at *pos, for a point lookup by who (its name
   in messages) of nkey key parts: the index must have that many, and one. */
static strata_status point_index(strata_view *v, strata_index idx, const char *who,
                                 size_t nkey, uint32_t *pos)
{
    strata_status s = find_index(v, idx, pos);
    if (s)
        return s;
    unsigned nkeys = idxset_def(v->ver->indexes, *pos)->nkeys;
    if (nkey != nkeys)
        return view_fail(v, STRATA_EINVAL, "index %u has %u keys; the lookup gave %zu", idx,
                         nkeys, nkey);
    if (nkeys != 1)
        return view_fail(v, STRATA_EINVAL, "index %u: %s takes a single key; use "
                                           "strata_index_lookup for composites", idx, who);
    return STRATA_OK;
}

/* The least id under key in the index at pos into *out: false on a miss
   (null equals nothing), *out untouched. */
static bool point_get(const strata_view *v, uint32_t pos, const value *key, strata_id *out)
{
    uint64_t id;
    if (value_is_null(key) || !lstack_first(idxset_stack(v->ver->indexes, pos), key, &id))
        return false;
    *out = id;
    return true;
}

static strata_status point_miss(strata_view *v, strata_index idx)
{
    return view_fail(v, STRATA_ENOTFOUND, "index %u holds nothing under that key", idx);
}

strata_status strata_index_get(strata_view *v, strata_index idx, const strata_value *const *key,
                               size_t nkey, strata_id *out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!out || !key)
        return view_fail(v, STRATA_EINVAL, "strata_index_get: %s is NULL", out ? "key" : "out");
    uint32_t pos = 0;
    strata_status s = point_index(v, idx, "strata_index_get", nkey, &pos);
    if (s)
        return s;
    if (!key[0])
        return view_fail(v, STRATA_EINVAL, "lookup key is NULL");
    return point_get(v, pos, &key[0]->v, out) ? STRATA_OK : point_miss(v, idx);
}

strata_status strata_index_get_int(strata_view *v, strata_index idx, int64_t key,
                                   strata_id *out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!out)
        return view_fail(v, STRATA_EINVAL, "strata_index_get_int: out is NULL");
    uint32_t pos = 0;
    strata_status s = point_index(v, idx, "strata_index_get_int", 1, &pos);
    if (s)
        return s;
    value k = { .type = VAL_INT, .u.i = key };   /* value_int, built in place */
    return point_get(v, pos, &k, out) ? STRATA_OK : point_miss(v, idx);
}

strata_status strata_index_get_string(strata_view *v, strata_index idx, const char *key,
                                      size_t len, strata_id *out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!out || !key)
        return view_fail(v, STRATA_EINVAL, "strata_index_get_string: %s is NULL",
                         out ? "key" : "out");
    uint32_t pos = 0;
    strata_status s = point_index(v, idx, "strata_index_get_string", 1, &pos);
    if (s)
        return s;
    if (!value_utf8_valid(key, len))
        return view_fail(v, STRATA_EINVAL, "lookup key is not well-formed UTF-8");
    value k;
    /* up to VALUE_INLINE_MAX bytes the key lives in the cell: no heap */
    if (value_string(mem_scratch(), key, len, &k) != 0)
        return view_fail(v, STRATA_ENOMEM, "out of memory building a lookup key");
    bool hit = point_get(v, pos, &k, out);
    value_release(&k);
    return hit ? STRATA_OK : point_miss(v, idx);
}

strata_status strata_index_get_ints(strata_view *v, strata_index idx, const int64_t *keys,
                                    size_t n, strata_id *out, size_t *found)
{
    if (!v)
        return STRATA_EINVAL;
    if ((n && (!keys || !out)) || !found)
        return view_fail(v, STRATA_EINVAL, "strata_index_get_ints: %s is NULL",
                         !found ? "found" : !keys ? "keys" : "out");
    uint32_t pos = 0;
    strata_status s = point_index(v, idx, "strata_index_get_ints", 1, &pos);
    if (s)
        return s;
    const level_stack *ls = idxset_stack(v->ver->indexes, pos);
    size_t hits = 0;
    /* In chunks, so that the keys' walks go down the index side by side
       (lstack_first_many) with their misses overlapped. */
    enum { CHUNK = 64 };
    value k[CHUNK];
    bool hit[CHUNK];
    for (size_t at = 0; at < n; at += CHUNK) {
        size_t c = n - at < CHUNK ? n - at : CHUNK;
        for (size_t i = 0; i < c; i++)
            k[i] = (value){ .type = VAL_INT, .u.i = keys[at + i] };
        hits += lstack_first_many(ls, k, c, out + at, hit);
        for (size_t i = 0; i < c; i++)
            if (!hit[i])
                out[at + i] = STRATA_NO_ID;
    }
    *found = hits;
    return STRATA_OK;
}

static bool range_type(const value *b)
{
    value_type t = value_kind(b);
    return t == VAL_INT || t == VAL_FLOAT || t == VAL_STRING || t == VAL_BOOL;
}

/* The least value of b's type: where an open-below range starts. */
static value type_floor(const value *b)
{
    switch (value_kind(b)) {
    case VAL_STRING: {
        value e;
        value_string(mem_scratch(), "", 0, &e);   /* inline: cannot fail */
        return e;
    }
    case VAL_BOOL:
        return value_bool(false);
    default:
        return value_float(-INFINITY);
    }
}

strata_status strata_index_range(strata_view *v, strata_index idx, const strata_value *lo,
                                 bool lo_inclusive, const strata_value *hi, bool hi_inclusive,
                                 strata_node_iter **out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!out || (!lo && !hi))
        return view_fail(v, STRATA_EINVAL, "strata_index_range: %s",
                         out ? "both bounds are NULL" : "out is NULL");
    if ((lo && !range_type(&lo->v)) || (hi && !range_type(&hi->v)))
        return view_fail(v, STRATA_EINVAL, "range bounds must be numbers, strings or booleans");
    uint32_t pos = 0;
    strata_status s = find_index(v, idx, &pos);
    if (s)
        return s;
    if (idxset_def(v->ver->indexes, pos)->nkeys != 1)
        return view_fail(v, STRATA_EINVAL, "index %u is composite: ranges need a single key",
                         idx);
    value start = lo ? value_retain(lo->v) : type_floor(&hi->v);
    s = index_iter(v, pos, &start, out);
    value_release(&start);
    if (s)
        return s;
    strata_node_iter *it = *out;
    it->lo = lo ? value_retain(lo->v) : value_null();
    it->hi = hi ? value_retain(hi->v) : value_null();
    it->lo_incl = lo_inclusive;
    it->hi_incl = hi_inclusive;
    int cmp;
    /* Bounds of different types, or lo above hi: nothing is in range. */
    if (lo && hi && (value_compare(&lo->v, &hi->v, &cmp) != 0 || cmp > 0))
        lstack_cursor_free(&it->cur, mem_scratch());
    return STRATA_OK;
}
