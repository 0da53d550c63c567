/*
 * value — the cell, the heap objects behind it, and openCypher's four ways
 * of relating two values (=, <, ORDER BY, equivalence) plus a hash.
 *
 * The cell (16 bytes):
 *
 *   offset  size  field
 *   0       1     type (value_type)
 *   1       1     inl_len: an inline string's length, HEAP_STRING otherwise
 *   2       14    inline string bytes and their NUL (inl_head, u.inl_tail);
 *                 for a list, map or path, bytes 2..3 hold its nesting
 *                 depth (uint16, value_depth)
 *   8       8     u: bool, int, float, id or heap pointer (the same bytes
 *                 as the inline area's last eight)
 *
 * A heap object is a 24-byte header (refs, ctx, len) followed by its
 * payload: a string's bytes and a NUL; a list's or path's len items; a
 * map's len keys followed by its len values.
 *
 * Invariants:
 *   1. A string is inline iff it is at most VALUE_INLINE_MAX bytes long, so
 *      equal strings always share a representation; an inline cell is zero
 *      after the string's bytes, which supplies value_str()'s NUL.
 *   2. A heap object is immutable once its constructor returns; refs counts
 *      the owned cells that point at it, and the one that drops it to zero
 *      frees it (children first).  Its size is not stored: mem_free needs
 *      none, and value_heap_size asks the allocator (mem_usable_size).
 *   3. Each heap object holds a ref on its mem_ctx (mem.h invariant 3), so a
 *      context outlives every value allocated from it.
 *   4. A map's keys are strings in strictly increasing byte order, which is
 *      what lets value_map_get bisect and lets equality and order walk two
 *      maps' keys in step.
 *   5. A path holds an odd number of items: nodes at even positions,
 *      relationships at odd ones.
 *   6. A container's cell records its depth: one more than the deepest
 *      container among its items, never above VALUE_MAX_DEPTH.  items_from
 *      and value_map_from are the only places a list, map or path is
 *      made (deep_copy copies the cell's depth along), and both refuse a
 *      deeper one.
 *
 * Release, clone, comparison, order, equivalence and hash recurse over
 * nested values; invariant 6 bounds their stack depth.
 */
#include "storage/value.h"

#include "storage/temporal.h"
#include "storage/utf8.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_STRING 0xFF

/* The recursive walks (=, ORDER BY, equivalence, hash) keep their
   frames small by doing the work on scalars in leaf functions that are
   never inlined into them: a decoded temporal is ~100 bytes, and a frame
   that held two would cost that at every level of a deeply nested value.
   Measured with a 1000-level value on a pre-filled stack: value_equals
   used 267 bytes a level with the decoding inlined, 75 without. */
#define LEAF __attribute__((noinline))

struct value_heap {
    atomic_size_t refs;
    mem_ctx *ctx;
    size_t len;      /* string bytes, list or path items, map entries */
    value items[];   /* a string's bytes are stored over this too */
};

#define INLINE_AT offsetof(value, inl_head)

_Static_assert(offsetof(value, u) == INLINE_AT + sizeof(((value *)0)->inl_head),
               "inl_head and u.inl_tail form one run of bytes");
_Static_assert(sizeof(value) - INLINE_AT == VALUE_INLINE_MAX + 1,
               "the inline area holds VALUE_INLINE_MAX bytes and a NUL");

/* Ranks of ORDER BY's cross-kind order; ints and floats share one. */
static const uint8_t order_rank[] = {
    [VAL_MAP] = 0,  [VAL_NODE] = 1,   [VAL_REL] = 2,
    [VAL_LIST] = 3, [VAL_PATH] = 4,
    [VAL_DATETIME] = 5, [VAL_LOCALDATETIME] = 6, [VAL_DATE] = 7,
    [VAL_TIME] = 8, [VAL_LOCALTIME] = 9, [VAL_DURATION] = 10,
    [VAL_STRING] = 11,
    [VAL_BOOL] = 12, [VAL_INT] = 13,    [VAL_FLOAT] = 13,
    [VAL_NULL] = 14,
};

static bool is_blob_kind(value_type t)
{
    return t == VAL_DATETIME || t == VAL_DURATION;
}

/* Result of comparing two numbers when a NaN is involved. */
#define UNORDERED 2

/* ---- heap objects ---------------------------------------------------- */

