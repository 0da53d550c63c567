/*
 * csr — a view read once into compact adjacency.
 *
 * Build, in O(selected nodes + their relationships + ids up to the largest
 * selected id):
 *   1. the selected nodes: every node, or the union of the configured
 *      labels' nodes, in id order (dense index = position);
 *   2. an id -> dense index map (an array over ids up to the largest),
 *      unless every id up to the largest is selected (the index is the id);
 *   3. the rows, straight from each node's adjacency block
 *      (core/view_bulk.h): a count pass sizes every row, a fill pass
 *      copies the segments of the configured direction(s) and types whose
 *      other end is selected.  Both passes run on the pool by chunks of
 *      nodes, each writing only its own rows, so the result does not depend
 *      on the thread count.  The transpose, when asked, is the same passes
 *      over the other direction's segments.  CSR_COUNTS keeps only the
 *      count pass's lengths, which come from the degrees kept in the
 *      node slots when every end and type is selected (all degree needs),
 *      else from the blocks' segment directories.  Simple rows drop
 *      self-loops and repeats as they are filled, with a stamp array per
 *      worker (n entries each);
 *   4. weights, when asked: read once per relationship in id order, then
 *      gathered into the rows' order.
 * A relationship sits in its start node's out segment and its end node's
 * in segment, so under BOTH it appears at both ends (a self-loop twice at
 * its node) and parallel relationships are kept: the graph is a
 * multigraph.  A row lists its segments in the block's order (by type,
 * out before in) and each segment in relationship order, so every build of
 * one view is the same.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "core/view_bulk.h"   /* adjacency blocks and property records, read in bulk */
#include "storage/sort_u32.h"

static int cmp_id(const void *a, const void *b)
{
    strata_id x = *(const strata_id *)a, y = *(const strata_id *)b;
    return x < y ? -1 : x > y;
}

/* Grows *p (n elements of size) to cap elements; false after ALGO_OOM. */
static bool grow(algo_ctx *c, void **p, size_t n, size_t cap, size_t size)
{
    void *q = mem_realloc_sized(c->m, *p, n * size, mem_array_size(cap, size));
    if (!q) {
        algo_oom(c);
        return false;
    }
    *p = q;
    return true;
}

static algo_status drain_nodes(algo_ctx *c, strata_node_iter *it, strata_id **ids, size_t *n,
                               size_t *cap)
{
    strata_id id;
    algo_status s = ALGO_OK;
    while (s == ALGO_OK && strata_node_iter_next(it, &id)) {
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 1024;
            if (!grow(c, (void **)ids, *cap, nc, sizeof **ids))
                s = c->status;
            else
                *cap = nc;
        }
        if (s == ALGO_OK)
            (*ids)[(*n)++] = id;
        if (s == ALGO_OK && (*n % ALGO_INTERRUPT_STRIDE) == 0)
            s = algo_check_interrupt(c);
    }
    strata_node_iter_free(&it);
    return s;
}

/* Every live node in id order into ids (cap: the view's node count), from
   the slot vector a leaf at a time. */
static algo_status every_node(algo_ctx *c, strata_id *ids, size_t cap, size_t *n)
{
    uint64_t bound = view_node_bound(c->view), next_check = ALGO_INTERRUPT_STRIDE;
    for (uint64_t id = 0; id < bound && *n < cap;) {
        uint64_t k;
        const node_meta *run = view_node_meta_run(c->view, id, &k);
        for (uint64_t x = 0; x < k && *n < cap; x++)
            if (node_meta_live(&run[x]))
                ids[(*n)++] = id + x;
        id += k;
        if (id >= next_check) {
            next_check = id + ALGO_INTERRUPT_STRIDE;
            if (algo_check_interrupt(c) != ALGO_OK)
                return c->status;
        }
    }
    return ALGO_OK;
}

