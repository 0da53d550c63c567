/*
 * strata — an embedded, in-memory property-graph database.
 *
 * The one public header.  Conventions that hold for every call:
 *
 *   - Every call that can fail returns a strata_status.  On failure the
 *     handle it was called on (the graph, or the view for reads) keeps a
 *     message naming what was wrong and where; strata_errmsg() /
 *     strata_view_errmsg() return it.  No call aborts on bad input: a NULL
 *     where a handle is required, an unknown or deleted id, a value of the
 *     wrong type all come back as statuses.  Nothing is global.
 *   - A failed write changes nothing (it does not even fork the graph).
 *   - Reads given a token that was never interned answer as for a token
 *     nothing carries (no label, null property, no neighbours); calls that
 *     name a token to iterate it (strata_nodes_by_label) say NOTFOUND.
 *   - Ownership: "new" results (out parameters of type T **) are owned by the
 *     caller and freed with the matching *_free / *_release, which takes a
 *     T ** and sets it to NULL.  Every const pointer argument is borrowed for
 *     the duration of the call only.  Strings returned as const char * are
 *     owned by the graph and live as long as the graph or any view of it.
 *
 * Reads go through views: strata_snapshot() gives an immutable view of the
 * last committed state in O(1).  A view stays unchanged, whatever the writer
 * does, until it is released, and may be used from any thread (one thread
 * at a time per view handle; take one view per thread for parallel reads).
 * Writes go through the graph handle and are serialised inside the library.
 */
#ifndef STRATA_H
#define STRATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STRATA_API __attribute__((visibility("default")))
#else
#define STRATA_API
#endif

typedef struct strata_graph strata_graph;  /* the writable database */
typedef struct strata_view strata_view;    /* an immutable snapshot */
typedef struct strata_value strata_value;  /* a value handed across the API */
typedef struct strata_node_iter strata_node_iter;
typedef struct strata_edge_iter strata_edge_iter;
typedef struct strata_result strata_result;   /* a Cypher query's result */
typedef struct strata_cancel strata_cancel;   /* a request to stop queries */
typedef struct strata_stmt strata_stmt;       /* a prepared Cypher statement */

/* A node or relationship id: its slot index.  Slots are reused after a
   delete, most recently freed first — but not by the transaction or
   statement that deleted them: until it ends, its creates take new ids. */
typedef uint64_t strata_id;
/* An interned label, relationship type or property key. */
typedef uint32_t strata_token;

#define STRATA_ANY_TYPE UINT32_MAX   /* neighbour filter: every type */

typedef enum strata_status {
    STRATA_OK = 0,
    STRATA_ENOMEM,      /* out of memory; nothing changed */
    STRATA_EINVAL,      /* invalid argument (NULL handle, bad enum, bad name) */
    STRATA_ENOTFOUND,   /* no such node, relationship or token */
    STRATA_ETYPE,       /* a value of the wrong type */
    STRATA_ECONNECTED,  /* a node to delete still has relationships */
    STRATA_ECONSTRAINT, /* a constraint would be violated */
    STRATA_EFULL,       /* the id space is exhausted */
    STRATA_EIO,         /* the operating system refused a file operation */
    STRATA_ECORRUPT,    /* a file is not a strata file, or is damaged */
    STRATA_EINTERRUPTED,/* strata_interrupt stopped the call */
} strata_status;

typedef enum strata_token_kind {
    STRATA_LABEL = 0,
    STRATA_RELTYPE,
    STRATA_KEY,
} strata_token_kind;

typedef enum strata_direction {
    STRATA_OUT = 1,     /* relationships that start at the node */
    STRATA_IN = 2,      /* relationships that end at the node */
    STRATA_BOTH = 3,    /* both; a self-loop is reported once */
} strata_direction;

typedef enum strata_type {
    STRATA_NULL = 0,
    STRATA_BOOL,
    STRATA_INT,
    STRATA_FLOAT,
    STRATA_STRING,
    STRATA_LIST,
    STRATA_MAP,
    STRATA_NODE,
    STRATA_RELATIONSHIP,
    STRATA_PATH,
    STRATA_DATE,
    STRATA_LOCALTIME,
    STRATA_TIME,
    STRATA_LOCALDATETIME,
    STRATA_DATETIME,
    STRATA_DURATION,
} strata_type;

/* A short, static description of a status. */
STRATA_API const char *strata_errstr(strata_status s);

/* ---- the graph ------------------------------------------------------ */

/* A new, empty in-memory graph. */
STRATA_API strata_status strata_graph_new(strata_graph **out);
/* Frees the graph handle.  Views still held stay valid until released. */
STRATA_API void strata_graph_free(strata_graph **g);
/* The message of the last failed call on g (empty when none). */
STRATA_API const char *strata_errmsg(const strata_graph *g);

/* Tokens: intern creates the token if needed; names are 1..65535 bytes of
   UTF-8 without NUL (STRATA_EINVAL otherwise, the message naming the first
   bad byte; strata_token_lookup likewise). */
STRATA_API strata_status strata_token_intern(strata_graph *g, strata_token_kind kind,
                                             const char *name, strata_token *out);

/* ---- writes ----------------------------------------------------------- */

/* Creates a node with the given labels (labels may be NULL when n == 0;
   repeated labels count once). */
STRATA_API strata_status strata_node_create(strata_graph *g, const strata_token *labels,
                                            size_t n, strata_id *out);
/* Deletes a node that has no relationships (STRATA_ECONNECTED otherwise). */
STRATA_API strata_status strata_node_delete(strata_graph *g, strata_id node);
/* Deletes a node and every relationship attached to it. */
STRATA_API strata_status strata_node_detach_delete(strata_graph *g, strata_id node);
STRATA_API strata_status strata_node_add_label(strata_graph *g, strata_id node,
                                               strata_token label);
STRATA_API strata_status strata_node_remove_label(strata_graph *g, strata_id node,
                                                  strata_token label);

STRATA_API strata_status strata_rel_create(strata_graph *g, strata_id start, strata_id end,
                                           strata_token type, strata_id *out);
STRATA_API strata_status strata_rel_delete(strata_graph *g, strata_id rel);

/* Sets a property.  The value is borrowed and copied into the graph.
   Storable values: booleans, integers, floats, strings, temporal values,
   and lists of those (no nulls, no nesting); setting null removes the
   property.  Anything else
   is STRATA_ETYPE. */
STRATA_API strata_status strata_node_set(strata_graph *g, strata_id node, strata_token key,
                                         const strata_value *val);
STRATA_API strata_status strata_node_remove(strata_graph *g, strata_id node, strata_token key);
STRATA_API strata_status strata_rel_set(strata_graph *g, strata_id rel, strata_token key,
                                        const strata_value *val);