static struct value_heap *heap_of(const value *v)
{
    switch (v->type) {
    case VAL_STRING:
        return v->inl_len == HEAP_STRING ? v->u.h : NULL;
    case VAL_LIST:
    case VAL_MAP:
    case VAL_PATH:
    case VAL_DATETIME:
    case VAL_DURATION:
        return v->u.h;
    default:
        return NULL;
    }
}

/* Cells a heap object of this kind holds (0 for a string or a blob). */
static size_t heap_cells(value_type t, const struct value_heap *h)
{
    if (t == VAL_MAP)
        return 2 * h->len;
    return t == VAL_STRING || is_blob_kind(t) ? 0 : h->len;
}

static struct value_heap *heap_new(mem_ctx *m, size_t len, size_t payload)
{
    size_t size = payload > SIZE_MAX - sizeof(struct value_heap)
                      ? SIZE_MAX
                      : sizeof(struct value_heap) + payload;
    struct value_heap *h = mem_alloc(m, size);
    if (!h)
        return NULL;
    atomic_init(&h->refs, 1);
    h->ctx = m;
    h->len = len;
    mem_ctx_retain(m);
    return h;
}

static void heap_free(value_type t, struct value_heap *h)
{
    size_t n = heap_cells(t, h);
    for (size_t i = 0; i < n; i++)
        value_release(&h->items[i]);
    mem_ctx *m = h->ctx;
    mem_free(m, h);
    mem_ctx_release(m);
}

static value heap_value(value_type t, struct value_heap *h)
{
    value v = {0};
    v.type = (uint8_t)t;
    if (t == VAL_STRING)
        v.inl_len = HEAP_STRING;
    v.u.h = h;
    return v;
}

static bool is_container(value_type t)
{
    return t == VAL_LIST || t == VAL_MAP || t == VAL_PATH;
}

unsigned value_depth(const value *v)
{
    if (!is_container(value_kind(v)))
        return 0;
    uint16_t d;
    memcpy(&d, v->inl_head, sizeof d);
    return d;
}

static void set_depth(value *v, unsigned depth)
{
    uint16_t d = (uint16_t)depth;
    memcpy(v->inl_head, &d, sizeof d);
}

_Static_assert(VALUE_MAX_DEPTH < UINT16_MAX, "a depth fits the cell's two bytes");

/* The depth a container of vs[0..n) would have: one more than its
   deepest item (O(n): each item's depth is in its cell). */
static unsigned depth_over(const value *vs, size_t n)
{
    unsigned deepest = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = value_depth(&vs[i]);
        if (d > deepest)
            deepest = d;
    }
    return deepest + 1;
}

static void release_all(value *vs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        value_release(&vs[i]);
}

value value_retain(value v)
{
    struct value_heap *h = heap_of(&v);
    if (h)
        atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
    return v;
}

void value_release(value *v)
{
    struct value_heap *h = heap_of(v);
    value_type t = value_kind(v);
    *v = value_null();
    /* acq_rel: the freeing thread must see every other holder's reads done. */
    if (h && atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) == 1)
        heap_free(t, h);
}

size_t value_heap_size(const value *v)
{
    struct value_heap *h = heap_of(v);
    if (!h)
        return 0;
    size_t total = mem_usable_size(h->ctx, h);
    size_t n = heap_cells(value_kind(v), h);
    for (size_t i = 0; i < n; i++)
        total += value_heap_size(&h->items[i]);
    return total;
}

size_t value_private_size(const value *v)
{
    struct value_heap *h = heap_of(v);
    if (!h || atomic_load_explicit(&h->refs, memory_order_acquire) != 1)
        return 0;
    size_t total = mem_usable_size(h->ctx, h);
    size_t n = heap_cells(value_kind(v), h);
    for (size_t i = 0; i < n; i++)
        total += value_private_size(&h->items[i]);
    return total;
}

/* ---- strings --------------------------------------------------------- */

int value_string(mem_ctx *m, const char *s, size_t len, value *out)
{
    if (len <= VALUE_INLINE_MAX) {
        value v = {0};
        v.type = VAL_STRING;
        v.inl_len = (uint8_t)len;
        if (len)
            memcpy((char *)&v + INLINE_AT, s, len);
        *out = v;
        return 0;
    }
    size_t payload = len == SIZE_MAX ? SIZE_MAX : len + 1;   /* and the NUL */
    struct value_heap *h = heap_new(m, len, payload);
    if (!h) {
        *out = value_null();
        return -1;
    }
    char *bytes = (char *)h->items;
    memcpy(bytes, s, len);
    bytes[len] = '\0';
    *out = heap_value(VAL_STRING, h);
    return 0;
}

