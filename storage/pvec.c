#include "storage/pvec.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define MASK (PVEC_FANOUT - 1)

/* A chunk holds one reference on each kid (or on what each element owns)
   of the slots it owns; a copy of a shared chunk owns none at first and
   borrows the rest from its lender, on which it holds one reference.
   Invariants (pvec.h, 5 and 6): a borrowed slot's content equals the
   lender's, which owns it or borrows it in turn; a chunk without a lender
   owns every slot. */
struct pvec_chunk {
    atomic_uint refs;
    uint32_t owned;                 /* bit k: slot k's reference is held here */
    struct pvec_chunk *lender;      /* the original this copy borrows from */
    _Alignas(8) unsigned char body[];  /* kids or elements */
};

#define ALL_OWNED ((uint32_t)((1ull << PVEC_FANOUT) - 1))
_Static_assert(PVEC_FANOUT <= 32, "owned is a 32-bit mask");

static inline struct pvec_chunk **kids(struct pvec_chunk *c)
{
    return (struct pvec_chunk **)(void *)c->body;
}

static inline size_t chunk_size(const pvec_ops *ops, uint32_t height)
{
    return sizeof(struct pvec_chunk) +
           (size_t)PVEC_FANOUT * (height ? sizeof(void *) : ops->elem_size);
}

static inline unsigned slot_index(uint64_t i, uint32_t height)
{
    return (unsigned)((i >> (height * PVEC_BITS)) & MASK);
}

static inline unsigned char *elem_at(struct pvec_chunk *c, const pvec_ops *ops, unsigned k)
{
    return c->body + (size_t)k * ops->elem_size;
}

static inline bool owns(const struct pvec_chunk *c, unsigned k) { return c->owned >> k & 1; }

/* Elements a tree of this height can hold. */
static inline uint64_t capacity(uint32_t height)
{
    return (uint64_t)1 << ((height + 1) * PVEC_BITS);
}

static struct pvec_chunk *chunk_new(const pvec_ops *ops, mem_ctx *m, uint32_t height)
{
    struct pvec_chunk *c = mem_calloc(m, chunk_size(ops, height));
    if (c) {
        atomic_init(&c->refs, 1);
        c->owned = ALL_OWNED;
    }
    return c;
}

static void chunk_free(struct pvec_chunk *c, uint32_t height, const pvec_ops *ops,
                       mem_ctx *m);

/* Drops one reference; frees the chunk when it was the last.  Inline so
   that freeing a path (fold-back) pays a call only for the kids that die,
   not for every kid it merely stops sharing. */
static inline void chunk_unref(struct pvec_chunk *c, uint32_t height, const pvec_ops *ops,
                               mem_ctx *m)
{
    if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
        chunk_free(c, height, ops, m);
}

static void chunk_free(struct pvec_chunk *c, uint32_t height, const pvec_ops *ops,
                       mem_ctx *m)
{
    for (uint32_t left = c->owned; left; left &= left - 1) {
        unsigned k = (unsigned)__builtin_ctz(left);
        if (height)
            chunk_unref(kids(c)[k], height - 1, ops, m);
        else if (ops->release)
            /* Elements past len are zero (invariant 2); release must
               accept a zeroed element. */
            ops->release(elem_at(c, ops, k), m);
    }
    chunk_unref(c->lender, height, ops, m);
    mem_free_sized(m, c, chunk_size(ops, height));
}

/* A private copy of shared chunk c that borrows every slot from c: one
   memcpy, no reference taken on c's kids or elements (that is the point:
   a held view's write would otherwise count 16 of them per level, and
   the fold-back as many down again).  The caller hands the copy its
   reference on c. */
static struct pvec_chunk *chunk_copy(const struct pvec_chunk *c, uint32_t height,
                                     const pvec_ops *ops, mem_ctx *m)
{
    size_t size = chunk_size(ops, height);
    struct pvec_chunk *n = mem_alloc(m, size);
    if (!n)
        return NULL;
    /* The body alone: c->refs is not ours to read plainly, another graph
       sharing c may be dropping its reference at this moment. */
    memcpy(n->body, c->body, size - sizeof *n);
    atomic_init(&n->refs, 1);
    n->owned = 0;
    n->lender = (struct pvec_chunk *)c;
    MEM_NOTE_COPIED(PVEC_FANOUT);
    return n;
}

static void take_over(struct pvec_chunk *c, struct pvec_chunk *l, uint32_t height,
                      const pvec_ops *ops, mem_ctx *m);

