/* id_map — open addressing over an arena of keys (id_map.h). */
#include <stdlib.h>
#include <string.h>

#include "cli/id_map.h"

#define ID_MAP_EMPTY UINT64_MAX

typedef struct slot {
    uint64_t hash;
    uint64_t key;    /* offset into the arena, or ID_MAP_EMPTY */
    uint64_t node;
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
    slot *s = malloc(cap * sizeof *s);
    if (s)
        for (size_t i = 0; i < cap; i++)
            s[i].key = ID_MAP_EMPTY;
    return s;
}

id_map *id_map_new(void)
{
    id_map *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cap = 1024;
    m->slots = new_slots(m->cap);
    if (!m->slots) {
        free(m);
        return NULL;
    }
    return m;
}

void id_map_free(id_map **mp)
{
    if (!mp || !*mp)
        return;
    free((*mp)->slots);
    free((*mp)->arena);
    free(*mp);
    *mp = NULL;
}

static bool key_equals(const id_map *m, uint64_t off, uint32_t space, const char *key,
                       size_t len)
{
    uint32_t head[2];
    memcpy(head, m->arena + off, sizeof head);
    return head[0] == space && head[1] == len && memcmp(m->arena + off + 8, key, len) == 0;
}

/* The slot holding key, or the empty slot where it would go. */
static slot *probe(const id_map *m, uint64_t h, uint32_t space, const char *key, size_t len)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        slot *s = &m->slots[i];
        if (s->key == ID_MAP_EMPTY || (s->hash == h && key_equals(m, s->key, space, key, len)))
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
        if (m->slots[i].key == ID_MAP_EMPTY)
            continue;
        size_t j = m->slots[i].hash & (cap - 1);
        while (fresh[j].key != ID_MAP_EMPTY)
            j = (j + 1) & (cap - 1);
        fresh[j] = m->slots[i];
    }
    free(m->slots);
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
    char *a = realloc(m->arena, cap);
    if (!a)
        return -1;
    m->arena = a;
    m->arena_cap = cap;
    return 0;
}

int id_map_add(id_map *m, uint32_t space, const char *key, size_t len, uint64_t node,
               uint64_t *node_out)
{
    if (len > UINT32_MAX)
        return -1;
    /* 70% full at most: probes stay short */
    if ((m->count + 1) * 10 > m->cap * 7 && grow_table(m) != 0)
        return -1;
    uint64_t h = key_hash(space, key, len);
    slot *s = probe(m, h, space, key, len);
    if (s->key != ID_MAP_EMPTY) {
        if (node_out)
            *node_out = s->node;
        return 0;
    }
    if (arena_reserve(m, 8 + len) != 0)
        return -1;
    uint32_t head[2] = {space, (uint32_t)len};
    memcpy(m->arena + m->arena_len, head, sizeof head);
    memcpy(m->arena + m->arena_len + 8, key, len);
    *s = (slot){h, m->arena_len, node};
    m->arena_len += 8 + len;
    m->count++;
    return 1;
}

bool id_map_find(const id_map *m, uint32_t space, const char *key, size_t len, uint64_t *node)
{
    const slot *s = probe(m, key_hash(space, key, len), space, key, len);
    if (s->key == ID_MAP_EMPTY)
        return false;
    *node = s->node;
    return true;
}

size_t id_map_count(const id_map *m) { return m->count; }

size_t id_map_bytes(const id_map *m) { return m->cap * sizeof(slot) + m->arena_cap; }
