/*
 * import — strata_import: nodes and relationships from CSV files, as one
 * unit of writes (strata.h has the contract; README.md, "Bulk import",
 * and docs/IMPORT.md the file conventions).
 *
 * How it runs: every node group, then every relationship group, in the
 * order given; each group's first file opens with the header
 * (import_header.h), its other files hold records only.  Records become
 * writes through the public API (strata_node_create, strata_node_set,
 * strata_rel_create, ...) inside one transaction (or, when the caller has
 * one open, one statement of it), so a failure anywhere is undone by
 * strata_rollback / strata_statement_end(false) and the graph ends exactly
 * as it began.  The ids of ID, START_ID and END_ID columns map to node ids
 * through the import's own table (id_map.h), dropped at the end.
 *
 * Faults: a bad row (a field that does not parse as its column's type, an
 * unknown end, a duplicate id, a wrong field count, no type, bytes that
 * are not UTF-8) fails the import or, with skip_bad_rows, is counted,
 * handed to on_bad_row and left out; everything else — malformed CSV (the
 * reader cannot tell where the next record starts), a bad header, a file
 * that cannot be read, out of memory, a write the graph refuses, an
 * interrupt — always fails it.  Either way the fault names file, line and
 * column.
 *
 * Invariants:
 *   1. A row is either written whole or not at all: everything that can
 *      make it a bad row is checked before its first write.
 *   2. Every allocation of the importer's own goes through mem_scratch(),
 *      so the allocation-failure sweeps of test builds reach it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/bulk.h"
#include "core/graph_handle.h"
#include "query/csv.h"
#include "query/id_map.h"
#include "query/import_header.h"
#include "storage/mem.h"

/* Records between two progress callbacks and interrupt checks: often
   enough that Ctrl-C stops a large import at once, rarely enough to cost
   nothing. */
#define PROGRESS_EVERY 0x10000
#define INTERRUPT_EVERY 0x400

/* Relationship rows read before their ends are looked up, where the bulk
   writer takes them (load_rel_batches); a divisor of INTERRUPT_EVERY. */
#define REL_BATCH 64

/* A batched relationship row: its line, and its START_ID, END_ID and
   :TYPE fields kept in importer.fields. */
typedef struct waiting_row {
    uint64_t line;
    size_t at[3], len[3];
    id_map_hint ends[2];   /* where START_ID's and END_ID's nodes are looked up */
} waiting_row;

/* Relationship types remembered by name (rel_type). */
#define TYPES_SEEN 8

typedef struct type_seen {
    char *name;       /* NULL: an empty entry */
    size_t len, cap;
    strata_token token;
} type_seen;

/* What a row function returns. */
enum { ROW_OK = 0, ROW_BAD = -1, ROW_FATAL = -2 };

typedef struct importer {
    strata_graph *g;
    const strata_import_options *o;
    strata_import_report *rep;
    char delim, array_delim, quote;
    id_map *ids;
    id_spaces spaces;
    /* the bulk writer (core/bulk.h) when the import runs in a transaction
       of its own, and a row's properties as it takes them */
    bulk_writer *bulk;
    bulk_prop *row_props;
    waiting_row waiting[REL_BATCH];
    char *fields;             /* the batch's kept fields, each NUL-terminated */
    size_t fields_len, fields_cap;
    strata_value *vals;       /* one per column of the current header (null: not
                                 set), for each row a batch holds */
    size_t nvals;
    strata_value *row;        /* the row being read or written: a slice of vals */
    strata_token *labels;     /* the current node's labels */
    size_t nlabels, cap_labels;
    char *name;               /* a label being interned, NUL-terminated */
    size_t name_cap;
    /* the relationship types interned last, so rows of a few types
       intern each once (no token lock and lookup per row) */
    type_seen types[TYPES_SEEN];
    size_t next_type;
    /* the :LABEL field of the node row before and its labels' tokens:
       rows mostly repeat it, and then intern nothing */
    char *label_field;
    size_t label_len, label_cap;
    strata_token *label_tokens;
    size_t nlabel_tokens, label_tokens_cap;
    bool label_cached;
    /* the file being read */
    const char *file;
    FILE *f;
    uint64_t file_size;
    /* the fault being described */
    strata_status status;
    uint32_t column;
    uint64_t line;
    char err[512];
} importer;

