/*
 * import — `strata import`: builds a graph from CSV files and saves it
 * (SPEC §9).
 *
 *   strata import --nodes[=LABEL[:LABEL...]]=FILE[,FILE...] ...
 *                 --relationships[=TYPE]=FILE[,FILE...] ...
 *                 [--delimiter C] [--array-delimiter C] [--skip-bad-rows] [--force]
 *                 OUT.db
 *
 * OUT.db is created; an existing one is replaced only with --force, and
 * never when it is one of the input files (checked before any row is
 * read, so a mistyped command costs nothing).
 *
 * The header conventions are Neo4j's bulk importer's (import_header.h).
 * Each --nodes / --relationships names a group of files: the first file's
 * first record is the header, the others hold data only.  Every node group
 * is loaded before any relationship group, in the order given.
 *
 * How it runs: a new graph, one transaction, the public API's direct write
 * calls (strata_node_create, strata_node_set, strata_rel_create, ...),
 * commit, then strata_save — the one step that writes a file, and only
 * after every row has been read and checked.  A bad row (a value that does
 * not parse as its column's type, an unknown START_ID or END_ID, a node id
 * seen before in its id space, a row with the wrong number of fields) is
 * reported with its file and line; by default it stops the import, which
 * then writes nothing: OUT.db is not created, or keeps its old contents.
 * With --skip-bad-rows such rows are counted, the first few reported, and
 * left out.  Malformed CSV (an unterminated quote, ...) always stops it:
 * the reader cannot tell where the next record starts.
 *
 * On a terminal, standard error shows progress (file, percent, rows,
 * rows/s); standard output gets a summary at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/id_map.h"
#include "cli/import.h"
#include "cli/import_header.h"
#include "query/csv.h"
#include "strata.h"

/* Bad rows reported one by one under --skip-bad-rows before the rest are
   only counted. */
#define BAD_ROWS_SHOWN 10

typedef struct input_group {
    bool rels;
    char *spec;       /* labels "A:B" or a type; NULL when not given */
    char **files;
    size_t nfiles;
} input_group;

typedef struct import_opts {
    input_group *groups;
    size_t ngroups;
    char delim, array_delim;
    bool skip_bad, force;
    const char *out;
} import_opts;

typedef struct importer {
    const import_opts *o;
    strata_graph *g;
    id_map *ids;
    id_spaces spaces;
    strata_value **vals;      /* one per column of the current header */
    strata_token *labels;
    size_t nlabels, cap_labels;
    char *name;               /* a label being interned, NUL-terminated */
    size_t name_cap;
    uint64_t nodes, rels, props, rows, bad_rows;
    double t0, last_progress;
    bool tty;
    /* the file being read, for messages and progress */
    const char *file;
    FILE *f;
    off_t file_size;
    char err[512];
} importer;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: strata import --nodes[=LABEL[:LABEL...]]=FILE[,FILE...] ...\n"
               "                     --relationships[=TYPE]=FILE[,FILE...] ...\n"
               "                     [--delimiter C] [--array-delimiter C] [--skip-bad-rows]\n"
               "                     [--force] OUT.db\n"
               "OUT.db must not exist unless --force is given (it is then replaced);\n"
               "it may never be one of the input files.\n"
               "Header: id:ID(Space), :LABEL, :START_ID(Space), :END_ID(Space), :TYPE,\n"
               "name:string|int|long|float|double|boolean, name:int[] (arrays split on ';').\n");
}

/* ---- arguments -------------------------------------------------------- */

/* "C", "\t" or "TAB": one byte that is not a quote or a line end. */
static int parse_delimiter(const char *s, char *out)
{
    if (strcmp(s, "\\t") == 0 || strcasecmp(s, "TAB") == 0)
        s = "\t";
    if (strlen(s) != 1 || *s == '"' || *s == '\n' || *s == '\r')
        return -1;
    *out = *s;
    return 0;
}

