/*
 * op_load_csv — LOAD CSV [WITH HEADERS] FROM url AS row [FIELDTERMINATOR c]:
 * for each incoming row, the records of a CSV file, one outgoing row each.
 *
 * Without headers a record is a list of strings; with headers the first
 * record names the keys and every later record is a map from key to
 * string (a record shorter than the header leaves the missing keys null;
 * a longer one is an error).  An empty unquoted field is null, a quoted
 * empty field ("") the empty string, as in Neo4j.  Fields must be UTF-8.
 *
 * Where the file is: `file:///abs/path` (or `file://localhost/...`, with
 * %XX escapes decoded) names a local absolute path; `file:rel` and a plain
 * string are paths, relative ones resolved against the process's current
 * directory.  Other URL schemes are refused.
 *
 * Access (strata_set_csv_options, kept in the catalog): by default the
 * file is read with the process's own rights.  With an import directory,
 * every path — absolute ones too, as in Neo4j — is taken relative to it,
 * resolved to its canonical path (realpath: `..` and symbolic links
 * followed), and refused unless that lies inside the directory; the file
 * opened is checked again through /proc/self/fd, so a link swapped in
 * between is caught too.  LOAD CSV can also be disabled whole.  Only
 * regular files are read: the open is non-blocking and fstat refuses a
 * FIFO (which would block until a writer came), a device or a directory.
 * A field longer than the limit (STRATA_CSV_FIELD_MAX by default) is an
 * error naming file and line.
 *
 * linenumber() and file() read two hidden slots bound next to the row
 * variable (names starting with a NUL byte, which no query can spell);
 * RETURN * and WITH do not carry them, so after a WITH they are null.
 *
 * Errors: an unreadable file is IOError naming the path and the reason; a
 * malformed file IOError naming file, line and what (csv.h); a header
 * naming a column twice IOError naming the column; a path refused by the
 * access settings SecurityError.  Rows are materialised like every
 * clause's (exec.h), except where the clauses after LOAD CSV give the same
 * result however the rows are cut into batches (query.c,
 * load_csv_streams): then each batch of records runs through them before
 * the next is read, so memory holds a batch, not the file.  Either way a
 * bad record fails the statement and every write it made is undone with
 * it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/csv.h"
#include "query/exec.h"
#include "query/load_csv_fast.h"
#include "storage/utf8.h"

#define LINE_SLOT "\0linenumber"
#define FILE_SLOT "\0file"

typedef struct csv_source {
    FILE *f;
    csv_reader *r;
    value path;      /* the file as opened, for file() and messages */
    value *keys;     /* WITH HEADERS: the header's fields */
    size_t nkeys;
} csv_source;

