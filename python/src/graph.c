/* Graph and View objects. */
#include <stdio.h>
#include <string.h>

#include "strata_py.h"

PyTypeObject *Graph_Type, *View_Type;

static PyObject *closed_error(void)
{
    return raise_status(STRATA_EINVAL, "the graph is closed");
}

/* ---- running a query ------------------------------------------------------ */

typedef struct query_call {
    strata_graph *g;          /* strata_query on g, or ... */
    strata_view *v;           /* ... strata_view_query on v */
    PyThread_type_lock lock;  /* the graph's writer lock, for g */
    const char *text;
    strata_value *params;
    strata_cancel *cancel;    /* for v: stops the query and its result (owned) */
    strata_result *r;
    strata_status st;
    char err[512];
} query_call;

static void do_query(void *arg)
{
    query_call *c = arg;
    if (c->g) {
        PyThread_acquire_lock(c->lock, WAIT_LOCK);
        c->st = strata_query(c->g, c->text, c->params, &c->r);
        if (c->st != STRATA_OK)
            snprintf(c->err, sizeof c->err, "%s", strata_errmsg(c->g));
        PyThread_release_lock(c->lock);
    } else {
        c->st = strata_view_query_cancellable(c->v, c->text, c->params, c->cancel, &c->r);
    }
}

/* Parameters from params (a dict or None) and keyword arguments. */
static int collect_params(PyObject *params, PyObject *kw, strata_value **out)
{
    if (!kw || PyDict_Size(kw) == 0)
        return params_to_value(params, out);
    PyObject *all = PyDict_New();
    if (!all)
        return -1;
    int rc = -1;
    if (params && params != Py_None && PyDict_Update(all, params) < 0)
        goto done;
    if (PyDict_Update(all, kw) < 0)
        goto done;
    rc = params_to_value(all, out);
done:
    Py_DECREF(all);
    return rc;
}

static PyObject *run_query(query_call *c, PyObject *graph, PyObject *args, PyObject *kw)
{
    PyObject *params = Py_None;
    if (!PyArg_ParseTuple(args, "s|O:query", &c->text, &params))
        return NULL;
    if (collect_params(params, kw, &c->params) < 0)
        return NULL;
    strata_graph *g = graph ? ((GraphObject *)graph)->g : NULL;
    int ran = run_without_gil(g, c->cancel, do_query, c);
    strata_value_free(&c->params);
    if (ran < 0) {
        strata_cancel_free(&c->cancel);
        return NULL;
    }
    if (c->st != STRATA_OK || (c->r && strata_result_error(c->r))) {
        raise_query_error(c->r, c->text, c->st == STRATA_OK ? STRATA_EINVAL : c->st, c->err);
        strata_result_free(&c->r);
        strata_cancel_free(&c->cancel);
        return NULL;
    }
    strata_cancel *cancel = c->cancel;   /* the result's now */
    c->cancel = NULL;
    return result_wrap(c->r, graph, cancel);
}

/* ---- Graph ------------------------------------------------------------- */

PyObject *graph_adopt(strata_graph *g)
{
    GraphObject *self = PyObject_New(GraphObject, Graph_Type);
    if (!self) {
        strata_graph_free(&g);
        return NULL;
    }
    self->g = g;
    self->recovery = NULL;
    self->writer = PyThread_allocate_lock();
    if (!self->writer) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)type;
    if (!PyArg_ParseTuple(args, ":Graph") || (kw && PyDict_Size(kw))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "Graph() takes no arguments");
        return NULL;
    }
    strata_graph *g;
    strata_status st = strata_graph_new(&g);
    if (st != STRATA_OK)
        return raise_status(st, NULL);
    return graph_adopt(g);
}

/* Frees the graph; for a graph on a path, syncs and closes its log first
   (strata_close), whose failure is the status. */
static strata_status graph_close_now(GraphObject *self)
{
    strata_status st = STRATA_OK;
    if (!self->g)
        return st;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->writer, WAIT_LOCK);
    if (strata_is_durable(self->g))
        st = strata_close(&self->g);
    else
        strata_graph_free(&self->g);
    PyThread_release_lock(self->writer);
    Py_END_ALLOW_THREADS
    return st;
}

static void graph_dealloc(PyObject *o)
{
    GraphObject *self = (GraphObject *)o;
    if (self->g)
        strata_graph_free(&self->g);
    if (self->writer)
        PyThread_free_lock(self->writer);
    Py_CLEAR(self->recovery);
    PyTypeObject *type = Py_TYPE(o);
    PyObject_Free(o);
    Py_DECREF(type);
}