/* "[SPEC=]FILE[,FILE...]" into a group; -1 when out of memory or empty. */
static int parse_group(const char *arg, bool rels, input_group *g)
{
    memset(g, 0, sizeof *g);
    g->rels = rels;
    const char *eq = strrchr(arg, '=');
    const char *files = eq ? eq + 1 : arg;
    if (eq && !(g->spec = strndup(arg, (size_t)(eq - arg))))
        return -1;
    for (const char *p = files; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char **fs = realloc(g->files, (g->nfiles + 1) * sizeof *fs);
        if (!fs)
            return -1;
        g->files = fs;
        if (len == 0 || !(g->files[g->nfiles] = strndup(p, len)))
            return -1;
        g->nfiles++;
        p += len + (comma != NULL);
    }
    return g->nfiles ? 0 : -1;
}

static void opts_free(import_opts *o)
{
    for (size_t i = 0; i < o->ngroups; i++) {
        for (size_t k = 0; k < o->groups[i].nfiles; k++)
            free(o->groups[i].files[k]);
        free(o->groups[i].files);
        free(o->groups[i].spec);
    }
    free(o->groups);
}

/* The value of --name=VALUE or --name VALUE at argv[*i], or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == '\0' && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static int parse_args(int argc, char **argv, import_opts *o)
{
    o->delim = ',';
    o->array_delim = ';';
    for (int i = 1; i < argc; i++) {
        const char *v;
        bool rels = false;
        if ((v = option_value(argc, argv, &i, "--nodes")) ||
            (rels = (v = option_value(argc, argv, &i, "--relationships")) != NULL)) {
            input_group *gs = realloc(o->groups, (o->ngroups + 1) * sizeof *gs);
            if (!gs)
                return -1;
            o->groups = gs;
            if (parse_group(v, rels, &o->groups[o->ngroups++]) != 0) {
                fprintf(stderr, "strata import: bad file list '%s'\n", v);
                return -1;
            }
        } else if ((v = option_value(argc, argv, &i, "--delimiter"))) {
            if (parse_delimiter(v, &o->delim) != 0) {
                fprintf(stderr, "strata import: --delimiter takes one character, not '%s'\n", v);
                return -1;
            }
        } else if ((v = option_value(argc, argv, &i, "--array-delimiter"))) {
            if (parse_delimiter(v, &o->array_delim) != 0) {
                fprintf(stderr, "strata import: --array-delimiter takes one character\n");
                return -1;
            }
        } else if (strcmp(argv[i], "--skip-bad-rows") == 0) {
            o->skip_bad = true;
        } else if (strcmp(argv[i], "--force") == 0) {
            o->force = true;
        } else if (argv[i][0] == '-' || o->out) {
            fprintf(stderr, "strata import: unexpected argument '%s'\n", argv[i]);
            return -1;
        } else {
            o->out = argv[i];
        }
    }
    if (!o->out || o->ngroups == 0) {
        fprintf(stderr, "strata import: %s\n",
                !o->out ? "no output file given" : "no --nodes or --relationships given");
        return -1;
    }
    if (o->delim == o->array_delim) {
        fprintf(stderr, "strata import: the delimiter and the array delimiter must differ\n");
        return -1;
    }
    return 0;
}

/* Whether the output may be written: it must not be an input (compared by
   device and inode, so another name for the same file counts too), and
   must not exist unless --force, and must be a regular file when it does
   (a link, a FIFO or a device is refused, as strata_save would). */
static int check_output(const import_opts *o)
{
    struct stat out;
    if (lstat(o->out, &out) != 0) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "strata import: %s: %s\n", o->out, strerror(errno));
        return -1;
    }
    struct stat target = out;
    bool via_link = S_ISLNK(out.st_mode) && stat(o->out, &target) == 0;
    for (size_t i = 0; i < o->ngroups; i++)
        for (size_t k = 0; k < o->groups[i].nfiles; k++) {
            struct stat in;
            if (stat(o->groups[i].files[k], &in) != 0)
                continue;   /* reported when it is opened */
            bool same = in.st_dev == out.st_dev && in.st_ino == out.st_ino;
            same |= via_link && in.st_dev == target.st_dev && in.st_ino == target.st_ino;
            if (same) {
                fprintf(stderr, "strata import: the output %s is the input file %s; "
                                "refusing to overwrite it\n", o->out, o->groups[i].files[k]);
                return -1;
            }
        }
    if (!S_ISREG(out.st_mode)) {
        /* strata_save would refuse it too, but only after every row */
        fprintf(stderr, "strata import: %s is not a regular file; refusing to replace it\n",
                o->out);
        return -1;
    }
    if (!o->force) {
        fprintf(stderr, "strata import: %s already exists; give --force to replace it\n",
                o->out);
        return -1;
    }
    return 0;
}

