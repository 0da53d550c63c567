/*
 * ast — the syntax tree of an openCypher 9 statement.
 *
 * One node type, cypher_ast_node: a kind from the CYPHER_AST_KINDS list, the
 * source position where the node's text starts, and a payload chosen by
 * the kind.  The kind list is an X-macro whose third column names the
 * payload member a kind uses; ast.c builds the name table, the printer
 * table and the child enumerators from that one list (printers and
 * enumerators are chosen by payload member), so a kind's name, payload,
 * printer and children cannot drift apart, and a kind added without them
 * does not compile.
 *
 * Ownership.  Every node, list and string of a tree lives in the tree's
 * arena (a chain of blocks allocated through one mem_ctx); the tree is
 * freed whole by cypher_ast_free().  Strings are decoded (escapes undone),
 * NUL-terminated and may contain NUL bytes (use the length).  Nodes are
 * immutable once the parser returns them; later passes annotate through
 * their own side tables.
 *
 * Invariants:
 *   1. Every node has a position (offset, line, column) inside the text it
 *      was parsed from; line and column are 1-based.
 *   2. The tree is a tree: no node has two parents.
 *   3. Its depth is at most CYPHER_AST_MAX_DEPTH, so recursive passes
 *      (printer, semantic analysis, planner) cannot overflow the stack.
 *      Length is not depth: a run of one precedence's operators is one
 *      BINARY_CHAIN node, a list or a comparison chain one node, however
 *      many operands they hold.
 *
 * Canonical form (cypher_ast_print): an S-expression, one list per node,
 * `(head fields... children...)` where the head is the kind's name, the
 * operator for BINARY and UNARY, or a spelling that carries a flag
 * (optional-match, union-all, detach-delete, on-create / on-match, asc /
 * desc, all / any / none / single, explain / profile, `=` for a named path
 * and shortestPath / allShortestPaths); variables and literals print as
 * atoms, a plain path part and an unaliased item as what they hold.
 * Names print bare (backtick-quoted when not plain identifiers, with
 * control bytes escaped as \uXXXX), strings double-quoted with C escapes,
 * floats with a '.' or an exponent, an absent slice bound as _.  The
 * output is always one line of printable text.  Tests compare against it,
 * so it is stable.
 */
#ifndef STRATA_QUERY_AST_H
#define STRATA_QUERY_AST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/mem.h"

/* Nesting deeper than this is refused by the parser ("too deeply nested"),
   never overflowing the stack. */
#define CYPHER_AST_MAX_DEPTH 500