/* Drops a reference on l, the kid (at height) of a chunk going away
   whose place in the successor tree is c.  When c borrows from l and is
   left its only holder, c takes l over instead of l being freed. */
static void unref_into(struct pvec_chunk *l, struct pvec_chunk *c, uint32_t height,
                       const pvec_ops *ops, mem_ctx *m)
{
    if (!l)
        return;
    if (c && c != l && c->lender == l) {
        /* c holds one reference on l, so the count cannot reach zero here;
           one means c's alone. */
        if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 2)
            take_over(c, l, height, ops, m);
        return;
    }
    chunk_unref(l, height, ops, m);
}

/* c's lender l is held by c alone: c takes over the slots l owns that c
   borrows, drops l's references on the slots c has replaced (merging
   further down where c's kid borrows from l's), borrows the rest from l's
   own lender, and l goes. */
static void take_over(struct pvec_chunk *c, struct pvec_chunk *l, uint32_t height,
                      const pvec_ops *ops, mem_ctx *m)
{
    /* The slots both own are the few c replaced (a path's one, usually). */
    for (uint32_t both = l->owned & c->owned; both; both &= both - 1) {
        unsigned k = (unsigned)__builtin_ctz(both);
        if (height)
            unref_into(kids(l)[k], kids(c)[k], height - 1, ops, m);
        else if (ops->release)
            ops->release(elem_at(l, ops, k), m);
    }
    c->owned |= l->owned;
    /* l's reference on its own lender passes to c, kept even when c now
       owns every slot: the version that lender lies in is released into
       c's later, and takes c's copies below over only through it. */
    c->lender = l->lender;
    mem_free_sized(m, l, chunk_size(ops, height));
}

/* Takes over c's lenders while c is their only holder: what a reader or
   another graph released last, which could not reach this writer's c. */
static void absorb_lenders(struct pvec_chunk *c, uint32_t height, const pvec_ops *ops,
                           mem_ctx *m)
{
    while (c->lender && atomic_load_explicit(&c->lender->refs, memory_order_acquire) == 1)
        take_over(c, c->lender, height, ops, m);
}

/* Replaces shared *slot with a private copy; mine tells whether the
   slot's reference is this owner's (a root, or an owned slot: it becomes
   the copy's reference on its lender) or borrowed (the lender holds it,
   and the copy takes one of its own). */
static struct pvec_chunk *copy_slot(struct pvec_chunk **slot, bool mine, uint32_t height,
                                    const pvec_ops *ops, mem_ctx *m)
{
    struct pvec_chunk *c = *slot;
    struct pvec_chunk *n = chunk_copy(c, height, ops, m);
    if (!n)
        return NULL;
    if (!mine)
        atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    *slot = n;
    return n;
}

/* Makes element k of private leaf c this leaf's own, taking a reference
   on what it owns when it was borrowed. */
static unsigned char *own_elem(struct pvec_chunk *c, const pvec_ops *ops, unsigned k)
{
    unsigned char *e = elem_at(c, ops, k);
    if (!owns(c, k)) {
        if (ops->retain)
            ops->retain(e);
        c->owned |= 1u << k;
    }
    return e;
}

void pvec_share(const pvec *src, pvec *dst)
{
    *dst = *src;
    if (src->root)
        atomic_fetch_add_explicit(&src->root->refs, 1, memory_order_relaxed);
}

void pvec_release(pvec *v, const pvec_ops *ops, mem_ctx *m) { pvec_release_into(v, NULL, ops, m); }

static const unsigned char zero_elem[PVEC_MAX_ELEM];

/* The leaf holding element i, or NULL for a hole. */
static inline struct pvec_chunk *leaf_of(const pvec *v, uint64_t i)
{
    struct pvec_chunk *c = v->root;
    for (uint32_t h = v->height; c && h > 0; h--)
        c = kids(c)[slot_index(i, h)];
    return c;
}

const void *pvec_get(const pvec *v, const pvec_ops *ops, uint64_t i)
{
    struct pvec_chunk *c = leaf_of(v, i);
    return c ? c->body + (size_t)(i & MASK) * ops->elem_size : zero_elem;
}