STRATA_API strata_status strata_rel_remove(strata_graph *g, strata_id rel, strata_token key);

/* ---- statements and transactions ------------------------------------- */

/* A statement groups writes into one atomic unit: strata_statement_end
   with commit false undoes every write since strata_statement_begin — the
   graph, its free lists (the next ids handed out) and every index end
   exactly as before.  Readers taking views while a statement is open get
   the state before it (at most waiting out a replay of the statement's
   writes so far, once); the writes become visible when it commits.
   Rolling back cannot fail. */
STRATA_API strata_status strata_statement_begin(strata_graph *g);
STRATA_API strata_status strata_statement_end(strata_graph *g, bool commit);

/* A transaction groups statements (and single writes): readers see none of
   it until strata_commit, which publishes it in O(1); strata_rollback drops
   it whole.  Inside a transaction a failing statement can be rolled back
   alone.  While a statement or transaction is open, every write through
   this graph handle joins it: drive them from one thread. */
STRATA_API strata_status strata_begin(strata_graph *g);
STRATA_API strata_status strata_commit(strata_graph *g);
STRATA_API strata_status strata_rollback(strata_graph *g);
STRATA_API bool strata_in_transaction(strata_graph *g);
/* A view of what the writer sees: an open transaction's writes included.
   Not while a statement is open (STRATA_EINVAL).  Holding it makes the
   next write fork, as with any view. */
STRATA_API strata_status strata_snapshot_own(strata_graph *g, strata_view **out);

/* ---- views and reads ------------------------------------------------ */

/* An immutable view of the last committed state, in O(1): never an open
   statement's or transaction's writes. */
STRATA_API strata_status strata_snapshot(strata_graph *g, strata_view **out);
STRATA_API void strata_view_release(strata_view **v);
/* A second view of the same state as v (for another thread, say): O(1). */
STRATA_API strata_status strata_view_clone(strata_view *v, strata_view **out);
STRATA_API const char *strata_view_errmsg(const strata_view *v);

STRATA_API strata_status strata_token_lookup(strata_view *v, strata_token_kind kind,
                                             const char *name, strata_token *out);
STRATA_API strata_status strata_token_name(strata_view *v, strata_token_kind kind,
                                           strata_token tok, const char **name);
/* How many tokens of a kind the graph has interned: tokens are dense, so
   0 .. count-1 each have a name (strata_token_name), in order of first
   interning.  The catalog only grows and is shared by every view of the
   graph, so the count may include tokens interned after v was taken, and
   names that nothing carries any more.  0 for a NULL view or bad kind. */
STRATA_API uint32_t strata_token_count(strata_view *v, strata_token_kind kind);

STRATA_API uint64_t strata_node_count(const strata_view *v);
STRATA_API uint64_t strata_rel_count(const strata_view *v);

STRATA_API bool strata_node_exists(const strata_view *v, strata_id node);
STRATA_API bool strata_rel_exists(const strata_view *v, strata_id rel);

/* Copies up to cap label tokens (sorted) into buf; *n is the node's label
   count, which may exceed cap. */
STRATA_API strata_status strata_node_labels(strata_view *v, strata_id node,
                                            strata_token *buf, size_t cap, size_t *n);
STRATA_API strata_status strata_node_has_label(strata_view *v, strata_id node,
                                               strata_token label, bool *out);
/* Copies up to cap property keys (sorted by token) into buf; *n is the
   node's property count. */
STRATA_API strata_status strata_node_keys(strata_view *v, strata_id node,
                                          strata_token *buf, size_t cap, size_t *n);
STRATA_API strata_status strata_rel_keys(strata_view *v, strata_id rel,
                                         strata_token *buf, size_t cap, size_t *n);
/* A new value: the property, or null when the node has none under key. */
STRATA_API strata_status strata_node_get(strata_view *v, strata_id node, strata_token key,
                                         strata_value **out);
STRATA_API strata_status strata_rel_get(strata_view *v, strata_id rel, strata_token key,
                                        strata_value **out);
/* Like strata_node_get / strata_rel_get, but into an existing value handle
   (its previous value is released): no allocation, for tight read loops. */
STRATA_API strata_status strata_node_read(strata_view *v, strata_id node, strata_token key,
                                          strata_value *into);
STRATA_API strata_status strata_rel_read(strata_view *v, strata_id rel, strata_token key,
                                         strata_value *into);
/* Borrowed reads: *out points at the stored value itself (no retain, no
   copy, no allocation), or at a null value when the entity has nothing
   under key.  Read it with the strata_value_get_* calls; never free it.
   It stays valid, and unchanged whatever the writer does, as long as v or
   a clone of it lives: until then strings got from it stay valid too.
   For the tightest read loops (a property of a node found by an index). */
STRATA_API strata_status strata_node_peek(strata_view *v, strata_id node, strata_token key,
                                          const strata_value **out);
STRATA_API strata_status strata_rel_peek(strata_view *v, strata_id rel, strata_token key,
                                         const strata_value **out);
/* strata_node_peek for nodes[0..n) at once, the same key: out[i] is node
   i's value, or NULL when node i does not exist (not an error).  Batched,
   the reads' cache misses overlap (each one's slot, property record and
   string are fetched ahead of use): for many random reads on a big graph.
   Allocates nothing. */
STRATA_API strata_status strata_nodes_peek(strata_view *v, const strata_id *nodes, size_t n,
                                           strata_token key, const strata_value **out);
/* Any of start, end, type may be NULL. */
STRATA_API strata_status strata_rel_info(strata_view *v, strata_id rel, strata_id *start,
                                         strata_id *end, strata_token *type);
STRATA_API strata_status strata_node_degree(strata_view *v, strata_id node,
                                            strata_direction dir, strata_token type,
                                            uint64_t *out);

/* ---- branches and diff (docs/BRANCHES.md) ------------------------------ */

/* A new graph that starts at v's state, in O(1): it shares every chunk,
   adjacency block, property record, bitmap and index level with v and
   copies one only when either side writes it (what a write under a held
   view copies).  It has its own writer, statements, transactions, views,
   plan cache and save, inherits v's indices, constraints and LOAD CSV
   settings, and is not logged (a graph opened with strata_open logs only
   its own writes).  Branch a branch again; free the graphs in any order,
   on any thread.  A graph and all branches made from it, and from them,
   form one lineage: they share one token catalog (a name interned in one
   is known, unused, in the others) and their memory (strata_memstats). */
STRATA_API strata_status strata_branch(strata_view *v, strata_graph **out);

