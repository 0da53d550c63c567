/* Bulk creation for Graph.load_frames: many nodes (or relationships) and
   their properties, column by column, in one statement — all of them or,
   on any error, none.

   A column is (key, data): data is a buffer of count int64 ('q'/'l'),
   float64 ('d') or bool ('?') cells (a numpy array without nulls; a NaN
   float sets no property), or a sequence of count Python values (None
   and NaN set no property). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strata_py.h"

typedef struct column_src {
    strata_token key;
    const char *name;
    Py_buffer buf;     /* when typed */
    char kind;         /* 'i', 'f', 'b', or 'o' (objects in seq) */
    PyObject *seq;     /* PySequence_Fast, when objects */
} column_src;

/* Item i of a list or tuple (borrowed). */
static PyObject *fast_item(PyObject *seq, Py_ssize_t i)
{
    return PyList_Check(seq) ? PyList_GetItem(seq, i) : PyTuple_GetItem(seq, i);
}

static int open_column(strata_graph *g, PyObject *spec, Py_ssize_t count, column_src *c)
{
    PyObject *data;
    memset(c, 0, sizeof *c);
    if (!PyArg_ParseTuple(spec, "sO", &c->name, &data))
        return -1;
    strata_status st = strata_token_intern(g, STRATA_KEY, c->name, &c->key);
    if (st != STRATA_OK) {
        raise_status(st, strata_errmsg(g));
        return -1;
    }
    if (PyObject_CheckBuffer(data) &&
        PyObject_GetBuffer(data, &c->buf, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) {
        const char *f = c->buf.format ? c->buf.format : "B";
        if (f[0] == '<' || f[0] == '=' || f[0] == '@')
            f++;
        c->kind = (!strcmp(f, "q") || !strcmp(f, "l")) && c->buf.itemsize == 8 ? 'i'
                  : !strcmp(f, "d") && c->buf.itemsize == 8                  ? 'f'
                  : !strcmp(f, "?") && c->buf.itemsize == 1                  ? 'b'
                                                                             : 0;
        if (c->kind && c->buf.len / c->buf.itemsize == count)
            return 0;
        PyBuffer_Release(&c->buf);
        c->kind = 0;
    }
    PyErr_Clear();
    c->seq = PySequence_Fast(data, "a column must be a sequence");
    if (!c->seq)
        return -1;
    if (PySequence_Size(c->seq) != count) {
        PyErr_Format(PyExc_ValueError, "column '%s' has %zd values for %zd rows", c->name,
                     PySequence_Size(c->seq), count);
        return -1;
    }
    c->kind = 'o';
    return 0;
}

static void close_column(column_src *c)
{
    if (c->kind && c->kind != 'o')
        PyBuffer_Release(&c->buf);
    Py_CLEAR(c->seq);
}

/* The value of row i, or NULL with *skip for no property (or an error). */
static strata_value *cell_value(column_src *c, Py_ssize_t i, bool *skip)
{
    *skip = false;
    switch (c->kind) {
    case 'i':
        return strata_value_int(((const int64_t *)c->buf.buf)[i]);
    case 'f': {
        double d = ((const double *)c->buf.buf)[i];
        *skip = isnan(d);
        return *skip ? NULL : strata_value_float(d);
    }
    case 'b':
        return strata_value_bool(((const char *)c->buf.buf)[i] != 0);
    default: {
        PyObject *o = fast_item(c->seq, i);
        if (o == Py_None || (PyFloat_Check(o) && isnan(PyFloat_AsDouble(o)))) {
            *skip = true;
            return NULL;
        }
        char where[200];
        snprintf(where, sizeof where, "column '%.100s', row %zd", c->name, i);
        return py_to_value(o, where);
    }
    }
}

typedef strata_status (*prop_setter)(strata_graph *, strata_id, strata_token, const strata_value *);

static int set_row(strata_graph *g, prop_setter set, strata_id id, column_src *cols, Py_ssize_t ncols,
                   Py_ssize_t row)
{
    for (Py_ssize_t j = 0; j < ncols; j++) {
        bool skip;
        strata_value *v = cell_value(&cols[j], row, &skip);
        if (skip)
            continue;
        if (!v) {
            if (!PyErr_Occurred())
                PyErr_NoMemory();
            return -1;
        }
        strata_status st = set(g, id, cols[j].key, v);
        strata_value_free(&v);
        if (st != STRATA_OK) {
            char msg[600];
            snprintf(msg, sizeof msg, "column '%s', row %zd: %s", cols[j].name, row,
                     strata_errmsg(g));
            raise_status(st, msg);
            return -1;
        }
    }
    return 0;
}

typedef struct bulk {
    GraphObject *graph;
    column_src *cols;
    Py_ssize_t ncols, count;
    PyObject *ids;   /* bytearray of count int64 */
    bool locked;     /* holds the graph's writer lock */
} bulk;

static void writer_lock(GraphObject *self)
{
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->writer, WAIT_LOCK);
    Py_END_ALLOW_THREADS
}