static int hex_digit(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* Decodes %XX escapes of a file URL's path in place; -1 on a bad escape
   or an escaped NUL. */
static int percent_decode(char *s)
{
    char *w = s;
    for (const char *p = s; *p; p++) {
        if (*p != '%') {
            *w++ = *p;
            continue;
        }
        int hi = hex_digit((unsigned char)p[1]), lo = hi < 0 ? -1 : hex_digit((unsigned char)p[2]);
        if (lo < 0 || (hi == 0 && lo == 0))
            return -1;
        *w++ = (char)(hi * 16 + lo);
        p += 2;
    }
    *w = '\0';
    return 0;
}

/* Whether s starts with a URL scheme ("name:" then "//"). */
static bool has_scheme(const char *s)
{
    if (!isalpha((unsigned char)*s))
        return false;
    const char *p = s + 1;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    return p[0] == ':' && p[1] == '/' && p[2] == '/';
}

/* The local path a LOAD CSV source names (see the top), in a new string
   from x->m: *path. */
static int resolve_path(exec *x, const cypher_ast_node *at, const char *url, size_t len,
                        char **path)
{
    const char *p = url;
    bool is_url = strncasecmp(url, "file:", 5) == 0;
    if (is_url) {
        p += 5;
        if (p[0] == '/' && p[1] == '/') {
            p += 2;
            if (strncasecmp(p, "localhost/", 10) == 0)
                p += 9;
            else if (*p != '/')
                return exec_fail(x, at, "ArgumentError", NULL,
                                 "LOAD CSV: only local files can be read: write file:///path "
                                 "(got '%s')",
                                 url);
        }
    } else if (has_scheme(url)) {
        return exec_fail(x, at, "ArgumentError", NULL,
                         "LOAD CSV: only file:/// URLs and paths are supported (got '%s')", url);
    }
    if (strlen(p) != len - (size_t)(p - url))
        return exec_fail(x, at, "ArgumentError", NULL, "LOAD CSV: the path holds a NUL byte");
    size_t size = strlen(p) + 1;
    *path = mem_alloc(x->m, size);
    if (!*path)
        return exec_oom(x);
    memcpy(*path, p, size);
    if (is_url && percent_decode(*path) != 0) {
        mem_free(x->m, *path);
        return exec_fail(x, at, "ArgumentError", NULL, "LOAD CSV: bad %% escape in '%s'", url);
    }
    if (!**path) {
        mem_free(x->m, *path);
        return exec_fail(x, at, "ArgumentError", NULL, "LOAD CSV: empty path");
    }
    return 0;
}

static int csv_failure(exec *x, const cypher_ast_node *at, csv_source *src, csv_status s)
{
    if (s == CSV_NOMEM)
        return exec_oom(x);
    return exec_fail(x, at, "IOError", NULL, "LOAD CSV: %s", csv_error(src->r));
}

/* A field as a value: null for an empty unquoted field, else a string. */
static int field_value(exec *x, const cypher_ast_node *at, csv_source *src, size_t i,
                       value *out)
{
    csv_field fd = csv_get(src->r, i);
    *out = value_null();
    if (fd.len == 0 && !fd.quoted)
        return 0;
    size_t bad;
    if (!utf8_check(fd.ptr, fd.len, &bad))
        return exec_fail(x, at, "IOError", NULL,
                         "LOAD CSV: %s:%llu: field %zu is not valid UTF-8 (byte %zu of the field)",
                         csv_name(src->r), (unsigned long long)csv_record_line(src->r), i + 1,
                         bad + 1);
    return make_string(x, fd.ptr, fd.len, out);
}

/* field_value's check alone, for a field the fast path does not read. */
static int field_check(exec *x, const cypher_ast_node *at, csv_source *src, size_t i)
{
    csv_field fd = csv_get(src->r, i);
    size_t bad;
    if (utf8_check(fd.ptr, fd.len, &bad))
        return 0;
    return exec_fail(x, at, "IOError", NULL,
                     "LOAD CSV: %s:%llu: field %zu is not valid UTF-8 (byte %zu of the field)",
                     csv_name(src->r), (unsigned long long)csv_record_line(src->r), i + 1,
                     bad + 1);
}

static void source_close(exec *x, csv_source *src)
{
    csv_free(&src->r);
    if (src->f)
        fclose(src->f);
    for (size_t i = 0; i < src->nkeys; i++)
        value_release(&src->keys[i]);
    if (src->keys)
        mem_free(x->m, src->keys);
    value_release(&src->path);
    memset(src, 0, sizeof *src);
}

/* Whether canonical path p is dir or inside it (dir canonical too). */
static bool inside(const char *dir, const char *p)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return p[0] == '/';
    return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int refuse_outside(exec *x, const cypher_ast_node *at, const char *path)
{
    return exec_fail(x, at, "SecurityError", NULL,
                     "LOAD CSV: '%s' leads outside the import directory", path);
}

/* Whether relative path p climbs above its start by its `..` components
   alone (refused before the file system is asked, so that the answer does
   not tell whether a file outside exists). */
static bool climbs_out(const char *p)
{
    long depth = 0;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            depth--;
        else if (n > 0 && !(n == 1 && p[0] == '.'))
            depth++;
        if (depth < 0)
            return true;
        p += n;
        p += *p == '/';
    }
    return false;
}

/* The canonical path of what path names under the import directory dir
   (see the top), in *out (from realpath: free()), or an error. */
