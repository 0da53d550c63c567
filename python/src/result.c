/* Result objects: rows as tuples, columns, counters, and whole columns
   for pandas. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata_py.h"

PyTypeObject *Result_Type;

PyObject *result_wrap(strata_result *r, PyObject *graph, strata_cancel *cancel)
{
    ResultObject *self = PyObject_New(ResultObject, Result_Type);
    if (!self) {
        strata_result_free(&r);
        strata_cancel_free(&cancel);
        return NULL;
    }
    self->cancel = cancel;
    self->r = r;
    self->graph = Py_XNewRef(graph);
    self->view = NULL;
    self->done = false;
    const char *const *names;
    self->ncols = (Py_ssize_t)strata_result_columns(r, &names);
    self->columns = PyTuple_New(self->ncols);
    for (Py_ssize_t i = 0; self->columns && i < self->ncols; i++) {
        PyObject *name = PyUnicode_FromString(names[i]);
        if (!name || PyTuple_SetItem(self->columns, i, name) < 0)
            Py_CLEAR(self->columns);
    }
    if (!self->columns) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void result_dealloc(PyObject *o)
{
    ResultObject *self = (ResultObject *)o;
    strata_result_free(&self->r);
    strata_cancel_free(&self->cancel);
    Py_CLEAR(self->graph);
    Py_CLEAR(self->view);
    Py_CLEAR(self->columns);
    PyTypeObject *type = Py_TYPE(o);
    PyObject_Free(o);
    Py_DECREF(type);
}

/* The View nodes and relationships of this result read through. */
static PyObject *result_view(ResultObject *self)
{
    if (self->view)
        return self->view;
    strata_view *rv = self->r ? strata_result_view(self->r) : NULL, *clone;
    if (!rv)
        return raise_status(STRATA_EINVAL, "the result has no state to read entities from");
    strata_status st = strata_view_clone(rv, &clone);
    if (st != STRATA_OK)
        return raise_status(st, NULL);
    self->view = view_wrap(clone, self->graph);
    return self->view;
}

typedef struct next_call {
    strata_result *r;
    const strata_value *const *row;
    bool got;
} next_call;

static void do_next(void *arg)
{
    next_call *c = arg;
    c->got = strata_result_next(c->r, &c->row);
}

static strata_graph *graph_of(ResultObject *self)
{
    return self->graph ? ((GraphObject *)self->graph)->g : NULL;
}

/* The next row (borrowed until the next call), or NULL at the end or on
   an error (then with the exception set). */
static const strata_value *const *fetch(ResultObject *self)
{
    if (self->done || !self->r)
        return NULL;
    next_call c = { .r = self->r };
    if (run_without_gil(graph_of(self), self->cancel, do_next, &c) < 0)
        return NULL;   /* the result stays as it was */
    if (c.got)
        return c.row;
    self->done = true;
    if (strata_result_error(self->r))
        raise_query_error(self->r, NULL, STRATA_EINVAL, NULL);
    return NULL;
}

static bool has_entities(const strata_value *const *row, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        strata_type t = strata_value_type(row[i]);
        if (t == STRATA_NODE || t == STRATA_RELATIONSHIP || t == STRATA_PATH ||
            t == STRATA_LIST || t == STRATA_MAP)
            return true;
    }
    return false;
}

static PyObject *row_tuple(ResultObject *self, const strata_value *const *row)
{
    PyObject *view = Py_None;
    if (has_entities(row, self->ncols) && !(view = result_view(self)))
        return NULL;
    PyObject *t = PyTuple_New(self->ncols);
    for (Py_ssize_t i = 0; t && i < self->ncols; i++) {
        PyObject *o = value_to_py(row[i], view);
        if (!o || PyTuple_SetItem(t, i, o) < 0)
            Py_CLEAR(t);
    }
    return t;
}

static PyObject *result_iternext(PyObject *o)
{
    ResultObject *self = (ResultObject *)o;
    const strata_value *const *row = fetch(self);
    return row ? row_tuple(self, row) : NULL;
}

static PyObject *result_iter(PyObject *o)
{
    return Py_NewRef(o);
}

