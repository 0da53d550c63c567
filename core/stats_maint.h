/*
 * stats_maint — keeping a version's relationship statistics
 * (storage/rel_stats.h) in step with its writes, and recomputing them.
 *
 * A relationship counts under every label of its start (outgoing) and of
 * its end (incoming), by the label sets those nodes carry while it lives.
 * So each write changes the counts by what it changes of that:
 *   - a relationship create or delete: +1 or -1 for each label of each end;
 *   - a label added to or removed from a node: the node's relationships
 *     move into or out of that label's counts, one (type, direction)
 *     segment of its adjacency at a time — O(its segments), not its
 *     degree;
 *   - node create and delete move nothing: a created node has no
 *     relationships, and a detach-delete deletes them (above) before the
 *     node goes.
 * Undoing a write (core/txn.c) applies the opposite change to the state
 * the write left, which is the same state, so it touches the same
 * elements the write made private: rolling back in place cannot fail.
 *
 * Each change is prepare-then-commit like the write it belongs to: the
 * *_prepare calls own every element the change will touch (fallible,
 * nothing observable), the others then cannot fail.
 */
#ifndef STRATA_CORE_STATS_MAINT_H
#define STRATA_CORE_STATS_MAINT_H

#include "core/version.h"

/* A relationship of type between nodes of label sets start_ls and end_ls
   counted in (sign +1) or out (-1). */
int stats_rel_prepare(const catalog *c, rel_stats *s, uint32_t start_ls, uint32_t end_ls,
                      uint32_t type);
void stats_rel_count(const catalog *c, rel_stats *s, uint32_t start_ls, uint32_t end_ls,
                     uint32_t type, int sign);

/* Label moved onto (sign +1) or off (-1) a node whose adjacency is adj. */
int stats_label_prepare(rel_stats *s, mem_ctx *m, uint32_t label, const adj_block *adj);
void stats_label_move(rel_stats *s, mem_ctx *m, uint32_t label, const adj_block *adj, int sign);

/* n[ADJ_OUT] relationships of type starting and n[ADJ_IN] ending at
   nodes of label set ls, counted in under each of its labels: prepare and
   count in one, for a build whose failure drops the version it wrote (a
   load, a bulk import).  -1 when out of memory (some labels counted). */
int stats_ends_add(const catalog *c, rel_stats *s, mem_ctx *m, uint32_t ls, uint32_t type,
                   const uint64_t n[2]);

/* The statistics of st computed from scratch into *out (empty on entry,
   built with m): one pass over the nodes' segment directories, O(nodes +
   segments), plus the labels of each (label set, type) pair written out.
   -1 when out of memory (*out released). */
int stats_compute(const catalog *c, const store *st, mem_ctx *m, rel_stats *out);

#endif
