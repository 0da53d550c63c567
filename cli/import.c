/*
 * import — `strata import`: builds a graph from CSV files and saves it
 * (docs/IMPORT.md).
 *
 *   strata import --nodes[=LABEL[:LABEL...]]=FILE[,FILE...] ...
 *                 --relationships[=TYPE]=FILE[,FILE...] ...
 *                 [--delimiter C] [--array-delimiter C] [--quote C]
 *                 [--skip-bad-rows] [--force] OUT.db
 *
 * OUT.db is created; an existing one is replaced only with --force, and
 * never when it is one of the input files (checked before any row is
 * read, so a mistyped command costs nothing).
 *
 * A client of the library: the options become a strata_import_options,
 * strata_import (query/import.c) loads the files into a new graph, and
 * strata_save writes it — the one step that writes a file, and only after
 * every row has been read and checked.  Each --nodes / --relationships
 * names a group of files: the first file's first record is the header,
 * the others hold data only.  A bad row is reported with its file and
 * line; by default it stops the import, which then writes nothing: OUT.db
 * is not created, or keeps its old contents.  With --skip-bad-rows such
 * rows are counted, the first few reported, and left out.  Malformed CSV
 * (an unterminated quote, ...) always stops it.
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

#include "cli/import.h"
#include "strata.h"

/* Bad rows reported one by one under --skip-bad-rows before the rest are
   only counted. */
#define BAD_ROWS_SHOWN 10

/* One --nodes or --relationships: the source handed to strata_import and
   what its strings are kept in. */
typedef struct input_group {
    bool rels;
    char **files;
    size_t nfiles;
    char **labels;   /* nodes: LABEL:LABEL split on ':' */
    size_t nlabels;
    char *type;      /* relationships: TYPE, or NULL */
} input_group;

typedef struct import_opts {
    input_group *groups;
    strata_import_source *sources;   /* one per group */
    size_t ngroups;
    char delim, array_delim, quote;
    bool skip_bad, force;
    const char *out;
} import_opts;

/* The progress line on a terminal and the bad rows shown. */
typedef struct import_ui {
    bool tty;
    double t0, last_progress;
    uint64_t bad_shown;
} import_ui;

/* The process's processor time so far: on a shared machine the steadier
   measure of the import's own work (bench/import.sh). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
               "                     [--delimiter C] [--array-delimiter C] [--quote C]\n"
               "                     [--skip-bad-rows] [--force] OUT.db\n"
               "OUT.db must not exist unless --force is given (it is then replaced);\n"
               "it may never be one of the input files.\n"
               "Header: id:ID(Space), :LABEL, :START_ID(Space), :END_ID(Space), :TYPE,\n"
               "name:string|int|long|float|double|boolean, name:int[] (arrays split on ';').\n");
}

/* ---- arguments -------------------------------------------------------- */

/* "C", "\t" or "TAB": one byte that is not a line end. */
static int parse_delimiter(const char *s, char *out)
{
    if (strcmp(s, "\\t") == 0 || strcasecmp(s, "TAB") == 0)
        s = "\t";
    if (strlen(s) != 1 || *s == '\n' || *s == '\r')
        return -1;
    *out = *s;
    return 0;
}

/* s[0..len) split on sep into a new array of strings (*n of them); empty
   parts are dropped.  -1 when out of memory. */
static int split(const char *s, size_t len, char sep, char ***out, size_t *n)
{
    for (const char *p = s, *end = s + len; p <= end;) {
        const char *q = memchr(p, sep, (size_t)(end - p));
        if (!q)
            q = end;
        if (q > p) {
            char **a = realloc(*out, (*n + 1) * sizeof *a);
            if (!a)
                return -1;
            *out = a;
            if (!(a[*n] = strndup(p, (size_t)(q - p))))
                return -1;
            (*n)++;
        }
        p = q + 1;
    }
    return 0;
}

/* "[SPEC=]FILE[,FILE...]" into a group; -1 when out of memory or empty. */
static int parse_group(const char *arg, bool rels, input_group *g)
{
    memset(g, 0, sizeof *g);
    g->rels = rels;
    const char *eq = strrchr(arg, '=');
    const char *files = eq ? eq + 1 : arg;
    if (eq && rels && !(g->type = strndup(arg, (size_t)(eq - arg))))
        return -1;
    if (eq && !rels && split(arg, (size_t)(eq - arg), ':', &g->labels, &g->nlabels) != 0)
        return -1;
    /* an empty file name is a mistake, not a file to skip */
    if (!*files || strstr(files, ",,") || files[0] == ',' || files[strlen(files) - 1] == ',')
        return -1;
    if (split(files, strlen(files), ',', &g->files, &g->nfiles) != 0)
        return -1;
    return g->nfiles ? 0 : -1;
}

static void strings_free(char **a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i]);
    free(a);
}

