/*
 * store — the graph-sized state of one version: node and relationship
 * slots, their property maps and the adjacency of every node.
 *
 * Three persistent vectors (pvec.h) hold it, split by what a write touches
 * so that a write under a held view copies only the leaf it needs:
 *
 *   node_meta   node_meta per node: label set id, free-list link and the
 *               node's property record (prop_rec *)
 *   node_adj    node_adj per node: adj_block * and its entry counts
 *   rel_meta    rel_meta per relationship: start, end, type, free-list
 *               link and the property record
 *
 * A SET copies one node_meta leaf path and one property record; a
 * relationship create copies a rel_meta path and the two endpoint
 * adjacency blocks; nothing copies a column or the whole adjacency.  The
 * property record sits beside the label set and link (not in a vector of
 * its own) because every write that changes properties first reads the
 * slot: one descent per write instead of two, one path copied under a
 * held view instead of two for a create or delete (docs/BENCHMARKS.md, W1).
 *
 * Slot ids are indices.  Deleted slots form a LIFO free list threaded
 * through the meta link field, so the most recently freed id is reused
 * first — when the caller allows reuse at all: a statement that has
 * deleted takes new ids at the end instead (core/write.c says why), which
 * leaves the free list as it was for its undo.
 *
 * Invariants:
 *   1. A slot is live iff its link is SLOT_LIVE; live counts match.
 *   2. A free slot has no properties, no adjacency and label set 0.
 *   3. The free list visits every free slot exactly once.
 *   4. node_meta and node_adj have the same length.
 *   5. A live node's adjacency counts are its block's entries per
 *      direction; a free slot's are zero.
 *
 * Writes are prepare-then-commit: the *_mut() and *_own() calls are the
 * fallible steps and change nothing observable; once a caller has owned
 * every slot it will touch, the changes themselves cannot fail.  *_alloc()
 * is fallible and atomic, and goes last.
 */
#ifndef STRATA_STORAGE_STORE_H
#define STRATA_STORAGE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/adjacency.h"
#include "storage/mem.h"
#include "storage/props.h"
#include "storage/pvec.h"

#define SLOT_LIVE UINT32_MAX
#define SLOT_END (UINT32_MAX - 1)    /* end of a free list */
#define SLOT_MAX_ID (UINT32_MAX - 2) /* ids are below this */

typedef struct node_meta {
    uint32_t labelset;   /* interned label set; 0 is the empty set */
    uint32_t link;       /* SLOT_LIVE, or the next free slot */
    prop_rec *props;     /* the property map (NULL: none); store_node_props */
} node_meta;

typedef struct rel_meta {
    uint32_t start;
    uint32_t end;
    uint32_t type;
    uint32_t link;
    prop_rec *props;     /* the property map (NULL: none); store_rel_props */
} rel_meta;

/* A node's adjacency element: its block and how many entries each
   direction holds (a self-loop is one of each).  The counts sit beside the
   pointer so a pass over every node's degree reads the slot vector in
   order and never touches a block — the blocks lie wherever the allocator
   put them, and reading 1M block headers costs a cache and TLB miss each.
   Every edit of a block goes through store_adj_insert/store_adj_erase,
   which keep the counts (invariant 5). */
typedef struct node_adj {
    adj_block *block;
    uint32_t out, in;
} node_adj;

typedef struct store {
    pvec node_meta, node_adj;
    pvec rel_meta;
    uint32_t node_free, rel_free;   /* free-list heads, or SLOT_END */
    uint64_t node_live, rel_live;
} store;

void store_init(store *s);
/* dst becomes a second owner of everything src holds: O(1). */
void store_share(const store *src, store *dst);
void store_release(store *s, mem_ctx *m);
/* store_release for a store that succ was written from: its copies take
   over what only they still hold (pvec_release_into). */
void store_release_into(store *s, const store *succ, mem_ctx *m);
/* Bytes only this store holds: unshared chunks and the unshared records
   and blocks they point to.  O(those bytes). */