/* X(KIND, printed name, payload member) */
#define CYPHER_AST_KINDS(X)                                              \
    /* statements */                                                     \
    X(STATEMENT, "statement", statement)                                 \
    X(UNION, "union", union_)                                            \
    X(QUERY, "query", list)                                              \
    /* clauses */                                                        \
    X(MATCH, "match", match)                                             \
    X(UNWIND, "unwind", unwind)                                          \
    X(WITH, "with", projection)                                          \
    X(RETURN, "return", projection)                                      \
    X(CREATE, "create", list)                                            \
    X(MERGE, "merge", merge)                                             \
    X(MERGE_ACTION, "on", merge_action)                                  \
    X(SET, "set", list)                                                  \
    X(SET_PROPERTY, "set-property", assign)                              \
    X(SET_VARIABLE, "set-all", assign)                                   \
    X(SET_MERGE, "set-merge", assign)                                    \
    X(SET_LABELS, "set-labels", labels)                                  \
    X(REMOVE, "remove", list)                                            \
    X(REMOVE_PROPERTY, "remove-property", assign)                        \
    X(REMOVE_LABELS, "remove-labels", labels)                            \
    X(DELETE, "delete", delete_)                                         \
    X(CALL, "call", call)                                                \
    X(YIELD_ITEM, "yield-item", alias)                                   \
    X(LOAD_CSV, "load-csv", load_csv)                                    \
    X(CREATE_INDEX, "create-index", schema)                              \
    X(DROP_INDEX, "drop-index", schema)                                  \
    X(CREATE_CONSTRAINT, "create-constraint", schema)                    \
    X(DROP_CONSTRAINT, "drop-constraint", schema)                        \
    X(PROJECTION_ITEM, "as", alias)                                      \
    X(SORT_ITEM, "sort", sort)                                           \
    /* patterns */                                                       \
    X(PATTERN_PART, "pattern-part", part)                                \
    X(PATH, "path", list)                                                \
    X(NODE, "node", node)                                                \
    X(REL, "rel", rel)                                                   \
    X(LABEL, "label", name)                                              \
    /* expressions */                                                    \
    X(NULL_LIT, "null", name)                                            \
    X(BOOL_LIT, "bool", boolean)                                         \
    X(INT_LIT, "int", integer)                                           \
    X(FLOAT_LIT, "float", real)                                          \
    X(STRING_LIT, "string", name)                                        \
    X(PARAMETER, "parameter", name)                                      \
    X(VARIABLE, "variable", name)                                        \
    X(LIST, "list", list)                                                \
    X(MAP, "map", list)                                                  \
    X(MAP_ENTRY, "entry", entry)                                         \
    X(BINARY, "binary", binary)                                          \
    X(BINARY_CHAIN, "binary-chain", fold)                                \
    X(UNARY, "unary", unary)                                             \
    X(COMPARISON, "chain", chain)                                        \
    X(PROPERTY, "prop", property)                                        \
    X(HAS_LABELS, "has-labels", labels)                                  \
    X(SUBSCRIPT, "index", subscript)                                     \
    X(SLICE, "slice", subscript)                                         \
    X(FUNCTION, "fn", function)                                          \
    X(COUNT_STAR, "count-star", name)                                    \
    X(CASE, "case", case_)                                               \
    X(CASE_ALT, "when", entry)                                           \
    X(LIST_COMPREHENSION, "list-comp", comprehension)                    \
    X(PATTERN_COMPREHENSION, "pattern-comp", comprehension)              \
    X(QUANTIFIER, "quantifier", comprehension)                           \
    X(REDUCE, "reduce", reduce)                                          \
    X(EXISTS, "exists", unary)                                           \
    X(MAP_PROJECTION, "map-proj", map_projection)                        \
    X(MAP_PROJ_PROPERTY, "map-proj-property", name)                      \
    X(MAP_PROJ_ALL, "map-proj-all", name)

typedef enum cypher_ast_kind {
#define X(kind, name, member) CYPHER_AST_##kind,
    CYPHER_AST_KINDS(X)
#undef X
} cypher_ast_kind;

/* Operators: X(OP, printed name).  Binary and unary share one list. */
#define CYPHER_AST_OPS(X)                                                \
    X(OR, "or") X(XOR, "xor") X(AND, "and")                              \
    X(EQ, "=") X(NE, "<>") X(LT, "<") X(GT, ">") X(LE, "<=") X(GE, ">=") \
    X(STARTS_WITH, "starts-with") X(ENDS_WITH, "ends-with")              \
    X(CONTAINS, "contains") X(IN, "in") X(REGEX, "=~")                   \
    X(ADD, "+") X(SUB, "-") X(MUL, "*") X(DIV, "/") X(MOD, "%")          \
    X(POW, "^")                                                          \
    X(NOT, "not") X(NEG, "neg") X(POS, "pos")                            \
    X(IS_NULL, "is-null") X(IS_NOT_NULL, "is-not-null")

typedef enum cypher_ast_op {
#define X(op, name) CYPHER_OP_##op,
    CYPHER_AST_OPS(X)
#undef X
} cypher_ast_op;

typedef enum cypher_ast_mode {
    CYPHER_MODE_RUN = 0,
    CYPHER_MODE_EXPLAIN,
    CYPHER_MODE_PROFILE,
} cypher_ast_mode;

/* Relationship direction, read left to right as written. */
typedef enum cypher_ast_dir {
    CYPHER_DIR_NONE = 0,   /* -[]-   either way */
    CYPHER_DIR_RIGHT,      /* -[]->  */
    CYPHER_DIR_LEFT,       /* <-[]-  */
    CYPHER_DIR_BOTH,       /* <-[]-> either way, as openCypher reads it */
} cypher_ast_dir;