const char *value_str(const value *v, size_t *len)
{
    const char *s = NULL;
    size_t n = 0;
    if (v->type == VAL_STRING) {
        if (v->inl_len == HEAP_STRING) {
            s = (const char *)v->u.h->items;
            n = v->u.h->len;
        } else {
            s = (const char *)v + INLINE_AT;
            n = v->inl_len;
        }
    }
    if (len)
        *len = n;
    return s;
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return (an > bn) - (an < bn);
}

static LEAF int cmp_str(const value *a, const value *b)
{
    size_t an, bn;
    const char *as = value_str(a, &an), *bs = value_str(b, &bn);
    return cmp_bytes(as, an, bs, bn);
}

/* ---- blobs ----------------------------------------------------------- */

int value_blob(mem_ctx *m, value_type t, const void *bytes, size_t len, value *out)
{
    *out = value_null();
    if (!is_blob_kind(t))
        return -1;
    struct value_heap *h = heap_new(m, len, len ? len : 1);
    if (!h)
        return -1;
    if (len)
        memcpy(h->items, bytes, len);
    *out = heap_value(t, h);
    return 0;
}

const void *value_blob_bytes(const value *v, size_t *len)
{
    if (!is_blob_kind(value_kind(v))) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = v->u.h->len;
    return v->u.h->items;
}

/* -2 when a or b is not a temporal instant of the same kind; else -1/0/1. */
static LEAF int cmp_temporal(const value *a, const value *b)
{
    temporal x, y;
    if (temporal_from_value(a, &x) != 0 || temporal_from_value(b, &y) != 0 || x.kind != y.kind)
        return -2;
    return temporal_cmp(&x, &y);
}

/* ---- lists, paths, maps ---------------------------------------------- */

static int items_from(mem_ctx *m, value_type t, value *items, size_t n,
                      value *out)
{
    unsigned depth = depth_over(items, n);
    if (depth > VALUE_MAX_DEPTH) {
        release_all(items, n);
        *out = value_null();
        return VALUE_TOO_DEEP;
    }
    struct value_heap *h = heap_new(m, n, mem_array_size(n, sizeof(value)));
    if (!h) {
        release_all(items, n);
        *out = value_null();
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        h->items[i] = items[i];
        items[i] = value_null();
    }
    *out = heap_value(t, h);
    set_depth(out, depth);
    return 0;
}

int value_list_from(mem_ctx *m, value *items, size_t n, value *out)
{
    return items_from(m, VAL_LIST, items, n, out);
}

int value_path_from(mem_ctx *m, value *items, size_t n, value *out)
{
    bool ok = n % 2 == 1;
    for (size_t i = 0; ok && i < n; i++)
        ok = items[i].type == (i % 2 ? VAL_REL : VAL_NODE);
    if (!ok) {
        release_all(items, n);
        *out = value_null();
        return -1;
    }
    return items_from(m, VAL_PATH, items, n, out);
}

size_t value_list_len(const value *v)
{
    return v->type == VAL_LIST || v->type == VAL_PATH ? v->u.h->len : 0;
}

const value *value_list_items(const value *v)
{
    return v->type == VAL_LIST || v->type == VAL_PATH ? v->u.h->items : NULL;
}

struct map_entry {
    value key, val;
    size_t pos;   /* input position: among equal keys the last one wins */
};