static PyObject *result_dicts(PyObject *o, PyObject *unused)
{
    (void)unused;
    ResultObject *self = (ResultObject *)o;
    PyObject *list = PyList_New(0);
    const strata_value *const *row;
    while (list && (row = fetch(self)) != NULL) {
        PyObject *t = row_tuple(self, row), *d = t ? PyDict_New() : NULL;
        for (Py_ssize_t i = 0; d && i < self->ncols; i++)
            if (PyDict_SetItem(d, PyTuple_GetItem(self->columns, i), PyTuple_GetItem(t, i)) < 0)
                Py_CLEAR(d);
        Py_XDECREF(t);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    if (PyErr_Occurred())
        Py_CLEAR(list);
    return list;
}

/* ---- whole columns ------------------------------------------------------- */

/* A column while it is read: a typed buffer (int64, float64 or bool
   bytes) until a value of another type or a null appears, then a list of
   objects. */
typedef enum col_kind { COL_EMPTY, COL_INT, COL_FLOAT, COL_BOOL, COL_OBJECT } col_kind;

typedef struct column {
    col_kind kind;
    char *buf;        /* typed cells */
    size_t len, cap;  /* cells */
    PyObject *list;   /* COL_OBJECT */
} column;

static col_kind kind_of(strata_type t)
{
    return t == STRATA_INT ? COL_INT : t == STRATA_FLOAT ? COL_FLOAT
                                     : t == STRATA_BOOL  ? COL_BOOL
                                                         : COL_OBJECT;
}

static size_t cell_size(col_kind k) { return k == COL_BOOL ? 1 : 8; }

static PyObject *cell_object(const column *c, size_t i)
{
    if (c->kind == COL_INT)
        return PyLong_FromLongLong(((const int64_t *)c->buf)[i]);
    if (c->kind == COL_FLOAT)
        return PyFloat_FromDouble(((const double *)c->buf)[i]);
    return PyBool_FromLong(c->buf[i]);
}

static int to_objects(column *c)
{
    PyObject *list = PyList_New((Py_ssize_t)c->len);
    for (size_t i = 0; list && i < c->len; i++) {
        PyObject *o = cell_object(c, i);
        if (!o || PyList_SetItem(list, (Py_ssize_t)i, o) < 0)
            Py_CLEAR(list);
    }
    if (!list)
        return -1;
    free(c->buf);
    c->buf = NULL;
    c->kind = COL_OBJECT;
    c->list = list;
    return 0;
}

/* Appends a typed cell; safe without the GIL (the buffer is the C
   library's): -1 when out of memory, with no exception set. */
static int push_cell(column *c, const strata_value *v)
{
    if (c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        char *buf = realloc(c->buf, cap * cell_size(c->kind));
        if (!buf)
            return -1;
        c->buf = buf;
        c->cap = cap;
    }
    if (c->kind == COL_INT)
        strata_value_get_int(v, &((int64_t *)c->buf)[c->len]);
    else if (c->kind == COL_FLOAT)
        strata_value_get_float(v, &((double *)c->buf)[c->len]);
    else {
        bool b;
        strata_value_get_bool(v, &b);
        c->buf[c->len] = (char)b;
    }
    c->len++;
    return 0;
}

static int column_add(ResultObject *self, column *c, const strata_value *v)
{
    col_kind k = kind_of(strata_value_type(v));
    if (c->kind == COL_EMPTY && k != COL_OBJECT)
        c->kind = k;
    else if (c->kind == COL_EMPTY)
        c->kind = COL_OBJECT;
    if (c->kind != COL_OBJECT && c->kind != k && to_objects(c) < 0)
        return -1;
    if (c->kind != COL_OBJECT) {
        if (push_cell(c, v) == 0)
            return 0;
        PyErr_NoMemory();
        return -1;
    }
    if (!c->list && !(c->list = PyList_New(0)))
        return -1;
    PyObject *view = Py_None;
    strata_type t = strata_value_type(v);
    if ((t == STRATA_NODE || t == STRATA_RELATIONSHIP || t == STRATA_PATH || t == STRATA_LIST ||
         t == STRATA_MAP) &&
        !(view = result_view(self)))
        return -1;
    PyObject *o = value_to_py(v, view);
    int rc = o ? PyList_Append(c->list, o) : -1;
    Py_XDECREF(o);
    return rc;
}

static PyObject *column_result(column *c)
{
    static const char *const names[] = { "int64", "int64", "float64", "bool", "object" };
    if (c->kind == COL_OBJECT || c->kind == COL_EMPTY) {
        PyObject *list = c->list ? c->list : PyList_New(0);
        c->list = NULL;
        return list ? Py_BuildValue("(sN)", "object", list) : NULL;
    }
    return Py_BuildValue("(sy#)", names[c->kind], c->buf, (Py_ssize_t)(c->len * cell_size(c->kind)));
}

/* Rows whose values all go to typed columns are read without the GIL:
   the run stops at the end, on an error, or at a row that needs Python
   objects (left in row for the caller). */
typedef struct typed_run {
    ResultObject *self;
    column *cols;
    const strata_value *const *row;   /* a row still to add, or NULL */
    bool end, no_memory;
} typed_run;

static bool row_is_typed(const column *cols, Py_ssize_t n, const strata_value *const *row)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        col_kind k = kind_of(strata_value_type(row[i]));
        if (k == COL_OBJECT || (cols[i].kind != COL_EMPTY && cols[i].kind != k))
            return false;
    }
    return true;
}

