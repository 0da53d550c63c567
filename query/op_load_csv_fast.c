/*
 * op_load_csv_fast — LOAD CSV's bulk shapes without rows (load_csv_fast.h
 * says which, and what they keep of the general path).
 *
 * A plan holds, per column expression, the header field it reads (found
 * once per file) and whether toInteger applies; per batch it holds the
 * converted values of each record (a value per column: null, an integer
 * or a string), then writes them.  No map, row, scope or iterator is
 * made per record, and no clause is planned per batch.
 */
#include <string.h>
#include <strings.h>

#include "query/load_csv_fast.h"

#ifdef STRATA_TESTING
bool load_csv_fast_disabled;
uint64_t load_csv_fast_runs;
#endif

/* The most columns a plan reads (a node's properties); a longer map runs
   the general path. */
#define FAST_COLS_MAX 16
/* Candidates a seek returns without an allocation. */
#define FAST_CANDIDATES 16

typedef struct fast_col {
    const cypher_ast_node *entry;   /* the MAP_ENTRY naming the property */
    const char *name;               /* the column */
    size_t len;
    bool to_integer;
    long field;                     /* in the current file's header, or -1 */
} fast_col;

struct load_fast {
    bool rels;                      /* MATCH ... CREATE of a relationship */
    /* CREATE (n:L... {k: c, ...}): the node pattern; cols in key order */
    const cypher_ast_node *node;
    /* MATCH (a {k: c}), (b {j: c'}) CREATE: each end's index, and which
       end of the relationship each matched node is */
    strata_index index[2];
    size_t from, to;
    const cypher_ast_node *rel;
    fast_col cols[FAST_COLS_MAX];
    size_t ncols;
    value *held;                    /* batch records of ncols values */
    size_t nheld, batch;
};