size_t store_private_bytes(const store *s);

/* Slot ids, ascending and each once. */
typedef struct id_list {
    uint64_t *ids;
    size_t n, cap;
} id_list;
void id_list_free(id_list *l, mem_ctx *m);
/* The node (relationship) slots whose meta or properties differ between a
   and b, two stores sharing structure, into *out (empty on entry; the
   array comes from m): O(differing leaves), since the walk skips every
   chunk the two share.  -1 when out of memory (*out freed). */
int store_diff_nodes(const store *a, const store *b, mem_ctx *m, id_list *out);
int store_diff_rels(const store *a, const store *b, mem_ctx *m, id_list *out);

/* Reads: NULL / false for ids that are out of range or not live. */
const node_meta *store_node(const store *s, uint64_t id);
/* Slots id .. id + *n - 1, live or free, contiguous (a leaf at a time;
   storage/pvec.h pvec_get_run); id below store_node_slots. */
const node_meta *store_node_meta_run(const store *s, uint64_t id, uint64_t *n);
const rel_meta *store_rel(const store *s, uint64_t id);
const prop_rec *store_node_props(const store *s, uint64_t id);
const prop_rec *store_rel_props(const store *s, uint64_t id);
const adj_block *store_node_adj(const store *s, uint64_t id);
/* The whole element: the block and the counts per direction. */
const node_adj *store_node_adj_slot(const store *s, uint64_t id);
/* The same for id and the *n - 1 slots after it, contiguous (a leaf of
   the vector at a time; storage/pvec.h pvec_get_run). */
const node_adj *store_node_adj_run(const store *s, uint64_t id, uint64_t *n);
static inline uint64_t store_node_slots(const store *s) { return s->node_meta.len; }
static inline uint64_t store_rel_slots(const store *s) { return s->rel_meta.len; }

/* Writable parts of a live slot, copying shared chunks on their paths;
   NULL when out of memory.  Once one of these has succeeded for an id,
   calling it again for that id before anything else is shared cannot
   fail. */
node_meta *store_node_meta_mut(store *s, mem_ctx *m, uint64_t id);
prop_rec **store_node_props_mut(store *s, mem_ctx *m, uint64_t id);
node_adj *store_node_adj_mut(store *s, mem_ctx *m, uint64_t id);
/* adj_insert / adj_erase on a node's block, keeping its counts; the edit
   must have been prepared on &a->block (storage/adjacency.h). */
void store_adj_insert(node_adj *a, int dir, uint32_t type, uint32_t rel, uint32_t other);
int store_adj_erase(mem_ctx *m, node_adj *a, int dir, uint32_t type, uint32_t rel);
/* Writable adjacency slots of live nodes at increasing ids, one descent
   per leaf rather than one per node (pvec_seq): for a bulk edit of many
   nodes' blocks in id order (core/bulk.c).  Nothing else may write or
   share the store while one is in use; it holds no memory of its own. */
typedef struct store_adj_cursor {
    pvec_seq seq;
} store_adj_cursor;
void store_adj_cursor_init(store_adj_cursor *c, store *s, mem_ctx *m);
/* NULL when out of memory. */
node_adj *store_adj_cursor_mut(store_adj_cursor *c, uint64_t id);

/* Replaces a's block by b (moved in; the old one released) and counts
   b's entries per direction: for a bulk edit that built the block anew
   (core/bulk.c).  Cannot fail. */
void store_adj_replace(mem_ctx *m, node_adj *a, adj_block *b);
rel_meta *store_rel_meta_mut(store *s, mem_ctx *m, uint64_t id);
prop_rec **store_rel_props_mut(store *s, mem_ctx *m, uint64_t id);

/* The free-list link of slot id: SLOT_LIVE for a live slot, else the next
   free slot or SLOT_END; SLOT_END too for an id out of range.  A save
   walks the free list with it so ids and reuse order round-trip. */