static int resolve_in_dir(exec *x, const cypher_ast_node *at, const char *dir, const char *path,
                          char **out)
{
    *out = NULL;
    while (*path == '/')
        path++;
    if (climbs_out(path))
        return refuse_outside(x, at, path);
    size_t n = strlen(dir) + 1 + strlen(path) + 1;
    char *joined = mem_alloc(x->m, n);
    if (!joined)
        return exec_oom(x);
    snprintf(joined, n, "%s/%s", dir, path);
    *out = realpath(joined, NULL);
    int err = errno;
    mem_free(x->m, joined);
    if (!*out)
        return exec_fail(x, at, "IOError", NULL, "LOAD CSV: cannot read '%s': %s", path,
                         strerror(err));
    if (!inside(dir, *out)) {
        free(*out);
        *out = NULL;
        return refuse_outside(x, at, path);
    }
    return 0;
}

/* Whether the open file fd is inside dir, by the path the kernel gives
   it; true when /proc is not there to ask (the realpath check stands). */
static bool fd_inside(int fd, const char *dir)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return true;
    target[n] = '\0';
    return inside(dir, target);
}

/* Opens path for reading without blocking and checks that it is a regular
   file (a FIFO's open and reads would wait for a writer); the stream is
   blocking again for the reads.  dir: the import directory or NULL. */
static int open_regular(exec *x, const cypher_ast_node *at, const char *path, const char *shown,
                        const char *dir, FILE **out)
{
    int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (dir ? O_NOFOLLOW : 0);
    int fd = open(path, flags);
    if (fd < 0)
        return exec_fail(x, at, "IOError", NULL, "LOAD CSV: cannot read '%s': %s", shown,
                         strerror(errno));
    struct stat st;
    int rc = 0;
    if (dir && !fd_inside(fd, dir))
        rc = refuse_outside(x, at, shown);
    else if (fstat(fd, &st) != 0)
        rc = exec_fail(x, at, "IOError", NULL, "LOAD CSV: cannot read '%s': %s", shown,
                       strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = exec_fail(x, at, "IOError", NULL,
                       "LOAD CSV: '%s' is not a regular file (a %s); only files are read",
                       shown, S_ISDIR(st.st_mode) ? "directory" : S_ISFIFO(st.st_mode) ? "FIFO"
                                                 : "device or socket");
    else if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
             !(*out = fdopen(fd, "rb")))
        rc = exec_fail(x, at, "IOError", NULL, "LOAD CSV: cannot read '%s': %s", shown,
                       strerror(errno));
    if (rc != 0)
        close(fd);
    return rc;
}

/* Two header fields with one name would make one map key, silently
   keeping the later column: an error naming it.  Sorting the field
   numbers by name finds repeats in O(n log n). */
static int cmp_key(const void *a, const void *b, void *keys)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const value *k = keys;
    size_t li, lj;
    const char *si = value_str(&k[i], &li), *sj = value_str(&k[j], &lj);
    int c = memcmp(si, sj, li < lj ? li : lj);
    if (c == 0)
        c = (li > lj) - (li < lj);
    return c != 0 ? c : (i > j) - (i < j);
}

static int check_header(exec *x, const cypher_ast_node *at, csv_source *src)
{
    size_t n = src->nkeys;
    if (n < 2)
        return 0;
    size_t *order = mem_alloc(x->m, n * sizeof *order);
    if (!order)
        return exec_oom(x);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, cmp_key, src->keys);
    int rc = 0;
    for (size_t k = 1; k < n && rc == 0; k++)
        if (value_equivalent(&src->keys[order[k - 1]], &src->keys[order[k]])) {
            size_t len;
            const char *name = value_str(&src->keys[order[k]], &len);
            rc = exec_fail(x, at, "IOError", NULL,
                           "LOAD CSV: %s:%llu: the header names column '%.*s' twice "
                           "(fields %zu and %zu)",
                           csv_name(src->r), (unsigned long long)csv_record_line(src->r),
                           (int)(len > 100 ? 100 : len), name, order[k - 1] + 1,
                           order[k] + 1);
        }
    mem_free(x->m, order);
    return rc;
}