typedef enum strata_change_kind {
    STRATA_NODE_CREATED,            /* then its labels and properties, as added and set */
    STRATA_NODE_DELETED,            /* then its labels and properties, as removed */
    STRATA_LABEL_ADDED,
    STRATA_LABEL_REMOVED,
    STRATA_NODE_PROPERTY_SET,       /* old_value NULL when the node had none */
    STRATA_NODE_PROPERTY_REMOVED,
    STRATA_REL_CREATED,             /* then its properties, as set */
    STRATA_REL_DELETED,             /* then its properties, as removed */
    STRATA_REL_PROPERTY_SET,
    STRATA_REL_PROPERTY_REMOVED,
} strata_change_kind;

/* One difference.  Everything it points to is borrowed for the callback's
   duration. */
typedef struct strata_change {
    strata_change_kind kind;
    strata_id id;                  /* the node or relationship */
    strata_token token;            /* label, property key, or (REL_CREATED and
                                      REL_DELETED) relationship type */
    const char *name;              /* the token's name */
    strata_id start, end;          /* REL_CREATED, REL_DELETED */
    const strata_value *old_value; /* *_PROPERTY_SET (NULL when new), *_PROPERTY_REMOVED */
    const strata_value *new_value; /* *_PROPERTY_SET */
} strata_change;

/* Returns 0 to go on; anything else stops the diff, which then returns
   STRATA_EINTERRUPTED. */
typedef int (*strata_change_fn)(const strata_change *change, void *arg);

/* Calls fn for each difference that turns from's state into to's, where
   both are views of one lineage (the same graph at two times, or a graph
   and a branch of it, or two branches): relationships deleted first, then
   nodes (each node's changes together, in id order), then relationships
   created and changed, so applying the changes in order never leaves a
   relationship without its nodes.  Identity is by id: an id deleted and
   reused between the two states shows as what changed in it (for a
   relationship with other endpoints or type, as deleted and created).
   Costs what differs times log n: subtrees the two states share are
   skipped without being read.  STRATA_EINVAL (message on from) for views
   of unrelated graphs; STRATA_ENOMEM leaves both views as they were. */
STRATA_API strata_status strata_diff(strata_view *from, strata_view *to, strata_change_fn fn,
                                     void *arg);

/* ---- indices ---------------------------------------------------------- */

typedef enum strata_index_kind {
    STRATA_INDEX_HASH = 0,   /* equality lookups */
    STRATA_INDEX_RANGE,      /* equality and ordered ranges (<, <=, >, >=) */
    STRATA_INDEX_UNIQUE,     /* a constraint: at most one entity per key */
} strata_index_kind;

typedef uint32_t strata_index;   /* an index handle; never reused */

#define STRATA_INDEX_NAME_MAX 64   /* bytes of an index name, the NUL included */

typedef struct strata_index_info {
    char name[STRATA_INDEX_NAME_MAX];   /* unique among the graph's indices */
    strata_index_kind kind;
    bool relationships;      /* over relationships of a type, not nodes */
    strata_token token;      /* the label, or the relationship type */
    size_t nkeys;
    strata_token keys[8];
    uint64_t entries;        /* entities indexed */
    uint32_t depth;          /* delta levels above the base (see ARCHITECTURE.md) */
} strata_index_info;

/* Creates an index over the entities carrying token (a label, or a
   relationship type when relationships is true) on 1..8 property keys (two
   or more make a composite index, keyed by the list of values).  Existing
   entities are indexed; a unique index over data that already holds a
   duplicate fails with STRATA_ECONSTRAINT and changes nothing.  An index of
   the same kind on the same keys is STRATA_EINVAL (*out names it). */
STRATA_API strata_status strata_index_create(strata_graph *g, strata_index_kind kind,
                                             bool relationships, strata_token token,
                                             const strata_token *keys, size_t nkeys,
                                             strata_index *out);
/* The same with a name (1..63 bytes, unique among the graph's indices, else
   STRATA_EINVAL); NULL or "" generates one: index_N or constraint_N. */
STRATA_API strata_status strata_index_create_named(strata_graph *g, strata_index_kind kind,
                                                   bool relationships, strata_token token,
                                                   const strata_token *keys, size_t nkeys,
                                                   const char *name, strata_index *out);
STRATA_API strata_status strata_index_drop(strata_graph *g, strata_index idx);
/* The index named name (STRATA_ENOTFOUND when none). */
STRATA_API strata_status strata_index_find(strata_view *v, const char *name, strata_index *out);
/* Every index of the view, up to cap handles into buf; *n is the count. */
STRATA_API strata_status strata_indexes(strata_view *v, strata_index *buf, size_t cap,
                                        size_t *n);
STRATA_API strata_status strata_index_info_get(strata_view *v, strata_index idx,
                                               strata_index_info *out);

/* ---- iteration (an iterator holds its view's state alive) -------------- */

/* Iterators from indices yield node ids, or relationship ids for indices
   over relationships; strata_rels_by_type yields relationship ids. */

/* The entities whose key equals key[0..nkey) (nkey = the index's key
   count), in (key, id) order.  Equality is Cypher's: 1 matches 1.0. */
STRATA_API strata_status strata_index_lookup(strata_view *v, strata_index idx,
                                             const strata_value *const *key, size_t nkey,
                                             strata_node_iter **out);
/* Point lookup without an iterator: the smallest entity id under key
   (STRATA_ENOTFOUND when none) — for a unique index, the one.  Allocates
   nothing. */
STRATA_API strata_status strata_index_get(strata_view *v, strata_index idx,
                                          const strata_value *const *key, size_t nkey,
                                          strata_id *out);
/* strata_index_get on a single-key index without a value handle: the key
   an integer, or a string of len bytes (well-formed UTF-8, else
   STRATA_EINVAL).  Equality is the same (an integer key matches 1.0 as
   1).  Allocates nothing, except a string key longer than 13 bytes, which
   is copied once (STRATA_ENOMEM when that fails). */
STRATA_API strata_status strata_index_get_int(strata_view *v, strata_index idx, int64_t key,
                                              strata_id *out);
STRATA_API strata_status strata_index_get_string(strata_view *v, strata_index idx,
                                                 const char *key, size_t len, strata_id *out);
/* What a batched lookup writes for a key it does not find. */
#define STRATA_NO_ID UINT64_MAX
/* strata_index_get_int for keys[0..n) at once: out[i] is key i's id, or
   STRATA_NO_ID (a miss is not an error); *found counts the hits.  Allocates
   nothing. */
STRATA_API strata_status strata_index_get_ints(strata_view *v, strata_index idx,
                                               const int64_t *keys, size_t n, strata_id *out,
                                               size_t *found);
/* The entities of a single-key index whose value lies between lo and hi
   (either may be NULL for an open end, not both), in value order.  Bounds
   must be numbers, strings or booleans; values of another type than the
   bounds' are never in range, as in Cypher's comparisons. */
STRATA_API strata_status strata_index_range(strata_view *v, strata_index idx,
                                            const strata_value *lo, bool lo_inclusive,
                                            const strata_value *hi, bool hi_inclusive,
                                            strata_node_iter **out);
