/*
 * algo — graph algorithms over a view (docs/ALGORITHMS.md).
 *
 * A run has three steps, each in its own file:
 *
 *   1. config.c  reads the configuration map (the same keys from Cypher
 *                and from the C API) into an algo_config, refusing unknown
 *                keys and values of the wrong type with ArgumentError;
 *   2. csr.c     reads the view once into compact adjacency (CSR: offsets
 *                and dense neighbour indices, optional weights) over the
 *                selected labels and relationship types; the algorithm
 *                never touches the view again, so its worker threads share
 *                nothing mutable with the engine.  (Outgoing bfs instead
 *                reads the view's immutable adjacency blocks in place, on
 *                the calling thread: it visits each reached node once,
 *                which a build would do twice for every node);
 *   3. the algorithm (centrality.c, components.c, paths.c, triangles.c,
 *                community.c) runs over the CSR on a worker pool (pool.c)
 *                and fills an algo_table: one row per node it reports.
 *
 * registry.c holds the table of algorithms (name, columns, config keys
 * each accepts) and the public strata_algo_* calls.
 *
 * Invariants:
 *   1. Every allocation goes through mem_alloc on the scratch context and
 *      is made by the thread that called the run (workers allocate
 *      nothing), so an allocation failure is a status (ALGO_OOM) at one
 *      place, and the failure-injection sweeps reach every one of them.
 *   2. Work split across threads is cut into chunks of a fixed size that
 *      does not depend on the thread count, and partial sums are combined
 *      in chunk order: a run gives bit-identical results on 1 or N threads
 *      (except sampled or seeded algorithms, which are sequential).
 *   3. The interrupt flag is read at least once per chunk, per iteration
 *      and every ALGO_INTERRUPT_STRIDE steps of a sequential loop.
 *
 * Errors: functions return an algo_status and, on failure, write a
 * message into the run's algo_ctx (err).  No longjmp, no abort.
 */
#ifndef STRATA_ALGO_ALGO_H
#define STRATA_ALGO_ALGO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strata.h"
#include "storage/mem.h"
#include "storage/value.h"

#define ALGO_ERR_MAX 256
#define ALGO_CHUNK 1024              /* nodes per unit of parallel work */
#define ALGO_INTERRUPT_STRIDE 4096   /* sequential steps between flag reads */
#define ALGO_MAX_LIST 64             /* labels, types or sources in a config */

typedef enum algo_status {
    ALGO_OK = 0,
    ALGO_ARGUMENT,      /* a bad configuration, source or weight */
    ALGO_NOT_FOUND,     /* a source or target node that does not exist */
    ALGO_OOM,
    ALGO_INTERRUPTED,
} algo_status;

/* The keys of a configuration map, as bits: each algorithm lists those it
   accepts; any other key is an ArgumentError. */
enum {
    CFG_LABELS = 1u << 0,
    CFG_TYPES = 1u << 1,
    CFG_DIRECTION = 1u << 2,
    CFG_WEIGHT = 1u << 3,
    CFG_ITERATIONS = 1u << 4,
    CFG_TOLERANCE = 1u << 5,
    CFG_DAMPING = 1u << 6,
    CFG_SEED = 1u << 7,
    CFG_SAMPLE = 1u << 8,
    CFG_THREADS = 1u << 9,
    CFG_SOURCE = 1u << 10,
    CFG_TARGET = 1u << 11,
    CFG_PROPERTY = 1u << 12,
};
#define CFG_VIEW (CFG_LABELS | CFG_TYPES | CFG_DIRECTION | CFG_THREADS)

typedef struct algo_config {
    strata_token labels[ALGO_MAX_LIST];
    size_t nlabels;          /* 0: every node */
    bool labels_given;       /* labels named (maybe none interned) */
    strata_token types[ALGO_MAX_LIST];
    size_t ntypes;           /* 0 and !types_given: every type */
    bool types_given;
    strata_direction direction;   /* OUT by default; BOTH: undirected */
    bool has_weight;
    strata_token weight;     /* property key of the weight */
    bool weight_known;       /* the key is interned (else every weight is 1) */
    int64_t iterations;      /* 0: the algorithm's default */
    double tolerance;        /* < 0: the algorithm's default */
    double damping;
    uint64_t seed;
    int64_t sample;          /* 0: exact */
    int threads;             /* 0: one per core */
    strata_id sources[ALGO_MAX_LIST];
    size_t nsources;
    bool has_target;
    strata_id target;
    const char *property;    /* .write: the property to write (borrowed) */
    size_t property_len;
} algo_config;