/* ---- progress ----------------------------------------------------------- */

static void progress(importer *im, bool force)
{
    if (!im->tty)
        return;
    double t = now_s();
    if (!force && t - im->last_progress < 0.25)
        return;
    im->last_progress = t;
    long pos = im->f ? ftell(im->f) : 0;
    double pct = im->file_size > 0 && pos > 0 ? 100.0 * (double)pos / (double)im->file_size : 0;
    double rate = (double)im->rows / (t - im->t0 > 1e-9 ? t - im->t0 : 1e-9);
    fprintf(stderr, "\r\033[K%s  %5.1f%%  %llu rows  %.0f rows/s", im->file ? im->file : "",
            pct > 100 ? 100 : pct, (unsigned long long)im->rows, rate);
    fflush(stderr);
}

static void progress_done(importer *im)
{
    if (im->tty)
        fprintf(stderr, "\r\033[K");
}

/* ---- rows --------------------------------------------------------------- */

/* A bad row: fatal (-1) unless bad rows are skipped (0: skip it). */
static int bad_row(importer *im, const csv_reader *r)
{
    if (!im->o->skip_bad)
        return -1;
    if (im->bad_rows++ < BAD_ROWS_SHOWN) {
        progress_done(im);
        fprintf(stderr, "strata import: skipped %s:%llu: %s\n", im->file,
                (unsigned long long)csv_record_line(r), im->err);
    }
    return 0;
}

static void free_values(importer *im, size_t n)
{
    for (size_t i = 0; i < n; i++)
        strata_value_free(&im->vals[i]);
}

/* Parses every property column of the record into im->vals; -1 with a
   message in im->err. */
static int parse_values(importer *im, const header *h, const csv_reader *r)
{
    if (csv_nfields(r) != h->n) {
        snprintf(im->err, sizeof im->err, "%zu fields, but the header has %zu",
                 csv_nfields(r), h->n);
        return -1;
    }
    /* every field, stored or not: a message must never quote bytes that
       are not text */
    size_t field, at;
    if (!csv_record_utf8(r, &field, &at)) {
        snprintf(im->err, sizeof im->err, "field %zu is not valid UTF-8 (byte %zu of the field)",
                 field + 1, at + 1);
        return -1;
    }
    for (size_t i = 0; i < h->n; i++) {
        const column *c = &h->cols[i];
        bool stored = c->kind == COL_PROPERTY || (c->kind == COL_ID && c->name[0]);
        if (stored &&
            column_value(c, csv_get(r, i), im->o->array_delim, &im->vals[i], im->err,
                         sizeof im->err) != 0)
            return -1;
    }
    return 0;
}

/* A label name is any the engine takes (1..65535 bytes of UTF-8, no NUL),
   as in Cypher; strata_token_intern checks length and encoding. */
static int add_label(importer *im, const char *name, size_t len)
{
    if (len == 0)
        return 0;
    if (memchr(name, '\0', len)) {
        snprintf(im->err, sizeof im->err, "a label holds a NUL byte");
        return -1;
    }
    if (len >= im->name_cap) {
        size_t cap = len + 1 > 2 * im->name_cap ? len + 1 : 2 * im->name_cap;
        char *b = realloc(im->name, cap);
        if (!b) {
            snprintf(im->err, sizeof im->err, "out of memory");
            return -1;
        }
        im->name = b;
        im->name_cap = cap;
    }
    char *buf = im->name;
    memcpy(buf, name, len);
    buf[len] = '\0';
    if (im->nlabels == im->cap_labels) {
        size_t cap = im->cap_labels ? im->cap_labels * 2 : 8;
        strata_token *l = realloc(im->labels, cap * sizeof *l);
        if (!l) {
            snprintf(im->err, sizeof im->err, "out of memory");
            return -1;
        }
        im->labels = l;
        im->cap_labels = cap;
    }
    if (strata_token_intern(im->g, STRATA_LABEL, buf, &im->labels[im->nlabels]) != STRATA_OK) {
        snprintf(im->err, sizeof im->err, "label '%.64s%s': %s", buf, len > 64 ? "..." : "",
                 strata_errmsg(im->g));
        return -1;
    }
    im->nlabels++;
    return 0;
}