const void *pvec_get_run(const pvec *v, const pvec_ops *ops, uint64_t i, uint64_t *n)
{
    struct pvec_chunk *c = leaf_of(v, i);
    if (!c) {
        *n = 1;   /* a hole: one zero element at a time */
        return zero_elem;
    }
    uint64_t leaf_end = (i | MASK) + 1;
    *n = (leaf_end < v->len ? leaf_end : v->len) - i;
    return c->body + (size_t)(i & MASK) * ops->elem_size;
}

/* One level of walk_leaf off its fast path: a private chunk with lenders
   to take over, a shared or borrowed one to copy, or a hole to fill.
   parent (NULL at the root) owns the slot afterwards. */
static __attribute__((noinline)) struct pvec_chunk *
own_slot(struct pvec_chunk **slot, struct pvec_chunk *parent, unsigned k, bool mine,
         uint32_t height, const pvec_ops *ops, mem_ctx *m)
{
    struct pvec_chunk *c = *slot;
    if (c && mine && atomic_load_explicit(&c->refs, memory_order_acquire) == 1) {
        absorb_lenders(c, height, ops, m);
        return c;
    }
    c = c ? copy_slot(slot, mine, height, ops, m) : (*slot = chunk_new(ops, m, height));
    if (c && !mine)
        parent->owned |= 1u << k;   /* the slot now holds c's reference */
    return c;
}

/* Walks to the leaf holding element i, owning every chunk on the way
   (and the slots leading to them) and creating missing ones (only push
   and writes to holes reach a missing chunk).  The common case, a path
   already private, costs a load and a test per level more than a read. */
static inline struct pvec_chunk *walk_leaf(pvec *v, const pvec_ops *ops, mem_ctx *m,
                                           uint64_t i)
{
    struct pvec_chunk **slot = &v->root, *parent = NULL;
    unsigned k = 0;
    bool mine = true;   /* the slot's reference is this owner's: a root's is */
    for (uint32_t h = v->height;; h--) {
        struct pvec_chunk *c = *slot;
        if (!c || !mine || atomic_load_explicit(&c->refs, memory_order_acquire) != 1 ||
            c->lender) {
            if (!(c = own_slot(slot, parent, k, mine, h, ops, m)))
                return NULL;
        }
        if (h == 0)
            return c;
        parent = c;
        k = slot_index(i, h);
        mine = owns(c, k);
        slot = &kids(c)[k];
    }
}

/* Walks to element i (walk_leaf) and makes it the leaf's own. */
static inline void *walk_mut(pvec *v, const pvec_ops *ops, mem_ctx *m, uint64_t i)
{
    struct pvec_chunk *c = walk_leaf(v, ops, m, i);
    return c ? own_elem(c, ops, (unsigned)(i & MASK)) : NULL;
}

void *pvec_get_mut(pvec *v, const pvec_ops *ops, mem_ctx *m, uint64_t i)
{
    return walk_mut(v, ops, m, i);
}

/* Raises the tree one level: the root becomes the new root's first kid
   (a tree without a root only counts the level). */
static int raise_level(pvec *v, const pvec_ops *ops, mem_ctx *m)
{
    if (v->root) {
        struct pvec_chunk *top = chunk_new(ops, m, v->height + 1);
        if (!top)
            return -1;
        kids(top)[0] = v->root;
        v->root = top;
    }
    v->height++;
    return 0;
}

/* Raises the tree one level when it is full. */
static int make_room(pvec *v, const pvec_ops *ops, mem_ctx *m)
{
    if (v->len < capacity(v->height) || (v->len == 0 && !v->root))
        return 0;
    if (v->height + 1 >= PVEC_MAX_HEIGHT)
        return -1;
    return raise_level(v, ops, m);
}

void *pvec_push(pvec *v, const pvec_ops *ops, mem_ctx *m)
{
    if (make_room(v, ops, m) != 0)
        return NULL;
    void *e = walk_mut(v, ops, m, v->len);
    if (e)
        v->len++;
    return e;
}

int pvec_grow(pvec *v, const pvec_ops *ops, mem_ctx *m)
{
    _Static_assert(sizeof zero_elem >= sizeof(void *) * 2, "zero element too small");
    if (ops->elem_size > PVEC_MAX_ELEM || make_room(v, ops, m) != 0)
        return -1;
    v->len++;
    return 0;
}

