/* keyset — value tuples de-duplicated by hash (keyset.h). */
#include <string.h>

#include "query/keyset.h"

/* Tiny in test builds, so that the grow paths run in every test. */
#ifdef STRATA_TESTING
#define KEYSET_FIRST_SLOTS 2
#else
#define KEYSET_FIRST_SLOTS 16
#endif

static uint64_t tuple_hash(const value *t, size_t width)
{
    uint64_t h = 1469598103934665603ULL;     /* FNV offset basis, then mix */
    for (size_t i = 0; i < width; i++)
        h = (h ^ value_hash(&t[i])) * 1099511628211ULL;
    /* the table takes the low bits: fold the high ones in (the
       splitmix64 finaliser), or near keys cluster under linear probing */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

static bool tuple_equivalent(const value *a, const value *b, size_t width)
{
    for (size_t i = 0; i < width; i++)
        if (!value_equivalent(&a[i], &b[i]))
            return false;
    return true;
}

void keyset_init(keyset *s, mem_ctx *m, size_t width)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->width = width;
}

const value *keyset_tuple(const keyset *s, size_t i) { return &s->tuples[i * s->width]; }

static size_t tuple_bytes(const keyset *s, size_t n)
{
    return mem_array_size(n, (s->width ? s->width : 1) * sizeof(value));
}

/* A slot holds the tuple's index + 1 in its low SLOT_INDEX_BITS and the
   top bits of its hash above them, so a probe skips most other tuples
   without reading them (one cache miss per lookup, not three). */
#define SLOT_INDEX_BITS 40
#define SLOT_INDEX_MASK ((UINT64_C(1) << SLOT_INDEX_BITS) - 1)

static uint64_t slot_tag(uint64_t h) { return h & ~SLOT_INDEX_MASK; }

/* The slot holding a tuple equivalent to t, or the empty slot where it
   would go. */
static size_t probe(const keyset *s, const value *t, uint64_t h)
{
    size_t mask = s->nslots - 1;
    for (size_t p = h & mask;; p = (p + 1) & mask) {
        uint64_t e = s->slots[p];
        if (!e)
            return p;
        size_t i = (size_t)(e & SLOT_INDEX_MASK) - 1;
        if (slot_tag(e) == slot_tag(h) && s->hashes[i] == h &&
            tuple_equivalent(keyset_tuple(s, i), t, s->width))
            return p;
    }
}

/* Room for one more tuple: the arrays and the table (load at most one
   half).  Nothing changes on failure. */
static int reserve(keyset *s)
{
    if (s->n == s->cap) {
        /* both arrays or neither, so that cap stays the size of each */
        size_t cap = s->cap ? s->cap * 2 : KEYSET_FIRST_SLOTS / 2;
        value *t = mem_alloc(s->m, tuple_bytes(s, cap));
        uint64_t *h = t ? mem_alloc(s->m, mem_array_size(cap, sizeof *h)) : NULL;
        if (!h) {
            if (t)
                mem_free(s->m, t);
            return -1;
        }
        if (s->cap) {
            memcpy(t, s->tuples, s->n * s->width * sizeof *t);
            memcpy(h, s->hashes, s->n * sizeof *h);
            mem_free(s->m, s->tuples);
            mem_free(s->m, s->hashes);
        }
        s->tuples = t;
        s->hashes = h;
        s->cap = cap;
    }
    if ((s->n + 1) * 2 <= s->nslots)
        return 0;
    size_t nslots = s->nslots ? s->nslots * 2 : KEYSET_FIRST_SLOTS;
    uint64_t *slots = mem_calloc(s->m, mem_array_size(nslots, sizeof *slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        size_t p = s->hashes[i] & (nslots - 1);
        while (slots[p])
            p = (p + 1) & (nslots - 1);
        slots[p] = slot_tag(s->hashes[i]) | (i + 1);
    }
    if (s->slots)
        mem_free(s->m, s->slots);
    s->slots = slots;
    s->nslots = nslots;
    return 0;
}

int keyset_insert(keyset *s, const value *tuple, size_t *index)
{
    uint64_t h = tuple_hash(tuple, s->width);
    size_t p = 0;
    if (s->nslots) {
        p = probe(s, tuple, h);
        if (s->slots[p]) {
            if (index)
                *index = (size_t)(s->slots[p] & SLOT_INDEX_MASK) - 1;
            return 0;
        }
    }
    if (s->n + 1 > SLOT_INDEX_MASK - 1)
        return -1;                      /* 2^40 tuples: out of memory anyway */
    size_t nslots = s->nslots;
    if (reserve(s) != 0)
        return -1;
    if (s->nslots != nslots)
        p = probe(s, tuple, h);         /* the table grew */
    value *dst = &s->tuples[s->n * s->width];
    for (size_t i = 0; i < s->width; i++)
        dst[i] = value_retain(tuple[i]);
    s->hashes[s->n] = h;
    s->slots[p] = slot_tag(h) | (uint64_t)(s->n + 1);
    if (index)
        *index = s->n;
    s->n++;
    return 1;
}

void keyset_free(keyset *s)
{
    for (size_t i = 0; i < s->n * s->width; i++)
        value_release(&s->tuples[i]);
    if (s->tuples)
        mem_free(s->m, s->tuples);
    if (s->hashes)
        mem_free(s->m, s->hashes);
    if (s->slots)
        mem_free(s->m, s->slots);
    keyset_init(s, s->m, s->width);
}
