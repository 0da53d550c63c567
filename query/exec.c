/* exec — shared executor state: the borrowed view, errors, scopes, row
   sets and entity reads (see exec.h for the design). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/exec.h"

strata_view *exec_view(exec *x)
{
    /* Writer's thread only: the writer's version changes only on this
       thread, so reading it needs no lock.  A query on a view reads one
       fixed version. */
    if (x->g)
        x->view.ver = graph_query_version(x->g);
    return &x->view;
}

void exec_read_clock(exec *x)
{
    if (x->clock_read)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    x->clock_sec = (int64_t)ts.tv_sec;
    x->clock_nsec = (int64_t)ts.tv_nsec;
    x->clock_read = true;
}

int exec_fail(exec *x, const cypher_ast_node *n, const char *category, const char *detail,
              const char *fmt, ...)
{
    if (x->err.category)
        return -1;
    x->err.category = category;
    x->err.detail = detail;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err.message, sizeof x->err.message, fmt, ap);
    va_end(ap);
    x->err.line = n ? n->line : 1;
    x->err.column = n ? n->column : 1;
    return -1;
}

int exec_oom(exec *x) { return exec_fail(x, NULL, "OutOfMemory", NULL, "out of memory"); }

int exec_value_fail(exec *x, const cypher_ast_node *at, int rc)
{
    if (rc == VALUE_TOO_DEEP)
        return exec_fail(x, at, "ArgumentError", "NestingTooDeep",
                         "a list or map would nest deeper than %d levels", VALUE_MAX_DEPTH);
    return exec_oom(x);
}

int exec_status(exec *x, const cypher_ast_node *n, strata_status s)
{
    const char *msg = x->g ? strata_errmsg(x->g) : strata_view_errmsg(&x->view);
    switch (s) {
    case STRATA_OK:
        return 0;
    case STRATA_ENOMEM:
        return exec_fail(x, n, "OutOfMemory", NULL, "%s", msg);
    case STRATA_ETYPE:
        return exec_fail(x, n, "TypeError", "InvalidPropertyType", "%s", msg);
    case STRATA_ECONNECTED:
        return exec_fail(x, n, "ConstraintVerificationFailed", "DeleteConnectedNode", "%s", msg);
    case STRATA_ECONSTRAINT:
        return exec_fail(x, n, "ConstraintVerificationFailed", NULL, "%s", msg);
    case STRATA_ENOTFOUND:
        return exec_fail(x, n, "EntityNotFound", NULL, "%s", msg);
    case STRATA_EIO:
        return exec_fail(x, n, "IOError", NULL, "%s", msg);
    default:
        return exec_fail(x, n, "ArgumentError", NULL, "%s", msg);
    }
}

/* ---- the statement's arena ---- */

struct arena_chunk {
    arena_chunk *next;
    size_t cap;
    max_align_t room[];
};

/* Blocks are aligned for any type. */
#define ARENA_ALIGN (sizeof(max_align_t))
/* The least chunk taken from the allocator once the first is full. */
#define ARENA_CHUNK_MIN 4096

void exec_arena_init(exec_arena *a, void *first, size_t size)
{
    *a = (exec_arena){.first = first, .first_cap = size, .base = first, .cap = size};
}

void exec_arena_free(exec_arena *a, mem_ctx *m)
{
    for (arena_chunk *c = a->chunks, *next; c; c = next) {
        next = c->next;
        mem_free(m, c);
    }
    exec_arena_init(a, a->first, a->first_cap);
}

static bool arena_owns(const exec_arena *a, const void *p)
{
    uintptr_t at = (uintptr_t)p;
    if (at >= (uintptr_t)a->first && at < (uintptr_t)a->first + a->first_cap)
        return true;
    for (const arena_chunk *c = a->chunks; c; c = c->next)
        if (at >= (uintptr_t)c->room && at < (uintptr_t)c->room + c->cap)
            return true;
    return false;
}

static bool arena_usable(const exec *x)
{
    return x->arena && !x->nested && !x->no_arena;
}

/* size bytes from the arena, a new chunk if the current one is full;
   NULL when that chunk cannot be had. */
