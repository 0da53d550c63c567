/*
 * intern — an append-only catalog of byte strings, each with a dense id.
 *
 * Label names, relationship types, property keys and label sets are all
 * interned: the graph stores 4-byte ids, never names.  A catalog is shared
 * by every version of a graph; it only grows, so an id a view has seen
 * keeps its meaning forever, and no version needs a copy.
 *
 * Concurrency: readers take no lock.  intern_find() (name -> id) probes an
 * open-addressing table of ids, intern_name() (id -> bytes) reads entries
 * from segments that never move; both are safe on any thread while another
 * adds.  intern_add() takes the catalog's mutex (one writer at a time).
 * A property read by name resolves its key on every row, from every thread
 * reading a view, so the lookup must not serialise them.
 *
 * Invariants:
 *   1. ids are 0 .. count-1, in order of first interning; never reused.
 *   2. An entry's bytes never change and never move once published.
 *   3. A table slot goes once from empty (0) to id + 1 and never changes
 *      again; a table only gains slots this way.  Growing builds a new,
 *      larger table and publishes it; the old one stays allocated (readers
 *      may still probe it) until intern_free.
 *   4. intern_add publishes in this order, each store a release that the
 *      readers' acquire loads pair with: the entry (intern_name sees it),
 *      its table slot (intern_find finds it), the count.  So an id that
 *      intern_find returns has a name, and every id below intern_count()
 *      is found by its name.  A lookup racing an add may miss that name.
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
/* Borrowed bytes of id (NUL-terminated) and length; NULL when id has no
   entry (id >= count, or the entry an add is publishing). */
const char *intern_name(const interner *t, uint32_t id, size_t *len);
uint32_t intern_count(const interner *t);

#ifdef STRATA_TESTING
/* Runs fn(arg) while holding the mutex intern_add takes: a test shows that
   readers do not wait for a writer. */
void intern_hold_writer_lock(interner *t, void (*fn)(void *), void *arg);
#endif

#endif
