/*
 * pbtree — a persistent B+tree of (value key, 64-bit id) entries.
 *
 * The ordered map under every property index: entries are sorted by
 * value_order() of the key, then by id, so all entries of one key are
 * adjacent (a point lookup is a seek), ranges are seeks plus a scan, and a
 * key held by a million nodes is a million small entries rather than one
 * million-long posting list that a write would have to copy.
 *
 * Persistence is by path copying, like pvec: pbtree_share() is O(1) (one
 * refcount on the root); a write copies the shared nodes on its root-to-
 * leaf path (O(log n) nodes of PBTREE_ORDER entries) and writes in place
 * where a node's refcount is one.
 *
 * Writes never fail half way: pbtree_reserve() first sets aside, in a
 * pbtree_pool, every node the next ops writes could need (path copies and
 * splits, worst case), and pbtree_insert() / pbtree_delete() then draw from
 * that pool and cannot fail.  A pool is private to one writer (the graph's
 * writer owns one for all its trees); unused nodes stay in it for the next
 * write until pbtree_pool_free().
 *
 * Invariants:
 *   1. Entries are strictly increasing in (value_order(key), id) order.
 *   2. A node with refcount one belongs to one tree and may change in place;
 *      a shared node never changes.
 *   3. Every leaf is at the same depth; interior node i's separator is <= every
 *      entry below kid i (deletes may leave it lower than the minimum; nodes
 *      may be underfull after deletes — there is no merging — but never
 *      empty, except an empty tree's NULL root).
 *   4. count is the number of entries.
 *   5. Keys are owned by the tree (one reference per stored entry).
 *   6. A hashed tree (pbtree_init_hashed) keeps beside it a phash of each
 *      hashable key's summary — the entries under the key and the least
 *      id — updated by every insert and delete, built by pbtree_build, and
 *      shared, copied and freed with the tree.  pbtree_point() answers a
 *      point lookup from it without descending the tree.
 */
#ifndef STRATA_STORAGE_PBTREE_H
#define STRATA_STORAGE_PBTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/mem.h"
#include "storage/phash.h"
#include "storage/value.h"

#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
#define PBTREE_ORDER 4    /* tiny nodes in test builds: splits happen all the time */
#else
#define PBTREE_ORDER 32   /* entries per node: 24-byte entries, ~800-byte nodes */
#endif

typedef struct pbtree_entry {
    value key;
    uint64_t id;
} pbtree_entry;

struct pbtree_node;

typedef struct pbtree {
    struct pbtree_node *root;     /* NULL when empty */
    uint32_t height;              /* 0: the root is a leaf */
    bool hashed;                  /* keeps a phash of its keys (invariant 6) */
    uint64_t count;
    phash hash;                   /* empty unless hashed */
} pbtree;

/* Nodes a pool keeps for later writes; beyond that, nodes go back to the
   allocator. */
#define PBTREE_POOL_KEEP 64

/* Spare nodes set aside for writes that must not fail. */
typedef struct pbtree_pool {
    struct pbtree_node *free;     /* linked through the nodes' first word */
    uint32_t n;
    phash_pool hash;              /* and the hashed trees' trie nodes */
} pbtree_pool;

void pbtree_init(pbtree *t);
/* An empty tree that keeps a hash of its keys for point lookups. */
void pbtree_init_hashed(pbtree *t);
/* dst becomes a second owner of src's entries: O(1). */
void pbtree_share(const pbtree *src, pbtree *dst);
/* Drops this owner's reference; frees nodes no one else holds.  t is left
   empty, hashed as it was. */
void pbtree_release(pbtree *t, mem_ctx *m);
/* Bytes of the nodes only this tree holds (refcount one from the root
   down): O(those nodes). */
size_t pbtree_private_bytes(const pbtree *t);

/* Makes sure pool holds enough nodes for ops more inserts or deletes on t
   (worst case: every node on the path copied and split, and a new root).
   -1 when out of memory; nothing else changes. */
int pbtree_reserve(pbtree_pool *pool, mem_ctx *m, const pbtree *t, uint32_t ops);
void pbtree_pool_free(pbtree_pool *pool, mem_ctx *m);
/* Moves every node of from into to, then frees what to holds beyond keep:
   O(1) when to is empty (the lists are swapped), else O(nodes moved), and
   O(nodes freed). */
void pbtree_pool_move(pbtree_pool *to, pbtree_pool *from, uint32_t keep, mem_ctx *m);
/* Worst-case nodes one insert or delete on t can take. */
uint32_t pbtree_op_nodes(const pbtree *t);

