#include "storage/adj_tree.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

struct adj_tree {
    atomic_uint refs;
    uint16_t n;        /* entries (a leaf) or children (inner) */
    uint16_t cap;      /* a leaf's entry capacity; ADJT_FAN inner */
    uint32_t height;   /* 0: a leaf */
    uint32_t unused;
    _Alignas(8) unsigned char body[];   /* entries, or children then keys */
};

/* A leaf left with fewer entries than this merges with a neighbour. */
#define MERGE_BELOW (ADJT_LEAF_MAX / 4)
/* A build fills leaves to this, so the first inserts do not split them. */
#define BUILD_FILL (ADJT_LEAF_MAX / 8 * 7)

static inline size_t leaf_size(uint32_t cap) { return sizeof(adj_tree) + (size_t)cap * sizeof(adj_entry); }
#define INNER_SIZE (sizeof(adj_tree) + ADJT_FAN * (sizeof(adj_tree *) + sizeof(uint32_t)))

static inline size_t node_size(const adj_tree *t)
{
    return t->height ? INNER_SIZE : leaf_size(t->cap);
}
static inline adj_entry *ents(adj_tree *t) { return (adj_entry *)(void *)t->body; }
static inline const adj_entry *cents(const adj_tree *t)
{
    return (const adj_entry *)(const void *)t->body;
}
static inline adj_tree **kids(adj_tree *t) { return (adj_tree **)(void *)t->body; }
static inline adj_tree *const *ckids(const adj_tree *t)
{
    return (adj_tree *const *)(const void *)t->body;
}
static inline uint32_t *keys(adj_tree *t)
{
    return (uint32_t *)(void *)(t->body + ADJT_FAN * sizeof(adj_tree *));
}
static inline const uint32_t *ckeys(const adj_tree *t)
{
    return (const uint32_t *)(const void *)(t->body + ADJT_FAN * sizeof(adj_tree *));
}

static inline bool is_private(const adj_tree *t)
{
    return atomic_load_explicit(&t->refs, memory_order_acquire) == 1;
}

static inline bool is_full(const adj_tree *t)
{
    return t->n == (t->height ? ADJT_FAN : ADJT_LEAF_MAX);
}

/* The smallest id under t (t not empty). */
static uint32_t first_id(const adj_tree *t)
{
    while (t->height)
        t = ckids(t)[0];
    return cents(t)[0].rel;
}

static adj_tree *node_new(mem_ctx *m, uint32_t height, uint32_t cap)
{
    adj_tree *t = mem_alloc(m, height ? INNER_SIZE : leaf_size(cap));
    if (!t)
        return NULL;
    atomic_init(&t->refs, 1);
    t->n = 0;
    t->cap = (uint16_t)(height ? ADJT_FAN : cap);
    t->height = height;
    t->unused = 0;
    return t;
}

/* The entry capacity a leaf of at least want entries gets: its allocator
   size class filled, at most ADJT_LEAF_MAX. */
static uint32_t leaf_cap(const mem_ctx *m, uint32_t want)
{
    size_t good = mem_good_size(m, leaf_size(want));
    size_t cap = (good - sizeof(adj_tree)) / sizeof(adj_entry);
    return cap > ADJT_LEAF_MAX ? ADJT_LEAF_MAX : (uint32_t)cap;
}

adj_tree *adjt_new(mem_ctx *m) { return node_new(m, 0, leaf_cap(m, 4)); }

