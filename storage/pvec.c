#include "storage/pvec.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define MASK (PVEC_FANOUT - 1)

struct pvec_chunk {
    atomic_uint refs;
    uint32_t unused;
    _Alignas(8) unsigned char body[];  /* kids or elements */
};

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

/* Elements a tree of this height can hold. */
static inline uint64_t capacity(uint32_t height)
{
    return (uint64_t)1 << ((height + 1) * PVEC_BITS);
}

static struct pvec_chunk *chunk_new(const pvec_ops *ops, mem_ctx *m, uint32_t height)
{
    struct pvec_chunk *c = mem_calloc(m, chunk_size(ops, height));
    if (c)
        atomic_init(&c->refs, 1);
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
    if (height) {
        for (unsigned k = 0; k < PVEC_FANOUT; k++)
            chunk_unref(kids(c)[k], height - 1, ops, m);
    } else if (ops->release) {
        /* Elements past len are zero (invariant 2); release must accept
           a zeroed element. */
        for (unsigned k = 0; k < PVEC_FANOUT; k++)
            ops->release(c->body + (size_t)k * ops->elem_size, m);
    }
    mem_free_sized(m, c, chunk_size(ops, height));
}

/* A private copy of a shared chunk; the copy owns new references to
   everything the original pointed at. */
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
    n->unused = 0;
    if (height) {
        for (unsigned k = 0; k < PVEC_FANOUT; k++) {
            struct pvec_chunk *kid = kids(n)[k];
            if (kid)
                atomic_fetch_add_explicit(&kid->refs, 1, memory_order_relaxed);
        }
    } else if (ops->retain) {
        for (unsigned k = 0; k < PVEC_FANOUT; k++)
            ops->retain(n->body + (size_t)k * ops->elem_size);
    }
    MEM_NOTE_COPIED(PVEC_FANOUT);
    return n;
}

/* Makes *slot private to this owner, copying it when shared. */
static struct pvec_chunk *own(struct pvec_chunk **slot, uint32_t height, const pvec_ops *ops,
                              mem_ctx *m)
{
    struct pvec_chunk *c = *slot;
    if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1)
        return c;
    struct pvec_chunk *n = chunk_copy(c, height, ops, m);
    if (!n)
        return NULL;
    *slot = n;
    chunk_unref(c, height, ops, m);
    return n;
}

void pvec_share(const pvec *src, pvec *dst)
{
    *dst = *src;
    if (src->root)
        atomic_fetch_add_explicit(&src->root->refs, 1, memory_order_relaxed);
}

void pvec_release(pvec *v, const pvec_ops *ops, mem_ctx *m)
{
    chunk_unref(v->root, v->height, ops, m);
    pvec_init(v);
}

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

/* Walks to element i, owning every chunk on the way and creating missing
   ones (only push reaches a missing chunk). */
static void *walk_mut(pvec *v, const pvec_ops *ops, mem_ctx *m, uint64_t i)
{
    struct pvec_chunk **slot = &v->root;
    for (uint32_t h = v->height;; h--) {
        if (!*slot) {
            *slot = chunk_new(ops, m, h);
            if (!*slot)
                return NULL;
        }
        struct pvec_chunk *c = own(slot, h, ops, m);
        if (!c)
            return NULL;
        if (h == 0)
            return c->body + (size_t)(i & MASK) * ops->elem_size;
        slot = &kids(c)[slot_index(i, h)];
    }
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
    unsigned char *e = walk_mut(s->v, s->ops, s->m, i);
    if (!e)
        return NULL;
    s->base = i & ~(uint64_t)MASK;
    s->leaf = e - (size_t)(i & MASK) * s->ops->elem_size;
    return e;
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

int pvec_is_shared(const pvec *v, uint64_t i)
{
    struct pvec_chunk *c = v->root;
    for (uint32_t h = v->height; c; h--) {
        if (atomic_load_explicit(&c->refs, memory_order_acquire) != 1)
            return 1;
        if (h == 0)
            return 0;
        c = kids(c)[slot_index(i, h)];
    }
    return 0;   /* a hole: writing it allocates, copies nothing */
}

static size_t chunk_private_bytes(const struct pvec_chunk *c, uint32_t h,
                                  const pvec_ops *ops)
{
    if (!c || atomic_load_explicit(&c->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = chunk_size(ops, h);
    for (unsigned k = 0; k < PVEC_FANOUT; k++) {
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
                       uint64_t len, const pvec_ops *ops)
{
    if (atomic_load(&c->refs) == 0)
        return -1;
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
        if (check_chunk(kid, h - 1, kb, len, ops))
            return -1;
    }
    return 0;
}

int pvec_check(const pvec *v, const pvec_ops *ops)
{
    if (!v->root)
        return v->len <= capacity(v->height) ? 0 : -1;
    if (v->len > capacity(v->height))
        return -1;
    return check_chunk(v->root, v->height, 0, v->len, ops);
}
#endif
