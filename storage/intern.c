#include "storage/intern.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* uthash allocates through the catalog's context; an allocation failure
   leaves the table as it was and sets add_failed. */
#define HASH_NONFATAL_OOM 1
#define uthash_malloc(sz) mem_alloc(t->m, (sz))
#define uthash_free(p, sz) mem_free(t->m, (p), (sz))
#define uthash_nonfatal_oom(obj) (add_failed = 1)
#include <uthash.h>

/* Segment s holds 2^(s + SEG0_BITS) entries; 29 segments cover every
   32-bit id (segments 0..27 hold 2^32 - 16 of them). */
#define SEG0_BITS 4
#define NSEG 29

struct intern_entry {
    UT_hash_handle hh;
    uint32_t id;
    uint32_t len;
    char bytes[];   /* len bytes and a NUL */
};

struct interner {
    mem_ctx *m;
    pthread_mutex_t lock;
    struct intern_entry *table;                   /* uthash head */
    _Atomic(struct intern_entry **) seg[NSEG];    /* id -> entry */
    atomic_uint count;
};

static inline void locate(uint32_t id, unsigned *s, uint64_t *off)
{
    uint64_t j = (uint64_t)id + (1u << SEG0_BITS);
    unsigned top = 63u - (unsigned)__builtin_clzll(j);
    *s = top - SEG0_BITS;
    *off = j - ((uint64_t)1 << top);
}

static inline size_t seg_len(unsigned s) { return (size_t)1 << (s + SEG0_BITS); }

interner *intern_new(mem_ctx *m)
{
    interner *t = mem_calloc(m, sizeof *t);
    if (!t)
        return NULL;
    t->m = m;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void intern_free(interner **tp)
{
    interner *t = *tp;
    if (!t)
        return;
    int add_failed = 0;
    (void)add_failed;
    HASH_CLEAR(hh, t->table);
    uint32_t n = atomic_load(&t->count);
    for (uint32_t id = 0; id < n; id++) {
        unsigned s;
        uint64_t off;
        locate(id, &s, &off);
        struct intern_entry *e = atomic_load(&t->seg[s])[off];
        mem_free(t->m, e, sizeof *e + e->len + 1);
    }
    for (unsigned s = 0; s < NSEG; s++) {
        struct intern_entry **seg = atomic_load(&t->seg[s]);
        if (seg)
            mem_free(t->m, seg, seg_len(s) * sizeof *seg);
    }
    pthread_mutex_destroy(&t->lock);
    mem_free(t->m, t, sizeof *t);
    *tp = NULL;
}

int intern_find(interner *t, const void *bytes, size_t len, uint32_t *id)
{
    struct intern_entry *e = NULL;
    pthread_mutex_lock(&t->lock);
    HASH_FIND(hh, t->table, bytes, len, e);
    if (e)
        *id = e->id;
    pthread_mutex_unlock(&t->lock);
    return e ? 0 : -1;
}

int intern_add(interner *t, const void *bytes, size_t len, uint32_t *id)
{
    int add_failed = 0;
    int rc = -1;
    struct intern_entry *e = NULL;
    if (len > UINT32_MAX - 1)
        return -1;
    pthread_mutex_lock(&t->lock);
    HASH_FIND(hh, t->table, bytes, len, e);
    if (e) {
        *id = e->id;
        rc = 0;
        goto cleanup;
    }
    uint32_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
    if (n == UINT32_MAX - 1)
        goto cleanup;
    unsigned s;
    uint64_t off;
    locate(n, &s, &off);
    struct intern_entry **seg = atomic_load_explicit(&t->seg[s], memory_order_relaxed);
    if (!seg) {
        seg = mem_calloc(t->m, seg_len(s) * sizeof *seg);
        if (!seg)
            goto cleanup;
        atomic_store_explicit(&t->seg[s], seg, memory_order_release);
    }
    e = mem_alloc(t->m, sizeof *e + len + 1);
    if (!e)
        goto cleanup;
    memset(e, 0, sizeof *e);
    e->id = n;
    e->len = (uint32_t)len;
    memcpy(e->bytes, bytes, len);
    e->bytes[len] = '\0';
    HASH_ADD_KEYPTR(hh, t->table, e->bytes, len, e);
    if (add_failed) {
        mem_free(t->m, e, sizeof *e + len + 1);
        goto cleanup;
    }
    seg[off] = e;
    /* Publishes the entry to lock-free readers of intern_name(). */
    atomic_store_explicit(&t->count, n + 1, memory_order_release);
    *id = n;
    rc = 0;
cleanup:
    pthread_mutex_unlock(&t->lock);
    return rc;
}

const char *intern_name(const interner *t, uint32_t id, size_t *len)
{
    if (id >= atomic_load_explicit(&t->count, memory_order_acquire))
        return NULL;
    unsigned s;
    uint64_t off;
    locate(id, &s, &off);
    const struct intern_entry *e =
        atomic_load_explicit(&((interner *)t)->seg[s], memory_order_acquire)[off];
    if (len)
        *len = e->len;
    return e->bytes;
}

uint32_t intern_count(const interner *t)
{
    return atomic_load_explicit(&((interner *)t)->count, memory_order_acquire);
}
