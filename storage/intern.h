/*
 * intern — an append-only catalog of byte strings, each with a dense id.
 *
 * Label names, relationship types, property keys and label sets are all
 * interned: the graph stores 4-byte ids, never names.  A catalog is shared
 * by every version of a graph; it only grows, so an id a view has seen
 * keeps its meaning forever, and no version needs a copy.
 *
 * Concurrency: intern_name() (id -> bytes) is lock-free: entries live in
 * segments that never move, and the published count is read with acquire.
 * intern_find() and intern_add() take the catalog's mutex (the name -> id
 * table is a uthash table; catalogs are consulted when a query is planned
 * or a name is resolved, not per row).
 *
 * Invariants:
 *   1. ids are 0 .. count-1, in order of first interning; never reused.
 *   2. An entry's bytes never change and never move once published.
 */
#ifndef STRATA_STORAGE_INTERN_H
#define STRATA_STORAGE_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "storage/mem.h"

typedef struct interner interner;

interner *intern_new(mem_ctx *m);
void intern_free(interner **t);

/* The id of bytes[0..len), adding it if absent.  -1 when out of memory or
   when the catalog is full (UINT32_MAX - 1 entries). */
int intern_add(interner *t, const void *bytes, size_t len, uint32_t *id);
/* The id of bytes, or -1 when absent. */
int intern_find(interner *t, const void *bytes, size_t len, uint32_t *id);
/* Borrowed bytes of id (NUL-terminated) and length; NULL when id >= count. */
const char *intern_name(const interner *t, uint32_t id, size_t *len);
uint32_t intern_count(const interner *t);

#endif
