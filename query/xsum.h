/*
 * xsum — an exact sum of doubles and integers, rounded once.
 *
 * sum(), avg() and stDev() add their numbers here, so that their result
 * depends on the numbers alone, never on the order they were added in:
 * the parallel read (parallel.h) may add a group's rows on several
 * threads in any order and merge the partial sums, and still give, bit
 * for bit, what one thread gives.  The result is the exact sum rounded
 * once to the nearest double (ties to even), which is also at least as
 * close as any running sum of doubles.
 *
 * The sum is a fixed-point number in base 2^32: digit i weighs
 * 2^(32 * i - 1074), so digit 0's lowest bit is the smallest subnormal
 * and every double and every 64-bit integer is a whole number of it.
 * Only the window of digits a sum has touched is kept (the first
 * XSUM_INLINE inline, more on the heap).
 *
 * Invariants:
 *   1. Each digit is an int64 holding a 32-bit digit plus carries: an add
 *      changes at most three digits by less than 2^32 each, so the
 *      carries are propagated (normalise) every XSUM_CARRY_EVERY adds,
 *      long before a digit could overflow.
 *   2. After normalise, digits[0 .. n-1) are in [0, 2^32) and the top one
 *      is in (-2^32, 2^32): it carries the sign.
 *   3. NaN and infinities are not digits: they are counted in `special`
 *      and decide the result as IEEE addition would (NaN, or +inf with
 *      -inf, gives NaN).
 * An xsum may be moved with memcpy (acc arrays grow by realloc): the
 * inline digits are addressed through `heap == NULL`, never a pointer
 * into the struct.
 */
#ifndef STRATA_QUERY_XSUM_H
#define STRATA_QUERY_XSUM_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/mem.h"

#define XSUM_INLINE 4

typedef struct xsum {
    int64_t small[XSUM_INLINE];
    int64_t *heap;          /* NULL: the digits are small[] */
    int32_t base;           /* the digit index of digits[0] */
    int32_t n;              /* digits in the window (0: the sum is 0) */
    uint32_t adds;          /* adds since the carries were propagated */
    uint8_t special;        /* XSUM_NAN | XSUM_PINF | XSUM_NINF */
} xsum;

/* A zeroed xsum is 0.  Each add returns 0, or -1 when the window could
   not grow (out of memory; the sum is then unchanged). */
int xsum_add_double(xsum *s, mem_ctx *m, double d);
int xsum_add_int(xsum *s, mem_ctx *m, int64_t v);
int xsum_add_wide(xsum *s, mem_ctx *m, __int128 v);
/* into += from (from is normalised in place; its value is unchanged). */
int xsum_merge(xsum *into, mem_ctx *m, xsum *from);
/* The sum rounded to the nearest double (s is normalised in place). */
double xsum_round(xsum *s);
/* Whether anything but zeros and nothing special was added. */
bool xsum_is_zero(const xsum *s);
void xsum_free(xsum *s, mem_ctx *m);

#endif
