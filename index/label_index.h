/*
 * label_index — label -> nodes, as one bitmap per label over node ids.
 *
 * Node ids are dense slot indices, so a bitmap is the compact exact answer
 * (1M nodes: 122 KiB per label, against 4-8 bytes per member in a list).
 * Each bitmap is a persistent vector of 64-bit words (pvec.h): a label
 * change under a held view copies one leaf path of one bitmap; a fork
 * shares the table of bitmaps in O(1) and copies it (one pvec header per
 * label) only on the first label write after the fork.
 *
 * Invariants:
 *   1. Bit n of label l is set iff node n is live and carries l.
 *   2. count[l] is the number of bits set in bitmap l.
 *   3. A table with refcount one is private to one version; a shared table
 *      is immutable.
 *
 * Writes are prepare-then-commit: labelidx_prepare() owns the table and the
 * word of (label, node); labelidx_set() then cannot fail.
 */
#ifndef STRATA_INDEX_LABEL_INDEX_H
#define STRATA_INDEX_LABEL_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/mem.h"

typedef struct label_index label_index;

/* NULL is the empty index. */
void labelidx_retain(label_index *l);
void labelidx_release(mem_ctx *m, label_index **lp);
/* labelidx_release for a table that succ was written from: each bitmap is
   released into succ's bitmap of the same token (pvec_release_into). */
void labelidx_release_into(mem_ctx *m, label_index **lp, const label_index *succ);
/* Bytes only this table holds (itself and its bitmaps' unshared chunks,
   when unshared); 0 when shared or NULL. */
size_t labelidx_private_bytes(const label_index *l);

int labelidx_prepare(mem_ctx *m, label_index **lp, uint32_t label, uint64_t node);
void labelidx_set(mem_ctx *m, label_index *l, uint32_t label, uint64_t node, bool on);

/* Bulk build (a load): sets the bits of word (nodes word*64 .. word*64+63)
   of label's bitmap, so a builder that gathers a word's bits first pays
   one descent per word instead of two per node.  -1 when out of memory
   (the bits are unset; the bitmap may have grown by zero words). */
int labelidx_or_word(mem_ctx *m, label_index **lp, uint32_t label, uint64_t word, uint64_t bits);

bool labelidx_has(const label_index *l, uint32_t label, uint64_t node);
uint64_t labelidx_count(const label_index *l, uint32_t label);
/* The smallest node >= from carrying label, or UINT64_MAX. */
uint64_t labelidx_next(const label_index *l, uint32_t label, uint64_t from);
/* Labels with at least one node, as a bound on token ids. */
uint32_t labelidx_labels(const label_index *l);

#endif