static algo_status select_nodes(algo_ctx *c, algo_graph *gr)
{
    const algo_config *cfg = c->cfg;
    size_t n = 0, cap = 0;
    strata_id *ids = NULL;
    algo_status s = ALGO_OK;
    if (!cfg->labels_given) {
        cap = (size_t)strata_node_count(c->view);
        if (cap && !(ids = algo_alloc(c, cap, sizeof *ids)))
            return c->status;
        s = every_node(c, ids, cap, &n);
    }
    for (size_t l = 0; l < cfg->nlabels && s == ALGO_OK; l++) {
        strata_node_iter *it;
        strata_status st = strata_nodes_by_label(c->view, cfg->labels[l], &it);
        if (st == STRATA_ENOTFOUND)
            continue;
        if (st != STRATA_OK)
            s = algo_oom(c);
        else
            s = drain_nodes(c, it, &ids, &n, &cap);
    }
    if (s == ALGO_OK && cfg->nlabels > 1) {
        qsort(ids, n, sizeof *ids, cmp_id);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (k == 0 || ids[k - 1] != ids[i])
                ids[k++] = ids[i];
        n = k;
    }
    if (s == ALGO_OK && n >= UINT32_MAX)
        s = algo_fail(c, ALGO_ARGUMENT, "at most %u nodes per algorithm run", UINT32_MAX - 1);
    if (s == ALGO_OK && !grow(c, (void **)&ids, cap, n, sizeof *ids))
        s = c->status;   /* shrink to n, so the graph frees it by n */
    if (s != ALGO_OK) {
        algo_free(c, ids, cap, sizeof *ids);
        return s;
    }
    gr->ids = ids;
    gr->n = n;
    return ALGO_OK;
}

/* One pass over the selected nodes, on the pool.  Row i lists the
   entries of node i's segments that have a wanted direction and type, in
   the block's segment order (by type, then out before in), each segment in
   its own order (relationships as created), dropping ends not selected.
   The count pass sets off[i + 1] to row i's length; the fill pass writes
   the rows at off[i]. */
typedef struct row_job {
    strata_view *view;
    const strata_id *ids;
    size_t n;
    const uint32_t *map;        /* id -> dense index; NULL: the identity */
    strata_id maxid;            /* the largest selected id */
    bool every_end;             /* every relationship's ends are selected */
    const strata_token *types;  /* wanted types; NULL: every type */
    size_t ntypes;
    bool out, in;               /* the directions a row lists */
    bool simple;                /* rows without self-loops or repeats */
    bool counts_only;           /* lengths only, no fill */
    double *len_out;            /* counts_only: each row's length */
    uint64_t *off;
    uint32_t *len;              /* simple: each row's length once filled */
    uint32_t *seen;             /* simple: n per worker; seen[x] == i + 1
                                   once row i holds x */
    uint32_t *adj;              /* fill */
    uint32_t *rel;              /* fill, weighted: each entry's relationship */
} row_job;

static bool segment_wanted(const row_job *j, int dir, uint32_t type)
{
    if (!(dir == ADJ_OUT ? j->out : j->in))
        return false;
    if (!j->types)
        return true;
    for (size_t t = 0; t < j->ntypes; t++)
        if (j->types[t] == type)
            return true;   /* a type listed twice still counts once */
    return false;
}

/* The dense index of other, or UINT32_MAX when it is not selected. */
static inline uint32_t dense_index(const row_job *j, uint32_t other)
{
    if (other > j->maxid)
        return UINT32_MAX;
    return j->map ? j->map[other] : other;
}

static void chunk_range(const row_job *j, size_t chunk, size_t *lo, size_t *hi)
{
    *lo = chunk * ALGO_CHUNK;
    *hi = *lo + ALGO_CHUNK < j->n ? *lo + ALGO_CHUNK : j->n;
}

/* Blocks sit wherever the allocator put them, so the first touch of each
   missed the cache (and the TLB): half the time of a build over 1M nodes.
   A pass over a chunk first looks up its nodes' blocks (the slot vector's
   leaves are read in order), then asks for the block PREFETCH_AHEAD nodes
   on while it reads one, which overlaps those misses.  16: with the
   lookups done first a prefetch is one load, so it can run further ahead
   than the 8 it had when each one walked the slot vector (not tuned
   further). */
#define PREFETCH_AHEAD 16

static void chunk_blocks(const row_job *j, size_t lo, size_t hi, const adj_block **blocks)
{
    for (size_t i = lo; i < hi; i++)
        blocks[i - lo] = view_node_adj(j->view, j->ids[i]);
}

