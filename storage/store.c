#include "storage/store.h"

#include <string.h>

/* A slot's property record is its one owned object: a copied leaf retains
   it, a freed one releases it (pvec.h invariant 3). */
static void node_elem_retain(void *e) { props_retain(((node_meta *)e)->props); }
static void node_elem_release(void *e, mem_ctx *m) { props_release(m, &((node_meta *)e)->props); }
static void rel_elem_retain(void *e) { props_retain(((rel_meta *)e)->props); }
static void rel_elem_release(void *e, mem_ctx *m) { props_release(m, &((rel_meta *)e)->props); }
static void adj_elem_retain(void *e) { adj_retain(((node_adj *)e)->block); }
static void adj_elem_release(void *e, mem_ctx *m)
{
    node_adj *a = e;
    adj_release(m, &a->block);
    a->out = a->in = 0;
}

static size_t node_elem_private(const void *e)
{
    return props_private_bytes(((const node_meta *)e)->props);
}
static size_t rel_elem_private(const void *e)
{
    return props_private_bytes(((const rel_meta *)e)->props);
}
static size_t adj_elem_private(const void *e) { return adj_private_bytes(((const node_adj *)e)->block); }

static const pvec_ops node_meta_ops = { sizeof(node_meta), node_elem_retain, node_elem_release,
                                        node_elem_private };
static const pvec_ops rel_meta_ops = { sizeof(rel_meta), rel_elem_retain, rel_elem_release,
                                       rel_elem_private };
static const pvec_ops adj_ops = { sizeof(node_adj), adj_elem_retain, adj_elem_release,
                                  adj_elem_private };

void id_list_free(id_list *l, mem_ctx *m)
{
    mem_free_sized(m, l->ids, l->cap * sizeof *l->ids);
    *l = (id_list){ 0 };
}

typedef struct diff_collect {
    id_list *out;
    mem_ctx *m;
} diff_collect;

static int collect_id(uint64_t i, const void *a, const void *b, void *arg)
{
    (void)a, (void)b;
    diff_collect *d = arg;
    id_list *l = d->out;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        uint64_t *ids = mem_realloc_sized(d->m, l->ids, l->cap * sizeof *ids, cap * sizeof *ids);
        if (!ids)
            return -1;
        l->ids = ids;
        l->cap = cap;
    }
    l->ids[l->n++] = i;
    return 0;
}

/* The slots whose meta or properties differ, ascending: one walk, since a
   slot's properties are part of its element. */
static int diff_slots(const pvec *a, const pvec *b, const pvec_ops *ops, mem_ctx *m,
                      id_list *out)
{
    diff_collect d = { out, m };
    *out = (id_list){ 0 };
    if (pvec_diff(a, b, ops, collect_id, &d) == 0)
        return 0;
    id_list_free(out, m);
    return -1;
}

int store_diff_nodes(const store *a, const store *b, mem_ctx *m, id_list *out)
{
    return diff_slots(&a->node_meta, &b->node_meta, &node_meta_ops, m, out);
}

int store_diff_rels(const store *a, const store *b, mem_ctx *m, id_list *out)
{
    return diff_slots(&a->rel_meta, &b->rel_meta, &rel_meta_ops, m, out);
}

size_t store_private_bytes(const store *s)
{
    return pvec_private_bytes(&s->node_meta, &node_meta_ops) +
           pvec_private_bytes(&s->node_adj, &adj_ops) +
           pvec_private_bytes(&s->rel_meta, &rel_meta_ops);
}

void store_init(store *s)
{
    memset(s, 0, sizeof *s);
    pvec_init(&s->node_meta);
    pvec_init(&s->node_adj);
    pvec_init(&s->rel_meta);
    s->node_free = SLOT_END;
    s->rel_free = SLOT_END;
}

void store_share(const store *src, store *dst)
{
    *dst = *src;
    pvec_share(&src->node_meta, &dst->node_meta);
    pvec_share(&src->node_adj, &dst->node_adj);
    pvec_share(&src->rel_meta, &dst->rel_meta);
}