static int map_entry_cmp(const void *x, const void *y)
{
    const struct map_entry *a = x, *b = y;
    int c = cmp_str(&a->key, &b->key);
    return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

int value_map_from(mem_ctx *m, value *keys, value *vals, size_t n, value *out)
{
    struct map_entry *e = NULL;
    struct value_heap *h;
    size_t esize = mem_array_size(n, sizeof *e);
    int rc = -1;
    for (size_t i = 0; i < n; i++)
        if (keys[i].type != VAL_STRING)
            goto fail;
    /* Keys are strings, so the values alone decide the depth. */
    unsigned depth = depth_over(vals, n);
    if (depth > VALUE_MAX_DEPTH) {
        rc = VALUE_TOO_DEEP;
        goto fail;
    }
    /* Sorting happens in a scratch array because the final size is only
       known once duplicates have been found. */
    e = mem_alloc(m, esize);
    if (!e)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        e[i] = (struct map_entry){ keys[i], vals[i], i };
        keys[i] = vals[i] = value_null();
    }
    qsort(e, n, sizeof *e, map_entry_cmp);

    size_t unique = 0;
    for (size_t i = 0; i < n; i++)
        if (i + 1 == n || cmp_str(&e[i].key, &e[i + 1].key) != 0)
            unique++;
    h = heap_new(m, unique, mem_array_size(unique, 2 * sizeof(value)));
    if (!h)
        goto fail;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 == n || cmp_str(&e[i].key, &e[i + 1].key) != 0) {
            h->items[j] = e[i].key;
            h->items[unique + j] = e[i].val;
            j++;
        } else {
            value_release(&e[i].key);
            value_release(&e[i].val);
        }
    }
    mem_free(m, e);
    *out = heap_value(VAL_MAP, h);
    set_depth(out, depth);
    return 0;

fail:
    if (e) {
        for (size_t i = 0; i < n; i++) {
            value_release(&e[i].key);
            value_release(&e[i].val);
        }
        mem_free(m, e);
    } else {
        release_all(keys, n);
        release_all(vals, n);
    }
    *out = value_null();
    return rc;
}

size_t value_map_len(const value *v)
{
    return v->type == VAL_MAP ? v->u.h->len : 0;
}

const value *value_map_keys(const value *v)
{
    return v->type == VAL_MAP ? v->u.h->items : NULL;
}

const value *value_map_vals(const value *v)
{
    return v->type == VAL_MAP ? v->u.h->items + v->u.h->len : NULL;
}