/* Opens the file the source value names; with headers, reads the header. */
static int source_open(exec *x, const cypher_ast_node *clause, const value *url, char delim,
                       csv_source *src)
{
    const cypher_ast_node *at = clause->u.load_csv.source;
    size_t len;
    const char *s = value_str(url, &len);
    if (!s)
        return exec_fail(x, at, "TypeError", "InvalidArgumentType",
                         "LOAD CSV FROM expects a string (a file:/// URL or a path), got %s",
                         value_type_name(url));
    const catalog *cat = exec_view(x)->ver->cat;
    if (cat->csv_disabled)
        return exec_fail(x, clause, "SecurityError", NULL,
                         "LOAD CSV is disabled for this graph");
    char *path = NULL;
    if (resolve_path(x, at, s, len, &path) != 0)
        return -1;
    int rc = 0;
    /* %-escapes can spell any bytes; file() and the messages need text */
    size_t bad;
    if (!utf8_check(path, strlen(path), &bad))
        rc = exec_fail(x, at, "ArgumentError", NULL,
                       "LOAD CSV: the file name is not valid UTF-8 once %%-decoded (byte %zu)",
                       bad + 1);
    char *canon = NULL;   /* under an import directory: what path names */
    if (rc == 0 && cat->import_dir)
        rc = resolve_in_dir(x, at, cat->import_dir, path, &canon);
    if (rc == 0)
        rc = open_regular(x, at, canon ? canon : path, path, cat->import_dir, &src->f);
    if (rc == 0 && !(src->r = csv_new(src->f, path, delim)))
        rc = exec_oom(x);
    if (rc == 0) {
        csv_set_field_max(src->r, cat->csv_field_max);
        /* file() gives the absolute path when it can be had */
        char *abs = canon ? NULL : realpath(path, NULL);
        const char *name = canon ? canon : abs ? abs : path;
        if (!utf8_check(name, strlen(name), NULL))   /* through a link */
            name = path;
        rc = make_string(x, name, strlen(name), &src->path);
        free(abs);
    }
    free(canon);
    mem_free(x->m, path);
    if (rc != 0 || !clause->u.load_csv.with_headers)
        return rc;
    csv_status st = csv_next(src->r);
    if (st == CSV_END)
        return 0;   /* an empty file: no header, no rows */
    if (st != CSV_RECORD)
        return csv_failure(x, clause, src, st);
    size_t n = csv_nfields(src->r);
    src->keys = mem_calloc(x->m, n * sizeof *src->keys);
    if (!src->keys)
        return exec_oom(x);
    src->nkeys = n;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = field_value(x, clause, src, i, &src->keys[i]);
        if (rc == 0 && value_is_null(&src->keys[i]))
            rc = make_string(x, "", 0, &src->keys[i]);
    }
    return rc == 0 ? check_header(x, clause, src) : rc;
}

static int too_many_fields(exec *x, const cypher_ast_node *clause, csv_source *src, size_t n)
{
    return exec_fail(x, clause, "IOError", NULL,
                     "LOAD CSV: %s:%llu: %zu fields, but the header names %zu",
                     csv_name(src->r), (unsigned long long)csv_record_line(src->r), n,
                     src->nkeys);
}

/* The record just read, as a list or (with headers) a map. */
static int record_value(exec *x, const cypher_ast_node *clause, csv_source *src, value *out)
{
    size_t n = csv_nfields(src->r);
    bool headers = clause->u.load_csv.with_headers;
    if (headers && n > src->nkeys)
        return too_many_fields(x, clause, src, n);
    size_t cnt = headers ? src->nkeys : n;
    value *vals = mem_calloc(x->m, cnt * sizeof *vals);
    value *keys = headers ? mem_calloc(x->m, cnt * sizeof *keys) : NULL;
    int rc = vals && (keys || !headers) ? 0 : exec_oom(x);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = field_value(x, clause, src, i, &vals[i]);
    for (size_t i = 0; keys && i < cnt; i++)
        keys[i] = value_retain(src->keys[i]);
    if (rc == 0) {
        int made = headers ? value_map_from(x->m, keys, vals, cnt, out)
                           : value_list_from(x->m, vals, cnt, out);
        if (made != 0)
            rc = exec_oom(x);
    } else {
        for (size_t i = 0; i < cnt; i++) {
            if (vals)
                value_release(&vals[i]);
            if (keys)
                value_release(&keys[i]);
        }
    }
    if (vals)
        mem_free(x->m, vals);
    if (keys)
        mem_free(x->m, keys);
    return rc;
}