static void *arena_take(exec *x, size_t size)
{
    exec_arena *a = x->arena;
    size = (size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (size > a->cap - a->used) {
        size_t cap = a->cap * 2 > ARENA_CHUNK_MIN ? a->cap * 2 : ARENA_CHUNK_MIN;
        if (cap < size)
            cap = size;
        arena_chunk *c = mem_alloc(x->m, sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = a->chunks;
        c->cap = cap;
        a->chunks = c;
        a->base = (char *)c->room;
        a->cap = cap;
        a->used = 0;
    }
    void *p = a->base + a->used;
    a->used += size;
    a->taken += size;
    return p;
}

void *exec_alloc(exec *x, size_t size, mem_ctx **owner)
{
    if (size < SIZE_MAX / 2 && arena_usable(x)) {
        void *p = arena_take(x, size ? size : 1);
        if (owner)
            *owner = NULL;
        return p;
    }
    if (owner)
        *owner = x->m;
    return mem_alloc(x->m, size);
}

void *exec_calloc(exec *x, size_t size)
{
    void *p = exec_alloc(x, size, NULL);
    if (p)
        memset(p, 0, size);
    return p;
}

void exec_free(exec *x, void *p)
{
    if (p && !(x->arena && arena_owns(x->arena, p)))
        mem_free(x->m, p);
}

/* A bigger block for *p (old bytes of it kept), from where exec_alloc
   takes one; *owner says where *p came from and gets where the new one
   did.  A block from the allocator grows in place there. */
static int exec_grow(exec *x, void **p, mem_ctx **owner, size_t old, size_t size)
{
    if (*p && *owner) {
        void *q = mem_realloc(*owner, *p, size);
        if (!q)
            return -1;
        *p = q;
        return 0;
    }
    mem_ctx *from;
    void *q = exec_alloc(x, size, &from);
    if (!q)
        return -1;
    if (*p)
        memcpy(q, *p, old);   /* an arena block: left where it is */
    *p = q;
    *owner = from;
    return 0;
}

/* ---- scopes ---- */

long scope_find(const scope *s, const char *name, size_t len)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->b[i].len == len && memcmp(s->b[i].name, name, len) == 0)
            return (long)s->b[i].slot;
    return -1;
}

/* Doubles s's room, from the statement's arena or x->m (s remembers
   which). */
static int scope_grow(exec *x, scope *s)
{
    size_t cap = s->cap ? s->cap * 2 : 8;
    void *b = s->b;
    if (exec_grow(x, &b, &s->m, s->n * sizeof *s->b, mem_array_size(cap, sizeof *s->b)) != 0)
        return exec_oom(x);
    s->b = b;
    s->cap = cap;
    return 0;
}

int scope_add(exec *x, scope *s, const char *name, size_t len, size_t *slot)
{
    long have = scope_find(s, name, len);
    if (have >= 0) {
        if (slot)
            *slot = (size_t)have;
        return 0;
    }
    if (s->n == s->cap && scope_grow(x, s) != 0)
        return -1;
    s->b[s->n].name = name;
    s->b[s->n].len = len;
    s->b[s->n].slot = x->width++;
    if (slot)
        *slot = s->b[s->n].slot;
    s->n++;
    return 0;
}

int scope_push(exec *x, scope *s, const binding *bd)
{
    if (s->n == s->cap && scope_grow(x, s) != 0)
        return -1;
    s->b[s->n++] = *bd;
    return 0;
}

bool scope_name_hidden(const char *name, size_t len) { return len > 0 && name[0] == '\0'; }

int scope_copy(exec *x, const scope *from, scope *to)
{
    to->n = 0;
    while (to->cap < from->n)
        if (scope_grow(x, to) != 0)
            return -1;
    if (from->n)
        memcpy(to->b, from->b, from->n * sizeof *to->b);
    to->n = from->n;
    return 0;
}

void scope_free(scope *s)
{
    if (s->b && s->m)
        mem_free(s->m, s->b);
    memset(s, 0, sizeof *s);
}

/* ---- row sets ---- */

void rowset_init(rowset *r, size_t width)
{
    memset(r, 0, sizeof *r);
    r->width = width;
}

static bool requested(atomic_bool *flag)
{
    return flag && atomic_load_explicit(flag, memory_order_relaxed);
}

int exec_check_interrupt(exec *x)
{
    if (!requested(x->interrupt) && !requested(x->result_interrupt) && !requested(x->cancel))
        return 0;
    return exec_fail(x, NULL, "Interrupted", NULL, "the query was interrupted");
}

int exec_too_large(exec *x, const cypher_ast_node *at, const char *what, uint64_t n,
                   uint64_t max)
{
    return exec_fail(x, at, "ArgumentError", NULL,
                     "%s too large: %llu %s (the limit is %llu)", what,
                     (unsigned long long)n, strcmp(what, "string") == 0 ? "bytes" : "elements",
                     (unsigned long long)max);
}

