/*
 * pvec — a persistent vector: fixed-size elements in a radix tree of
 * refcounted chunks.
 *
 * This is how every graph-sized array in strata (node slots, relationship
 * slots, label bitmaps) is forked in O(1) and written in O(changes).  A pvec
 * value is three words (root, height, length) embedded in a version header;
 * pvec_share() copies it and takes a reference on the root.  The first write
 * under a share copies the path from the root to one leaf — at most
 * height + 1 chunks of PVEC_FANOUT entries — and every later write to the
 * same leaf is in place.
 *
 * Invariants:
 *   1. A chunk whose refcount is one is reachable from exactly one pvec and
 *      may be written in place by that pvec's owner; a chunk whose refcount
 *      is above one is immutable.  pvec_get_mut() is the only way to get a
 *      writable element, and it copies every shared chunk on the path.
 *   2. Leaves hold PVEC_FANOUT elements of ops->elem_size bytes; elements at
 *      or beyond len are zero bytes.  A missing chunk (a NULL kid or root)
 *      is a hole: it reads as zero elements and is created on first write,
 *      so a vector that is mostly zero (properties of a graph that has
 *      none) costs no leaves.
 *   3. Owning an element calls ops->retain on it (so elements may own
 *      refcounted objects; see 5); freeing a leaf calls ops->release on
 *      each element it owns.
 *   4. Refcounts are atomic: a reader on another thread may drop the last
 *      reference to a chunk the writer no longer uses.  A writer that sees a
 *      refcount of one (acquire) owns the chunk.
 *   5. A copy borrows: copying a shared chunk takes one reference, on the
 *      original (its lender), and none on the original's kids or
 *      elements.  A chunk holds references only for the slots it owns (a
 *      bit each); a write owns a slot before changing it (a borrowed
 *      kid is copied, a borrowed element retained), and a chunk without a
 *      lender owns them all.  Readers see the same pointers either way.
 *   6. A borrowed slot holds what the lender's does, which the lender owns
 *      or borrows in turn.  When a copy is its lender's only holder it
 *      takes the lender over: the slots it borrowed become its own, the
 *      lender's references on the slots the copy replaced are dropped,
 *      and the lender is freed.  The fold-back does that as it releases a
 *      base (pvec_release_into); a lender freed up by a reader or another
 *      graph is taken over by the next write through its copy.
 *
 * Fold-back costs what was copied: once every view that shared a chunk is
 * released, the copies take their originals over (invariant 6) and
 * writes go back to being in place.
 */
#ifndef STRATA_STORAGE_PVEC_H
#define STRATA_STORAGE_PVEC_H

#include <stdint.h>

#include "storage/mem.h"

#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
/* 4: small chunks in test builds so paths are deep and every split, grow
   and copy path runs on small graphs. */
#define PVEC_BITS 2
#else
/* 16 entries.  Chosen when each copied chunk took a count per entry
   (before copies borrowed, invariant 5): on 1M nodes (bench/fork_cost,
   held view + SET) fanout 64 spent ~75% of the write in those counts and
   16 cut them ~3x for one more level; a copy's cost is now its memcpy,
   and 16 keeps reads at five levels for 1M elements. */
#define PVEC_BITS 4
#endif
#define PVEC_FANOUT (1u << PVEC_BITS)
#define PVEC_MAX_HEIGHT 16
#define PVEC_MAX_ELEM 32    /* bytes: the zero element a hole reads as */

typedef struct pvec_ops {
    uint32_t elem_size;
    /* Take a reference on whatever a copied element owns (may be NULL). */
    void (*retain)(void *elem);
    /* Drop what an element owns when its leaf is freed (may be NULL). */
    void (*release)(void *elem, mem_ctx *m);
    /* Bytes an element owns that nothing else shares (may be NULL). */
    size_t (*private_bytes)(const void *elem);
} pvec_ops;

struct pvec_chunk;

typedef struct pvec {
    struct pvec_chunk *root;  /* NULL when len == 0 */
    uint32_t height;          /* 0: the root is a leaf */
    uint64_t len;
} pvec;

static inline void pvec_init(pvec *v)
{
    v->root = 0;
    v->height = 0;
    v->len = 0;
}

/* dst becomes a second owner of src's tree: O(1). */
void pvec_share(const pvec *src, pvec *dst);
/* Drops this owner's reference; frees chunks that no one else holds. */
void pvec_release(pvec *v, const pvec_ops *ops, mem_ctx *m);
/* pvec_release for a vector that succ was written from (a fork's base at
   fold-back): each chunk of v's that only succ's copy still holds is
   taken over by that copy (invariant 6) rather than freed, so neither
   side counts the kids the two shared.  succ may be NULL, or any vector:
   where its chunk does not borrow from v's, the release is the plain
   one. */
void pvec_release_into(pvec *v, const pvec *succ, const pvec_ops *ops, mem_ctx *m);

/* Borrowed pointer to element i < len. */
const void *pvec_get(const pvec *v, const pvec_ops *ops, uint64_t i);
/* Element i < len and the ones after it in its leaf: *n (at least 1)
   elements from the returned pointer are contiguous, up to the leaf's end
   or len.  For passes that read a vector in order a leaf at a time. */
const void *pvec_get_run(const pvec *v, const pvec_ops *ops, uint64_t i, uint64_t *n);
/* Writable pointer to element i < len, copying shared chunks on the path;
   NULL when out of memory (the vector is unchanged in content). */