static bool same_str(const cypher_ast_str *a, const cypher_ast_str *b)
{
    return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* Whether e is row['name'], row.name, or toInteger() of one (row being
   the LOAD CSV's variable), filling c's column. */
static bool column_expr(const cypher_ast_node *e, const cypher_ast_str *row, fast_col *c)
{
    c->to_integer = false;
    c->field = -1;
    if (e->kind == CYPHER_AST_FUNCTION) {
        const cypher_ast_str *fn = &e->u.function.name;
        if (e->u.function.distinct || e->u.function.args.count != 1 || fn->len != 9 ||
            strncasecmp(fn->ptr, "toInteger", 9) != 0)
            return false;
        c->to_integer = true;
        e = e->u.function.args.items[0];
    }
    const cypher_ast_node *subject;
    if (e->kind == CYPHER_AST_SUBSCRIPT) {
        const cypher_ast_node *k = e->u.subscript.from;
        if (!k || k->kind != CYPHER_AST_STRING_LIT)
            return false;
        subject = e->u.subscript.subject;
        c->name = k->u.name.ptr;
        c->len = k->u.name.len;
    } else if (e->kind == CYPHER_AST_PROPERTY) {
        subject = e->u.property.subject;
        c->name = e->u.property.key.ptr;
        c->len = e->u.property.key.len;
    } else {
        return false;
    }
    return subject->kind == CYPHER_AST_VARIABLE && same_str(&subject->u.name, row);
}

/* The map's entries as columns, in the order a map value keeps its keys
   (bytes, then length), which is the order the general path sets them;
   false when an entry is not a column or a key repeats. */
static bool map_columns(const cypher_ast_node *map, const cypher_ast_str *row, load_fast *f)
{
    if (!map)
        return true;
    if (map->kind != CYPHER_AST_MAP || map->u.list.count > FAST_COLS_MAX)
        return false;
    for (size_t i = 0; i < map->u.list.count; i++) {
        const cypher_ast_node *entry = map->u.list.items[i];
        fast_col c;
        if (!column_expr(entry->u.entry.value, row, &c))
            return false;
        c.entry = entry;
        const cypher_ast_str *key = &entry->u.entry.key;
        size_t at = f->ncols;
        for (; at > 0; at--) {
            const cypher_ast_str *prev = &f->cols[at - 1].entry->u.entry.key;
            size_t n = prev->len < key->len ? prev->len : key->len;
            int cmp = memcmp(prev->ptr, key->ptr, n);
            if (cmp == 0 && prev->len == key->len)
                return false;   /* the later one wins in a map: leave it to the map */
            if (cmp < 0 || (cmp == 0 && prev->len < key->len))
                break;
            f->cols[at] = f->cols[at - 1];
        }
        f->cols[at] = c;
        f->ncols++;
    }
    return true;
}

static bool plain_part(const cypher_ast_node *part, size_t len)
{
    return !part->u.part.variable && part->u.part.kind == CYPHER_PATH_PLAIN &&
           part->u.part.path->u.list.count == len;
}

/* CREATE (n:L... {k: c, ...}) with nothing after it. */
static bool plan_node(const cypher_ast_node *create, const cypher_ast_str *row, load_fast *f)
{
    if (create->u.list.count != 1 || !plain_part(create->u.list.items[0], 1))
        return false;
    const cypher_ast_node *n = create->u.list.items[0]->u.part.path->u.list.items[0];
    if (n->u.node.labels_any ||
        (n->u.node.variable && same_str(&n->u.node.variable->u.name, row)))
        return false;
    f->node = n;
    return map_columns(n->u.node.properties, row, f);
}

/* The index of one key over (label, the map's one key) of a MATCH node
   pattern with a variable, one label and {key: column}. */
static int match_end(exec *x, const cypher_ast_node *n, const cypher_ast_str *row,
                     load_fast *f, strata_index *index, bool *ok)
{
    *ok = false;
    const cypher_ast_node *props = n->u.node.properties;
    if (!n->u.node.variable || same_str(&n->u.node.variable->u.name, row) ||
        n->u.node.labels.count != 1 || n->u.node.labels_any || !props ||
        props->kind != CYPHER_AST_MAP || props->u.list.count != 1)
        return 0;
    fast_col c;
    const cypher_ast_node *entry = props->u.list.items[0];
    if (!column_expr(entry->u.entry.value, row, &c))
        return 0;
    c.entry = entry;
    cypher_ast_node *label = n->u.node.labels.items[0];
    strata_token ltok, ktok;
    /* a label or key nobody has matches nothing: the general path says so */
    if (!exec_cached_token(x, &label->u.label.token_plus1, STRATA_LABEL, &label->u.label.name,
                           &ltok) ||
        !exec_cached_token(x, (_Atomic uint32_t *)&entry->u.entry.token_plus1, STRATA_KEY,
                           &entry->u.entry.key, &ktok))
        return 0;
    strata_index *ids = NULL;
    size_t nids = 0;
    if (exec_index_list(x, &ids, &nids) != 0)
        return exec_oom(x);
    for (size_t i = 0; i < nids && !*ok; i++) {
        strata_index_info info;
        if (strata_index_info_get(exec_view(x), ids[i], &info) == STRATA_OK &&
            !info.relationships && info.token == ltok && info.nkeys == 1 &&
            info.keys[0] == ktok) {
            *index = ids[i];
            *ok = true;
        }
    }
    exec_index_list_free(x, &ids);
    if (*ok)
        f->cols[f->ncols++] = c;
    return 0;
}

/* MATCH (a:L {k: c}), (b:M {j: c'}) CREATE (a)-[:T]->(b), nothing after. */
static int plan_rels(exec *x, const cypher_ast_node *match, const cypher_ast_node *create,
                     const cypher_ast_str *row, load_fast *f, bool *ok)
{
    *ok = false;
    if (match->u.match.optional || match->u.match.where || match->u.match.parts.count != 2 ||
        create->u.list.count != 1 || !plain_part(create->u.list.items[0], 3))
        return 0;
    const cypher_ast_node *ends[2];
    for (size_t k = 0; k < 2; k++) {
        const cypher_ast_node *part = match->u.match.parts.items[k];
        if (!plain_part(part, 1))
            return 0;
        ends[k] = part->u.part.path->u.list.items[0];
    }
    const cypher_ast_str *va = &ends[0]->u.node.variable->u.name;
    const cypher_ast_list *el = &create->u.list.items[0]->u.part.path->u.list;
    const cypher_ast_node *r = el->items[1];
    if (r->u.rel.variable || r->u.rel.types.count != 1 || r->u.rel.var_length ||
        r->u.rel.properties || (r->u.rel.dir != CYPHER_DIR_RIGHT && r->u.rel.dir != CYPHER_DIR_LEFT))
        return 0;
    size_t at[2];
    for (size_t k = 0; k < 2; k++) {
        const cypher_ast_node *n = el->items[2 * k];
        if (!n->u.node.variable || n->u.node.labels.count || n->u.node.properties)
            return 0;
        at[k] = same_str(&n->u.node.variable->u.name, va) ? 0 : 1;
    }
    bool fits = true;
    for (size_t k = 0; k < 2 && fits; k++)
        if (match_end(x, ends[k], row, f, &f->index[k], &fits) != 0)
            return -1;
    /* two ends under one name would be one node: the general path's */
    if (!fits || same_str(va, &ends[1]->u.node.variable->u.name))
        return 0;
    for (size_t k = 0; k < 2; k++)
        if (!same_str(&el->items[2 * k]->u.node.variable->u.name,
                      &ends[at[k]]->u.node.variable->u.name))
            return 0;   /* a variable the MATCH does not bind */
    bool right = r->u.rel.dir == CYPHER_DIR_RIGHT;
    f->from = right ? at[0] : at[1];
    f->to = right ? at[1] : at[0];
    f->rel = r;
    f->rels = true;
    *ok = true;
    return 0;
}

int load_fast_plan(exec *x, const cypher_ast_node *q, size_t i, size_t batch,
                   load_fast **out)
{
    *out = NULL;
#ifdef STRATA_TESTING
    if (load_csv_fast_disabled)
        return 0;
#endif
    const cypher_ast_node *load = q->u.list.items[i];
    size_t after = q->u.list.count - i - 1;
    /* first in its query: no variable is bound before it, so the MATCH
       binds both its nodes and CREATE's node is new */
    if (!x->g || i != 0 || !load->u.load_csv.with_headers || after < 1 || after > 2)
        return 0;
    const cypher_ast_node *first = q->u.list.items[i + 1];
    const cypher_ast_node *last = q->u.list.items[q->u.list.count - 1];
    const cypher_ast_str *row = &load->u.load_csv.alias->u.name;
    load_fast *f = mem_calloc(x->m, sizeof *f);
    if (!f)
        return exec_oom(x);
    f->batch = batch ? batch : 1;
    bool ok = false;
    if (after == 1 && first->kind == CYPHER_AST_CREATE) {
        ok = plan_node(first, row, f);
    } else if (after == 2 && first->kind == CYPHER_AST_MATCH &&
               last->kind == CYPHER_AST_CREATE) {
        if (plan_rels(x, first, last, row, f, &ok) != 0) {
            mem_free(x->m, f);
            return -1;
        }
    }
    if (ok) {
        *out = f;
#ifdef STRATA_TESTING
        load_csv_fast_runs++;
#endif
    } else
        mem_free(x->m, f);
    return 0;
}

static void release_held(load_fast *f)
{
    for (size_t i = 0; i < f->nheld * f->ncols; i++)
        value_release(&f->held[i]);
    f->nheld = 0;
}

void load_fast_free(exec *x, load_fast **fp)
{
    load_fast *f = *fp;
    if (!f)
        return;
    release_held(f);
    if (f->held)
        mem_free(x->m, f->held);
    mem_free(x->m, f);
    *fp = NULL;
}

void load_fast_columns(load_fast *f, const value *keys, size_t n)
{
    for (size_t c = 0; c < f->ncols; c++) {
        f->cols[c].field = -1;
        for (size_t k = 0; k < n && f->cols[c].field < 0; k++) {
            size_t len;
            const char *s = value_str(&keys[k], &len);
            if (len == f->cols[c].len && memcmp(s, f->cols[c].name, len) == 0)
                f->cols[c].field = (long)k;
        }
    }
}

size_t load_fast_held(const load_fast *f) { return f->nheld; }

/* Field fd as its column reads it: null when empty and unquoted (or
   absent), toInteger's answer, or the string. */
static int convert(exec *x, const fast_col *c, csv_field fd, value *out)
{
    *out = value_null();
    if (fd.len == 0 && !fd.quoted)
        return 0;
    if (!c->to_integer)
        return make_string(x, fd.ptr, fd.len, out);
    int64_t i;
    if (string_to_integer(fd.ptr, &i))
        *out = value_int(i);
    return 0;
}

int load_fast_take(exec *x, load_fast *f, const csv_reader *r)
{
    if (!f->held) {
        f->held = mem_calloc(x->m, mem_array_size(f->batch, f->ncols ? f->ncols * sizeof(value) : 1));
        if (!f->held)
            return exec_oom(x);
    }
    value *v = &f->held[f->nheld * f->ncols];
    size_t n = csv_nfields(r);
    for (size_t c = 0; c < f->ncols; c++) {
        long at = f->cols[c].field;
        csv_field fd = at >= 0 && (size_t)at < n ? csv_get(r, (size_t)at)
                                                   : (csv_field){"", 0, false};
        if (convert(x, &f->cols[c], fd, &v[c]) != 0) {
            for (size_t k = 0; k < c; k++)
                value_release(&v[k]);
            return -1;
        }
    }
    f->nheld++;
    return 0;
}

/* One record of CREATE (n:L... {k: c, ...}), as op_create does it. */
static int create_node(exec *x, load_fast *f, const value *v)
{
    const cypher_ast_node *n = f->node;
    size_t nl = n->u.node.labels.count;
    strata_token labels[nl + 1];
    if (create_labels(x, n, labels) != 0)
        return -1;
    uint64_t id;
    strata_status s = strata_node_create(x->g, labels, nl, &id);
    if (s != STRATA_OK)
        return exec_status(x, n, s);
    x->stats.nodes_created++;
    for (size_t i = 0; i < nl; i++) {
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++)
            dup = labels[j] == labels[i];
        x->stats.labels_added += !dup;
    }
    const cypher_ast_node *props = n->u.node.properties;
    for (size_t c = 0; c < f->ncols; c++) {
        if (value_is_null(&v[c]))
            continue;
        cypher_ast_node *entry = (cypher_ast_node *)f->cols[c].entry;
        strata_token key;
        s = exec_cached_intern(x, &entry->u.entry.token_plus1, STRATA_KEY,
                               entry->u.entry.key.ptr, &key);
        if (s == STRATA_OK) {
            strata_value h = {v[c]};
            s = strata_node_set(x->g, id, key, &h);
        }
        if (s != STRATA_OK)
            return exec_status(x, props, s);
        x->stats.props_set++;
    }
    return 0;
}

typedef struct candidates {
    uint64_t local[FAST_CANDIDATES];
    uint64_t *ids;
    size_t n, cap;
} candidates;

/* The nodes under key in index idx (none for null), drained before any
   write (an iterator holds the version it reads). */
static int seek(exec *x, strata_index idx, const value *key, candidates *out)
{
    out->n = 0;
    if (value_is_null(key))
        return 0;
    /* one node under the key (the common case) needs no iterator */
    const index_set *set = exec_view(x)->ver->indexes;
    int pos = idxset_find(set, idx);
    uint64_t first;
    int found = pos < 0 ? 2 : lstack_point(idxset_stack(set, (uint32_t)pos), key, &first);
    if (found < 2) {
        if (found == 1)
            out->ids[out->n++] = first;
        return 0;
    }
    strata_value h = {*key};
    const strata_value *hp = &h;
    strata_node_iter *it = NULL;
    strata_status s = strata_index_lookup(exec_view(x), idx, &hp, 1, &it);
    if (s == STRATA_ENOTFOUND)
        return 0;
    if (s != STRATA_OK)   /* the view's message, as start_iter_exact gives it */
        return s == STRATA_ENOMEM ? exec_oom(x) : exec_status(x, NULL, s);
    strata_id id;
    int rc = 0;
    while (rc == 0 && strata_node_iter_next(it, &id)) {
        if (out->n == out->cap) {
            size_t cap = out->cap * 2;
            uint64_t *p = mem_alloc(x->m, mem_array_size(cap, sizeof *p));
            if (!p) {
                rc = exec_oom(x);
                break;
            }
            memcpy(p, out->ids, out->n * sizeof *p);
            if (out->ids != out->local)
                mem_free(x->m, out->ids);
            out->ids = p;
            out->cap = cap;
        }
        out->ids[out->n++] = id;
    }
    strata_node_iter_free(&it);
    return rc;
}

/* One record of MATCH (a {k: c}), (b {j: c'}) CREATE (a)-[:T]->(b): a
   relationship per pair of candidates, a's outermost. */
static int create_rels(exec *x, load_fast *f, const value *v, candidates *cand)
{
    if (value_is_null(&v[0]) || value_is_null(&v[1]))
        return 0;
    for (size_t k = 0; k < 2; k++)
        if (seek(x, f->index[k], &v[k], &cand[k]) != 0)
            return -1;
    if (cand[0].n == 0 || cand[1].n == 0)
        return 0;
    cypher_ast_node *t = f->rel->u.rel.types.items[0];
    strata_token type;
    strata_status s = exec_cached_intern(x, &t->u.label.token_plus1, STRATA_RELTYPE,
                                         t->u.label.name.ptr, &type);
    if (s != STRATA_OK)
        return exec_status(x, f->rel, s);
    uint64_t pair[2];
    for (size_t i = 0; i < cand[0].n; i++) {
        pair[0] = cand[0].ids[i];
        for (size_t j = 0; j < cand[1].n; j++) {
            pair[1] = cand[1].ids[j];
            strata_id id;
            s = strata_rel_create(x->g, pair[f->from], pair[f->to], type, &id);
            if (s != STRATA_OK)
                return exec_status(x, f->rel, s);
            x->stats.rels_created++;
        }
    }
    return 0;
}

int load_fast_apply(exec *x, load_fast *f)
{
    candidates cand[2];
    for (size_t k = 0; k < 2; k++) {
        cand[k].ids = cand[k].local;
        cand[k].n = 0;
        cand[k].cap = FAST_CANDIDATES;
    }
    int rc = 0;
    for (size_t r = 0; r < f->nheld && rc == 0; r++) {
        const value *v = &f->held[r * f->ncols];
        rc = exec_tick(x);
        if (rc == 0)
            rc = f->rels ? create_rels(x, f, v, cand) : create_node(x, f, v);
    }
    for (size_t k = 0; k < 2; k++)
        if (cand[k].ids != cand[k].local)
            mem_free(x->m, cand[k].ids);
    release_held(f);
    return rc;
}
