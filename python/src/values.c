/* Values both ways: strata values to Python objects and back.

   strata -> Python: null None, boolean bool, integer int, float float,
   string str, list list, map dict, node Node, relationship Relationship,
   path Path, temporals date/time/datetime (through the Python half:
   make_temporal), duration strata.Duration.

   Python -> strata: None, bool, int (64-bit), float, str, list and tuple,
   dict with str keys, date/time/datetime (temporal_fields), Duration.
   Anything else is a TypeError naming where it was met. */
#include <stdio.h>
#include <string.h>

#include "strata_py.h"

/* ---- strata -> Python -------------------------------------------------- */

static PyObject *list_to_py(const strata_value *v, PyObject *view)
{
    size_t n = strata_value_list_len(v);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        strata_value *item = NULL;
        strata_status st = strata_value_list_get(v, i, &item);
        PyObject *o = st == STRATA_OK ? value_to_py(item, view) : raise_status(st, NULL);
        strata_value_free(&item);
        if (!o || PyList_SetItem(list, (Py_ssize_t)i, o) < 0)
            Py_CLEAR(list);
    }
    return list;
}

static PyObject *map_to_py(const strata_value *v, PyObject *view)
{
    size_t n = strata_value_map_len(v);
    PyObject *dict = PyDict_New();
    for (size_t i = 0; dict && i < n; i++) {
        const char *key;
        strata_value *val = NULL;
        strata_status st = strata_value_map_entry(v, i, &key, &val);
        PyObject *o = st == STRATA_OK ? value_to_py(val, view) : raise_status(st, NULL);
        strata_value_free(&val);
        if (!o || PyDict_SetItemString(dict, key, o) < 0)
            Py_CLEAR(dict);
        Py_XDECREF(o);
    }
    return dict;
}

static PyObject *path_to_py(const strata_value *v, PyObject *view)
{
    size_t n = strata_value_path_len(v);
    PyObject *nodes = PyTuple_New((Py_ssize_t)n + 1), *rels = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; nodes && rels && i <= n; i++) {
        strata_id id;
        strata_value_path_node(v, i, &id);
        PyObject *node = node_new(view, id);
        if (!node || PyTuple_SetItem(nodes, (Py_ssize_t)i, node) < 0)
            Py_CLEAR(nodes);
        if (nodes && i < n) {
            strata_value_path_rel(v, i, &id);
            PyObject *rel = relationship_new(view, id);
            if (!rel || PyTuple_SetItem(rels, (Py_ssize_t)i, rel) < 0)
                Py_CLEAR(rels);
        }
    }
    PyObject *path = nodes && rels ? path_new(nodes, rels) : NULL;
    Py_XDECREF(nodes);
    Py_XDECREF(rels);
    return path;
}

static PyObject *temporal_to_py(const strata_value *v)
{
    strata_temporal t;
    strata_status st = strata_value_get_temporal(v, &t);
    if (st != STRATA_OK)
        return raise_status(st, NULL);
    return PyObject_CallFunction(helpers.make_temporal, "iLLis", (int)t.type, (long long)t.days,
                                 (long long)t.nanos, (int)t.offset, t.zone);
}

static PyObject *duration_to_py(const strata_value *v)
{
    strata_duration d;
    strata_status st = strata_value_get_duration(v, &d);
    if (st != STRATA_OK)
        return raise_status(st, NULL);
    return PyObject_CallFunction(helpers.duration_type, "LLLi", (long long)d.months,
                                 (long long)d.days, (long long)d.seconds, (int)d.nanos);
}

PyObject *value_to_py(const strata_value *v, PyObject *view)
{
    union { bool b; int64_t i; double f; } s;
    const char *str;
    size_t len;
    strata_id id;
    switch (strata_value_type(v)) {
    case STRATA_NULL:
        Py_RETURN_NONE;
    case STRATA_BOOL:
        strata_value_get_bool(v, &s.b);
        return PyBool_FromLong(s.b);
    case STRATA_INT:
        strata_value_get_int(v, &s.i);
        return PyLong_FromLongLong(s.i);
    case STRATA_FLOAT:
        strata_value_get_float(v, &s.f);
        return PyFloat_FromDouble(s.f);
    case STRATA_STRING:
        strata_value_get_string(v, &str, &len);
        return PyUnicode_DecodeUTF8(str, (Py_ssize_t)len, "surrogateescape");
    case STRATA_LIST:
        return list_to_py(v, view);
    case STRATA_MAP:
        return map_to_py(v, view);
    case STRATA_NODE:
        strata_value_get_id(v, &id);
        return node_new(view, id);
    case STRATA_RELATIONSHIP:
        strata_value_get_id(v, &id);
        return relationship_new(view, id);
    case STRATA_PATH:
        return path_to_py(v, view);
    case STRATA_DURATION:
        return duration_to_py(v);
    default:
        return temporal_to_py(v);
    }
}

