/*
 * strata — the command-line program (docs/QUERY.md): argument parsing and
 * dispatch.
 *
 *   strata                      the REPL on a terminal (repl.c), else batch
 *   strata -f FILE | -c QUERY   batch (batch.c); each -f and -c may be
 *                               repeated, and they run in the order given
 *   --format F, --bail          output format; stop at the first failure
 *   --init FILE                 run a script quietly first (errors reported)
 *   --import-dir DIR            LOAD CSV reads only files under DIR
 *   --no-load-csv               LOAD CSV is refused
 *   --threads N                 threads a counting query may use (0: one per
 *                               processor, the default)
 *
 * Exit status 0 when every statement and command succeeded, else 1; 2 for
 * bad arguments.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/auth.h"
#include "server/server.h"
#include "cli/batch.h"
#include "cli/import.h"
#include "cli/repl.h"
#include "cli/session.h"
#include "strata.h"

/* One -f FILE or -c QUERY, in the order given. */
typedef struct script {
    bool is_file;
    const char *text;       /* the path or the query */
} script;

typedef struct options {
    out_format fmt;
    bool fmt_given, bail;
    const char *init;
    script *scripts;        /* argc entries at most (owned) */
    size_t nscripts;
    const char *dbfile;     /* opened when it exists; :save writes it */
    strata_csv_options csv; /* LOAD CSV's access (default: unrestricted) */
    strata_sync sync;       /* --sync, for a database directory */
    unsigned threads;       /* --threads */
} options;

static void usage(void)
{
    fprintf(stderr, "usage: strata [--format jsonl|json|csv|table] [--bail] [--init FILE] "
                    "[--import-dir DIR] [--no-load-csv] [--threads N] [-f FILE | -c QUERY]... "
                    "[--sync full|normal|off] [DBFILE | DBDIR/]\n"
                    "       strata import --nodes[=LABEL]=FILE ... "
                    "[--relationships[=TYPE]=FILE ...] [--force] OUT.db\n"
                    "DBFILE must be a regular file; :save keeps its mode.  import refuses an\n"
                    "existing OUT.db without --force, and always one that is an input.\n"
                    "'strata import --help' lists the import's options.\n");
}

/* 0: run; 1: exit 0 (help); -1: bad arguments. */
static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            if (out_format_parse(argv[++i], &o->fmt) != 0)
                return -1;
            o->fmt_given = true;
        } else if (strncmp(a, "--format=", 9) == 0) {
            if (out_format_parse(a + 9, &o->fmt) != 0)
                return -1;
            o->fmt_given = true;
        } else if (strcmp(a, "--sync") == 0 && i + 1 < argc) {
            const char *m = argv[++i];
            if (strcmp(m, "full") == 0)
                o->sync = STRATA_SYNC_FULL;
            else if (strcmp(m, "normal") == 0)
                o->sync = STRATA_SYNC_NORMAL;
            else if (strcmp(m, "off") == 0)
                o->sync = STRATA_SYNC_OFF;
            else
                return -1;
        } else if (strcmp(a, "--bail") == 0) {
            o->bail = true;
        } else if (strcmp(a, "--init") == 0 && i + 1 < argc) {
            o->init = argv[++i];
        } else if (strcmp(a, "--import-dir") == 0 && i + 1 < argc) {
            o->csv.import_dir = argv[++i];
        } else if (strncmp(a, "--import-dir=", 13) == 0) {
            o->csv.import_dir = a + 13;
        } else if (strcmp(a, "--no-load-csv") == 0) {
            o->csv.disabled = true;
        } else if (strcmp(a, "--threads") == 0 && i + 1 < argc) {
            char *end;
            unsigned long n = strtoul(argv[++i], &end, 10);
            if (*argv[i] == '-' || *end || end == argv[i] || n > 1024)
                return -1;
            o->threads = (unsigned)n;
        } else if ((strcmp(a, "-f") == 0 || strcmp(a, "-c") == 0) && i + 1 < argc) {
            o->scripts[o->nscripts++] = (script){ a[1] == 'f', argv[++i] };
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            return 1;
        } else if (a[0] != '-' && !o->dbfile) {
            o->dbfile = a;
        } else {
            fprintf(stderr, "strata: unknown argument %s\n", a);
            return -1;
        }
    }
    return 0;
}

