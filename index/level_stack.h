/*
 * level_stack — the layered ordered map under every property index.
 *
 * A stack is a base tree plus up to LSTACK_CAP delta levels above it; all
 * are persistent B+trees (pbtree.h) holding (key, id << 1 | tombstone)
 * entries.  The base never holds tombstones.  A lookup merges the base
 * and the levels; for each (key, id) the topmost level that mentions it
 * decides (an insert shows it, a tombstone hides it).
 *
 * State transitions, all at write entry (lstack_prepare):
 *   fork       the stack header is shared with a version a view holds: the
 *              writer copies the header (O(depth): one root reference per
 *              level).  If the top level is small (< LSTACK_LEVEL_MAX) the
 *              writes go into it by path copying; otherwise a fresh private
 *              level is pushed.  The stack grows only while a reader is
 *              held across writes, by one level per LSTACK_LEVEL_MAX
 *              entries written meanwhile.
 *   fold-back  the header is private and the base has no other holder: the
 *              levels are applied to the base in place and dropped
 *              (O(delta)); the base is moved, never copied.
 *   flatten    a fork finds the stack at the cap: every level is applied to
 *              the base by path copying, so the flatten costs O(entries in
 *              the levels x log n), not O(index) — the one amortised cost a
 *              continuously held reader pays, and a bounded one.
 *   write      into the top level, or into the base when there are no
 *              levels (in place when private, path-copied when shared).
 *
 * Invariants:
 *   1. depth <= LSTACK_CAP; levels above depth are empty.
 *   2. A header with refcount one belongs to one index of one version.
 *   3. Each (key, id) appears at most once per level.
 *   4. count is the number of (key, id) the merged view shows.
 *   5. An entry in a level is one that the levels below it (merged) do not
 *      show, and a tombstone one that they do — so a write looks at the
 *      top level alone (one tree op: an entry in or out, a tombstone in or
 *      out), never below.  A fold that stops part way (out of memory)
 *      leaves level 0 not telling what the base shows: the stack is then
 *      loose, and its writes look below, until level 0 is folded.
 *   6. Only the base keeps a hash (a hashed stack's); levels are small
 *      deltas that a point lookup seeks.
 *
 * Writes are prepare-then-commit: lstack_prepare() does every fallible
 * step (header copy, level push, fold-back, flatten, node reserve) for the
 * given number of ops; lstack_insert() / lstack_delete() then cannot fail.
 */
#ifndef STRATA_INDEX_LEVEL_STACK_H
#define STRATA_INDEX_LEVEL_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/mem.h"
#include "storage/pbtree.h"
#include "storage/value.h"

/* Entries a shared top level may hold and still take a fork's writes by
   path copying, instead of a new level being pushed over it.  512:
   measured with bench/fork_cost on 1M nodes, indexed shape, medians of the
   first write under a held view / continuously held reader: 64 -> 9.9 /
   12.6 us (deeper stacks, slower lookups), 512 -> 9.5 / 9.3, 4096 -> 11.4
   / 10.5 (bigger path copies).  Again later by instructions (callgrind,
   200k nodes, 2,000 rounds of the held-view SET): 64 -> 12,882 a round,
   512 -> 10,231, 2048 -> 11,753. */
#ifndef LSTACK_LEVEL_MAX
#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
#define LSTACK_LEVEL_MAX 2
#else
#define LSTACK_LEVEL_MAX 512
#endif
#endif

#ifndef LSTACK_CAP
#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
#define LSTACK_CAP 4   /* tiny in test builds: the flatten runs all the time */
#else
/* 32: the seed project measured a ~5x-median spike one round in eight at 8
   levels with an O(index) flatten; ours is O(delta).  Measured here
   (bench/fork_cost, 1M nodes, indexed, continuously held reader, before
   small top levels took writes by path copying): cap 8 -> mean 15.7 us,
   median 8.3, worst 81; cap 32 -> mean 12.6, median 7.2, worst 258.  Both
   keep mean <= 3x median; 32 has the lower mean. */
#define LSTACK_CAP 32
#endif
#endif

typedef struct level_stack level_stack;

/* NULL is the empty stack. */
void lstack_retain(level_stack *s);
void lstack_release(mem_ctx *m, level_stack **sp);
/* Bytes only this stack holds (itself, when unshared, and its trees'
   unshared nodes); 0 when shared. */
size_t lstack_private_bytes(const level_stack *s);

