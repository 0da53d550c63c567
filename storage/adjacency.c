#include "storage/adjacency.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "storage/adj_tree.h"

/* A flat block's directory entry. */
struct adj_seg {
    uint32_t key;   /* type << 1 | direction */
    uint32_t end;
};

/* A tree block's directory entry. */
struct adj_tseg {
    uint32_t key;
    uint32_t count;
    adj_tree *root;
};

/* What a tree block keeps before its directory: the empty leaves prepared
   for the segments the prepared inserts open. */
struct adj_spares {
    adj_tree *leaf[2];
};

#define TREE_BLOCK UINT32_MAX   /* cap of a tree block */

#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
uint32_t adj_tree_min_for_tests = 8;
#endif

struct adj_block {
    atomic_uint refs;
    uint16_t nseg;
    uint16_t segcap;
    uint32_t len;
    uint32_t cap;   /* flat: entries' room; TREE_BLOCK */
    _Alignas(8) unsigned char body[];   /* flat: segcap segments, then cap
                                           entries; tree: the spares, then
                                           segcap segments */
};

static inline bool tree_block(const adj_block *b) { return b->cap == TREE_BLOCK; }
static inline struct adj_spares *spares(adj_block *b) { return (struct adj_spares *)(void *)b->body; }
static inline const struct adj_spares *cspares(const adj_block *b)
{
    return (const struct adj_spares *)(const void *)b->body;
}
static inline struct adj_tseg *tsegs(adj_block *b)
{
    return (struct adj_tseg *)(void *)(b->body + sizeof(struct adj_spares));
}
static inline const struct adj_tseg *ctsegs(const adj_block *b)
{
    return (const struct adj_tseg *)(const void *)(b->body + sizeof(struct adj_spares));
}
static inline size_t tree_block_size(uint32_t segcap)
{
    return sizeof(adj_block) + sizeof(struct adj_spares) + (size_t)segcap * sizeof(struct adj_tseg);
}


static inline struct adj_seg *segs(adj_block *b) { return (struct adj_seg *)(void *)b->body; }
static inline const struct adj_seg *csegs(const adj_block *b)
{
    return (const struct adj_seg *)(const void *)b->body;
}
static inline adj_entry *entries(adj_block *b)
{
    return (adj_entry *)(void *)(b->body + (size_t)b->segcap * sizeof(struct adj_seg));
}
static inline const adj_entry *centries(const adj_block *b)
{
    return (const adj_entry *)(const void *)(b->body +
                                             (size_t)b->segcap * sizeof(struct adj_seg));
}

static inline size_t block_size(uint32_t segcap, uint32_t cap)
{
    return sizeof(adj_block) + (size_t)segcap * sizeof(struct adj_seg) +
           (size_t)cap * sizeof(adj_entry);
}

static inline uint32_t seg_key(int dir, uint32_t type) { return type << 1 | (uint32_t)dir; }

size_t adj_size(const adj_block *b)
{
    if (!b)
        return 0;
    return tree_block(b) ? tree_block_size(b->segcap) : block_size(b->segcap, b->cap);
}

uint32_t adj_len(const adj_block *b) { return b ? b->len : 0; }
uint32_t adj_nsegments(const adj_block *b) { return b ? b->nseg : 0; }
int adj_is_tree(const adj_block *b) { return b && tree_block(b); }

static inline bool is_private(const adj_block *b)
{
    return atomic_load_explicit(&b->refs, memory_order_acquire) == 1;
}

size_t adj_private_bytes(const adj_block *b)
{
    if (!b || !is_private(b))
        return 0;
    size_t bytes = adj_size(b);
    if (tree_block(b)) {
        for (uint32_t i = 0; i < b->nseg; i++)
            bytes += adjt_private_bytes(ctsegs(b)[i].root);
        bytes += adjt_private_bytes(cspares(b)->leaf[0]) + adjt_private_bytes(cspares(b)->leaf[1]);
    }
    return bytes;
}

