/* xsum — an exact sum of doubles and integers, rounded once (xsum.h). */
#include <math.h>
#include <string.h>

#include "query/xsum.h"

enum { XSUM_NAN = 1, XSUM_PINF = 2, XSUM_NINF = 4 };

/* Adds between carry propagations: each changes a digit by less than
   2^32, and a normalised digit is below 2^33 in magnitude, so 2^30 adds
   stay far inside an int64. */
#ifdef STRATA_TESTING
#define XSUM_CARRY_EVERY 64u    /* so that the carries run all the time */
#else
#define XSUM_CARRY_EVERY (1u << 30)
#endif
#define DIGIT_BITS 32
#define DIGIT_MASK 0xffffffffu
/* The digit and bit where an integer's units sit: 2^0 = 2^(1074 - 1074). */
#define UNIT_BIT 1074

static int64_t *digits(xsum *s) { return s->heap ? s->heap : s->small; }
static const int64_t *cdigits(const xsum *s) { return s->heap ? s->heap : s->small; }

/* Widens the window to hold digits [lo, hi]; new digits are 0. */
static int cover(xsum *s, mem_ctx *m, int32_t lo, int32_t hi)
{
    if (s->n == 0) {
        s->base = lo;
        s->n = 0;
    }
    int32_t old_lo = s->base, old_hi = s->base + s->n - 1;
    if (s->n && lo >= old_lo && hi <= old_hi)
        return 0;
    int32_t new_lo = s->n && old_lo < lo ? old_lo : lo;
    int32_t new_hi = s->n && old_hi > hi ? old_hi : hi;
    int32_t n = new_hi - new_lo + 1;
    int64_t tmp[XSUM_INLINE];
    int64_t *to = n <= XSUM_INLINE && !s->heap ? tmp : mem_alloc(m, (size_t)n * sizeof *to);
    if (!to)
        return -1;
    memset(to, 0, (size_t)n * sizeof *to);
    if (s->n)
        memcpy(to + (old_lo - new_lo), digits(s), (size_t)s->n * sizeof *to);
    if (to == tmp) {
        memcpy(s->small, tmp, sizeof tmp);
    } else {
        if (s->heap)
            mem_free(m, s->heap);
        s->heap = to;
    }
    s->base = new_lo;
    s->n = n;
    return 0;
}

/* Propagates the carries into the top digit (any size there). */
static void carry(xsum *s)
{
    int64_t *d = digits(s);
    for (int32_t i = 0; i + 1 < s->n; i++) {
        int64_t c = d[i] >> DIGIT_BITS;     /* arithmetic: floor */
        d[i] -= c * ((int64_t)1 << DIGIT_BITS);
        d[i + 1] += c;
    }
    s->adds = 0;
}

/* Carries, and grows the window until the top digit is a digit again
   (invariant 2); -1 when it could not grow (the value is unchanged). */
static int normalise(xsum *s, mem_ctx *m)
{
    carry(s);
    while (s->n && (digits(s)[s->n - 1] >= ((int64_t)1 << DIGIT_BITS) ||
                    digits(s)[s->n - 1] <= -((int64_t)1 << DIGIT_BITS))) {
        if (cover(s, m, s->base, s->base + s->n) != 0)
            return -1;
        carry(s);
    }
    return 0;
}

/* Adds ±mag * 2^(bit - 1074) to digits the window holds. */
static inline void apply_at(xsum *s, int32_t bit, uint64_t mag, bool neg)
{
    unsigned __int128 v = (unsigned __int128)mag << (bit % DIGIT_BITS);
    int64_t *d = digits(s) + (bit / DIGIT_BITS - s->base);
    for (int i = 0; i < 3 && v; i++, v >>= DIGIT_BITS)
        d[i] += neg ? -(int64_t)(uint64_t)(v & DIGIT_MASK) : (int64_t)(uint64_t)(v & DIGIT_MASK);
    s->adds++;
}

/* The highest digit ±mag * 2^(bit - 1074) touches. */
static inline int32_t top_digit(int32_t bit, uint64_t mag)
{
    int32_t len = 64 - __builtin_clzll(mag);
    return (bit + len - 1) / DIGIT_BITS;
}

/* Room for `adds` more adds at digits [lo, hi]: carries first if they
   are due, then the window widened. */
static int make_room(xsum *s, mem_ctx *m, uint32_t adds, int32_t lo, int32_t hi)
{
    if (s->adds + adds > XSUM_CARRY_EVERY && normalise(s, m) != 0)
        return -1;
    return cover(s, m, lo, hi);
}

static inline int add_at(xsum *s, mem_ctx *m, int32_t bit, uint64_t mag, bool neg)
{
    if (mag == 0)
        return 0;
    int32_t lo = bit / DIGIT_BITS, hi = top_digit(bit, mag);
    /* the common case: inside the window, no carries due */
    if (__builtin_expect(lo >= s->base && hi < s->base + s->n && s->adds < XSUM_CARRY_EVERY, 1)) {
        apply_at(s, bit, mag, neg);
        return 0;
    }
    if (make_room(s, m, 1, lo, hi) != 0)
        return -1;
    apply_at(s, bit, mag, neg);
    return 0;
}