static inline const adj_block *block_at(const adj_block *const *blocks, size_t k, size_t n)
{
    if (k + PREFETCH_AHEAD < n && blocks[k + PREFETCH_AHEAD])
        __builtin_prefetch(blocks[k + PREFETCH_AHEAD]);
    return blocks[k];
}

/* The entries of b that row i lists: only block headers are read when
   every end is selected (and none at all without types: count_chunk). */
static uint64_t row_length(const row_job *j, const adj_block *b)
{
    uint64_t len = 0;
    for (uint32_t s = 0; s < adj_nsegments(b); s++) {
        int dir;
        uint32_t type, cnt = adj_segment_info(b, s, &dir, &type);
        if (!segment_wanted(j, dir, type))
            continue;
        if (j->every_end)
            len += cnt;   /* no entry to read */
        else
            for (adj_run r = adj_run_first(b, s); r.n; r = adj_run_next(b, s, r))
                for (uint32_t k = 0; k < r.n; k++)
                    len += dense_index(j, r.e[k].other) != UINT32_MAX;
    }
    return len;
}

/* With every end selected and no type named, a row's length is the
   node's degree in the wanted directions, kept with its slot: no block is
   read at all. */
static bool length_from_slots(const row_job *j)
{
    return j->every_end && !j->types;
}

/* Row i's length: into the offsets (summed after the pass), or the
   lengths when only they are wanted. */
static inline void put_length(const row_job *j, size_t i, uint64_t len)
{
    if (j->len_out)
        j->len_out[i] = (double)len;
    else
        j->off[i + 1] = len;
}

/* The slot vector's leaves lie wherever the allocator put them, so each
   is a miss; their addresses are looked up first (the inner nodes stay
   cached) and each leaf is prefetched SLOT_RUNS_AHEAD leaves before it is
   read. */
#define SLOT_RUNS_AHEAD 24

static void count_from_slots(const row_job *j, size_t lo, size_t hi)
{
    /* every_end: the selection is every id, so row i is node i */
    const node_adj *run[ALGO_CHUNK];
    uint32_t len[ALGO_CHUNK];
    size_t nruns = 0;
    for (size_t i = lo; i < hi; nruns++) {
        uint64_t n;
        run[nruns] = view_node_adj_run(j->view, i, &n);
        len[nruns] = (uint32_t)(n < hi - i ? n : hi - i);
        i += len[nruns];
    }
    size_t i = lo;
    for (size_t r = 0; r < nruns; r++) {
        if (r + SLOT_RUNS_AHEAD < nruns)
            for (size_t k = 0; k < len[r + SLOT_RUNS_AHEAD]; k += 64 / sizeof(node_adj))
                __builtin_prefetch(run[r + SLOT_RUNS_AHEAD] + k);
        for (uint32_t k = 0; k < len[r]; k++, i++)
            put_length(j, i, (j->out ? run[r][k].out : 0) + (j->in ? run[r][k].in : 0));
    }
}

static void count_chunk(void *arg, size_t chunk, int worker)
{
    (void)worker;
    const row_job *j = arg;
    size_t lo, hi;
    chunk_range(j, chunk, &lo, &hi);
    if (length_from_slots(j)) {
        count_from_slots(j, lo, hi);
        return;
    }
    const adj_block *blocks[ALGO_CHUNK];
    chunk_blocks(j, lo, hi, blocks);
    for (size_t i = lo; i < hi; i++)
        put_length(j, i, row_length(j, block_at(blocks, i - lo, hi - lo)));
}

/* Copies node i's entries of the wanted segments of direction dir to the
   rows from at; returns the end.  When the row lists both directions, a
   self-loop is written twice from its out entry and skipped as an in
   entry, so its two copies sit together. */
static uint64_t copy_direction(const row_job *j, const adj_block *b, uint32_t i, int dir,
                               uint64_t at)
{
    bool both = j->out && j->in;
    for (uint32_t s = 0; s < adj_nsegments(b); s++) {
        int d;
        uint32_t type;
        adj_segment_info(b, s, &d, &type);
        if (d != dir || !segment_wanted(j, d, type))
            continue;
        for (adj_run r = adj_run_first(b, s); r.n; r = adj_run_next(b, s, r))
            for (const adj_entry *e = r.e; e < r.e + r.n; e++) {
                uint32_t x = dense_index(j, e->other);
                if (x == UINT32_MAX || (both && x == i && dir == ADJ_IN))
                    continue;
                for (int copies = both && x == i ? 2 : 1; copies > 0; copies--) {
                    j->adj[at] = x;
                    if (j->rel)
                        j->rel[at] = e->rel;
                    at++;
                }
            }
    }
    return at;
}

