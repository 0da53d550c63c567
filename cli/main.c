/*
 * strata — the command-line program (SPEC §8).
 *
 * Batch mode: statements from standard input, -f FILE or -c QUERY run in
 * order; each runs as soon as its terminating `;` is read (a `;` inside a
 * string, a quoted name or a comment does not count) and its output is
 * flushed before the next line is read, so a program can drive strata
 * through a pipe.  Lines starting with `:` outside a statement are client
 * commands.  Exit status 0 when every statement and command succeeded,
 * else 1; --bail stops at the first failure.
 *
 * On a terminal the same loop runs with a prompt; line editing, history
 * and :help are later work.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/import.h"
#include "cli/output.h"
#include "cli/strbuf.h"
#include "strata.h"

typedef struct session {
    strata_graph *g;
    out_format fmt;
    bool bail;
    bool failed;
    bool quit;
    char **pnames;
    strata_value **pvals;
    size_t nparams;
} session;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void client_error(session *s, const char *message)
{
    strata_query_error e = {"ArgumentError", NULL, message, 1, 1};
    out_error(stdout, s->fmt, &e);
    s->failed = true;
}

static strata_value *params_map(session *s)
{
    return strata_value_map((const char *const *)s->pnames,
                            (const strata_value *const *)s->pvals, s->nparams);
}

static void run_statement(session *s, const char *text)
{
    /* positions count from the statement's first line */
    while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
        text++;
    strata_value *params = params_map(s);
    strata_result *r = NULL;
    double t0 = now_ms();
    strata_status st = strata_query(s->g, text, params, &r);
    double ms = now_ms() - t0;
    if (st == STRATA_OK) {
        out_result(stdout, s->fmt, r, ms);
    } else if (r && strata_result_error(r)) {
        out_error(stdout, s->fmt, strata_result_error(r));
        s->failed = true;
    } else {
        client_error(s, strata_errmsg(s->g));
    }
    strata_result_free(&r);
    strata_value_free(&params);
}

