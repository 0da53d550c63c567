/*
 * props — the property map of one node or relationship.
 *
 * A prop_rec is a small sorted array of (key token, value), refcounted.  A
 * slot points at its record; forking a slot chunk shares the records, and
 * changing one property of one entity copies that entity's record only —
 * never a column, never a type's worth of records.
 *
 * Invariants:
 *   1. Keys are strictly increasing; no value is null (absence is null).
 *   2. A record with refcount one belongs to one slot of one version and may
 *      be changed in place; a shared record is immutable.
 *   3. A map with no properties is the NULL record or an empty one (a
 *      remove keeps the record's room, so undoing it cannot need memory).
 *
 * Writes are prepare-then-commit: props_set() and props_remove() do their
 * only fallible step (making the record private and big enough) before they
 * change anything, so a failure leaves the map as it was.
 */
#ifndef STRATA_STORAGE_PROPS_H
#define STRATA_STORAGE_PROPS_H

#include <stdatomic.h>
#include <stdint.h>

#include "storage/mem.h"
#include "storage/value.h"

typedef struct prop_rec prop_rec;

#define PROPS_MAX 65535   /* properties one entity can hold */

uint32_t props_len(const prop_rec *r);
uint32_t props_key_at(const prop_rec *r, uint32_t i);
const value *props_val_at(const prop_rec *r, uint32_t i);
/* Borrowed value under key, or NULL when absent. */
const value *props_get(const prop_rec *r, uint32_t key);

/* Sets key to val (consumed, never null).  When old is not NULL it
   receives the previous value (owned; null when the key was absent),
   otherwise the previous value is released.  -1 when out of memory: val is
   released and the map is unchanged. */
int props_set(mem_ctx *m, prop_rec **rp, uint32_t key, value val, value *old);
/* Removes key (absent is fine).  Same contract for old.  -1 when out of
   memory (a shared record could not be copied): the map is unchanged. */
int props_remove(mem_ctx *m, prop_rec **rp, uint32_t key, value *old);

/* A new empty record with room for cap (<= PROPS_MAX) entries, so a bulk
   build (a load) sets them without growing it.  NULL when out of memory. */
prop_rec *props_new(mem_ctx *m, uint32_t cap);

/* Appends (key, val) (consumed) to a record props_new made, in O(1): key
   above every key it holds, and room left — what a bulk build in key
   order has checked already. */
void props_append(prop_rec *r, uint32_t key, value val);

/* A record begins with its reference count (props.c), so that taking and
   dropping a reference inline where slot leaves are copied and freed
   (sixteen of each for a write under a held view, storage/pvec.h) costs
   no call; the last release frees it out of line. */
void props_free_last(mem_ctx *m, prop_rec *r);

static inline void props_retain(prop_rec *r)
{
    if (r)
        atomic_fetch_add_explicit((atomic_uint *)(void *)r, 1, memory_order_relaxed);
}

static inline void props_release(mem_ctx *m, prop_rec **rp)
{
    prop_rec *r = *rp;
    *rp = NULL;
    if (r && atomic_fetch_sub_explicit((atomic_uint *)(void *)r, 1, memory_order_acq_rel) == 1)
        props_free_last(m, r);
}
/* Bytes of the record itself (values' heap parts not included). */
size_t props_size(const prop_rec *r);
/* props_size and the values' private heap bytes when nothing else shares
   r; 0 when r is shared or NULL. */
size_t props_private_bytes(const prop_rec *r);

#endif
