/*
 * value — property and query values with openCypher semantics.
 *
 * A value is a 16-byte tagged cell passed by value.  Scalars live in the
 * cell; strings of up to VALUE_INLINE_MAX bytes live in the cell too, longer
 * strings, lists, maps and paths live in an immutable, atomically refcounted
 * heap object that remembers the mem_ctx it came from.  Reading a string
 * never copies it: value_str() points into the cell or the heap object.
 *
 * Ownership (one rule, as jq's): a constructor returns an owned value;
 * value_retain() returns a second owned copy of the same value (O(1), a
 * refcount increment); value_release() drops one.  Every inspection and
 * comparison function borrows.  value_list_from / value_map_from consume the
 * values they are given.
 *
 * Heap objects are immutable once built and may be read from any thread;
 * their refcounts are atomic.
 *
 * Nesting: a list, map or path may hold containers at most VALUE_MAX_DEPTH
 * levels deep, counting itself (value_depth).  Every constructor of a
 * container refuses a deeper one with VALUE_TOO_DEEP, so no value, however
 * it was built (Cypher, the C API, the loader), nests deeper; this is what
 * bounds the recursion of release, clone, comparison, order, equivalence,
 * hash, printing and saving.  The depth is kept in the cell.
 *
 * Semantics (openCypher 9):
 *   value_equals   `=`: ternary; null anywhere -> TRI_NULL; 1 = 1.0 is true;
 *                  NaN = x is false; values of different kinds are not equal;
 *                  lists and maps compare element-wise with null propagation.
 *   value_compare  `<`: ternary; defined between numbers, strings, booleans,
 *                  temporals of the same kind (not durations) and lists
 *                  (lexicographic, the first unequal pair decides);
 *                  anything else (maps, nodes, relationships, paths, mixed
 *                  kinds) and null -> TRI_NULL; NaN compares false.
 *   value_order    ORDER BY's total order, ascending:
 *                  MAP < NODE < RELATIONSHIP < LIST < PATH
 *                    < DATETIME < LOCALDATETIME < DATE < TIME < LOCALTIME
 *                    < DURATION < STRING < BOOLEAN < NUMBER < NULL;
 *                  numbers numerically with ints and floats compared exactly
 *                  (no rounding through double) and NaN after +Infinity.
 *   value_equivalent  grouping / DISTINCT: like = but null is equivalent to
 *                  null and NaN to NaN; 1 is equivalent to 1.0.
 *   value_hash     consistent with value_equivalent (so 1 and 1.0 hash alike).
 */
#ifndef STRATA_STORAGE_VALUE_H
#define STRATA_STORAGE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/mem.h"

typedef enum value_type {
    VAL_NULL = 0,
    VAL_BOOL,
    VAL_INT,
    VAL_FLOAT,
    VAL_STRING,
    VAL_LIST,
    VAL_MAP,
    VAL_NODE,   /* a node id; the query layer knows which view it is in */
    VAL_REL,    /* a relationship id */
    VAL_PATH,   /* node, rel, node, ...: stored as a list of VAL_NODE/VAL_REL */
    /* Temporal kinds (storage/temporal.h describes their encoding). */
    VAL_DATE,
    VAL_LOCALTIME,
    VAL_TIME,
    VAL_LOCALDATETIME,
    VAL_DATETIME,   /* heap blob */
    VAL_DURATION,   /* heap blob */
} value_type;

/* Ternary logic. */
typedef enum tri { TRI_FALSE = 0, TRI_TRUE = 1, TRI_NULL = 2 } tri;

/* 14 bytes of the cell follow type and inl_len; one of them holds the NUL
   that value_str() promises. */
#define VALUE_INLINE_MAX 13

struct value_heap;   /* string, list, map or path body */

typedef struct value {
    uint8_t type;     /* value_type */
    uint8_t inl_len;  /* VAL_STRING: inline length, or 0xFF when on the heap */
    char inl_head[6]; /* first bytes of an inline string; a list's, map's or
                         path's nesting depth (uint16) in the first two */
    union {
        bool b;
        int64_t i;
        double f;
        uint64_t id;
        struct value_heap *h;
        char inl_tail[8];
    } u;
} value;

_Static_assert(sizeof(value) == 16, "a value is two words");

/* Scalars: no allocation. */
static inline value value_null(void) { value v = {0}; return v; }
static inline value value_bool(bool b) { value v = {0}; v.type = VAL_BOOL; v.u.b = b; return v; }
static inline value value_int(int64_t i) { value v = {0}; v.type = VAL_INT; v.u.i = i; return v; }
static inline value value_float(double f) { value v = {0}; v.type = VAL_FLOAT; v.u.f = f; return v; }
static inline value value_node(uint64_t id) { value v = {0}; v.type = VAL_NODE; v.u.id = id; return v; }
static inline value value_rel(uint64_t id) { value v = {0}; v.type = VAL_REL; v.u.id = id; return v; }