static bool blank(const char *p)
{
    for (; *p; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            return false;
    return true;
}

/* :param NAME => EXPR — EXPR is evaluated as `RETURN EXPR` with the
   parameters set so far. */
static void cmd_param(session *s, char *arg)
{
    char *arrow = strstr(arg, "=>");
    if (!arrow) {
        client_error(s, "usage: :param NAME => EXPRESSION");
        return;
    }
    *arrow = '\0';
    char *name = arg, *end = arrow;
    while (*name == ' ' || *name == '\t')
        name++;
    while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    if (name[0] == '$')
        name++;
    if (!*name) {
        client_error(s, "usage: :param NAME => EXPRESSION");
        return;
    }
    size_t elen = strlen(arrow + 2);
    char *q = malloc(elen + 16);
    if (!q) {
        client_error(s, "out of memory");
        return;
    }
    snprintf(q, elen + 16, "RETURN %s", arrow + 2);
    strata_value *params = params_map(s);
    strata_result *r = NULL;
    strata_status st = strata_query(s->g, q, params, &r);
    free(q);
    strata_value_free(&params);
    const strata_value *const *row;
    if (st != STRATA_OK || strata_result_columns(r, NULL) != 1 || !strata_result_next(r, &row)) {
        if (r && strata_result_error(r)) {
            out_error(stdout, s->fmt, strata_result_error(r));
            s->failed = true;
        } else {
            client_error(s, "the parameter's expression gave no value");
        }
        strata_result_free(&r);
        return;
    }
    /* a copy of the value that outlives the result */
    strata_value *v = strata_value_list(row, 1);
    strata_value *val = NULL;
    if (v)
        strata_value_list_get(v, 0, &val);
    strata_value_free(&v);
    strata_result_free(&r);
    if (!val) {
        client_error(s, "out of memory");
        return;
    }
    for (size_t i = 0; i < s->nparams; i++)
        if (strcmp(s->pnames[i], name) == 0) {
            strata_value_free(&s->pvals[i]);
            s->pvals[i] = val;
            return;
        }
    char **pn = realloc(s->pnames, (s->nparams + 1) * sizeof *pn);
    if (pn)
        s->pnames = pn;
    strata_value **pv = pn ? realloc(s->pvals, (s->nparams + 1) * sizeof *pv) : NULL;
    if (pv)
        s->pvals = pv;
    char *copy = pv ? strdup(name) : NULL;
    if (!copy) {
        strata_value_free(&val);
        client_error(s, "out of memory");
        return;
    }
    s->pnames[s->nparams] = copy;
    s->pvals[s->nparams++] = val;
}

static void cmd_params(session *s)
{
    for (size_t i = 0; i < s->nparams; i++) {
        strata_value *m = strata_value_map((const char *const *)&s->pnames[i],
                                           (const strata_value *const *)&s->pvals[i], 1);
        strata_result *r = NULL;
        if (strata_query(s->g, "RETURN $p AS p", m, &r) == STRATA_OK) {
            /* print as `:param NAME => value` through the formatter */
            printf(":param %s => ", s->pnames[i]);
            fflush(stdout);
            out_result(stdout, FMT_JSONL, r, 0);
        }
        strata_result_free(&r);
        strata_value_free(&m);
    }
}

static void command(session *s, char *line)
{
    char *end = line + strlen(line);
    while (end > line && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        *--end = '\0';
    char *arg = line + 1;
    while (*arg && *arg != ' ' && *arg != '\t')
        arg++;
    size_t cmdlen = (size_t)(arg - line - 1);
    while (*arg == ' ' || *arg == '\t')
        arg++;
    const char *cmd = line + 1;
#define IS(name) (cmdlen == strlen(name) && strncmp(cmd, name, cmdlen) == 0)
    strata_status st = STRATA_OK;
    if (IS("quit") || IS("exit"))
        s->quit = true;
    else if (IS("param"))
        cmd_param(s, arg);
    else if (IS("params"))
        cmd_params(s);
    else if (IS("format")) {
        if (out_format_parse(arg, &s->fmt) != 0)
            client_error(s, "unknown format (jsonl, json, csv, table)");
    } else if (IS("begin"))
        st = strata_begin(s->g);
    else if (IS("commit"))
        st = strata_commit(s->g);
    else if (IS("rollback"))
        st = strata_rollback(s->g);
    else if (IS("help"))
        printf("Statements end with ';'.  Commands: :param NAME => EXPR, :params, "
               ":format jsonl|json|csv|table, :begin, :commit, :rollback, :quit\n");
    else {
        char msg[128];
        snprintf(msg, sizeof msg, "unknown command :%.*s", (int)cmdlen, cmd);
        client_error(s, msg);
    }
#undef IS
    if (st != STRATA_OK)
        client_error(s, strata_errmsg(s->g));
    fflush(stdout);
}

/* The statement scanner: where a statement ends, given what has been read
   so far.  State survives across lines. */
typedef struct scanner {
    char quote;         /* ', " or ` while inside one, else 0 */
    bool escape;
    bool line_comment, block_comment;
} scanner;

/* Feeds one line; runs every statement it completes. */
static void feed(session *s, scanner *sc, strbuf *b, const char *line)
{
    size_t len = strlen(line);
    size_t start = 0;
    for (size_t i = 0; i < len && !s->quit; i++) {
        char c = line[i], next = i + 1 < len ? line[i + 1] : '\0';
        if (sc->line_comment) {
            if (c == '\n')
                sc->line_comment = false;
        } else if (sc->block_comment) {
            if (c == '*' && next == '/') {
                sc->block_comment = false;
                i++;
            }
        } else if (sc->quote) {
            if (sc->escape)
                sc->escape = false;
            else if (c == '\\' && sc->quote != '`')
                sc->escape = true;
            else if (c == sc->quote)
                sc->quote = 0;
        } else if (c == '\'' || c == '"' || c == '`') {
            sc->quote = c;
        } else if (c == '/' && next == '/') {
            sc->line_comment = true;
            i++;
        } else if (c == '/' && next == '*') {
            sc->block_comment = true;
            i++;
        } else if (c == ';') {
            strbuf_put(b, line + start, i - start);
            start = i + 1;
            if (!blank(b->p ? b->p : "")) {
                run_statement(s, b->p);
                if (s->failed && s->bail)
                    s->quit = true;
            }
            b->n = 0;
            if (b->p)
                b->p[0] = '\0';
        }
    }
    if (start < len)
        strbuf_put(b, line + start, len - start);
}

static void run_stream(session *s, FILE *in, bool prompt)
{
    scanner sc = {0};
    strbuf b = {0};
    char *line = NULL;
    size_t cap = 0;
    for (;;) {
        if (prompt) {
            fputs(b.n && !blank(b.p) ? "   ...> " : "strata> ", stdout);
            fflush(stdout);
        }
        if (getline(&line, &cap, in) < 0 || s->quit)
            break;
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ':' && (!b.p || blank(b.p)) && !sc.quote && !sc.block_comment) {
            command(s, line);
            if (s->failed && s->bail)
                s->quit = true;
        } else {
            feed(s, &sc, &b, line);
        }
        sc.line_comment = false;
        if (s->quit)
            break;
    }
    /* a last statement without its ';' */
    if (!s->quit && b.p && !blank(b.p) && !sc.quote)
        run_statement(s, b.p);
    free(line);
    strbuf_free(&b);
}

static void usage(void)
{
    fprintf(stderr, "usage: strata [--format jsonl|json|csv|table] [--bail] "
                    "[-f FILE | -c QUERY]\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "import") == 0)
        return import_main(argc - 1, argv + 1);
    session s = {0};
    bool tty = isatty(STDIN_FILENO);
    s.fmt = tty ? FMT_TABLE : FMT_JSONL;
    const char *file = NULL, *query = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            if (out_format_parse(argv[++i], &s.fmt) != 0) {
                usage();
                return 2;
            }
        } else if (strncmp(a, "--format=", 9) == 0) {
            if (out_format_parse(a + 9, &s.fmt) != 0) {
                usage();
                return 2;
            }
        } else if (strcmp(a, "--bail") == 0) {
            s.bail = true;
        } else if (strcmp(a, "-f") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else if (strcmp(a, "-c") == 0 && i + 1 < argc) {
            query = argv[++i];
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage();
            return 0;
        } else {
            fprintf(stderr, "strata: %s: opening saved graphs is not supported yet\n", a);
            usage();
            return 2;
        }
    }
    if (strata_graph_new(&s.g) != STRATA_OK) {
        fprintf(stderr, "strata: out of memory\n");
        return 1;
    }
    if (query) {
        scanner sc = {0};
        strbuf b = {0};
        feed(&s, &sc, &b, query);
        if (!s.quit && b.p && !blank(b.p))
            run_statement(&s, b.p);
        strbuf_free(&b);
    } else if (file) {
        FILE *f = fopen(file, "r");
        if (!f) {
            fprintf(stderr, "strata: cannot open %s\n", file);
            strata_graph_free(&s.g);
            return 1;
        }
        run_stream(&s, f, false);
        fclose(f);
    } else {
        run_stream(&s, stdin, tty);
    }
    if (strata_in_transaction(s.g))
        strata_rollback(s.g);
    for (size_t i = 0; i < s.nparams; i++) {
        free(s.pnames[i]);
        strata_value_free(&s.pvals[i]);
    }
    free(s.pnames);
    free(s.pvals);
    strata_graph_free(&s.g);
    return s.failed ? 1 : 0;
}