/* Appends the labels of s[0..len), separated by sep. */
static int add_labels(importer *im, const char *s, size_t len, char sep)
{
    for (const char *p = s, *end = s + len; p <= end;) {
        const char *q = memchr(p, sep, (size_t)(end - p));
        if (!q)
            q = end;
        if (add_label(im, p, (size_t)(q - p)) != 0)
            return -1;
        p = q + 1;
    }
    return 0;
}

/* Sets the parsed properties on a node or relationship. */
static int set_properties(importer *im, const header *h, strata_id id, bool rel)
{
    for (size_t i = 0; i < h->n; i++) {
        if (!im->vals[i])
            continue;
        strata_status s = rel ? strata_rel_set(im->g, id, h->cols[i].key, im->vals[i])
                              : strata_node_set(im->g, id, h->cols[i].key, im->vals[i]);
        if (s != STRATA_OK) {
            snprintf(im->err, sizeof im->err, "%s", strata_errmsg(im->g));
            return -2;
        }
        im->props++;
    }
    return 0;
}

/* One node record: -1 a bad row (message in im->err), -2 a failure of the
   graph (fatal even when skipping). */
static int node_row(importer *im, const header *h, const csv_reader *r, size_t base_labels)
{
    im->nlabels = base_labels;
    if (parse_values(im, h, r) != 0)
        return -1;
    if (h->label >= 0) {
        csv_field f = csv_get(r, (size_t)h->label);
        if (add_labels(im, f.ptr, f.len, im->o->array_delim) != 0)
            return -1;
    }
    csv_field idf = {NULL, 0, false};
    uint32_t space = 0;
    if (h->id >= 0) {
        idf = csv_get(r, (size_t)h->id);
        space = h->cols[h->id].space;
        uint64_t seen;
        if (idf.len == 0) {
            snprintf(im->err, sizeof im->err, "empty node id");
            return -1;
        }
        if (id_map_find(im->ids, space, idf.ptr, idf.len, &seen)) {
            snprintf(im->err, sizeof im->err, "duplicate node id '%.*s' in id space %s",
                     (int)(idf.len > 60 ? 60 : idf.len), idf.ptr,
                     id_space_name(&im->spaces, space));
            return -1;
        }
    }
    strata_id node;
    if (strata_node_create(im->g, im->labels, im->nlabels, &node) != STRATA_OK) {
        snprintf(im->err, sizeof im->err, "%s", strata_errmsg(im->g));
        return -2;
    }
    im->nodes++;
    if (idf.ptr && id_map_add(im->ids, space, idf.ptr, idf.len, node, NULL) < 0) {
        snprintf(im->err, sizeof im->err, "out of memory in the id table");
        return -2;
    }
    return set_properties(im, h, node, false);
}

/* The node an id refers to; -1 with a message when unknown. */
static int resolve_end(importer *im, const header *h, const csv_reader *r, long col,
                       strata_id *out)
{
    csv_field f = csv_get(r, (size_t)col);
    uint32_t space = h->cols[col].space;
    if (id_map_find(im->ids, space, f.ptr, f.len, out))
        return 0;
    snprintf(im->err, sizeof im->err, "unknown %s '%.*s' (no node has that id in id space %s)",
             col == h->start ? "START_ID" : "END_ID", (int)(f.len > 60 ? 60 : f.len), f.ptr,
             id_space_name(&im->spaces, space));
    return -1;
}

