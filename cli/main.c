/*
 * strata — the command-line program (SPEC §8): argument parsing and
 * dispatch.
 *
 *   strata                      the REPL on a terminal (repl.c), else batch
 *   strata -f FILE | -c QUERY   batch (batch.c)
 *   --format F, --bail          output format; stop at the first failure
 *   --init FILE                 run a script quietly first (errors reported)
 *
 * Exit status 0 when every statement and command succeeded, else 1; 2 for
 * bad arguments.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/import.h"
#include "cli/repl.h"
#include "cli/session.h"
#include "strata.h"

typedef struct options {
    out_format fmt;
    bool fmt_given, bail;
    const char *file, *query, *init;
    const char *dbfile;     /* opened when it exists; :save writes it */
} options;

static void usage(void)
{
    fprintf(stderr, "usage: strata [--format jsonl|json|csv|table] [--bail] [--init FILE] "
                    "[-f FILE | -c QUERY] [DBFILE]\n"
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
        } else if (strcmp(a, "--bail") == 0) {
            o->bail = true;
        } else if (strcmp(a, "--init") == 0 && i + 1 < argc) {
            o->init = argv[++i];
        } else if (strcmp(a, "-f") == 0 && i + 1 < argc) {
            o->file = argv[++i];
        } else if (strcmp(a, "-c") == 0 && i + 1 < argc) {
            o->query = argv[++i];
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
    if (o->init && batch_run_init(s, o->init) != 0) {
        fprintf(stderr, "strata: cannot open %s\n", o->init);
        return 1;
    }
    if (s->quit)
        return s->failed;
    if (o->query) {
        batch_run_string(s, o->query);
    } else if (o->file) {
        FILE *f = fopen(o->file, "r");
        if (!f) {
            fprintf(stderr, "strata: cannot open %s\n", o->file);
            return 1;
        }
        batch_run_stream(s, f, o->file);
        fclose(f);
    } else if (tty) {
        repl_run(s);
    } else {
        batch_run_stream(s, stdin, NULL);
    }
    return s->failed ? 1 : 0;
}

/* The saved graph in o->dbfile when that file exists, else a new one. */
static int open_graph(const options *o, strata_graph **g)
{
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
    bool tty = isatty(STDIN_FILENO);
    options o = { .fmt = FMT_JSONL };
    int parsed = parse_args(argc, argv, &o);
    if (parsed != 0) {
        usage();
        return parsed > 0 ? 0 : 2;
    }
    bool interactive = tty && !o.file && !o.query;
    if (!o.fmt_given)
        o.fmt = tty ? FMT_TABLE : FMT_JSONL;
    strata_graph *g = NULL;
    if (open_graph(&o, &g) != 0)
        return 1;
    session s;
    session_init(&s, g, o.fmt);
    s.bail = o.bail;
    if (o.dbfile && !(s.path = strdup(o.dbfile))) {
        session_free(&s);
        fprintf(stderr, "strata: out of memory\n");
        return 1;
    }
    int status = run(&s, &o, interactive);
    session_free(&s);
    return status;
}
