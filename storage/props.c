#include "storage/props.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

/* Layout: header, then cap values, then cap keys (values first keeps them
   8-byte aligned without padding the keys).  refs comes first: props.h
   takes and drops references through it. */
struct prop_rec {
    atomic_uint refs;
    uint16_t len;
    uint16_t cap;
    _Alignas(8) unsigned char body[];
};


static inline value *vals(prop_rec *r) { return (value *)(void *)r->body; }
static inline const value *cvals(const prop_rec *r)
{
    return (const value *)(const void *)r->body;
}
static inline uint32_t *keys(prop_rec *r)
{
    return (uint32_t *)(void *)(r->body + (size_t)r->cap * sizeof(value));
}
static inline const uint32_t *ckeys(const prop_rec *r)
{
    return (const uint32_t *)(const void *)(r->body + (size_t)r->cap * sizeof(value));
}

static inline size_t rec_size(uint32_t cap)
{
    return sizeof(prop_rec) + (size_t)cap * (sizeof(value) + sizeof(uint32_t));
}

size_t props_size(const prop_rec *r) { return r ? rec_size(r->cap) : 0; }

size_t props_private_bytes(const prop_rec *r)
{
    if (!r || atomic_load_explicit(&r->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = props_size(r);
    for (uint32_t i = 0; i < r->len; i++)
        bytes += value_private_size(&cvals(r)[i]);
    return bytes;
}
uint32_t props_len(const prop_rec *r) { return r ? r->len : 0; }
uint32_t props_key_at(const prop_rec *r, uint32_t i) { return ckeys(r)[i]; }
const value *props_val_at(const prop_rec *r, uint32_t i) { return &cvals(r)[i]; }

/* Index of key, or of where it would go (*found says which). */
static uint32_t search(const prop_rec *r, uint32_t key, int *found)
{
    uint32_t lo = 0, hi = props_len(r);
    const uint32_t *k = r ? ckeys(r) : NULL;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (k[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = r && lo < r->len && k[lo] == key;
    return lo;
}

const value *props_get(const prop_rec *r, uint32_t key)
{
    int found;
    uint32_t i = search(r, key, &found);
    return found ? &cvals(r)[i] : NULL;
}

_Static_assert(offsetof(struct prop_rec, refs) == 0, "props.h reads the count at the start");

void props_free_last(mem_ctx *m, prop_rec *r)
{
    for (uint32_t i = 0; i < r->len; i++)
        value_release(&vals(r)[i]);
    mem_free_sized(m, r, rec_size(r->cap));
}

prop_rec *props_new(mem_ctx *m, uint32_t cap)
{
    if (cap > PROPS_MAX)
        return NULL;
    prop_rec *r = mem_alloc(m, rec_size(cap));
    if (!r)
        return NULL;
    atomic_init(&r->refs, 1);
    r->len = 0;
    r->cap = (uint16_t)cap;
    return r;
}

void props_append(prop_rec *r, uint32_t key, value val)
{
    vals(r)[r->len] = val;
    keys(r)[r->len] = key;
    r->len++;
}

/* A private record holding r's entries with room for cap; r is left alone
   (the caller releases it).  Values are shared by refcount, not copied. */
static prop_rec *rec_copy(mem_ctx *m, const prop_rec *r, uint32_t cap)
{
    prop_rec *n = mem_alloc(m, rec_size(cap));
    if (!n)
        return NULL;
    atomic_init(&n->refs, 1);
    n->cap = (uint16_t)cap;
    n->len = (uint16_t)props_len(r);
    for (uint32_t i = 0; i < n->len; i++) {
        vals(n)[i] = value_retain(cvals(r)[i]);
        keys(n)[i] = ckeys(r)[i];
    }
    return n;
}

/* Makes *rp private with room for need entries: grows a private record in
   place, copies a shared one. */
static int make_private(mem_ctx *m, prop_rec **rp, uint32_t need)
{
    prop_rec *r = *rp;
    uint32_t old_cap = r ? r->cap : 0;
    uint32_t cap = old_cap;
    if (need > cap)
        cap = need < 4 ? need : need + need / 2;
    if (cap > PROPS_MAX)
        cap = PROPS_MAX;
    if (r && atomic_load_explicit(&r->refs, memory_order_acquire) == 1) {
        if (need <= old_cap)
            return 0;
        /* A new block and a copy rather than a realloc: a record's size
           classes differ at every step, so realloc always moves it, and
           its own path costs more than an allocation and a free
           (callgrind, bench/fork_cost, a SET that adds a key with nothing
           held: the grow took 770 instructions, now 580).  The values
           move; nothing is retained or released. */
        prop_rec *n = mem_alloc(m, rec_size(cap));
        if (!n)
            return -1;
        atomic_init(&n->refs, 1);
        n->len = r->len;
        n->cap = (uint16_t)cap;
        memcpy(vals(n), vals(r), (size_t)r->len * sizeof(value));
        memcpy(keys(n), keys(r), (size_t)r->len * sizeof(uint32_t));
        mem_free_sized(m, r, rec_size(old_cap));
        *rp = n;
        return 0;
    }
    prop_rec *n = rec_copy(m, r, cap);
    if (!n)
        return -1;
    MEM_NOTE_COPIED(props_len(r));
    props_release(m, rp);
    *rp = n;
    return 0;
}

int props_set(mem_ctx *m, prop_rec **rp, uint32_t key, value val, value *old)
{
    int found;
    uint32_t i = search(*rp, key, &found);
    uint32_t need = props_len(*rp) + (found ? 0 : 1);
    if (need > PROPS_MAX || make_private(m, rp, need) != 0) {
        value_release(&val);
        return -1;
    }
    prop_rec *r = *rp;
    if (found) {
        if (old)
            *old = vals(r)[i];
        else
            value_release(&vals(r)[i]);
        vals(r)[i] = val;
        return 0;
    }
    memmove(&vals(r)[i + 1], &vals(r)[i], (r->len - i) * sizeof(value));
    memmove(&keys(r)[i + 1], &keys(r)[i], (r->len - i) * sizeof(uint32_t));
    vals(r)[i] = val;
    keys(r)[i] = key;
    r->len++;
    if (old)
        *old = value_null();
    return 0;
}

int props_remove(mem_ctx *m, prop_rec **rp, uint32_t key, value *old)
{
    int found;
    uint32_t i = search(*rp, key, &found);
    if (!found) {
        if (old)
            *old = value_null();
        return 0;
    }
    if (make_private(m, rp, props_len(*rp)) != 0)
        return -1;
    prop_rec *r = *rp;
    if (old)
        *old = vals(r)[i];
    else
        value_release(&vals(r)[i]);
    memmove(&vals(r)[i], &vals(r)[i + 1], (r->len - i - 1) * sizeof(value));
    memmove(&keys(r)[i], &keys(r)[i + 1], (r->len - i - 1) * sizeof(uint32_t));
    r->len--;
    return 0;
}