/* The relationships of a type, in id order. */
STRATA_API strata_status strata_rels_by_type(strata_view *v, strata_token type,
                                             strata_node_iter **out);

/* Every node, in id order. */
STRATA_API strata_status strata_nodes(strata_view *v, strata_node_iter **out);
/* The nodes carrying a label, in id order. */
STRATA_API strata_status strata_nodes_by_label(strata_view *v, strata_token label,
                                               strata_node_iter **out);
/* The nodes carrying at least one of labels[0..n) (1 <= n <=
   STRATA_ANY_LABEL_MAX), each once, in id order: a label disjunction's
   union.  Labels may repeat; an unknown token is STRATA_ENOTFOUND. */
#define STRATA_ANY_LABEL_MAX 16
STRATA_API strata_status strata_nodes_by_any_label(strata_view *v, const strata_token *labels,
                                                   size_t n, strata_node_iter **out);
STRATA_API bool strata_node_iter_next(strata_node_iter *it, strata_id *node);
STRATA_API void strata_node_iter_free(strata_node_iter **it);

/* The relationships at a node in a direction, of one type or of
   STRATA_ANY_TYPE; each step yields the relationship and the node at its
   other end.  They come by type token, outgoing before incoming within a
   type, then by relationship id (a self-loop once under STRATA_BOTH). */
STRATA_API strata_status strata_neighbours(strata_view *v, strata_id node,
                                           strata_direction dir, strata_token type,
                                           strata_edge_iter **out);
STRATA_API bool strata_edge_iter_next(strata_edge_iter *it, strata_id *rel, strata_id *other);
STRATA_API void strata_edge_iter_free(strata_edge_iter **it);

/* ---- values ----------------------------------------------------------- */

/* Constructors return NULL when out of memory. */
STRATA_API strata_value *strata_value_null(void);
STRATA_API strata_value *strata_value_bool(bool b);
STRATA_API strata_value *strata_value_int(int64_t i);
STRATA_API strata_value *strata_value_float(double f);
/* Copies len bytes (which need not be NUL-terminated).  Strings are text:
   NULL, like out of memory, when s[0..len) is not well-formed UTF-8
   (overlong forms, UTF-16 surrogates and code points above U+10FFFF are
   not; U+0000 is). */
STRATA_API strata_value *strata_value_string(const char *s, size_t len);
/* Lists and maps nest at most STRATA_VALUE_MAX_DEPTH levels, counting
   themselves ([[1]] is 2), as every value Cypher builds or a file holds;
   strata_value_list and strata_value_map return NULL for a deeper one. */
#define STRATA_VALUE_MAX_DEPTH 1000
/* A list of copies of items[0..n) (borrowed); NULL when out of memory or
   too deep. */
STRATA_API strata_value *strata_value_list(const strata_value *const *items, size_t n);
STRATA_API void strata_value_free(strata_value **v);

STRATA_API strata_type strata_value_type(const strata_value *v);
STRATA_API strata_status strata_value_get_bool(const strata_value *v, bool *out);
STRATA_API strata_status strata_value_get_int(const strata_value *v, int64_t *out);
STRATA_API strata_status strata_value_get_float(const strata_value *v, double *out);
/* Borrowed bytes (NUL-terminated), valid while v lives. */
STRATA_API strata_status strata_value_get_string(const strata_value *v, const char **s,
                                                 size_t *len);
STRATA_API size_t strata_value_list_len(const strata_value *v);
/* A new value holding a copy of element i (O(1) for strings). */
STRATA_API strata_status strata_value_list_get(const strata_value *v, size_t i,
                                               strata_value **out);
/* Maps (string keys, sorted by key bytes).  strata_value_map copies
   keys[0..n) and vals[0..n) (borrowed); a repeated key keeps its last
   value; NULL when out of memory, when a key is not UTF-8, or when too
   deep (STRATA_VALUE_MAX_DEPTH). */
STRATA_API strata_value *strata_value_map(const char *const *keys,
                                          const strata_value *const *vals, size_t n);
STRATA_API size_t strata_value_map_len(const strata_value *v);
/* Borrowed element i of a list, or entry i of a map (its key, NUL-
   terminated, in *key when key is not NULL): no allocation, valid while v
   lives.  NULL when v is not a list (map) or i is out of range. */
STRATA_API const strata_value *strata_value_list_at(const strata_value *v, size_t i);
STRATA_API const strata_value *strata_value_map_at(const strata_value *v, size_t i,
                                                   const char **key);
/* Entry i: the key (borrowed, NUL-terminated, valid while v lives) and a
   new value holding a copy of its value (key or val may be NULL). */
STRATA_API strata_status strata_value_map_entry(const strata_value *v, size_t i,
                                                const char **key, strata_value **val);
/* The id of a node or relationship value (STRATA_ETYPE otherwise). */
STRATA_API strata_status strata_value_get_id(const strata_value *v, strata_id *out);
/* Temporal values, decoded.  Which fields count depends on type:
     STRATA_DATE           days
     STRATA_LOCALTIME      nanos
     STRATA_TIME           nanos, offset
     STRATA_LOCALDATETIME  days, nanos
     STRATA_DATETIME       days, nanos, offset, zone
   days: the local date as days since 1970-01-01 (proleptic Gregorian);
   nanos: local nanoseconds of the day (0 .. 86,399,999,999,999); offset:
   seconds east of UTC; zone: an IANA zone name ("Europe/Stockholm") or ""
   for a fixed offset. */
typedef struct strata_temporal {
    strata_type type;
    int64_t days;
    int64_t nanos;
    int32_t offset;
    char zone[64];
} strata_temporal;

/* A duration as Cypher keeps it: each component with its own sign, nanos
   in 0 .. 999,999,999 added to seconds. */
typedef struct strata_duration {
    int64_t months, days, seconds;
    int32_t nanos;
} strata_duration;

/* Decodes a temporal value (STRATA_ETYPE for any other type). */
STRATA_API strata_status strata_value_get_temporal(const strata_value *v, strata_temporal *out);
/* A new temporal value from t.  For a DATETIME with a zone name the offset
   is the zone's at that local time (t->offset is ignored; a local time in
   a daylight-saving gap moves forward).  STRATA_EINVAL for a field out of
   range, an unknown zone or a type that is not temporal; STRATA_ENOMEM. */
STRATA_API strata_status strata_value_temporal(const strata_temporal *t, strata_value **out);
STRATA_API strata_status strata_value_get_duration(const strata_value *v, strata_duration *out);
/* A new duration value (nanos outside 0 .. 999,999,999: STRATA_EINVAL). */
STRATA_API strata_status strata_value_duration(const strata_duration *d, strata_value **out);
/* The ISO 8601 text Cypher prints for a temporal or duration value
   ("2024-05-01T10:00+02:00[Europe/Stockholm]", "P1M2DT3.5S"), like
   snprintf: the length it needs (buf holds at most cap - 1 bytes and a
   NUL); -1 for a value of any other type. */
