/* Graph._import_csv: strata_import over CSV files, without the GIL.

   strata/_import.py turns import_csv's keyword arguments into the
   arguments here: a list of sources, each (relationships, files, labels,
   type) — files a tuple of str paths (the first holds the header), labels
   a tuple of str, type a str or None — then the delimiter, the array
   delimiter and the quote (one byte each, as ints), skip_bad_rows and
   field_max.  The report comes back as a dict; a failure raises the
   strata.Error subclass of its status, with file, line and column. */
#include <stdio.h>
#include <string.h>

#include "strata_py.h"

/* Skipped rows kept for the report: enough to show what went wrong,
   bounded so a file of bad rows cannot fill memory. */
#define SKIPPED_KEPT 100

typedef struct skipped_row {
    const char *file;   /* one of the call's paths */
    uint64_t line;
    uint32_t column;
    char message[256];
} skipped_row;

/* The C strings of one source, kept alive for the call. */
typedef struct source_strings {
    PyObject *paths;     /* list of bytes (file system encoding) */
    const char **files;
    const char **labels;
} source_strings;

typedef struct import_call {
    GraphObject *self;
    strata_import_options opts;
    strata_import_report rep;
    strata_status st;
    skipped_row skipped[SKIPPED_KEPT];
    size_t nskipped;
} import_call;

static void keep_skipped(void *ctx, const strata_import_fault *f)
{
    import_call *c = ctx;
    if (c->nskipped == SKIPPED_KEPT)
        return;
    skipped_row *s = &c->skipped[c->nskipped++];
    s->file = f->file;
    s->line = f->line;
    s->column = f->column;
    snprintf(s->message, sizeof s->message, "%s", f->message);
}

static void do_import(void *arg)
{
    import_call *c = arg;
    PyThread_acquire_lock(c->self->writer, WAIT_LOCK);
    c->st = strata_import(c->self->g, &c->opts, &c->rep);
    PyThread_release_lock(c->self->writer);
}

/* A str as a C string (borrowed from o); a NUL inside is a ValueError, as
   the engine's names cannot hold one. */
static const char *text(PyObject *o, const char *what)
{
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(o, &len);
    if (s && strlen(s) != (size_t)len) {
        PyErr_Format(PyExc_ValueError, "%s: a name holds a NUL character", what);
        return NULL;
    }
    return s;
}

/* A tuple of str as C strings (borrowed from the tuple's objects). */
static const char **utf8_strings(PyObject *tuple, const char *what)
{
    if (!PyTuple_Check(tuple)) {
        PyErr_Format(PyExc_TypeError, "%s: a tuple of str", what);
        return NULL;
    }
    Py_ssize_t n = PyTuple_Size(tuple);
    const char **out = PyMem_Calloc(n ? (size_t)n : 1, sizeof *out);
    if (!out)
        return (const char **)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(out[i] = text(PyTuple_GetItem(tuple, i), what))) {
            PyMem_Free(out);
            return NULL;
        }
    return out;
}

/* files: paths in the file system's encoding. */
static int source_files(PyObject *files, source_strings *ss, strata_import_source *src)
{
    if (!PyTuple_Check(files) || PyTuple_Size(files) == 0) {
        PyErr_SetString(PyExc_TypeError, "a file group needs at least one path");
        return -1;
    }
    Py_ssize_t n = PyTuple_Size(files);
    if (!(ss->paths = PyList_New(0)) || !(ss->files = PyMem_Calloc((size_t)n, sizeof *ss->files)))
        return ss->paths ? (PyErr_NoMemory(), -1) : -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *bytes;
        if (!PyUnicode_FSConverter(PyTuple_GetItem(files, i), &bytes))
            return -1;
        int rc = PyList_Append(ss->paths, bytes);
        Py_DECREF(bytes);
        if (rc < 0)
            return -1;
        ss->files[i] = PyBytes_AsString(bytes);   /* kept alive by the list */
    }
    src->files = ss->files;
    src->nfiles = (size_t)n;
    return 0;
}

