/*
 * join — a run of MATCH clauses as one join over its query graph
 * (join_plan.c plans it, op_join.c runs it).
 *
 * The walker (op_match.c) follows each pattern part as written, from one
 * of its two ends, part after part.  That is exact but blind: a cycle
 * (`(a)-->(b)-->(c)-->(a)`, a triangle spread over several MATCH
 * clauses) is closed only after every open path has been enumerated, and
 * a pattern whose rows are only counted is enumerated match by match.
 * The join sees the whole pattern instead:
 *
 *   - The query graph: one vertex per node variable (every occurrence,
 *     in every clause of the run, is the same vertex) and per anonymous
 *     node; one edge per relationship pattern, remembering its clause
 *     (relationship uniqueness holds per clause, so a run of k MATCH
 *     clauses has k uniqueness groups).
 *   - The order: vertices are bound one at a time.  Each vertex after the
 *     first is reached along one edge from a bound vertex (its driver)
 *     and every other edge to a bound vertex is checked at once (a cycle
 *     is closed by probing adjacency, not by walking on).  The start and
 *     the order minimise the estimated rows summed over the steps, from
 *     label counts and index estimates (plan_start) and fan-outs sampled
 *     from the version read.  A vertex no edge reaches from the bound
 *     ones is scanned (a cartesian product, as written).
 *   - WHERE is split into its conjuncts, each checked as soon as the
 *     variables it names are bound.
 *   - Counting: when the rows go straight into an aggregation that only
 *     counts (count(*), count(e)), vertices that nothing downstream names
 *     and that hang off the rest by one relationship (trees of them) are
 *     not enumerated: each row of the rest is passed on once with the
 *     number of ways to complete it, and those numbers are memoised per
 *     node.  `MATCH (a)-->(b)-->(c) RETURN count(*)` costs the
 *     relationships, not the paths.  A leaf named only by `x <> y` is
 *     counted too, less the ways it would equal y (jpair).
 *
 *   - Hash join: where the core's steps after some point bind a
 *     sub-pattern that reaches what was bound before only through one
 *     vertex (or a pair), and the rows arriving there repeat that
 *     vertex's node, the sub-pattern's matches are built once per
 *     distinct node into a table keyed by it and each row probes the
 *     table instead of expanding again (jhash, op_hash_join.c).
 *
 * The join runs a clause run only where it can give exactly the walker's
 * rows (as a multiset): plain parts without path variables,
 * fixed-length relationships, no relationship variable bound before, no
 * property map naming the pattern's own variables, and not OPTIONAL; and
 * only where it pays: a cycle, several clauses that share variables, or
 * rows that are only counted.  Everything else is the walker's.
 */
#ifndef STRATA_QUERY_JOIN_H
#define STRATA_QUERY_JOIN_H

#include "query/pipeline.h"
#include "query/plan_start.h"

#define JOIN_MAX_VERTICES 64
#define JOIN_MAX_EDGES 64
#define JOIN_MAX_TYPES 8
#define JOIN_NONE UINT32_MAX

typedef struct jvertex {
    const cypher_ast_node *var;     /* VARIABLE, or NULL (anonymous) */
    long slot;                      /* -1: anonymous */
    bool in_bound;                  /* bound by the input row */
    bool referenced;                /* named by WHERE or downstream */
    const cypher_ast_node *node;    /* the occurrence with the most said */
    strata_token labels[JOIN_MAX_TYPES];
    size_t nlabels;
    const cypher_ast_node *props[JOIN_MAX_TYPES];   /* occurrences with maps */
    size_t nprops;
    uint64_t card;                  /* nodes that may be it (label count) */
} jvertex;

typedef struct jedge {
    const cypher_ast_node *rel;
    uint32_t a, b;                  /* left and right vertex as written */
    cypher_ast_dir dir;
    strata_token types[JOIN_MAX_TYPES];
    size_t ntypes;                  /* 0: any type */
    long slot;                      /* -1: no variable */
    uint32_t group;                 /* the clause: uniqueness holds within */
    bool referenced;
    double fan[2];                  /* rows per bound a (0) or b (1) end */
} jedge;

typedef enum jstep_kind { JSTEP_BOUND, JSTEP_SCAN, JSTEP_EXPAND } jstep_kind;

/* A WHERE conjunct; `a = b` and `a <> b` between two of the join's nodes
   compare their ids without the evaluator. */
typedef enum jconj_kind { JCONJ_EXPR, JCONJ_SAME, JCONJ_OTHER } jconj_kind;
typedef struct jconj {
    const cypher_ast_node *expr;
    jconj_kind kind;
    uint32_t a, b;                  /* SAME / OTHER: the two vertices */
} jconj;