int pvec_grow_to(pvec *v, const pvec_ops *ops, mem_ctx *m, uint64_t len)
{
    if (len <= v->len)
        return 0;
    if (ops->elem_size > PVEC_MAX_ELEM)
        return -1;
    /* The heights make_room reaches, and capacity(h) shifts by
       (h + 1) * PVEC_BITS, which must stay below 64. */
    while (capacity(v->height) < len) {
        if (v->height + 1 >= PVEC_MAX_HEIGHT || (v->height + 2) * PVEC_BITS >= 64 ||
            raise_level(v, ops, m) != 0)
            return -1;
    }
    v->len = len;
    return 0;
}

void *pvec_seq_descend(pvec_seq *s, uint64_t i)
{
    struct pvec_chunk *c = walk_leaf(s->v, s->ops, s->m, i);
    if (!c)
        return NULL;
    /* The cached leaf is written element by element without a descent:
       every element must be its own first. */
    for (unsigned k = 0; k < PVEC_FANOUT; k++)
        own_elem(c, s->ops, k);
    s->base = i & ~(uint64_t)MASK;
    s->leaf = c->body;
    return elem_at(c, s->ops, (unsigned)(i & MASK));
}

void *pvec_seq_push_slow(pvec_seq *s)
{
    /* Growing first adds a zero element without a leaf; the write then
       finds the leaf cached or descends once.  A failed descent leaves a
       zero element, which pops without allocating. */
    if (pvec_grow(s->v, s->ops, s->m) != 0)
        return NULL;
    void *e = pvec_seq_mut(s, s->v->len - 1);
    if (!e)
        pvec_pop(s->v, s->ops, s->m);
    return e;
}

int pvec_pop(pvec *v, const pvec_ops *ops, mem_ctx *m)
{
    /* A zero element (a hole, or one never written) is already what lies
       beyond len: dropping it writes nothing, so it cannot need a copy. */
    if (!memcmp(pvec_get(v, ops, v->len - 1), zero_elem, ops->elem_size)) {
        v->len--;
        return 0;
    }
    void *e = walk_mut(v, ops, m, v->len - 1);
    if (!e)
        return -1;
    if (ops->release)
        ops->release(e, m);
    memset(e, 0, ops->elem_size);
    v->len--;
    return 0;
}

/* Whether a write through private chunk c would own borrowed slot k by
   taking its lenders over (each held by the one below alone) rather than
   by copying the kid. */
static bool taken_over(const struct pvec_chunk *c, unsigned k)
{
    for (const struct pvec_chunk *l = c->lender; l; l = l->lender) {
        if (atomic_load_explicit(&l->refs, memory_order_acquire) != 1)
            return false;
        if (owns(l, k))
            return true;
    }
    return false;
}

int pvec_is_shared(const pvec *v, uint64_t i)
{
    struct pvec_chunk *c = v->root;
    for (uint32_t h = v->height; c; h--) {
        if (atomic_load_explicit(&c->refs, memory_order_acquire) != 1)
            return 1;
        if (h == 0)
            return 0;
        unsigned k = slot_index(i, h);
        if (!owns(c, k) && kids(c)[k] && !taken_over(c, k))
            return 1;   /* borrowed: the write copies the kid */
        c = kids(c)[k];
    }
    return 0;   /* a hole: writing it allocates, copies nothing */
}

/* Private bytes follow owned slots only: a borrowed kid or element is
   held through the lender, which a view may share. */
