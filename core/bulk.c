/*
 * bulk — the bulk writer of strata_import (core/bulk.h has the design).
 *
 * A node: its label set interned (the last one remembered, since rows
 * repeat it), its label bits set, its slot taken and its property record
 * built at its final size and put in place — one slot walk per part, no
 * record grown.  A relationship: its slot and record likewise, its type
 * bit set, and its id noted as pending.  bulk_flush then reads the
 * pending relationships' ends, makes two half edges of each, puts them in
 * block order by stable counting sorts (by segment key, by partition of
 * nodes, by node; a node's few sorted again only when ids came off the
 * free list out of order), and gives each node a block built
 * once at its final size: its old entries and the new ones merged in
 * block order and appended (adj_reserve_segments, adj_append,
 * adj_bulk_done, as a load builds blocks).  A node whose block is
 * already trees (a hub, past ADJ_TREE_MIN entries) takes its new entries
 * one by one through the trees' own insert, which is O(log degree) each
 * instead of a copy of the hub.  The statistics are counted per node and
 * segment, gathered per (label set, type) first (stats_maint.h).
 *
 * Rows the direct calls would refuse, or whose shape is rare enough not
 * to be worth a path of their own, are declined (bulk.h, invariant 2):
 * more labels than a node may carry, a token beyond what the statistics
 * count, no ids left, more properties than an entity holds, a value that
 * cannot be stored.  Relationships are declined wholesale when the graph
 * knows more than ADJ_MAX_SEGMENTS / 2 types: below that no node can
 * pass ADJ_MAX_SEGMENTS (direction, type) pairs, the one limit the direct
 * call checks that a flush would otherwise meet late.
 */
#include "core/bulk.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph_impl.h"
#include "core/stats_maint.h"
#include "core/txn.h"

/* Pending relationships that make bulk_flush run by itself: its scratch
   (32 bytes per relationship) stays bounded; a node touched by several
   flushes has its block rebuilt each time.  Small in test builds so
   imports in tests flush many times. */
#ifdef STRATA_TESTING
#define FLUSH_EVERY 7
#else
#define FLUSH_EVERY ((size_t)1 << 19)
#endif

/* A property as the record will hold it: key, value, and its place in
   the row (the later of a repeated key wins). */
typedef struct row_prop {
    uint32_t key, pos;
    const value *val;
} row_prop;

/* One end of a pending relationship. */
typedef struct half_edge {
    uint32_t node, key, rel, other;   /* key: type << 1 | direction */
} half_edge;

struct bulk_writer {
    strata_graph *g;
    /* This thread bound to the graph's context while the import runs:
       malloc's fast path, and huge pages for what it maps (storage/mem.h). */
    mem_binding bound;
    /* the label set interned last, and its sorted labels */
    uint32_t last_labels[MAX_LABELS_PER_NODE];
    size_t nlast;
    uint32_t last_ls;
    bool have_last;
    row_prop *props;
    size_t props_cap;
    uint32_t *pending;   /* relationship ids, in creation order */
    size_t npending, pending_cap;
    /* bulk_flush's scratch, kept from one flush to the next: fresh
       arrays of this size (32 bytes a pending relationship) cost more in
       the kernel's first touch of their pages than the sorts that fill
       them (perf, 1M nodes / 5M relationships, five flushes of 2^20) */
    half_edge *halves, *sorted_halves;
    size_t halves_cap;
    size_t *count;
    size_t count_cap;
};

#ifdef STRATA_TESTING
bool bulk_disabled_for_tests;
uint64_t bulk_rows_for_tests;
#define COUNT_ROW() (bulk_rows_for_tests++)
#else
#define COUNT_ROW() ((void)0)
#endif

static strata_status nomem(strata_graph *g, const char *what)
{
    return graph_fail(g, STRATA_ENOMEM, "out of memory: %s", what);
}

strata_status bulk_open(strata_graph *g, bulk_writer **out)
{
    *out = NULL;
#ifdef STRATA_TESTING
    if (bulk_disabled_for_tests)
        return STRATA_OK;
#endif
    if (!txn_open(g) || stmt_open(g) || g->wal ||
        idxset_len(graph_writer_version(g)->indexes) != 0)
        return STRATA_OK;
    bulk_writer *b = mem_calloc(mem_scratch(), sizeof *b);
    if (!b)
        return nomem(g, "starting a bulk import");
    b->g = g;
    b->bound = mem_ctx_bind(g->m);
    *out = b;
    return STRATA_OK;
}

