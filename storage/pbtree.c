/*
 * pbtree — the persistent B+tree behind the property indices (design and
 * invariants in pbtree.h).
 *
 * Nodes.  Leaves and interior nodes have one size, so one pool serves both.
 * ent[] holds a leaf's entries, or an interior node's separators: ent[i] of
 * an interior node is <= every entry under kid[i], and everything under
 * kid[i] is < ent[i + 1] (the second half is what lets a descent trust the
 * separators; it holds because a separator is only ever created as the
 * minimum of the subtree to its right, and only separator 0 is ever
 * lowered).  A separator owns a reference to its key, like an entry.
 *
 * Writes.  pbtree_insert and pbtree_delete first look the entry up, so a
 * write that changes nothing touches nothing.  Then they descend from the
 * root making each node on the path private (own(): a node with refcount
 * one is already this tree's; a shared one is copied from the pool and the
 * original loses this tree's reference), remembering the path, and fix the
 * tree up bottom-up along it:
 *   insert  puts the entry into its leaf; a full node splits into halves
 *           (split()) and hands a separator and kid to its parent; a root
 *           that splits gets a new root above it (height + 1).  A new
 *           minimum lowers separator 0 on the way down.
 *   delete  removes the entry; a node left empty is unlinked from its
 *           parent, recursively (an empty root leaves the tree empty); an
 *           interior root left with one kid is replaced by that kid
 *           (height - 1) while it is private.  Underfull nodes are not
 *           merged: indices mostly grow, and a merge would have to copy a
 *           shared sibling off the path.
 * Nodes come only from the pool and freed ones go back to it, so neither
 * write allocates and neither can fail.
 */
#include "storage/pbtree.h"

#include <assert.h>
#include <stdatomic.h>
#include <string.h>

/* Deepest path a cursor can hold.  A tree only grows a level when its root
   splits, which takes some (PBTREE_ORDER / 2)^height inserts: 16^15 at the
   release order, 2^15 at the test order. */
#define MAX_DEPTH (sizeof(((pbtree_cursor *)0)->path) / sizeof(((pbtree_cursor *)0)->path[0]))

/* Freed nodes the pool keeps for later writes; beyond that they go back to
   the allocator, so a mass delete does not pin its memory. */

_Static_assert(PBTREE_ORDER >= 4 && PBTREE_ORDER <= UINT16_MAX, "n is a uint16_t");

struct pbtree_node {
    union {
        struct pbtree_node *next_free;   /* while in a pool */
        struct {
            atomic_uint refs;
            uint16_t n;                  /* entries, or kids; never 0 in a tree */
            uint8_t leaf;
            uint8_t heap;                /* a key may own a heap body (note_key) */
        };
    };
    _Alignas(8) pbtree_entry ent[PBTREE_ORDER];   /* entries, or separators */
    struct pbtree_node *kid[PBTREE_ORDER];        /* interior nodes only */
};

/* Fold-back frees a held view's copied nodes and the next reserve takes
   as many: the writer's cache must keep blocks of a node's size. */
_Static_assert(sizeof(struct pbtree_node) <= MEM_CACHE_MAX, "the writer's cache keeps nodes");

int pbtree_entry_cmp(const value *akey, uint64_t aid, const value *bkey, uint64_t bid)
{
    /* Integer keys are the common case (ids, counts): compare them inline
       rather than through value_order's dispatch. */
    int c = akey->type == VAL_INT && bkey->type == VAL_INT
                ? (akey->u.i > bkey->u.i) - (akey->u.i < bkey->u.i)
                : value_order(akey, bkey);
    if (c)
        return c;
    return (aid > bid) - (aid < bid);
}

/* Keys of the scalar kinds own no heap body, so their references are
   no-ops: skipping the call for them (integer keys are the common case)
   makes copying and freeing a node's 32 keys a loop of type tests. */
static inline bool key_scalar(const value *k)
{
    return k->type == VAL_INT || k->type == VAL_FLOAT || k->type == VAL_BOOL ||
           k->type == VAL_NULL;
}

static inline value key_retain(value k) { return key_scalar(&k) ? k : value_retain(k); }