void store_release(store *s, mem_ctx *m) { store_release_into(s, NULL, m); }

void store_release_into(store *s, const store *succ, mem_ctx *m)
{
    pvec_release_into(&s->node_meta, succ ? &succ->node_meta : NULL, &node_meta_ops, m);
    pvec_release_into(&s->node_adj, succ ? &succ->node_adj : NULL, &adj_ops, m);
    pvec_release_into(&s->rel_meta, succ ? &succ->rel_meta : NULL, &rel_meta_ops, m);
}

const node_meta *store_node(const store *s, uint64_t id)
{
    if (id >= s->node_meta.len)
        return NULL;
    const node_meta *n = pvec_get(&s->node_meta, &node_meta_ops, id);
    return n->link == SLOT_LIVE ? n : NULL;
}

const rel_meta *store_rel(const store *s, uint64_t id)
{
    if (id >= s->rel_meta.len)
        return NULL;
    const rel_meta *r = pvec_get(&s->rel_meta, &rel_meta_ops, id);
    return r->link == SLOT_LIVE ? r : NULL;
}

/* Property and adjacency reads assume a live id (callers check first); a
   free slot holds NULL there anyway (invariant 2). */
const prop_rec *store_node_props(const store *s, uint64_t id)
{
    return ((const node_meta *)pvec_get(&s->node_meta, &node_meta_ops, id))->props;
}

const prop_rec *store_rel_props(const store *s, uint64_t id)
{
    return ((const rel_meta *)pvec_get(&s->rel_meta, &rel_meta_ops, id))->props;
}

const adj_block *store_node_adj(const store *s, uint64_t id)
{
    return store_node_adj_slot(s, id)->block;
}

const node_adj *store_node_adj_slot(const store *s, uint64_t id)
{
    return pvec_get(&s->node_adj, &adj_ops, id);
}

const node_meta *store_node_meta_run(const store *s, uint64_t id, uint64_t *n)
{
    return pvec_get_run(&s->node_meta, &node_meta_ops, id, n);
}

const node_adj *store_node_adj_run(const store *s, uint64_t id, uint64_t *n)
{
    return pvec_get_run(&s->node_adj, &adj_ops, id, n);
}

node_meta *store_node_meta_mut(store *s, mem_ctx *m, uint64_t id)
{
    return pvec_get_mut(&s->node_meta, &node_meta_ops, m, id);
}

prop_rec **store_node_props_mut(store *s, mem_ctx *m, uint64_t id)
{
    node_meta *n = pvec_get_mut(&s->node_meta, &node_meta_ops, m, id);
    return n ? &n->props : NULL;
}

node_adj *store_node_adj_mut(store *s, mem_ctx *m, uint64_t id)
{
    return pvec_get_mut(&s->node_adj, &adj_ops, m, id);
}

void store_adj_insert(node_adj *a, int dir, uint32_t type, uint32_t rel, uint32_t other)
{
    adj_insert(a->block, dir, type, rel, other);
    if (dir == ADJ_OUT)
        a->out++;
    else
        a->in++;
}

int store_adj_erase(mem_ctx *m, node_adj *a, int dir, uint32_t type, uint32_t rel)
{
    if (adj_erase(m, a->block, dir, type, rel) != 0)
        return -1;
    if (dir == ADJ_OUT)
        a->out--;
    else
        a->in--;
    return 0;
}

uint32_t store_adj_count(const adj_block *b, int dir)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < adj_nsegments(b); i++) {
        int d;
        uint32_t type, cnt = adj_segment_info(b, i, &d, &type);
        if (d == dir)
            n += cnt;
    }
    return n;
}

/* The element for a block handed in whole (a load, an undone delete). */
static node_adj node_adj_of(adj_block *b)
{
    return (node_adj){ b, store_adj_count(b, ADJ_OUT), store_adj_count(b, ADJ_IN) };
}