static void release_scratch(bulk_writer *b)
{
    mem_ctx *s = mem_scratch();
    if (b->halves)
        mem_free(s, b->halves);
    if (b->sorted_halves)
        mem_free(s, b->sorted_halves);
    if (b->count)
        mem_free(s, b->count);
    b->halves = b->sorted_halves = NULL;
    b->count = NULL;
    b->halves_cap = b->count_cap = 0;
}

void bulk_close(bulk_writer **bp)
{
    bulk_writer *b = *bp;
    *bp = NULL;
    if (!b)
        return;
    mem_ctx_unbind(&b->bound);
    if (b->props)
        mem_free(mem_scratch(), b->props);
    if (b->pending)
        mem_free(mem_scratch(), b->pending);
    release_scratch(b);
    mem_free(mem_scratch(), b);
}

bool bulk_pending(const bulk_writer *b) { return b && b->npending > 0; }

/* ---- properties ------------------------------------------------------- */

static int cmp_row_prop(const void *a, const void *b)
{
    const row_prop *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The row's properties sorted by key, the last of a repeated key kept,
   into b->props; their number in *n.  0, -1 when out of memory, or
   BULK_DECLINED for a row the direct calls must take. */
static int sort_props(bulk_writer *b, const bulk_prop *props, size_t nprops, size_t *n)
{
    uint32_t nkeys = intern_count(b->g->cat->tokens[STRATA_KEY]);
    if (nprops > b->props_cap) {
        size_t cap = nprops < 16 ? 16 : nprops;
        row_prop *p = mem_realloc(mem_scratch(), b->props, mem_array_size(cap, sizeof *p));
        if (!p)
            return -1;
        b->props = p;
        b->props_cap = cap;
    }
    row_prop *p = b->props;
    for (size_t i = 0; i < nprops; i++) {
        const value *v = &props[i].val->v;
        if (props[i].key >= nkeys || value_is_null(v) || !prop_storable(v))
            return BULK_DECLINED;
        p[i] = (row_prop){ props[i].key, (uint32_t)i, v };
    }
    /* rows are short: an insertion sort, stable by the position */
    if (nprops > 32) {
        qsort(p, nprops, sizeof *p, cmp_row_prop);
    } else {
        for (size_t i = 1; i < nprops; i++) {
            row_prop t = p[i];
            size_t j = i;
            for (; j > 0 && cmp_row_prop(&p[j - 1], &t) > 0; j--)
                p[j] = p[j - 1];
            p[j] = t;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < nprops; i++) {
        if (k && p[k - 1].key == p[i].key)
            k--;
        p[k++] = p[i];
    }
    if (k > PROPS_MAX)
        return BULK_DECLINED;
    *n = k;
    return 0;
}

/* The record of b->props[0, n), values copied into the graph's memory;
   NULL is none (n == 0).  -1 when out of memory. */
static int build_record(bulk_writer *b, size_t n, prop_rec **out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    mem_ctx *m = b->g->m;
    prop_rec *r = props_new(m, (uint32_t)n);
    if (!r)
        return -1;
    for (size_t i = 0; i < n; i++) {
        value copy;
        if (value_clone(m, b->props[i].val, &copy) != 0) {
            props_release(m, &r);
            return -1;
        }
        props_append(r, b->props[i].key, copy);
    }
    *out = r;
    return 0;
}

/* ---- nodes ------------------------------------------------------------ */

/* labels sorted and without repeats into sorted; their number, or
   BULK_DECLINED. */
static int sort_labels(const strata_graph *g, const strata_token *labels, size_t n,
                       uint32_t *sorted, size_t *out)
{
    if (n > MAX_LABELS_PER_NODE)
        return BULK_DECLINED;
    uint32_t known = intern_count(g->cat->tokens[STRATA_LABEL]);
    for (size_t i = 0; i < n; i++) {
        if (labels[i] >= known || labels[i] >= RELSTATS_TOKEN_MAX)
            return BULK_DECLINED;
        sorted[i] = labels[i];
    }
    *out = normalise_labels(sorted, n);
    return 0;
}

/* The label set of sorted[0, n): the last one again, or interned. */
static int labelset_of(bulk_writer *b, const uint32_t *sorted, size_t n, uint32_t *ls)
{
    if (b->have_last && b->nlast == n && memcmp(b->last_labels, sorted, n * sizeof *sorted) == 0) {
        *ls = b->last_ls;
        return 0;
    }
    if (intern_add(b->g->cat->labelsets, sorted, n * sizeof *sorted, ls) != 0)
        return -1;
    memcpy(b->last_labels, sorted, n * sizeof *sorted);
    b->nlast = n;
    b->last_ls = *ls;
    b->have_last = true;
    return 0;
}

int bulk_node_create(bulk_writer *b, const strata_token *labels, size_t nlabels,
                     const bulk_prop *props, size_t nprops, strata_id *out)
{
    strata_graph *g = b->g;
    uint32_t sorted[MAX_LABELS_PER_NODE];
    size_t n, np;
    int rc = sort_labels(g, labels, nlabels, sorted, &n);
    if (rc == 0)
        rc = sort_props(b, props, nprops, &np);
    if (rc != 0)
        return rc == BULK_DECLINED ? BULK_DECLINED : (int)nomem(g, "creating a node");
    version *v = txn_write_begin(g);
    strata_status s = STRATA_OK;
    prop_rec *rec = NULL;
    bool reuse = txn_reuse_node_ids(g);
    uint64_t id = store_next_node_id(&v->st, reuse);
    if (id >= SLOT_MAX_ID) {
        graph_write_end(g);
        return BULK_DECLINED;
    }
    uint32_t ls;
    if (!(v = txn_writable(g)) || labelset_of(b, sorted, n, &ls) != 0 ||
        build_record(b, np, &rec) != 0)
        goto oom;
    for (size_t i = 0; i < n; i++)
        if (labelidx_prepare(g->m, &v->labels, sorted[i], id) != 0)
            goto oom;
    if (store_node_alloc(&v->st, g->m, ls, reuse, &id) != 0)
        goto oom;
    /* From here a failure leaves a node without its properties: the
       transaction is rolled back (bulk.h, "When"). */
    if (rec) {
        prop_rec **rp = store_node_props_mut(&v->st, g->m, id);
        if (!rp)
            goto oom;
        *rp = rec;
        rec = NULL;
    }
    for (size_t i = 0; i < n; i++)
        labelidx_set(g->m, v->labels, sorted[i], id, true);
    COUNT_ROW();
    *out = id;
    goto done;
oom:
    s = nomem(g, "creating a node");
done:
    props_release(g->m, &rec);
    txn_write_finish(g, s);
    return (int)s;
}

/* ---- relationships ---------------------------------------------------- */

/* Room for one more pending relationship; -1 when out of memory. */
static int reserve_pending(bulk_writer *b)
{
    if (b->npending < b->pending_cap)
        return 0;
    size_t cap = b->pending_cap ? b->pending_cap * 2 : 1024;
    uint32_t *p = mem_realloc(mem_scratch(), b->pending, mem_array_size(cap, sizeof *p));
    if (!p)
        return -1;
    b->pending = p;
    b->pending_cap = cap;
    return 0;
}

int bulk_rel_create(bulk_writer *b, strata_id start, strata_id end, strata_token type,
                    const bulk_prop *props, size_t nprops, strata_id *out)
{
    strata_graph *g = b->g;
    uint32_t types = intern_count(g->cat->tokens[STRATA_RELTYPE]);
    if (type >= types || type >= RELSTATS_TOKEN_MAX || types > ADJ_MAX_SEGMENTS / 2)
        return BULK_DECLINED;
    size_t np;
    int rc = sort_props(b, props, nprops, &np);
    if (rc != 0)
        return rc == BULK_DECLINED ? BULK_DECLINED : (int)nomem(g, "creating a relationship");
    version *v = txn_write_begin(g);
    strata_status s = STRATA_OK;
    prop_rec *rec = NULL;
    bool reuse = txn_reuse_rel_ids(g);
    uint64_t id = store_next_rel_id(&v->st, reuse);
    if (id >= SLOT_MAX_ID) {
        graph_write_end(g);
        return BULK_DECLINED;
    }
    /* The caller's word (bulk.h): a check would cost two cache misses a
       relationship on a large graph, the ends being anywhere. */
    assert(store_node(&v->st, start) && store_node(&v->st, end));
    if (!(v = txn_writable(g)) || build_record(b, np, &rec) != 0 ||
        labelidx_prepare(g->m, &v->rel_types, type, id) != 0 ||
        reserve_pending(b) != 0 ||
        store_rel_alloc(&v->st, g->m, (uint32_t)start, (uint32_t)end, type, reuse, &id) != 0)
        goto oom;
    if (rec) {
        prop_rec **rp = store_rel_props_mut(&v->st, g->m, id);
        if (!rp)
            goto oom;   /* the transaction is rolled back (bulk.h) */
        *rp = rec;
        rec = NULL;
    }
    labelidx_set(g->m, v->rel_types, type, id, true);
    b->pending[b->npending++] = (uint32_t)id;
    COUNT_ROW();
    *out = id;
    goto done;
oom:
    s = nomem(g, "creating a relationship");
done:
    props_release(g->m, &rec);
    txn_write_finish(g, s);
    if (s == STRATA_OK && b->npending >= FLUSH_EVERY)
        s = bulk_flush(b);
    return (int)s;
}

/* ---- linking ---------------------------------------------------------- */

static int cmp_half(const void *a, const void *b)
{
    const half_edge *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->rel > y->rel) - (x->rel < y->rel);
}

/* One node's half edges into (segment key, relationship) order. */
static void sort_node_edges(half_edge *h, size_t n)
{
    if (n > 32) {
        qsort(h, n, sizeof *h, cmp_half);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        half_edge t = h[i];
        size_t j = i;
        for (; j > 0 && cmp_half(&h[j - 1], &t) > 0; j--)
            h[j] = h[j - 1];
        h[j] = t;
    }
}

static inline uint32_t seg_key_of(int dir, uint32_t type) { return type << 1 | (uint32_t)dir; }

/* The segments a flat block (or none) holds once h[0, n) are merged in. */
static uint32_t merged_segments(const adj_block *old, const half_edge *h, size_t n)
{
    uint32_t segs = adj_nsegments(old), i = 0;
    for (size_t k = 0; k < n; k++) {
        if (k && h[k].key == h[k - 1].key)
            continue;
        int dir;
        uint32_t type;
        while (i < adj_nsegments(old) &&
               (adj_segment_info(old, i, &dir, &type), seg_key_of(dir, type) < h[k].key))
            i++;
        if (i < adj_nsegments(old) &&
            (adj_segment_info(old, i, &dir, &type), seg_key_of(dir, type) == h[k].key))
            continue;
        segs++;
    }
    return segs;
}

/* Appends to nb the old flat block's segments and h[0, n), merged in
   block order. */
static void merge_into(adj_block *nb, const adj_block *old, const half_edge *h, size_t n)
{
    size_t k = 0;
    for (uint32_t i = 0; i < adj_nsegments(old); i++) {
        int dir;
        uint32_t type;
        adj_segment_info(old, i, &dir, &type);
        uint32_t key = seg_key_of(dir, type);
        for (; k < n && h[k].key < key; k++)
            adj_append(nb, (int)(h[k].key & 1), h[k].key >> 1, h[k].rel, h[k].other);
        for (adj_run r = adj_run_first(old, i); r.n; r = adj_run_next(old, i, r))
            for (const adj_entry *e = r.e; e < r.e + r.n; e++) {
                for (; k < n && h[k].key == key && h[k].rel < e->rel; k++)
                    adj_append(nb, dir, type, h[k].rel, h[k].other);
                adj_append(nb, dir, type, e->rel, e->other);
            }
        for (; k < n && h[k].key == key; k++)
            adj_append(nb, dir, type, h[k].rel, h[k].other);
    }
    for (; k < n; k++)
        adj_append(nb, (int)(h[k].key & 1), h[k].key >> 1, h[k].rel, h[k].other);
}

/* Gives node a the half edges h[0, n), in block order.  -1 when out of
   memory (the node's block may then hold some of them: the transaction
   is rolled back). */
static int link_node(mem_ctx *m, node_adj *a, const half_edge *h, size_t n)
{
    if (a->block && adj_is_tree(a->block)) {
        for (size_t k = 0; k < n; k++) {
            adj_edit ins = { (int)(h[k].key & 1), h[k].key >> 1, h[k].rel };
            if (adj_prepare_insert(m, &a->block, &ins, 1) != 0)
                return -1;
            store_adj_insert(a, ins.dir, ins.type, h[k].rel, h[k].other);
        }
        return 0;
    }
    uint64_t len = (uint64_t)adj_len(a->block) + n;
    if (len >= UINT32_MAX)
        return -1;
    adj_block *nb = NULL;
    if (adj_reserve_segments(m, &nb, (uint32_t)len, merged_segments(a->block, h, n)) != 0)
        return -1;
    merge_into(nb, a->block, h, n);
    if (adj_bulk_done(m, &nb) != 0) {
        adj_release(m, &nb);
        return -1;
    }
    store_adj_replace(m, a, nb);
    return 0;
}

/* Statistics gathered per (label set, type) before they are written under
   each label (as stats_compute does): nodes of one label set repeat the
   same few types. */
#define STAT_SLOTS 256

typedef struct stat_slot {
    uint32_t ls, type;   /* ls 0: free */
    uint64_t n[2];
} stat_slot;

static int stat_flush(strata_graph *g, version *v, stat_slot *p)
{
    if (p->ls && stats_ends_add(g->cat, &v->stats, g->m, p->ls, p->type, p->n) != 0)
        return -1;
    *p = (stat_slot){ 0 };
    return 0;
}

/* The node's new half edges h[0, n), sorted, counted. */
static int stat_node(strata_graph *g, version *v, stat_slot *slots, uint32_t ls,
                     const half_edge *h, size_t n)
{
    if (!ls)
        return 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t type = h[k].key >> 1, hash = ls * 0x9e3779b1u ^ type * 0x85ebca6bu;
        stat_slot *p = &slots[(hash >> 24) % STAT_SLOTS];
        if (p->ls != ls || p->type != type) {
            if (stat_flush(g, v, p) != 0)
                return -1;
            p->ls = ls;
            p->type = type;
        }
        p->n[h[k].key & 1]++;
    }
    return 0;
}

