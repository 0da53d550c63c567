#include "storage/intern.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Segment s holds 2^(s + SEG0_BITS) entries; 29 segments cover every
   32-bit id (segments 0..27 hold 2^32 - 16 of them). */
#define SEG0_BITS 4
#define NSEG 29

/* The name -> id table starts with this many slots and doubles whenever an
   add would fill more than half of them (linear probing stays short). */
#define TABLE0_SLOTS 8

typedef _Atomic(struct intern_entry *) entry_ptr;

struct intern_entry {
    uint32_t len;
    uint32_t hash;
    char bytes[];   /* len bytes and a NUL */
};

/* An open-addressing table of ids.  A slot holds id + 1 (0: empty); once
   set it never changes.  A table is replaced, never resized in place: the
   writer builds the larger one aside and publishes it, and keeps the one it
   replaced (older) until intern_free, since readers may still be probing
   it.  The tables kept add up to less than the current one. */
struct intern_table {
    struct intern_table *older;
    uint64_t mask;                 /* slots - 1; slots is a power of two */
    _Atomic uint32_t slots[];
};

struct interner {
    mem_ctx *m;
    pthread_mutex_t lock;                         /* held by intern_add */
    _Atomic(struct intern_table *) table;         /* name -> id; NULL while empty */
    _Atomic(entry_ptr *) seg[NSEG];               /* id -> entry */
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

static size_t table_size(uint64_t nslots)
{
    return sizeof(struct intern_table) + nslots * sizeof(_Atomic uint32_t);
}

/* FNV-1a over the bytes, then a final mix so that the low bits (which
   pick the slot) depend on every byte. */
static uint32_t hash_bytes(const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h;
}

/* The entry of id, or NULL when id has none (yet).  Acquire: a reader
   that sees the pointer sees the entry's bytes. */
static inline const struct intern_entry *entry_of(const interner *t, uint32_t id)
{
    unsigned s;
    uint64_t off;
    locate(id, &s, &off);
    entry_ptr *seg = atomic_load_explicit(&((interner *)t)->seg[s], memory_order_acquire);
    return seg ? atomic_load_explicit(&seg[off], memory_order_acquire) : NULL;
}

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
    struct intern_table *tab = atomic_load(&t->table);
    while (tab) {
        struct intern_table *older = tab->older;
        mem_free_sized(t->m, tab, table_size(tab->mask + 1));
        tab = older;
    }
    uint32_t n = atomic_load(&t->count);
    for (uint32_t id = 0; id < n; id++) {
        struct intern_entry *e = (struct intern_entry *)entry_of(t, id);
        mem_free_sized(t->m, e, sizeof *e + e->len + 1);
    }
    for (unsigned s = 0; s < NSEG; s++) {
        entry_ptr *seg = atomic_load(&t->seg[s]);
        if (seg)
            mem_free_sized(t->m, seg, seg_len(s) * sizeof *seg);
    }
    pthread_mutex_destroy(&t->lock);
    mem_free_sized(t->m, t, sizeof *t);
    *tp = NULL;
}

/* The id of bytes in tab, or -1.  Safe without the mutex: slots only go
   from empty to an id, and an id is published (release) after its entry
   is complete. */
static int table_find(const interner *t, const struct intern_table *tab, const void *bytes,
                      size_t len, uint32_t hash, uint32_t *id)
{
    if (!tab)
        return -1;
    for (uint64_t i = hash & tab->mask;; i = (i + 1) & tab->mask) {
        uint32_t slot = atomic_load_explicit(&tab->slots[i], memory_order_acquire);
        if (slot == 0)
            return -1;
        const struct intern_entry *e = entry_of(t, slot - 1);
        if (e->hash == hash && e->len == len && memcmp(e->bytes, bytes, len) == 0) {
            *id = slot - 1;
            return 0;
        }
    }
}

/* Puts id (whose entry hashes to hash) in the first free slot; the table
   has one.  release: a reader that sees the slot sees the entry. */
