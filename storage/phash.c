/*
 * phash — the persistent hash trie beside a hashed pbtree (design and
 * invariants in phash.h).
 *
 * A put walks from the root towards its key's slot, making each node on the
 * way private (own_node: a node with refcount one is already this trie's; a
 * shared one is copied from the pool, its slots' references taken, and the
 * original loses this trie's reference), so everything it then changes is
 * private.  Removing a key's last cell prunes the nodes left empty, bottom
 * up along the remembered path.  Nodes and cells come from the pool and go
 * back to it, so a put neither allocates nor fails.
 */
#include "storage/phash.h"

#include <assert.h>
#include <stdatomic.h>
#include <string.h>

struct phash_node {
    union {
        struct phash_node *next_free;   /* while in a pool */
        struct {
            atomic_uint refs;
            uint16_t used;              /* non-empty slots */
            uint8_t incomplete;         /* a key of this node's last level was left out */
        };
    };
    uintptr_t slot[PHASH_FANOUT];       /* 0, a node, or a cell | 1 */
};

struct phash_cell {
    union {
        struct phash_cell *next_free;
        atomic_uint refs;
    };
    uint64_t hash;
    value key;
    uint64_t id;
    uint64_t count;
};

static inline bool is_cell(uintptr_t s) { return s & 1; }
static inline struct phash_cell *cell_of(uintptr_t s) { return (struct phash_cell *)(s & ~(uintptr_t)1); }
static inline struct phash_node *node_of(uintptr_t s) { return (struct phash_node *)s; }
/* splitmix64's finaliser: every bit of x reaches every bit of the hash,
   so the trie's low bits are as good as its high ones. */