/* Stable counting sort of in[0, n) into out by field(in[i]) - lo, for
   values in [lo, lo + span - 1); count holds span zeroed elements. */
#define COUNTING_SORT(in, out, n, field, lo, span, count)                                  \
    do {                                                                                 \
        for (size_t i_ = 0; i_ < (n); i_++)                                              \
            (count)[(in)[i_].field - (lo) + 1]++;                                        \
        for (size_t i_ = 1; i_ < (span); i_++)                                           \
            (count)[i_] += (count)[i_ - 1];                                              \
        for (size_t i_ = 0; i_ < (n); i_++)                                              \
            (out)[(count)[(in)[i_].field - (lo)]++] = (in)[i_];                          \
    } while (0)

/* Nodes per partition of the grouping by node: the second pass sorts one
   partition's half edges by node in cache (as a load builds adjacency,
   core/persist.c).  Small in test builds, so tests cross partitions. */
#ifdef STRATA_TESTING
#define PART_BITS 3
#else
#define PART_BITS 12
#endif

/* Room in b's scratch for nh half edges twice over and `counts` counters;
   -1 when out of memory (what was there is kept). */
static int reserve_scratch(bulk_writer *b, size_t nh, size_t counts)
{
    mem_ctx *s = mem_scratch();
    if (nh > b->halves_cap) {
        size_t bytes = mem_array_size(nh, sizeof(half_edge));
        half_edge *h = mem_alloc(s, bytes);
        half_edge *t = h ? mem_alloc(s, bytes) : NULL;
        if (!t) {
            if (h)
                mem_free(s, h);
            return -1;
        }
        if (b->halves) {
            mem_free(s, b->halves);
            mem_free(s, b->sorted_halves);
        }
        b->halves = h;
        b->sorted_halves = t;
        b->halves_cap = nh;
    }
    if (counts > b->count_cap) {
        size_t *c = mem_realloc(s, b->count, mem_array_size(counts, sizeof *c));
        if (!c)
            return -1;
        b->count = c;
        b->count_cap = counts;
    }
    return 0;
}