static int read_source(PyObject *spec, source_strings *ss, strata_import_source *src)
{
    int rels;
    PyObject *files, *labels, *type;
    if (!PyArg_ParseTuple(spec, "pOOO", &rels, &files, &labels, &type))
        return -1;
    memset(src, 0, sizeof *src);
    src->relationships = rels != 0;
    if (source_files(files, ss, src) < 0 || !(ss->labels = utf8_strings(labels, "labels")))
        return -1;
    src->labels = ss->labels;
    src->nlabels = (size_t)PyTuple_Size(labels);
    if (type != Py_None && !(src->type = text(type, "type")))
        return -1;
    return 0;
}

static void free_strings(source_strings *ss, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; ss && i < n; i++) {
        Py_XDECREF(ss[i].paths);
        PyMem_Free(ss[i].files);
        PyMem_Free(ss[i].labels);
    }
    PyMem_Free(ss);
}

static PyObject *fault_raise(const import_call *c)
{
    const strata_import_fault *f = &c->rep.fault;
    /* Ctrl-C interrupted it: Python's KeyboardInterrupt */
    if (c->st == STRATA_EINTERRUPTED && PyErr_CheckSignals() < 0)
        return NULL;
    return raise_fault(c->st, f->message, f->file, (long)f->line, (long)f->column);
}

static PyObject *skipped_list(const import_call *c)
{
    PyObject *list = PyList_New((Py_ssize_t)c->nskipped);
    for (size_t i = 0; list && i < c->nskipped; i++) {
        const skipped_row *s = &c->skipped[i];
        PyObject *path = PyUnicode_DecodeFSDefault(s->file);
        PyObject *row = path ? Py_BuildValue("{sOsKsIss}", "file", path, "line",
                                             (unsigned long long)s->line, "column",
                                             (unsigned)s->column, "message", s->message)
                             : NULL;
        Py_XDECREF(path);
        if (!row) {
            Py_CLEAR(list);
            break;
        }
        PyList_SetItem(list, (Py_ssize_t)i, row);
    }
    return list;
}

static PyObject *report_dict(const import_call *c)
{
    PyObject *skipped = skipped_list(c);
    if (!skipped)
        return NULL;
    const strata_import_report *r = &c->rep;
    PyObject *d = Py_BuildValue("{sKsKsKsKsKsN}", "nodes", (unsigned long long)r->nodes,
                                "relationships", (unsigned long long)r->relationships,
                                "properties", (unsigned long long)r->properties, "rows",
                                (unsigned long long)r->rows, "bad_rows",
                                (unsigned long long)r->bad_rows, "skipped", skipped);
    return d;
}

PyObject *graph_import_csv(PyObject *graph, PyObject *args)
{
    GraphObject *self = (GraphObject *)graph;
    PyObject *sources;
    int delim, array_delim, quote, skip_bad;
    Py_ssize_t field_max;
    if (!PyArg_ParseTuple(args, "O!iiipn:_import_csv", &PyList_Type, &sources, &delim,
                          &array_delim, &quote, &skip_bad, &field_max))
        return NULL;
    if (!self->g)
        return raise_status(STRATA_EINVAL, "the graph is closed");
    Py_ssize_t n = PyList_Size(sources);
    import_call *c = PyMem_Calloc(1, sizeof *c);
    source_strings *ss = PyMem_Calloc(n ? (size_t)n : 1, sizeof *ss);
    strata_import_source *src = PyMem_Calloc(n ? (size_t)n : 1, sizeof *src);
    PyObject *out = NULL;
    if (!c || !ss || !src) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (read_source(PyList_GetItem(sources, i), &ss[i], &src[i]) < 0)
            goto done;
    c->self = self;
    c->opts = (strata_import_options){
        .sources = src, .nsources = (size_t)n, .delimiter = (char)delim,
        .array_delimiter = (char)array_delim, .quote = (char)quote, .skip_bad_rows = skip_bad,
        .on_bad_row = keep_skipped, .ctx = c, .field_max = (size_t)field_max,
    };
    if (run_without_gil(self->g, NULL, do_import, c) == 0)
        out = c->st == STRATA_OK ? report_dict(c) : fault_raise(c);
done:
    free_strings(ss, n);
    PyMem_Free(src);
    PyMem_Free(c);
    return out;
}