typedef struct jstep {
    uint32_t vertex;
    jstep_kind kind;
    start_plan plan;                /* SCAN */
    uint32_t driver;                /* EXPAND: the edge, from `from` */
    uint32_t from;
    uint32_t checks[JOIN_MAX_EDGES];   /* edges closed by this vertex */
    size_t nchecks;
    const jconj *conj;              /* WHERE conjuncts checked after it */
    size_t nconj;
    bool paired;                    /* counted, and counted by its jpair */
} jstep;

/* `x <> y` where x is a leaf nothing else names (and y another such leaf,
   or a vertex of the core): x is counted, not enumerated, as its ways less
   the ways it would be y.  With y a leaf, the pair together: ways(x) *
   ways(y) less the pairs that end at one node.  The relationships of x
   and y may share a type: two that were one relationship would end at
   one node, which the inequality already excludes. */
typedef struct jpair {
    size_t step;                    /* x's counted step */
    size_t partner;                 /* y's counted step, or SIZE_MAX: y is */
    uint32_t vertex;                /* ... this vertex of the core */
} jpair;

/* A hash join over the core's steps [first, end): the vertices they bind
   (vert) and the relationships (edge, in the order the steps bind them:
   each step's driver, then its checks) reach the vertices bound before
   `first` only through the key vertices, and every WHERE conjunct placed
   at those steps names only them and the key.  So the block's matches
   depend on the key's nodes alone (and, when per_input, on the input
   row: a property map or conjunct names it) and are built once per key.
   Relationship uniqueness against the relationships bound before `first`
   is checked when a row probes (check_unique: some edge of the block and
   one outside it, in one clause, can take the same relationship). */
#define JOIN_HASH_MAX_KEY 2
typedef struct jhash {
    size_t first, end;
    uint32_t key[JOIN_HASH_MAX_KEY];
    size_t nkey;
    uint32_t vert[JOIN_MAX_VERTICES];
    size_t nvert;
    uint32_t edge[JOIN_MAX_EDGES];
    size_t nedge;
    bool per_input;
    bool check_unique;
    double rows, keys, per_key;     /* estimated: rows probing, distinct keys,
                                       matches per key */
} jhash;

/* The scalars first: a plan is cleared up to v (join_plan_build), and each
   array entry is written whole before it is read, so the tens of
   kilobytes of arrays are never cleared. */
typedef struct join_plan {
    size_t nv, ne;
    size_t nsteps;                  /* [0, ncore) enumerated, the rest counted */
    size_t ncore;
    const cypher_ast_node **conj;   /* all conjuncts */
    jconj *by_step;                 /* the same, in step order */
    size_t nconj;
    bool impossible;                /* a label or type nobody has: no rows */
    bool counting;                  /* the consumer counts (weighted rows) */
    bool sum_only;                  /* ... and names none of the join's
                                       variables: one row per input row */
    size_t npairs;
    bool hashed;                    /* hash holds a hash join */
    const cypher_ast_node *const *clauses;
    size_t nclauses;
    size_t in_width;
    jvertex v[JOIN_MAX_VERTICES];
    jedge e[JOIN_MAX_EDGES];
    jstep steps[JOIN_MAX_VERTICES];
    jpair pairs[JOIN_MAX_VERTICES];
    jhash hash;
} join_plan;

/* Plans clauses[0..n) (a run of MATCH clauses) as one join if it can and
   should run so; next is the clause that consumes the rows (or NULL).
   *absorbed: how many clauses it took (0: the walker runs them; then
   nothing was declared).  Declares the clauses' variables into sc as the
   walker would.  0 or -1. */
int join_plan_build(exec *x, const cypher_ast_node *const *clauses, size_t n,
                    const cypher_ast_node *next, scope *sc, join_plan **out,
                    size_t *absorbed);
void join_plan_free(exec *x, join_plan **p);
/* Whether join_plan_build refuses clauses[0..n) (next consuming their rows)
   from their text alone, whatever the data: then the walker always runs
   them, and a prepared statement may run its opened MATCH again. */
bool join_shape_refuses(const cypher_ast_node *const *clauses, size_t n,
                        const cypher_ast_node *next);

/* Opens the join's stage over plan p (taken over). */
int join_open(exec *x, join_plan *p, const scope *sc, stage *s);

/* The direction to read e's relationships from its end `from`. */
strata_direction join_edge_dir(const jedge *e, uint32_t from);

/* For tests: the walker runs every MATCH (the reference the join is
   checked against); the scan size from which an acyclic pattern is
   joined (1000). */
void join_set_enabled(bool on);
void join_set_scan_min(uint64_t n);

/* For tests: whether a hash join is planned where the estimates say it
   pays (the default), wherever one is possible, or never. */
typedef enum join_hash_mode { JOIN_HASH_AUTO, JOIN_HASH_ALWAYS, JOIN_HASH_NEVER } join_hash_mode;
void join_set_hash(join_hash_mode mode);

#endif
