/*
 * walk_stack — the heap structures a pattern walk keeps instead of the C
 * stack: a growable stack of 64-bit words, a counting set of ids and a
 * map from ids to small indices.
 *
 * Why: a variable-length walk may be as deep as the graph has
 * relationships (a chain of 100,000), and a breadth-first search holds
 * every node it has seen.  Neither may depend on the thread's stack size
 * (a 256 KiB stack must do), so each step's state lives here, allocated
 * from a mem_ctx; growth that fails is -1 (the caller reports it as
 * OutOfMemory), never an abort.
 *
 * Invariants:
 *   1. Every structure starts zeroed (= {0}) and is freed with its
 *      *_free, which leaves it zeroed again.
 *   2. u64_stack: v[0..n) are the live words; cap >= n.
 *   3. id_set: a multiset, so a walk can add on the way down and remove
 *      on the way back in any nesting; a removed id's slot stays as a
 *      count of 0 (open addressing needs it) until the next rehash.
 *   4. id_index: each key at most once; keys are ids below UINT64_MAX.
 * Only this file's own includes: it knows nothing of the engine.
 */
#ifndef STRATA_QUERY_WALK_STACK_H
#define STRATA_QUERY_WALK_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/mem.h"

typedef struct u64_stack {
    uint64_t *v;
    size_t n, cap;
} u64_stack;

/* Room for extra more words; 0 or -1. */
int u64_stack_reserve(mem_ctx *m, u64_stack *s, size_t extra);
static inline int u64_stack_push2(mem_ctx *m, u64_stack *s, uint64_t a, uint64_t b)
{
    if (s->cap - s->n < 2 && u64_stack_reserve(m, s, 2) != 0)
        return -1;
    s->v[s->n++] = a;
    s->v[s->n++] = b;
    return 0;
}
static inline int u64_stack_push(mem_ctx *m, u64_stack *s, uint64_t a)
{
    if (s->cap == s->n && u64_stack_reserve(m, s, 1) != 0)
        return -1;
    s->v[s->n++] = a;
    return 0;
}
void u64_stack_free(mem_ctx *m, u64_stack *s);

typedef struct id_set {
    uint64_t *keys;             /* id + 1; 0 = empty */
    uint32_t *counts;
    size_t cap;                 /* a power of two, or 0 */
    size_t used;                /* slots with a key, counts of 0 included */
} id_set;

int id_set_add(mem_ctx *m, id_set *s, uint64_t id);
/* Takes one of id's counts away (it must have one). */
void id_set_remove(id_set *s, uint64_t id);
bool id_set_has(const id_set *s, uint64_t id);
void id_set_free(mem_ctx *m, id_set *s);

typedef struct id_index {
    uint64_t *keys;             /* id + 1; 0 = empty */
    uint32_t *vals;
    size_t cap, n;
} id_index;

/* Adds key -> val; key must not be in the map.  0 or -1. */
int id_index_put(mem_ctx *m, id_index *map, uint64_t key, uint32_t val);
/* Whether key is there, *val its value. */
bool id_index_get(const id_index *map, uint64_t key, uint32_t *val);
void id_index_free(mem_ctx *m, id_index *map);

#endif