static void table_put(struct intern_table *tab, uint32_t id, uint32_t hash)
{
    uint64_t i = hash & tab->mask;
    while (atomic_load_explicit(&tab->slots[i], memory_order_relaxed) != 0)
        i = (i + 1) & tab->mask;
    atomic_store_explicit(&tab->slots[i], id + 1, memory_order_release);
}

/* Makes sure the table has room for entry n + 1 (at most half full),
   publishing a larger table built from the current one when not.  Writer
   only (mutex held). */
static int table_reserve(interner *t, uint32_t n)
{
    struct intern_table *cur = atomic_load_explicit(&t->table, memory_order_relaxed);
    uint64_t slots = cur ? cur->mask + 1 : TABLE0_SLOTS / 2;
    if (cur && ((uint64_t)n + 1) * 2 <= slots)
        return 0;
    slots *= 2;
    struct intern_table *next = mem_calloc(t->m, table_size(slots));
    if (!next)
        return -1;
    next->mask = slots - 1;
    next->older = cur;
    for (uint32_t id = 0; id < n; id++)
        table_put(next, id, entry_of(t, id)->hash);
    atomic_store_explicit(&t->table, next, memory_order_release);
    return 0;
}

int intern_find(interner *t, const void *bytes, size_t len, uint32_t *id)
{
    const struct intern_table *tab = atomic_load_explicit(&t->table, memory_order_acquire);
    return table_find(t, tab, bytes, len, hash_bytes(bytes, len), id);
}

int intern_add(interner *t, const void *bytes, size_t len, uint32_t *id)
{
    int rc = -1;
    struct intern_entry *e = NULL;
    if (len > UINT32_MAX - 1)
        return -1;
    uint32_t hash = hash_bytes(bytes, len);
    pthread_mutex_lock(&t->lock);
    if (table_find(t, atomic_load_explicit(&t->table, memory_order_relaxed), bytes, len, hash,
                   id) == 0) {
        rc = 0;
        goto cleanup;
    }
    uint32_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
    if (n == UINT32_MAX - 1)
        goto cleanup;
    unsigned s;
    uint64_t off;
    locate(n, &s, &off);
    entry_ptr *seg = atomic_load_explicit(&t->seg[s], memory_order_relaxed);
    if (!seg) {
        seg = mem_calloc(t->m, seg_len(s) * sizeof *seg);
        if (!seg)
            goto cleanup;
        atomic_store_explicit(&t->seg[s], seg, memory_order_release);
    }
    e = mem_alloc(t->m, sizeof *e + len + 1);
    if (!e)
        goto cleanup;
    if (table_reserve(t, n) != 0) {
        mem_free_sized(t->m, e, sizeof *e + len + 1);
        goto cleanup;
    }
    e->len = (uint32_t)len;
    e->hash = hash;
    memcpy(e->bytes, bytes, len);
    e->bytes[len] = '\0';
    /* Publishes the entry in the order readers use it: the name (so an id
       intern_find returns always has one), then the slot, then the count
       (so every id below intern_count is found by name). */
    atomic_store_explicit(&seg[off], e, memory_order_release);
    table_put(atomic_load_explicit(&t->table, memory_order_relaxed), n, hash);
    atomic_store_explicit(&t->count, n + 1, memory_order_release);
    *id = n;
    rc = 0;
cleanup:
    pthread_mutex_unlock(&t->lock);
    return rc;
}

const char *intern_name(const interner *t, uint32_t id, size_t *len)
{
    const struct intern_entry *e = entry_of(t, id);
    if (!e)
        return NULL;
    if (len)
        *len = e->len;
    return e->bytes;
}

uint32_t intern_count(const interner *t)
{
    return atomic_load_explicit(&((interner *)t)->count, memory_order_acquire);
}

#ifdef STRATA_TESTING
void intern_hold_writer_lock(interner *t, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&t->lock);
    fn(arg);
    pthread_mutex_unlock(&t->lock);
}
#endif
