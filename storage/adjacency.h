/*
 * adjacency — the relationships at one node, grouped by direction and type.
 *
 * Each node slot points at an adj_block: a directory of segments, one per
 * (direction, relationship type) present at the node, sorted by that key.
 * Expanding a node's neighbours of one type reads one segment and never
 * touches the others.
 *
 * Every segment lists its entries (relationship id, node at the other end)
 * by relationship id.  A block is flat while the node is small: the
 * entries of every segment laid end to end after the directory.  Past
 * ADJ_TREE_MIN entries a block holds each segment as a persistent B+tree
 * ordered by relationship id (storage/adj_tree.h) instead, so that a write
 * under a held view copies the directory and one root-to-leaf path of one
 * segment — a few KiB whatever the degree — rather than the whole block.
 * Readers take a segment as runs of contiguous entries (adj_run_first /
 * adj_run_next): one run for a flat block, one per leaf for a tree.
 *
 * The block is refcounted like a property record: forking a slot chunk
 * shares the blocks, and creating or deleting a relationship under a held
 * view copies what the write touches of the two endpoint blocks, never
 * the graph's adjacency.
 *
 * Invariants:
 *   1. Segment keys are strictly increasing; no segment is empty.
 *   2. Flat: seg[i].end is the end offset of segment i's entries; segment
 *      i starts at seg[i-1].end (0 for i == 0); seg[nseg-1].end == len;
 *      a segment's ids are strictly increasing.
 *      Tree: each segment's count is its tree's entries; they sum to len.
 *   3. A block (or tree node) with refcount one may change in place; a
 *      shared one never.
 *
 * Writes are prepare-then-commit: adj_prepare_insert, adj_prepare_erase
 * and adj_reserve_segments are the only fallible steps (they make what
 * the edit touches private and big enough, keeping the block's content);
 * adj_insert, adj_erase and adj_append then cannot fail.
 *
 * Limits: entries are counted in 32 bits (a node's degree is bounded only
 * by the relationship ids); segments in 16 bits, so a node holds at most
 * ADJ_MAX_SEGMENTS (direction, type) pairs — whatever the number of
 * relationships in each.
 */
#ifndef STRATA_STORAGE_ADJACENCY_H
#define STRATA_STORAGE_ADJACENCY_H

#include <stdint.h>

#include "storage/mem.h"

enum { ADJ_OUT = 0, ADJ_IN = 1 };

#define ADJ_MAX_SEGMENTS 65535   /* (direction, type) pairs at one node */

/* A block holding more entries than this keeps its segments as trees.
   Test builds start at 8 entries, so the graph-level tests run on trees,
   and a test may move the threshold. */
#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
extern uint32_t adj_tree_min_for_tests;
#define ADJ_TREE_MIN adj_tree_min_for_tests
#else
#define ADJ_TREE_MIN 1024
#endif

typedef struct adj_block adj_block;

typedef struct adj_entry {
    uint32_t rel;
    uint32_t other;
} adj_entry;

/* One relationship's place in a block: its segment and id. */
typedef struct adj_edit {
    int dir;
    uint32_t type;
    uint32_t rel;
} adj_edit;

/* ---- reading ------------------------------------------------------------ */

uint32_t adj_len(const adj_block *b);
uint32_t adj_nsegments(const adj_block *b);
/* Segment i's direction and type; returns its number of entries. */
uint32_t adj_segment_info(const adj_block *b, uint32_t i, int *dir, uint32_t *type);
/* The index of the (dir, type) segment, or -1. */
int adj_find_segment(const adj_block *b, int dir, uint32_t type);
/* Whether the (dir, type) segment exists (it would not need a new one). */
int adj_has_segment(const adj_block *b, int dir, uint32_t type);

/* A stretch of a segment's entries: e[0, n).  n == 0 ends the segment. */
typedef struct adj_run {
    const adj_entry *e;
    uint32_t n;
    uint32_t next;   /* where the next run starts (a relationship id above
                        0), or ADJ_RUNS_DONE after the last: 16 bytes, so
                        a run is returned in registers */
} adj_run;

#define ADJ_RUNS_DONE 0u

/* The first run of segment i; then adj_run_next until a run is empty:
     for (adj_run r = adj_run_first(b, i); r.n; r = adj_run_next(b, i, r))
   A flat segment, or a tree of one leaf, is one run. */
adj_run adj_run_first(const adj_block *b, uint32_t i);
adj_run adj_run_next(const adj_block *b, uint32_t i, adj_run r);
/* The first run of the (dir, type) segment, its index in *seg; an empty
   run (and *seg = -1) when there is no such segment. */
adj_run adj_run_of(const adj_block *b, int dir, uint32_t type, int *seg);
/* Whether a run has one after it (adj_run_next would read it). */
static inline int adj_run_more(adj_run r) { return r.next != ADJ_RUNS_DONE; }

/* ---- writing ------------------------------------------------------------ */

/* Makes *bp private (creating it when NULL) with room for n inserts, each
   into a different segment (a self-loop: out and in).  -1 when out of
   memory, or when the segments would pass ADJ_MAX_SEGMENTS; *bp then
   holds the same entries. */
int adj_prepare_insert(mem_ctx *m, adj_block **bp, const adj_edit *ins, uint32_t n);
/* Inserts (rel, other), rel not there, into the (dir, type) segment after
   the prepare.  Undoing an erase needs no prepare on a flat block: the
   erase kept the room. */
void adj_insert(adj_block *b, int dir, uint32_t type, uint32_t rel, uint32_t other);

/* Makes *bp private, with what erasing del->rel touches; -1 when out of
   memory (*bp holds the same entries).  Several erases may be prepared
   before they are made. */
int adj_prepare_erase(mem_ctx *m, adj_block **bp, const adj_edit *del);
/* Removes rel from the (dir, type) segment after its prepare: 0, or -1
   when it is not there.  An emptied segment goes. */
int adj_erase(mem_ctx *m, adj_block *b, int dir, uint32_t type, uint32_t rel);

/* For a bulk build: makes *bp a private flat block with room for add more
   entries opening at most add_segments new segments. */
int adj_reserve_segments(mem_ctx *m, adj_block **bp, uint32_t add, uint32_t add_segments);
/* Appends (rel, other) after every entry of a flat block, in O(1): the
   (dir, type) key must be at least the last segment's key, and rel above
   the segment's ids.  Needs room. */
void adj_append(adj_block *b, int dir, uint32_t type, uint32_t rel, uint32_t other);
/* Ends a bulk build: a block past ADJ_TREE_MIN entries becomes trees.  -1
   when out of memory (*bp unchanged). */
int adj_bulk_done(mem_ctx *m, adj_block **bp);

void adj_retain(adj_block *b);
void adj_release(mem_ctx *m, adj_block **bp);
/* The block's own allocation (a tree block's directory, not its trees). */
size_t adj_size(const adj_block *b);
/* The bytes only b holds (0 when shared or NULL): a flat block, or a tree
   block's directory and the tree nodes no other block shares. */
size_t adj_private_bytes(const adj_block *b);
/* Whether the block keeps its segments as trees. */
int adj_is_tree(const adj_block *b);

#ifdef STRATA_TESTING
/* Checks invariants 1-2 (and the trees' own); 0 when sound. */
int adj_check(const adj_block *b);
#endif

#endif
