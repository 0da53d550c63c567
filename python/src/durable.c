/* Graphs on a path: strata.open over strata_open, and the Graph methods of
   the write-ahead log (checkpoint, log_stats).  docs/FORMAT.md, "The log",
   has what is on disk; docs/PYTHON.md what a user sees. */
#include <stdio.h>
#include <string.h>

#include "strata_py.h"

static const struct {
    const char *name;
    strata_sync sync;
} sync_modes[] = {
    { "full", STRATA_SYNC_FULL },
    { "normal", STRATA_SYNC_NORMAL },
    { "off", STRATA_SYNC_OFF },
};

static int sync_from_name(const char *name, strata_sync *out)
{
    for (size_t i = 0; i < sizeof sync_modes / sizeof sync_modes[0]; i++) {
        if (!strcmp(name, sync_modes[i].name)) {
            *out = sync_modes[i].sync;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "sync must be 'full', 'normal' or 'off', not '%s'", name);
    return -1;
}

typedef struct open_call {
    const char *path;
    strata_open_options opts;
    strata_open_report report;
    strata_graph *g;
    strata_status st;
    char err[512];
} open_call;

static void do_open(void *arg)
{
    open_call *c = arg;
    c->st = strata_open(c->path, &c->opts, &c->g);
}

/* What opening found, as a dict (Graph.recovery). */
static PyObject *report_dict(const strata_open_report *r)
{
    return Py_BuildValue("{sKsKsKsKsKss}", "snapshot_seq", (unsigned long long)r->snapshot_seq,
                         "records_replayed", (unsigned long long)r->records_replayed,
                         "last_seq", (unsigned long long)r->last_seq, "torn_bytes",
                         (unsigned long long)r->torn_bytes, "truncated_bytes",
                         (unsigned long long)r->truncated_bytes, "message", r->message);
}

/* A damaged log refuses to open; the message says how to open it anyway. */
static PyObject *raise_open_error(const open_call *c)
{
    if (c->st != STRATA_ECORRUPT || c->opts.truncate_corrupt)
        return raise_status(c->st, c->err);
    char msg[sizeof c->err + 160];
    snprintf(msg, sizeof msg,
             "%s (strata.open(path, truncate_corrupt=True) opens it cut there, losing every "
             "record from that point on)",
             c->err);
    return raise_status(c->st, msg);
}

PyObject *py_open(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = { "path", "sync", "truncate_corrupt", "checkpoint_bytes", NULL };
    PyObject *bytes = NULL, *checkpoint = Py_None;
    const char *sync = "full";
    int truncate = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|s$pO:open", names, PyUnicode_FSConverter,
                                     &bytes, &sync, &truncate, &checkpoint))
        return NULL;
    open_call c = { .path = PyBytes_AsString(bytes) };
    c.opts.truncate_corrupt = truncate;
    c.opts.report = &c.report;
    c.opts.err = c.err;
    c.opts.errlen = sizeof c.err;
    if (sync_from_name(sync, &c.opts.sync) < 0)
        goto fail;
    if (checkpoint != Py_None) {
        if (!PyLong_Check(checkpoint)) {
            PyErr_SetString(PyExc_TypeError, "checkpoint_bytes must be an int or None");
            goto fail;
        }
        c.opts.checkpoint_bytes = PyLong_AsUnsignedLongLong(checkpoint);
        if (PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "checkpoint_bytes must be a byte count from 0 to 2**64 - 1");
            goto fail;
        }
    }
    int ran = run_without_gil(NULL, NULL, do_open, &c);
    Py_CLEAR(bytes);
    if (ran < 0)
        return NULL;
    if (c.st != STRATA_OK)
        return raise_open_error(&c);
    GraphObject *graph = (GraphObject *)graph_adopt(c.g);
    if (!graph)
        return NULL;
    if (!(graph->recovery = report_dict(&c.report))) {
        Py_DECREF(graph);
        return NULL;
    }
    /* Cutting at corruption drops records that had been acknowledged: say
       so where it cannot be missed.  (A torn tail was never acknowledged;
       it is only in the report.) */
    if (c.report.truncated_bytes &&
        PyErr_WarnEx(PyExc_RuntimeWarning, c.report.message, 2) < 0) {
        Py_DECREF(graph);
        return NULL;
    }
    return (PyObject *)graph;
fail:
    Py_XDECREF(bytes);
    return NULL;
}

/* ---- Graph methods ------------------------------------------------------- */

typedef struct checkpoint_call {
    GraphObject *self;
    strata_status st;
    char err[512];
} checkpoint_call;

/* Under the writer lock: a statement of another thread open at that
   moment would make strata_checkpoint refuse, and the graph's message is
   read before the next writer can replace it. */
static void do_checkpoint(void *arg)
{
    checkpoint_call *c = arg;
    PyThread_acquire_lock(c->self->writer, WAIT_LOCK);
    c->st = strata_checkpoint(c->self->g);
    if (c->st != STRATA_OK)
        snprintf(c->err, sizeof c->err, "%s", strata_errmsg(c->self->g));
    PyThread_release_lock(c->self->writer);
}

PyObject *graph_checkpoint(PyObject *o, PyObject *unused)
{
    (void)unused;
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return raise_status(STRATA_EINVAL, "the graph is closed");
    checkpoint_call c = { .self = self };
    if (run_without_gil(NULL, NULL, do_checkpoint, &c) < 0)
        return NULL;
    if (c.st != STRATA_OK)
        return raise_status(c.st, c.err);
    Py_RETURN_NONE;
}

PyObject *graph_log_stats(PyObject *o, PyObject *unused)
{
    (void)unused;
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return raise_status(STRATA_EINVAL, "the graph is closed");
    strata_log_stats s;
    if (strata_log_stats_get(self->g, &s) != STRATA_OK)
        return raise_status(STRATA_EINVAL, "this graph has no log (strata.open(path) opens "
                                           "a graph with one)");
    return Py_BuildValue("{sKsKsK}", "log_bytes", (unsigned long long)s.log_bytes,
                         "snapshot_seq", (unsigned long long)s.snapshot_seq, "last_seq",
                         (unsigned long long)s.last_seq);
}
