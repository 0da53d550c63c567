/* Node, Relationship and Path objects.  A node or relationship is an id
   and the View it was read from; its labels, type and properties are read
   from that view when asked for, so converting a row costs an id, and the
   object keeps the view (and the state it shows) alive. */
#include <stdio.h>
#include <string.h>

#include "strata_py.h"

PyTypeObject *Node_Type, *Relationship_Type, *Path_Type;

static PyObject *entity_new(PyTypeObject *type, PyObject *view, strata_id id)
{
    EntityObject *self = PyObject_New(EntityObject, type);
    if (!self)
        return NULL;
    self->view = Py_NewRef(view);
    self->id = id;
    return (PyObject *)self;
}

PyObject *node_new(PyObject *view, strata_id id) { return entity_new(Node_Type, view, id); }

PyObject *relationship_new(PyObject *view, strata_id id)
{
    return entity_new(Relationship_Type, view, id);
}

static void entity_dealloc(PyObject *o)
{
    Py_CLEAR(((EntityObject *)o)->view);
    PyTypeObject *type = Py_TYPE(o);
    PyObject_Free(o);
    Py_DECREF(type);
}

static strata_view *view_of(PyObject *o)
{
    strata_view *v = ((ViewObject *)((EntityObject *)o)->view)->v;
    if (!v)
        raise_status(STRATA_EINVAL, "the view this entity was read from is released");
    return v;
}

static bool is_rel(PyObject *o) { return Py_TYPE(o) == Relationship_Type; }

static PyObject *token_str(strata_view *v, strata_token_kind kind, strata_token tok)
{
    const char *name;
    strata_status st = strata_token_name(v, kind, tok, &name);
    return st == STRATA_OK ? PyUnicode_FromString(name) : raise_status(st, strata_view_errmsg(v));
}

static PyObject *entity_id(PyObject *o, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(((EntityObject *)o)->id);
}

/* The property keys of the entity: a PyMem array of *n tokens. */
static strata_token *entity_keys(PyObject *o, strata_view *v, size_t *n)
{
    strata_id id = ((EntityObject *)o)->id;
    strata_token small[32];
    strata_status st = is_rel(o) ? strata_rel_keys(v, id, small, 32, n)
                                 : strata_node_keys(v, id, small, 32, n);
    if (st != STRATA_OK) {
        raise_status(st, strata_view_errmsg(v));
        return NULL;
    }
    strata_token *keys = PyMem_Malloc((*n ? *n : 1) * sizeof *keys);
    if (!keys) {
        PyErr_NoMemory();
        return NULL;
    }
    if (*n <= 32) {
        memcpy(keys, small, *n * sizeof *keys);
        return keys;
    }
    st = is_rel(o) ? strata_rel_keys(v, id, keys, *n, n) : strata_node_keys(v, id, keys, *n, n);
    if (st != STRATA_OK) {
        PyMem_Free(keys);
        raise_status(st, strata_view_errmsg(v));
        return NULL;
    }
    return keys;
}

static PyObject *property_of(PyObject *o, strata_view *v, strata_token key)
{
    strata_id id = ((EntityObject *)o)->id;
    strata_value *val = NULL;
    strata_status st = is_rel(o) ? strata_rel_get(v, id, key, &val) : strata_node_get(v, id, key, &val);
    if (st != STRATA_OK)
        return raise_status(st, strata_view_errmsg(v));
    PyObject *r = value_to_py(val, ((EntityObject *)o)->view);
    strata_value_free(&val);
    return r;
}

static PyObject *entity_properties(PyObject *o, void *closure)
{
    (void)closure;
    strata_view *v = view_of(o);
    size_t n;
    strata_token *keys = v ? entity_keys(o, v, &n) : NULL;
    if (!keys)
        return NULL;
    PyObject *dict = PyDict_New();
    for (size_t i = 0; dict && i < n; i++) {
        PyObject *name = token_str(v, STRATA_KEY, keys[i]);
        PyObject *val = name ? property_of(o, v, keys[i]) : NULL;
        if (!val || PyDict_SetItem(dict, name, val) < 0)
            Py_CLEAR(dict);
        Py_XDECREF(name);
        Py_XDECREF(val);
    }
    PyMem_Free(keys);
    return dict;
}

static PyObject *entity_getitem(PyObject *o, PyObject *key)
{
    strata_view *v = view_of(o);
    if (!v)
        return NULL;
    const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, NULL) : NULL;
    if (!name) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "property keys are strings");
        return NULL;
    }
    strata_token tok;
    PyObject *val = NULL;
    if (strata_token_lookup(v, STRATA_KEY, name, &tok) == STRATA_OK)
        val = property_of(o, v, tok);
    if (val == Py_None || (!val && !PyErr_Occurred())) {
        Py_XDECREF(val);
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return val;
}