void adjt_retain(adj_tree *t)
{
    if (t)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void adjt_release(mem_ctx *m, adj_tree **tp)
{
    adj_tree *t = *tp;
    *tp = NULL;
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (t->height)
        for (uint32_t i = 0; i < t->n; i++)
            adjt_release(m, &kids(t)[i]);
    mem_free_sized(m, t, node_size(t));
}

/* Makes *tp private: a copy when it is shared, holding its children. */
static int own(mem_ctx *m, adj_tree **tp)
{
    adj_tree *t = *tp;
    if (is_private(t))
        return 0;
    adj_tree *c = node_new(m, t->height, t->cap);
    if (!c)
        return -1;
    c->n = t->n;
    if (t->height) {
        memcpy(kids(c), ckids(t), t->n * sizeof(adj_tree *));
        memcpy(keys(c), ckeys(t), t->n * sizeof(uint32_t));
        for (uint32_t i = 0; i < t->n; i++)
            adjt_retain(kids(c)[i]);
    } else {
        memcpy(ents(c), cents(t), t->n * sizeof(adj_entry));
        MEM_NOTE_COPIED(t->n);
    }
    adjt_release(m, tp);
    *tp = c;
    return 0;
}

/* The child of inner node t whose ids may include rel. */
static uint32_t child_for(const adj_tree *t, uint32_t rel)
{
    uint32_t lo = 1, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ckeys(t)[mid] <= rel)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* The position of the first entry of leaf t with an id >= rel. */
static uint32_t leaf_lower(const adj_tree *t, uint32_t rel)
{
    return adj_lower_bound(cents(t), sizeof(adj_entry), 0, t->n, rel);
}

static void insert_kid(adj_tree *p, uint32_t at, adj_tree *kid, uint32_t key)
{
    memmove(&kids(p)[at + 1], &kids(p)[at], (p->n - at) * sizeof(adj_tree *));
    memmove(&keys(p)[at + 1], &keys(p)[at], (p->n - at) * sizeof(uint32_t));
    kids(p)[at] = kid;
    keys(p)[at] = key;
    p->n++;
}

static void remove_kid(adj_tree *p, uint32_t at)
{
    memmove(&kids(p)[at], &kids(p)[at + 1], (p->n - at - 1) * sizeof(adj_tree *));
    memmove(&keys(p)[at], &keys(p)[at + 1], (p->n - at - 1) * sizeof(uint32_t));
    p->n--;
}

/* Splits p's full, private child i in two; p is private and not full. */
static int split_child(mem_ctx *m, adj_tree *p, uint32_t i)
{
    adj_tree *c = kids(p)[i];
    adj_tree *s = node_new(m, c->height, ADJT_LEAF_MAX);
    if (!s)
        return -1;
    uint32_t keep = c->n / 2u, moved = c->n - keep;
    if (c->height) {
        memcpy(kids(s), &kids(c)[keep], moved * sizeof(adj_tree *));
        memcpy(keys(s), &keys(c)[keep], moved * sizeof(uint32_t));
    } else {
        memcpy(ents(s), &ents(c)[keep], moved * sizeof(adj_entry));
    }
    s->n = (uint16_t)moved;
    c->n = (uint16_t)keep;
    insert_kid(p, i + 1, s, c->height ? keys(s)[0] : ents(s)[0].rel);
    return 0;
}

/* Gives private leaf *tp room for one more entry. */
static int leaf_room(mem_ctx *m, adj_tree **tp)
{
    adj_tree *t = *tp;
    if (t->n < t->cap)
        return 0;
    uint32_t cap = leaf_cap(m, t->cap * 2u);
    adj_tree *g = mem_realloc_sized(m, t, leaf_size(t->cap), leaf_size(cap));
    if (!g)
        return -1;
    g->cap = (uint16_t)cap;
    *tp = g;
    return 0;
}

int adjt_prepare_insert(mem_ctx *m, adj_tree **tp, uint32_t rel)
{
    if (own(m, tp) != 0)
        return -1;
    if (is_full(*tp)) {
        /* A new root over the full one; if the split then fails, a root
           with one child holds the same entries. */
        if ((*tp)->height >= ADJT_MAX_HEIGHT)
            return -1;
        adj_tree *r = node_new(m, (*tp)->height + 1, ADJT_FAN);
        if (!r)
            return -1;
        insert_kid(r, 0, *tp, 0);
        *tp = r;
        if (split_child(m, r, 0) != 0)
            return -1;
    }
    adj_tree **at = tp;
    while ((*at)->height) {
        adj_tree *t = *at;   /* private and not full */
        uint32_t i = child_for(t, rel);
        if (own(m, &kids(t)[i]) != 0)
            return -1;
        if (is_full(kids(t)[i])) {
            if (split_child(m, t, i) != 0)
                return -1;
            i = child_for(t, rel);
        }
        at = &kids(t)[i];
    }
    return leaf_room(m, at);
}

void adjt_insert(adj_tree *t, uint32_t rel, uint32_t other)
{
    while (t->height)
        t = kids(t)[child_for(t, rel)];
    assert(is_private(t) && t->n < t->cap);
    uint32_t at = leaf_lower(t, rel);
    assert(at == t->n || ents(t)[at].rel != rel);
    memmove(&ents(t)[at + 1], &ents(t)[at], (t->n - at) * sizeof(adj_entry));
    ents(t)[at] = (adj_entry){ .rel = rel, .other = other };
    t->n++;
}

/* The neighbour a leaf at child i of p merges with. */
static uint32_t merge_partner(const adj_tree *p, uint32_t i) { return i + 1 < p->n ? i + 1 : i - 1; }

int adjt_prepare_erase(mem_ctx *m, adj_tree **tp, uint32_t rel)
{
    if (own(m, tp) != 0)
        return -1;
    adj_tree *t = *tp;
    while (t->height) {
        uint32_t i = child_for(t, rel);
        if (own(m, &kids(t)[i]) != 0)
            return -1;
        adj_tree *c = kids(t)[i];
        if (c->height == 0 && c->n <= MERGE_BELOW && t->n > 1 &&
            own(m, &kids(t)[merge_partner(t, i)]) != 0)
            return -1;
        t = c;
    }
    return 0;
}

/* Merges p's underfull leaf i with its neighbour when both are private
   and fit in one leaf; an erase that finds the neighbour shared (another
   erase's merge moved things) leaves the leaf as it is. */
static void merge_leaf(mem_ctx *m, adj_tree *p, uint32_t i)
{
    if (p->n < 2)
        return;
    uint32_t j = merge_partner(p, i), l = i < j ? i : j, r = l + 1;
    adj_tree *left = kids(p)[l], *right = kids(p)[r];
    uint32_t sum = (uint32_t)left->n + right->n;
    if (!is_private(left) || !is_private(right) || sum > ADJT_LEAF_MAX / 4 * 3 || sum > left->cap)
        return;
    memcpy(&ents(left)[left->n], cents(right), right->n * sizeof(adj_entry));
    left->n = (uint16_t)sum;
    remove_kid(p, r);
    adjt_release(m, &right);
}

int adjt_erase(mem_ctx *m, adj_tree **tp, uint32_t rel)
{
    adj_tree **path[ADJT_MAX_HEIGHT];
    uint32_t idx[ADJT_MAX_HEIGHT];
    uint32_t d = 0;
    adj_tree **at = tp;
    while ((*at)->height) {
        uint32_t i = child_for(*at, rel);
        path[d] = at;
        idx[d++] = i;
        at = &kids(*at)[i];
    }
    adj_tree *leaf = *at;
    uint32_t k = leaf_lower(leaf, rel);
    if (k == leaf->n || cents(leaf)[k].rel != rel)
        return -1;
    assert(is_private(leaf));
    memmove(&ents(leaf)[k], &ents(leaf)[k + 1], (leaf->n - k - 1) * sizeof(adj_entry));
    leaf->n--;
    if (leaf->n == 0) {
        /* Empty nodes go, up to the first ancestor left with children. */
        adjt_release(m, at);
        while (d > 0) {
            d--;
            remove_kid(*path[d], idx[d]);
            if ((*path[d])->n > 0)
                break;
            adjt_release(m, path[d]);
        }
    } else if (d > 0 && leaf->n < MERGE_BELOW) {
        merge_leaf(m, *path[d - 1], idx[d - 1]);
    }
    /* A root with one child gives way to it. */
    while (*tp && (*tp)->height && (*tp)->n == 1) {
        adj_tree *r = *tp;
        *tp = kids(r)[0];
        r->n = 0;
        adjt_release(m, &r);
    }
    return 0;
}

const adj_entry *adjt_run(const adj_tree *t, uint32_t from, uint32_t *n, bool *last)
{
    const adj_tree *up[ADJT_MAX_HEIGHT];
    uint32_t idx[ADJT_MAX_HEIGHT];
    uint32_t d = 0;
    while (t->height) {
        uint32_t i = child_for(t, from);
        up[d] = t;
        idx[d++] = i;
        t = ckids(t)[i];
    }
    uint32_t k = leaf_lower(t, from);
    if (k == t->n) {
        /* Everything here is below from: the next leaf starts the run. */
        while (d > 0 && idx[d - 1] + 1 >= up[d - 1]->n)
            d--;
        if (d == 0) {
            *n = 0;
            return NULL;
        }
        t = ckids(up[d - 1])[++idx[d - 1]];
        while (t->height) {
            up[d] = t;
            idx[d++] = 0;
            t = ckids(t)[0];
        }
        k = 0;   /* leaves are never empty */
    }
    *last = true;
    for (uint32_t i = 0; i < d && *last; i++)
        *last = idx[i] + 1 == up[i]->n;
    *n = t->n - k;
    return cents(t) + k;
}

/* Releases nodes[lo, hi). */
static void release_range(mem_ctx *m, adj_tree **nodes, uint64_t lo, uint64_t hi)
{
    for (uint64_t i = lo; i < hi; i++)
        adjt_release(m, &nodes[i]);
}

adj_tree *adjt_build(mem_ctx *m, const adj_entry *e, uint32_t n)
{
    if (n == 0)
        return NULL;
    if (n <= BUILD_FILL) {
        adj_tree *t = node_new(m, 0, leaf_cap(m, n));
        if (t) {
            memcpy(ents(t), e, n * sizeof(adj_entry));
            t->n = (uint16_t)n;
        }
        return t;
    }
    /* Leaves evenly filled to at most BUILD_FILL, then levels of inner
       nodes evenly filled, each level built in place over the one below
       (parent j's children start at index >= j). */
    uint64_t count = (n + (uint64_t)BUILD_FILL - 1) / BUILD_FILL;
    adj_tree **level = mem_alloc(m, count * sizeof *level);
    if (!level)
        return NULL;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t lo = i * n / count, hi = (i + 1) * n / count;
        adj_tree *t = node_new(m, 0, ADJT_LEAF_MAX);
        if (!t) {
            release_range(m, level, 0, i);
            mem_free(m, level);
            return NULL;
        }
        memcpy(ents(t), e + lo, (hi - lo) * sizeof(adj_entry));
        t->n = (uint16_t)(hi - lo);
        level[i] = t;
    }
    for (uint32_t height = 1; count > 1; height++) {
        uint64_t parents = (count + ADJT_FAN - 1) / ADJT_FAN;
        for (uint64_t j = 0; j < parents; j++) {
            uint64_t lo = j * count / parents, hi = (j + 1) * count / parents;
            adj_tree *p = node_new(m, height, ADJT_FAN);
            if (!p) {
                release_range(m, level, 0, j);
                release_range(m, level, lo, count);
                mem_free(m, level);
                return NULL;
            }
            for (uint64_t k = lo; k < hi; k++)
                insert_kid(p, p->n, level[k], k == lo ? 0 : first_id(level[k]));
            level[j] = p;
        }
        count = parents;
    }
    adj_tree *root = level[0];
    mem_free(m, level);
    return root;
}

