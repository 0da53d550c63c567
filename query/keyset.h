/*
 * keyset — a set of value tuples under value_equivalent, in insertion
 * order: the one de-duplicator behind grouping, DISTINCT (of a projection
 * and inside an aggregate function) and UNION.
 *
 * Equivalence is value_equivalent on every position (null with null, NaN
 * with NaN, 1 with 1.0, lists and maps element by element), and the hash
 * is value_hash, which agrees with it; so a lookup costs one hash and,
 * expected, one comparison, whatever the number of tuples.
 *
 * Invariants:
 *   1. tuples[i * width ..] are owned (retained) copies; no two are
 *      equivalent.
 *   2. slots has nslots entries, a power of two at least twice n (open
 *      addressing, linear probing); slots[p] is 0 or names a tuple.
 *   3. hashes[i] is the hash of tuple i (growing the table re-reads it).
 *
 * Memory grows with the distinct tuples, never with the lookups.  Every
 * allocation comes from the context given at init; -1 from keyset_insert
 * means out of memory and leaves the set as it was.
 */
#ifndef STRATA_QUERY_KEYSET_H
#define STRATA_QUERY_KEYSET_H

#include "storage/value.h"

typedef struct keyset {
    mem_ctx *m;
    size_t width;       /* values per tuple; 0 gives a set of at most one */
    value *tuples;      /* n * width, owned */
    uint64_t *hashes;   /* n */
    size_t n, cap;      /* cap in tuples */
    uint64_t *slots;    /* nslots; 0 empty, else tuple index + 1 and hash
                           bits (keyset.c) */
    size_t nslots;
} keyset;

void keyset_init(keyset *s, mem_ctx *m, size_t width);
/* Looks tuple (width values, borrowed) up; when absent, appends retained
   copies.  *index (may be NULL) gets the tuple's position.  1 added, 0
   found, -1 out of memory. */
int keyset_insert(keyset *s, const value *tuple, size_t *index);
/* Tuple i (borrowed; valid until the next insert). */
const value *keyset_tuple(const keyset *s, size_t i);
/* Releases every tuple and the tables; the set is empty after. */
void keyset_free(keyset *s);

#endif
