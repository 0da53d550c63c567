#include "storage/adjacency.h"

#include <assert.h>
#include <stdatomic.h>
#include <string.h>

struct adj_seg {
    uint32_t key;   /* type << 1 | direction */
    uint32_t end;
};

struct adj_block {
    atomic_uint refs;
    uint16_t nseg;
    uint16_t segcap;
    uint32_t len;
    uint32_t cap;
    _Alignas(8) unsigned char body[];   /* segcap segments, then cap entries */
};


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

size_t adj_size(const adj_block *b) { return b ? block_size(b->segcap, b->cap) : 0; }
uint32_t adj_len(const adj_block *b) { return b ? b->len : 0; }

size_t adj_private_bytes(const adj_block *b)
{
    return b && atomic_load_explicit(&b->refs, memory_order_acquire) == 1 ? adj_size(b) : 0;
}
uint32_t adj_nsegments(const adj_block *b) { return b ? b->nseg : 0; }

static inline uint32_t seg_start(const adj_block *b, uint32_t i)
{
    return i ? csegs(b)[i - 1].end : 0;
}

/* Index of the segment with key, or where it would go: a binary search,
   since a node may hold thousands of (direction, type) pairs. */
static uint32_t find_seg(const adj_block *b, uint32_t key, int *found)
{
    uint32_t lo = 0, hi = adj_nsegments(b);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (csegs(b)[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < adj_nsegments(b) && csegs(b)[lo].key == key;
    return lo;
}

int adj_has_segment(const adj_block *b, int dir, uint32_t type)
{
    int found;
    find_seg(b, seg_key(dir, type), &found);
    return found;
}

const adj_entry *adj_segment_at(const adj_block *b, uint32_t i, int *dir, uint32_t *type,
                                uint32_t *n)
{
    const struct adj_seg *s = &csegs(b)[i];
    *dir = (int)(s->key & 1);
    *type = s->key >> 1;
    uint32_t start = seg_start(b, i);
    *n = s->end - start;
    return centries(b) + start;
}

const adj_entry *adj_segment(const adj_block *b, int dir, uint32_t type, uint32_t *n)
{
    int found;
    uint32_t i = find_seg(b, seg_key(dir, type), &found);
    if (!found) {
        *n = 0;
        return NULL;
    }
    int d;
    uint32_t t;
    return adj_segment_at(b, i, &d, &t, n);
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
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        mem_free_sized(m, b, block_size(b->segcap, b->cap));
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

int adj_reserve(mem_ctx *m, adj_block **bp, uint32_t add)
{
    /* Each added entry may open a segment of its own. */
    return adj_reserve_segments(m, bp, add, add);
}

int adj_reserve_segments(mem_ctx *m, adj_block **bp, uint32_t add, uint32_t add_segments)
{
    adj_block *b = *bp;
    uint32_t len = adj_len(b), nseg = adj_nsegments(b);
    uint32_t old_cap = b ? b->cap : 0, old_segcap = b ? b->segcap : 0;
    if (add_segments > add)
        add_segments = add;
    if (add > UINT32_MAX - len || add_segments > ADJ_MAX_SEGMENTS - nseg)
        return -1;
    uint32_t cap = grow(old_cap, len + add, 4);
    uint32_t segcap = grow(old_segcap, nseg + add_segments, 2);
    if (cap != old_cap || segcap != old_segcap) {
        /* Fill the allocator's size class with entries rather than slack. */
        size_t want = block_size(segcap, cap), good = mem_good_size(m, want);
        uint64_t more = (good - want) / sizeof(adj_entry);
        cap = (uint32_t)(cap + more > UINT32_MAX ? UINT32_MAX : cap + more);
    }
    if (segcap > ADJ_MAX_SEGMENTS)
        segcap = ADJ_MAX_SEGMENTS;
    int shared = b && atomic_load_explicit(&b->refs, memory_order_acquire) != 1;
    if (b && !shared) {
        if (cap == old_cap && segcap == old_segcap)
            return 0;
        adj_block *n = mem_realloc_sized(m, b, block_size(old_segcap, old_cap),
                                         block_size(segcap, cap));
        if (!n)
            return -1;
        /* The entries follow the directory: move them past its new end. */
        memmove(n->body + (size_t)segcap * sizeof(struct adj_seg),
                n->body + (size_t)old_segcap * sizeof(struct adj_seg),
                (size_t)len * sizeof(adj_entry));
        n->segcap = (uint16_t)segcap;
        n->cap = cap;
        *bp = n;
        return 0;
    }
    adj_block *n = mem_alloc(m, block_size(segcap, cap));
    if (!n)
        return -1;
    atomic_init(&n->refs, 1);
    n->nseg = (uint16_t)nseg;
    n->segcap = (uint16_t)segcap;
    n->len = len;
    n->cap = cap;
    if (b) {
        memcpy(segs(n), csegs(b), (size_t)nseg * sizeof(struct adj_seg));
        memcpy(entries(n), centries(b), (size_t)len * sizeof(adj_entry));
        MEM_NOTE_COPIED(len);
        adj_release(m, bp);
    }
    *bp = n;
    return 0;
}

void adj_insert(adj_block *b, int dir, uint32_t type, uint32_t rel, uint32_t other)
{
    adj_insert_at(b, dir, type, UINT32_MAX, rel, other);
}

void adj_insert_at(adj_block *b, int dir, uint32_t type, uint32_t pos, uint32_t rel,
                   uint32_t other)
{
    uint32_t key = seg_key(dir, type);
    int found;
    uint32_t i = find_seg(b, key, &found);
    if (!found) {
        memmove(&segs(b)[i + 1], &segs(b)[i], (size_t)(b->nseg - i) * sizeof(struct adj_seg));
        segs(b)[i].key = key;
        segs(b)[i].end = seg_start(b, i);
        b->nseg++;
    }
    uint32_t start = seg_start(b, i), at = segs(b)[i].end;
    if (pos < at - start)
        at = start + pos;
    adj_entry *e = entries(b);
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

int adj_erase(adj_block *b, int dir, uint32_t type, uint32_t rel)
{
    int found;
    uint32_t i = find_seg(b, seg_key(dir, type), &found);
    if (!found)
        return -1;
    uint32_t start = seg_start(b, i), end = segs(b)[i].end, at = start;
    adj_entry *e = entries(b);
    while (at < end && e[at].rel != rel)
        at++;
    if (at == end)
        return -1;
    memmove(&e[at], &e[at + 1], (size_t)(b->len - at - 1) * sizeof(adj_entry));
    b->len--;
    for (uint32_t k = i; k < b->nseg; k++)
        segs(b)[k].end--;
    if (end - 1 == start) {
        memmove(&segs(b)[i], &segs(b)[i + 1], (size_t)(b->nseg - i - 1) * sizeof(struct adj_seg));
        b->nseg--;
    }
    return (int)(at - start);
}

#ifdef STRATA_TESTING
int adj_check(const adj_block *b)
{
    if (!b)
        return 0;
    if (b->nseg > b->segcap || b->len > b->cap)
        return -1;
    uint32_t prev_end = 0;
    for (uint32_t i = 0; i < b->nseg; i++) {
        const struct adj_seg *s = &csegs(b)[i];
        if (i && s->key <= csegs(b)[i - 1].key)
            return -1;
        if (s->end <= prev_end)
            return -1;
        prev_end = s->end;
    }
    return prev_end == b->len ? 0 : -1;
}
#endif