/* Compact adjacency of the selected subgraph.  Nodes are numbered 0..n-1
   in id order (ids[i] is node i's id).  Row i of the forward adjacency
   lists node i's neighbours in the configured direction; for BOTH every
   relationship appears at both ends (a self-loop twice at its node), the
   usual undirected multigraph.  The reverse adjacency (rev_*) is the
   transpose, built only when an algorithm asks. */
typedef struct algo_graph {
    size_t n;
    strata_id *ids;
    uint64_t m;              /* entries of the forward adjacency */
    uint64_t *off;           /* n + 1 */
    uint32_t *adj;           /* m */
    double *w;               /* m, or NULL when unweighted */
    uint64_t *rev_off;
    uint32_t *rev_adj;
    double *rev_w;
    double *len;             /* CSR_COUNTS: n row lengths, and no off */
    bool undirected;
} algo_graph;

typedef struct algo_pool algo_pool;

/* One run: what every step needs. */
typedef struct algo_ctx {
    strata_view *view;
    mem_ctx *m;
    const algo_config *cfg;
    atomic_bool *interrupt;  /* or NULL */
    algo_pool *pool;
    algo_status status;
    char err[ALGO_ERR_MAX];
} algo_ctx;

/* A result: one row per reported node, a node id and ncols numbers. */
typedef struct algo_column {
    const char *name;
    bool integer;            /* printed and returned as an integer */
} algo_column;

typedef struct algo_table {
    size_t nrows, cap;
    size_t ncols;            /* numbers per row, the node not counted */
    strata_id *nodes;
    double *cells;           /* nrows * ncols */
} algo_table;