/* What writes on several trees drawing on one pool could take: summed
   with pbtree_need_add, then reserved at once with pbtree_pool_reserve
   (each tree reserving alone would leave the pool short of the sum). */
typedef struct pbtree_need {
    uint64_t nodes;   /* tree nodes */
    uint64_t puts;    /* hash puts, for hashed trees */
} pbtree_need;
void pbtree_need_add(pbtree_need *need, const pbtree *t, uint32_t ops);
/* -1 when out of memory (the pool may have grown; nothing else changes). */
int pbtree_pool_reserve(pbtree_pool *pool, mem_ctx *m, const pbtree_need *need);

/* Makes sure pool holds at least n nodes.  -1 when out of memory. */
int pbtree_pool_fill(pbtree_pool *pool, mem_ctx *m, uint64_t n);

/* Inserts (key, id); key is retained (borrowed from the caller).  Returns
   1 when inserted, 0 when the entry was already there (nothing changes).
   Draws nodes from pool, which must hold a reserve for one op. */
int pbtree_insert(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id);
/* Deletes (key, id); returns 1 when deleted, 0 when absent.  Same pool
   contract; freed nodes go back to the pool. */
int pbtree_delete(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key, uint64_t id);

/* pbtree_insert / pbtree_delete for a caller that knows (key, id) is
   absent / present — it has just looked, or its own invariants say so:
   no lookup first (checked by an assertion in debug builds).  Same pool
   contract. */
void pbtree_insert_absent(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key,
                          uint64_t id);
void pbtree_delete_present(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key,
                           uint64_t id);
/* One descent for a pair of adjacent entries, (key, cancel) and (key,
   add) with ids one apart (a level stack's entry and its tombstone):
   deletes (key, cancel) when present and returns 0, else inserts (key,
   add), which must be absent, and returns 1.  Same pool contract (one
   op); on a hashed tree it is the look-up and the plain write. */
int pbtree_cancel_or_insert(pbtree *t, pbtree_pool *pool, mem_ctx *m, const value *key,
                            uint64_t cancel, uint64_t add);

/* Bulk build (a load): *t, empty, becomes the tree of e[0..n), which must
   be strictly increasing (pbtree_entry_cmp).  Each key is retained (e
   stays the caller's).  Built bottom-up, level by level, every node filled
   evenly: O(n), no descents, no pool (a hashed tree's trie is filled one
   key at a time, O(n) expected).  -1 when out of memory (t empty). */
int pbtree_build(pbtree *t, mem_ctx *m, const pbtree_entry *e, uint64_t n, bool hashed);

/* A point lookup on a hashed tree: 1 with *id the least id under key (by
   value order: 1 finds 1.0) and *count the entries under it, 0 when there
   is none, -1 when the hash cannot say (the tree is not hashed, key's kind
   is not hashable, or key was left out of the trie): ask with a seek. */
int pbtree_point(const pbtree *t, const value *key, uint64_t *id, uint64_t *count);

/* pbtree_point for each of keys[0..n) at once (phash_find_many, whose
   misses overlap): ans[i] FOUND with e[i]'s id and count, ABSENT, or
   UNKNOWN where pbtree_point says -1.  -1 when the tree is not hashed
   (nothing written). */
int pbtree_point_many(const pbtree *t, const value *keys, size_t n, phash_answer *ans,
                      phash_entry *e);

bool pbtree_contains(const pbtree *t, const value *key, uint64_t id);
/* Whether the root has another holder (a write would copy it). */
bool pbtree_is_shared(const pbtree *t);

/* A cursor over a tree that must not change while the cursor is used (a
   shared tree, or one the caller does not write). */
typedef struct pbtree_cursor {
    const struct pbtree_node *path[16];
    uint32_t pos[16];
    uint32_t height;
    bool valid;
} pbtree_cursor;

/* Positions c at the first entry >= (key, id); c->valid is false when there
   is none. */
void pbtree_seek(const pbtree *t, const value *key, uint64_t id, pbtree_cursor *c);
/* Positions c at the first entry. */
void pbtree_first(const pbtree *t, pbtree_cursor *c);
/* The entry under a valid cursor (borrowed). */
const pbtree_entry *pbtree_cursor_entry(const pbtree_cursor *c);
void pbtree_cursor_next(pbtree_cursor *c);

/* (a.key, a.id) against (b.key, b.id): negative, zero or positive. */
int pbtree_entry_cmp(const value *akey, uint64_t aid, const value *bkey, uint64_t bid);

#ifdef STRATA_TESTING
/* Invariants 1, 3 and 4; 0 when sound. */
int pbtree_check(const pbtree *t);
#endif

#endif
