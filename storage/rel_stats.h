/*
 * rel_stats — relationship counts per (label, relationship type,
 * direction): for label L, type T and direction D, how many live
 * relationships of type T have a D-end node carrying L.  Summed over L's
 * nodes that is their total D-degree in T, so divided by L's node count it
 * is the mean fan-out the planner needs for a labelled end (query/join.h).
 *
 * Shape.  One persistent vector (pvec.h) of {outgoing, incoming} count
 * pairs, indexed by the bits of the label and type ids interleaved
 * (label bit k at 2k + 1, type bit k at 2k).  Token ids are dense and
 * small, so the index stays small for the pairs a graph uses, and the
 * vector is sparse where it is not: an index never written is a hole, no
 * leaf.  No name or key table is needed, so nothing outside the vector
 * changes on a write, and a version holds its statistics like any other
 * structure:
 *   - a fork shares the vector (one refcount increment);
 *   - a write under a held view copies one path per (label, type) pair it
 *     changes — never a table of labels × types;
 *   - rolling back in place replays onto paths the write made private.
 *
 * Invariants:
 *   1. Element (L, T) holds {relationships of type T whose start carries L,
 *      those whose end carries L}; a self-loop on an L node counts once in
 *      each.  strata_integrity_check recomputes every pair and compares.
 *   2. Elements never written, and every element past len, are zero.
 *   3. Chunks follow pvec's invariants: a chunk with refcount one is the
 *      writer's; a shared one never changes.
 *
 * Writes are prepare-then-commit: relstats_prepare grows the vector and
 * owns the element's path (fallible, changes no count); relstats_add then
 * cannot fail.
 */
#ifndef STRATA_STORAGE_REL_STATS_H
#define STRATA_STORAGE_REL_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/mem.h"
#include "storage/pvec.h"

typedef struct rel_stats {
    pvec counts;
} rel_stats;

static inline void relstats_init(rel_stats *s) { pvec_init(&s->counts); }
/* dst becomes a second owner of src's counts: O(1). */
void relstats_share(const rel_stats *src, rel_stats *dst);
void relstats_release(rel_stats *s, mem_ctx *m);
/* relstats_release for counts that succ was written from. */
void relstats_release_into(rel_stats *s, const rel_stats *succ, mem_ctx *m);
/* Bytes of the chunks only this owner holds. */
size_t relstats_private_bytes(const rel_stats *s);

/* Whether (label, type) is within the ids the statistics can index
   (RELSTATS_TOKEN_MAX); the write path refuses a relationship beyond. */
bool relstats_indexable(uint32_t label, uint32_t type);
#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
#define RELSTATS_TOKEN_MAX (1u << 16)   /* 4-way chunks, 16 levels: 32 index bits */
#else
#define RELSTATS_TOKEN_MAX (1u << 30)   /* 16-way chunks, 15 levels: 60 index bits */
#endif

/* The count of (label, type) in direction dir (ADJ_OUT or ADJ_IN). */
uint64_t relstats_get(const rel_stats *s, uint32_t label, uint32_t type, int dir);

/* Makes (label, type)'s element writable: grows the vector to hold it and
   copies the shared chunks on its path.  -1 when out of memory or the pair
   is not indexable (counts unchanged either way).  Once it has succeeded,
   calling it again before anything shares the vector cannot fail. */
int relstats_prepare(rel_stats *s, mem_ctx *m, uint32_t label, uint32_t type);
/* Adds delta to (label, type, dir); the element must have been prepared
   (so nothing allocates) and the count must not go below zero. */
void relstats_add(rel_stats *s, mem_ctx *m, uint32_t label, uint32_t type, int dir,
                  int64_t delta);

/* Whether a and b hold the same counts; *label, *type name the first
   pair that differs otherwise.  O(the leaves that differ). */
bool relstats_equal(const rel_stats *a, const rel_stats *b, uint32_t *label, uint32_t *type);

/* Calls fn(label, type, outgoing, incoming, arg) for every pair with a
   count, in index order, until fn returns nonzero (returned).  O(the
   leaves holding counts): holes are skipped unread. */
typedef int (*relstats_fn)(uint32_t label, uint32_t type, uint64_t out, uint64_t in, void *arg);
int relstats_each(const rel_stats *s, relstats_fn fn, void *arg);

#ifdef STRATA_TESTING
int relstats_check(const rel_stats *s);
#endif

#endif