/* The pending relationships' half edges into *out in block order: by
   node, then segment key, then creation order — stable counting sorts by
   key (a small range: two per type), by partition of 1 << PART_BITS
   nodes (a few hundred sequential streams where a sort by node would
   write to a million places), then by node within each partition.  When
   the relationships were created in id order (ids off the end, not off
   the free list), creation order is id order and *sorted is set: every
   node's half edges are then in block order already.  -1 when out of
   memory. */
static int group_half_edges(bulk_writer *b, const version *v, half_edge **out, size_t *nout,
                            bool *sorted)
{
    size_t nh = 2 * b->npending;
    if (reserve_scratch(b, nh, 0) != 0)
        return -1;
    half_edge *h = b->halves, *tmp = b->sorted_halves;
    uint32_t lo = UINT32_MAX, hi = 0, key_hi = 0;
    *sorted = true;
    for (size_t i = 0; i < b->npending; i++) {
        uint32_t id = b->pending[i];
        const rel_meta *r = store_rel(&v->st, id);
        h[2 * i] = (half_edge){ r->start, seg_key_of(ADJ_OUT, r->type), id, r->end };
        h[2 * i + 1] = (half_edge){ r->end, seg_key_of(ADJ_IN, r->type), id, r->start };
        uint32_t a = r->start < r->end ? r->start : r->end;
        uint32_t z = r->start < r->end ? r->end : r->start;
        lo = a < lo ? a : lo;
        hi = z > hi ? z : hi;
        key_hi = h[2 * i + 1].key > key_hi ? h[2 * i + 1].key : key_hi;
        if (i && id < b->pending[i - 1])
            *sorted = false;
    }
    size_t parts = (size_t)((hi - lo) >> PART_BITS) + 1;
    size_t key_span = (size_t)key_hi + 2, part_span = parts + 1;
    size_t most = key_span > part_span ? key_span : part_span;
    most = most > ((size_t)1 << PART_BITS) + 1 ? most : ((size_t)1 << PART_BITS) + 1;
    if (reserve_scratch(b, nh, most + part_span) != 0)
        return -1;
    size_t *count = b->count, *part_start = b->count + most;
    memset(count, 0, key_span * sizeof *count);
    COUNTING_SORT(h, tmp, nh, key, 0, key_span, count);
    memset(count, 0, part_span * sizeof *count);
    for (size_t i = 0; i < nh; i++)
        count[((tmp[i].node - lo) >> PART_BITS) + 1]++;
    for (size_t i = 1; i < part_span; i++)
        count[i] += count[i - 1];
    memcpy(part_start, count, part_span * sizeof *count);
    for (size_t i = 0; i < nh; i++)
        h[count[(tmp[i].node - lo) >> PART_BITS]++] = tmp[i];
    const uint32_t mask = ((uint32_t)1 << PART_BITS) - 1;
    for (size_t p = 0; p < parts; p++) {
        size_t from = part_start[p], n = part_start[p + 1] - from;
        memset(count, 0, (((size_t)1 << PART_BITS) + 1) * sizeof *count);
        for (size_t i = from; i < from + n; i++)
            count[((h[i].node - lo) & mask) + 1]++;
        for (size_t i = 1; i <= mask + 1; i++)
            count[i] += count[i - 1];
        for (size_t i = from; i < from + n; i++)
            tmp[from + count[(h[i].node - lo) & mask]++] = h[i];
    }
    *out = tmp;
    *nout = nh;
    return 0;
}

