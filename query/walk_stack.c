/* walk_stack — heap stacks, id sets and id maps for pattern walks (see
   walk_stack.h). */
#include <string.h>

#include "query/walk_stack.h"

int u64_stack_reserve(mem_ctx *m, u64_stack *s, size_t extra)
{
    if (s->cap - s->n >= extra)
        return 0;
    size_t cap = s->cap ? s->cap : 32;
    while (cap - s->n < extra) {
        if (cap > SIZE_MAX / 2 / sizeof *s->v)
            return -1;
        cap *= 2;
    }
    uint64_t *v = mem_realloc(m, s->v, cap * sizeof *v);
    if (!v)
        return -1;
    s->v = v;
    s->cap = cap;
    return 0;
}

void u64_stack_free(mem_ctx *m, u64_stack *s)
{
    if (s->v)
        mem_free(m, s->v);
    *s = (u64_stack){0};
}

/* Fibonacci hashing: ids are dense small integers, the multiply spreads
   them over the high bits, which pick the slot. */
static size_t slot_of(uint64_t id, size_t cap)
{
    unsigned bits = (unsigned)__builtin_ctzll((unsigned long long)cap);   /* cap: 2^bits */
    return bits ? (size_t)((id * 0x9E3779B97F4A7C15ull) >> (64 - bits)) : 0;
}

/* ---- id_set ---- */

static size_t set_find(const id_set *s, uint64_t id)
{
    size_t mask = s->cap - 1, i = slot_of(id, s->cap);
    while (s->keys[i] && s->keys[i] != id + 1)
        i = (i + 1) & mask;
    return i;
}

/* Rebuilds with room for want live ids, dropping the zero counts. */
static int set_rehash(mem_ctx *m, id_set *s, size_t want)
{
    size_t cap = 16;
    while (cap < want * 2)
        cap *= 2;
    id_set t = {mem_calloc(m, cap * sizeof *t.keys), mem_alloc(m, cap * sizeof *t.counts), cap,
                0};
    if (!t.keys || !t.counts) {
        if (t.keys)
            mem_free(m, t.keys);
        if (t.counts)
            mem_free(m, t.counts);
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++)
        if (s->keys[i] && s->counts[i]) {
            size_t j = set_find(&t, s->keys[i] - 1);
            t.keys[j] = s->keys[i];
            t.counts[j] = s->counts[i];
            t.used++;
        }
    id_set_free(m, s);
    *s = t;
    return 0;
}

int id_set_add(mem_ctx *m, id_set *s, uint64_t id)
{
    if ((s->used + 1) * 4 > s->cap * 3) {
        size_t live = 0;
        for (size_t i = 0; i < s->cap; i++)
            live += s->keys[i] && s->counts[i];
        if (set_rehash(m, s, live + 1) != 0)
            return -1;
    }
    size_t i = set_find(s, id);
    if (!s->keys[i]) {
        s->keys[i] = id + 1;
        s->counts[i] = 0;
        s->used++;
    }
    s->counts[i]++;
    return 0;
}

void id_set_remove(id_set *s, uint64_t id)
{
    size_t i = set_find(s, id);
    if (s->keys[i] && s->counts[i])
        s->counts[i]--;
}

bool id_set_has(const id_set *s, uint64_t id)
{
    if (!s->cap)
        return false;
    size_t i = set_find(s, id);
    return s->keys[i] && s->counts[i];
}

void id_set_free(mem_ctx *m, id_set *s)
{
    if (s->keys)
        mem_free(m, s->keys);
    if (s->counts)
        mem_free(m, s->counts);
    *s = (id_set){0};
}

/* ---- id_index ---- */

static size_t map_find(const id_index *map, uint64_t key)
{
    size_t mask = map->cap - 1, i = slot_of(key, map->cap);
    while (map->keys[i] && map->keys[i] != key + 1)
        i = (i + 1) & mask;
    return i;
}

static int map_grow(mem_ctx *m, id_index *map)
{
    size_t cap = map->cap ? map->cap * 2 : 64;
    id_index t = {mem_calloc(m, cap * sizeof *t.keys), mem_alloc(m, cap * sizeof *t.vals), cap,
                map->n};
    if (!t.keys || !t.vals) {
        if (t.keys)
            mem_free(m, t.keys);
        if (t.vals)
            mem_free(m, t.vals);
        return -1;
    }
    for (size_t i = 0; i < map->cap; i++)
        if (map->keys[i]) {
            size_t j = map_find(&t, map->keys[i] - 1);
            t.keys[j] = map->keys[i];
            t.vals[j] = map->vals[i];
        }
    size_t n = map->n;
    id_index_free(m, map);
    *map = t;
    map->n = n;
    return 0;
}

int id_index_put(mem_ctx *m, id_index *map, uint64_t key, uint32_t val)
{
    if ((map->n + 1) * 4 > map->cap * 3 && map_grow(m, map) != 0)
        return -1;
    size_t i = map_find(map, key);
    map->keys[i] = key + 1;
    map->vals[i] = val;
    map->n++;
    return 0;
}

bool id_index_get(const id_index *map, uint64_t key, uint32_t *val)
{
    if (!map->cap)
        return false;
    size_t i = map_find(map, key);
    if (!map->keys[i])
        return false;
    *val = map->vals[i];
    return true;
}

void id_index_free(mem_ctx *m, id_index *map)
{
    if (map->keys)
        mem_free(m, map->keys);
    if (map->vals)
        mem_free(m, map->vals);
    *map = (id_index){0};
}
