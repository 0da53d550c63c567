/*
 * index_set — the property indices of one version: their definitions and
 * their level stacks, plus how an index key is read off an entity.
 *
 * Every family (hash, range, unique, composite — on nodes by label or on
 * relationships by type) is one level stack of (key, entity id) entries;
 * the kinds differ in what they promise (unique refuses a second entity
 * under a key) and in what the planner may use them for, not in layout.
 * A composite index's key is the list of its property values.
 *
 * The set is refcounted like every other shared structure: a version that
 * is shared never changes its set; the writer takes a private copy
 * (idxset_own: O(indices), one stack reference each) before changing a
 * definition or replacing a stack.
 *
 * Invariants:
 *   1. Entity e is in index d under key k iff e is live, carries d's token,
 *      and has every key of d, with k built from those values.
 *   2. A unique index holds at most one entity per key (by value order: 1
 *      and 1.0 are the same key).
 *   3. Definition ids are never reused within a graph.
 */
#ifndef STRATA_INDEX_INDEX_SET_H
#define STRATA_INDEX_INDEX_SET_H

#include <stdbool.h>
#include <stdint.h>

#include "index/level_stack.h"
#include "storage/mem.h"
#include "storage/props.h"
#include "storage/value.h"

#define IDX_MAX_KEYS 8
#define IDX_NAME_MAX 64     /* bytes of a name, the NUL included */

typedef enum idx_kind { IDX_HASH = 0, IDX_RANGE, IDX_UNIQUE } idx_kind;

typedef struct index_def {
    uint32_t id;
    uint8_t kind;       /* idx_kind */
    bool on_rels;       /* token is a relationship type, not a label */
    uint8_t nkeys;
    uint32_t token;
    uint32_t keys[IDX_MAX_KEYS];
    char name[IDX_NAME_MAX];    /* unique in the set; "" asks idxset_add for one */
} index_def;

typedef struct index_set index_set;

/* NULL is the empty set. */
void idxset_retain(index_set *s);
void idxset_release(mem_ctx *m, index_set **sp);
/* Bytes only this set holds (itself and its stacks' private bytes, when
   unshared); 0 when shared or NULL. */
size_t idxset_private_bytes(const index_set *s);

uint32_t idxset_len(const index_set *s);
const index_def *idxset_def(const index_set *s, uint32_t pos);
const level_stack *idxset_stack(const index_set *s, uint32_t pos);
/* Position of the index with this id, or -1. */
int idxset_find(const index_set *s, uint32_t id);
/* Position of an index with the same kind, entity, token and keys, or -1. */
/* The position of the index named name, or -1. */
int idxset_find_name(const index_set *s, const char *name);
int idxset_find_same(const index_set *s, const index_def *d);
/* The id the next added index gets. */
uint32_t idxset_next_id(const index_set *s);

/* Makes *sp private (copying a shared set).  -1 when out of memory. */
int idxset_own(mem_ctx *m, index_set **sp);
/* The stack of a private set, for lstack_prepare. */
level_stack **idxset_stack_mut(index_set *s, uint32_t pos);
/* Which statement last saved the stack at pos (see core/index_maint.c). */
uint64_t *idxset_stmt_mut(index_set *s, uint32_t pos);
/* A private set with d added (d->id is assigned) holding stack ls, which it
   takes over.  -1 when out of memory (ls is released, *sp unchanged). */
int idxset_add(mem_ctx *m, index_set **sp, index_def *d, level_stack *ls);
/* Restoring a saved set (a load): like idxset_add but d keeps its id
   (the caller makes sure no index in the set has it); the next id becomes
   at least d->id + 1. */
int idxset_add_as(mem_ctx *m, index_set **sp, const index_def *d, level_stack *ls);
/* Sets the id the next added index gets (a load: ids are never reused,
   those of dropped indices included), creating an empty private set when
   *sp is NULL.  -1 when out of memory. */
int idxset_set_next_id(mem_ctx *m, index_set **sp, uint32_t next_id);
/* A private set without the index at pos.  -1 when out of memory. */
int idxset_remove(mem_ctx *m, index_set **sp, uint32_t pos);

/* The properties of an entity as a write will leave them: rec, with key
   set to val (or removed when val is NULL) when overridden. */
typedef struct props_view {
    const prop_rec *rec;
    bool overridden;
    uint32_t key;
    const value *val;
} props_view;

const value *props_view_get(const props_view *p, uint32_t key);

/* The index key of an entity with these properties: 1 and *out owned when
   every key of d is present (a single key is shared, a composite key is a
   new list in m), 0 when one is missing, -1 when out of memory. */
int idx_key(const index_def *d, mem_ctx *m, const props_view *p, value *out);
/* Whether d's level stack keeps hashes for point lookups: every
   single-key index.  A range index too, since Cypher's equality seeks
   (MATCH (n:L {k: e}), LOAD CSV's MATCH by id) go through it as much as
   through a hash index: a hash probe instead of a B+tree descent and a
   cursor (about 250 instructions against 1,750 a seek), for about 300 more
   an insert.  A composite key is a list, which the hash leaves to the
   tree. */
static inline bool idx_hashed(const index_def *d)
{
    return d->nkeys == 1;
}
/* Whether d covers key (UINT32_MAX: any key). */
bool idx_uses_key(const index_def *d, uint32_t key);

#endif