void store_adj_cursor_init(store_adj_cursor *c, store *s, mem_ctx *m)
{
    pvec_seq_init(&c->seq, &s->node_adj, &adj_ops, m);
}

node_adj *store_adj_cursor_mut(store_adj_cursor *c, uint64_t id)
{
    return pvec_seq_mut(&c->seq, id);
}

void store_adj_replace(mem_ctx *m, node_adj *a, adj_block *b)
{
    adj_release(m, &a->block);
    *a = node_adj_of(b);
}

rel_meta *store_rel_meta_mut(store *s, mem_ctx *m, uint64_t id)
{
    return pvec_get_mut(&s->rel_meta, &rel_meta_ops, m, id);
}

prop_rec **store_rel_props_mut(store *s, mem_ctx *m, uint64_t id)
{
    rel_meta *r = pvec_get_mut(&s->rel_meta, &rel_meta_ops, m, id);
    return r ? &r->props : NULL;
}

uint32_t store_node_link(const store *s, uint64_t id)
{
    if (id >= s->node_meta.len)
        return SLOT_END;
    return ((const node_meta *)pvec_get(&s->node_meta, &node_meta_ops, id))->link;
}

uint32_t store_rel_link(const store *s, uint64_t id)
{
    if (id >= s->rel_meta.len)
        return SLOT_END;
    return ((const rel_meta *)pvec_get(&s->rel_meta, &rel_meta_ops, id))->link;
}

uint64_t store_next_node_id(const store *s, bool reuse)
{
    return reuse && s->node_free != SLOT_END ? s->node_free : s->node_meta.len;
}

uint64_t store_next_rel_id(const store *s, bool reuse)
{
    return reuse && s->rel_free != SLOT_END ? s->rel_free : s->rel_meta.len;
}

int store_node_alloc(store *s, mem_ctx *m, uint32_t labelset, bool reuse, uint64_t *id)
{
    node_meta *n;
    if (reuse && s->node_free != SLOT_END) {
        n = store_node_meta_mut(s, m, s->node_free);
        if (!n)
            return -1;
        *id = s->node_free;
        s->node_free = n->link;
    } else {
        if (s->node_meta.len >= SLOT_MAX_ID)
            return -1;
        *id = s->node_meta.len;
        /* Adjacency starts as a hole: no leaf until written. */
        if (pvec_grow(&s->node_adj, &adj_ops, m) != 0)
            return -1;
        n = pvec_push(&s->node_meta, &node_meta_ops, m);
        if (!n) {
            pvec_pop(&s->node_adj, &adj_ops, m);
            return -1;
        }
    }
    n->labelset = labelset;
    n->link = SLOT_LIVE;
    s->node_live++;
    return 0;
}

int store_rel_alloc(store *s, mem_ctx *m, uint32_t start, uint32_t end, uint32_t type,
                    bool reuse, uint64_t *id)
{
    rel_meta *r;
    if (reuse && s->rel_free != SLOT_END) {
        r = store_rel_meta_mut(s, m, s->rel_free);
        if (!r)
            return -1;
        *id = s->rel_free;
        s->rel_free = r->link;
    } else {
        if (s->rel_meta.len >= SLOT_MAX_ID)
            return -1;
        *id = s->rel_meta.len;
        r = pvec_push(&s->rel_meta, &rel_meta_ops, m);
        if (!r)
            return -1;
    }
    r->start = start;
    r->end = end;
    r->type = type;
    r->link = SLOT_LIVE;
    s->rel_live++;
    return 0;
}

void store_builder_init(store_builder *b, store *s, mem_ctx *m)
{
    b->s = s;
    pvec_seq_init(&b->node_meta, &s->node_meta, &node_meta_ops, m);
    pvec_seq_init(&b->node_adj, &s->node_adj, &adj_ops, m);
    pvec_seq_init(&b->rel_meta, &s->rel_meta, &rel_meta_ops, m);
}

