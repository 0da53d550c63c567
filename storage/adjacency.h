/*
 * adjacency — the relationships at one node, grouped by direction and type.
 *
 * Each node slot points at an adj_block: a directory of segments, one per
 * (direction, relationship type) present at the node, sorted by that key,
 * and the entries (relationship id, node at the other end) of every
 * segment laid end to end.  Expanding a node's neighbours of one type reads
 * one segment and never touches the others.
 *
 * The block is refcounted like a property record: forking a slot chunk
 * shares the blocks, and creating or deleting a relationship under a held
 * view copies the two endpoint blocks (O(degree)), never the graph's
 * adjacency.
 *
 * Invariants:
 *   1. Segment keys are strictly increasing; no segment is empty.
 *   2. seg[i].end is the end offset of segment i's entries; segment i
 *      starts at seg[i-1].end (0 for i == 0); seg[nseg-1].end == len.
 *   3. A block with refcount one may change in place; a shared one never.
 *
 * Writes are prepare-then-commit: adj_reserve() is the only fallible step
 * (it makes the block private and big enough); adj_insert() and
 * adj_erase() then cannot fail.
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

typedef struct adj_block adj_block;

typedef struct adj_entry {
    uint32_t rel;
    uint32_t other;
} adj_entry;

/* Makes *bp private (creating it when NULL) with room for add more entries
   in as many new segments.  -1 when out of memory, or when the segments
   would pass ADJ_MAX_SEGMENTS; *bp is then unchanged in content. */
int adj_reserve(mem_ctx *m, adj_block **bp, uint32_t add);
/* As adj_reserve, for add more entries that open at most add_segments new
   segments (a bulk build knows how many distinct keys it brings). */
int adj_reserve_segments(mem_ctx *m, adj_block **bp, uint32_t add, uint32_t add_segments);
/* Appends (rel, other) to the (dir, type) segment.  Needs a prior
   adj_reserve with room. */
void adj_insert(adj_block *b, int dir, uint32_t type, uint32_t rel, uint32_t other);
/* Inserts (rel, other) at position pos of the (dir, type) segment (the
   undo of an erase).  Needs room, as adj_insert. */
void adj_insert_at(adj_block *b, int dir, uint32_t type, uint32_t pos, uint32_t rel,
                   uint32_t other);
/* Removes rel from the (dir, type) segment, keeping the block's room;
   returns its position in the segment, or -1 when it is not there.  Needs
   a private block (adj_reserve(m, bp, 0)). */
int adj_erase(adj_block *b, int dir, uint32_t type, uint32_t rel);
/* Appends (rel, other) after every entry, in O(1): the (dir, type) key must
   be at least the block's last segment key.  For a bulk build in key
   order; needs room, as adj_insert. */
void adj_append(adj_block *b, int dir, uint32_t type, uint32_t rel, uint32_t other);
/* Whether the (dir, type) segment exists (it would not need a new one). */
int adj_has_segment(const adj_block *b, int dir, uint32_t type);

uint32_t adj_len(const adj_block *b);
uint32_t adj_nsegments(const adj_block *b);
/* Segment i: its direction, type and entries. */
const adj_entry *adj_segment_at(const adj_block *b, uint32_t i, int *dir, uint32_t *type,
                                uint32_t *n);
/* The entries of the (dir, type) segment, or NULL (and *n = 0). */
const adj_entry *adj_segment(const adj_block *b, int dir, uint32_t type, uint32_t *n);

void adj_retain(adj_block *b);
void adj_release(mem_ctx *m, adj_block **bp);
size_t adj_size(const adj_block *b);

#ifdef STRATA_TESTING
/* Checks invariants 1-2; 0 when sound. */
int adj_check(const adj_block *b);
#endif

#endif
