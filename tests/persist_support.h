/*
 * What the persistence tests share: a canonical dump of a view (and of a
 * graph's fresh snapshot), the integrity check of a graph, and the fixture
 * graph.
 *
 * The dump pins down everything a save must keep: per node slot whether it
 * is live, its labels and properties (each value with its exact kind and
 * bytes: floats by bit pattern, strings by bytes, temporals by their
 * fields); per relationship slot its type, endpoints and properties; every
 * node's neighbours per direction (as a sorted set: a load lists one
 * segment in relationship id order, see strata.h); label and type scans;
 * every index's definition and entry count and, for every entity it
 * covers, what a lookup of that entity's key returns.
 */
#ifndef STRATA_TESTS_PERSIST_SUPPORT_H
#define STRATA_TESTS_PERSIST_SUPPORT_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"
#include "core/graph_impl.h"
#include "storage/temporal.h"
#include "support/sbuf.h"

static void dump_raw(sbuf *b, const value *v)
{
    size_t n;
    sb_printf(b, "%s:", value_type_name(v));
    switch (value_kind(v)) {
    case VAL_NULL:
        return;
    case VAL_BOOL:
        sb_printf(b, "%d", v->u.b);
        return;
    case VAL_INT:
        sb_printf(b, "%" PRId64, v->u.i);
        return;
    case VAL_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v->u.f, sizeof bits);
        sb_printf(b, "%016" PRIx64, bits);
        return;
    }
    case VAL_STRING: {
        const char *s = value_str(v, &n);
        sb_printf(b, "%zu/", n);
        for (size_t i = 0; i < n; i++)
            sb_printf(b, "%02x", (unsigned char)s[i]);
        return;
    }
    case VAL_LIST:
    case VAL_PATH:
        sb_printf(b, "[");
        for (size_t i = 0; i < value_list_len(v); i++) {
            dump_raw(b, &value_list_items(v)[i]);
            sb_printf(b, ",");
        }
        sb_printf(b, "]");
        return;
    case VAL_MAP:
        sb_printf(b, "{");
        for (size_t i = 0; i < value_map_len(v); i++) {
            dump_raw(b, &value_map_keys(v)[i]);
            sb_printf(b, "=");
            dump_raw(b, &value_map_vals(v)[i]);
            sb_printf(b, ",");
        }
        sb_printf(b, "}");
        return;
    case VAL_NODE:
    case VAL_REL:
        sb_printf(b, "%" PRIu64, v->u.id);
        return;
    case VAL_DURATION: {
        duration d;
        duration_from_value(v, &d);
        sb_printf(b, "%" PRId64 "/%" PRId64 "/%" PRId64 "/%d", d.months, d.days, d.seconds,
                  d.nanos);
        return;
    }
    default: {
        temporal t;
        temporal_from_value(v, &t);
        sb_printf(b, "%" PRId64 "/%" PRId64 "/%d/%s", t.days, t.nanos, t.offset, t.zone);
        return;
    }
    }
}

static void dump_props(sbuf *b, strata_view *v, bool is_rel, strata_id id)
{
    strata_token keys[64];
    size_t n = 0;
    if (is_rel)
        strata_rel_keys(v, id, keys, 64, &n);
    else
        strata_node_keys(v, id, keys, 64, &n);
    for (size_t i = 0; i < n && i < 64; i++) {
        strata_value *val = NULL;
        if (is_rel)
            strata_rel_get(v, id, keys[i], &val);
        else
            strata_node_get(v, id, keys[i], &val);
        const char *name = "?";
        strata_token_name(v, STRATA_KEY, keys[i], &name);
        sb_printf(b, " %s=", name);
        dump_raw(b, &val->v);
        strata_value_free(&val);
    }
}

static int cmp_id(const void *a, const void *c)
{
    strata_id x = *(const strata_id *)a, y = *(const strata_id *)c;
    return (x > y) - (x < y);
}

/* The (rel, other) pairs at node in dir, sorted: all of them, so the dump
   is canonical at any degree (the order a segment lists its entries in is
   not: a load lists them in relationship id order). */
static void dump_neighbours(sbuf *b, strata_view *v, strata_id node, strata_direction dir)
{
    strata_edge_iter *it = NULL;
    if (strata_neighbours(v, node, dir, STRATA_ANY_TYPE, &it) != STRATA_OK)
        return;
    size_t n = 0, cap = 64;
    strata_id *pairs = malloc(cap * sizeof *pairs);
    strata_id rel, other;
    while (pairs && strata_edge_iter_next(it, &rel, &other)) {
        if (n == cap) {
            strata_id *more = realloc(pairs, 2 * cap * sizeof *pairs);
            if (!more)
                break;
            pairs = more;
            cap *= 2;
        }
        pairs[n++] = rel << 32 | other;
    }
    strata_edge_iter_free(&it);
    qsort(pairs, n, sizeof *pairs, cmp_id);
    sb_printf(b, " %s:", dir == STRATA_OUT ? "out" : "in");
    for (size_t i = 0; i < n; i++)
        sb_printf(b, "%" PRIu64 ">%" PRIu64 ",", pairs[i] >> 32, pairs[i] & 0xFFFFFFFFu);
    free(pairs);
}

static void dump_iter(sbuf *b, strata_node_iter *it)
{
    strata_id id;
    while (it && strata_node_iter_next(it, &id))
        sb_printf(b, "%" PRIu64 ",", id);
    strata_node_iter_free(&it);
    sb_printf(b, "\n");
}

