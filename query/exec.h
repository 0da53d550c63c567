/*
 * exec — the executor's shared state: rows, scopes, errors, the graph.
 *
 * A query runs clause by clause.  Each clause is one operator (a file of
 * its own: op_match.c, op_project.c, ...).  Runs of reading clauses
 * (MATCH, UNWIND, WITH, RETURN — aggregation, DISTINCT and ORDER BY
 * included, project.h) stream as one pipeline (pipeline.h); the others
 * read a materialised row set and write the next one, which is the
 * simplest route to openCypher's clause semantics for updates (a clause
 * sees every effect of the clauses before it, none of its own): memory
 * proportional to the rows between two clauses.
 *
 * Rows.  Every variable the planner binds gets a slot for the whole query
 * (WITH gives its aliases new slots); a row is `width` values.  A scope
 * maps the names visible at a point of the query to slots.
 *
 * Reading the graph.  The executor runs on the writer's thread inside a
 * statement (strata_statement_begin/end), so the writer's own version
 * (graph_query_version: an open transaction's working version, else the
 * current one) is the state it must read, its own writes included.
 * strata_snapshot_own is refused inside a statement, so exec keeps a
 * strata_view on the stack that *borrows* that version without a
 * reference (exec_view re-reads the pointer before every use, because a
 * write under a held view may fork and replace it).  No
 * reference means no fork: a statement that only reads costs nothing.
 * Iterators do take a reference while they live; operators drain them
 * into arrays before any write runs.
 *
 * Errors.  Every function that can fail returns 0 or -1; on -1 the first
 * error is in exec->err (category, TCK detail, message, position) and the
 * caller releases what it owns and returns -1 too.  The statement is then
 * rolled back whole by strata_query.
 */
#ifndef STRATA_QUERY_EXEC_H
#define STRATA_QUERY_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/graph_handle.h"
#include "query/ast.h"
#include "storage/value.h"

typedef struct qerror {
    const char *category;   /* static; NULL while no error */
    const char *detail;     /* static TCK detail code or NULL */
    char message[256];
    uint32_t line, column;
} qerror;

typedef struct qstats {
    uint64_t nodes_created, nodes_deleted;
    uint64_t rels_created, rels_deleted;
    uint64_t props_set, labels_added, labels_removed;
} qstats;

typedef struct binding {
    const char *name;
    size_t len;
    size_t slot;
} binding;

typedef struct scope {
    binding *b;
    size_t n, cap;
    mem_ctx *m;             /* what b came from (scope_free frees it there);
                               NULL with b set: the statement's arena */
} scope;

typedef struct rowset {
    value *cells;           /* nrows * width, owned */
    size_t nrows, cap;      /* cap in rows */
    size_t width;
    mem_ctx *m;             /* what cells came from (rowset_free frees it
                               there); NULL with cells set: the arena's */
} rowset;

/* Per-statement scratch: what a statement's stages, plans, scopes and
   row buffers need while it lives, carved from chunks and given back
   all at once when the statement's result is freed.  The first chunk is
   inside the result (query.c), so a statement that needs no more — a
   cached point lookup — allocates nothing beyond its result.  Freeing a
   block of it one at a time does nothing (exec_free).
   Invariant: the arena is only used where the number of blocks taken is
   bounded by the statement's text (opening clauses, a stage's first
   row), never once per row: work repeated per row — an EXISTS subquery
   (exec.nested), a pattern in an expression, a streaming LOAD CSV's
   batches (exec.no_arena) — takes its memory from the allocator, whose
   frees give it back. */
typedef struct arena_chunk arena_chunk;
typedef struct exec_arena {
    char *first;            /* the chunk inside the result */
    size_t first_cap;
    char *base;             /* the chunk being filled */
    size_t used, cap;
    arena_chunk *chunks;    /* chunks from the allocator, newest first */
    size_t taken;           /* bytes handed out (tests, measurements) */
} exec_arena;

/* A parameter of a prepared statement (strata_stmt_bind): its name (the
   statement's tree's, NUL-terminated) and, once bound, its value. */
typedef struct bound_param {
    const char *name;
    size_t len;
    bool set;
    value v;
} bound_param;

typedef struct profile profile;   /* query/profile.h */
typedef struct regex_cache regex_cache;   /* query/regex.h */

