/*
 * strata_integrity_check: cross-checks every structure of a view against
 * the others, in O(nodes + relationships + label bits).  Tests call it
 * after every step; it is public so an embedding program can too.
 *
 * What it checks:
 *   1. slots: live counts, free lists (store_check in test builds).
 *   2. every live relationship joins live nodes and appears exactly once in
 *      its start's outgoing and its end's incoming segment of its type;
 *   3. every adjacency entry names a live relationship that agrees with it,
 *      and the entries add up to twice the relationship count; each node's
 *      kept degrees equal its entries per direction;
 *   4. the label and relationship-type indices hold exactly the live
 *      entities' tokens, with counts;
 *   5. property maps are sorted by key and hold no nulls;
 *   6. every property index holds exactly one entry per entity that carries
 *      its token and all its keys, under the key built from them;
 *   7. the relationship statistics equal a recomputation from the nodes'
 *      labels and adjacency (storage/rel_stats.h).
 */
#include "core/index_maint.h"
#include "core/stats_maint.h"

#define FAIL(...) return view_fail(v, STRATA_ECONSTRAINT, "integrity: " __VA_ARGS__)

/* Check 2 and 3 for the entries of node n: each names a live relationship
   that agrees with it and is listed once in its direction (seen: a bit per
   relationship slot and direction).  Together with the counts of outgoing
   and incoming entries, each equal to the live relationships, this puts
   every relationship exactly once at each end, in O(entries); looking each
   relationship up in its ends' segments would cost O(degree) each, O(d^2)
   at a hub. */
static strata_status check_node_adjacency(strata_view *v, uint64_t n, uint64_t *seen,
                                          uint64_t count[2])
{
    const store *s = &v->ver->st;
    const node_adj *a = store_node_adj_slot(s, n);
    const adj_block *b = a->block;
    uint64_t before[2] = { count[0], count[1] };
    for (uint32_t i = 0; i < adj_nsegments(b); i++) {
        int dir;
        uint32_t type, cnt = adj_segment_info(b, i, &dir, &type);
        for (adj_run run = adj_run_first(b, i); run.n; run = adj_run_next(b, i, run)) {
            for (const adj_entry *e = run.e; e < run.e + run.n; e++) {
                const rel_meta *r = store_rel(s, e->rel);
                uint32_t self = dir == ADJ_OUT ? r ? r->start : 0 : r ? r->end : 0;
                uint32_t other = dir == ADJ_OUT ? r ? r->end : 0 : r ? r->start : 0;
                if (!r || r->type != type || self != n || other != e->other)
                    FAIL("node %llu lists relationship %u, which does not match",
                         (unsigned long long)n, e->rel);
                uint64_t bit = 2 * (uint64_t)e->rel + (uint64_t)dir;
                if (seen[bit / 64] & (uint64_t)1 << (bit % 64))
                    FAIL("node %llu lists relationship %u twice", (unsigned long long)n, e->rel);
                seen[bit / 64] |= (uint64_t)1 << (bit % 64);
            }
        }
        count[dir] += cnt;
    }
    if (a->out != count[ADJ_OUT] - before[ADJ_OUT] || a->in != count[ADJ_IN] - before[ADJ_IN])
        FAIL("node %llu keeps %u outgoing and %u incoming as its degrees, but lists %llu and %llu",
             (unsigned long long)n, a->out, a->in,
             (unsigned long long)(count[ADJ_OUT] - before[ADJ_OUT]),
             (unsigned long long)(count[ADJ_IN] - before[ADJ_IN]));
    return STRATA_OK;
}

/* Check 7, after checks 2 and 3 have shown the adjacency right. */
static strata_status check_rel_stats(strata_view *v)
{
    const version *ver = v->ver;
#ifdef STRATA_TESTING
    if (relstats_check(&ver->stats) != 0)
        FAIL("the relationship statistics' vector is malformed");
#endif
    rel_stats fresh;
    relstats_init(&fresh);
    if (stats_compute(ver->cat, &ver->st, mem_scratch(), &fresh) != 0)
        return view_fail(v, STRATA_ENOMEM, "integrity: out of memory");
    uint32_t label = 0, type = 0;
    bool same = relstats_equal(&ver->stats, &fresh, &label, &type);
    uint64_t kept[2] = { relstats_get(&ver->stats, label, type, ADJ_OUT),
                         relstats_get(&ver->stats, label, type, ADJ_IN) };
    uint64_t real[2] = { relstats_get(&fresh, label, type, ADJ_OUT),
                         relstats_get(&fresh, label, type, ADJ_IN) };
    relstats_release(&fresh, mem_scratch());
    if (!same)
        FAIL("the statistics count %llu outgoing and %llu incoming relationships of type %u "
             "at label %u; the graph has %llu and %llu", (unsigned long long)kept[0],
             (unsigned long long)kept[1], type, label, (unsigned long long)real[0],
             (unsigned long long)real[1]);
    return STRATA_OK;
}

static bool props_sound(const prop_rec *r)
{
    for (uint32_t i = 0; i < props_len(r); i++) {
        if (value_is_null(props_val_at(r, i)))
            return false;
        if (i && props_key_at(r, i - 1) >= props_key_at(r, i))
            return false;
    }
    return true;
}

/* Check 6: each entity's key is in its index, and nothing else is (the
   counts match, and no entity is listed twice since (key, id) is unique
   per key and each entity has one key). */
