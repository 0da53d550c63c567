/* session — running statements for the strata program: parameters, timing,
   the output format, and the exit status. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/branches.h"
#include "cli/interrupt.h"
#include "cli/session.h"
#include "cli/table.h"

void session_init(session *s, strata_graph *g, out_format fmt)
{
    *s = (session){ .g = g, .fmt = fmt, .timing = true };
}

void session_free(session *s)
{
    branches_free(s);
    for (size_t i = 0; i < s->nparams; i++) {
        free(s->pnames[i]);
        strata_value_free(&s->pvals[i]);
    }
    free(s->pnames);
    free(s->pvals);
    s->pnames = NULL;
    s->pvals = NULL;
    s->nparams = 0;
    free(s->path);
    s->path = NULL;
    if (s->g && strata_in_transaction(s->g))
        strata_rollback(s->g);
    strata_graph_free(&s->g);
}

strata_value *session_params(session *s)
{
    return strata_value_map((const char *const *)s->pnames,
                            (const strata_value *const *)s->pvals, s->nparams);
}

int session_param_set(session *s, const char *name, strata_value *val)
{
    for (size_t i = 0; i < s->nparams; i++)
        if (strcmp(s->pnames[i], name) == 0) {
            strata_value_free(&s->pvals[i]);
            s->pvals[i] = val;
            return 0;
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
        return -1;
    }
    s->pnames[s->nparams] = copy;
    s->pvals[s->nparams++] = val;
    return 0;
}

strata_view *session_view(session *s)
{
    strata_view *v = NULL;
    if (strata_snapshot_own(s->g, &v) != STRATA_OK)
        strata_snapshot(s->g, &v);
    return v;
}

void session_error(session *s, const char *message)
{
    session_fail(s, "ArgumentError", message);
}

void session_fail(session *s, const char *code, const char *message)
{
    session_fail_at(s, code, message, 1, 1);
}

void session_fail_at(session *s, const char *code, const char *message, unsigned line,
                     unsigned column)
{
    strata_query_error e = {code, NULL, message, line, column};
    out_error(stdout, s->fmt, &e);
    s->failed = true;
}

void session_finish(session *s)
{
    if (!s->g || !strata_in_transaction(s->g))
        return;
    strata_rollback(s->g);
    fprintf(stderr, "strata: a transaction was still open at the end (no :commit); "
                    "it was rolled back and its writes are lost\n");
    s->failed = true;
}

static out_status print_result(session *s, strata_result *r, double t0)
{
    if (s->quiet) {
        while (strata_result_next(r, NULL))
            ;
        return strata_result_error(r) ? OUT_FAILED : OUT_PRINTED;
    }
    if (s->fmt == FMT_TABLE) {
        table_opts o = { .width = s->width, .max_rows = s->max_rows, .timing = s->timing };
        return table_print(stdout, r, t0, &o);
    }
    return out_result(stdout, s->fmt, r, t0);
}

/* Prints r, or the error of st / r, and counts a failure. */
static void report(session *s, strata_status st, strata_result *r, const char *text, double t0,
                   const char *errmsg)
{
    out_status printed = st == STRATA_OK ? print_result(s, r, t0) : OUT_FAILED;
    if (printed == OUT_PRINTED) {
        /* done */
    } else if (printed == OUT_REPORTED) {
        s->failed = true;
    } else if (r && strata_result_error(r)) {
        out_error_in(stdout, s->fmt, strata_result_error(r), text);
        s->failed = true;
    } else {
        session_error(s, errmsg);
    }
    if (s->failed && s->bail)
        s->quit = true;
}

void session_run_view(session *s, strata_view *v, const char *text,
                      const strata_value *params)
{
    strata_result *r = NULL;
    double t0 = out_now_ms();
    strata_status st = strata_view_query(v, text, params, &r);
    report(s, st, r, text, t0, "out of memory");
    strata_result_free(&r);
}

void session_run(session *s, const char *text)
{
    /* positions count from the statement's first line */
    while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
        text++;
    strata_value *params = session_params(s);
    strata_result *r = NULL;
    double t0 = out_now_ms();
    /* the statement runs in strata_query and, when it only reads, on as
       its result is read: a Ctrl-C stops either */
    interrupt_watch(s->g);
    strata_status st = strata_query(s->g, text, params, &r);
    report(s, st, r, text, t0, strata_errmsg(s->g));
    interrupt_unwatch();
    strata_result_free(&r);
    strata_value_free(&params);
}
