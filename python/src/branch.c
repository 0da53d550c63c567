/* View.branch() and View.diff(other): branches and diff (docs/BRANCHES.md)
   over strata_branch and strata_diff. */
#include "strata_py.h"

static const char *const change_kinds[] = {
    [STRATA_NODE_CREATED] = "node_created",
    [STRATA_NODE_DELETED] = "node_deleted",
    [STRATA_LABEL_ADDED] = "label_added",
    [STRATA_LABEL_REMOVED] = "label_removed",
    [STRATA_NODE_PROPERTY_SET] = "node_property_set",
    [STRATA_NODE_PROPERTY_REMOVED] = "node_property_removed",
    [STRATA_REL_CREATED] = "relationship_created",
    [STRATA_REL_DELETED] = "relationship_deleted",
    [STRATA_REL_PROPERTY_SET] = "relationship_property_set",
    [STRATA_REL_PROPERTY_REMOVED] = "relationship_property_removed",
};

PyObject *view_branch(PyObject *o, PyObject *unused)
{
    (void)unused;
    ViewObject *self = (ViewObject *)o;
    if (!self->v)
        return raise_status(STRATA_EINVAL, "the view is released");
    strata_graph *g;
    strata_status st = strata_branch(self->v, &g);
    if (st != STRATA_OK)
        return raise_status(st, strata_view_errmsg(self->v));
    return graph_adopt(g);
}

typedef struct diff_rows {
    PyObject *list;
    PyObject *view;   /* for value_to_py */
    PyObject *make;   /* strata.Change */
} diff_rows;

static PyObject *opt_value(const strata_value *v, PyObject *view)
{
    return v ? value_to_py(v, view) : Py_NewRef(Py_None);
}

static PyObject *opt_id(bool has, strata_id id)
{
    return has ? PyLong_FromUnsignedLongLong(id) : Py_NewRef(Py_None);
}

/* One strata.Change per difference; nonzero (stopping the diff) when a
   Python object cannot be made, with the exception set. */
static int add_change(const strata_change *c, void *arg)
{
    diff_rows *d = arg;
    bool rel = c->kind == STRATA_REL_CREATED || c->kind == STRATA_REL_DELETED;
    bool named = c->kind != STRATA_NODE_CREATED && c->kind != STRATA_NODE_DELETED;
    PyObject *args[7] = {
        PyUnicode_FromString(change_kinds[c->kind]),
        PyLong_FromUnsignedLongLong(c->id),
        named ? PyUnicode_FromString(c->name) : Py_NewRef(Py_None),
        opt_id(rel, c->start),
        opt_id(rel, c->end),
        opt_value(c->old_value, d->view),
        opt_value(c->new_value, d->view),
    };
    PyObject *tuple = NULL, *change = NULL;
    bool ok = true;
    for (int i = 0; i < 7; i++)
        ok = ok && args[i];
    if (ok && (tuple = PyTuple_New(7)))
        for (int i = 0; i < 7; i++) {
            PyTuple_SetItem(tuple, i, args[i]);   /* steals */
            args[i] = NULL;
        }
    for (int i = 0; i < 7; i++)
        Py_XDECREF(args[i]);
    if (tuple)
        change = PyObject_CallObject(d->make, tuple);
    Py_XDECREF(tuple);
    int rc = change ? PyList_Append(d->list, change) : -1;
    Py_XDECREF(change);
    return rc != 0;
}

PyObject *view_diff(PyObject *o, PyObject *other)
{
    ViewObject *self = (ViewObject *)o;
    if (!PyObject_TypeCheck(other, View_Type)) {
        PyErr_SetString(PyExc_TypeError, "diff(other): other must be a strata.View");
        return NULL;
    }
    ViewObject *to = (ViewObject *)other;
    if (!self->v || !to->v)
        return raise_status(STRATA_EINVAL, "the view is released");
    diff_rows d = { PyList_New(0), other, helpers.make_change };
    if (!d.list)
        return NULL;
    /* The callback makes Python objects, so the GIL stays held; the diff
       costs what differs, not the graph. */
    strata_status st = strata_diff(self->v, to->v, add_change, &d);
    if (st == STRATA_OK)
        return d.list;
    Py_DECREF(d.list);
    if (PyErr_Occurred())
        return NULL;
    return raise_status(st, strata_view_errmsg(self->v));
}