typedef struct exec {
    strata_graph *g;        /* the writer's graph; NULL for a query on a view */
    strata_view view;       /* borrows the writer's version (see above), or
                               the version of the view a query reads */
    mem_ctx *m;             /* mem_scratch(): query values */
    const value *params;    /* a map or NULL (borrowed) */
    const bound_param *bound;   /* or a prepared statement's parameters */
    size_t nbound;
    qerror err;
    qstats stats;
    size_t width;           /* slots per row, grows while planning */
    /* The statement's instant, read at its first use: date(),
       datetime.statement() ... agree within one statement. */
    bool clock_read;
    int64_t clock_sec, clock_nsec;
    uint64_t *used_rels;    /* relationships bound by the MATCH in progress
                               (relationship uniqueness) */
    size_t nused, capused;
    size_t used_base;       /* the pattern in progress owns used_rels[used_base..] */
    profile *prof;          /* EXPLAIN / PROFILE, else NULL */
    /* Interrupt requests, any of which stops the statement: the graph's
       strata_interrupt flag (NULL on a view), the result's own
       strata_result_interrupt flag, and the caller's strata_cancel (or
       NULL).  Checked at every EXEC_TICK_EVERY-th step of any loop. */
    atomic_bool *interrupt;
    atomic_bool *result_interrupt;
    atomic_bool *cancel;
    uint32_t ticks;         /* loop steps since the statement began (wraps) */
    bool lazy;              /* read-only: the final pipeline runs as the
                               result is read (pipeline.h) */
    bool no_input;          /* EXPLAIN: the query runs over no rows */
    regex_cache *regexes;   /* =~'s compiled patterns, or NULL */
    /* While a stage opens: its clause and the clause that consumes its
       rows (the next stage's, or the one after the pipeline, or NULL), so
       a MATCH can tell when only distinct rows matter (op_reach.c,
       reach_distinct_ok; set by query.c and pipeline_open). */
    const cypher_ast_node *run_last, *run_next;
    /* Inside an expression's subquery (EXISTS { }): such clauses run
       once per outer row, where planning a join would cost more than it
       saves. */
    unsigned nested;
    /* The statement's arena (NULL: none, as for a join worker's copy of
       the executor), and the count of the per-row work in progress that
       must not use it (see exec_arena). */
    exec_arena *arena;
    unsigned no_arena;
    /* The statement neither writes, loads CSV nor calls a procedure that
       writes (query.c): its pipelines may be read on several threads
       (parallel.h). */
    bool reads_only;
    /* A parallel worker's copy of the executor: it never splits its work
       further (parallel_threads is 1). */
    bool parallel_worker;
} exec;

/* ---- the statement's arena ---- */
void exec_arena_init(exec_arena *a, void *first, size_t size);
/* Gives back the chunks taken from m (the first one is the caller's). */
void exec_arena_free(exec_arena *a, mem_ctx *m);
/* A block of size bytes from the statement's arena where it may be used,
   else from x->m; NULL when out of memory (no error recorded).  *owner
   (may be NULL) gets x->m for a block from the allocator, NULL for one
   from the arena. */
void *exec_alloc(exec *x, size_t size, mem_ctx **owner);
void *exec_calloc(exec *x, size_t size);
/* Frees a block from exec_alloc / exec_calloc: nothing for the arena's. */
void exec_free(exec *x, void *p);

/* The view to read with: the writer's current version, borrowed (or the
   view the query was given). */
strata_view *exec_view(exec *x);

/* Records the first error; returns -1.  n (may be NULL) gives the
   position. */