static PyObject *entity_get(PyObject *o, PyObject *args)
{
    PyObject *key, *dflt = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:get", &key, &dflt))
        return NULL;
    PyObject *val = entity_getitem(o, key);
    if (!val && PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        return Py_NewRef(dflt);
    }
    return val;
}

static PyObject *entity_keys_list(PyObject *o, PyObject *unused)
{
    (void)unused;
    PyObject *props = entity_properties(o, NULL);
    if (!props)
        return NULL;
    PyObject *keys = PyDict_Keys(props);
    Py_DECREF(props);
    return keys;
}

static Py_hash_t entity_hash(PyObject *o)
{
    Py_hash_t h = (Py_hash_t)(((EntityObject *)o)->id * 2 + is_rel(o));
    return h == -1 ? -2 : h;
}

static PyObject *entity_richcompare(PyObject *a, PyObject *b, int op)
{
    if (Py_TYPE(a) != Py_TYPE(b))
        Py_RETURN_NOTIMPLEMENTED;
    strata_id x = ((EntityObject *)a)->id, y = ((EntityObject *)b)->id;
    Py_RETURN_RICHCOMPARE(x, y, op);
}

static PyObject *node_labels(PyObject *o, void *closure)
{
    (void)closure;
    strata_view *v = view_of(o);
    if (!v)
        return NULL;
    strata_id id = ((EntityObject *)o)->id;
    strata_token small[16], *toks = small;
    size_t n;
    strata_status st = strata_node_labels(v, id, small, 16, &n);
    if (st == STRATA_OK && n > 16) {
        if (!(toks = PyMem_Malloc(n * sizeof *toks)))
            return PyErr_NoMemory();
        st = strata_node_labels(v, id, toks, n, &n);
    }
    PyObject *t = st == STRATA_OK ? PyTuple_New((Py_ssize_t)n) : raise_status(st, strata_view_errmsg(v));
    for (size_t i = 0; t && i < n; i++) {
        PyObject *name = token_str(v, STRATA_LABEL, toks[i]);
        if (!name || PyTuple_SetItem(t, (Py_ssize_t)i, name) < 0)
            Py_CLEAR(t);
    }
    if (toks != small)
        PyMem_Free(toks);
    return t;
}

static PyObject *rel_part(PyObject *o, int which)
{
    strata_view *v = view_of(o);
    if (!v)
        return NULL;
    strata_id start, end;
    strata_token type;
    strata_status st = strata_rel_info(v, ((EntityObject *)o)->id, &start, &end, &type);
    if (st != STRATA_OK)
        return raise_status(st, strata_view_errmsg(v));
    PyObject *view = ((EntityObject *)o)->view;
    return which == 0 ? token_str(v, STRATA_RELTYPE, type)
                      : node_new(view, which == 1 ? start : end);
}

static PyObject *rel_type(PyObject *o, void *c) { (void)c; return rel_part(o, 0); }
static PyObject *rel_start(PyObject *o, void *c) { (void)c; return rel_part(o, 1); }
static PyObject *rel_end(PyObject *o, void *c) { (void)c; return rel_part(o, 2); }

static PyObject *entity_repr(PyObject *o)
{
    PyObject *props = entity_properties(o, NULL);
    if (!props)
        return NULL;
    PyObject *what = is_rel(o) ? rel_type(o, NULL) : node_labels(o, NULL);
    PyObject *r = what ? PyUnicode_FromFormat("%s(id=%llu, %s=%R, properties=%R)",
                                              is_rel(o) ? "Relationship" : "Node",
                                              (unsigned long long)((EntityObject *)o)->id,
                                              is_rel(o) ? "type" : "labels", what, props)
                       : NULL;
    Py_XDECREF(what);
    Py_DECREF(props);
    return r;
}