/* ---- Python -> strata -------------------------------------------------- */

static strata_value *fail_type(const char *where, PyObject *o, const char *why)
{
    PyObject *type_name = PyType_GetName(Py_TYPE(o));
    PyErr_Format(PyExc_TypeError, "%s: %s (%U)", where, why,
                 type_name ? type_name : Py_None);
    Py_XDECREF(type_name);
    return NULL;
}

static strata_value *no_memory(void)
{
    PyErr_NoMemory();
    return NULL;
}

static strata_value *int_to_value(PyObject *o, const char *where)
{
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow)
        return fail_type(where, o, "an integer outside 64 bits");
    if (i == -1 && PyErr_Occurred())
        return NULL;
    strata_value *v = strata_value_int(i);
    return v ? v : no_memory();
}

static strata_value *string_to_value(PyObject *o, const char *where)
{
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(o, &len);
    if (!s) {
        PyErr_Clear();
        return fail_type(where, o, "a string that is not valid Unicode");
    }
    strata_value *v = strata_value_string(s, (size_t)len);
    return v ? v : no_memory();
}

static void free_values(strata_value **items, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        strata_value_free(&items[i]);
    PyMem_Free(items);
}

static strata_value *sequence_to_value(PyObject *o, const char *where)
{
    PyObject *seq = PySequence_Fast(o, "not a sequence");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Size(seq);
    strata_value **items = PyMem_Calloc(n ? (size_t)n : 1, sizeof *items);
    strata_value *out = NULL;
    Py_ssize_t i = 0;
    if (!items)
        goto done;
    for (; i < n; i++) {
        char inner[256];
        snprintf(inner, sizeof inner, "%s[%zd]", where, i);
        PyObject *item = PySequence_GetItem(seq, i);
        items[i] = item ? py_to_value(item, inner) : NULL;
        Py_XDECREF(item);
        if (!items[i])
            goto done;
    }
    out = strata_value_list((const strata_value *const *)items, (size_t)n);
    if (!out)
        no_memory();
done:
    if (items)
        free_values(items, i);
    else
        no_memory();
    Py_DECREF(seq);
    return out;
}

static strata_value *dict_to_value(PyObject *o, const char *where)
{
    Py_ssize_t n = PyDict_Size(o), pos = 0, i = 0;
    const char **keys = PyMem_Calloc(n ? (size_t)n : 1, sizeof *keys);
    strata_value **vals = PyMem_Calloc(n ? (size_t)n : 1, sizeof *vals);
    strata_value *out = NULL;
    PyObject *key, *val;
    if (!keys || !vals) {
        no_memory();
        goto done;
    }
    while (PyDict_Next(o, &pos, &key, &val)) {
        if (!PyUnicode_Check(key)) {
            fail_type(where, key, "a map key that is not a string");
            goto done;
        }
        keys[i] = PyUnicode_AsUTF8AndSize(key, NULL);
        if (!keys[i])
            goto done;
        char inner[256];
        snprintf(inner, sizeof inner, "%s['%.100s']", where, keys[i]);
        vals[i] = py_to_value(val, inner);
        if (!vals[i])
            goto done;
        i++;
    }
    out = strata_value_map(keys, (const strata_value *const *)vals, (size_t)n);
    if (!out)
        no_memory();
done:
    PyMem_Free(keys);
    if (vals)
        free_values(vals, i);
    return out;
}