static inline bool entry_less(const uint32_t *adj, const uint32_t *rel, size_t x, size_t y)
{
    return adj[x] < adj[y] || (adj[x] == adj[y] && rel && rel[x] < rel[y]);
}

static inline void entry_swap(uint32_t *adj, uint32_t *rel, size_t x, size_t y)
{
    uint32_t t = adj[x];
    adj[x] = adj[y];
    adj[y] = t;
    if (rel) {
        t = rel[x];
        rel[x] = rel[y];
        rel[y] = t;
    }
}

static void sift_down(uint32_t *adj, uint32_t *rel, size_t root, size_t n)
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && entry_less(adj, rel, child, child + 1))
            child++;
        if (!entry_less(adj, rel, root, child))
            return;
        entry_swap(adj, rel, root, child);
    }
}

/* Sorts entries by (neighbour, relationship) in place: insertion sort for
   the short rows most nodes have, heapsort (no scratch, O(d log d)) for
   hubs. */
static void sort_entries(uint32_t *adj, uint32_t *rel, size_t n)
{
    if (!rel && n <= 64) {   /* neighbours alone: shift, not swap */
        sort_u32_short(adj, n);
        return;
    }
    if (n <= 32) {
        for (size_t k = 1; k < n; k++)
            for (size_t x = k; x > 0 && entry_less(adj, rel, x, x - 1); x--)
                entry_swap(adj, rel, x, x - 1);
        return;
    }
    for (size_t r = n / 2; r > 0; r--)
        sift_down(adj, rel, r - 1, n);
    for (size_t end = n - 1; end > 0; end--) {
        entry_swap(adj, rel, 0, end);
        sift_down(adj, rel, 0, end);
    }
}

static void reverse_entries(uint32_t *adj, uint32_t *rel, uint64_t lo, uint64_t hi)
{
    while (lo + 1 < hi)
        entry_swap(adj, rel, lo++, --hi);
}

/* Simple row i: its distinct neighbours other than i, in the order the
   block lists them (in segments first, then out), each kept where first
   met.  A neighbour is a repeat when seen[] already holds row i's stamp:
   no sort, and seen[] never needs clearing between rows.  (Sorting each
   row to find its repeats was most of k-core's build.) */
static void fill_simple_row(const row_job *j, const adj_block *b, uint32_t i, uint32_t *seen)
{
    uint64_t start = j->off[i], at = start;
    for (int dir = ADJ_IN; dir >= ADJ_OUT; dir--)
        for (uint32_t s = 0; s < adj_nsegments(b); s++) {
            int d;
            uint32_t type;
            adj_segment_info(b, s, &d, &type);
            if (d != dir || !segment_wanted(j, d, type))
                continue;
            for (adj_run r = adj_run_first(b, s); r.n; r = adj_run_next(b, s, r))
                for (const adj_entry *e = r.e; e < r.e + r.n; e++) {
                    uint32_t x = dense_index(j, e->other);
                    if (x == UINT32_MAX || x == i || seen[x] == i + 1)
                        continue;
                    seen[x] = i + 1;
                    j->adj[at++] = x;
                }
        }
    j->len[i] = (uint32_t)(at - start);
}

/* Row i in the order a counting sort of the relationships by start node
   gave (the order every earlier build had, which seeded runs depend on):
   the out entries as stored; the in entries by their start node (then by
   relationship), and under BOTH the out entries among them where node i
   itself would sort. */