int xsum_add_double(xsum *s, mem_ctx *m, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    bool neg = bits >> 63;
    uint32_t e = (uint32_t)(bits >> 52) & 0x7ff;
    uint64_t f = bits & (((uint64_t)1 << 52) - 1);
    if (e == 0x7ff) {
        s->special |= f ? XSUM_NAN : neg ? XSUM_NINF : XSUM_PINF;
        return 0;
    }
    /* a normal number is (2^52 + f) * 2^(e - 1075), a subnormal
       f * 2^-1074: both a whole number of bit 0's units */
    return e ? add_at(s, m, (int32_t)e - 1, f | ((uint64_t)1 << 52), neg) : add_at(s, m, 0, f, neg);
}

int xsum_add_int(xsum *s, mem_ctx *m, int64_t v)
{
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    return add_at(s, m, UNIT_BIT, mag, v < 0);
}

int xsum_add_wide(xsum *s, mem_ctx *m, __int128 v)
{
    bool neg = v < 0;
    unsigned __int128 mag = neg ? 0 - (unsigned __int128)v : (unsigned __int128)v;
    uint64_t low = (uint64_t)mag, high = (uint64_t)(mag >> 64);
    if (high == 0)
        return add_at(s, m, UNIT_BIT, low, neg);
    /* both halves or neither */
    if (make_room(s, m, 2, UNIT_BIT / DIGIT_BITS, top_digit(UNIT_BIT + 64, high)) != 0)
        return -1;
    if (low)
        apply_at(s, UNIT_BIT, low, neg);
    apply_at(s, UNIT_BIT + 64, high, neg);
    return 0;
}

int xsum_merge(xsum *into, mem_ctx *m, xsum *from)
{
    into->special |= from->special;
    if (from->n == 0)
        return 0;
    if (normalise(from, m) != 0 || normalise(into, m) != 0)
        return -1;
    if (cover(into, m, from->base, from->base + from->n - 1) != 0)
        return -1;
    int64_t *d = digits(into) + (from->base - into->base);
    const int64_t *f = cdigits(from);
    for (int32_t i = 0; i < from->n; i++)
        d[i] += f[i];
    into->adds = 2;     /* two normalised digits added: below 2^34 */
    return 0;
}

bool xsum_is_zero(const xsum *s)
{
    const int64_t *d = cdigits(s);
    for (int32_t i = 0; i < s->n; i++)
        if (d[i])
            return false;
    return !s->special;
}

static void negate(xsum *s)
{
    int64_t *d = digits(s);
    for (int32_t i = 0; i < s->n; i++)
        d[i] = -d[i];
    carry(s);
}

/* The positive, carried sum (every digit but the top in [0, 2^32)),
   rounded to the nearest double, ties to even. */
static double round_positive(const xsum *s)
{
    const int64_t *d = cdigits(s);
    int32_t h = s->n - 1;
    while (h >= 0 && d[h] == 0)
        h--;
    if (h < 0)
        return 0.0;
    /* the top three digits as one integer t whose bit 0 is bit q of the
       sum; sticky: anything below them */
    unsigned __int128 t = (unsigned __int128)(uint64_t)d[h] << (2 * DIGIT_BITS);
    if (h >= 1)
        t |= (unsigned __int128)(uint64_t)d[h - 1] << DIGIT_BITS;
    if (h >= 2)
        t |= (uint64_t)d[h - 2];
    bool sticky = false;
    for (int32_t i = 0; i + 2 < h && !sticky; i++)
        sticky = d[i] != 0;
    int32_t q = DIGIT_BITS * (s->base + h - 2);
    uint64_t t_high = (uint64_t)(t >> 64);  /* not 0: d[h] is */
    int32_t len = 128 - __builtin_clzll(t_high);
    /* keep 53 bits, or fewer where the result is subnormal: never a bit
       below bit 0 (those are zeros: every addend is a whole number) */
    int32_t drop = q + len - 53 >= 0 ? len - 53 : -q;
    unsigned __int128 mant = drop > 0 ? t >> drop : t;
    if (drop > 0) {
        unsigned __int128 rest = t & ((((unsigned __int128)1) << drop) - 1);
        unsigned __int128 half = ((unsigned __int128)1) << (drop - 1);
        if (rest > half || (rest == half && (sticky || (mant & 1))))
            mant++;
    }
    return ldexp((double)(uint64_t)mant, q + drop - UNIT_BIT);
}

double xsum_round(xsum *s)
{
    if (s->special & XSUM_NAN || (s->special & XSUM_PINF && s->special & XSUM_NINF))
        return NAN;
    if (s->special)
        return s->special & XSUM_PINF ? INFINITY : -INFINITY;
    if (s->n == 0)
        return 0.0;
    carry(s);
    if (digits(s)[s->n - 1] >= 0)
        return round_positive(s);
    negate(s);
    double r = -round_positive(s);
    negate(s);
    return r;
}

void xsum_free(xsum *s, mem_ctx *m)
{
    if (s->heap)
        mem_free(m, s->heap);
    memset(s, 0, sizeof *s);
}