/* Opens the columns and the statement; -1 with an exception. */
static int bulk_open(bulk *b, GraphObject *self, PyObject *columns, Py_ssize_t count)
{
    memset(b, 0, sizeof *b);
    b->graph = self;
    b->count = count;
    if (!self->g) {
        raise_status(STRATA_EINVAL, "the graph is closed");
        return -1;
    }
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative row count");
        return -1;
    }
    PyObject *seq = PySequence_Fast(columns, "columns must be a sequence of (key, data)");
    if (!seq)
        return -1;
    b->ncols = PySequence_Size(seq);
    b->cols = PyMem_Calloc(b->ncols ? (size_t)b->ncols : 1, sizeof *b->cols);
    int rc = b->cols ? 0 : -1;
    if (!b->cols)
        PyErr_NoMemory();
    writer_lock(self);
    b->locked = true;
    for (Py_ssize_t j = 0; rc == 0 && j < b->ncols; j++)
        rc = open_column(self->g, fast_item(seq, j), count, &b->cols[j]);
    Py_DECREF(seq);
    b->ids = rc == 0 ? PyByteArray_FromStringAndSize(NULL, count * 8) : NULL;
    strata_status st = b->ids ? strata_statement_begin(self->g) : STRATA_OK;
    if (b->ids && st != STRATA_OK) {
        raise_status(st, strata_errmsg(self->g));
        Py_CLEAR(b->ids);
    }
    return b->ids ? 0 : -1;
}

/* Ends the statement (committing when ok) and frees what was opened; the
   ids, or NULL with the exception. */
static PyObject *bulk_close(bulk *b, bool ok)
{
    strata_graph *g = b->graph ? b->graph->g : NULL;
    if (b->ids) {
        strata_status st = strata_statement_end(g, ok);
        if (ok && st != STRATA_OK) {
            raise_status(st, strata_errmsg(g));
            ok = false;
        }
    }
    if (b->locked)
        PyThread_release_lock(b->graph->writer);
    for (Py_ssize_t j = 0; b->cols && j < b->ncols; j++)
        close_column(&b->cols[j]);
    PyMem_Free(b->cols);
    if (!ok)
        Py_CLEAR(b->ids);
    return b->ids;
}

/* _create_nodes(labels, count, columns) -> bytearray of the new ids */
PyObject *graph_create_nodes(PyObject *o, PyObject *args)
{
    PyObject *labels, *columns;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "OnO:_create_nodes", &labels, &count, &columns))
        return NULL;
    GraphObject *self = (GraphObject *)o;
    bulk b;
    if (bulk_open(&b, self, columns, count) < 0)
        return bulk_close(&b, false);
    /* as many labels as given: the engine says if a node may not carry them */
    Py_ssize_t nlabels = PySequence_Size(labels);
    strata_token *toks = nlabels >= 0 ? PyMem_Calloc(nlabels ? (size_t)nlabels : 1, sizeof *toks)
                                      : NULL;
    bool ok = toks != NULL;
    if (!toks && nlabels >= 0)
        PyErr_NoMemory();
    for (Py_ssize_t i = 0; ok && i < nlabels; i++) {
        PyObject *l = PySequence_GetItem(labels, i);
        const char *name = l && PyUnicode_Check(l) ? PyUnicode_AsUTF8AndSize(l, NULL) : NULL;
        strata_status st = name ? strata_token_intern(self->g, STRATA_LABEL, name, &toks[i])
                                : STRATA_EINVAL;
        Py_XDECREF(l);
        if (st != STRATA_OK) {
            if (!PyErr_Occurred())
                raise_status(st, name ? strata_errmsg(self->g) : "labels must be strings");
            ok = false;
        }
    }
    int64_t *ids = (int64_t *)PyByteArray_AsString(b.ids);
    for (Py_ssize_t i = 0; ok && i < count; i++) {
        strata_id id;
        strata_status st = strata_node_create(self->g, toks, (size_t)nlabels, &id);
        if (st != STRATA_OK) {
            raise_status(st, strata_errmsg(self->g));
            ok = false;
            break;
        }
        ids[i] = (int64_t)id;
        ok = set_row(self->g, strata_node_set, id, b.cols, b.ncols, i) == 0;
    }
    PyMem_Free(toks);
    return bulk_close(&b, ok);
}

/* _create_relationships(type, starts, ends, columns) -> bytearray of ids;
   starts and ends are buffers of int64 node ids. */
PyObject *graph_create_relationships(PyObject *o, PyObject *args)
{
    const char *type_name;
    Py_buffer starts, ends;
    PyObject *columns;
    if (!PyArg_ParseTuple(args, "sy*y*O:_create_relationships", &type_name, &starts, &ends,
                          &columns))
        return NULL;
    GraphObject *self = (GraphObject *)o;
    Py_ssize_t count = starts.len / 8;
    PyObject *out = NULL;
    bulk b;
    if (starts.len != ends.len || starts.len % 8) {
        PyErr_SetString(PyExc_ValueError, "starts and ends must be equally long int64 buffers");
        goto done;
    }
    if (bulk_open(&b, self, columns, count) < 0) {
        out = bulk_close(&b, false);
        goto done;
    }
    strata_token type;
    strata_status st = strata_token_intern(self->g, STRATA_RELTYPE, type_name, &type);
    bool ok = st == STRATA_OK;
    if (!ok)
        raise_status(st, strata_errmsg(self->g));
    const int64_t *s = starts.buf, *e = ends.buf;
    int64_t *ids = (int64_t *)PyByteArray_AsString(b.ids);
    for (Py_ssize_t i = 0; ok && i < count; i++) {
        strata_id id;
        st = strata_rel_create(self->g, (strata_id)s[i], (strata_id)e[i], type, &id);
        if (st != STRATA_OK) {
            char msg[600];
            snprintf(msg, sizeof msg, "row %zd: %s", i, strata_errmsg(self->g));
            raise_status(st, msg);
            ok = false;
            break;
        }
        ids[i] = (int64_t)id;
        ok = set_row(self->g, strata_rel_set, id, b.cols, b.ncols, i) == 0;
    }
    out = bulk_close(&b, ok);
done:
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return out;
}