typedef enum cypher_ast_path_kind {
    CYPHER_PATH_PLAIN = 0,
    CYPHER_PATH_SHORTEST,
    CYPHER_PATH_ALL_SHORTEST,
} cypher_ast_path_kind;

typedef enum cypher_ast_quantifier {
    CYPHER_QUANT_ALL = 0,
    CYPHER_QUANT_ANY,
    CYPHER_QUANT_NONE,
    CYPHER_QUANT_SINGLE,
} cypher_ast_quantifier;

typedef struct cypher_ast_node cypher_ast_node;

typedef struct cypher_ast_list {
    cypher_ast_node **items;
    size_t count;
} cypher_ast_list;

/* A string in the arena: decoded, NUL-terminated, may hold NULs. */
typedef struct cypher_ast_str {
    const char *ptr;
    size_t len;
} cypher_ast_str;

struct cypher_ast_node {
    cypher_ast_kind kind;
    uint32_t line, column;    /* where the node's text starts, 1-based */
    size_t offset;            /* byte offset of the same */
    union {
        /* VARIABLE, PARAMETER, LABEL, STRING_LIT, MAP_PROJ_PROPERTY (the
           key); NULL_LIT, COUNT_STAR, MAP_PROJ_ALL (unused) */
        cypher_ast_str name;
        /* LABEL also as this (name is the same member): the token plus
           one once a match has looked it up, as property.token_plus1 */
        struct {
            cypher_ast_str name;
            _Atomic uint32_t token_plus1;
        } label;
        bool boolean;         /* BOOL_LIT */
        int64_t integer;      /* INT_LIT */
        double real;          /* FLOAT_LIT */
        /* QUERY (clauses), CREATE (pattern parts), SET and REMOVE (items),
           PATH (NODE, REL, NODE, ... NODE), LIST (items), MAP (MAP_ENTRY) */
        cypher_ast_list list;
        struct {
            cypher_ast_mode mode;
            cypher_ast_node *body;   /* QUERY, UNION or a schema command */
        } statement;
        struct {
            bool all;                /* UNION ALL (every link alike) */
            cypher_ast_list queries; /* QUERY, two or more */
        } union_;
        struct {
            bool optional;
            cypher_ast_list parts;   /* PATTERN_PART */
            cypher_ast_node *where;  /* or NULL */
        } match;
        struct {
            cypher_ast_node *expr;
            cypher_ast_node *alias;  /* VARIABLE */
        } unwind;
        /* WITH and RETURN */
        struct {
            bool distinct;
            bool star;               /* `*` (items may follow it) */
            cypher_ast_list items;   /* PROJECTION_ITEM */
            cypher_ast_list order;   /* SORT_ITEM */
            cypher_ast_node *skip, *limit, *where;   /* or NULL */
            /* What its items and ORDER BY aggregate, plus one, once the
               join's planner has looked (0: not yet; query/join_plan.c):
               a function of the tree alone, so a cached plan's threads
               store the same value */
            _Atomic uint8_t aggregates_plus1;
        } projection;
        struct {
            cypher_ast_node *part;   /* PATTERN_PART */
            cypher_ast_list actions; /* MERGE_ACTION */
        } merge;
        struct {
            bool on_create;          /* else ON MATCH */
            cypher_ast_list items;   /* SET_* */
        } merge_action;
        /* SET_PROPERTY (target PROPERTY), SET_VARIABLE and SET_MERGE
           (target VARIABLE), REMOVE_PROPERTY (target PROPERTY, value NULL) */
        struct {
            cypher_ast_node *target;
            cypher_ast_node *value;
        } assign;
        /* SET_LABELS, REMOVE_LABELS (subject VARIABLE); HAS_LABELS (any
           expression) */
        struct {
            cypher_ast_node *subject;
            cypher_ast_list labels;  /* LABEL */
        } labels;
        struct {
            bool detach;
            cypher_ast_list exprs;
        } delete_;
        struct {
            cypher_ast_str proc;      /* qualified: "db.labels" */
            bool has_args;            /* parentheses were written */
            cypher_ast_list args;
            bool has_yield;
            bool yield_star;
            cypher_ast_list yields;   /* YIELD_ITEM */
            cypher_ast_node *where;   /* or NULL */
        } call;
        /* PROJECTION_ITEM: expr AS alias (alias NULL when not written; text
           is the item's source text, the column name openCypher gives an
           unaliased item).  YIELD_ITEM: field (a VARIABLE naming the
           procedure's output) AS alias (or NULL). */
        struct {
            cypher_ast_node *expr;
            cypher_ast_node *alias;
            cypher_ast_str text;
        } alias;
        struct {
            cypher_ast_node *expr;
            bool descending;
        } sort;
        struct {
            bool with_headers;
            cypher_ast_node *source;
            cypher_ast_node *alias;       /* VARIABLE */
            cypher_ast_node *terminator;  /* STRING_LIT or NULL */
        } load_csv;
        /* CREATE_INDEX, DROP_INDEX, CREATE_CONSTRAINT, DROP_CONSTRAINT */
        struct {
            cypher_ast_str name;          /* ptr NULL when not given */
            bool if_exists;               /* IF NOT EXISTS / IF EXISTS */
            bool range;                   /* CREATE RANGE INDEX */
            cypher_ast_node *target;      /* NODE or REL with one label/type */
            cypher_ast_list keys;         /* PROPERTY of the target's variable */
        } schema;
        struct {
            cypher_ast_node *variable;    /* `p = ...`, or NULL */
            cypher_ast_path_kind kind;
            cypher_ast_node *path;        /* PATH */
        } part;
        struct {
            cypher_ast_node *variable;    /* or NULL */
            cypher_ast_list labels;       /* LABEL */
            bool labels_any;              /* (n:A|B): any of them, not all
                                             (two or more; MATCH only) */
            cypher_ast_node *properties;  /* MAP, PARAMETER or NULL */
        } node;
        struct {
            cypher_ast_dir dir;
            cypher_ast_node *variable;    /* or NULL */
            cypher_ast_list types;        /* LABEL; alternatives */
            bool var_length;              /* `*` written */
            bool has_min, has_max;        /* bounds written (`*2` sets both) */
            int64_t min, max;
            cypher_ast_node *properties;  /* MAP, PARAMETER or NULL */
        } rel;
        /* MAP_ENTRY: key (a string) and value; CASE_ALT: WHEN when THEN
           value (key unused) */
        struct {
            cypher_ast_str key;
            cypher_ast_node *when;
            cypher_ast_node *value;
            _Atomic uint32_t token_plus1;   /* key, as property.token_plus1 */
        } entry;
        struct {
            cypher_ast_op op;
            cypher_ast_node *lhs, *rhs;
        } binary;
        /* UNARY (NOT, NEG, POS, IS_NULL, IS_NOT_NULL); EXISTS (operand a
           QUERY or UNION: EXISTS { ... }; the pattern form is desugared to
           a QUERY with one MATCH) */
        struct {
            cypher_ast_op op;
            cypher_ast_node *operand;
        } unary;
        /* a < b <= c: operands.count == nops + 1 */
        struct {
            cypher_ast_list operands;
            cypher_ast_op *ops;
            size_t nops;
        } chain;
        /* BINARY_CHAIN: a run of two or more left-associative operators of
           one precedence, a + b - c + d, meaning (((a + b) - c) + d):
           operands.count == nops + 1 >= 3.  The parser makes one node of
           a run however long, so that a flat chain of 10,000 terms is one
           level deep, not 10,000 (invariant 3); it prints as the nested
           BINARY nodes it stands for, so the canonical form does not
           depend on it. */
        struct {
            cypher_ast_list operands;
            cypher_ast_op *ops;
            size_t nops;
        } fold;
        struct {
            cypher_ast_node *subject;
            cypher_ast_str key;
            /* The key's token plus one once an evaluation has looked it up
               (0: not yet, or no such key then).  Tokens are the graph's
               lineage's and never change meaning, and a cached plan
               belongs to one graph, so the first lookup serves every later
               row, view and thread (query/eval.c). */
            _Atomic uint32_t token_plus1;
        } property;
        /* SUBSCRIPT (index in from), SLICE (from and to, either NULL) */
        struct {
            cypher_ast_node *subject;
            cypher_ast_node *from, *to;
        } subscript;
        struct {
            cypher_ast_str name;          /* qualified: "db.labels" */
            bool distinct;
            cypher_ast_list args;
            /* The function's table entry once a call has looked it up
               (query/functions.c; 0: not yet): the tables are static, so
               the first lookup serves every later row and thread. */
            _Atomic uintptr_t resolved;
        } function;
        struct {
            cypher_ast_node *subject;     /* simple CASE, else NULL */
            cypher_ast_list alternatives; /* CASE_ALT */
            cypher_ast_node *otherwise;   /* ELSE, or NULL */
        } case_;
        /* LIST_COMPREHENSION: [variable IN source WHERE where | result];
           PATTERN_COMPREHENSION: [source WHERE where | result], source a
           PATTERN_PART (variable NULL); QUANTIFIER: quantifier(variable IN
           source WHERE where) (result NULL) */
        struct {
            cypher_ast_quantifier quantifier;
            cypher_ast_node *variable;
            cypher_ast_node *source;
            cypher_ast_node *where;       /* or NULL */
            cypher_ast_node *result;      /* or NULL */
        } comprehension;
        /* reduce(accumulator = init, variable IN source | result) */
        struct {
            cypher_ast_node *accumulator, *init;
            cypher_ast_node *variable, *source, *result;
        } reduce;
        /* subject {items}: items are MAP_PROJ_PROPERTY (.key), MAP_PROJ_ALL
           (.*), MAP_ENTRY (key: value) and VARIABLE (a variable's value
           under its name) */
        struct {
            cypher_ast_node *subject;     /* VARIABLE */
            cypher_ast_list items;
        } map_projection;
    } u;
};