/* The relationship type of a record: its :TYPE field, else the group's. */
static int rel_type(importer *im, const header *h, const csv_reader *r, const char *fallback,
                    strata_token *out)
{
    const char *name = fallback;
    if (h->type >= 0 && csv_get(r, (size_t)h->type).len > 0) {
        csv_field f = csv_get(r, (size_t)h->type);
        if (memchr(f.ptr, '\0', f.len)) {
            snprintf(im->err, sizeof im->err, "a relationship type holds a NUL byte");
            return -1;
        }
        name = f.ptr;
    }
    if (!name || !*name) {
        snprintf(im->err, sizeof im->err,
                 "no relationship type: give a :TYPE column or --relationships=TYPE=FILE");
        return -1;
    }
    if (strata_token_intern(im->g, STRATA_RELTYPE, name, out) != STRATA_OK) {
        snprintf(im->err, sizeof im->err, "type '%.64s%s': %s", name,
                 strlen(name) > 64 ? "..." : "", strata_errmsg(im->g));
        return -1;
    }
    return 0;
}

static int rel_row(importer *im, const header *h, const csv_reader *r, const char *type_name)
{
    strata_id start, end, rel;
    strata_token type;
    if (parse_values(im, h, r) != 0 || resolve_end(im, h, r, h->start, &start) != 0 ||
        resolve_end(im, h, r, h->end, &end) != 0 || rel_type(im, h, r, type_name, &type) != 0)
        return -1;
    if (strata_rel_create(im->g, start, end, type, &rel) != STRATA_OK) {
        snprintf(im->err, sizeof im->err, "%s", strata_errmsg(im->g));
        return -2;
    }
    im->rels++;
    return set_properties(im, h, rel, true);
}

/* ---- files -------------------------------------------------------------- */