int store_append_node(store_builder *b, uint32_t labelset, prop_rec *props, uint64_t *id)
{
    store *s = b->s;
    if (s->node_free != SLOT_END || s->node_meta.len >= SLOT_MAX_ID)
        return -1;
    /* The adjacency is a hole until store_set_adj writes it. */
    if (pvec_seq_grow(&b->node_adj) != 0)
        return -1;
    node_meta *n = pvec_seq_push(&b->node_meta);
    if (!n) {
        pvec_pop(&s->node_adj, &adj_ops, b->node_adj.m);
        return -1;
    }
    *n = (node_meta){ .labelset = labelset, .link = SLOT_LIVE, .props = props };
    *id = s->node_meta.len - 1;
    s->node_live++;
    return 0;
}

int store_append_rel(store_builder *b, uint32_t start, uint32_t end, uint32_t type,
                     prop_rec *props, uint64_t *id)
{
    store *s = b->s;
    if (s->rel_free != SLOT_END || s->rel_meta.len >= SLOT_MAX_ID)
        return -1;
    rel_meta *r = pvec_seq_push(&b->rel_meta);
    if (!r)
        return -1;
    *r = (rel_meta){ .start = start, .end = end, .type = type, .link = SLOT_LIVE,
                     .props = props };
    *id = s->rel_meta.len - 1;
    s->rel_live++;
    return 0;
}

int store_set_adj(store_builder *b, uint64_t id, adj_block *adj, uint32_t out, uint32_t in)
{
    node_adj *slot = pvec_seq_mut(&b->node_adj, id);
    if (!slot)
        return -1;
    *slot = (node_adj){ adj, out, in };
    return 0;
}

int store_node_own(store *s, mem_ctx *m, uint64_t id)
{
    if (!store_node_meta_mut(s, m, id) || !store_node_adj_mut(s, m, id))
        return -1;
    return 0;
}

int store_rel_own(store *s, mem_ctx *m, uint64_t id)
{
    if (!store_rel_meta_mut(s, m, id))
        return -1;
    return 0;
}

/* Moves *from to *to when to is given, else releases it. */
static void hand_over_props(mem_ctx *m, prop_rec **from, prop_rec **to)
{
    if (to) {
        *to = *from;
        *from = NULL;
    } else {
        props_release(m, from);
    }
}

/* Slots whose properties or adjacency are NULL are not written (a hole
   stays a hole, and nothing allocates). */
void store_node_free(store *s, mem_ctx *m, uint64_t id, prop_rec **props, adj_block **adj)
{
    if (props)
        *props = NULL;
    if (adj)
        *adj = NULL;
    node_meta *n = store_node_meta_mut(s, m, id);
    hand_over_props(m, &n->props, props);
    if (store_node_adj(s, id)) {
        node_adj *a = store_node_adj_mut(s, m, id);
        if (adj) {
            *adj = a->block;
            *a = (node_adj){ 0 };
        } else {
            adj_elem_release(a, m);
        }
    }
    n->labelset = 0;
    n->link = s->node_free;
    s->node_free = (uint32_t)id;
    s->node_live--;
}

void store_rel_free(store *s, mem_ctx *m, uint64_t id, prop_rec **props)
{
    if (props)
        *props = NULL;
    rel_meta *r = store_rel_meta_mut(s, m, id);
    hand_over_props(m, &r->props, props);
    *r = (rel_meta){ .link = s->rel_free };
    s->rel_free = (uint32_t)id;
    s->rel_live--;
}

int store_node_restore(store *s, mem_ctx *m, uint64_t id, uint32_t labelset, prop_rec *props,
                       adj_block *adj)
{
    if (s->node_free != id || store_node_own(s, m, id) != 0)
        return -1;
    node_meta *n = store_node_meta_mut(s, m, id);
    s->node_free = n->link;
    n->labelset = labelset;
    n->link = SLOT_LIVE;
    n->props = props;
    *store_node_adj_mut(s, m, id) = node_adj_of(adj);
    s->node_live++;
    return 0;
}