/* A parsed statement: the root and the arena that holds it. */
typedef struct cypher_ast cypher_ast;

/* The root, a STATEMENT node. */
const cypher_ast_node *cypher_ast_root(const cypher_ast *ast);
/* Frees the whole tree and NULLs *ast; NULL and *ast == NULL are no-ops. */
void cypher_ast_free(cypher_ast **ast);

const char *cypher_ast_kind_name(cypher_ast_kind kind);
const char *cypher_ast_op_name(cypher_ast_op op);

/* Calls fn on each child of n in source order (lists item by item, NULL
   children skipped); stops at the first non-zero return and returns it. */
int cypher_ast_each_child(const cypher_ast_node *n,
                          int (*fn)(const cypher_ast_node *child, void *ctx), void *ctx);

/* Checks the invariants above on a tree parsed from text_len bytes: a
   STATEMENT root, known kinds, positions inside the text, depth within
   CYPHER_AST_MAX_DEPTH (*depth, when not NULL, gets the depth).  0 or -1.
   For tests. */
int cypher_ast_check(const cypher_ast *ast, size_t text_len, size_t *depth);

/* Renders n in the canonical form into a new NUL-terminated string
   allocated from m (*len excludes the NUL; free with mem_free(m, *out)).
   0, or -1 when out of memory (*out NULL). */
int cypher_ast_print(const cypher_ast_node *n, mem_ctx *m, char **out, size_t *len);

/* ---- construction (the parser's side) ------------------------------------ */

/* A new empty tree whose arena allocates from m (retained); NULL when out
   of memory. */
cypher_ast *cypher_ast_new(mem_ctx *m);
void cypher_ast_set_root(cypher_ast *ast, cypher_ast_node *root);
/* size bytes from the arena, zeroed, aligned for any node; NULL when out
   of memory. */
void *cypher_ast_alloc(cypher_ast *ast, size_t size);
/* A zeroed node of kind at the given position; NULL when out of memory. */
cypher_ast_node *cypher_ast_node_new(cypher_ast *ast, cypher_ast_kind kind, uint32_t line,
                                     uint32_t column, size_t offset);
/* Copies len bytes into the arena and NUL-terminates them; -1 when out of
   memory. */
int cypher_ast_strdup(cypher_ast *ast, const char *s, size_t len, cypher_ast_str *out);

#endif