static inline uint32_t key_at(const adj_block *b, uint32_t i)
{
    return tree_block(b) ? ctsegs(b)[i].key : csegs(b)[i].key;
}

static inline uint32_t seg_start(const adj_block *b, uint32_t i)
{
    return i ? csegs(b)[i - 1].end : 0;
}

/* Index of the segment with key, or where it would go: a binary search,
   since a node may hold thousands of (direction, type) pairs. */
static uint32_t find_seg(const adj_block *b, uint32_t key, int *found)
{
    uint32_t n = adj_nsegments(b), lo = 0;
    if (n)
        lo = tree_block(b) ? adj_lower_bound(ctsegs(b), sizeof(struct adj_tseg), 0, n, key)
                           : adj_lower_bound(csegs(b), sizeof(struct adj_seg), 0, n, key);
    *found = lo < n && key_at(b, lo) == key;
    return lo;
}

int adj_has_segment(const adj_block *b, int dir, uint32_t type)
{
    int found;
    find_seg(b, seg_key(dir, type), &found);
    return found;
}

int adj_find_segment(const adj_block *b, int dir, uint32_t type)
{
    int found;
    uint32_t i = find_seg(b, seg_key(dir, type), &found);
    return found ? (int)i : -1;
}

uint32_t adj_segment_info(const adj_block *b, uint32_t i, int *dir, uint32_t *type)
{
    uint32_t key = key_at(b, i);
    *dir = (int)(key & 1);
    *type = key >> 1;
    return tree_block(b) ? ctsegs(b)[i].count : csegs(b)[i].end - seg_start(b, i);
}

/* The run from id `from` on; the next starts after its last id (which
   wraps to ADJ_RUNS_DONE after UINT32_MAX, where nothing can follow). */
static adj_run tree_run(const adj_tree *t, uint32_t from)
{
    uint32_t n;
    bool last;
    const adj_entry *e = adjt_run(t, from, &n, &last);
    return (adj_run){ e, n, e && !last ? e[n - 1].rel + 1 : ADJ_RUNS_DONE };
}

/* Flat segment i, whole. */
static inline adj_run flat_run(const adj_block *b, uint32_t i)
{
    uint32_t start = seg_start(b, i);
    return (adj_run){ centries(b) + start, csegs(b)[i].end - start, ADJ_RUNS_DONE };
}

adj_run adj_run_first(const adj_block *b, uint32_t i)
{
    return tree_block(b) ? tree_run(ctsegs(b)[i].root, 0) : flat_run(b, i);
}

adj_run adj_run_of(const adj_block *b, int dir, uint32_t type, int *seg)
{
    uint32_t key = seg_key(dir, type);
    *seg = -1;
    if (b && !tree_block(b)) {
        /* The joins' hot path: one search, the run read off the directory. */
        const struct adj_seg *s = csegs(b);
        uint32_t lo = adj_lower_bound(s, sizeof *s, 0, b->nseg, key);
        if (lo == b->nseg || s[lo].key != key)
            return (adj_run){ NULL, 0, ADJ_RUNS_DONE };
        *seg = (int)lo;
        return flat_run(b, lo);
    }
    int found;
    uint32_t i = find_seg(b, key, &found);
    if (!found)
        return (adj_run){ NULL, 0, ADJ_RUNS_DONE };
    *seg = (int)i;
    return tree_run(ctsegs(b)[i].root, 0);
}

adj_run adj_run_next(const adj_block *b, uint32_t i, adj_run r)
{
    if (!adj_run_more(r))
        return (adj_run){ NULL, 0, ADJ_RUNS_DONE };
    return tree_run(ctsegs(b)[i].root, r.next);
}