static strata_status check_property_indexes(strata_view *v)
{
    const version *ver = v->ver;
    for (uint32_t i = 0; i < idxset_len(ver->indexes); i++) {
        const index_def *d = idxset_def(ver->indexes, i);
        const level_stack *ls = idxset_stack(ver->indexes, i);
        uint64_t expected = 0;
        for (uint64_t id = idx_next_member(ver, d, 0); id != UINT64_MAX;
             id = idx_next_member(ver, d, id + 1)) {
            value key;
            int r = idx_entity_key(ver, d, mem_scratch(), id, &key);
            if (r < 0)
                return view_fail(v, STRATA_ENOMEM, "integrity: out of memory");
            if (r == 0)
                continue;
            bool there = lstack_contains(ls, &key, id);
            /* The point lookup (a hash probe on a hashed stack) finds the
               least id under the key: this one or a smaller one shown. */
            uint64_t first = UINT64_MAX;
            bool found = lstack_first(ls, &key, &first);
            bool first_shown = found && lstack_contains(ls, &key, first);
            value_release(&key);
            if (!there)
                FAIL("index %u lacks %s %llu", d->id, d->on_rels ? "relationship" : "node",
                     (unsigned long long)id);
            if (!first_shown || first > id)
                FAIL("index %u: a point lookup of %s %llu's key finds %s", d->id,
                     d->on_rels ? "relationship" : "node", (unsigned long long)id,
                     found ? "an id it does not hold" : "nothing");
            expected++;
        }
#ifdef STRATA_TESTING
        if (lstack_check(ls) != 0)
            FAIL("index %u: its trees or their point hashes are inconsistent", d->id);
#endif
        if (expected != lstack_count(ls))
            FAIL("index %u holds %llu entries; %llu entities qualify", d->id,
                 (unsigned long long)lstack_count(ls), (unsigned long long)expected);
    }
    return STRATA_OK;
}

strata_status strata_integrity_check(strata_view *v)
{
    if (!v)
        return STRATA_EINVAL;
    const store *s = &v->ver->st;
    const catalog *c = v->ver->cat;
    const label_index *li = v->ver->labels;
#ifdef STRATA_TESTING
    if (store_check(s) != 0)
        FAIL("slot vectors or free lists are inconsistent");
#endif
    uint64_t live = 0;
    for (uint64_t r = 0; r < store_rel_slots(s); r++) {
        const rel_meta *m = store_rel(s, r);
        if (!m)
            continue;
        live++;
        if (!store_node(s, m->start) || !store_node(s, m->end))
            FAIL("relationship %llu joins a deleted node", (unsigned long long)r);
        if (!props_sound(store_rel_props(s, r)))
            FAIL("relationship %llu has an unsorted or null property", (unsigned long long)r);
        if (!labelidx_has(v->ver->rel_types, m->type, r))
            FAIL("relationship %llu is missing from its type's index", (unsigned long long)r);
    }
    uint64_t typed = 0;
    for (uint32_t t = 0; t < labelidx_labels(v->ver->rel_types); t++)
        typed += labelidx_count(v->ver->rel_types, t);
    if (typed != s->rel_live)
        FAIL("the relationship-type index counts %llu relationships, not %llu",
             (unsigned long long)typed, (unsigned long long)s->rel_live);
    if (live != s->rel_live)
        FAIL("%llu live relationships, count says %llu", (unsigned long long)live,
             (unsigned long long)s->rel_live);

    size_t seen_size = (2 * store_rel_slots(s) / 64 + 1) * sizeof(uint64_t);
    uint64_t *seen = mem_calloc(mem_scratch(), seen_size), entries[2] = { 0, 0 };
    if (!seen)
        return view_fail(v, STRATA_ENOMEM, "integrity: out of memory");
    strata_status st = STRATA_OK;
    live = 0;
    for (uint64_t n = 0; n < store_node_slots(s) && st == STRATA_OK; n++) {
        const node_meta *m = store_node(s, n);
        if (!m)
            continue;
        live++;
        st = check_node_adjacency(v, n, seen, entries);
    }
    mem_free(mem_scratch(), seen);
    if (st)
        return st;
    if (entries[ADJ_OUT] != s->rel_live || entries[ADJ_IN] != s->rel_live)
        FAIL("%llu outgoing and %llu incoming adjacency entries for %llu relationships: "
             "some relationship is missing from its endpoints' adjacency",
             (unsigned long long)entries[ADJ_OUT], (unsigned long long)entries[ADJ_IN],
             (unsigned long long)s->rel_live);
    if (live != s->node_live)
        FAIL("%llu live nodes, count says %llu", (unsigned long long)live,
             (unsigned long long)s->node_live);
    for (uint64_t n = 0; n < store_node_slots(s); n++) {
        const node_meta *m = store_node(s, n);
        if (!m)
            continue;
        size_t nl = labelset_len(c, m->labelset);
        for (size_t i = 0; i < nl; i++)
            if (!labelidx_has(li, labelset_at(c, m->labelset, i), n))
                FAIL("node %llu has label %u but the label index lacks it",
                     (unsigned long long)n, labelset_at(c, m->labelset, i));
        if (!props_sound(store_node_props(s, n)))
            FAIL("node %llu has an unsorted or null property", (unsigned long long)n);
    }

    for (uint32_t l = 0; l < labelidx_labels(li); l++) {
        uint64_t count = 0;
        for (uint64_t n = labelidx_next(li, l, 0); n != UINT64_MAX; n = labelidx_next(li, l, n + 1)) {
            const node_meta *m = store_node(s, n);
            bool carries = false;
            for (size_t i = 0; m && i < labelset_len(c, m->labelset); i++)
                carries |= labelset_at(c, m->labelset, i) == l;
            if (!carries)
                FAIL("the label index lists node %llu under label %u it does not carry",
                     (unsigned long long)n, l);
            count++;
        }
        if (count != labelidx_count(li, l))
            FAIL("label %u indexes %llu nodes, count says %llu", l, (unsigned long long)count,
                 (unsigned long long)labelidx_count(li, l));
    }
    st = check_rel_stats(v);
    return st ? st : check_property_indexes(v);
}