/* ---- errors (registry.c) ---- */
algo_status algo_fail(algo_ctx *c, algo_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
algo_status algo_oom(algo_ctx *c);
/* ALGO_INTERRUPTED (and the message) when the flag is set, else ALGO_OK. */
algo_status algo_check_interrupt(algo_ctx *c);
/* Allocation on the run's context; NULL after recording ALGO_OOM. */
void *algo_alloc(algo_ctx *c, size_t n, size_t size);
void *algo_calloc(algo_ctx *c, size_t n, size_t size);
void algo_free(algo_ctx *c, void *p, size_t n, size_t size);

/* ---- configuration (config.c) ---- */
/* Reads map (a VAL_MAP, or null for an empty one) into cfg, accepting the
   keys in allowed.  The property name stays borrowed from map. */
algo_status algo_config_read(algo_ctx *c, const value *map, unsigned allowed,
                             algo_config *cfg);

/* ---- adjacency (csr.c) ---- */
enum {
    CSR_REVERSE = 1u << 0,      /* also build the transpose */
    CSR_WEIGHTS = 1u << 1,      /* read the weight property, if configured */
    CSR_UNDIRECTED = 1u << 2,   /* BOTH whatever the configured direction */
    CSR_ONCE = 1u << 4,         /* each relationship once, at its start,
                                   whatever the configured direction (an
                                   algorithm that ignores direction and
                                   needs no row of incoming ones: wcc) */
    CSR_SIMPLE = 1u << 3,       /* undirected, without self-loops or
                                   repeated neighbours, no weights; rows
                                   not sorted (triangles, k-core) */
    CSR_COUNTS = 1u << 5,       /* the rows counted, not filled: len only,
                                   off, adj and w NULL (degree; not with
                                   CSR_WEIGHTS, CSR_SIMPLE or CSR_REVERSE) */
};
algo_status algo_graph_build(algo_ctx *c, unsigned flags, algo_graph *gr);
void algo_graph_free(algo_ctx *c, algo_graph *gr);
/* The dense index of node id, or -1 when it is not in the graph. */
int64_t algo_graph_index(const algo_graph *gr, strata_id id);

/* ---- worker pool (pool.c) ---- */
/* fn(arg, chunk, worker) for every chunk in [0, nchunks), on the pool's
   threads and the calling one; returns after the last.  worker is the
   thread's number, 0 .. threads-1 (the caller is 0), for per-thread
   scratch made before the loop. */
typedef void (*algo_chunk_fn)(void *arg, size_t chunk, int worker);
algo_status algo_pool_new(algo_ctx *c, int threads, algo_pool **out);
void algo_pool_free(algo_ctx *c, algo_pool **p);
int algo_pool_threads(const algo_pool *p);
/* ALGO_INTERRUPTED when the flag was set during the run (chunks after it
   are skipped). */
algo_status algo_parallel(algo_ctx *c, size_t nchunks, algo_chunk_fn fn, void *arg);
static inline size_t algo_nchunks(size_t n) { return (n + ALGO_CHUNK - 1) / ALGO_CHUNK; }

/* ---- results (registry.c) ---- */
/* A table with room for rows rows (the graph's node count: no run
   reports more). */
algo_status algo_table_init(algo_ctx *c, algo_table *t, size_t ncols, size_t rows);
/* Appends a row; values[0..ncols). */
algo_status algo_table_push(algo_ctx *c, algo_table *t, strata_id node, const double *values);
/* One row per node of gr with the single value col[i]. */
algo_status algo_table_column(algo_ctx *c, algo_table *t, const algo_graph *gr, const double *col);
void algo_table_free(algo_ctx *c, algo_table *t);

/* ---- algorithms: each fills t (initialised by the caller) ---- */
typedef algo_status (*algo_run_fn)(algo_ctx *c, algo_table *t);
algo_status algo_degree(algo_ctx *c, algo_table *t);
algo_status algo_pagerank(algo_ctx *c, algo_table *t);
algo_status algo_wcc(algo_ctx *c, algo_table *t);
algo_status algo_scc(algo_ctx *c, algo_table *t);
algo_status algo_kcore(algo_ctx *c, algo_table *t);
algo_status algo_bfs(algo_ctx *c, algo_table *t);
algo_status algo_dijkstra(algo_ctx *c, algo_table *t);
algo_status algo_triangles(algo_ctx *c, algo_table *t);
algo_status algo_label_propagation(algo_ctx *c, algo_table *t);
algo_status algo_louvain(algo_ctx *c, algo_table *t);
algo_status algo_leiden(algo_ctx *c, algo_table *t);
algo_status algo_betweenness(algo_ctx *c, algo_table *t);
algo_status algo_closeness(algo_ctx *c, algo_table *t);

/* The algorithms' table. */
typedef struct algo_spec {
    const char *name;        /* without the "algo." prefix */
    const algo_column *cols; /* the numeric columns, after "node" */
    size_t ncols;
    unsigned keys;           /* CFG_* accepted */
    bool needs_source;
    algo_run_fn run;
    const char *summary;     /* one line for db.procedures */
} algo_spec;

const algo_spec *algo_spec_find(const char *name, size_t len);
const algo_spec *algo_spec_at(size_t i);   /* NULL past the last */
/* A whole run: config, pool, algorithm.  *t is filled on ALGO_OK and
   empty otherwise.  interrupt may be NULL. */
algo_status algo_run(algo_ctx *c, const algo_spec *spec, const value *config, unsigned extra_keys,
                     algo_table *t);

#ifdef STRATA_TESTING
/* Adjacency entries Louvain and Leiden have read (local moving,
   refinement, aggregation, modularity), summed over every run: tests
   compare it across inputs of different sizes to catch work that grows
   faster than the graph, which a timer could not do reliably. */
extern uint64_t algo_test_community_reads;
#define ALGO_COUNT_READS(k) __atomic_fetch_add(&algo_test_community_reads, (k), __ATOMIC_RELAXED)
#else
#define ALGO_COUNT_READS(k) ((void)0)
#endif

/* Seeded pseudo-random numbers (splitmix64): the same seed, the same run. */
static inline uint64_t algo_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
