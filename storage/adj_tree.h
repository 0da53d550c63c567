/*
 * adj_tree — one (direction, type) segment of a hub's adjacency: a
 * persistent B+tree of entries ordered by relationship id.
 *
 * storage/adjacency.c keeps a node's segments in one flat block while the
 * node is small; past ADJ_TREE_MIN entries each segment becomes one of
 * these, so that a write under a held view copies one root-to-leaf path
 * (a few KiB) instead of the node's whole block.  Nodes are refcounted and
 * shared between block versions like blocks are; a node with refcount one
 * under a private parent belongs to one version and may change in place.
 *
 * Leaves hold up to ADJT_LEAF_MAX entries (a 4 KiB allocation); a root
 * leaf starts small and grows.  Inner nodes hold up to ADJT_FAN children
 * with separator keys: child i holds relationship ids from key[i] (i > 0)
 * up to key[i+1]; key[0] is unused.
 *
 * Writes are prepare-then-commit like the flat block's: adjt_prepare_*
 * makes the path to one relationship private and, for an insert, splits
 * every full node on it top down, so adjt_insert and adjt_erase cannot
 * fail.  Preparing only copies and splits nodes, which keeps the tree's
 * content: a failed prepare leaves it meaning what it meant.
 *
 * Invariants (adjt_check):
 *   1. Entries are strictly increasing by relationship id, leaf to leaf.
 *   2. No node is empty; every leaf is at height 0 and an inner node's
 *      children are one level below it.
 *   3. Every id under child i of an inner node is >= key[i] (i > 0) and
 *      < key[i+1].
 */
#ifndef STRATA_STORAGE_ADJ_TREE_H
#define STRATA_STORAGE_ADJ_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "storage/adjacency.h"
#include "storage/mem.h"

#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
/* Tiny nodes in test builds, so small graphs split, merge and deepen. */
#define ADJT_LEAF_MAX 8
#define ADJT_FAN 4
#define ADJT_MAX_HEIGHT 24
#else
#define ADJT_LEAF_MAX 510   /* (4096 - 16) / 8: a leaf fills one 4 KiB size class */
#define ADJT_FAN 84         /* (1024 - 16) / 12: an inner node fills 1 KiB */
#define ADJT_MAX_HEIGHT 12  /* far above what 2^32 entries need (about 5) */
#endif

typedef struct adj_tree adj_tree;

/* The first index in [lo, hi) of records of stride bytes from base whose
   leading uint32 (a segment key, a relationship id) is >= key: the one
   binary search of a block's directory and of a segment's entries. */
static inline uint32_t adj_lower_bound(const void *base, size_t stride, uint32_t lo, uint32_t hi,
                                       uint32_t key)
{
    const unsigned char *p = base;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, at;
        memcpy(&at, p + (size_t)mid * stride, sizeof at);
        if (at < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A tree of the n entries e, sorted by relationship id without repeats,
   leaves packed full; NULL when out of memory (or n == 0). */
adj_tree *adjt_build(mem_ctx *m, const adj_entry *e, uint32_t n);
/* An empty root leaf, for a segment an insert is about to open. */
adj_tree *adjt_new(mem_ctx *m);

void adjt_retain(adj_tree *t);
void adjt_release(mem_ctx *m, adj_tree **tp);

/* Makes the path to rel private with room for adjt_insert(rel).  -1 when
   out of memory or the tree is at ADJT_MAX_HEIGHT; *tp then holds the same
   entries. */
int adjt_prepare_insert(mem_ctx *m, adj_tree **tp, uint32_t rel);
/* Inserts (rel, other), rel not present; needs adjt_prepare_insert(rel). */
void adjt_insert(adj_tree *t, uint32_t rel, uint32_t other);

/* Makes the path to rel private (and the leaf's neighbour, when the erase
   may merge the two).  -1 when out of memory, with the same entries. */
int adjt_prepare_erase(mem_ctx *m, adj_tree **tp, uint32_t rel);
/* Removes rel: 0, or -1 when it is not there.  Needs adjt_prepare_erase
   (rel).  *tp becomes NULL when the tree empties. */
int adjt_erase(mem_ctx *m, adj_tree **tp, uint32_t rel);

/* The entries from the first with an id >= from to the end of its leaf:
   *n of them, or NULL (*n = 0) when there is none; *last says whether the
   leaf is the tree's last. */
const adj_entry *adjt_run(const adj_tree *t, uint32_t from, uint32_t *n, bool *last);

/* Bytes of the nodes only this tree holds (none when t is shared). */
size_t adjt_private_bytes(const adj_tree *t);

#ifdef STRATA_TESTING
/* Checks the invariants and counts the entries: 0 when sound. */
int adjt_check(const adj_tree *t, uint32_t *count);
/* The tree's height (0: one leaf). */
uint32_t adjt_height(const adj_tree *t);
#endif

#endif