static PyObject *graph_close(PyObject *o, PyObject *unused)
{
    (void)unused;
    strata_status st = graph_close_now((GraphObject *)o);
    if (st != STRATA_OK)
        return raise_status(st, "closing the database: syncing its log failed, so the last "
                                "commits (under sync 'normal' or 'off') may not be on disk");
    Py_RETURN_NONE;
}

static PyObject *graph_query(PyObject *o, PyObject *args, PyObject *kw)
{
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return closed_error();
    query_call c = { .g = self->g, .lock = self->writer };
    return run_query(&c, o, args, kw);
}

static PyObject *graph_snapshot(PyObject *o, PyObject *unused)
{
    (void)unused;
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return closed_error();
    strata_view *v;
    strata_status st = strata_snapshot(self->g, &v);
    if (st != STRATA_OK)
        return raise_status(st, strata_errmsg(self->g));
    return view_wrap(v, o);
}

typedef struct txn_call {
    GraphObject *self;
    strata_status (*fn)(strata_graph *);
    strata_status st;
    char err[512];
} txn_call;

static void do_txn(void *arg)
{
    txn_call *c = arg;
    PyThread_acquire_lock(c->self->writer, WAIT_LOCK);
    c->st = c->fn(c->self->g);
    if (c->st != STRATA_OK)
        snprintf(c->err, sizeof c->err, "%s", strata_errmsg(c->self->g));
    PyThread_release_lock(c->self->writer);
}

static PyObject *graph_txn(PyObject *o, strata_status (*fn)(strata_graph *))
{
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return closed_error();
    txn_call c = { .self = self, .fn = fn };
    if (run_without_gil(self->g, NULL, do_txn, &c) < 0)
        return NULL;
    if (c.st != STRATA_OK)
        return raise_status(c.st, c.err);
    Py_RETURN_NONE;
}

static PyObject *graph_begin(PyObject *o, PyObject *u) { (void)u; return graph_txn(o, strata_begin); }
static PyObject *graph_commit(PyObject *o, PyObject *u) { (void)u; return graph_txn(o, strata_commit); }
static PyObject *graph_rollback(PyObject *o, PyObject *u) { (void)u; return graph_txn(o, strata_rollback); }

static PyObject *graph_in_transaction(PyObject *o, void *closure)
{
    (void)closure;
    GraphObject *self = (GraphObject *)o;
    return PyBool_FromLong(self->g && strata_in_transaction(self->g));
}

static PyObject *graph_durable(PyObject *o, void *closure)
{
    (void)closure;
    return PyBool_FromLong(strata_is_durable(((GraphObject *)o)->g));
}

static PyObject *graph_recovery(PyObject *o, void *closure)
{
    (void)closure;
    PyObject *r = ((GraphObject *)o)->recovery;
    return Py_NewRef(r ? r : Py_None);
}

static PyObject *graph_closed(PyObject *o, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((GraphObject *)o)->g == NULL);
}

typedef struct save_call {
    strata_graph *g;
    strata_view *v;
    const char *path;
    strata_status st;
    char err[512];
} save_call;

static void do_save(void *arg)
{
    save_call *c = arg;
    if (c->g) {
        c->st = strata_save(c->g, c->path);
        if (c->st != STRATA_OK)
            snprintf(c->err, sizeof c->err, "%s", strata_errmsg(c->g));
    } else {
        c->st = strata_save_view(c->v, c->path);
        if (c->st != STRATA_OK)
            snprintf(c->err, sizeof c->err, "%s", strata_view_errmsg(c->v));
    }
}

static PyObject *save_to(strata_graph *g, strata_view *v, PyObject *path)
{
    PyObject *bytes;
    if (!PyUnicode_FSConverter(path, &bytes))
        return NULL;
    save_call c = { .g = g, .v = v, .path = PyBytes_AsString(bytes) };
    int ran = run_without_gil(NULL, NULL, do_save, &c);
    Py_DECREF(bytes);
    if (ran < 0)
        return NULL;
    if (c.st != STRATA_OK)
        return raise_status(c.st, c.err);
    Py_RETURN_NONE;
}

static PyObject *graph_save(PyObject *o, PyObject *path)
{
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return closed_error();
    return save_to(self->g, NULL, path);
}

