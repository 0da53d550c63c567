/* id_map — open addressing over an arena of keys, and dense arrays for
   spaces of small decimal ids (id_map.h). */
#include <stdio.h>
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

/* A space whose ids have all been decimal numbers written the one way
   (digits, no sign, no leading zero: "0", "17") and small — below
   DENSE_FLOOR or 4 times the space's id count — maps them through an
   array indexed by the number: a lookup is one read of 4 bytes, where the
   table costs a hash, a 32-byte slot and a probe, and most datasets
   number their nodes so.  The first id that is not of that form moves
   the space's ids into the table for good (id_map_add), so a space is
   either dense or in the table, never both, and a key is looked up in
   the one place it can be. */
#ifdef STRATA_TESTING
#define DENSE_FLOOR 4   /* tests reach the move to the table at once */
#else
#define DENSE_FLOOR 65536
#endif
/* Nodes in a dense array take 4 bytes, not 8: a table half the size is
   twice as likely in cache for the relationship rows' random lookups.  A
   node id that does not fit moves the space to the table. */
#define NO_NODE UINT32_MAX

typedef struct dense_space {
    uint32_t *nodes;       /* [cap]: the node of id i, or NO_NODE */
    size_t cap, count;
    bool hashed;           /* the space's ids are in the table */
} dense_space;

struct id_map {
    slot *slots;
    size_t cap, count;     /* cap: a power of two */
    char *arena;
    size_t arena_len, arena_cap;
    dense_space *spaces;   /* by id space */
    size_t nspaces;
    size_t dense_count;    /* ids held in dense arrays */
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
        mem_free(mem_scratch(), m);
        return NULL;
    }
    return m;
}

void id_map_free(id_map **mp)
{
    if (!mp || !*mp)
        return;
    id_map *m = *mp;
    for (size_t i = 0; i < m->nspaces; i++)
        if (m->spaces[i].nodes)
            mem_free(mem_scratch(), m->spaces[i].nodes);
    if (m->spaces)
        mem_free(mem_scratch(), m->spaces);
    mem_free(mem_scratch(), m->slots);
    if (m->arena)
        mem_free(mem_scratch(), m->arena);
    mem_free(mem_scratch(), m);
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
    mem_free(mem_scratch(), m->slots);
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
    char *a = mem_realloc(mem_scratch(), m->arena, cap);
    if (!a)
        return -1;
    m->arena = a;
    m->arena_cap = cap;
    return 0;
}

/* Room for `more` keys in the table, and more_bytes in the arena. */
static int table_reserve(id_map *m, size_t more, size_t more_bytes)
{
    /* 70% full at most: probes stay short */
    while ((m->count + more) * 10 > m->cap * 7)
        if (grow_table(m) != 0)
            return -1;
    return arena_reserve(m, more_bytes);
}

/* Adds key to the table, which has room for it (table_reserve). */
static int table_add(id_map *m, uint32_t space, const char *key, size_t len, uint64_t node,
                     uint64_t *node_out)
{
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
        memcpy(m->arena + m->arena_len, key, len);
        word = m->arena_len;
        m->arena_len += len;
    }
    *s = (slot){h, word, node, space, (uint32_t)len};
    m->count++;
    return 1;
}

/* ---- dense spaces ------------------------------------------------------ */