/* The field terminator: one byte that cannot be confused with a quote or
   a line end. */
static int terminator(exec *x, const cypher_ast_node *clause, char *out)
{
    const cypher_ast_node *t = clause->u.load_csv.terminator;
    *out = ',';
    if (!t)
        return 0;
    if (t->u.name.len != 1 || t->u.name.ptr[0] == '"' || t->u.name.ptr[0] == '\n' ||
        t->u.name.ptr[0] == '\r')
        return exec_fail(x, t, "ArgumentError", NULL,
                         "FIELDTERMINATOR must be one character (one byte), not a quote or a "
                         "line end");
    *out = t->u.name.ptr[0];
    return 0;
}

typedef struct load_slots {
    size_t row, line, file;
} load_slots;

/* Where rows go: into out, handed to each (when set) every batch rows. */
typedef struct load_sink {
    rowset *out;
    size_t batch;
    load_batch_fn each;
    void *ctx;
} load_sink;

static int sink_flush(exec *x, load_sink *k)
{
    if (!k->each || k->out->nrows == 0)
        return 0;
    size_t width = k->out->width;
    int rc = k->each(x, k->out, k->ctx);   /* takes the rows */
    rowset_init(k->out, width);
    return rc;
}

/* Reads every record of one source, appending a row per record to the
   sink. */
static int load_rows(exec *x, const cypher_ast_node *clause, csv_source *src, const value *in,
                     size_t in_width, const load_slots *sl, value *row, load_sink *k)
{
    csv_status st = CSV_END;
    int rc = 0;
    while (rc == 0 && (st = csv_next(src->r)) == CSV_RECORD) {
        for (size_t i = 0; i < in_width; i++)
            row[i] = value_retain(in[i]);
        if ((rc = record_value(x, clause, src, &row[sl->row])) != 0) {
            for (size_t i = 0; i < in_width; i++)
                value_release(&row[i]);
            break;
        }
        uint64_t line = csv_record_line(src->r);
        row[sl->line] = value_int(line > INT64_MAX ? INT64_MAX : (int64_t)line);
        row[sl->file] = value_retain(src->path);
        rc = rowset_push(x, k->out, row);
        if (rc == 0 && k->out->nrows >= k->batch)
            rc = sink_flush(x, k);
    }
    if (rc == 0 && st != CSV_END)
        rc = csv_failure(x, clause, src, st);
    return rc;
}

/* load_rows for a fast plan (load_csv_fast.h): the same reads and checks
   a record at a time — field count, then each field's UTF-8 in order —
   and a batch written once it is read whole. */
static int fast_rows(exec *x, const cypher_ast_node *clause, csv_source *src, load_fast *f,
                     size_t batch)
{
    load_fast_columns(f, src->keys, src->nkeys);
    csv_status st = CSV_END;
    int rc = 0;
    while (rc == 0 && (st = csv_next(src->r)) == CSV_RECORD) {
        size_t n = csv_nfields(src->r);
        if (n > src->nkeys)
            rc = too_many_fields(x, clause, src, n);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = field_check(x, clause, src, i);
        if (rc == 0)
            rc = load_fast_take(x, f, src->r);
        if (rc == 0 && load_fast_held(f) >= batch)
            rc = load_fast_apply(x, f);
    }
    if (rc == 0 && st != CSV_END)
        rc = csv_failure(x, clause, src, st);
    return rc;
}