static size_t chunk_private_bytes(const struct pvec_chunk *c, uint32_t h,
                                  const pvec_ops *ops)
{
    if (!c || atomic_load_explicit(&c->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = chunk_size(ops, h);
    for (uint32_t left = c->owned; left; left &= left - 1) {
        unsigned k = (unsigned)__builtin_ctz(left);
        if (h)
            bytes += chunk_private_bytes(kids((struct pvec_chunk *)c)[k], h - 1, ops);
        else if (ops->private_bytes)
            bytes += ops->private_bytes(c->body + (size_t)k * ops->elem_size);
    }
    return bytes;
}

size_t pvec_private_bytes(const pvec *v, const pvec_ops *ops)
{
    return chunk_private_bytes(v->root, v->height, ops);
}

void pvec_release_into(pvec *v, const pvec *succ, const pvec_ops *ops, mem_ctx *m)
{
    /* The chunk in succ's tree where v's root lies: a taller successor
       holds v's tree as its leftmost subtree (growing adds roots above). */
    struct pvec_chunk *c = succ ? succ->root : NULL;
    uint32_t h = succ ? succ->height : 0;
    for (; c && h > v->height; h--)
        c = kids(c)[0];
    unref_into(v->root, h == v->height ? c : NULL, v->height, ops, m);
    pvec_init(v);
}

/* One side of a diff at some level: a chunk of its own height, which may
   be below the level when this vector's tree is shorter (a shorter tree
   is the first subtree of a taller one: growing adds a root above). */
typedef struct diff_side {
    const struct pvec_chunk *c;
    uint32_t h;
} diff_side;

static diff_side side_kid(diff_side s, uint32_t level, unsigned k)
{
    if (!s.c || s.h < level)
        return k == 0 ? s : (diff_side){ NULL, 0 };
    return (diff_side){ kids((struct pvec_chunk *)s.c)[k], s.h - 1 };
}

typedef struct diff_walk {
    const pvec_ops *ops;
    pvec_diff_fn fn;
    void *arg;
} diff_walk;

static int diff_level(const diff_walk *w, diff_side a, diff_side b, uint32_t level,
                      uint64_t base)
{
    if (a.c == b.c && (a.c == NULL || a.h == b.h))
        return 0;   /* shared, or both holes */
    if (level == 0) {
        size_t es = w->ops->elem_size;
        for (unsigned k = 0; k < PVEC_FANOUT; k++) {
            const void *ea = a.c ? a.c->body + k * es : zero_elem;
            const void *eb = b.c ? b.c->body + k * es : zero_elem;
            if (memcmp(ea, eb, es) != 0) {
                int rc = w->fn(base + k, ea, eb, w->arg);
                if (rc)
                    return rc;
            }
        }
        return 0;
    }
    for (unsigned k = 0; k < PVEC_FANOUT; k++) {
        int rc = diff_level(w, side_kid(a, level, k), side_kid(b, level, k), level - 1,
                            base + ((uint64_t)k << (level * PVEC_BITS)));
        if (rc)
            return rc;
    }
    return 0;
}

int pvec_diff(const pvec *a, const pvec *b, const pvec_ops *ops, pvec_diff_fn fn, void *arg)
{
    diff_walk w = { ops, fn, arg };
    uint32_t level = a->height > b->height ? a->height : b->height;
    return diff_level(&w, (diff_side){ a->root, a->height }, (diff_side){ b->root, b->height },
                      level, 0);
}

#ifdef STRATA_TESTING
static int check_chunk(const struct pvec_chunk *c, uint32_t h, uint64_t base,
                       uint64_t len, const pvec_ops *ops, bool lenders)
{
    if (atomic_load(&c->refs) == 0)
        return -1;
    /* Invariants 5 and 6, on the writer's side only: a chunk's owned bits
       and lender are the writer's to change while a view reads the
       chunk's body. */
    if (lenders) {
        if (!c->lender ? c->owned != ALL_OWNED
                       : atomic_load(&c->lender->refs) == 0 || (c->owned & ~ALL_OWNED))
            return -1;
        size_t slot_bytes = h ? sizeof(void *) : ops->elem_size;
        for (unsigned k = 0; k < PVEC_FANOUT; k++)
            if (!owns(c, k) && memcmp(c->body + k * slot_bytes,
                                      c->lender->body + k * slot_bytes, slot_bytes) != 0)
                return -1;
    }
    if (h == 0) {
        for (unsigned k = 0; k < PVEC_FANOUT; k++) {
            if (base + k < len)
                continue;
            const unsigned char *e = c->body + (size_t)k * ops->elem_size;
            for (uint32_t b = 0; b < ops->elem_size; b++)
                if (e[b])
                    return -1;
        }
        return 0;
    }
    uint64_t span = capacity(h - 1);
    for (unsigned k = 0; k < PVEC_FANOUT; k++) {
        const struct pvec_chunk *kid = ((struct pvec_chunk *const *)(const void *)c->body)[k];
        uint64_t kb = base + k * span;
        if (!kid)
            continue;   /* a hole */
        if (check_chunk(kid, h - 1, kb, len, ops, lenders))
            return -1;
    }
    return 0;
}

static int check(const pvec *v, const pvec_ops *ops, bool lenders)
{
    if (!v->root)
        return v->len <= capacity(v->height) ? 0 : -1;
    if (v->len > capacity(v->height))
        return -1;
    return check_chunk(v->root, v->height, 0, v->len, ops, lenders);
}

int pvec_check(const pvec *v, const pvec_ops *ops) { return check(v, ops, false); }
int pvec_check_lenders(const pvec *v, const pvec_ops *ops) { return check(v, ops, true); }
#endif