STRATA_API int strata_value_temporal_text(const strata_value *v, char *buf, size_t cap);

/* Paths: a path of length n (relationships) has nodes 0..n and
   relationships 0..n-1, relationship i joining nodes i and i + 1. */
STRATA_API size_t strata_value_path_len(const strata_value *v);
STRATA_API strata_status strata_value_path_node(const strata_value *v, size_t i, strata_id *out);
STRATA_API strata_status strata_value_path_rel(const strata_value *v, size_t i, strata_id *out);

/* openCypher equality (=): 1 for true, 0 for false, -1 for null. */
STRATA_API int strata_value_equals(const strata_value *a, const strata_value *b);

/* ---- Cypher ------------------------------------------------------------ */

/* What a statement changed (openCypher's counters). */
typedef struct strata_query_stats {
    uint64_t nodes_created, nodes_deleted;
    uint64_t relationships_created, relationships_deleted;
    uint64_t properties_set, labels_added, labels_removed;
} strata_query_stats;

/* Why a statement failed.  code is a category (SyntaxError,
   SemanticError, TypeError, ArgumentError, EntityNotFound,
   ConstraintVerificationFailed, OutOfMemory, ...); detail an openCypher
   TCK detail code or NULL; line and column (1-based) point into the
   query text.  Every string is owned by the result. */
typedef struct strata_query_error {
    const char *code;
    const char *detail;
    const char *message;
    uint32_t line, column;
} strata_query_error;

/* Runs one Cypher statement (a trailing ';' is allowed).  params is a map
   value (borrowed for the call) or NULL.  *out always gets a new result
   (NULL only when out of memory before anything ran), to be freed with
   strata_result_free: on success with its rows, on failure with its error
   (strata_result_error); the status is then STRATA_EINVAL (a query, type
   or argument error), STRATA_ECONSTRAINT or STRATA_ENOMEM, and
   strata_errmsg(g) holds the message too.
   A statement that writes is atomic: it runs whole before strata_query
   returns, inside strata_statement_begin/end, and one that fails part way
   leaves the graph exactly as before (inside a transaction, only the
   statement is undone).
   A statement that only reads is computed as its result is read (a lazy
   cursor): strata_query runs it up to its first rows, and
   strata_result_next pulls the rest in batches, so a large result never
   sits in memory whole.  An error met later (a division by zero in row
   3000, an interrupt) ends the reading: strata_result_next returns false
   and strata_result_error tells why — check it after the last row.
   Either way the result holds a view of the state the statement read (or
   left), its own writes included, until freed: reading continues from
   that state however the graph changes, and holding a result across
   later writes makes them fork, as any view does.  Statements run on the
   writer: call from the thread that drives the graph's writes; a result
   is read by one thread at a time. */
STRATA_API strata_status strata_query(strata_graph *g, const char *text,
                                      const strata_value *params, strata_result **out);
/* Runs a read-only Cypher statement on a view, from any thread, while the
   writer goes on: the query sees exactly the view's state, and its result
   is read lazily as above.  A statement that would write (CREATE, MERGE,
   SET, REMOVE, DELETE, schema commands) fails with SemanticError before
   reading anything.  The result holds a view of the same state.  Errors
   are reported through the result only (a view has no message buffer for
   them). */
STRATA_API strata_status strata_view_query(strata_view *v, const char *text,
                                           const strata_value *params, strata_result **out);
/* Evaluates text as exactly one Cypher expression — no clause, no second
   expression or statement after it — on the view v, read-only, with
   params (a map, borrowed, or NULL).  *out gets a new result as
   strata_view_query gives: one column "value" and one row on success; on
   failure its error, positioned in text (anything beyond one expression
   is a SyntaxError).  It cannot write: the graph is untouched whatever
   text holds. */
STRATA_API strata_status strata_view_eval(strata_view *v, const char *text,
                                          const strata_value *params, strata_result **out);
/* strata_view_query, watching cancel (borrowed for the call; the result
   keeps its own reference while it is read, so the caller may free its
   handle at once).  Once strata_cancel_request(cancel) is called, the
   query fails with the code "Interrupted" at its next check, whether it
   is still inside this call (computing its first rows) or being read
   through the result.  A request made before the call is honoured: the
   query fails at its first check. */
STRATA_API strata_status strata_view_query_cancellable(strata_view *v, const char *text,
                                                       const strata_value *params,
                                                       strata_cancel *cancel,
                                                       strata_result **out);
/* Whether text is a statement that writes — one strata_view_query would
   refuse: an updating clause, a schema command or a procedure that
   writes — in *writes, without running it.  Reads the graph's plan cache
   and nothing of its state, so any thread may call it (a client routing
   statements between views and the writer).  STRATA_EINVAL when text is
   not a statement (run it for the error), STRATA_ENOMEM. */
STRATA_API strata_status strata_query_writes(strata_graph *g, const char *text, bool *writes);
/* The column names (owned by the result) and their count. */
STRATA_API size_t strata_result_columns(const strata_result *r, const char *const **names);
/* The next row: true and *row pointing at ncolumns values (borrowed, valid
   until the next call or strata_result_free), or false at the end. */
STRATA_API bool strata_result_next(strata_result *r, const strata_value *const **row);
STRATA_API void strata_result_stats(const strata_result *r, strata_query_stats *out);
/* The error of a failed statement (owned by the result), or NULL. */
STRATA_API const strata_query_error *strata_result_error(const strata_result *r);
/* A view of the graph right after the statement (borrowed, owned by the
   result): read the nodes and relationships of the rows through it.
   NULL for a failed statement. */
STRATA_API strata_view *strata_result_view(const strata_result *r);
STRATA_API void strata_result_free(strata_result **r);
/* Stops this result alone: its remaining rows are not computed, and
   strata_result_next returns false with strata_result_error giving the
   code "Interrupted".  Safe from another thread while one thread reads r
   (the one call on a result that is), and from a signal handler; r must
   stay alive until the call returns (free it only after).  A result
   already read to its end, or one that failed, is left as it is. */
STRATA_API void strata_result_interrupt(strata_result *r);

/* ---- prepared statements ------------------------------------------------- */