static PyObject *graph_interrupt(PyObject *o, PyObject *unused)
{
    (void)unused;
    GraphObject *self = (GraphObject *)o;
    if (self->g)
        strata_interrupt(self->g);
    Py_RETURN_NONE;
}

static PyObject *graph_set_query_threads(PyObject *o, PyObject *arg)
{
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return closed_error();
    unsigned long n = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred() || n > 1024) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "threads must be a whole number from 0 to 1024");
        return NULL;
    }
    strata_set_query_threads(self->g, (unsigned)n);
    Py_RETURN_NONE;
}

static PyObject *graph_memory(PyObject *o, PyObject *unused)
{
    (void)unused;
    GraphObject *self = (GraphObject *)o;
    if (!self->g)
        return closed_error();
    strata_memstats m;
    strata_status st = strata_memory_stats(self->g, &m);
    if (st != STRATA_OK)
        return raise_status(st, strata_errmsg(self->g));
    return Py_BuildValue("{sKsKsKsKsKsK}", "graph_bytes", (unsigned long long)m.graph_bytes,
                         "private_bytes", (unsigned long long)m.private_bytes,
                         "nodes", (unsigned long long)m.nodes, "relationships",
                         (unsigned long long)m.relationships, "node_slots",
                         (unsigned long long)m.node_slots, "rel_slots",
                         (unsigned long long)m.rel_slots);
}