static void dump_index(sbuf *b, strata_view *v, strata_index idx)
{
    strata_index_info info;
    strata_index_info_get(v, idx, &info);
    sb_printf(b, "index %u kind %d rels %d token %u keys", idx, (int)info.kind,
              info.relationships, info.token);
    for (size_t k = 0; k < info.nkeys; k++)
        sb_printf(b, " %u", info.keys[k]);
    sb_printf(b, " entries %" PRIu64 "\n", info.entries);
    /* Every covered entity's key, looked up. */
    strata_node_iter *all = NULL;
    if (info.relationships)
        strata_rels_by_type(v, info.token, &all);
    else
        strata_nodes_by_label(v, info.token, &all);
    strata_id id;
    while (all && strata_node_iter_next(all, &id)) {
        strata_value *parts[8] = { 0 };
        bool complete = true;
        for (size_t k = 0; k < info.nkeys; k++) {
            if (info.relationships)
                strata_rel_get(v, id, info.keys[k], &parts[k]);
            else
                strata_node_get(v, id, info.keys[k], &parts[k]);
            complete &= strata_value_type(parts[k]) != STRATA_NULL;
        }
        if (complete) {
            strata_node_iter *hit = NULL;
            strata_index_lookup(v, idx, (const strata_value *const *)parts, info.nkeys, &hit);
            sb_printf(b, "  %" PRIu64 " -> ", id);
            dump_iter(b, hit);
        }
        for (size_t k = 0; k < info.nkeys; k++)
            strata_value_free(&parts[k]);
    }
    strata_node_iter_free(&all);
}

/* The canonical dump of v (malloc'd). */
static char *dump_view(strata_view *v)
{
    sbuf b = { 0 };
    const store *st = &v->ver->st;
    uint64_t nslots = store_node_slots(st), rslots = store_rel_slots(st);
    sb_printf(&b, "nodes %" PRIu64 "/%" PRIu64 " rels %" PRIu64 "/%" PRIu64 "\n",
              strata_node_count(v), nslots, strata_rel_count(v), rslots);
    for (strata_id n = 0; n < nslots; n++) {
        if (!strata_node_exists(v, n)) {
            sb_printf(&b, "node %" PRIu64 " free\n", n);
            continue;
        }
        strata_token labels[16];
        size_t nl = 0;
        strata_node_labels(v, n, labels, 16, &nl);
        sb_printf(&b, "node %" PRIu64 " :", n);
        for (size_t i = 0; i < nl && i < 16; i++) {
            const char *name = "?";
            strata_token_name(v, STRATA_LABEL, labels[i], &name);
            sb_printf(&b, "%s:", name);
        }
        dump_props(&b, v, false, n);
        dump_neighbours(&b, v, n, STRATA_OUT);
        dump_neighbours(&b, v, n, STRATA_IN);
        sb_printf(&b, "\n");
    }
    for (strata_id r = 0; r < rslots; r++) {
        strata_id s, e;
        strata_token t;
        if (strata_rel_info(v, r, &s, &e, &t) != STRATA_OK) {
            sb_printf(&b, "rel %" PRIu64 " free\n", r);
            continue;
        }
        const char *name = "?";
        strata_token_name(v, STRATA_RELTYPE, t, &name);
        sb_printf(&b, "rel %" PRIu64 " %" PRIu64 "-[%s]->%" PRIu64, r, s, name, e);
        dump_props(&b, v, true, r);
        sb_printf(&b, "\n");
    }
    for (strata_token_kind k = STRATA_LABEL; k <= STRATA_KEY; k++) {
        const char *name;
        for (strata_token t = 0; strata_token_name(v, k, t, &name) == STRATA_OK; t++) {
            sb_printf(&b, "token %d %u %s: ", (int)k, t, name);
            strata_node_iter *it = NULL;
            if (k == STRATA_LABEL)
                strata_nodes_by_label(v, t, &it);
            else if (k == STRATA_RELTYPE)
                strata_rels_by_type(v, t, &it);
            dump_iter(&b, it);
        }
    }
    strata_index idx[32];
    size_t ni = 0;
    strata_indexes(v, idx, 32, &ni);
    for (size_t i = 0; i < ni && i < 32; i++)
        dump_index(&b, v, idx[i]);
    sb_printf(&b, "next index id %u\n", idxset_next_id(v->ver->indexes));
    /* The free lists in reuse order: which ids the next creates get. */
    sb_printf(&b, "free nodes:");
    for (uint32_t id = st->node_free; id != SLOT_END && id != SLOT_LIVE;
         id = store_node_link(st, id))
        sb_printf(&b, " %u", id);
    sb_printf(&b, "\nfree rels:");
    for (uint32_t id = st->rel_free; id != SLOT_END && id != SLOT_LIVE;
         id = store_rel_link(st, id))
        sb_printf(&b, " %u", id);
    sb_printf(&b, "\n");
    return b.p;
}

/* dump_view of a fresh snapshot of g (the caller frees it). */
static inline char *dump_graph(strata_graph *g)
{
    strata_view *v = NULL;
    if (strata_snapshot(g, &v) != STRATA_OK)
        fail_msg("snapshot: %s", strata_errmsg(g));
    char *d = dump_view(v);
    strata_view_release(&v);
    return d;
}

/* strata_integrity_check on a fresh snapshot of g, failing the test with
   its message. */
static inline void check_integrity(strata_graph *g)
{
    strata_view *v = NULL;
    if (strata_snapshot(g, &v) != STRATA_OK)
        fail_msg("snapshot: %s", strata_errmsg(g));
    if (strata_integrity_check(v) != STRATA_OK)
        fail_msg("integrity: %s", strata_view_errmsg(v));
    strata_view_release(&v);
}

#endif