int rowset_push(exec *x, rowset *r, value *row)
{
    size_t w = r->width ? r->width : 1;
    /* every row produced is a point where an interrupt can land */
    if ((r->nrows & 1023) == 1023 && exec_check_interrupt(x) != 0) {
        for (size_t i = 0; i < r->width; i++)
            value_release(&row[i]);
        return -1;
    }
    if (r->nrows == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        size_t bytes = mem_array_size(cap, w * sizeof(value));
        value *c;
        if (r->cells && !r->m) {
            /* past the arena's room (rowset_reserve): from x->m on */
            c = mem_alloc(x->m, bytes);
            if (c)
                memcpy(c, r->cells, r->nrows * w * sizeof(value));
        } else {
            c = mem_realloc(x->m, r->cells, bytes);
        }
        if (!c) {
            for (size_t i = 0; i < r->width; i++)
                value_release(&row[i]);
            return exec_oom(x);
        }
        r->m = x->m;
        r->cells = c;
        r->cap = cap;
    }
    value *dst = r->cells + r->nrows * w;
    for (size_t i = 0; i < r->width; i++) {
        dst[i] = row[i];
        row[i] = value_null();
    }
    r->nrows++;
    return 0;
}

int rowset_reserve(exec *x, rowset *r, size_t rows)
{
    if (r->cells || !rows)
        return 0;
    size_t w = r->width ? r->width : 1;
    r->cells = exec_alloc(x, mem_array_size(rows, w * sizeof(value)), &r->m);
    if (!r->cells)
        return exec_oom(x);
    r->cap = rows;
    return 0;
}

value *rowset_row(const rowset *r, size_t i) { return r->cells + i * (r->width ? r->width : 1); }

void rowset_clear(rowset *r)
{
    for (size_t i = 0; i < r->nrows * r->width; i++)
        value_release(&r->cells[i]);
    r->nrows = 0;
}

void rowset_free(rowset *r)
{
    rowset_clear(r);
    if (r->cells && r->m)
        mem_free(r->m, r->cells);
    memset(r, 0, sizeof *r);
}

/* ---- entities ---- */

int make_string(exec *x, const char *s, size_t len, value *out)
{
    if (value_string(x->m, s, len, out) != 0)
        return exec_oom(x);
    return 0;
}

int entity_property(exec *x, const cypher_ast_node *at, const value *ent, const char *key,
                    size_t klen, value *out)
{
    *out = value_null();
    strata_token tok;
    if (strata_token_lookup(exec_view(x), STRATA_KEY, key, &tok) != STRATA_OK ||
        strlen(key) != klen)
        return 0;   /* a key nobody has: null */
    return entity_property_token(x, at, ent, tok, out);
}

bool exec_cached_token(exec *x, _Atomic uint32_t *cache, strata_token_kind kind,
                       const cypher_ast_str *name, strata_token *tok)
{
    uint32_t t = atomic_load_explicit(cache, memory_order_relaxed);
    if (t == 0) {
        if (strlen(name->ptr) != name->len ||
            strata_token_lookup(exec_view(x), kind, name->ptr, tok) != STRATA_OK)
            return false;
        t = *tok + 1;
        atomic_store_explicit(cache, t, memory_order_relaxed);
    }
    *tok = t - 1;
    return true;
}

strata_status exec_cached_intern(exec *x, _Atomic uint32_t *cache, strata_token_kind kind,
                                 const char *name, strata_token *tok)
{
    uint32_t t = atomic_load_explicit(cache, memory_order_relaxed);
    if (t) {
        *tok = t - 1;
        return STRATA_OK;
    }
    strata_status s = strata_token_intern(x->g, kind, name, tok);
    if (s == STRATA_OK)
        atomic_store_explicit(cache, *tok + 1, memory_order_relaxed);
    return s;
}

int entity_property_token(exec *x, const cypher_ast_node *at, const value *ent,
                          strata_token tok, value *out)
{
    *out = value_null();
    strata_view *v = exec_view(x);
    strata_value h = {value_null()};
    strata_status s = value_kind(ent) == VAL_NODE ? strata_node_read(v, ent->u.id, tok, &h)
                                                  : strata_rel_read(v, ent->u.id, tok, &h);
    if (s == STRATA_ENOTFOUND)
        return 0;   /* deleted in this statement: reads as no properties */
    if (s != STRATA_OK)
        return exec_status(x, at, s);
    *out = h.v;
    return 0;
}