void adj_retain(adj_block *b)
{
    if (b)
        atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void adj_release(mem_ctx *m, adj_block **bp)
{
    adj_block *b = *bp;
    *bp = NULL;
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (tree_block(b)) {
        for (uint32_t i = 0; i < b->nseg; i++)
            adjt_release(m, &tsegs(b)[i].root);
        adjt_release(m, &spares(b)->leaf[0]);
        adjt_release(m, &spares(b)->leaf[1]);
    }
    mem_free_sized(m, b, adj_size(b));
}

static uint32_t grow(uint32_t have, uint32_t need, uint32_t floor)
{
    if (need <= have)
        return have;
    uint32_t cap = have > UINT32_MAX / 3 * 2 ? UINT32_MAX : have + have / 2;
    if (cap < need)
        cap = need;
    return cap < floor ? floor : cap;
}

/* ---- flat blocks ------------------------------------------------------- */

/* A flat block's room is one run of 8-byte slots: segcap directory
   entries, then cap entries.  The directory takes a slot from the
   entries' room when a segment opens (moving the entries up by one), so
   neither part keeps slack of its own: the block carries only what its
   size class holds beyond its entries.  Measured on 1M nodes with 10M
   relationships (bench/build_graph): growing each part by half again left
   a fifth of the adjacency's bytes as slack. */
_Static_assert(sizeof(struct adj_seg) == sizeof(adj_entry), "directory and entries share slots");

/* Gives segcap slots to the directory (at least nseg, at most segcap +
   cap), moving the entries to follow it. */
static void set_segcap(adj_block *b, uint32_t segcap)
{
    uint32_t room = b->segcap + b->cap;
    assert(segcap >= b->nseg && segcap <= room && segcap <= ADJ_MAX_SEGMENTS);
    memmove(b->body + (size_t)segcap * sizeof(struct adj_seg),
            b->body + (size_t)b->segcap * sizeof(struct adj_seg), (size_t)b->len * sizeof(adj_entry));
    b->segcap = (uint16_t)segcap;
    b->cap = room - segcap;
}

/* The smallest flat block: a header and four slots, 48 bytes.  Never the
   32-byte class of a one-property record (storage/props.c: 28 bytes), the
   commonest record of a relationship: a node's first block would
   otherwise be 32 bytes and be freed as soon as the node gains a second
   relationship, and the records created meanwhile would fill those holes
   all over memory instead of following one another in id order.  A pass
   over the relationships' properties in id order (a save) then misses a
   page every few records: bench/save_load's save took 0.55-0.7 s of CPU
   against 0.34 s with records in order. */
#define FLAT_MIN_BYTES (sizeof(adj_block) + 4 * sizeof(adj_entry))

/* The slots of a flat block with room for need (below TREE_BLOCK): as many
   as the allocator's size class for them holds, at least FLAT_MIN_BYTES,
   and, when the block grows from old bytes, at least an eighth more, so
   that appending stays amortised O(1) copies per entry (with jemalloc the
   next size class is 12-25% up). */
static uint32_t flat_slots(mem_ctx *m, uint64_t need, size_t old)
{
    size_t want = sizeof(adj_block) + (size_t)need * sizeof(adj_entry);
    if (want < FLAT_MIN_BYTES)
        want = FLAT_MIN_BYTES;
    if (old && want < old + old / 8)
        want = old + (old / 8 + sizeof(adj_entry) - 1) / sizeof(adj_entry) * sizeof(adj_entry);
    uint64_t slots = (mem_good_size(m, want) - sizeof(adj_block)) / sizeof(adj_entry);
    return slots >= TREE_BLOCK ? TREE_BLOCK - 1 : (uint32_t)slots;
}

int adj_reserve_segments(mem_ctx *m, adj_block **bp, uint32_t add, uint32_t add_segments)
{
    adj_block *b = *bp;
    assert(!b || !tree_block(b));
    uint32_t len = adj_len(b), nseg = adj_nsegments(b);
    if (add_segments > add)
        add_segments = add;
    if (add > UINT32_MAX - 1 - len || add_segments > ADJ_MAX_SEGMENTS - nseg)
        return -1;
    /* A private block keeps its directory's room; a copy gets what it
       needs. */
    bool owned = b && is_private(b);
    uint32_t segcap = nseg + add_segments;
    if (owned && b->segcap > segcap)
        segcap = b->segcap;
    uint64_t need = (uint64_t)segcap + len + add;
    if (need >= TREE_BLOCK)
        return -1;
    if (owned && need <= (uint64_t)b->segcap + b->cap) {
        if (segcap > b->segcap)
            set_segcap(b, segcap);
        return 0;
    }
    size_t old = b ? adj_size(b) : 0;
    uint32_t slots = flat_slots(m, need, owned ? old : 0);
    size_t bytes = sizeof(adj_block) + (size_t)slots * sizeof(adj_entry);
    if (owned) {
        adj_block *n = mem_realloc_sized(m, b, old, bytes);
        if (!n)
            return -1;
        n->cap = slots - n->segcap;
        if (segcap > n->segcap)
            set_segcap(n, segcap);
        *bp = n;
        return 0;
    }
    adj_block *n = mem_alloc(m, bytes);
    if (!n)
        return -1;
    atomic_init(&n->refs, 1);
    n->nseg = (uint16_t)nseg;
    n->segcap = (uint16_t)segcap;
    n->len = len;
    n->cap = slots - segcap;
    if (b) {
        memcpy(segs(n), csegs(b), (size_t)nseg * sizeof(struct adj_seg));
        memcpy(entries(n), centries(b), (size_t)len * sizeof(adj_entry));
        MEM_NOTE_COPIED(len);
        adj_release(m, bp);
    }
    *bp = n;
    return 0;
}

static void flat_insert(adj_block *b, uint32_t key, uint32_t rel, uint32_t other)
{
    int found;
    uint32_t i = find_seg(b, key, &found);
    if (!found) {
        memmove(&segs(b)[i + 1], &segs(b)[i], (size_t)(b->nseg - i) * sizeof(struct adj_seg));
        segs(b)[i].key = key;
        segs(b)[i].end = seg_start(b, i);
        b->nseg++;
    }
    adj_entry *e = entries(b);
    uint32_t at = adj_lower_bound(e, sizeof *e, seg_start(b, i), segs(b)[i].end, rel);
    memmove(&e[at + 1], &e[at], (size_t)(b->len - at) * sizeof(adj_entry));
    e[at].rel = rel;
    e[at].other = other;
    b->len++;
    for (uint32_t k = i; k < b->nseg; k++)
        segs(b)[k].end++;
}

void adj_append(adj_block *b, int dir, uint32_t type, uint32_t rel, uint32_t other)
{
    uint32_t key = seg_key(dir, type);
    assert(!tree_block(b));
    assert(b->nseg == 0 || segs(b)[b->nseg - 1].key <= key);
    if (b->nseg == 0 || segs(b)[b->nseg - 1].key != key) {
        segs(b)[b->nseg].key = key;
        segs(b)[b->nseg].end = b->len;
        b->nseg++;
    }
    entries(b)[b->len].rel = rel;
    entries(b)[b->len].other = other;
    b->len++;
    segs(b)[b->nseg - 1].end++;
}

static int flat_erase(adj_block *b, uint32_t key, uint32_t rel)
{
    int found;
    uint32_t i = find_seg(b, key, &found);
    if (!found)
        return -1;
    uint32_t start = seg_start(b, i), end = segs(b)[i].end;
    adj_entry *e = entries(b);
    uint32_t at = adj_lower_bound(e, sizeof *e, start, end, rel);
    if (at == end || e[at].rel != rel)
        return -1;
    memmove(&e[at], &e[at + 1], (size_t)(b->len - at - 1) * sizeof(adj_entry));
    b->len--;
    for (uint32_t k = i; k < b->nseg; k++)
        segs(b)[k].end--;
    if (end - 1 == start) {
        memmove(&segs(b)[i], &segs(b)[i + 1], (size_t)(b->nseg - i - 1) * sizeof(struct adj_seg));
        b->nseg--;
    }
    return 0;
}

/* ---- tree blocks -------------------------------------------------------- */

/* Replaces flat block *bp by a private tree block of the same entries
   with room for add more segments. */
static int to_tree(mem_ctx *m, adj_block **bp, uint32_t add)
{
    const adj_block *b = *bp;
    uint32_t segcap = b->nseg + add > ADJ_MAX_SEGMENTS ? ADJ_MAX_SEGMENTS : b->nseg + add;
    adj_block *t = mem_alloc(m, tree_block_size(segcap));
    if (!t)
        return -1;
    atomic_init(&t->refs, 1);
    t->nseg = 0;
    t->segcap = (uint16_t)segcap;
    t->len = b->len;
    t->cap = TREE_BLOCK;
    *spares(t) = (struct adj_spares){ { NULL, NULL } };
    for (uint32_t i = 0; i < b->nseg; i++) {
        uint32_t start = seg_start(b, i), n = csegs(b)[i].end - start;
        adj_tree *root = adjt_build(m, centries(b) + start, n);
        if (!root) {
            adj_release(m, &t);
            return -1;
        }
        tsegs(t)[i] = (struct adj_tseg){ csegs(b)[i].key, n, root };
        t->nseg++;
    }
    MEM_NOTE_COPIED(b->len);
    adj_release(m, bp);
    *bp = t;
    return 0;
}

/* Makes tree block *bp private with room for add more segments; a copy
   takes the directory and shares every tree. */
static int tree_own(mem_ctx *m, adj_block **bp, uint32_t add)
{
    adj_block *b = *bp;
    uint32_t need = b->nseg + add;
    if (need > ADJ_MAX_SEGMENTS)
        return -1;
    bool shared = !is_private(b);
    if (!shared && need <= b->segcap)
        return 0;
    uint32_t segcap = grow(b->segcap, need, 2);
    if (segcap > ADJ_MAX_SEGMENTS)
        segcap = ADJ_MAX_SEGMENTS;
    if (!shared) {
        adj_block *n = mem_realloc_sized(m, b, tree_block_size(b->segcap), tree_block_size(segcap));
        if (!n)
            return -1;
        n->segcap = (uint16_t)segcap;
        *bp = n;
        return 0;
    }
    adj_block *n = mem_alloc(m, tree_block_size(segcap));
    if (!n)
        return -1;
    atomic_init(&n->refs, 1);
    n->nseg = b->nseg;
    n->segcap = (uint16_t)segcap;
    n->len = b->len;
    n->cap = TREE_BLOCK;
    *spares(n) = (struct adj_spares){ { NULL, NULL } };
    memcpy(tsegs(n), ctsegs(b), (size_t)b->nseg * sizeof(struct adj_tseg));
    for (uint32_t i = 0; i < n->nseg; i++)
        adjt_retain(tsegs(n)[i].root);
    MEM_NOTE_COPIED(n->nseg);
    adj_release(m, bp);
    *bp = n;
    return 0;
}

int adj_bulk_done(mem_ctx *m, adj_block **bp)
{
    return *bp && !tree_block(*bp) && (*bp)->len > ADJ_TREE_MIN ? to_tree(m, bp, 0) : 0;
}

/* ---- edits -------------------------------------------------------------- */

int adj_prepare_insert(mem_ctx *m, adj_block **bp, const adj_edit *ins, uint32_t n)
{
    assert(n <= 2 && (n < 2 || seg_key(ins[0].dir, ins[0].type) != seg_key(ins[1].dir, ins[1].type)));
    /* Each edit's segment, found once: making the block private or trees
       keeps the directory's order, so the indices hold. */
    int at[2] = { -1, -1 };
    uint32_t opens = 0;
    for (uint32_t k = 0; k < n; k++) {
        at[k] = adj_find_segment(*bp, ins[k].dir, ins[k].type);
        opens += at[k] < 0;
    }
    if (!*bp || !tree_block(*bp)) {
        if (adj_len(*bp) + (uint64_t)n <= ADJ_TREE_MIN)
            return adj_reserve_segments(m, bp, n, opens);
        if (adj_nsegments(*bp) + opens > ADJ_MAX_SEGMENTS || to_tree(m, bp, opens) != 0)
            return -1;
    }
    if (adj_len(*bp) > UINT32_MAX - 1 - n || tree_own(m, bp, opens) != 0)
        return -1;
    adj_block *b = *bp;
    for (uint32_t k = 0; k < n; k++) {
        if (at[k] >= 0) {
            if (adjt_prepare_insert(m, &tsegs(b)[at[k]].root, ins[k].rel) != 0)
                return -1;
        } else if (!spares(b)->leaf[k] && !(spares(b)->leaf[k] = adjt_new(m))) {
            return -1;
        }
    }
    return 0;
}

void adj_insert(adj_block *b, int dir, uint32_t type, uint32_t rel, uint32_t other)
{
    uint32_t key = seg_key(dir, type);
    if (!tree_block(b)) {
        flat_insert(b, key, rel, other);
        return;
    }
    int found;
    uint32_t i = find_seg(b, key, &found);
    if (!found) {
        adj_tree **spare = spares(b)->leaf[0] ? &spares(b)->leaf[0] : &spares(b)->leaf[1];
        assert(*spare && b->nseg < b->segcap);
        memmove(&tsegs(b)[i + 1], &tsegs(b)[i], (size_t)(b->nseg - i) * sizeof(struct adj_tseg));
        tsegs(b)[i] = (struct adj_tseg){ key, 0, *spare };
        *spare = NULL;
        b->nseg++;
    }
    adjt_insert(tsegs(b)[i].root, rel, other);
    tsegs(b)[i].count++;
    b->len++;
}

int adj_prepare_erase(mem_ctx *m, adj_block **bp, const adj_edit *del)
{
    if (!*bp)
        return 0;
    if (!tree_block(*bp))
        return adj_reserve_segments(m, bp, 0, 0);
    if (tree_own(m, bp, 0) != 0)
        return -1;
    int i = adj_find_segment(*bp, del->dir, del->type);
    return i < 0 ? 0 : adjt_prepare_erase(m, &tsegs(*bp)[i].root, del->rel);
}

int adj_erase(mem_ctx *m, adj_block *b, int dir, uint32_t type, uint32_t rel)
{
    if (!b)
        return -1;
    uint32_t key = seg_key(dir, type);
    if (!tree_block(b))
        return flat_erase(b, key, rel);
    int found;
    uint32_t i = find_seg(b, key, &found);
    if (!found || adjt_erase(m, &tsegs(b)[i].root, rel) != 0)
        return -1;
    tsegs(b)[i].count--;
    b->len--;
    if (!tsegs(b)[i].root) {
        memmove(&tsegs(b)[i], &tsegs(b)[i + 1], (size_t)(b->nseg - i - 1) * sizeof(struct adj_tseg));
        b->nseg--;
    }
    return 0;
}

#ifdef STRATA_TESTING
static int check_tree_block(const adj_block *b)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < b->nseg; i++) {
        const struct adj_tseg *s = &ctsegs(b)[i];
        uint32_t count;
        if ((i && s->key <= ctsegs(b)[i - 1].key) || !s->root || adjt_check(s->root, &count) != 0 ||
            count != s->count)
            return -1;
        total += count;
    }
    return total == b->len ? 0 : -1;
}

int adj_check(const adj_block *b)
{
    if (!b)
        return 0;
    if (b->nseg > b->segcap)
        return -1;
    if (tree_block(b))
        return check_tree_block(b);
    if (b->len > b->cap)
        return -1;
    uint32_t prev_end = 0;
    for (uint32_t i = 0; i < b->nseg; i++) {
        const struct adj_seg *s = &csegs(b)[i];
        if (i && s->key <= csegs(b)[i - 1].key)
            return -1;
        if (s->end <= prev_end)
            return -1;
        for (uint32_t k = prev_end + 1; k < s->end; k++)
            if (centries(b)[k - 1].rel >= centries(b)[k].rel)
                return -1;
        prev_end = s->end;
    }
    return prev_end == b->len ? 0 : -1;
}
#endif