void *pvec_get_mut(pvec *v, const pvec_ops *ops, mem_ctx *m, uint64_t i);
/* Appends one zeroed element and returns it writable; NULL when out of
   memory (the vector is unchanged). */
void *pvec_push(pvec *v, const pvec_ops *ops, mem_ctx *m);
/* Appends one zero element without allocating a leaf for it (a hole until
   written).  -1 only when the tree would need a new root and none can be
   allocated. */
int pvec_grow(pvec *v, const pvec_ops *ops, mem_ctx *m);
/* Extends the vector to len zero elements (a no-op when it is that long
   already) without allocating leaves: the new elements are holes until
   written, so a sparse vector costs only the paths it writes.  -1 when a
   new root cannot be allocated or len exceeds what PVEC_MAX_HEIGHT
   levels address; the content is unchanged either way. */
int pvec_grow_to(pvec *v, const pvec_ops *ops, mem_ctx *m, uint64_t len);
/* Removes the last element (releasing it); the tree keeps its shape.  A
   zero element, or one whose path the caller owns, is removed without
   allocating; otherwise the path is copied first, and -1 (nothing
   changed) reports that the copy ran out of memory.  Undo paths pop only
   what they own, so for them it cannot fail. */
int pvec_pop(pvec *v, const pvec_ops *ops, mem_ctx *m);

/* A sequential writer, for a bulk build (a load): writable elements at
   increasing indices, with one descent per leaf instead of one per
   element.  It caches the leaf it last wrote, so the vector must not be
   shared, copied or popped between calls; holes it does not write stay
   holes.  Elements are written in place, exactly as pvec_get_mut would
   write them, so the tree it leaves is the one element-wise writes make. */
typedef struct pvec_seq {
    pvec *v;
    const pvec_ops *ops;
    mem_ctx *m;
    unsigned char *leaf;   /* the cached leaf's first element, or NULL */
    uint64_t base;         /* index of that element */
} pvec_seq;

static inline void pvec_seq_init(pvec_seq *s, pvec *v, const pvec_ops *ops, mem_ctx *m)
{
    s->v = v;
    s->ops = ops;
    s->m = m;
    s->leaf = 0;
    s->base = 0;
}

/* The slow path of pvec_seq_mut: a descent, caching the leaf. */
void *pvec_seq_descend(pvec_seq *s, uint64_t i);

/* Writable element i < len (as pvec_get_mut); NULL when out of memory. */
static inline void *pvec_seq_mut(pvec_seq *s, uint64_t i)
{
    if (s->leaf && i - s->base < PVEC_FANOUT)
        return s->leaf + (size_t)(i - s->base) * s->ops->elem_size;
    return pvec_seq_descend(s, i);
}

void *pvec_seq_push_slow(pvec_seq *s);

/* Appends one element and returns it writable (as pvec_push); NULL when
   out of memory, the vector unchanged.  Within the cached leaf this is a
   store and an increment: the element past len is zero already
   (invariant 2) and the tree has room up to the leaf's end. */
static inline void *pvec_seq_push(pvec_seq *s)
{
    uint64_t i = s->v->len;
    if (s->leaf && i - s->base < PVEC_FANOUT) {
        s->v->len++;
        return s->leaf + (size_t)(i - s->base) * s->ops->elem_size;
    }
    return pvec_seq_push_slow(s);
}

/* Appends one zero element (as pvec_grow), without a leaf when the cached
   one does not cover it.  -1 when out of memory. */
static inline int pvec_seq_grow(pvec_seq *s)
{
    if (s->leaf && s->v->len - s->base < PVEC_FANOUT) {
        s->v->len++;
        return 0;
    }
    return pvec_grow(s->v, s->ops, s->m);
}

/* Whether a write to element i would copy a chunk: one on the path is
   shared, or borrowed from a lender someone else still holds.  It does
   not follow the take-overs a write's first step may set off further
   down, so just after a share is dropped it may say yes for a write that
   copies nothing.  For diagnostics and tests. */
int pvec_is_shared(const pvec *v, uint64_t i);

/* Bytes of the chunks only this owner holds (refcount one all the way
   from the root), with what their elements own privately: the memory the
   vector would give back if it were released.  O(those chunks): a shared
   chunk is not entered, since everything under it is shared too. */
size_t pvec_private_bytes(const pvec *v, const pvec_ops *ops);

/* Calls fn(i, a's element i, b's element i, arg) in increasing i for every
   i whose element bytes differ between a and b (an index past one
   vector's length reads as its zero element).  Chunks the two share are
   skipped unread, so the cost grows with the leaves that differ, not
   with the length.  Stops at fn's first nonzero return and returns it. */
typedef int (*pvec_diff_fn)(uint64_t i, const void *a, const void *b, void *arg);
int pvec_diff(const pvec *a, const pvec *b, const pvec_ops *ops, pvec_diff_fn fn, void *arg);

#ifdef STRATA_TESTING
/* Structural check: heights, refcounts > 0, zeroed tail.  0 when sound.
   Safe on a view while its writer writes. */
int pvec_check(const pvec *v, const pvec_ops *ops);
/* pvec_check and invariants 5 and 6 (owned slots, lenders): only where
   no writer runs, since a writer may take lenders over in chunks a view
   shares. */
int pvec_check_lenders(const pvec *v, const pvec_ops *ops);
#endif

#endif