/* key as the number it writes, when it is written the one way. */
static bool decimal(const char *key, size_t len, uint64_t *out)
{
    if (len == 0 || len > 18 || (key[0] == '0' && len > 1))
        return false;   /* 18 digits: no overflow */
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (key[i] < '0' || key[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(key[i] - '0');
    }
    *out = v;
    return true;
}

/* The dense state of space, made (dense and empty) when first named;
   NULL when out of memory. */
static dense_space *space_state(id_map *m, uint32_t space)
{
    if (space < m->nspaces)
        return &m->spaces[space];
    size_t n = (size_t)space + 1;
    dense_space *d = mem_realloc(mem_scratch(), m->spaces, n * sizeof *d);
    if (!d)
        return NULL;
    memset(d + m->nspaces, 0, (n - m->nspaces) * sizeof *d);
    m->spaces = d;
    m->nspaces = n;
    return &m->spaces[space];
}

/* Whether number v may go into dense space d (it stays small next to the
   space's count, so the array costs at most a few words per id). */
static bool fits_dense(const dense_space *d, uint64_t v)
{
    return v < DENSE_FLOOR || v / 4 < d->count + 1;
}

static int dense_grow(dense_space *d, uint64_t v)
{
    size_t cap = d->cap ? d->cap : 64;
    while (cap <= v)
        cap *= 2;
    uint32_t *nodes = mem_realloc(mem_scratch(), d->nodes, mem_array_size(cap, sizeof *nodes));
    if (!nodes)
        return -1;
    for (size_t i = d->cap; i < cap; i++)
        nodes[i] = NO_NODE;
    d->nodes = nodes;
    d->cap = cap;
    return 0;
}

/* Moves the ids of dense space d into the table; -1 (nothing moved) when
   out of memory. */
static int move_to_table(id_map *m, uint32_t space, dense_space *d)
{
    size_t bytes = 0;
    for (size_t i = 0; i < d->cap; i++)
        if (d->nodes[i] != NO_NODE && i >= 100000000)   /* 9 digits and more: the arena */
            bytes += 20;
    if (table_reserve(m, d->count, bytes) != 0)
        return -1;
    for (size_t i = 0; i < d->cap; i++) {
        if (d->nodes[i] == NO_NODE)
            continue;
        char key[24];
        int len = snprintf(key, sizeof key, "%zu", i);
        table_add(m, space, key, (size_t)len, d->nodes[i], NULL);
    }
    if (d->nodes)
        mem_free(mem_scratch(), d->nodes);
    m->dense_count -= d->count;
    *d = (dense_space){.hashed = true};
    return 0;
}

/* ---- the map ---------------------------------------------------------- */

int id_map_add(id_map *m, uint32_t space, const char *key, size_t len, uint64_t node,
               uint64_t *node_out)
{
    if (len > UINT32_MAX || space == UINT32_MAX)
        return -1;
    dense_space *d = space_state(m, space);
    if (!d)
        return -1;
    uint64_t v;
    if (!d->hashed && node < NO_NODE && decimal(key, len, &v) && fits_dense(d, v)) {
        if (v >= d->cap && dense_grow(d, v) != 0)
            return -1;
        if (d->nodes[v] != NO_NODE) {
            if (node_out)
                *node_out = d->nodes[v];
            return 0;
        }
        d->nodes[v] = node;
        d->count++;
        m->dense_count++;
        return 1;
    }
    if (!d->hashed && move_to_table(m, space, d) != 0)
        return -1;
    if (table_reserve(m, 1, len > INLINE_KEY ? len : 0) != 0)
        return -1;
    return table_add(m, space, key, len, node, node_out);
}

bool id_map_find(const id_map *m, uint32_t space, const char *key, size_t len, uint64_t *node)
{
    id_map_hint hint;
    id_map_prefetch(m, space, key, len, &hint);
    return id_map_find_at(m, space, key, len, &hint, node);
}

/* What a hint holds: the key's number in a dense space, that the key is
   not a number there, or its hash in the table. */
enum { HINT_NUMBER, HINT_NOT_DENSE, HINT_HASH };

static bool dense(const id_map *m, uint32_t space)
{
    return space < m->nspaces && !m->spaces[space].hashed;
}

void id_map_prefetch(const id_map *m, uint32_t space, const char *key, size_t len,
                     id_map_hint *hint)
{
    if (dense(m, space)) {
        const dense_space *d = &m->spaces[space];
        uint64_t v;
        *hint = (id_map_hint){0, HINT_NOT_DENSE};
        if (decimal(key, len, &v)) {
            /* a number past the array now may be in it by the find */
            *hint = (id_map_hint){v, HINT_NUMBER};
            if (v < d->cap)
                __builtin_prefetch(&d->nodes[v]);
        }
        return;
    }
    *hint = (id_map_hint){key_hash(space, key, len), HINT_HASH};
    __builtin_prefetch(&m->slots[hint->v & (m->cap - 1)]);
}

bool id_map_find_at(const id_map *m, uint32_t space, const char *key, size_t len,
                    const id_map_hint *hint, uint64_t *node)
{
    bool is_dense = dense(m, space);
    if (is_dense != (hint->kind != HINT_HASH)) {   /* the space moved since */
        id_map_hint fresh;
        id_map_prefetch(m, space, key, len, &fresh);
        return id_map_find_at(m, space, key, len, &fresh, node);
    }
    if (is_dense) {
        const dense_space *d = &m->spaces[space];
        if (hint->kind != HINT_NUMBER || hint->v >= d->cap || d->nodes[hint->v] == NO_NODE)
            return false;
        *node = d->nodes[hint->v];
        return true;
    }
    const slot *s = probe(m, hint->v, space, key, len);
    if (is_empty(s))
        return false;
    *node = s->node;
    return true;
}

size_t id_map_count(const id_map *m) { return m->count + m->dense_count; }

size_t id_map_bytes(const id_map *m)
{
    size_t bytes = m->cap * sizeof(slot) + m->arena_cap;
    for (size_t i = 0; i < m->nspaces; i++)
        bytes += m->spaces[i].cap * sizeof(uint32_t);
    return bytes;
}