static void fill_row(const row_job *j, const adj_block *b, uint32_t i)
{
    uint64_t start = j->off[i];
    if (!j->in) {
        copy_direction(j, b, i, ADJ_OUT, start);
        return;
    }
    uint64_t mid = copy_direction(j, b, i, ADJ_IN, start);
    sort_entries(j->adj + start, j->rel ? j->rel + start : NULL, mid - start);
    if (!j->out)
        return;
    uint64_t end = copy_direction(j, b, i, ADJ_OUT, mid), lo = start, hi = mid;
    while (lo < hi) {   /* the first in entry from a node after i */
        uint64_t m = lo + (hi - lo) / 2;
        if (j->adj[m] < i)
            lo = m + 1;
        else
            hi = m;
    }
    /* rotate [lo, mid) past [mid, end) */
    reverse_entries(j->adj, j->rel, lo, mid);
    reverse_entries(j->adj, j->rel, mid, end);
    reverse_entries(j->adj, j->rel, lo, end);
}

static void fill_chunk(void *arg, size_t chunk, int worker)
{
    const row_job *j = arg;
    size_t lo, hi;
    chunk_range(j, chunk, &lo, &hi);
    const adj_block *blocks[ALGO_CHUNK];
    chunk_blocks(j, lo, hi, blocks);
    uint32_t *seen = j->seen ? j->seen + (size_t)worker * j->n : NULL;
    for (size_t i = lo; i < hi; i++) {
        const adj_block *b = block_at(blocks, i - lo, hi - lo);
        if (seen)
            fill_simple_row(j, b, (uint32_t)i, seen);
        else
            fill_row(j, b, (uint32_t)i);
    }
}

/* Simple rows: each moved down to follow the one before, in one
   sequential pass, and the entries shrunk to *m, their new total. */
static algo_status compact_rows(algo_ctx *c, row_job *j, uint64_t *m)
{
    uint64_t at = 0;
    for (size_t i = 0; i < j->n; i++) {
        uint64_t start = j->off[i];
        memmove(j->adj + at, j->adj + start, (size_t)j->len[i] * sizeof *j->adj);
        j->off[i] = at;
        at += j->len[i];
    }
    j->off[j->n] = at;
    if (!grow(c, (void **)&j->adj, *m, at, sizeof *j->adj))
        return c->status;
    *m = at;
    return ALGO_OK;
}

/* Rows of the selected nodes in the directions of j (the caller sets
   every field up to off): counted, summed into offsets, filled.  rel_out
   (when not NULL) receives each entry's relationship. */
static algo_status build_rows(algo_ctx *c, row_job *j, uint64_t **off_out, uint32_t **adj_out,
                              uint32_t **rel_out, uint64_t *m)
{
    *off_out = NULL;
    *adj_out = NULL;
    if (rel_out)
        *rel_out = NULL;
    if (j->counts_only) {
        if (algo_parallel(c, algo_nchunks(j->n), count_chunk, j) != ALGO_OK)
            return c->status;
        *m = 0;
        return ALGO_OK;
    }
    if (!(j->off = algo_calloc(c, j->n + 1, sizeof *j->off)))
        return c->status;
    if (algo_parallel(c, algo_nchunks(j->n), count_chunk, j) != ALGO_OK) {
        algo_free(c, j->off, j->n + 1, sizeof *j->off);
        return c->status;
    }
    for (size_t i = 0; i < j->n; i++)
        j->off[i + 1] += j->off[i];
    *m = j->off[j->n];
    j->adj = algo_alloc(c, *m, sizeof *j->adj);
    j->rel = j->adj && rel_out ? algo_alloc(c, *m, sizeof *j->rel) : NULL;
    j->len = j->adj && j->simple ? algo_alloc(c, j->n, sizeof *j->len) : NULL;
    size_t nseen = j->simple ? (size_t)algo_pool_threads(c->pool) * j->n : 0;
    j->seen = j->len && nseen ? algo_calloc(c, nseen, sizeof *j->seen) : NULL;
    bool ok = j->adj && (!rel_out || j->rel) && (!j->simple || j->len) &&
              (!nseen || j->seen) && algo_parallel(c, algo_nchunks(j->n), fill_chunk, j) == ALGO_OK;
    algo_free(c, j->seen, nseen, sizeof *j->seen);
    j->seen = NULL;
    if (!ok) {
        algo_free(c, j->off, j->n + 1, sizeof *j->off);
        algo_free(c, j->adj, *m, sizeof *j->adj);
        algo_free(c, j->rel, *m, sizeof *j->rel);
        algo_free(c, j->len, j->n, sizeof *j->len);
        return c->status;
    }
    algo_status s = j->simple ? compact_rows(c, j, m) : ALGO_OK;
    algo_free(c, j->len, j->n, sizeof *j->len);
    if (s != ALGO_OK) {
        algo_free(c, j->off, j->n + 1, sizeof *j->off);
        algo_free(c, j->adj, *m, sizeof *j->adj);
        return c->status;
    }
    *off_out = j->off;
    *adj_out = j->adj;
    if (rel_out)
        *rel_out = j->rel;
    return ALGO_OK;
}