strata_status bulk_flush(bulk_writer *b)
{
    if (!b || b->npending == 0)
        return STRATA_OK;
    strata_graph *g = b->g;
    version *v = txn_write_begin(g);
    strata_status s = STRATA_OK;
    half_edge *h = NULL;
    size_t nh = 0;
    stat_slot slots[STAT_SLOTS] = { { 0 } };
    bool sorted;
    if (!(v = txn_writable(g)) || group_half_edges(b, v, &h, &nh, &sorted) != 0)
        goto oom;
    store_adj_cursor adj;
    store_adj_cursor_init(&adj, &v->st, g->m);
    const node_meta *meta = NULL;   /* a run of node slots, from meta_base */
    uint64_t meta_base = 0, meta_n = 0;
    for (size_t i = 0, j; i < nh; i = j) {
        uint32_t node = h[i].node;
        for (j = i + 1; j < nh && h[j].node == node; j++)
            ;
        if (!sorted)
            sort_node_edges(h + i, j - i);
        if (node - meta_base >= meta_n || !meta) {
            meta_base = node;
            meta = store_node_meta_run(&v->st, node, &meta_n);
        }
        node_adj *a = store_adj_cursor_mut(&adj, node);
        if (!a || link_node(g->m, a, h + i, j - i) != 0 ||
            stat_node(g, v, slots, meta[node - meta_base].labelset, h + i, j - i) != 0)
            goto oom;
    }
    for (size_t i = 0; i < STAT_SLOTS; i++)
        if (stat_flush(g, v, &slots[i]) != 0)
            goto oom;
    b->npending = 0;
    goto done;
oom:
    s = nomem(g, "linking relationships to their nodes");
done:
    txn_write_finish(g, s);
    return s;
}
