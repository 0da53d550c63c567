/*
 * join_exec — the state of a running join, shared by the files that run
 * one: op_join.c (the walk over the plan's steps) and op_hash_join.c (a
 * hash join inside that walk).  Nothing else includes it.
 */
#ifndef STRATA_QUERY_JOIN_EXEC_H
#define STRATA_QUERY_JOIN_EXEC_H

#include "query/join.h"
#include "query/walk_stack.h"

typedef struct memo {
    id_index at;                /* node -> index into vals */
    uint64_t *vals;
    size_t n, cap;
} memo;

/* A bound end's relationships along a closing edge, sorted by the other
   end, kept while that end stays bound to one node (close_edges). */
typedef struct probe_set {
    bool held, built;
    uint64_t node;              /* the node the end holds */
    uint64_t spent;             /* entries read probing it from the other side */
    uint64_t (*v)[2];           /* (other end, relationship), by other end */
    size_t n, cap;
} probe_set;

/* A hash join's table (op_hash_join.c): each key's matches lie together
   in store, nvert node ids then nedge relationship ids a match; slots
   (a power of two of them, open addressing) map a key to where its
   matches start and how many there are. */
typedef struct hash_slot {
    uint64_t k0, k1;            /* k0 the first key's node + 1; 0: empty */
    uint64_t at, n;             /* matches at store.v[at], n of them */
} hash_slot;

typedef struct hash_state {
    bool building;              /* the block's steps record, not go on */
    u64_stack store;
    hash_slot *slots;
    size_t cap, nkeys;
    /* PROFILE: rows that probed, keys built (the block expanded once
       each), probes that found their key built, matches stored */
    uint64_t probes, builds, hits, stored;
} hash_state;

/* How the walk runs a core step: as its kind, or as a hash join's
   first or end step (op_hash_join.c). */
enum { JOP_BOUND = JSTEP_BOUND, JOP_SCAN = JSTEP_SCAN, JOP_EXPAND = JSTEP_EXPAND, JOP_HASH };

typedef struct join_state {
    join_plan *p;
    scope sc;
    stage *s;
    size_t in_width, width;
    value *row;
    uint64_t vid[JOIN_MAX_VERTICES];
    uint64_t used[JOIN_MAX_EDGES];
    uint32_t used_group[JOIN_MAX_EDGES];
    size_t nused;
    size_t used_base;           /* uniqueness is checked from here on (a
                                   hash join's build sees only its own) */
    memo memos[JOIN_MAX_VERTICES];   /* per counted step */
    uint64_t *ends;             /* a pair's leaf's nodes (pair_ways) */
    size_t cap_ends;
    probe_set probes[JOIN_MAX_EDGES];   /* per closing edge (close_edges) */
    hash_state hash;
    uint8_t op[JOIN_MAX_VERTICES];  /* per core step: a JOP_ */
    size_t prof_step;           /* the clause's PROFILE row, or SIZE_MAX */
    /* the input row in progress: the first step's candidates */
    bool row_open;
    strata_node_iter *it;
    bool single;
    uint64_t single_id;
    uint64_t pending;           /* sum_only: the matches of the input row so far */
} join_state;

static inline void join_bind_slot(join_state *js, long slot, value v)
{
    if (slot >= 0)
        js->row[slot] = v;
}

/* op_join.c: binds step k onwards (k == ncore: the row is complete);
   join_run_kind runs step k as `kind` whatever its op. */
int join_run_step(exec *x, join_state *js, size_t k);
int join_run_kind(exec *x, join_state *js, size_t k, jstep_kind kind);

/* op_hash_join.c.  hash_join_step runs a JOP_HASH step: at the block's
   first, the row's key looked up (its matches built first when new),
   each match bound in turn and the walk gone on past the block; at its
   end, the step itself, or while building the match recorded.
   hash_join_record takes a match of the block while building (the walk
   calls it at the core's end, and hash_join_step at the block's).  hash_join_reset empties
   the table (a new input row the block depends on); hash_join_free
   frees it; hash_join_profile adds the counts to the clause's PROFILE
   row; hash_join_add_counts adds a worker's counts to the stage's. */
int hash_join_step(exec *x, join_state *js, size_t k);
int hash_join_record(exec *x, join_state *js);
void hash_join_reset(join_state *js);
void hash_join_free(exec *x, join_state *js);
void hash_join_profile(exec *x, const join_state *js);
void hash_join_add_counts(join_state *to, const join_state *from);

#endif