static algo_status read_weight(algo_ctx *c, strata_id rel, double *w)
{
    const value *v = props_get(view_rel_props(c->view, rel), c->cfg->weight);
    *w = 1;
    if (!v || value_is_null(v))
        return ALGO_OK;
    if (value_kind(v) == VAL_INT)
        *w = (double)v->u.i;
    else if (value_kind(v) == VAL_FLOAT)
        *w = v->u.f;
    else
        return algo_fail(c, ALGO_ARGUMENT, "relationship %llu: its weight is %s, not a number",
                         (unsigned long long)rel, value_type_name(v));
    if (!isfinite(*w))
        return algo_fail(c, ALGO_ARGUMENT, "relationship %llu: its weight is not finite",
                         (unsigned long long)rel);
    return ALGO_OK;
}

/* The weight of every relationship listed in rel[0..m), by relationship id
   (NaN for those not listed), read in id order: the order relationships
   sit in storage (reading them in adjacency order instead missed the cache
   on every one, 1.5 s of a 2.2 s Dijkstra over 1M relationships). */
static algo_status weights_by_rel(algo_ctx *c, const uint32_t *rel, uint64_t m, double **out,
                                  size_t *nrel)
{
    *nrel = view_rel_bound(c->view);
    double *by_rel = algo_alloc(c, *nrel, sizeof *by_rel);
    if (!(*out = by_rel))
        return c->status;
    for (size_t r = 0; r < *nrel; r++)
        by_rel[r] = NAN;   /* not listed */
    for (uint64_t k = 0; k < m; k++)
        by_rel[rel[k]] = 0;
    algo_status s = ALGO_OK;
    for (size_t r = 0; r < *nrel && s == ALGO_OK; r++) {
        if (!isnan(by_rel[r]))
            s = read_weight(c, r, &by_rel[r]);
        if (s == ALGO_OK && r % ALGO_INTERRUPT_STRIDE == ALGO_INTERRUPT_STRIDE - 1)
            s = algo_check_interrupt(c);
    }
    return s;
}

typedef struct weight_job {
    const uint64_t *off;
    size_t n;
    const uint32_t *rel;
    const double *by_rel;   /* NULL: every weight is 1 */
    double *w;
} weight_job;

static void weight_chunk(void *arg, size_t chunk, int worker)
{
    (void)worker;
    const weight_job *j = arg;
    size_t lo = chunk * ALGO_CHUNK, hi = lo + ALGO_CHUNK < j->n ? lo + ALGO_CHUNK : j->n;
    for (uint64_t k = j->off[lo]; k < j->off[hi]; k++)
        j->w[k] = j->by_rel ? j->by_rel[j->rel[k]] : 1.0;
}

/* w[k]: the weight of entry k of rows off/rel. */
static algo_status fill_weights(algo_ctx *c, size_t n, const uint64_t *off, const uint32_t *rel,
                                const double *by_rel, double **w)
{
    if (!(*w = algo_alloc(c, off[n], sizeof **w)))
        return c->status;
    weight_job j = {off, n, rel, by_rel, *w};
    return algo_parallel(c, algo_nchunks(n), weight_chunk, &j);
}