static PyMethodDef graph_methods[] = {
    { "query", (PyCFunction)(void (*)(void))graph_query, METH_VARARGS | METH_KEYWORDS,
      "query(text, params=None, **params) -> Result" },
    { "snapshot", graph_snapshot, METH_NOARGS, "snapshot() -> View of the last committed state" },
    { "close", graph_close, METH_NOARGS, "close(): free the graph (views stay readable)" },
    { "begin", graph_begin, METH_NOARGS, "begin(): open a transaction" },
    { "commit", graph_commit, METH_NOARGS, "commit(): publish the open transaction" },
    { "rollback", graph_rollback, METH_NOARGS, "rollback(): drop the open transaction" },
    { "save", graph_save, METH_O, "save(path): write the last committed state to a file" },
    { "interrupt", graph_interrupt, METH_NOARGS, "interrupt(): stop the running query" },
    { "set_query_threads", graph_set_query_threads, METH_O,
      "set_query_threads(n): threads a counting query may use (0: one per processor)" },
    { "memory_stats", graph_memory, METH_NOARGS, "memory_stats() -> dict" },
    { "checkpoint", graph_checkpoint, METH_NOARGS,
      "checkpoint(): write a new snapshot and drop the log it holds (strata.open graphs)" },
    { "log_stats", graph_log_stats, METH_NOARGS,
      "log_stats() -> dict: log_bytes, snapshot_seq, last_seq (strata.open graphs)" },
    { "_create_nodes", graph_create_nodes, METH_VARARGS, "bulk node creation (load_frames)" },
    { "_create_relationships", graph_create_relationships, METH_VARARGS,
      "bulk relationship creation (load_frames)" },
    { "_import_csv", graph_import_csv, METH_VARARGS, "strata_import (import_csv)" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef graph_getset[] = {
    { "in_transaction", graph_in_transaction, NULL, "whether a transaction is open", NULL },
    { "closed", graph_closed, NULL, "whether close() was called", NULL },
    { "durable", graph_durable, NULL, "whether the graph is on a path, with a log (strata.open)",
      NULL },
    { "recovery", graph_recovery, NULL,
      "what strata.open found: a dict (snapshot_seq, records_replayed, last_seq, torn_bytes, "
      "truncated_bytes, message), or None for a graph not opened on a path", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot graph_slots[] = {
    { Py_tp_new, graph_new },
    { Py_tp_dealloc, graph_dealloc },
    { Py_tp_methods, graph_methods },
    { Py_tp_getset, graph_getset },
    { Py_tp_doc, "Graph(): a new, empty in-memory graph." },
    { 0, NULL },
};

static PyType_Spec graph_spec = {
    "strata._strata.Graph", sizeof(GraphObject), 0,
    Py_TPFLAGS_DEFAULT, graph_slots,
};

/* ---- View --------------------------------------------------------------- */

PyObject *view_wrap(strata_view *v, PyObject *graph)
{
    ViewObject *self = PyObject_New(ViewObject, View_Type);
    if (!self) {
        strata_view_release(&v);
        return NULL;
    }
    self->v = v;
    self->graph = Py_XNewRef(graph);
    return (PyObject *)self;
}

static void view_dealloc(PyObject *o)
{
    ViewObject *self = (ViewObject *)o;
    strata_view_release(&self->v);
    Py_CLEAR(self->graph);
    PyTypeObject *type = Py_TYPE(o);
    PyObject_Free(o);
    Py_DECREF(type);
}

static PyObject *released_error(void)
{
    return raise_status(STRATA_EINVAL, "the view is released");
}

static PyObject *view_query(PyObject *o, PyObject *args, PyObject *kw)
{
    ViewObject *self = (ViewObject *)o;
    if (!self->v)
        return released_error();
    /* Each query reads its own clone, so threads may share a View. */
    strata_view *clone;
    strata_status st = strata_view_clone(self->v, &clone);
    if (st != STRATA_OK)
        return raise_status(st, NULL);
    /* A cancel handle per query: Ctrl-C stops it, and its result (which
       keeps the handle) as it is read. */
    query_call c = { .v = clone };
    if ((st = strata_cancel_new(&c.cancel)) != STRATA_OK) {
        strata_view_release(&clone);
        return raise_status(st, NULL);
    }
    PyObject *res = run_query(&c, self->graph, args, kw);
    strata_cancel_free(&c.cancel);   /* unless the result took it */
    strata_view_release(&clone);
    return res;
}

static PyObject *view_release(PyObject *o, PyObject *unused)
{
    (void)unused;
    strata_view_release(&((ViewObject *)o)->v);
    Py_RETURN_NONE;
}

static PyObject *view_enter(PyObject *o, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(o);
}

static PyObject *view_exit(PyObject *o, PyObject *args)
{
    (void)args;
    strata_view_release(&((ViewObject *)o)->v);
    Py_RETURN_FALSE;
}

static PyObject *view_save(PyObject *o, PyObject *path)
{
    ViewObject *self = (ViewObject *)o;
    if (!self->v)
        return released_error();
    return save_to(NULL, self->v, path);
}

static PyObject *view_counts(PyObject *o, void *closure)
{
    ViewObject *self = (ViewObject *)o;
    if (!self->v)
        return released_error();
    return PyLong_FromUnsignedLongLong(closure ? strata_rel_count(self->v)
                                               : strata_node_count(self->v));
}

static PyObject *view_released(PyObject *o, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((ViewObject *)o)->v == NULL);
}

static PyMethodDef view_methods[] = {
    { "query", (PyCFunction)(void (*)(void))view_query, METH_VARARGS | METH_KEYWORDS,
      "query(text, params=None, **params) -> Result (read-only)" },
    { "release", view_release, METH_NOARGS, "release(): let the view's state go" },
    { "save", view_save, METH_O, "save(path): write this view's state to a file" },
    { "branch", view_branch, METH_NOARGS,
      "branch() -> Graph: a writable graph starting at this view's state, in O(1)" },
    { "diff", view_diff, METH_O,
      "diff(other) -> [Change]: what turns this view's state into other's" },
    { "__enter__", view_enter, METH_NOARGS, NULL },
    { "__exit__", view_exit, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef view_getset[] = {
    { "node_count", view_counts, NULL, "live nodes in the view", NULL },
    { "relationship_count", view_counts, NULL, "live relationships in the view", (void *)1 },
    { "released", view_released, NULL, "whether release() was called", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot view_slots[] = {
    { Py_tp_dealloc, view_dealloc },
    { Py_tp_methods, view_methods },
    { Py_tp_getset, view_getset },
    { Py_tp_doc, "An immutable view of a graph's state (Graph.snapshot())." },
    { 0, NULL },
};

static PyType_Spec view_spec = {
    "strata._strata.View", sizeof(ViewObject), 0, Py_TPFLAGS_DEFAULT, view_slots,
};

int graph_types_init(PyObject *module)
{
    Graph_Type = (PyTypeObject *)PyType_FromSpec(&graph_spec);
    View_Type = (PyTypeObject *)PyType_FromSpec(&view_spec);
    if (!Graph_Type || !View_Type)
        return -1;
    if (PyModule_AddObjectRef(module, "Graph", (PyObject *)Graph_Type) < 0 ||
        PyModule_AddObjectRef(module, "View", (PyObject *)View_Type) < 0)
        return -1;
    return 0;
}
