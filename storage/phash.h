/*
 * phash — a persistent hash trie from index keys to what an ordered tree
 * holds under each key: the point-lookup side of a hashed pbtree.
 *
 * A B+tree seek compares the key against some five entries per node on
 * each of its levels (about 550 instructions on a 10,000-entry index, and
 * a chain of cache misses within each node on a big one).  A point lookup
 * needs none of the order: the trie finds a key by its hash, four bits per
 * level, in one slot read per level and one key comparison, and answers
 * with a summary — how many entries the tree holds under the key and the
 * least of their ids — which is the whole answer for a unique index.
 *
 * Shape.  Interior nodes of PHASH_FANOUT slots; a slot is empty, a kid
 * node, or a cell (tagged pointer) holding one key's summary.  A cell sits
 * at the shallowest level where its hash prefix is its own; a second key
 * arriving in an occupied slot pushes the cell down one level (a new node)
 * until their hashes part.  When PHASH_HASH_BITS are used up (two keys of
 * one hash), the newcomer is left out and the node is marked incomplete:
 * a miss in an incomplete node is "unknown", and the caller asks the tree.
 *
 * Persistence is by path copying, as in pbtree: phash_share() is O(1); a
 * put copies the shared nodes on its path (O(depth) nodes of 16 slots, one
 * cell) and writes in place where the refcount is one.  Nodes and cells
 * come from a phash_pool filled beforehand (phash_reserve), so a put cannot
 * fail; freed ones go back to the pool.
 *
 * Keys are hashed only for kinds whose value-order equality the hash
 * respects exactly (numbers, strings, booleans: 1 and 1.0 and -0.0 and 0
 * hash alike, every NaN alike); phash_hashable() says which.
 *
 * Invariants:
 *   1. A cell at depth d in slot i of its node has hash bits [4d, 4d+4) = i,
 *      and every bit above matches its path; at most one cell per key (by
 *      value order).
 *   2. A node with refcount one belongs to one trie and may change in
 *      place; a shared node or cell never changes.
 *   3. used counts a node's non-empty slots; a node is never empty unless
 *      it is incomplete (an incomplete node is never pruned: its flag is
 *      what keeps the left-out keys "unknown").
 *   4. Cells own one reference to their key.
 */
#ifndef STRATA_STORAGE_PHASH_H
#define STRATA_STORAGE_PHASH_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/mem.h"
#include "storage/value.h"

#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
#define PHASH_LEVEL_BITS 2    /* test builds: 4-way nodes, deep tries */
#define PHASH_HASH_BITS 10    /* and short hashes, so that keys of one hash
                                 (incomplete nodes) turn up in small tests */
#else
#define PHASH_LEVEL_BITS 4    /* 16 slots: a 136-byte node */
#define PHASH_HASH_BITS 64
#endif
#define PHASH_FANOUT (1u << PHASH_LEVEL_BITS)
#define PHASH_MAX_DEPTH (PHASH_HASH_BITS / PHASH_LEVEL_BITS)

/* Freed nodes and cells a pool keeps for later puts. */
#define PHASH_POOL_KEEP 128

struct phash_node;
struct phash_cell;

typedef struct phash {
    struct phash_node *root;   /* NULL when empty */
} phash;

typedef struct phash_pool {
    struct phash_node *nodes;  /* free lists, linked through the first word */
    struct phash_cell *cells;
    uint32_t n_nodes, n_cells;
} phash_pool;

/* One key's summary. */
typedef struct phash_entry {
    value key;                 /* borrowed from the cell */
    uint64_t id;               /* the least id under the key */
    uint64_t count;            /* entries under the key, >= 1 */
} phash_entry;

typedef enum phash_answer { PHASH_ABSENT, PHASH_FOUND, PHASH_UNKNOWN } phash_answer;

/* Whether key's kind is one the trie holds (and so can answer for). */
static inline bool phash_hashable(const value *key)
{
    value_type t = value_kind(key);
    return t == VAL_INT || t == VAL_FLOAT || t == VAL_STRING || t == VAL_BOOL;
}
/* The hash the trie files key under (a hashable key). */
uint64_t phash_hash(const value *key);

static inline void phash_init(phash *h) { h->root = 0; }
void phash_share(const phash *src, phash *dst);
void phash_release(phash *h, mem_ctx *m);
/* Bytes of the nodes and cells only this trie holds. */
size_t phash_private_bytes(const phash *h);

/* Makes sure pool holds enough for puts more puts.  -1 when out of memory
   (the pool may have grown; nothing else changes). */
int phash_reserve(phash_pool *pool, mem_ctx *m, uint32_t puts);
void phash_pool_free(phash_pool *pool, mem_ctx *m);
/* Moves everything from into to (O(1) when to is empty, else O(moved)),
   then frees what to holds beyond keep of each kind. */
void phash_pool_move(phash_pool *to, phash_pool *from, uint32_t keep, mem_ctx *m);

/* The summary of key (hashable, hash = phash_hash(key)): FOUND with *e
   filled, ABSENT (the tree holds nothing under key), or UNKNOWN (key was
   left out: ask the tree). */
phash_answer phash_get(const phash *h, const value *key, uint64_t hash, phash_entry *e);
/* phash_get with the hash computed here (a lookup's one call). */
phash_answer phash_find(const phash *h, const value *key, phash_entry *e);
/* phash_find for each of keys[0..n), into ans[i] and (when FOUND) e[i]:
   the keys' descents interleaved level by level, so that their cache
   misses overlap instead of following one another.  A key the trie does
   not hold the kind of is UNKNOWN. */
void phash_find_many(const phash *h, const value *keys, size_t n, phash_answer *ans,
                     phash_entry *e);
/* Sets key's summary to (id, count); count 0 removes it.  key is retained
   when a cell is made for it.  A key the trie cannot hold (see above) is
   left out.  Draws on pool, which must hold a reserve for one put. */
void phash_put(phash *h, phash_pool *pool, mem_ctx *m, const value *key, uint64_t hash,
               uint64_t id, uint64_t count);

#ifdef STRATA_TESTING
/* Invariants 1 and 3; *cells gets the number of cells.  0 when sound. */
int phash_check(const phash *h, uint64_t *cells);
#endif

#endif