static void do_typed_run(void *arg)
{
    typed_run *t = arg;
    Py_ssize_t n = t->self->ncols;
    const strata_value *const *row;
    while (strata_result_next(t->self->r, &row)) {
        if (!row_is_typed(t->cols, n, row)) {
            t->row = row;
            return;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            if (t->cols[i].kind == COL_EMPTY)
                t->cols[i].kind = kind_of(strata_value_type(row[i]));
            if (push_cell(&t->cols[i], row[i]) < 0) {
                t->no_memory = true;
                return;
            }
        }
    }
    t->end = true;
}

static bool all_typed(const column *cols, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (cols[i].kind == COL_OBJECT)
            return false;
    return true;
}

/* _columns() -> [(dtype, bytes | list)]: the rest of the rows, column by
   column; numbers and booleans without nulls as raw buffers. */
static PyObject *result_columns_raw(PyObject *o, PyObject *unused)
{
    (void)unused;
    ResultObject *self = (ResultObject *)o;
    column *cols = PyMem_Calloc(self->ncols ? (size_t)self->ncols : 1, sizeof *cols);
    if (!cols)
        return PyErr_NoMemory();
    const strata_value *const *row;
    PyObject *out = NULL;
    while (!self->done && self->r && all_typed(cols, self->ncols)) {
        typed_run t = { .self = self, .cols = cols };
        if (run_without_gil(graph_of(self), self->cancel, do_typed_run, &t) < 0)
            goto done;
        if (t.no_memory) {
            PyErr_NoMemory();
            goto done;
        }
        if (t.end) {
            self->done = true;
            if (strata_result_error(self->r)) {
                raise_query_error(self->r, NULL, STRATA_EINVAL, NULL);
                goto done;
            }
        }
        for (Py_ssize_t i = 0; t.row && i < self->ncols; i++)
            if (column_add(self, &cols[i], t.row[i]) < 0)
                goto done;
    }
    while ((row = fetch(self)) != NULL)
        for (Py_ssize_t i = 0; i < self->ncols; i++)
            if (column_add(self, &cols[i], row[i]) < 0)
                goto done;
    if (PyErr_Occurred())
        goto done;
    out = PyList_New(self->ncols);
    for (Py_ssize_t i = 0; out && i < self->ncols; i++) {
        PyObject *c = column_result(&cols[i]);
        if (!c || PyList_SetItem(out, i, c) < 0)
            Py_CLEAR(out);
    }
done:
    for (Py_ssize_t i = 0; i < self->ncols; i++) {
        free(cols[i].buf);
        Py_XDECREF(cols[i].list);
    }
    PyMem_Free(cols);
    return out;
}

static PyObject *result_get_columns(PyObject *o, void *closure)
{
    (void)closure;
    return Py_NewRef(((ResultObject *)o)->columns);
}

static PyObject *result_get_stats(PyObject *o, void *closure)
{
    (void)closure;
    ResultObject *self = (ResultObject *)o;
    strata_query_stats s;
    memset(&s, 0, sizeof s);
    if (self->r)
        strata_result_stats(self->r, &s);
    return Py_BuildValue("{sKsKsKsKsKsKsK}", "nodes_created", (unsigned long long)s.nodes_created,
                         "nodes_deleted", (unsigned long long)s.nodes_deleted,
                         "relationships_created", (unsigned long long)s.relationships_created,
                         "relationships_deleted", (unsigned long long)s.relationships_deleted,
                         "properties_set", (unsigned long long)s.properties_set, "labels_added",
                         (unsigned long long)s.labels_added, "labels_removed",
                         (unsigned long long)s.labels_removed);
}

static PyObject *result_close(PyObject *o, PyObject *unused)
{
    (void)unused;
    ResultObject *self = (ResultObject *)o;
    strata_result_free(&self->r);
    self->done = true;
    Py_RETURN_NONE;
}

static PyMethodDef result_methods[] = {
    { "dicts", result_dicts, METH_NOARGS, "dicts() -> the remaining rows as dicts" },
    { "_columns", result_columns_raw, METH_NOARGS, "the remaining rows, column by column" },
    { "close", result_close, METH_NOARGS, "close(): free the result now" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef result_getset[] = {
    { "columns", result_get_columns, NULL, "the column names", NULL },
    { "stats", result_get_stats, NULL, "what the statement changed", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot result_slots[] = {
    { Py_tp_dealloc, result_dealloc },
    { Py_tp_iter, result_iter },
    { Py_tp_iternext, result_iternext },
    { Py_tp_methods, result_methods },
    { Py_tp_getset, result_getset },
    { Py_tp_doc, "A query's result: iterate for rows (tuples)." },
    { 0, NULL },
};

static PyType_Spec result_spec = {
    "strata._strata.Result", sizeof(ResultObject), 0, Py_TPFLAGS_DEFAULT, result_slots,
};

int result_type_init(PyObject *module)
{
    Result_Type = (PyTypeObject *)PyType_FromSpec(&result_spec);
    if (!Result_Type)
        return -1;
    return PyModule_AddObjectRef(module, "Result", (PyObject *)Result_Type);
}