static inline value_type value_kind(const value *v) { return (value_type)v->type; }
static inline bool value_is_null(const value *v) { return v->type == VAL_NULL; }
static inline bool value_is_temporal(const value *v)
{
    return v->type >= VAL_DATE && v->type <= VAL_DURATION;
}
/* Cypher's name for v's type: "Integer", "LocalDateTime", ... */
const char *value_type_name(const value *v);
static inline bool value_is_number(const value *v)
{
    return v->type == VAL_INT || v->type == VAL_FLOAT;
}

/* Returns 0, or -1 when out of memory (*out is then null).  The bytes are
   copied; they need not be NUL-terminated, and may contain NUL. */
int value_string(mem_ctx *m, const char *s, size_t len, value *out);
/* Whether bytes[0..len) are well-formed UTF-8 (no overlongs, surrogates
   or code points above U+10FFFF). */
bool value_utf8_valid(const char *bytes, size_t len);
/* Borrowed pointer to the bytes (NUL-terminated) and their length; NULL
   (length 0) when v is not a string.  len may be NULL. */
const char *value_str(const value *v, size_t *len);

/* The deepest nesting of containers (lists, maps, paths) a value may
   have, counting itself: [[1]] nests 2 deep.  1000 levels keep every
   recursive walk over a value well inside a 512 KiB thread stack (the walks
   checked on a 512 KiB thread in tests/test_value_nesting.c). */
#define VALUE_MAX_DEPTH 1000
/* What a container constructor returns when its result would nest deeper
   than VALUE_MAX_DEPTH (out of memory is -1). */
#define VALUE_TOO_DEEP (-2)

/* Containers nested in v, counting v: 0 for a scalar, a string or a
   temporal, 1 for a list or map of those, 2 for a list of lists, ... */
unsigned value_depth(const value *v);

/* Lists and paths: consume items[0..n) (the cells are left null either
   way); on failure the items are released and -1 returned (VALUE_TOO_DEEP
   when the list would nest deeper than VALUE_MAX_DEPTH).  A path's items
   must alternate node, rel, node, ..., node (n odd); any other shape is
   refused with -1 as well. */
int value_list_from(mem_ctx *m, value *items, size_t n, value *out);
int value_path_from(mem_ctx *m, value *items, size_t n, value *out);
size_t value_list_len(const value *v);            /* list or path */
const value *value_list_items(const value *v);    /* borrowed */

/* Maps: keys must be strings; consumes keys and vals (the cells are left
   null either way); a repeated key keeps its last value; entries are stored
   sorted by key bytes (memcmp, then length).  -1 when out of memory or when
   a key is not a string, VALUE_TOO_DEEP when the map would nest deeper than
   VALUE_MAX_DEPTH; the inputs released either way. */
int value_map_from(mem_ctx *m, value *keys, value *vals, size_t n, value *out);
size_t value_map_len(const value *v);
const value *value_map_keys(const value *v);      /* borrowed, sorted */
const value *value_map_vals(const value *v);      /* borrowed */
/* Borrowed value under key, or NULL when absent. */
const value *value_map_get(const value *v, const char *key, size_t len);

/* Blobs: an immutable heap object holding len raw bytes, for the kinds
   whose payload does not fit the cell (VAL_DATETIME, VAL_DURATION).  -1
   when out of memory or t is not a blob kind. */
int value_blob(mem_ctx *m, value_type t, const void *bytes, size_t len, value *out);
/* Borrowed bytes of a blob (NULL when v is not one); len may be NULL. */
const void *value_blob_bytes(const value *v, size_t *len);

value value_retain(value v);
void value_release(value *v);   /* sets *v to null */

/* Deep copy into another context (used when a caller's value is stored in
   a graph, so the graph owns its memory).  A value whose heap objects all
   live in m already is shared, not copied.  -1 when out of memory. */
int value_clone(mem_ctx *m, const value *v, value *out);

tri value_equals(const value *a, const value *b);
tri value_compare_lt(const value *a, const value *b);
/* Three-way comparison behind value_compare_lt: returns 0 and sets *cmp to
   -1/0/1 when the values are comparable; returns 1 when their kinds are
   comparable but a NaN leaves them unordered (<, <=, >, >= are all false);
   returns -1 when they are not comparable (the comparison is null).  *cmp
   is 0 unless 0 is returned. */
int value_compare(const value *a, const value *b, int *cmp);
int value_order(const value *a, const value *b);
bool value_equivalent(const value *a, const value *b);
uint64_t value_hash(const value *v);

/* Bytes this value holds outside its cell (0 for scalars and inline
   strings): its heap object and, recursively, those of the values inside
   it, a shared one counted once per reference.  For memory statistics. */
size_t value_heap_size(const value *v);
/* Like value_heap_size, but only the heap objects no other value shares
   (refcount one), entered only through such objects. */
size_t value_private_size(const value *v);

#endif