static int run(session *s, const options *o, bool tty)
{
    if (o->init && batch_run_file(s, o->init, true) != 0)
        return 1;   /* reported */
    for (size_t i = 0; i < o->nscripts && !s->quit; i++)
        if (o->scripts[i].is_file)
            batch_run_file(s, o->scripts[i].text, false);
        else
            batch_run_string(s, o->scripts[i].text, "-c");
    if (o->nscripts || s->quit) {
        /* done */
    } else if (tty) {
        repl_run(s);
    } else {
        batch_run_stream(s, stdin, NULL);
    }
    session_finish(s);
    return s->failed ? 1 : 0;
}

/* Whether o->dbfile names a database directory (with its log): one that
   exists, or a path ending in '/'. */
static bool is_database_dir(const options *o)
{
    struct stat st;
    size_t n = o->dbfile ? strlen(o->dbfile) : 0;
    return n && (o->dbfile[n - 1] == '/' || (stat(o->dbfile, &st) == 0 && S_ISDIR(st.st_mode)));
}

/* A database directory opened with its log; else the saved graph in
   o->dbfile when that file exists, else a new one. */
static int open_graph(const options *o, strata_graph **g)
{
    if (is_database_dir(o)) {
        char err[512];
        strata_open_report rep;
        strata_open_options opts = { .sync = o->sync, .report = &rep, .err = err,
                                     .errlen = sizeof err };
        if (strata_open(o->dbfile, &opts, g) != STRATA_OK) {
            fprintf(stderr, "strata: %s\n", err);
            return -1;
        }
        if (rep.message[0])
            fprintf(stderr, "strata: %s\n", rep.message);
        return 0;
    }
    if (o->dbfile && access(o->dbfile, F_OK) == 0) {
        char err[512];
        if (strata_load_ex(o->dbfile, g, err, sizeof err) != STRATA_OK) {
            fprintf(stderr, "strata: %s\n", err);
            return -1;
        }
        return 0;
    }
    if (strata_graph_new(g) != STRATA_OK) {
        fprintf(stderr, "strata: out of memory\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "import") == 0)
        return import_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return server_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "passwd") == 0)
        return passwd_main(argc - 1, argv + 1);
    bool tty = isatty(STDIN_FILENO);
    options o = { .fmt = FMT_JSONL, .scripts = calloc((size_t)argc, sizeof(script)) };
    if (!o.scripts) {
        fprintf(stderr, "strata: out of memory\n");
        return 1;
    }
    int parsed = parse_args(argc, argv, &o);
    if (parsed != 0) {
        free(o.scripts);
        usage();
        return parsed > 0 ? 0 : 2;
    }
    bool interactive = tty && !o.nscripts;
    if (!o.fmt_given)
        o.fmt = tty ? FMT_TABLE : FMT_JSONL;
    strata_graph *g = NULL;
    if (open_graph(&o, &g) != 0) {
        free(o.scripts);
        return 1;
    }
    if (strata_set_csv_options(g, &o.csv) != STRATA_OK) {
        fprintf(stderr, "strata: %s\n", strata_errmsg(g));
        strata_graph_free(&g);
        free(o.scripts);
        return 2;
    }
    strata_set_query_threads(g, o.threads);
    session s;
    session_init(&s, g, o.fmt);
    s.bail = o.bail;
    s.threads = o.threads;
    if (o.dbfile && !strata_is_durable(g) && !(s.path = strdup(o.dbfile))) {
        session_free(&s);
        free(o.scripts);
        fprintf(stderr, "strata: out of memory\n");
        return 1;
    }
    int status = run(&s, &o, interactive);
    session_free(&s);
    free(o.scripts);
    return status;
}