/* Declares the row variable and the hidden slots. */
static int bind_slots(exec *x, const cypher_ast_node *clause, scope *sc, size_t in_width,
                      load_slots *sl)
{
    const cypher_ast_node *alias = clause->u.load_csv.alias;
    if (scope_add(x, sc, alias->u.name.ptr, alias->u.name.len, &sl->row) != 0)
        return -1;
    if (sl->row < in_width)
        return exec_fail(x, alias, "SyntaxError", "VariableAlreadyBound",
                         "variable `%s` already declared", alias->u.name.ptr);
    /* a second LOAD CSV in one query gets slots of its own */
    binding line = {LINE_SLOT, sizeof LINE_SLOT - 1, x->width++};
    binding file = {FILE_SLOT, sizeof FILE_SLOT - 1, x->width++};
    sl->line = line.slot;
    sl->file = file.slot;
    if (scope_push(x, sc, &line) != 0 || scope_push(x, sc, &file) != 0)
        return -1;
    return 0;
}

static int load(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out,
                size_t batch, load_batch_fn each, void *ctx, load_fast *fast)
{
    size_t in_width = in->width;
    char delim;
    if (terminator(x, clause, &delim) != 0)
        return -1;
    /* the source expression sees the scope before the new variables */
    scope before = {0};
    load_slots sl;
    if (scope_copy(x, sc, &before) != 0)
        return -1;
    if (bind_slots(x, clause, sc, in_width, &sl) != 0) {
        scope_free(&before);
        return -1;
    }
    rowset_init(out, x->width);
    load_sink k = {out, batch, each, ctx};
    size_t rowsz = (x->width ? x->width : 1) * sizeof(value);
    value *row = mem_calloc(x->m, rowsz);
    int rc = row ? 0 : exec_oom(x);
    for (size_t r = 0; r < in->nrows && rc == 0; r++) {
        const value *src_row = rowset_row(in, r);
        evalctx c = {x, &before, src_row, NULL, NULL};
        value url;
        if ((rc = eval(&c, clause->u.load_csv.source, &url)) != 0)
            break;
        csv_source src = {0};
        rc = source_open(x, clause, &url, delim, &src);
        if (rc == 0 && src.r && fast)
            rc = fast_rows(x, clause, &src, fast, batch);
        else if (rc == 0 && src.r)
            rc = load_rows(x, clause, &src, src_row, in_width, &sl, row, &k);
        source_close(x, &src);
        value_release(&url);
    }
    if (rc == 0)
        rc = fast ? load_fast_apply(x, fast) : sink_flush(x, &k);
    if (row)
        mem_free(x->m, row);
    scope_free(&before);
    return rc;
}

int op_load_csv(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out)
{
    return load(x, clause, sc, in, out, SIZE_MAX, NULL, NULL, NULL);
}

int op_load_csv_stream(exec *x, const cypher_ast_node *q, size_t i, scope *sc, rowset *in,
                       size_t batch, load_batch_fn each, void *ctx)
{
    load_fast *fast = NULL;
    if (load_fast_plan(x, q, i, batch, &fast) != 0)
        return -1;
    rowset rows;
    int rc = load(x, q->u.list.items[i], sc, in, &rows, batch, each, ctx, fast);
    rowset_free(&rows);
    load_fast_free(x, &fast);
    return rc;
}

/* linenumber() / file(): the hidden slots of the LOAD CSV in scope, or
   null when there is none. */
static int hidden_slot(const evalctx *c, const char *name, size_t len, value *out)
{
    long slot = scope_find(c->sc, name, len);
    *out = slot < 0 || !c->row ? value_null() : value_retain(c->row[slot]);
    return 0;
}

int load_csv_linenumber(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                        value *out)
{
    (void)at, (void)a, (void)n;
    return hidden_slot(c, LINE_SLOT, sizeof LINE_SLOT - 1, out);
}

int load_csv_file(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)at, (void)a, (void)n;
    return hidden_slot(c, FILE_SLOT, sizeof FILE_SLOT - 1, out);
}