const value *value_map_get(const value *v, const char *key, size_t len)
{
    if (v->type != VAL_MAP)
        return NULL;
    const struct value_heap *h = v->u.h;
    size_t lo = 0, hi = h->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t klen;
        const char *k = value_str(&h->items[mid], &klen);
        int c = cmp_bytes(k, klen, key, len);
        if (c == 0)
            return &h->items[h->len + mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- clone ----------------------------------------------------------- */

static bool lives_in(const value *v, const mem_ctx *m)
{
    struct value_heap *h = heap_of(v);
    if (!h)
        return true;
    if (h->ctx != m)
        return false;
    size_t n = heap_cells(value_kind(v), h);
    for (size_t i = 0; i < n; i++)
        if (!lives_in(&h->items[i], m))
            return false;
    return true;
}

static int deep_copy(mem_ctx *m, const value *v, value *out)
{
    struct value_heap *src = heap_of(v);
    if (!src) {
        *out = *v;
        return 0;
    }
    value_type t = value_kind(v);
    if (t == VAL_STRING)
        return value_string(m, (const char *)src->items, src->len, out);
    if (is_blob_kind(t))
        return value_blob(m, t, src->items, src->len, out);
    size_t n = heap_cells(t, src);
    struct value_heap *h = heap_new(m, src->len, n * sizeof(value));
    if (!h) {
        *out = value_null();
        return -1;
    }
    /* All null first, so that a failure part way can free it whole. */
    memset(h->items, 0, n * sizeof(value));
    for (size_t i = 0; i < n; i++) {
        if (deep_copy(m, &src->items[i], &h->items[i]) != 0) {
            heap_free(t, h);
            *out = value_null();
            return -1;
        }
    }
    *out = heap_value(t, h);
    set_depth(out, value_depth(v));
    return 0;
}

int value_clone(mem_ctx *m, const value *v, value *out)
{
    /* Sharing is safe because heap objects never change. */
    if (lives_in(v, m)) {
        *out = value_retain(*v);
        return 0;
    }
    return deep_copy(m, v, out);
}

/* ---- numbers --------------------------------------------------------- */

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* Exact: i is never rounded through double (2^53 + 1 must not equal
   2^53.0).  d is split into its integral part, which fits int64 once d is
   within [-2^63, 2^63), and a fraction that only breaks a tie. */
static int cmp_int_float(int64_t i, double d)
{
    if (isnan(d))
        return UNORDERED;
    if (d >= 0x1p63)
        return -1;
    if (d < -0x1p63)
        return 1;
    double whole = trunc(d);
    int64_t w = (int64_t)whole;
    if (i != w)
        return cmp_i64(i, w);
    return (whole < d) ? -1 : (whole > d) ? 1 : 0;
}

static bool is_nan(const value *v)
{
    return v->type == VAL_FLOAT && isnan(v->u.f);
}

/* -1/0/1, or UNORDERED when either side is NaN. */
static int cmp_num(const value *a, const value *b)
{
    if (a->type == VAL_INT && b->type == VAL_INT)
        return cmp_i64(a->u.i, b->u.i);
    if (a->type == VAL_INT)
        return cmp_int_float(a->u.i, b->u.f);
    if (b->type == VAL_INT) {
        int c = cmp_int_float(b->u.i, a->u.f);
        return c == UNORDERED ? c : -c;
    }
    if (isnan(a->u.f) || isnan(b->u.f))
        return UNORDERED;
    return (a->u.f > b->u.f) - (a->u.f < b->u.f);
}

/* ---- = ----------------------------------------------------------------- */

/* False anywhere wins over null anywhere: [1, null] = [2, null] is false. */
static tri equals_items(const value *a, const value *b, size_t n)
{
    tri r = TRI_TRUE;
    for (size_t i = 0; i < n; i++) {
        tri e = value_equals(&a[i], &b[i]);
        if (e == TRI_FALSE)
            return TRI_FALSE;
        if (e == TRI_NULL)
            r = TRI_NULL;
    }
    return r;
}

static bool same_keys(const struct value_heap *a, const struct value_heap *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++)
        if (cmp_str(&a->items[i], &b->items[i]) != 0)
            return false;
    return true;
}

/* = of two temporals of the same kind. */
static LEAF tri equals_temporal(const value *a, const value *b)
{
    if (value_kind(a) == VAL_DURATION) {
        duration x, y;
        if (duration_from_value(a, &x) != 0 || duration_from_value(b, &y) != 0)
            return TRI_FALSE;
        return duration_eq(&x, &y) ? TRI_TRUE : TRI_FALSE;
    }
    temporal x, y;
    if (temporal_from_value(a, &x) != 0 || temporal_from_value(b, &y) != 0)
        return TRI_FALSE;
    return temporal_eq(&x, &y) ? TRI_TRUE : TRI_FALSE;
}

tri value_equals(const value *a, const value *b)
{
    if (value_is_null(a) || value_is_null(b))
        return TRI_NULL;
    if (value_is_number(a) && value_is_number(b))
        return cmp_num(a, b) == 0 ? TRI_TRUE : TRI_FALSE;
    if (a->type != b->type)
        return TRI_FALSE;
    switch (value_kind(a)) {
    case VAL_BOOL:
        return a->u.b == b->u.b ? TRI_TRUE : TRI_FALSE;
    case VAL_STRING:
        return cmp_str(a, b) == 0 ? TRI_TRUE : TRI_FALSE;
    case VAL_NODE:
    case VAL_REL:
        return a->u.id == b->u.id ? TRI_TRUE : TRI_FALSE;
    case VAL_LIST:
    case VAL_PATH:
        if (a->u.h->len != b->u.h->len)
            return TRI_FALSE;
        return equals_items(a->u.h->items, b->u.h->items, a->u.h->len);
    case VAL_MAP:
        if (!same_keys(a->u.h, b->u.h))
            return TRI_FALSE;
        return equals_items(value_map_vals(a), value_map_vals(b), a->u.h->len);
    case VAL_DATE:
    case VAL_LOCALTIME:
    case VAL_TIME:
    case VAL_LOCALDATETIME:
    case VAL_DATETIME:
    case VAL_DURATION:
        return equals_temporal(a, b);
    default:
        return TRI_FALSE;
    }
}

/* ---- < ----------------------------------------------------------------- */

int value_compare(const value *a, const value *b, int *cmp)
{
    *cmp = 0;
    if (value_is_number(a) && value_is_number(b)) {
        int c = cmp_num(a, b);
        if (c == UNORDERED)
            return 1;
        *cmp = c;
        return 0;
    }
    if (a->type != b->type)
        return -1;
    switch (value_kind(a)) {
    case VAL_BOOL:
        *cmp = (a->u.b > b->u.b) - (a->u.b < b->u.b);
        return 0;
    case VAL_STRING:
        *cmp = cmp_str(a, b);
        return 0;
    case VAL_LIST: {
        size_t an = a->u.h->len, bn = b->u.h->len;
        const value *ai = a->u.h->items, *bi = b->u.h->items;
        for (size_t i = 0; i < an && i < bn; i++) {
            int c;
            int r = value_compare(&ai[i], &bi[i], &c);
            if (r != 0)
                return r;
            if (c != 0) {
                *cmp = c;
                return 0;
            }
        }
        *cmp = (an > bn) - (an < bn);
        return 0;
    }
    case VAL_DATE:
    case VAL_LOCALTIME:
    case VAL_TIME:
    case VAL_LOCALDATETIME:
    case VAL_DATETIME: {
        int c = cmp_temporal(a, b);
        if (c == -2)
            return -1;
        *cmp = c;
        return 0;
    }
    default:
        return -1;   /* null, maps, nodes, relationships, paths, durations */
    }
}

tri value_compare_lt(const value *a, const value *b)
{
    int c;
    int r = value_compare(a, b, &c);
    if (r < 0)
        return TRI_NULL;
    return r == 0 && c < 0 ? TRI_TRUE : TRI_FALSE;
}

/* ---- ORDER BY ---------------------------------------------------------- */

static int order_items(const value *a, size_t an, const value *b, size_t bn)
{
    for (size_t i = 0; i < an && i < bn; i++) {
        int c = value_order(&a[i], &b[i]);
        if (c)
            return c;
    }
    return (an > bn) - (an < bn);
}

static LEAF int order_duration(const value *a, const value *b)
{
    duration x, y;
    if (duration_from_value(a, &x) != 0 || duration_from_value(b, &y) != 0)
        return 0;
    return duration_order(&x, &y);
}

int value_order(const value *a, const value *b)
{
    int ra = order_rank[a->type], rb = order_rank[b->type];
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (heap_of(a) && heap_of(a) == heap_of(b))
        return 0;
    switch (value_kind(a)) {
    case VAL_INT:
    case VAL_FLOAT: {
        int c = cmp_num(a, b);
        return c != UNORDERED ? c : (int)is_nan(a) - (int)is_nan(b);
    }
    case VAL_BOOL:
        return (a->u.b > b->u.b) - (a->u.b < b->u.b);
    case VAL_STRING:
        return cmp_str(a, b);
    case VAL_NODE:
    case VAL_REL:
        return (a->u.id > b->u.id) - (a->u.id < b->u.id);
    case VAL_LIST:
    case VAL_PATH:
        return order_items(a->u.h->items, a->u.h->len,
                           b->u.h->items, b->u.h->len);
    case VAL_MAP: {
        size_t an = a->u.h->len, bn = b->u.h->len;
        int c = order_items(value_map_keys(a), an, value_map_keys(b), bn);
        return c ? c
                 : order_items(value_map_vals(a), an, value_map_vals(b), bn);
    }
    case VAL_DATE:
    case VAL_LOCALTIME:
    case VAL_TIME:
    case VAL_LOCALDATETIME:
    case VAL_DATETIME: {
        int c = cmp_temporal(a, b);
        return c == -2 ? 0 : c;
    }
    case VAL_DURATION:
        return order_duration(a, b);
    default:
        return 0;   /* null */
    }
}

/* ---- equivalence and hash --------------------------------------------- */

bool value_equivalent(const value *a, const value *b)
{
    if (value_is_number(a) && value_is_number(b))
        return cmp_num(a, b) == 0 || (is_nan(a) && is_nan(b));
    if (a->type != b->type)
        return false;
    if (heap_of(a) && heap_of(a) == heap_of(b))
        return true;
    switch (value_kind(a)) {
    case VAL_NULL:
        return true;
    case VAL_BOOL:
        return a->u.b == b->u.b;
    case VAL_STRING:
        return cmp_str(a, b) == 0;
    case VAL_NODE:
    case VAL_REL:
        return a->u.id == b->u.id;
    case VAL_LIST:
    case VAL_PATH:
    case VAL_MAP: {
        size_t n = heap_cells(value_kind(a), a->u.h);
        if (a->u.h->len != b->u.h->len)
            return false;
        /* A map's keys are strings, so equivalence checks them as =. */
        for (size_t i = 0; i < n; i++)
            if (!value_equivalent(&a->u.h->items[i], &b->u.h->items[i]))
                return false;
        return true;
    }
    case VAL_DATE:
    case VAL_LOCALTIME:
    case VAL_TIME:
    case VAL_LOCALDATETIME:
    case VAL_DATETIME:
    case VAL_DURATION:
        return value_equals(a, b) == TRI_TRUE;
    default:
        return false;
    }
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x;
}

/* Distinct seeds keep, say, node 7, relationship 7 and the int 7 apart. */
enum {
    SEED_NULL = 1, SEED_BOOL, SEED_NUMBER, SEED_NAN, SEED_FLOAT, SEED_STRING,
    SEED_LIST, SEED_MAP, SEED_NODE, SEED_REL, SEED_PATH, SEED_TEMPORAL,
};

static uint64_t hash_seeded(uint64_t seed, uint64_t x)
{
    return mix(x ^ mix(seed));
}

/* FNV-1a, finalised with mix() because FNV's high bits are weak. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3u;
    }
    return hash_seeded(SEED_STRING, h ^ n);
}

static LEAF uint64_t hash_string(const value *v)
{
    size_t n;
    const char *s = value_str(v, &n);
    return hash_bytes(s, n);
}

static LEAF uint64_t hash_temporal(const value *v)
{
    if (value_kind(v) == VAL_DURATION) {
        duration d;
        if (duration_from_value(v, &d) != 0)
            return 0;
        uint64_t h = hash_seeded(SEED_TEMPORAL, VAL_DURATION);
        h = mix(h + (uint64_t)d.months);
        h = mix(h + (uint64_t)d.days);
        h = mix(h + (uint64_t)d.seconds);
        return mix(h + (uint64_t)d.nanos);
    }
    /* Equal temporals share an instant (TIME/DATETIME: the UTC one). */
    temporal t;
    if (temporal_from_value(v, &t) != 0)
        return 0;
    int64_t secs = t.days * 86400 + t.nanos / TM_NANOS_PER_SEC - t.offset;
    uint64_t h = hash_seeded(SEED_TEMPORAL, (uint64_t)t.kind);
    h = mix(h + (uint64_t)secs);
    return mix(h + (uint64_t)(t.nanos % TM_NANOS_PER_SEC));
}