int entity_properties_map(exec *x, const value *ent, value *out)
{
    *out = value_null();
    strata_view *v = exec_view(x);
    bool node = value_kind(ent) == VAL_NODE;
    strata_token stack[32];
    strata_token *keys = stack;
    size_t n = 0;
    strata_status s = node ? strata_node_keys(v, ent->u.id, keys, 32, &n)
                           : strata_rel_keys(v, ent->u.id, keys, 32, &n);
    if (s != STRATA_OK)
        return value_map_from(x->m, NULL, NULL, 0, out) == 0 ? 0 : exec_oom(x);
    if (n > 32) {
        keys = mem_alloc(x->m, n * sizeof *keys);
        if (!keys)
            return exec_oom(x);
        size_t n2;
        s = node ? strata_node_keys(v, ent->u.id, keys, n, &n2)
                 : strata_rel_keys(v, ent->u.id, keys, n, &n2);
    }
    value *kv = NULL;
    int rc = 0;
    if (s != STRATA_OK) {
        rc = exec_status(x, NULL, s);
        goto done;
    }
    kv = mem_calloc(x->m, 2 * n * sizeof(value));
    if (!kv) {
        rc = exec_oom(x);
        goto done;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *name = NULL;
        strata_value h = {value_null()};
        if ((s = strata_token_name(v, STRATA_KEY, keys[i], &name)) != STRATA_OK ||
            (s = node ? strata_node_read(v, ent->u.id, keys[i], &h)
                      : strata_rel_read(v, ent->u.id, keys[i], &h)) != STRATA_OK) {
            rc = exec_status(x, NULL, s);
            break;
        }
        kv[n + i] = h.v;
        rc = make_string(x, name, strlen(name), &kv[i]);
    }
    if (rc == 0 && value_map_from(x->m, kv, kv + n, n, out) != 0)
        rc = exec_oom(x);
    else if (rc != 0)
        for (size_t i = 0; i < 2 * n; i++)
            value_release(&kv[i]);
    mem_free(x->m, kv);
done:
    if (keys != stack)
        mem_free(x->m, keys);
    return rc;
}

int exec_index_list(exec *x, strata_index **ids, size_t *n)
{
    strata_view *v = exec_view(x);
    *ids = NULL;
    *n = 0;
    size_t count = 0;
    if (strata_indexes(v, NULL, 0, &count) != STRATA_OK || count == 0)
        return 0;
    strata_index *buf = mem_alloc(x->m, count * sizeof *buf);
    if (!buf)
        return -1;
    /* The view is immutable: the count cannot change between the calls. */
    strata_indexes(v, buf, count, n);
    *ids = buf;
    return 0;
}

void exec_index_list_free(exec *x, strata_index **ids)
{
    if (*ids)
        mem_free(x->m, *ids);
    *ids = NULL;
}

static int cmp_label_names(const void *a, const void *b)
{
    return strcmp(value_str(a, NULL), value_str(b, NULL));
}

/* Every label of the node, however many it carries, sorted by name (as
   users expect; tokens sort by creation order). */
int node_labels_list(exec *x, uint64_t node, value *out)
{
    strata_view *v = exec_view(x);
    *out = value_null();
    size_t n = 0;
    if (strata_node_labels(v, node, NULL, 0, &n) != STRATA_OK || n == 0) {
        value none[1];
        return value_list_from(x->m, none, 0, out) != 0 ? exec_oom(x) : 0;
    }
    strata_token *toks = mem_alloc(x->m, n * sizeof *toks);
    value *items = toks ? mem_alloc(x->m, n * sizeof *items) : NULL;
    int rc = 0;
    if (!items) {
        rc = exec_oom(x);
        goto done;
    }
    size_t got = n;
    strata_node_labels(v, node, toks, n, &got);
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL;
        strata_status s = strata_token_name(v, STRATA_LABEL, toks[i], &name);
        if (s != STRATA_OK || make_string(x, name, strlen(name), &items[i]) != 0) {
            if (s != STRATA_OK)
                exec_status(x, NULL, s);
            for (size_t j = 0; j < i; j++)
                value_release(&items[j]);
            rc = -1;
            goto done;
        }
    }
    qsort(items, n, sizeof *items, cmp_label_names);
    if (value_list_from(x->m, items, n, out) != 0)
        rc = exec_oom(x);
done:
    if (items)
        mem_free(x->m, items);
    if (toks)
        mem_free(x->m, toks);
    return rc;
}

int storable_check(exec *x, const cypher_ast_node *at, const value *v)
{
    if (value_is_temporal(v))
        return 0;
    switch (value_kind(v)) {
    case VAL_NULL: case VAL_BOOL: case VAL_INT: case VAL_FLOAT: case VAL_STRING:
        return 0;
    case VAL_LIST: {
        const value *it = value_list_items(v);
        size_t n = value_list_len(v);
        for (size_t i = 0; i < n; i++) {
            value_type k = value_kind(&it[i]);
            if (k == VAL_NULL || k == VAL_LIST || k == VAL_MAP || k == VAL_NODE ||
                k == VAL_REL || k == VAL_PATH)
                return exec_fail(x, at, "TypeError", "InvalidPropertyType",
                                 "a property list may hold only booleans, numbers, strings and "
                                 "temporal values");
        }
        return 0;
    }
    default:
        return exec_fail(x, at, "TypeError", "InvalidPropertyType",
                         "this value cannot be stored as a property");
    }
}