/* Fold-back alone: when no one else holds s or its base, its levels are
   folded into the base in place (lstack_open does it first too).  What the
   stack shows is unchanged; out of memory the fold stops part way and the
   stack is loose.  A statement's first write to an index calls it before
   the journal saves the stack: the saved copy then shares the base, and a
   level a committed statement leaves would otherwise wait for a flatten's
   path copies, with a run of statements deepening the stack to
   LSTACK_CAP. */
void lstack_fold_back(level_stack *s, pbtree_pool *pool, mem_ctx *m);
/* Makes *sp writable for ops inserts/deletes (see the header comment).
   -1 when out of memory; what the stack shows is unchanged either way. */
int lstack_prepare(level_stack **sp, pbtree_pool *pool, mem_ctx *m, uint32_t ops);
/* lstack_prepare for writes to several stacks drawing on one pool: every
   fallible step but the reserve, adding to *need what the ops could take;
   the caller then reserves the sum once (pbtree_pool_reserve). */
int lstack_open(level_stack **sp, pbtree_pool *pool, mem_ctx *m, uint32_t ops,
                pbtree_need *need);
/* key is borrowed (retained by the stack).  Return whether what the stack
   shows changed (false: the entry was already there / not there). */
bool lstack_insert(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id);
bool lstack_delete(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id);
/* lstack_insert / lstack_delete for a caller that knows the stack does not
   show / shows (key, id) — index maintenance: an entity's old key is in
   its index and, once removed, its new one is not: no look below the top
   level at all (vouched for, and checked in test builds). */
void lstack_insert_absent(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key,
                          uint64_t id);
void lstack_delete_present(level_stack *s, pbtree_pool *pool, mem_ctx *m, const value *key,
                           uint64_t id);

/* A new empty stack; a hashed one keeps a hash beside its base
   (pbtree_init_hashed), for the point lookups of lstack_first.  -1 when
   out of memory (*out NULL). */
int lstack_create(level_stack **out, mem_ctx *m, bool hashed);
bool lstack_hashed(const level_stack *s);

/* Bulk build (a load): *out becomes a new stack whose base holds e[0..n),
   strictly increasing by (key, id) with plain ids; e's ids are rewritten
   to the stack's encoding, its keys retained (e stays the caller's).  -1
   when out of memory (*out NULL). */
int lstack_build(level_stack **out, mem_ctx *m, pbtree_entry *e, uint64_t n, bool hashed);

bool lstack_contains(const level_stack *s, const value *key, uint64_t id);
uint64_t lstack_count(const level_stack *s);
uint32_t lstack_depth(const level_stack *s);

#ifdef STRATA_TESTING
/* Flattens performed since the process started (test oracle). */
uint64_t lstack_flattens(void);
/* Whether a fold stopped part way has left the stack loose (invariant 5). */
bool lstack_loose(const level_stack *s);
/* pbtree_check on the base and every level; 0 when all are sound. */
int lstack_check(const level_stack *s);
#endif

/* A merged cursor in (key, id) order over a stack that does not change
   while it is used.  Heap-allocated: it holds one tree cursor per level. */
typedef struct lstack_cursor lstack_cursor;

/* NULL when out of memory.  Positions at the first (key, id) >= (key, 0),
   or at the first entry when key is NULL. */
lstack_cursor *lstack_seek(const level_stack *s, mem_ctx *m, const value *key);
/* The smallest id shown under key (by value order), without allocating;
   false when there is none.  A unique index's point lookup: on a hashed
   stack, a hash probe in the base and a seek in each level when each tree
   holds at most one entry under key (always, for a unique index), else a
   merged seek. */
bool lstack_first(const level_stack *s, const value *key, uint64_t *id);
/* lstack_first for each of keys[0..n): hit[i] and, on a hit, ids[i].
   Returns the hits.  On a hashed stack without levels the keys' hash
   probes are interleaved (pbtree_point_many), so their cache misses
   overlap; any other stack, and any key the hash cannot answer for, takes
   lstack_first. */
size_t lstack_first_many(const level_stack *s, const value *keys, size_t n, uint64_t *ids,
                         bool *hit);
/* How many entries key has, told apart only as 0, 1 (then *id is it) or
   2 for several (then *id is the least): an equality seek that needs no
   cursor when a key has one entry.  A hashed stack answers from its
   base's hash and a seek in each level when they can; otherwise a cursor
   on the stack (no heap). */
int lstack_point(const level_stack *s, const value *key, uint64_t *id);
/* The current entry, or false at the end; *key is borrowed. */
bool lstack_cursor_get(const lstack_cursor *c, const value **key, uint64_t *id);
void lstack_cursor_next(lstack_cursor *c);
void lstack_cursor_free(lstack_cursor **c, mem_ctx *m);

#endif
