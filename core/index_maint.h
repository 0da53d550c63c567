/*
 * index_maint — keeping every property index in step with a write.
 *
 * A write describes the entity before and after (its tokens — labels or
 * relationship type — and its properties as they will be) and gets a plan:
 * for each index the write touches, the key to remove and the key to add.
 * The plan is built, checked against unique constraints and prepared
 * (every fallible step) before the write changes anything; committing it
 * cannot fail.  That keeps each direct write atomic.
 */
#ifndef STRATA_CORE_INDEX_MAINT_H
#define STRATA_CORE_INDEX_MAINT_H

#include "core/graph_impl.h"

typedef struct entity_state {
    bool on_rels;
    const uint32_t *tokens;
    size_t ntokens;
    props_view props;
} entity_state;

typedef struct idx_change {
    uint64_t id;          /* the entity */
    uint32_t pos;         /* index position in the version's set */
    value old_key, new_key;
    bool has_old, has_new;
} idx_change;

/* Changes a plan holds without allocating: a write touches a few indices. */
#define IDXPLAN_LOCAL 8

typedef struct idx_plan {
    idx_change *c;        /* local, or an allocation past IDXPLAN_LOCAL */
    uint32_t n, cap;
    idx_change local[IDXPLAN_LOCAL];
} idx_plan;

/* An empty plan, its local room left unwritten (every write starts one,
   most never fill it). */
static inline void idxplan_init(idx_plan *p)
{
    p->c = NULL;
    p->n = p->cap = 0;
}

/* Adds to p the index changes for entity id going from before to after
   (either may be NULL: created or deleted).  changed_key is the one
   property the write changes (UINT32_MAX: none, only tokens or existence
   change).  STRATA_ENOMEM (p freed) or OK.  Start from idxplan_init; a plan is
   not to be copied (c may point into it). */
strata_status idxplan_build(strata_graph *g, version *v, uint64_t id, const entity_state *before,
                            const entity_state *after, uint32_t changed_key, idx_plan *p);
/* STRATA_ECONSTRAINT (with a message naming index and holder) when a
   unique index already holds another entity under a new key. */
strata_status idxplan_check(strata_graph *g, version *v, const idx_plan *p);
/* Owns the set and prepares every touched stack.  STRATA_ENOMEM or OK.
   In a statement the caller has reserved journal room for an
   UNDO_INDEX_STACK per change (txn_journal_reserve). */
strata_status idxplan_prepare(strata_graph *g, version *v, const idx_plan *p);
void idxplan_commit(strata_graph *g, version *v, const idx_plan *p);
void idxplan_free(idx_plan *p);

/* The entities index d covers in v, in id order: the first >= from, or
   UINT64_MAX. */
uint64_t idx_next_member(const version *v, const index_def *d, uint64_t from);
/* Entity id's key in index d as v stores it: idx_key's contract. */
int idx_entity_key(const version *v, const index_def *d, mem_ctx *m, uint64_t id, value *out);

/* Builds the level stack of index d over what v holds (*out new); a unique
   index over a duplicate is STRATA_ECONSTRAINT naming the two entities.
   The message is on g. */
strata_status index_build(strata_graph *g, version *v, const index_def *d, level_stack **out);

/* A node's labels as an entity state (buf holds the tokens). */
void node_state(const catalog *c, uint32_t labelset, const prop_rec *props, uint32_t *buf,
                entity_state *out);

#endif