algo_status algo_graph_build(algo_ctx *c, unsigned flags, algo_graph *gr)
{
    *gr = (algo_graph){0};
    const algo_config *cfg = c->cfg;
    bool simple = flags & CSR_SIMPLE;
    bool weighted = (flags & CSR_WEIGHTS) && cfg->has_weight && !simple;
    bool once = flags & CSR_ONCE;
    bool both = !once && ((flags & (CSR_UNDIRECTED | CSR_SIMPLE)) || cfg->direction == STRATA_BOTH);
    bool in = !once && !both && cfg->direction == STRATA_IN;
    bool reverse = (flags & CSR_REVERSE) && !both;
    gr->undirected = both;
    algo_status s = select_nodes(c, gr);
    if (s != ALGO_OK)
        return s;
    strata_id maxid = gr->n ? gr->ids[gr->n - 1] : 0;
    /* Every id up to the largest selected is selected: the dense index is
       the id, and when no live node lies past it, every end is selected. */
    bool identity = gr->n == maxid + 1;
    uint32_t *map = NULL;
    if (gr->n && !identity) {
        if (!(map = algo_alloc(c, maxid + 1, sizeof *map))) {
            algo_graph_free(c, gr);
            return c->status;
        }
        memset(map, 0xff, (maxid + 1) * sizeof *map);
        for (size_t i = 0; i < gr->n; i++)
            map[gr->ids[i]] = (uint32_t)i;
    }
    row_job j = {
        .view = c->view, .ids = gr->ids, .n = gr->n, .map = map, .maxid = maxid,
        .every_end = identity && view_node_bound(c->view) <= maxid + 1,
        /* types named but none interned: no type is wanted */
        .types = cfg->types_given ? cfg->types : NULL, .ntypes = cfg->ntypes,
        .out = both || !in, .in = both || in, .simple = simple,
        .counts_only = (flags & CSR_COUNTS) != 0,
    };
    if (j.counts_only && gr->n && !(j.len_out = gr->len = algo_alloc(c, gr->n, sizeof *gr->len))) {
        algo_free(c, map, maxid + 1, sizeof *map);
        algo_graph_free(c, gr);
        return c->status;
    }
    uint32_t *rel = NULL, *rev_rel = NULL;
    uint64_t rev_m = 0;
    s = build_rows(c, &j, &gr->off, &gr->adj, weighted ? &rel : NULL, &gr->m);
    if (s == ALGO_OK && reverse) {
        row_job r = j;
        r.out = !j.out;
        r.in = !j.in;
        s = build_rows(c, &r, &gr->rev_off, &gr->rev_adj, weighted ? &rev_rel : NULL, &rev_m);
    }
    algo_free(c, map, gr->n ? maxid + 1 : 0, sizeof *map);
    double *by_rel = NULL;
    size_t nrel = 0;
    if (s == ALGO_OK && weighted && cfg->weight_known)
        s = weights_by_rel(c, rel, gr->m, &by_rel, &nrel);
    if (s == ALGO_OK && weighted)
        s = fill_weights(c, gr->n, gr->off, rel, by_rel, &gr->w);
    if (s == ALGO_OK && weighted && reverse)
        s = fill_weights(c, gr->n, gr->rev_off, rev_rel, by_rel, &gr->rev_w);
    algo_free(c, by_rel, nrel, sizeof *by_rel);
    algo_free(c, rel, gr->m, sizeof *rel);
    algo_free(c, rev_rel, rev_m, sizeof *rev_rel);
    if (s == ALGO_OK && !reverse && (flags & CSR_REVERSE)) {
        gr->rev_off = gr->off;   /* undirected: the transpose is itself */
        gr->rev_adj = gr->adj;
        gr->rev_w = gr->w;
    }
    if (s != ALGO_OK)
        algo_graph_free(c, gr);
    return s;
}

void algo_graph_free(algo_ctx *c, algo_graph *gr)
{
    if (gr->rev_off && gr->rev_off != gr->off) {
        algo_free(c, gr->rev_off, gr->n + 1, sizeof *gr->rev_off);
        algo_free(c, gr->rev_adj, gr->m, sizeof *gr->rev_adj);
        algo_free(c, gr->rev_w, gr->m, sizeof *gr->rev_w);
    }
    if (gr->off) {
        algo_free(c, gr->off, gr->n + 1, sizeof *gr->off);
        algo_free(c, gr->adj, gr->m, sizeof *gr->adj);
        algo_free(c, gr->w, gr->m, sizeof *gr->w);
    }
    algo_free(c, gr->len, gr->n, sizeof *gr->len);
    algo_free(c, gr->ids, gr->n, sizeof *gr->ids);
    *gr = (algo_graph){0};
}

int64_t algo_graph_index(const algo_graph *gr, strata_id id)
{
    size_t lo = 0, hi = gr->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gr->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < gr->n && gr->ids[lo] == id ? (int64_t)lo : -1;
}