/* A statement parsed and checked once, run as often as wanted with its
   parameters bound one by one: what strata_query does, less what it would
   redo on every call (finding the text in the plan cache, building the
   parameter map, allocating the result, and for a read-only statement
   whose clauses can run again — MATCH, and WITH / RETURN without
   aggregation, DISTINCT, ORDER BY, SKIP or LIMIT — opening its clauses).
   Each run reads the state it is given exactly as strata_query would,
   choosing its index seeks and scans on that state, so graph writes,
   indexes made or dropped and constraints between runs are seen; runs
   report the same errors as strata_query.  A statement and its result
   are used by one thread at a time (prepare one per thread); the checked
   tree they share with other statements is immutable.

   strata_prepare: on g's writer thread, as strata_query; the statement
   runs on g (strata_stmt_execute) or on any view of g.  A syntax or
   semantic error is reported here: *out NULL, STRATA_EINVAL (or
   STRATA_ENOMEM) and strata_errmsg(g) "SyntaxError: ... (line L, column
   C)".  strata_view_prepare: from any thread holding v, for runs on views
   of v's graph; its errors go to strata_view_errmsg(v).  Free a statement
   prepared on g before g. */
STRATA_API strata_status strata_prepare(strata_graph *g, const char *text, strata_stmt **out);
STRATA_API strata_status strata_view_prepare(strata_view *v, const char *text,
                                             strata_stmt **out);
/* Binds $name (written without the $) to a copy of value, for every run
   until bound again.  A parameter never bound is missing, as from
   strata_query's map (ArgumentError MissingParameter when read).
   STRATA_EINVAL, with strata_stmt_errmsg, when the text names no such
   parameter or a run's result is still open (free it first). */
STRATA_API strata_status strata_stmt_bind(strata_stmt *s, const char *name,
                                          const strata_value *value);
STRATA_API strata_status strata_stmt_bind_int(strata_stmt *s, const char *name, int64_t value);
/* Every parameter missing again; STRATA_EINVAL while a result is open. */
STRATA_API strata_status strata_stmt_clear_bindings(strata_stmt *s);
/* Runs s on the graph it was prepared on (strata_stmt_execute) or on the
   view v of the same graph (strata_stmt_execute_view; STRATA_EINVAL for a
   view of another graph).  *out gets the run's result, as strata_query's
   and read the same way, but it belongs to the statement: no allocation
   per run, and strata_result_free hands it back (it stays valid until
   then).  A statement runs once at a time: while its result is out,
   running or binding again fails with STRATA_EINVAL (*out NULL) and
   strata_stmt_errmsg says why. */
STRATA_API strata_status strata_stmt_execute(strata_stmt *s, strata_result **out);
STRATA_API strata_status strata_stmt_execute_view(strata_stmt *s, strata_view *v,
                                                  strata_result **out);
/* The message of the statement's last failed bind or misuse (a run's own
   errors are in its result). */
STRATA_API const char *strata_stmt_errmsg(const strata_stmt *s);
/* Frees s; with a result still out, s goes when that result is freed. */
STRATA_API void strata_stmt_free(strata_stmt **s);

/* ---- LOAD CSV's file access ---------------------------------------------- */

/* What LOAD CSV may read.  The default (a new or loaded graph) is what an
   embedding program running its own queries wants: any file the process
   can read.  A program running queries it did not write sets an import
   directory or disables LOAD CSV. */
typedef struct strata_csv_options {
    /* LOAD CSV fails with SecurityError before opening anything. */
    bool disabled;
    /* NULL: paths are the process's own.  Else a directory: file:///a/b.csv
       and a/b.csv both name DIR/a/b.csv (an absolute path is taken
       relative to DIR, as in Neo4j), and a path that leads out of DIR
       through `..` or a symbolic link fails with SecurityError. */
    const char *import_dir;
    /* The longest field LOAD CSV accepts, in bytes; 0 for the default
       (STRATA_CSV_FIELD_MAX).  A longer one is IOError naming file and
       line. */
    size_t field_max;
} strata_csv_options;

#define STRATA_CSV_FIELD_MAX ((size_t)16 << 20)   /* 16 MiB */

/* Sets LOAD CSV's access for g and every view and result of it (opts is
   borrowed; import_dir is resolved now to its canonical path, and must
   name an existing directory: STRATA_ENOTFOUND or STRATA_EINVAL
   otherwise, and nothing changes).  Call before running queries, not
   while queries of g or its views run. */
STRATA_API strata_status strata_set_csv_options(strata_graph *g, const strata_csv_options *opts);
/* The options in force (import_dir canonical, borrowed from g until the
   next strata_set_csv_options; field_max never 0). */
STRATA_API strata_status strata_get_csv_options(strata_graph *g, strata_csv_options *out);

/* ---- bulk import from CSV files (README.md, "Bulk import") ------------

   strata_import reads node files, then relationship files, with the header
   conventions of Neo4j's bulk importer (name:ID(Space), :LABEL,
   :START_ID(Space), :END_ID(Space), :TYPE, name:int, name:string[], ...,
   :IGNORE), and adds what they hold to g through the direct write calls,
   as one unit: outside a transaction it runs as one (committed at the
   end), inside an open one as a statement of it.  A failure undoes it
   whole — g is exactly as it was (only tokens interned on the way stay,
   as after a failed query) — and the report says which file, line and
   column, and what; strata_errmsg(g) holds "FILE:LINE: what" too.  Ids
   (ID, START_ID, END_ID) live in an id table of the import's own: a
   relationship file names nodes of the same import. */

/* One group of files: the first file's first record is the header, the
   files after it hold records only.  Borrowed for the call. */
typedef struct strata_import_source {
    bool relationships;          /* a relationship group, else a node group */
    const char *const *files;    /* nfiles >= 1 paths */
    size_t nfiles;
    /* Node groups: labels every node of the group gets, beside those of a
       :LABEL column (labels may be NULL when nlabels is 0). */
    const char *const *labels;
    size_t nlabels;
    /* Relationship groups: the type of a record whose :TYPE field is empty
       or absent; NULL for none (such a record is then a bad row). */
    const char *type;
} strata_import_source;

/* What a bad row was (strata_import_options.on_bad_row) or why an import
   failed (strata_import_report).  file is one of the options' paths (or
   NULL when the failure is not in a file); line is the line the record
   starts on (0 when none); column the field, from 1 (0 when the fault is
   not one field's). */
typedef struct strata_import_fault {
    const char *file;
    uint64_t line;
    uint32_t column;
    const char *message;    /* without file and line; valid for the callback / the report */
} strata_import_fault;

typedef struct strata_import_progress {
    const char *file;       /* the file being read */
    uint64_t offset, size;  /* bytes read of it, and its size (0 when unknown) */
    uint64_t rows;          /* records read so far, every file */
} strata_import_progress;