uint32_t store_node_link(const store *s, uint64_t id);
uint32_t store_rel_link(const store *s, uint64_t id);

/* The id the next create will return: the free list's head when reuse is
   allowed and the list is not empty, else the next id at the end. */
uint64_t store_next_node_id(const store *s, bool reuse);
uint64_t store_next_rel_id(const store *s, bool reuse);

/* Takes the slot store_next_*_id() named (with the same reuse), marks it
   live and returns its id; -1 when out of memory or out of ids, with
   nothing changed.  Callers make this their last fallible step. */
int store_node_alloc(store *s, mem_ctx *m, uint32_t labelset, bool reuse, uint64_t *id);
int store_rel_alloc(store *s, mem_ctx *m, uint32_t start, uint32_t end, uint32_t type,
                    bool reuse, uint64_t *id);

/* Own a live slot's meta and properties (and for nodes adjacency) so that
   a later free cannot fail. */
int store_node_own(store *s, mem_ctx *m, uint64_t id);
int store_rel_own(store *s, mem_ctx *m, uint64_t id);
/* Frees an owned live slot and pushes it on the free list.  Its properties
   (and adjacency) move to *props (*adj) when those are not NULL, else they
   are released. */
void store_node_free(store *s, mem_ctx *m, uint64_t id, prop_rec **props, adj_block **adj);
void store_rel_free(store *s, mem_ctx *m, uint64_t id, prop_rec **props);

/* Undo of a free: id must head the free list; it becomes live again with
   these contents (moved in; meta's own props field is not read, props is
   the record).  -1 when out of memory (nothing changed). */
int store_node_restore(store *s, mem_ctx *m, uint64_t id, uint32_t labelset, prop_rec *props,
                       adj_block *adj);
int store_rel_restore(store *s, mem_ctx *m, uint64_t id, const rel_meta *meta,
                      prop_rec *props);
/* Undo of an alloc: a live slot with no properties or adjacency goes back
   where it came from — off the end when the alloc pushed it, else onto the
   free list — so the next alloc returns it again.  -1 when out of memory
   (nothing changed). */
int store_node_unalloc(store *s, mem_ctx *m, uint64_t id, bool pushed);
int store_rel_unalloc(store *s, mem_ctx *m, uint64_t id, bool pushed);

/* Bulk build (a load): slots appended in id order through sequential
   writers (pvec_seq), one descent per leaf rather than one per slot and
   vector.  The store must not be shared while a builder is in use, and its
   free lists must be empty.  A builder holds no memory of its own: it is
   dropped, not freed. */
typedef struct store_builder {
    store *s;
    pvec_seq node_meta, node_adj, rel_meta;
} store_builder;

void store_builder_init(store_builder *b, store *s, mem_ctx *m);
/* Appends a live node with this label set and property record (moved in
   on success; NULL is none); its adjacency starts empty.  -1 when out of
   memory or ids: nothing changed, props still the caller's. */
int store_append_node(store_builder *b, uint32_t labelset, prop_rec *props, uint64_t *id);
/* The same for a relationship; its endpoints are not linked (the caller
   builds adjacency in bulk, store_set_adj). */
int store_append_rel(store_builder *b, uint32_t start, uint32_t end, uint32_t type,
                     prop_rec *props, uint64_t *id);
/* Sets node id's adjacency to adj (moved in), holding out entries in
   direction ADJ_OUT and in in ADJ_IN (invariant 5: the builder counted
   them, so the block's directory is not read again), for ids in
   increasing order over one builder; the slot must hold none.  -1 when
   out of memory (nothing changed, adj still the caller's). */
int store_set_adj(store_builder *b, uint64_t id, adj_block *adj, uint32_t out, uint32_t in);
/* The entries of b in direction dir (ADJ_OUT or ADJ_IN). */
uint32_t store_adj_count(const adj_block *b, int dir);

#ifdef STRATA_TESTING
/* Invariants 1-4 and every vector's own check; 0 when sound. */
int store_check(const store *s);
#endif

#endif