static inline void key_release(value *k)
{
    if (!key_scalar(k))
        value_release(k);
}

/* Marks x as holding a key that may own a heap body, when k does: a node
   whose keys are all scalars (heap clear) is copied and freed without a
   walk over its keys.  The mark is never cleared while the node lives, so
   it may over-report, never under-report. */
static inline void note_key(struct pbtree_node *x, const value *k)
{
    x->heap |= !key_scalar(k);
}

/* The first index in a[0..n) whose entry is >= (key, id), or > it when
   after is set. */
static unsigned bound(const pbtree_entry *a, unsigned n, const value *key, uint64_t id,
                      bool after)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        int c = pbtree_entry_cmp(&a[mid].key, a[mid].id, key, id);
        if (c < 0 || (after && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The kid of interior node x whose subtree holds (key, id) if anything
   does: the last one whose separator is <= it, or kid 0. */
static unsigned route(const struct pbtree_node *x, const value *key, uint64_t id)
{
    unsigned i = bound(x->ent, x->n, key, id, true);
    return i ? i - 1 : 0;
}

/* ---- nodes and the pool ------------------------------------------------ */

static void pool_push(pbtree_pool *pool, struct pbtree_node *x)
{
    x->next_free = pool->free;
    pool->free = x;
    pool->n++;
}

static struct pbtree_node *pool_take(pbtree_pool *pool, bool leaf)
{
    assert(pool->n > 0 && "pbtree write without pbtree_reserve");
    struct pbtree_node *x = pool->free;
    pool->free = x->next_free;
    pool->n--;
    atomic_init(&x->refs, 1);
    x->n = 0;
    x->leaf = leaf;
    x->heap = 0;
    return x;
}

/* Returns an empty private node (its keys released) to the pool. */
static void pool_put(pbtree_pool *pool, mem_ctx *m, struct pbtree_node *x)
{
    assert(x->n == 0);
    if (pool->n < PBTREE_POOL_KEEP)
        pool_push(pool, x);
    else
        mem_free_sized(m, x, sizeof *x);
}

static void node_unref(struct pbtree_node *x, mem_ctx *m)
{
    if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (x->heap)
        for (unsigned i = 0; i < x->n; i++)
            key_release(&x->ent[i].key);
    if (!x->leaf)
        for (unsigned i = 0; i < x->n; i++)
            node_unref(x->kid[i], m);
    mem_free_sized(m, x, sizeof *x);
}

/* Makes *slot private to this tree, copying it from the pool when shared;
   the copy owns new references to everything the original pointed at. */
static struct pbtree_node *own(struct pbtree_node **slot, pbtree_pool *pool, mem_ctx *m)
{
    struct pbtree_node *x = *slot;
    if (atomic_load_explicit(&x->refs, memory_order_acquire) == 1)
        return x;
    struct pbtree_node *c = pool_take(pool, x->leaf);
    c->n = x->n;
    c->heap = x->heap;
    memcpy(c->ent, x->ent, x->n * sizeof *c->ent);
    if (x->heap)
        for (unsigned i = 0; i < x->n; i++)
            c->ent[i].key = key_retain(c->ent[i].key);
    if (!x->leaf) {
        memcpy(c->kid, x->kid, x->n * sizeof *c->kid);
        for (unsigned i = 0; i < x->n; i++)
            atomic_fetch_add_explicit(&c->kid[i]->refs, 1, memory_order_relaxed);
    }
    MEM_NOTE_COPIED(x->n);
    *slot = c;
    node_unref(x, m);
    return c;
}

/* Moves the upper half of full node x into a new right sibling. */
static struct pbtree_node *split(struct pbtree_node *x, pbtree_pool *pool)
{
    struct pbtree_node *r = pool_take(pool, x->leaf);
    r->heap = x->heap;
    unsigned keep = PBTREE_ORDER / 2, moved = x->n - keep;
    memcpy(r->ent, x->ent + keep, moved * sizeof *r->ent);
    if (!x->leaf)
        memcpy(r->kid, x->kid + keep, moved * sizeof *r->kid);
    r->n = (uint16_t)moved;
    x->n = (uint16_t)keep;
    return r;
}

/* Puts entry or separator e (and, in an interior node, kid) at index i of
   private node x, taking ownership of both.  A full x splits first; the
   new right sibling is returned for the parent to link, else NULL. */
static struct pbtree_node *insert_at(struct pbtree_node *x, unsigned i, pbtree_entry e,
                                     struct pbtree_node *kid, pbtree_pool *pool)
{
    struct pbtree_node *right = NULL;
    if (x->n == PBTREE_ORDER) {
        right = split(x, pool);
        if (i > x->n) {
            i -= x->n;
            x = right;
        }
    }
    memmove(x->ent + i + 1, x->ent + i, (x->n - i) * sizeof *x->ent);
    x->ent[i] = e;
    note_key(x, &e.key);
    if (!x->leaf) {
        memmove(x->kid + i + 1, x->kid + i, (x->n - i) * sizeof *x->kid);
        x->kid[i] = kid;
    }
    x->n++;
    return right;
}

/* Removes entry i of private node x, or separator and kid i (the kid is the
   caller's to dispose of). */
static void remove_at(struct pbtree_node *x, unsigned i)
{
    /* Dropping kid 0 keeps separator 0 for the new kid 0: it is still a
       lower bound for it, and stays equal to the parent's separator for x. */
    unsigned s = (!x->leaf && i == 0 && x->n > 1) ? 1 : i;
    key_release(&x->ent[s].key);
    memmove(x->ent + s, x->ent + s + 1, (x->n - s - 1) * sizeof *x->ent);
    if (!x->leaf)
        memmove(x->kid + i, x->kid + i + 1, (x->n - i - 1) * sizeof *x->kid);
    x->n--;
}

/* Makes the root-to-leaf path towards (key, id) private, filling path[0..
   height] and pos[0..height); with lower_min, lowers separator 0 wherever
   (key, id) is below it, for an insert of a new minimum. */
static void descend_mut(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key,
                        uint64_t id, bool lower_min, struct pbtree_node **path, unsigned *pos)
{
    struct pbtree_node **slot = &t->root;
    for (uint32_t d = 0;; d++) {
        struct pbtree_node *x = own(slot, pool, m);
        path[d] = x;
        if (d == t->height)
            return;
        unsigned i = route(x, key, id);
        if (lower_min && i == 0 && pbtree_entry_cmp(key, id, &x->ent[0].key, x->ent[0].id) < 0) {
            key_release(&x->ent[0].key);
            x->ent[0].key = key_retain(*key);
            x->ent[0].id = id;
            note_key(x, key);
        }
        pos[d] = i;
        slot = &x->kid[i];
    }
}

/* ---- the tree ---------------------------------------------------------- */

void pbtree_init(pbtree *t)
{
    t->root = NULL;
    t->height = 0;
    t->hashed = false;
    t->count = 0;
    phash_init(&t->hash);
}

void pbtree_init_hashed(pbtree *t)
{
    pbtree_init(t);
    t->hashed = true;
}

void pbtree_share(const pbtree *src, pbtree *dst)
{
    *dst = *src;
    if (src->root)
        atomic_fetch_add_explicit(&src->root->refs, 1, memory_order_relaxed);
    phash_share(&src->hash, &dst->hash);
}

void pbtree_release(pbtree *t, mem_ctx *m)
{
    bool hashed = t->hashed;
    if (t->root)
        node_unref(t->root, m);
    phash_release(&t->hash, m);
    pbtree_init(t);
    t->hashed = hashed;
}

static size_t node_private_bytes(const struct pbtree_node *x)
{
    if (!x || atomic_load_explicit(&x->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = sizeof *x;
    if (!x->leaf)
        for (unsigned i = 0; i < x->n; i++)
            bytes += node_private_bytes(x->kid[i]);
    return bytes;
}

size_t pbtree_private_bytes(const pbtree *t)
{
    return node_private_bytes(t->root) + phash_private_bytes(&t->hash);
}

uint32_t pbtree_op_nodes(const pbtree *t)
{
    /* Per write: a copy and a split on every level, and a new root; the
       height is taken one higher than now, for a tree that grows during
       the ops. */
    return 2 * (t->height + 2) + 1;
}

/* Items lo .. hi of part i when n items are split into parts as even as
   can be. */
static void even_part(uint64_t n, uint64_t parts, uint64_t i, uint64_t *lo, uint64_t *hi)
{
    uint64_t q = n / parts, r = n % parts;
    *lo = i * q + (i < r ? i : r);
    *hi = *lo + q + (i < r);
}

static struct pbtree_node *node_alloc(mem_ctx *m, bool leaf)
{
    struct pbtree_node *x = mem_alloc(m, sizeof *x);
    if (x) {
        atomic_init(&x->refs, 1);
        x->n = 0;
        x->leaf = leaf;
        x->heap = 0;
    }
    return x;
}

/* The hash of a built tree: one put per run of equal keys (adjacent, the
   entries being sorted), the run's first id the least.  -1 when out of
   memory (the hash is then released). */
static int build_hash(pbtree *t, mem_ctx *m, const pbtree_entry *e, uint64_t n)
{
    phash_pool pool = { 0 };
    int rc = 0;
    for (uint64_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && value_order(&e[j].key, &e[i].key) == 0; j++)
            ;
        if (!phash_hashable(&e[i].key))
            continue;
        if (phash_reserve(&pool, m, 1) != 0) {
            phash_release(&t->hash, m);
            rc = -1;
            break;
        }
        phash_put(&t->hash, &pool, m, &e[i].key, phash_hash(&e[i].key), e[i].id, j - i);
    }
    phash_pool_free(&pool, m);
    return rc;
}

int pbtree_build(pbtree *t, mem_ctx *m, const pbtree_entry *e, uint64_t n, bool hashed)
{
    pbtree_init(t);
    t->hashed = hashed;
    if (hashed && build_hash(t, m, e, n) != 0)
        return -1;
    if (n == 0)
        return 0;
    uint64_t count = (n + PBTREE_ORDER - 1) / PBTREE_ORDER;
    size_t bytes = mem_array_size(count, sizeof(struct pbtree_node *));
    struct pbtree_node **level = mem_alloc(mem_scratch(), bytes);
    if (!level) {
        phash_release(&t->hash, m);
        return -1;
    }
    uint64_t lo, hi, done = 0, height = 0;
    for (; done < count; done++) {
        struct pbtree_node *x = node_alloc(m, true);
        if (!x)
            goto fail_leaves;
        even_part(n, count, done, &lo, &hi);
        for (uint64_t i = lo; i < hi; i++) {
            x->ent[i - lo].key = key_retain(e[i].key);
            x->ent[i - lo].id = e[i].id;
            note_key(x, &e[i].key);
        }
        x->n = (uint16_t)(hi - lo);
        level[done] = x;
    }
    /* Each level above: parents take their kids' minimum as separators,
       and replace them in level[] from the front (parent p's kids start at
       or after p, and are read before p is written). */
    while (count > 1) {
        uint64_t parents = (count + PBTREE_ORDER - 1) / PBTREE_ORDER;
        for (uint64_t p = 0; p < parents; p++) {
            even_part(count, parents, p, &lo, &hi);
            struct pbtree_node *x = node_alloc(m, false);
            if (!x) {
                /* level[0..p) are new parents, which own their kids;
                   kids from lo on are unattached. */
                for (uint64_t i = 0; i < p; i++)
                    node_unref(level[i], m);
                for (uint64_t i = lo; i < count; i++)
                    node_unref(level[i], m);
                mem_free_sized(mem_scratch(), level, bytes);
                phash_release(&t->hash, m);
                return -1;
            }
            for (uint64_t i = lo; i < hi; i++) {
                x->kid[i - lo] = level[i];
                x->ent[i - lo].key = key_retain(level[i]->ent[0].key);
                x->ent[i - lo].id = level[i]->ent[0].id;
                note_key(x, &level[i]->ent[0].key);
            }
            x->n = (uint16_t)(hi - lo);
            level[p] = x;
        }
        count = parents;
        height++;
    }
    t->root = level[0];
    t->height = (uint32_t)height;
    t->count = n;
    mem_free_sized(mem_scratch(), level, bytes);
    return 0;
fail_leaves:
    for (uint64_t i = 0; i < done; i++)
        node_unref(level[i], m);
    mem_free_sized(mem_scratch(), level, bytes);
    phash_release(&t->hash, m);
    return -1;
}

int pbtree_pool_fill(pbtree_pool *pool, mem_ctx *m, uint64_t n)
{
    if (n > UINT32_MAX)
        return -1;
    while (pool->n < n) {
        struct pbtree_node *x = mem_alloc(m, sizeof *x);
        if (!x)
            return -1;
        pool_push(pool, x);
    }
    return 0;
}

void pbtree_need_add(pbtree_need *need, const pbtree *t, uint32_t ops)
{
    need->nodes += (uint64_t)ops * pbtree_op_nodes(t);
    if (t->hashed)
        need->puts += ops;
}

int pbtree_pool_reserve(pbtree_pool *pool, mem_ctx *m, const pbtree_need *need)
{
    if (need->puts > UINT32_MAX ||
        (need->puts && phash_reserve(&pool->hash, m, (uint32_t)need->puts) != 0))
        return -1;
    return pbtree_pool_fill(pool, m, need->nodes);
}

int pbtree_reserve(pbtree_pool *pool, mem_ctx *m, const pbtree *t, uint32_t ops)
{
    pbtree_need need = { 0, 0 };
    pbtree_need_add(&need, t, ops);
    return pbtree_pool_reserve(pool, m, &need);
}

void pbtree_pool_free(pbtree_pool *pool, mem_ctx *m)
{
    phash_pool_free(&pool->hash, m);
    while (pool->free) {
        struct pbtree_node *x = pool->free;
        pool->free = x->next_free;
        mem_free_sized(m, x, sizeof *x);
    }
    pool->n = 0;
}

void pbtree_pool_move(pbtree_pool *to, pbtree_pool *from, uint32_t keep, mem_ctx *m)
{
    phash_pool_move(&to->hash, &from->hash, PHASH_POOL_KEEP, m);
    if (to->n == 0) {   /* the usual case, a write call's borrow: O(1) */
        to->free = from->free;
        to->n = from->n;
        from->free = NULL;
        from->n = 0;
    }
    while (from->free) {
        struct pbtree_node *x = from->free;
        from->free = x->next_free;
        pool_push(to, x);
    }
    from->n = 0;
    while (to->n > keep) {
        struct pbtree_node *x = to->free;
        to->free = x->next_free;
        to->n--;
        mem_free_sized(m, x, sizeof *x);
    }
}

/* The least id under key in t, by a seek; false when there is none. */
static bool seek_first_id(const pbtree *t, const value *key, uint64_t *id)
{
    pbtree_cursor c;
    pbtree_seek(t, key, 0, &c);
    if (!c.valid || value_order(&pbtree_cursor_entry(&c)->key, key) != 0)
        return false;
    *id = pbtree_cursor_entry(&c)->id;
    return true;
}

/* Brings a hashed tree's summary of key up to date after (key, id) went in
   (inserted) or out.  Cannot fail: the put draws on the reserve. */
static void note_hash(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id,
                      bool inserted)
{
    if (!t->hashed || !phash_hashable(key))
        return;
    uint64_t h = phash_hash(key);
    phash_entry e;
    phash_answer a = phash_get(&t->hash, key, h, &e);
    if (a == PHASH_UNKNOWN)
        return;
    if (inserted) {
        if (a == PHASH_ABSENT)
            phash_put(&t->hash, &pool->hash, m, key, h, id, 1);
        else
            phash_put(&t->hash, &pool->hash, m, key, h, id < e.id ? id : e.id, e.count + 1);
        return;
    }
    assert(a == PHASH_FOUND);
    if (a != PHASH_FOUND)
        return;
    uint64_t least = e.id;
    if (e.count > 1 && id == e.id) {
        bool still = seek_first_id(t, key, &least);   /* the next id up */
        assert(still);
        (void)still;
    }
    phash_put(&t->hash, &pool->hash, m, key, h, least, e.count - 1);
}

int pbtree_point(const pbtree *t, const value *key, uint64_t *id, uint64_t *count)
{
    if (!t->hashed || !phash_hashable(key))
        return -1;
    phash_entry e;
    switch (phash_find(&t->hash, key, &e)) {
    case PHASH_FOUND:
        *id = e.id;
        *count = e.count;
        return 1;
    case PHASH_ABSENT:
        return 0;
    default:
        return -1;
    }
}

int pbtree_point_many(const pbtree *t, const value *keys, size_t n, phash_answer *ans,
                      phash_entry *e)
{
    if (!t->hashed)
        return -1;
    phash_find_many(&t->hash, keys, n, ans, e);
    return 0;
}

int pbtree_insert(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id)
{
    if (pbtree_contains(t, key, id))
        return 0;
    pbtree_insert_absent(t, pool, m, key, id);
    return 1;
}

int pbtree_delete(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id)
{
    if (!pbtree_contains(t, key, id))
        return 0;
    pbtree_delete_present(t, pool, m, key, id);
    return 1;
}

/* Puts entry e at index i of the private leaf at the end of path (from
   descend_mut) and splits upwards as needed. */
static void insert_in_leaf(pbtree *t, pbtree_pool *pool, struct pbtree_node **path,
                           const unsigned *pos, unsigned i, pbtree_entry e)
{
    uint32_t d = t->height;
    struct pbtree_node *x = path[d];
    struct pbtree_node *right = insert_at(x, i, e, NULL, pool);
    t->count++;
    while (right) {
        pbtree_entry sep = { key_retain(right->ent[0].key), right->ent[0].id };
        if (d == 0) {
            struct pbtree_node *root = pool_take(pool, false);
            pbtree_entry low = { key_retain(x->ent[0].key), x->ent[0].id };
            insert_at(root, 0, low, x, pool);
            insert_at(root, 1, sep, right, pool);
            t->root = root;
            t->height++;
            break;
        }
        x = path[--d];
        right = insert_at(x, pos[d] + 1, sep, right, pool);
    }
}

/* Removes entry i of the private leaf at the end of path (from
   descend_mut), unlinking the nodes it leaves empty. */
static void delete_in_leaf(pbtree *t, pbtree_pool *pool, mem_ctx *m, struct pbtree_node **path,
                           const unsigned *pos, unsigned i)
{
    uint32_t d = t->height;
    struct pbtree_node *x = path[d];
    remove_at(x, i);
    t->count--;
    while (x->n == 0) {
        pool_put(pool, m, x);
        if (d == 0) {
            t->root = NULL;
            t->height = 0;
            return;
        }
        x = path[--d];
        remove_at(x, pos[d]);
    }
    /* Only a private root is collapsed: its reference to the kid passes to
       the tree.  A shared one-kid root is still a sound tree, one level
       deeper than it needs to be. */
    while (t->height > 0 && t->root->n == 1 &&
           atomic_load_explicit(&t->root->refs, memory_order_acquire) == 1) {
        struct pbtree_node *old = t->root;
        t->root = old->kid[0];
        key_release(&old->ent[0].key);
        old->n = 0;
        pool_put(pool, m, old);
        t->height--;
    }
}

void pbtree_insert_absent(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key,
                          uint64_t id)
{
    assert(!pbtree_contains(t, key, id));
    note_hash(t, pool, m, key, id, true);
    pbtree_entry e = { key_retain(*key), id };
    if (!t->root) {
        t->root = pool_take(pool, true);
        insert_at(t->root, 0, e, NULL, pool);
        t->count++;
        return;
    }
    assert(t->height + 1 < MAX_DEPTH);   /* room for a new root */
    struct pbtree_node *path[MAX_DEPTH];
    unsigned pos[MAX_DEPTH];
    descend_mut(t, pool, m, key, id, true, path, pos);
    struct pbtree_node *x = path[t->height];
    insert_in_leaf(t, pool, path, pos, bound(x->ent, x->n, key, id, false), e);
}

void pbtree_delete_present(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key,
                           uint64_t id)
{
    assert(pbtree_contains(t, key, id));
    struct pbtree_node *path[MAX_DEPTH];
    unsigned pos[MAX_DEPTH];
    descend_mut(t, pool, m, key, id, false, path, pos);
    struct pbtree_node *x = path[t->height];
    delete_in_leaf(t, pool, m, path, pos, bound(x->ent, x->n, key, id, false));
    note_hash(t, pool, m, key, id, false);
}

/* pbtree_cancel_or_insert by a look-up and a plain write. */
static int cancel_or_insert_looked_up(pbtree *t, pbtree_pool *pool, mem_ctx *m,
                                      const value *key, uint64_t cancel, uint64_t add)
{
    if (pbtree_contains(t, key, cancel)) {
        pbtree_delete_present(t, pool, m, key, cancel);
        return 0;
    }
    pbtree_insert_absent(t, pool, m, key, add);
    return 1;
}

int pbtree_cancel_or_insert(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key,
                            uint64_t cancel, uint64_t add)
{
    assert(cancel == add + 1 || add == cancel + 1);
    assert(!pbtree_contains(t, key, add));
    /* A hashed tree keeps its trie through the plain writes (the level
       stacks' levels, this op's callers, keep no hash). */
    if (t->hashed || !t->root)
        return cancel_or_insert_looked_up(t, pool, m, key, cancel, add);
    assert(t->height + 1 < MAX_DEPTH);
    struct pbtree_node *path[MAX_DEPTH];
    unsigned pos[MAX_DEPTH];
    /* Towards (key, add), lowering separators 0 as an insert does (a lower
       bound stays one if the cancel wins instead). */
    descend_mut(t, pool, m, key, add, true, path, pos);
    struct pbtree_node *x = path[t->height];
    unsigned i = bound(x->ent, x->n, key, add, false);
    /* Nothing lies between the two in the order, so a present (key,
       cancel) is the leaf's neighbour of where (key, add) goes: ent[i - 1]
       or ent[i].  At the leaf's edge it may be in the leaf beside this one
       (a separator can equal an entry since deleted); then look it up. */
    bool below = cancel < add;
    if (below ? i == 0 : i == x->n)
        return cancel_or_insert_looked_up(t, pool, m, key, cancel, add);
    unsigned c = below ? i - 1 : i;
    if (pbtree_entry_cmp(&x->ent[c].key, x->ent[c].id, key, cancel) == 0) {
        delete_in_leaf(t, pool, m, path, pos, c);
        return 0;
    }
    insert_in_leaf(t, pool, path, pos, i, (pbtree_entry){ key_retain(*key), add });
    return 1;
}

bool pbtree_contains(const pbtree *t, const value *key, uint64_t id)
{
    const struct pbtree_node *x = t->root;
    if (!x)
        return false;
    for (uint32_t d = 0; d < t->height; d++)
        x = x->kid[route(x, key, id)];
    unsigned i = bound(x->ent, x->n, key, id, false);
    return i < x->n && pbtree_entry_cmp(&x->ent[i].key, x->ent[i].id, key, id) == 0;
}

bool pbtree_is_shared(const pbtree *t)
{
    return t->root && atomic_load_explicit(&((struct pbtree_node *)t->root)->refs,
                                           memory_order_acquire) != 1;
}

/* ---- cursors ----------------------------------------------------------- */

/* Moves c to the first entry of the leaf after its current one. */
static void next_leaf(pbtree_cursor *c)
{
    uint32_t d = c->height;
    do {
        if (d == 0) {
            c->valid = false;
            return;
        }
        d--;
    } while (c->pos[d] + 1 >= c->path[d]->n);
    c->pos[d]++;
    for (; d < c->height; d++) {
        c->path[d + 1] = c->path[d]->kid[c->pos[d]];
        c->pos[d + 1] = 0;
    }
}

void pbtree_seek(const pbtree *t, const value *key, uint64_t id, pbtree_cursor *c)
{
    c->height = t->height;
    c->valid = t->root != NULL;
    if (!c->valid)
        return;
    assert(t->height < MAX_DEPTH);
    const struct pbtree_node *x = t->root;
    for (uint32_t d = 0; d < t->height; d++) {
        c->path[d] = x;
        c->pos[d] = route(x, key, id);
        x = x->kid[c->pos[d]];
    }
    c->path[t->height] = x;
    c->pos[t->height] = bound(x->ent, x->n, key, id, false);
    if (c->pos[t->height] == x->n)
        next_leaf(c);
}

void pbtree_first(const pbtree *t, pbtree_cursor *c)
{
    c->height = t->height;
    c->valid = t->root != NULL;
    if (!c->valid)
        return;
    assert(t->height < MAX_DEPTH);
    const struct pbtree_node *x = t->root;
    for (uint32_t d = 0;; d++) {
        c->path[d] = x;
        c->pos[d] = 0;
        if (d == t->height)
            break;
        x = x->kid[0];
    }
}

const pbtree_entry *pbtree_cursor_entry(const pbtree_cursor *c)
{
    assert(c->valid);
    return &c->path[c->height]->ent[c->pos[c->height]];
}

void pbtree_cursor_next(pbtree_cursor *c)
{
    assert(c->valid);
    if (++c->pos[c->height] == c->path[c->height]->n)
        next_leaf(c);
}

/* ---- checks ------------------------------------------------------------ */

#ifdef STRATA_TESTING
struct check_state {
    const pbtree_entry *prev;   /* the last entry seen, in order */
    uint64_t count;
};

static int entry_lt(const pbtree_entry *a, const pbtree_entry *b)
{
    return pbtree_entry_cmp(&a->key, a->id, &b->key, b->id) < 0;
}

/* Everything under x must lie in [lo, hi) (NULL: unbounded). */
static int check_node(const struct pbtree_node *x, uint32_t depth, uint32_t height,
                      const pbtree_entry *lo, const pbtree_entry *hi, struct check_state *s)
{
    if (atomic_load(&x->refs) == 0 || x->n == 0 || x->n > PBTREE_ORDER)
        return -1;
    if ((bool)x->leaf != (depth == height))
        return -1;
    for (unsigned i = 0; i < x->n; i++) {
        const pbtree_entry *e = &x->ent[i];
        if ((lo && entry_lt(e, lo)) || (hi && !entry_lt(e, hi)))
            return -1;
        if (!x->heap && !key_scalar(&e->key))   /* the mark may over-report only */
            return -1;
        if (x->leaf) {
            if (s->prev && !entry_lt(s->prev, e))
                return -1;
            s->prev = e;
            s->count++;
        } else {
            const pbtree_entry *next = i + 1 < x->n ? &x->ent[i + 1] : hi;
            if (check_node(x->kid[i], depth + 1, height, e, next, s))
                return -1;
        }
    }
    return 0;
}

/* Invariant 6: every run of equal hashable keys is summarised exactly (or
   left out, "unknown"), and the trie holds nothing else. */
static int check_hash(const pbtree *t)
{
    uint64_t cells, found = 0;
    if (phash_check(&t->hash, &cells) != 0)
        return -1;
    if (!t->hashed)
        return cells == 0 ? 0 : -1;
    pbtree_cursor c;
    pbtree_first(t, &c);
    while (c.valid) {
        const pbtree_entry *e = pbtree_cursor_entry(&c);
        value key = e->key;   /* borrowed: the tree does not change */
        uint64_t least = e->id, n = 0;
        for (; c.valid && value_order(&pbtree_cursor_entry(&c)->key, &key) == 0;
             pbtree_cursor_next(&c))
            n++;
        if (!phash_hashable(&key))
            continue;
        phash_entry h;
        phash_answer a = phash_get(&t->hash, &key, phash_hash(&key), &h);
        if (a == PHASH_ABSENT || (a == PHASH_FOUND && (h.id != least || h.count != n)))
            return -1;
        found += a == PHASH_FOUND;
    }
    return found == cells ? 0 : -1;
}

int pbtree_check(const pbtree *t)
{
    if (check_hash(t) != 0)
        return -1;
    if (!t->root)
        return t->height == 0 && t->count == 0 ? 0 : -1;
    if (t->height >= MAX_DEPTH)
        return -1;
    struct check_state s = { NULL, 0 };
    if (check_node(t->root, 0, t->height, NULL, NULL, &s))
        return -1;
    return s.count == t->count ? 0 : -1;
}
#endif