uint64_t value_hash(const value *v)
{
    switch (value_kind(v)) {
    case VAL_NULL:
        return mix(SEED_NULL);
    case VAL_BOOL:
        return hash_seeded(SEED_BOOL, v->u.b);
    case VAL_INT:
        return hash_seeded(SEED_NUMBER, (uint64_t)v->u.i);
    case VAL_FLOAT: {
        double f = v->u.f;
        if (isnan(f))
            return mix(SEED_NAN);
        /* A float equal to an int must hash as that int (1.0 ~ 1; -0.0 ~ 0). */
        if (f >= -0x1p63 && f < 0x1p63 && f == trunc(f))
            return hash_seeded(SEED_NUMBER, (uint64_t)(int64_t)f);
        uint64_t bits;
        memcpy(&bits, &f, sizeof bits);
        return hash_seeded(SEED_FLOAT, bits);
    }
    case VAL_STRING:
        return hash_string(v);
    case VAL_NODE:
        return hash_seeded(SEED_NODE, v->u.id);
    case VAL_REL:
        return hash_seeded(SEED_REL, v->u.id);
    case VAL_LIST:
    case VAL_PATH:
    case VAL_MAP: {
        value_type t = value_kind(v);
        uint64_t h = mix(t == VAL_LIST  ? SEED_LIST
                         : t == VAL_MAP ? SEED_MAP
                                        : SEED_PATH);
        size_t n = heap_cells(t, v->u.h);
        for (size_t i = 0; i < n; i++)
            h = mix(h + value_hash(&v->u.h->items[i]));
        return h;
    }
    case VAL_DATE:
    case VAL_LOCALTIME:
    case VAL_TIME:
    case VAL_LOCALDATETIME:
    case VAL_DATETIME:
    case VAL_DURATION:
        return hash_temporal(v);
    default:
        return 0;
    }
}

bool value_utf8_valid(const char *bytes, size_t len) { return utf8_check(bytes, len, NULL); }

const char *value_type_name(const value *v)
{
    static const char *const names[] = { "Null", "Boolean", "Integer", "Float", "String",
                                         "List", "Map", "Node", "Relationship", "Path",
                                         "Date", "LocalTime", "Time", "LocalDateTime",
                                         "DateTime", "Duration" };
    _Static_assert(sizeof names / sizeof names[0] == VAL_DURATION + 1, "a name per kind");
    return names[value_kind(v)];
}