int exec_fail(exec *x, const cypher_ast_node *n, const char *category, const char *detail,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int exec_oom(exec *x);
/* The error for a failed value_list_from / value_map_from / value_path_from
   whose result code is rc: the nesting limit (VALUE_TOO_DEEP) or out of
   memory.  Returns -1. */
int exec_value_fail(exec *x, const cypher_ast_node *at, int rc);
/* Reads the statement's clock unless it has been read: date() and the
   like agree within a statement. */
void exec_read_clock(exec *x);
int exec_check_interrupt(exec *x);   /* -1 with "Interrupted" once asked to stop */
/* ArgumentError "<what> too large: n ..., the limit is max"; -1. */
int exec_too_large(exec *x, const cypher_ast_node *at, const char *what, uint64_t n,
                   uint64_t max);

/* One step of a loop whose length depends on the data (a comprehension,
   a quantifier, reduce, range(), a list or string function, a pattern
   comprehension's matches).  The count is the statement's, not the
   loop's, so nested short loops are checked as often as one long one:
   one check per EXEC_TICK_EVERY steps, whatever the nesting. */
#define EXEC_TICK_EVERY 1024u
static inline int exec_tick(exec *x)
{
    return ++x->ticks % EXEC_TICK_EVERY != 0 ? 0 : exec_check_interrupt(x);
}

/* n steps at once, for a loop that only copies (a list's elements): one
   check before it when the count crosses a multiple of EXEC_TICK_EVERY. */
static inline int exec_tick_n(exec *x, size_t n)
{
    uint32_t before = x->ticks;
    x->ticks += (uint32_t)n;
    if (n < EXEC_TICK_EVERY && before / EXEC_TICK_EVERY == x->ticks / EXEC_TICK_EVERY)
        return 0;
    return exec_check_interrupt(x);
}

/* The most elements a list built by a query may hold (range(), list
   concatenation, split()): beyond it the statement fails with
   ArgumentError "list too large" instead of filling memory.  16 bytes an
   element: 160 MB. */
#define QUERY_LIST_MAX 10000000u
/* The most bytes a string built by a query may hold (concatenation,
   replace()): ArgumentError "string too large" beyond. */
#define QUERY_STRING_MAX (256u << 20)
/* An error from the C API, mapped to a category. */
int exec_status(exec *x, const cypher_ast_node *n, strata_status s);

/* ---- scopes ---- */
int scope_add(exec *x, scope *s, const char *name, size_t len, size_t *slot);
/* The slot of name, or -1 when not in scope. */
long scope_find(const scope *s, const char *name, size_t len);
int scope_copy(exec *x, const scope *from, scope *to);
/* Appends b as is (no new slot), shadowing an earlier binding of its name. */
int scope_push(exec *x, scope *s, const binding *b);
void scope_free(scope *s);
/* Whether a binding is an operator's hidden slot (its name starts with a
   NUL byte, which no query can spell): RETURN * and WITH * skip it. */
bool scope_name_hidden(const char *name, size_t len);

/* ---- row sets ---- */
void rowset_init(rowset *r, size_t width);
/* Appends a row of r->width values, consuming them (the cells are left
   null). */
int rowset_push(exec *x, rowset *r, value *row);
/* Room for rows rows from the statement's arena where it may be used (a
   rowset kept for the statement's life); grows from the allocator after. */
int rowset_reserve(exec *x, rowset *r, size_t rows);
/* Releases the rows, keeping the room for the next ones. */
void rowset_clear(rowset *r);
value *rowset_row(const rowset *r, size_t i);
void rowset_free(rowset *r);

/* ---- expressions (eval.c) ---- */

/* A local binding of a comprehension, quantifier or reduce. */
typedef struct local_var {
    const char *name;
    size_t len;
    value v;                    /* borrowed */
    const struct local_var *up;
} local_var;

/* Values standing in for sub-expressions (by node): the aggregate results
   when projecting a group, the projected items in a sort key after
   aggregation or DISTINCT. */
typedef struct agg_values {
    const cypher_ast_node **calls;
    const value *vals;
    size_t n;
} agg_values;

typedef struct evalctx {
    exec *x;
    const scope *sc;
    const value *row;
    const local_var *locals;
    const agg_values *aggs;     /* or NULL */
} evalctx;

/* Evaluates e; *out is a new value. */
int eval(const evalctx *c, const cypher_ast_node *e, value *out);
/* Ternary truth of a predicate: TRUE, FALSE or NULL (a non-boolean is a
   TypeError). */
int eval_predicate(const evalctx *c, const cypher_ast_node *e, tri *out);

/* Whether e contains an aggregate call (not looking into nested
   comprehension bodies' scopes — aggregates there are an error anyway). */
bool expr_has_aggregate(const cypher_ast_node *e);
/* Whether e calls an aggregate function (the table is in functions.c). */
bool is_aggregate_call(const cypher_ast_node *e);
/* Whether a and b are written alike (same canonical form); false when out
   of memory. */
bool expr_same(exec *x, const cypher_ast_node *a, const cypher_ast_node *b);

/* Reading entities. */
int entity_property(exec *x, const cypher_ast_node *at, const value *ent, const char *key,
                    size_t klen, value *out);
/* The token of name, a label or key written in a cached plan: looked up
   by name once, then read from *cache (the AST node's token_plus1; see
   ast.h).  False when no such token exists yet (a later write may intern
   it, so that is looked up again next time). */
bool exec_cached_token(exec *x, _Atomic uint32_t *cache, strata_token_kind kind,
                       const cypher_ast_str *name, strata_token *tok);
/* The same for a name a write interns (CREATE, SET labels): interned on
   the writer's graph once, then read from *cache. */
strata_status exec_cached_intern(exec *x, _Atomic uint32_t *cache, strata_token_kind kind,
                                 const char *name, strata_token *tok);
/* The same with the key's token resolved (no lookup by name). */
int entity_property_token(exec *x, const cypher_ast_node *at, const value *ent,
                          strata_token tok, value *out);
int entity_properties_map(exec *x, const value *ent, value *out);
int node_labels_list(exec *x, uint64_t node, value *out);
/* Every index of the view, however many: *ids (allocated from x->m, NULL
   when there are none; free with exec_index_list_free) and *n.  -1 when
   out of memory. */
int exec_index_list(exec *x, strata_index **ids, size_t *n);
void exec_index_list_free(exec *x, strata_index **ids);
int make_string(exec *x, const char *s, size_t len, value *out);
/* Converts a parameter / map value for storage as a property: checks the
   storable types (TypeError otherwise). */
int storable_check(exec *x, const cypher_ast_node *at, const value *v);

/* ---- patterns in expressions (eval_pattern.c) ---- */

/* A pattern predicate (a PATH): whether the pattern matches with the
   variables of c bound; *out is a boolean. */
int eval_pattern_predicate(const evalctx *c, const cypher_ast_node *path, value *out);
/* [pattern WHERE p | result]: the list of result over every match. */
int eval_pattern_comprehension(const evalctx *c, const cypher_ast_node *e, value *out);
/* EXISTS { ... }: whether the subquery yields a row; *out is a boolean. */
int eval_exists_subquery(const evalctx *c, const cypher_ast_node *e, value *out);

/* ---- functions (functions.c) ---- */
int function_call(const evalctx *c, const cypher_ast_node *call, value *args, size_t nargs,
                  value *out);
/* toInteger of a string (the text up to its first NUL): false when it
   gives null. */
bool string_to_integer(const char *s, int64_t *out);
/* Whether a function of this name exists (case-insensitive). */
bool function_known(const char *name, size_t len);

/* ---- clauses (op_*.c) ---- */
int op_load_csv(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out);
/* The same for the LOAD CSV at q's clause i, a batch of rows at a time:
   each takes every batch rows (and the rest at the end), owning them; 0
   or -1 stops the load.  When the clauses after it have a bulk shape
   (load_csv_fast.h) they run without rows, and each is not called. */
typedef int (*load_batch_fn)(exec *x, rowset *rows, void *ctx);
int op_load_csv_stream(exec *x, const cypher_ast_node *q, size_t i, scope *sc, rowset *in,
                       size_t batch, load_batch_fn each, void *ctx);
/* linenumber() and file(): the line and file of the LOAD CSV row in scope
   (op_load_csv.c), null outside one. */
int load_csv_linenumber(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                        value *out);
int load_csv_file(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out);
/* WITH and RETURN over a materialised row set (a pipeline of one stage,
   project.h); for RETURN *cols gets the column names (arena strings of
   the tree). */
int op_project(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out,
               scope *result_cols);
int op_create(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out);
/* The labels of CREATE's node pattern n interned into labels (room for
   each), tokens cached on the pattern; -1 after the error is set. */
int create_labels(exec *x, const cypher_ast_node *n, strata_token *labels);
int op_merge(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out);
int op_set(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in);
int op_remove(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in);
int op_delete(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in);
/* CALL: cols (or NULL) gets the result's columns when the CALL ends the
   query.  call_check: the procedure exists and yields what is named. */
int op_call(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out,
            scope *cols);
int call_check(exec *x, const cypher_ast_node *clause);
/* The index of the field called name among fields[0..nfields), or -1. */
long call_field_index(const char *const *fields, size_t nfields, const cypher_ast_str *name);
/* Binds what a CALL yields — the YIELD items, or every field without
   YIELD — to new slots of sc: column i reads field[i] (an index into
   fields) into slot[i]; *n columns, at most max. */
int call_bind_yields(exec *x, const cypher_ast_node *cl, const char *const *fields,
                     size_t nfields, size_t max, scope *sc, long *field, size_t *slot, size_t *n);

/* Shared by CREATE and MERGE: creates the pattern parts for one row,
   binding new variables into row (slots from sc). */
int create_pattern_row(exec *x, const cypher_ast_node *part, const scope *sc, value *row);
/* Shared by SET and MERGE actions: one SET item on one row. */
int set_item_row(exec *x, const cypher_ast_node *item, const scope *sc, value *row);
/* Matching one pattern part against one row: calls emit for each match
   with the row extended (slots from sc). */
typedef int (*match_emit)(exec *x, value *row, void *ctx);
int match_part_row(exec *x, const cypher_ast_node *part, const scope *sc, size_t in_width,
                   const cypher_ast_node *where, value *row, match_emit emit, void *ctx);
/* Whether part matches at least once with the variables of row bound
   (a pattern predicate): *found.  Searches breadth first where that gives
   the same answer (op_reach.c). */
int match_part_exists(exec *x, const cypher_ast_node *part, const scope *sc, size_t in_width,
                      value *row, bool *found);
/* Whether node / relationship id carries the labels and the property map
   of pattern element el (evaluated against row). */
int pattern_entity_ok(exec *x, const cypher_ast_node *el, const scope *sc, const value *row,
                      bool is_node, uint64_t id, bool *ok);

/* ---- semantic analysis (semantic.c) ---- */
int semantic_check(exec *x, const cypher_ast_node *query);
/* CREATE INDEX / CREATE CONSTRAINT (op_schema.c); runs outside a
   statement. */
int run_schema(exec *x, const cypher_ast_node *cmd);

#endif