static PyMethodDef entity_methods[] = {
    { "get", entity_get, METH_VARARGS, "get(key, default=None): a property" },
    { "keys", entity_keys_list, METH_NOARGS, "keys(): the property keys" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef node_getset[] = {
    { "id", entity_id, NULL, "the node's id", NULL },
    { "labels", node_labels, NULL, "the labels (sorted by first use)", NULL },
    { "properties", entity_properties, NULL, "the properties, as a dict", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyGetSetDef rel_getset[] = {
    { "id", entity_id, NULL, "the relationship's id", NULL },
    { "type", rel_type, NULL, "the relationship type", NULL },
    { "start_node", rel_start, NULL, "the node it starts at", NULL },
    { "end_node", rel_end, NULL, "the node it ends at", NULL },
    { "properties", entity_properties, NULL, "the properties, as a dict", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot node_slots[] = {
    { Py_tp_dealloc, entity_dealloc }, { Py_tp_getset, node_getset },
    { Py_tp_methods, entity_methods }, { Py_mp_subscript, entity_getitem },
    { Py_tp_hash, entity_hash },       { Py_tp_richcompare, entity_richcompare },
    { Py_tp_repr, entity_repr },       { Py_tp_doc, "A node, read from a view." },
    { 0, NULL },
};

static PyType_Slot rel_slots[] = {
    { Py_tp_dealloc, entity_dealloc }, { Py_tp_getset, rel_getset },
    { Py_tp_methods, entity_methods }, { Py_mp_subscript, entity_getitem },
    { Py_tp_hash, entity_hash },       { Py_tp_richcompare, entity_richcompare },
    { Py_tp_repr, entity_repr },       { Py_tp_doc, "A relationship, read from a view." },
    { 0, NULL },
};

static PyType_Spec node_spec = {
    "strata._strata.Node", sizeof(EntityObject), 0, Py_TPFLAGS_DEFAULT, node_slots,
};
static PyType_Spec rel_spec = {
    "strata._strata.Relationship", sizeof(EntityObject), 0, Py_TPFLAGS_DEFAULT, rel_slots,
};

/* ---- Path ------------------------------------------------------------------ */

PyObject *path_new(PyObject *nodes, PyObject *relationships)
{
    PathObject *self = PyObject_New(PathObject, Path_Type);
    if (!self)
        return NULL;
    self->nodes = Py_NewRef(nodes);
    self->relationships = Py_NewRef(relationships);
    return (PyObject *)self;
}

static void path_dealloc(PyObject *o)
{
    PathObject *self = (PathObject *)o;
    Py_CLEAR(self->nodes);
    Py_CLEAR(self->relationships);
    PyTypeObject *type = Py_TYPE(o);
    PyObject_Free(o);
    Py_DECREF(type);
}

static PyObject *path_nodes(PyObject *o, void *c) { (void)c; return Py_NewRef(((PathObject *)o)->nodes); }
static PyObject *path_rels(PyObject *o, void *c)
{
    (void)c;
    return Py_NewRef(((PathObject *)o)->relationships);
}

static PyObject *path_end(PyObject *o, void *closure)
{
    PyObject *nodes = ((PathObject *)o)->nodes;
    Py_ssize_t n = PyTuple_Size(nodes);
    return Py_NewRef(PyTuple_GetItem(nodes, closure ? n - 1 : 0));
}

static Py_ssize_t path_len(PyObject *o) { return PyTuple_Size(((PathObject *)o)->relationships); }

static PyObject *path_key(PyObject *o)
{
    return PyTuple_Pack(2, ((PathObject *)o)->nodes, ((PathObject *)o)->relationships);
}

static Py_hash_t path_hash(PyObject *o)
{
    PyObject *key = path_key(o);
    Py_hash_t h = key ? PyObject_Hash(key) : -1;
    Py_XDECREF(key);
    return h;
}

static PyObject *path_richcompare(PyObject *a, PyObject *b, int op)
{
    if (Py_TYPE(a) != Py_TYPE(b) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *x = path_key(a), *y = path_key(b);
    PyObject *r = x && y ? PyObject_RichCompare(x, y, op) : NULL;
    Py_XDECREF(x);
    Py_XDECREF(y);
    return r;
}

static PyObject *path_repr(PyObject *o)
{
    return PyUnicode_FromFormat("Path(nodes=%R, relationships=%R)", ((PathObject *)o)->nodes,
                                ((PathObject *)o)->relationships);
}

static PyGetSetDef path_getset[] = {
    { "nodes", path_nodes, NULL, "the nodes, in order", NULL },
    { "relationships", path_rels, NULL, "the relationships, in order", NULL },
    { "start_node", path_end, NULL, "the first node", NULL },
    { "end_node", path_end, NULL, "the last node", (void *)1 },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot path_slots[] = {
    { Py_tp_dealloc, path_dealloc },   { Py_tp_getset, path_getset },
    { Py_sq_length, path_len },        { Py_tp_hash, path_hash },
    { Py_tp_richcompare, path_richcompare }, { Py_tp_repr, path_repr },
    { Py_tp_doc, "A path: nodes and the relationships between them." },
    { 0, NULL },
};

static PyType_Spec path_spec = {
    "strata._strata.Path", sizeof(PathObject), 0, Py_TPFLAGS_DEFAULT, path_slots,
};

int entity_types_init(PyObject *module)
{
    Node_Type = (PyTypeObject *)PyType_FromSpec(&node_spec);
    Relationship_Type = (PyTypeObject *)PyType_FromSpec(&rel_spec);
    Path_Type = (PyTypeObject *)PyType_FromSpec(&path_spec);
    if (!Node_Type || !Relationship_Type || !Path_Type)
        return -1;
    if (PyModule_AddObjectRef(module, "Node", (PyObject *)Node_Type) < 0 ||
        PyModule_AddObjectRef(module, "Relationship", (PyObject *)Relationship_Type) < 0 ||
        PyModule_AddObjectRef(module, "Path", (PyObject *)Path_Type) < 0)
        return -1;
    return 0;
}
