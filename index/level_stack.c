#include "index/level_stack.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct level_stack {
    atomic_uint refs;
    uint32_t depth;
    bool hashed;        /* the base keeps a hash of its keys (point lookups) */
    bool loose;         /* invariant 5 may not hold for level 0: a fold stopped part way */
    uint64_t count;
    pbtree base;
    pbtree levels[LSTACK_CAP];
};

#ifdef STRATA_TESTING
static atomic_uint_fast64_t flattens;
uint64_t lstack_flattens(void) { return atomic_load(&flattens); }
#define NOTE_FLATTEN() atomic_fetch_add(&flattens, 1)
#else
#define NOTE_FLATTEN() ((void)0)
#endif

/* What a caller of lstack_insert_absent / lstack_delete_present vouches
   for, checked in test builds. */
#ifdef STRATA_TESTING
#define VOUCHED(cond)                                                                      \
    do {                                                                                   \
        if (!(cond))                                                                       \
            abort();                                                                       \
    } while (0)
#else
#define VOUCHED(cond) ((void)0)
#endif

static inline uint64_t enc(uint64_t id, int tomb) { return id << 1 | (uint64_t)tomb; }

void lstack_retain(level_stack *s)
{
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void lstack_release(mem_ctx *m, level_stack **sp)
{
    level_stack *s = *sp;
    *sp = NULL;
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    pbtree_release(&s->base, m);
    for (uint32_t i = 0; i < s->depth; i++)
        pbtree_release(&s->levels[i], m);
    mem_free_sized(m, s, sizeof *s);
}

size_t lstack_private_bytes(const level_stack *s)
{
    if (!s || atomic_load_explicit(&s->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = sizeof *s + pbtree_private_bytes(&s->base);
    for (uint32_t i = 0; i < s->depth; i++)
        bytes += pbtree_private_bytes(&s->levels[i]);
    return bytes;
}

uint64_t lstack_count(const level_stack *s) { return s ? s->count : 0; }
uint32_t lstack_depth(const level_stack *s) { return s ? s->depth : 0; }

/* A level's say on (key, id): 1 shown, 0 hidden, -1 silent.  One seek:
   (key, id) and its tombstone are adjacent in the order (enc), so the
   first entry at or after the shown form is one or the other if the level
   holds either — half the descents of asking for each. */
static int level_says(const pbtree *t, const value *key, uint64_t id)
{
    if (!t->root)
        return -1;
    pbtree_cursor c;
    pbtree_seek(t, key, enc(id, 0), &c);
    if (!c.valid)
        return -1;
    const pbtree_entry *e = pbtree_cursor_entry(&c);
    /* The same key as the tree orders them (what pbtree_contains asks). */
    if ((e->id >> 1) != id || pbtree_entry_cmp(&e->key, 0, key, 0) != 0)
        return -1;
    return e->id & 1 ? 0 : 1;
}

/* What the stack shows for (key, id), looking from the top down. */
bool lstack_contains(const level_stack *s, const value *key, uint64_t id)
{
    if (!s)
        return false;
    for (uint32_t i = s->depth; i-- > 0;) {
        int says = level_says(&s->levels[i], key, id);
        if (says >= 0)
            return says;
    }
    return pbtree_contains(&s->base, key, enc(id, 0));
}

/* An empty base, hashed when the stack is.  Levels keep no hash: they
   are small deltas, where a seek is cheap and a hash would cost every
   write a trie put (and every held-view write a trie path copy). */
static void init_base(const level_stack *s, pbtree *t)
{
    if (s->hashed)
        pbtree_init_hashed(t);
    else
        pbtree_init(t);
}

/* Applies the levels to the base, bottom up, dropping each once it is in.
   Each entry reserves its own nodes first, so a fold needs memory only for
   one write at a time; if a reserve fails the fold stops there and -1 is
   returned, with the stack showing exactly what it showed (an entry
   already applied to the base agrees with the level that still holds
   it), but level 0 no longer telling what the base shows (invariant 5):
   the stack is loose until level 0 is folded. */
static int fold_levels(level_stack *s, pbtree_pool *pool, mem_ctx *m)
{
    while (s->depth) {
        pbtree_cursor c;
        for (pbtree_first(&s->levels[0], &c); c.valid; pbtree_cursor_next(&c)) {
            const pbtree_entry *e = pbtree_cursor_entry(&c);
            if (pbtree_reserve(pool, m, &s->base, 1) != 0) {
                s->loose = true;
                return -1;
            }
            if (e->id & 1)
                pbtree_delete(&s->base, pool, m, &e->key, e->id & ~(uint64_t)1);
            else
                pbtree_insert(&s->base, pool, m, &e->key, e->id);
        }
        pbtree_release(&s->levels[0], m);
        memmove(&s->levels[0], &s->levels[1], (s->depth - 1) * sizeof s->levels[0]);
        pbtree_init(&s->levels[--s->depth]);
        /* The levels above told what level 0 and the base showed, which
           the base now shows alone. */
        s->loose = false;
    }
    return 0;
}

/* A private copy of a shared header: every tree shared, O(depth).  With
   s NULL, an empty stack, hashed as asked. */
static level_stack *copy_header(const level_stack *s, mem_ctx *m, bool hashed)
{
    level_stack *n = mem_alloc(m, sizeof *n);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    atomic_init(&n->refs, 1);
    n->depth = s ? s->depth : 0;
    n->count = s ? s->count : 0;
    n->hashed = s ? s->hashed : hashed;
    n->loose = s && s->loose;
    init_base(n, &n->base);
    if (s) {
        pbtree_share(&s->base, &n->base);
        for (uint32_t i = 0; i < s->depth; i++)
            pbtree_share(&s->levels[i], &n->levels[i]);
        MEM_NOTE_COPIED(s->depth + 1);
    }
    return n;
}




#ifdef STRATA_TESTING
bool lstack_loose(const level_stack *s) { return s && s->loose; }

int lstack_check(const level_stack *s)
{
    if (!s)
        return 0;
    for (uint32_t i = 0; i < s->depth; i++)
        if (pbtree_check(&s->levels[i]) != 0)
            return -1;
    return pbtree_check(&s->base);
}
#endif

int lstack_create(level_stack **out, mem_ctx *m, bool hashed)
{
    *out = copy_header(NULL, m, hashed);
    return *out ? 0 : -1;
}

bool lstack_hashed(const level_stack *s) { return s && s->hashed; }

int lstack_build(level_stack **out, mem_ctx *m, pbtree_entry *e, uint64_t n, bool hashed)
{
    *out = copy_header(NULL, m, hashed);
    if (!*out)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        e[i].id = enc(e[i].id, 0);
    if (pbtree_build(&(*out)->base, m, e, n, hashed) != 0) {
        lstack_release(m, out);
        return -1;
    }
    (*out)->count = n;
    return 0;
}

void lstack_fold_back(level_stack *s, pbtree_pool *pool, mem_ctx *m)
{
    /* Nobody else reads the header or the base, so the levels go into the
       base in place.  Out of memory it stops part way, which is harmless:
       the writes then go to the top level (lstack_open). */
    if (s && s->depth && atomic_load_explicit(&s->refs, memory_order_acquire) == 1 &&
        !pbtree_is_shared(&s->base))
        (void)fold_levels(s, pool, m);
}

int lstack_open(level_stack **sp, pbtree_pool *pool, mem_ctx *m, uint32_t ops,
                pbtree_need *need)
{
    level_stack *s = *sp;
    if (!s || atomic_load_explicit(&s->refs, memory_order_acquire) != 1) {
        level_stack *n = copy_header(s, m, false);
        if (!n)
            return -1;
        lstack_release(m, sp);
        *sp = s = n;
    }
    lstack_fold_back(s, pool, m);
    pbtree *target = s->depth ? &s->levels[s->depth - 1] : &s->base;
    /* A shared top level that is still small takes the writes itself, by
       path copying (a few small nodes): pushing a level per fork would
       deepen every lookup while a reader is held across each write. */
    if (pbtree_is_shared(target) && !(s->depth && target->count < LSTACK_LEVEL_MAX)) {
        if (s->depth == LSTACK_CAP) {
            /* Flatten: path-copy the levels into the base. */
            if (fold_levels(s, pool, m) != 0)
                return -1;
            NOTE_FLATTEN();
            target = &s->base;
        } else {
            pbtree_init(&s->levels[s->depth++]);
            target = &s->levels[s->depth - 1];
        }
    }
    /* Writes go to the target alone (lookups below it only read): one
       tree op a stack op (invariant 5), two when loose (a tombstone
       swapped for an entry, or an entry for a tombstone). */
    pbtree_need_add(need, target, s->loose ? ops * 2 : ops);
    return 0;
}

int lstack_prepare(level_stack **sp, pbtree_pool *pool, mem_ctx *m, uint32_t ops)
{
    pbtree_need need = { 0, 0 };
    if (lstack_open(sp, pool, m, ops, &need) != 0)
        return -1;
    return pbtree_pool_reserve(pool, m, &need);
}

/* What the levels below the top and the base show for (key, id). */
static bool shown_below_top(const level_stack *s, const value *key, uint64_t id)
{
    for (uint32_t i = s->depth - 1; i-- > 0;) {
        int says = level_says(&s->levels[i], key, id);
        if (says >= 0)
            return says;
    }
    return pbtree_contains(&s->base, key, enc(id, 0));
}

/* The top level's say on (key, id): 1 shown, 0 hidden, -1 silent. */
static int top_says(const level_stack *s, const value *key, uint64_t id)
{
    return level_says(&s->levels[s->depth - 1], key, id);
}

/* Makes the top level show (key, id), which the stack does not show; top
   is the top level's say on it (0 or -1).  A tombstone hid an entry from
   below (invariant 5), so removing it is enough, unless loose. */
static void top_show(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key,
                     uint64_t id, int top)
{
    pbtree *t = &s->levels[s->depth - 1];
    if (top == 0) {
        pbtree_delete_present(t, pool, m, key, enc(id, 1));
        if (s->loose && !shown_below_top(s, key, id))
            pbtree_insert_absent(t, pool, m, key, enc(id, 0));
    } else {
        pbtree_insert_absent(t, pool, m, key, enc(id, 0));
    }
    s->count++;
}

/* Makes the top level hide (key, id), which the stack shows; top is the
   top level's say on it (1 or -1).  An entry in the top level is one the
   levels below do not show (invariant 5), so removing it is enough,
   unless loose. */
static void top_hide(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key,
                     uint64_t id, int top)
{
    pbtree *t = &s->levels[s->depth - 1];
    if (top == 1) {
        pbtree_delete_present(t, pool, m, key, enc(id, 0));
        if (s->loose && shown_below_top(s, key, id))
            pbtree_insert_absent(t, pool, m, key, enc(id, 1));
    } else {
        pbtree_insert_absent(t, pool, m, key, enc(id, 1));
    }
    s->count--;
}

bool lstack_insert(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id)
{
    if (!s->depth) {
        int added = pbtree_insert(&s->base, pool, m, key, enc(id, 0));
        s->count += (uint64_t)added;
        return added;
    }
    int top = top_says(s, key, id);
    if (top == 1 || (top == -1 && shown_below_top(s, key, id)))
        return false;
    top_show(s, pool, m, key, id, top);
    return true;
}

bool lstack_delete(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id)
{
    if (!s->depth) {
        int gone = pbtree_delete(&s->base, pool, m, key, enc(id, 0));
        s->count -= (uint64_t)gone;
        return gone;
    }
    int top = top_says(s, key, id);
    if (top == 0 || (top == -1 && !shown_below_top(s, key, id)))
        return false;
    top_hide(s, pool, m, key, id, top);
    return true;
}

/* The vouched writes below, on a stack that is not loose, need no look
   at the top level first: a tombstone there hides an entry from below, an
   entry there is one the levels below do not show (invariant 5), so the
   write cancels the one or adds the other, in one descent. */
void lstack_insert_absent(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key,
                          uint64_t id)
{
    VOUCHED(!lstack_contains(s, key, id));
    if (!s->depth) {
        pbtree_insert_absent(&s->base, pool, m, key, enc(id, 0));
        s->count++;
    } else if (!s->loose) {
        pbtree_cancel_or_insert(&s->levels[s->depth - 1], pool, m, key, enc(id, 1), enc(id, 0));
        s->count++;
    } else {
        top_show(s, pool, m, key, id, top_says(s, key, id));
    }
}

void lstack_delete_present(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key,
                           uint64_t id)
{
    VOUCHED(lstack_contains(s, key, id));
    if (!s->depth) {
        pbtree_delete_present(&s->base, pool, m, key, enc(id, 0));
        s->count--;
    } else if (!s->loose) {
        pbtree_cancel_or_insert(&s->levels[s->depth - 1], pool, m, key, enc(id, 0), enc(id, 1));
        s->count--;
    } else {
        top_hide(s, pool, m, key, id, top_says(s, key, id));
    }
}

/* ---- merged cursor ------------------------------------------------------- */

struct lstack_cursor {
    uint32_t n;                        /* sources: base, then levels */
    const value *key;                  /* current entry, when valid */
    uint64_t id;
    bool valid;
    pbtree_cursor src[];               /* n of them: sized to the depth */
};

static size_t cursor_size(uint32_t n) { return sizeof(lstack_cursor) + n * sizeof(pbtree_cursor); }

static int cmp_at(const pbtree_cursor *a, const pbtree_cursor *b)
{
    const pbtree_entry *x = pbtree_cursor_entry(a), *y = pbtree_cursor_entry(b);
    return pbtree_entry_cmp(&x->key, x->id >> 1, &y->key, y->id >> 1);
}

/* Moves to the next (key, id) that the topmost source mentioning it shows. */
static void settle(lstack_cursor *c)
{
    for (;;) {
        int min = -1;
        for (uint32_t i = 0; i < c->n; i++)
            if (c->src[i].valid && (min < 0 || cmp_at(&c->src[i], &c->src[min]) < 0))
                min = (int)i;
        if (min < 0) {
            c->valid = false;
            return;
        }
        /* The topmost source at this (key, id) decides. */
        uint32_t top = (uint32_t)min;
        for (uint32_t i = (uint32_t)min + 1; i < c->n; i++)
            if (c->src[i].valid && cmp_at(&c->src[i], &c->src[min]) == 0)
                top = i;
        const pbtree_entry *e = pbtree_cursor_entry(&c->src[top]);
        if (!(e->id & 1)) {
            c->key = &e->key;
            c->id = e->id >> 1;
            c->valid = true;
            return;
        }
        /* Hidden by a tombstone: step every source past it. */
        pbtree_entry hidden = *e;
        for (uint32_t i = 0; i < c->n; i++)
            while (c->src[i].valid &&
                   pbtree_entry_cmp(&pbtree_cursor_entry(&c->src[i])->key,
                                    pbtree_cursor_entry(&c->src[i])->id >> 1, &hidden.key,
                                    hidden.id >> 1) <= 0)
                pbtree_cursor_next(&c->src[i]);
    }
}

/* Positions a cursor with room for s's sources (see lstack_seek). */
static void cursor_start(lstack_cursor *c, const level_stack *s, const value *key)
{
    c->n = s ? s->depth + 1 : 0;
    c->valid = false;
    for (uint32_t i = 0; i < c->n; i++) {
        const pbtree *t = i == 0 ? &s->base : &s->levels[i - 1];
        if (key)
            pbtree_seek(t, key, 0, &c->src[i]);
        else
            pbtree_first(t, &c->src[i]);
    }
    settle(c);
}

lstack_cursor *lstack_seek(const level_stack *s, mem_ctx *m, const value *key)
{
    lstack_cursor *c = mem_alloc(m, cursor_size(s ? s->depth + 1 : 0));
    if (c)
        cursor_start(c, s, key);
    return c;
}

/* pbtree_point on a tree that may keep no hash (a level): by a seek then,
   which tells 0, 1 and several entries under key apart (*count 2 for
   several). */
static int tree_point(const pbtree *t, const value *key, uint64_t *id, uint64_t *count)
{
    if (t->hashed)
        return pbtree_point(t, key, id, count);
    if (!t->root)
        return 0;
    pbtree_cursor c;
    pbtree_seek(t, key, 0, &c);
    if (!c.valid || value_order(&pbtree_cursor_entry(&c)->key, key) != 0)
        return 0;
    *id = pbtree_cursor_entry(&c)->id;
    pbtree_cursor_next(&c);
    *count = c.valid && value_order(&pbtree_cursor_entry(&c)->key, key) == 0 ? 2 : 1;
    return 1;
}

/* From the base's hash and the levels' seeks: 1 with the least live id
   under key and the live count, 0 when none is live, -1 when a tree
   cannot answer alone (a key not hashed, or several entries under it in a
   level, whose tombstones would need the merge; the base holds none).  Each tree mentions an id
   at most once, so the topmost mention of each id decides, as in the
   merge; the ids mentioned are few (one per tree). */
static __attribute__((noinline)) int point_count(const level_stack *s, const value *key,
                                                 uint64_t *id, uint64_t *count)
{
    uint64_t seen[LSTACK_CAP + 1], least = UINT64_MAX, live = 0;
    uint32_t nseen = 0;
    for (uint32_t i = s->depth + 1; i-- > 0;) {
        const pbtree *t = i == 0 ? &s->base : &s->levels[i - 1];
        uint64_t e, n;
        int r = tree_point(t, key, &e, &n);
        if (r < 0 || (r == 1 && n > 1 && !(i == 0 && nseen == 0)))
            return -1;
        if (r == 0)
            continue;
        if (i == 0 && n > 1) {   /* the base alone: no tombstones */
            *id = e >> 1;
            *count = n;
            return 1;
        }
        uint64_t plain = e >> 1;
        bool decided = false;
        for (uint32_t k = 0; k < nseen && !decided; k++)
            decided = seen[k] == plain;
        if (decided)
            continue;
        seen[nseen++] = plain;
        if (!(e & 1)) {
            live++;
            least = plain < least ? plain : least;
        }
    }
    if (live == 0)
        return 0;
    *id = least;
    *count = live;
    return 1;
}

/* lstack_first by the merged seek. */
static __attribute__((noinline)) bool merged_first(const level_stack *s, const value *key,
                                                   uint64_t *id)
{
    /* A cursor on the stack, with room for the deepest stack: no heap.
       (A union may hold a struct with a flexible array member; a struct
       may not.) */
    union {
        lstack_cursor c;
        unsigned char room[sizeof(lstack_cursor) + (LSTACK_CAP + 1) * sizeof(pbtree_cursor)];
    } local;
    cursor_start(&local.c, s, key);
    if (!local.c.valid || value_order(local.c.key, key) != 0)
        return false;
    *id = local.c.id;
    return true;
}

bool lstack_first(const level_stack *s, const value *key, uint64_t *id)
{
    if (s && s->hashed) {
        int r;
        if (s->depth == 0) {   /* the base alone, which holds no tombstones */
            uint64_t e, count;
            r = pbtree_point(&s->base, key, &e, &count);
            if (r == 1)
                *id = e >> 1;
        } else {
            uint64_t count;
            r = point_count(s, key, id, &count);
        }
        if (r >= 0)
            return r;
    }
    return merged_first(s, key, id);
}

size_t lstack_first_many(const level_stack *s, const value *keys, size_t n, uint64_t *ids,
                         bool *hit)
{
    enum { CHUNK = 64 };
    phash_answer ans[CHUNK];
    phash_entry e[CHUNK];
    size_t hits = 0;
    for (size_t at = 0; at < n; at += CHUNK) {
        size_t k = n - at < CHUNK ? n - at : CHUNK;
        /* Only the base alone answers from its hash with no merge (as in
           lstack_first); a stack with levels takes each key's own path. */
        bool batched = s && s->hashed && s->depth == 0 &&
                       pbtree_point_many(&s->base, keys + at, k, ans, e) == 0;
        for (size_t i = 0; i < k; i++) {
            size_t j = at + i;
            if (!batched)
                hit[j] = lstack_first(s, &keys[j], &ids[j]);
            else if (ans[i] == PHASH_UNKNOWN)   /* what lstack_first ends in, unprobed */
                hit[j] = merged_first(s, &keys[j], &ids[j]);
            else if ((hit[j] = ans[i] == PHASH_FOUND))
                ids[j] = e[i].id >> 1;
            hits += hit[j];
        }
    }
    return hits;
}

int lstack_point(const level_stack *s, const value *key, uint64_t *id)
{
    uint64_t count = 0;
    if (s && s->hashed && point_count(s, key, id, &count) >= 0)
        return count > 1 ? 2 : (int)count;
    /* the merged seek, and one step past the first entry */
    union {
        lstack_cursor c;
        unsigned char room[sizeof(lstack_cursor) + (LSTACK_CAP + 1) * sizeof(pbtree_cursor)];
    } local;
    cursor_start(&local.c, s, key);
    if (!local.c.valid || value_order(local.c.key, key) != 0)
        return 0;
    *id = local.c.id;
    lstack_cursor_next(&local.c);
    return local.c.valid && value_order(local.c.key, key) == 0 ? 2 : 1;
}

bool lstack_cursor_get(const lstack_cursor *c, const value **key, uint64_t *id)
{
    if (!c->valid)
        return false;
    *key = c->key;
    *id = c->id;
    return true;
}

void lstack_cursor_next(lstack_cursor *c)
{
    if (!c->valid)
        return;
    value key = *c->key;   /* borrowed bytes stay valid: the trees are immutable */
    uint64_t id = c->id;
    for (uint32_t i = 0; i < c->n; i++)
        while (c->src[i].valid &&
               pbtree_entry_cmp(&pbtree_cursor_entry(&c->src[i])->key,
                                pbtree_cursor_entry(&c->src[i])->id >> 1, &key, id) <= 0)
            pbtree_cursor_next(&c->src[i]);
    settle(c);
}

void lstack_cursor_free(lstack_cursor **c, mem_ctx *m)
{
    if (*c)
        mem_free_sized(m, *c, cursor_size((*c)->n));
    *c = NULL;
}