size_t adjt_private_bytes(const adj_tree *t)
{
    if (!t || !is_private(t))
        return 0;
    size_t bytes = node_size(t);
    if (t->height)
        for (uint32_t i = 0; i < t->n; i++)
            bytes += adjt_private_bytes(ckids(t)[i]);
    return bytes;
}

#ifdef STRATA_TESTING
/* Checks t holds ids in [lo, hi) above *last, at the given height. */
static int check_node(const adj_tree *t, uint32_t height, uint64_t lo, uint64_t hi,
                      int64_t *last, uint32_t *count)
{
    if (t->n == 0 || t->height != height)
        return -1;
    if (!height) {
        if (t->n > t->cap || t->cap > ADJT_LEAF_MAX)
            return -1;
        for (uint32_t i = 0; i < t->n; i++) {
            uint32_t rel = cents(t)[i].rel;
            if (rel < lo || rel >= hi || (int64_t)rel <= *last)
                return -1;
            *last = rel;
        }
        *count += t->n;
        return 0;
    }
    if (t->n > ADJT_FAN)
        return -1;
    for (uint32_t i = 0; i < t->n; i++) {
        uint64_t from = i ? ckeys(t)[i] : lo, to = i + 1 < t->n ? ckeys(t)[i + 1] : hi;
        if (from < lo || to > hi || from >= to ||
            check_node(ckids(t)[i], height - 1, from, to, last, count) != 0)
            return -1;
    }
    return 0;
}

int adjt_check(const adj_tree *t, uint32_t *count)
{
    *count = 0;
    int64_t last = -1;
    return t ? check_node(t, t->height, 0, (uint64_t)UINT32_MAX + 1, &last, count) : 0;
}

uint32_t adjt_height(const adj_tree *t) { return t ? t->height : 0; }
#endif