static strata_value *duration_to_value(PyObject *o, const char *where)
{
    strata_duration d;
    PyObject *f[4] = {
        PyObject_GetAttrString(o, "months"), PyObject_GetAttrString(o, "days"),
        PyObject_GetAttrString(o, "seconds"), PyObject_GetAttrString(o, "nanoseconds"),
    };
    strata_value *out = NULL;
    if (f[0] && f[1] && f[2] && f[3]) {
        d.months = PyLong_AsLongLong(f[0]);
        d.days = PyLong_AsLongLong(f[1]);
        d.seconds = PyLong_AsLongLong(f[2]);
        d.nanos = (int32_t)PyLong_AsLong(f[3]);
        if (!PyErr_Occurred()) {
            strata_status st = strata_value_duration(&d, &out);
            if (st != STRATA_OK)
                fail_type(where, o, "a duration out of range");
        }
    }
    for (int i = 0; i < 4; i++)
        Py_XDECREF(f[i]);
    return out;
}

/* date, time and datetime objects: the Python half decodes the fields. */
static strata_value *temporal_to_value(PyObject *o, const char *where, bool *handled)
{
    *handled = false;
    PyObject *fields = PyObject_CallFunctionObjArgs(helpers.temporal_fields, o, NULL);
    if (!fields)
        return NULL;
    if (fields == Py_None) {
        Py_DECREF(fields);
        return NULL;
    }
    *handled = true;
    if (PyObject_IsInstance(fields, helpers.duration_type) == 1) {   /* a timedelta */
        strata_value *d = duration_to_value(fields, where);
        Py_DECREF(fields);
        return d;
    }
    strata_temporal t;
    memset(&t, 0, sizeof t);
    int type;
    long long days, nanos;
    int offset;
    const char *zone;
    strata_value *out = NULL;
    if (PyArg_ParseTuple(fields, "iLLis", &type, &days, &nanos, &offset, &zone)) {
        t.type = (strata_type)type;
        t.days = days;
        t.nanos = nanos;
        t.offset = offset;
        snprintf(t.zone, sizeof t.zone, "%s", zone);
        if (strata_value_temporal(&t, &out) != STRATA_OK)
            fail_type(where, o, "a temporal value strata cannot hold");
    }
    Py_DECREF(fields);
    return out;
}

strata_value *py_to_value(PyObject *o, const char *where)
{
    strata_value *v;
    if (o == Py_None)
        v = strata_value_null();
    else if (PyBool_Check(o))
        v = strata_value_bool(o == Py_True);
    else if (PyLong_Check(o))
        return int_to_value(o, where);
    else if (PyFloat_Check(o))
        v = strata_value_float(PyFloat_AsDouble(o));
    else if (PyUnicode_Check(o))
        return string_to_value(o, where);
    else if (PyList_Check(o) || PyTuple_Check(o))
        return sequence_to_value(o, where);
    else if (PyDict_Check(o))
        return dict_to_value(o, where);
    else if (helpers.duration_type && PyObject_IsInstance(o, helpers.duration_type) == 1)
        return duration_to_value(o, where);
    else {
        bool handled = false;
        if (helpers.temporal_fields) {
            v = temporal_to_value(o, where, &handled);
            if (handled || PyErr_Occurred())
                return v;
        }
        return fail_type(where, o, "a value strata cannot hold");
    }
    return v ? v : no_memory();
}

int params_to_value(PyObject *params, strata_value **out)
{
    *out = NULL;
    if (!params || params == Py_None)
        return 0;
    if (!PyDict_Check(params)) {
        PyErr_SetString(PyExc_TypeError, "parameters must be a dict");
        return -1;
    }
    Py_ssize_t n = PyDict_Size(params), pos = 0, i = 0;
    const char **keys = PyMem_Calloc(n ? (size_t)n : 1, sizeof *keys);
    strata_value **vals = PyMem_Calloc(n ? (size_t)n : 1, sizeof *vals);
    PyObject *key, *val;
    int rc = -1;
    if (!keys || !vals) {
        PyErr_NoMemory();
        goto done;
    }
    while (PyDict_Next(params, &pos, &key, &val)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "parameter names must be strings");
            goto done;
        }
        keys[i] = PyUnicode_AsUTF8AndSize(key, NULL);
        if (!keys[i])
            goto done;
        char where[160];
        snprintf(where, sizeof where, "parameter '%.100s'", keys[i]);
        vals[i] = py_to_value(val, where);
        if (!vals[i])
            goto done;
        i++;
    }
    *out = strata_value_map(keys, (const strata_value *const *)vals, (size_t)n);
    if (*out)
        rc = 0;
    else
        PyErr_NoMemory();
done:
    PyMem_Free(keys);
    if (vals)
        free_values(vals, i);
    return rc;
}