typedef struct strata_import_options {
    const strata_import_source *sources;   /* every node group loads before any relationship group */
    size_t nsources;
    char delimiter;          /* between fields; 0: ',' */
    char array_delimiter;    /* between the elements of an array field and the labels of :LABEL; 0: ';' */
    char quote;              /* quotes a field; 0: '"' (doubled inside a quoted field) */
    /* A bad row — a field that does not parse as its column's type, an
       unknown START_ID or END_ID, a node id seen before in its id space,
       the wrong number of fields, no type, bytes that are not UTF-8 —
       fails the import (false) or is left out and counted (true).
       Malformed CSV, a bad header and failures of the graph always fail. */
    bool skip_bad_rows;
    /* Called for each row skipped (may be NULL). */
    void (*on_bad_row)(void *ctx, const strata_import_fault *fault);
    /* Called about every 65,536 records and at the start of each file (may
       be NULL); returning false stops the import, which then fails with
       STRATA_EINTERRUPTED as strata_interrupt(g) makes it. */
    bool (*on_progress)(void *ctx, const strata_import_progress *progress);
    void *ctx;
    /* The longest field accepted, in bytes; 0: STRATA_CSV_FIELD_MAX. */
    size_t field_max;
} strata_import_options;

/* The counts are of what was read; after a failure, of what was read
   before it (none of which was kept). */
typedef struct strata_import_report {
    uint64_t nodes, relationships, properties;
    uint64_t rows;           /* records read (header lines not counted) */
    uint64_t bad_rows;       /* records skipped (skip_bad_rows) */
    uint64_t id_table_bytes; /* the most the id table held */
    /* The failure (file NULL, line 0 and message "" on success). */
    strata_import_fault fault;
    char message[512];       /* fault.message points here */
} strata_import_report;

/* Imports the sources into g (report may be NULL).  Statuses: STRATA_EIO
   (a file cannot be opened or read), STRATA_EINVAL (malformed CSV, a bad
   header or options, a row of the wrong shape, bytes that are not UTF-8,
   no relationship type), STRATA_ETYPE (a field that does not parse as its
   column's type), STRATA_ENOTFOUND (an unknown START_ID or END_ID),
   STRATA_ECONSTRAINT (a node id seen before in its id space, or a write
   the graph's constraints refuse), STRATA_EINTERRUPTED, STRATA_ENOMEM.
   Call from the thread that drives g's writes. */
STRATA_API strata_status strata_import(strata_graph *g, const strata_import_options *opts,
                                       strata_import_report *report);

/* ---- persistence --------------------------------------------------------- */

/* A graph is saved to one file and loaded back whole (docs/FORMAT.md has
   the format).  Ids come back exactly — deleted slots stay holes and are
   reused in the same order — as do tokens, labels, properties, index
   handles and definitions (indices are rebuilt on load).  The neighbours
   of a node of one direction and type come back in relationship id order.

   A save writes a temporary file next to path, fsyncs it, renames it over
   path and fsyncs the directory: a crash at any moment leaves either the
   old file or the new one, whole, and a failed save leaves the old file
   as it was.  path is borrowed. */

/* Saves the last committed state: takes a view (strata_snapshot) and
   writes it, so writes may go on, from other threads too, while it saves.
   STRATA_EIO (message on g naming the file and the system's reason) or
   STRATA_ENOMEM on failure. */
STRATA_API strata_status strata_save(strata_graph *g, const char *path);
/* Saves what view v shows (the message of a failure is on v). */
STRATA_API strata_status strata_save_view(strata_view *v, const char *path);
/* Loads a saved graph into a new graph handle (*out, owned by the caller,
   freed with strata_graph_free).  Everything is checked before the graph
   is handed out; on any failure *out is NULL and nothing is left
   allocated.  Statuses: STRATA_ENOTFOUND (no such file), STRATA_EIO (not
   readable, or not a regular file), STRATA_ECORRUPT (not a strata file,
   a newer format version, truncated or damaged), STRATA_ENOMEM. */
STRATA_API strata_status strata_load(const char *path, strata_graph **out);
/* strata_load, with the message of a failure (there is no graph to hold
   it) copied into err[0..errlen) and NUL-terminated, e.g. "truncated.db:
   section NODE at byte 1234: checksum mismatch".  err may be NULL when
   errlen is 0; on success err holds "". */
STRATA_API strata_status strata_load_ex(const char *path, strata_graph **out, char *err,
                                        size_t errlen);

/* ---- durability: a graph on a path, with its write-ahead log ----------- */

/* A graph opened on a path is a directory holding a snapshot (the file
   strata_save writes) and log segments (docs/FORMAT.md, "The log").  Each
   committed write call, statement or transaction appends one record to the
   log before the commit returns and before new views see it.  A failed
   log write fails that commit with STRATA_EIO and rolls it back; the graph
   stays writable.  Schema changes (strata_index_create/drop) are logged too.
   A write call outside a statement runs as a statement of its own (so a
   strata_snapshot_own from another thread meanwhile gets STRATA_EINVAL;
   strata_snapshot does not wait for it).  Tokens interned but used by no
   committed write are not kept.
   strata_graph_free on such a graph closes it as strata_close does. */
typedef enum strata_sync {
    STRATA_SYNC_FULL = 0,   /* fsync before each commit returns (the default) */
    STRATA_SYNC_NORMAL,     /* a background thread fsyncs at most every 100 ms */
    STRATA_SYNC_OFF,        /* the operating system writes when it likes */
} strata_sync;

/* What opening found (filled by strata_open when options->report is set). */
typedef struct strata_open_report {
    uint64_t snapshot_seq;      /* the sequence number the snapshot holds */
    uint64_t records_replayed;
    uint64_t last_seq;          /* of the last record kept */
    uint64_t torn_bytes;        /* a torn tail cut off the last segment */
    uint64_t truncated_bytes;   /* cut at corruption (truncate_corrupt) */
    char message[512];          /* what was cut, and where; "" when nothing */
} strata_open_report;

typedef struct strata_open_options {
    strata_sync sync;
    /* A corrupt record before the log's tail: false (the default) refuses
       to open, naming the file and offset; true cuts the log there. */
    bool truncate_corrupt;
    /* Checkpoint automatically once the log holds this many bytes; 0: the
       default (64 MiB or the snapshot's size, whichever is larger). */
    uint64_t checkpoint_bytes;
    strata_open_report *report;   /* may be NULL */
    char *err;                    /* a failure's message, when errlen > 0 */
    size_t errlen;
} strata_open_options;

/* Opens (creating when missing) the database at path into *out.  opts may
   be NULL (sync full).  Recovers: loads the snapshot, replays the log after
   it, truncates a torn tail.  A second process opening the same path gets
   STRATA_EIO ("... is in use by another process").  STRATA_ECORRUPT names
   the file and byte offset of a damaged record. */
STRATA_API strata_status strata_open(const char *path, const strata_open_options *opts,
                                     strata_graph **out);