static inline uint64_t mix_int(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

static inline unsigned slot_at(uint64_t hash, uint32_t depth)
{
    return (unsigned)(hash >> (depth * PHASH_LEVEL_BITS)) & (PHASH_FANOUT - 1);
}

uint64_t phash_hash(const value *key)
{
    /* Integers, and floats that equal one, are mixed directly (the common
       key, in a few instructions); 1 and 1.0, 0 and -0.0 hash alike.  The
       rest take value_hash, which agrees with value order's equality on
       the hashable kinds (every NaN alike, strings by their bytes). */
    uint64_t h;
    if (key->type == VAL_INT) {
        h = mix_int((uint64_t)key->u.i);
    } else if (key->type == VAL_FLOAT && key->u.f >= -0x1p63 && key->u.f < 0x1p63 &&
               key->u.f == (double)(int64_t)key->u.f) {
        h = mix_int((uint64_t)(int64_t)key->u.f);
    } else {
        h = value_hash(key);
    }
#if PHASH_HASH_BITS < 64
    h &= ((uint64_t)1 << PHASH_HASH_BITS) - 1;
#endif
    return h;
}

/* Whether cell key a and key b are one key, by value order. */
static inline bool same_key(const value *a, const value *b)
{
    if (a->type == VAL_INT && b->type == VAL_INT)
        return a->u.i == b->u.i;
    return value_order(a, b) == 0;
}

/* ---- the pool ------------------------------------------------------------ */

static struct phash_node *node_take(phash_pool *pool)
{
    assert(pool->n_nodes > 0 && "phash put without phash_reserve");
    struct phash_node *x = pool->nodes;
    pool->nodes = x->next_free;
    pool->n_nodes--;
    memset(x, 0, sizeof *x);
    atomic_init(&x->refs, 1);
    return x;
}

static struct phash_cell *cell_take(phash_pool *pool)
{
    assert(pool->n_cells > 0 && "phash put without phash_reserve");
    struct phash_cell *c = pool->cells;
    pool->cells = c->next_free;
    pool->n_cells--;
    atomic_init(&c->refs, 1);
    return c;
}

static void node_put(phash_pool *pool, mem_ctx *m, struct phash_node *x)
{
    if (pool->n_nodes < PHASH_POOL_KEEP) {
        x->next_free = pool->nodes;
        pool->nodes = x;
        pool->n_nodes++;
    } else {
        mem_free_sized(m, x, sizeof *x);
    }
}

int phash_reserve(phash_pool *pool, mem_ctx *m, uint32_t puts)
{
    /* A put copies or makes at most one node per level and one cell. */
    uint64_t nodes = (uint64_t)puts * PHASH_MAX_DEPTH, cells = puts;
    while (pool->n_nodes < nodes) {
        struct phash_node *x = mem_alloc(m, sizeof *x);
        if (!x)
            return -1;
        x->next_free = pool->nodes;
        pool->nodes = x;
        pool->n_nodes++;
    }
    while (pool->n_cells < cells) {
        struct phash_cell *c = mem_alloc(m, sizeof *c);
        if (!c)
            return -1;
        c->next_free = pool->cells;
        pool->cells = c;
        pool->n_cells++;
    }
    return 0;
}

void phash_pool_free(phash_pool *pool, mem_ctx *m)
{
    while (pool->nodes) {
        struct phash_node *x = pool->nodes;
        pool->nodes = x->next_free;
        mem_free_sized(m, x, sizeof *x);
    }
    while (pool->cells) {
        struct phash_cell *c = pool->cells;
        pool->cells = c->next_free;
        mem_free_sized(m, c, sizeof *c);
    }
    pool->n_nodes = pool->n_cells = 0;
}

void phash_pool_move(phash_pool *to, phash_pool *from, uint32_t keep, mem_ctx *m)
{
    if (!to->n_nodes && !to->n_cells) {   /* a write call's borrow: O(1) */
        *to = *from;
        *from = (phash_pool){ 0 };
    }
    while (from->nodes) {
        struct phash_node *x = from->nodes;
        from->nodes = x->next_free;
        x->next_free = to->nodes;
        to->nodes = x;
        to->n_nodes++;
    }
    while (from->cells) {
        struct phash_cell *c = from->cells;
        from->cells = c->next_free;
        c->next_free = to->cells;
        to->cells = c;
        to->n_cells++;
    }
    from->n_nodes = from->n_cells = 0;
    while (to->n_nodes > keep) {
        struct phash_node *x = to->nodes;
        to->nodes = x->next_free;
        to->n_nodes--;
        mem_free_sized(m, x, sizeof *x);
    }
    while (to->n_cells > keep) {
        struct phash_cell *c = to->cells;
        to->cells = c->next_free;
        to->n_cells--;
        mem_free_sized(m, c, sizeof *c);
    }
}

/* ---- references ---------------------------------------------------------- */

static void cell_unref(struct phash_cell *c, mem_ctx *m)
{
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    value_release(&c->key);
    mem_free_sized(m, c, sizeof *c);
}

static void node_unref(struct phash_node *x, mem_ctx *m)
{
    if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (unsigned i = 0; i < PHASH_FANOUT; i++) {
        uintptr_t s = x->slot[i];
        if (!s)
            continue;
        if (is_cell(s))
            cell_unref(cell_of(s), m);
        else
            node_unref(node_of(s), m);
    }
    mem_free_sized(m, x, sizeof *x);
}

static void slot_retain(uintptr_t s)
{
    if (!s)
        return;
    if (is_cell(s))
        atomic_fetch_add_explicit(&cell_of(s)->refs, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&node_of(s)->refs, 1, memory_order_relaxed);
}

void phash_share(const phash *src, phash *dst)
{
    *dst = *src;
    if (src->root)
        atomic_fetch_add_explicit(&src->root->refs, 1, memory_order_relaxed);
}

void phash_release(phash *h, mem_ctx *m)
{
    if (h->root)
        node_unref(h->root, m);
    h->root = NULL;
}

static size_t node_private_bytes(const struct phash_node *x)
{
    if (atomic_load_explicit(&x->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = sizeof *x;
    for (unsigned i = 0; i < PHASH_FANOUT; i++) {
        uintptr_t s = x->slot[i];
        if (!s)
            continue;
        if (!is_cell(s))
            bytes += node_private_bytes(node_of(s));
        else if (atomic_load_explicit(&cell_of(s)->refs, memory_order_acquire) == 1)
            bytes += sizeof(struct phash_cell);
    }
    return bytes;
}

size_t phash_private_bytes(const phash *h) { return h->root ? node_private_bytes(h->root) : 0; }

/* ---- lookup ---------------------------------------------------------------- */

/* The answer for key (of hash) where its walk ended in node in: at cell
   c, or at an empty slot (c NULL). */
static phash_answer answer_at(const struct phash_node *in, const struct phash_cell *c,
                              const value *key, uint64_t hash, phash_entry *e)
{
    if (c && c->hash == hash && same_key(&c->key, key)) {
        e->key = c->key;
        e->id = c->id;
        e->count = c->count;
        return PHASH_FOUND;
    }
    return in->incomplete ? PHASH_UNKNOWN : PHASH_ABSENT;
}

phash_answer phash_get(const phash *h, const value *key, uint64_t hash, phash_entry *e)
{
    const struct phash_node *x = h->root;
    for (uint32_t d = 0; x; d++) {
        uintptr_t s = x->slot[slot_at(hash, d)];
        if (s && !is_cell(s)) {
            x = node_of(s);
            continue;
        }
        return answer_at(x, s ? cell_of(s) : NULL, key, hash, e);
    }
    return PHASH_ABSENT;
}

phash_answer phash_find(const phash *h, const value *key, phash_entry *e)
{
    return phash_get(h, key, phash_hash(key), e);
}

/* Keys one phash_find_many pass walks side by side: enough independent
   misses to fill the processor's line-fill buffers (8 overlapped almost
   fully where one dependent miss cost 300-490 ns). */
#define FIND_GROUP 16

/* phash_find_many on n <= FIND_GROUP keys.  Each pass moves every key
   still walking one step: it reads the slot whose line the previous pass
   prefetched, then prefetches the next node's slot or the cell it found,
   so a pass costs about one miss however many keys walk in it.  The
   answers are phash_get's: the same slots read, the same comparisons. */
static void find_group(const phash *h, const value *keys, size_t n, phash_answer *ans,
                       phash_entry *e)
{
    uint64_t hash[FIND_GROUP];
    uintptr_t at[FIND_GROUP];                 /* a node to read, or a cell to compare */
    const struct phash_node *in[FIND_GROUP];  /* the node a cell was found in */
    uint32_t walking = 0;
    for (size_t i = 0; i < n; i++) {
        at[i] = 0;
        if (!phash_hashable(&keys[i])) {
            ans[i] = PHASH_UNKNOWN;
            continue;
        }
        ans[i] = PHASH_ABSENT;
        if (!h->root)
            continue;
        hash[i] = phash_hash(&keys[i]);
        at[i] = (uintptr_t)h->root;
        in[i] = h->root;
        walking++;
    }
    for (uint32_t d = 0; walking; d++) {
        for (size_t i = 0; i < n; i++) {
            uintptr_t s = at[i];
            if (!s)
                continue;
            if (is_cell(s)) {   /* found a pass ago, prefetched since */
                ans[i] = answer_at(in[i], cell_of(s), &keys[i], hash[i], &e[i]);
                at[i] = 0;
                walking--;
                continue;
            }
            const struct phash_node *x = node_of(s);
            uintptr_t next = x->slot[slot_at(hash[i], d)];
            if (!next) {
                ans[i] = answer_at(x, NULL, &keys[i], hash[i], &e[i]);
                walking--;
            } else if (is_cell(next)) {
                __builtin_prefetch(cell_of(next));
                in[i] = x;
            } else {
                __builtin_prefetch(&node_of(next)->slot[slot_at(hash[i], d + 1)]);
            }
            at[i] = next;
        }
    }
}

void phash_find_many(const phash *h, const value *keys, size_t n, phash_answer *ans,
                     phash_entry *e)
{
    for (size_t i = 0; i < n; i += FIND_GROUP)
        find_group(h, keys + i, n - i < FIND_GROUP ? n - i : FIND_GROUP, ans + i, e + i);
}

/* ---- put ------------------------------------------------------------------- */

/* Makes the node in *slot private, copying a shared one from the pool. */
static struct phash_node *own_node(uintptr_t *slot, phash_pool *pool, mem_ctx *m)
{
    struct phash_node *x = node_of(*slot);
    if (atomic_load_explicit(&x->refs, memory_order_acquire) == 1)
        return x;
    struct phash_node *c = node_take(pool);
    c->used = x->used;
    c->incomplete = x->incomplete;
    for (unsigned i = 0; i < PHASH_FANOUT; i++) {
        c->slot[i] = x->slot[i];
        slot_retain(c->slot[i]);
    }
    MEM_NOTE_COPIED(x->used);
    *slot = (uintptr_t)c;
    node_unref(x, m);
    return c;
}

/* Makes the cell in *slot private, copying a shared one from the pool. */
static struct phash_cell *own_cell(uintptr_t *slot, phash_pool *pool, mem_ctx *m)
{
    struct phash_cell *c = cell_of(*slot);
    if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1)
        return c;
    struct phash_cell *n = cell_take(pool);
    n->hash = c->hash;
    n->key = value_retain(c->key);
    n->id = c->id;
    n->count = c->count;
    MEM_NOTE_COPIED(1);
    *slot = (uintptr_t)n | 1;
    cell_unref(c, m);
    return n;
}

/* Drops the empty nodes at the bottom of path[0..depth] (all private),
   unlinking each from its parent (the root from *root); an incomplete
   node stays. */
static void prune(uintptr_t *root, struct phash_node **path, uint32_t depth, uint64_t hash,
                  phash_pool *pool, mem_ctx *m)
{
    for (uint32_t d = depth + 1; d-- > 0;) {
        struct phash_node *x = path[d];
        if (x->used || x->incomplete)
            return;
        node_put(pool, m, x);
        if (d == 0) {
            *root = 0;
            return;
        }
        path[d - 1]->slot[slot_at(hash, d - 1)] = 0;
        path[d - 1]->used--;
    }
}

/* phash_put on the trie whose root is in *root (a slot like any other). */
static void put_at(uintptr_t *root, phash_pool *pool, mem_ctx *m, const value *key,
                   uint64_t hash, uint64_t id, uint64_t count)
{
    if (!*root) {
        if (!count)
            return;
        *root = (uintptr_t)node_take(pool);
    }
    struct phash_node *path[PHASH_MAX_DEPTH];
    uintptr_t *slot = root;
    for (uint32_t d = 0;; d++) {
        assert(d < PHASH_MAX_DEPTH);
        struct phash_node *x = own_node(slot, pool, m);
        path[d] = x;
        unsigned i = slot_at(hash, d);
        uintptr_t s = x->slot[i];
        if (s && !is_cell(s)) {
            slot = &x->slot[i];
            continue;
        }
        struct phash_cell *c = s ? cell_of(s) : NULL;
        if (c && c->hash == hash && same_key(&c->key, key)) {
            if (count) {
                c = own_cell(&x->slot[i], pool, m);
                c->id = id;
                c->count = count;
            } else {
                x->slot[i] = 0;
                x->used--;
                cell_unref(c, m);
                prune(root, path, d, hash, pool, m);
            }
            return;
        }
        /* key has no cell.  In an incomplete node it may be one of those
           left out, with entries the trie does not count: it stays out. */
        if (!count || x->incomplete)
            return;
        if (!c) {
            struct phash_cell *n = cell_take(pool);
            n->hash = hash;
            n->key = value_retain(*key);
            n->id = id;
            n->count = count;
            x->slot[i] = (uintptr_t)n | 1;
            x->used++;
            return;
        }
        if (d + 1 == PHASH_MAX_DEPTH) {   /* one hash, two keys: leave key out */
            x->incomplete = 1;
            return;
        }
        /* Push the other key's cell one level down and go on there. */
        struct phash_node *y = node_take(pool);
        y->slot[slot_at(c->hash, d + 1)] = s;
        y->used = 1;
        x->slot[i] = (uintptr_t)y;
        slot = &x->slot[i];
    }
}

void phash_put(phash *h, phash_pool *pool, mem_ctx *m, const value *key, uint64_t hash,
               uint64_t id, uint64_t count)
{
    uintptr_t root = (uintptr_t)h->root;
    put_at(&root, pool, m, key, hash, id, count);
    h->root = node_of(root);
}

/* ---- checks -------------------------------------------------------------- */

#ifdef STRATA_TESTING
static int check_node(const struct phash_node *x, uint32_t depth, uint64_t prefix,
                      uint64_t *cells)
{
    if (depth >= PHASH_MAX_DEPTH || atomic_load(&x->refs) == 0)
        return -1;
    unsigned used = 0;
    for (unsigned i = 0; i < PHASH_FANOUT; i++) {
        uintptr_t s = x->slot[i];
        if (!s)
            continue;
        used++;
        uint64_t p = prefix | (uint64_t)i << (depth * PHASH_LEVEL_BITS);
        if (!is_cell(s)) {
            if (check_node(node_of(s), depth + 1, p, cells))
                return -1;
            continue;
        }
        const struct phash_cell *c = cell_of(s);
        uint32_t bits = (depth + 1) * PHASH_LEVEL_BITS;
        uint64_t mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        if (atomic_load(&c->refs) == 0 || c->count == 0 || !phash_hashable(&c->key) ||
            c->hash != phash_hash(&c->key) || (c->hash & mask) != p)
            return -1;
        (*cells)++;
    }
    if (used != x->used || (!used && !x->incomplete))
        return -1;
    return 0;
}

int phash_check(const phash *h, uint64_t *cells)
{
    *cells = 0;
    return h->root ? check_node(h->root, 0, 0, cells) : 0;
}
#endif