static void fault(importer *im, strata_status s, size_t field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Describes what went wrong (the file and line are added by the caller
   that knows them). */
static void fault(importer *im, strata_status s, size_t field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(im->err, sizeof im->err, fmt, ap);
    va_end(ap);
    im->status = s;
    im->column = (uint32_t)field;
}

static void out_of_memory(importer *im, const char *where)
{
    fault(im, STRATA_ENOMEM, 0, "out of memory %s", where);
}

/* A failure of the graph's own call, with its message. */
static int graph_refused(importer *im, strata_status s)
{
    fault(im, s, 0, "%s", strata_errmsg(im->g));
    return ROW_FATAL;
}

/* ---- options ------------------------------------------------------------ */

static bool bad_separator(char c) { return c == '\n' || c == '\r' || c == '\0'; }

static int check_options(importer *im)
{
    const strata_import_options *o = im->o;
    if (!o->sources && o->nsources) {
        fault(im, STRATA_EINVAL, 0, "strata_import: sources is NULL");
        return -1;
    }
    for (size_t i = 0; i < o->nsources; i++) {
        const strata_import_source *s = &o->sources[i];
        bool files_ok = s->nfiles > 0 && s->files;
        for (size_t k = 0; files_ok && k < s->nfiles; k++)
            files_ok = s->files[k] && s->files[k][0];
        if (!files_ok || (s->nlabels && !s->labels)) {
            fault(im, STRATA_EINVAL, 0, "strata_import: source %zu has %s", i + 1,
                  files_ok ? "labels NULL" : "no files (or a NULL or empty path)");
            return -1;
        }
    }
    char d = im->delim, a = im->array_delim, q = im->quote;
    if (bad_separator(d) || bad_separator(a) || bad_separator(q) || d == a || d == q || a == q) {
        fault(im, STRATA_EINVAL, 0,
              "strata_import: the delimiter, array delimiter and quote must be three "
              "different bytes, none a line end");
        return -1;
    }
    return 0;
}

/* ---- rows --------------------------------------------------------------- */

static void free_values(strata_value *vals, size_t n)
{
    /* a scalar holds nothing to release: a call per field saved */
    for (size_t i = 0; i < n; i++) {
        value *v = &vals[i].v;
        if (value_kind(v) >= VAL_STRING)
            value_release(v);
        else
            *v = value_null();
    }
}

/* Parses every property column of the record into im->row. */
static int parse_values(importer *im, const header *h, const csv_reader *r)
{
    if (csv_nfields(r) != h->n) {
        fault(im, STRATA_EINVAL, 0, "%zu fields, but the header has %zu", csv_nfields(r), h->n);
        return ROW_BAD;
    }
    /* every field, stored or not: a message must never quote bytes that
       are not text */
    size_t field, at;
    if (!csv_record_utf8(r, &field, &at)) {
        fault(im, STRATA_EINVAL, field + 1,
              "field %zu is not valid UTF-8 (byte %zu of the field)", field + 1, at + 1);
        return ROW_BAD;
    }
    for (size_t i = 0; i < h->n; i++) {
        const column *c = &h->cols[i];
        bool stored = c->kind == COL_PROPERTY || (c->kind == COL_ID && c->name[0]);
        strata_status s = STRATA_OK;
        if (stored && column_value(c, csv_get(r, i), im->array_delim, &im->row[i].v, im->err,
                                   sizeof im->err, &s) != 0) {
            im->status = s;
            im->column = (uint32_t)(i + 1);
            return s == STRATA_ENOMEM ? ROW_FATAL : ROW_BAD;
        }
    }
    return ROW_OK;
}

static int grow_labels(importer *im)
{
    size_t cap = im->cap_labels ? im->cap_labels * 2 : 8;
    strata_token *l = mem_realloc(mem_scratch(), im->labels, cap * sizeof *l);
    if (!l)
        return -1;
    im->labels = l;
    im->cap_labels = cap;
    return 0;
}

static int grow_name(importer *im, size_t len)
{
    size_t cap = len + 1 > 2 * im->name_cap ? len + 1 : 2 * im->name_cap;
    char *b = mem_realloc(mem_scratch(), im->name, cap);
    if (!b)
        return -1;
    im->name = b;
    im->name_cap = cap;
    return 0;
}

/* Interns label name[0..len) into im->labels.  A label name is any the
   engine takes (1..65535 bytes of UTF-8, no NUL), as in Cypher;
   strata_token_intern checks length and encoding.  field: the :LABEL
   field, or 0 for a group's labels. */
static int add_label(importer *im, const char *name, size_t len, size_t field)
{
    if (len == 0)
        return ROW_OK;
    if (memchr(name, '\0', len)) {
        fault(im, STRATA_EINVAL, field, "a label holds a NUL byte");
        return ROW_BAD;
    }
    if ((len >= im->name_cap && grow_name(im, len) != 0) ||
        (im->nlabels == im->cap_labels && grow_labels(im) != 0)) {
        out_of_memory(im, "reading labels");
        return ROW_FATAL;
    }
    memcpy(im->name, name, len);
    im->name[len] = '\0';
    strata_status s = strata_token_intern(im->g, STRATA_LABEL, im->name, &im->labels[im->nlabels]);
    if (s != STRATA_OK) {
        fault(im, s, field, "label '%.64s%s': %s", im->name, len > 64 ? "..." : "",
              strata_errmsg(im->g));
        return s == STRATA_ENOMEM ? ROW_FATAL : ROW_BAD;
    }
    im->nlabels++;
    return ROW_OK;
}

/* Appends the labels of s[0..len), separated by sep. */
static int add_labels(importer *im, const char *s, size_t len, char sep, size_t field)
{
    for (const char *p = s, *end = s + len; p <= end;) {
        const char *q = memchr(p, sep, (size_t)(end - p));
        if (!q)
            q = end;
        int rc = add_label(im, p, (size_t)(q - p), field);
        if (rc != ROW_OK)
            return rc;
        p = q + 1;
    }
    return ROW_OK;
}

/* Remembers the labels of field f, now im->labels[from..nlabels), for the
   next row (out of memory: nothing is remembered, which costs only time). */
static void remember_labels(importer *im, csv_field f, size_t from)
{
    size_t n = im->nlabels - from;
    im->label_cached = false;
    if (f.len + 1 > im->label_cap) {
        char *b = mem_realloc(mem_scratch(), im->label_field, f.len + 1);
        if (!b)
            return;
        im->label_field = b;
        im->label_cap = f.len + 1;
    }
    if (n > im->label_tokens_cap) {
        strata_token *t = mem_realloc(mem_scratch(), im->label_tokens, n * sizeof *t);
        if (!t)
            return;
        im->label_tokens = t;
        im->label_tokens_cap = n;
    }
    memcpy(im->label_field, f.ptr, f.len);
    im->label_len = f.len;
    if (n)   /* an empty field: no tokens, and maybe no array yet */
        memcpy(im->label_tokens, im->labels + from, n * sizeof *im->labels);
    im->nlabel_tokens = n;
    im->label_cached = true;
}

/* The labels of a node row's :LABEL field, appended to im->labels. */
static int row_labels(importer *im, csv_field f, size_t field)
{
    if (im->label_cached && f.len == im->label_len &&
        memcmp(f.ptr, im->label_field, f.len) == 0) {
        while (im->nlabels + im->nlabel_tokens > im->cap_labels)
            if (grow_labels(im) != 0) {
                out_of_memory(im, "reading labels");
                return ROW_FATAL;
            }
        if (im->nlabel_tokens)
            memcpy(im->labels + im->nlabels, im->label_tokens,
                   im->nlabel_tokens * sizeof *im->labels);
        im->nlabels += im->nlabel_tokens;
        return ROW_OK;
    }
    size_t from = im->nlabels;
    int rc = add_labels(im, f.ptr, f.len, im->array_delim, field);
    if (rc == ROW_OK)
        remember_labels(im, f, from);
    return rc;
}

/* Sets the parsed properties on a node or relationship. */
static int set_properties(importer *im, const header *h, strata_id id, bool rel)
{
    for (size_t i = 0; i < h->n; i++) {
        if (value_is_null(&im->row[i].v))
            continue;
        strata_status s = rel ? strata_rel_set(im->g, id, h->cols[i].key, &im->row[i])
                              : strata_node_set(im->g, id, h->cols[i].key, &im->row[i]);
        if (s != STRATA_OK)
            return graph_refused(im, s);
        im->rep->properties++;
    }
    return ROW_OK;
}

/* The parsed properties of the row, for the bulk writer; their number. */
static size_t collect_properties(importer *im, const header *h)
{
    size_t n = 0;
    for (size_t i = 0; i < h->n; i++)
        if (!value_is_null(&im->row[i].v))
            im->row_props[n++] = (bulk_prop){ h->cols[i].key, &im->row[i] };
    return n;
}

/* Before a direct write call: the relationships the bulk writer holds
   back join their nodes first (core/bulk.h, invariant 1). */
static int flush_bulk(importer *im)
{
    strata_status s = bulk_flush(im->bulk);
    return s == STRATA_OK ? ROW_OK : graph_refused(im, s);
}

static int show_id(csv_field f) { return (int)(f.len > 60 ? 60 : f.len); }

/* One node record. */
static int node_row(importer *im, const header *h, const csv_reader *r, size_t base_labels)
{
    im->nlabels = base_labels;
    int rc = parse_values(im, h, r);
    if (rc == ROW_OK && h->label >= 0)
        rc = row_labels(im, csv_get(r, (size_t)h->label), (size_t)h->label + 1);
    if (rc != ROW_OK)
        return rc;
    csv_field idf = {NULL, 0, false};
    uint32_t space = 0;
    if (h->id >= 0) {
        idf = csv_get(r, (size_t)h->id);
        space = h->cols[h->id].space;
        uint64_t seen;
        if (idf.len == 0) {
            fault(im, STRATA_EINVAL, (size_t)h->id + 1, "empty node id");
            return ROW_BAD;
        }
        if (id_map_find(im->ids, space, idf.ptr, idf.len, &seen)) {
            fault(im, STRATA_ECONSTRAINT, (size_t)h->id + 1,
                  "duplicate node id '%.*s' in id space %s", show_id(idf), idf.ptr,
                  id_space_name(&im->spaces, space));
            return ROW_BAD;
        }
    }
    strata_id node;
    int bulk = BULK_DECLINED;
    size_t nprops = 0;
    if (im->bulk) {
        nprops = collect_properties(im, h);
        bulk = bulk_node_create(im->bulk, im->labels, im->nlabels, im->row_props, nprops, &node);
        if (bulk != STRATA_OK && bulk != BULK_DECLINED)
            return graph_refused(im, (strata_status)bulk);
        if (bulk == BULK_DECLINED && flush_bulk(im) != ROW_OK)
            return ROW_FATAL;
    }
    if (bulk == BULK_DECLINED) {
        strata_status s = strata_node_create(im->g, im->labels, im->nlabels, &node);
        if (s != STRATA_OK)
            return graph_refused(im, s);
    }
    im->rep->nodes++;
    if (idf.ptr && id_map_add(im->ids, space, idf.ptr, idf.len, node, NULL) < 0) {
        out_of_memory(im, "in the id table");
        return ROW_FATAL;
    }
    if (bulk == BULK_DECLINED)
        return set_properties(im, h, node, false);
    im->rep->properties += nprops;
    return ROW_OK;
}

/* The node the id in field f (column col) refers to; hint: where to look
   (id_map_prefetch), or NULL. */
static int resolve_end(importer *im, const header *h, csv_field f, long col,
                       const id_map_hint *hint, strata_id *out)
{
    uint32_t space = h->cols[col].space;
    if (hint ? id_map_find_at(im->ids, space, f.ptr, f.len, hint, out)
             : id_map_find(im->ids, space, f.ptr, f.len, out))
        return ROW_OK;
    fault(im, STRATA_ENOTFOUND, (size_t)col + 1,
          "unknown %s '%.*s' (no node has that id in id space %s)",
          col == h->start ? "START_ID" : "END_ID", show_id(f), f.ptr,
          id_space_name(&im->spaces, space));
    return ROW_BAD;
}

/* Keeps name as a type interned lately, in place of the oldest (out of
   memory: not kept, which costs only time). */
static void remember_type(importer *im, const char *name, size_t len, strata_token token)
{
    type_seen *t = &im->types[im->next_type];
    if (len + 1 > t->cap) {
        char *b = mem_realloc(mem_scratch(), t->name, len + 1);
        if (!b)
            return;
        t->name = b;
        t->cap = len + 1;
    }
    memcpy(t->name, name, len + 1);
    t->len = len;
    t->token = token;
    im->next_type = (im->next_type + 1) % TYPES_SEEN;
}

static bool seen_type(const importer *im, const char *name, size_t len, strata_token *out)
{
    for (size_t i = 0; i < TYPES_SEEN; i++) {
        const type_seen *t = &im->types[i];
        if (t->name && t->len == len && memcmp(t->name, name, len) == 0) {
            *out = t->token;
            return true;
        }
    }
    return false;
}

/* The relationship type of a record: its :TYPE field f (NUL-terminated;
   empty when there is none), else the group's. */
static int rel_type(importer *im, const header *h, csv_field f, const char *fallback,
                    strata_token *out)
{
    const char *name = fallback;
    size_t field = 0;
    if (h->type >= 0 && f.len > 0) {
        field = (size_t)h->type + 1;
        if (memchr(f.ptr, '\0', f.len)) {
            fault(im, STRATA_EINVAL, field, "a relationship type holds a NUL byte");
            return ROW_BAD;
        }
        name = f.ptr;
    }
    if (!name || !*name) {
        fault(im, STRATA_EINVAL, field,
              "no relationship type: give a :TYPE column or a type for the file group");
        return ROW_BAD;
    }
    size_t len = strlen(name);
    if (seen_type(im, name, len, out))
        return ROW_OK;
    strata_status s = strata_token_intern(im->g, STRATA_RELTYPE, name, out);
    if (s != STRATA_OK) {
        fault(im, s, field, "type '%.64s%s': %s", name, len > 64 ? "..." : "",
              strata_errmsg(im->g));
        return s == STRATA_ENOMEM ? ROW_FATAL : ROW_BAD;
    }
    remember_type(im, name, len, *out);
    return ROW_OK;
}

/* A relationship record whose properties are parsed into im->row: its
   ends and type (the fields start, end and type) looked up, then written.
   hints: where the ends are (id_map_prefetch), or NULL. */
static int rel_write(importer *im, const header *h, csv_field start_f, csv_field end_f,
                     csv_field type_f, const char *type_name, const id_map_hint *hints)
{
    strata_id start, end, rel;
    strata_token type;
    int rc = resolve_end(im, h, start_f, h->start, hints, &start);
    if (rc == ROW_OK)
        rc = resolve_end(im, h, end_f, h->end, hints ? hints + 1 : NULL, &end);
    if (rc == ROW_OK)
        rc = rel_type(im, h, type_f, type_name, &type);
    if (rc != ROW_OK)
        return rc;
    if (im->bulk) {
        size_t nprops = collect_properties(im, h);
        int bulk = bulk_rel_create(im->bulk, start, end, type, im->row_props, nprops, &rel);
        if (bulk == STRATA_OK) {
            im->rep->relationships++;
            im->rep->properties += nprops;
            return ROW_OK;
        }
        if (bulk != BULK_DECLINED)
            return graph_refused(im, (strata_status)bulk);
        if (flush_bulk(im) != ROW_OK)
            return ROW_FATAL;
    }
    strata_status s = strata_rel_create(im->g, start, end, type, &rel);
    if (s != STRATA_OK)
        return graph_refused(im, s);
    im->rep->relationships++;
    return set_properties(im, h, rel, true);
}

static const csv_field no_field = { "", 0, false };

static int rel_row(importer *im, const header *h, const csv_reader *r, const char *type_name)
{
    int rc = parse_values(im, h, r);
    if (rc != ROW_OK)
        return rc;
    return rel_write(im, h, csv_get(r, (size_t)h->start), csv_get(r, (size_t)h->end),
                     h->type >= 0 ? csv_get(r, (size_t)h->type) : no_field, type_name, NULL);
}

/* ---- progress and interrupts ------------------------------------------- */

/* -1 when the caller's callback or strata_interrupt asks to stop. */
static int check_stop(importer *im, bool report_progress)
{
    if (atomic_load_explicit(&graph_catalog(im->g)->interrupt, memory_order_relaxed)) {
        fault(im, STRATA_EINTERRUPTED, 0, "the import was interrupted");
        return -1;
    }
    if (!report_progress || !im->o->on_progress)
        return 0;
    long pos = im->f ? ftell(im->f) : 0;
    strata_import_progress p = {im->file, pos > 0 ? (uint64_t)pos : 0, im->file_size,
                                im->rep->rows};
    if (!im->o->on_progress(im->o->ctx, &p)) {
        fault(im, STRATA_EINTERRUPTED, 0, "the import was stopped by its progress callback");
        return -1;
    }
    return 0;
}

/* ---- files -------------------------------------------------------------- */

static int open_file(importer *im, const char *path, csv_reader **r)
{
    im->file = path;
    im->line = 0;
    if (!(im->f = fopen(path, "rb"))) {
        fault(im, STRATA_EIO, 0, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    im->file_size = fstat(fileno(im->f), &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    if (!(*r = csv_new(im->f, path, im->delim))) {
        out_of_memory(im, "opening a file");
        return -1;
    }
    csv_set_quote(*r, im->quote);
    if (im->o->field_max)
        csv_set_field_max(*r, im->o->field_max);
    return check_stop(im, true);
}

static void close_file(importer *im, csv_reader **r)
{
    csv_free(r);
    if (im->f)
        fclose(im->f);
    im->f = NULL;
}

/* A reader's failure as the import's: its message without the
   "NAME:LINE: " the reader puts in front (the report has both apart). */
static void reader_fault(importer *im, const csv_reader *r, csv_status s)
{
    const char *msg = csv_error(r);
    char prefix[64];
    im->line = csv_error_line(r);
    int n = snprintf(prefix, sizeof prefix, ":%llu: ", (unsigned long long)im->line);
    size_t name_len = strlen(csv_name(r));
    if (strncmp(msg, csv_name(r), name_len) == 0 && n > 0 &&
        strncmp(msg + name_len, prefix, (size_t)n) == 0)
        msg += name_len + (size_t)n;
    strata_status st = s == CSV_NOMEM ? STRATA_ENOMEM
                       : ferror(im->f) ? STRATA_EIO
                                       : STRATA_EINVAL;
    fault(im, st, 0, "%s", msg);
}

static int read_header(importer *im, const strata_import_source *src, csv_reader *r, header *h)
{
    csv_status s = csv_next(r);
    if (s != CSV_RECORD) {
        if (s == CSV_END)
            fault(im, STRATA_EINVAL, 0, "%s is empty: a file group's first file needs a header "
                  "line", im->file);
        else
            reader_fault(im, r, s);
        return -1;
    }
    im->line = csv_record_line(r);
    size_t col;
    strata_status st;
    if (header_parse(h, r, src->relationships, &im->spaces, im->g, im->err, sizeof im->err, &col,
                     &st) != 0) {
        im->status = st;
        im->column = (uint32_t)col;
        return -1;
    }
    free_values(im->vals, im->nvals);
    mem_free(mem_scratch(), im->vals);
    if (im->row_props)
        mem_free(mem_scratch(), im->row_props);
    /* a batch of rows at once where relationship rows go in batches */
    size_t rows = src->relationships && im->bulk ? REL_BATCH : 1;
    im->nvals = h->n * rows;
    im->vals = mem_calloc(mem_scratch(), mem_array_size(im->nvals, sizeof *im->vals));
    im->row = im->vals;
    im->row_props = im->vals ? mem_alloc(mem_scratch(),
                                         mem_array_size(h->n ? h->n : 1, sizeof *im->row_props))
                             : NULL;
    if (!im->row_props) {
        im->nvals = 0;
        out_of_memory(im, "reading a header");
        return -1;
    }
    return 0;
}

/* A bad row: fatal unless bad rows are skipped. */
static int skip_row(importer *im)
{
    if (!im->o->skip_bad_rows)
        return -1;
    im->rep->bad_rows++;
    if (im->o->on_bad_row) {
        strata_import_fault f = {im->file, im->line, im->column, im->err};
        im->o->on_bad_row(im->o->ctx, &f);
    }
    return 0;
}

/* ---- relationship rows in batches ---------------------------------------

   Where the bulk writer takes relationships, their rows go in batches of
   REL_BATCH: each record's properties are parsed and its id and type
   fields kept, then the ends of the whole batch are prefetched from the
   id table and the rows looked up and written in order.  A large id
   table is read at random (the ends are anywhere), and one row at a time
   waits for memory twice a row.  Everything a row reports happens in the
   row's order as before: a batch ends at a record that is bad to parse
   (after the rows before it are written, its fault goes on as alone), at
   the end of the file, and at every REL_BATCH-th row read, so the
   progress and interrupt checks see the same row counts. */

/* Copies field f, NUL-terminated, to the batch's fields; its offset in
   *at.  -1 when out of memory. */
static int keep_field(importer *im, csv_field f, size_t *at)
{
    if (im->fields_len + f.len + 1 > im->fields_cap) {
        size_t cap = 2 * (im->fields_len + f.len + 1);
        char *b = mem_realloc(mem_scratch(), im->fields, cap);
        if (!b)
            return -1;
        im->fields = b;
        im->fields_cap = cap;
    }
    *at = im->fields_len;
    memcpy(im->fields + im->fields_len, f.ptr, f.len);
    im->fields[im->fields_len + f.len] = '\0';
    im->fields_len += f.len + 1;
    return 0;
}

static int keep_row(importer *im, const header *h, const csv_reader *r, waiting_row *w)
{
    csv_field f[3] = { csv_get(r, (size_t)h->start), csv_get(r, (size_t)h->end),
                       h->type >= 0 ? csv_get(r, (size_t)h->type) : no_field };
    for (int i = 0; i < 3; i++) {
        w->len[i] = f[i].len;
        if (keep_field(im, f[i], &w->at[i]) != 0) {
            out_of_memory(im, "reading relationships");
            return ROW_FATAL;
        }
    }
    return ROW_OK;
}

static csv_field kept(const importer *im, const waiting_row *w, int i)
{
    return (csv_field){ im->fields + w->at[i], w->len[i], false };
}

/* Reads up to REL_BATCH records into the batch (*n of them); *rc is
   ROW_OK, or the outcome of a last record that is bad (its fault in im,
   not counted in *n).  Returns the reader's status of the last read. */
static csv_status read_batch(importer *im, const header *h, csv_reader *r, size_t *n, int *rc)
{
    csv_status s = CSV_RECORD;
    im->fields_len = 0;
    *n = 0;
    *rc = ROW_OK;
    while (*n < REL_BATCH && (s = csv_next(r)) == CSV_RECORD) {
        waiting_row *w = &im->waiting[*n];
        im->line = w->line = csv_record_line(r);
        im->rep->rows++;
        im->row = im->vals + *n * h->n;
        *rc = parse_values(im, h, r);
        if (*rc == ROW_OK)
            *rc = keep_row(im, h, r, w);
        if (*rc != ROW_OK) {
            free_values(im->row, h->n);
            break;
        }
        (*n)++;
        if (im->rep->rows % REL_BATCH == 0)
            break;
    }
    return s;
}

/* A row's outcome as the import takes it (row: its number among the
   records read): -1 to stop the import. */
static int row_done(importer *im, int rc, uint64_t row)
{
    if (rc == ROW_FATAL || (rc == ROW_BAD && skip_row(im) != 0))
        return -1;
    if ((row % INTERRUPT_EVERY) == 0 && check_stop(im, row % PROGRESS_EVERY == 0) != 0)
        return -1;
    return 0;
}

/* Writes the n rows of the batch in order, the last of them record
   number last.  -1 to stop the import (the rest released). */
static int write_batch(importer *im, const strata_import_source *src, const header *h,
                       size_t n, uint64_t last)
{
    for (size_t i = 0; i < n; i++) {
        waiting_row *w = &im->waiting[i];
        id_map_prefetch(im->ids, h->cols[h->start].space, im->fields + w->at[0], w->len[0],
                        &w->ends[0]);
        id_map_prefetch(im->ids, h->cols[h->end].space, im->fields + w->at[1], w->len[1],
                        &w->ends[1]);
    }
    for (size_t i = 0; i < n; i++) {
        const waiting_row *w = &im->waiting[i];
        im->row = im->vals + i * h->n;
        im->line = w->line;
        int rc = rel_write(im, h, kept(im, w, 0), kept(im, w, 1), kept(im, w, 2), src->type,
                           w->ends);
        free_values(im->row, h->n);
        if (row_done(im, rc, last - (n - 1 - i)) != 0) {
            /* the report counts the records read up to this one, as when
               rows go one at a time */
            im->rep->rows = last - (n - 1 - i);
            for (size_t k = i + 1; k < n; k++)
                free_values(im->vals + k * h->n, h->n);
            return -1;
        }
    }
    return 0;
}

/* The records of one open relationship file, in batches. */
static int load_rel_batches(importer *im, const strata_import_source *src, const header *h,
                            csv_reader *r)
{
    for (;;) {
        size_t n;
        int bad;
        csv_status s = read_batch(im, h, r, &n, &bad);
        /* a bad record's fault, kept while the rows before it are written */
        strata_status status = im->status;
        uint32_t fault_column = im->column;
        uint64_t line = im->line;
        char err[sizeof im->err];
        if (bad != ROW_OK)
            memcpy(err, im->err, sizeof err);
        int rc = write_batch(im, src, h, n, im->rep->rows - (bad != ROW_OK));
        im->row = im->vals;
        if (rc != 0)
            return -1;
        if (bad != ROW_OK) {
            im->status = status;
            im->column = fault_column;
            im->line = line;
            memcpy(im->err, err, sizeof err);
            if (row_done(im, bad, im->rep->rows) != 0)
                return -1;
        }
        if (s != CSV_RECORD) {
            if (s == CSV_END)
                return 0;
            reader_fault(im, r, s);
            return -1;
        }
    }
}

/* Reads the records of one open file. */
static int load_records(importer *im, const strata_import_source *src, const header *h,
                        csv_reader *r, size_t base_labels)
{
    if (src->relationships && im->bulk)
        return load_rel_batches(im, src, h, r);
    csv_status s;
    while ((s = csv_next(r)) == CSV_RECORD) {
        im->line = csv_record_line(r);
        im->rep->rows++;
        int rc = src->relationships ? rel_row(im, h, r, src->type)
                                    : node_row(im, h, r, base_labels);
        free_values(im->row, h->n);
        if (row_done(im, rc, im->rep->rows) != 0)
            return -1;
    }
    if (s != CSV_END) {
        reader_fault(im, r, s);
        return -1;
    }
    return 0;
}

/* The group's own labels, before any file is read. */
static int group_labels(importer *im, const strata_import_source *src)
{
    im->nlabels = 0;
    for (size_t i = 0; i < src->nlabels && !src->relationships; i++) {
        const char *l = src->labels[i];
        if (!l || !*l) {
            fault(im, STRATA_EINVAL, 0, "a group's label is empty");
            return -1;
        }
        if (add_label(im, l, strlen(l), 0) != ROW_OK)
            return -1;
    }
    return 0;
}

static int load_group(importer *im, const strata_import_source *src)
{
    im->file = NULL;
    im->line = 0;
    if (group_labels(im, src) != 0)
        return -1;
    size_t base_labels = im->nlabels;
    header h = {0};
    int rc = 0;
    for (size_t i = 0; i < src->nfiles && rc == 0; i++) {
        csv_reader *r = NULL;
        rc = open_file(im, src->files[i], &r);
        if (rc == 0 && i == 0)
            rc = read_header(im, src, r, &h);
        if (rc == 0)
            rc = load_records(im, src, &h, r, base_labels);
        close_file(im, &r);
    }
    header_free(&h);
    return rc;
}

/* ---- the whole import -------------------------------------------------- */

/* Every node group, then every relationship group. */
static int load_all(importer *im)
{
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++)
        for (size_t i = 0; i < im->o->nsources && rc == 0; i++)
            if (im->o->sources[i].relationships == (pass == 1))
                rc = load_group(im, &im->o->sources[i]);
    return rc;
}

/* Runs load_all as one unit: a transaction of its own, or a statement of
   the caller's open transaction; undone whole when it fails.  In a
   transaction of its own the rows go through the bulk writer where it
   takes them (core/bulk.h), and everything else through the direct
   write calls. */
static int load_atomically(importer *im)
{
    bool own_txn = !strata_in_transaction(im->g);
    strata_status s = own_txn ? strata_begin(im->g) : strata_statement_begin(im->g);
    if (s == STRATA_OK && own_txn)
        s = bulk_open(im->g, &im->bulk);
    if (s != STRATA_OK) {
        graph_refused(im, s);
        if (own_txn && strata_in_transaction(im->g))
            strata_rollback(im->g);
        return -1;
    }
    int rc = load_all(im);
    if (rc == 0 && im->bulk && flush_bulk(im) != ROW_OK) {
        im->file = NULL;
        im->line = 0;
        rc = -1;
    }
    bulk_close(&im->bulk);
    if (rc != 0) {
        if (own_txn)
            strata_rollback(im->g);
        else
            strata_statement_end(im->g, false);
        return -1;
    }
    s = own_txn ? strata_commit(im->g) : strata_statement_end(im->g, true);
    if (s != STRATA_OK) {
        im->file = NULL;
        im->line = 0;
        graph_refused(im, s);
        return -1;
    }
    return 0;
}

/* Fills the report's fault and the graph's message from the importer's. */
static strata_status finish_failed(importer *im)
{
    strata_import_report *rep = im->rep;
    snprintf(rep->message, sizeof rep->message, "%s", im->err);
    rep->fault = (strata_import_fault){im->file, im->line, im->column, rep->message};
    if (im->file && im->line)
        return graph_fail(im->g, im->status, "%s:%llu: %s", im->file,
                          (unsigned long long)im->line, im->err);
    return graph_fail(im->g, im->status, "%s", im->err);
}

static void importer_free(importer *im)
{
    id_map_free(&im->ids);
    id_spaces_free(&im->spaces);
    free_values(im->vals, im->nvals);
    if (im->vals)
        mem_free(mem_scratch(), im->vals);
    if (im->row_props)
        mem_free(mem_scratch(), im->row_props);
    if (im->fields)
        mem_free(mem_scratch(), im->fields);
    if (im->labels)
        mem_free(mem_scratch(), im->labels);
    if (im->name)
        mem_free(mem_scratch(), im->name);
    for (size_t i = 0; i < TYPES_SEEN; i++)
        if (im->types[i].name)
            mem_free(mem_scratch(), im->types[i].name);
    if (im->label_field)
        mem_free(mem_scratch(), im->label_field);
    if (im->label_tokens)
        mem_free(mem_scratch(), im->label_tokens);
}

strata_status strata_import(strata_graph *g, const strata_import_options *opts,
                            strata_import_report *report)
{
    strata_import_report local;
    if (!report)
        report = &local;
    memset(report, 0, sizeof *report);
    report->fault.message = report->message;
    if (!g)
        return STRATA_EINVAL;
    if (!opts)
        return graph_fail(g, STRATA_EINVAL, "strata_import: opts is NULL");
    importer im = {
        .g = g, .o = opts, .rep = report, .status = STRATA_OK,
        .delim = opts->delimiter ? opts->delimiter : ',',
        .array_delim = opts->array_delimiter ? opts->array_delimiter : ';',
        .quote = opts->quote ? opts->quote : '"',
    };
    /* as a query does: a request made before the call is not this one's */
    atomic_store(&graph_catalog(g)->interrupt, false);
    int rc = check_options(&im);
    if (rc == 0 && !(im.ids = id_map_new())) {
        out_of_memory(&im, "starting the import");
        rc = -1;
    }
    if (rc == 0)
        rc = load_atomically(&im);
    if (im.ids)
        report->id_table_bytes = id_map_bytes(im.ids);
    strata_status s = rc == 0 ? STRATA_OK : finish_failed(&im);
    importer_free(&im);
    return s;
}