/* Syncs the log and frees the graph (NULLs *g). */
STRATA_API strata_status strata_close(strata_graph **g);
/* Writes a new snapshot from a view (writers go on meanwhile), starts a new
   log segment and removes what the snapshot made obsolete.  STRATA_EINVAL
   on a graph without a path or while a statement or transaction is open. */
STRATA_API strata_status strata_checkpoint(strata_graph *g);
/* Whether g was opened on a path (has a log). */
STRATA_API bool strata_is_durable(strata_graph *g);

/* The log of a graph opened on a path. */
typedef struct strata_log_stats {
    uint64_t log_bytes;      /* written since the last snapshot */
    uint64_t snapshot_seq;   /* the sequence number the snapshot holds */
    uint64_t last_seq;       /* of the last committed record (snapshot_seq: none since) */
} strata_log_stats;

/* Fills *out; STRATA_EINVAL for a graph without a log. */
STRATA_API strata_status strata_log_stats_get(strata_graph *g, strata_log_stats *out);

/* ---- statistics -------------------------------------------------------- */

typedef struct strata_memstats {
    uint64_t graph_bytes;   /* bytes held by the storage of the graph's lineage: it,
                               its branches and theirs (strata_branch), all live
                               versions */
    uint64_t private_bytes; /* bytes the committed state holds that no other
                               version shares (neither the views of older states
                               nor a branch): what freeing the graph would give
                               back once its views are gone.  O(those bytes). */
    uint64_t nodes;         /* live nodes in the last committed state */
    uint64_t relationships; /* live relationships in the last committed state */
    uint64_t node_slots;    /* allocated node slots, live or free */
    uint64_t rel_slots;
} strata_memstats;

STRATA_API strata_status strata_memory_stats(strata_graph *g, strata_memstats *out);

/* Cross-checks every structure of the view (slots, free lists, adjacency
   against relationships, indices against labels and properties) in
   O(graph); STRATA_ECONSTRAINT with a message naming the first
   inconsistency. */
STRATA_API strata_status strata_integrity_check(strata_view *v);

/* Whether the graph's current state shares structure with a version a view
   may still read: true from the first write under a held view until the
   first write after every such view is released. */
STRATA_API bool strata_is_forked(strata_graph *g);

/* ---- interrupting queries -------------------------------------------------

   A query checks for a request to stop at every 1024th step of any loop
   it runs — rows produced, steps of a pattern walk, elements of a list
   comprehension, quantifier, reduce, range(), list and string functions,
   matches of a pattern comprehension — so it stops within a short, bounded
   time of the request whatever it is doing.  It then fails with the code
   "Interrupted"; a statement that wrote is rolled back whole.  There are
   three ways to ask, each an atomic store, safe from any thread and from a
   signal handler:

   - strata_interrupt(g): the statement running on the graph's writer
     (strata_query), or the lazy result it is being read through.  One
     flag per graph: a statement that starts clears it.  It does not touch
     queries on views, so stopping the writer never stops readers.
   - strata_cancel: a handle the caller makes and hands to
     strata_view_query_cancellable; a request stops every query watching
     that handle (one handle per query to stop one alone) and nothing
     else.  It exists because a view query may run long inside
     strata_view_query, before any result handle has been returned.
   - strata_result_interrupt(r): one result already returned (above). */

/* Asks the query running on g (if any) to stop: it fails with the code
   "Interrupted" and its statement is rolled back whole.  Safe to call from
   a signal handler or another thread; a query that starts afterwards
   clears the request. */
STRATA_API void strata_interrupt(strata_graph *g);

/* How many threads a read may use (docs/QUERY.md, "Parallel counting",
   "Parallel reads"):
   0 (the default) one per processor, 1 none besides the caller's.  The
   setting belongs to the graph and holds for queries on its views. */
STRATA_API void strata_set_query_threads(strata_graph *g, unsigned threads);

/* A new cancellation handle, not requested (*out owned by the caller,
   freed with strata_cancel_free); STRATA_ENOMEM. */
STRATA_API strata_status strata_cancel_new(strata_cancel **out);
/* Requests every query watching c to stop.  The request stays until
   strata_cancel_reset.  Async-signal-safe. */
STRATA_API void strata_cancel_request(strata_cancel *c);
/* Clears the request so the handle can serve the next query. */
STRATA_API void strata_cancel_reset(strata_cancel *c);
/* Whether a request is pending. */
STRATA_API bool strata_cancel_requested(const strata_cancel *c);
/* Drops the caller's reference; results still watching c keep theirs. */
STRATA_API void strata_cancel_free(strata_cancel **c);

/* ---- graph algorithms (docs/ALGORITHMS.md) ---------------------------- */

typedef struct strata_algo_result strata_algo_result;

/* Runs the algorithm name ("pagerank", "wcc", ... — strata_algo_name
   lists them) on the view, configured by config: NULL or a map (see
   strata_value_map) with the keys docs/ALGORITHMS.md lists, as Cypher's
   CALL algo.NAME({...}) takes them.  The view is read once, at the start;
   the run uses the configured number of threads (`threads`, default one
   per core) and may be interrupted with strata_interrupt on the view's
   graph (STRATA_EINTERRUPTED; like a query, a run clears an earlier
   request when it starts).  A bad configuration is STRATA_EINVAL, a
   source or target that does not exist STRATA_ENOTFOUND; the message is
   strata_view_errmsg(v).  *out is a new result the caller frees with
   strata_algo_result_free; it holds nothing of the view. */
STRATA_API strata_status strata_algo_run(strata_view *v, const char *name,
                                         const strata_value *config, strata_algo_result **out);
/* The name of algorithm i, for i from 0 until NULL. */
STRATA_API const char *strata_algo_name(size_t i);
/* Rows: one per reported node. */
STRATA_API size_t strata_algo_result_rows(const strata_algo_result *r);
/* The numbers of each row after its node (a column for "score",
   "component", "distance" ...): their count, names (static strings) and
   whether a column holds integers. */
STRATA_API size_t strata_algo_result_columns(const strata_algo_result *r);
STRATA_API const char *strata_algo_result_column(const strata_algo_result *r, size_t col);
STRATA_API bool strata_algo_result_column_integer(const strata_algo_result *r, size_t col);
/* The filled arrays, borrowed (valid until the result is freed): nodes[i]
   is row i's node, values[i * columns + j] its column j. */
STRATA_API const strata_id *strata_algo_result_nodes(const strata_algo_result *r);
STRATA_API const double *strata_algo_result_values(const strata_algo_result *r);
/* A cursor over the same rows: the next row's node and its numbers
   (values has room for strata_algo_result_columns numbers; either may be
   NULL); false after the last. */
STRATA_API bool strata_algo_result_next(strata_algo_result *r, strata_id *node, double *values);
STRATA_API void strata_algo_result_free(strata_algo_result **r);

#ifdef __cplusplus
}
#endif

#endif