static void opts_free(import_opts *o)
{
    for (size_t i = 0; i < o->ngroups; i++) {
        strings_free(o->groups[i].files, o->groups[i].nfiles);
        strings_free(o->groups[i].labels, o->groups[i].nlabels);
        free(o->groups[i].type);
    }
    free(o->groups);
    free(o->sources);
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
    o->quote = '"';
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
        } else if ((v = option_value(argc, argv, &i, "--quote"))) {
            if (parse_delimiter(v, &o->quote) != 0) {
                fprintf(stderr, "strata import: --quote takes one character\n");
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
    if (o->delim == o->array_delim || o->delim == o->quote || o->array_delim == o->quote) {
        fprintf(stderr, "strata import: the delimiter, the array delimiter and the quote "
                        "must differ\n");
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

/* ---- what the library reports ----------------------------------------- */

static bool on_progress(void *ctx, const strata_import_progress *p)
{
    import_ui *ui = ctx;
    double t = now_s();
    if (!ui->tty || t - ui->last_progress < 0.25)
        return true;
    ui->last_progress = t;
    double pct = p->size > 0 ? 100.0 * (double)p->offset / (double)p->size : 0;
    double rate = (double)p->rows / (t - ui->t0 > 1e-9 ? t - ui->t0 : 1e-9);
    fprintf(stderr, "\r\033[K%s  %5.1f%%  %llu rows  %.0f rows/s", p->file,
            pct > 100 ? 100 : pct, (unsigned long long)p->rows, rate);
    fflush(stderr);
    return true;
}

static void progress_done(const import_ui *ui)
{
    if (ui->tty)
        fprintf(stderr, "\r\033[K");
}

static void on_bad_row(void *ctx, const strata_import_fault *f)
{
    import_ui *ui = ctx;
    if (ui->bad_shown++ >= BAD_ROWS_SHOWN)
        return;
    progress_done(ui);
    fprintf(stderr, "strata import: skipped %s:%llu: %s\n", f->file, (unsigned long long)f->line,
            f->message);
}

static void print_fault(const strata_import_fault *f)
{
    if (f->file && f->line)
        fprintf(stderr, "strata import: %s:%llu: %s\n", f->file, (unsigned long long)f->line,
                f->message);
    else
        fprintf(stderr, "strata import: %s\n", f->message);
}

/* ---- the whole import -------------------------------------------------- */

/* Wall and processor seconds of the two steps. */
typedef struct step_times {
    double load_s, load_cpu, save_s, save_cpu;
} step_times;

static void summary(strata_graph *g, const import_opts *o, const strata_import_report *rep,
                    const step_times *t)
{
    strata_memstats ms = {0};
    strata_memory_stats(g, &ms);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("imported %llu nodes, %llu relationships, %llu properties from %llu rows "
           "in %.2f s (%.0f rows/s; %.2f s CPU, %.0f rows per CPU second)\n",
           (unsigned long long)rep->nodes, (unsigned long long)rep->relationships,
           (unsigned long long)rep->properties, (unsigned long long)rep->rows, t->load_s,
           (double)rep->rows / (t->load_s > 1e-9 ? t->load_s : 1e-9), t->load_cpu,
           (double)rep->rows / (t->load_cpu > 1e-9 ? t->load_cpu : 1e-9));
    if (rep->bad_rows)
        printf("skipped %llu bad rows\n", (unsigned long long)rep->bad_rows);
    printf("graph memory %.1f MiB, id table %.1f MiB, peak resident %.1f MiB\n",
           (double)ms.graph_bytes / 1048576.0, (double)rep->id_table_bytes / 1048576.0,
           (double)ru.ru_maxrss / 1024.0);
    printf("saved %s in %.2f s (%.2f s CPU)\n", o->out, t->save_s, t->save_cpu);
}

/* The groups as strata_import takes them. */
static int fill_sources(import_opts *o)
{
    if (!(o->sources = calloc(o->ngroups, sizeof *o->sources)))
        return -1;
    for (size_t i = 0; i < o->ngroups; i++) {
        const input_group *gr = &o->groups[i];
        o->sources[i] = (strata_import_source){
            .relationships = gr->rels,
            .files = (const char *const *)gr->files, .nfiles = gr->nfiles,
            .labels = (const char *const *)gr->labels, .nlabels = gr->nlabels,
            .type = gr->type,
        };
    }
    return 0;
}

static int run_import(import_opts *o)
{
    import_ui ui = {.tty = isatty(STDERR_FILENO) != 0, .t0 = now_s()};
    double cpu0 = cpu_s();
    strata_import_options io = {
        .nsources = o->ngroups,
        .delimiter = o->delim, .array_delimiter = o->array_delim, .quote = o->quote,
        .skip_bad_rows = o->skip_bad, .on_bad_row = on_bad_row, .on_progress = on_progress,
        .ctx = &ui,
    };
    strata_import_report rep;
    strata_graph *g = NULL;
    int rc = -1;
    if (fill_sources(o) != 0 || strata_graph_new(&g) != STRATA_OK) {
        fprintf(stderr, "strata import: out of memory\n");
        goto done;
    }
    io.sources = o->sources;
    strata_status st = strata_import(g, &io, &rep);
    progress_done(&ui);
    if (st != STRATA_OK) {
        print_fault(&rep.fault);
        goto done;
    }
    double loaded = now_s(), loaded_cpu = cpu_s();
    /* the one step that writes: after every row was read and checked */
    if (strata_save(g, o->out) != STRATA_OK) {
        fprintf(stderr, "strata import: saving %s: %s\n", o->out, strata_errmsg(g));
        goto done;
    }
    step_times t = {loaded - ui.t0, loaded_cpu - cpu0, now_s() - loaded, cpu_s() - loaded_cpu};
    summary(g, o, &rep, &t);
    rc = 0;
done:
    if (rc != 0)
        fprintf(stderr, "strata import: nothing written (%s %s)\n", o->out,
                access(o->out, F_OK) == 0 ? "left as it was" : "not created");
    strata_graph_free(&g);
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