int store_rel_restore(store *s, mem_ctx *m, uint64_t id, const rel_meta *meta,
                      prop_rec *props)
{
    if (s->rel_free != id || store_rel_own(s, m, id) != 0)
        return -1;
    rel_meta *r = store_rel_meta_mut(s, m, id);
    s->rel_free = r->link;
    *r = (rel_meta){ .start = meta->start, .end = meta->end, .type = meta->type,
                     .link = SLOT_LIVE, .props = props };
    s->rel_live++;
    return 0;
}

int store_node_unalloc(store *s, mem_ctx *m, uint64_t id, bool pushed)
{
    if (!store_node_meta_mut(s, m, id) ||
        (store_node_adj(s, id) && !store_node_adj_mut(s, m, id)))
        return -1;
    if (!pushed) {
        store_node_free(s, m, id, NULL, NULL);
        return 0;
    }
    /* Owned paths: the pops cannot fail. */
    pvec_pop(&s->node_meta, &node_meta_ops, m);
    pvec_pop(&s->node_adj, &adj_ops, m);
    s->node_live--;
    return 0;
}

int store_rel_unalloc(store *s, mem_ctx *m, uint64_t id, bool pushed)
{
    if (!store_rel_meta_mut(s, m, id))
        return -1;
    if (!pushed) {
        store_rel_free(s, m, id, NULL);
        return 0;
    }
    pvec_pop(&s->rel_meta, &rel_meta_ops, m);
    s->rel_live--;
    return 0;
}

#ifdef STRATA_TESTING
int store_check(const store *s)
{
    if (pvec_check(&s->node_meta, &node_meta_ops) || pvec_check(&s->node_adj, &adj_ops) ||
        pvec_check(&s->rel_meta, &rel_meta_ops))
        return -1;
    if (s->node_adj.len != s->node_meta.len)
        return -1;
    uint64_t live = 0, free_slots = 0;
    for (uint64_t i = 0; i < s->node_meta.len; i++) {
        const node_meta *n = pvec_get(&s->node_meta, &node_meta_ops, i);
        const node_adj *a = store_node_adj_slot(s, i);
        if (n->link == SLOT_LIVE) {
            live++;
            if (adj_check(a->block) || a->out != store_adj_count(a->block, ADJ_OUT) ||
                a->in != store_adj_count(a->block, ADJ_IN))
                return -1;
        } else {
            free_slots++;
            if (n->labelset || store_node_props(s, i) || a->block || a->out || a->in)
                return -1;
        }
    }
    if (live != s->node_live)
        return -1;
    uint64_t walked = 0;
    for (uint32_t f = s->node_free; f != SLOT_END; walked++) {
        if (f >= s->node_meta.len || walked > free_slots)
            return -1;
        f = ((const node_meta *)pvec_get(&s->node_meta, &node_meta_ops, f))->link;
        if (f == SLOT_LIVE)
            return -1;
    }
    if (walked != free_slots)
        return -1;
    live = free_slots = 0;
    for (uint64_t i = 0; i < s->rel_meta.len; i++) {
        const rel_meta *r = pvec_get(&s->rel_meta, &rel_meta_ops, i);
        if (r->link == SLOT_LIVE)
            live++;
        else if (free_slots++, store_rel_props(s, i))
            return -1;
    }
    if (live != s->rel_live)
        return -1;
    walked = 0;
    for (uint32_t f = s->rel_free; f != SLOT_END; walked++) {
        if (f >= s->rel_meta.len || walked > free_slots)
            return -1;
        f = ((const rel_meta *)pvec_get(&s->rel_meta, &rel_meta_ops, f))->link;
        if (f == SLOT_LIVE)
            return -1;
    }
    return walked == free_slots ? 0 : -1;
}
#endif