static int open_file(importer *im, const char *path, csv_reader **r)
{
    im->file = path;
    if (!(im->f = fopen(path, "rb"))) {
        fprintf(stderr, "strata import: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    im->file_size = fstat(fileno(im->f), &st) == 0 ? st.st_size : 0;
    if (!(*r = csv_new(im->f, path, im->o->delim))) {
        fprintf(stderr, "strata import: out of memory\n");
        return -1;
    }
    return 0;
}

static void close_file(importer *im, csv_reader **r)
{
    csv_free(r);
    if (im->f)
        fclose(im->f);
    im->f = NULL;
}

static int read_header(importer *im, const input_group *gr, csv_reader *r, header *h)
{
    csv_status s = csv_next(r);
    if (s != CSV_RECORD) {
        fprintf(stderr, "strata import: %s\n",
                s == CSV_END ? "a file group's first file needs a header line" : csv_error(r));
        if (s == CSV_END)
            fprintf(stderr, "  (in %s)\n", im->file);
        return -1;
    }
    if (header_parse(h, r, gr->rels, &im->spaces, im->g, im->err, sizeof im->err) != 0) {
        fprintf(stderr, "strata import: %s:%llu: %s\n", im->file,
                (unsigned long long)csv_record_line(r), im->err);
        return -1;
    }
    free(im->vals);
    if (!(im->vals = calloc(h->n ? h->n : 1, sizeof *im->vals))) {
        fprintf(stderr, "strata import: out of memory\n");
        return -1;
    }
    return 0;
}

/* Reads the records of one open file. */
static int load_records(importer *im, const input_group *gr, const header *h, csv_reader *r,
                        size_t base_labels)
{
    csv_status s;
    while ((s = csv_next(r)) == CSV_RECORD) {
        int rc = gr->rels ? rel_row(im, h, r, gr->spec) : node_row(im, h, r, base_labels);
        free_values(im, h->n);
        im->rows++;
        if (rc == -1 && bad_row(im, r) == 0)
            rc = 0;
        if (rc != 0) {
            progress_done(im);
            fprintf(stderr, "strata import: %s:%llu: %s\n", im->file,
                    (unsigned long long)csv_record_line(r), im->err);
            return -1;
        }
        if ((im->rows & 0xffff) == 0)
            progress(im, false);
    }
    if (s != CSV_END) {
        progress_done(im);
        fprintf(stderr, "strata import: %s\n", csv_error(r));
        return -1;
    }
    return 0;
}

static int load_group(importer *im, const input_group *gr)
{
    header h = {0};
    int rc = 0;
    im->nlabels = 0;
    if (!gr->rels && gr->spec)
        rc = add_labels(im, gr->spec, strlen(gr->spec), ':');
    if (rc != 0)
        fprintf(stderr, "strata import: --nodes=%s: %s\n", gr->spec, im->err);
    size_t base_labels = im->nlabels;
    for (size_t i = 0; i < gr->nfiles && rc == 0; i++) {
        csv_reader *r = NULL;
        rc = open_file(im, gr->files[i], &r);
        if (rc == 0 && i == 0)
            rc = read_header(im, gr, r, &h);
        if (rc == 0)
            rc = load_records(im, gr, &h, r, base_labels);
        close_file(im, &r);
    }
    header_free(&h);
    return rc;
}

/* ---- the whole import -------------------------------------------------- */

static void summary(importer *im, double load_s, double save_s)
{
    strata_memstats ms = {0};
    strata_memory_stats(im->g, &ms);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("imported %llu nodes, %llu relationships, %llu properties from %llu rows "
           "in %.2f s (%.0f rows/s)\n",
           (unsigned long long)im->nodes, (unsigned long long)im->rels,
           (unsigned long long)im->props, (unsigned long long)im->rows, load_s,
           (double)im->rows / (load_s > 1e-9 ? load_s : 1e-9));
    if (im->bad_rows)
        printf("skipped %llu bad rows\n", (unsigned long long)im->bad_rows);
    printf("graph memory %.1f MiB, id table %.1f MiB, peak resident %.1f MiB\n",
           (double)ms.graph_bytes / 1048576.0, (double)id_map_bytes(im->ids) / 1048576.0,
           (double)ru.ru_maxrss / 1024.0);
    printf("saved %s in %.2f s\n", im->o->out, save_s);
}

/* Loads every node group, then every relationship group, in one
   transaction; commits only when all of it succeeded. */
static int load_all(importer *im)
{
    if (strata_begin(im->g) != STRATA_OK) {
        fprintf(stderr, "strata import: %s\n", strata_errmsg(im->g));
        return -1;
    }
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++)
        for (size_t i = 0; i < im->o->ngroups && rc == 0; i++)
            if (im->o->groups[i].rels == (pass == 1))
                rc = load_group(im, &im->o->groups[i]);
    progress_done(im);
    if (rc != 0) {
        strata_rollback(im->g);
        return -1;
    }
    if (strata_commit(im->g) != STRATA_OK) {
        fprintf(stderr, "strata import: %s\n", strata_errmsg(im->g));
        return -1;
    }
    return 0;
}

static int run_import(const import_opts *o)
{
    importer im = {.o = o, .tty = isatty(STDERR_FILENO) != 0};
    im.t0 = now_s();
    int rc = -1;
    if (strata_graph_new(&im.g) != STRATA_OK || !(im.ids = id_map_new())) {
        fprintf(stderr, "strata import: out of memory\n");
        goto done;
    }
    if (load_all(&im) != 0)
        goto done;
    double loaded = now_s();
    /* the one step that writes: after every row was read and checked */
    if (strata_save(im.g, o->out) != STRATA_OK) {
        fprintf(stderr, "strata import: saving %s: %s\n", o->out, strata_errmsg(im.g));
        goto done;
    }
    summary(&im, loaded - im.t0, now_s() - loaded);
    rc = 0;
done:
    if (rc != 0)
        fprintf(stderr, "strata import: nothing written (%s %s)\n", o->out,
                access(o->out, F_OK) == 0 ? "left as it was" : "not created");
    strata_graph_free(&im.g);
    id_map_free(&im.ids);
    id_spaces_free(&im.spaces);
    free(im.vals);
    free(im.labels);
    free(im.name);
    return rc;
}

int import_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
    import_opts o = {0};
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        opts_free(&o);
        return 2;
    }
    if (check_output(&o) != 0) {
        opts_free(&o);
        return 1;
    }
    int rc = run_import(&o);
    opts_free(&o);
    return rc == 0 ? 0 : 1;
}
