/*
 * journal — the undo log of the statement or transaction being written.
 *
 * Each direct write that runs inside a statement appends the entries that
 * undo it: cell-grained pre-images (the value a property held before, moved
 * out of the record, not copied), the label set a node had, the slot a
 * create took, the slot, properties and adjacency positions of something
 * deleted (moved into the entry, so undoing a delete allocates nothing),
 * and, for each index a statement touches, the index's level stack as it
 * was before (a shared reference: the statement then writes a private
 * level on top of it, and undoing the statement's index writes is putting
 * the saved stack back — O(1), no memory).  Rollback replays the entries
 * newest first (core/txn.c); since each entry restores the state right
 * before its write, the replay passes back through states that all
 * satisfied every constraint.
 *
 * The journal never holds a reference that would make a live structure
 * look shared: pre-images are values, records and blocks that the graph
 * no longer references.  (A journal that kept a handle on a live column
 * would force the first write to copy it — the seed project's 76-162x
 * trap.)
 *
 * Invariants:
 *   1. Entries are in write order; a savepoint is an entry count.
 *   2. Appending never allocates: journal_reserve() runs in the write's
 *      prepare phase, once, for everything the write will append (its
 *      journal_need), and journal_push() in its commit phase checks that
 *      room was reserved.
 */
#ifndef STRATA_JOURNAL_JOURNAL_H
#define STRATA_JOURNAL_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "index/index_set.h"
#include "storage/adjacency.h"
#include "storage/mem.h"
#include "storage/props.h"
#include "storage/value.h"

/* The kinds of undo entry, with what each carries. */
#define UNDO_KINDS(X)                                                                       \
    X(UNDO_NODE_CREATED)   /* id; pushed: the slot came from the end */                   \
    X(UNDO_NODE_DELETED)   /* id, labelset, props, adj: moved in */                       \
    X(UNDO_REL_CREATED)    /* id; pushed */                                               \
    X(UNDO_REL_DELETED)    /* id, start, end, type, props, which ends */             \
    X(UNDO_PROP)           /* on_rel, id, key, old (owned; null: absent) */               \
    X(UNDO_LABELS)         /* id, old labelset */                                         \
    X(UNDO_INDEX_STACK)    /* index id, the stack before (owned) */

typedef enum undo_kind {
#define UNDO_ENUM(k) k,
    UNDO_KINDS(UNDO_ENUM)
#undef UNDO_ENUM
} undo_kind;

#define UNDO_COUNT_KIND(k) +1
enum { UNDO_KIND_COUNT = 0 UNDO_KINDS(UNDO_COUNT_KIND) };
#undef UNDO_COUNT_KIND

extern const char *const undo_kind_names[];

/* What one write will append, by kind: at most of[k] entries of kind k.
   A write states it from what it is about to do ("one UNDO_PROP, one
   UNDO_INDEX_STACK per index it changes"), so no call site keeps a total
   by hand. */
typedef struct journal_need {
    uint32_t of[UNDO_KIND_COUNT];
} journal_need;

typedef struct undo_entry {
    uint8_t kind;
    bool flag;          /* NODE/REL_CREATED: pushed; PROP: on_rel */
    uint32_t key;       /* PROP: key; LABELS / NODE_DELETED: labelset; INDEX_STACK: index id */
    uint64_t id;
    union {
        value old;                      /* UNDO_PROP */
        level_stack *stack;             /* UNDO_INDEX_STACK */
        struct {
            prop_rec *props;
            adj_block *adj;
        } node;                         /* UNDO_NODE_DELETED */
        struct {
            prop_rec *props;
            uint32_t start, end, type;
            bool out_edited, in_edited;   /* false: that end's block went
                                             whole with its node */
        } rel;                          /* UNDO_REL_DELETED */
    } u;
} undo_entry;

typedef struct journal {
    undo_entry *e;
    uint32_t n, cap;
    uint32_t room_end;   /* the last reservation's end: n may grow to it */
} journal;

void journal_init(journal *j);
/* Room to append everything need lists without allocating.  -1 when out
   of memory or past the journal's 2^32 - 1 entries (nothing changed). */
int journal_reserve(journal *j, mem_ctx *m, const journal_need *need);
/* Appends (within the last reservation: cannot fail) and returns the
   entry.  Pushing past the reservation is a bug of the write that made
   it, caught by an assert even where the array has spare room. */
undo_entry *journal_push(journal *j, undo_kind kind);
/* Releases what the entries own from the end down to count (used when
   entries are no longer needed: commit, or after their undo). */
void journal_truncate(journal *j, mem_ctx *m, uint32_t count);
void journal_free(journal *j, mem_ctx *m);

#endif
