/* id_map — open addressing over an arena of keys (id_map.h). */
#include <string.h>

#include "query/id_map.h"
#include "storage/mem.h"

/* A key of up to INLINE_KEY bytes lives in the slot itself, so the lookup
   of a short id (most are: numbers) touches one cache line, not two: the
   rows of a relationship file name random nodes, and this lookup was a
   fifth of an import's time before (perf, 1M nodes / 3M relationships). */
#define INLINE_KEY 8

typedef struct slot {
    uint64_t hash;
    uint64_t key;    /* the key's bytes (len <= INLINE_KEY), else its arena
                        offset; unused in an empty slot, whose space is
                        UINT32_MAX */
    uint64_t node;
    uint32_t space, len;
} slot;

struct id_map {
    slot *slots;
    size_t cap, count;     /* cap: a power of two */
    char *arena;
    size_t arena_len, arena_cap;
};

/* FNV-1a, mixed at the end so that the low bits (the slot index) depend
   on every byte. */
static uint64_t key_hash(uint32_t space, const char *key, size_t len)
{
    uint64_t h = 1469598103934665603ull ^ space;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static slot *new_slots(size_t cap)
{
    slot *s = mem_alloc(mem_scratch(), mem_array_size(cap, sizeof *s));
    if (s)
        for (size_t i = 0; i < cap; i++)
            s[i] = (slot){0, 0, 0, UINT32_MAX, 0};
    return s;
}

id_map *id_map_new(void)
{
    id_map *m = mem_calloc(mem_scratch(), sizeof *m);
    if (!m)
        return NULL;
    m->cap = 1024;
    m->slots = new_slots(m->cap);
    if (!m->slots) {
        mem_free(mem_scratch(), m, sizeof *m);
        return NULL;
    }
    return m;
}

void id_map_free(id_map **mp)
{
    if (!mp || !*mp)
        return;
    id_map *m = *mp;
    mem_free(mem_scratch(), m->slots, m->cap * sizeof *m->slots);
    if (m->arena)
        mem_free(mem_scratch(), m->arena, m->arena_cap);
    mem_free(mem_scratch(), m, sizeof *m);
    *mp = NULL;
}

static bool is_empty(const slot *s) { return s->space == UINT32_MAX; }

static bool key_equals(const id_map *m, const slot *s, uint32_t space, const char *key,
                       size_t len)
{
    if (s->space != space || s->len != len)
        return false;
    if (len <= INLINE_KEY)
        return memcmp(&s->key, key, len) == 0;
    return memcmp(m->arena + s->key, key, len) == 0;
}

/* The slot holding key, or the empty slot where it would go. */
static slot *probe(const id_map *m, uint64_t h, uint32_t space, const char *key, size_t len)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        slot *s = &m->slots[i];
        if (is_empty(s) || (s->hash == h && key_equals(m, s, space, key, len)))
            return s;
    }
}

static int grow_table(id_map *m)
{
    size_t cap = m->cap * 2;
    slot *fresh = new_slots(cap);
    if (!fresh)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (is_empty(&m->slots[i]))
            continue;
        size_t j = m->slots[i].hash & (cap - 1);
        while (!is_empty(&fresh[j]))
            j = (j + 1) & (cap - 1);
        fresh[j] = m->slots[i];
    }
    mem_free(mem_scratch(), m->slots, m->cap * sizeof *m->slots);
    m->slots = fresh;
    m->cap = cap;
    return 0;
}

static int arena_reserve(id_map *m, size_t more)
{
    if (m->arena_cap - m->arena_len >= more)
        return 0;
    size_t cap = m->arena_cap ? m->arena_cap : 1 << 16;
    while (cap - m->arena_len < more)
        cap *= 2;
    char *a = mem_realloc(mem_scratch(), m->arena, m->arena_cap, cap);
    if (!a)
        return -1;
    m->arena = a;
    m->arena_cap = cap;
    return 0;
}

int id_map_add(id_map *m, uint32_t space, const char *key, size_t len, uint64_t node,
               uint64_t *node_out)
{
    if (len > UINT32_MAX || space == UINT32_MAX)
        return -1;
    /* 70% full at most: probes stay short */
    if ((m->count + 1) * 10 > m->cap * 7 && grow_table(m) != 0)
        return -1;
    uint64_t h = key_hash(space, key, len);
    slot *s = probe(m, h, space, key, len);
    if (!is_empty(s)) {
        if (node_out)
            *node_out = s->node;
        return 0;
    }
    uint64_t word = 0;
    if (len <= INLINE_KEY) {
        memcpy(&word, key, len);
    } else {
        if (arena_reserve(m, len) != 0)
            return -1;
        memcpy(m->arena + m->arena_len, key, len);
        word = m->arena_len;
        m->arena_len += len;
    }
    *s = (slot){h, word, node, space, (uint32_t)len};
    m->count++;
    return 1;
}

bool id_map_find(const id_map *m, uint32_t space, const char *key, size_t len, uint64_t *node)
{
    const slot *s = probe(m, key_hash(space, key, len), space, key, len);
    if (is_empty(s))
        return false;
    *node = s->node;
    return true;
}

size_t id_map_count(const id_map *m) { return m->count; }

size_t id_map_bytes(const id_map *m) { return m->cap * sizeof(slot) + m->arena_cap; }
